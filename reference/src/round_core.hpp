// numref — internal: the rounding core's inline implementation (spec §4 – §9).
// Included by round.cpp and convert.cpp only, so that the conversion hot path is
// compiled in one piece. Not part of the public API.
#pragma once

#include <stdexcept>
#include <string>

#include "numref/round.hpp"
#include "numref/round_increment.hpp"
#include "numref/value.hpp"

namespace numref {
namespace detail {
using u128 = unsigned __int128;
}

namespace core_impl {

// Error paths live out of line so that the hot path stays small.
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_sticky_above() {
  throw std::logic_error("round_finite: sticky bits above the target quantum");
}
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_sticky_k() {
  throw std::logic_error("round_finite: sticky operand lacks k fraction bits");
}
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_sticky_zero() {
  throw std::logic_error("round_finite: sticky operand with zero significand");
}
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_r_too_wide(std::uint64_t r, int k) {
  throw std::invalid_argument("stochastic rounding: r = " + std::to_string(r) +
                              " has more than k = " + std::to_string(k) + " bits");
}

using detail::bit_length;
using detail::u128;

// How the discarded part compares with half a quantum. The values are round_increment()'s
// `rem` for `half` = 2 (f = 0, 1/4, 1/2, 3/4 stand for each class).
enum class Rest : std::uint8_t { zero = 0, below = 1, half = 2, above = 3 };

inline Result zero_result(bool sign, const Format& to, const Policy& p) {
  // §7.2 zero into a format without zero (f8e8m0fnu).
  if (!to.has_zero) {
    if (p.zero_to_nozero == ZeroToNoZero::nan) return {to.canonical_nan, kInvalid};
    return {encode_min_positive(to), kInexact};
  }
  return {encode_zero(sign && to.is_signed, to), 0};
}

// §6.3 The code that nan= gives a quiet NaN operand of sign `sign` where the operand's payload
// plays no part: every option for a target without payload bits (fn, fnuz, P3109), and every
// option but payload / raw for ieee targets (those read the fraction: convert.cpp nan_result).
inline std::uint32_t nan_rule_code(bool sign, const Format& to, const Policy& p) {
  if (to.has_single_nan()) return to.canonical_nan;  // §6.3 one NaN: every option
  const std::uint32_t sgn = sign ? to.sign_bit() : 0u;
  switch (p.nan) {
    case NanOut::canonical: return to.canonical_nan;
    case NanOut::ones: return to.mag_mask();
    case NanOut::ones_sign: return sgn | to.mag_mask();
    case NanOut::all_ones: return to.sign_bit() | to.mag_mask();
    case NanOut::raw_plus: return to.canonical_nan;  // raw, positive: the NaN of the slot without the sign
    case NanOut::sign:
    case NanOut::payload:
    case NanOut::raw: break;
  }
  return to.canonical_nan | sgn;
}

// §6.7 The NaN that stands for an infinity of sign `sign` in a format with NaN but no Inf.
inline std::uint32_t inf_slot_nan(bool sign, const Format& to, const Policy& p) {
  return p.inf_nan == InfNan::nan ? nan_rule_code(sign, to, p) : to.nan_code(sign);
}

// §6.1 The result of an overflow. `mode` selects the IEEE 754 §7.4 direction rule.
inline Result overflow_result(bool sign, Round mode, const Format& to, const Policy& p) {
  if (to.is_integer()) {  // §6.5 integers saturate and signal invalid (IEEE 754 §5.8)
    const auto mx = detail::max_magnitude(to, sign, p.int_range == IntRange::symmetric);
    return {detail::encode_grid(sign, mx.n, mx.q, to), kInvalid};
  }
  const Result sat{encode_max_finite(sign, to), static_cast<std::uint8_t>(kOverflow | kInexact)};
  if (to.specials == Specials::finite || p.overflow == Overflow::saturate) return sat;
  // IEEE 754 §7.4: to infinity under the nearest modes and SR, and under a directed mode
  // that points away from zero
  const bool infinite = mode == Round::rne || mode == Round::rna || mode == Round::sr ||
                        (mode == Round::rup && !sign) || (mode == Round::rdn && sign);
  if (!infinite) return sat;
  if (to.has_inf()) return {encode_inf(sign, to), static_cast<std::uint8_t>(kOverflow | kInexact)};
  // §6.1: where the infinity slot is a NaN (OCP E4M3, E8M0) overflow gives that NaN,
  // carrying the sign of the overflowing value (§6.7 inf_nan=slot, or nan='s NaN under
  // inf_nan=nan); fnuz formats give their one NaN.
  return {inf_slot_nan(sign, to, p), static_cast<std::uint8_t>(kOverflow | kInexact)};
}

// Parity of the code of n * 2^q (the truncated candidate), for ties-to-even-code (§4.2).
// With fraction bits (or for integers) the code's last bit is n's last bit; without
// fraction bits (E8M0) the code is the biased exponent.
inline bool code_is_odd(std::uint64_t n, int q, const Format& to) {
  if (to.man_bits != 0 || to.is_integer() || n == 0) return (n & 1u) != 0;
  const int e = q + bit_length(n) - 1;
  return ((e + to.bias) & 1) != 0;
}

struct Split {
  std::uint64_t n;   // truncated |x| / 2^q
  Rest rest;         // discarded part vs half a quantum
  std::uint64_t fk;  // discarded fraction truncated to k bits (SR only)
};

// |x| / 2^q split into integer and fraction. shift = q - exp > 0 discards bits.
inline Split split(const Exact& x, int q, int k) {
  const int shift = q - x.exp;
  Split s{0, Rest::zero, 0};
  if (shift <= 0) {
    if (x.sticky) fail_sticky_above();
    s.n = x.sig << (-shift);
    return s;
  }
  if (x.sticky && k > shift) fail_sticky_k();
  if (shift < 64) {  // fast path: everything fits in 64 bits
    const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;
    const std::uint64_t rem = x.sig & mask;
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    s.n = x.sig >> shift;
    if (rem == 0 && !x.sticky)
      s.rest = Rest::zero;
    else if (rem > half || (rem == half && x.sticky))
      s.rest = Rest::above;
    else if (rem == half)
      s.rest = Rest::half;
    else
      s.rest = Rest::below;
    if (k > 0) s.fk = fraction_bits(rem, shift, k);
    return s;
  }
  // shift >= 64: n = 0 and the whole significand is the fraction.
  const u128 rem = x.sig;
  if (rem == 0 && !x.sticky) {
    s.rest = Rest::zero;
  } else if (shift >= 128) {
    s.rest = Rest::below;  // sig < 2^64 <= 2^(shift-1)
  } else {
    const u128 half = u128{1} << (shift - 1);
    if (rem > half || (rem == half && x.sticky))
      s.rest = Rest::above;
    else if (rem == half)
      s.rest = Rest::half;
    else
      s.rest = Rest::below;
  }
  if (k > 0) {
    // fraction_k = floor(rem * 2^k / 2^shift) (§5.1); sticky lies below these bits.
    const int down = shift - k;  // > 0 since k <= 32 < 64 <= shift
    s.fk = down >= 128 ? 0 : static_cast<std::uint64_t>(rem >> down);
  }
  return s;
}

// §4.2 / §5.1 the increment of the general path (round_increment.hpp); the parity decides a
// tie only, so it is read (a bit_length for f8e8m0fnu) only then.
inline bool round_up(Round mode, bool sign, const Split& s, std::uint64_t r, int k, int q, const Format& to) {
  return round_increment(mode, sign, static_cast<std::uint64_t>(s.rest), 2u, false,
                         s.rest == Rest::half && code_is_odd(s.n, q, to), s.fk, r, k);
}

// §7.4 e8m0_low=grid: an operand below 2^(emin+1) (2^-126 for f8e8m0fnu) into a format with
// neither zero nor fraction bits is rounded to n * 2^(emin+1), n in {0, 1}, with the effective
// mode on the integer n (a tie, x = 2^emin, goes to the even n = 0 under both nearest modes);
// the code is n (00 = 2^emin for n = 0). e = floor(log2 x) <= emin.
inline Result e8m0_grid(const Exact& x, const detail::Target& t, Round mode, std::uint64_t r, int k, int e) {
  const Split s = split(x, t.emin + 1, k);                 // s.n == 0
  const Round m = mode == Round::rna ? Round::rne : mode;  // ties to the even integer
  const bool up = round_increment(m, false, static_cast<std::uint64_t>(s.rest), 2u, false, false, s.fk, r, k);
  const bool pow2 = (x.sig & (x.sig - 1)) == 0 && !x.sticky;
  const bool exact = !up && e == t.emin && pow2;  // x = 2^emin exactly, delivered as code 00
  std::uint8_t flags = exact ? 0 : kInexact;
  if (e < t.emin) flags |= kUnderflow;  // tiny (below the smallest magnitude) and inexact
  return {encode_min_positive(*t.f) + (up ? 1u : 0u), flags};
}

inline detail::Target make_target_inline(const Format& to, const Policy& p) {
  using detail::max_magnitude;
  using detail::Target;
  Target t{};
  t.f = &to;
  t.mode = effective_round(to, p);
  const bool sym = p.int_range == IntRange::symmetric;
  for (int neg = 0; neg < 2; ++neg) {
    const auto mx = max_magnitude(to, neg != 0, sym);
    t.max_n[neg] = mx.n;
    t.max_q[neg] = mx.q;
    t.max_e[neg] = mx.q + bit_length(mx.n) - 1;
  }
  t.emin = to.emin();
  t.qmin = to.qmin();
  t.man = to.man_bits;
  t.bias = to.bias;
  t.sign_bit = to.sign_bit();
  t.fast = !to.is_integer();
  return t;
}

inline Result round_core_inline(const Exact& x, const detail::Target& t, const Policy& p, Round mode, Round ovf_mode,
                                std::uint64_t r) {
  const Format& to = *t.f;
  bool sign = x.sign;
  if (x.sig == 0) {
    if (x.sticky) fail_sticky_zero();
    return zero_result(sign, to, p);
  }
  if (sign && !to.is_signed) {  // §7.3 negative into an unsigned format (inf_abs: finite ones give NaN)
    if (p.negative != Negative::abs) return {to.canonical_nan, kInvalid};
    sign = false;
  }
  const int k = mode == Round::sr ? p.sr_bits : 0;
  if (mode == Round::sr && (r >> k) != 0) fail_r_too_wide(r, k);

  const int si = sign ? 1 : 0;
  const int e_max = t.max_e[si];
  const int e = x.exp + bit_length(x.sig) - 1;                   // floor(log2 |x|)
  if (e > e_max) return overflow_result(sign, ovf_mode, to, p);  // |x| >= 2^(e_max+1) > max
  if (e <= t.emin && p.e8m0_low == E8m0Low::grid && !to.has_zero && t.man == 0 && !to.is_integer())
    return e8m0_grid(x, t, mode, r, k, e);  // §7.4

  // Fast path: a result in the normal range strictly below the top binade cannot
  // overflow or be tiny, and its code is (biased exponent, fraction) + carry; the
  // code's last bit is exactly the parity §4.2 ties to. Same results as the general
  // path below (tests compare both exhaustively via the 16-bit sweeps).
  if (t.fast && e >= t.emin && e < e_max) {
    const int qn = e - t.man;
    const int shift = qn - x.exp;
    const std::uint32_t top = static_cast<std::uint32_t>(e + t.bias) << t.man;
    const std::uint32_t sgn = sign ? t.sign_bit : 0u;
    if (shift <= 0) {
      if (x.sticky) fail_sticky_above();
      const std::uint64_t n0 = x.sig << (-shift);
      return {sgn | top | static_cast<std::uint32_t>(n0 & ((std::uint64_t{1} << t.man) - 1)), 0};
    }
    if (shift < 64 && (!x.sticky || k <= shift)) {
      const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;
      const std::uint64_t rem = x.sig & mask;
      const std::uint64_t half = std::uint64_t{1} << (shift - 1);
      const std::uint32_t code = top | static_cast<std::uint32_t>((x.sig >> shift) & ((std::uint64_t{1} << t.man) - 1));
      const bool inexact = rem != 0 || x.sticky;
      // §4.2 the code's last bit is the parity of N; §5.1 f_k from the discarded bits.
      const bool up = round_increment(mode, sign, rem, half, x.sticky, (code & 1u) != 0,
                                      k > 0 ? fraction_bits(rem, shift, k) : 0u, r, k);
      return {sgn | (code + (up ? 1u : 0u)), static_cast<std::uint8_t>(inexact ? kInexact : 0)};
    }
  }

  int q;
  if (to.is_integer()) {
    q = 0;
  } else {
    q = e - t.man;
    if (to.has_subnormals && q < t.qmin) q = t.qmin;
  }
  const Split s = split(x, q, k);
  const bool inexact = s.rest != Rest::zero;
  const std::uint64_t n = s.n + (round_up(mode, sign, s, r, k, q, to) ? 1u : 0u);
  std::uint8_t flags = inexact ? kInexact : 0;

  if (n == 0) {  // rounded to zero (only possible with subnormals or integers)
    Result z = zero_result(sign, to, p);
    if (inexact && !to.is_integer()) flags |= kUnderflow;  // tiny and inexact
    z.flags |= flags;
    return z;
  }
  // §6.1 overflow: the rounded value exceeds the largest finite magnitude.
  const int er = q + bit_length(n) - 1;
  if (er >= e_max) {
    bool over = er > e_max;
    if (!over) {
      const int d = q - t.max_q[si];
      over = d >= 0 ? (n << d) > t.max_n[si] : n > (t.max_n[si] << -d);
    }
    if (over) return overflow_result(sign, ovf_mode, to, p);
  }
  if (to.is_integer()) return {detail::encode_grid(sign, n, q, to), flags};

  // §8 / §9.2 tininess, underflow, flush to zero, and the bottom of formats without zero.
  const int emin = t.emin;
  if (e < emin) {
    bool tiny;
    if (p.tininess == Tininess::before || mode == Round::sr) {
      tiny = true;  // |x| < 2^emin (§5.4 for SR)
    } else if (e < emin - 1) {
      tiny = true;  // even rounding at full precision stays below 2^(emin-1)*2
    } else {
      // e == emin - 1: round |x| with the format's precision and an unbounded exponent
      // range (quantum 2^(e - m)); tiny unless that reaches 2^emin.
      const int qf = e - t.man;
      const Split sf = split(x, qf, 0);
      const std::uint64_t nf = sf.n + (round_up(mode, sign, sf, 0, 0, qf, to) ? 1u : 0u);
      tiny = bit_length(nf) <= t.man + 1;
    }
    if (!to.has_subnormals && er < emin) {
      // Below the lowest binade of a format without subnormals: the minimum magnitude
      // (f8e8m0fnu has no zero to flush to), §7.4; e8m0_low=nan: the NaN, flag invalid.
      if (p.e8m0_low == E8m0Low::nan && to.has_nan()) return {to.canonical_nan, kInvalid};
      return {encode_min_positive(to), static_cast<std::uint8_t>(kInexact | kUnderflow)};
    }
    if (tiny && p.ftz && to.has_zero) {  // §8.2
      Result z = zero_result(sign, to, p);
      z.flags |= kInexact | kUnderflow;
      return z;
    }
    if (tiny && inexact) flags |= kUnderflow;
  }
  return {detail::encode_grid(sign, n, q, to), flags};
}

}  // namespace core_impl
}  // namespace numref
