// numref — amax and per-block scale rules.            spec §13 – §16, §18 (GAM §17: gam.hpp)
//
// Every function here is O(1) or one pass over one block, so a caller can stream a tensor
// block by block; quantize() (quantize.hpp) is built from them. All results are decided in
// integers: amax is an exact maximum of magnitudes, every division or product is rounded
// once by the core (exact.hpp), power-of-two exponents are read from bits, never log2f.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "numref/exact.hpp"
#include "numref/format.hpp"
#include "numref/partition.hpp"
#include "numref/tensor.hpp"

namespace numref {

// ---- §13 amax --------------------------------------------------------------------------

// §13.2 What a NaN element does to the amax of its block.
enum class AmaxNan : std::uint8_t {
  propagate,  // default: the amax is NaN, the block is poisoned (§13.3)
  ignore,     // the amax is taken over the non-NaN elements
};
// §13.2 What a ±Inf element does to the amax of its block.
enum class AmaxInf : std::uint8_t {
  propagate,  // default: the amax is +Inf, the block is poisoned (§13.3)
  ignore,     // the amax is taken over the finite elements (the ±Inf elements are then
              // converted like any element, §19.2: ±max finite under saturation)
};
struct AmaxPolicy {
  AmaxNan nan = AmaxNan::propagate;
  AmaxInf inf = AmaxInf::propagate;
  friend bool operator==(const AmaxPolicy&, const AmaxPolicy&) = default;
};

// §13.1 The amax of a block as a binary32 code: +0, a positive finite value (the exact
// maximum magnitude, widened exactly to binary32), +Inf (0x7F800000) or the canonical NaN
// (0x7FC00000). For these codes integer order is value order with NaN above +Inf, so the
// amax of a union of blocks is the integer maximum of their amaxes (§13.4).
struct Amax {
  std::uint32_t f32 = 0;
  bool is_zero() const { return f32 == 0; }
  bool poisoned() const { return !f32_is_finite(f32); }  // §13.3
  friend bool operator==(const Amax&, const Amax&) = default;
};

// §13.1 / §13.2 amax of the elements of `r` in `x` under `p`.
Amax block_amax(const TensorView& x, const BlockRange& r, const AmaxPolicy& p);
// §13.4 amax of the union of two element sets.
constexpr Amax combine(Amax a, Amax b) { return a.f32 >= b.f32 ? a : b; }

// ---- scale rules ------------------------------------------------------------------------

enum class ScaleRule : std::uint8_t {
  amax,          // §14.1 S = RN32(q_max / amax), stored S (f32)
  amax_recip,    // §14.2 quantize with S, store R = RN32(1 / S) (f32), dequantize x R
  amax_dequant,  // §14.3 store D = RN32(amax / q_max) (f32), quantize x / D, dequantize x D
  pow2,          // §15   P = 2^E(S), the exponent read from the bits of S (f32)
  mx_floor,      // §16.2 OCP MX v1.0 §6.3: X = 2^(E(amax) - emax_elem) (E8M0)
  mx_ceil,       // §16.3 X = 2^(ceil(log2 amax) - emax_elem)
  mx_even,       // §16.4 X = 2^(E(amax rounded to the element precision) - emax_elem)
  mx_rceil,      // §16.5 X = 2^ceil(log2(amax / q_max)): the smallest X with amax / X <= q_max
  mx_rceil_f32,  // §16.6 cuBLAS / TransformerEngine: X = ceil_E8M0(RN32(amax * RN32(1 / q_max)))
  gam,           // §17   (1.m_g) * 2^e_b: group mantissa (23 bits) + E8M0 block exponent
  nvfp4,         // §18   f32 tensor scale x E4M3 block scale (TransformerEngine NVFP4 recipe)
  int8,          // §20   delta = RN32(amax / 127) (f32), range [-127, 127]
  int8_127_5,    // §20   delta = RN32(amax / 127.5) (f32), range [-128, 127]
};
inline constexpr int kScaleRuleCount = 13;
// §19.6 names: amax, amax-recip, amax-dequant, pow2, mx-floor, mx-ceil, mx-even, mx-rceil,
// mx-rceil-f32, gam, nvfp4, int8, int8-127.5.
std::string_view to_string(ScaleRule r);
std::optional<ScaleRule> parse_scale_rule(std::string_view s);
// §19.4 The format of the stored per-block scale: f32, f8e8m0fnu (MX, GAM) or f8e4m3fn (NVFP4).
const Format& scale_format(ScaleRule r);
constexpr bool is_mx(ScaleRule r) {
  return r == ScaleRule::mx_floor || r == ScaleRule::mx_ceil || r == ScaleRule::mx_even || r == ScaleRule::mx_rceil ||
         r == ScaleRule::mx_rceil_f32;
}
constexpr bool is_int8(ScaleRule r) { return r == ScaleRule::int8 || r == ScaleRule::int8_127_5; }

// §14.4 q_max of an element format: its largest finite value (448 for f8e4m3fn, 57344 for
// f8e5m2, 6 for f4e2m1fn, 127 for int8, ...).
Exact format_qmax(const Format& elem);
// §14.4 Checks an explicit q_max: finite, 4 <= q_max <= max finite f32, at most 24
// significant bits. Returns an error message or an empty string.
std::string check_qmax(const Exact& q);

// §14.1 FP32 amax scale S (a binary32 code): 1.0 for amax = 0; NaN for a poisoned amax;
// else RN32(q_max / amax) clamped to the largest finite binary32 (an amax so small that
// q_max / amax overflows binary32 gets 0x7F7FFFFF; clamping the scale DOWN never makes an
// element saturate).
std::uint32_t fp32_amax_scale(Amax a, const Exact& q_max);
// §14.3 FP32 dequant scale D: 1.0 for amax = 0; NaN for a poisoned amax; else
// RN32(amax / q_max), raised to the smallest positive binary32 2^-149 if it rounds to 0
// (raising a divisor never makes an element saturate).
std::uint32_t fp32_dequant_scale(Amax a, const Exact& q_max);
// §15 The power of two 2^E(S) of a scale S (binary32 code): the exponent field kept and the
// fraction cleared for a normal S; the top bit of the fraction for a subnormal S; NaN stays NaN.
std::uint32_t pow2_floor(std::uint32_t s);

// §16.1 emax_elem = E(q_max) = floor(log2 q_max): 8 for f8e4m3fn, 15 for f8e5m2, 4 for
// f6e3m2fn, 2 for f6e2m3fn and f4e2m1fn, 6 for int8.
int mx_emax_elem(const Exact& q_max);
// §16 The E8M0 shared-scale code of a block under one of the mx_* rules: X = 2^(code - 127).
// The exponent is clamped to [-127, 127] (codes 00..FE); amax = 0 gives 00 (the exponent is
// -infinity, clamped); a poisoned amax gives FF (NaN). `elem_precision` (fraction bits + 1)
// is used by mx_even only.
std::uint32_t mx_scale_code(ScaleRule rule, Amax a, const Exact& q_max, int elem_precision);

// ---- §18 NVFP4 two-level scale ----------------------------------------------------------
// C = RN32(q_scale * q_max) with q_scale = max finite of f8e4m3fn (448): 2688 for f4e2m1fn.
std::uint32_t nvfp4_global_constant(const Exact& q_max);
// §18.1 tensor encode scale S_enc: 1.0 for amax = 0, NaN for a poisoned amax, else
// RN32(C / t_amax) clamped to max finite.
std::uint32_t nvfp4_tensor_scale(Amax t, const Exact& q_max);
// §18.2 block decode scale d_b (an f8e4m3fn code): RNE, saturating, of
// RN32(b_amax * RN32(S_enc * RN32(1 / q_max))); 7F (NaN) when S_enc is NaN.
std::uint32_t nvfp4_block_code(Amax b, std::uint32_t s_enc, const Exact& q_max);
// §18.3 quantize factor c_b = min(RN32(1 / RN32(d_b * RN32(1 / S_enc))), max finite) (f32 code).
std::uint32_t nvfp4_encode_factor(std::uint32_t d_b, std::uint32_t s_enc);
// §18.4 dequantize factor f_b = RN32(RN32(d_b * t_amax) * RN32(1 / C)) (f32 code).
std::uint32_t nvfp4_decode_factor(std::uint32_t d_b, Amax t, const Exact& q_max);

}  // namespace numref
