// numref CUDA tests — generated tensors (and specs) for the block-quantization and MoR runs.  spec §A.4
//
// Values chosen to hit every branch of the per-block arithmetic: seeded random magnitudes over
// many binades, an all-zero block region, subnormals, values at and around 448 / 57344 / 127 /
// 6 (element max finite values, i.e. the saturation thresholds), ties of the element grid, and
// optionally NaN / ±Inf sprinkled in.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "numref/quantize.hpp"

namespace numref_cuda_test {

// A quantization spec with the defaults of numref::QuantizeSpec but the element, partition, rule.
inline numref::QuantizeSpec spec_of(numref::FormatId elem, numref::Partition part, numref::ScaleRule rule) {
  numref::QuantizeSpec s;
  s.element = &numref::format(elem);
  s.partition = part;
  s.rule = rule;
  return s;
}

struct GenOptions {
  bool specials = false;    // NaN / ±Inf elements
  bool zero_region = true;  // rows [0, 2) x cols [0, 40) are zero (an all-zero 1x32 block)
  int spread = 24;          // binades of the random magnitudes (around 2^0)
};

// rows x cols binary32 codes, row-major.
inline std::vector<std::uint32_t> gen_f32(std::size_t rows, std::size_t cols, std::uint64_t seed,
                                          const GenOptions& o = {}) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> v(rows * cols);
  const std::uint32_t around[] = {0x43E00000u, 0x43DFFFFFu, 0x43E00001u, 0x43F00000u, 0x47600000u, 0x475FFFFFu,
                                  0x42FE0000u, 0x42FF0000u, 0x40C00000u, 0x40D00000u, 0x3F880000u, 0x3F900000u};
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint64_t r = rng();
    const std::uint32_t kind = static_cast<std::uint32_t>(r % 64);
    std::uint32_t x;
    if (kind < 40) {  // random magnitude over `spread` binades
      const int e = static_cast<int>((r >> 8) % static_cast<std::uint64_t>(o.spread)) - o.spread / 2;
      x = (static_cast<std::uint32_t>(127 + e) << 23) | static_cast<std::uint32_t>((r >> 20) & 0x7FFFFFu);
    } else if (kind < 48) {  // few significant bits: exact and tie cases
      const int e = static_cast<int>((r >> 8) % 12) - 6;
      x = (static_cast<std::uint32_t>(127 + e) << 23) | (static_cast<std::uint32_t>((r >> 20) & 0x7u) << 20);
    } else if (kind < 54) {
      x = around[(r >> 8) % (sizeof around / sizeof around[0])];
    } else if (kind < 57) {
      x = static_cast<std::uint32_t>((r >> 8) & 0x7FFFFFu);  // subnormal (or zero)
    } else if (kind < 60) {
      x = 0u;
    } else if (o.specials && kind == 60) {
      x = 0x7F800000u;
    } else if (o.specials && kind == 61) {
      x = 0x7FC00000u | static_cast<std::uint32_t>((r >> 8) & 0x3FFFFFu);
    } else {
      x = 0x3F800000u | static_cast<std::uint32_t>((r >> 8) & 0x7FFFFFu);
    }
    if ((r >> 63) != 0u) x |= 0x80000000u;
    v[i] = x;
  }
  if (o.zero_region)
    for (std::size_t i = 0; i < rows && i < 2; ++i)
      for (std::size_t j = 0; j < cols && j < 40; ++j) v[i * cols + j] = (j & 1u) ? 0x80000000u : 0u;
  return v;
}

// The bf16 tensor of the top halves of gen_f32's codes (NaN payloads keep a quiet bit).
inline std::vector<std::uint16_t> gen_bf16(std::size_t rows, std::size_t cols, std::uint64_t seed,
                                           const GenOptions& o = {}) {
  const auto f = gen_f32(rows, cols, seed, o);
  std::vector<std::uint16_t> v(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) v[i] = static_cast<std::uint16_t>(f[i] >> 16);
  return v;
}

}  // namespace numref_cuda_test
