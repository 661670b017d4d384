// numref CUDA kernels — the Philox4x32-10 random stream of stochastic rounding.   spec §A.3
//
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
// SC'11) is a counter-based generator: block(counter, key) is a pure function, so element i
// of a stream is computed from i alone, on the device by the kernels and on the host by the
// tests — the bits a kernel used can always be reproduced, or exported with
// numref_cuda::philox_bits() (api.hpp). Checked against the Random123 known-answer vectors
// (cuda/tests/test_cuda_philox.cpp).
//
// §A.3 The stream (seed, subsequence, offset) with k bits gives element i the value
//     j  = offset + i                              (64-bit)
//     w  = block({lo(j/4), hi(j/4), lo(subsequence), hi(subsequence)}, {lo(seed), hi(seed)})[j mod 4]
//     r_i = w >> (32 - k)                          (the top k bits; w itself for k = 32)
// so r_i < 2^k always holds. A stream position j is below 2^64: a launch of n elements needs
// offset + n <= 2^64 (the host API refuses more; the chunked form below does not wrap j).
#pragma once

#include <cstdint>

#include "numref_arith/config.cuh"

namespace numref_cuda {

struct Philox4x32 {
  static constexpr std::uint32_t kM0 = 0xD2511F53u;  // round multipliers
  static constexpr std::uint32_t kM1 = 0xCD9E8D57u;
  static constexpr std::uint32_t kW0 = 0x9E3779B9u;  // key schedule (Weyl) increments
  static constexpr std::uint32_t kW1 = 0xBB67AE85u;

  struct Block {
    std::uint32_t v[4];
  };

  // §A.3 Ten rounds of the Philox S-box on counter c with key (k0, k1).
  NUMREF_HD static NUMREF_FORCEINLINE Block block(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2,
                                                  std::uint32_t c3, std::uint32_t k0, std::uint32_t k1) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k0 += kW0;
        k1 += kW1;
      }
      const std::uint32_t hi0 = mulhi32(kM0, c0);
      const std::uint32_t lo0 = kM0 * c0;
      const std::uint32_t hi1 = mulhi32(kM1, c2);
      const std::uint32_t lo1 = kM1 * c2;
      const std::uint32_t n0 = hi1 ^ c1 ^ k0;
      const std::uint32_t n2 = hi0 ^ c3 ^ k1;
      c0 = n0;
      c1 = lo1;
      c2 = n2;
      c3 = lo0;
    }
    return {{c0, c1, c2, c3}};
  }
};

// §A.3 A Philox stream of k-bit random values.
struct PhiloxStream {
  std::uint64_t seed = 0;
  std::uint64_t subsequence = 0;
  std::uint64_t offset = 0;

  // The 4 raw words of block number b = j / 4.
  NUMREF_HD NUMREF_FORCEINLINE Philox4x32::Block words(std::uint64_t b) const {
    return Philox4x32::block(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32),
                             static_cast<std::uint32_t>(subsequence), static_cast<std::uint32_t>(subsequence >> 32),
                             static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  }
  // The top k bits of a word (k in 1..32).
  NUMREF_HD static NUMREF_FORCEINLINE std::uint32_t top_bits(std::uint32_t w, int k) {
    return k >= 32 ? w : (w >> (32 - k));
  }
  // §A.3 r_i, computed alone (kernels share one block between 4 elements instead).
  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t value(std::uint64_t i, int k) const {
    const std::uint64_t j = offset + i;
    const Philox4x32::Block b = words(j >> 2);
    return top_bits(b.v[j & 3u], k);
  }

  // §A.3 r_{i0} .. r_{i0+V-1} as a kernel computes them: the V/4 + 1 blocks that cover
  // the V stream positions are generated once (the last only when offset + i0 is not a
  // multiple of 4) and each element picks its word with a select on the phase, so that
  // every index is static and the words stay in registers.
  template <int V>
  NUMREF_HD NUMREF_FORCEINLINE void values(std::uint64_t i0, int k, std::uint32_t (&r)[V]) const {
    constexpr int kBlocks = V / 4 + 1;
    const std::uint64_t j0 = offset + i0;
    const int phase = static_cast<int>(j0 & 3u);
    std::uint32_t w[4 * kBlocks];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int b = 0; b < kBlocks; ++b) {
      if (b == kBlocks - 1 && phase + V <= 4 * b) {  // block not reached
        w[4 * b] = w[4 * b + 1] = w[4 * b + 2] = w[4 * b + 3] = 0u;
        continue;
      }
      const Philox4x32::Block blk = words((j0 >> 2) + static_cast<std::uint64_t>(b));
      w[4 * b + 0] = blk.v[0];
      w[4 * b + 1] = blk.v[1];
      w[4 * b + 2] = blk.v[2];
      w[4 * b + 3] = blk.v[3];
    }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int t = 0; t < V; ++t) {
      const std::uint32_t word = phase == 0 ? w[t] : phase == 1 ? w[t + 1] : phase == 2 ? w[t + 2] : w[t + 3];
      r[t] = top_bits(word, k);
    }
  }
};

}  // namespace numref_cuda
