// numref benchmarks — the inputs and the item count shared by the bench_*.cpp programs.
// Inputs are drawn from splitmix64 (numref/splitmix64.hpp) with fixed seeds, so every run
// and every machine times the same data.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "numref/splitmix64.hpp"

namespace numref::bench {

// n bf16 codes with random signs, exponents uniform in [-12, 4] (biased 115 .. 131) and random
// 7-bit fractions: values in roughly ±[2^-12, 2^5).
inline std::vector<std::uint16_t> random_bf16(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint16_t> v(n);
  for (auto& c : v) {
    const std::uint64_t r = splitmix64_next(seed);
    const std::uint32_t sign = static_cast<std::uint32_t>(r & 1) << 15;
    const std::uint32_t e = static_cast<std::uint32_t>(127 - 12 + (r >> 1) % 17);
    const std::uint32_t frac = static_cast<std::uint32_t>(r >> 20) & 0x7F;
    c = static_cast<std::uint16_t>(sign | (e << 7) | frac);
  }
  return v;
}

// Items/s = `per_iteration` items (elements, conversions) per timed iteration.
inline void set_items(benchmark::State& state, std::size_t per_iteration) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(per_iteration));
}

}  // namespace numref::bench
