// numref CUDA kernels — the exact, order-independent error sum and its decisions.  spec §22 – §24, §A.8
//
// §22.1 defines the sum of relative errors as the integer S = Σ e · 2^149 (e non-negative finite
// binary32: e = M · 2^(pos - 149) with M < 2^24 and pos = max(field, 1) - 1 in [0, 253]).
// The kernels hold S in a *carry-save* form that integer atomics can update in any order:
//
//   S = Σ_i c_i · 2^(24 i),  i = 0 … 11   (12 unsigned 64-bit counters; 288 bits >= 277)
//
// Every update adds to a counter a value below 2^29 that is a piece of an exact term, so the
// counters only ever sum integers: whatever the order or grouping of the atomicAdds, the final
// counters — and the S they represent — are the same (§22.2: "a kernel may keep any partial
// sums as long as the final S is this integer"). Within a thread, terms whose position falls in
// a 41-bit *window* (pos in [96, 136], i.e. e in [2^-30, 2^11): every relative error of a
// bf16 or f32 element that is neither exact nor tiny) are added into a 128-bit integer W
// (W · 2^96 is their exact sum) in two instructions; W is split into six 24-bit pieces when the
// thread flushes. Terms outside the window are split into two 24-bit pieces at once.
//
// Bounds (the device API refuses tensors of more than 2^38 elements): a counter receives pieces
// below 2^24 from at most 2 · N element terms plus one per flush (<= N), at most 3 · 2^38 · 2^24
// < 2^64 in total, so no counter wraps; W holds up to 2^64 terms below 2^64.
//
// normalize() turns the counters into the 320-bit S of numref::ExactSum (five 64-bit limbs);
// mean_below() and mean_f32() are §23's decision and mean on that S, in integers. All of this
// is host/device code: the kernels finish on the device. The host tests (cuda/tests/
// test_cuda_mor.cpp) compare normalize() with numref::ExactSum (CudaExactSum) and, through the
// host run's MoR sums, decisions and means, mean_below() and mean_f32() with the reference's
// (CudaTensorMor, CudaSubtensorMor).
#pragma once

#include <cstdint>

#include "numref_arith/config.cuh"
#include "numref_arith/f32.cuh"
#include "numref_arith/intmath.cuh"

namespace numref_cuda {

inline constexpr int kSumDigits = 12;  // carry-save counters, 24 bits apart
inline constexpr int kDigitBits = 24;
inline constexpr int kWindowBase = 96;       // the window's lowest position (= 4 digits)
inline constexpr int kWindowSpan = 41;       // positions 96 … 136: M << (pos - 96) < 2^64
inline constexpr int kWindowFirstDigit = 4;  // kWindowBase / kDigitBits
inline constexpr int kWindowDigits = 6;      // ceil(128 / 24)
inline constexpr std::uint32_t kDigitMask = (1u << kDigitBits) - 1u;

// §22.1 The term of a non-negative finite binary32 code e: e · 2^149 = m · 2^pos.
NUMREF_HD NUMREF_FORCEINLINE void error_term(std::uint32_t e, std::uint32_t& m, int& pos) {
  const std::uint32_t field = e >> 23, frac = e & 0x7FFFFFu;
  m = field != 0u ? (frac | 0x800000u) : frac;
  pos = field != 0u ? static_cast<int>(field) - 1 : 0;
}

// §22.1 A term outside the window as two 24-bit pieces: m · 2^pos = lo · 2^(24 d) + hi · 2^(24 (d + 1)).
NUMREF_HD NUMREF_FORCEINLINE void term_pieces(std::uint32_t m, int pos, int& d, std::uint32_t& lo, std::uint32_t& hi) {
  d = pos / kDigitBits;
  const std::uint64_t v = static_cast<std::uint64_t>(m) << (pos - d * kDigitBits);  // < 2^47
  lo = static_cast<std::uint32_t>(v) & kDigitMask;
  hi = static_cast<std::uint32_t>(v >> kDigitBits);
}

// §22.1 The per-thread window: W · 2^96 = the exact sum of the window terms added.
struct Window {
  std::uint64_t lo = 0, hi = 0;
  // Adds m · 2^pos if pos is in the window; returns false (nothing added) otherwise.
  NUMREF_HD NUMREF_FORCEINLINE bool add(std::uint32_t m, int pos) {
    const unsigned s = static_cast<unsigned>(pos - kWindowBase);
    if (s >= static_cast<unsigned>(kWindowSpan)) return false;
    const std::uint64_t v = static_cast<std::uint64_t>(m) << s;
    lo += v;
    hi += lo < v ? 1u : 0u;
    return true;
  }
  NUMREF_HD NUMREF_FORCEINLINE void merge(const Window& o) {
    lo += o.lo;
    hi += o.hi + (lo < o.lo ? 1u : 0u);
  }
  // Piece i (0 … 5) of W: bits [24 i, 24 i + 24); counter kWindowFirstDigit + i.
  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t piece(int i) const {
    const int b = kDigitBits * i;
    std::uint64_t v;
    if (b >= 64)
      v = hi >> (b - 64);
    else if (b + kDigitBits <= 64)
      v = lo >> b;
    else
      v = (lo >> b) | (hi << (64 - b));
    return static_cast<std::uint32_t>(v) & kDigitMask;
  }
  NUMREF_HD bool empty() const { return lo == 0u && hi == 0u; }
};

// §22.3 The device state of one ErrorSum: the carry-save counters and the counts.
struct ErrorSumState {
  std::uint64_t digit[kSumDigits];
  std::uint64_t n, zeros, nonfinite_input, nonfinite_quant;
};
// The counts of one flush (a thread's or a unit's share).
struct ErrorCounts {
  std::uint32_t n = 0, zeros = 0, nonfinite_input = 0, nonfinite_quant = 0;
};

// §22.3 An ErrorSum with S in five 64-bit limbs (numref::ExactSum's value).
struct ErrorSumValue {
  std::uint64_t s[5];
  std::uint64_t n, zeros, nonfinite_input, nonfinite_quant;
  NUMREF_HD bool finite() const { return nonfinite_input == 0u && nonfinite_quant == 0u; }
  NUMREF_HD bool sum_is_zero() const { return (s[0] | s[1] | s[2] | s[3] | s[4]) == 0u; }
};

namespace detail {
NUMREF_HD NUMREF_FORCEINLINE void add_at(std::uint64_t* limb, int nl, int w, std::uint64_t v) {
  for (int i = w; i < nl && v != 0u; ++i) {
    limb[i] += v;
    v = limb[i] < v ? 1u : 0u;
  }
}
}  // namespace detail

// §22.1 S = Σ c_i 2^(24 i) in five 64-bit limbs (S < 2^320 for every reachable state).
NUMREF_HD inline ErrorSumValue normalize(const ErrorSumState& st) {
  std::uint64_t limb[6] = {0, 0, 0, 0, 0, 0};
  for (int i = 0; i < kSumDigits; ++i) {
    const int off = kDigitBits * i, w = off / 64, b = off % 64;
    const std::uint64_t c = st.digit[i];
    detail::add_at(limb, 6, w, c << b);
    if (b != 0) detail::add_at(limb, 6, w + 1, c >> (64 - b));
  }
  ErrorSumValue v;
  for (int i = 0; i < 5; ++i) v.s[i] = limb[i];
  v.n = st.n;
  v.zeros = st.zeros;
  v.nonfinite_input = st.nonfinite_input;
  v.nonfinite_quant = st.nonfinite_quant;
  return v;
}

namespace detail {
// Little-endian 32-bit limbs of a product a (na limbs) · b (nb limbs) into out (na + nb limbs).
NUMREF_HD inline void mul_limbs(const std::uint32_t* a, int na, const std::uint32_t* b, int nb, std::uint32_t* out) {
  for (int i = 0; i < na + nb; ++i) out[i] = 0u;
  for (int i = 0; i < na; ++i) {
    std::uint64_t carry = 0;
    for (int j = 0; j < nb; ++j) {
      const std::uint64_t t = static_cast<std::uint64_t>(a[i]) * b[j] + out[i + j] + carry;
      out[i + j] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    out[i + nb] = static_cast<std::uint32_t>(carry);
  }
}
NUMREF_HD inline bool bit_of(const std::uint64_t* s, int i) { return ((s[i / 64] >> (i % 64)) & 1u) != 0u; }
}  // namespace detail

// §23.2 Eq. 2: mean < num / den decided exactly as S · den < num · n · 2^149; for n = 0 the mean
// is 0 (0 < t); false for a non-finite sum.
NUMREF_HD inline bool mean_below(const ErrorSumValue& v, std::uint64_t num, std::uint64_t den) {
  if (!v.finite()) return false;
  if (v.n == 0u) return num > 0u;
  constexpr int kL = 14;  // 448 bits: S · den < 2^384, num · n · 2^149 < 2^277
  std::uint32_t s32[10], d32[2] = {static_cast<std::uint32_t>(den), static_cast<std::uint32_t>(den >> 32)};
  for (int i = 0; i < 5; ++i) {
    s32[2 * i] = static_cast<std::uint32_t>(v.s[i]);
    s32[2 * i + 1] = static_cast<std::uint32_t>(v.s[i] >> 32);
  }
  std::uint32_t lhs[kL] = {}, rhs[kL] = {}, prod[4];
  detail::mul_limbs(s32, 10, d32, 2, lhs);
  const std::uint32_t a32[2] = {static_cast<std::uint32_t>(num), static_cast<std::uint32_t>(num >> 32)};
  const std::uint32_t n32[2] = {static_cast<std::uint32_t>(v.n), static_cast<std::uint32_t>(v.n >> 32)};
  detail::mul_limbs(a32, 2, n32, 2, prod);
  // rhs = prod · 2^149 = prod · 2^(4·32 + 21)
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t w = static_cast<std::uint64_t>(prod[i]) << 21;
    rhs[4 + i] |= static_cast<std::uint32_t>(w);
    rhs[5 + i] |= static_cast<std::uint32_t>(w >> 32);
  }
  for (int i = kL - 1; i >= 0; --i)
    if (lhs[i] != rhs[i]) return lhs[i] < rhs[i];
  return false;
}

// §23.1 RN32(S · 2^-149 / n): the exact quotient rounded once (RNE, gradual underflow); 0 for
// n = 0; the canonical NaN for a non-finite sum.
NUMREF_HD inline std::uint32_t mean_f32(const ErrorSumValue& v) {
  if (!v.finite()) return kF32NaN;
  if (v.n == 0u) return 0u;
  // Q = floor(S / n), R = S mod n, bit by bit (R < n < 2^64; the shifted-out bit is kept).
  std::uint64_t q[5] = {0, 0, 0, 0, 0}, rem = 0;
  for (int i = 319; i >= 0; --i) {
    const bool top = (rem >> 63) != 0u;
    rem = (rem << 1) | (detail::bit_of(v.s, i) ? 1u : 0u);
    if (top || rem >= v.n) {
      rem -= v.n;
      q[i / 64] |= std::uint64_t{1} << (i % 64);
    }
  }
  int len = 0;
  for (int i = 4; i >= 0 && len == 0; --i)
    if (q[i] != 0u) len = 64 * i + bitlen64(q[i]);
  const std::uint64_t rest = v.n - rem;       // the fraction rem / n vs 1/2: rem <=> n - rem
  if (len == 0) return rem > rest ? 1u : 0u;  // below 2^-149: 0 or the smallest subnormal (a tie -> 0)
  const int shift = len > 24 ? len - 24 : 0;  // quantum 2^(max(E - 23, -149)) in units of 2^-149
  std::uint32_t n = 0;
  for (int b = 0; b < 24 && shift + b < 320; ++b)
    if (detail::bit_of(q, shift + b)) n |= 1u << b;
  bool above, tie;
  if (shift == 0) {
    above = rem > rest;
    tie = rem != 0u && rem == rest;
  } else {
    const bool h = detail::bit_of(q, shift - 1);
    bool lower = false;
    for (int b = 0; b < shift - 1 && !lower; ++b) lower = detail::bit_of(q, b);
    above = h && (lower || rem != 0u);
    tie = h && !lower && rem == 0u;
  }
  n += (above || (tie && (n & 1u) != 0u)) ? 1u : 0u;
  const int E = len - 1 - 149;
  if (E < -126) return n;  // subnormal (n = 2^23 is the smallest normal's code)
  return (static_cast<std::uint32_t>(E + 127 - 1) << 23) + n;
}

// §24.2 Eq. 4: max · 2^emin(t) < max_finite(t) · min, exactly; max, min, max_finite positive
// finite binary32 codes.
NUMREF_HD inline bool fits_normal_range(std::uint32_t max, std::uint32_t min, int t_emin, std::uint32_t t_max_finite) {
  const F32Split a = f32_split(max), b = f32_split(min), c = f32_split(t_max_finite);
  return dyadic_less(a.sig, a.e - 23 + t_emin, static_cast<std::uint64_t>(b.sig) * c.sig, b.e - 23 + c.e - 23);
}

}  // namespace numref_cuda
