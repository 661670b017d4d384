// numref CUDA kernels — MoR: per-element relative error and the block decisions.   spec §21, §25 – §27
//
//   mor_element<S, D, O>   §21: Q(x) = fake-quant of x in O (bf16 by default) under the block's
//                          factors, d = RN32(|x - Q(x)|), e = RN32(d / |x|) — f32_sub and f32_div
//                          (f32.cuh) — and the element's class (§21.3: zero, non-finite input,
//                          non-finite Q, or a finite error e);
//   tensor_verdict         §26.1 Eq. 2 on the tensor's ErrorSum (§25.2 rules 1, 2 first);
//   subtensor_decide       §27.1 – §27.3 three-way / two-way on a block's two ErrorSums and its
//                          magnitude range.
// The host tests compare mor_element with numref::relative_error on the reference's fake-quant,
// and the decisions with numref::tensor_mor / subtensor_mor (test_cuda_mor.cpp).
#pragma once

#include <cstdint>

#include "numref_arith/amax.cuh"
#include "numref_arith/exact_sum.cuh"
#include "numref_arith/f32.cuh"
#include "numref_arith/quantize.cuh"

namespace numref_cuda {

// §21.3 The class of one element's contribution.
enum class ErrKind : std::uint8_t { value, zero, nonfinite_input, nonfinite_quant };

// §25.3 Reasons, in the order of numref::Reason.
enum class Reason : std::uint8_t {
  accepted,
  all_zero,
  exact,
  threshold,
  not_lower,
  range,
  nonfinite_input,
  nonfinite_quant,
  custom,
  fallback,
  not_evaluated,
};
struct Verdict {
  bool accept = false;
  Reason reason = Reason::not_evaluated;
};

// The widening of an output code of O (bf16, f16, f32) to binary32 (exact for finite codes;
// NaN and ±Inf stay non-finite, which is all §21.3 looks at).
template <class O>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t widen_output(std::uint32_t q) {
  const std::uint32_t mag = q & O::mag_mask;
  const std::uint32_t sgn = (q & O::sign_bit) != 0u ? 0x80000000u : 0u;
  if (detail::is_nan_mag<O>(mag)) return kF32NaN;
  if (detail::is_inf_mag<O>(mag)) return sgn | kF32Inf;
  return sgn | widen_finite_mag<O>(mag);
}

// §21.2 e = RN32(RN32(|x - q|) / |x|) for binary32 codes x (finite, non-zero) and q (finite):
// a non-negative code, +Inf when d or the quotient overflows.
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t relative_error(std::uint32_t x, std::uint32_t q) {
  const std::uint32_t d = f32_sub(x, q) & kF32Abs;
  return f32_div(d, x & kF32Abs);
}

// §21 One element x (source S) of a block quantized into D with factors f, its fake-quant in O:
// writes the element code, the fake-quant code and, for ErrKind::value, the error e.
template <class S, class D, class O>
NUMREF_HD inline ErrKind mor_element(std::uint32_t x, const BlockFactors& f, const ElementCtx<D>& c,
                                     const CastPolicy& wide_d, const CastPolicy& wide_o, std::uint32_t& code,
                                     std::uint32_t& fake, std::uint32_t& e) {
  std::uint32_t counts = 0;
  code = quantize_element<S, D>(x, f, c, 0u, counts);
  fake = to_output<O>(dequantize_element<D>(code, f, wide_d), wide_o);
  const std::uint32_t mag = x & S::mag_mask;
  if (detail::is_nan_mag<S>(mag) || detail::is_inf_mag<S>(mag)) return ErrKind::nonfinite_input;
  if (mag == 0u) return ErrKind::zero;
  const std::uint32_t q = widen_output<O>(fake);
  if (!f32_finite(q)) return ErrKind::nonfinite_quant;
  const std::uint32_t xf = ((x & S::sign_bit) != 0u ? 0x80000000u : 0u) | widen_finite_mag<S>(mag);
  e = relative_error(xf, q);
  return f32_finite(e) ? ErrKind::value : ErrKind::nonfinite_quant;
}

// §26.1 Tensor-level MoR's Eq. 2 with §25.2's rules 1 and 2.
NUMREF_HD inline Verdict tensor_verdict(const ErrorSumValue& es, std::uint64_t num, std::uint64_t den) {
  if (es.nonfinite_input != 0u) return {false, Reason::nonfinite_input};
  if (es.nonfinite_quant != 0u) return {false, Reason::nonfinite_quant};
  const bool below = mean_below(es, num, den);
  if (es.n == 0u) return {below, below ? Reason::all_zero : Reason::threshold};
  return {below, below ? Reason::accepted : Reason::threshold};
}

namespace detail {
NUMREF_HD inline int compare_sums(const ErrorSumValue& a, const ErrorSumValue& b) {
  for (int i = 4; i >= 0; --i)
    if (a.s[i] != b.s[i]) return a.s[i] < b.s[i] ? -1 : 1;
  return 0;
}
}  // namespace detail

// §27.4 block types: 0 = f8e4m3fn, 1 = f8e5m2, 2 = bf16 (kept).
inline constexpr std::uint8_t kTypeE4M3 = 0, kTypeE5M2 = 1, kTypeKept = 2;

// §27 The decision of one block from its E4M3 and E5M2 error sums and, for Eq. 4, the largest and
// smallest non-zero magnitudes (max = 0 when the block has no non-zero finite element). e5m2_emin
// and e5m2_max are the format's emin and max finite (binary32 code).
NUMREF_HD inline std::uint8_t subtensor_decide(const ErrorSumValue& e4, const ErrorSumValue& e5, std::uint32_t max,
                                               std::uint32_t min, bool three_way, int e5m2_emin, std::uint32_t e5m2_max,
                                               Verdict& eq3, Verdict& eq4) {
  eq3 = Verdict{};
  eq4 = Verdict{};
  // T_1 = E4M3 with M_1 = Eq. 3 (§27.1; special blocks §27.3)
  if (e4.nonfinite_input != 0u)
    eq3 = {false, Reason::nonfinite_input};
  else if (e4.nonfinite_quant != 0u)
    eq3 = {false, Reason::nonfinite_quant};
  else if (e4.n == 0u)
    eq3 = {true, Reason::all_zero};
  else if (e4.sum_is_zero())
    eq3 = {true, Reason::exact};
  else if (e5.nonfinite_quant != 0u)
    eq3 = {false, Reason::nonfinite_quant};
  else
    eq3 = detail::compare_sums(e4, e5) < 0 ? Verdict{true, Reason::accepted} : Verdict{false, Reason::not_lower};
  if (eq3.accept) return kTypeE4M3;
  if (!three_way) return kTypeKept;
  // T_2 = E5M2 with M_2 = Eq. 4 (§27.1)
  if (e5.nonfinite_input != 0u)
    eq4 = {false, Reason::nonfinite_input};
  else if (e5.nonfinite_quant != 0u)
    eq4 = {false, Reason::nonfinite_quant};
  else if (max == 0u)
    eq4 = {true, Reason::all_zero};
  else
    eq4 = fits_normal_range(max, min, e5m2_emin, e5m2_max) ? Verdict{true, Reason::accepted}
                                                           : Verdict{false, Reason::range};
  return eq4.accept ? kTypeE5M2 : kTypeKept;
}

}  // namespace numref_cuda
