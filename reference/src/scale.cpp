// numref — amax and per-block scale rules.                 spec §13 – §16, §18
#include "numref/scale.hpp"

#include <array>
#include <bit>
#include <stdexcept>
#include <string>

#include "names.hpp"
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

std::string scale_rule_names(std::string_view sep) { return detail::join_names(kScaleRules, sep); }

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
  if (rule_info(rule).mx == MxExponent::none) throw std::invalid_argument("mx_scale_code: not an mx rule");
  if (a.poisoned()) return 0xFFu;  // §16.7 NaN scale
  if (a.is_zero()) return 0x00u;   // §16.7 exponent -infinity, clamped to -127
  return mx_scale_code_of(rule, exact_f32(a.f32), q_max, elem_precision);
}

std::uint32_t mx_scale_code_of(ScaleRule rule, const Exact& v, const Exact& q_max, int elem_precision) {
  const MxExponent mx = rule_info(rule).mx;
  if (mx == MxExponent::none) throw std::invalid_argument("mx_scale_code: not an mx rule");
  const int emax = mx_emax_elem(q_max);
  const int E = ilog2(v);
  long e = 0;
  switch (mx) {
    case MxExponent::floor: e = E - emax; break;                        // §16.2
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

std::uint32_t mx_rceil_log2f_code(const Exact& v, const Exact& q_max) {
  const std::uint32_t d = rn32(exact_div(v, q_max));
  if (d == 0) return 0x00u;             // log2(0) = -Inf, clamped
  if (!f32_is_finite(d)) return 0xFEu;  // cannot happen for q_max >= 4
  long e = f32_ceil(log2f_cr(d));
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return static_cast<std::uint32_t>(e + 127);
}

std::uint32_t mx_floor_log2f_code(std::uint32_t amax, const Exact& q_max) {
  const std::uint32_t a = (amax & 0x7FFFFFFFu) == 0 ? 0x00800000u : amax & 0x7FFFFFFFu;  // 0 -> 2^-126
  if (!f32_is_finite(a)) throw std::invalid_argument("mx_floor_log2f_code: amax is not finite");
  long e = f32_floor(log2f_cr(a)) - mx_emax_elem(q_max);
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return static_cast<std::uint32_t>(e + 127);
}

std::uint32_t mx_rceil_div_code(const Exact& v, const Exact& q_max) {
  const std::uint32_t d = rn32(exact_div(v, q_max));
  if (d == 0) return 0x00u;
  if (!f32_is_finite(d)) return 0xFEu;  // cannot happen for q_max >= 4
  const Exact dv = exact_f32(d);
  long e = ilog2(dv) + (is_pow2(dv) ? 0 : 1);
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return static_cast<std::uint32_t>(e + 127);
}

std::uint32_t pow2_log2f(std::uint32_t s) {
  if (!f32_is_finite(s) || s == 0) return s;
  if (s & 0x80000000u) return kF32NaN;  // log2 of a negative scale
  const long k = f32_floor(log2f_cr(s));
  if (k >= -126) return static_cast<std::uint32_t>(k + 127) << 23;
  return 1u << (k + 149);  // k >= -149 for every positive binary32
}

Exact amax_floor_value(AmaxFloor f) {
  switch (f) {
    case AmaxFloor::eps_1e12: {
      const auto b = std::bit_cast<std::uint64_t>(1e-12);  // RN64(1e-12), a normal binary64
      return Exact{false, (b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52),
                   static_cast<int>((b >> 52) & 0x7FF) - 1075, false};
    }
    case AmaxFloor::eps_1e4: return exact_f32(std::bit_cast<std::uint32_t>(1e-4f));
    case AmaxFloor::none: break;
  }
  return Exact{false, 0, 0, false};
}

// ---- §16.8 correctly rounded binary32 log2 ------------------------------------------------

namespace {
using u128 = unsigned __int128;
constexpr int kFrac = 124;  // fixed point: value = X / 2^124

// floor(a * b / 2^124) for a, b < 2^126 (the 256-bit product by 64-bit limbs).
u128 mul_fix(u128 a, u128 b) {
  const auto a0 = static_cast<std::uint64_t>(a), a1 = static_cast<std::uint64_t>(a >> 64);
  const auto b0 = static_cast<std::uint64_t>(b), b1 = static_cast<std::uint64_t>(b >> 64);
  const u128 p00 = static_cast<u128>(a0) * b0, p01 = static_cast<u128>(a0) * b1;
  const u128 p10 = static_cast<u128>(a1) * b0, p11 = static_cast<u128>(a1) * b1;
  const u128 mid = (p00 >> 64) + static_cast<std::uint64_t>(p01) + static_cast<std::uint64_t>(p10);
  const u128 lo = (mid << 64) | static_cast<std::uint64_t>(p00);
  const u128 hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
  return (hi << (128 - kFrac)) | (lo >> kFrac);
}

// floor(2 / ln 2 * 2^124) (126 bits).
constexpr u128 kTwoOverLn2 = (static_cast<u128>(0x2e2a8eca5705fc2eull) << 64) | 0xefa1ffb41a474fa2ull;

// log2(M / 2^23) for 2^23 < M < 2^24 as an interval [lo, lo + 2^13] in units of 2^-124:
// ln m = 2 atanh(z), z = (M - 2^23) / (M + 2^23) < 1/3, so log2 m = atanh(z) * (2 / ln 2).
// Errors (units of 2^-124): z floor 1; each power z^(2k+1) <= k + 2 (floored products of
// values < 1/3); each term one more for the division; truncation of the series below
// 2^-124 after the last non-zero term (z^2 <= 1/9 shrinks it geometrically); at most 80
// terms: < 2^10 in all for atanh(z), times 2.9 plus 2 for the constant and the product.
// The result lies in [lo - 2^12, lo + 2^12]; the caller widens by 2^13 either way.
u128 log2_significand(std::uint32_t M) {
  const std::uint64_t n = M - (1u << 23), d = M + (1u << 23);
  const u128 q = (static_cast<u128>(n) << 100) / d, r = (static_cast<u128>(n) << 100) % d;
  const u128 z = (q << 24) + ((r << 24) / d);
  const u128 z2 = mul_fix(z, z);
  u128 term = z, sum = z;
  for (unsigned k = 1; term != 0; ++k) {
    term = mul_fix(term, z2);
    sum += term / (2 * k + 1);
  }
  return mul_fix(sum, kTwoOverLn2);
}

// RN of a positive fixed-point value V / 2^F to 24 significant bits: (significand, exponent).
std::pair<std::uint32_t, int> round24(u128 v, int frac) {
  int b = 0;
  for (u128 t = v; t != 0; t >>= 1) ++b;
  const int shift = b - 24;  // > 0: these values have more than 24 bits
  std::uint64_t sig = static_cast<std::uint64_t>(v >> shift);
  const u128 rest = v & ((static_cast<u128>(1) << shift) - 1), half = static_cast<u128>(1) << (shift - 1);
  if (rest > half || (rest == half && (sig & 1u))) ++sig;
  int e = shift - frac;
  if (sig == (1u << 24)) {
    sig >>= 1;
    ++e;
  }
  return {static_cast<std::uint32_t>(sig), e};
}
}  // namespace

std::uint32_t log2f_cr(std::uint32_t x) {
  if (f32_is_nan(x)) return x | 0x00400000u;
  if ((x & 0x7FFFFFFFu) == 0) return 0xFF800000u;  // log2(±0) = -Inf
  if (x & 0x80000000u) return kF32NaN;
  if (x == kF32Inf) return kF32Inf;
  // x = M * 2^(E - 23) with 2^23 <= M < 2^24
  std::uint32_t M = x & 0x007FFFFFu;
  int E = static_cast<int>(x >> 23) - 127;
  if ((x >> 23) == 0) {
    const int sh = 24 - bit_length(M);
    M <<= sh;
    E = -126 - sh;
  } else {
    M |= 0x00800000u;
  }
  if (M == (1u << 23)) {  // a power of two: log2 x = E exactly
    if (E == 0) return 0;
    const std::uint32_t a = static_cast<std::uint32_t>(E < 0 ? -E : E);
    const int b = bit_length(a);
    return (E < 0 ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(b - 1 + 127) << 23) |
           ((a << (24 - b)) & 0x007FFFFFu);
  }
  // |log2 x| < 2^8: in units of 2^-117 the magnitude is below 2^125.
  constexpr int kF = 117;
  const u128 L = log2_significand(M) >> (kFrac - kF);  // floor; error now < 2^6 + 1 units
  constexpr u128 kErr = 1u << 7;
  const u128 A = static_cast<u128>(E < 0 ? -E : E) << kF;
  const bool neg = E < 0;
  const u128 lo = neg ? A - L - kErr : A + L - kErr;
  const u128 hi = neg ? A - L + kErr : A + L + kErr;
  const auto rl = round24(lo, kF), rh = round24(hi, kF);
  if (rl != rh) throw std::logic_error("log2f_cr: rounding not decided for " + std::to_string(x));
  const auto [sig, e] = rl;  // value sig * 2^e, 2^23 <= sig < 2^24
  const int be = e + 23 + 127;
  if (be <= 0 || be >= 255) throw std::logic_error("log2f_cr: exponent out of range");
  return (neg ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(be) << 23) | (sig & 0x007FFFFFu);
}

long f32_floor(std::uint32_t x) {
  if (!f32_is_finite(x)) throw std::invalid_argument("f32_floor: not finite");
  if ((x & 0x7FFFFFFFu) == 0) return 0;
  const Exact v = exact_f32(x);
  const bool neg = v.sign;
  std::uint64_t i;
  bool frac = false;
  if (v.exp >= 0) {
    i = v.sig << v.exp;
  } else if (v.exp <= -64) {
    i = 0;
    frac = true;
  } else {
    i = v.sig >> -v.exp;
    frac = (v.sig & ((std::uint64_t{1} << -v.exp) - 1)) != 0;
  }
  const long m = static_cast<long>(i);
  return neg ? -m - (frac ? 1 : 0) : m;
}
long f32_ceil(std::uint32_t x) { return -f32_floor(x ^ 0x80000000u); }

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
  if (f32_is_nan(b.f32) || !f32_is_finite(s_enc)) return e4m3.canonical_nan;
  // a +Inf b_amax under a finite S_enc (inf_block=one_scale, §13.6): RN32(Inf * k) = Inf -> 448 (k > 0:
  // S_enc >= 2688 / FLT_MAX)
  if (f32_is_inf(b.f32)) return encode_max_finite(false, e4m3);
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
  if (a == kF32Inf) return kF32Inf;  // §18.4 beyond binary32: +Inf · RN32(1 / C) = +Inf
  return rn32(exact_mul(exact_f32(a), exact_f32(inv_c)));
}

// ---- §18.5 / §18.6 torchao's NVFP4 arithmetic -----------------------------------------------

namespace {
constexpr std::uint32_t kF32DefaultNaN = 0xFFC00000u;  // x86's NaN of an invalid operation
constexpr std::uint32_t kSign = 0x80000000u;
bool f32_is_zero(std::uint32_t a) { return (a & 0x7FFFFFFFu) == 0; }
bool f32_is_infinite(std::uint32_t a) { return (a & 0x7FFFFFFFu) == kF32Inf; }
}  // namespace

std::uint32_t f32_div_x86(std::uint32_t a, std::uint32_t b) {
  if (f32_is_nan(a)) return a | 0x00400000u;
  if (f32_is_nan(b)) return b | 0x00400000u;
  const std::uint32_t sign = (a ^ b) & kSign;
  if ((f32_is_infinite(a) && f32_is_infinite(b)) || (f32_is_zero(a) && f32_is_zero(b))) return kF32DefaultNaN;
  if (f32_is_infinite(a) || f32_is_zero(b)) return sign | kF32Inf;
  if (f32_is_zero(a) || f32_is_infinite(b)) return sign;
  return rn32(exact_div(exact_f32(a), exact_f32(b)));
}

std::uint32_t f32_mul_x86(std::uint32_t a, std::uint32_t b) {
  if (f32_is_nan(a)) return a | 0x00400000u;
  if (f32_is_nan(b)) return b | 0x00400000u;
  const std::uint32_t sign = (a ^ b) & kSign;
  if ((f32_is_infinite(a) && f32_is_zero(b)) || (f32_is_zero(a) && f32_is_infinite(b))) return kF32DefaultNaN;
  if (f32_is_infinite(a) || f32_is_infinite(b)) return sign | kF32Inf;
  if (f32_is_zero(a) || f32_is_zero(b)) return sign;
  return rn32(exact_mul(exact_f32(a), exact_f32(b)));
}

std::uint32_t nvfp4_decode_tensor_scale(Amax t, const Exact& q_max, bool f32_source) {
  // torch.max(torch.abs(x)) of a tensor with a NaN (AVX-512): 0xFFFFFFFF for binary32, the bf16 0x7FC0
  // for bf16 (widened: 0x7FC00000); the NaN divided by C keeps its bits
  if (f32_is_nan(t.f32)) return f32_source ? 0xFFFFFFFFu : kF32NaN;
  return f32_div_x86(t.f32, nvfp4_global_constant(q_max));
}

namespace {
// torch's float8_e4m3fn -> float32 of a code: the value, or the NaN 7FF00000 with the code's sign.
std::uint32_t e4m3_to_f32(std::uint32_t d) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  if (decode(d, e4m3).cls == Class::nan) return ((d & 0x80u) ? kSign : 0u) | 0x7FF00000u;
  return rn32(exact_value(d, e4m3));  // exact
}
}  // namespace

Nvfp4TorchaoBlock nvfp4_torchao_block(Amax b, std::optional<std::uint32_t> p, const Exact& q_max) {
  const std::uint32_t q = rn32(q_max);                   // 6.0
  const std::uint32_t bs = f32_div_x86(b.f32, q);        // block_scale = max_abs / F4_E2M1_MAX
  const std::uint32_t s = p ? f32_div_x86(bs, *p) : bs;  // / per_tensor_scale
  std::uint32_t code;
  if (f32_is_nan(s)) {
    code = 0x7Fu | ((s & kSign) ? 0x80u : 0u);  // torch.clamp keeps the NaN; .to(float8_e4m3fn): 7F | sign
  } else {
    constexpr std::uint32_t kEps = 0x3C800000u;  // 2^-6 = finfo(float8_e4m3fn).tiny
    const Exact clamped = (s & 0x7FFFFFFFu) < kEps ? exact_f32(kEps)
                          : f32_is_infinite(s)
                              ? exact_value(format(FormatId::f8e4m3fn).max_finite, format(FormatId::f8e4m3fn))
                              : exact_f32(s);
    code = e4m3_satfinite()(clamped).bits;  // clamp(max=448), then RNE
  }
  const std::uint32_t v = e4m3_to_f32(code);
  const std::uint32_t m = p ? f32_div_x86(f32_div_x86(kF32One, *p), v) : f32_div_x86(kF32One, v);
  return {code, m};
}

std::uint32_t nvfp4_torchao_dequant(std::uint32_t d_b, std::optional<std::uint32_t> p) {
  const std::uint32_t v = e4m3_to_f32(d_b);
  return p ? f32_mul_x86(*p, v) : v;
}

}  // namespace numref
