// numref oracle — scales, GAM, quantize, dequantize, fake-quant with exact rationals.
//                                                               spec §12 – §20
#include "numref/oracle/rational_quantize.hpp"

#include <array>
#include <stdexcept>
#include <string>

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
};

}  // namespace

Out quantize(const Spec& s, std::span<const std::uint32_t> x, std::span<const std::uint32_t> random) {
  const Format& src = format(s.source);
  const Format& el = format(s.element);
  const std::size_t rows = s.rows, cols = s.cols;
  if (x.size() != rows * cols) throw std::invalid_argument("oracle: element count mismatch");
  // The descriptive columns of the rule's row (numref/scale.hpp); the arithmetic below is the oracle's.
  const ScaleRuleInfo& info = rule_info(s.rule);
  Policy pol = s.policy;
  if (info.int_range) pol.int_range = *info.int_range;  // §20.2
  const bool fused = s.fused.value_or(info.apply == ScaleApply::fused);
  const bool sr = pol.round == Round::sr;

  // q_max (§14.4, §20.1)
  Rational q = rat::max_finite(el, false, false);
  if (s.q_sig != 0) q = Rational(s.q_sig) * rat::pow2(s.q_exp);
  else if (info.q_max == RuleQmax::element_max_half) q += Rational(1, 2);

  // blocks (§12.2)
  auto eff = [](std::size_t want, std::size_t n) { return (want == 0 || want > n) ? n : want; };
  const std::size_t br = eff(s.block_rows, rows), bc = eff(s.block_cols, cols);
  const std::size_t nbr = (rows + br - 1) / br, nbc = (cols + bc - 1) / bc, nb = nbr * nbc;
  const bool gam = info.kind == ScaleKind::gam;
  const std::size_t gbr = eff(gam ? s.group_rows : 0, rows);
  const std::size_t gbc = eff(gam ? s.group_cols : 0, cols);
  const std::size_t ngc = (cols + gbc - 1) / gbc, ng = ((rows + gbr - 1) / gbr) * ngc;
  auto block_rect = [&](std::size_t b, std::size_t& r0, std::size_t& r1, std::size_t& c0, std::size_t& c1) {
    r0 = (b / nbc) * br;
    r1 = std::min(rows, r0 + br);
    c0 = (b % nbc) * bc;
    c1 = std::min(cols, c0 + bc);
  };

  Out out;
  out.codes.assign(rows * cols, 0);
  out.dequant.assign(rows * cols, 0);
  out.fake.assign(rows * cols, 0);

  // §13 amax per block
  std::vector<A> amax(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    std::size_t r0, r1, c0, c1;
    block_rect(b, r0, r1, c0, c1);
    bool has_nan = false, has_inf = false;
    A a;
    for (std::size_t i = r0; i < r1; ++i)
      for (std::size_t j = c0; j < c1; ++j) {
        const rat::Value v = rat::decode(x[i * cols + j], src);
        if (v.kind == rat::Value::nan) has_nan = true;
        else if (v.kind == rat::Value::inf) has_inf = true;
        else if (v.v != 0) a = combine(a, A{A::fin, v.v < 0 ? Rational(-v.v) : v.v});
      }
    if (has_nan && !s.nan_ignore) a = A{A::nan, 0};
    else if (has_inf && !s.inf_ignore) a = A{A::inf, 0};
    amax[b] = a;
    out.amax.push_back(amax_code(a));
  }
  A tensor;
  for (const A& a : amax) tensor = combine(tensor, a);

  // GAM groups (§17.1)
  std::vector<A> gamax(ng);
  std::vector<std::uint32_t> mg(ng, 0);
  std::vector<bool> gpoison(ng, false);
  auto group_of = [&](std::size_t b) {
    std::size_t r0, r1, c0, c1;
    block_rect(b, r0, r1, c0, c1);
    return (r0 / gbr) * ngc + (c0 / gbc);
  };
  if (gam) {
    for (std::size_t b = 0; b < nb; ++b) gamax[group_of(b)] = combine(gamax[group_of(b)], amax[b]);
    for (std::size_t g = 0; g < ng; ++g) {
      if (poisoned(gamax[g])) {
        gpoison[g] = true;
        continue;
      }
      mg[g] = mant_exp(f32v(scale_S(gamax[g], q))).m;
    }
    out.group_mantissa = mg;
  }

  // NVFP4 (§18)
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  Policy e4m3_sat;
  e4m3_sat.overflow = Overflow::saturate;
  const Rational C = f32v(rat::rn32(rat::max_finite(e4m3, false, false) * q));
  std::uint32_t s_enc = kOne32;
  if (info.kind == ScaleKind::nvfp4) {
    out.tensor_amax = amax_code(tensor);
    if (poisoned(tensor)) s_enc = kNaN32;
    else if (tensor.k != A::zero) s_enc = rat::rn32_sat(C / tensor.v);
  }

  const Format& fake_f = format(s.fake_format);

  for (std::size_t b = 0; b < nb; ++b) {
    const A& a = amax[b];
    std::uint32_t stored = 0;
    bool poison = false;
    Factor qf, df;
    auto undo = [&](const Rational& sv) {
      if (s.dequant_reciprocal) return Factor{false, f32v(rat::rn32(Rational(1) / sv))};
      return Factor{true, sv};
    };
    switch (info.kind) {
      case ScaleKind::fp32_quotient:
      case ScaleKind::pow2: {
        std::uint32_t S = scale_S(a, q);
        if (info.kind == ScaleKind::pow2 && f32_finite(S)) S = rat::rn32(rat::pow2(rat::floor_log2(f32v(S))));  // §15
        stored = S;
        poison = !f32_finite(S);
        if (!poison) {
          qf = Factor{false, f32v(S)};
          df = undo(f32v(S));
        }
        break;
      }
      case ScaleKind::pow2_recip: {  // §15.3 P as §15, stored 1 / P
        std::uint32_t P = scale_S(a, q);
        poison = !f32_finite(P);
        if (!poison) P = rat::rn32(rat::pow2(rat::floor_log2(f32v(P))));
        stored = poison ? kNaN32 : rat::rn32(Rational(1) / f32v(P));
        if (!poison) {
          qf = Factor{false, f32v(P)};
          df = Factor{false, f32v(stored)};
        }
        break;
      }
      case ScaleKind::fp32_recip: {
        const std::uint32_t S = scale_S(a, q);
        poison = !f32_finite(S);
        stored = poison ? kNaN32 : rat::rn32(Rational(1) / f32v(S));
        if (!poison) {
          qf = Factor{false, f32v(S)};
          df = Factor{false, f32v(stored)};
        }
        break;
      }
      case ScaleKind::fp32_dequant: {
        stored = scale_D(a, q);
        poison = !f32_finite(stored);
        if (!poison) {
          qf = Factor{true, f32v(stored)};
          df = Factor{false, f32v(stored)};
        }
        break;
      }
      case ScaleKind::gam: {
        const std::size_t g = group_of(b);
        if (gpoison[g] || poisoned(a)) {
          stored = 0xFF;
          poison = true;
          break;
        }
        const ME sb = mant_exp(f32v(scale_S(a, q)));
        int e = mg[g] <= sb.m ? sb.e : sb.e - 1;
        if (e < -127) e = -127;
        if (e > 127) e = 127;
        stored = static_cast<std::uint32_t>(e + 127);
        const Rational G = (1 + Rational(mg[g]) / rat::pow2(23)) * rat::pow2(e);
        qf = Factor{false, G};
        df = undo(G);
        break;
      }
      case ScaleKind::nvfp4: {
        if (poisoned(tensor) || poisoned(a) || !f32_finite(s_enc)) {
          stored = e4m3.canonical_nan;
          poison = true;
          break;
        }
        const Rational inv_q = f32v(rat::rn32(Rational(1) / q));
        const Rational k = f32v(rat::rn32(f32v(s_enc) * inv_q));
        const std::uint32_t sv = rat::rn32(a.v * k);
        stored = f32_finite(sv) ? rat::round(f32v(sv), false, e4m3, Round::rne, Round::rne, e4m3_sat, 0).code
                                : e4m3.max_finite;
        const Rational db = rat::decode(stored, e4m3).v;
        const Rational s_dec = f32v(rat::rn32(Rational(1) / f32v(s_enc)));
        const Rational den = f32v(rat::rn32(db * s_dec));
        const std::uint32_t c = den == 0 ? kMax32 : rat::rn32_sat(Rational(1) / den);
        qf = Factor{false, f32v(c)};
        const Rational inv_c = f32v(rat::rn32(Rational(1) / C));
        df = Factor{false, f32v(rat::rn32(f32v(rat::rn32(db * f32v(out.tensor_amax))) * inv_c))};
        break;
      }
      case ScaleKind::mx: {  // §16
        if (poisoned(a)) {
          stored = 0xFF;
          poison = true;
          break;
        }
        long e = 0;
        if (a.k == A::zero) {
          e = -1000;
        } else {
          const int emax = rat::floor_log2(q);
          switch (info.mx) {
            case MxExponent::floor: e = rat::floor_log2(a.v) - emax; break;
            case MxExponent::ceil: e = rat::ceil_log2(a.v) - emax; break;
            case MxExponent::even: {
              const int p = el.man_bits + 1;
              const Rational unit = rat::pow2(rat::floor_log2(a.v) - p + 1);
              const Rational t = a.v / unit + Rational(1, 2);
              const rat::BigInt n = boost::multiprecision::numerator(t) / boost::multiprecision::denominator(t);
              e = rat::floor_log2(Rational(n) * unit) - emax;
              break;
            }
            case MxExponent::rceil: e = rat::ceil_log2(a.v / q); break;
            case MxExponent::none: throw std::logic_error("oracle: a rule of kind mx without an exponent rule");
            case MxExponent::rceil_f32: {
              const Rational rq = f32v(rat::rn32(Rational(1) / q));
              const Rational d = f32v(rat::rn32(a.v * rq));
              e = d == 0 ? -1000 : rat::ceil_log2(d);
              break;
            }
          }
        }
        if (e < -127) e = -127;
        if (e > 127) e = 127;
        stored = static_cast<std::uint32_t>(e + 127);
        qf = Factor{true, rat::pow2(static_cast<int>(e))};
        df = Factor{false, rat::pow2(static_cast<int>(e))};
        break;
      }
    }
    out.scales.push_back(stored);

    // §19.2 / §19.3 elements of the block
    std::size_t r0, r1, c0, c1;
    block_rect(b, r0, r1, c0, c1);
    auto from_f32 = [&](std::uint32_t y, std::uint64_t rr) -> rat::Rounded {
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
        const Rational val = field == 0 ? Rational(frac) * rat::pow2(-149)
                                        : Rational((std::uint64_t{1} << 23) + frac) * rat::pow2(static_cast<int>(field) - 150);
        return rat::round(v.sign ? Rational(-val) : val, v.sign, el, Round::rtz, Round::sr, pol, 0);
      }
      return rat::round(v.v, v.sign, el, pol.round, pol.round, pol, rr);
    };
    for (std::size_t i = r0; i < r1; ++i) {
      for (std::size_t j = c0; j < c1; ++j) {
        const std::size_t idx = i * cols + j;
        const std::uint64_t rr = sr ? random[idx] : 0;
        rat::Rounded res;
        if (poison) {
          res = from_f32(kNaN32, rr);
          ++out.nan;
        } else {
          const rat::Value v = rat::decode(x[idx], src);
          if (v.kind == rat::Value::nan) {
            // widened to binary32 with sign and payload, quiet bit set (§6.3 payload)
            const std::uint32_t y = (v.sign ? 0x80000000u : 0u) | kInf32 |
                                    static_cast<std::uint32_t>(v.payload << (23 - src.man_bits)) | 0x00400000u;
            res = from_f32(y, rr);
            ++out.nan;
          } else if (v.kind == rat::Value::inf) {
            res = rat::inf_to(v.sign, el, pol);
            ++out.inf;
          } else if (v.v == 0) {
            res = rat::round(0, v.sign, el, pol.round, pol.round, pol, rr);
          } else {
            const Rational p = qf.divide ? Rational(v.v / qf.v) : Rational(v.v * qf.v);
            if (fused) res = rat::round(p, v.sign, el, pol.round, pol.round, pol, rr);
            else res = from_f32(rat::rn32(p, v.sign), rr);
            if (res.overflow || (el.specials == Specials::integer && res.invalid)) ++out.saturated;
            const rat::Value cv = rat::decode(res.code, el);
            if (cv.kind == rat::Value::finite && cv.v == 0) ++out.flushed;
          }
        }
        out.codes[idx] = static_cast<std::uint8_t>(res.code);
        // §19.3 dequantize
        std::uint32_t dq;
        if (poison) {
          dq = kNaN32;
        } else {
          const rat::Value cv = rat::decode(res.code, el);
          if (cv.kind == rat::Value::nan)
            dq = rat::nan_to(cv.sign, cv.payload, el.man_bits, el.specials == Specials::ieee, F32(), s.wide).code;
          else if (cv.kind == rat::Value::inf)
            dq = (cv.sign ? 0x80000000u : 0u) | kInf32;
          else if (cv.v == 0)
            dq = cv.sign ? 0x80000000u : 0u;
          else
            dq = rat::rn32(df.divide ? Rational(cv.v / df.v) : Rational(cv.v * df.v), cv.sign);
        }
        out.dequant[idx] = dq;
        out.fake[idx] = rat::convert(dq, F32(), fake_f, s.wide, 0).code;  // §19.6
      }
    }
  }
  return out;
}

}  // namespace numref::oracle::rq
