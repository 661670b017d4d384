// numref oracle — conversion written from the spec text (§3, §5 – §11).
//
// Independent of numref_reference: codes are read with the oracle's own field decoder
// (§3.1) from the stated columns of kFormats; deterministic rounding is MPFR's
// (mpfr_round.cpp); stochastic rounding (§5.1) is computed with exact rationals
// (Boost.Multiprecision cpp_rational); the special-value, overflow, E8M0, subnormal and
// flag rules (§6 – §9) are transcribed clause by clause below.
#include "numref/oracle/oracle_convert.hpp"

#include <mpfr.h>

#include <stdexcept>
#include <string>

#include "mpfr_round.hpp"

namespace numref::oracle {

using detail::Dir;
using detail::Grid;
using detail::grid_of;
using detail::round_to_grid;
using detail::Scratch;
using detail::scratch;

namespace {

// ---- format facts read from the stated columns (§2.1, §2.2) -------------------------

std::uint32_t width_mask(const Format& f) { return f.bits >= 32 ? 0xFFFFFFFFu : ((1u << f.bits) - 1u); }
std::uint32_t sign_mask(const Format& f) { return f.is_signed ? (1u << (f.bits - 1)) : 0u; }
std::uint32_t magnitude_mask(const Format& f) { return width_mask(f) & ~sign_mask(f); }
bool is_int(const Format& f) { return f.specials == Specials::integer; }
bool is_p3109(const Format& f) { return f.specials == Specials::p3109e || f.specials == Specials::p3109f; }
bool has_inf(const Format& f) { return f.specials == Specials::ieee || f.specials == Specials::p3109e; }
// fnuz and P3109 (§2.2, §2.5): one NaN, no −0.
bool is_fnuz(const Format& f) { return f.specials == Specials::fnuz || is_p3109(f); }
bool has_nan(const Format& f) { return f.specials == Specials::ieee || f.specials == Specials::fn || is_fnuz(f); }
std::uint32_t sgn(bool s, const Format& f) { return s ? sign_mask(f) : 0u; }

// §3.3 the infinity code; §6.1 / §6.2 "the NaN of the infinity slot" of an fn format is
// its all-ones magnitude (§2.2), with the sign of the operand where the format has one.
// §2.5 P3109 extended: the largest magnitude (signed) or the one below the all-ones NaN (unsigned).
std::uint32_t inf_code(bool s, const Format& f) {
  if (is_p3109(f)) return sgn(s, f) | (magnitude_mask(f) - (f.is_signed ? 0u : 1u));
  return sgn(s, f) | (((1u << f.exp_bits) - 1u) << f.man_bits);
}
// A fnuz format's only NaN is the negative-zero pattern, the sign bit alone, whatever the sign;
// so is a signed P3109 format's; an unsigned P3109 format's is all ones (§2.5).
std::uint32_t nan_slot_code(bool s, const Format& f) {
  if (is_fnuz(f)) return f.is_signed ? sign_mask(f) : width_mask(f);
  return sgn(s, f) | magnitude_mask(f);
}

// §3.3 ±max finite (integers: 7F and, for negatives, -128 = 80 or -127 = 81 (§6.5)).
// §2.5: where the largest finite value is 0 (p3109_k2p1se, _k2p2se) and there is no −0, −max is +0.
std::uint32_t max_code(bool s, const Format& f) {
  if (f.max_finite == 0 && is_fnuz(f)) return 0u;
  return sgn(s, f) | f.max_finite;
}

// Integer range (§6.5): [-(max+1), max] (full) or [-max, max] (symmetric).
long int_max(const Format& f) { return static_cast<long>(f.max_finite); }
long int_min(const Format& f, const Policy& p) {
  return p.int_range == IntRange::symmetric ? -int_max(f) : -int_max(f) - 1;
}
std::uint32_t int_code(long v, const Format& f) { return static_cast<std::uint32_t>(v) & width_mask(f); }

// §3.3 / §6.6 the zero of a format that has one (fnuz: only +0, §2.2).
std::uint32_t zero_code(bool s, const Format& f) { return is_int(f) || is_fnuz(f) ? 0u : sgn(s, f); }

// Effective rounding (§7.1): targets without fraction bits use e8m0_round.
enum class Mode : std::uint8_t { rne, rtz, rup, rdn, rna, sr };
Mode mode_of(Round r) {
  switch (r) {
    case Round::rne: return Mode::rne;
    case Round::rtz: return Mode::rtz;
    case Round::rup: return Mode::rup;
    case Round::rdn: return Mode::rdn;
    case Round::rna: return Mode::rna;
    case Round::sr: return Mode::sr;
  }
  throw std::logic_error("oracle: bad round");
}
Mode effective(const Format& to, const Policy& p) {
  if (is_int(to) || to.man_bits != 0) return mode_of(p.round);
  switch (p.e8m0_round) {
    case E8m0Round::follow: return mode_of(p.round);
    case E8m0Round::floor: return Mode::rtz;
    case E8m0Round::ceil: return Mode::rup;
    case E8m0Round::even: return Mode::rne;
    case E8m0Round::tiesup: return Mode::rna;
  }
  throw std::logic_error("oracle: bad e8m0_round");
}
Dir dir_of(Mode m) {
  switch (m) {
    case Mode::rne: return Dir::nearest_even;
    case Mode::rna: return Dir::nearest_away;
    case Mode::rtz: return Dir::toward_zero;
    case Mode::rup: return Dir::up;
    case Mode::rdn: return Dir::down;
    case Mode::sr: break;
  }
  throw std::logic_error("oracle: no MPFR direction for sr");
}

constexpr std::uint8_t kIX = kInexact, kUF = kUnderflow, kOF = kOverflow, kNV = kInvalid;

// ---- MPFR helpers -------------------------------------------------------------------

// |v| compared with n * 2^e.
int cmpabs_ui_2exp(const mpfr_t v, unsigned long n, long e) {
  Scratch& s = scratch();
  mpfr_abs(s.a, v, MPFR_RNDN);
  return mpfr_cmp_ui_2exp(s.a, n, e);
}

// §3.3 The code of the finite non-zero grid value y of a floating-point format.
std::uint32_t encode_float(const mpfr_t y, const Format& f, const Grid& g) {
  Scratch& s = scratch();
  const bool neg = mpfr_sgn(y) < 0;
  const long e = static_cast<long>(mpfr_get_exp(y)) - 1;  // E(y): y in [2^e, 2^(e+1))
  std::uint32_t mag;
  mpfr_abs(s.a, y, MPFR_RNDN);
  if (e < g.emin) {
    if (!g.subnormals) throw std::logic_error("oracle: value below a format without subnormals");
    mpfr_mul_2si(s.a, s.a, -g.qmin, MPFR_RNDN);  // fraction field = |y| / 2^qmin
    if (!mpfr_integer_p(s.a)) throw std::logic_error("oracle: value off the subnormal grid");
    mag = static_cast<std::uint32_t>(detail::exact_u64(s, s.a));
  } else {
    mpfr_mul_2si(s.a, s.a, f.man_bits - e, MPFR_RNDN);  // 1.fraction * 2^m
    if (!mpfr_integer_p(s.a)) throw std::logic_error("oracle: value off the grid");
    const std::uint64_t sig = detail::exact_u64(s, s.a);
    const std::uint32_t frac = static_cast<std::uint32_t>(sig - (std::uint64_t{1} << f.man_bits));
    mag = (static_cast<std::uint32_t>(e + f.bias) << f.man_bits) | frac;
  }
  if (mag > magnitude_mask(f)) throw std::logic_error("oracle: encoded magnitude out of the format");
  return sgn(neg, f) | mag;
}

// Smallest positive value of a format without subnormals: 2^emin (§7.4, §7.2 `min`).
std::uint32_t min_positive_code(const Format& f, const Grid& g) {
  Scratch& s = scratch();
  if (g.subnormals) return 1u;  // 1 * 2^qmin: fraction field 1
  mpfr_set_ui_2exp(s.y, 1, g.emin, MPFR_RNDN);
  return encode_float(s.y, f, g);
}

// ---- §6 special operands and the zero -----------------------------------------------

// §6.3 / §6.4 A NaN operand.
Out nan_out(const Value& v, const Format& from, const Format& to, const Policy& p) {
  (void)from;
  std::uint8_t flags = v.signaling ? kNV : 0;  // §6.3: a signaling NaN raises invalid
  if (!has_nan(to)) {                          // §6.4: always invalid
    flags |= kNV;
    switch (p.nan_to_finite) {
      case NanToFinite::zero: return {0u, flags};
      case NanToFinite::negzero: return {is_int(to) ? 0u : sign_mask(to), flags};  // int8: 00
      case NanToFinite::max: return {max_code(false, to), flags};
      case NanToFinite::signzero: return {is_int(to) ? 0u : sgn(v.sign, to), flags};   // the zero with the sign
      case NanToFinite::flipzero: return {is_int(to) ? 0u : sgn(!v.sign, to), flags};  // the zero, sign flipped
    }
  }
  if (is_fnuz(to)) return {nan_slot_code(v.sign, to), flags};  // §6.3: one NaN, every option
  switch (p.nan) {
    case NanOut::raw:
    case NanOut::raw_plus: {  // §6.3 raw: like payload, but the quiet bit is not set; never the Inf pattern
      const bool s = p.nan == NanOut::raw && v.sign;  // raw_plus: the same code, positive
      if (to.specials != Specials::ieee) return {nan_slot_code(s, to), flags};
      std::uint64_t pl = v.sig;
      if (from.man_bits >= to.man_bits)
        pl >>= (from.man_bits - to.man_bits);
      else
        pl <<= (to.man_bits - from.man_bits);
      if (pl == 0) pl = 1;
      return {inf_code(s, to) | static_cast<std::uint32_t>(pl), flags};
    }
    case NanOut::ones_sign: return {nan_slot_code(v.sign, to), flags};
    case NanOut::all_ones:
      return {width_mask(to), flags};  // every bit of the code  // every magnitude bit, the sign kept
    case NanOut::payload: {
      if (to.specials != Specials::ieee) return {nan_slot_code(v.sign, to), flags};  // one NaN per sign
      // the source fraction truncated (or zero-extended) to the target width, quiet bit set
      std::uint64_t pl = v.sig;
      if (from.man_bits >= to.man_bits)
        pl >>= (from.man_bits - to.man_bits);
      else
        pl <<= (to.man_bits - from.man_bits);
      pl |= std::uint64_t{1} << (to.man_bits - 1);
      return {inf_code(v.sign, to) | static_cast<std::uint32_t>(pl), flags};
    }
    case NanOut::sign: return {to.canonical_nan | sgn(v.sign, to), flags};
    case NanOut::canonical: return {to.canonical_nan, flags};
    case NanOut::ones: return {magnitude_mask(to), flags};
  }
  throw std::logic_error("oracle: bad nan policy");
}

// §6.7 The NaN standing for an infinity of sign s in a format with NaN but no Inf: the
// infinity slot's NaN with the sign (inf_nan=slot), or what §6.3 gives a quiet NaN operand of
// sign s (inf_nan=nan; such a format has no payload bits, so the payload plays no part).
std::uint32_t inf_nan_code(bool s, const Format& to, const Policy& p) {
  if (p.inf_nan == InfNan::slot) return nan_slot_code(s, to);
  const Value quiet{Kind::nan, s, 0, 0, false};
  return nan_out(quiet, to, to, p).bits;
}

// §6.2 An infinite operand (the steps in the order of the clause).
Out inf_out(bool s, const Format& to, const Policy& p) {
  if (is_int(to)) return {int_code(s ? int_min(to, p) : int_max(to), to), kNV};  // 1.
  if (s && !to.is_signed) {                                                      // 2. (§7.3)
    if (p.negative == Negative::nan) return {nan_slot_code(false, to), kNV};
    s = false;
  }
  if (p.overflow == Overflow::saturate && p.inf_sat == InfSat::max) return {max_code(s, to), kOF | kIX};  // 3.
  if (has_inf(to)) return {inf_code(s, to), 0};                                                           // 4.
  if (has_nan(to)) return {inf_nan_code(s, to, p), kNV};                                                  // 5. (§6.7)
  return {max_code(s, to), kNV};                                                                          // 6.
}

// §6.6 / §7.2 A zero operand (also a subnormal flushed by DAZ, §8.1).
Out zero_out(bool s, const Format& to, const Policy& p) {
  if (!to.has_zero) {
    if (p.zero_to_nozero == ZeroToNoZero::nan) return {nan_slot_code(false, to), kNV};
    return {min_positive_code(to, grid_of(to)), kIX};
  }
  return {to.is_signed ? zero_code(s, to) : 0u, 0};
}

// §6.1 Overflow of a finite value; `m` is the mode giving the IEEE 754 §7.4 direction.
Out overflow_out(bool s, Mode m, const Format& to, const Policy& p) {
  const Out sat{max_code(s, to), kOF | kIX};
  if (to.specials == Specials::finite || p.overflow == Overflow::saturate) return sat;
  bool to_inf = true;
  switch (m) {
    case Mode::rne:
    case Mode::rna:
    case Mode::sr: to_inf = true; break;
    case Mode::rtz: to_inf = false; break;
    case Mode::rup: to_inf = !s; break;
    case Mode::rdn: to_inf = s; break;
  }
  if (!to_inf) return sat;
  if (has_inf(to)) return {inf_code(s, to), kOF | kIX};
  return {inf_nan_code(s, to, p), kOF | kIX};  // the NaN of the infinity slot, with the sign of x (§6.7)
}

// ---- finishing a rounded finite value -----------------------------------------------

// §6.5 Integer target: y is the operand rounded to an integer.
Out finish_int(const mpfr_t y, bool inexact, const Format& to, const Policy& p) {
  if (mpfr_cmp_si(y, int_max(to)) > 0) return {int_code(int_max(to), to), kNV};
  if (mpfr_cmp_si(y, int_min(to, p)) < 0) return {int_code(int_min(to, p), to), kNV};
  Scratch& s = scratch();
  mpfr_abs(s.a, y, MPFR_RNDN);
  const long mag = static_cast<long>(detail::exact_u64(s, s.a));  // <= 128 here
  return {int_code(mpfr_sgn(y) < 0 ? -mag : mag, to), inexact ? kIX : std::uint8_t{0}};
}

// §6.1, §7.4, §8.2, §9 Floating-point target. y = the operand rounded onto the grid
// (subnormal quantum at the bottom, unbounded at the top); `tiny` per §9.2 / §5.4.
Out finish_float(bool s, const mpfr_t y, bool inexact, bool tiny, Mode ovf, const Format& to, const Policy& p) {
  const Grid g = grid_of(to);
  const Value mx = read_code(to.max_finite, to);
  if (cmpabs_ui_2exp(y, mx.sig, mx.exp) > 0) return overflow_out(s, ovf, to, p);  // §6.1
  if (mpfr_zero_p(y)) return {zero_code(s, to), kUF | kIX};  // §9.2 rounded to zero: tiny, inexact
  if (!g.subnormals && cmpabs_ui_2exp(y, 1, g.emin) < 0) {   // §7.4 below the minimum
    if (p.e8m0_low == E8m0Low::nan && has_nan(to)) return {nan_slot_code(false, to), kNV};  // the NaN, invalid
    return {min_positive_code(to, g), kUF | kIX};
  }
  if (tiny && p.ftz && to.has_zero) return {zero_code(s, to), kUF | kIX};  // §8.2
  std::uint8_t flags = inexact ? kIX : 0;
  if (tiny && inexact) flags |= kUF;  // §9.2
  return {encode_float(y, to, g), flags};
}

// §4 Deterministic rounding of the (signed, exact) operand x. `ovf` = overflow direction.
Out deterministic(const mpfr_t x, bool s, Mode m, Mode ovf, const Format& to, const Policy& p) {
  Scratch& sc = scratch();
  const Grid g = grid_of(to);
  const Dir d = dir_of(m);
  const bool inexact = round_to_grid(sc.y, x, g, d, false);
  if (g.integer) return finish_int(sc.y, inexact, to, p);
  bool tiny = false;
  if (cmpabs_ui_2exp(x, 1, g.emin) < 0) {  // |x| < 2^emin
    if (p.tininess == Tininess::before) {
      tiny = true;
    } else {  // after: rounded with the target precision and an unbounded exponent range
      round_to_grid(sc.u, x, g, d, true);
      tiny = cmpabs_ui_2exp(sc.u, 1, g.emin) < 0;
    }
  }
  return finish_float(s, sc.y, inexact, tiny, ovf, to, p);
}

// ---- §5 stochastic rounding -----------------------------------------------------------

Rational pow2(long e) {
  if (e >= 0) return Rational(BigInt(1) << static_cast<unsigned>(e));
  return Rational(BigInt(1), BigInt(1) << static_cast<unsigned>(-e));
}
Rational rational_of(bool s, std::uint64_t sig, int exp) {
  Rational r = Rational(BigInt(sig)) * pow2(exp);
  return s ? Rational(-r) : r;
}

// Loads the dyadic rational v into y (exact: its odd part has at most 64 bits for every
// value the oracle produces; beyond that it is far outside every format's range).
void load(mpfr_t y, const Rational& v) {
  if (v == 0) {
    mpfr_set_zero(y, 1);
    return;
  }
  const Rational a = v < 0 ? Rational(-v) : v;
  BigInt num = boost::multiprecision::numerator(a);
  const BigInt den = boost::multiprecision::denominator(a);  // a power of two
  long e = -static_cast<long>(boost::multiprecision::msb(den));
  const unsigned tz = boost::multiprecision::lsb(num);
  num >>= tz;
  e += static_cast<long>(tz);
  if (boost::multiprecision::msb(num) >= 64) {
    mpfr_set_ui_2exp(y, 1, e + static_cast<long>(boost::multiprecision::msb(num)) + 1, MPFR_RNDN);
  } else {
    mpfr_set_ui_2exp(y, num.convert_to<unsigned long>(), e, MPFR_RNDN);
  }
  if (v < 0) mpfr_neg(y, y, MPFR_RNDN);
}

// §5.1 variant `fraction`.
Out sr_fraction(const Value& v, bool s, const Format& to, const Policy& p, std::uint64_t r) {
  const int k = p.sr_bits;
  const Rational x = rational_of(s, v.sig, v.exp);
  const SrSplit sp = sr_split(x, to, k);
  const bool up = sp.fk + BigInt(r) >= (BigInt(1) << k);
  const Rational y = up ? sp.upper : sp.lower;
  const bool inexact = y != x;
  Scratch& sc = scratch();
  load(sc.y, y);
  if (is_int(to)) return finish_int(sc.y, inexact, to, p);
  const Grid g = grid_of(to);
  const Rational ax = s ? Rational(-x) : x;
  const bool tiny = ax < pow2(g.emin);  // §5.4 before rounding
  return finish_float(s, sc.y, inexact, tiny, Mode::sr, to, p);
}

// §5.2 variant `add`: r added to the source magnitude bits below the target's ulp, then rtz.
Out sr_add(std::uint32_t code, const Value& v, bool s, const Format& from, const Format& to, const Policy& p,
           std::uint64_t r) {
  const int k = p.sr_bits;
  std::uint64_t mag = (code & width_mask(from)) & magnitude_mask(from);
  const int d = from.man_bits - to.man_bits;
  if (d > 0) mag += k <= d ? (r << (d - k)) : (r >> (k - d));
  // the sum as a finite pattern of the source; the exponent field may pass the top
  const std::uint64_t ef = mag >> from.man_bits;
  const std::uint64_t mf = mag & ((std::uint64_t{1} << from.man_bits) - 1u);
  const Grid gs = grid_of(from);
  Scratch& sc = scratch();
  if (from.has_subnormals && ef == 0) {
    mpfr_set_ui_2exp(sc.sum, mf, gs.qmin, MPFR_RNDN);
  } else {
    mpfr_set_ui_2exp(sc.sum, (std::uint64_t{1} << from.man_bits) | mf,
                     static_cast<long>(ef) - from.bias - from.man_bits, MPFR_RNDN);
  }
  if (s) mpfr_neg(sc.sum, sc.sum, MPFR_RNDN);
  Out out = deterministic(sc.sum, s, Mode::rtz, Mode::sr, to, p);  // overflow as SR: §5.3
  if (out.flags & kNV) return out;  // §9.3 a NaN result from a number raises invalid alone
  // inexact iff the delivered value differs from the operand
  const Value dv = read_code(out.bits, to);
  bool differs = true;
  if (dv.kind == Kind::zero || dv.kind == Kind::subnormal || dv.kind == Kind::normal)
    differs = rational_of(dv.sign, dv.sig, dv.exp) != rational_of(s, v.sig, v.exp);
  // §5.2: the flags of the rtz conversion of the sum, except that inexact is raised iff
  // the delivered value differs from the operand, and a delivered value equal to the
  // operand raises no flag at all (so no underflow without inexact).
  if (differs)
    out.flags |= kIX;
  else
    out.flags = static_cast<std::uint8_t>(out.flags & ~(kIX | kUF));
  return out;
}

}  // namespace

// ---- public ---------------------------------------------------------------------------

// §3.1, from the stated columns only.
Value read_code(std::uint32_t code, const Format& f) {
  code &= width_mask(f);
  Value v{};
  if (is_int(f)) {  // two's complement
    const bool neg = f.is_signed && (code & sign_mask(f)) != 0;
    const std::int64_t val =
        neg ? static_cast<std::int64_t>(code) - (std::int64_t{1} << f.bits) : static_cast<std::int64_t>(code);
    v.sign = neg;
    v.sig = static_cast<std::uint64_t>(neg ? -val : val);
    v.exp = 0;
    v.kind = v.sig == 0 ? Kind::zero : Kind::normal;
    return v;
  }
  v.sign = (code & sign_mask(f)) != 0;
  const std::uint32_t mag = code & magnitude_mask(f);
  const std::uint32_t ef = mag >> f.man_bits;
  const std::uint32_t mf = mag & ((1u << f.man_bits) - 1u);
  const std::uint32_t ones = (1u << f.exp_bits) - 1u;
  if (f.specials == Specials::ieee && ef == ones) {
    v.kind = mf == 0 ? Kind::inf : Kind::nan;
    v.sig = mf;
    v.signaling = mf != 0 && f.man_bits > 0 && ((mf >> (f.man_bits - 1)) & 1u) == 0;
    return v;
  }
  if ((f.specials == Specials::fn && mag == magnitude_mask(f)) || (is_fnuz(f) && code == nan_slot_code(false, f))) {
    v.kind = Kind::nan;  // fnuz: 80, read with its sign bit (1) and payload 0
    v.sig = mf;
    if (is_p3109(f)) {  // §3.1 the P3109 NaN has no sign and no payload
      v.sign = false;
      v.sig = 0;
    }
    return v;
  }
  if (f.specials == Specials::p3109e && mag == (inf_code(false, f) & magnitude_mask(f))) {
    v.kind = Kind::inf;  // §2.5
    return v;
  }
  if (f.has_subnormals && ef == 0) {
    v.kind = mf == 0 ? Kind::zero : Kind::subnormal;
    v.sig = mf;
    v.exp = 1 - f.bias - f.man_bits;
    return v;
  }
  v.kind = Kind::normal;
  v.sig = (std::uint64_t{1} << f.man_bits) | mf;
  v.exp = static_cast<int>(ef) - f.bias - f.man_bits;
  return v;
}

Rational rational_value(std::uint32_t code, const Format& f) {
  const Value v = read_code(code, f);
  if (v.kind == Kind::nan || v.kind == Kind::inf)
    throw std::invalid_argument("oracle::rational_value: not a finite code");
  return rational_of(v.sign, v.sig, v.exp);
}

int compare_values(std::uint32_t a, const Format& fa, std::uint32_t b, const Format& fb) {
  const Value va = read_code(a, fa), vb = read_code(b, fb);
  if (va.kind == Kind::nan || vb.kind == Kind::nan) throw std::invalid_argument("oracle::compare_values: NaN");
  auto rank = [](const Value& v) { return v.kind != Kind::inf ? 0 : (v.sign ? -1 : 1); };
  if (rank(va) != rank(vb)) return rank(va) < rank(vb) ? -1 : 1;
  if (rank(va) != 0) return 0;
  const Rational x = rational_of(va.sign, va.sig, va.exp), y = rational_of(vb.sign, vb.sig, vb.exp);
  return x < y ? -1 : (x > y ? 1 : 0);
}

// §4.3 (k in 1..32 whenever round=sr) and §5.2 (defined for floating-point targets).
std::string validate(const Policy& p, const Format& to) {
  if (p.round == Round::sr) {
    if (p.sr_bits < 1 || p.sr_bits > 32) return "stochastic rounding needs k in 1..32";
    if (p.sr_variant == SrVariant::add && is_int(to)) return "sr_variant=add needs a floating-point target";
  }
  return {};
}

SrSplit sr_split(const Rational& v, const Format& to, int k) {
  if (v == 0) throw std::invalid_argument("oracle::sr_split: zero operand");
  const bool s = v < 0;
  const Rational a = s ? Rational(-v) : v;
  // E = floor(log2 a) from the bit lengths of numerator and denominator, then corrected.
  const BigInt num = boost::multiprecision::numerator(a), den = boost::multiprecision::denominator(a);
  long e = static_cast<long>(boost::multiprecision::msb(num)) - static_cast<long>(boost::multiprecision::msb(den));
  while (pow2(e) > a) --e;
  while (pow2(e + 1) <= a) ++e;
  long q;  // §4.1
  if (is_int(to)) {
    q = 0;
  } else {
    const Grid g = grid_of(to);
    q = e - to.man_bits;
    if (g.subnormals && q < g.qmin) q = g.qmin;
  }
  const Rational scaled = a / pow2(q);
  const BigInt n = boost::multiprecision::numerator(scaled) / boost::multiprecision::denominator(scaled);
  const Rational frac = scaled - Rational(n);
  const Rational fk2 = frac * pow2(k);
  SrSplit sp;
  sp.fk = boost::multiprecision::numerator(fk2) / boost::multiprecision::denominator(fk2);
  sp.lower = Rational(n) * pow2(q);
  sp.upper = Rational(n + 1) * pow2(q);
  if (s) {
    sp.lower = -sp.lower;
    sp.upper = -sp.upper;
  }
  sp.q = static_cast<int>(q);
  return sp;
}

// §7.4 e8m0_low=grid, written from the clause: 0 < |x| < 2^(emin+1); n = |x| / 2^(emin+1) in
// (0, 1) is rounded to the integer 0 or 1 (nearest: up iff n > 1/2, the tie n = 1/2 to the even
// 0; rup: 1; rtz, rdn: 0; sr: up iff floor(n * 2^k) + r >= 2^k); the code is that integer
// (code 00 = 2^emin). Inexact unless |x| = 2^emin gives 00; underflow when |x| < 2^emin.
Out e8m0_grid_out(const mpfr_t ax, Mode m, const Grid& g, const Format& to, const Policy& p, std::uint64_t r) {
  bool up = false;
  const int half = mpfr_cmp_ui_2exp(ax, 1, g.emin);  // n vs 1/2
  switch (m) {
    case Mode::rne:
    case Mode::rna: up = half > 0; break;
    case Mode::rup: up = true; break;
    case Mode::rtz:
    case Mode::rdn: up = false; break;
    case Mode::sr: {
      Scratch& s = scratch();
      mpfr_mul_2si(s.a, ax, p.sr_bits - (g.emin + 1), MPFR_RNDN);  // n * 2^k, exact
      mpfr_floor(s.a, s.a);
      up = detail::exact_u64(s, s.a) + r >= (std::uint64_t{1} << p.sr_bits);
      break;
    }
  }
  std::uint8_t flags = (up || half != 0) ? kIX : 0;
  if (half < 0) flags |= kUF;
  Scratch& s = scratch();
  mpfr_set_ui_2exp(s.y, 1, up ? g.emin + 1 : g.emin, MPFR_RNDN);
  return {encode_float(s.y, to, g), flags};
}

// §11 The conversion, step by step.
Out convert(std::uint32_t code, const Format& from, const Format& to, const Policy& p, std::uint64_t r) {
  const std::string err = validate(p, to);  // 1.
  if (!err.empty()) throw std::invalid_argument(err);
  const Mode m = effective(to, p);
  if (m == Mode::sr && (r >> p.sr_bits) != 0) throw std::invalid_argument("stochastic rounding: r >= 2^k");  // §4.3
  Value v = read_code(code, from);                                                                           // 2.
  if (v.kind == Kind::nan) return nan_out(v, from, to, p);                                                   // 3.
  if (v.kind == Kind::inf) return inf_out(v.sign, to, p);
  if (v.kind == Kind::subnormal && p.daz) v.kind = Kind::zero;  // 4. §8.1
  if (v.kind == Kind::zero) return zero_out(v.sign, to, p);
  bool s = v.sign;
  if (s && !to.is_signed) {  // §7.3 (-0 was a zero above); inf_abs: a finite negative is NaN
    if (p.negative == Negative::nan || p.negative == Negative::inf_abs) return {nan_slot_code(false, to), kNV};
    s = false;
  }
  if (p.e8m0_low == E8m0Low::grid && !to.has_zero && !is_int(to) && to.man_bits == 0) {  // §7.4 grid
    const Grid g = grid_of(to);
    Scratch& sc = scratch();
    mpfr_set_ui_2exp(sc.x, v.sig, v.exp, MPFR_RNDN);  // |x|
    if (mpfr_cmp_ui_2exp(sc.x, 1, g.emin + 1) < 0) return e8m0_grid_out(sc.x, m, g, to, p, r);
  }
  if (m == Mode::sr) {
    if (p.sr_variant == SrVariant::add && !is_int(from)) return sr_add(code, v, s, from, to, p, r);  // 5.
    return sr_fraction(v, s, to, p, r);                                                              // 6.
  }
  Scratch& sc = scratch();  // 6.
  mpfr_set_ui_2exp(sc.x, v.sig, v.exp, MPFR_RNDN);
  if (s) mpfr_neg(sc.x, sc.x, MPFR_RNDN);
  return deterministic(sc.x, s, m, m, to, p);
}

}  // namespace numref::oracle
