// numref CUDA kernels — per-block scale rules.                         spec §14 – §18, §20, §19.3, §A.6
//
// From a block's amax (amax.cuh) and, for GAM and NVFP4, the tensor-level state, each rule
// gives the stored scale code (§19.4) and the two factors every element of the block uses:
// the quantize factor f (§19.2: x · f, or x / f) and the dequantize factor d (§19.3). Each
// binary32 quotient or product the spec defines "in FP32" is one IEEE operation of f32.cuh;
// exponents are read from bits (never log2f); E8M0 codes are integer arithmetic. The host
// tests compare every function with numref::fp32_amax_scale, mx_scale_code, gam_block_code,
// nvfp4_* and the reference Quantizer's block factors (cuda/tests/test_cuda_quantize.cpp).
#pragma once

#include <cstdint>

#include "numref/scale.hpp"
#include "numref_arith/amax.cuh"
#include "numref_arith/cast.cuh"
#include "numref_arith/f32.cuh"
#include "numref_arith/format_traits.cuh"
#include "numref_arith/intmath.cuh"

namespace numref_cuda {

// §19.6 A rule reaches the kernels as the kind and MX exponent rule of its row of
// numref::kScaleRules (make_scale_params / plan_quantize): the kernels compute by kind, never by
// the rule's identity, so every rule of a kind they implement works (they implement all kinds).
using numref::MxExponent;
using numref::ScaleKind;
// The constants of one quantization, computed once on the host (make_scale_params).
struct ScaleParams {
  ScaleKind kind = ScaleKind::fp32_quotient;  // the rule's row: how the factor is formed
  MxExponent mx = MxExponent::none;           // kind mx: the exponent rule (§16)
  std::uint32_t q_max = 0;                    // §14.4 binary32 code of q_max
  int emax_elem = 0;                          // §16.1 E(q_max)
  std::uint32_t q_max_sig = 0;                // q_max's significand, normalised to 24 bits [2^23, 2^24)
  int elem_precision = 0;                     // §16.4 element fraction bits + 1
  bool dequant_reciprocal = false;            // §19.3 dequant=reciprocal
  std::uint32_t inv_q = 0;                    // §16.6 / §18.2 RN32(1 / q_max)
  std::uint32_t nvfp4_c = 0;                  // §18 C = RN32(448 · q_max)
  std::uint32_t nvfp4_inv_c = 0;              // §18.4 RN32(1 / C)
};

// §19.2 / §19.3 Everything an element of one block needs.
struct BlockFactors {
  std::uint32_t stored = 0;  // §19.4 stored scale code (f32 bits, E8M0 or E4M3 code)
  std::uint32_t qf = 0;      // quantize factor (binary32 code)
  std::uint32_t df = 0;      // dequantize factor (binary32 code)
  std::uint32_t flags = 0;   // kQuantDivide | kDequantDivide | kPoisoned
  static constexpr std::uint32_t kQuantDivide = 1u, kDequantDivide = 2u, kPoisoned = 4u;
  NUMREF_HD bool poisoned() const { return (flags & kPoisoned) != 0u; }
};

// §17.1 / §18.1 The tensor-level state of the rules that need it (after the amax pass).
struct TensorState {
  std::uint32_t m_g = 0;          // GAM: the block's group mantissa
  bool group_poisoned = false;    // GAM: the group's amax is poisoned
  std::uint32_t s_enc = kF32One;  // NVFP4: S_enc
  std::uint32_t t_amax = 0;       // NVFP4: tensor amax
};

// ---- §14 FP32 amax scales ----------------------------------------------------------------

// §14.1 S = RN32(q_max / amax) clamped to max finite; 1.0 for amax = 0; NaN when poisoned.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t fp32_amax_scale(std::uint32_t amax, std::uint32_t q_max) {
  if (amax_poisoned(amax)) return kF32NaN;
  if (amax == 0u) return kF32One;
  return f32_div_sat(q_max, amax);
}
// §14.3 / §20.1 D = RN32(amax / q_max), at least 2^-149; 1.0 for amax = 0; NaN when poisoned.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t fp32_dequant_scale(std::uint32_t amax, std::uint32_t q_max) {
  if (amax_poisoned(amax)) return kF32NaN;
  if (amax == 0u) return kF32One;
  const std::uint32_t d = f32_div_sat(amax, q_max);
  return d == 0u ? 1u : d;
}
// §15 2^E(S) read from the bits: a normal S keeps sign and exponent field; a subnormal S its top
// fraction bit; NaN, Inf and zero unchanged.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t pow2_floor(std::uint32_t s) {
  if (!f32_finite(s)) return s;
  const std::uint32_t mag = s & kF32Abs;
  if (mag == 0u) return s;
  if (mag >= 0x00800000u) return s & 0xFF800000u;
  return (s & 0x80000000u) | (1u << (bitlen32(mag) - 1));
}

// ---- §16 MX E8M0 shared scales --------------------------------------------------------------

// §16 The E8M0 code of a block under a rule of kind mx: FF poisoned, 00 for amax = 0, else the
// exponent e of the row's MxExponent clamped to [-127, 127], code e + 127.
NUMREF_HD inline std::uint32_t mx_scale_code(const ScaleParams& sp, std::uint32_t amax) {
  if (amax_poisoned(amax)) return 0xFFu;  // §16.7
  if (amax == 0u) return 0x00u;
  const F32Split a = f32_split(amax);
  int e = 0;
  switch (sp.mx) {
    case MxExponent::floor: e = a.e - sp.emax_elem; break;                                // §16.2
    case MxExponent::ceil: e = a.e + (a.sig == 0x800000u ? 0 : 1) - sp.emax_elem; break;  // §16.3
    case MxExponent::even: {  // §16.4 next binade iff the significand >= 2 - 2^-p
      const std::uint32_t threshold = ((2u << sp.elem_precision) - 1u) << (23 - sp.elem_precision);
      e = a.e + (a.sig >= threshold ? 1 : 0) - sp.emax_elem;
      break;
    }
    case MxExponent::rceil:  // §16.5 smallest e with amax <= q_max · 2^e, from the exact significands
      e = a.e - sp.emax_elem + (a.sig > sp.q_max_sig ? 1 : 0);
      break;
    case MxExponent::none: return 0xFFu;  // not an mx row: plan_quantize never builds this
    case MxExponent::rceil_f32: {         // §16.6 d = RN32(amax · RN32(1 / q_max)), E8M0 ceiling of d
      const std::uint32_t d = f32_mul(amax, sp.inv_q);
      if (!f32_finite(d)) return 0xFFu;  // cannot happen for a finite amax and q_max >= 4
      if (d == 0u) return 0x00u;
      const F32Split ds = f32_split(d);
      e = ds.e + (ds.sig == 0x800000u ? 0 : 1);
      break;
    }
  }
  e = e < -127 ? -127 : (e > 127 ? 127 : e);  // §16.1
  return static_cast<std::uint32_t>(e + 127);
}

// ---- §17 GAM ------------------------------------------------------------------------------

// §17.1 The group mantissa: the 23 fraction bits of s_g = S(g_amax) (a normal binary32, §14.4);
// a poisoned group is flagged (m_g stored as 0).
NUMREF_HD NUMREF_FORCEINLINE TensorState gam_group(std::uint32_t g_amax, std::uint32_t q_max) {
  TensorState t;
  if (amax_poisoned(g_amax)) {
    t.group_poisoned = true;
    return t;
  }
  t.m_g = fp32_amax_scale(g_amax, q_max) & 0x7FFFFFu;
  return t;
}
// §17.2 The block exponent code e_b + 127: E_b, decremented when m_g > m_b; FF when poisoned.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t gam_block_code(std::uint32_t b_amax, const TensorState& g,
                                                          std::uint32_t q_max) {
  if (g.group_poisoned || amax_poisoned(b_amax)) return 0xFFu;
  const std::uint32_t s_b = fp32_amax_scale(b_amax, q_max);  // normal, 1.0 for a zero block
  const std::uint32_t m_b = s_b & 0x7FFFFFu;
  int e = static_cast<int>(s_b >> 23) - 127;
  if (g.m_g > m_b) e -= 1;
  e = e < -127 ? -127 : (e > 127 ? 127 : e);  // never binds (§17.3)
  return static_cast<std::uint32_t>(e + 127);
}
// §17.3 G_b = (1 + m_g / 2^23) · 2^(code - 127) as binary32: (code << 23) | m_g (code 01..FE).
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t gam_block_scale(std::uint32_t code, std::uint32_t m_g) {
  return (code << 23) | m_g;
}

// ---- §18 NVFP4 ----------------------------------------------------------------------------

namespace detail {
using E4M3 = FloatTraits<numref::FormatId::f8e4m3fn>;
using F32T = FloatTraits<numref::FormatId::f32>;
// The binary32 code of an f8e4m3fn code (exact); NaN codes give the canonical NaN.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t e4m3_value(std::uint32_t code) {
  const std::uint32_t mag = code & E4M3::mag_mask;
  if (is_nan_mag<E4M3>(mag)) return kF32NaN;
  return ((code & E4M3::sign_bit) != 0u ? 0x80000000u : 0u) | widen_finite_mag<E4M3>(mag);
}
}  // namespace detail

// §18.1 S_enc = RN32(C / t_amax) clamped; 1.0 for t_amax = 0; NaN when poisoned.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t nvfp4_tensor_scale(std::uint32_t t_amax, const ScaleParams& sp) {
  if (amax_poisoned(t_amax)) return kF32NaN;
  if (t_amax == 0u) return kF32One;
  return f32_div_sat(sp.nvfp4_c, t_amax);
}
// §18.2 d_b: RN32(b_amax · RN32(S_enc · RN32(1 / q_max))) to f8e4m3fn, RNE, saturating (+Inf -> 448).
NUMREF_HD inline std::uint32_t nvfp4_block_code(std::uint32_t b_amax, std::uint32_t s_enc, const ScaleParams& sp) {
  if (amax_poisoned(b_amax) || !f32_finite(s_enc)) return detail::E4M3::canonical_nan;
  const std::uint32_t k = f32_mul(s_enc, sp.inv_q);
  const std::uint32_t s = f32_mul(b_amax, k);
  if (!f32_finite(s)) return detail::E4M3::max_finite;
  CastPolicy sat;  // rne, saturate (__NV_SATFINITE); s is a non-negative finite binary32
  sat.saturate = true;
  return convert<detail::F32T, detail::E4M3>(s, sat);
}
// §18.3 c_b = min(RN32(1 / RN32(d_b · RN32(1 / S_enc))), max finite); NaN for a NaN d_b.
NUMREF_HD inline std::uint32_t nvfp4_encode_factor(std::uint32_t d_b, std::uint32_t s_enc) {
  const std::uint32_t v = detail::e4m3_value(d_b);
  if (!f32_finite(s_enc) || f32_nan(v)) return kF32NaN;
  const std::uint32_t s_dec = f32_div(kF32One, s_enc);
  const std::uint32_t den = f32_mul(v, s_dec);
  if (den == 0u) return kF32Max;  // 1 / 0 = +Inf, clamped
  return f32_div_sat(kF32One, den);
}
// §18.4 f_b = RN32(RN32(d_b · t_amax) · RN32(1 / C)).
NUMREF_HD inline std::uint32_t nvfp4_decode_factor(std::uint32_t d_b, std::uint32_t t_amax, const ScaleParams& sp) {
  const std::uint32_t v = detail::e4m3_value(d_b);
  if (amax_poisoned(t_amax) || f32_nan(v)) return kF32NaN;
  return f32_mul(f32_mul(v, t_amax), sp.nvfp4_inv_c);
}

// ---- §19.2 / §19.3 the factors of a block --------------------------------------------------

namespace detail {
// §19.3 How a multiplying scale s is undone: divide (default), or multiply by RN32(1 / s).
NUMREF_HD NUMREF_FORCEINLINE void undo_multiplier(const ScaleParams& sp, std::uint32_t s, BlockFactors& f) {
  if (sp.dequant_reciprocal) {
    f.df = f32_div(kF32One, s);
  } else {
    f.df = s;
    f.flags |= BlockFactors::kDequantDivide;
  }
}
}  // namespace detail

// §19.3 The dequantize factor of a block from its stored scale alone (the metadata): what
// dequantize() computes, and what quantize() records. Sets kPoisoned for a NaN scale (§13.3).
NUMREF_HD inline BlockFactors factors_from_stored(const ScaleParams& sp, std::uint32_t stored, std::uint32_t m_g,
                                                  std::uint32_t t_amax) {
  BlockFactors f;
  f.stored = stored;
  bool poisoned = !f32_finite(stored);  // binary32 scales
  if (sp.kind == ScaleKind::mx || sp.kind == ScaleKind::gam)
    poisoned = stored == 0xFFu;
  else if (sp.kind == ScaleKind::nvfp4)
    poisoned = f32_nan(detail::e4m3_value(stored)) || amax_poisoned(t_amax);
  if (poisoned) {
    f.flags = BlockFactors::kPoisoned;
    return f;
  }
  switch (sp.kind) {
    case ScaleKind::fp32_quotient:
    case ScaleKind::pow2: detail::undo_multiplier(sp, stored, f); break;
    case ScaleKind::gam: detail::undo_multiplier(sp, gam_block_scale(stored, m_g), f); break;
    case ScaleKind::nvfp4: f.df = nvfp4_decode_factor(stored, t_amax, sp); break;
    case ScaleKind::fp32_recip:
    case ScaleKind::pow2_recip:
    case ScaleKind::fp32_dequant: f.df = stored; break;
    case ScaleKind::mx: f.df = f32_pow2(static_cast<int>(stored) - 127); break;  // X = 2^(code - 127)
  }
  return f;
}

// §14–§18, §20 The stored scale and both factors of a block with amax `amax`; `t` is the
// tensor-level state of its group (GAM) or tensor (NVFP4), ignored by the other rules.
NUMREF_HD inline BlockFactors block_factors(const ScaleParams& sp, std::uint32_t amax, const TensorState& t) {
  std::uint32_t stored = 0, qf = kF32One, qflags = 0;
  switch (sp.kind) {
    case ScaleKind::fp32_quotient: stored = fp32_amax_scale(amax, sp.q_max), qf = stored; break;  // §14.1
    case ScaleKind::fp32_recip: {                                                                 // §14.2
      const std::uint32_t s = fp32_amax_scale(amax, sp.q_max);
      stored = f32_finite(s) ? f32_div(kF32One, s) : kF32NaN;
      qf = s;
      break;
    }
    case ScaleKind::fp32_dequant:  // §14.3, §20.1
      stored = fp32_dequant_scale(amax, sp.q_max);
      qf = stored;
      qflags = BlockFactors::kQuantDivide;
      break;
    case ScaleKind::pow2: stored = pow2_floor(fp32_amax_scale(amax, sp.q_max)), qf = stored; break;  // §15
    case ScaleKind::pow2_recip: {  // §15.3: 1 / P is exact (P a normal power of two)
      const std::uint32_t p = pow2_floor(fp32_amax_scale(amax, sp.q_max));
      stored = f32_finite(p) ? f32_div(kF32One, p) : kF32NaN;
      qf = p;
      break;
    }
    case ScaleKind::gam:  // §17
      stored = gam_block_code(amax, t, sp.q_max);
      qf = stored != 0xFFu ? gam_block_scale(stored, t.m_g) : kF32One;
      break;
    case ScaleKind::nvfp4:  // §18.2, §18.3
      stored = nvfp4_block_code(amax, t.s_enc, sp);
      qf = nvfp4_encode_factor(stored, t.s_enc);
      break;
    case ScaleKind::mx:  // §16: x / X = x · 2^(127 - code), exact
      stored = mx_scale_code(sp, amax);
      qf = stored != 0xFFu ? f32_pow2(127 - static_cast<int>(stored)) : kF32One;
      break;
  }
  BlockFactors f = factors_from_stored(sp, stored, t.m_g, t.t_amax);
  f.qf = qf;
  f.flags |= qflags;
  return f;
}

}  // namespace numref_cuda
