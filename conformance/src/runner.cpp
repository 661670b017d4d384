// numref conformance — the runner.                                       spec §33
//
// For each backend: open one instance per worker (one child process each when
// isolated), run the golden vectors, then the generated suites of the level, comparing
// every case with the reference. Work is cut into batches that workers process in
// parallel; results are merged in submission order, so reports are deterministic.
// Cases stream: at most a window of batches exists at any time (§33.3 memory bound).
#include "numref/conform/runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "numref/conform/output.hpp"
#include "numref/conform/util.hpp"
#include "numref/conform/vectors.hpp"
#include "numref/npy.hpp"
#include "numref/policy.hpp"
#include "report.hpp"

#ifndef NUMREF_SOURCE_VECTORS_DIR
#define NUMREF_SOURCE_VECTORS_DIR ""
#endif

namespace numref::conform {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

extern "C" void on_signal(int) { request_stop(); }  // §33.6 (backend.hpp)

constexpr std::size_t kBatch = 32768;
// A batch also holds at most this many words of input and output per case array
// (2 MiB): tensor cases have thousands of words each (§33.3 memory bound).
constexpr std::size_t kBatchWords = std::size_t{1} << 19;

std::size_t batch_limit(Shape s) {
  const std::size_t words = static_cast<std::size_t>(std::max(1, s.in + s.out));
  return std::max<std::size_t>(1, std::min(kBatch, kBatchWords / words));
}

// ---- progress (stderr) --------------------------------------------------------------------------

class Progress {
 public:
  explicit Progress(bool tty, bool enabled) : tty_(tty), enabled_(enabled) {}
  void start(std::string what, std::uint64_t total) {
    what_ = std::move(what);
    total_ = total;
    done_ = 0;
    t0_ = last_ = Clock::now();
    shown_ = false;
  }
  void advance(std::uint64_t k) {
    done_ += k;
    if (!enabled_) return;
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (tty_ ? since < 0.1 : since < 10.0) return;
    last_ = now;
    draw(now);
  }
  void finish() {
    if (enabled_ && tty_ && shown_) std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  void draw(Clock::time_point now) {
    const double el = std::chrono::duration<double>(now - t0_).count();
    const double rate = el > 0 ? static_cast<double>(done_) / el : 0;
    const double frac = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 0;
    const double eta = rate > 0 && total_ >= done_ ? static_cast<double>(total_ - done_) / rate : -1;
    char line[256];
    if (total_ == 0) {  // unknown total (the vector stage): count and rate only
      std::snprintf(line, sizeof line, tty_ ? "\r\033[K%s %s cases %s/s" : "progress: %s %s cases, %s/s\n", what_.c_str(),
                    fmt_count(static_cast<double>(done_)).c_str(), fmt_count(rate).c_str());
      std::fputs(line, stderr);
    } else if (tty_) {
      const int w = 28, fill = static_cast<int>(frac * w);
      std::string bar(static_cast<std::size_t>(fill), '=');
      bar.resize(w, ' ');
      std::snprintf(line, sizeof line, "\r\033[K%s [%s] %3.0f%% %s/%s cases %s/s ETA %s", what_.c_str(), bar.c_str(),
                    frac * 100, fmt_count(static_cast<double>(done_)).c_str(),
                    fmt_count(static_cast<double>(total_)).c_str(), fmt_count(rate).c_str(), fmt_duration(eta).c_str());
      std::fputs(line, stderr);
    } else {
      std::snprintf(line, sizeof line, "progress: %s %.0f%% (%s/%s cases, %s/s, ETA %s)\n", what_.c_str(), frac * 100,
                    fmt_count(static_cast<double>(done_)).c_str(), fmt_count(static_cast<double>(total_)).c_str(),
                    fmt_count(rate).c_str(), fmt_duration(eta).c_str());
      std::fputs(line, stderr);
    }
    shown_ = true;
    std::fflush(stderr);
  }
  bool tty_, enabled_, shown_ = false;
  std::string what_;
  std::uint64_t total_ = 0, done_ = 0;
  Clock::time_point t0_, last_;
};

// ---- jobs ----------------------------------------------------------------------------------------

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
  std::vector<Mismatch> mismatches;
  std::map<std::string, std::uint64_t> departure_classes;  // "<op> <class>" -> count
  std::string error;
  int error_exit = 0;
};

// §33.4 The id of a generated suite in a case location: 12 hex digits of the FNV-1a hash of
// the family's name and the suite's canonical text.
std::string suite_id(const Params& p) {
  return hex(fnv1a64(std::string(p.family().name()) + " " + p.text()) >> 16, 12);
}

// §33.4 --case ID parsed: a vector case (file, line) or a generated one (suite, index).
struct CaseId {
  bool generated = false;
  std::string file, suite;
  std::uint64_t line = 0, index = 0;
};
std::optional<CaseId> parse_case_id(const std::string& s) {
  if (s.empty()) return std::nullopt;
  CaseId c;
  const auto bad = [&] {
    return std::invalid_argument("--case: '" + s + "' is not a case location (<vector file>:<line> or generated:<suite>#<index>, "
                                 "as printed at the end of a FAIL line)");
  };
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) throw bad();
    return static_cast<std::uint64_t>(std::stoull(t));
  };
  if (s.rfind("generated:", 0) == 0) {
    const auto hash = s.find('#');
    if (hash == std::string::npos) throw bad();
    c.generated = true;
    c.suite = s.substr(10, hash - 10);
    if (c.suite.size() != 12 || !parse_hex(c.suite)) throw bad();
    c.index = number(s.substr(hash + 1));
    return c;
  }
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad();
  c.file = s.substr(0, colon);
  c.line = number(s.substr(colon + 1));
  return c;
}

// Support answers, shared by the workers and the main thread.
class SupportCache {
 public:
  std::optional<bool> get(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = m_.find(key);
    if (it == m_.end()) return std::nullopt;
    return it->second;
  }
  void put(const std::string& key, bool v) {
    std::lock_guard<std::mutex> l(mu_);
    m_[key] = v;
  }

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
  bool keep_all = false;  // a JSON / JUnit report: every mismatch is kept for it
  std::uint64_t dumped = 0;  // --dump-failures: cases written
  bool dump_failed = false;
};

bool implements(const BackendInfo& i, std::string_view op) {
  return std::find(i.ops.begin(), i.ops.end(), op) != i.ops.end();
}

bool is_supported(Context& c, Backend& b, const Params& p) {
  const std::string key = std::string(p.family().name()) + "\n" + p.text();
  if (auto v = c.support.get(key)) return *v;
  const bool v = implements(b.info(), p.family().name()) && b.supported(p);
  c.support.put(key, v);
  return v;
}

// §30.5 / §33.7 A golden vector whose expected value differs from the reference's (a file
// edited together with its MANIFEST line, or a reference that changed) is wrong, not the
// backend: the first such case stops the run as an input error (exit 2), named VECTOR WRONG.
bool vector_agrees(const Params& p, const Job& j, JobResult& r) {
  std::vector<std::uint32_t> ref(j.exp.size());
  p.expected(j.n, j.in.data(), ref.data());
  if (ref == j.exp) return true;
  const Shape s = p.shape();
  const std::size_t outw = static_cast<std::size_t>(s.out);
  for (std::size_t i = 0; i < j.n; ++i) {
    bool same = true;
    for (std::size_t w = 0; w < outw && same; ++w) {
      const std::size_t at = s.case_major ? i * outw + w : w * j.n + i;
      same = ref[at] == j.exp[at];
    }
    if (same) continue;
    const CaseView in = case_view(j.in.data(), j.n, i, s, s.in), e = case_view(j.exp.data(), j.n, i, s, s.out),
                   g = case_view(ref.data(), j.n, i, s, s.out);
    // an optional result the file does not record (kNotReported) is not compared
    if (compare(p, in, e, g, CompareOptions{}).outcome == Outcome::pass) continue;
    const MismatchText t = render_mismatch(p, in, e, g, CompareOptions{});
    r.error = "VECTOR WRONG: " + j.source + ":" + std::to_string(j.lines[i]) + ": " + std::string(p.family().name()) +
              " " + p.label() + " | " + t.inputs + " | the vector expects " + t.expected + " | the reference gives " +
              t.got + (t.detail.empty() ? "" : " | " + t.detail) +
              " (the golden vector disagrees with the reference; the backend is not judged on it: regenerate the "
              "vectors with `numref vectors generate`)";
    r.error_exit = kExitUsage;
    return false;
  }
  return true;
}

// A case with a tensor input (the tensor and MoR families): --dump-failures writes it.
bool is_tensor_case(const Params& p) {
  for (const Column& c : p.schema().columns)
    if (!c.output() && c.count() > 1 && c.format) return true;
  return false;
}

JobResult process(Context& c, Backend& b, Job& j) {
  JobResult r;
  r.seq = j.seq;
  r.suite = j.suite;
  r.n = j.n;
  const Params& p = *j.params;
  const Shape s = p.shape();
  try {
    if (!j.cases && !vector_agrees(p, j, r)) return r;
    if (j.check_support && !is_supported(c, b, p)) {
      r.skipped = j.n;
      return r;
    }
    if (j.cases) {
      j.in.resize(j.n * static_cast<std::size_t>(s.in));
      j.cases->fill(j.first, j.n, j.in.data());
      j.exp.resize(j.n * static_cast<std::size_t>(s.out));
      p.expected(j.n, j.in.data(), j.exp.data());
    }
    std::vector<std::uint32_t> got(j.n * static_cast<std::size_t>(s.out), 0);
    b.run(p, j.n, j.in.data(), got.data());
    const std::vector<CaseFault>& faults = b.faults();  // §33.6 cases that crashed the backend
    auto fault = faults.begin();
    const std::string op(p.family().name());
    const std::string formats = p.formats();
    const std::size_t outw = static_cast<std::size_t>(s.out);
    for (std::size_t i = 0; i < j.n; ++i) {
      const CaseFault* crashed = fault != faults.end() && fault->index == i ? &*fault++ : nullptr;
      // Fast path: every output word identical is a pass for every family.
      bool same = !crashed;
      if (s.case_major)
        same = !crashed && std::equal(j.exp.begin() + static_cast<std::ptrdiff_t>(i * outw),
                          j.exp.begin() + static_cast<std::ptrdiff_t>((i + 1) * outw),
                          got.begin() + static_cast<std::ptrdiff_t>(i * outw));
      else
        for (std::size_t w = 0; w < outw && same; ++w) same = j.exp[w * j.n + i] == got[w * j.n + i];
      if (same) {
        ++r.passed;
        continue;
      }
      const CaseView in = case_view(j.in.data(), j.n, i, s, s.in), e = case_view(j.exp.data(), j.n, i, s, s.out),
                     g = case_view(got.data(), j.n, i, s, s.out);
      const Finding f = crashed ? Finding{Outcome::fail, "crash"} : compare(p, in, e, g, c.cmp);
      if (f.outcome == Outcome::pass) {
        ++r.passed;
        continue;
      }
      if (f.outcome == Outcome::pass_any_nan) {
        ++r.any_nan;
        continue;
      }
      const Departure* dep = nullptr;
      for (const auto& d : b.info().departures)
        if (!crashed && d.matches(op, formats, p.profile(), f.cls)) {
          dep = &d;
          break;
        }
      if (dep) {
        ++r.departures;
        ++r.departure_classes[op + " " + f.cls];
      } else {
        ++r.failed;
      }
      // §33.4 the report file lists every mismatch; the terminal at most --max-errors per suite,
      // known departures only with --show-departures (or --strict, which fails them)
      const bool printed = !dep || c.cfg.show_departures || c.cfg.strict;
      if (c.keep_all || (printed && (c.cfg.max_errors == 0 || r.mismatches.size() < c.cfg.max_errors))) {
        Mismatch m;
        m.op = op;
        m.label = p.label();
        m.params = p.text();
        m.where = j.cases ? "generated:" + suite_id(p) + "#" + std::to_string(j.first + i)
                          : j.source + ":" + std::to_string(j.lines[i]);
        MismatchText t = render_mismatch(p, in, e, g, c.cmp);
        m.inputs = std::move(t.inputs);
        m.got = std::move(t.got);
        m.expected = std::move(t.expected);
        m.detail = std::move(t.detail);
        if (crashed) m.got = crashed->what, m.detail.clear();
        m.cls = f.cls;
        if (c.cfg.report == ReportFormat::json)
          m.fields = mismatch_fields(p, in, e, g, c.cmp, j.cases ? std::string("generated") : j.source,
                                     j.cases ? j.first + i : static_cast<std::uint64_t>(j.lines[i]),
                                     crashed ? crashed->what : std::string());
        if (dep) {
          m.is_departure = true;
          m.departure = dep->why;
        }
        if (!c.cfg.dump_dir.empty() && !dep && is_tensor_case(p)) {
          m.dump_params = j.params;
          for (int w = 0; w < s.in; ++w) m.dump_in.push_back(in[static_cast<std::size_t>(w)]);
        }
        r.mismatches.push_back(std::move(m));
      }
    }
  } catch (const BackendError& e) {
    if (e.kind == BackendError::Kind::interrupted) {  // §33.6 the batch did not run
      r.n = 0;
      return r;
    }
    r.error = e.what();
    r.error_exit = kExitBackend;
  } catch (const std::exception& e) {
    r.error = std::string("internal error: ") + e.what();
    r.error_exit = kExitBackend;
  }
  return r;
}

// §33.4 --dump-failures: the tensor inputs of a failing case as .npy (f32 <f4, f16 <f2, bf16
// bit patterns <u2, 8-bit codes |u1; the memory layout of the case) and DIR/<name>.txt with
// the FAIL line and the command that re-runs the case alone (--case). Files are written
// through OutputFile (§36.1); a failure to write is reported once as a note on stderr.
void dump_case(Context& c, const Mismatch& m) {
  const Params& p = *m.dump_params;
  const RunConfig& cfg = c.cfg;
  std::string name = "case-" + std::to_string(++c.dumped) + "-" + m.op + "-" + m.where;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.') ch = '_';
  const fs::path base = fs::path(cfg.dump_dir) / name;
  auto join = [](const std::vector<std::string>& v) {
    std::string t;
    for (const auto& x : v) t += (t.empty() ? "" : ",") + x;
    return t;
  };
  std::string cmd = "numref conform --backend '" + (c.rep.display.empty() ? cfg.backend : c.rep.display) + "'";
  if (!cfg.ops.empty()) cmd += " --ops '" + join(cfg.ops) + "'";
  if (!cfg.profiles.empty()) cmd += " --profile '" + join(cfg.profiles) + "'";
  cmd += " --level " + level_name(cfg.level) + " --seed " + std::to_string(cfg.seed);
  if (!cfg.vectors_dir.empty()) cmd += " --vectors '" + cfg.vectors_dir + "'";
  if (cfg.any_nan) cmd += " --any-nan";
  if (cfg.strict) cmd += " --strict";
  cmd += " --case '" + m.where + "'";
  std::string txt = "FAIL " + m.op + " " + m.label + " | " + m.inputs + " | got " + m.got + " | expected " + m.expected +
                    " | " + m.cls + " | " + m.where + (m.detail.empty() ? "" : " | " + m.detail) +
                    "\n\nsuite: " + m.op + " " + m.params + "\n\nre-run this case alone (add --no-isolate for a debugger):\n  " +
                    cmd + "\n\ninputs:\n";
  try {
    for (const Column& col : p.schema().columns) {
      if (col.output() || !col.format) continue;
      const std::size_t n = col.count();
      const Format& f = *col.format;
      const auto dt = f.bits == 32 ? npy::Dtype::u4 : f.bits == 16 ? (&f == &format(FormatId::f16) ? npy::Dtype::f2 : npy::Dtype::u2)
                                                   : npy::Dtype::u1;
      std::vector<std::uint8_t> data;
      const std::size_t isz = npy::itemsize(dt == npy::Dtype::u4 ? npy::Dtype::f4 : dt);
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t w = m.dump_in[static_cast<std::size_t>(col.at) + k * static_cast<std::size_t>(col.width)];
        for (std::size_t b = 0; b < isz; ++b) data.push_back(static_cast<std::uint8_t>(w >> (8 * b)));
      }
      const std::vector<std::size_t> shape{col.rows, col.cols};
      const std::string file = base.string() + "." + col.name + ".npy";
      OutputFile out(file);
      const auto bytes = npy::encode(dt == npy::Dtype::u4 ? npy::Dtype::f4 : dt, shape, data);
      out.write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      out.commit();
      txt += "  " + col.name + ": " + fs::path(file).filename().string() + " (" + std::string(f.name) + ", " + std::to_string(col.rows) +
             "x" + std::to_string(col.cols) + (f.bits == 16 && &f != &format(FormatId::f16) ? ", bit patterns: --input-format " + std::string(f.name) : "") + ")\n";
    }
    OutputFile out(base.string() + ".txt");
    out.write(txt);
    out.commit();
  } catch (const std::exception& e) {
    if (!c.dump_failed) std::fprintf(stderr, "numref conform: --dump-failures: %s\n", e.what());
    c.dump_failed = true;
  }
}

// A pool of workers, one backend instance each; results are delivered in order.
class Pipeline {
 public:
  Pipeline(Context& c, std::vector<std::unique_ptr<Backend>>& backends, std::FILE* text, Progress& prog)
      : c_(c), text_(text), prog_(prog) {
    for (auto& b : backends) threads_.emplace_back([this, bp = b.get()] { work(*bp); });
  }
  ~Pipeline() {
    {
      std::lock_guard<std::mutex> l(mu_);
      quit_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Queues a job; blocks while the window is full. Returns false once the run stops.
  bool submit(Job&& j) {
    std::unique_lock<std::mutex> l(mu_);
    j.seq = next_seq_++;
    queue_.push_back(std::move(j));
    cv_work_.notify_one();
    const std::size_t window = 2 * threads_.size() + 2;
    while (next_seq_ - delivered_ > window && !failed_) {
      deliver(l);
      if (next_seq_ - delivered_ > window) cv_done_.wait_for(l, std::chrono::milliseconds(50));
    }
    deliver(l);
    return !failed_ && !stop_requested();
  }
  // Waits for every queued job.
  void drain() {
    std::unique_lock<std::mutex> l(mu_);
    while (delivered_ < next_seq_) {
      deliver(l);
      if (delivered_ < next_seq_) cv_done_.wait_for(l, std::chrono::milliseconds(50));
    }
  }
  bool failed() const { return failed_; }

 private:
  void work(Backend& b) {
    while (true) {
      Job j;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_work_.wait(l, [&] { return quit_ || !queue_.empty(); });
        if (queue_.empty()) return;
        j = std::move(queue_.front());
        queue_.pop_front();
      }
      JobResult r;
      if (failed_ || stop_requested()) {
        r.seq = j.seq;
        r.suite = j.suite;
        r.n = 0;  // not run
      } else {
        r = process(c_, b, j);
      }
      {
        std::lock_guard<std::mutex> l(mu_);
        if (!r.error.empty()) failed_ = true;
        done_.emplace(r.seq, std::move(r));
      }
      cv_done_.notify_all();
    }
  }

  // Merges the contiguous finished results into the report (caller holds the lock).
  void deliver(std::unique_lock<std::mutex>&) {
    while (true) {
      auto it = done_.find(delivered_);
      if (it == done_.end()) return;
      JobResult r = std::move(it->second);
      done_.erase(it);
      ++delivered_;
      SuiteStats& s = c_.rep.suites[r.suite];
      if (!r.error.empty()) {
        if (c_.rep.error.empty()) {
          c_.rep.error = r.error;
          c_.rep.error_exit = r.error_exit;
          prog_.finish();
          std::fprintf(text_, "ERROR %s\n", r.error.c_str());
          std::fflush(text_);
        }
        continue;
      }
      s.cases += r.passed + r.failed + r.skipped + r.departures + r.any_nan;
      s.passed += r.passed;
      s.failed += r.failed;
      s.skipped += r.skipped;
      s.departures += r.departures;
      s.any_nan += r.any_nan;
      for (const auto& [k, v] : r.departure_classes) c_.rep.departure_classes[k] += v;
      for (auto& m : r.mismatches) {
        const bool printed = !m.is_departure || c_.cfg.show_departures || c_.cfg.strict;
        if (printed && (c_.cfg.max_errors == 0 || s.shown < c_.cfg.max_errors)) {
          ++s.shown;
          prog_.finish();
          text_mismatch(text_, m);
          if (m.dump_params) dump_case(c_, m);
        }
        if (c_.cfg.report == ReportFormat::json && c_.rep.spool) {
          // §33.4 every mismatch goes to the report file; spooled on disk (memory bound, §33.3)
          const std::string line = mismatch_json(m) + "\n";
          std::fwrite(line.data(), 1, line.size(), c_.rep.spool.get());
          ++c_.rep.spooled;
        } else if (c_.cfg.report == ReportFormat::junit) {
          const std::size_t bytes = m.inputs.size() + m.got.size() + m.expected.size() + m.where.size() + m.params.size() + 64;
          if (junit_bytes_ + bytes <= kJunitMismatchBytes) {
            junit_bytes_ += bytes;
            c_.rep.mismatches.push_back(std::move(m));
          } else {
            ++c_.rep.mismatches_dropped;
          }
        }
      }
      prog_.advance(r.n);
    }
  }

  Context& c_;
  std::FILE* text_;
  Progress& prog_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  std::deque<Job> queue_;
  std::map<std::uint64_t, JobResult> done_;
  std::uint64_t next_seq_ = 0, delivered_ = 0;
  std::size_t junit_bytes_ = 0;
  bool quit_ = false;
  std::atomic<bool> failed_{false};
};

std::pair<std::uint64_t, std::uint64_t> shard_range(std::uint64_t size, const RunConfig& c) {
  // §33.3 shard rule: shard i of N runs cases [floor(S*i/N), floor(S*(i+1)/N)) of every suite.
  const auto lo = static_cast<std::uint64_t>((static_cast<unsigned __int128>(size) * c.shard_index) / c.shard_count);
  const auto hi = static_cast<std::uint64_t>((static_cast<unsigned __int128>(size) * (c.shard_index + 1)) / c.shard_count);
  return {lo, hi};
}

// The cases of a generated suite to run: the shard's range, or the one --case index.
std::pair<std::uint64_t, std::uint64_t> case_range(std::uint64_t size, const Context& c) {
  if (!c.only) return shard_range(size, c.cfg);
  const std::uint64_t i = std::min(c.only->index, size);
  return {i, std::min(i + 1, size)};
}

// Families selected by --ops, with their selectors.
std::vector<std::pair<const Family*, std::vector<std::string>>> select_families(const RunConfig& cfg) {
  std::vector<std::pair<const Family*, std::vector<std::string>>> out;
  if (cfg.ops.empty()) {
    for (const Family* f : registry().all()) out.push_back({f, {}});
    return out;
  }
  for (const auto& o : cfg.ops) {
    const auto c = o.find(':');
    const std::string name = o.substr(0, c);
    const Family* f = registry().find(name);
    if (!f) {
      std::string known;
      for (const Family* g : registry().all()) { if (!known.empty()) known += ", "; known += std::string(g->name()); }
      throw std::invalid_argument("--ops: unknown operation '" + name + "' (known: " + known + ")");
    }
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == f; });
    if (it == out.end()) {
      out.push_back({f, {}});
      it = out.end() - 1;
    }
    it->second.push_back(c == std::string::npos ? std::string() : o.substr(c + 1));
  }
  return out;
}

// ---- the golden-vector stage (§33.2) ----------------------------------------------------------

void run_vectors(Context& c, Pipeline& pipe, Progress& prog,
                 const std::vector<std::pair<const Family*, std::vector<std::string>>>& fams, const std::string& dir) {
  const auto man = read_manifest(dir);  // throws VectorError
  std::size_t files = 0;
  prog.start(c.rep.info.name + " vectors", 0);
  for (const auto& e : man) {
    if (pipe.failed() || stop_requested()) return;
    if (c.only && (c.only->generated || c.only->file != e.path)) continue;  // --case
    const fs::path path = fs::path(dir) / e.path;
    std::ifstream f(path, std::ios::binary);
    if (!f) throw VectorError(e.path + ": listed in the MANIFEST but cannot be opened");
    std::ostringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    if (Sha256::hex(text) != e.sha256)
      throw VectorError(e.path + ": sha256 differs from vectors/MANIFEST (edited by hand? regenerate with `numref "
                                 "vectors generate`, or verify with `numref vectors verify`)");
    std::istringstream in(text);
    VectorReader vr(in, e.path);
    const Family* fam = registry().find(vr.header().get("op"));
    if (!fam) throw VectorError(e.path + ": unknown op '" + vr.header().get("op") + "'");
    auto fit = std::find_if(fams.begin(), fams.end(), [&](const auto& p) { return p.first == fam; });
    if (fit == fams.end()) continue;
    std::unique_ptr<VectorFileReader> reader;
    try {
      reader = fam->open_vectors(vr.header(), c.rep.profiles);
    } catch (const std::invalid_argument& err) {
      throw VectorError(e.path + ": " + err.what());
    }
    ++files;
    const auto [lo, hi] = shard_range(vr.declared_count(), c.cfg);
    std::vector<std::string_view> fields;
    std::string_view note;
    std::vector<VectorCase> cases;
    Job job;
    auto flush = [&] {
      if (job.n == 0) return;
      job.source = e.path;
      job.check_support = true;
      const ParamsPtr p = job.params;
      job.suite = c.rep.suite(std::string(p->family().name()), p->profile(), p->label(), p->text(), e.path);
      // column-major from row-major (case-major families keep the cases as read)
      const Shape s = p->shape();
      if (!s.case_major) {
        std::vector<std::uint32_t> in_c(job.n * static_cast<std::size_t>(s.in)), ex_c(job.n * static_cast<std::size_t>(s.out));
        for (std::size_t i = 0; i < job.n; ++i) {
          for (int w = 0; w < s.in; ++w) in_c[static_cast<std::size_t>(w) * job.n + i] = job.in[i * static_cast<std::size_t>(s.in) + static_cast<std::size_t>(w)];
          for (int w = 0; w < s.out; ++w) ex_c[static_cast<std::size_t>(w) * job.n + i] = job.exp[i * static_cast<std::size_t>(s.out) + static_cast<std::size_t>(w)];
        }
        job.in = std::move(in_c);
        job.exp = std::move(ex_c);
      }
      pipe.submit(std::move(job));
      job = Job{};
    };
    std::uint64_t idx = 0;
    while (vr.next(fields, note)) {  // throws VectorError naming file and line
      const std::uint64_t k = idx++;
      cases.clear();
      try {
        reader->read(fields, note, cases);
      } catch (const VectorError& err) {
        throw VectorError(vr.where() + ": " + err.what());
      } catch (const std::invalid_argument& err) {
        throw VectorError(vr.where() + ": " + err.what());
      }
      if (k < lo || k >= hi) continue;
      if (c.only && static_cast<std::uint64_t>(vr.line()) != c.only->line) continue;
      for (auto& vc : cases) {
        if (!selector_match(*vc.params, fit->second)) continue;
        if (job.n > 0 && (job.params->text() != vc.params->text() || job.n >= 4096 ||
                          job.n >= batch_limit(job.params->shape())))
          flush();
        if (job.n == 0) job.params = vc.params;
        job.in.insert(job.in.end(), vc.in.begin(), vc.in.end());
        job.exp.insert(job.exp.end(), vc.expected.begin(), vc.expected.end());
        job.lines.push_back(vr.line());
        ++job.n;
      }
    }
    flush();
    prog.advance(0);
  }
  pipe.drain();
  prog.finish();
  c.rep.vectors = dir + " (" + std::to_string(files) + " files, MANIFEST verified)";
}

// ---- the generated stage (§33.3) ---------------------------------------------------------------

void run_generated(Context& c, Pipeline& pipe, Progress& prog, Backend& b0,
                   const std::vector<std::pair<const Family*, std::vector<std::string>>>& fams) {
  std::vector<GeneratedSuite> suites;
  for (const auto& [fam, sel] : fams) {
    PlanRequest req;
    req.level = c.cfg.level;
    req.seed = c.cfg.seed;
    req.profiles = c.rep.profiles;
    req.selectors = sel;
    fam->plan(req, suites);
  }
  if (c.only) {  // --case: the one suite, the one index
    if (!c.only->generated) return;
    std::erase_if(suites, [&](const GeneratedSuite& g) { return suite_id(*g.params) != c.only->suite; });
  }
  // Support queries first, while no worker uses a backend instance.
  std::uint64_t total = 0;
  std::vector<char> ok(suites.size());
  for (std::size_t i = 0; i < suites.size(); ++i) {
    if (stop_requested()) return;
    ok[i] = is_supported(c, b0, *suites[i].params) ? 1 : 0;
    const auto [lo, hi] = case_range(suites[i].cases->size(), c);
    if (ok[i]) total += hi - lo;
  }
  prog.start(c.rep.info.name, total);
  for (std::size_t i = 0; i < suites.size(); ++i) {
    const auto& gs = suites[i];
    const Params& p = *gs.params;
    const std::size_t si = c.rep.suite(std::string(p.family().name()), p.profile(), p.label(), p.text(), "generated");
    const auto [lo, hi] = case_range(gs.cases->size(), c);
    if (!ok[i]) {
      c.rep.suites[si].skipped += hi - lo;
      c.rep.suites[si].cases += hi - lo;
      continue;
    }
    const std::size_t batch = std::max<std::size_t>(1, std::min<std::size_t>(batch_limit(p.shape()), b0.max_batch(p.shape())));
    for (std::uint64_t at = lo; at < hi; at += batch) {
      Job j;
      j.params = gs.params;
      j.suite = si;
      j.source = "generated";
      j.cases = gs.cases;
      j.first = at;
      j.n = static_cast<std::size_t>(std::min<std::uint64_t>(batch, hi - at));
      if (!pipe.submit(std::move(j))) {
        pipe.drain();
        prog.finish();
        return;
      }
    }
  }
  pipe.drain();
  prog.finish();
}

std::vector<std::string> profiles_for(const RunConfig& cfg, const BackendInfo& info, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (!find_profile(p)) {
      notes.push_back("unknown profile '" + p + "' ignored");
      return;
    }
    const Profile& pr = profile(*find_profile(p));
    for (const auto& q : out) {
      const Profile& qr = profile(*find_profile(q));
      if (qr.narrow == pr.narrow && qr.wide == pr.wide) {
        notes.push_back("profile " + p + " has the same policies as " + q + ": checked once");
        return;
      }
    }
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (!cfg.profiles.empty()) {
    for (const auto& p : cfg.profiles) {
      if (!find_profile(p)) throw std::invalid_argument("--profile: unknown profile '" + p + "'");
      if (!info.profiles.empty() && std::find(info.profiles.begin(), info.profiles.end(), p) == info.profiles.end())
        notes.push_back("the backend does not claim profile " + p + "; its suites run anyway (unsupported ones are skipped)");
      add(p);
    }
  } else if (info.profiles.empty()) {
    notes.push_back("the backend claims no profile: checking ocp, cuda_satfinite, cuda_nosat, ml_dtypes");
    for (const char* p : {"ocp", "cuda_satfinite", "cuda_nosat", "ml_dtypes"}) add(p);
  } else {
    for (const auto& p : info.profiles) add(p);
  }
  return out;
}

int run_one(const RunConfig& cfg, const RunIdentity& id, const std::string& backend_arg, BackendReport& rep, std::FILE* text,
            const std::vector<std::pair<const Family*, std::vector<std::string>>>& fams, const std::string& vdir) {
  const auto t0 = Clock::now();
  rep.display = backend_arg;
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
  std::vector<std::unique_ptr<Backend>> backends;
  try {
    // All instances are created here, in the main thread, before any worker starts
    // (fork() of isolated plugins happens while the process is single-threaded).
    for (int i = 0; i < jobs; ++i) backends.push_back(open_backend(spec, oo));
  } catch (const BackendError& e) {
    rep.info.name = backend_arg;
    if (e.kind == BackendError::Kind::unavailable) {
      // §31.6 not a failure: every suite of the backend is skipped, with the reason.
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
  rep.opened = true;
  rep.info = backends[0]->info();
  if (cfg.report == ReportFormat::json) {
    rep.spool.reset(std::tmpfile(), [](std::FILE* f) { if (f) std::fclose(f); });
    if (!rep.spool) {
      rep.error = std::string("cannot create a temporary file for the report's mismatches: ") + std::strerror(errno);
      rep.error_exit = kExitUsage;
      std::fprintf(text, "ERROR %s\n", rep.error.c_str());
      return kExitUsage;
    }
  }
  rep.profiles = profiles_for(cfg, rep.info, rep.notes);
  std::string missing;
  for (const auto& [f, sel] : fams) {
    rep.ops.emplace_back(f->name());
    if (!implements(rep.info, f->name())) missing += (missing.empty() ? "" : ", ") + std::string(f->name());
  }
  if (!missing.empty())
    rep.notes.push_back("the backend does not implement " + std::string(missing.find(',') == std::string::npos ? "op " : "ops ") +
                        missing + ": their cases are skipped");
  text_header(text, cfg, id, rep);

  Context ctx{cfg, parse_case_id(cfg.case_id), rep, {}, {}, cfg.report != ReportFormat::text};
  ctx.cmp.caps = rep.info.caps();
  ctx.cmp.any_nan = cfg.any_nan;
  const bool tty = isatty(2) != 0;
  Progress prog(tty, cfg.progress < 0 ? true : cfg.progress == 1);
  int status = kExitPass;
  {
    Pipeline pipe(ctx, backends, text, prog);
    try {
      if (!vdir.empty()) run_vectors(ctx, pipe, prog, fams, vdir);
      if (!pipe.failed() && !stop_requested()) run_generated(ctx, pipe, prog, *backends[0], fams);
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
  prog.finish();
  rep.interrupted = stop_requested();
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  text_summary(text, cfg, rep);
  if (!rep.error.empty()) status = rep.error_exit;
  else if (rep.interrupted) status = kExitInterrupted;
  else if (rep.total(&SuiteStats::failed) > 0 || (cfg.strict && rep.total(&SuiteStats::departures) > 0))
    status = kExitMismatch;
  return status;
}

}  // namespace

std::vector<std::string> default_vectors_candidates() {
  if (const char* e = std::getenv("NUMREF_VECTORS"); e && *e) return {e};
  std::vector<std::string> c;
  // install layout (bin/numref, share/numref/vectors), then the source tree of this build
  if (const std::string ed = exe_dir(); !ed.empty()) c.push_back(ed + "/../share/numref/vectors");
  c.push_back(NUMREF_SOURCE_VECTORS_DIR);
  return c;
}

std::string default_vectors_dir() {
  std::error_code ec;
  const auto c = default_vectors_candidates();
  for (const auto& d : c)
    if (fs::is_regular_file(fs::path(d) / "MANIFEST", ec)) return fs::weakly_canonical(d, ec).string();
  return {};
}

namespace {

// §33.2 The golden-vector directory of the run: --vectors DIR (must exist), else the default
// (when it exists); "" = none.
std::string vectors_dir_of(const RunConfig& cfg, std::string& description) {
  if (cfg.vectors_dir == "none") {
    description = "skipped (--vectors none)";
    return {};
  }
  std::error_code ec;
  if (!cfg.vectors_dir.empty()) {
    if (!fs::exists(cfg.vectors_dir, ec))
      throw std::invalid_argument("--vectors: directory '" + cfg.vectors_dir + "' does not exist");
    if (!fs::is_directory(cfg.vectors_dir, ec))
      throw std::invalid_argument("--vectors: '" + cfg.vectors_dir + "' is not a directory");
    description = cfg.vectors_dir;
    return cfg.vectors_dir;
  }
  // §33.2 golden vectors are asked for by default: not finding them is an error, never a run of
  // generated cases only that looks like a pass.
  const std::string d = default_vectors_dir();
  if (d.empty()) {
    std::string looked;
    for (const auto& c : default_vectors_candidates()) looked += (looked.empty() ? "" : ", ") + c;
    throw std::invalid_argument("golden vectors not found (looked in " + looked +
                                "); give --vectors DIR, set NUMREF_VECTORS, or --vectors none");
  }
  description = d;
  return d;
}

// §36.1 The files a run reads: every file under the vector directory, and a backend library.
std::vector<std::string> run_inputs(const RunConfig& cfg, const std::string& vdir) {
  std::vector<std::string> in;
  if (!vdir.empty()) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(vdir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec)) in.push_back(it->path().string());
  }
  const std::string lib = cfg.backend.substr(0, cfg.backend.find('?'));  // a PATH.so backend (not a built-in name)
  if (cfg.backend.rfind("pipe:", 0) != 0 && lib.find('/') != std::string::npos) in.push_back(lib);
  return in;
}

}  // namespace

int run_conform(const RunConfig& cfg, std::FILE* text_out) {
  if (cfg.shard_count == 0 || cfg.shard_index >= cfg.shard_count)
    throw std::invalid_argument("--shard I/N needs 0 <= I < N");
  if (!cfg.case_id.empty() && cfg.shard_count > 1) throw std::invalid_argument("--case runs one case: no --shard with it");
  parse_case_id(cfg.case_id);  // a malformed --case is a usage error before anything runs
  if (!cfg.dump_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(cfg.dump_dir, ec))
      throw std::invalid_argument("--dump-failures: '" + cfg.dump_dir + "' is not an existing directory");
  }
  const auto fams = select_families(cfg);
  for (const auto& p : cfg.profiles)
    if (!find_profile(p)) throw std::invalid_argument("--profile: unknown profile '" + p + "'");
  std::vector<std::string> names;
  if (cfg.backend == "all") {
    names = builtin_backends();
    if (names.empty()) throw std::invalid_argument("--backend all: no built-in backends found in '" + backend_dir() + "'");
  } else {
    names.push_back(cfg.backend);
  }
  std::string vdesc;
  const std::string vdir = vectors_dir_of(cfg, vdesc);

  // §36.1 The report file is checked (and refused when it is an input) before anything runs;
  // it is written to a temporary file and renamed at the end. JSON / JUnit go to --out (or
  // stdout); the text report then goes to stdout unless it would mix with the JSON/XML.
  std::optional<OutputFile> out;
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
  std::FILE* text = text_out;
  FILE* devnull = nullptr;
  if (cfg.report == ReportFormat::text && out) {
    text = out->file();
  } else if (cfg.report != ReportFormat::text && !out) {
    devnull = std::fopen("/dev/null", "w");
    text = devnull;
  }

  clear_stop();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  signal(SIGPIPE, SIG_IGN);  // a dead backend must not kill the runner

  RunReport rr;
  rr.cfg = cfg;
  rr.id = run_identity(cfg, vdir);  // §33.4 versions, parameters, run id
  text_run(text, rr.id);
  int status = kExitPass;
  bool unavailable = false;
  for (const auto& n : names) {
    rr.backends.emplace_back();
    rr.backends.back().vectors = vdesc;
    const int s = run_one(cfg, rr.id, n, rr.backends.back(), text, fams, vdir);
    if (s == kExitInterrupted || s == kExitBackend || s == kExitUsage) status = std::max(status, s);
    else if (s == kExitMismatch && status == kExitPass) status = kExitMismatch;
    else if (s == kExitUnavailable) unavailable = true;
    if (stop_requested()) break;
  }
  if (stop_requested()) status = std::max<int>(status, kExitInterrupted);  // §33.7 (a stop while opening)
  // §33.7 a run that compared nothing does not pass: every backend that ran compared no case
  // (unavailable backends are SKIPPED with their reason, §31.6, and do not count here).
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
      rr.nothing_compared = "--case " + cfg.case_id + ": no such case in this selection (give the --ops, --profile, "
                            "--level and --seed of the run that printed it)";
      status = kExitUsage;
    } else if (ran && cmp == 0) {
      rr.nothing_compared = names.size() > 1 ? "no backend compared a case" : ran->nothing_compared_reason(cfg);
      status = kExitUsage;
    }
  }
  // §33.7 77 only when nothing worse happened: errors, then mismatches, come first.
  if (unavailable && status == kExitPass) status = kExitUnavailable;
  rr.interrupted = stop_requested();
  if (names.size() > 1) {
    std::fprintf(text, "== all backends\n");
  }
  text_total(text, rr);
  // §36 write errors of the report (a full disk, /dev/full) and of standard output are errors
  // of the run: exit 2 (a backend failure or an interrupt keeps its own, larger status).
  auto output_failed = [&](const std::string& what) {
    std::fprintf(stderr, "numref conform: %s\n", what.c_str());
    if (status != kExitBackend && status != kExitInterrupted) status = kExitUsage;
  };
  try {
    if (cfg.report != ReportFormat::text) {
      rr.exit_status = status;
      std::FILE* f = out ? out->file() : stdout;
      if (cfg.report == ReportFormat::json) json_report(rr, f);
      else junit_report(rr, f);
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
  if (devnull) std::fclose(devnull);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return status;
}

}  // namespace numref::conform
