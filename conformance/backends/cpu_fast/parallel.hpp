// numref backend "cpu-fast" — splitting large work across threads (issue 32).
//
// parts(n, threads, grain) says into how many contiguous ranges [0, n) is cut: at most
// `threads`, each at least `grain` units (one range, on the calling thread, for small work).
// run_parts(parts, n, fn) calls fn(k, lo, hi) for range k = the k-th of `parts` near-equal consecutive ranges —
// ranges 1.. on std::threads, range 0 on the calling thread — and rethrows the first exception
// after every thread has joined. The split never changes a result: every caller computes each
// element (or block) from its own inputs only, and reduces per-range partial maxima with max,
// which is associative and commutative. The conformance runner already runs its `jobs` workers in
// parallel, so the cpu-fast plugin's calls use one thread (parts = 1); numref.cast,
// numref.quantize and the CLI verbs pass their `threads`.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace numref::cpu_fast {

// The threads a `threads` option of 0 ("all cores") means: std::thread::hardware_concurrency(), at least 1.
inline unsigned default_threads() {
  const unsigned h = std::thread::hardware_concurrency();
  return h == 0 ? 1u : h;
}

inline std::size_t parts(std::size_t n, unsigned threads, std::size_t grain) {
  if (threads <= 1 || grain == 0 || n < 2 * grain) return 1;
  const std::size_t by_size = n / grain;
  return by_size < threads ? by_size : threads;
}

template <class F>
void run_parts(std::size_t parts, std::size_t n, F&& fn) {
  auto range = [&](std::size_t k, std::size_t& lo, std::size_t& hi) {
    const std::size_t base = n / parts, rem = n % parts;
    lo = k * base + (k < rem ? k : rem);
    hi = lo + base + (k < rem ? 1 : 0);
  };
  if (parts <= 1) {
    fn(std::size_t{0}, std::size_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> err(parts);
  std::vector<std::thread> pool;
  pool.reserve(parts - 1);
  for (std::size_t k = 1; k < parts; ++k)
    pool.emplace_back([&, k] {
      try {
        std::size_t lo, hi;
        range(k, lo, hi);
        fn(k, lo, hi);
      } catch (...) {
        err[k] = std::current_exception();
      }
    });
  try {
    std::size_t lo, hi;
    range(0, lo, hi);
    fn(std::size_t{0}, lo, hi);
  } catch (...) {
    err[0] = std::current_exception();
  }
  for (auto& t : pool) t.join();
  for (const auto& e : err)
    if (e) std::rethrow_exception(e);
}

// fn(lo, hi) over [0, n) on up to `threads` threads, ranges of at least `grain` units.
template <class F>
void parallel_ranges(std::size_t n, unsigned threads, std::size_t grain, F&& fn) {
  run_parts(parts(n, threads, grain), n, [&](std::size_t, std::size_t lo, std::size_t hi) { fn(lo, hi); });
}

// A numref::RangeRunner (numref/mor.hpp): fn(lo, hi) over [0, n) cut into parts(n, threads, grain)
// ranges by run_parts.
inline std::function<void(std::size_t, const std::function<void(std::size_t, std::size_t)>&)> range_runner(
    unsigned threads, std::size_t grain = 1) {
  return [threads, grain](std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
    run_parts(parts(n, threads, grain), n, [&](std::size_t, std::size_t lo, std::size_t hi) { fn(lo, hi); });
  };
}

}  // namespace numref::cpu_fast
