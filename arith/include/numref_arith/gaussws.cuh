// numref CUDA kernels — GaussWS (Gaussian weight sampling) arithmetic, host and device.   spec §30, §A.13
//
// The per-element and per-block steps of §30 as __host__ __device__ functions in integers only
// (§1.3, §A.1), shared by the CUDA kernels (cuda/src/gaussws.cu), the `cuda-emu` host grid walk
// (cuda/src/host_run.cpp) and cpu-fast (conformance/backends/cpu_fast/fast_gaussws.cpp):
//
//   noise(u)                 §30.2 R from 16 bits (the AND / OR network of Eq. 9)
//   block_key / lane_word    §30.3 the counter-based generator (numref/splitmix64.hpp's finaliser);
//                            one generator word feeds the four elements of one lane
//   exp2_one_minus(b_t)      §30.4 e = RN32(2^(1 - b_t)), correctly rounded: 2^F as a product of
//                            the constants 2^(2^-i) held as 127-bit fixed-point floors, with a lower
//                            and an upper bound carried through every product; decided when both
//                            bounds round to the same binary32 (never a wrong value: `decided` is
//                            false otherwise, which §A.13 makes an error)
//   block_scale(a, e)        §30.4 s = RN32(a · e) (f32.cuh's f32_mul)
//   forward_element<W, F32>  §30.5 w_hat = RNE_bf16(w + R s), the sum exact, rounded once by
//                            cast.cuh's round_finite (numref::round_increment)
//   add_term / grad_finish   §30.7 T = Σ g R exactly in exact_sum.cuh's carry-save counters (one
//                            set per sign); dL/db_t = RN32(-ln2 · s · T) from 256-bit bounds of ln 2
//
// The lane layout (§A.13): a 32 x 32 tile is 256 lanes of 4 consecutive elements of one row;
// lane l holds row l / 8 of the tile and columns 4 (l mod 8) ... 4 (l mod 8) + 3, i.e. the
// in-block indices e = 4 l ... 4 l + 3, whose 16-bit words are the four quarters of ONE
// generator word z = mix(k + (l + 1) γ).
#pragma once

#include <cstdint>

#include "numref/splitmix64.hpp"
#include "numref_arith/cast.cuh"
#include "numref_arith/config.cuh"
#include "numref_arith/exact_sum.cuh"
#include "numref_arith/f32.cuh"
#include "numref_arith/format_traits.cuh"
#include "numref_arith/intmath.cuh"

namespace numref_cuda::gaussws {

inline constexpr int kTile = 32;                      // b_l (§30.1)
inline constexpr int kLanes = 256;                    // lanes of a tile (§A.13)
inline constexpr int kLaneElems = 4;                  // consecutive elements of one row per lane
inline constexpr std::uint32_t kNaN32 = 0x7FC00000u;  // §30.6 / §30.7 poisoned scale, gradient
inline constexpr std::uint32_t kBf16NaN = 0x7FC0u;    // §30.6 poisoned w_hat
inline constexpr std::uint32_t kBf16Inf = 0x7F80u;

using F32 = FloatTraits<numref::FormatId::f32>;
using BF16 = FloatTraits<numref::FormatId::bf16>;

// ---- §30.2 noise ---------------------------------------------------------------------------
// A = (u0 | u1) & u2 & ... & u9, B = (u10 | u11) & (u12 | u13) & u14; |R| = 2 if A, else 1 if B.
NUMREF_HD NUMREF_FORCEINLINE int noise(std::uint32_t u) {
  const bool a = (u & 0x3u) != 0u && (u & 0x3FCu) == 0x3FCu;
  const bool b = (u & 0xC00u) != 0u && (u & 0x3000u) != 0u && (u & 0x4000u) != 0u;
  const int mag = a ? 2 : (b ? 1 : 0);
  return (u & 0x8000u) != 0u ? -mag : mag;
}

// §30.9 The 4-bit sign-magnitude nibble of R.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t nibble(int r) {
  return r < 0 ? (0x8u | static_cast<std::uint32_t>(-r)) : static_cast<std::uint32_t>(r);
}

// ---- §30.3 generator -----------------------------------------------------------------------
NUMREF_HD NUMREF_FORCEINLINE std::uint64_t block_key(std::uint64_t seed, std::uint64_t layer, std::uint64_t step,
                                                     std::uint32_t block_row, std::uint32_t block_col) {
  std::uint64_t h = numref::splitmix64_mix(seed);
  h = numref::splitmix64_mix(h ^ layer);
  h = numref::splitmix64_mix(h ^ step);
  return numref::splitmix64_mix(h ^ ((std::uint64_t{block_row} << 32) | block_col));
}
// The generator word z of lane l (in-block elements 4 l ... 4 l + 3): element 4 l + t takes bits
// 16 t ... 16 t + 15.
NUMREF_HD NUMREF_FORCEINLINE std::uint64_t lane_word(std::uint64_t key, std::uint32_t lane) {
  return numref::splitmix64_mix(key + (std::uint64_t{lane} + 1u) * numref::kSplitMix64Gamma);
}

// ---- 128-bit helpers -------------------------------------------------------------------------
struct U128 {
  std::uint64_t hi = 0, lo = 0;
};
NUMREF_HD NUMREF_FORCEINLINE U128 mul64(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return {__umul64hi(a, b), a * b};
#else
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return {static_cast<std::uint64_t>(p >> 64), static_cast<std::uint64_t>(p)};
#endif
}

// floor(a · b / 2^127) (round_up = false) or ceil (true) of two 128-bit values whose quotient is
// below 2^128 (both in [2^127, 2^128): fixed-point values in [1, 2) with 127 fraction bits).
NUMREF_HD inline U128 mul_fixed127(const U128& a, const U128& b, bool round_up) {
  // 256-bit product in four 64-bit words w0 (low) ... w3
  const U128 ll = mul64(a.lo, b.lo), lh = mul64(a.lo, b.hi), hl = mul64(a.hi, b.lo), hh = mul64(a.hi, b.hi);
  std::uint64_t w0 = ll.lo, w1 = ll.hi, w2 = hh.lo, w3 = hh.hi;
  auto add = [](std::uint64_t& x, std::uint64_t y) -> std::uint64_t {
    x += y;
    return x < y ? 1u : 0u;
  };
  std::uint64_t c = add(w1, lh.lo);
  c += add(w1, hl.lo);
  std::uint64_t c2 = add(w2, c);
  c2 += add(w2, lh.hi);
  c2 += add(w2, hl.hi);
  w3 += c2;
  // shift right by 127 = one word and 63 bits: result bits are w1 >> 63 | w2 << 1 | w3 << 65
  U128 r{(w3 << 1) | (w2 >> 63), (w2 << 1) | (w1 >> 63)};
  if (round_up && (w0 != 0u || (w1 << 1) != 0u)) {
    r.lo += 1u;
    if (r.lo == 0u) r.hi += 1u;
  }
  return r;
}

// ---- §30.4 e = RN32(2^(1 - b_t)) ----------------------------------------------------------------
// floor(2^(2^-i) · 2^127), i = 1 ... 96 (2^(2^-i) is irrational: the true value lies strictly
// between the entry and the entry + 1). Generated by iterated integer square roots with 480-bit
// lower and upper bounds; test_cuda_gaussws.cpp recomputes every entry.
#define NUMREF_GW_EXP2_TABLE                                          \
  {0xb504f333f9de6484ull, 0x597d89b3754abe9full},     /* 2^(2^-1) */  \
      {0x9837f0518db8a96full, 0x46ad23182e42f6f6ull}, /* 2^(2^-2) */  \
      {0x8b95c1e3ea8bd6e6ull, 0xfbe4628758a53c90ull}, /* 2^(2^-3) */  \
      {0x85aac367cc487b14ull, 0xc5c95b8c2154c1b2ull}, /* 2^(2^-4) */  \
      {0x82cd8698ac2ba1d7ull, 0x3e2a475b46520bffull}, /* 2^(2^-5) */  \
      {0x8164d1f3bc030773ull, 0x7be56527bd14def4ull}, /* 2^(2^-6) */  \
      {0x80b1ed4fd999ab6cull, 0x25335719b6e6fd20ull}, /* 2^(2^-7) */  \
      {0x8058d7d2d5e5f6b0ull, 0x94d589f608ee4aa2ull}, /* 2^(2^-8) */  \
      {0x802c6436d0e04f50ull, 0xff8ce94a6797b3ceull}, /* 2^(2^-9) */  \
      {0x8016302f17467628ull, 0x3690dfe44d11d008ull}, /* 2^(2^-10) */ \
      {0x800b179c82028fd0ull, 0x945e54e2ae18f2f0ull}, /* 2^(2^-11) */ \
      {0x80058baf7fee3b5dull, 0x1c718b38e549cb93ull}, /* 2^(2^-12) */ \
      {0x8002c5d00fdcfcb6ull, 0xb6566a58c048be1full}, /* 2^(2^-13) */ \
      {0x800162e61bed4a48ull, 0xe84c2e1a463473d9ull}, /* 2^(2^-14) */ \
      {0x8000b17292f702a3ull, 0xaa22beacca949013ull}, /* 2^(2^-15) */ \
      {0x800058b92abbae02ull, 0x030c5fa5256f41feull}, /* 2^(2^-16) */ \
      {0x80002c5c8dade4d7ull, 0x1776c0f4dbea67d6ull}, /* 2^(2^-17) */ \
      {0x8000162e44eaf636ull, 0x526be456600bdbe4ull}, /* 2^(2^-18) */ \
      {0x80000b1721fa7c18ull, 0x8307016c1cd4e8b6ull}, /* 2^(2^-19) */ \
      {0x8000058b90de7e4cull, 0xecfc487503488bb1ull}, /* 2^(2^-20) */ \
      {0x800002c5c8678f36ull, 0xcbfce50a6de60b14ull}, /* 2^(2^-21) */ \
      {0x80000162e431db9full, 0x80b2347b5d62e516ull}, /* 2^(2^-22) */ \
      {0x800000b1721872d0ull, 0xc7b08cf1e0114152ull}, /* 2^(2^-23) */ \
      {0x80000058b90c1aa8ull, 0xa5c3736cb77e8dffull}, /* 2^(2^-24) */ \
      {0x8000002c5c8605a4ull, 0x635f2efc2362d978ull}, /* 2^(2^-25) */ \
      {0x800000162e4300e6ull, 0x35cf4a109e3939bdull}, /* 2^(2^-26) */ \
      {0x8000000b17217ff8ull, 0x1bef9c551590cf83ull}, /* 2^(2^-27) */ \
      {0x800000058b90bfddull, 0x4e39cd52c0cfa27cull}, /* 2^(2^-28) */ \
      {0x80000002c5c85fe6ull, 0xf72d669e0e76e411ull}, /* 2^(2^-29) */ \
      {0x8000000162e42ff1ull, 0x8f9ad35186d0df28ull}, /* 2^(2^-30) */ \
      {0x80000000b17217f8ull, 0x4cce71aa0dcfffe7ull}, /* 2^(2^-31) */ \
      {0x8000000058b90bfcull, 0x07a77ad56ed22aaaull}, /* 2^(2^-32) */ \
      {0x800000002c5c85fdull, 0xfc23cdead40da8d6ull}, /* 2^(2^-33) */ \
      {0x80000000162e42feull, 0xfc25eb1571853a66ull}, /* 2^(2^-34) */ \
      {0x800000000b17217full, 0x7d97f692baacded5ull}, /* 2^(2^-35) */ \
      {0x80000000058b90bfull, 0xbead3b8b5dd254d7ull}, /* 2^(2^-36) */ \
      {0x8000000002c5c85full, 0xdf4eedd62f084e67ull}, /* 2^(2^-37) */ \
      {0x800000000162e42full, 0xefa58aef378bf586ull}, /* 2^(2^-38) */ \
      {0x8000000000b17217ull, 0xf7d24a78a3c7ef02ull}, /* 2^(2^-39) */ \
      {0x800000000058b90bull, 0xfbe9067c93e474a6ull}, /* 2^(2^-40) */ \
      {0x80000000002c5c85ull, 0xfdf47b8e5a72599full}, /* 2^(2^-41) */ \
      {0x8000000000162e42ull, 0xfefa3bdb315934a2ull}, /* 2^(2^-42) */ \
      {0x80000000000b1721ull, 0x7f7d1d7299b49c46ull}, /* 2^(2^-43) */ \
      {0x8000000000058b90ull, 0xbfbe8e9a8d1c4ea0ull}, /* 2^(2^-44) */ \
      {0x800000000002c5c8ull, 0x5fdf4745969ea76full}, /* 2^(2^-45) */ \
      {0x80000000000162e4ull, 0x2fefa3a0df5373bfull}, /* 2^(2^-46) */ \
      {0x800000000000b172ull, 0x17f7d1cff4aac1e1ull}, /* 2^(2^-47) */ \
      {0x80000000000058b9ull, 0x0bfbe8e7db95a2f1ull}, /* 2^(2^-48) */ \
      {0x8000000000002c5cull, 0x85fdf473e61ae1f8ull}, /* 2^(2^-49) */ \
      {0x800000000000162eull, 0x42fefa39f121751cull}, /* 2^(2^-50) */ \
      {0x8000000000000b17ull, 0x217f7d1cf815bb96ull}, /* 2^(2^-51) */ \
      {0x800000000000058bull, 0x90bfbe8e7bec1e0dull}, /* 2^(2^-52) */ \
      {0x80000000000002c5ull, 0xc85fdf473dee5f17ull}, /* 2^(2^-53) */ \
      {0x8000000000000162ull, 0xe42fefa39ef5438full}, /* 2^(2^-54) */ \
      {0x80000000000000b1ull, 0x7217f7d1cf7a26c8ull}, /* 2^(2^-55) */ \
      {0x8000000000000058ull, 0xb90bfbe8e7bcf4a4ull}, /* 2^(2^-56) */ \
      {0x800000000000002cull, 0x5c85fdf473de72a2ull}, /* 2^(2^-57) */ \
      {0x8000000000000016ull, 0x2e42fefa39ef3765ull}, /* 2^(2^-58) */ \
      {0x800000000000000bull, 0x17217f7d1cf79b37ull}, /* 2^(2^-59) */ \
      {0x8000000000000005ull, 0x8b90bfbe8e7bcd7dull}, /* 2^(2^-60) */ \
      {0x8000000000000002ull, 0xc5c85fdf473de6b6ull}, /* 2^(2^-61) */ \
      {0x8000000000000001ull, 0x62e42fefa39ef359ull}, /* 2^(2^-62) */ \
      {0x8000000000000000ull, 0xb17217f7d1cf79acull}, /* 2^(2^-63) */ \
      {0x8000000000000000ull, 0x58b90bfbe8e7bcd6ull}, /* 2^(2^-64) */ \
      {0x8000000000000000ull, 0x2c5c85fdf473de6aull}, /* 2^(2^-65) */ \
      {0x8000000000000000ull, 0x162e42fefa39ef35ull}, /* 2^(2^-66) */ \
      {0x8000000000000000ull, 0x0b17217f7d1cf79aull}, /* 2^(2^-67) */ \
      {0x8000000000000000ull, 0x058b90bfbe8e7bcdull}, /* 2^(2^-68) */ \
      {0x8000000000000000ull, 0x02c5c85fdf473de6ull}, /* 2^(2^-69) */ \
      {0x8000000000000000ull, 0x0162e42fefa39ef3ull}, /* 2^(2^-70) */ \
      {0x8000000000000000ull, 0x00b17217f7d1cf79ull}, /* 2^(2^-71) */ \
      {0x8000000000000000ull, 0x0058b90bfbe8e7bcull}, /* 2^(2^-72) */ \
      {0x8000000000000000ull, 0x002c5c85fdf473deull}, /* 2^(2^-73) */ \
      {0x8000000000000000ull, 0x00162e42fefa39efull}, /* 2^(2^-74) */ \
      {0x8000000000000000ull, 0x000b17217f7d1cf7ull}, /* 2^(2^-75) */ \
      {0x8000000000000000ull, 0x00058b90bfbe8e7bull}, /* 2^(2^-76) */ \
      {0x8000000000000000ull, 0x0002c5c85fdf473dull}, /* 2^(2^-77) */ \
      {0x8000000000000000ull, 0x000162e42fefa39eull}, /* 2^(2^-78) */ \
      {0x8000000000000000ull, 0x0000b17217f7d1cfull}, /* 2^(2^-79) */ \
      {0x8000000000000000ull, 0x000058b90bfbe8e7ull}, /* 2^(2^-80) */ \
      {0x8000000000000000ull, 0x00002c5c85fdf473ull}, /* 2^(2^-81) */ \
      {0x8000000000000000ull, 0x0000162e42fefa39ull}, /* 2^(2^-82) */ \
      {0x8000000000000000ull, 0x00000b17217f7d1cull}, /* 2^(2^-83) */ \
      {0x8000000000000000ull, 0x0000058b90bfbe8eull}, /* 2^(2^-84) */ \
      {0x8000000000000000ull, 0x000002c5c85fdf47ull}, /* 2^(2^-85) */ \
      {0x8000000000000000ull, 0x00000162e42fefa3ull}, /* 2^(2^-86) */ \
      {0x8000000000000000ull, 0x000000b17217f7d1ull}, /* 2^(2^-87) */ \
      {0x8000000000000000ull, 0x00000058b90bfbe8ull}, /* 2^(2^-88) */ \
      {0x8000000000000000ull, 0x0000002c5c85fdf4ull}, /* 2^(2^-89) */ \
      {0x8000000000000000ull, 0x000000162e42fefaull}, /* 2^(2^-90) */ \
      {0x8000000000000000ull, 0x0000000b17217f7dull}, /* 2^(2^-91) */ \
      {0x8000000000000000ull, 0x000000058b90bfbeull}, /* 2^(2^-92) */ \
      {0x8000000000000000ull, 0x00000002c5c85fdfull}, /* 2^(2^-93) */ \
      {0x8000000000000000ull, 0x0000000162e42fefull}, /* 2^(2^-94) */ \
      {0x8000000000000000ull, 0x00000000b17217f7ull}, /* 2^(2^-95) */ \
  {                                                                   \
    0x8000000000000000ull, 0x0000000058b90bfbull                      \
  } /* 2^(2^-96) */
#if defined(__CUDACC__)
static __constant__ const std::uint64_t kExp2Device[96][2] = {NUMREF_GW_EXP2_TABLE};
#endif
inline constexpr std::uint64_t kExp2Host[96][2] = {NUMREF_GW_EXP2_TABLE};
#undef NUMREF_GW_EXP2_TABLE

NUMREF_HD NUMREF_FORCEINLINE U128 exp2_entry(int i) {  // i = 1 ... 96
#if defined(__CUDA_ARCH__)
  return {kExp2Device[i - 1][0], kExp2Device[i - 1][1]};
#else
  return {kExp2Host[i - 1][0], kExp2Host[i - 1][1]};
#endif
}

// floor(ln 2 · 2^256), most significant word first (ln 2 = Σ_{k≥1} 1 / (k 2^k); recomputed by
// test_cuda_gaussws.cpp). ln 2 is irrational: the true value lies strictly below the next integer.
inline constexpr std::uint64_t kLn2W3 = 0xb17217f7d1cf79abull, kLn2W2 = 0xc9e3b39803f2f6afull,
                               kLn2W1 = 0x40f343267298b62dull, kLn2W0 = 0x8a0d175b8baafa2bull;

struct Rounded {
  std::uint32_t code = 0;
  bool decided = true;  // false: the bounds straddle a rounding boundary (§A.13: an error)
};

// §30.4 For a FINITE binary32 b_t (the caller rejects NaN and ±Inf, §30.1).
NUMREF_HD inline Rounded exp2_one_minus(std::uint32_t bt) {
  const std::uint32_t mag = bt & kF32Abs;
  const bool neg = (bt >> 31) != 0u;
  if (neg && mag >= 0x42FE0000u) return {kF32Inf, true};  // b_t <= -127: x >= 128 overflows
  if (!neg && mag >= 0x43170000u) return {0u, true};      // b_t >= 151: x <= -150, below half of 2^-149
  if (mag == 0u) return {0x40000000u, true};              // 2^1
  const F32Split v = f32_split(mag);                      // |b_t| = sig · 2^(e - 23)
  // |b_t| < 2^-64: 2^(1 - b_t) lies within 2^-62 of 2, far inside 2's rounding interval
  // (2 - 2^-24, 2 + 2^-23).
  if (v.e < -64) return {0x40000000u, true};
  // V = |b_t| · 2^96 exactly (the shift is 9 ... 80; V < 2^104): integer part Vi, fraction Vf (96 bits)
  const int sh = v.e + 73;
  const std::uint64_t s64 = v.sig;
  const std::uint64_t vlo = sh >= 64 ? 0u : (s64 << sh);
  const std::uint64_t vhi = sh >= 64 ? (s64 << (sh - 64)) : (sh == 0 ? 0u : (s64 >> (64 - sh)));  // bits 64 ... 103
  const int vi = static_cast<int>(vhi >> 32);
  std::uint64_t fhi = vhi & 0xFFFFFFFFu, flo = vlo;  // F = Vf: bits 95 ... 0
  const bool frac = (fhi | flo) != 0u;
  int n;
  if (neg) {
    n = 1 + vi;  // x = 1 + |b_t|
  } else if (!frac) {
    n = 1 - vi;
  } else {  // x = 1 - Vi - Vf: n = -Vi, F = 2^96 - Vf
    n = -vi;
    flo = ~flo + 1u;
    fhi = (~fhi + (flo == 0u ? 1u : 0u)) & 0xFFFFFFFFu;
  }
  U128 lo{std::uint64_t{1} << 63, 0u}, hi = lo;  // 2^0 with 127 fraction bits
  for (int i = 1; i <= 96; ++i) {
    const int b = 96 - i;  // bit b of F has weight 2^-i
    const bool set = b >= 64 ? ((fhi >> (b - 64)) & 1u) != 0u : ((flo >> b) & 1u) != 0u;
    if (!set) continue;
    const U128 c = exp2_entry(i);
    U128 c1 = c;
    c1.lo += 1u;
    if (c1.lo == 0u) c1.hi += 1u;
    lo = mul_fixed127(lo, c, false);
    hi = mul_fixed127(hi, c1, true);
  }
  // 2^x = (lo ... hi) · 2^(n - 127): round the top 64 bits with the rest as a sticky bit
  const std::uint32_t a = rn32_round(false, lo.hi, n - 63, lo.lo != 0u);
  const std::uint32_t b = rn32_round(false, hi.hi, n - 63, hi.lo != 0u);
  return {a, a == b};
}

// §30.4 s = RN32(a · e) for a finite non-negative amax code a; 0 when a = 0 (also for e = +Inf).
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t block_scale(std::uint32_t amax, std::uint32_t e) {
  if (amax == 0u) return 0u;
  if (e == kF32Inf) return kF32Inf;
  return f32_mul(amax, e);
}

// The binary32 code of a code of W (f32, or bf16 widened exactly).
template <class W>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t widen(std::uint32_t c) {
  if constexpr (W::bits == 16)
    return c << 16;
  else
    return c;
}
// §30.4 / §30.6 The amax key of an element: its binary32 magnitude code (>= kF32Inf: the block is poisoned).
template <class W>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t amax_key(std::uint32_t w) {
  return widen<W>(w) & kF32Abs;
}

// ---- §30.5 forward ------------------------------------------------------------------------------

// The special-value codes of the cast to bf16 (§30.5: rne, overflow to ±Inf).
NUMREF_HD NUMREF_FORCEINLINE SpecialCodes<BF16> bf16_codes() {
  CastPolicy p;
  p.mode = Mode::rne;
  p.saturate = false;
  return make_special_codes<BF16>(p);
}

// The exact sum of two non-zero signed values a = sa · 2^ea, b = sb · 2^eb (significands below
// 2^26) as (neg, sig, exp, sticky): sig · 2^exp, plus a positive amount below 2^exp when sticky.
// The larger operand's top bit goes to bit 61; the smaller one is aligned to it, bits shifted out
// (only when the two are more than 35 binades apart) becoming the sticky bit. sig = 0 (and no
// sticky) for an exact cancellation.
struct ExactSum64 {
  bool neg;
  std::uint64_t sig;
  int exp;
  bool sticky;
};
NUMREF_HD inline ExactSum64 exact_add(bool na, std::uint64_t sa, int ea, bool nb, std::uint64_t sb, int eb) {
  const int la = bitlen64(sa), lb = bitlen64(sb);
  const bool a_big = ea + la >= eb + lb;
  const bool nbig = a_big ? na : nb, nsmall = a_big ? nb : na;
  const std::uint64_t big = a_big ? sa : sb, small = a_big ? sb : sa;
  const int ebig = a_big ? ea : eb, esmall = a_big ? eb : ea, lbig = a_big ? la : lb;
  const int shift = 61 - (lbig - 1);
  const std::uint64_t bs = big << shift;
  const int e = ebig - shift;
  const int d = esmall - e;  // small's top bit is at most big's: d <= 61 - (lb - 1)
  std::uint64_t ss;
  bool lost = false;
  if (d >= 0) {
    ss = small << d;
  } else if (-d >= 64) {
    ss = 0u;
    lost = true;
  } else {
    ss = small >> (-d);
    lost = (small & ((std::uint64_t{1} << (-d)) - 1u)) != 0u;
  }
  if (nbig == nsmall) return {nbig, bs + ss, e, lost};
  if (lost) return {nbig, bs - ss - 1u, e, true};  // bs - (ss + δ) = (bs - ss - 1) + (1 - δ)
  if (bs >= ss) return {nbig, bs - ss, e, false};
  return {nsmall, ss - bs, e, false};
}

// §30.5 w_hat of one element of a finite (not poisoned) block: w a code of W, r = R, s the block's
// scale (finite or +Inf). SumF32: the variant sum=f32, RNE_bf16(RN32(v)).
template <class W, bool SumF32>
NUMREF_HD inline std::uint32_t forward_element(std::uint32_t w, int r, std::uint32_t s, const SpecialCodes<BF16>& sp) {
  if (r == 0 || s == 0u) {  // no noise: RNE_bf16(w), which is w itself for a (finite) bf16 w
    if constexpr (W::bits == 16)
      return w;
    else
      return convert_as<W, BF16, Mode::rne>(w, sp, 0, 0u);
  }
  if (s == kF32Inf) return r < 0 ? (0x8000u | kBf16Inf) : kBf16Inf;
  const F32Split sx = f32_split(s);
  const std::uint64_t dsig = static_cast<std::uint64_t>(sx.sig) * static_cast<std::uint64_t>(r < 0 ? -r : r);
  const int dexp = sx.e - 23;
  const std::uint32_t wf = widen<W>(w);
  ExactSum64 v;
  if ((wf & kF32Abs) == 0u) {
    v = {r < 0, dsig, dexp, false};
  } else {
    const F32Split wx = f32_split(wf & kF32Abs);
    v = exact_add((wf >> 31) != 0u, wx.sig, wx.e - 23, r < 0, dsig, dexp);
    if (v.sig == 0u && !v.sticky) return 0u;  // an exact zero sum: +0
  }
  if constexpr (SumF32) {
    const std::uint32_t v32 = rn32_round(v.neg, v.sig, v.exp, v.sticky);
    return convert_as<F32, BF16, Mode::rne>(v32, sp, 0, 0u);
  } else {
    // Keep 25 bits; the bits below (and the sticky bit) fold into the last one: bf16 keeps at most
    // 8 significant bits, so the rounding position, the half bit and "anything below" are unchanged.
    std::uint64_t sig = v.sig;
    int exp = v.exp;
    const int len = bitlen64(sig);
    bool sticky = v.sticky;
    if (len > 25) {
      const int d = len - 25;
      sticky = sticky || (sig & ((std::uint64_t{1} << d) - 1u)) != 0u;
      sig >>= d;
      exp += d;
    }
    const std::uint32_t s25 = static_cast<std::uint32_t>(sig) | (sticky ? 1u : 0u);
    return detail::round_finite<BF16, Mode::rne>(v.neg, s25, exp, 0, 0u, sp);
  }
}

// ---- §30.7 backward -----------------------------------------------------------------------------

// The exact sums of one block: T · 2^149 = Σ pos - Σ neg, each in exact_sum.cuh's carry-save form.
// A lane keeps one Window per sign and hands every other piece to `sink(neg, digit, value)` (the
// kernel: a shared-memory atomicAdd; the host: an add).
struct LaneTerms {
  Window win[2];
  bool nonfinite = false;
};
// §30.7 Adds g · R (g a binary32 code, R in -2 ... 2) to the lane's sums.
template <class Sink>
NUMREF_HD NUMREF_FORCEINLINE void add_term(LaneTerms& t, std::uint32_t g, int r, Sink&& sink) {
  const std::uint32_t mag = g & kF32Abs;
  if (mag >= kF32Inf) {
    t.nonfinite = true;
    return;
  }
  if (r == 0 || mag == 0u) return;
  std::uint32_t m;
  int pos;
  error_term(mag, m, pos);
  pos += (r < 0 ? -r : r) - 1;  // |R| = 2: one position up (pos <= 254 < 12 · 24 - 24)
  const int neg = ((g >> 31) != 0u) != (r < 0) ? 1 : 0;
  if (t.win[neg].add(m, pos)) return;
  int d;
  std::uint32_t lo, hi;
  term_pieces(m, pos, d, lo, hi);
  sink(neg, d, lo);
  sink(neg, d + 1, hi);
}
// Hands the lane's windows to the sink (6 pieces each).
template <class Sink>
NUMREF_HD NUMREF_FORCEINLINE void flush_terms(const LaneTerms& t, Sink&& sink) {
  for (int s = 0; s < 2; ++s) {
    if (t.win[s].empty()) continue;
    for (int i = 0; i < kWindowDigits; ++i) sink(s, kWindowFirstDigit + i, t.win[s].piece(i));
  }
}

// §30.7 dL/db_t = RN32(-ln 2 · s · T) from the block's counters (digits[0]: positive terms,
// digits[1]: negative terms), the block's s (kNaN32 when poisoned) and whether a g was not finite.
NUMREF_HD inline Rounded grad_finish(const std::uint64_t (&digits)[2][kSumDigits], bool nonfinite, std::uint32_t s) {
  if (nonfinite || s == kNaN32) return {kNaN32, true};
  ErrorSumState st[2] = {};
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < kSumDigits; ++i) st[k].digit[i] = digits[k][i];
  const ErrorSumValue p = normalize(st[0]), q = normalize(st[1]);
  // D = |P - Q| (320 bits), T < 0 iff P < Q
  bool less = false;
  for (int i = 4; i >= 0; --i)
    if (p.s[i] != q.s[i]) {
      less = p.s[i] < q.s[i];
      break;
    }
  const std::uint64_t* a = less ? q.s : p.s;
  const std::uint64_t* b = less ? p.s : q.s;
  std::uint64_t dl[5];
  std::uint64_t borrow = 0;
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t t = a[i] - b[i];
    const std::uint64_t t2 = t - borrow;
    borrow = (a[i] < b[i] || t < borrow) ? 1u : 0u;
    dl[i] = t2;
  }
  if ((dl[0] | dl[1] | dl[2] | dl[3] | dl[4]) == 0u || s == 0u) return {0u, true};
  const bool res_neg = !less;  // -ln2 · s · T with s > 0
  if (s == kF32Inf) return {res_neg ? 0xFF800000u : kF32Inf, true};
  // D truncated to its top 128 bits: Dt · 2^sh <= D < (Dt + 1) · 2^sh (Dt exact when sh = 0)
  int top = 0;
  for (int i = 4; i >= 0 && top == 0; --i)
    if (dl[i] != 0u) top = 64 * i + bitlen64(dl[i]);
  const int sh = top > 128 ? top - 128 : 0;
  auto bit_word = [&](int from) -> std::uint64_t {  // bits from ... from + 63 of D
    const int w = from / 64, o = from % 64;
    const std::uint64_t x = w < 5 ? dl[w] : 0u, y = w + 1 < 5 ? dl[w + 1] : 0u;
    return o == 0 ? x : ((x >> o) | (y << (64 - o)));
  };
  std::uint64_t t0 = bit_word(sh), t1 = bit_word(sh + 64);
  bool rest = false;
  for (int i = 0; i < sh && !rest; i += 64) {
    const std::uint64_t w = bit_word(i);
    rest = (sh - i >= 64) ? w != 0u : (w & ((std::uint64_t{1} << (sh - i)) - 1u)) != 0u;
  }
  const F32Split sx = f32_split(s);
  const std::uint32_t ln_lo[8] = {static_cast<std::uint32_t>(kLn2W0), static_cast<std::uint32_t>(kLn2W0 >> 32),
                                  static_cast<std::uint32_t>(kLn2W1), static_cast<std::uint32_t>(kLn2W1 >> 32),
                                  static_cast<std::uint32_t>(kLn2W2), static_cast<std::uint32_t>(kLn2W2 >> 32),
                                  static_cast<std::uint32_t>(kLn2W3), static_cast<std::uint32_t>(kLn2W3 >> 32)};
  std::uint32_t ln_hi[8];
  std::uint64_t carry = 1;
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t x = static_cast<std::uint64_t>(ln_lo[i]) + carry;
    ln_hi[i] = static_cast<std::uint32_t>(x);
    carry = x >> 32;
  }
  std::uint32_t res[2];
  for (int k = 0; k < 2; ++k) {
    std::uint64_t u0 = t0, u1 = t1;
    if (k == 1 && rest) {
      u0 += 1u;
      if (u0 == 0u) u1 += 1u;  // D < 2^320: no carry out of the 128 bits' top
    }
    const std::uint32_t d32[4] = {static_cast<std::uint32_t>(u0), static_cast<std::uint32_t>(u0 >> 32),
                                  static_cast<std::uint32_t>(u1), static_cast<std::uint32_t>(u1 >> 32)};
    std::uint32_t ds[5], prod[13];
    detail::mul_limbs(d32, 4, &sx.sig, 1, ds);
    detail::mul_limbs(ds, 5, k == 0 ? ln_lo : ln_hi, 8, prod);
    // value = prod · 2^(sh + e_s - 23 - 149 - 256): round its top 64 bits, the rest sticky
    int len = 0;
    for (int i = 12; i >= 0 && len == 0; --i)
      if (prod[i] != 0u) len = 32 * i + bitlen32(prod[i]);
    const int from = len > 64 ? len - 64 : 0;
    std::uint64_t top64 = 0;
    bool sticky = false;
    for (int i = 0; i < 13; ++i) {
      const int lo_bit = 32 * i;
      const std::uint64_t limb = prod[i];
      if (lo_bit + 32 <= from) {
        sticky = sticky || limb != 0u;
      } else if (lo_bit >= from + 64) {
        break;  // above the top bit: zero
      } else if (lo_bit >= from) {
        top64 |= limb << (lo_bit - from);
      } else {
        const int cut = from - lo_bit;
        sticky = sticky || (limb & ((std::uint64_t{1} << cut) - 1u)) != 0u;
        top64 |= limb >> cut;
      }
    }
    res[k] = rn32_round(res_neg, top64, from + sh + sx.e - 23 - 149 - 256, sticky);
  }
  return {res[0], res[0] == res[1]};
}

// ---- the lane layout of a tile (§A.13) ------------------------------------------------------------

// One GaussWS operation: a dense row-major rows x cols matrix (§30.1), its noise source and sum.
struct Problem {
  std::uint64_t rows = 1, cols = 1;
  std::uint64_t tile_rows = 1, tile_cols = 1;   // ceil(rows / 32), ceil(cols / 32)
  bool key = false;                             // R from the generator (else from u, one word per element)
  std::uint64_t seed = 0, layer = 0, step = 0;  // §30.3 (key = true)
  bool sum_f32 = false;                         // §30.5 the variant sum=f32
  NUMREF_HD std::uint64_t tiles() const { return tile_rows * tile_cols; }
  NUMREF_HD std::uint64_t size() const { return rows * cols; }
};
NUMREF_HD inline Problem make_problem(std::uint64_t rows, std::uint64_t cols) {
  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.tile_rows = (rows + kTile - 1) / kTile;
  p.tile_cols = (cols + kTile - 1) / kTile;
  return p;
}

// Lane l of tile t: row i, columns j0 ... j0 + count - 1 (count = 0 outside the matrix).
struct Lane {
  std::uint64_t i = 0, j0 = 0;
  std::uint32_t block_row = 0, block_col = 0;
  int count = 0;
  NUMREF_HD std::uint64_t first(const Problem& p) const { return i * p.cols + j0; }  // row-major index
};
NUMREF_HD NUMREF_FORCEINLINE Lane lane_of(const Problem& p, std::uint64_t tile, std::uint32_t lane) {
  Lane l;
  l.block_row = static_cast<std::uint32_t>(tile / p.tile_cols);
  l.block_col = static_cast<std::uint32_t>(tile % p.tile_cols);
  l.i = std::uint64_t{l.block_row} * kTile + lane / 8u;
  l.j0 = std::uint64_t{l.block_col} * kTile + kLaneElems * (lane % 8u);
  if (l.i < p.rows && l.j0 < p.cols) {
    const std::uint64_t left = p.cols - l.j0;
    l.count = left < kLaneElems ? static_cast<int>(left) : kLaneElems;
  }
  return l;
}

// Code k of an array of W codes (2 or 4 bytes each).
template <class W>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t load(const void* x, std::uint64_t k) {
  if constexpr (W::bits == 16)
    return static_cast<const std::uint16_t*>(x)[k];
  else
    return static_cast<const std::uint32_t*>(x)[k];
}

// §30.2 / §30.3 R of the lane's elements; `key` is the tile's block_key (read when p.key).
NUMREF_HD NUMREF_FORCEINLINE void lane_noise(const Problem& p, const Lane& l, std::uint32_t lane, std::uint64_t key,
                                             const std::uint16_t* u, int (&r)[kLaneElems]) {
  if (p.key) {
    const std::uint64_t z = lane_word(key, lane);
    NUMREF_UNROLL
    for (int t = 0; t < kLaneElems; ++t) r[t] = noise(static_cast<std::uint32_t>(z >> (16 * t)) & 0xFFFFu);
  } else {
    const std::uint64_t k0 = l.first(p);
    NUMREF_UNROLL
    for (int t = 0; t < kLaneElems; ++t) r[t] = t < l.count ? noise(u[k0 + t]) : 0;
  }
}

// §30.4 / §30.6 The lane's share of the block amax: the largest binary32 magnitude code of its
// elements (>= kF32Inf when one is NaN or ±Inf: the block is poisoned). Merged by integer max.
template <class W>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t lane_amax(const Problem& p, const Lane& l, const void* w) {
  std::uint32_t m = 0;
  const std::uint64_t k0 = l.first(p);
  for (int t = 0; t < l.count; ++t) {
    const std::uint32_t a = amax_key<W>(load<W>(w, k0 + t));
    m = a > m ? a : m;
  }
  return m;
}

// §30.5 / §30.6 The lane's outputs: w_hat (bf16 codes), and its R nibbles handed to
// `put_nibbles(word, bits)` (OR-ed into the packed word, §30.9; the kernel: atomicOr).
template <class W, bool SumF32, class PutNibbles>
NUMREF_HD NUMREF_FORCEINLINE void lane_forward(const Problem& p, const Lane& l, const void* w,
                                               const int (&r)[kLaneElems], std::uint32_t s,
                                               const SpecialCodes<BF16>& sp, std::uint16_t* w_hat,
                                               PutNibbles&& put_nibbles) {
  const std::uint64_t k0 = l.first(p);
  std::uint64_t word = k0 / 8u;
  std::uint32_t bits = 0;
  for (int t = 0; t < l.count; ++t) {
    const std::uint64_t k = k0 + t;
    const std::uint32_t out = s == kNaN32 ? kBf16NaN : forward_element<W, SumF32>(load<W>(w, k), r[t], s, sp);
    w_hat[k] = static_cast<std::uint16_t>(out);
    if (k / 8u != word) {
      if (bits != 0u) put_nibbles(word, bits);
      word = k / 8u;
      bits = 0;
    }
    bits |= nibble(r[t]) << (4u * static_cast<std::uint32_t>(k % 8u));
  }
  if (bits != 0u) put_nibbles(word, bits);
}

// §30.7 The lane's terms g · R.
template <class G, class Sink>
NUMREF_HD NUMREF_FORCEINLINE void lane_terms(const Problem& p, const Lane& l, const void* g, const int (&r)[kLaneElems],
                                             LaneTerms& t, Sink&& sink) {
  const std::uint64_t k0 = l.first(p);
  for (int e = 0; e < l.count; ++e) add_term(t, widen<G>(load<G>(g, k0 + e)), r[e], sink);
}

}  // namespace numref_cuda::gaussws
