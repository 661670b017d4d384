// numref conformance — the runner's pieces, as its files share them.               spec §34
//
// Private to conformance/src. runner.cpp orchestrates a run (run_conform(): the options, the
// report file, signals; run_one(): one backend); the pieces are one file each:
//   select.cpp           what runs: op families (--ops), profiles, --case, shards, the vector directory
//   stage_vectors.cpp    the golden-vector stage (§34.2)
//   stage_generated.cpp  the generated stage (§34.3)
//   judge.cpp            one job's cases run on a backend and compared with the reference
//   pool.hpp / pool.cpp  the workers (one backend instance each) and the in-order merge
//   dump.cpp             --dump-failures: a failing tensor case's files
//   progress.cpp         the progress line on stderr
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numref/conform/backend.hpp"
#include "numref/conform/core.hpp"
#include "numref/conform/runner.hpp"
#include "report.hpp"

namespace numref::conform::runner {

using Clock = std::chrono::steady_clock;

// The op families a run checks, each with its --ops selectors (empty = all of its suites).
using Families = std::vector<std::pair<const Family*, std::vector<std::string>>>;

// ---- what runs (select.cpp) --------------------------------------------------------------------

// Families selected by --ops, with their selectors. Throws std::invalid_argument.
Families select_families(const RunConfig& cfg);
// The profiles a backend is checked under: --profile, else the ones it claims (else four
// defaults); a profile with the same policies as an earlier one, and neither with pair rules or a
// recipe, is checked once (§34.2). Notes for the report are appended to `notes`.
std::vector<std::string> profiles_for(const RunConfig& cfg, const BackendInfo& info, std::vector<std::string>& notes);

// §34.4 --case ID parsed: a vector case (file, line) or a generated one (suite, index).
struct CaseId {
  bool generated = false;
  std::string file, suite;
  std::uint64_t line = 0, index = 0;
};
// nullopt for ""; throws std::invalid_argument for what is not a case location.
std::optional<CaseId> parse_case_id(const std::string& s);

// §34.3 shard rule: the range [lo, hi) of a suite's `size` cases that this shard runs.
std::pair<std::uint64_t, std::uint64_t> shard_range(std::uint64_t size, const RunConfig& c);

// §34.2 The golden-vector directory of the run: --vectors DIR (must exist), else the default
// (when it exists); "" = none. `description` is what the report says of it.
std::string vectors_dir_of(const RunConfig& cfg, std::string& description);

// ---- a run of one backend: its context and jobs ----------------------------------------------

// Support answers, shared by the workers and the main thread.
class SupportCache {
 public:
  std::optional<bool> get(const std::string& key);
  void put(const std::string& key, bool v);

 private:
  std::mutex mu_;
  std::map<std::string, bool> m_;
};

struct Context {
  const RunConfig& cfg;
  std::optional<CaseId> only;  // --case
  BackendReport& rep;
  SupportCache support;
  CompareOptions cmp;
  bool keep_all = false;     // a JSON / JUnit report: every mismatch is kept for it
  std::uint64_t dumped = 0;  // --dump-failures: cases written
  bool dump_failed = false;
};

// A batch of cases of one suite, for one worker.
struct Job {
  std::uint64_t seq = 0;
  ParamsPtr params;
  std::size_t suite = 0;  // index into BackendReport::suites
  std::string source;     // "generated" or the vector file
  // generated cases
  std::shared_ptr<const CaseSource> cases;
  std::uint64_t first = 0;
  // vector cases: inputs and expected words prefilled, with their line numbers
  std::vector<std::uint32_t> in, exp;
  std::vector<int> lines;
  std::size_t n = 0;
  bool check_support = false;
};

struct JobResult {
  std::uint64_t seq = 0;
  std::size_t suite = 0;
  std::uint64_t n = 0, passed = 0, failed = 0, skipped = 0, departures = 0, any_nan = 0;
  std::string skip_reason;  // why `skipped` cases were not run (skip_reason())
  std::vector<Mismatch> mismatches;
  std::map<std::string, std::uint64_t> departure_classes;  // "<op> <class>" -> count
  std::string error;
  int error_exit = 0;
};

// ---- judging a job (judge.cpp) -------------------------------------------------------------------

// The most cases of a shape in one batch (§34.3 memory bound).
std::size_t batch_limit(Shape s);
// §34.4 The id of a generated suite in a case location: 12 hex digits of the FNV-1a hash of
// the family's name and the suite's canonical text.
std::string suite_id(const Params& p);
// Whether the backend claims op family `op`.
bool implements(const BackendInfo& i, std::string_view op);
// Why the backend does not run the suite as "<reason>: <op family>", "" when it does (the backend's support query is asked
// once per suite, cached in c.support): §34.3 the reasons a report lists with its skipped counts.
std::string skip_reason(Context& c, Backend& b, const Params& p);
inline bool is_supported(Context& c, Backend& b, const Params& p) { return skip_reason(c, b, p).empty(); }
// Runs the job's cases on the backend and compares every case with the reference.
JobResult judge_job(Context& c, Backend& b, Job& j);

// ---- the rest -------------------------------------------------------------------------------------

// §34.4 --dump-failures: writes the failing tensor case m (dump.cpp).
void dump_case(Context& c, const Mismatch& m);

// The progress line on stderr (progress.cpp): a bar with ETA on a terminal, a line every 10 s
// otherwise.
class Progress {
 public:
  explicit Progress(bool tty, bool enabled) : tty_(tty), enabled_(enabled) {}
  void start(std::string what, std::uint64_t total);
  void advance(std::uint64_t k);
  void finish();

 private:
  void draw(Clock::time_point now);
  bool tty_, enabled_, shown_ = false;
  std::string what_;
  std::uint64_t total_ = 0, done_ = 0;
  Clock::time_point t0_, last_;
};

class Pipeline;  // pool.hpp

// The stages: each queues its jobs on the pool and waits for them. run_vectors throws
// VectorError (stage_vectors.cpp); run_generated asks the support queries on b0
// (stage_generated.cpp).
void run_vectors(Context& c, Pipeline& pipe, Progress& prog, const Families& fams, const std::string& dir);
void run_generated(Context& c, Pipeline& pipe, Progress& prog, Backend& b0, const Families& fams);

}  // namespace numref::conform::runner
