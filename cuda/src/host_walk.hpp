// numref CUDA kernels — the host emulation's grid walk, shared by its translation units.
//                                                                         spec §A.4, §A.7
//
// host_run.cpp (casts, the scale pipeline), host_run_quantize.cpp, host_run_mor.cpp and
// host_run_gaussws.cpp implement host_run.hpp; they are separate translation units so that the
// build compiles them in parallel. Private to cuda/src.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "numref_arith/format_list.hpp"
#include "numref_cuda/host_run.hpp"

namespace numref_cuda::host {

using numref::FormatId;
using E4 = FloatTraits<FormatId::f8e4m3fn>;
using E5 = FloatTraits<FormatId::f8e5m2>;
using BF16 = FloatTraits<FormatId::bf16>;

// The order in which the simulated threads run.
inline std::vector<std::uint32_t> thread_order(const Walk& w, std::uint64_t n_units) {
  const std::uint64_t t = std::min<std::uint64_t>(w.threads == 0 ? 1 : w.threads, n_units);
  std::vector<std::uint32_t> ord(static_cast<std::size_t>(t));
  std::iota(ord.begin(), ord.end(), 0u);
  if (w.order == Walk::Order::reverse) std::reverse(ord.begin(), ord.end());
  if (w.order == Walk::Order::shuffled) {
    std::mt19937_64 rng(w.seed);
    std::shuffle(ord.begin(), ord.end(), rng);
  }
  return ord;
}
// Runs body(u) for every unit of thread `t` of `T` (the grid-stride loop), units in the order a
// thread visits them (forward; the reverse walk also reverses each thread's loop).
template <class Body>
void thread_units(std::uint32_t t, std::uint64_t T, std::uint64_t n_units, const Walk& w, Body&& body) {
  if (w.order == Walk::Order::reverse) {
    if (t >= n_units) return;
    std::uint64_t last = t + ((n_units - 1 - t) / T) * T;
    for (std::uint64_t u = last;; u -= T) {
      body(u);
      if (u < T) break;
    }
  } else {
    for (std::uint64_t u = t; u < n_units; u += T) body(u);
  }
}
template <class Body>
void walk_units(std::uint64_t n_units, const Walk& w, Body&& body) {  // body(thread, unit)
  const auto ord = thread_order(w, n_units);
  for (std::uint32_t t : ord) thread_units(t, ord.size(), n_units, w, [&](std::uint64_t u) { body(t, u); });
}
template <class Body>
void walk_units(const Geometry& g, const Walk& w, Body&& body) {
  walk_units(g.n_units, w, body);
}

// Calls f.template operator()<S, V>() for the plan's source format (format_list.hpp, as the
// launchers of quantize.cu do).
template <class F>
void for_source(FormatId s, F&& f) {
  if (!with_source(s, f)) throw std::invalid_argument("CUDA host run: sources are " + role_names(kSource));
}
// Calls f.template operator()<D>() for the plan's element format.
template <class F>
void for_element(FormatId e, F&& f) {
  if (!with_element(e, f)) throw std::invalid_argument("CUDA host run: no kernel for this element format");
}

// §13 – §18 pass 1 and the scale step of p (its source), as the kernels' scale pipeline
// computes it (host_run.cpp); `min_out`: also the smallest non-zero magnitude per block.
ScaleOut scale_any(const QuantizePlan& p, const void* x, const Walk& w, std::vector<std::uint32_t>* min_out = nullptr);

}  // namespace numref_cuda::host
