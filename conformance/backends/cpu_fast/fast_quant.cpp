// numref backend "cpu-fast" — block scaling and quantization engine (fast_quant.hpp).
//                                                                       spec §12–§20
#include "fast_quant.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "fast_lanes.hpp"
#include "lane_fn.hpp"
#include "parallel.hpp"

namespace numref::cpu_fast {

namespace {

constexpr std::uint32_t kNaN = 0x7FC00000u, kInf = 0x7F800000u, kOne = 0x3F800000u;
constexpr std::size_t kChunk = 2048;  // elements converted per FastCast call

inline float as_float(std::uint32_t u) { return std::bit_cast<float>(u); }
inline std::uint32_t as_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// E(v) and the 24-bit normalised significand of a positive finite non-zero binary32.
inline void normalise(std::uint32_t a, int& e, std::uint32_t& sig) {
  if (a >= 0x00800000u) {
    e = static_cast<int>(a >> 23) - 127;
    sig = (a & 0x7FFFFFu) | 0x800000u;
  } else {
    const int p = 31 - __builtin_clz(a);  // 0..22
    e = p - 149;
    sig = a << (23 - p);
  }
}

// §14.1 S = RN32(q_max / amax) clamped to FLT_MAX; 1.0 for a zero amax.
inline std::uint32_t amax_scale(std::uint32_t a, float q) {
  if (a == 0) return kOne;
  const float s = q / as_float(a);  // one correctly rounded binary32 division
  return s > std::numeric_limits<float>::max() ? 0x7F7FFFFFu : as_bits(s);
}

// §14.3 D = RN32(amax / q_max), at least 2^-149; 1.0 for a zero amax.
inline std::uint32_t dequant_scale(std::uint32_t a, float q) {
  if (a == 0) return kOne;
  const std::uint32_t d = as_bits(as_float(a) / q);
  return d == 0 ? 1u : d;
}

// RN32(q / f) of a positive normal binary32 q and a positive normal binary64 f, saturated to
// FLT_MAX (§13.5 a binary64 amax floor): exact long division of the significands, 26 quotient
// bits and a sticky bit, rounded to nearest even. The quotient must be a normal binary32 or
// overflow (q >= 4 and f <= 1 here).
std::uint32_t rn32_quotient(std::uint32_t q, double f) {
  int qe = 0;
  std::uint32_t qs = 0;
  normalise(q, qe, qs);  // q = qs 2^(qe - 23)
  int fe = 0;
  const double m = std::frexp(f, &fe);                            // f = m 2^fe, m in [0.5, 1)
  const auto fs = static_cast<std::uint64_t>(std::ldexp(m, 53));  // f = fs 2^(fe - 53), exact
  int e = (qe - 23) - (fe - 53);                                  // q / f = (qs / fs) 2^e
  std::uint64_t r = qs;
  while (r < fs) {  // 1 <= r / fs < 2
    r <<= 1;
    --e;
  }
  std::uint64_t bits = 0;
  for (int i = 0; i < 26; ++i) {
    bits <<= 1;
    if (r >= fs) {
      bits |= 1;
      r -= fs;
    }
    r <<= 1;
  }
  // bits: 26 quotient bits, the leading one at bit 25; the value is bits 2^(e - 25) (+ the remainder)
  std::uint32_t mant = static_cast<std::uint32_t>(bits >> 2);
  const bool guard = (bits >> 1) & 1u, sticky = (bits & 1u) != 0 || r != 0;
  if (guard && (sticky || (mant & 1u))) ++mant;
  if (mant == (1u << 24)) {
    mant >>= 1;
    ++e;
  }
  if (e + 127 >= 255) return 0x7F7FFFFFu;  // §14.1 clamped to FLT_MAX
  return (static_cast<std::uint32_t>(e + 127) << 23) | (mant & 0x7FFFFFu);
}

// 2^k as a binary32 (k in [-149, 127]).
inline float pow2f(int k) {
  if (k >= -126) return as_float(static_cast<std::uint32_t>(k + 127) << 23);
  return as_float(1u << (k + 149));
}

// §16.8 / §16.11 / §15.2 floor and ceil of log2f_cr(v), the correctly rounded binary32 log2 of a
// positive finite binary32 v = 2^E (1 + f), without evaluating it where the bits decide: log2 v
// lies in [E, E + 1), and every binary32 within 2^-17 of an integer k with |k| <= 150 is k or
// one of its neighbours (their spacing there is at most 2^-16), so RN32(log2 v) is an integer
// other than E (floor) only when E + 1 - log2 v < 2^-17, and rounds to E (ceil) only when
// log2 v - E < 2^-17. For f < 1 - 2^-15 (fraction field < 0x7FFF00), E + 1 - log2 v =
// -log2(1 - g / 2) with g = 1 - f > 2^-15 is above g / 2 > 2^-16; for f >= 2^-15 (fraction field
// >= 0x100), log2(1 + f) >= f >= 2^-15 (log2(1 + f) >= f on [0, 1]). In the few cases left
// (the fraction field within 2^8 of either end) the reference's own log2f_cr decides.
constexpr std::uint32_t kLog2fNearTwo = 0x7FFF00u, kLog2fNearOne = 0x100u;

long floor_log2f(std::uint32_t v) {
  int E = 0;
  std::uint32_t sig = 0;
  normalise(v, E, sig);
  if ((sig & 0x7FFFFFu) < kLog2fNearTwo) return E;
  return numref::f32_floor(numref::log2f_cr(v));
}

long ceil_log2f(std::uint32_t v) {
  int E = 0;
  std::uint32_t sig = 0;
  normalise(v, E, sig);
  const std::uint32_t m = sig & 0x7FFFFFu;
  if (m == 0) return E;  // a power of two: log2f_cr is exact
  if (m >= kLog2fNearOne) return E + 1;
  return numref::f32_ceil(numref::log2f_cr(v));
}

// §15.2 2^floor(log2f_cr(s)) of a positive finite binary32 s (numref::pow2_log2f).
std::uint32_t pow2_log2f_of(std::uint32_t s) {
  if (s >= 0x00800000u && (s & 0x7FFFFFu) < kLog2fNearTwo) return s & 0xFF800000u;  // 2^E(s), as floor_log2f
  return numref::pow2_log2f(s);
}

// ---- vectorisable row-segment kernels ----------------------------------------------------------

// y = RN32(x * f) or RN32(x / f); NaN lanes keep their (quieted) payload: the element is
// "widened to binary32 with its sign and payload" (§19.2) and converted by the policy.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NUMREF_QCLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NUMREF_QCLONES
#endif

NUMREF_QCLONES void scale_mul(const std::uint32_t* __restrict u, std::size_t n, float f, std::uint32_t* __restrict y) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t a = u[k] & 0x7FFFFFFFu;
    const std::uint32_t p = as_bits(as_float(u[k]) * f);
    y[k] = a > kInf ? (u[k] | 0x00400000u) : p;
  }
}

NUMREF_QCLONES void scale_div(const std::uint32_t* __restrict u, std::size_t n, float f, std::uint32_t* __restrict y) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t a = u[k] & 0x7FFFFFFFu;
    const std::uint32_t p = as_bits(as_float(u[k]) / f);
    y[k] = a > kInf ? (u[k] | 0x00400000u) : p;
  }
}

// x * 0 for a block whose elements are multiplied by zero (§13.6 / §13.7): a finite x gives
// its signed zero, ±Inf the x86 default NaN (Inf * 0, as the reference models it), a NaN keeps
// its (quieted) payload.
NUMREF_QCLONES void scale_zero(const std::uint32_t* __restrict u, std::size_t n, std::uint32_t* __restrict y) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t a = u[k] & 0x7FFFFFFFu;
    y[k] = a > kInf ? (u[k] | 0x00400000u) : a == kInf ? 0xFFC00000u : (u[k] & 0x80000000u);
  }
}

// x / 0 for a block whose divisor is zero (§14.6 zero_divisor=keep): a non-zero x gives its signed
// Inf (Inf / 0 = Inf), ±0 the x86 default NaN (0 / 0, as the reference models it), a NaN keeps its
// (quieted) payload.
NUMREF_QCLONES void scale_inf(const std::uint32_t* __restrict u, std::size_t n, std::uint32_t* __restrict y) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t a = u[k] & 0x7FFFFFFFu;
    y[k] = a > kInf ? (u[k] | 0x00400000u) : a == 0 ? 0xFFC00000u : ((u[k] & 0x80000000u) | kInf);
  }
}

// bf16 codes widened to binary32: the code shifted up; a NaN quieted (its sign and payload kept).
NUMREF_QCLONES void widen_bf16(const std::uint16_t* __restrict c, std::size_t n, std::uint32_t* __restrict y) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t w = static_cast<std::uint32_t>(c[k]) << 16;
    y[k] = (w & 0x7FFFFFFFu) > kInf ? (w | 0x00400000u) : w;
  }
}

// Row blocks of bc elements, nblk of them (row-block partitions, issue 32): the maxima of |x| into
// am[J] (max with what is there) and the products x * f[J]; one call per row piece instead of one
// per block. The 32-element forms are the same loops with the width known.
// (the amax pass streams the source: the lines kAmaxPrefetch bytes ahead are requested into L2)
constexpr std::size_t kAmaxPrefetch = 4096;

NUMREF_QCLONES void max_blocks32(const std::uint32_t* __restrict u, std::size_t nblk, std::uint32_t nan_mask,
                                 std::uint32_t inf_mask, std::uint32_t* __restrict am) {
  for (std::size_t J = 0; J < nblk; ++J) {
    __builtin_prefetch(reinterpret_cast<const char*>(u + J * 32) + kAmaxPrefetch, 0, 1);
    __builtin_prefetch(reinterpret_cast<const char*>(u + J * 32) + kAmaxPrefetch + 64, 0, 1);
    std::uint32_t m = 0;
    for (std::size_t k = 0; k < 32; ++k) {
      std::uint32_t a = u[J * 32 + k] & 0x7FFFFFFFu;
      const std::uint32_t drop =
          (static_cast<std::uint32_t>(a > kInf) & nan_mask) | (static_cast<std::uint32_t>(a == kInf) & inf_mask);
      a &= drop - 1u;
      m = std::max(m, a);
    }
    am[J] = std::max(am[J], m);
  }
}

NUMREF_QCLONES void max_blocks(const std::uint32_t* __restrict u, std::size_t nblk, std::size_t bc,
                               std::uint32_t nan_mask, std::uint32_t inf_mask, std::uint32_t* __restrict am) {
  for (std::size_t J = 0; J < nblk; ++J) {
    for (std::size_t l = 0; l < bc * 4; l += 64)
      __builtin_prefetch(reinterpret_cast<const char*>(u + J * bc) + kAmaxPrefetch + l, 0, 1);
    std::uint32_t m = 0;
    for (std::size_t k = 0; k < bc; ++k) {
      std::uint32_t a = u[J * bc + k] & 0x7FFFFFFFu;
      const std::uint32_t drop =
          (static_cast<std::uint32_t>(a > kInf) & nan_mask) | (static_cast<std::uint32_t>(a == kInf) & inf_mask);
      a &= drop - 1u;
      m = std::max(m, a);
    }
    am[J] = std::max(am[J], m);
  }
}

NUMREF_QCLONES void mul_blocks32(const std::uint32_t* __restrict u, std::size_t nblk, const float* __restrict f,
                                 std::uint32_t* __restrict y) {
  for (std::size_t J = 0; J < nblk; ++J) {
    const float fj = f[J];
    for (std::size_t k = 0; k < 32; ++k) {
      const std::uint32_t v = u[J * 32 + k];
      const std::uint32_t p = as_bits(as_float(v) * fj);
      y[J * 32 + k] = (v & 0x7FFFFFFFu) > kInf ? (v | 0x00400000u) : p;
    }
  }
}

NUMREF_QCLONES void mul_blocks(const std::uint32_t* __restrict u, std::size_t nblk, std::size_t bc,
                               const float* __restrict f, std::uint32_t* __restrict y) {
  for (std::size_t J = 0; J < nblk; ++J) {
    const float fj = f[J];
    for (std::size_t k = 0; k < bc; ++k) {
      const std::uint32_t v = u[J * bc + k];
      const std::uint32_t p = as_bits(as_float(v) * fj);
      y[J * bc + k] = (v & 0x7FFFFFFFu) > kInf ? (v | 0x00400000u) : p;
    }
  }
}

// Block maximum of |x| over a row segment, NaN / Inf masked out as the policies say, as a
// binary32 code: W = std::uint32_t reads binary32 words; W = std::uint16_t the 16-bit words of a
// bf16 row (their magnitudes in the same order as their widenings w << 16).
template <class W>
NUMREF_QCLONES std::uint32_t seg_max(const W* __restrict u, std::size_t n, std::uint32_t nan_mask,
                                     std::uint32_t inf_mask) {
  constexpr int kShift = 32 - 8 * static_cast<int>(sizeof(W));
  constexpr std::uint32_t kInfW = kInf >> kShift, kMagW = 0x7FFFFFFFu >> kShift;
  constexpr std::size_t kStep = 1024 / sizeof(W);  // elements per prefetched kilobyte
  std::uint32_t m = 0;
  for (std::size_t k0 = 0; k0 < n; k0 += kStep) {
    const std::size_t e = std::min(n, k0 + kStep);
    for (std::size_t l = k0 * sizeof(W); l < e * sizeof(W); l += 64)
      __builtin_prefetch(reinterpret_cast<const char*>(u) + kAmaxPrefetch + l, 0, 1);
    for (std::size_t k = k0; k < e; ++k) {
      std::uint32_t a = u[k] & kMagW;
      const std::uint32_t drop =
          (static_cast<std::uint32_t>(a > kInfW) & nan_mask) | (static_cast<std::uint32_t>(a == kInfW) & inf_mask);
      a &= drop - 1u;  // drop ? 0 : a
      m = std::max(m, a);
    }
  }
  return m << kShift;
}

// The exact integer rounding of q (a binary64 that is the exact value or within 2^-44 of
// it, away from every boundary; see fast_quant.hpp) by mode, clamped to [lo, hi].
template <Round MODE>
NUMREF_QCLONES void int_round(const double* __restrict q, std::size_t n, double lo, double hi,
                              std::uint8_t* __restrict out) {
  for (std::size_t k = 0; k < n; ++k) {
    const double v = q[k];
    const double t = std::trunc(v);
    const double fr = v - t;  // exact
    const double af = std::fabs(fr);
    const double away = std::copysign(1.0, v);
    double r = t;
    if constexpr (MODE == Round::rne) {
      const bool odd = std::fmod(t, 2.0) != 0.0;
      r = (af > 0.5 || (af == 0.5 && odd)) ? t + away : t;
    } else if constexpr (MODE == Round::rna) {
      r = af >= 0.5 ? t + away : t;
    } else if constexpr (MODE == Round::rup) {
      r = fr > 0.0 ? t + 1.0 : t;
    } else if constexpr (MODE == Round::rdn) {
      r = fr < 0.0 ? t - 1.0 : t;
    }
    r = std::min(std::max(r, lo), hi);
    out[k] = static_cast<std::uint8_t>(static_cast<std::int8_t>(static_cast<int>(r)));
  }
}

using IntRoundFn = void (*)(const double*, std::size_t, double, double, std::uint8_t*);
IntRoundFn int_round_fn(Round m) {
  switch (m) {
    case Round::rne: return int_round<Round::rne>;
    case Round::rna: return int_round<Round::rna>;
    case Round::rup: return int_round<Round::rup>;
    case Round::rdn: return int_round<Round::rdn>;
    default: return int_round<Round::rtz>;
  }
}

// ---- the streaming kernel (issue 32): one pass per block, the source read once ------------------
//
// For 1-row blocks of a dense f32 or bf16 source whose element cast has byte lanes (rne, no daz /
// ftz) and whose rule the StreamScale below computes, a row piece of whole blocks is quantized
// block by block: the block's maximum of |x|, its scale and factor (single binary32 operations /
// bit arithmetic, as block_scale() for a finite non-zero amax), then RN32(x * f) squeezed and
// encoded by the byte-lane function of the casts (lane_fn.hpp), written as bytes — while the
// block is in registers / L1. A block whose maximum is 0, +Inf or NaN (a NaN / Inf element,
// whatever the amax policies), or whose scale the fast form does not give (an MX code 00, which
// §16.9 zero_code reads), is left to the general path: its index goes to `slow`.

// false: the general path computes this block (its stored scale and factor are not set).
[[gnu::always_inline]] inline bool stream_factor(const StreamScale& s, std::uint32_t a, float& f,
                                                 std::uint32_t& stored) {
  int e = 0;
  switch (s.mode) {
    case StreamScale::none: return false;
    case StreamScale::quotient:
    case StreamScale::recip:
    case StreamScale::pow2:
    case StreamScale::pow2_recip: {
      std::uint32_t q = amax_scale(a, s.qmax);
      if (s.mode == StreamScale::pow2 || s.mode == StreamScale::pow2_recip)
        q = q >= 0x00800000u ? (q & 0xFF800000u) : (q ? 1u << (31 - __builtin_clz(q)) : 0u);
      f = as_float(q);
      stored = s.mode == StreamScale::quotient || s.mode == StreamScale::pow2 ? q : as_bits(1.0f / f);
      return true;
    }
    case StreamScale::mx_rceil_f32_mul:
    case StreamScale::mx_rceil_f32_div: {
      const std::uint32_t d =
          s.mode == StreamScale::mx_rceil_f32_div ? as_bits(as_float(a) / s.qmax) : as_bits(as_float(a) * s.inv_qmax);
      if (d == 0) return false;  // code 00
      int Ed;
      std::uint32_t sd;
      normalise(d, Ed, sd);
      e = Ed + (sd != 0x800000u ? 1 : 0);
      break;
    }
    default: {
      int E;
      std::uint32_t sig;
      normalise(a, E, sig);
      e = E - s.emax;
      if (s.mode == StreamScale::mx_ceil) e += sig != 0x800000u ? 1 : 0;
      if (s.mode == StreamScale::mx_even) e += sig >= s.even_thr ? 1 : 0;
      if (s.mode == StreamScale::mx_rceil) e += sig > s.qsig ? 1 : 0;
      break;
    }
  }
  e = std::clamp(e, -127, 127);
  if (e == -127) return false;  // code 00: §16.9 zero_code decides its factor
  stored = static_cast<std::uint32_t>(e + 127);
  f = pow2f(-e);  // 2^(127 - code)
  return true;
}

template <class In>
[[gnu::always_inline]] inline std::uint32_t widened(In c) {
  if constexpr (sizeof(In) == 4)
    return c;
  else
    return static_cast<std::uint32_t>(c) << 16;
}

// nblk blocks of bc elements (BC: bc known at compile time, 0: runtime) from x; codes to out,
// stored scales and raw maxima (max of the magnitude bits, NaN above +Inf) per block; returns the
// number of blocks written to `slow` (block indices, ascending) for the general path.
// given (not null): the blocks' factors are given (the two-pass path, scales computed): a
// positive factor is applied as above, anything else (and a block with a NaN / Inf element) sends
// the block to `slow`; `scales` is not written.
template <class In, std::size_t BC>
[[gnu::always_inline]] inline std::size_t stream_impl(const In* __restrict x, std::size_t nblk, std::size_t bc_rt,
                                                      const StreamScale& s_in, const ByteLanes::Consts& c_in,
                                                      const float* __restrict given, std::uint8_t* __restrict out,
                                                      std::uint32_t* __restrict scales, std::uint32_t* __restrict am,
                                                      std::uint32_t* __restrict slow) {
  constexpr std::size_t kPart = 2048;      // lane words per narrowing pass (L1 scratch)
  constexpr std::size_t kPrefetch = 4096;  // bytes ahead (measured: docs/performance.md, issue 32)
  constexpr std::size_t kSub = BC ? BC : 256;
  const StreamScale s = s_in;  // local copies: the stores below cannot change them
  const ByteLanes::Consts c = c_in;
  const std::size_t bc = BC ? BC : bc_rt;
  alignas(64) std::uint16_t rw[BC ? BC : kPart];
  std::size_t ns = 0;
  for (std::size_t J = 0; J < nblk; ++J) {
    const In* xb = x + J * bc;
    // The hardware prefetchers alone leave the loads of each block waiting (the block's maximum
    // is needed before any of its codes): the source kPrefetch bytes ahead is requested into L2
    // while this block is encoded.
    std::uint32_t m = 0;
    for (std::size_t k0 = 0; k0 < bc; k0 += kSub) {  // (a wide block: the prefetches spread over it)
      const std::size_t n = BC ? BC : std::min(kSub, bc - k0);
      for (std::size_t l = 0; l < n * sizeof(In); l += 64)
        __builtin_prefetch(reinterpret_cast<const char*>(xb + k0) + kPrefetch + l, 0, 1);
      if constexpr (sizeof(In) == 2) {  // bf16: the maximum of the 16-bit magnitudes (the same order), widened
        std::uint16_t m16 = 0;
        for (std::size_t k = 0; k < n; ++k) m16 = std::max(m16, static_cast<std::uint16_t>(xb[k0 + k] & 0x7FFFu));
        m = std::max(m, widened(m16));
      } else {
        for (std::size_t k = 0; k < n; ++k) m = std::max(m, xb[k0 + k] & 0x7FFFFFFFu);
      }
    }
    am[J] = m;
    float f = 0;
    std::uint32_t st = 0;
    if (given ? !(m < kInf && given[J] > 0.0f) : (m >= kInf || m == 0 || !stream_factor(s, m, f, st))) {
      slow[ns++] = static_cast<std::uint32_t>(J);
      continue;
    }
    if (given)
      f = given[J];
    else
      scales[J] = st;
    std::uint8_t* ob = out + J * bc;
    // A power-of-two factor f = 2^fe (every MX rule, pow2, any rule whose factor is one), fe <= 100:
    // RN32(x * f) is x with its exponent raised by fe wherever it is a normal binary32 (exact; it
    // never overflows, |x| <= amax), so the lanes read x's own 16-bit word with the target's
    // bounds in the source's exponent (c.dk, c.ek) lowered by fe — no product, no widening. Where
    // x * f is below binary32's normal range (x * f < 2^-126), or x is subnormal (x * f < 2^-26
    // since fe <= 100), the element is a signed zero for every byte-lane target (half their
    // smallest subnormal is at least 2^-17), and so are the lanes' (their shift saturates).
    const std::uint32_t fb = as_bits(f);
    const int fe = static_cast<int>(fb >> 23) - 127;
    if ((fb & 0x7FFFFFu) == 0 && fb >= 0x00800000u && fe <= 100) {
      ByteLanes::Consts cf = c;
      cf.dk -= fe;
      cf.ek -= fe;
      for (std::size_t k0 = 0; k0 < bc; k0 += (BC ? BC : kPart)) {
        const std::size_t n = BC ? BC : std::min(kPart, bc - k0);
        for (std::size_t k = 0; k < n; ++k) {
          std::uint16_t w;
          if constexpr (sizeof(In) == 4)
            w = lane_fn::squeeze_f32(xb[k0 + k]);
          else
            w = xb[k0 + k];
          std::uint16_t fl = 0;
          rw[k] = lane_fn::lane<std::uint16_t, 7, 8, false>(w, cf, fl);
        }
        for (std::size_t k = 0; k < n; ++k) ob[k0 + k] = static_cast<std::uint8_t>(rw[k]);
      }
      continue;
    }
    for (std::size_t k0 = 0; k0 < bc; k0 += (BC ? BC : kPart)) {
      const std::size_t n = BC ? BC : std::min(kPart, bc - k0);
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t y = as_bits(as_float(widened(xb[k0 + k])) * f);  // finite x: no NaN lane
        std::uint16_t fl = 0;
        rw[k] = lane_fn::lane<std::uint16_t, 7, 8, false>(lane_fn::squeeze_f32(y), c, fl);
      }
      for (std::size_t k = 0; k < n; ++k) ob[k0 + k] = static_cast<std::uint8_t>(rw[k]);
    }
  }
  return ns;
}

using StreamFn = std::size_t (*)(const void*, std::size_t, std::size_t, const StreamScale&, const ByteLanes::Consts&,
                                 const float*, std::uint8_t*, std::uint32_t*, std::uint32_t*, std::uint32_t*);
#define NUMREF_STREAM_KERNEL(NAME, IN, BC)                                                               \
  NUMREF_QCLONES std::size_t NAME(const void* x, std::size_t nblk, std::size_t bc, const StreamScale& s, \
                                  const ByteLanes::Consts& c, const float* given, std::uint8_t* out,     \
                                  std::uint32_t* scales, std::uint32_t* am, std::uint32_t* slow) {       \
    return stream_impl<IN, BC>(static_cast<const IN*>(x), nblk, bc, s, c, given, out, scales, am, slow); \
  }
NUMREF_STREAM_KERNEL(stream_f32_16, std::uint32_t, 16)
NUMREF_STREAM_KERNEL(stream_f32_32, std::uint32_t, 32)
NUMREF_STREAM_KERNEL(stream_f32_n, std::uint32_t, 0)
NUMREF_STREAM_KERNEL(stream_bf16_16, std::uint16_t, 16)
NUMREF_STREAM_KERNEL(stream_bf16_32, std::uint16_t, 32)
NUMREF_STREAM_KERNEL(stream_bf16_n, std::uint16_t, 0)
#undef NUMREF_STREAM_KERNEL

StreamFn stream_fn(bool bf16, std::size_t bc) {
  if (bc == 16) return bf16 ? stream_bf16_16 : stream_f32_16;
  if (bc == 32) return bf16 ? stream_bf16_32 : stream_f32_32;
  return bf16 ? stream_bf16_n : stream_f32_n;
}

// §19.2 the table of a source's codes widened to binary32 (exact for numbers; a NaN keeps
// its sign and payload, quieted), built once per source format and shared.
std::shared_ptr<const std::vector<std::uint32_t>> widen_table(const Format& src) {
  static std::mutex mu;
  static std::map<FormatId, std::shared_ptr<const std::vector<std::uint32_t>>> tables;
  const std::lock_guard<std::mutex> lock(mu);
  auto& t = tables[src.id];
  if (!t) {
    const FastCast w(src, format(FormatId::f32), Policy{});
    std::vector<std::uint32_t> codes(std::size_t{1} << src.bits), out(codes.size());
    for (std::uint32_t c = 0; c < codes.size(); ++c) codes[c] = c;
    w.run(codes.data(), nullptr, out.data(), nullptr, codes.size());
    t = std::make_shared<const std::vector<std::uint32_t>>(std::move(out));
  }
  return t;
}

constexpr std::size_t kRowChunk = std::size_t{1} << 14;  // elements widened at a time (two-pass path)
constexpr std::size_t kSmallBlock = 256;  // block widths up to this run max_blocks / mul_blocks per row piece

}  // namespace

std::string FastQuant::unsupported(const QuantOp& op) {
  if (!op.src || !op.elem || !op.out) return "bad format";
  const ScaleKind kind = scale_kind(op.rule);
  // §19.8 the recipe knobs this engine implements (fast_quant.hpp); the others are declined by name.
  // d starts as every knob of the operation and loses the knob values implemented here, so a knob
  // or a knob value added later is declined until this engine implements it.
  {
    const RecipeKnobs& k = op.recipe;
    RecipeKnobs d = k;  // the declined knobs, numref's rule elsewhere
    const RecipeKnobs none;
    const bool mx_rceil_f32 = rule_info(op.rule).mx == MxExponent::rceil_f32;
    if (k.amax_floor == AmaxFloor::eps_1e4 ||
        (k.amax_floor == AmaxFloor::eps_1e12 &&
         (kind == ScaleKind::fp32_quotient || kind == ScaleKind::pow2 || kind == ScaleKind::pow2_recip)))
      d.amax_floor = none.amax_floor;
    if (k.scale_exp == ScaleExp::log2f) d.scale_exp = none.scale_exp;
    if (k.zero_code == ZeroCode::min_normal || k.zero_code == ZeroCode::one) d.zero_code = none.zero_code;
    if (k.inf_block == InfBlock::max_code || k.inf_block == InfBlock::zero_scale ||
        k.inf_block == InfBlock::max_code_zero || k.inf_block == InfBlock::one_scale ||
        (k.inf_block == InfBlock::exponent && !mx_rceil_f32))
      d.inf_block = none.inf_block;
    // §13.7 a poisoned block's own / first NaN: the rn32 application
    if (k.nan_block == NanBlock::inf_divisor || k.nan_block == NanBlock::max_code ||
        ((k.nan_block == NanBlock::first_nan || k.nan_block == NanBlock::own_nan) && !op.fused))
      d.nan_block = none.nan_block;
    if (k.elem_nan == ElemNan::half) d.elem_nan = none.elem_nan;
    if (k.mx_descale == MxDescale::divide) d.mx_descale = none.mx_descale;
    if (k.nan_scale == NanScale::all_ones_tensor) d.nan_scale = none.nan_scale;
    if (k.zero_sign == ZeroSign::plus && !op.fused) d.zero_sign = none.zero_sign;  // §19.10: rn32 only
    if (k.scale_round == ScaleRound::source) d.scale_round = none.scale_round;
    if (k.zero_divisor == ZeroDivisor::keep && !op.fused) d.zero_divisor = none.zero_divisor;  // §14.6: rn32 only
    if (const std::string r = recipe_changes(none, d); !r.empty())
      return "cpu-fast does not implement the recipe knobs " + r + " (spec §19.8)";
  }
  switch (kind) {  // the kinds of numref::kScaleRules this engine computes
    case ScaleKind::fp32_quotient:
    case ScaleKind::fp32_recip:
    case ScaleKind::fp32_dequant:
    case ScaleKind::pow2:
    case ScaleKind::pow2_recip:
    case ScaleKind::mx:
    case ScaleKind::gam:
    case ScaleKind::nvfp4: break;
  }
  if (op.src->bits > 32 || op.src->is_integer() || !op.src->is_signed) return "unsupported source";
  if (op.elem->bits > 8 || !op.elem->is_signed || !op.elem->has_zero) return "unsupported element";
  if (op.rows == 0 || op.cols == 0 || op.br == 0 || op.bc == 0 || op.gr == 0 || op.gc == 0) return "empty shape";
  const Round mode = effective_round(*op.elem, op.policy);
  if (op.fused) {
    if (!op.elem->is_integer()) return "cpu-fast applies fused scaling to integer elements only";
    if (mode == Round::sr) return "cpu-fast does not implement fused stochastic rounding";
    if (op.policy.daz) return "daz with fused";
  }
  const std::uint32_t q = op.q_max;
  if (q < 0x40800000u || q >= 0x7F800000u) return "q_max out of range";
  return {};
}

FastQuant::FastQuant(const QuantOp& op)
    : op_(op), to_elem_(format(FormatId::f32), *op.elem, op.policy), qmax_(as_float(op.q_max)) {
  nbr_ = (op.rows + op.br - 1) / op.br;
  nbc_ = (op.cols + op.bc - 1) / op.bc;
  ngr_ = (op.rows + op.gr - 1) / op.gr;
  ngc_ = (op.cols + op.gc - 1) / op.gc;
  const Format& f32 = format(FormatId::f32);
  dense_f32_ = op.src->bits == 32 && op.rs == static_cast<std::ptrdiff_t>(op.cols) && op.cs == 1;
  if (op.src->bits <= 16 && op.src->id != FormatId::bf16) widen_lut_ = widen_table(*op.src);
  // one pass: a block row that fits, or a long row of narrow 1-row blocks cut into pieces of whole blocks
  one_pass_ = !needs_tensor_state(scale_kind(op.rule)) &&
              (std::min(op.br, op.rows) * op.cols <= kOnePassElems || (op.br == 1 && op.bc <= kSmallBlock));
  const FastCast e(*op.elem, f32, op.wide);
  std::vector<std::uint32_t> codes(std::size_t{1} << op.elem->bits);
  for (std::uint32_t c = 0; c < codes.size(); ++c) codes[c] = c;
  elem_f32_.resize(codes.size());
  e.run(codes.data(), nullptr, elem_f32_.data(), nullptr, codes.size());
  if (op.out->bits > 8) to_out_.emplace(f32, *op.out, op.wide);
  normalise(op.q_max, emax_, qsig_);
  inv_qmax_ = 1.0f / qmax_;
  if (op.recipe.amax_floor == AmaxFloor::eps_1e4)
    floor_ = as_bits(1e-4f);  // RN32(1e-4): the literal, correctly rounded
  if (op.recipe.amax_floor == AmaxFloor::eps_1e12) {
    floor64_ = 1e-12;  // RN64(1e-12): the literal, correctly rounded
    floor_s_ = rn32_quotient(op.q_max, floor64_);
  }
  if (op.recipe.elem_nan == ElemNan::half && !op.elem->has_nan() && !op.elem->is_integer()) {
    const FastCast h(f32, *op.elem, Policy{});
    const std::uint32_t one_half = 0x3FC00000u;
    std::uint32_t c = 0;
    h.run(&one_half, nullptr, &c, nullptr, 1);
    half_ = c;
  }
  to_elem_.run(&kNaN, nullptr, &nan_code_, nullptr, 1);
  if (half_) nan_code_ = *half_;
  if (scale_kind(op.rule) == ScaleKind::nvfp4) {  // §18 the E4M3 block scales
    const Format& e4m3 = format(FormatId::f8e4m3fn);
    Policy sat;  // RNE, saturate finite (__NV_SATFINITE)
    sat.overflow = Overflow::saturate;
    to_e4m3_.emplace(f32, e4m3, sat);
    e4m3_f32_.resize(256);
    const FastCast d(e4m3, f32, Policy{});
    std::vector<std::uint32_t> c(256);
    for (std::uint32_t k = 0; k < 256; ++k) c[k] = k;
    d.run(c.data(), nullptr, e4m3_f32_.data(), nullptr, 256);
    e4m3_max_ = encode_max_finite(false, e4m3);
    e4m3_nan_ = e4m3.canonical_nan;
    // RN32(1 / RN32(448 q_max)), the reference's C once (§18.1)
    inv_c_ = 1.0f / as_float(nvfp4_global_constant(exact_f32(op.q_max)));
  }
  if (op.recipe.scale_round == ScaleRound::source && op.src->bits == 16) {  // §14.5 through the source format
    to_src_.emplace(f32, *op.src, Policy{});
    from_src_.emplace(*op.src, f32, Policy{});
  }
  // the streaming kernel: 1-row blocks of a dense f32 / bf16 source, rn32 through byte lanes, a rule
  // StreamScale computes, no amax floor, no §19.10 zero_sign=plus
  const bool dense_bf16 = op.src->id == FormatId::bf16 && op.rs == static_cast<std::ptrdiff_t>(op.cols) && op.cs == 1;
  dense_bf16_ = dense_bf16;
  apply_stream_ =
      (dense_f32_ || dense_bf16) && !op.fused && to_elem_.byte_lanes() && op.recipe.zero_sign != ZeroSign::plus;
  if (apply_stream_ && one_pass_ && std::min(op.br, op.rows) == 1 && floor_ == 0 && floor64_ == 0) {
    const bool log2f = op.recipe.scale_exp == ScaleExp::log2f;
    StreamScale& s = stream_;
    s.emax = emax_;
    s.qsig = qsig_;
    s.qmax = qmax_;
    s.inv_qmax = inv_qmax_;
    const int p = op.elem->precision();
    s.even_thr = p >= 24 ? 0xFFFFFFFFu : (1u << 24) - (1u << (23 - p));
    switch (scale_kind(op.rule)) {
      case ScaleKind::fp32_quotient: s.mode = StreamScale::quotient; break;
      case ScaleKind::fp32_recip: s.mode = StreamScale::recip; break;
      case ScaleKind::pow2: s.mode = log2f ? StreamScale::none : StreamScale::pow2; break;
      case ScaleKind::pow2_recip: s.mode = log2f ? StreamScale::none : StreamScale::pow2_recip; break;
      case ScaleKind::mx:
        switch (rule_info(op.rule).mx) {
          case MxExponent::floor: s.mode = log2f ? StreamScale::none : StreamScale::mx_floor; break;
          case MxExponent::ceil: s.mode = StreamScale::mx_ceil; break;
          case MxExponent::even: s.mode = StreamScale::mx_even; break;
          case MxExponent::rceil: s.mode = log2f ? StreamScale::none : StreamScale::mx_rceil; break;
          case MxExponent::rceil_f32:
            s.mode = op.recipe.mx_descale == MxDescale::divide ? StreamScale::mx_rceil_f32_div
                                                               : StreamScale::mx_rceil_f32_mul;
            break;
          case MxExponent::none: break;
        }
        break;
      default: break;  // amax-dequant (a divisor), gam, nvfp4: the general path
    }
  }
}

// §19.2 rows [i0, i1) widened to binary32 with sign and payload (dense f32 input is used in place).
const std::uint32_t* FastQuant::rows_of(const void* x, std::size_t i0, std::size_t i1,
                                        std::vector<std::uint32_t>& buf) const {
  const std::size_t C = op_.cols;
  if (dense_f32_) return static_cast<const std::uint32_t*>(x) + i0 * C;
  buf.resize((i1 - i0) * C);
  const std::size_t bytes = op_.src->bits <= 8 ? 1 : (op_.src->bits <= 16 ? 2 : 4);
  const auto* p = static_cast<const unsigned char*>(x);
  const std::uint32_t mask = op_.src->bits >= 32 ? 0xFFFFFFFFu : (1u << op_.src->bits) - 1u;
  const bool bf16 = op_.src->id == FormatId::bf16;
  for (std::size_t i = i0; i < i1; ++i) {
    std::uint32_t* y = buf.data() + (i - i0) * C;
    const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(i) * op_.rs;
    if (bf16 && op_.cs == 1) {
      std::uint16_t tmp[kChunk];
      for (std::size_t j0 = 0; j0 < C; j0 += kChunk) {
        const std::size_t m = std::min(kChunk, C - j0);
        std::memcpy(tmp, p + (row + static_cast<std::ptrdiff_t>(j0)) * 2, m * 2);
        widen_bf16(tmp, m, y + j0);
      }
      continue;
    }
    for (std::size_t j = 0; j < C; ++j) {
      const std::ptrdiff_t off = row + static_cast<std::ptrdiff_t>(j) * op_.cs;
      std::uint32_t c = 0;
      std::memcpy(&c, p + off * static_cast<std::ptrdiff_t>(bytes), bytes);
      if (bf16) {
        const std::uint32_t w = (c & 0xFFFFu) << 16;
        y[j] = (w & 0x7FFFFFFFu) > kInf ? (w | 0x00400000u) : w;
      } else {
        y[j] = widen_lut_ ? (*widen_lut_)[c & mask] : c;
      }
    }
  }
  return buf.data();
}

const std::uint32_t* FastQuant::cols_of(const void* x, std::size_t i, std::size_t cb, std::size_t ce,
                                        std::vector<std::uint32_t>& buf) const {
  if (dense_f32_) return static_cast<const std::uint32_t*>(x) + i * op_.cols + cb;
  buf.resize(ce - cb);
  const std::size_t bytes = op_.src->bits <= 8 ? 1 : (op_.src->bits <= 16 ? 2 : 4);
  const auto* p = static_cast<const unsigned char*>(x);
  const std::uint32_t mask = op_.src->bits >= 32 ? 0xFFFFFFFFu : (1u << op_.src->bits) - 1u;
  const bool bf16 = op_.src->id == FormatId::bf16;
  for (std::size_t j = cb; j < ce; ++j) {
    const std::ptrdiff_t off = static_cast<std::ptrdiff_t>(i) * op_.rs + static_cast<std::ptrdiff_t>(j) * op_.cs;
    std::uint32_t c = 0;
    std::memcpy(&c, p + off * static_cast<std::ptrdiff_t>(bytes), bytes);
    if (bf16) {
      const std::uint32_t w = (c & 0xFFFFu) << 16;
      buf[j - cb] = (w & 0x7FFFFFFFu) > kInf ? (w | 0x00400000u) : w;
    } else {
      buf[j - cb] = widen_lut_ ? (*widen_lut_)[c & mask] : c;
    }
  }
  return buf.data();
}

void FastQuant::amax_cols(const std::uint32_t* u, std::size_t cb, std::size_t ce, std::uint32_t* am) const {
  const std::uint32_t nan_mask = op_.nan_ignore ? 1u : 0u, inf_mask = op_.inf_ignore ? 1u : 0u;
  std::size_t J0 = cb / op_.bc;
  if (op_.bc <= kSmallBlock && cb % op_.bc == 0) {  // whole narrow blocks: one vectorised call
    const std::size_t full = (ce - cb) / op_.bc;
    if (op_.bc == 32)
      max_blocks32(u, full, nan_mask, inf_mask, am + J0);
    else
      max_blocks(u, full, op_.bc, nan_mask, inf_mask, am + J0);
    J0 += full;
  }
  for (std::size_t J = J0; J * op_.bc < ce; ++J) {
    const std::size_t c0 = std::max(J * op_.bc, cb), c1 = std::min((J + 1) * op_.bc, ce);
    am[J] = std::max(am[J], seg_max(u + (c0 - cb), c1 - c0, nan_mask, inf_mask));
  }
}

std::size_t FastQuant::col_unit() const { return op_.bc <= kSmallBlock ? (kChunk / op_.bc) * op_.bc : kChunk; }

std::size_t FastQuant::col_parts(unsigned threads) const {
  const std::size_t U = col_unit(), nu = (op_.cols + U - 1) / U;
  const std::size_t per_unit = U * op_.rows;
  return parts(nu, threads, (kGrain + per_unit - 1) / per_unit);
}

template <class F>
void FastQuant::by_rows_or_cols(unsigned threads, F&& fn) const {
  const std::size_t R = op_.rows, C = op_.cols;
  const std::size_t pr = parts(R, threads, (kGrain + C - 1) / C);
  const std::size_t pc = pr > 1 ? 1 : col_parts(threads);
  if (pc > 1) {
    const std::size_t U = col_unit(), nu = (C + U - 1) / U;
    run_parts(pc, nu, [&](std::size_t, std::size_t u0, std::size_t u1) { fn(0, R, u0 * U, std::min(u1 * U, C)); });
    return;
  }
  run_parts(pr, R, [&](std::size_t, std::size_t i0, std::size_t i1) { fn(i0, i1, std::size_t{0}, C); });
}

// §13 max of the magnitude bits (NaN above +Inf above every finite value) into the amaxes of
// the blocks of rows [i0, i1).
void FastQuant::amax_rows(const std::uint32_t* f, std::size_t i0, std::size_t i1, std::size_t I0,
                          std::uint32_t* amax) const {
  const std::uint32_t nan_mask = op_.nan_ignore ? 1u : 0u, inf_mask = op_.inf_ignore ? 1u : 0u;
  const std::size_t full = op_.bc <= kSmallBlock ? op_.cols / op_.bc : 0;  // blocks of a row by max_blocks
  for (std::size_t i = i0; i < i1; ++i) {
    const std::uint32_t* row = f + (i - i0) * op_.cols;
    std::uint32_t* am = amax + (i / op_.br - I0) * nbc_;
    if (full) {
      if (op_.bc == 32)
        max_blocks32(row, full, nan_mask, inf_mask, am);
      else
        max_blocks(row, full, op_.bc, nan_mask, inf_mask, am);
    }
    for (std::size_t J = full; J < nbc_; ++J) {
      const std::size_t c0 = J * op_.bc, c1 = std::min(c0 + op_.bc, op_.cols);
      am[J] = std::max(am[J], seg_max(row + c0, c1 - c0, nan_mask, inf_mask));
    }
  }
}

// §13 the amax of every block (a NaN maximum reported as the canonical NaN): by block rows, or
// by row ranges with per-range partial amaxes max-reduced when there are too few block rows.
void FastQuant::amaxes(const void* x, std::uint32_t* amax, unsigned threads) const {
  const std::size_t R = op_.rows, C = op_.cols, nb = blocks();
  std::fill(amax, amax + nb, 0u);
  const std::size_t rows_per_chunk = std::max<std::size_t>(1, kRowChunk / C);
  auto pass = [&](std::size_t i0, std::size_t i1, std::uint32_t* am) {
    if (dense_bf16_) {  // bf16: the 16-bit words themselves, no widened copy
      const std::uint32_t nan_mask = op_.nan_ignore ? 1u : 0u, inf_mask = op_.inf_ignore ? 1u : 0u;
      for (std::size_t i = i0; i < i1; ++i) {
        const std::uint16_t* row = static_cast<const std::uint16_t*>(x) + i * C;
        std::uint32_t* a = am + (i / op_.br) * nbc_;
        for (std::size_t J = 0; J < nbc_; ++J) {
          const std::size_t c0 = J * op_.bc, c1 = std::min(c0 + op_.bc, C);
          a[J] = std::max(a[J], seg_max(row + c0, c1 - c0, nan_mask, inf_mask));
        }
      }
      return;
    }
    std::vector<std::uint32_t> buf;
    for (std::size_t i = i0; i < i1; i += rows_per_chunk) {
      const std::size_t e = std::min(i1, i + rows_per_chunk);
      amax_rows(rows_of(x, i, e, buf), i, e, 0, am);
    }
  };
  const std::size_t br_elems = std::min(op_.br, R) * C;
  const std::size_t by_block_rows = parts(nbr_, threads, (kGrain + br_elems - 1) / br_elems);
  if (by_block_rows > 1) {  // each range owns whole block rows: no two write one amax
    run_parts(by_block_rows, nbr_,
              [&](std::size_t, std::size_t I0, std::size_t I1) { pass(I0 * op_.br, std::min(I1 * op_.br, R), amax); });
  } else {
    const std::size_t p = parts(R, threads, (kGrain + C - 1) / C);
    const std::size_t pc = p > 1 ? 1 : col_parts(threads);
    if (pc > 1) {  // few rows: column ranges, per-range partial amaxes
      const std::size_t U = col_unit(), nu = (C + U - 1) / U;
      std::vector<std::vector<std::uint32_t>> part(pc, std::vector<std::uint32_t>(nb, 0u));
      run_parts(pc, nu, [&](std::size_t k, std::size_t u0, std::size_t u1) {
        const std::size_t cb = u0 * U, ce = std::min(u1 * U, C);
        std::vector<std::uint32_t> buf;
        for (std::size_t i = 0; i < R; ++i)
          amax_cols(cols_of(x, i, cb, ce, buf), cb, ce, part[k].data() + (i / op_.br) * nbc_);
      });
      for (const auto& v : part)
        for (std::size_t b = 0; b < nb; ++b) amax[b] = std::max(amax[b], v[b]);
    } else if (p <= 1) {
      pass(0, R, amax);
    } else {
      std::vector<std::vector<std::uint32_t>> part(p, std::vector<std::uint32_t>(nb, 0u));
      run_parts(p, R, [&](std::size_t k, std::size_t i0, std::size_t i1) { pass(i0, i1, part[k].data()); });
      for (const auto& v : part)
        for (std::size_t b = 0; b < nb; ++b) amax[b] = std::max(amax[b], v[b]);
    }
  }
  for (std::size_t b = 0; b < nb; ++b)
    if (amax[b] > kInf) amax[b] = kNaN;
}

// §14.3 the stored divisor D of amax-dequant with §14.5 scale_round (16-bit sources: through the
// source format and back) and §14.6 zero_divisor (keep: D = 0); `a` finite.
std::uint32_t FastQuant::dequant_stored(std::uint32_t a) const {
  const RecipeKnobs& rk = op_.recipe;
  if (rk.scale_round == ScaleRound::f32 && rk.zero_divisor == ZeroDivisor::raise) return dequant_scale(a, qmax_);
  std::uint32_t d = a == 0 ? 0u : as_bits(as_float(a) / qmax_);
  if (d != 0 && to_src_) {
    std::uint32_t n = 0;
    to_src_->run(&d, nullptr, &n, nullptr, 1);
    from_src_->run(&n, nullptr, &d, nullptr, 1);
  }
  if (d == 0 && rk.zero_divisor != ZeroDivisor::keep) d = a == 0 ? kOne : 1u;
  return d;
}

// §14–§16, §13.5–§13.7, §16.9–§16.10 the stored scale and the quantize factor of one block of a
// kind other than gam; `a` is the block's amax (a NaN amax canonical).
FastQuant::BlockFactor FastQuant::block_scale(std::uint32_t a, std::uint32_t& stored) const {
  const ScaleKind kind = scale_kind(op_.rule);
  const RecipeKnobs& rk = op_.recipe;
  BlockFactor F;
  // §16 the quantize factor of an E8M0 code: 2^(127 - code); §16.9 code 00 by zero_code
  auto mx_factor = [&](std::uint32_t code) {
    if (code == 0x00u && rk.zero_code == ZeroCode::min_normal) return pow2f(126);
    if (code == 0x00u && rk.zero_code == ZeroCode::one) return 1.0f;
    return pow2f(127 - static_cast<int>(code));
  };
  // §13.6 inf_block=one_scale: a +Inf amax takes the scale of amax 0 (elements times 1.0)
  if (a == kInf && rk.inf_block == InfBlock::one_scale) a = 0;
  // §13.7 nan_block=inf_divisor: code FF, elements x / +Inf (dequantize reads FF as NaN)
  if (a > kInf && rk.nan_block == NanBlock::inf_divisor) {
    stored = 0xFFu;
    F.zero = F.kept = true;
    return F;
  }
  // §13.6 a +Inf amax (or, nan_block=max_code, a NaN amax) that the recipe does not poison
  if ((a == kInf && rk.inf_block != InfBlock::poison) || (a > kInf && rk.nan_block == NanBlock::max_code)) {
    if (rk.inf_block == InfBlock::zero_scale || rk.inf_block == InfBlock::max_code_zero) {
      // S = q_max / Inf = +0 (amax-dequant: D = Inf / q_max = +Inf, x / Inf), or E8M0 FE
      stored = rk.inf_block == InfBlock::zero_scale ? (kind == ScaleKind::fp32_dequant ? kInf : 0u) : 0xFEu;
      F.zero = true;
      F.kept = rk.inf_block == InfBlock::zero_scale;
      return F;
    }
    std::uint32_t code = 0xFEu;
    if (rk.inf_block != InfBlock::max_code && a == kInf) {  // exponent: the amax read as 2^128 (§13.6)
      const int e = std::min(128 - emax_, 127);  // 2^128 is a power of two: every exponent rule gives E - emax
      code = static_cast<std::uint32_t>(e + 127);
    }
    stored = code;
    F.f = mx_factor(code);
    return F;
  }
  if (a >= kInf) {  // §13.2 a NaN / Inf block: the NaN of the scale format (§19.4)
    stored = scale_format(op_.rule).id == FormatId::f32 ? kNaN : 0xFFu;
    // §13.8 nan_scale=all_ones_tensor: the tensor partition's NaN is 0xFFFFFFFF, and the elements
    // of a poisoned block convert the stored NaN under either value of the knob
    if (rk.nan_scale == NanScale::all_ones_tensor && a > kInf && stored == kNaN && op_.tensor_partition)
      stored = 0xFFFFFFFFu;
    if (rk.nan_scale != NanScale::canonical && stored != 0xFFu) F.nan = stored;
    F.poisoned = true;
    return F;
  }
  // §13.5 the amax floor: a finite amax below it, zero included, is raised to it (1e-4: a binary32
  // value; 1e-12: a binary64 value, whose quotient scale floor_s_ is computed once)
  const bool floored =
      floor64_ != 0 ? (a == 0 || static_cast<double>(as_float(a)) < floor64_) : (floor_ != 0 && a < floor_);
  const std::uint32_t av = floored && floor64_ == 0 ? floor_ : a;
  switch (kind) {
    case ScaleKind::fp32_quotient:
    case ScaleKind::fp32_recip:
    case ScaleKind::pow2:
    case ScaleKind::pow2_recip: {
      std::uint32_t s = floored && floor64_ != 0 ? floor_s_ : amax_scale(av, qmax_);
      const bool p2 = kind == ScaleKind::pow2 || kind == ScaleKind::pow2_recip;
      if (p2 && rk.scale_exp == ScaleExp::log2f)
        s = pow2_log2f_of(s);  // §15.2 as log2f would
      else if (p2)
        s = s >= 0x00800000u ? (s & 0xFF800000u) : (s ? 1u << (31 - __builtin_clz(s)) : 0u);
      F.f = as_float(s);
      stored = kind == ScaleKind::pow2 || kind == ScaleKind::fp32_quotient ? s : as_bits(1.0f / F.f);
      break;
    }
    case ScaleKind::fp32_dequant: {
      stored = dequant_stored(a);
      if (stored == 0) {  // §14.6 zero_divisor=keep: x / 0
        F.inf = true;
        break;
      }
      F.f = as_float(stored);
      F.divide = true;
      break;
    }
    case ScaleKind::gam:
    case ScaleKind::nvfp4: break;  // scales_of
    case ScaleKind::mx: {          // §16 MX: an E8M0 exponent from the bits of amax
      if (av == 0) {
        stored = 0x00u;
        F.f = mx_factor(0);
        break;
      }
      int E;
      std::uint32_t sig;
      normalise(av, E, sig);
      int e = 0;
      switch (rule_info(op_.rule).mx) {
        case MxExponent::floor:  // §16.11 scale_exp=log2f: floor(log2f_cr(amax)) (av != 0 here; a zero
          // amax, read as 2^-126 there, gives -126 - emax < -127 (q_max >= 4): code 00 as above)
          e = (rk.scale_exp == ScaleExp::log2f ? static_cast<int>(floor_log2f(av)) : E) - emax_;
          break;
        case MxExponent::ceil: e = E + (sig != 0x800000u ? 1 : 0) - emax_; break;
        case MxExponent::even: {
          const int p = op_.elem->precision();
          const std::uint32_t thr = p >= 24 ? 0xFFFFFFFFu : (1u << 24) - (1u << (23 - p));
          e = E + (sig >= thr ? 1 : 0) - emax_;
          break;
        }
        case MxExponent::rceil:
          if (rk.scale_exp == ScaleExp::log2f) {  // §16.8 ceil(log2f_cr(RN32(amax / q_max)))
            const std::uint32_t d = as_bits(as_float(av) / qmax_);
            e = d == 0 ? -127 : static_cast<int>(std::clamp<long>(ceil_log2f(d), -127, 127));
          } else {
            e = E - emax_ + (sig > qsig_ ? 1 : 0);
          }
          break;
        case MxExponent::rceil_f32: {  // E8M0 round-up of RN32(amax * RN32(1 / q_max)), §16.10 RN32(amax / q_max)
          const std::uint32_t d =
              rk.mx_descale == MxDescale::divide ? as_bits(as_float(av) / qmax_) : as_bits(as_float(av) * inv_qmax_);
          if (d == 0) {
            e = -127;
            break;
          }
          int Ed;
          std::uint32_t sd;
          normalise(d, Ed, sd);
          e = Ed + (sd != 0x800000u ? 1 : 0);
          break;
        }
        case MxExponent::none: break;  // not a row of kind mx (kScaleRules is checked)
      }
      e = std::clamp(e, -127, 127);
      stored = static_cast<std::uint32_t>(e + 127);
      F.f = mx_factor(stored);  // x / 2^e = x * 2^-e exactly
      break;
    }
  }
  return F;
}

// §18 NVFP4: s_enc = RN32sat(C / t_amax) by the reference's own function, once per tensor; per
// block the E4M3 code of RN32(amax_b * RN32(s_enc * RN32(1 / q_max))) (satfinite, +Inf to the
// largest finite) and the factor RN32sat(1 / RN32(d_b * RN32(1 / s_enc))) (FLT_MAX for a zero
// denominator): single binary32 operations, correctly rounded (§18.2, §18.3).
void FastQuant::nvfp4_scales(std::uint32_t t, const std::uint32_t* amax, std::uint32_t* scales, BlockFactor* fac,
                             std::size_t n) const {
  const std::uint32_t s_enc = nvfp4_tensor_scale(Amax{t}, exact_f32(op_.q_max));
  const bool tensor_ok = s_enc < kInf;  // a finite positive s_enc (t_amax finite)
  const float k = tensor_ok ? as_float(s_enc) * inv_qmax_ : 0.0f;
  const float s_dec = tensor_ok ? 1.0f / as_float(s_enc) : 0.0f;
  // Chunks of blocks: the E4M3 codes of the finite products in one batched conversion (into
  // `scales`); kPoison marks a NaN amax or tensor scale (a product's sign bit is cleared: no
  // finite product has that code).
  constexpr std::uint32_t kPoison = 0xFFFFFFFFu;
  constexpr std::size_t kN = 1024;
  std::uint32_t prod[kN];
  for (std::size_t b0 = 0; b0 < n; b0 += kN) {
    const std::size_t m = std::min(kN, n - b0);
    for (std::size_t b = 0; b < m; ++b) {
      const std::uint32_t a = amax[b0 + b];
      prod[b] = tensor_ok && a < kInf ? as_bits(as_float(a) * k) & 0x7FFFFFFFu : kPoison;
    }
    to_e4m3_->run(prod, nullptr, scales + b0, nullptr, m);
    for (std::size_t b = 0; b < m; ++b) {
      BlockFactor& F = fac[b0 + b];
      F = BlockFactor{};
      std::uint32_t& sc = scales[b0 + b];
      if (prod[b] == kPoison) {  // §13.3 the E4M3 NaN
        sc = e4m3_nan_;
        F.poisoned = true;
        continue;
      }
      if (prod[b] >= kInf) sc = e4m3_max_;  // +Inf: the largest finite code
      const float den = as_float(e4m3_f32_[sc & 0xFFu]) * s_dec;
      const float f = den == 0.0f ? std::numeric_limits<float>::max() : 1.0f / den;
      F.f = f > std::numeric_limits<float>::max() ? std::numeric_limits<float>::max() : f;
    }
  }
}

// §14–§17, §20.1 the stored scale and the quantize factor of every block.
void FastQuant::scales_of(const std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm,
                          std::vector<BlockFactor>& fac, std::uint32_t* tensor_amax) const {
  const std::size_t nb = blocks();
  fac.assign(nb, BlockFactor{});
  std::uint32_t t = 0;  // §13.4 the tensor amax: the integer maximum of the block amaxes
  for (std::size_t b = 0; b < nb; ++b) t = std::max(t, amax[b]);
  if (tensor_amax) *tensor_amax = t;
  if (scale_kind(op_.rule) == ScaleKind::nvfp4) {
    nvfp4_scales(t, amax, scales, fac.data(), nb);
    return;
  }
  if (scale_kind(op_.rule) != ScaleKind::gam) {
    for (std::size_t b = 0; b < nb; ++b) fac[b] = block_scale(amax[b], scales[b]);
    return;
  }
  // GAM: the group mantissas first (§17.1)
  std::vector<std::uint32_t> gmant(groups()), gamax(groups(), 0u);
  for (std::size_t I = 0; I < nbr_; ++I)
    for (std::size_t J = 0; J < nbc_; ++J) {
      const std::size_t g = (I * op_.br / op_.gr) * ngc_ + (J * op_.bc / op_.gc);
      gamax[g] = std::max(gamax[g], amax[I * nbc_ + J]);
    }
  for (std::size_t g = 0; g < groups(); ++g) {
    gmant[g] = gamax[g] >= kInf ? 0u : (amax_scale(gamax[g], qmax_) & 0x7FFFFFu);
    if (gm) gm[g] = gmant[g];
  }
  for (std::size_t I = 0; I < nbr_; ++I)
    for (std::size_t J = 0; J < nbc_; ++J) {
      const std::size_t b = I * nbc_ + J;
      const std::size_t g = (I * op_.br / op_.gr) * ngc_ + (J * op_.bc / op_.gc);
      BlockFactor& F = fac[b];
      if (gamax[g] >= kInf || amax[b] >= kInf) {  // §17.1 a poisoned group
        scales[b] = 0xFFu;
        F.poisoned = true;
        continue;
      }
      const std::uint32_t sb = amax_scale(amax[b], qmax_);  // §17.2
      const int Eb = static_cast<int>(sb >> 23) - 127;      // s_b is normal (§17.3)
      const int e = std::clamp(gmant[g] <= (sb & 0x7FFFFFu) ? Eb : Eb - 1, -127, 127);
      scales[b] = static_cast<std::uint32_t>(e + 127);
      F.f = as_float((scales[b] << 23) | gmant[g]);  // G_b = (1.m_g) 2^e_b, a normal binary32
    }
}

void FastQuant::half_nans(const std::uint32_t* y, std::uint32_t* o, std::size_t n) const {
  if (!half_) return;
  const std::uint32_t sign = op_.elem->sign_bit();
  for (std::size_t k = 0; k < n; ++k)
    if ((y[k] & 0x7FFFFFFFu) > kInf) o[k] = *half_ | ((y[k] & 0x80000000u) ? sign : 0u);
}

// §13.3 the binary32 values the elements of a poisoned block convert: the canonical NaN (§13.8 the
// stored one, F.nan); §13.7 own_nan: a NaN element its own, quieted; first_nan: a NaN element its
// own, any other F.nan (first_nan_of: the block's first NaN), quieted and positive.
void FastQuant::poisoned_nans(const std::uint32_t* u, std::size_t n, const BlockFactor& F, std::uint32_t* y) const {
  const NanBlock nb = op_.recipe.nan_block;
  if (nb != NanBlock::own_nan && nb != NanBlock::first_nan) {
    std::fill(y, y + n, F.nan);
    return;
  }
  const std::uint32_t sign_mask = nb == NanBlock::first_nan ? 0x7FFFFFFFu : 0xFFFFFFFFu;
  for (std::size_t k = 0; k < n; ++k) y[k] = (u[k] & 0x7FFFFFFFu) > kInf ? ((u[k] | 0x00400000u) & sign_mask) : F.nan;
}

// §13.7 nan_block=first_nan: the first NaN of block (I, J) in element order (row by row),
// quieted and positive; the canonical NaN when it has none (a +-Inf block).
std::uint32_t FastQuant::first_nan_of(const void* x, std::size_t I, std::size_t J) const {
  std::vector<std::uint32_t> buf;
  const std::size_t c0 = J * op_.bc, c1 = std::min(c0 + op_.bc, op_.cols);
  for (std::size_t i = I * op_.br; i < std::min((I + 1) * op_.br, op_.rows); ++i) {
    const std::uint32_t* u = cols_of(x, i, c0, c1, buf);
    for (std::size_t k = 0; k < c1 - c0; ++k)
      if ((u[k] & 0x7FFFFFFFu) > kInf) return (u[k] | 0x00400000u) & 0x7FFFFFFFu;
  }
  return kNaN;
}

// §19.2 the element codes of rows [i0, i1): RN32(x op f) converted by the policy (rn32), or the
// exact product / quotient rounded once to an integer (fused, integer elements).
void FastQuant::codes_rows(const std::uint32_t* f, std::size_t i0, std::size_t i1, const std::uint32_t* r,
                           const BlockFactor* fac, std::size_t I0, std::uint8_t* codes, std::size_t cb,
                           std::size_t ce) const {
  const std::size_t C = op_.cols;
  ce = std::min(ce, C);
  const std::size_t ld = ce - cb;  // f's row stride
  std::uint32_t y[kChunk], o[kChunk];
  if (op_.fused) {
    const Round mode = effective_round(*op_.elem, op_.policy);
    const IntRoundFn rnd = int_round_fn(mode);
    const bool sym = op_.policy.int_range == IntRange::symmetric;
    const double lo = sym ? -127.0 : -128.0, hi = 127.0;
    double q[kChunk];
    for (std::size_t i = i0; i < i1; ++i) {
      const std::size_t I = i / op_.br - I0;
      const std::uint32_t* u = f + (i - i0) * ld;  // u[j - cb]: column j (j in [cb, ce))
      std::uint8_t* out = codes + i * C;
      for (std::size_t J = cb / op_.bc; J * op_.bc < ce; ++J) {
        const BlockFactor& F = fac[I * nbc_ + J];
        const std::size_t c0 = std::max(J * op_.bc, cb), c1 = std::min((J + 1) * op_.bc, ce);
        if (F.poisoned) {
          std::uint32_t c = nan_code_;
          if (F.nan != kNaN) to_elem_.run(&F.nan, nullptr, &c, nullptr, 1);  // §13.8 the stored NaN
          std::fill(out + c0, out + c1, static_cast<std::uint8_t>(c));
          continue;
        }
        const double fd = F.zero ? 0.0 : F.f;
        for (std::size_t j0 = c0; j0 < c1; j0 += kChunk) {
          const std::size_t m = std::min(kChunk, c1 - j0);
          std::uint32_t special = 0;
          for (std::size_t k = 0; k < m; ++k) {
            const double xv = as_float(u[j0 - cb + k]);
            q[k] = F.divide ? xv / fd : xv * fd;
            special |= static_cast<std::uint32_t>((u[j0 - cb + k] & 0x7FFFFFFFu) >= kInf);
          }
          rnd(q, m, lo, hi, out + j0);
          if (special)  // NaN / Inf elements: converted as themselves by the policy (§19.2)
            for (std::size_t k = 0; k < m; ++k) {
              const std::uint32_t v = u[j0 - cb + k];
              if ((v & 0x7FFFFFFFu) < kInf) continue;
              std::uint32_t w = (v & 0x7FFFFFFFu) > kInf ? (v | 0x00400000u) : v;
              if (F.zero && (v & 0x7FFFFFFFu) == kInf) w = 0xFFC00000u;  // Inf * 0
              std::uint32_t c;
              to_elem_.run(&w, nullptr, &c, nullptr, 1);
              out[j0 + k] = static_cast<std::uint8_t>(c);
            }
        }
      }
    }
    return;
  }
  // rn32: a row piece at a time (whole blocks of at most kChunk elements when they are narrow):
  // the scaled binary32 values into y, converted by the element lanes (the byte lanes straight
  // into the codes when the policy has them and r is not read), narrowed.
  const ByteLanes* bytes = r ? nullptr : to_elem_.byte_lanes();
  const std::size_t bc = op_.bc;
  const std::size_t piece = bc <= kSmallBlock ? (kChunk / bc) * bc : kChunk;
  float fv[kChunk];  // the factors of a piece's blocks
  const bool zero_plus = op_.recipe.zero_sign == ZeroSign::plus;
  auto convert = [&](std::size_t base, std::size_t m) {
    if (zero_plus)  // §19.10 a scaled value that is ±0 in binary32 gives +0 (NaN lanes are not zeros)
      for (std::size_t k = 0; k < m; ++k) y[k] = (y[k] & 0x7FFFFFFFu) == 0 ? 0u : y[k];
    if (bytes) {
      bytes->run(y, codes + base, nullptr, m);
      if (half_) {
        const std::uint32_t sign = op_.elem->sign_bit();
        for (std::size_t k = 0; k < m; ++k)
          if ((y[k] & 0x7FFFFFFFu) > kInf)
            codes[base + k] = static_cast<std::uint8_t>(*half_ | ((y[k] >> 31) ? sign : 0u));
      }
      return;
    }
    to_elem_.run(y, r ? r + base : nullptr, o, nullptr, m);
    half_nans(y, o, m);
    for (std::size_t k = 0; k < m; ++k) codes[base + k] = static_cast<std::uint8_t>(o[k]);
  };
  for (std::size_t i = i0; i < i1; ++i) {
    const std::size_t I = i / op_.br - I0;
    const std::uint32_t* u = f + (i - i0) * ld;  // u[j - cb]: column j (j in [cb, ce))
    const BlockFactor* frow = fac + I * nbc_;
    for (std::size_t c = cb; c < ce; c += piece) {
      const std::size_t e = std::min(ce, c + piece);
      // whole plain blocks (a multiplying factor): one call for the piece
      std::size_t done = c;
      if (bc <= kSmallBlock) {
        const std::size_t J0 = c / bc, nfull = (e - c) / bc;  // c is a multiple of bc
        bool plain = nfull > 0;
        for (std::size_t J = J0; plain && J < J0 + nfull; ++J) {
          const BlockFactor& F = frow[J];
          plain = !F.poisoned && !F.zero && !F.inf && !F.divide;
          fv[J - J0] = F.f;
        }
        if (plain) {
          if (bc == 32)
            mul_blocks32(u + (c - cb), nfull, fv, y);
          else
            mul_blocks(u + (c - cb), nfull, bc, fv, y);
          done = c + nfull * bc;
        }
      }
      while (done < e) {  // block by block
        const std::size_t J = done / bc;
        const BlockFactor& F = frow[J];
        const std::size_t m = std::min(e, (J + 1) * bc) - done;
        std::uint32_t* yy = y + (done - c);
        if (F.poisoned)
          poisoned_nans(u + (done - cb), m, F, yy);  // §13.3 / §13.7 / §13.8
        else if (F.zero)
          scale_zero(u + (done - cb), m, yy);
        else if (F.inf)
          scale_inf(u + (done - cb), m, yy);
        else if (F.divide)
          scale_div(u + (done - cb), m, F.f, yy);
        else
          scale_mul(u + (done - cb), m, F.f, yy);
        done += m;
      }
      convert(i * C + c, e - c);
    }
  }
}

void FastQuant::scale(const void* x, std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm, unsigned threads,
                      std::uint32_t* tensor_amax) const {
  amaxes(x, amax, threads);
  std::vector<BlockFactor> fac;
  scales_of(amax, scales, gm, fac, tensor_amax);
}

// Pieces of whole blocks of one row (about kChunk elements; one block when it is wider), on
// `threads` threads by ranges of pieces; per piece the streaming kernel, then its slow blocks
// (and a last partial block) by the general path. fixed null: the kernel computes each block's
// scale (1-row blocks, streams()); the general path the masked amax, block_scale(), codes_rows().
// fixed: the blocks' factors (scales_of()'s): the kernel applies the plain ones, codes_rows() the
// others.
void FastQuant::quantize_stream(const void* x, const BlockFactor* fixed, std::uint8_t* codes, std::uint32_t* scales,
                                unsigned threads, std::uint8_t* kept, const std::uint32_t* tensor_amax) const {
  const std::size_t R = op_.rows, C = op_.cols, bc = op_.bc;
  const bool bf16 = !dense_f32_;
  const std::size_t esz = bf16 ? 2 : 4;
  const StreamFn fn = stream_fn(bf16, bc);
  const ByteLanes::Consts& lc = to_elem_.byte_lanes()->consts();
  auto plain = [](const BlockFactor& F) { return F.poisoned || F.zero || F.inf || F.divide ? -1.0f : F.f; };
  const bool lazy = tensor_amax != nullptr;  // the factors of each piece computed here (NVFP4)
  std::vector<float> given(fixed ? blocks() : 0);
  for (std::size_t b = 0; b < given.size(); ++b) given[b] = plain(fixed[b]);
  const std::size_t W = bc >= kChunk ? bc : (kChunk / bc) * bc;
  const std::size_t npc = (C + W - 1) / W, units = R * npc;
  const std::size_t p = parts(units, threads, (kGrain + W - 1) / W);
  run_parts(p, units, [&](std::size_t, std::size_t u0, std::size_t u1) {
    std::vector<std::uint32_t> am(nbc_), slow(nbc_), buf;
    std::vector<BlockFactor> fac(fixed ? 0 : nbc_);
    std::vector<float> lazy_given(lazy ? nbc_ : 0);
    for (std::size_t u = u0; u < u1; ++u) {
      const std::size_t i = u / npc, cb = (u % npc) * W, ce = std::min(C, cb + W), I = i / op_.br;
      const std::size_t J0 = cb / bc, nfull = (ce - cb) / bc;
      if (lazy) {  // this piece's blocks (the last one partial): scales in place of their amaxes, factors
        const std::size_t nj = (ce - cb + bc - 1) / bc;
        nvfp4_scales(*tensor_amax, scales + i * nbc_ + J0, scales + i * nbc_ + J0, fac.data() + J0, nj);
        for (std::size_t J = J0; J < J0 + nj; ++J) {
          if (fac[J].poisoned && fake_reads_input()) fac[J].nan = first_nan_of(x, i, J);
          if (kept) kept[i * nbc_ + J] = marks(fac[J]);
          lazy_given[J] = plain(fac[J]);
        }
      }
      const bool given_factors = fixed != nullptr || lazy;
      const float* g = fixed ? given.data() + I * nbc_ + J0 : lazy ? lazy_given.data() + J0 : nullptr;
      const auto* xp = static_cast<const unsigned char*>(x) + (i * C + cb) * esz;
      const std::size_t ns = fn(xp, nfull, bc, stream_, lc, g, codes + i * C + cb,
                                given_factors ? am.data() + J0 : scales + i * nbc_ + J0, am.data() + J0, slow.data());
      if (kept && !given_factors) std::fill(kept + i * nbc_ + J0, kept + i * nbc_ + J0 + nfull, std::uint8_t{0});
      auto general = [&](std::size_t J) {
        const std::size_t c0 = J * bc, c1 = std::min(c0 + bc, C);
        const std::uint32_t* f = cols_of(x, i, c0, c1, buf);
        if (fixed) {
          codes_rows(f, i, i + 1, nullptr, fixed, 0, codes, c0, c1);
          return;
        }
        if (lazy) {  // fac holds row i's factors: block row i read as block row 0
          codes_rows(f, i, i + 1, nullptr, fac.data(), i, codes, c0, c1);
          return;
        }
        am[J] = 0;
        amax_cols(f, c0, c1, am.data());
        fac[J] = block_scale(am[J] > kInf ? kNaN : am[J], scales[i * nbc_ + J]);
        if (fac[J].poisoned && fake_reads_input()) fac[J].nan = first_nan_of(x, i, J);
        if (kept) kept[i * nbc_ + J] = marks(fac[J]);
        codes_rows(f, i, i + 1, nullptr, fac.data(), i, codes, c0, c1);
      };
      for (std::size_t k = 0; k < ns; ++k) general(J0 + slow[k]);
      if (nfull * bc < ce - cb) general(J0 + nfull);  // the last, partial block of the row
    }
  });
}

void FastQuant::quantize(const void* x, const std::uint32_t* r, std::uint8_t* codes, std::uint32_t* scales,
                         std::uint32_t* gm, unsigned threads, std::uint8_t* kept, std::uint32_t* tensor_amax) const {
  const std::size_t R = op_.rows, C = op_.cols;
  if (streams() && r == nullptr) {
    quantize_stream(x, nullptr, codes, scales, threads, kept);
    return;
  }
  if (one_pass_) {  // block row by block row: amax, scales and codes while the rows are in cache
    const std::size_t br = std::min(op_.br, R);
    if (br * C > kOnePassElems) {  // 1-row blocks of a long row: pieces of W columns (whole blocks), in order
      const std::size_t W = col_unit() * 8, npc = (C + W - 1) / W, units = nbr_ * npc;
      const std::size_t p = parts(units, threads, (kGrain + W - 1) / W);
      run_parts(p, units, [&](std::size_t, std::size_t u0, std::size_t u1) {
        std::vector<std::uint32_t> buf, am(nbc_);
        std::vector<BlockFactor> fac(nbc_);
        for (std::size_t u = u0; u < u1; ++u) {
          const std::size_t i = u / npc, cb = (u % npc) * W, ce = std::min(C, cb + W);
          const std::uint32_t* f = cols_of(x, i, cb, ce, buf);
          const std::size_t J0 = cb / op_.bc, J1 = (ce + op_.bc - 1) / op_.bc;
          std::fill(am.begin() + static_cast<std::ptrdiff_t>(J0), am.begin() + static_cast<std::ptrdiff_t>(J1), 0u);
          amax_cols(f, cb, ce, am.data());
          for (std::size_t J = J0; J < J1; ++J) {
            fac[J] = block_scale(am[J] > kInf ? kNaN : am[J], scales[i * nbc_ + J]);
            if (fac[J].poisoned && fake_reads_input()) fac[J].nan = first_nan_of(x, i, J);
            if (kept) kept[i * nbc_ + J] = marks(fac[J]);
          }
          codes_rows(f, i, i + 1, r, fac.data(), i, codes, cb, ce);
        }
      });
      return;
    }
    const std::size_t p = parts(nbr_, threads, (kGrain + br * C - 1) / (br * C));
    run_parts(p, nbr_, [&](std::size_t, std::size_t I0, std::size_t I1) {
      std::vector<std::uint32_t> buf, am(nbc_);
      std::vector<BlockFactor> fac(nbc_);
      for (std::size_t I = I0; I < I1; ++I) {
        const std::size_t i0 = I * op_.br, i1 = std::min(i0 + op_.br, R);
        const std::uint32_t* f = rows_of(x, i0, i1, buf);
        std::fill(am.begin(), am.end(), 0u);
        amax_rows(f, i0, i1, I, am.data());
        for (std::size_t J = 0; J < nbc_; ++J) {
          fac[J] = block_scale(am[J] > kInf ? kNaN : am[J], scales[I * nbc_ + J]);
          if (fac[J].poisoned && fake_reads_input()) fac[J].nan = first_nan_of(x, I, J);
          if (kept) kept[I * nbc_ + J] = marks(fac[J]);
        }
        codes_rows(f, i0, i1, r, fac.data(), I, codes);
      }
    });
    return;
  }
  if (apply_stream_ && r == nullptr && op_.br == 1 && scale_kind(op_.rule) == ScaleKind::nvfp4) {
    // §18 NVFP4 in 1-row blocks: the block amaxes into `scales`, the tensor amax, then each piece's
    // scales and factors next to its codes (no per-block arrays: they cost a page fault per 4 KiB)
    amaxes(x, scales, threads);
    std::uint32_t t = 0;  // §13.4 the integer maximum of the block amaxes
    for (std::size_t b = 0; b < blocks(); ++b) t = std::max(t, scales[b]);
    if (tensor_amax) *tensor_amax = t;
    quantize_stream(x, nullptr, codes, scales, threads, kept, &t);
    return;
  }
  std::vector<std::uint32_t> amax(blocks());
  amaxes(x, amax.data(), threads);
  std::vector<BlockFactor> fac;
  std::vector<std::uint32_t> gmb(gm ? 0 : groups());
  scales_of(amax.data(), scales, gm ? gm : gmb.data(), fac, tensor_amax);
  if (fake_reads_input())
    for (std::size_t b = 0; b < blocks(); ++b)
      if (fac[b].poisoned) fac[b].nan = first_nan_of(x, b / nbc_, b % nbc_);
  if (kept)
    for (std::size_t b = 0; b < blocks(); ++b) kept[b] = marks(fac[b]);
  if (apply_stream_ && r == nullptr) {  // the codes by the streaming kernel, the factors given
    quantize_stream(x, fac.data(), codes, scales, threads, kept);
    return;
  }
  const std::size_t rows_per_chunk = std::max<std::size_t>(1, kRowChunk / C);
  by_rows_or_cols(threads, [&](std::size_t i0, std::size_t i1, std::size_t cb, std::size_t ce) {
    std::vector<std::uint32_t> buf;
    if (cb != 0 || ce != C) {  // a column range of every row
      for (std::size_t i = i0; i < i1; ++i)
        codes_rows(cols_of(x, i, cb, ce, buf), i, i + 1, r, fac.data(), 0, codes, cb, ce);
      return;
    }
    for (std::size_t i = i0; i < i1; i += rows_per_chunk) {
      const std::size_t e = std::min(i1, i + rows_per_chunk);
      codes_rows(rows_of(x, i, e, buf), i, e, r, fac.data(), 0, codes);
    }
  });
}

// §19.5 per element of a block by its factor: poisoned — nan; a NaN x — nan; ±Inf — inf (nan when
// multiplied by zero, §13.6 / §13.7); ±0 — none (nan when divided by zero, §14.6); a finite
// non-zero x — flushed when multiplied by zero or when its code is a zero, inf or saturated when
// divided by zero (the element's code of ±Inf is an Inf or not), else saturated when the element
// conversion of RN32(x op f) raised overflow (§6.1).
bool FastQuant::counts(const void* x, const std::uint32_t* r, const std::uint32_t* amax, const std::uint8_t* codes,
                       std::uint64_t* counts) const {
  if (op_.fused) return false;
  const std::size_t C = op_.cols, nb = blocks();
  std::vector<BlockFactor> fac;
  std::vector<std::uint32_t> sc(nb), gmv(groups());
  scales_of(amax, sc.data(), gmv.data(), fac);
  std::fill(counts, counts + 4 * nb, std::uint64_t{0});
  const Format& e = *op_.elem;
  const std::uint32_t mag = e.mag_mask();
  std::vector<std::uint32_t> buf;
  std::uint32_t y[kChunk], o[kChunk];
  std::uint8_t fl[kChunk];
  for (std::size_t i = 0; i < op_.rows; ++i)
    for (std::size_t J = 0; J < nbc_; ++J) {
      const std::size_t b = (i / op_.br) * nbc_ + J, c0 = J * op_.bc, c1 = std::min(c0 + op_.bc, C);
      const BlockFactor& F = fac[b];
      std::uint64_t* k = counts + 4 * b;
      if (F.poisoned) {
        k[2] += c1 - c0;
        continue;
      }
      const std::uint32_t* u = cols_of(x, i, c0, c1, buf);
      for (std::size_t j0 = c0; j0 < c1; j0 += kChunk) {
        const std::size_t m = std::min(kChunk, c1 - j0);
        const std::uint32_t* v = u + (j0 - c0);
        const std::uint32_t* rr = r ? r + i * C + j0 : nullptr;
        if (F.inf) {  // the element's codes of ±Inf (x / 0 of a finite non-zero x)
          for (std::size_t t = 0; t < m; ++t) y[t] = (v[t] & 0x80000000u) | kInf;
        } else if (F.divide) {
          scale_div(v, m, F.f, y);
        } else if (!F.zero) {
          scale_mul(v, m, F.f, y);
        }
        if (!F.zero) to_elem_.run(y, rr, o, fl, m);
        for (std::size_t t = 0; t < m; ++t) {
          const std::uint32_t a = v[t] & 0x7FFFFFFFu;
          if (a > kInf) {
            ++k[2];
          } else if (a == kInf) {
            ++k[F.zero ? 2 : 3];
          } else if (a == 0) {
            if (F.inf) ++k[2];
          } else if (F.zero) {
            ++k[1];
          } else if (F.inf) {
            ++k[e.is_inf_magnitude(o[t] & mag) ? 3 : 0];
          } else {
            const std::uint8_t c = codes[i * C + j0 + t];
            if ((fl[t] & kOverflow) || (e.is_integer() && (fl[t] & kInvalid))) ++k[0];
            if (e.is_integer() ? c == 0 : (c & mag) == 0) ++k[1];
          }
        }
      }
    }
  return true;
}

QuantOp quant_op_of(const TensorView& x, const QuantizeSpec& spec, const Quantizer& qz) {
  const std::size_t rows = x.rows(), cols = x.cols();
  const BlockGrid grid(rows, cols, spec.partition), ggrid(rows, cols, spec.group);
  QuantOp op;
  op.src = &x.format();
  op.elem = spec.element;
  op.out = &format(FormatId::f32);
  op.rule = spec.rule;
  op.rows = rows;
  op.cols = cols;
  op.rs = x.row_stride();
  op.cs = x.col_stride();
  op.br = grid.block_rows();
  op.bc = grid.block_cols();
  op.gr = ggrid.block_rows();
  op.gc = ggrid.block_cols();
  op.nan_ignore = spec.amax.nan == AmaxNan::ignore;
  op.inf_ignore = spec.amax.inf == AmaxInf::ignore;
  op.fused = qz.apply() == ScaleApply::fused;
  op.reciprocal = spec.dequant == DequantOp::reciprocal;
  op.policy = qz.spec().policy;
  op.wide = spec.wide;
  op.recipe = spec.recipe;  // §19.8 cpu-fast declines the knobs it does not implement, by name
  op.tensor_partition = spec.partition == Partition::tensor();
  op.q_max = rn32(qz.q_max());
  return op;
}

// §19.3 the dequantized values of rows [i0, i1), each block's factor from its stored metadata alone.
void FastQuant::dequant_rows(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm,
                             const std::uint8_t* kept, std::size_t i0, std::size_t i1, std::uint32_t* out,
                             std::size_t cb, std::size_t ce, std::uint32_t tensor_amax) const {
  const std::size_t C = op_.cols;
  ce = std::min(ce, C);
  const ScaleKind kind = scale_kind(op_.rule);
  const bool zero_poisons = kind == ScaleKind::fp32_quotient || kind == ScaleKind::pow2;  // §13.6 S = 0
  const std::uint32_t* lut = elem_f32_.data();
  const std::uint32_t mask = static_cast<std::uint32_t>(elem_f32_.size() - 1);
  struct Fac {
    float f;
    bool divide, poisoned;
  };
  std::vector<Fac> fac(nbc_);
  std::size_t have = static_cast<std::size_t>(-1);
  for (std::size_t i = i0; i < i1; ++i) {
    const std::size_t I = i / op_.br;
    if (I != have) {  // the factors of block row I
      have = I;
      for (std::size_t J = 0; J < nbc_; ++J) {
        const std::uint32_t s = scales[I * nbc_ + J];
        // the scale's value, by which a multiplying scale (the row's dequant_multiplier) divides
        bool poisoned, divide = dequant_is_multiplier(op_.rule);
        float fv = 1.0f;
        if (kind == ScaleKind::nvfp4) {  // §18.4 RN32(RN32(d_b * t_amax) * RN32(1 / C)); NaN for a NaN d_b or t_amax
          const std::uint32_t d = e4m3_f32_[s & 0xFFu];
          poisoned = tensor_amax >= kInf || (d & 0x7FFFFFFFu) > kInf;
          if (!poisoned) fv = as_float(as_bits(as_float(d) * as_float(tensor_amax))) * inv_c_;
        } else if (kind == ScaleKind::mx || kind == ScaleKind::gam) {
          poisoned = s == 0xFFu;
          if (!poisoned && kind == ScaleKind::gam) {
            const std::size_t g = (I * op_.br / op_.gr) * ngc_ + (J * op_.bc / op_.gc);
            fv = as_float((s << 23) | (gm[g] & 0x7FFFFFu));
          } else if (!poisoned) {
            fv = pow2f(static_cast<int>(s) - 127);
          }
        } else {
          poisoned = (s & 0x7FFFFFFFu) >= kInf || (zero_poisons && (s & 0x7FFFFFFFu) == 0);
          fv = as_float(s);
        }
        if (divide && op_.reciprocal) {  // v * RN32(1 / S)
          fv = 1.0f / fv;
          divide = false;
        }
        fac[J] = kept && (kept[I * nbc_ + J] & kKept) ? Fac{1.0f, false, false} : Fac{fv, divide, poisoned};
      }
    }
    std::uint32_t* y = out + i * C;
    const std::uint8_t* cd = codes + i * C;
    for (std::size_t J = cb / op_.bc; J * op_.bc < ce; ++J) {
      const Fac& F = fac[J];
      const std::size_t c0 = std::max(J * op_.bc, cb), c1 = std::min((J + 1) * op_.bc, ce);
      if (F.poisoned) {
        std::fill(y + c0, y + c1, kNaN);
        continue;
      }
      for (std::size_t j = c0; j < c1; ++j) {
        const std::uint32_t v = lut[cd[j] & mask];
        const std::uint32_t p = F.divide ? as_bits(as_float(v) / F.f) : as_bits(as_float(v) * F.f);
        // ±Inf and NaN codes stay (a factor >= 0), ±0 stays ±0 even for the +Inf factor of §18.4 (§19.3)
        y[j] = (v & 0x7FFFFFFFu) >= kInf || (v & 0x7FFFFFFFu) == 0 ? v : p;
      }
    }
  }
}

// §17.3 a GAM block code 00 is no binary32 block scale: dequantize refuses it (err names it).
bool FastQuant::gam_scales_valid(const std::uint32_t* scales, std::string& err) const {
  if (scale_kind(op_.rule) != ScaleKind::gam) return true;
  for (std::size_t b = 0; b < blocks(); ++b)
    if (scales[b] == 0) {
      err = "GAM block code 00 is not a binary32 block scale (§17.3)";
      return false;
    }
  return true;
}

bool FastQuant::dequantize(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm,
                           std::uint32_t* out, std::string& err, unsigned threads, std::uint32_t tensor_amax) const {
  if (!gam_scales_valid(scales, err)) return false;
  by_rows_or_cols(threads, [&](std::size_t i0, std::size_t i1, std::size_t cb, std::size_t ce) {
    dequant_rows(codes, scales, gm, nullptr, i0, i1, out, cb, ce, tensor_amax);
  });
  return true;
}

bool FastQuant::fake_from_codes(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm,
                                const std::uint8_t* kept, std::uint32_t* out, std::string& err, unsigned threads,
                                std::uint32_t tensor_amax) const {
  if (!gam_scales_valid(scales, err)) return false;
  // §19.6 the block's own dequantize factor (kept blocks: 1), as fake-quant applies it
  by_rows_or_cols(threads, [&](std::size_t i0, std::size_t i1, std::size_t cb, std::size_t ce) {
    dequant_rows(codes, scales, gm, kept, i0, i1, out, cb, ce, tensor_amax);
  });
  // §19.6 the dequantized binary32 values converted to op.out by the wide policy, in place
  parallel_ranges(op_.rows * op_.cols, threads, kGrain, [&](std::size_t lo, std::size_t hi) {
    std::uint32_t d[kChunk];
    for (std::size_t b = lo; b < hi; b += kChunk) {
      const std::size_t m = std::min(kChunk, hi - b);
      std::memcpy(d, out + b, m * 4);
      to_out_->run(d, nullptr, out + b, nullptr, m);
    }
  });
  return true;
}

void FastQuant::fake_quant(const void* x, const std::uint32_t* r, std::uint32_t* out, unsigned threads) const {
  const std::size_t n = op_.rows * op_.cols;
  std::vector<std::uint8_t> codes(n);
  std::vector<std::uint32_t> scales(blocks()), gm(groups());
  std::vector<std::uint8_t> kept(has_kept() ? blocks() : 0);
  std::uint8_t* k = kept.empty() ? nullptr : kept.data();
  std::uint32_t t = 0;
  quantize(x, r, codes.data(), scales.data(), gm.data(), threads, k, &t);
  std::string err;
  (void)fake_from_codes(codes.data(), scales.data(), gm.data(), k, out, err, threads, t);  // never GAM 00
  if (!fake_reads_input()) return;
  // §13.7 nan_block=first_nan: a poisoned block's fake-quant outputs are its NaNs (poisoned_nans),
  // converted to op.out by the wide policy, not dequantized
  std::vector<std::uint32_t> buf, y;
  for (std::size_t b = 0; b < blocks(); ++b) {
    if (!(kept[b] & kPoisoned)) continue;
    const std::size_t I = b / nbc_, c0 = (b % nbc_) * op_.bc, c1 = std::min(c0 + op_.bc, op_.cols);
    BlockFactor F;
    F.nan = first_nan_of(x, I, b % nbc_);
    y.resize(c1 - c0);
    for (std::size_t i = I * op_.br; i < std::min((I + 1) * op_.br, op_.rows); ++i) {
      poisoned_nans(cols_of(x, i, c0, c1, buf), c1 - c0, F, y.data());
      to_out_->run(y.data(), nullptr, out + i * op_.cols + c0, nullptr, c1 - c0);
    }
  }
}

}  // namespace numref::cpu_fast
