// numref — amax and per-block scale rules.                 spec §13 – §16, §18
#include "numref/scale.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "numref/convert.hpp"

namespace numref {

using detail::bit_length;

// ---- §13 amax ---------------------------------------------------------------------------

Amax block_amax(const TensorView& x, const BlockRange& r, const AmaxPolicy& p) {
  const Format& f = x.format();
  const std::uint32_t mag_mask = f.mag_mask();
  // §13.1 Finite magnitudes are ordered like their codes (sign-magnitude encodings: the
  // exponent field above the fraction, subnormals below normals; tested exhaustively for
  // every source format of at most 16 bits). Magnitudes at or above `special` are Inf/NaN (§2.2).
  const std::uint32_t special = f.first_special_magnitude();
  bool has_nan = false, has_inf = false;
  std::uint32_t best = 0;
  for (std::size_t i = r.r0; i < r.r1; ++i) {
    for (std::size_t j = r.c0; j < r.c1; ++j) {
      const std::uint32_t mag = x.code(i, j) & mag_mask;
      if (mag < special) {
        if (mag > best) best = mag;
      } else if (f.is_inf_magnitude(mag)) {
        has_inf = true;
      } else {
        has_nan = true;
      }
    }
  }
  // §13.2 the policies, NaN first: a block with both NaN and Inf is NaN under propagate.
  if (has_nan && p.nan == AmaxNan::propagate) return Amax{kF32NaN};
  if (has_inf && p.inf == AmaxInf::propagate) return Amax{kF32Inf};
  if (best == 0) return Amax{0};
  return Amax{rn32(exact_value(best, f))};  // exact: every source value is a binary32 value (§12.1)
}

// ---- rule names -------------------------------------------------------------------------

std::string scale_rule_names(std::string_view sep) {
  std::string s;
  for (const ScaleRuleInfo& r : kScaleRules) {
    if (!s.empty()) s += sep;
    s += r.name;
  }
  return s;
}

// ---- §14 FP32 scales --------------------------------------------------------------------

Exact format_qmax(const Format& elem) { return exact_value(encode_max_finite(false, elem), elem); }

Exact rule_qmax(ScaleRule rule, const Format& elem) {
  const Exact m = format_qmax(elem);
  switch (rule_info(rule).q_max) {
    case RuleQmax::element_max: return m;
    case RuleQmax::element_max_half: break;
  }
  // §20.1 max + 1/2, both terms on the exponent e = min(m.exp, -1): 127.5 = 255 * 2^-1 for int8
  const int e = m.exp < -1 ? m.exp : -1;
  return Exact{false, (m.sig << (m.exp - e)) + (std::uint64_t{1} << (-1 - e)), e, false};
}

std::string check_qmax(const Exact& q) {
  if (q.sticky || q.sign || q.sig == 0) return "q_max must be a positive exact value";
  if (compare_abs(q, exact_pow2(2)) < 0) return "q_max must be at least 4";
  if (compare_abs(q, exact_f32(kF32Max)) > 0) return "q_max must not exceed the largest finite binary32";
  const int tz = __builtin_ctzll(q.sig);
  if (bit_length(q.sig >> tz) > 24) return "q_max must have at most 24 significant bits";
  return {};
}

std::uint32_t fp32_amax_scale(Amax a, const Exact& q_max) {
  if (a.poisoned()) return kF32NaN;
  if (a.is_zero()) return kF32One;
  return rn32_sat(exact_div(q_max, exact_f32(a.f32)));
}

std::uint32_t fp32_dequant_scale(Amax a, const Exact& q_max) {
  if (a.poisoned()) return kF32NaN;
  if (a.is_zero()) return kF32One;
  const std::uint32_t d = rn32_sat(exact_div(exact_f32(a.f32), q_max));
  return d == 0 ? kF32MinSub : d;
}

// ---- §15 power-of-two scale ---------------------------------------------------------------

std::uint32_t pow2_floor(std::uint32_t s) {
  if (!f32_is_finite(s)) return s;
  const std::uint32_t mag = s & 0x7FFFFFFFu;
  if (mag == 0) return s;
  if (mag >= 0x00800000u) return s & 0xFF800000u;  // normal: keep sign and exponent field
  // subnormal: the top set bit of the fraction is the power of two
  return (s & 0x80000000u) | (1u << (bit_length(mag) - 1));
}

// ---- §16 MX E8M0 shared scales ------------------------------------------------------------

int mx_emax_elem(const Exact& q_max) { return ilog2(q_max); }

std::uint32_t mx_scale_code(ScaleRule rule, Amax a, const Exact& q_max, int elem_precision) {
  const MxExponent mx = rule_info(rule).mx;
  if (mx == MxExponent::none) throw std::invalid_argument("mx_scale_code: not an mx rule");
  if (a.poisoned()) return 0xFFu;  // §16.7 NaN scale
  if (a.is_zero()) return 0x00u;   // §16.7 exponent -infinity, clamped to -127
  const Exact v = exact_f32(a.f32);
  const int emax = mx_emax_elem(q_max);
  const int E = ilog2(v);
  long e = 0;
  switch (mx) {
    case MxExponent::floor: e = E - emax; break;  // §16.2
    case MxExponent::ceil: e = E + (is_pow2(v) ? 0 : 1) - emax; break;  // §16.3
    case MxExponent::even: {
      // §16.4 amax rounded to the element precision p (ties away, unbounded exponent) moves to
      // the next binade iff its significand is >= 2 - 2^-p, i.e. amax >= (2^(p+1) - 1) * 2^(E-p).
      const Exact threshold{false, (std::uint64_t{1} << (elem_precision + 1)) - 1, E - elem_precision, false};
      e = E + (compare_abs(v, threshold) >= 0 ? 1 : 0) - emax;
      break;
    }
    case MxExponent::rceil: {
      // §16.5 the smallest e with amax <= q_max * 2^e: E8M0 ceiling of the exact amax / q_max.
      const Exact ratio = exact_div(v, q_max);
      e = ilog2(ratio);
      // ratio is an exact power of two iff the quotient has one significant bit and no sticky
      if (!(is_pow2(ratio) && !ratio.sticky)) e += 1;
      break;
    }
    case MxExponent::rceil_f32: {
      // §16.6 descale = RN32(amax * RN32(1 / q_max)); E8M0 ceiling of that binary32 value
      // (cvt.rp.satfinite.ue8m0x2.f32): a power of two keeps its exponent, else one more.
      const std::uint32_t rq = rn32_div(exact_pow2(0), q_max);
      const std::uint32_t d = rn32(exact_mul(v, exact_f32(rq)));
      if (!f32_is_finite(d)) return 0xFFu;  // cannot happen for finite amax and q_max >= 4
      if (d == 0) return 0x00u;
      const Exact dv = exact_f32(d);
      e = ilog2(dv) + (is_pow2(dv) ? 0 : 1);
      break;
    }
    case MxExponent::none: break;
  }
  if (e < -127) e = -127;  // §16.1 clamp to the E8M0 range
  if (e > 127) e = 127;
  return static_cast<std::uint32_t>(e + 127);
}

// ---- §18 NVFP4 ----------------------------------------------------------------------------

std::uint32_t nvfp4_global_constant(const Exact& q_max) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  return rn32(exact_mul(exact_value(e4m3.max_finite, e4m3), q_max));
}

std::uint32_t nvfp4_tensor_scale(Amax t, const Exact& q_max) {
  if (t.poisoned()) return kF32NaN;
  if (t.is_zero()) return kF32One;
  return rn32_sat(exact_div(exact_f32(nvfp4_global_constant(q_max)), exact_f32(t.f32)));
}

namespace {
const Rounder& e4m3_satfinite() {
  static const Rounder r(format(FormatId::f8e4m3fn), [] {
    Policy p;  // RNE, saturate finite (__NV_SATFINITE)
    p.overflow = Overflow::saturate;
    return p;
  }());
  return r;
}
}  // namespace

std::uint32_t nvfp4_block_code(Amax b, std::uint32_t s_enc, const Exact& q_max) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  if (b.poisoned() || !f32_is_finite(s_enc)) return e4m3.canonical_nan;
  const std::uint32_t inv_q = rn32_div(exact_pow2(0), q_max);
  const std::uint32_t k = rn32(exact_mul(exact_f32(s_enc), exact_f32(inv_q)));
  const std::uint32_t s = rn32(exact_mul(exact_f32(b.f32), exact_f32(k)));
  if (!f32_is_finite(s)) return encode_max_finite(false, e4m3);  // +Inf saturates (inf_sat=max)
  return e4m3_satfinite()(exact_f32(s)).bits;
}

std::uint32_t nvfp4_encode_factor(std::uint32_t d_b, std::uint32_t s_enc) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  if (!f32_is_finite(s_enc) || decode(d_b, e4m3).cls == Class::nan) return kF32NaN;
  const std::uint32_t s_dec = rn32(exact_div(exact_pow2(0), exact_f32(s_enc)));
  const std::uint32_t den = rn32(exact_mul(exact_value(d_b, e4m3), exact_f32(s_dec)));
  if (den == 0) return kF32Max;  // 1 / 0 = +Inf, clamped
  return rn32_sat(exact_div(exact_pow2(0), exact_f32(den)));
}

std::uint32_t nvfp4_decode_factor(std::uint32_t d_b, Amax t, const Exact& q_max) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  if (t.poisoned() || decode(d_b, e4m3).cls == Class::nan) return kF32NaN;
  const std::uint32_t inv_c = rn32(exact_div(exact_pow2(0), exact_f32(nvfp4_global_constant(q_max))));
  const std::uint32_t a = rn32(exact_mul(exact_value(d_b, e4m3), exact_f32(t.f32)));
  return rn32(exact_mul(exact_f32(a), exact_f32(inv_c)));
}

}  // namespace numref
