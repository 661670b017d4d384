// numref conformance — the runner's progress line on stderr.                     spec §34
#include <cstdio>

#include "numref/conform/util.hpp"
#include "run.hpp"

namespace numref::conform::runner {

void Progress::start(std::string what, std::uint64_t total) {
  what_ = std::move(what);
  total_ = total;
  done_ = 0;
  t0_ = last_ = Clock::now();
  shown_ = false;
}

void Progress::advance(std::uint64_t k) {
  done_ += k;
  if (!enabled_) return;
  const auto now = Clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (tty_ ? since < 0.1 : since < 10.0) return;
  last_ = now;
  draw(now);
}

void Progress::finish() {
  if (enabled_ && tty_ && shown_) std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void Progress::draw(Clock::time_point now) {
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

}  // namespace numref::conform::runner
