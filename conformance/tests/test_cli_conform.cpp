// Tests of `numref conform` and `numref vectors` as a user runs them: exit status and the
// report lines (spec §34.4 lines, §34.7 exit status), with the built-in backends, the
// Python pipe example, and deliberately broken backends (broken_backend.cpp).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "numref/conform/vectors.hpp"
#include "numref/policy.hpp"

namespace fs = std::filesystem;

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

// Runs a shell command line, stdout and stderr together.
CliRun run_sh(const std::string& cmd) {
  CliRun r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Runs the numref CLI with `args` (shell syntax), stdout and stderr together; `env` is put
// before the command (shell assignments).
CliRun run_numref(const std::string& args, const std::string& env = "") {
  return run_sh(env + "NUMREF_BACKEND_DIR='" + NUMREF_BACKEND_DIR + "' '" + NUMREF_CLI + "' " + args);
}

std::string vectors() { return std::string(NUMREF_SOURCE_DIR) + "/vectors"; }
std::string conform(const std::string& backend) {
  return "conform --no-progress --jobs 2 --vectors '" + vectors() + "' --backend '" + backend + "'";
}
std::string broken(const std::string& mode) { return std::string(NUMREF_BROKEN_SO) + "?" + mode; }

// Whether `text` contains a match of `pattern`: its characters match themselves except
//   {n}  one or more decimal digits          {p}  a positive number: [1-9][0-9]*
//   {s}  one or more spaces                  {*}  any run, maybe empty, of characters other
//   {$}  the end of the text                      than '|' and newline (within a report field)
// (A few report shapes, without <regex>: GCC 12 warns falsely inside it under -fsanitize.)
bool match_at(std::string_view t, std::string_view p) {
  if (p.empty()) return true;
  if (p.size() >= 3 && p[0] == '{' && p[2] == '}') {
    const char k = p[1];
    const std::string_view rest = p.substr(3);
    if (k == '$') return t.empty() && match_at(t, rest);
    auto in_run = [k](char c) {
      if (k == 's') return c == ' ';
      if (k == '*') return c != '|' && c != '\n';
      return c >= '0' && c <= '9';
    };
    if (k == 'p' && (t.empty() || t[0] < '1' || t[0] > '9')) return false;
    std::size_t n = 0;
    while (n < t.size() && in_run(t[n])) ++n;
    const std::size_t shortest = k == '*' ? 0 : 1;
    for (std::size_t len = n + 1; len-- > shortest;)  // the longest run first, then shorter ones
      if (match_at(t.substr(len), rest)) return true;
    return false;
  }
  return !t.empty() && t[0] == p[0] && match_at(t.substr(1), p.substr(1));
}
bool contains(std::string_view text, std::string_view pattern) {
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (match_at(text.substr(i), pattern)) return true;
  return false;
}

// The passed count of the summary line that ends a report (§34.4), ~0 when there is none.
std::uint64_t passed_of(const std::string& out) {
  if (!contains(out, "\n{n} passed, {n} failed, {n} skipped\n{$}")) return ~0ull;
  return std::stoull(out.substr(out.rfind('\n', out.size() - 2) + 1));
}

// §32.2 A backend whose struct_size ends before the entry points of the families `ops` (the
// broken backend's ABI 1.1 mode): their cases are skipped-unsupported, never failed; a run of them
// alone compares nothing, which is not a pass (§34.7, exit 2), and with a cast suite it passes.
void expect_abi11_backend_skips(const std::string& ops) {
  SCOPED_TRACE("--ops " + ops);
  CliRun r = run_numref(conform(broken("v11")) + " --level 0 --ops " + ops);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "\nNOTHING COMPARED: 0 passed, 0 failed, {p} skipped (the backend supports none of the {p} "
                       "selected suites)\n{$}"))
      << r.out;
  r = run_numref(conform(broken("v11")) + " --level 0 --ops " + ops + ",cast:f8e5m2:f32 --profile ocp");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "\n{p} passed, 0 failed, {p} skipped\n{$}")) << r.out;
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("numref-conform-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

// §34.7: the reference passes level 0, vectors included, with exit status 0.
TEST(ConformCli, ReferenceLevel0Passes) {
  const CliRun r = run_numref(conform("reference") + " --level 0");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("reference: "), std::string::npos);
  EXPECT_NE(r.out.find(" 0 failed, 0 skipped\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MANIFEST verified"), std::string::npos) << r.out;
}

// §10.4 / §19.8 every recipe profile runs in the tensor families (issue 12): level 0 on the
// reference compares cases (> 0 passed) with none failed or skipped; so does cpu-fast on
// torchao_mx_rceil.
TEST(ConformCli, RecipeProfilesRunInTheTensorFamilies) {
  for (int i = 0; i < numref::kProfileCount; ++i) {  // every profile of the table with a recipe
    if (!numref::all_profiles()[i].recipe) continue;
    const std::string prof(numref::all_profiles()[i].name);
    const std::string ops = " --level 0 --ops quantize,fake-quant,scale,dequantize --profile " + prof;
    const CliRun r = run_numref(conform("reference") + ops);
    EXPECT_EQ(r.status, 0) << prof << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, std::string("\nquantize   ") + prof + "{s}{p} {s}{p} {s}0 ")) << prof << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "\n{p} passed, 0 failed, 0 skipped\n")) << prof << "\n" << r.out;
  }
  // cpu-fast computes torchao_mx_rceil's recipe knobs now (issue 32): every case compared, none skipped
  const CliRun f = run_numref(conform("cpu-fast") + " --level 0 --ops quantize --profile torchao_mx_rceil");
  EXPECT_EQ(f.status, 0) << f.out;
  EXPECT_TRUE(contains(f.out, "\nquantize   torchao_mx_rceil{s}{p} {s}{p} {s}0 {s}0 {s}0 ")) << f.out;
  EXPECT_TRUE(contains(f.out, "\n{p} passed, 0 failed, 0 skipped\n")) << f.out;
}

// §34.2 profiles with the same policies are checked once only when neither has pair rules or a
// recipe: the four torchao MX recipes share their policies but not their scale rules, so each is
// run (before, the last three were dropped as "checked once"); ocp and ieee are one check.
TEST(ConformCli, ProfilesWithTheSamePoliciesAreCheckedOnceOnlyWithoutRulesOrRecipe) {
  const CliRun r = run_numref(conform("reference") +
                              " --level 0 --ops quantize --profile torchao_mx_floor,torchao_mx_ceil,torchao_mx_even,"
                              "torchao_mx_rceil,ocp,ieee");
  EXPECT_EQ(r.status, 0) << r.out;
  // the four recipes and ocp: five profiles checked (ieee is ocp's check)
  EXPECT_TRUE(contains(r.out, "| profiles torchao_mx_floor torchao_mx_ceil torchao_mx_even torchao_mx_rceil ocp |"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "\nquantize   5 profiles{s}{p} {s}{p} {s}0 ")) << r.out;
  EXPECT_TRUE(contains(r.out, "profile ieee has the same policies as ocp: checked once")) << r.out;
  EXPECT_EQ(r.out.find("torchao_mx_ceil has the same policies"), std::string::npos) << r.out;
}

TEST(ConformCli, CpuFastLevel0Passes) {
  const CliRun r = run_numref(conform("cpu-fast") + " --level 0");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("cpu-fast: "), std::string::npos);
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out;
}

#if NUMREF_HAVE_NV_HOST
// nv-host conforms to the cuda_* profiles with no departure: CUDA's __bfloat162float keeps a
// NaN's sign and payload, and the profiles now say so (§10.2 pair rule bf16 > f32: nan=raw,
// docs/profiles.md). --strict (departures count as failures) passes on that very pair.
TEST(ConformCli, NvHostLevel0PassesWithoutDepartures) {
  const CliRun r = run_numref(conform("nv-host") + " --level 0 --max-errors 1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("known departures"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DEPARTURE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("flags: NOT compared"), std::string::npos) << r.out;
  const CliRun s = run_numref(conform("nv-host") + " --level 0 --max-errors 1 --strict --ops cast:bf16:f32");
  EXPECT_EQ(s.status, 0) << s.out;
  EXPECT_NE(s.out.find(" 0 failed"), std::string::npos) << s.out;
}

// Level 1 adds the knob variants; nv-host declines those CUDA does not compute, among them
// §6.7 inf_nan=nan under the cuda profiles' nan=ones (-Inf / -overflow into f8e4m3fn would be 7F;
// __NV_NOSAT gives FF), so the run has no failure.
TEST(ConformCli, NvHostDeclinesInfNanIntoE4m3) {
  const CliRun r = run_numref(conform("nv-host") + " --level 1 --max-errors 1 --ops cast:f32:f8e4m3fn");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out;
}
#endif

TEST(ConformCli, PythonPipeExamplePasses) {
  const CliRun r = run_numref(conform(std::string("pipe:") + NUMREF_PYTHON + " " + NUMREF_SOURCE_DIR +
                                      "/conformance/examples/pipe_backend.py") +
                              " --level 0 --profile ocp");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("python-example"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("flags: NOT compared"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(passed_of(r.out), 0u);
  // §33.6 the tensor lines: its per-tensor amax quantize suites ran and passed
  EXPECT_TRUE(contains(r.out, "\nquantize{s}ocp{s}{n}{s}{p}{s}0 ")) << r.out;
  // §33.9 / §31.10 / §34.12 the mma lines: its exact-rational ideal (§37) passed the generated and
  // the golden mma suites of profile ideal, and declined the others
  EXPECT_TRUE(contains(r.out, "\nmma{s}ocp{s}{n}{s}{p}{s}0 ")) << r.out;
}

// The plain-C example of docs/conformance.md (f32 -> bf16 bit trick) conforms to ocp.
TEST(ConformCli, CExampleBackendPasses) {
  const CliRun r = run_numref(conform(NUMREF_EXAMPLE_C_SO) + " --level 1 --profile ocp");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("c-example"), std::string::npos) << r.out;
  EXPECT_GT(passed_of(r.out), 60000u) << r.out;
}

// A tie mishandled at the top of E4M3: 464 is the midpoint of 448 and 480 and rounds to
// 448 = 0x7e (§4.2, §6.1); the broken backend answers 0x7f. One line per mismatch with
// hex, decoded value, flags and the classification "tie".
TEST(ConformCli, DetectsTieAt464) {
  const CliRun r = run_numref(conform(broken("tie464")) + " --level 0 --ops cast:f32:f8e4m3fn");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(
      r.out.find("FAIL cast f32->f8e4m3fn ocp | x=43e80000 (464) | got 7f (NaN) ---x | expected 7e (448) ---x | tie"),
      std::string::npos)
      << r.out;
  // the golden vectors of the selected pair ran too: the edge file and the divergence set
  EXPECT_TRUE(contains(r.out, "| tie | cast/ocp/f32-f8e4m3fn.vec:{n}\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "| tie | divergence/cast.vec:{n}\n")) << r.out;
  // under a directed mode 464 is not a tie question: 448 is simply the rtz result
  EXPECT_NE(r.out.find("FAIL cast f32->f8e4m3fn ocp round=rtz | x=43e80000 (464) | got 7f (NaN) ---x | expected 7e "
                       "(448) ---x | overflow/saturation"),
            std::string::npos)
      << r.out;
}

TEST(ConformCli, DetectsNanSign) {
  const CliRun r = run_numref(conform(broken("nansign")) + " --level 0 --ops cast:f32:f8e4m3fn");
  EXPECT_EQ(r.status, 1) << r.out;
  // -NaN ffc00000 keeps its sign under ocp (§6.3 payload): ff expected, 7f delivered.
  EXPECT_NE(r.out.find("x=ffc00000 (-NaN(q, payload 400000)) | got 7f (NaN) ---- | expected ff (-NaN) ---- | nan/sign"),
            std::string::npos)
      << r.out;
}

TEST(ConformCli, AnyNanAcceptsNanSignAndSaysSo) {
  const CliRun r = run_numref(conform(broken("nansign")) + " --level 0 --ops cast:f32:f8e4m3fn --any-nan");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--any-nan: any NaN result matches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NaN results accepted by --any-nan"), std::string::npos) << r.out;
}

TEST(ConformCli, DetectsFlags) {
  const CliRun r = run_numref(conform(broken("noinexact")) + " --level 0 --ops cast:f32:f8e4m3fn --max-errors 1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(" | flags | "), std::string::npos) << r.out;
}

// §34.6 backend failures: exit status 3, a clear message, the report so far kept.
// §32.4 a cast entry that returns a value other than n is a backend failure.
TEST(ConformCli, WrongCountIsABackendError) {
  const CliRun r = run_numref(conform(broken("count")) + " --level 0 --ops cast:f32:f8e4m3fn");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_TRUE(contains(r.out, "returned {n} results for a batch of {n}")) << r.out;
}

// The broken backend's SIGSEGV must kill its isolated process, as it would in any build: in a
// sanitizer build (NUMREF_SANITIZE) the runtime's SEGV handler would report it and exit 1
// instead. handle_segv=0 is added to the sanitizer options of the environment; a plain build
// ignores them.
const std::string kSegvKills =
    "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0\" "
    "UBSAN_OPTIONS=\"${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}handle_segv=0\" ";

TEST(ConformCli, CrashIsReportedAndTheReportSoFarIsKept) {
  const fs::path d = temp_dir("crash");
  const std::string json = (d / "r.json").string();
  const CliRun r = run_numref(conform(broken("crash")) + " --level 0 --report json --out '" + json + "'", kSegvKills);
  EXPECT_EQ(r.status, 3) << r.out;
  std::ifstream f(json);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string j = ss.str();
  EXPECT_NE(j.find("killed by SIGSEGV (signal 11)"), std::string::npos) << j.substr(0, 2000);
  EXPECT_NE(j.find("\"complete\": false"), std::string::npos);
  // cases checked before the crash are in the report
  EXPECT_TRUE(contains(j, "\"passed\": {p}")) << j.substr(0, 2000);
  const CliRun t = run_numref(conform(broken("crash")) + " --level 0", kSegvKills);
  EXPECT_EQ(t.status, 3);
  EXPECT_NE(t.out.find("ERROR broken: the backend process killed by SIGSEGV (signal 11)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("STOPPED"), std::string::npos) << t.out;
  fs::remove_all(d);
}

TEST(ConformCli, HangTimesOut) {
  const CliRun r = run_numref(conform(broken("hang")) + " --level 0 --timeout 2");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("no answer within 0:02"), std::string::npos) << r.out;
}

// §32.4 a negative return with last_error set: the run stops with that message.
TEST(ConformCli, BackendErrorIsReported) {
  const CliRun r = run_numref(conform(broken("error")) + " --level 0");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("deliberate error for the test"), std::string::npos) << r.out;
}

// §32.1 the runner calls numref_backend_abi_version() and refuses another version with both
// versions named (exit status 3); a library without the two symbols is "not a numref backend".
TEST(ConformCli, RefusesAWrongAbiVersion) {
  const CliRun r = run_numref(conform(NUMREF_BADABI_SO) + " --level 0");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("was built for numref backend ABI version 99; this runner speaks version 1"), std::string::npos)
      << r.out;
  // the C library this test runs with (found from one of its functions) exports neither symbol
  Dl_info libc{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::abort), &libc), 0);
  ASSERT_NE(libc.dli_fname, nullptr);
  const CliRun n = run_numref(conform(libc.dli_fname) + " --level 0");
  EXPECT_EQ(n.status, 3) << n.out;
  EXPECT_NE(n.out.find(std::string(libc.dli_fname) + " is not a numref backend"), std::string::npos) << n.out;
}

// §34.1 B is a built-in name or a path to a .so: anything else is a usage error (exit 2).
TEST(ConformCli, UnknownBackendsAreUsageErrors) {
  CliRun r = run_numref(conform("no-such-backend") + " --level 0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown backend 'no-such-backend'"), std::string::npos) << r.out;
  r = run_numref(conform("/no/such/lib.so") + " --level 0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("does not exist"), std::string::npos) << r.out;
  r = run_numref("conform --backend reference --level 7");
  EXPECT_EQ(r.status, 2) << r.out;
}

// §33.1 pipe:COMMAND runs under /bin/sh -c, one line per request and reply; §33.2 the reply to
// the greeting must be the greeting; a line longer than 65 536 characters is a protocol error.
TEST(ConformCli, PipeProtocolFailures) {
  CliRun r = run_numref(conform("pipe:echo hello") + " --level 0 --timeout 5");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("expected the greeting"), std::string::npos) << r.out;
  r = run_numref(conform("pipe:sleep 30") + " --level 0 --timeout 1");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("no answer within"), std::string::npos) << r.out;
  r = run_numref(conform("pipe:exit 4") + " --level 0 --timeout 5");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("exited with status 4"), std::string::npos) << r.out;
  // §33.1 70 000 characters without a newline (the shell's printf pads 0 to that width)
  r = run_numref(conform("pipe:printf %070000d 0; sleep 10") + " --level 0 --timeout 5");
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("a line longer than 65536 characters"), std::string::npos) << r.out;
}

// §31.5 a vector file edited by hand (sha256 differs from the MANIFEST) stops the run.
TEST(ConformCli, TamperedVectorsAreRefused) {
  const fs::path d = temp_dir("tamper");
  fs::copy(vectors(), d, fs::copy_options::recursive);
  {
    std::fstream f(d / "cast/ocp/f8e4m3fn-f32.vec", std::ios::in | std::ios::out);
    f.seekp(-3, std::ios::end);
    f << "1";  // change one digit of the last case's flags
  }
  CliRun r = run_numref("conform --no-progress --backend reference --level 0 --vectors '" + d.string() + "'");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cast/ocp/f8e4m3fn-f32.vec: sha256 differs from vectors/MANIFEST"), std::string::npos) << r.out;
  r = run_numref("vectors verify '" + d.string() + "'");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("differs from the MANIFEST"), std::string::npos) << r.out;
  fs::remove_all(d);
}

// A vector directory whose one file (cast/bad.vec, listed in its MANIFEST) has a malformed
// case on line 12: the x value 43e8000 has 7 hex digits, not 8.
namespace {
void write_malformed_vectors(const fs::path& d) {
  const std::string text =
      "numref-vectors 1\nop cast\nfrom f32\nto f8e4m3fn\nprofile ocp\npolicy " +
      std::string(
          "round=rne overflow=nonsat inf_sat=max nan=payload nan_to_finite=zero e8m0_round=follow "
          "zero_to_nozero=nan negative=nan daz=0 ftz=0 tininess=after int_range=full e8m0_low=linear inf_nan=slot") +
      "\ngenerator hand\ncolumns x y flags\ncount 2\nbegin\n43e80000 7e 01\n43e8000 7e 01\nend\n";
  fs::create_directories(d / "cast");
  std::ofstream(d / "cast/bad.vec") << text;
  std::ofstream(d / "MANIFEST") << numref::conform::Sha256::hex(text) << "  cast/bad.vec\n";
}
}  // namespace

// §31.3 a malformed file with a matching MANIFEST entry: the error names file and line.
TEST(ConformCli, MalformedVectorFileIsRefusedWithFileAndLine) {
  const fs::path d = temp_dir("malformed");
  write_malformed_vectors(d);
  const CliRun r = run_numref("conform --no-progress --backend reference --level 0 --vectors '" + d.string() + "'");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("cast/bad.vec:12: column x: value '43e8000' is not 8 hex digits"), std::string::npos) << r.out;
  fs::remove_all(d);
}

// §31.4 the checked-in vectors are exactly what the generator produces (drift test),
// and every file matches vectors/MANIFEST.
TEST(ConformCli, CheckedInVectorsMatchTheGeneratorAndManifest) {
  const CliRun r = run_numref("vectors verify '" + vectors() + "' --against-generator");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("identical to the generator's output"), std::string::npos) << r.out;
}

TEST(ConformCli, GenerateIsByteIdentical) {
  const fs::path d = temp_dir("gen");
  CliRun r = run_numref("vectors generate --out '" + d.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out;
  r = run_numref("vectors verify '" + d.string() + "' --against-generator");
  EXPECT_EQ(r.status, 0) << r.out;
  // and identical to the checked-in copy
  for (const auto& e : fs::recursive_directory_iterator(d)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), d);
    std::ifstream a(e.path(), std::ios::binary), b(fs::path(vectors()) / rel, std::ios::binary);
    std::stringstream sa, sb;
    sa << a.rdbuf();
    sb << b.rdbuf();
    ASSERT_EQ(sa.str(), sb.str()) << rel;
  }
  fs::remove_all(d);
}

TEST(ConformCli, JunitAndJsonReports) {
  const fs::path d = temp_dir("reports");
  CliRun r = run_numref(conform(broken("tie464")) + " --level 0 --ops cast:f32:f8e4m3fn --report junit --out '" +
                        (d / "r.xml").string() + "'");
  EXPECT_EQ(r.status, 1) << r.out;
  std::ifstream x(d / "r.xml");
  std::stringstream sx;
  sx << x.rdbuf();
  EXPECT_EQ(sx.str().rfind("<?xml version=\"1.0\"", 0), 0u);
  EXPECT_NE(sx.str().find("<failure message="), std::string::npos);
  EXPECT_NE(sx.str().find("x=43e80000 (464)"), std::string::npos);
  // text report still on stdout
  EXPECT_NE(r.out.find("FAIL cast f32->f8e4m3fn"), std::string::npos);
  r = run_numref(conform("reference") + " --level 0 --ops cast:f8e5m2:f4e2m1fn --report json");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("{\n  \"numref_conform_report\": 1,", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("\"complete\": true"), std::string::npos);
  fs::remove_all(d);
}

// §34.1 --shard I/N; §34.3 shard rule: the shards I/N, 0 <= I < N (as scripts/sweep.sh, Slurm array and
// Kubernetes indices count), partition a run's cases; N/N is not a shard.
TEST(ConformCli, ShardsPartitionTheCases) {
  const std::string base = conform("reference") + " --level 0 --ops cast:f16:f8e4m3fn --profile ocp";
  const std::uint64_t all = passed_of(run_numref(base).out);
  ASSERT_NE(all, ~0ull);
  std::uint64_t sum = 0;
  for (int i = 0; i < 3; ++i) {
    const CliRun r = run_numref(base + " --shard " + std::to_string(i) + "/3");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "| shard " + std::to_string(i) + "/3\n")) << r.out;
    sum += passed_of(r.out);
  }
  EXPECT_EQ(sum, all);
  const CliRun last = run_numref(base + " --shard 3/3");
  EXPECT_EQ(last.status, 2) << last.out;
  EXPECT_NE(last.out.find("--shard I (0 <= I < N)"), std::string::npos) << last.out;
  EXPECT_EQ(run_numref(base + " --shard 0/0").status, 2);
  const CliRun j = run_numref(base + " --shard 2/3 --report json");
  EXPECT_NE(j.out.find("\"shard\": \"2/3\""), std::string::npos) << j.out.substr(0, 400);
}

// §32.6 / §34.7 a backend whose open answers "unavailable: <reason>" is SKIPPED with the
// reason (in process and isolated), exit 0; --require-backend makes it 77.
TEST(ConformCli, UnavailableBackendIsSkippedWithItsReason) {
  for (const char* iso : {"", " --no-isolate"}) {
    const CliRun r = run_numref(conform(NUMREF_UNAVAILABLE_SO) + " --level 0 --ops cast:f8e5m2:f32" + iso);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(": unavailable: no test device (this backend never has one)\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("SKIPPED "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("ERROR"), std::string::npos) << r.out;
    const CliRun q =
        run_numref(conform(NUMREF_UNAVAILABLE_SO) + " --level 0 --ops cast:f8e5m2:f32 --require-backend" + iso);
    EXPECT_EQ(q.status, 77) << q.out;
  }
  const CliRun j = run_numref(conform(NUMREF_UNAVAILABLE_SO) + " --level 0 --ops cast:f8e5m2:f32 --report json");
  EXPECT_EQ(j.status, 0) << j.out;
  EXPECT_NE(j.out.find("\"unavailable\": \"no test device (this backend never has one)\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"complete\": true"), std::string::npos) << j.out;
  const CliRun x = run_numref(conform(NUMREF_UNAVAILABLE_SO) + " --level 0 --ops cast:f8e5m2:f32 --report junit");
  EXPECT_EQ(x.status, 0) << x.out;
  EXPECT_NE(x.out.find("<skipped message=\"unavailable: no test device (this backend never has one)\"/>"),
            std::string::npos)
      << x.out;
}

// --backend all goes on with the other backends after an unavailable one. §34.1 `all` is every
// plugin libnumref_backend_<name>.so of the backend directory ($NUMREF_BACKEND_DIR), in turn.
TEST(ConformCli, BackendAllGoesOnAfterAnUnavailableBackend) {
  const fs::path d = temp_dir("unavailable");
  // built-in names sort alphabetically after the known ones: aaa-gpu (unavailable) runs
  // first, then zzz (the reference plugin under another file name)
  fs::create_symlink(NUMREF_UNAVAILABLE_SO, d / "libnumref_backend_aaa_gpu.so");
  fs::create_symlink(fs::path(NUMREF_BACKEND_DIR) / "libnumref_backend_reference.so", d / "libnumref_backend_zzz.so");
  const std::string base = std::string("NUMREF_BACKEND_DIR='") + d.string() + "' '" + NUMREF_CLI +
                           "' conform --no-progress --jobs 2 --vectors '" + vectors() +
                           "' --backend all --level 0 --ops cast:f8e5m2:f32";
  for (const bool req : {false, true}) {
    const CliRun r = run_sh(base + (req ? " --require-backend" : ""));
    EXPECT_EQ(r.status, req ? 77 : 0) << r.out;
    const auto skip = r.out.find("SKIPPED aaa-gpu: unavailable: no test device");
    EXPECT_NE(skip, std::string::npos) << r.out;
    EXPECT_GT(r.out.find("reference: "), skip) << r.out;  // the next backend ran after it
    EXPECT_NE(passed_of(r.out), 0u) << r.out;
    EXPECT_NE(passed_of(r.out), ~0ull) << r.out;
  }
  fs::remove_all(d);
}

// §26 / §34.9 a MoR backend that decides Eq. 2 with <= is caught by the golden vector whose
// threshold equals the exact mean (mor/f32-tensor-at-threshold.vec: mean 47370963 / 2^30,
// see mor_vectors.cpp for the derivation), one line naming the field, got vs expected.
TEST(ConformCli, DetectsMorThresholdComparedWithLessOrEqual) {
  const CliRun r = run_numref(conform(broken("morle")) + " --level 0 --ops mor");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(
      r.out.find("FAIL mor f32 2x4 scaling=tensor threshold=47370963/1073741824 | x=f32[2x4] (4 zeros, 0 NaN, 0 Inf) "
                 "| decision of tensor | got 00 (f8e4m3fn) | expected 02 (bf16) | mor/decision | "
                 "mor/f32-tensor-at-threshold.vec:"),
      std::string::npos)
      << r.out;
  // everything else passes: the threshold files with a strict gap are right
  EXPECT_TRUE(contains(r.out, "mor{s}ocp{s}{n}{s}{n}{s}2 ")) << r.out;
}

// A tensor-level error sum that drops the last element: the error-sum field differs (the
// exact sum S and n; every generated tensor whose last element is finite and non-zero).
TEST(ConformCli, DetectsMorSumDroppingTheLastElement) {
  const CliRun r = run_numref(conform(broken("morsum")) + " --level 0 --ops mor --max-errors 1");
  EXPECT_EQ(r.status, 1) << r.out;
  const std::string field = "| error-sum of tensor | got S={*} n={n} {*}| expected S={*} ";
  EXPECT_TRUE(contains(r.out, field + "| mor/error-sum |") || contains(r.out, field + "| mor/error-sum/n |")) << r.out;
  EXPECT_EQ(r.out.find("FAIL mor-sub"), std::string::npos) << r.out;
}

// §32.9 / §38.2 / §34.4 a plugin kernel with Blackwell's alignment (25 bits, rz) for Hopper's FP8 wgmma is
// caught: the runner names the mma suite of sm90_wgmma_f8 and an element of D.
TEST(ConformCli, DetectsMmaAlignment) {
  const CliRun r = run_numref(conform(broken("mmaalign")) + " --level 0 --ops mma:sm90_wgmma_f8 --max-errors 1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "\nFAIL mma sm90_wgmma_f8 f8e4m3fnxf8e4m3fn+f32 ")) << r.out;
  EXPECT_TRUE(contains(r.out, "| value of element ({n}, {n}) | got ")) << r.out;
  EXPECT_TRUE(contains(r.out, "| mma/value |")) << r.out;
  // the same backend passes the profiles whose model it does not damage
  const CliRun ok = run_numref(conform(broken("mmaalign")) + " --level 0 --ops mma:ideal");
  EXPECT_EQ(ok.status, 0) << ok.out;
}

// §32.2 / §32.9 / §34.3 the mma family (ABI 1.9) is never offered to a backend of ABI 1.8.
TEST(ConformCli, Abi18BackendIsNotOfferedMma) {
  const CliRun r = run_numref(conform(broken("v18")) + " --level 0 --ops mma,cast:f32:f8e4m3fn");
  EXPECT_EQ(r.status, 0) << r.out;
  // (the suites of algo=fma need 1.10, those of algo=efdpa and algo=ftz 1.11: more reasons, in
  // the order of their text)
  EXPECT_TRUE(contains(r.out,
                       "skipped: {p} need C ABI 1.10 values, the backend declares 1.8 (mma {p}); "
                       "{p} need C ABI 1.11 values, the backend declares 1.8 (mma {p}); "
                       "{p} need C ABI 1.9 values, the backend declares 1.8 (mma {p})"))
      << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
}

// Annex C.1 the FMA chain (algo=fma, ABI 1.10) is never offered to a backend of ABI 1.9; its
// other mma suites are.
TEST(ConformCli, Abi19BackendIsNotOfferedTheFmaChain) {
  const CliRun r = run_numref(conform(broken("v19")) + " --level 0 --ops mma:cdna3_mfma_f32,mma:cdna3_mfma_f16");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "skipped: {p} need C ABI 1.10 values, the backend declares 1.9 (mma {p})")) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_GT(passed_of(r.out), 0u) << r.out;  // cdna3_mfma_f16 (1.9) is offered and passes
  // the reference backend (1.10) passes the FMA chain
  const CliRun ok = run_numref(conform("reference") + " --level 0 --ops mma:cdna1_mfma_f32,mma:cdna3_mfma_f32");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find(" 0 failed, 0 skipped\n"), std::string::npos) << ok.out;
}

// Annex C.1 the exact steps and the flush-to-zero steps (algo=efdpa, algo=ftz, ABI 1.11) are never
// offered to a backend of ABI 1.10; its FMA chain is.
TEST(ConformCli, Abi110BackendIsNotOfferedTheExactOrFlushingSteps) {
  const CliRun r = run_numref(conform(broken("v110")) +
                              " --level 0 --ops mma:cdna1_mfma_f16,mma:cdna2_mfma_bf16,mma:cdna3_mfma_f32");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "skipped: {p} need C ABI 1.11 values, the backend declares 1.10 (mma {p})")) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_GT(passed_of(r.out), 0u) << r.out;  // cdna3_mfma_f32 (1.10) is offered and passes
  // the reference backend (1.11) passes the CDNA1 / CDNA2 f16 and bf16 profiles
  const CliRun ok = run_numref(conform("reference") +
                               " --level 0 --ops mma:cdna1_mfma_f16,mma:cdna1_mfma_bf16,mma:cdna2_mfma_f16,"
                               "mma:cdna2_mfma_bf16");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find(" 0 failed, 0 skipped\n"), std::string::npos) << ok.out;
}

// Annex C.1 the profiles deepgemm_f32 and microxcaling_floor (their recipe knobs divisor=recip and
// elem_exp=log2f, ABI 1.12) are never offered to a backend of ABI 1.11; ocp's cases are.
TEST(ConformCli, Abi111BackendIsNotOfferedTheDivisorOrElementExponentKnobs) {
  const CliRun r =
      run_numref(conform(broken("v111")) + " --level 0 --ops quantize --profile deepgemm_f32,microxcaling_floor,ocp");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "skipped: {n} need C ABI 1.12 values, the backend declares 1.11 (quantize {n})"))
      << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_GT(passed_of(r.out), 0u) << r.out;  // ocp's quantize cases are offered and pass
  // the reference backend (1.12) passes both
  const CliRun ok =
      run_numref(conform("reference") + " --level 0 --ops quantize --profile deepgemm_f32,microxcaling_floor");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find(" 0 failed, 0 skipped\n"), std::string::npos) << ok.out;
  EXPECT_GT(passed_of(ok.out), 0u) << ok.out;
}

// §32.2 the MoR families (ABI 1.2) on a backend of ABI 1.1.
TEST(ConformCli, Abi11BackendSkipsMor) { expect_abi11_backend_skips("mor,mor-sub"); }

// The reference passes the MoR families at level 1 (golden vectors included).
TEST(ConformCli, ReferencePassesMorLevel1) {
  const CliRun r = run_numref(conform("reference") + " --level 1 --ops mor,mor-sub");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" 0 failed, 0 skipped\n"), std::string::npos) << r.out;
  EXPECT_GT(passed_of(r.out), 700u) << r.out;
}

// ---- issue 16: truthful exit codes and reports (spec §34.7, §35) ----------------------------

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
// The last line of a report (without its newline).
std::string last_line(const std::string& out) {
  std::string s = out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s.substr(s.rfind('\n') + 1);
}
// A small, fast selection: 256 f8e5m2 codes into f32 under ocp.
const std::string kSmall = " --level 0 --ops cast:f8e5m2:f32 --profile ocp";
}  // namespace

// §35.1 a report file in a missing directory, or a directory, is refused before the run, one
// line naming the path, exit 2 (it used to run to the end and exit 0); §35.2 a write error on
// the report (/dev/full) or on standard output is exit 2, never 0.
TEST(ConformCli, UnwritableReportExitsTwo) {
  const fs::path d = temp_dir("outerr");
  for (const char* rep : {"json", "junit", "text"}) {
    const std::string missing = (d / "missing" / "r.out").string();
    CliRun r = run_numref(conform("reference") + kSmall + " --report " + rep + " --out '" + missing + "'");
    EXPECT_EQ(r.status, 2) << rep << r.out;
    EXPECT_NE(r.out.find(missing), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("== numref conform"), std::string::npos) << "ran before refusing: " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    r = run_numref(conform("reference") + kSmall + " --report " + rep + " --out '" + d.string() + "'");
    EXPECT_EQ(r.status, 2) << rep << r.out;
    EXPECT_NE(r.out.find(d.string() + ": is a directory"), std::string::npos) << r.out;
    r = run_numref(conform("reference") + kSmall + " --report " + rep + " --out /dev/full");
    EXPECT_EQ(r.status, 2) << rep << r.out;
    EXPECT_NE(r.out.find("/dev/full: write failed"), std::string::npos) << r.out;
  }
  // the text report on standard output, and the JSON on standard output, into /dev/full
  EXPECT_EQ(run_numref(conform("reference") + kSmall + " >/dev/full").status, 2);
  EXPECT_EQ(run_numref(conform("reference") + kSmall + " --report json >/dev/full").status, 2);
  fs::remove_all(d);
}

// §35.1 every file under --vectors is an input: --out naming one (the MANIFEST) is refused
// before anything is written, and the file is left as it was.
TEST(ConformCli, RefusesAReportOverAVectorFile) {
  const fs::path d = temp_dir("outisinput");
  fs::copy(vectors(), d, fs::copy_options::recursive);
  const std::string manifest = slurp(d / "MANIFEST");
  for (const std::string target : {"MANIFEST", "cast/ocp/f8e5m2-f32.vec", "./cast/../MANIFEST"}) {
    for (const char* rep : {"json", "text"}) {
      const CliRun r = run_numref("conform --no-progress --backend reference" + kSmall + " --vectors '" + d.string() +
                                  "' --report " + rep + " --out '" + (d / target).string() + "'");
      EXPECT_EQ(r.status, 2) << r.out;
      EXPECT_NE(r.out.find("is also an input"), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("== numref conform"), std::string::npos) << r.out;
    }
  }
  EXPECT_EQ(slurp(d / "MANIFEST"), manifest);
  EXPECT_EQ(slurp(d / "cast/ocp/f8e5m2-f32.vec"), slurp(fs::path(vectors()) / "cast/ocp/f8e5m2-f32.vec"));
  fs::remove_all(d);
}

// §34.2 --vectors naming a directory that does not exist is an error naming it (it used to
// run the generated cases only and pass).
TEST(ConformCli, MissingVectorDirectoryExitsTwo) {
  const CliRun r = run_numref("conform --no-progress --backend reference" + kSmall + " --vectors /no/such/vectors");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--vectors: directory '/no/such/vectors' does not exist"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("passed"), std::string::npos) << r.out;
}

// §34.7 a run that compares no case does not pass: exit 2 and a last line that says so, with
// the reason (it used to end "0 passed, 0 failed, N skipped" with exit 0).
TEST(ConformCli, NothingComparedIsNotAPass) {
  // the C example implements cast only
  CliRun r = run_numref(conform(NUMREF_EXAMPLE_C_SO) + " --level 0 --ops mor");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(contains(last_line(r.out),
                       "NOTHING COMPARED: 0 passed, 0 failed, {p} skipped (the backend implements none "
                       "of the selected operations (mor))"))
      << r.out;
  // a backend with a cast entry that supports nothing (as one whose cast entry is NULL)
  const fs::path d = temp_dir("nothing");
  std::ofstream(d / "no.sh")
      << "read hello\n"
         "echo 'numref-pipe 1 name=supports-nothing version=0 ops=cast profiles=ocp flags=no'\n"
         "echo ready\n"
         "while read cmd rest; do\n"
         "  case \"$cmd\" in quit) exit 0;; supports) echo no;; *) echo \"error unexpected $cmd\";; esac\n"
         "done\n";
  r = run_numref(conform("pipe:sh " + (d / "no.sh").string()) + kSmall);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(contains(last_line(r.out),
                       "NOTHING COMPARED: 0 passed, 0 failed, {p} skipped (the backend supports none of "
                       "the {p} selected suites)"))
      << r.out;
  r = run_numref(conform("pipe:sh " + (d / "no.sh").string()) + kSmall + " --report junit");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("errors=\"1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("type=\"nothing-compared\""), std::string::npos) << r.out;
  fs::remove_all(d);
}

// §34.4 after an error the last line says INCOMPLETE with the reason, never "N passed, 0
// failed" as if complete; an interrupted run says INTERRUPTED, exits 130, and its JUnit file
// carries an error and its JSON "complete": false.
TEST(ConformCli, StoppedRunsSayIncomplete) {
  const fs::path d = temp_dir("incomplete");
  write_malformed_vectors(d / "v");
  CliRun r = run_numref("conform --no-progress --backend reference --level 0 --ops cast:f32:f8e4m3fn --vectors '" +
                        (d / "v").string() + "' --report junit --out '" + (d / "bad.xml").string() + "'");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(contains(last_line(r.out),
                       "INCOMPLETE: {n} passed, 0 failed, 0 skipped (stopped by an error: golden "
                       "vectors: cast/bad.vec:12: "))
      << r.out;
  EXPECT_NE(slurp(d / "bad.xml").find("errors=\"1\""), std::string::npos);

  // SIGINT to the runner alone (its backend processes untouched) during a long run
  for (const char* rep : {"junit", "json"}) {
    const fs::path out = d / (std::string("int.") + rep), script = d / "int.sh";
    std::ofstream(script)
        << "NUMREF_BACKEND_DIR='" << NUMREF_BACKEND_DIR << "' '" << NUMREF_CLI
        << "' conform --no-progress --jobs 2 --backend reference --vectors none --level exhaustive"
           " --ops cast:f32:f8e4m3fn --profile ocp --report "
        << rep << " --out '" << out.string() << "' >'" << (d / "int.log").string()
        << "' 2>&1 &\npid=$!\n"
           // the header is printed once the run (and its signal handling) has started
           "i=0; until grep -q '^== numref conform' '"
        << (d / "int.log").string()
        << "' || [ $i -ge 300 ]; do sleep 0.2; i=$((i+1)); done\nsleep 1\nkill -INT $pid\nwait $pid\nst=$?\ncat '"
        << (d / "int.log").string() << "'\nexit $st\n";
    r = run_sh("sh '" + script.string() + "'");
    EXPECT_EQ(r.status, 130) << r.out;
    EXPECT_TRUE(contains(last_line(r.out), "INTERRUPTED: {n} passed, 0 failed, 0 skipped (interrupted by a signal; "))
        << r.out;
    const std::string doc = slurp(out);
    if (std::string(rep) == "junit") {
      EXPECT_NE(doc.find("<testsuites name=\"numref conform\" tests=\""), std::string::npos) << doc;
      EXPECT_TRUE(contains(doc, "errors=\"{p}\"")) << doc;
      EXPECT_NE(doc.find("type=\"interrupted\""), std::string::npos) << doc;
    } else {
      EXPECT_NE(doc.find("\"complete\": false"), std::string::npos) << doc;
      EXPECT_NE(doc.find("\"exit_status\": 130"), std::string::npos) << doc;
    }
  }
  fs::remove_all(d);
}

// §31.5 a golden vector whose expected value disagrees with the reference (edited together
// with its MANIFEST line) is reported as a wrong VECTOR, exit 2 -- not as a FAIL of the
// backend, not even of the reference itself.
TEST(ConformCli, AWrongVectorIsNotABackendFailure) {
  const fs::path d = temp_dir("wrongvector");
  fs::copy(vectors(), d, fs::copy_options::recursive);
  const std::string rel = "cast/ocp/f8e4m3fn-f32.vec";
  std::string text = slurp(d / rel);
  // f8e4m3fn 01 is 2^-9 = f32 3b000000 (§2.1); the edited line claims 3b000001
  const auto at = text.find("\n01 3b000000 00\n");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 16, "\n01 3b000001 00\n");
  const int line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 2;
  std::ofstream(d / rel, std::ios::binary | std::ios::trunc) << text;
  std::string man = slurp(d / "MANIFEST");
  const auto m = man.find("  " + rel + "\n");
  ASSERT_NE(m, std::string::npos);
  man.replace(m - 64, 64, numref::conform::Sha256::hex(text));
  std::ofstream(d / "MANIFEST", std::ios::binary | std::ios::trunc) << man;
  for (const char* b : {"reference", "cpu-fast"}) {
    const CliRun r = run_numref("conform --no-progress --jobs 2 --backend " + std::string(b) +
                                " --level 0 --ops cast:f8e4m3fn:f32 --profile ocp --vectors '" + d.string() + "'");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("VECTOR WRONG: " + rel + ":" + std::to_string(line) + ": cast f8e4m3fn->f32 ocp | x=01 "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("the vector expects 3b000001"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the reference gives 3b000000"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("FAIL "), std::string::npos) << r.out;
    EXPECT_TRUE(contains(last_line(r.out), "INCOMPLETE: ")) << r.out;
  }
  fs::remove_all(d);
}

// §34.4 a passing run is short: the run of scripts/main.sh (every built-in backend; level 0
// here, which prints the same lines as level 1) prints no line per case. Every line is one of
// the kinds §34.4 names — the run line, per backend its header, ops / flags / note / skipped /
// golden-vectors lines, the summary heading, the column heading, one row per op family, the
// backend's total, a SKIPPED line for an unavailable backend — and the final total. The shape
// is checked, not a line count, so a build with more backends (CUDA) reads the same.
TEST(ConformCli, APassingRunOfAllBackendsIsShort) {
  const CliRun r = run_numref("conform --no-progress --jobs 2 --vectors '" + vectors() + "' --level 0");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("DEPARTURE"), std::string::npos) << r.out;
  EXPECT_TRUE(contains(r.out, "\ncast{s}4 profiles{s}{p}{s}{p}{s}0 ")) << r.out;  // one row per op
  EXPECT_NE(passed_of(r.out), ~0ull) << r.out;
  // the kinds of line, as patterns of match_at() anchored at the line's start
  static constexpr std::string_view kinds[] = {
      "== run {*}| numref {*}| spec {*}| vectors {*}{$}",
      "== numref conform: backend {*}{$}",
      "== backend {*}{$}",
      "== all backends{$}",
      "   ops {*}| profiles {*}| level {n} | seed {n} | shard {n}/{p}{$}",
      "   flags: ",
      "   note: ",
      "   skipped: ",
      "   golden vectors: ",
      "-- {*} summary ({*} s){$}",
      "op{s}profile{s}cases{s}passed{s}failed{s}departures{s}skipped{s}any-nan{$}",
      "{*}{s}{n}{s}{n}{s}0{s}0{s}{n}{s}{n}{$}",  // a row of the summary: nothing failed
      "{*}: {n} passed, 0 failed, {n} skipped{$}",
      "{n} passed, 0 failed, {n} skipped{$}",
      "SKIPPED {*}: unavailable: ",
  };
  constexpr std::size_t kRow = 11;
  std::istringstream in(r.out);
  std::size_t lines = 0, backends = 0, rows = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    bool known = false;
    for (const std::string_view k : kinds) known = known || match_at(line, k);
    EXPECT_TRUE(known) << "a line of no kind §34.4 names: " << line;
    backends += line.starts_with("== numref conform: backend ") ? 1 : 0;
    rows += match_at(line, kinds[kRow]) && !match_at(line, kinds[kRow - 1]) ? 1 : 0;
  }
  EXPECT_GE(backends, 4u) << r.out;  // reference, cpu-fast, nv-host, cuda-emu at least
  // per backend: header, ops, flags, at most two notes, summary, columns, skipped, vectors,
  // total = 10 lines besides its rows; a SKIPPED backend takes 2; the run line and the final
  // two.
  EXPECT_LE(lines, 3 + rows + 10 * backends + 2 * 2) << r.out;
}

// §34.4 the JSON report lists every mismatch (--max-errors caps the terminal only) with
// structured fields: location, input codes, got / expected as hex and exact decimal, flags as
// text, the class; the JUnit report stays valid XML. Checked with Python's json / ElementTree.
TEST(ConformCli, JsonReportHasEveryMismatchWithStructuredFields) {
  const fs::path d = temp_dir("structured");
  const std::string json = (d / "r.json").string(), xml = (d / "r.xml").string();
  CliRun r = run_numref(conform(broken("tie464")) +
                        " --level 0 --ops cast:f32:f8e4m3fn --max-errors 1 --report json --out '" + json + "'");
  EXPECT_EQ(r.status, 1) << r.out;
  std::ofstream(d / "check.py") << R"PY(
import json, sys
r = json.load(open(sys.argv[1]))
b = r["backends"][0]
ms = b["mismatches"]
assert len(ms) == b["summary"]["failed"] > 0, (len(ms), b["summary"])
assert r["exit_status"] == 1 and r["complete"] is True
# f32 464 = 0x43e80000 is the tie of f8e4m3fn 448 (7e) and 480 (§6.1): the broken backend answers 7f
m = next(m for m in ms if m["location"].get("generated") is None)
assert m["class"] == "tie", m
assert m["inputs"] == {"x": {"hex": "43e80000", "value": "464"}}, m
res = {c["column"]: c for c in m["results"]}
assert res["y"]["got"] == {"hex": "7f", "value": "NaN"}, m
assert res["y"]["expected"] == {"hex": "7e", "value": "448"}, m
assert res["flags"]["expected"] == {"hex": "01", "flags": "---x"}, m  # inexact only
assert m["location"]["file"].endswith(".vec") and m["location"]["line"] > 0, m
assert any("generated" in m["location"] for m in ms)
print(len(ms))
)PY";
  r = run_sh(std::string(NUMREF_PYTHON) + " '" + (d / "check.py").string() + "' '" + json + "'");
  EXPECT_EQ(r.status, 0) << r.out;
  // more mismatches than the terminal showed (one line per suite)
  const CliRun t = run_numref(conform(broken("tie464")) + " --level 0 --ops cast:f32:f8e4m3fn --max-errors 1");
  std::size_t lines = 0;
  for (std::size_t at = t.out.find("\nFAIL "); at != std::string::npos; at = t.out.find("\nFAIL ", at + 1)) ++lines;
  EXPECT_GT(std::stoul(r.out), lines) << t.out;
  r = run_numref(conform(broken("tie464")) +
                 " --level 0 --ops cast:f32:f8e4m3fn --max-errors 1 --report junit --out '" + xml + "'");
  EXPECT_EQ(r.status, 1) << r.out;
  r = run_sh(std::string(NUMREF_PYTHON) +
             " -c \"import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]).getroot(); "
             "assert t.tag == 'testsuites' and int(t.get('failures')) > 0; "
             "assert sum(f.text.count('x=43e80000') for f in t.iter('failure')) > 1\" '" +
             xml + "'");
  EXPECT_EQ(r.status, 0) << r.out;
  fs::remove_all(d);
}

// §34.10 The reference passes the gaussws family at level 1, golden vectors included
// (vectors/gaussws/: 6 files).
TEST(ConformCli, ReferencePassesGausswsLevel1) {
  const CliRun r = run_numref(conform("reference") + " --level 1 --ops gaussws");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "gaussws{s}ocp{s}{p}{s}{p}{s}0{s}0{s}0{s}0\n")) << r.out;
  EXPECT_GT(passed_of(r.out), 300u) << r.out;
}

// §32.2 the gaussws family (ABI 1.3) on a backend of ABI 1.1.
TEST(ConformCli, OlderAbiBackendSkipsGaussws) { expect_abi11_backend_skips("gaussws"); }

// --backend all includes the family: every built-in backend runs or skips it, none fails.
TEST(ConformCli, AllBackendsIncludeGaussws) {
  const CliRun r = run_numref(conform("all") + " --level 0 --ops gaussws");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "== numref conform: backend reference")) << r.out;
  EXPECT_TRUE(contains(r.out, "== numref conform: backend cpu-fast")) << r.out;
  EXPECT_TRUE(contains(r.out, "\ngaussws{s}ocp{s}{p}{s}{p}{s}0")) << r.out;
  EXPECT_TRUE(contains(r.out, "== all backends\n{p} passed, 0 failed")) << r.out;
}

// ---- issue 16 item 20, issue 13 item 5: the run's identity and merged shard reports (§34.4, §34.11)

namespace {
// The version line of `numref --version`: "numref V (spec W)" -> {V, W}.
std::pair<std::string, std::string> versions() {
  const std::string v = run_numref("--version").out;
  const auto sp = v.find(' '), paren = v.find(" (spec ");
  return {v.substr(sp + 1, paren - sp - 1), v.substr(paren + 7, v.find(')') - paren - 7)};
}
// A selection of several suites and a few thousand cases: every f16 code into f8e4m3fn, ocp.
const std::string kShardSel = " --level 0 --ops cast:f16:f8e4m3fn --profile ocp";
std::string json_shard(const fs::path& d, const std::string& name, const std::string& backend,
                       const std::string& extra) {
  const std::string out = (d / name).string();
  const CliRun r = run_numref(conform(backend) + extra + " --report json --out '" + out + "'");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out;
  return "'" + out + "'";
}
}  // namespace

// §34.4 every report records numref and spec version, the run's parameters, the shard, and a
// run id that hashes the parameters without the shard: the two shards of a run share it, a
// run with another seed does not. The expected id is computed here from the spec's text.
TEST(ConformCli, ReportsCarryTheRunIdentity) {
  const fs::path d = temp_dir("identity");
  const auto [ver, spec] = versions();
  ASSERT_FALSE(ver.empty());
  json_shard(d, "a.json", "reference", kSmall + " --shard 0/2");
  json_shard(d, "b.json", "reference", kSmall + " --shard 1/2");
  json_shard(d, "c.json", "reference", kSmall + " --shard 0/2 --seed 2");
  const CliRun x =
      run_numref(conform("reference") + kSmall + " --shard 1/2 --report junit --out '" + (d / "x.xml").string() + "'");
  EXPECT_EQ(x.status, 0) << x.out;
  std::ofstream(d / "check.py") << R"PY(
import hashlib, json, sys, os, xml.etree.ElementTree as E
d, ver, spec, vec = sys.argv[1:5]
a, b, c = (json.load(open(os.path.join(d, n)))["run"] for n in ("a.json", "b.json", "c.json"))
man = hashlib.sha256(open(os.path.join(vec, "MANIFEST"), "rb").read()).hexdigest()
text = ("numref=%s\nspec=%s\nbackend=reference\nprofiles=ocp\nops=cast:f8e5m2:f32\nlevel=0\nseed=1\n"
        "vectors=MANIFEST sha256 %s\nany_nan=false\nstrict=false\n") % (ver, spec, man)
want = hashlib.sha256(text.encode()).hexdigest()[:16]
assert a["id"] == want, (a["id"], want)
assert b["id"] == a["id"] and c["id"] != a["id"], (a, b, c)
assert a["numref_version"] == ver and a["spec_version"] == spec, a
assert a["backend"] == "reference" and a["profiles"] == ["ocp"] and a["ops"] == ["cast:f8e5m2:f32"], a
assert a["level"] == "0" and a["seed"] == 1 and c["seed"] == 2 and a["any_nan"] is False and a["strict"] is False, a
assert a["manifest_sha256"] == man and os.path.samefile(a["vectors"], vec), a
assert a["shard"] == {"index": 0, "count": 2, "merged": 0} and b["shard"]["index"] == 1, (a, b)
t = E.parse(os.path.join(d, "x.xml")).getroot()
suites = list(t.iter("testsuite"))
assert suites
for s in suites:
    p = {q.get("name"): q.get("value") for q in s.find("properties")}
    assert p["run_id"] == want and p["shard"] == "1/2" and p["numref"] == ver and p["spec"] == spec, p
    assert p["seed"] == "1" and p["vectors"] == "MANIFEST sha256 " + man, p
print(want)
)PY";
  const CliRun r = run_sh(std::string(NUMREF_PYTHON) + " '" + (d / "check.py").string() + "' '" + d.string() + "' '" +
                          ver + "' '" + spec + "' '" + vectors() + "'");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string id = r.out.substr(0, 16);
  // the text report's first line says the same
  const CliRun t = run_numref(conform("reference") + kSmall + " --shard 0/2");
  EXPECT_EQ(t.out.rfind("== run " + id + " | numref " + ver + " | spec " + spec + " | vectors MANIFEST sha256 ", 0), 0u)
      << t.out;
  fs::remove_all(d);
}

// §34.11 the merge of the N shard reports has the counts of the unsharded run (in any order of
// the files) and its exit status; a missing, a duplicated or a foreign shard (another seed,
// another profile) is refused, naming the file and what differs, exit 2.
TEST(ConformCli, ReportMergeOfShardsEqualsTheUnshardedRun) {
  const fs::path d = temp_dir("merge");
  const CliRun whole = run_numref(conform("reference") + kShardSel);
  ASSERT_EQ(whole.status, 0) << whole.out;
  const std::uint64_t all = passed_of(whole.out);
  const std::string s0 = json_shard(d, "s0.json", "reference", kShardSel + " --shard 0/3");
  const std::string s1 = json_shard(d, "s1.json", "reference", kShardSel + " --shard 1/3");
  const std::string s2 = json_shard(d, "s2.json", "reference", kShardSel + " --shard 2/3");
  CliRun m = run_numref("report merge " + s2 + " " + s0 + " " + s1);
  EXPECT_EQ(m.status, 0) << m.out;
  EXPECT_EQ(passed_of(m.out), all) << m.out;
  EXPECT_NE(m.out.find("| shard merged from 3 shards of 3\n"), std::string::npos) << m.out;
  // the merged JSON: the unsharded run's summary and suites
  const std::string wj = json_shard(d, "whole.json", "reference", kShardSel);
  m = run_numref("report merge --report json --out '" + (d / "m.json").string() + "' " + s0 + " " + s1 + " " + s2);
  EXPECT_EQ(m.status, 0) << m.out;
  CliRun py = run_sh(std::string(NUMREF_PYTHON) +
                     " -c \"import json, sys; w, m = (json.load(open(p)) for p in sys.argv[1:3]); "
                     "k = lambda r: sorted((s['source'], s['params'], s['cases'], s['passed'], s['failed']) for s in "
                     "r['backends'][0]['suites']); "
                     "assert m['summary'] == w['summary'] and k(m) == k(w), (m['summary'], w['summary']); "
                     "assert m['complete'] and m['exit_status'] == 0 and m['run']['id'] == w['run']['id'] and "
                     "m['run']['shard']['merged'] == 3\" " +
                     wj + " '" + (d / "m.json").string() + "'");
  EXPECT_EQ(py.status, 0) << py.out;
  // a missing shard
  m = run_numref("report merge " + s0 + " " + s2);
  EXPECT_EQ(m.status, 2) << m.out;
  EXPECT_TRUE(contains(m.out, "missing shard 1/3 of run ")) << m.out;
  // a duplicated shard
  m = run_numref("report merge " + s0 + " " + s1 + " " + s2 + " " + s1);
  EXPECT_EQ(m.status, 2) << m.out;
  EXPECT_NE(m.out.find("shard 1/3 given twice: " + (d / "s1.json").string() + " and " + (d / "s1.json").string()),
            std::string::npos)
      << m.out;
  // foreign shards: another seed, another profile
  const std::string seed2 = json_shard(d, "seed2.json", "reference", kShardSel + " --shard 1/3 --seed 2");
  m = run_numref("report merge " + s0 + " " + seed2 + " " + s2);
  EXPECT_EQ(m.status, 2) << m.out;
  EXPECT_NE(m.out.find((d / "seed2.json").string() + ": a shard of another run: seed is '2', "), std::string::npos)
      << m.out;
  const std::string sat =
      json_shard(d, "sat.json", "reference", " --level 0 --ops cast:f16:f8e4m3fn --profile cuda_satfinite --shard 2/3");
  m = run_numref("report merge " + s0 + " " + s1 + " " + sat);
  EXPECT_EQ(m.status, 2) << m.out;
  EXPECT_NE(m.out.find("sat.json: a shard of another run: profiles is 'cuda_satfinite'"), std::string::npos) << m.out;
  // refused: the output is one of the inputs; a JUnit report as input
  m = run_numref("report merge --report json --out " + s0 + " " + s0 + " " + s1 + " " + s2);
  EXPECT_EQ(m.status, 2) << m.out;
  EXPECT_NE(m.out.find("is also an input"), std::string::npos) << m.out;
  EXPECT_EQ(run_numref("report merge --out '" + (d / "r.json").string() + "' " + s0).status, 2);
  EXPECT_FALSE(fs::exists(d / "r.json"));  // nothing written by a refused merge
  fs::remove_all(d);
}

// §34.11 a shard with a mismatch makes the merge fail (exit 1) with the unsharded run's failed
// count and its FAIL lines.
TEST(ConformCli, ReportMergeOfAFailingShardFails) {
  const fs::path d = temp_dir("merge-fail");
  const std::string sel = " --level 0 --ops cast:f32:f8e4m3fn --profile ocp --max-errors 0";
  const CliRun whole = run_numref(conform(broken("tie464")) + sel);
  ASSERT_EQ(whole.status, 1) << whole.out;
  const std::string last = last_line(whole.out);
  const std::string a = json_shard(d, "a.json", broken("tie464"), sel + " --shard 0/2");
  const std::string b = json_shard(d, "b.json", broken("tie464"), sel + " --shard 1/2");
  const CliRun m = run_numref("report merge " + a + " " + b);
  EXPECT_EQ(m.status, 1) << m.out;
  EXPECT_EQ(last_line(m.out), last) << m.out;  // "P passed, F failed, S skipped"
  std::size_t fails = 0, whole_fails = 0;
  for (std::size_t at = m.out.find("\nFAIL "); at != std::string::npos; at = m.out.find("\nFAIL ", at + 1)) ++fails;
  for (std::size_t at = whole.out.find("\nFAIL "); at != std::string::npos; at = whole.out.find("\nFAIL ", at + 1))
    ++whole_fails;
  EXPECT_EQ(fails, whole_fails);
  EXPECT_GT(fails, 0u);
  fs::remove_all(d);
}

// Issue 31 item 9: merge validates what it reads as the runner validates its options (§34.11,
// §34.7). A shard report edited by Python (`edit` is a statement on the parsed report `r`):
// each is refused with exit 2 and one line naming the file and the field, within seconds —
// except the error text with a line break, which is merged (exit 3, a backend failure) with the
// break escaped, so that it cannot forge a line of the report.
TEST(ConformCli, ReportMergeValidatesWhatItReads) {
  const fs::path d = temp_dir("merge-validate");
  const std::string s0 = json_shard(d, "s0.json", "reference", kShardSel + " --shard 0/1");
  auto edited = [&](const std::string& name, const std::string& edit) {
    const std::string out = (d / name).string();
    const CliRun py = run_sh(std::string(NUMREF_PYTHON) + " -c \"import json, sys; r = json.load(open(sys.argv[1])); " +
                             edit + "; json.dump(r, open(sys.argv[2], 'w'))\" " + s0 + " '" + out + "'");
    EXPECT_EQ(py.status, 0) << py.out;
    return out;
  };
  // the merge, stopped after 30 s (exit 124) where it would spin
  auto merge = [&](const std::string& file) { return run_numref("report merge '" + file + "'", "timeout 30 env "); };
  auto one_line_naming = [](const CliRun& m, const std::string& file, const std::string& field) {
    EXPECT_EQ(m.status, 2) << m.out;
    EXPECT_TRUE(contains(m.out, file)) << m.out;
    EXPECT_TRUE(contains(m.out, field)) << m.out;
    EXPECT_EQ(std::count(m.out.begin(), m.out.end(), '\n'), 1) << m.out;
  };
  // a shard count of 10^12 (numref conform --shard allows N <= 2^20), an index out of range
  std::string f = edited("count.json", "r['run']['shard']['count'] = 10**12");
  one_line_naming(merge(f), f, "\"count\" 1000000000000 is out of range");
  f = edited("index.json", "r['run']['shard']['index'] = 7");
  one_line_naming(merge(f), f, "\"index\" 7 is out of range");
  // an exit status that is none of §34.7's (4294967299 = 2^32 + 3 once merged as 3)
  f = edited("status.json", "r['exit_status'] = 4294967299");
  one_line_naming(merge(f), f, "\"exit_status\" 4294967299 is not an exit status of numref conform");
  // a suite count past any run's (the sums must not wrap)
  f = edited("cases.json", "r['backends'][0]['suites'][0]['cases'] = 2**63");
  one_line_naming(merge(f), f, "\"cases\" 9223372036854775808 is out of range");
  // a stopped backend (an error) in a report that exited 0: INCOMPLETE must never exit 0
  f = edited("stopped.json", "r['backends'][0]['error'] = 'boom'");
  one_line_naming(merge(f), f, "exit_status 0");
  // an error text with a line break and an escape: escaped on output, the failure exit 3
  f = edited("forged.json",
             "r['backends'][0]['error'] = 'boom\\nFAIL forged\\x1b[2J'; r['exit_status'] = 3; "
             "r['complete'] = False");
  CliRun m = merge(f);
  EXPECT_EQ(m.status, 3) << m.out;
  EXPECT_TRUE(contains(m.out, "ERROR shard 0/1: boom\\nFAIL forged\\x1b[2J\n")) << m.out;
  EXPECT_FALSE(contains(m.out, "\nFAIL forged")) << m.out;
  EXPECT_TRUE(contains(m.out, "INCOMPLETE")) << m.out;
  // an endless input: refused after a bounded read, not std::bad_alloc
  one_line_naming(merge("/dev/zero"), "/dev/zero", "not valid JSON at byte 0");
  m = run_sh("(printf '{\"x\": \"'; yes x | tr -d '\\n') | timeout 60 '" + std::string(NUMREF_CLI) +
             "' report merge /dev/stdin");
  EXPECT_EQ(m.status, 2) << m.out.substr(0, 400);
  EXPECT_TRUE(contains(m.out, "is larger than")) << m.out.substr(0, 400);
  fs::remove_all(d);
}

// ---- issue 16 item 15: re-run one case (§34.4) ------------------------------------------------

// The location that ends a FAIL line is an id that --case accepts: a generated case and a
// vector case re-run alone give back the same FAIL line and "0 passed, 1 failed"; a malformed
// id and an id of no case of the selection are exit 2.
TEST(ConformCli, CaseRerunsTheCaseOfAFailLine) {
  const std::string sel = conform(broken("tie464")) + " --level 0 --ops cast:f32:f8e4m3fn --profile ocp --max-errors 0";
  const CliRun whole = run_numref(sel);
  ASSERT_EQ(whole.status, 1) << whole.out;
  std::string gen, vec;  // the first FAIL line of each kind
  std::istringstream in(whole.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("FAIL ", 0) != 0) continue;
    const std::string loc = line.substr(line.rfind(" | ") + 3);
    if (gen.empty() && loc.rfind("generated:", 0) == 0) gen = line;
    if (vec.empty() && loc.find(".vec:") != std::string::npos) vec = line;
  }
  ASSERT_FALSE(gen.empty() || vec.empty()) << whole.out;
  for (const std::string& line : {gen, vec}) {
    const std::string id = line.substr(line.rfind(" | ") + 3);
    const CliRun r = run_numref(sel + " --case '" + id + "'");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("\n" + line + "\n"), std::string::npos) << id << "\n" << r.out;
    EXPECT_EQ(last_line(r.out), "0 passed, 1 failed, 0 skipped") << r.out;
  }
  const CliRun bad = run_numref(sel + " --case nonsense");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("--case: 'nonsense' is not a case location"), std::string::npos) << bad.out;
  const std::string gid = gen.substr(gen.rfind(" | ") + 3);
  const CliRun none = run_numref(sel + " --case '" + gid.substr(0, gid.find('#')) + "#99999999'");
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_TRUE(contains(last_line(none.out), "NOTHING COMPARED: 0 passed, 0 failed, 0 skipped (--case ")) << none.out;
  EXPECT_EQ(run_numref(sel + " --case '" + gid + "' --shard 0/2").status, 2);
}

// §34.4 --dump-failures DIR: each printed failing tensor case is written as its input tensor
// (.npy; the element the FAIL line names holds the code it prints) and a .txt file whose
// --case command re-runs the case alone (and fails again); a missing DIR is exit 2.
TEST(ConformCli, DumpFailuresWritesTensorCasesThatReproduce) {
  const fs::path d = temp_dir("dump");
  const std::string sel = conform(broken("mxfloor")) + " --level 0 --ops quantize --max-errors 1";
  const CliRun r = run_numref(sel + " --dump-failures '" + d.string() + "'");
  EXPECT_EQ(r.status, 1) << r.out;
  std::vector<fs::path> txts;
  for (const auto& e : fs::directory_iterator(d))
    if (e.path().extension() == ".txt") txts.push_back(e.path());
  ASSERT_FALSE(txts.empty()) << r.out;
  std::size_t fails = 0;
  for (std::size_t at = r.out.find("\nFAIL "); at != std::string::npos; at = r.out.find("\nFAIL ", at + 1)) ++fails;
  EXPECT_EQ(txts.size(), fails);  // one per printed FAIL line (every one is a tensor case here)
  const std::string txt = slurp(txts.front());
  ASSERT_EQ(txt.rfind("FAIL quantize ", 0), 0u) << txt;
  EXPECT_NE(r.out.find(txt.substr(0, txt.find('\n')) + "\n"), std::string::npos) << txt;  // the printed line
  // the command re-runs the one case: it fails again
  const std::size_t c = txt.find("  numref conform ");
  ASSERT_NE(c, std::string::npos) << txt;
  const std::string cmd = txt.substr(c + 9, txt.find('\n', c) - c - 9);
  const CliRun again = run_numref(cmd + " --no-progress");
  EXPECT_EQ(again.status, 1) << cmd << "\n" << again.out;  // (a vector line may hold several cases: all run)
  EXPECT_NE(again.out.find("\n" + txt.substr(0, txt.find('\n')) + "\n"), std::string::npos) << again.out;
  // the .npy holds the input: the element named in the FAIL line has the printed code
  std::ofstream(d / "check.py") << R"PY(
import re, sys, numpy as np
txt = open(sys.argv[1]).read()
m = re.search(r"element \((\d+),(\d+)\) x=([0-9a-f]+)", txt)
npy = re.search(r"  x: (\S+\.npy)", txt).group(1)
a = np.load(sys.argv[2] + "/" + npy)
v = a.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[a.dtype.itemsize])
i, j, code = int(m.group(1)), int(m.group(2)), int(m.group(3), 16)
assert v[i, j] == code, (v[i, j], code, a.shape)
)PY";
  const CliRun py = run_sh(std::string(NUMREF_PYTHON) + " '" + (d / "check.py").string() + "' '" +
                           txts.front().string() + "' '" + d.string() + "'");
  EXPECT_EQ(py.status, 0) << py.out << txt;
  const CliRun missing = run_numref(sel + " --dump-failures '" + (d / "nope").string() + "'");
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_NE(missing.out.find("--dump-failures: '" + (d / "nope").string() + "' is not an existing directory"),
            std::string::npos)
      << missing.out;
  fs::remove_all(d);
}

// §32.2 / §34.3 A backend built against the ABI 1.6 header that answers 1 to every cast and maps
// a nan value it does not know onto nan=raw (as two real backends did when 1.7 added
// nan=raw_plus): the runner proves 1.3 from its table's layout and never offers it the 1.7 value,
// so it passes unchanged — the torch profile's f8e4m3fnuz -> f32 suites (rule nan=raw_plus) are
// declined, not failed. The same source built against today's header declares the current minor
// version, is offered raw_plus and fails exactly there: the decline is what keeps it passing.
TEST(CliConform, AnOlderMinorVersionIsNeverOfferedALaterValue) {
  const std::string args = " --profile torch --ops cast:f8e4m3fnuz --level 0";
  const CliRun old = run_numref(conform(NUMREF_ABI16_SO) + args);
  EXPECT_EQ(old.status, 0) << old.out;
  EXPECT_TRUE(contains(old.out, "{p} passed, 0 failed, {p} skipped")) << old.out;
  // §34.3 the report says why, per reason: every skipped case here is a declined raw_plus suite
  EXPECT_TRUE(contains(old.out, "   skipped: {p} need C ABI 1.7 values, the backend declares 1.3 (cast {p})\n"))
      << old.out;
  const CliRun now = run_numref(conform(NUMREF_ABI_NOW_SO) + args);
  EXPECT_EQ(now.status, 1) << now.out;
  EXPECT_TRUE(contains(now.out, "{p} passed, {p} failed, 0 skipped")) << now.out;
  EXPECT_EQ(now.out.find("   skipped: "), std::string::npos) << now.out;
  EXPECT_NE(now.out.find("f8e4m3fnuz->f32"), std::string::npos) << now.out;  // where it fails: the raw_plus pair
  EXPECT_EQ(now.out.find("f8e4m3fnuz->f16"), std::string::npos) << now.out;
}
