// numref CUDA kernels — per-element conversion arithmetic (the portable path).   spec §A.2
//
// These functions are what every cast kernel of cuda/src computes for one element (the
// sm_89+ / sm_80+ hardware path of cast_hw.cuh replaces the finite rounding of two of them
// by `cvt` instructions, §A.5). They are an independent implementation of spec §3–§8 for the
// conversions the kernels offer: integer bit manipulation on the codes, with no call into
// the reference and no floating-point arithmetic, written the way a production kernel is
// (branch-light straight-line code, constants from the descriptor table).
//
//   convert_as<S, D, M, V>(bits, specials, k, r)   the kernels' form: the rounding mode M
//                                    (and SR variant V) fixed at compile time, the policy's
//                                    special-value codes precomputed once per launch
//                                    (make_special_codes); straight-line code;
//   convert<S, D>(bits, policy, r)   the same with the mode chosen at run time (tests, callers
//                                    that do not specialise);
//     S: f32, bf16, f16, f8e4m3fn, f8e5m2, FP6, FP4; D: the same list (a signed format with a
//     zero); modes rne, rna, rtz, rup, rdn, sr (§5.1 fraction, §5.2 add);
//   hardware_lane<S, D, Sat>(x, hw, specials)   the §A.5 fix-up of a hardware cvt result;
//   to_e8m0<S>(bits, policy)         f32 / bf16 to f8e8m0fnu (§7): floor, ceil, even, tiesup.
//
// What they do NOT implement (the policy mapping of policy_map.hpp refuses these with an
// error naming the knob): daz=1, ftz=1, stochastic rounding into f8e8m0fnu, integer
// targets. Exception flags are not computed (a kernel returns codes only), so `tininess`
// has no effect on a kernel's output.
//
// The host tests (cuda/tests/test_cuda_*.cpp) compare every function here with
// numref::Converter: exhaustively on all 8- and 16-bit sources (every r of small k for SR)
// and on millions of structured and random f32 codes, compiled by g++ and by nvcc.
#pragma once

#include <cstdint>

#include "numref/policy.hpp"
#include "numref/round_increment.hpp"
#include "numref_arith/config.cuh"
#include "numref_arith/format_traits.cuh"

namespace numref_cuda {

// ---- policy -----------------------------------------------------------------------------

// The knobs' values are numref's own enums (numref/policy.hpp, whose knob table gives their
// canonical words and C ABI values): a kernel argument holds them directly, so there is no
// second enumeration to keep in step.
// §4.2 / §5 rounding of a finite operand (after the §7.1 e8m0 mapping: numref::effective_round).
using Mode = numref::Round;
// §5.1 / §5.2 how the random bits are applied.
using SrVariant = numref::SrVariant;
// §6.3 the NaN produced from a NaN operand (targets with NaN).
using NanOut = numref::NanOut;
// §6.4 a NaN operand into a target without NaN (FP6, FP4).
using NanToFinite = numref::NanToFinite;

// §A.2 The knobs a cast kernel implements, as a trivially copyable kernel argument. Build
// it from a numref::Policy with cast_policy() (policy_map.hpp), which rejects what the
// kernels do not implement; the profile cuda_satfinite for an 8-bit target is
//   {rne, k=0, fraction, saturate=true, inf_to_max=true, NanOut::ones, NanToFinite::max}.
struct CastPolicy {
  Mode mode = Mode::rne;
  std::uint8_t sr_bits = 0;  // k in 1..32 when mode == sr (§4.3)
  SrVariant sr_variant = SrVariant::fraction;
  bool saturate = false;   // §6.1 overflow=saturate
  bool inf_to_max = true;  // §6.2 inf_sat=max (only read when saturating)
  NanOut nan = NanOut::payload;
  NanToFinite nan_to_finite = NanToFinite::zero;
};

// §7.1 rounding into f8e8m0fnu: floor, ceil, even or tiesup (e8m0_policy() resolves `follow`,
// which a kernel argument never holds).
using E8m0Mode = numref::E8m0Round;

// §A.2 The knobs of the f8e8m0fnu cast; cuda_satfinite is
//   {floor, saturate=true, inf_to_max=true, zero_to_min=true, negative_abs=true}.
struct E8m0Policy {
  E8m0Mode mode = E8m0Mode::even;
  bool saturate = false;      // §6.1 / §7.5
  bool inf_to_max = true;     // §6.2 inf_sat=max
  bool zero_to_min = false;   // §7.2 zero_to_nozero=min (else NaN)
  bool negative_abs = false;  // §7.3 negative=abs (else NaN)
};

// §4.3 A random value r is valid for k bits iff r < 2^k. The kernels never mask r: they
// report an invalid one (see the status word of the cast kernels, §A.3).
NUMREF_HD NUMREF_FORCEINLINE bool sr_value_valid(std::uint32_t r, int k) { return k >= 32 || (r >> k) == 0u; }

// §A.2 The codes of the special cases of one (target, policy), computed once per launch
// so that the per-element code is straight-line: [0] for a positive, [1] for a negative
// operand. `nan_payload` selects the §6.3 payload rule (computed per element) over nan[].
template <class D>
struct SpecialCodes {
  std::uint32_t nan[2];  // §6.3 / §6.4 NaN operand (payload rule: see nan_payload)
  std::uint32_t inf[2];  // §6.2 infinite operand
  std::uint32_t ovf[2];  // §6.1 overflow of a finite operand, in the policy's direction
  bool nan_payload;      // §6.3 nan=payload into a target with Inf: sign | Inf | payload | quiet
};

namespace detail {

// §6.1 The code of an overflow of a finite value; `dir` is the IEEE 754 §7.4 direction
// rule (stochastic rounding, and §5.2 whose truncation overflows "to nearest", §5.3).
template <class D>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t overflow_code(bool sign, Mode dir, bool saturate) {
  const std::uint32_t sgn = sign ? D::sign_bit : 0u;
  const std::uint32_t max_code = D::max_finite | sgn;
  if (!D::has_nan || saturate) return max_code;  // FP6 / FP4 always saturate
  const bool to_infinity = dir == Mode::rne || dir == Mode::rna || dir == Mode::sr || (dir == Mode::rup && !sign) ||
                           (dir == Mode::rdn && sign);
  if (!to_infinity) return max_code;
  // ±Inf, or where the infinity slot is a NaN (f8e4m3fn) that NaN with the sign of x.
  return (D::has_inf ? D::inf_mag : D::canonical_nan) | sgn;
}

// §6.3 / §6.4 The code for a NaN operand when it does not depend on the payload.
template <class D>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t nan_code(bool sign, const CastPolicy& p) {
  const std::uint32_t sgn = sign ? D::sign_bit : 0u;
  if constexpr (!D::has_nan) {
    switch (p.nan_to_finite) {
      case NanToFinite::zero: return 0u;
      case NanToFinite::negzero: return D::sign_bit;
      default: return D::max_finite;
    }
  } else {
    switch (p.nan) {
      case NanOut::canonical: return D::canonical_nan;
      case NanOut::ones: return D::mag_mask;
      default: return D::canonical_nan | sgn;  // sign; payload into f8e4m3fn (one NaN per sign)
    }
  }
}

// §6.3 nan=payload into an IEEE target (IEEE 754 §6.2.3): the source fraction `frac`
// truncated or zero-extended to the target's width, the quiet bit set.
template <class S, class D>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t nan_payload_code(bool sign, std::uint32_t frac) {
  std::uint32_t pl;
  if constexpr (S::man >= D::man)
    pl = frac >> (S::man - D::man);
  else
    pl = frac << (D::man - S::man);
  pl |= 1u << (D::man - 1);
  return (sign ? D::sign_bit : 0u) | D::inf_mag | (pl & D::man_mask);
}

// §6.2 The code for an infinite operand.
template <class D>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t inf_code(bool sign, const CastPolicy& p) {
  const std::uint32_t sgn = sign ? D::sign_bit : 0u;
  if (p.saturate && p.inf_to_max) return D::max_finite | sgn;
  if constexpr (D::has_inf)
    return D::inf_mag | sgn;
  else if constexpr (D::has_nan)
    return D::canonical_nan | sgn;
  else
    return D::max_finite | sgn;
}

}  // namespace detail

// §A.2 The special-case codes of a conversion into D under p.
template <class D>
NUMREF_HD NUMREF_FORCEINLINE SpecialCodes<D> make_special_codes(const CastPolicy& p) {
  SpecialCodes<D> sp{};
  for (int s = 0; s < 2; ++s) {
    sp.nan[s] = detail::nan_code<D>(s != 0, p);
    sp.inf[s] = detail::inf_code<D>(s != 0, p);
    sp.ovf[s] = detail::overflow_code<D>(s != 0, p.mode, p.saturate);
  }
  sp.nan_payload = D::has_inf && p.nan == NanOut::payload;
  return sp;
}

namespace detail {

// §4.2 / §5 The kernels' Mode as the numref::Round that round_increment() reads (the same
// words; a compile-time M stays a compile-time constant).
NUMREF_HD NUMREF_FORCEINLINE constexpr numref::Round as_round(Mode m) {
  switch (m) {
    case Mode::rne: return numref::Round::rne;
    case Mode::rna: return numref::Round::rna;
    case Mode::rtz: return numref::Round::rtz;
    case Mode::rup: return numref::Round::rup;
    case Mode::rdn: return numref::Round::rdn;
    default: return numref::Round::sr;
  }
}

// §4, §5.1, §6.1, §8 Round |x| = sig * 2^exp (sig < 2^25; sig = 0 gives a value the caller
// discards) into D with the compile-time mode M.
//
// With E = floor(log2 |x|) the quantum is 2^q, q = max(E - m, qmin); N = floor(|x| / 2^q)
// and the d = q - exp discarded bits `rem` decide the increment (d <= 0: exact, the
// significand moves left). The code of a result in the normal range is
// ((E + bias - 1) << m) + N, so that N + 1 = 2^(m+1) carries into the exponent field by
// itself; below 2^emin the code is N (a subnormal, or the smallest normal when
// N + 1 = 2^m). The code grows with the value over every exponent, so "the rounded value
// exceeds max finite" is "code > max_finite" (f8e4m3fn: 7F, the value 480, overflows).
//
// The increment is numref::round_increment (§4.2 / §5.1, the reference's own definition).
// round_code() returns the magnitude code before the overflow check (a value above
// D::max_finite means the rounded value exceeds the largest finite magnitude: the §6.1
// overflow, whose flag the quantize kernels count, §19.5); round_finite() maps it.
template <class D, Mode M>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t round_code(bool sign, std::uint32_t sig, int exp, int k, std::uint32_t r) {
  const int E = exp + (31 - clz32(sig | 1u));  // |1 keeps clz defined; bit_length(sig) unchanged
  const int q = (E - D::man) > D::qmin ? (E - D::man) : D::qmin;
  const int d = q - exp;
  // d can exceed 32 (an f32 subnormal into an 8-bit format); for d >= 57 the quotient and
  // the k-bit fraction are 0 whatever d is, so clamping d at 63 changes nothing.
  const int dl = d < 0 ? -d : 0;
  const int dr = d < 0 ? 0 : (d < 63 ? d : 63);
  const std::uint64_t s = static_cast<std::uint64_t>(sig) << dl;
  const std::uint64_t rem = s & ((std::uint64_t{1} << dr) - 1u);
  const std::uint64_t half = dr > 0 ? (std::uint64_t{1} << (dr - 1)) : ~std::uint64_t{0};
  std::uint32_t n = static_cast<std::uint32_t>(s >> dr);
  // §4.2 the code's last bit is N's; §5.1 f_k of the dr dropped bits (rem < 2^25)
  n += numref::round_increment(as_round(M), sign, rem, half, false, (n & 1u) != 0u, numref::fraction_bits(rem, dr, k),
                               r, k)
           ? 1u
           : 0u;
  const std::uint32_t base = E >= D::emin ? static_cast<std::uint32_t>(E + D::bias - 1) << D::man : 0u;
  return base + n;
}
template <class D, Mode M>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t round_finite(bool sign, std::uint32_t sig, int exp, int k, std::uint32_t r,
                                                        const SpecialCodes<D>& sp) {
  const std::uint32_t code = round_code<D, M>(sign, sig, exp, k, r);
  return code > D::max_finite ? sp.ovf[sign ? 1 : 0] : (code | (sign ? D::sign_bit : 0u));  // n == 0: ±0
}

// §3.1 The finite magnitude bits `mag` of S as sig * 2^exp. The exponent field may exceed
// the top of S (the §5.2 sum "passes the top"): it is then just the next binade.
struct Unpacked {
  std::uint32_t sig;
  int exp;
};
template <class S>
NUMREF_HD NUMREF_FORCEINLINE Unpacked unpack(std::uint32_t mag) {
  static_assert(S::has_subnormals, "sources have a subnormal binade");
  const std::uint32_t ef = mag >> S::man;
  const std::uint32_t frac = mag & S::man_mask;
  const bool normal = ef != 0u;
  return {frac | (normal ? (1u << S::man) : 0u), (normal ? static_cast<int>(ef) : 1) - S::bias - S::man};
}

// §2.2 Operand classes of a source magnitude (Format::is_nan_magnitude / is_inf_magnitude).
template <class S>
NUMREF_HD NUMREF_FORCEINLINE bool is_nan_mag(std::uint32_t mag) {
  if constexpr (S::has_inf)
    return mag > S::first_special;  // above the Inf magnitude
  else
    return mag >= S::first_special;  // fn: the all-ones magnitude; finite: never
}
template <class S>
NUMREF_HD NUMREF_FORCEINLINE bool is_inf_mag(std::uint32_t mag) {
  if constexpr (S::has_inf)
    return mag == S::inf_mag;
  else
    return false;
}

}  // namespace detail

// §A.2 / §11 Convert one code of S to D with the compile-time mode M (and, for M = sr, the
// compile-time variant V): the form the kernels use. Straight-line code: the finite result
// is computed for every operand and the special cases are selected over it.
//   M = sr, V = fraction: §5.1 with k bits and the random value r (< 2^k, checked by the caller);
//   M = sr, V = add:      §5.2 — r aligned below the target's normal ulp and added to the
//                         source magnitude bits (nothing when S has no more fraction bits
//                         than D), the sum truncated (rtz), overflow "to nearest" (§5.3).
template <class S, class D, Mode M, SrVariant V = SrVariant::fraction>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t convert_as(std::uint32_t bits, const SpecialCodes<D>& sp, int k,
                                                      std::uint32_t r) {
  static_assert(S::is_signed && S::has_zero, "sources are signed floating-point formats with a zero");
  static_assert(!S::is_fnuz && !D::is_fnuz, "the kernels refuse the fnuz formats (spec §A.12 item 9)");
  static_assert(D::is_signed && D::has_zero && D::has_subnormals,
                "targets are signed floating-point formats with a zero and subnormals (f8e8m0fnu: to_e8m0)");
  const bool sign = (bits & S::sign_bit) != 0u;
  const std::uint32_t mag = bits & S::mag_mask;
  std::uint32_t finite;
  if constexpr (M == Mode::sr && V == SrVariant::add) {
    constexpr int dbits = S::man - D::man;
    std::uint32_t sum = mag;
    if constexpr (dbits > 0) {
      // k <= dbits: r * 2^(dbits - k) < 2^dbits; k > dbits: floor(r / 2^(k - dbits)) < 2^dbits;
      // the sum stays below 2^32 (S's largest magnitude + 2^dbits).
      sum += k <= dbits ? (r << (dbits - k)) : static_cast<std::uint32_t>(static_cast<std::uint64_t>(r) >> (k - dbits));
    }
    const detail::Unpacked u = detail::unpack<S>(sum);
    finite = detail::round_finite<D, Mode::rtz>(sign, u.sig, u.exp, 0, 0u, sp);  // sp.ovf: "to nearest"
  } else {
    const detail::Unpacked u = detail::unpack<S>(mag);
    finite = detail::round_finite<D, M>(sign, u.sig, u.exp, k, r, sp);
  }
  const std::uint32_t nan =
      sp.nan_payload ? detail::nan_payload_code<S, D>(sign, mag & S::man_mask) : sp.nan[sign ? 1 : 0];
  const std::uint32_t zero = sign ? D::sign_bit : 0u;         // §6.6
  return detail::is_nan_mag<S>(mag)   ? nan                   // §6.3, §6.4
         : detail::is_inf_mag<S>(mag) ? sp.inf[sign ? 1 : 0]  // §6.2
         : mag == 0u                  ? zero
                                      : finite;
}

// §A.2 / §11 Convert one code of S to D under p, with the mode chosen at run time (the
// host tests and any caller that does not specialise); r is the random value of stochastic
// rounding (read only when p.mode == sr; the caller checks sr_value_valid(r, k)).
// Implements the whole of §3–§6 and §8 (daz=0, ftz=0) for these pairs: e.g. with the
// policy of cuda_satfinite (rne, saturate, inf->max, NaN -> all ones) f32 -> f8e4m3fn
// gives 464.0 -> 7E (tie, to even), 465.0 -> 7E, +Inf -> 7E, -Inf -> FE, NaN -> 7F.
template <class S, class D>
NUMREF_HD inline std::uint32_t convert(std::uint32_t bits, const CastPolicy& p, std::uint32_t r = 0u) {
  const SpecialCodes<D> sp = make_special_codes<D>(p);
  const int k = p.sr_bits;
  switch (p.mode) {
    case Mode::rne: return convert_as<S, D, Mode::rne>(bits, sp, k, r);
    case Mode::rna: return convert_as<S, D, Mode::rna>(bits, sp, k, r);
    case Mode::rtz: return convert_as<S, D, Mode::rtz>(bits, sp, k, r);
    case Mode::rup: return convert_as<S, D, Mode::rup>(bits, sp, k, r);
    case Mode::rdn: return convert_as<S, D, Mode::rdn>(bits, sp, k, r);
    default:
      return p.sr_variant == SrVariant::add ? convert_as<S, D, Mode::sr, SrVariant::add>(bits, sp, k, r)
                                            : convert_as<S, D, Mode::sr, SrVariant::fraction>(bits, sp, k, r);
  }
}

// §A.5 One lane of the hardware path. `hw` is what the conversion instruction delivered
// for the f32 (or bf16, widened) code x; the instructions are specified by the PTX ISA only
// up to the NaN encoding, so NaN lanes — and, for the saturating f8 instructions, ±Inf lanes
// when the policy keeps Inf special (inf_sat=keep) — take the portable code instead.
// Saturating = true for cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (±Inf -> ±max),
// false for cvt.rn.bf16x2.f32 (±Inf -> ±Inf). The host tests run this function on a model
// of the instruction built from its PTX ISA description (test_cuda_hw_model.cpp).
template <class S, class D, bool Saturating>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t hardware_lane(std::uint32_t x, std::uint32_t hw, const SpecialCodes<D>& sp) {
  static_assert(S::exp_bits == 8 && S::bias == 127 && (S::bits == 32 || S::bits == 16),
                "the instructions read f32 (bf16 sources are widened by a shift, exactly)");
  const std::uint32_t a = (x << (32 - S::bits)) & 0x7FFFFFFFu;
  constexpr std::uint32_t f32_inf = FloatTraits<numref::FormatId::f32>::first_special;
  const std::uint32_t first_special = (Saturating && sp.inf[0] != D::max_finite) ? f32_inf : f32_inf + 1u;
  return a >= first_special ? convert_as<S, D, Mode::rne>(x, sp, 0, 0u) : hw;
}

// §A.2 / §7 Convert one code of S (f32 or bf16) to f8e8m0fnu under p. Straight-line:
// the rounded exponent is computed for every operand and the special cases selected over it.
// cuda_satfinite (floor, saturate, zero -> 00, |x|): 0.0 -> 00, 1.0 -> 7F, 1.99 -> 7F,
// 2^127 * 1.5 -> FE, +Inf -> FE, NaN -> FF, -4.0 -> 81.
template <class S>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t to_e8m0(std::uint32_t bits, const E8m0Policy& p) {
  using D = FloatTraits<numref::FormatId::f8e8m0fnu>;
  static_assert(D::man == 0 && !D::is_signed && !D::has_zero && !D::has_subnormals && D::has_nan,
                "to_e8m0 implements §7: no fraction bits, no sign, no zero, NaN at the top");
  constexpr int e_max = static_cast<int>(D::max_finite) - D::bias;  // the code is the biased exponent
  const bool sign = (bits & S::sign_bit) != 0u;
  const std::uint32_t mag = bits & S::mag_mask;
  const detail::Unpacked u = detail::unpack<S>(mag);
  const int top = 31 - clz32(u.sig | 1u);
  const int e = u.exp + top;                                    // floor(log2 |x|)
  const std::uint32_t rem = u.sig & ((1u << top) - 1u);         // |x| / 2^e = 1 + rem / 2^top
  const std::uint32_t half = top > 0 ? (1u << (top - 1)) : 1u;  // top == 0: rem == 0
  // §7.1 the E8M0 modes on positive operands: floor = rtz, ceil = rup, even = rne (§4.2 to the
  // even code, the biased exponent), tiesup = rna.
  const numref::Round mode = p.mode == E8m0Mode::floor  ? numref::Round::rtz
                             : p.mode == E8m0Mode::ceil ? numref::Round::rup
                             : p.mode == E8m0Mode::even ? numref::Round::rne
                                                        : numref::Round::rna;
  const bool up = numref::round_increment(mode, false, rem, half, false, ((e + D::bias) & 1) != 0);
  const int er = e + (up ? 1 : 0);
  // §7.5 overflow: FE, or the NaN when rounding "to infinity" without saturation.
  const std::uint32_t over = p.saturate || p.mode == E8m0Mode::floor ? D::max_finite : D::canonical_nan;
  const std::uint32_t finite = er > e_max     ? over
                               : er < D::emin ? 0u  // §7.4 below 2^-127: the minimum, 00
                                              : static_cast<std::uint32_t>(er + D::bias);
  const bool negative_nan = sign && !p.negative_abs;  // §7.3 (for ±Inf too, §6.2)
  const std::uint32_t inf =
      negative_nan ? D::canonical_nan : (p.saturate && p.inf_to_max ? D::max_finite : D::canonical_nan);  // §6.2
  return detail::is_nan_mag<S>(mag)   ? D::canonical_nan  // every §6.3 option gives FF
         : detail::is_inf_mag<S>(mag) ? inf
         : mag == 0u                  ? (p.zero_to_min ? 0u : D::canonical_nan)  // §7.2 (-0 is a zero)
         : negative_nan               ? D::canonical_nan
                                      : finite;
}

}  // namespace numref_cuda
