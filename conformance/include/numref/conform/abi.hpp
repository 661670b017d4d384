// numref conformance — C ABI <-> reference types (header-only; used by the runner and by
// the built-in backends).                                              spec §31.3
#pragma once

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "numref/backend.h"
#include "numref/format.hpp"
#include "numref/metrics.hpp"
#include "numref/mor.hpp"
#include "numref/policy.hpp"
#include "numref/quantize.hpp"
#include "numref/scale.hpp"

namespace numref::conform {

// §31.3 The C format id of a format row and back. The ids are the table order of §2.1,
// which is also the order of numref::FormatId; the test test_abi.cpp checks both.
inline std::uint32_t c_format(const Format& f) { return static_cast<std::uint32_t>(f.id); }
inline const Format* format_from_c(std::uint32_t id) {
  return id < static_cast<std::uint32_t>(kFormatCount) ? &kFormats[id] : nullptr;
}

// §31.3 Round / knob enums <-> the NUMREF_* constants (explicit tables, no reliance on
// the C++ enums' underlying values).
inline std::uint8_t c_round(Round r) {
  switch (r) {
    case Round::rne: return NUMREF_ROUND_RNE;
    case Round::rtz: return NUMREF_ROUND_RTZ;
    case Round::rup: return NUMREF_ROUND_RUP;
    case Round::rdn: return NUMREF_ROUND_RDN;
    case Round::rna: return NUMREF_ROUND_RNA;
    case Round::sr: return NUMREF_ROUND_SR;
  }
  return 0xFF;
}
inline std::uint8_t c_nan(NanOut v) {
  switch (v) {
    case NanOut::sign: return NUMREF_NAN_SIGN;
    case NanOut::canonical: return NUMREF_NAN_CANONICAL;
    case NanOut::ones: return NUMREF_NAN_ONES;
    case NanOut::payload: return NUMREF_NAN_PAYLOAD;
  }
  return 0xFF;
}
inline std::uint8_t c_nan_to_finite(NanToFinite v) {
  switch (v) {
    case NanToFinite::zero: return NUMREF_NAN_TO_FINITE_ZERO;
    case NanToFinite::negzero: return NUMREF_NAN_TO_FINITE_NEGZERO;
    case NanToFinite::max: return NUMREF_NAN_TO_FINITE_MAX;
  }
  return 0xFF;
}
inline std::uint8_t c_e8m0(E8m0Round v) {
  switch (v) {
    case E8m0Round::follow: return NUMREF_E8M0_FOLLOW;
    case E8m0Round::floor: return NUMREF_E8M0_FLOOR;
    case E8m0Round::ceil: return NUMREF_E8M0_CEIL;
    case E8m0Round::even: return NUMREF_E8M0_EVEN;
    case E8m0Round::tiesup: return NUMREF_E8M0_TIESUP;
  }
  return 0xFF;
}

// §31.3 The profile whose policy for target `to` equals p exactly (first in table order),
// or NUMREF_PROFILE_NONE.
inline std::int32_t c_profile(const Policy& p, const Format& to) {
  const Profile* all = all_profiles();
  for (int i = 0; i < kProfileCount; ++i)
    if (all[i].for_target(to) == p) return static_cast<std::int32_t>(all[i].id);
  return NUMREF_PROFILE_NONE;
}

// §31.3 The C policy struct of p for target `to`. `text` must outlive the struct
// (it receives describe(p) and the struct points into it).
inline numref_policy to_c_policy(const Policy& p, const Format& to, std::string& text) {
  text = describe(p);
  numref_policy c{};
  c.round = c_round(p.round);
  c.sr_bits = static_cast<std::uint8_t>(p.round == Round::sr ? p.sr_bits : 0);
  c.sr_variant = p.sr_variant == SrVariant::add ? NUMREF_SR_ADD : NUMREF_SR_FRACTION;
  c.overflow = p.overflow == Overflow::saturate ? NUMREF_OVERFLOW_SATURATE : NUMREF_OVERFLOW_NONSAT;
  c.inf_sat = p.inf_sat == InfSat::max ? NUMREF_INF_SAT_MAX : NUMREF_INF_SAT_KEEP;
  c.nan = c_nan(p.nan);
  c.nan_to_finite = c_nan_to_finite(p.nan_to_finite);
  c.e8m0_round = c_e8m0(p.e8m0_round);
  c.zero_to_nozero = p.zero_to_nozero == ZeroToNoZero::min ? NUMREF_ZERO_TO_NOZERO_MIN : NUMREF_ZERO_TO_NOZERO_NAN;
  c.negative = p.negative == Negative::abs ? NUMREF_NEGATIVE_ABS : NUMREF_NEGATIVE_NAN;
  c.daz = p.daz ? 1 : 0;
  c.ftz = p.ftz ? 1 : 0;
  c.tininess = p.tininess == Tininess::before ? NUMREF_TININESS_BEFORE : NUMREF_TININESS_AFTER;
  c.int_range = p.int_range == IntRange::symmetric ? NUMREF_INT_RANGE_SYMMETRIC : NUMREF_INT_RANGE_FULL;
  c.profile = c_profile(p, to);
  c.text = text.c_str();
  return c;
}

// §31.3 The numref::Policy of a C policy struct; nullopt when a field is out of range.
inline std::optional<Policy> from_c_policy(const numref_policy& c) {
  Policy p;
  switch (c.round) {
    case NUMREF_ROUND_RNE: p.round = Round::rne; break;
    case NUMREF_ROUND_RTZ: p.round = Round::rtz; break;
    case NUMREF_ROUND_RUP: p.round = Round::rup; break;
    case NUMREF_ROUND_RDN: p.round = Round::rdn; break;
    case NUMREF_ROUND_RNA: p.round = Round::rna; break;
    case NUMREF_ROUND_SR: p.round = Round::sr; break;
    default: return std::nullopt;
  }
  p.sr_bits = p.round == Round::sr ? c.sr_bits : 0;
  if (c.sr_variant > NUMREF_SR_ADD || c.overflow > NUMREF_OVERFLOW_NONSAT || c.inf_sat > NUMREF_INF_SAT_KEEP ||
      c.nan > NUMREF_NAN_PAYLOAD || c.nan_to_finite > NUMREF_NAN_TO_FINITE_MAX || c.e8m0_round > NUMREF_E8M0_TIESUP ||
      c.zero_to_nozero > NUMREF_ZERO_TO_NOZERO_MIN || c.negative > NUMREF_NEGATIVE_ABS || c.daz > 1 || c.ftz > 1 ||
      c.tininess > NUMREF_TININESS_BEFORE || c.int_range > NUMREF_INT_RANGE_SYMMETRIC)
    return std::nullopt;
  p.sr_variant = c.sr_variant == NUMREF_SR_ADD ? SrVariant::add : SrVariant::fraction;
  p.overflow = c.overflow == NUMREF_OVERFLOW_SATURATE ? Overflow::saturate : Overflow::nonsat;
  p.inf_sat = c.inf_sat == NUMREF_INF_SAT_MAX ? InfSat::max : InfSat::keep;
  constexpr NanOut kNan[] = {NanOut::sign, NanOut::canonical, NanOut::ones, NanOut::payload};
  p.nan = kNan[c.nan];
  constexpr NanToFinite kNtf[] = {NanToFinite::zero, NanToFinite::negzero, NanToFinite::max};
  p.nan_to_finite = kNtf[c.nan_to_finite];
  constexpr E8m0Round kE8[] = {E8m0Round::follow, E8m0Round::floor, E8m0Round::ceil, E8m0Round::even,
                               E8m0Round::tiesup};
  p.e8m0_round = kE8[c.e8m0_round];
  p.zero_to_nozero = c.zero_to_nozero == NUMREF_ZERO_TO_NOZERO_MIN ? ZeroToNoZero::min : ZeroToNoZero::nan;
  p.negative = c.negative == NUMREF_NEGATIVE_ABS ? Negative::abs : Negative::nan;
  p.daz = c.daz != 0;
  p.ftz = c.ftz != 0;
  p.tininess = c.tininess == NUMREF_TININESS_BEFORE ? Tininess::before : Tininess::after;
  p.int_range = c.int_range == NUMREF_INT_RANGE_SYMMETRIC ? IntRange::symmetric : IntRange::full;
  return p;
}

// §31.5 The NUMREF_RULE_* constant of a scale rule and back (explicit table, §19.6 order).
inline constexpr ScaleRule kCRules[NUMREF_RULE_COUNT] = {
    ScaleRule::amax,     ScaleRule::amax_recip, ScaleRule::amax_dequant, ScaleRule::pow2,         ScaleRule::mx_floor,
    ScaleRule::mx_ceil,  ScaleRule::mx_even,    ScaleRule::mx_rceil,     ScaleRule::mx_rceil_f32, ScaleRule::gam,
    ScaleRule::nvfp4,    ScaleRule::int8,       ScaleRule::int8_127_5};
inline std::uint32_t c_rule(ScaleRule r) {
  for (std::uint32_t i = 0; i < NUMREF_RULE_COUNT; ++i)
    if (kCRules[i] == r) return i;
  return 0xFFu;
}
inline std::optional<ScaleRule> rule_from_c(std::uint32_t v) {
  if (v >= NUMREF_RULE_COUNT) return std::nullopt;
  return kCRules[v];
}

// §31.5 A C tensor operation as the reference's QuantizeSpec plus the view, every field read
// from the struct (used by the reference backend and the test backends, so that a
// marshalling slip of the runner shows as a failure). Throws std::invalid_argument for
// anything the reference rejects.
struct TensorOpSpec {
  QuantizeSpec spec;
  const Format* src = nullptr;
  const Format* out = nullptr;
  std::size_t rows = 0, cols = 0;
  std::ptrdiff_t rs = 0, cs = 0;
};
inline TensorOpSpec tensor_spec_from_c(std::uint32_t family, const numref_tensor_op& op) {
  if (op.struct_size < sizeof(numref_tensor_op)) throw std::invalid_argument("numref_tensor_op from an older runner");
  TensorOpSpec t;
  const Format* elem = format_from_c(op.element);
  t.src = format_from_c(op.source);
  t.out = format_from_c(op.out_format);
  const auto rule = rule_from_c(op.rule);
  const auto pol = from_c_policy(op.policy);
  const auto wide = from_c_policy(op.wide);
  if (!elem || !t.src || !t.out || !rule || !pol || !wide) throw std::invalid_argument("bad format, rule or policy id");
  t.rows = op.rows;
  t.cols = op.cols;
  t.rs = static_cast<std::ptrdiff_t>(op.row_stride);
  t.cs = static_cast<std::ptrdiff_t>(op.col_stride);
  QuantizeSpec& q = t.spec;
  q.element = elem;
  q.rule = *rule;
  q.partition = Partition::blocks(op.block_rows, op.block_cols);
  q.group = *rule == ScaleRule::gam ? Partition::blocks(op.group_rows, op.group_cols) : Partition::tensor();
  q.amax.nan = op.amax_nan == NUMREF_AMAX_IGNORE ? AmaxNan::ignore : AmaxNan::propagate;
  q.amax.inf = op.amax_inf == NUMREF_AMAX_IGNORE ? AmaxInf::ignore : AmaxInf::propagate;
  q.policy = *pol;
  q.wide = *wide;
  q.apply = op.apply == NUMREF_APPLY_FUSED ? ScaleApply::fused : ScaleApply::rn32;
  q.dequant = op.dequant == NUMREF_DEQUANT_RECIPROCAL ? DequantOp::reciprocal : DequantOp::divide;
  q.q_max = exact_f32(op.q_max);
  const Quantizer validate(q, t.rows, t.cols);  // throws std::invalid_argument
  if (family != NUMREF_TENSOR_DEQUANTIZE) {
    const std::string err = check_source_format(*t.src);
    if (!err.empty()) throw std::invalid_argument(err);
  }
  if (family == NUMREF_TENSOR_FAKE_QUANT && t.out->bits <= 8)
    throw std::invalid_argument("fake-quant output must be 16 or 32 bits");
  if (BlockGrid(t.rows, t.cols, q.partition).count() != op.n_blocks) throw std::invalid_argument("n_blocks disagrees");
  return t;
}

// §31.7 The C form of the reference's MoR results (the reference backend and the test
// backends write them through these, so they marshal alike).
inline void to_c_error_sum(const ErrorSum& s, numref_error_sum& c) {
  for (std::size_t k = 0; k < 5; ++k) c.limb[k] = s.sum.limbs()[k];
  c.n = s.n;
  c.nonfinite_input = s.nonfinite_input;
  c.nonfinite_quant = s.nonfinite_quant;
  c.zeros = s.zeros;
}
inline void to_c_tensor_mor(const TensorMorResult& r, numref_mor_result& res, std::uint32_t* scales) {
  res.decision = r.quantized ? NUMREF_BLOCK_F8E4M3FN : NUMREF_BLOCK_KEPT;
  res.reason = static_cast<std::uint32_t>(r.verdict.reason);
  res.mean = r.mean;
  res.group_mantissa = r.scales.group_mantissa.empty() ? 0u : r.scales.group_mantissa[0];
  to_c_error_sum(r.error, res.error);
  std::copy(r.scales.scales.begin(), r.scales.scales.end(), scales);
}
inline void to_c_subtensor_mor(const SubtensorMorResult& r, std::uint8_t* type, std::uint8_t* eq3, std::uint8_t* eq4,
                               numref_error_sum* e4m3_sum, numref_error_sum* e5m2_sum, std::uint32_t* e4m3_scales,
                               std::uint32_t* e5m2_scales, std::uint32_t* group_mantissa, std::uint32_t* out) {
  for (std::size_t b = 0; b < r.type.size(); ++b) {
    type[b] = static_cast<std::uint8_t>(r.type[b]);
    eq3[b] = static_cast<std::uint8_t>(r.eq3[b].reason);
    eq4[b] = static_cast<std::uint8_t>(r.eq4[b].reason);
    to_c_error_sum(r.e4m3_sum[b], e4m3_sum[b]);
    to_c_error_sum(r.e5m2_sum[b], e5m2_sum[b]);
    e4m3_scales[b] = r.e4m3_scales.scales[b];
    e5m2_scales[b] = r.e5m2_scales.scales[b];
  }
  group_mantissa[0] = r.e4m3_scales.group_mantissa.empty() ? 0u : r.e4m3_scales.group_mantissa[0];
  group_mantissa[1] = r.e5m2_scales.group_mantissa.empty() ? 0u : r.e5m2_scales.group_mantissa[0];
  std::copy(r.fake.begin(), r.fake.end(), out);
}

}  // namespace numref::conform
