// numref — the one rounding core.                 spec §4 – §9
//
// All arithmetic is on integers. The operand is |x| = (sig + e) * 2^exp (e in [0,1),
// non-zero iff sticky). The core
//   1. picks the target quantum 2^q (§4.1: q = max(E - m, qmin); 0 for integers),
//   2. splits |x| / 2^q into the truncated integer N and the discarded fraction,
//   3. decides whether to add one quantum (§4.2 deterministic modes, §5 stochastic),
//   4. resolves overflow (§6.1), tininess / underflow / flush (§8, §9.2), and encodes.
#include "numref/round.hpp"

#include <stdexcept>
#include <string>

#include "numref/value.hpp"

namespace numref {

using detail::bit_length;
using u128 = unsigned __int128;

Round effective_round(const Format& to, const Policy& p) {
  if (to.man_bits != 0 || to.is_integer()) return p.round;
  switch (p.e8m0_round) {  // §7.1
    case E8m0Round::follow: return p.round;
    case E8m0Round::floor: return Round::rtz;
    case E8m0Round::ceil: return Round::rup;
    case E8m0Round::even: return Round::rne;
    case E8m0Round::tiesup: return Round::rna;
  }
  return p.round;
}

namespace {

// How the discarded part compares with half a quantum.
enum class Rest : std::uint8_t { zero, below, half, above };

Result zero_result(bool sign, const Format& to, const Policy& p) {
  // §7.2 zero into a format without zero (f8e8m0fnu).
  if (!to.has_zero) {
    if (p.zero_to_nozero == ZeroToNoZero::nan) return {to.canonical_nan, kInvalid};
    return {encode_min_positive(to), kInexact};
  }
  return {encode_zero(sign && to.is_signed, to), 0};
}

// §6.1 The result of an overflow. `mode` selects the IEEE 754 §7.4 direction rule.
Result overflow_result(bool sign, Round mode, const Format& to, const Policy& p) {
  if (to.is_integer()) {  // §6.5 integers saturate and signal invalid (IEEE 754 §5.8)
    const auto mx = detail::max_magnitude(to, sign, p.int_range == IntRange::symmetric);
    return {detail::encode_grid(sign, mx.n, mx.q, to), kInvalid};
  }
  const Result sat{encode_max_finite(sign, to), static_cast<std::uint8_t>(kOverflow | kInexact)};
  if (to.specials == Specials::finite || p.overflow == Overflow::saturate) return sat;
  bool infinite = true;
  switch (mode) {
    case Round::rne:
    case Round::rna:
    case Round::sr: infinite = true; break;
    case Round::rtz: infinite = false; break;
    case Round::rup: infinite = !sign; break;
    case Round::rdn: infinite = sign; break;
  }
  if (!infinite) return sat;
  if (to.has_inf()) return {encode_inf(sign, to), static_cast<std::uint8_t>(kOverflow | kInexact)};
  // §6.1: where the infinity slot is a NaN (OCP E4M3, E8M0) overflow gives that NaN,
  // carrying the sign of the overflowing value.
  return {to.canonical_nan | (sign ? to.sign_bit() : 0u), static_cast<std::uint8_t>(kOverflow | kInexact)};
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
Split split(const Exact& x, int q, int k) {
  const int shift = q - x.exp;
  Split s{0, Rest::zero, 0};
  if (shift <= 0) {
    if (x.sticky) throw std::logic_error("round_finite: sticky bits above the target quantum");
    s.n = x.sig << (-shift);
    return s;
  }
  if (x.sticky && k > shift) throw std::logic_error("round_finite: sticky operand lacks k fraction bits");
  const u128 sig = x.sig;
  u128 rem;
  if (shift < 128) {
    s.n = static_cast<std::uint64_t>(sig >> shift);
    rem = sig & ((u128{1} << shift) - 1);
  } else {
    s.n = 0;
    rem = sig;
  }
  if (rem == 0 && !x.sticky) {
    s.rest = Rest::zero;
  } else if (shift >= 128) {
    s.rest = Rest::below;  // sig < 2^64 <= 2^(shift-1)
  } else {
    const u128 half = u128{1} << (shift - 1);
    if (rem > half || (rem == half && x.sticky)) s.rest = Rest::above;
    else if (rem == half) s.rest = Rest::half;
    else s.rest = Rest::below;
  }
  if (k > 0) {
    // fraction_k = floor(rem * 2^k / 2^shift) (§5.1); sticky lies below these bits.
    if (shift >= k) {
      const int down = shift - k;
      s.fk = down >= 128 ? 0 : static_cast<std::uint64_t>(rem >> down);
    } else {
      s.fk = static_cast<std::uint64_t>(rem << (k - shift));
    }
  }
  return s;
}

bool round_up(Round mode, bool sign, const Split& s, std::uint64_t r, int k, int q, const Format& to) {
  switch (mode) {
    case Round::rne:
      return s.rest == Rest::above || (s.rest == Rest::half && code_is_odd(s.n, q, to));
    case Round::rna: return s.rest == Rest::above || s.rest == Rest::half;
    case Round::rtz: return false;
    case Round::rup: return s.rest != Rest::zero && !sign;
    case Round::rdn: return s.rest != Rest::zero && sign;
    case Round::sr: return s.fk + r >= (std::uint64_t{1} << k);  // §5.1
  }
  return false;
}

}  // namespace

namespace detail {
Result round_core(const Exact& x, const Format& to, const Policy& p, Round mode, Round ovf_mode,
                  std::uint64_t r);
}

Result detail::round_core(const Exact& x, const Format& to, const Policy& p, Round mode,
                          Round ovf_mode, std::uint64_t r) {
  bool sign = x.sign;
  if (x.sig == 0) {
    if (x.sticky) throw std::logic_error("round_finite: sticky operand with zero significand");
    return zero_result(sign, to, p);
  }
  if (sign && !to.is_signed) {  // §7.3 negative into an unsigned format
    if (p.negative == Negative::nan) return {to.canonical_nan, kInvalid};
    sign = false;
  }
  const int k = mode == Round::sr ? p.sr_bits : 0;
  if (mode == Round::sr && (r >> k) != 0)
    throw std::invalid_argument("stochastic rounding: r = " + std::to_string(r) + " has more than k = " +
                                std::to_string(k) + " bits");

  const bool int_sym = p.int_range == IntRange::symmetric;
  const auto mx = detail::max_magnitude(to, sign, int_sym);
  const int e_max = mx.q + bit_length(mx.n) - 1;
  const int e = x.exp + bit_length(x.sig) - 1;  // floor(log2 |x|)
  if (e > e_max) return overflow_result(sign, ovf_mode, to, p);  // |x| >= 2^(e_max+1) > max

  int q;
  if (to.is_integer()) {
    q = 0;
  } else {
    q = e - to.man_bits;
    if (to.has_subnormals && q < to.qmin()) q = to.qmin();
  }
  const Split s = split(x, q, k);
  const bool inexact = s.rest != Rest::zero;
  std::uint64_t n = s.n + (round_up(mode, sign, s, r, k, q, to) ? 1u : 0u);
  std::uint8_t flags = inexact ? kInexact : 0;

  if (n == 0) {  // rounded to zero (only possible with subnormals or integers)
    Result z = zero_result(sign, to, p);
    if (inexact && !to.is_integer()) flags |= kUnderflow;  // tiny and inexact
    z.flags |= flags;
    return z;
  }
  // §6.1 overflow: the rounded value exceeds the largest finite magnitude.
  {
    const int er = q + bit_length(n) - 1;
    bool over = er > e_max;
    if (!over && er == e_max) {
      const int d = q - mx.q;
      over = d >= 0 ? (n << d) > mx.n : n > (mx.n << -d);
    }
    if (over) return overflow_result(sign, ovf_mode, to, p);
  }
  if (to.is_integer()) return {detail::encode_grid(sign, n, q, to), flags};

  // §8 / §9.2 tininess, underflow, flush to zero, and the bottom of formats without zero.
  const int emin = to.emin();
  if (e < emin) {
    bool tiny;
    if (p.tininess == Tininess::before || mode == Round::sr) {
      tiny = true;  // |x| < 2^emin
    } else if (e < emin - 1) {
      tiny = true;  // even rounding at full precision stays below 2^(emin-1)*2
    } else {
      // e == emin - 1: round |x| with the format's precision and an unbounded exponent
      // range (quantum 2^(e - m)); tiny unless that reaches 2^emin.
      const int qf = e - to.man_bits;
      const Split sf = split(x, qf, 0);
      const std::uint64_t nf = sf.n + (round_up(mode, sign, sf, 0, 0, qf, to) ? 1u : 0u);
      tiny = bit_length(nf) <= to.man_bits + 1;
    }
    const int er = q + bit_length(n) - 1;
    if (!to.has_subnormals && er < emin) {
      // Below the lowest binade of a format without subnormals: the minimum magnitude
      // (f8e8m0fnu has no zero to flush to), §7.4.
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

Result round_finite(const Exact& x, const Format& to, const Policy& p, std::uint64_t r) {
  const Round mode = effective_round(to, p);
  return detail::round_core(x, to, p, mode, mode, r);
}

Exact divide_to_exact(bool sign, std::uint64_t a, int a_exp, std::uint64_t b, int b_exp) {
  if (a == 0) return {sign, 0, 0, false};
  if (b == 0) throw std::invalid_argument("divide_to_exact: division by zero");
  const int la = bit_length(a), lb = bit_length(b);
  const int sh = 64 + lb - la;  // quotient gets 64 or 65 bits
  const u128 num = static_cast<u128>(a) << sh;
  u128 quo = num / b;
  bool sticky = (num % b) != 0;
  int exp = a_exp - b_exp - sh;
  if (quo >> 64) {
    sticky = sticky || (quo & 1);
    quo >>= 1;
    exp += 1;
  }
  return {sign, static_cast<std::uint64_t>(quo), exp, sticky};
}

}  // namespace numref
