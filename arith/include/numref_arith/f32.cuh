// numref CUDA kernels — the binary32 operations the spec defines "in FP32".      spec §1.2, §1.3, §A.6
//
// Where a clause defines a result as RN32 of one exact product, quotient or difference of two
// binary32 values — the block scale RN32(q_max / amax) (§14), the scale application
// RN32(x · f) / RN32(x / f) (§19.2), the dequantization RN32(v · d) / RN32(v / d) (§19.3), the
// relative error RN32(|x − q|) and RN32(d / |x|) (§21.2) — the kernels compute it here IN
// INTEGERS: the exact product (48 bits), quotient (41 bits and a sticky bit) or aligned
// difference (64 bits and a sticky bit) rounded once to binary32, round to nearest even,
// gradual underflow, overflow to ±Inf (§1.2's RN32). No floating-point instruction decides a
// result (§1.3, §A.1): the same source runs on the device, in nvcc's host pass and under g++,
// so the host tests (test_cuda_f32ops.cpp, against the reference's integer core) check the
// exact code the kernels execute, not a stand-in. NaN results are the canonical quiet NaN.
#pragma once

#include <cstdint>

#include "numref_arith/config.cuh"
#include "numref_arith/intmath.cuh"

namespace numref_cuda {

inline constexpr std::uint32_t kF32One = 0x3F800000u;
inline constexpr std::uint32_t kF32Max = 0x7F7FFFFFu;
inline constexpr std::uint32_t kF32Inf = 0x7F800000u;
inline constexpr std::uint32_t kF32NaN = 0x7FC00000u;  // canonical quiet NaN, positive
inline constexpr std::uint32_t kF32Abs = 0x7FFFFFFFu;

NUMREF_HD NUMREF_FORCEINLINE bool f32_finite(std::uint32_t b) { return (b & kF32Abs) < kF32Inf; }
NUMREF_HD NUMREF_FORCEINLINE bool f32_nan(std::uint32_t b) { return (b & kF32Abs) > kF32Inf; }

// §1.2 E(v) = floor(log2 v) and the significand normalised to 24 bits of a positive finite code.
struct F32Split {
  int e;
  std::uint32_t sig;  // [2^23, 2^24)
};
NUMREF_HD NUMREF_FORCEINLINE F32Split f32_split(std::uint32_t v) {
  const std::uint32_t field = (v >> 23) & 0xFFu, frac = v & 0x7FFFFFu;
  if (field != 0u) return {static_cast<int>(field) - 127, frac | 0x800000u};
  const int len = bitlen32(frac);  // subnormal: frac != 0
  return {len - 1 - 149, frac << (24 - len)};
}

// §1.2 RN32 of the exact non-zero value (sig + eps) · 2^exp with sign, eps in (0, 1) iff
// `sticky` (then the sticky part lies below bit 0 of sig and sig has at least 26 bits, so it is
// below the rounding position too). Round to nearest even at the quantum 2^max(E − 23, −149);
// a rounded magnitude of 2^128 or more is ±Inf.
NUMREF_HD inline std::uint32_t rn32_round(bool sign, std::uint64_t sig, int exp, bool sticky) {
  const std::uint32_t s = sign ? 0x80000000u : 0u;
  const int E = exp + bitlen64(sig) - 1;
  if (E > 127) return s | kF32Inf;
  const int q = E - 23 > -149 ? E - 23 : -149;
  const int d = q - exp;
  std::uint64_t n;
  if (d <= 0) {
    n = sig << (-d);  // exact (sig has fewer than 24 bits here)
  } else if (d < 64) {
    const std::uint64_t rem = sig & ((std::uint64_t{1} << d) - 1u), half = std::uint64_t{1} << (d - 1);
    n = sig >> d;
    const bool above = rem > half || (rem == half && sticky);
    const bool tie = rem == half && !sticky;
    n += (above || (tie && (n & 1u) != 0u)) ? 1u : 0u;
  } else {  // the value is below 2^-150 (half the smallest subnormal) unless d == 64
    const std::uint64_t half = std::uint64_t{1} << 63;
    n = (d == 64 && (sig > half || (sig == half && sticky))) ? 1u : 0u;
  }
  // n <= 2^24: the normal code (E + 126) · 2^23 + n carries into the exponent by itself.
  const std::uint32_t base = E >= -126 ? static_cast<std::uint32_t>(E + 126) << 23 : 0u;
  const std::uint32_t code = base + static_cast<std::uint32_t>(n);
  return s | (code >= kF32Inf ? kF32Inf : code);
}

// §1.2 RN32(a · b) of two binary32 codes (IEEE 754 multiplication, RNE), in integers.
NUMREF_HD inline std::uint32_t f32_mul(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t s = (a ^ b) & 0x80000000u, ma = a & kF32Abs, mb = b & kF32Abs;
  if (ma > kF32Inf || mb > kF32Inf) return kF32NaN;
  if (ma == kF32Inf || mb == kF32Inf) return (ma == 0u || mb == 0u) ? kF32NaN : (s | kF32Inf);
  if (ma == 0u || mb == 0u) return s;
  const F32Split x = f32_split(ma), y = f32_split(mb);
  return rn32_round(s != 0u, static_cast<std::uint64_t>(x.sig) * y.sig, x.e + y.e - 46, false);
}

// §1.2 / §4.4 RN32(a / b) of two binary32 codes (IEEE 754 division, RNE), in integers: the
// quotient of the 24-bit significands to 41 bits with a sticky remainder.
NUMREF_HD inline std::uint32_t f32_div(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t s = (a ^ b) & 0x80000000u, ma = a & kF32Abs, mb = b & kF32Abs;
  if (ma > kF32Inf || mb > kF32Inf) return kF32NaN;
  if (ma == kF32Inf) return mb == kF32Inf ? kF32NaN : (s | kF32Inf);
  if (mb == kF32Inf) return s;
  if (mb == 0u) return ma == 0u ? kF32NaN : (s | kF32Inf);
  if (ma == 0u) return s;
  const F32Split x = f32_split(ma), y = f32_split(mb);
  const std::uint64_t num = static_cast<std::uint64_t>(x.sig) << 40;
  const std::uint64_t quo = num / y.sig;  // 40 or 41 bits
  return rn32_round(s != 0u, quo, x.e - y.e - 40, quo * y.sig != num);
}

// §21.2 RN32(a − b) of two binary32 codes (IEEE 754 subtraction, RNE; an exact zero difference
// is +0), in integers: the larger operand's significand at bit 62, the smaller one aligned to
// it; bits shifted out (only when the exponents differ by more than 39) become a sticky bit.
NUMREF_HD inline std::uint32_t f32_sub(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t ma = a & kF32Abs, mb = b & kF32Abs;
  if (ma > kF32Inf || mb > kF32Inf) return kF32NaN;
  const bool sa = (a >> 31) != 0u, sb = (b >> 31) == 0u;  // b is subtracted: a + (−b)
  if (ma == kF32Inf || mb == kF32Inf) {
    if (ma == kF32Inf && mb == kF32Inf) return sa == sb ? a : kF32NaN;
    return ma == kF32Inf ? a : (b ^ 0x80000000u);
  }
  if (mb == 0u) return ma == 0u ? ((sa && sb) ? 0x80000000u : 0u) : a;
  if (ma == 0u) return b ^ 0x80000000u;
  // order by magnitude: |u| >= |v|
  const bool swap = mb > ma;
  const std::uint32_t mu = swap ? mb : ma, mv = swap ? ma : mb;
  const bool su = swap ? sb : sa, sv = swap ? sa : sb;
  const F32Split u = f32_split(mu), v = f32_split(mv);
  const std::uint64_t U = static_cast<std::uint64_t>(u.sig) << 39;  // < 2^63
  const int sh = u.e - v.e;
  std::uint64_t V = static_cast<std::uint64_t>(v.sig) << 39;
  bool lost = false;
  if (sh >= 64) {
    lost = true;
    V = 0u;
  } else if (sh > 0) {
    lost = (V & ((std::uint64_t{1} << sh) - 1u)) != 0u;
    V >>= sh;
  }
  const int exp = u.e - 23 - 39;
  if (su == sv) return rn32_round(su, U + V, exp, lost);  // < 2^64
  if (U == V && !lost) return 0u;                         // exact cancellation: +0
  // U − (V + eps) = (U − V − 1) + (1 − eps) when bits were lost (then U − V − 1 >= 2^61)
  return rn32_round(su, lost ? U - V - 1u : U - V, exp, lost);
}

// §14.1 RN32 clamped to the finite range for a positive quotient: min(RN32(a / b), FLT_MAX)
// (TransformerEngine's fminf(q_max / amax, FLT_MAX); RN32 overflows exactly when the rounded
// quotient is ≥ 2^128, i.e. when the reference's rn32_sat clamps).
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t f32_div_sat(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t q = f32_div(a, b);
  return (q & kF32Abs) == kF32Inf ? ((q & 0x80000000u) | kF32Max) : q;
}

// The binary32 code of 2^e, -149 <= e <= 127 (subnormal below 2^-126).
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t f32_pow2(int e) {
  return e >= -126 ? static_cast<std::uint32_t>(e + 127) << 23 : (1u << (e + 149));
}
}  // namespace numref_cuda
