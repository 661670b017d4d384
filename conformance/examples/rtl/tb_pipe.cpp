// A Verilator testbench that is a numref pipe backend (spec §33): `numref conform` starts it,
// sends cases, and compares what the simulated f32_to_e4m3 design answers.
//
//   numref conform --backend pipe:build/conformance/examples/rtl/rtl_f32_e4m3 \
//       --ops cast:f32:f8e4m3fn --profile cuda_satfinite
//
// It claims one suite: cast f32 -> f8e4m3fn under the policy the design implements
// (f32_to_e4m3.sv: round=rne overflow=saturate inf_sat=max nan=ones daz=0 ftz=0
// tininess=after; the profile cuda_satfinite) and answers "no" to everything else, so the
// runner counts the other suites as skipped. It reports the §9 flags (flags=yes).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "Vf32_to_e4m3.h"
#include "verilated.h"

namespace {

#ifdef SEEDED_DEFECT_TIES_AWAY
constexpr const char* kName = "rtl-f32-e4m3-defect";
#else
constexpr const char* kName = "rtl-f32-e4m3";
#endif

// The knobs the design fixes (§10.3 words); every other knob does not apply to f32 -> f8e4m3fn.
constexpr const char* kKnobs[] = {"round=rne", "overflow=saturate", "inf_sat=max", "nan=ones", "daz=0",
                                  "ftz=0",     "tininess=after"};

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// §33.3 `<op> <from> <to> <profile|none> <policy...>` starting at word k: the design's suite?
bool supported(const std::vector<std::string>& w, std::size_t k) {
  if (w.size() < k + 3 || w[k] != "cast" || w[k + 1] != "f32" || w[k + 2] != "f8e4m3fn") return false;
  for (const char* knob : kKnobs) {
    bool found = false;
    for (std::size_t i = k + 4; i < w.size(); ++i) found = found || w[i] == knob;
    if (!found) return false;
  }
  return true;
}

void reply(const std::string& s) {
  std::fputs(s.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  VerilatedContext ctx;
  ctx.commandArgs(argc, argv);
  Vf32_to_e4m3 dut{&ctx};
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto w = words(line);
    if (w.empty()) continue;
    if (line == "numref-pipe 1") {  // §33.2 greeting
      reply(std::string("numref-pipe 1 name=") + kName + " version=1 ops=cast profiles=cuda_satfinite flags=yes");
      reply("ready");
    } else if (w[0] == "supports") {  // §33.3
      reply(supported(w, 1) ? "yes" : "no");
    } else if (w[0] == "run" && w.size() > 2) {  // §33.4: run cast <n> <params>, then n cases
      const unsigned long n = std::strtoul(w[2].c_str(), nullptr, 10);
      std::vector<std::string> params = w;  // "cast <from> <to> ...": the words without <n>
      params.erase(params.begin() + 2);
      const bool ok = supported(params, 1);
      std::string out;
      for (unsigned long i = 0; i < n && std::getline(std::cin, line); ++i) {
        if (!ok) continue;
        dut.x = static_cast<std::uint32_t>(std::strtoul(line.c_str(), nullptr, 16));
        dut.eval();
        char buf[16];
        std::snprintf(buf, sizeof buf, "%02x %02x\n", static_cast<unsigned>(dut.y), static_cast<unsigned>(dut.flags));
        out += buf;
      }
      if (!ok) {
        reply("error " + std::string(kName) + " implements only cast f32 f8e4m3fn under cuda_satfinite's policy");
        continue;
      }
      std::fputs(out.c_str(), stdout);
      reply("end");
    } else if (w[0] == "quit") {
      break;
    } else {
      reply("error unknown request '" + line.substr(0, 40) + "'");
    }
  }
  dut.final();
  return 0;
}
