// numref conformance — the runner: golden vectors, then generated cases, against one
// backend or all built-in ones, with reports.                            spec §34
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "numref/conform/backend.hpp"
#include "numref/conform/core.hpp"

namespace numref::conform {

enum class ReportFormat { text, json, junit };

struct RunConfig {
  std::string backend = "reference";  // NAME | PATH.so | pipe:CMD | all; with `table`: its display name
  // A backend table made in this process (numref.conform.check from Python), run in this process
  // by one worker instead of `backend` (open_table_in_process; the caller keeps it alive).
  const numref_backend* table = nullptr;
  std::vector<std::string> profiles;  // empty: the profiles the backend claims
  std::vector<std::string> ops;       // empty: every family; "cast", "cast:f32:f8e4m3fn", ...
  Level level = Level::l0;
  std::uint64_t seed = 1;
  std::uint64_t shard_index = 0, shard_count = 1;  // --shard I/N, 0 <= I < N (§34.3)
  std::uint64_t max_errors = 20;  // mismatch lines printed per suite (0 = all); reports files are not capped
  bool show_departures = false;   // print the DEPARTURE lines (default: counted per class only)
  bool any_nan = false;
  bool strict = false;      // known departures count as failures
  std::string vectors_dir;  // "" = default; "none" = skip the golden vectors
  int jobs = 0;             // 0 = number of CPUs
  double timeout_s = 60.0;
  bool isolate = true;
  bool verbose = false;  // per-suite summary rows
  ReportFormat report = ReportFormat::text;
  std::string out;    // report file ("" = stdout)
  int progress = -1;  // -1 auto (TTY), 0 off, 1 on
  bool require_backend = false;
  // §34.4 re-run one case: the location of a FAIL line, "<vector file>:<line>" or
  // "generated:<suite>#<index>" (with the run's --ops, --profile, --level and --seed)
  std::string case_id;
  // §34.4 write each failing tensor case printed (--max-errors) as .npy inputs and a .txt file
  // with the command that reproduces it, into this existing directory ("" = none)
  std::string dump_dir;  // §34.7 an unavailable backend (§32.6) exits 77 instead of 0
};

// §34.7 Exit status.
enum ExitCode : int {
  kExitPass = 0,           // every compared case matched (skips allowed)
  kExitMismatch = 1,       // at least one mismatch
  kExitUsage = 2,          // bad options or output, vector error (malformed, MANIFEST, a wrong vector),
                           // or a run that compared no case
  kExitBackend = 3,        // the backend failed: load / ABI / crash / timeout / count / protocol
  kExitUnavailable = 77,   // --require-backend and a backend was unavailable (§32.6; CTest's skip code)
  kExitInterrupted = 130,  // SIGINT / SIGTERM: the report so far is written
};

// Runs the configuration; writes the text report to `text` (streaming) and the
// --report json|junit file. Returns the exit status. Throws std::invalid_argument for
// usage errors found before anything ran.
int run_conform(const RunConfig& cfg, std::FILE* text);

// The default golden-vector directory: $NUMREF_VECTORS, else the source tree's vectors/.
// §34.2 The default golden-vector directory: $NUMREF_VECTORS, else <exe>/../share/numref/vectors
// (install layout), else the source tree's vectors/ (build layout); the first holding a MANIFEST.
// "" when none does (the run then stops with exit 2 naming the candidates).
std::vector<std::string> default_vectors_candidates();
std::string default_vectors_dir();

}  // namespace numref::conform
