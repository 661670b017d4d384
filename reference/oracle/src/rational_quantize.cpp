// numref oracle — scales, GAM, quantize, dequantize, fake-quant with exact rationals.
//                                                               spec §12 – §20
#include "numref/oracle/rational_quantize.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <span>
#include <string>
#include <vector>

#include "numref/oracle/rational_round.hpp"

namespace numref::oracle::rq {

using rat::Rational;

namespace {

constexpr std::uint32_t kNaN32 = 0x7FC00000u, kInf32 = 0x7F800000u, kOne32 = 0x3F800000u, kMax32 = 0x7F7FFFFFu;

const Format& F32() { return format(FormatId::f32); }

// The amax of a set of elements after the §13.2 policies.
struct A {
  enum Kind { zero, fin, inf, nan } k = zero;
  Rational v = 0;
};
A combine(const A& a, const A& b) {
  if (a.k == A::nan || b.k == A::nan) return A{A::nan, 0};
  if (a.k == A::inf || b.k == A::inf) return A{A::inf, 0};
  if (a.k == A::zero) return b;
  if (b.k == A::zero) return a;
  return a.v >= b.v ? a : b;
}
bool poisoned(const A& a) { return a.k == A::nan || a.k == A::inf; }
std::uint32_t amax_code(const A& a) {
  switch (a.k) {
    case A::zero: return 0;
    case A::nan: return kNaN32;
    case A::inf: return kInf32;
    default: return rat::rn32(a.v);  // exact
  }
}
Rational f32v(std::uint32_t code) { return rat::decode(code, F32()).v; }

// §14.1 S(a)
std::uint32_t scale_S(const A& a, const Rational& q) {
  if (poisoned(a)) return kNaN32;
  if (a.k == A::zero) return kOne32;
  return rat::rn32_sat(q / a.v);
}
// §14.3 D(a)
std::uint32_t scale_D(const A& a, const Rational& q) {
  if (poisoned(a)) return kNaN32;
  if (a.k == A::zero) return kOne32;
  const std::uint32_t d = rat::rn32_sat(a.v / q);
  return d == 0 ? 1u : d;
}
bool f32_finite(std::uint32_t c) { return (c & 0x7FFFFFFFu) < kInf32; }

// (1 + m / 2^23) 2^E of a positive binary32 value
struct ME {
  std::uint32_t m;
  int e;
};
ME mant_exp(const Rational& v) {
  const int e = rat::floor_log2(v);
  const Rational m = (v / rat::pow2(e) - 1) * rat::pow2(23);
  if (boost::multiprecision::denominator(m) != 1) throw std::logic_error("oracle mant_exp: more than 24 bits");
  return ME{boost::multiprecision::numerator(m).convert_to<std::uint32_t>(), e};
}

struct Factor {
  bool divide = false;
  Rational v = 1;
  bool inf = false;  // §18.4 f_b = +Inf
};

// §19.3 How a multiplying scale sv is undone: divide by it, or multiply by RN32(1 / sv).
Factor undo(const Rational& sv, bool reciprocal) {
  if (reciprocal) return Factor{false, f32v(rat::rn32(Rational(1) / sv))};
  return Factor{true, sv};
}

// ---- §12.2 blocks and §17.1 groups, by index arithmetic -------------------------------------

struct Geometry {
  std::size_t rows = 0, cols = 0;
  std::size_t br = 0, bc = 0, nbc = 0, nb = 0;    // block extent, blocks per row, blocks
  std::size_t gbr = 0, gbc = 0, ngc = 0, ng = 0;  // group extent, groups per row, groups

  void block_rect(std::size_t b, std::size_t& r0, std::size_t& r1, std::size_t& c0, std::size_t& c1) const {
    r0 = (b / nbc) * br;
    r1 = std::min(rows, r0 + br);
    c0 = (b % nbc) * bc;
    c1 = std::min(cols, c0 + bc);
  }
  std::size_t group_of(std::size_t b) const {
    std::size_t r0, r1, c0, c1;
    block_rect(b, r0, r1, c0, c1);
    return (r0 / gbr) * ngc + (c0 / gbc);
  }
};

// `groups`: the rule's scale has group mantissas (else one group, the tensor).
Geometry geometry(const Spec& s, bool groups) {
  auto eff = [](std::size_t want, std::size_t n) { return (want == 0 || want > n) ? n : want; };
  Geometry g;
  g.rows = s.rows;
  g.cols = s.cols;
  g.br = eff(s.block_rows, g.rows);
  g.bc = eff(s.block_cols, g.cols);
  const std::size_t nbr = (g.rows + g.br - 1) / g.br;
  g.nbc = (g.cols + g.bc - 1) / g.bc;
  g.nb = nbr * g.nbc;
  g.gbr = eff(groups ? s.group_rows : 0, g.rows);
  g.gbc = eff(groups ? s.group_cols : 0, g.cols);
  g.ngc = (g.cols + g.gbc - 1) / g.gbc;
  g.ng = ((g.rows + g.gbr - 1) / g.gbr) * g.ngc;
  return g;
}

// ---- §13 amax --------------------------------------------------------------------------------

// §13.1 / §13.2 The amax of block b under the spec's NaN / Inf policies.
A amax_of_block(const Spec& s, const Geometry& g, std::span<const std::uint32_t> x, std::size_t b) {
  const Format& src = format(s.source);
  std::size_t r0, r1, c0, c1;
  g.block_rect(b, r0, r1, c0, c1);
  bool has_nan = false, has_inf = false;
  A a;
  for (std::size_t i = r0; i < r1; ++i)
    for (std::size_t j = c0; j < c1; ++j) {
      const rat::Value v = rat::decode(x[i * g.cols + j], src);
      if (v.kind == rat::Value::nan)
        has_nan = true;
      else if (v.kind == rat::Value::inf)
        has_inf = true;
      else if (v.v != 0)
        a = combine(a, A{A::fin, v.v < 0 ? Rational(-v.v) : v.v});
    }
  if (has_nan && !s.nan_ignore) return A{A::nan, 0};
  if (has_inf && !s.inf_ignore) return A{A::inf, 0};
  return a;
}

// ---- the tensor-level state: §17.1 GAM groups, §18.1 NVFP4 tensor scale ---------------------

struct TensorLevel {
  A tensor;                       // §13.4 the amax of every block
  std::vector<std::uint32_t> mg;  // §17.1 per group: the group mantissa
  std::vector<bool> gpoison;      //       and whether the group's amax is poisoned
  Rational C = 0;                 // §18 RN32(q_scale * q_max)
  std::uint32_t s_enc = kOne32;   // §18.1 the tensor encode scale
  std::uint32_t tensor_amax = 0;  // §18.1 the tensor amax (binary32 code)
};

TensorLevel tensor_level(const ScaleRuleInfo& info, const Geometry& g, const std::vector<A>& amax, const Rational& q) {
  TensorLevel t;
  for (const A& a : amax) t.tensor = combine(t.tensor, a);
  t.mg.assign(g.ng, 0);
  t.gpoison.assign(g.ng, false);
  if (info.kind == ScaleKind::gam) {
    std::vector<A> gamax(g.ng);
    for (std::size_t b = 0; b < g.nb; ++b) gamax[g.group_of(b)] = combine(gamax[g.group_of(b)], amax[b]);
    for (std::size_t i = 0; i < g.ng; ++i) {
      if (poisoned(gamax[i])) {
        t.gpoison[i] = true;
        continue;
      }
      t.mg[i] = mant_exp(f32v(scale_S(gamax[i], q))).m;
    }
  }
  t.C = f32v(rat::rn32(rat::max_finite(format(FormatId::f8e4m3fn), false, false) * q));
  if (info.kind == ScaleKind::nvfp4) {
    t.tensor_amax = amax_code(t.tensor);
    if (poisoned(t.tensor))
      t.s_enc = kNaN32;
    else if (t.tensor.k != A::zero)
      t.s_enc = rat::rn32_sat(t.C / t.tensor.v);
  }
  return t;
}

// ---- §14 – §18, §20 the scale of one block ---------------------------------------------------

// The stored scale of a block, whether it poisons the block, and its factors (§19.2, §19.3).
struct Scaled {
  std::uint32_t stored = 0;
  bool poison = false;
  Factor qf, df;
};

// §14.1 S, §15 P = 2^E(S) (kind pow2), stored as is and undone by the spec's dequantization.
Scaled quotient_scale(bool pow2, const A& a, const Rational& q, bool reciprocal) {
  Scaled r;
  std::uint32_t S = scale_S(a, q);
  if (pow2 && f32_finite(S)) S = rat::rn32(rat::pow2(rat::floor_log2(f32v(S))));  // §15
  r.stored = S;
  r.poison = !f32_finite(S);
  if (!r.poison) {
    r.qf = Factor{false, f32v(S)};
    r.df = undo(f32v(S), reciprocal);
  }
  return r;
}

// §14.2 quantize with S (§15.3: with P = 2^E(S)), store RN32(1 / S) (1 / P, exact).
Scaled recip_scale(bool pow2, const A& a, const Rational& q) {
  Scaled r;
  std::uint32_t S = scale_S(a, q);
  r.poison = !f32_finite(S);
  if (!r.poison && pow2) S = rat::rn32(rat::pow2(rat::floor_log2(f32v(S))));
  r.stored = r.poison ? kNaN32 : rat::rn32(Rational(1) / f32v(S));
  if (!r.poison) {
    r.qf = Factor{false, f32v(S)};
    r.df = Factor{false, f32v(r.stored)};
  }
  return r;
}

// §14.3 / §20.1 D = RN32(amax / q): quantize x / D, dequantize v · D.
Scaled dequant_scale(const A& a, const Rational& q) {
  Scaled r;
  r.stored = scale_D(a, q);
  r.poison = !f32_finite(r.stored);
  if (!r.poison) {
    r.qf = Factor{true, f32v(r.stored)};
    r.df = Factor{false, f32v(r.stored)};
  }
  return r;
}

// §17.2 The E8M0 block exponent under the group mantissa m_g: G = (1 + m_g / 2^23) 2^e.
Scaled gam_scale(const A& a, const Rational& q, std::uint32_t m_g, bool group_poisoned, bool reciprocal) {
  Scaled r;
  if (group_poisoned || poisoned(a)) {
    r.stored = 0xFF;
    r.poison = true;
    return r;
  }
  const ME sb = mant_exp(f32v(scale_S(a, q)));
  int e = m_g <= sb.m ? sb.e : sb.e - 1;
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  r.stored = static_cast<std::uint32_t>(e + 127);
  const Rational G = (1 + Rational(m_g) / rat::pow2(23)) * rat::pow2(e);
  r.qf = Factor{false, G};
  r.df = undo(G, reciprocal);
  return r;
}

// §18.2 – §18.4 The E4M3 block scale d_b under the tensor scale, its encode and decode factors.
Scaled nvfp4_scale(const A& a, const Rational& q, const TensorLevel& t) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  Scaled r;
  if (poisoned(t.tensor) || poisoned(a) || !f32_finite(t.s_enc)) {
    r.stored = e4m3.canonical_nan;
    r.poison = true;
    return r;
  }
  Policy e4m3_sat;
  e4m3_sat.overflow = Overflow::saturate;
  const Rational inv_q = f32v(rat::rn32(Rational(1) / q));
  const Rational k = f32v(rat::rn32(f32v(t.s_enc) * inv_q));
  const std::uint32_t sv = rat::rn32(a.v * k);
  r.stored =
      f32_finite(sv) ? rat::round(f32v(sv), false, e4m3, Round::rne, Round::rne, e4m3_sat, 0).code : e4m3.max_finite;
  const Rational db = rat::decode(r.stored, e4m3).v;
  const Rational s_dec = f32v(rat::rn32(Rational(1) / f32v(t.s_enc)));
  const Rational den = f32v(rat::rn32(db * s_dec));
  const std::uint32_t c = den == 0 ? kMax32 : rat::rn32_sat(Rational(1) / den);
  r.qf = Factor{false, f32v(c)};
  const Rational inv_c = f32v(rat::rn32(Rational(1) / t.C));
  const std::uint32_t dt = rat::rn32(db * f32v(t.tensor_amax));  // beyond binary32: +Inf, so f_b = +Inf
  r.df = f32_finite(dt) ? Factor{false, f32v(rat::rn32(f32v(dt) * inv_c))} : Factor{false, 0, true};
  return r;
}

// §16.2 – §16.6 The exponent e of X = 2^e for a finite non-zero amax v (before the clamp).
long mx_exponent(MxExponent rule, const Rational& v, const Rational& q, const Format& el) {
  const int emax = rat::floor_log2(q);
  switch (rule) {
    case MxExponent::floor: return rat::floor_log2(v) - emax;
    case MxExponent::ceil: return rat::ceil_log2(v) - emax;
    case MxExponent::even: {
      const int p = el.man_bits + 1;
      const Rational unit = rat::pow2(rat::floor_log2(v) - p + 1);
      const Rational t = v / unit + Rational(1, 2);
      const rat::BigInt n = boost::multiprecision::numerator(t) / boost::multiprecision::denominator(t);
      return rat::floor_log2(Rational(n) * unit) - emax;
    }
    case MxExponent::rceil: return rat::ceil_log2(v / q);
    case MxExponent::none: throw std::logic_error("oracle: a rule of kind mx without an exponent rule");
    case MxExponent::rceil_f32: {
      const Rational rq = f32v(rat::rn32(Rational(1) / q));
      const Rational d = f32v(rat::rn32(v * rq));
      return d == 0 ? -1000 : rat::ceil_log2(d);
    }
  }
  return 0;
}

// §16 The E8M0 shared scale X = 2^e, e clamped to [-127, 127] (amax 0: -infinity, clamped).
Scaled mx_scale(MxExponent rule, const A& a, const Rational& q, const Format& el) {
  Scaled r;
  if (poisoned(a)) {
    r.stored = 0xFF;
    r.poison = true;
    return r;
  }
  long e = a.k == A::zero ? -1000 : mx_exponent(rule, a.v, q, el);
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  r.stored = static_cast<std::uint32_t>(e + 127);
  r.qf = Factor{true, rat::pow2(static_cast<int>(e))};
  r.df = Factor{false, rat::pow2(static_cast<int>(e))};
  return r;
}

// The scale of block b (amax a) by the kind of the rule's row.
Scaled scale_of_block(const Spec& s, const ScaleRuleInfo& info, const Geometry& g, const TensorLevel& t,
                      const Rational& q, std::size_t b, const A& a) {
  switch (info.kind) {
    case ScaleKind::fp32_quotient: return quotient_scale(false, a, q, s.dequant_reciprocal);
    case ScaleKind::pow2: return quotient_scale(true, a, q, s.dequant_reciprocal);
    case ScaleKind::pow2_recip: return recip_scale(true, a, q);
    case ScaleKind::fp32_recip: return recip_scale(false, a, q);
    case ScaleKind::fp32_dequant: return dequant_scale(a, q);
    case ScaleKind::gam: return gam_scale(a, q, t.mg[g.group_of(b)], t.gpoison[g.group_of(b)], s.dequant_reciprocal);
    case ScaleKind::nvfp4: return nvfp4_scale(a, q, t);
    case ScaleKind::mx: return mx_scale(info.mx, a, q, format(s.element));
  }
  return {};
}

// ---- §19.2 / §19.3 / §19.6 the elements ------------------------------------------------------

// The element conversions of a spec: quantize one element, dequantize its code.
struct Elements {
  const Format& src;
  const Format& el;
  const Format& fake_f;
  Policy pol;  // the element policy, the rule's integer range applied (§20.2)
  Policy wide;
  bool fused, sr;

  // §19.2 a binary32 y converted to the element (rn32 application, NaN / Inf codes).
  rat::Rounded from_f32(std::uint32_t y, std::uint64_t rr) const {
    const rat::Value v = rat::decode(y, F32());
    if (v.kind == rat::Value::nan) return rat::nan_to(v.sign, v.payload, 23, true, el, pol);
    if (v.kind == rat::Value::inf) return rat::inf_to(v.sign, el, pol);
    if (sr && pol.sr_variant == SrVariant::add && v.v != 0) {
      // §5.2 add r below the element's ulp to the binary32 pattern, then truncate
      const int d = 23 - el.man_bits;
      const int k = pol.sr_bits;
      std::uint64_t mag = y & 0x7FFFFFFFu;
      if (d > 0) mag += k <= d ? (rr << (d - k)) : (rr >> (k - d));
      const std::uint64_t field = mag >> 23, frac = mag & 0x7FFFFFu;
      const Rational val = field == 0
                               ? Rational(frac) * rat::pow2(-149)
                               : Rational((std::uint64_t{1} << 23) + frac) * rat::pow2(static_cast<int>(field) - 150);
      return rat::round(v.sign ? Rational(-val) : val, v.sign, el, Round::rtz, Round::sr, pol, 0);
    }
    return rat::round(v.v, v.sign, el, pol.round, pol.round, pol, rr);
  }

  // §19.2 The element code of source code xc in a block with scale bs; counts into `out`.
  rat::Rounded quantize(std::uint32_t xc, std::uint64_t rr, const Scaled& bs, Out& out) const {
    if (bs.poison) {
      ++out.nan;
      return from_f32(kNaN32, rr);
    }
    const rat::Value v = rat::decode(xc, src);
    if (v.kind == rat::Value::nan) {
      // widened to binary32 with sign and payload, quiet bit set (§6.3 payload)
      const std::uint32_t y = (v.sign ? 0x80000000u : 0u) | kInf32 |
                              static_cast<std::uint32_t>(v.payload << (23 - src.man_bits)) | 0x00400000u;
      ++out.nan;
      return from_f32(y, rr);
    }
    if (v.kind == rat::Value::inf) {
      ++out.inf;
      return rat::inf_to(v.sign, el, pol);
    }
    if (v.v == 0) return rat::round(0, v.sign, el, pol.round, pol.round, pol, rr);
    const Rational p = bs.qf.divide ? Rational(v.v / bs.qf.v) : Rational(v.v * bs.qf.v);
    const rat::Rounded res =
        fused ? rat::round(p, v.sign, el, pol.round, pol.round, pol, rr) : from_f32(rat::rn32(p, v.sign), rr);
    if (res.overflow || (el.specials == Specials::integer && res.invalid)) ++out.saturated;
    const rat::Value cv = rat::decode(res.code, el);
    if (cv.kind == rat::Value::finite && cv.v == 0) ++out.flushed;
    return res;
  }

  // §19.3 The binary32 value of element code c in a block with scale bs.
  std::uint32_t dequantize(std::uint32_t c, const Scaled& bs) const {
    if (bs.poison) return kNaN32;
    const rat::Value cv = rat::decode(c, el);
    if (cv.kind == rat::Value::nan)
      return rat::nan_to(cv.sign, cv.payload, el.man_bits, el.specials == Specials::ieee, F32(), wide).code;
    if (cv.kind == rat::Value::inf) return (cv.sign ? 0x80000000u : 0u) | kInf32;
    if (cv.v == 0) return cv.sign ? 0x80000000u : 0u;
    if (bs.df.inf) return (cv.sign ? 0x80000000u : 0u) | kInf32;  // v · +Inf, v finite non-zero
    return rat::rn32(bs.df.divide ? Rational(cv.v / bs.df.v) : Rational(cv.v * bs.df.v), cv.sign);
  }
};

// The elements of block b: codes, dequantized values and fake-quant codes into `out`.
void quantize_block(const Elements& e, const Geometry& g, std::size_t b, const Scaled& bs,
                    std::span<const std::uint32_t> x, std::span<const std::uint32_t> random, Out& out) {
  std::size_t r0, r1, c0, c1;
  g.block_rect(b, r0, r1, c0, c1);
  for (std::size_t i = r0; i < r1; ++i) {
    for (std::size_t j = c0; j < c1; ++j) {
      const std::size_t idx = i * g.cols + j;
      const rat::Rounded res = e.quantize(x[idx], e.sr ? random[idx] : 0, bs, out);
      out.codes[idx] = static_cast<std::uint8_t>(res.code);
      out.dequant[idx] = e.dequantize(res.code, bs);
      out.fake[idx] = rat::convert(out.dequant[idx], F32(), e.fake_f, e.wide, 0).code;  // §19.6
    }
  }
}

}  // namespace

Out quantize(const Spec& s, std::span<const std::uint32_t> x, std::span<const std::uint32_t> random) {
  if (x.size() != s.rows * s.cols) throw std::invalid_argument("oracle: element count mismatch");
  // The descriptive columns of the rule's row (numref/scale.hpp); the arithmetic is the oracle's.
  const ScaleRuleInfo& info = rule_info(s.rule);
  const Format& el = format(s.element);
  Policy pol = s.policy;
  if (info.int_range) pol.int_range = *info.int_range;  // §20.2
  const Elements e{
      format(s.source),      el, format(s.fake_format), pol, s.wide, s.fused.value_or(info.apply == ScaleApply::fused),
      pol.round == Round::sr};

  // q_max (§14.4, §20.1)
  Rational q = rat::max_finite(el, false, false);
  if (s.q_sig != 0)
    q = Rational(s.q_sig) * rat::pow2(s.q_exp);
  else if (info.q_max == RuleQmax::element_max_half)
    q += Rational(1, 2);

  const Geometry g = geometry(s, info.tensor_output == TensorOutput::group_mantissa);
  Out out;
  out.codes.assign(s.rows * s.cols, 0);
  out.dequant.assign(s.rows * s.cols, 0);
  out.fake.assign(s.rows * s.cols, 0);
  std::vector<A> amax(g.nb);
  for (std::size_t b = 0; b < g.nb; ++b) {
    amax[b] = amax_of_block(s, g, x, b);
    out.amax.push_back(amax_code(amax[b]));
  }
  const TensorLevel t = tensor_level(info, g, amax, q);
  if (info.tensor_output == TensorOutput::group_mantissa) out.group_mantissa = t.mg;  // §17.1 / §18.1
  if (info.tensor_output == TensorOutput::tensor_amax) out.tensor_amax = t.tensor_amax;
  for (std::size_t b = 0; b < g.nb; ++b) {
    const Scaled bs = scale_of_block(s, info, g, t, q, b, amax[b]);
    out.scales.push_back(bs.stored);
    quantize_block(e, g, b, bs, x, random, out);
  }
  return out;
}

}  // namespace numref::oracle::rq
