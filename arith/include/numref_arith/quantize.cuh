// numref CUDA kernels — per-element quantize, dequantize and fake-quant.     spec §19, §20, §A.6
//
// One element of one block, given the block's factors (scale.cuh):
//   quantize_element<S, D>     §19.2: RN32(x · f) or RN32(x / f) (f32.cuh), then one conversion
//                              to the element D (application rn32, the default); or the exact
//                              x · f / x / f rounded once into D (application fused, the default
//                              of the int8 rules, §20.1) — integer code; plus the §19.5 counts;
//   dequantize_element<D>      §19.3: RN32(v · d) or RN32(v / d), v the exact value of the code;
//   to_output<O>               §19.6: the binary32 value converted to bf16 / f16 / f32 under the
//                              wide policy (fake-quant).
// D is a floating-point element format with a zero (FloatTraits: f8e4m3fn, f8e5m2, FP6, FP4)
// or Int8Elem (§20: two's complement, range full or symmetric). The host tests compare these
// functions with numref::Quantizer element by element (test_cuda_quantize.cpp).
#pragma once

#include <cstdint>

#include "numref_arith/amax.cuh"
#include "numref_arith/cast.cuh"
#include "numref_arith/f32.cuh"
#include "numref_arith/format_traits.cuh"
#include "numref_arith/intmath.cuh"
#include "numref_arith/scale.cuh"

namespace numref_cuda {

using F32 = FloatTraits<numref::FormatId::f32>;

// §20 The int8 element (not a FloatTraits: an integer format, §6.5).
struct Int8Elem {
  static constexpr numref::FormatId id = numref::FormatId::int8;
  static constexpr int bits = 8;
  static constexpr bool is_integer = true;
};
template <class D>
struct IsInt8 {
  static constexpr bool value = false;
};
template <>
struct IsInt8<Int8Elem> {
  static constexpr bool value = true;
};

// §19.1 / §19.2 The element conversion of one launch: the policy (for int8: mode, k and
// nan_to_finite; `symmetric` is §20.2's int_range), its special codes (floating-point D), and
// the application.
template <class D, bool Int = IsInt8<D>::value>
struct ElementCtx {
  CastPolicy p;
  SpecialCodes<D> sp{};
  bool fused = false;
};
template <class D>
struct ElementCtx<D, true> {
  CastPolicy p;
  bool symmetric = false;  // int_range=symmetric: [-127, 127]; else [-128, 127]
  bool fused = false;
};
template <class D>
NUMREF_HD inline ElementCtx<D> make_element_ctx(const CastPolicy& p, bool fused, bool symmetric = false) {
  ElementCtx<D> c;
  c.p = p;
  c.fused = fused;
  if constexpr (IsInt8<D>::value)
    c.symmetric = symmetric;
  else
    c.sp = make_special_codes<D>(p);
  return c;
}

// §19.5 The count bits of one element.
inline constexpr std::uint32_t kCountSaturated = 1u, kCountFlushed = 2u, kCountNan = 4u, kCountInf = 8u;

namespace detail {

// §4.1 The rounded number of quanta of |v| = (sig + eps) · 2^exp (eps in (0, 1) iff sticky) at
// the quantum 2^q under `mode` (§4.2, §5.1 with k and r). Preconditions: sig != 0; when sticky,
// q - exp >= max(1, k) (the sticky part lies below the quantum and below the k fraction bits);
// when q <= exp the value is a whole number of quanta below 2^63.
NUMREF_HD inline std::uint64_t round_units(bool sign, std::uint64_t sig, int exp, bool sticky, int q, Mode mode, int k,
                                           std::uint32_t r) {
  const int d = q - exp;
  if (d <= 0) return sig << (-d);  // exact
  std::uint64_t n, rem, half, fk;
  if (d < 64) {
    rem = sig & ((std::uint64_t{1} << d) - 1u);
    half = std::uint64_t{1} << (d - 1);
    n = sig >> d;
    fk = numref::fraction_bits(rem, d, k);
  } else {  // n = 0: the whole significand is the fraction; unless d = 64, 0 < f < 1/2 (1 against half = 2)
    n = 0;
    rem = d == 64 ? sig : 1u;
    half = d == 64 ? std::uint64_t{1} << 63 : 2u;
    fk = d - k >= 64 ? 0u : sig >> (d - k);
  }
  // §4.2 / §5.1 (k <= 32): numref::round_increment, N's last bit the parity
  return n + (numref::round_increment(as_round(mode), sign, rem, half, sticky, (n & 1u) != 0u, fk, r, k) ? 1u : 0u);
}

// §4, §6.1 A finite non-zero exact operand rounded once into the floating-point element D:
// the magnitude code before the overflow check (> D::max_finite: overflow).
template <class D>
NUMREF_HD inline std::uint32_t round_exact_code(bool sign, std::uint64_t sig, int exp, bool sticky, const CastPolicy& p,
                                                std::uint32_t r) {
  const int E = exp + bitlen64(sig) - 1;
  const int q = (E - D::man) > D::qmin ? (E - D::man) : D::qmin;  // E <= 277 here: no overflow below
  const std::uint64_t n = round_units(sign, sig, exp, sticky, q, p.mode, p.sr_bits, r);
  const std::uint32_t base = E >= D::emin ? static_cast<std::uint32_t>(E + D::bias - 1) << D::man : 0u;
  return base + static_cast<std::uint32_t>(n);
}

// §6.5 / §20.2 An integer magnitude n (or an out-of-range marker) with its sign to an int8 code.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t int8_code(bool sign, std::uint64_t n, bool symmetric, bool& ovf) {
  const std::uint64_t max = sign && !symmetric ? 128u : 127u;
  ovf = n > max;
  if (ovf) n = max;
  return sign ? ((256u - static_cast<std::uint32_t>(n)) & 0xFFu) : static_cast<std::uint32_t>(n);
}
// §6.5 A finite exact operand rounded once to an integer (quantum 1), saturated to the range.
NUMREF_HD inline std::uint32_t int8_from_exact(bool sign, std::uint64_t sig, int exp, bool sticky, const CastPolicy& p,
                                               bool symmetric, std::uint32_t r, bool& ovf) {
  if (sig == 0u) return int8_code(sign, 0, symmetric, ovf);
  const int E = exp + bitlen64(sig) - 1;
  if (E >= 9) return int8_code(sign, 512u, symmetric, ovf);  // |v| >= 512: out of range whatever the rounding
  return int8_code(sign, round_units(sign, sig, exp, sticky, 0, p.mode, p.sr_bits, r), symmetric, ovf);
}

}  // namespace detail

// §19.2 (application rn32) The binary32 code y converted to the element D under the element
// policy, with r the random value of stochastic rounding; `ovf` reports the §6.1 / §6.5
// overflow (the overflow flag; for int8, an out-of-range result), which §19.5 counts.
template <class D>
NUMREF_HD inline std::uint32_t elem_from_f32(std::uint32_t y, const ElementCtx<D>& c, std::uint32_t r, bool& ovf) {
  const bool sign = (y >> 31) != 0u;
  const std::uint32_t mag = y & kF32Abs;
  ovf = false;
  if constexpr (IsInt8<D>::value) {
    if (mag > kF32Inf) {  // §6.4
      return c.p.nan_to_finite == NanToFinite::max ? 0x7Fu : 0u;
    }
    if (mag == kF32Inf) return detail::int8_code(sign, 512u, c.symmetric, ovf);  // §6.2 step 1
    const detail::Unpacked u = detail::unpack<F32>(mag);
    return detail::int8_from_exact(sign, u.sig, u.exp, false, c.p, c.symmetric, r, ovf);
  } else {
    if (mag > kF32Inf)
      return c.sp.nan_payload ? detail::nan_payload_code<F32, D>(sign, mag & F32::man_mask) : c.sp.nan[sign ? 1 : 0];
    if (mag == kF32Inf) {
      ovf = c.p.saturate && c.p.inf_to_max;  // §6.2 step 3 raises overflow
      return c.sp.inf[sign ? 1 : 0];
    }
    if (mag == 0u) return sign ? D::sign_bit : 0u;
    std::uint32_t code;
    if (c.p.mode == Mode::sr && c.p.sr_variant == SrVariant::add) {  // §5.2 on the binary32 pattern
      constexpr int dbits = F32::man - D::man;
      const int k = c.p.sr_bits;
      const std::uint32_t add =
          k <= dbits ? (r << (dbits - k)) : static_cast<std::uint32_t>(static_cast<std::uint64_t>(r) >> (k - dbits));
      const detail::Unpacked u = detail::unpack<F32>(mag + add);
      code = detail::round_code<D, Mode::rtz>(sign, u.sig, u.exp, 0, 0u);
    } else {
      const detail::Unpacked u = detail::unpack<F32>(mag);
      switch (c.p.mode) {
        case Mode::rne: code = detail::round_code<D, Mode::rne>(sign, u.sig, u.exp, 0, 0u); break;
        case Mode::rna: code = detail::round_code<D, Mode::rna>(sign, u.sig, u.exp, 0, 0u); break;
        case Mode::rtz: code = detail::round_code<D, Mode::rtz>(sign, u.sig, u.exp, 0, 0u); break;
        case Mode::rup: code = detail::round_code<D, Mode::rup>(sign, u.sig, u.exp, 0, 0u); break;
        case Mode::rdn: code = detail::round_code<D, Mode::rdn>(sign, u.sig, u.exp, 0, 0u); break;
        default: code = detail::round_code<D, Mode::sr>(sign, u.sig, u.exp, c.p.sr_bits, r); break;
      }
    }
    ovf = code > D::max_finite;
    return ovf ? c.sp.ovf[sign ? 1 : 0] : (code | (sign ? D::sign_bit : 0u));
  }
}

// §19.2 (application fused) The exact finite non-zero x · f or x / f rounded once into D.
template <class D>
NUMREF_HD inline std::uint32_t elem_from_exact(bool sign, std::uint64_t sig, int exp, bool sticky,
                                               const ElementCtx<D>& c, std::uint32_t r, bool& ovf) {
  if constexpr (IsInt8<D>::value) {
    return detail::int8_from_exact(sign, sig, exp, sticky, c.p, c.symmetric, r, ovf);
  } else {
    const std::uint32_t code = detail::round_exact_code<D>(sign, sig, exp, sticky, c.p, r);
    ovf = code > D::max_finite;
    return ovf ? c.sp.ovf[sign ? 1 : 0] : (code | (sign ? D::sign_bit : 0u));
  }
}

// §19.2 One element x (a code of the source S) of a block with factors f: the element code,
// and the §19.5 count bits OR-ed into `counts`.
template <class S, class D>
NUMREF_HD inline std::uint32_t quantize_element(std::uint32_t x, const BlockFactors& f, const ElementCtx<D>& c,
                                                std::uint32_t r, std::uint32_t& counts) {
  bool ovf = false;
  if (f.poisoned()) {  // §13.3 every element of a poisoned block quantizes as NaN
    counts |= kCountNan;
    return elem_from_f32<D>(kF32NaN, c, r, ovf);
  }
  const bool sign = (x & S::sign_bit) != 0u;
  const std::uint32_t mag = x & S::mag_mask;
  if (detail::is_nan_mag<S>(mag)) {  // widened with sign and payload (§6.3 payload, quiet bit set)
    counts |= kCountNan;
    return elem_from_f32<D>(detail::nan_payload_code<S, F32>(sign, mag & S::man_mask), c, r, ovf);
  }
  if (detail::is_inf_mag<S>(mag)) {  // ±Inf op f = ±Inf
    counts |= kCountInf;
    return elem_from_f32<D>(sign ? 0xFF800000u : kF32Inf, c, r, ovf);
  }
  if (mag == 0u) return elem_from_f32<D>(sign ? 0x80000000u : 0u, c, r, ovf);
  const std::uint32_t xf = (sign ? 0x80000000u : 0u) | widen_finite_mag<S>(mag);
  const bool divide = (f.flags & BlockFactors::kQuantDivide) != 0u;
  std::uint32_t code;
  if (!c.fused) {
    code = elem_from_f32<D>(divide ? f32_div(xf, f.qf) : f32_mul(xf, f.qf), c, r, ovf);
  } else {
    const F32Split a = f32_split(xf & kF32Abs), b = f32_split(f.qf);
    if (!divide) {  // exact product of two 24-bit significands
      code = elem_from_exact<D>(sign, static_cast<std::uint64_t>(a.sig) * b.sig, a.e + b.e - 46, false, c, r, ovf);
    } else {  // §4.4 quotient with 40 or 41 significant bits and a sticky bit
      const std::uint64_t num = static_cast<std::uint64_t>(a.sig) << 40;
      const std::uint64_t quo = num / b.sig;
      code = elem_from_exact<D>(sign, quo, a.e - b.e - 40, quo * b.sig != num, c, r, ovf);
    }
  }
  if (ovf) counts |= kCountSaturated;
  if constexpr (IsInt8<D>::value) {
    if (code == 0u) counts |= kCountFlushed;
  } else {
    if ((code & D::mag_mask) == 0u) counts |= kCountFlushed;
  }
  return code;
}

// §19.3 The binary32 code of an element code of D dequantized with the block's factors; NaN codes
// are converted under the wide policy `wide` (a CastPolicy for D -> f32).
template <class D>
NUMREF_HD inline std::uint32_t dequantize_element(std::uint32_t code, const BlockFactors& f, const CastPolicy& wide) {
  if (f.poisoned()) return kF32NaN;
  std::uint32_t v;
  if constexpr (IsInt8<D>::value) {
    const bool sign = (code & 0x80u) != 0u;
    const std::uint32_t n = sign ? 256u - code : code;
    if (n == 0u) return 0u;
    const int len = bitlen32(n);
    v = (sign ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(len - 1 + 127) << 23) | ((n << (24 - len)) & 0x7FFFFFu);
  } else {
    const std::uint32_t mag = code & D::mag_mask;
    const bool sign = (code & D::sign_bit) != 0u;
    if (detail::is_nan_mag<D>(mag)) return convert<D, F32>(code, wide);  // §6.3 under the wide policy
    if (detail::is_inf_mag<D>(mag)) return sign ? 0xFF800000u : kF32Inf;
    if (mag == 0u) return sign ? 0x80000000u : 0u;
    v = (sign ? 0x80000000u : 0u) | widen_finite_mag<D>(mag);
  }
  return (f.flags & BlockFactors::kDequantDivide) != 0u ? f32_div(v, f.df) : f32_mul(v, f.df);
}

// §19.6 The fake-quant output: a binary32 code converted to O (bf16, f16 or f32) under the wide
// policy `wide` (a CastPolicy for f32 -> O).
template <class O>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t to_output(std::uint32_t v, const CastPolicy& wide) {
  return convert<F32, O>(v, wide);
}

}  // namespace numref_cuda
