// numref conformance — the runner's pool of workers: one thread and one backend instance
// each; jobs are queued in order, results merged into the report in that order, so that
// reports are deterministic. At most a window of jobs exists at any time (§34.3 memory bound).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "run.hpp"

namespace numref::conform::runner {

class Pipeline {
 public:
  // Starts one worker per backend instance; the mismatch lines go to `text`.
  Pipeline(Context& c, std::vector<std::unique_ptr<Backend>>& backends, std::FILE* text, Progress& prog);
  ~Pipeline();  // the queued jobs run, then the workers end
  // Queues a job; blocks while the window is full. Returns false once the run stops.
  bool submit(Job&& j);
  // Waits for every queued job.
  void drain();
  bool failed() const { return failed_; }

 private:
  void work(Backend& b);
  // Merges the contiguous finished results into the report (caller holds the lock).
  void deliver(std::unique_lock<std::mutex>&);
  void merge(JobResult& r);
  void report_error(const JobResult& r);
  void report_mismatch(SuiteStats& s, Mismatch& m);

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

}  // namespace numref::conform::runner
