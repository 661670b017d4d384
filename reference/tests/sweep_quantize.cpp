// numref sweep — many random quantize cases against the rational oracle.   spec §12 – §20
//
//   sweep_quantize [--shard I/N] [--cases N] [--seed S] [--max-rows R] [--max-cols C]
//
// Runs cases 0 .. N-1 (default 200000) of the random stream S (default 0x5CA1E5) of
// test_quantize_cases.hpp — every rule, partition, element format, policy, application,
// dequantization, transpose, source format — and compares the reference with the exact
// rational oracle bit for bit. --shard I/N runs the cases t with t % N == I. Prints the
// first 20 mismatches; exits 1 if there is any. Label `exhaustive` (scripts/sweep.sh).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_quantize_cases.hpp"

namespace {
[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "sweep_quantize: %s\nusage: sweep_quantize [--shard I/N] [--cases N] [--seed S] [--max-rows R] "
               "[--max-cols C]\n",
               why.c_str());
  std::exit(2);
}
}  // namespace

int main(int argc, char** argv) {
  unsigned shard = 0, nshards = 1;
  unsigned long long cases = 200000, seed = 0x5CA1E5, max_rows = 12, max_cols = 40;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value after " + a);
      return argv[++i];
    };
    auto num = [&](unsigned long long& out) {
      const std::string s = val();
      char* end = nullptr;
      out = std::strtoull(s.c_str(), &end, 0);
      if (s.empty() || *end != '\0') usage("bad number '" + s + "' after " + a);
    };
    if (a == "--shard") {
      const std::string s = val();
      if (std::sscanf(s.c_str(), "%u/%u", &shard, &nshards) != 2 || nshards == 0 || shard >= nshards)
        usage("bad --shard '" + s + "' (want I/N with 0 <= I < N)");
    } else if (a == "--cases") {
      num(cases);
    } else if (a == "--seed") {
      num(seed);
    } else if (a == "--max-rows") {
      num(max_rows);
      if (max_rows < 1 || max_rows > 4096) usage("--max-rows must be in 1..4096");
    } else if (a == "--max-cols") {
      num(max_cols);
      if (max_cols < 1 || max_cols > 4096) usage("--max-cols must be in 1..4096");
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  std::printf("sweep_quantize: shard %u/%u of %llu cases, seed %llu, shapes up to %llux%llu\n", shard, nshards, cases,
              seed, max_rows, max_cols);
  unsigned long long run = 0, bad = 0;
  for (unsigned long long t = shard; t < cases; t += nshards) {
    const std::string report = numref::qtest::run_one(seed, t, max_rows, max_cols);
    ++run;
    if (!report.empty()) {
      if (++bad <= 20) std::printf("MISMATCH %s\n", report.c_str());
    }
  }
  std::printf("sweep_quantize: %llu cases, %llu mismatches\n", run, bad);
  return bad == 0 ? 0 : 1;
}
