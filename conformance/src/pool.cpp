// numref conformance — the runner's pool of workers and the in-order merge of their results.
//                                                                                 spec §34.3
#include "pool.hpp"

#include <chrono>

namespace numref::conform::runner {

Pipeline::Pipeline(Context& c, std::vector<std::unique_ptr<Backend>>& backends, std::FILE* text, Progress& prog)
    : c_(c), text_(text), prog_(prog) {
  for (auto& b : backends) threads_.emplace_back([this, bp = b.get()] { work(*bp); });
}

Pipeline::~Pipeline() {
  {
    std::lock_guard<std::mutex> l(mu_);
    quit_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : threads_) t.join();
}

bool Pipeline::submit(Job&& j) {
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

void Pipeline::drain() {
  std::unique_lock<std::mutex> l(mu_);
  while (delivered_ < next_seq_) {
    deliver(l);
    if (delivered_ < next_seq_) cv_done_.wait_for(l, std::chrono::milliseconds(50));
  }
}

void Pipeline::work(Backend& b) {
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
      r = judge_job(c_, b, j);
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!r.error.empty()) failed_ = true;
      done_.emplace(r.seq, std::move(r));
    }
    cv_done_.notify_all();
  }
}

void Pipeline::deliver(std::unique_lock<std::mutex>&) {
  while (true) {
    auto it = done_.find(delivered_);
    if (it == done_.end()) return;
    JobResult r = std::move(it->second);
    done_.erase(it);
    ++delivered_;
    merge(r);
  }
}

// One finished job into the report: the first error stops the run; else its counts and
// mismatches, and the progress.
void Pipeline::merge(JobResult& r) {
  if (!r.error.empty()) {
    report_error(r);
    return;
  }
  SuiteStats& s = c_.rep.suites[r.suite];
  s.cases += r.passed + r.failed + r.skipped + r.departures + r.any_nan;
  s.passed += r.passed;
  s.failed += r.failed;
  s.skipped += r.skipped;
  if (r.skipped) c_.rep.skip_reasons[r.skip_reason.empty() ? "not run" : r.skip_reason] += r.skipped;
  s.departures += r.departures;
  s.any_nan += r.any_nan;
  for (const auto& [k, v] : r.departure_classes) c_.rep.departure_classes[k] += v;
  for (auto& m : r.mismatches) report_mismatch(s, m);
  prog_.advance(r.n);
}

void Pipeline::report_error(const JobResult& r) {
  if (!c_.rep.error.empty()) return;
  c_.rep.error = r.error;
  c_.rep.error_exit = r.error_exit;
  prog_.finish();
  std::fprintf(text_, "ERROR %s\n", r.error.c_str());
  std::fflush(text_);
}

// A mismatch: its line on the terminal (and its --dump-failures files) within --max-errors,
// and its entry in the report file.
void Pipeline::report_mismatch(SuiteStats& s, Mismatch& m) {
  const bool printed = !m.is_departure || c_.cfg.show_departures || c_.cfg.strict;
  if (printed && (c_.cfg.max_errors == 0 || s.shown < c_.cfg.max_errors)) {
    ++s.shown;
    prog_.finish();
    text_mismatch(text_, m);
    if (m.dump_params) dump_case(c_, m);
  }
  if (c_.cfg.report == ReportFormat::json && c_.rep.spool) {
    // §34.4 every mismatch goes to the report file; spooled on disk (memory bound, §34.3)
    const std::string line = mismatch_json(m) + "\n";
    std::fwrite(line.data(), 1, line.size(), c_.rep.spool.get());
    ++c_.rep.spooled;
  } else if (c_.cfg.report == ReportFormat::junit) {
    const std::size_t bytes =
        m.inputs.size() + m.got.size() + m.expected.size() + m.where.size() + m.params.size() + 64;
    if (junit_bytes_ + bytes <= kJunitMismatchBytes) {
      junit_bytes_ += bytes;
      c_.rep.mismatches.push_back(std::move(m));
    } else {
      ++c_.rep.mismatches_dropped;
    }
  }
}

}  // namespace numref::conform::runner
