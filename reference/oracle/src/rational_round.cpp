// numref oracle — exact rational decoding and rounding.     spec §3, §4, §5.1, §6
//
// Independent of numref_reference: values are rationals, exponents come from comparisons
// with powers of two, codes are assembled from the table's field widths.
#include "numref/oracle/rational_round.hpp"

#include <stdexcept>
#include <string>

namespace numref::oracle::rat {

Rational pow2(int e) {
  if (e >= 0) return Rational(BigInt(1) << e);
  return Rational(BigInt(1), BigInt(1) << (-e));
}

int floor_log2(const Rational& a) {
  if (a <= 0) throw std::invalid_argument("floor_log2 of a non-positive value");
  const BigInt n = boost::multiprecision::numerator(a), d = boost::multiprecision::denominator(a);
  int e = static_cast<int>(boost::multiprecision::msb(n)) - static_cast<int>(boost::multiprecision::msb(d));
  // 2^(e-1) < a < 2^(e+1): settle by comparison
  while (pow2(e) > a) --e;
  while (pow2(e + 1) <= a) ++e;
  return e;
}

int ceil_log2(const Rational& a) {
  const int e = floor_log2(a);
  return pow2(e) == a ? e : e + 1;
}

namespace {
// Exponent of the smallest normal binade and the quantum of the lowest binade, from the
// table's stated fields (§3.2).
int emin_of(const Format& f) { return f.has_subnormals ? 1 - f.bias : -f.bias; }
int qmin_of(const Format& f) { return emin_of(f) - f.man_bits; }
std::uint32_t sign_bit_of(const Format& f) { return f.is_signed ? (1u << (f.bits - 1)) : 0u; }
std::uint32_t mag_mask_of(const Format& f) {
  const std::uint32_t all = f.bits >= 32 ? 0xFFFFFFFFu : ((1u << f.bits) - 1u);
  return all & ~sign_bit_of(f);
}
std::uint32_t exp_ones(const Format& f) { return (1u << f.exp_bits) - 1u; }
bool p3109(const Format& f) { return f.specials == Specials::p3109e || f.specials == Specials::p3109f; }
// fnuz and P3109 (§2.2, §2.5): one NaN, no −0.
bool fnuz(const Format& f) { return f.specials == Specials::fnuz || p3109(f); }
// The one NaN of those: the sign bit alone (signed), every bit (unsigned P3109).
std::uint32_t one_nan(const Format& f) { return f.is_signed ? sign_bit_of(f) : (1u << f.bits) - 1u; }
// §2.5 the Inf of an extended P3109 format: the largest magnitude (signed), or the one below the NaN.
std::uint32_t p3109_inf(bool sign, const Format& f) {
  return (sign ? sign_bit_of(f) : 0u) | (mag_mask_of(f) - (f.is_signed ? 0u : 1u));
}
// §2.2 / §6.6 The code of a zero with the given sign: fnuz has no −0 (its pattern is the NaN).
std::uint32_t zero_of(bool sign, const Format& f) {
  return f.specials == Specials::integer || fnuz(f) || !sign ? 0u : sign_bit_of(f);
}
}  // namespace

Value decode(std::uint32_t code, const Format& f) {
  Value out;
  const std::uint32_t all = f.bits >= 32 ? 0xFFFFFFFFu : ((1u << f.bits) - 1u);
  code &= all;
  if (f.specials == Specials::integer) {
    const long long raw = static_cast<long long>(code);
    const long long v = (code & sign_bit_of(f)) ? raw - (1LL << f.bits) : raw;
    out.sign = v < 0;
    out.v = Rational(v);
    return out;
  }
  out.sign = (code & sign_bit_of(f)) != 0;
  const std::uint32_t mag = code & mag_mask_of(f);
  const std::uint32_t field = mag >> f.man_bits;
  const std::uint32_t frac = mag & ((1u << f.man_bits) - 1u);
  if ((f.specials == Specials::ieee && field == exp_ones(f) && frac != 0) ||
      (f.specials == Specials::fn && mag == mag_mask_of(f)) || (fnuz(f) && code == one_nan(f))) {
    out.kind = Value::nan;
    out.payload = frac;
    if (p3109(f)) {  // §3.1 the P3109 NaN has no sign and no payload
      out.sign = false;
      out.payload = 0;
    }
    return out;
  }
  if (f.specials == Specials::p3109e && mag == p3109_inf(false, f)) {
    out.kind = Value::inf;
    return out;
  }
  if (f.specials == Specials::ieee && field == exp_ones(f)) {
    out.kind = Value::inf;
    return out;
  }
  Rational m;
  if (field == 0 && f.has_subnormals) {
    m = Rational(frac) * pow2(qmin_of(f));
  } else {
    m = Rational((1u << f.man_bits) + frac) * pow2(static_cast<int>(field) - f.bias - f.man_bits);
  }
  out.v = out.sign ? Rational(-m) : m;
  return out;
}

Rational max_finite(const Format& f, bool negative, bool int_symmetric) {
  if (f.specials == Specials::integer) {
    const long long mx = f.max_finite;
    return Rational(negative && !int_symmetric ? mx + 1 : mx);
  }
  const Value v = decode(f.max_finite, f);
  return v.v;
}

std::uint32_t encode(const Rational& v, bool zero_sign, const Format& f) {
  if (f.specials == Specials::integer) {
    const BigInt n = boost::multiprecision::numerator(v);
    if (boost::multiprecision::denominator(v) != 1) throw std::logic_error("encode: not an integer");
    const long long x = n.convert_to<long long>();
    const std::uint32_t all = (1u << f.bits) - 1u;
    return static_cast<std::uint32_t>(x) & all;
  }
  const bool sign = v < 0 || (v == 0 && zero_sign);
  const std::uint32_t sb = sign ? sign_bit_of(f) : 0u;
  if (v == 0) {
    if (!f.has_zero) throw std::logic_error("encode: zero in a format without zero");
    return zero_of(sign, f);
  }
  const Rational a = v < 0 ? Rational(-v) : v;
  const int e = floor_log2(a);
  std::uint32_t field, frac;
  if (f.has_subnormals && e < emin_of(f)) {
    const Rational n = a / pow2(qmin_of(f));
    if (boost::multiprecision::denominator(n) != 1) throw std::logic_error("encode: off the subnormal grid");
    field = 0;
    frac = boost::multiprecision::numerator(n).convert_to<std::uint32_t>();
  } else {
    const Rational n = a / pow2(e - f.man_bits);
    if (boost::multiprecision::denominator(n) != 1) throw std::logic_error("encode: off the grid");
    field = static_cast<std::uint32_t>(e + f.bias);
    frac = boost::multiprecision::numerator(n).convert_to<std::uint32_t>() - (1u << f.man_bits);
  }
  return sb | (field << f.man_bits) | frac;
}

namespace {
Rounded overflow_result(bool sign, Round ovf_mode, const Format& f, const Policy& p) {
  Rounded o;
  if (f.specials == Specials::integer) {  // §6.5
    o.code =
        encode(sign ? Rational(-max_finite(f, true, p.int_range == IntRange::symmetric)) : max_finite(f, false, false),
               false, f);
    o.invalid = true;
    return o;
  }
  o.overflow = true;
  const std::uint32_t sb = sign ? sign_bit_of(f) : 0u;
  // §2.5: a largest finite value of 0 (p3109_k2p1se, _k2p2se) has no −0 code: −max is +0 there.
  const std::uint32_t maxc = f.max_finite == 0 ? zero_of(false, f) : (f.max_finite | sb);
  if (f.specials == Specials::finite || p.overflow == Overflow::saturate) {
    o.code = maxc;
    return o;
  }
  bool infinite = true;  // IEEE 754 §7.4
  if (ovf_mode == Round::rtz) infinite = false;
  if (ovf_mode == Round::rup) infinite = !sign;
  if (ovf_mode == Round::rdn) infinite = sign;
  if (!infinite) {
    o.code = maxc;
  } else if (f.specials == Specials::ieee) {
    o.code = sb | (exp_ones(f) << f.man_bits);
  } else if (f.specials == Specials::p3109e) {
    o.code = p3109_inf(sign, f);
  } else {
    // the NaN of the infinity slot, with the sign (§6.7 inf_nan=nan: the NaN rule's)
    o.code = fnuz(f)                    ? one_nan(f)
             : p.inf_nan == InfNan::nan ? nan_to(sign, 0, 0, false, f, p).code
                                        : (f.canonical_nan | sb);
  }
  return o;
}
}  // namespace

Rounded round(const Rational& v, bool zero_sign, const Format& f, Round mode, Round ovf_mode, const Policy& p,
              std::uint64_t r) {
  if (p.daz || p.ftz) throw std::invalid_argument("rational oracle: daz / ftz are not modelled");
  Rounded out;
  const bool sign = v < 0 || (v == 0 && zero_sign);
  if (v == 0) {
    out.code = zero_of(sign, f);
    return out;
  }
  const Rational a = v < 0 ? Rational(-v) : v;
  int q = 0;
  if (f.specials != Specials::integer) {
    q = floor_log2(a) - f.man_bits;
    if (f.has_subnormals && q < qmin_of(f)) q = qmin_of(f);
  }
  const Rational t = a / pow2(q);
  const BigInt N = boost::multiprecision::numerator(t) / boost::multiprecision::denominator(t);  // floor (t > 0)
  const Rational frac = t - Rational(N);
  bool up = false;
  const Rational half(1, 2);
  switch (mode) {
    case Round::rne: up = frac > half || (frac == half && (N % 2) == 1); break;
    case Round::rna: up = frac >= half; break;
    case Round::rtz: up = false; break;
    case Round::rup: up = frac > 0 && !sign; break;
    case Round::rdn: up = frac > 0 && sign; break;
    case Round::sr: {
      const int k = p.sr_bits;
      const Rational scaled = frac * pow2(k);
      const BigInt fk = boost::multiprecision::numerator(scaled) / boost::multiprecision::denominator(scaled);
      up = fk + BigInt(r) >= (BigInt(1) << k);
      break;
    }
  }
  const BigInt n = N + (up ? 1 : 0);
  if (n == 0) {
    out.code = zero_of(sign, f);
    return out;
  }
  const Rational mag = Rational(n) * pow2(q);
  if (mag > max_finite(f, sign, p.int_range == IntRange::symmetric)) return overflow_result(sign, ovf_mode, f, p);
  out.code = encode(sign ? Rational(-mag) : mag, sign, f);
  return out;
}

Rounded inf_to(bool sign, const Format& f, const Policy& p) {
  Rounded o;
  const std::uint32_t sb = sign ? sign_bit_of(f) : 0u;
  if (f.specials == Specials::integer) {  // §6.2.1
    o.code =
        encode(sign ? Rational(-max_finite(f, true, p.int_range == IntRange::symmetric)) : max_finite(f, false, false),
               false, f);
    o.invalid = true;
    return o;
  }
  if (p.overflow == Overflow::saturate && p.inf_sat == InfSat::max) {  // §6.2.3
    o.code = f.max_finite | sb;
    o.overflow = true;
    return o;
  }
  if (f.specials == Specials::ieee) {  // §6.2.4
    o.code = sb | (exp_ones(f) << f.man_bits);
    return o;
  }
  if (f.specials == Specials::p3109e) {  // §6.2.4
    o.code = p3109_inf(sign, f);
    return o;
  }
  if (fnuz(f)) {  // §6.2.5, the one NaN
    o.code = one_nan(f);
    o.invalid = true;
    return o;
  }
  if (f.specials == Specials::fn) {  // §6.2.5, §6.7
    o.code = p.inf_nan == InfNan::nan ? nan_to(sign, 0, 0, false, f, p).code : (f.canonical_nan | sb);
    o.invalid = true;
    return o;
  }
  o.code = f.max_finite | sb;  // §6.2.6
  o.invalid = true;
  return o;
}

Rounded nan_to(bool sign, std::uint64_t payload, int from_man, bool from_ieee, const Format& f, const Policy& p) {
  Rounded o;
  if (from_ieee && from_man > 0 && ((payload >> (from_man - 1)) & 1u) == 0) o.invalid = true;  // signaling
  const std::uint32_t sb = sign ? sign_bit_of(f) : 0u;
  if (f.specials == Specials::integer || f.specials == Specials::finite) {  // §6.4
    o.invalid = true;
    switch (p.nan_to_finite) {
      case NanToFinite::zero: o.code = 0; break;
      case NanToFinite::negzero: o.code = f.specials == Specials::integer ? 0u : sign_bit_of(f); break;
      case NanToFinite::max: o.code = f.max_finite; break;
      case NanToFinite::signzero: o.code = f.specials == Specials::integer ? 0u : sb; break;
      case NanToFinite::flipzero: o.code = f.specials == Specials::integer ? 0u : (sb ^ sign_bit_of(f)); break;
    }
    return o;
  }
  if (fnuz(f)) {  // §6.3 one NaN: every option gives it
    o.code = one_nan(f);
    return o;
  }
  switch (p.nan) {  // §6.3
    case NanOut::sign: o.code = f.canonical_nan | sb; break;
    case NanOut::canonical: o.code = f.canonical_nan; break;
    case NanOut::ones: o.code = mag_mask_of(f); break;
    case NanOut::ones_sign: o.code = sb | mag_mask_of(f); break;
    case NanOut::all_ones: o.code = sign_bit_of(f) | mag_mask_of(f); break;
    case NanOut::raw:
    case NanOut::raw_plus:  // raw without the sign
    case NanOut::payload: {
      const std::uint32_t s = p.nan == NanOut::raw_plus ? 0u : sb;
      if (f.specials != Specials::ieee) {
        o.code = f.canonical_nan | s;
        break;
      }
      std::uint64_t pl =
          from_man >= f.man_bits ? (payload >> (from_man - f.man_bits)) : (payload << (f.man_bits - from_man));
      if (p.nan == NanOut::payload) pl |= std::uint64_t{1} << (f.man_bits - 1);  // quieted
      pl &= (std::uint64_t{1} << f.man_bits) - 1;
      if (pl == 0) pl = 1;  // raw: a zero payload would be Inf
      o.code = s | (exp_ones(f) << f.man_bits) | static_cast<std::uint32_t>(pl);
      break;
    }
  }
  return o;
}

Rounded convert(std::uint32_t code, const Format& from, const Format& to, const Policy& p, std::uint64_t r) {
  const Value v = decode(code, from);
  if (v.kind == Value::nan) return nan_to(v.sign, v.payload, from.man_bits, from.specials == Specials::ieee, to, p);
  if (v.kind == Value::inf) return inf_to(v.sign, to, p);
  return round(v.v, v.sign, to, p.round, p.round, p, r);
}

std::uint32_t rn32(const Rational& v, bool zero_sign) {
  static const Policy ieee{};
  return round(v, zero_sign, format(FormatId::f32), Round::rne, Round::rne, ieee, 0).code;
}

std::uint32_t rn32_sat(const Rational& v) {
  static const Policy sat = [] {
    Policy p;
    p.overflow = Overflow::saturate;
    return p;
  }();
  return round(v, false, format(FormatId::f32), Round::rne, Round::rne, sat, 0).code;
}

}  // namespace numref::oracle::rat
