// numref — exact-arithmetic helpers for scales and quantization.   spec §1.2, §3, §4.4
#include "numref/exact.hpp"

#include <stdexcept>
#include <string>

#include "numref/convert.hpp"

namespace numref {

using detail::bit_length;

Exact exact_value(std::uint32_t code, const Format& f) {
  const Decoded d = decode(code, f);
  if (d.cls == Class::nan || d.cls == Class::inf)
    throw std::invalid_argument("exact_value: code " + std::to_string(code) + " of " + std::string(f.name) +
                                " is not finite");
  return Exact{d.sign, d.sig, d.exp, false};
}

int ilog2(const Exact& v) {
  if (v.sig == 0) throw std::invalid_argument("ilog2 of zero");
  return v.exp + bit_length(v.sig) - 1;
}

bool is_pow2(const Exact& v) { return v.sig != 0 && (v.sig & (v.sig - 1)) == 0; }

int compare_abs(const Exact& a, const Exact& b) {
  if (a.sig == 0 || b.sig == 0) return (a.sig != 0) - (b.sig != 0);
  const int ea = ilog2(a), eb = ilog2(b);
  if (ea != eb) return ea < eb ? -1 : 1;
  // Same binade: align the significands at the smaller exponent; both fit in 64 bits
  // after alignment since their top bits coincide.
  const int la = bit_length(a.sig), lb = bit_length(b.sig);
  std::uint64_t sa = a.sig, sb = b.sig;
  if (la < lb)
    sa <<= (lb - la);
  else if (lb < la)
    sb <<= (la - lb);
  return sa < sb ? -1 : (sa > sb ? 1 : 0);
}

Exact exact_mul(const Exact& a, const Exact& b) {
  if (a.sticky || b.sticky) throw std::logic_error("exact_mul: operands must be exact (no sticky bit)");
  const bool sign = a.sign != b.sign;
  if (a.sig == 0 || b.sig == 0) return Exact{sign, 0, 0, false};
  std::uint64_t sa = a.sig, sb = b.sig;
  int e = a.exp + b.exp;
  const int ta = __builtin_ctzll(sa), tb = __builtin_ctzll(sb);
  sa >>= ta;
  sb >>= tb;
  e += ta + tb;
  if (bit_length(sa) + bit_length(sb) > 64) throw std::logic_error("exact_mul: product wider than 64 bits");
  return Exact{sign, sa * sb, e, false};
}

Exact exact_div(const Exact& a, const Exact& b) {
  if (a.sticky || b.sticky) throw std::logic_error("exact_div: operands must be exact (no sticky bit)");
  if (b.sig == 0) throw std::invalid_argument("exact_div: division by zero");
  return divide_to_exact(a.sign != b.sign, a.sig, a.exp, b.sig, b.exp);
}

Rounder::Rounder(const Format& to, const Policy& p) : t_(detail::make_target(to, p)), p_(p) {
  const std::string err = validate(p, to);
  if (!err.empty()) throw std::invalid_argument(err);
}

namespace {
const Rounder& rn32_rounder() {
  static const Rounder r(format(FormatId::f32), Policy{});  // rne, nonsat: IEEE 754 binary32
  return r;
}
const Rounder& rn32_sat_rounder() {
  static const Rounder r(format(FormatId::f32), [] {
    Policy p;
    p.overflow = Overflow::saturate;
    return p;
  }());
  return r;
}
}  // namespace

std::uint32_t rn32(const Exact& x) { return rn32_rounder()(x).bits; }
std::uint32_t rn32_sat(const Exact& x) { return rn32_sat_rounder()(x).bits; }

MantExp mant_exp(const Exact& v) {
  if (v.sig == 0 || v.sticky) throw std::invalid_argument("mant_exp: needs a non-zero exact value");
  const int tz = __builtin_ctzll(v.sig);
  const std::uint64_t sig = v.sig >> tz;
  const int bl = bit_length(sig);
  if (bl > 24) throw std::invalid_argument("mant_exp: more than 24 significant bits");
  const std::uint64_t norm = sig << (24 - bl);  // 1.m with 23 fraction bits
  return MantExp{static_cast<std::uint32_t>(norm & 0x7FFFFFu), v.exp + tz + bl - 1};
}

}  // namespace numref
