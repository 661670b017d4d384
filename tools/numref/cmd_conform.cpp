// numref conform — run a backend against the reference: golden vectors, then seeded
// generated cases; one line per mismatch, a summary, JSON / JUnit reports.    spec §34
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "numref/conform/backend.hpp"
#include "numref/conform/runner.hpp"

namespace numref::cli::cmd_conform {
namespace {

constexpr const char* kUsage = R"(usage: numref conform [--backend NAME|PATH.so|pipe:CMD|all] [options]

Checks an implementation against the numref reference, bit for bit (spec §34): first the
golden vectors (vectors/, verified against vectors/MANIFEST), then seeded generated cases.
Prints one line per mismatch (op, policy, inputs, got vs expected in hex and decoded, and a
classification), a summary table per op and profile, and a final line
"N passed, N failed, N skipped" -- prefixed INCOMPLETE, INTERRUPTED or NOTHING COMPARED, with
the reason, when the run did not check everything it was asked to.

  --backend B        reference | cpu-fast | nv-host (built-in plugins), PATH.so[?args]
                     (a C ABI backend, conformance/include/numref/backend.h),
                     pipe:COMMAND (a program speaking the pipe protocol, docs/conformance.md),
                     or all: every built-in backend against the profiles it claims (default)
  --profile P[,Q]    check these profiles (ocp, cuda_satfinite, cuda_nosat, ml_dtypes, ieee)
                     instead of the ones the backend claims
  --ops LIST         operations, comma separated: cast, or cast:FROM[:TO] (formats or *)
  --level L          0 (seconds), 1 (about a minute for all built-in backends),
                     2 (many millions), exhaustive (every <=16-bit input, every f32 input)
  --seed S           seed of the generated cases (default 1)
  --shard I/N        run only shard I of N, 0 <= I < N (every suite's cases split in N
                     ranges; 0/4 .. 3/4 are the four shards)
  --case ID          re-run one case: ID is the location that ends a FAIL line,
                     <vector file>:<line> or generated:<suite>#<index> (give the same
                     --ops, --profile, --level and --seed as the run that printed it)
  --dump-failures DIR  write each printed failing tensor / MoR case into DIR (which must
                     exist): its input tensors as .npy and a .txt file with the FAIL line
                     and the numref conform --case command that re-runs it
  --max-errors N     mismatch lines printed per suite (default 20, 0 = all); counting goes on;
                     the --report json|junit file lists every mismatch
  --any-nan          any NaN result matches any expected NaN (reported as such)
  --strict           known departures declared by the backend count as failures
  --show-departures  print a DEPARTURE line per known departure (default: counted per class
                     in the summary)
  --require-backend  a backend that reports itself unavailable on this machine (no GPU, ...)
                     makes the run exit 77 instead of being skipped with status 0
  --report FORMAT    text (default), json or junit
  --out FILE         write the report there (json/junit: the text report stays on stdout);
                     refused before the run when its directory is missing, it is a
                     directory, or it is an input (a file under --vectors)
  --vectors DIR      golden-vector directory (default: the source tree's vectors/), or none;
                     a DIR that does not exist is an error
  --jobs N           worker threads, one backend instance each (default: number of CPUs)
  --timeout S        seconds a backend may take per batch before it is killed (default 60)
  --no-isolate       load plugins into this process (no crash/hang protection; for debuggers)
  --no-progress      no progress bar / progress lines on stderr
  --verbose          summary rows per op and profile, and one per suite (default: per op)
  --list-backends    list the built-in backends and exit

exit status: 0 all compared cases passed, 1 mismatches, 2 usage, output or vector-file
error (a golden vector that disagrees with the reference included), or a run that compared
no case at all, 3 backend failure (load, ABI version, crash, timeout, wrong result count, protocol),
77 a backend was unavailable and --require-backend was given (otherwise: SKIPPED, 0),
130 interrupted (the report so far is written)
)";

std::vector<std::string> split_commas(const std::vector<std::string>& vals) {
  std::vector<std::string> out;
  for (const auto& v : vals) {
    std::size_t i = 0;
    while (i <= v.size()) {
      const std::size_t j = std::min(v.find(',', i), v.size());
      if (j > i) out.push_back(v.substr(i, j - i));
      i = j + 1;
    }
  }
  return out;
}

int list_backends() {
  const std::string dir = conform::backend_dir();
  std::printf("built-in backends in %s:\n", dir.empty() ? "(none found)" : dir.c_str());
  for (const auto& n : conform::builtin_backends()) {
    try {
      auto b = conform::open_backend(conform::resolve_backend(n), conform::OpenOptions{true, 30.0});
      const auto& i = b->info();
      std::string prof, ops;
      for (const auto& p : i.profiles) {
        if (!prof.empty()) prof += " ";
        prof += p;
      }
      for (const auto& o : i.ops) {
        if (!ops.empty()) ops += " ";
        ops += o;
      }
      std::printf("  %-10s %s (%s) ops: %s; profiles: %s; flags: %s; %zu known departures\n", n.c_str(),
                  i.version.c_str(), i.description.c_str(), ops.c_str(), prof.c_str(), i.flags ? "yes" : "no",
                  i.departures.size());
    } catch (const conform::BackendError& e) {
      // §32.6 a backend that cannot run on this machine says why
      std::printf("  %-10s %s: %s\n", n.c_str(),
                  e.kind == conform::BackendError::Kind::unavailable ? "unavailable" : "cannot be opened", e.what());
    } catch (const std::exception& e) {
      std::printf("  %-10s cannot be opened: %s\n", n.c_str(), e.what());
    }
  }
  return 0;
}

int run(Args& a) {
  if (a.flag("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (a.flag("list-backends")) {
    a.finish();
    return list_backends();
  }
  conform::RunConfig c;
  c.backend = a.opt_or("backend", "all");
  c.profiles = split_commas(a.multi("profile"));
  c.ops = split_commas(a.multi("ops"));
  const std::string level = a.opt_or("level", "0");
  if (level == "0")
    c.level = conform::Level::l0;
  else if (level == "1")
    c.level = conform::Level::l1;
  else if (level == "2")
    c.level = conform::Level::l2;
  else if (level == "exhaustive")
    c.level = conform::Level::exhaustive;
  else
    throw UsageError("--level: '" + level + "' is not 0, 1, 2 or exhaustive");
  if (auto s = a.opt("seed")) c.seed = static_cast<std::uint64_t>(parse_int(*s, 0, (1LL << 53), "--seed"));
  if (auto s = a.opt("shard")) {
    // §34.3 I/N with 0 <= I < N, as scripts/sweep.sh, Slurm array and Kubernetes indices count
    const auto slash = s->find('/');
    if (slash == std::string::npos) throw UsageError("--shard: expected I/N (0 <= I < N), got '" + *s + "'");
    const long long n = parse_int(s->substr(slash + 1), 1, 1 << 20, "--shard N");
    const long long i = parse_int(s->substr(0, slash), 0, n - 1, "--shard I (0 <= I < N)");
    c.shard_index = static_cast<std::uint64_t>(i);
    c.shard_count = static_cast<std::uint64_t>(n);
  }
  c.case_id = a.opt_or("case", "");
  c.dump_dir = a.opt_or("dump-failures", "");
  if (auto s = a.opt("max-errors"))
    c.max_errors = static_cast<std::uint64_t>(parse_int(*s, 0, 1LL << 40, "--max-errors"));
  c.any_nan = a.flag("any-nan");
  c.strict = a.flag("strict");
  c.show_departures = a.flag("show-departures");
  c.require_backend = a.flag("require-backend");
  const std::string rep = a.opt_or("report", "text");
  if (rep == "text")
    c.report = conform::ReportFormat::text;
  else if (rep == "json")
    c.report = conform::ReportFormat::json;
  else if (rep == "junit")
    c.report = conform::ReportFormat::junit;
  else
    throw UsageError("--report: '" + rep + "' is not text, json or junit");
  c.out = a.opt_or("out", "");
  c.vectors_dir = a.opt_or("vectors", "");
  if (auto s = a.opt("jobs")) c.jobs = static_cast<int>(parse_int(*s, 1, 256, "--jobs"));
  if (auto s = a.opt("timeout")) c.timeout_s = static_cast<double>(parse_int(*s, 1, 86400, "--timeout"));
  c.isolate = !a.flag("no-isolate");
  if (a.flag("no-progress")) c.progress = 0;
  c.verbose = a.flag("verbose");
  a.finish();
  try {
    return conform::run_conform(c, stdout);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

NUMREF_VERB("conform", "check a backend against the reference: golden vectors + generated cases (§34)", run);

}  // namespace
}  // namespace numref::cli::cmd_conform
