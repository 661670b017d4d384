// numref conformance — the runner.                                       spec §34
//
// For each backend: open one instance per worker (one child process each when
// isolated), run the golden vectors, then the generated suites of the level, comparing
// every case with the reference. Work is cut into batches that workers process in
// parallel; results are merged in submission order, so reports are deterministic.
// Cases stream: at most a window of batches exists at any time (§34.3 memory bound).
//
// This file orchestrates; the pieces are listed in run.hpp.
#include "numref/conform/runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "numref/conform/output.hpp"
#include "numref/policy.hpp"
#include "pool.hpp"
#include "report.hpp"
#include "run.hpp"

namespace numref::conform {

namespace {

using runner::Clock;
using runner::Families;

extern "C" void on_signal(int) { request_stop(); }  // §34.6 (backend.hpp)

// ---- one backend -------------------------------------------------------------------------------

// Opens one instance per worker. An unavailable backend (§32.6) is SKIPPED and a failure to
// open is an error: both are reported, and their exit status returned; nullopt when opened.
std::optional<int> open_instances(const RunConfig& cfg, const std::string& backend_arg, BackendReport& rep,
                                  std::FILE* text, Clock::time_point t0,
                                  std::vector<std::unique_ptr<Backend>>& backends) {
  if (cfg.table) {  // a table made in this process: one instance, no child process
    try {
      backends.push_back(open_table_in_process(cfg.table, "in process: " + backend_arg));
      return std::nullopt;
    } catch (const BackendError& e) {
      rep.info.name = backend_arg;
      rep.error = e.what();
      rep.error_exit = kExitBackend;
      std::fprintf(text, "ERROR %s\n", e.what());
      return kExitBackend;
    }
  }
  BackendSpec spec;
  try {
    spec = resolve_backend(backend_arg);
  } catch (const std::invalid_argument& e) {
    rep.error = e.what();
    rep.error_exit = kExitUsage;
    std::fprintf(text, "ERROR %s\n", e.what());
    return kExitUsage;
  }
  OpenOptions oo;
  oo.isolate = cfg.isolate;
  oo.timeout_s = cfg.timeout_s;
  const int jobs = cfg.jobs > 0 ? cfg.jobs : std::max(1u, std::thread::hardware_concurrency());
  try {
    // All instances are created here, in the main thread, before any worker starts
    // (fork() of isolated plugins happens while the process is single-threaded).
    for (int i = 0; i < jobs; ++i) backends.push_back(open_backend(spec, oo));
  } catch (const BackendError& e) {
    rep.info.name = backend_arg;
    if (e.kind == BackendError::Kind::unavailable) {
      // §32.6 not a failure: every suite of the backend is skipped, with the reason.
      rep.unavailable = e.what();
      rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      std::fprintf(text, "== backend %s\nSKIPPED %s: unavailable: %s%s\n", backend_arg.c_str(), backend_arg.c_str(),
                   e.what(), cfg.require_backend ? " (--require-backend: exit status 77)" : "");
      std::fflush(text);
      return cfg.require_backend ? kExitUnavailable : kExitPass;
    }
    rep.error = e.what();
    rep.error_exit = kExitBackend;
    std::fprintf(text, "ERROR %s\n", e.what());
    return kExitBackend;
  }
  return std::nullopt;
}

// The report of an opened backend before its cases run: the JSON spool, the profiles, the ops
// it does not implement, the header. An error's exit status; nullopt when it can run.
std::optional<int> begin_report(const RunConfig& cfg, const RunIdentity& id, const Families& fams, BackendReport& rep,
                                std::FILE* text) {
  if (cfg.report == ReportFormat::json) {
    rep.spool.reset(std::tmpfile(), [](std::FILE* f) {
      if (f) std::fclose(f);
    });
    if (!rep.spool) {
      rep.error = std::string("cannot create a temporary file for the report's mismatches: ") + std::strerror(errno);
      rep.error_exit = kExitUsage;
      std::fprintf(text, "ERROR %s\n", rep.error.c_str());
      return kExitUsage;
    }
  }
  rep.profiles = runner::profiles_for(cfg, rep.info, rep.notes);
  // the op families the backend does not implement: their cases are skipped, and the report's
  // "skipped:" line says so per family (§34.3)
  for (const auto& [f, sel] : fams) rep.ops.emplace_back(f->name());
  text_header(text, cfg, id, rep);
  return std::nullopt;
}

// The stages on the pool of backend instances: the golden vectors (§34.2), then the generated
// cases (§34.3). An error that stops them is recorded in c.rep.
void run_stages(runner::Context& c, std::vector<std::unique_ptr<Backend>>& backends, std::FILE* text,
                runner::Progress& prog, const Families& fams, const std::string& vdir) {
  BackendReport& rep = c.rep;
  runner::Pipeline pipe(c, backends, text, prog);
  try {
    if (!vdir.empty()) runner::run_vectors(c, pipe, prog, fams, vdir);
    if (!pipe.failed() && !stop_requested()) runner::run_generated(c, pipe, prog, *backends[0], fams);
  } catch (const VectorError& e) {
    pipe.drain();
    prog.finish();
    rep.error = std::string("golden vectors: ") + e.what();
    rep.error_exit = kExitUsage;
    std::fprintf(text, "ERROR %s\n", rep.error.c_str());
  } catch (const BackendError& e) {
    pipe.drain();
    prog.finish();
    if (rep.error.empty() && e.kind != BackendError::Kind::interrupted) {
      rep.error = e.what();
      rep.error_exit = kExitBackend;
      std::fprintf(text, "ERROR %s\n", rep.error.c_str());
    }
  }
  pipe.drain();
}

// §34.7 A backend's exit status.
int backend_status(const RunConfig& cfg, const BackendReport& rep) {
  if (!rep.error.empty()) return rep.error_exit;
  if (rep.interrupted) return kExitInterrupted;
  if (rep.total(&SuiteStats::failed) > 0 || (cfg.strict && rep.total(&SuiteStats::departures) > 0))
    return kExitMismatch;
  return kExitPass;
}

int run_one(const RunConfig& cfg, const RunIdentity& id, const std::string& backend_arg, BackendReport& rep,
            std::FILE* text, const Families& fams, const std::string& vdir) {
  const auto t0 = Clock::now();
  rep.display = backend_arg;
  std::vector<std::unique_ptr<Backend>> backends;
  if (const auto s = open_instances(cfg, backend_arg, rep, text, t0, backends)) return *s;
  rep.opened = true;
  rep.info = backends[0]->info();
  if (const auto s = begin_report(cfg, id, fams, rep, text)) return *s;

  runner::Context ctx{cfg, runner::parse_case_id(cfg.case_id), rep, {}, {}, cfg.report != ReportFormat::text};
  ctx.cmp.caps = rep.info.caps();
  ctx.cmp.any_nan = cfg.any_nan;
  const bool tty = isatty(2) != 0;
  runner::Progress prog(tty, cfg.progress < 0 ? true : cfg.progress == 1);
  run_stages(ctx, backends, text, prog, fams, vdir);
  prog.finish();
  rep.interrupted = stop_requested();
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  text_summary(text, cfg, rep);
  return backend_status(cfg, rep);
}

// ---- the run -------------------------------------------------------------------------------------

// Usage errors found in the options before anything runs (std::invalid_argument).
void check_options(const RunConfig& cfg) {
  if (cfg.shard_count == 0 || cfg.shard_index >= cfg.shard_count)
    throw std::invalid_argument("--shard I/N needs 0 <= I < N");
  if (!cfg.case_id.empty() && cfg.shard_count > 1)
    throw std::invalid_argument("--case runs one case: no --shard with it");
  runner::parse_case_id(cfg.case_id);  // a malformed --case is a usage error before anything runs
  if (!cfg.dump_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(cfg.dump_dir, ec))
      throw std::invalid_argument("--dump-failures: '" + cfg.dump_dir + "' is not an existing directory");
  }
}

// The --backend arguments the run checks in turn (all: the built-in backends).
std::vector<std::string> backend_names(const RunConfig& cfg) {
  std::vector<std::string> names;
  if (cfg.backend == "all" && !cfg.table) {
    names = builtin_backends();
    if (names.empty())
      throw std::invalid_argument("--backend all: no built-in backends found in '" + backend_dir() + "'");
  } else {
    names.push_back(cfg.backend);
  }
  return names;
}

// §35.1 The files a run reads: every file under the vector directory, and a backend library.
std::vector<std::string> run_inputs(const RunConfig& cfg, const std::string& vdir) {
  std::vector<std::string> in;
  if (!vdir.empty()) {
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(vdir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec)) in.push_back(it->path().string());
  }
  const std::string lib = cfg.backend.substr(0, cfg.backend.find('?'));  // a PATH.so backend (not a built-in name)
  if (cfg.backend.rfind("pipe:", 0) != 0 && lib.find('/') != std::string::npos) in.push_back(lib);
  return in;
}

// §35.1 The report file is checked (and refused when it is an input) before anything runs;
// it is written to a temporary file and renamed at the end (`out`: none without --out).
void open_report_file(const RunConfig& cfg, const std::string& vdir, std::optional<OutputFile>& out) {
  try {
    if (!cfg.out.empty()) {
      refuse_output_that_is_input("--out", cfg.out, run_inputs(cfg, vdir));
      out.emplace(cfg.out);
    }
  } catch (const OutputError& e) {
    throw std::invalid_argument(cfg.out.empty() || std::string_view(e.what()).rfind("--out", 0) == 0
                                    ? std::string(e.what())
                                    : "--out " + std::string(e.what()));
  }
}

// §34.7 The run's status from its backends': errors, then mismatches, then unavailable (77);
// a run that compared nothing does not pass (rr.nothing_compared says why).
int run_status(const RunConfig& cfg, const std::vector<std::string>& names, const std::vector<int>& statuses,
               RunReport& rr) {
  int status = kExitPass;
  bool unavailable = false;
  for (const int s : statuses) {
    if (s == kExitInterrupted || s == kExitBackend || s == kExitUsage)
      status = std::max(status, s);
    else if (s == kExitMismatch && status == kExitPass)
      status = kExitMismatch;
    else if (s == kExitUnavailable)
      unavailable = true;
  }
  if (stop_requested()) status = std::max<int>(status, kExitInterrupted);  // §34.7 (a stop while opening)
  // §34.7 a run that compared nothing does not pass: every backend that ran compared no case
  // (unavailable backends are SKIPPED with their reason, §32.6, and do not count here).
  if (status == kExitPass) {
    std::uint64_t cmp = 0;
    const BackendReport* ran = nullptr;
    for (const auto& b : rr.backends)
      if (b.opened) {
        cmp += b.compared();
        if (!ran) ran = &b;
      }
    std::uint64_t cases = 0;
    for (const auto& b : rr.backends) cases += b.total(&SuiteStats::cases);
    if (ran && !cfg.case_id.empty() && cases == 0) {
      rr.nothing_compared = "--case " + cfg.case_id +
                            ": no such case in this selection (give the --ops, --profile, "
                            "--level and --seed of the run that printed it)";
      status = kExitUsage;
    } else if (ran && cmp == 0) {
      rr.nothing_compared = names.size() > 1 ? "no backend compared a case" : ran->nothing_compared_reason(cfg);
      status = kExitUsage;
    }
  }
  // §34.7 77 only when nothing worse happened: errors, then mismatches, come first.
  if (unavailable && status == kExitPass) status = kExitUnavailable;
  return status;
}

// Writes the JSON / JUnit report and commits the report file. §35 write errors of the report
// (a full disk, /dev/full) and of standard output are errors of the run: exit 2 (a backend
// failure or an interrupt keeps its own, larger status).
int finish_reports(const RunConfig& cfg, RunReport& rr, std::optional<OutputFile>& out, int status) {
  auto output_failed = [&](const std::string& what) {
    std::fprintf(stderr, "numref conform: %s\n", what.c_str());
    if (status != kExitBackend && status != kExitInterrupted) status = kExitUsage;
  };
  try {
    if (cfg.report != ReportFormat::text) {
      rr.exit_status = status;
      std::FILE* f = out ? out->file() : stdout;
      if (cfg.report == ReportFormat::json)
        json_report(rr, f);
      else
        junit_report(rr, f);
      for (const auto& b : rr.backends)
        if (b.spool && std::ferror(b.spool.get()))
          throw OutputError("the temporary file of the report's mismatches: read or write failed");
    }
    if (out) out->commit();
  } catch (const OutputError& e) {
    output_failed(std::string("--out ") + e.what());
  }
  try {
    check_stdout();
  } catch (const OutputError& e) {
    output_failed(e.what());
  }
  return status;
}

// §34.6 SIGINT / SIGTERM stop the run (request_stop()); the previous handlers are restored at
// its end.
struct StopHandlers {
  struct sigaction old_int {
  }, old_term{};
};
StopHandlers install_stop_handlers() {
  clear_stop();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  StopHandlers h;
  sigaction(SIGINT, &sa, &h.old_int);
  sigaction(SIGTERM, &sa, &h.old_term);
  signal(SIGPIPE, SIG_IGN);  // a dead backend must not kill the runner
  return h;
}
void restore_stop_handlers(const StopHandlers& h) {
  sigaction(SIGINT, &h.old_int, nullptr);
  sigaction(SIGTERM, &h.old_term, nullptr);
}

}  // namespace

int run_conform(const RunConfig& cfg, std::FILE* text_out) {
  check_options(cfg);
  const auto fams = runner::select_families(cfg);
  for (const auto& p : cfg.profiles)
    if (!find_profile(p)) throw std::invalid_argument("--profile: unknown profile '" + p + "'");
  const std::vector<std::string> names = backend_names(cfg);
  std::string vdesc;
  const std::string vdir = runner::vectors_dir_of(cfg, vdesc);

  // JSON / JUnit go to --out (or stdout); the text report then goes to stdout unless it would
  // mix with the JSON/XML.
  std::optional<OutputFile> out;
  open_report_file(cfg, vdir, out);
  std::FILE* text = text_out;
  FILE* devnull = nullptr;
  if (cfg.report == ReportFormat::text && out) {
    text = out->file();
  } else if (cfg.report != ReportFormat::text && !out) {
    devnull = std::fopen("/dev/null", "w");
    text = devnull;
  }

  const StopHandlers handlers = install_stop_handlers();
  RunReport rr;
  rr.cfg = cfg;
  rr.id = run_identity(cfg, vdir);  // §34.4 versions, parameters, run id
  text_run(text, rr.id);
  std::vector<int> statuses;
  for (const auto& n : names) {
    rr.backends.emplace_back();
    rr.backends.back().vectors = vdesc;
    statuses.push_back(run_one(cfg, rr.id, n, rr.backends.back(), text, fams, vdir));
    if (stop_requested()) break;
  }
  int status = run_status(cfg, names, statuses, rr);
  rr.interrupted = stop_requested();
  if (names.size() > 1) {
    std::fprintf(text, "== all backends\n");
  }
  text_total(text, rr);
  status = finish_reports(cfg, rr, out, status);
  if (devnull) std::fclose(devnull);
  restore_stop_handlers(handlers);
  return status;
}

}  // namespace numref::conform
