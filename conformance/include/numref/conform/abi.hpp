// numref conformance — C ABI <-> reference types (header-only; used by the runner and by
// the built-in backends).                                              spec §32.3
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "numref/backend.h"
#include "numref/format.hpp"
#include "numref/metrics.hpp"
#include "numref/mma.hpp"
#include "numref/mor.hpp"
#include "numref/policy.hpp"
#include "numref/quantize.hpp"
#include "numref/scale.hpp"

namespace numref::conform {

// ---- §32.3 formats ---------------------------------------------------------------------

// The C format id of a format row and back: NUMREF_FMT_* is the table order of §2.1, which is
// also the order of numref::FormatId (pinned below; conformance/tests/test_abi.cpp round-trips).
inline std::uint32_t c_format(const Format& f) { return static_cast<std::uint32_t>(f.id); }
inline const Format* format_from_c(std::uint32_t id) {
  return id < static_cast<std::uint32_t>(kFormatCount) ? &kFormats[id] : nullptr;
}
// NUMREF_FORMAT_LIST names every row once, and each NUMREF_FMT_* equals its row's index.
#define NUMREF_ABI_PIN_FORMAT(NAME, name)                                   \
  static_assert(NUMREF_FMT_##NAME == static_cast<unsigned>(FormatId::name), \
                "NUMREF_FMT_" #NAME " is not the table index of " #name);
NUMREF_FORMAT_LIST(NUMREF_ABI_PIN_FORMAT)
#undef NUMREF_ABI_PIN_FORMAT
#define NUMREF_ABI_COUNT_ONE(NAME, name) +1
static_assert(NUMREF_FMT_COUNT == kFormatCount && 0 NUMREF_FORMAT_LIST(NUMREF_ABI_COUNT_ONE) == kFormatCount,
              "one NUMREF_FMT_* and one NUMREF_FORMAT_LIST entry per row of numref::kFormats");

// ---- §32.3 policy knobs -------------------------------------------------------------------

// The numref_policy field of every row of numref::kPolicyKnobs, in table order (the table's
// rows are in the struct's field order). Each C value is the row's c_first + the value's index.
inline constexpr std::uint8_t numref_policy::*kCPolicyFields[] = {
    &numref_policy::round,         &numref_policy::sr_bits,    &numref_policy::sr_variant,
    &numref_policy::overflow,      &numref_policy::inf_sat,    &numref_policy::nan,
    &numref_policy::nan_to_finite, &numref_policy::e8m0_round, &numref_policy::zero_to_nozero,
    &numref_policy::negative,      &numref_policy::daz,        &numref_policy::ftz,
    &numref_policy::tininess,      &numref_policy::int_range,  &numref_policy::e8m0_low,
    &numref_policy::inf_nan};
static_assert(std::size(kCPolicyFields) == kPolicyKnobCount, "one numref_policy field per knob");

namespace detail {
// The C value of an enum (or 0/1) knob's value.
template <class E>
constexpr std::uint8_t c_knob(E v) {
  return static_cast<std::uint8_t>(policy_knob<E>().c_first + static_cast<unsigned>(v));
}
// Calls f(knob, C field) for every knob, in table order.
template <class F>
constexpr void for_each_c_knob(F&& f) {
  std::size_t i = 0;
  for_each_policy_knob([&](const auto& k) { f(k, kCPolicyFields[i++]); });
}
}  // namespace detail

// The NUMREF_* knob constants of backend.h, each pinned to its enumerator through the table.
static_assert(NUMREF_ROUND_RNE == detail::c_knob(Round::rne) && NUMREF_ROUND_RTZ == detail::c_knob(Round::rtz) &&
              NUMREF_ROUND_RUP == detail::c_knob(Round::rup) && NUMREF_ROUND_RDN == detail::c_knob(Round::rdn) &&
              NUMREF_ROUND_RNA == detail::c_knob(Round::rna) && NUMREF_ROUND_SR == detail::c_knob(Round::sr));
static_assert(NUMREF_SR_FRACTION == detail::c_knob(SrVariant::fraction) &&
              NUMREF_SR_ADD == detail::c_knob(SrVariant::add));
static_assert(NUMREF_OVERFLOW_SATURATE == detail::c_knob(Overflow::saturate) &&
              NUMREF_OVERFLOW_NONSAT == detail::c_knob(Overflow::nonsat));
static_assert(NUMREF_INF_SAT_MAX == detail::c_knob(InfSat::max) && NUMREF_INF_SAT_KEEP == detail::c_knob(InfSat::keep));
static_assert(
    NUMREF_NAN_SIGN == detail::c_knob(NanOut::sign) && NUMREF_NAN_CANONICAL == detail::c_knob(NanOut::canonical) &&
    NUMREF_NAN_ONES == detail::c_knob(NanOut::ones) && NUMREF_NAN_PAYLOAD == detail::c_knob(NanOut::payload) &&
    NUMREF_NAN_ONES_SIGN == detail::c_knob(NanOut::ones_sign) && NUMREF_NAN_RAW == detail::c_knob(NanOut::raw) &&
    NUMREF_NAN_ALL_ONES == detail::c_knob(NanOut::all_ones) && NUMREF_NAN_RAW_PLUS == detail::c_knob(NanOut::raw_plus));
static_assert(NUMREF_NAN_TO_FINITE_ZERO == detail::c_knob(NanToFinite::zero) &&
              NUMREF_NAN_TO_FINITE_NEGZERO == detail::c_knob(NanToFinite::negzero) &&
              NUMREF_NAN_TO_FINITE_MAX == detail::c_knob(NanToFinite::max) &&
              NUMREF_NAN_TO_FINITE_SIGNZERO == detail::c_knob(NanToFinite::signzero) &&
              NUMREF_NAN_TO_FINITE_FLIPZERO == detail::c_knob(NanToFinite::flipzero));
static_assert(NUMREF_E8M0_FOLLOW == detail::c_knob(E8m0Round::follow) &&
              NUMREF_E8M0_FLOOR == detail::c_knob(E8m0Round::floor) &&
              NUMREF_E8M0_CEIL == detail::c_knob(E8m0Round::ceil) &&
              NUMREF_E8M0_EVEN == detail::c_knob(E8m0Round::even) &&
              NUMREF_E8M0_TIESUP == detail::c_knob(E8m0Round::tiesup));
static_assert(NUMREF_ZERO_TO_NOZERO_NAN == detail::c_knob(ZeroToNoZero::nan) &&
              NUMREF_ZERO_TO_NOZERO_MIN == detail::c_knob(ZeroToNoZero::min));
static_assert(NUMREF_NEGATIVE_NAN == detail::c_knob(Negative::nan) &&
              NUMREF_NEGATIVE_ABS == detail::c_knob(Negative::abs) &&
              NUMREF_NEGATIVE_INF_ABS == detail::c_knob(Negative::inf_abs));
static_assert(NUMREF_TININESS_AFTER == detail::c_knob(Tininess::after) &&
              NUMREF_TININESS_BEFORE == detail::c_knob(Tininess::before));
static_assert(NUMREF_INT_RANGE_FULL == detail::c_knob(IntRange::full) &&
              NUMREF_INT_RANGE_SYMMETRIC == detail::c_knob(IntRange::symmetric));
static_assert(NUMREF_E8M0_LOW_LINEAR == detail::c_knob(E8m0Low::linear) &&
              NUMREF_E8M0_LOW_GRID == detail::c_knob(E8m0Low::grid) &&
              NUMREF_E8M0_LOW_NAN == detail::c_knob(E8m0Low::nan));
static_assert(NUMREF_INF_NAN_SLOT == detail::c_knob(InfNan::slot) && NUMREF_INF_NAN_NAN == detail::c_knob(InfNan::nan));
static_assert(offsetof(numref_policy, inf_nan) + 1 == offsetof(numref_policy, profile) &&
                  std::size(kCPolicyFields) == 16,
              "numref_policy keeps 16 knob bytes before `profile` (ABI 1.x layout)");

// ---- §32.3 profiles ----------------------------------------------------------------------

// NUMREF_PROFILE_LIST names every row of the profile table once, and each NUMREF_PROFILE_* equals
// its row's ProfileId.
#define NUMREF_ABI_PIN_PROFILE(NAME, name)                                  \
  static_assert(NUMREF_PROFILE_##NAME == static_cast<int>(ProfileId::name), \
                "NUMREF_PROFILE_" #NAME " is not the ProfileId of " #name);
NUMREF_PROFILE_LIST(NUMREF_ABI_PIN_PROFILE)
#undef NUMREF_ABI_PIN_PROFILE
static_assert(NUMREF_PROFILE_COUNT == kProfileCount && 0 NUMREF_PROFILE_LIST(NUMREF_ABI_COUNT_ONE) == kProfileCount,
              "one NUMREF_PROFILE_LIST entry per row of the profile table (numref::ProfileId)");
// The numbers of ABI 1.7 never change: a profile inserted before the last of them would move it.
static_assert(NUMREF_PROFILE_TORCHAO_FLOAT8_INFERENCE == 21 && NUMREF_PROFILE_NONE < 0,
              "NUMREF_PROFILE_* numbers are fixed: append new profiles at the end of NUMREF_PROFILE_LIST");

// The profile whose policy for target `to` equals p exactly (first in table order),
// or NUMREF_PROFILE_NONE. With `from`, the policy of the cast from -> to (§10.2 rules).
inline std::int32_t c_profile(const Policy& p, const Format& to, const Format* from = nullptr) {
  const Profile* all = all_profiles();
  for (int i = 0; i < kProfileCount; ++i)
    if ((from ? all[i].for_cast(*from, to) : all[i].for_target(to)) == p) return static_cast<std::int32_t>(all[i].id);
  return NUMREF_PROFILE_NONE;
}

// The C policy struct of p for target `to`. `text` must outlive the struct (it receives
// describe(p) and the struct points into it). sr_bits is 0 unless round=sr.
// With `from` (a cast), the profile is matched against the pair's policy (§10.2).
inline numref_policy to_c_policy(const Policy& p, const Format& to, std::string& text, const Format* from = nullptr) {
  text = describe(p);
  numref_policy c{};
  detail::for_each_c_knob([&](const auto& k, std::uint8_t numref_policy::*field) {
    const auto v = p.*k.member;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, int>)  // sr_bits, a number
      c.*field = static_cast<std::uint8_t>(p.round == Round::sr ? v : 0);
    else
      c.*field = static_cast<std::uint8_t>(k.c_first + static_cast<unsigned>(v));
  });
  c.profile = c_profile(p, to, from);
  c.text = text.c_str();
  return c;
}

// The numref::Policy of a C policy struct; nullopt when a field is out of range (the ranges are
// the table's value counts).
inline std::optional<Policy> from_c_policy(const numref_policy& c) {
  Policy p;
  bool ok = true;
  detail::for_each_c_knob([&](const auto& k, std::uint8_t numref_policy::*field) {
    using T = std::remove_cvref_t<decltype(p.*k.member)>;
    const unsigned v = c.*field;
    if constexpr (std::is_same_v<T, int>) {  // sr_bits (after round in the table)
      p.*k.member = p.round == Round::sr ? static_cast<int>(v) : 0;
    } else {
      if (v < k.c_first || v - k.c_first >= k.words.size())
        ok = false;
      else
        p.*k.member = static_cast<T>(v - k.c_first);
    }
  });
  if (!ok) return std::nullopt;
  return p;
}

// ---- §32.5 / §19.8 recipe knobs (1.4) ----------------------------------------------------------

namespace detail {
// The numref_recipe field of every row of numref::kRecipeKnobs, in table order.
inline constexpr std::uint8_t numref_recipe::*kCRecipeFields[] = {
    &numref_recipe::amax_floor, &numref_recipe::scale_exp,   &numref_recipe::zero_code,    &numref_recipe::inf_block,
    &numref_recipe::nan_block,  &numref_recipe::elem_nan,    &numref_recipe::mx_descale,   &numref_recipe::nan_scale,
    &numref_recipe::zero_sign,  &numref_recipe::scale_round, &numref_recipe::zero_divisor, &numref_recipe::divisor,
    &numref_recipe::elem_exp,   &numref_recipe::nvfp4_scale};
static_assert(std::size(kCRecipeFields) == std::tuple_size_v<decltype(kRecipeKnobs)>,
              "one numref_recipe field per knob");
// The C value of a recipe knob's value: its word's index in the row (0 = numref's rule).
template <class E>
constexpr std::uint8_t c_recipe(E v) {
  static_assert(static_cast<unsigned>(E{}) == 0, "a recipe knob's default is its 0");
  return static_cast<std::uint8_t>(v);
}
template <class E>
constexpr bool recipe_pinned(E v, unsigned c, std::string_view word) {
  return c_recipe(v) == c && c < recipe_knob<E>().words.size() && recipe_knob<E>().words[c] == word;
}
}  // namespace detail
// Every NUMREF_<KNOB>_<WORD> constant of backend.h, pinned to its enumerator and its word.
static_assert(detail::recipe_pinned(AmaxFloor::none, NUMREF_AMAX_FLOOR_NONE, "none") &&
              detail::recipe_pinned(AmaxFloor::eps_1e12, NUMREF_AMAX_FLOOR_1E_12, "1e-12") &&
              detail::recipe_pinned(AmaxFloor::eps_1e4, NUMREF_AMAX_FLOOR_1E_4, "1e-4") &&
              recipe_knob<AmaxFloor>().words.size() == 3);
static_assert(detail::recipe_pinned(ScaleExp::bits, NUMREF_SCALE_EXP_BITS, "bits") &&
              detail::recipe_pinned(ScaleExp::log2f, NUMREF_SCALE_EXP_LOG2F, "log2f") &&
              recipe_knob<ScaleExp>().words.size() == 2);
static_assert(detail::recipe_pinned(ZeroCode::stored, NUMREF_ZERO_CODE_STORED, "stored") &&
              detail::recipe_pinned(ZeroCode::min_normal, NUMREF_ZERO_CODE_MIN_NORMAL, "min_normal") &&
              detail::recipe_pinned(ZeroCode::one, NUMREF_ZERO_CODE_ONE, "one") &&
              recipe_knob<ZeroCode>().words.size() == 3);
static_assert(detail::recipe_pinned(InfBlock::poison, NUMREF_INF_BLOCK_POISON, "poison") &&
              detail::recipe_pinned(InfBlock::exponent, NUMREF_INF_BLOCK_EXPONENT, "exponent") &&
              detail::recipe_pinned(InfBlock::max_code, NUMREF_INF_BLOCK_MAX_CODE, "max_code") &&
              detail::recipe_pinned(InfBlock::zero_scale, NUMREF_INF_BLOCK_ZERO_SCALE, "zero_scale") &&
              detail::recipe_pinned(InfBlock::max_code_zero, NUMREF_INF_BLOCK_MAX_CODE_ZERO, "max_code_zero") &&
              detail::recipe_pinned(InfBlock::one_scale, NUMREF_INF_BLOCK_ONE_SCALE, "one_scale") &&
              recipe_knob<InfBlock>().words.size() == 6);
static_assert(detail::recipe_pinned(NanBlock::poison, NUMREF_NAN_BLOCK_POISON, "poison") &&
              detail::recipe_pinned(NanBlock::inf_divisor, NUMREF_NAN_BLOCK_INF_DIVISOR, "inf_divisor") &&
              detail::recipe_pinned(NanBlock::max_code, NUMREF_NAN_BLOCK_MAX_CODE, "max_code") &&
              detail::recipe_pinned(NanBlock::first_nan, NUMREF_NAN_BLOCK_FIRST_NAN, "first_nan") &&
              detail::recipe_pinned(NanBlock::own_nan, NUMREF_NAN_BLOCK_OWN_NAN, "own_nan") &&
              recipe_knob<NanBlock>().words.size() == 5);
static_assert(detail::recipe_pinned(ElemNan::policy, NUMREF_ELEM_NAN_POLICY, "policy") &&
              detail::recipe_pinned(ElemNan::half, NUMREF_ELEM_NAN_HALF, "half") &&
              detail::recipe_pinned(ElemNan::bits, NUMREF_ELEM_NAN_BITS, "bits") &&
              recipe_knob<ElemNan>().words.size() == 3);
static_assert(detail::recipe_pinned(MxDescale::recip, NUMREF_MX_DESCALE_RECIP, "recip") &&
              detail::recipe_pinned(MxDescale::divide, NUMREF_MX_DESCALE_DIVIDE, "divide") &&
              recipe_knob<MxDescale>().words.size() == 2);
static_assert(detail::recipe_pinned(NanScale::canonical, NUMREF_NAN_SCALE_CANONICAL, "canonical") &&
              detail::recipe_pinned(NanScale::all_ones_tensor, NUMREF_NAN_SCALE_ALL_ONES_TENSOR, "all_ones_tensor") &&
              recipe_knob<NanScale>().words.size() == 2);
static_assert(detail::recipe_pinned(ZeroSign::keep, NUMREF_ZERO_SIGN_KEEP, "keep") &&
              detail::recipe_pinned(ZeroSign::plus, NUMREF_ZERO_SIGN_PLUS, "plus") &&
              recipe_knob<ZeroSign>().words.size() == 2);
static_assert(detail::recipe_pinned(ScaleRound::f32, NUMREF_SCALE_ROUND_F32, "f32") &&
              detail::recipe_pinned(ScaleRound::source, NUMREF_SCALE_ROUND_SOURCE, "source") &&
              recipe_knob<ScaleRound>().words.size() == 2);
static_assert(detail::recipe_pinned(ZeroDivisor::raise, NUMREF_ZERO_DIVISOR_RAISE, "raise") &&
              detail::recipe_pinned(ZeroDivisor::keep, NUMREF_ZERO_DIVISOR_KEEP, "keep") &&
              recipe_knob<ZeroDivisor>().words.size() == 2);
static_assert(detail::recipe_pinned(Divisor::divide, NUMREF_DIVISOR_DIVIDE, "divide") &&
              detail::recipe_pinned(Divisor::recip, NUMREF_DIVISOR_RECIP, "recip") &&
              recipe_knob<Divisor>().words.size() == 2);
static_assert(detail::recipe_pinned(ElemExp::bits, NUMREF_ELEM_EXP_BITS, "bits") &&
              detail::recipe_pinned(ElemExp::log2f, NUMREF_ELEM_EXP_LOG2F, "log2f") &&
              recipe_knob<ElemExp>().words.size() == 2);
static_assert(detail::recipe_pinned(NvScale::encode, NUMREF_NVFP4_SCALE_ENCODE, "encode") &&
              detail::recipe_pinned(NvScale::decode, NUMREF_NVFP4_SCALE_DECODE, "decode") &&
              detail::recipe_pinned(NvScale::block, NUMREF_NVFP4_SCALE_BLOCK, "block") &&
              detail::recipe_pinned(NvScale::encode_inf_one, NUMREF_NVFP4_SCALE_ENCODE_INF_ONE, "encode_inf_one") &&
              recipe_knob<NvScale>().words.size() == 4);
static_assert(sizeof(numref_recipe::reserved) + std::size(detail::kCRecipeFields) == 16,
              "numref_recipe keeps 16 knob bytes: a new knob takes a reserved byte");

// The C recipe of k; `text` (which must outlive the struct) receives describe(k).
inline numref_recipe to_c_recipe(const RecipeKnobs& k, std::string& text) {
  numref_recipe c{};
  std::size_t i = 0;
  std::apply([&](const auto&... row) { ((c.*detail::kCRecipeFields[i++] = detail::c_recipe(k.*row.member)), ...); },
             kRecipeKnobs);
  text = describe(k);
  c.text = text.c_str();
  return c;
}
// The RecipeKnobs of a C recipe; nullopt when a field is out of range or a reserved byte is set.
inline std::optional<RecipeKnobs> from_c_recipe(const numref_recipe& c) {
  RecipeKnobs k;
  bool ok = true;
  std::size_t i = 0;
  auto one = [&](const auto& row) {
    using T = std::remove_cvref_t<decltype(k.*row.member)>;
    const unsigned v = c.*detail::kCRecipeFields[i++];
    if (v >= row.words.size())
      ok = false;
    else
      k.*row.member = static_cast<T>(v);
  };
  std::apply([&](const auto&... row) { (one(row), ...); }, kRecipeKnobs);
  for (const std::uint8_t r : c.reserved) ok = ok && r == 0;
  if (!ok) return std::nullopt;
  return k;
}

// ---- §32.5 scale rules ------------------------------------------------------------------

// The NUMREF_RULE_* constant of a scale rule and back: the abi_id column of numref::kScaleRules.
inline std::uint32_t c_rule(ScaleRule r) { return rule_info(r).abi_id; }
inline std::optional<ScaleRule> rule_from_c(std::uint32_t v) {
  for (const ScaleRuleInfo& r : kScaleRules)
    if (r.abi_id == v) return r.rule;
  return std::nullopt;
}
namespace detail {
constexpr bool rule_pinned(ScaleRule r, std::uint32_t c) { return rule_info(r).abi_id == c; }
}  // namespace detail
#define NUMREF_ABI_PIN_RULE(NAME, name)                                   \
  static_assert(detail::rule_pinned(ScaleRule::name, NUMREF_RULE_##NAME), \
                "NUMREF_RULE_" #NAME " is not the abi_id of ScaleRule::" #name);
NUMREF_RULE_LIST(NUMREF_ABI_PIN_RULE)
#undef NUMREF_ABI_PIN_RULE
static_assert(NUMREF_RULE_COUNT == kScaleRuleCount && 0 NUMREF_RULE_LIST(NUMREF_ABI_COUNT_ONE) == kScaleRuleCount,
              "one NUMREF_RULE_* and one NUMREF_RULE_LIST entry per row of numref::kScaleRules");
#undef NUMREF_ABI_COUNT_ONE
namespace detail {
constexpr bool rule_ids_dense() {  // NUMREF_RULE_COUNT bounds the ids
  for (const ScaleRuleInfo& r : kScaleRules)
    if (r.abi_id >= NUMREF_RULE_COUNT) return false;
  return true;
}
}  // namespace detail
static_assert(detail::rule_ids_dense());

// ---- §32.5 / §32.7 the other tensor and MoR constants --------------------------------------

static_assert(NUMREF_APPLY_RN32 == static_cast<unsigned>(ScaleApply::rn32) &&
              NUMREF_APPLY_FUSED == static_cast<unsigned>(ScaleApply::fused));
static_assert(NUMREF_DEQUANT_DIVIDE == static_cast<unsigned>(DequantOp::divide) &&
              NUMREF_DEQUANT_RECIPROCAL == static_cast<unsigned>(DequantOp::reciprocal));
static_assert(NUMREF_AMAX_PROPAGATE == static_cast<unsigned>(AmaxNan::propagate) &&
              NUMREF_AMAX_IGNORE == static_cast<unsigned>(AmaxNan::ignore) &&
              NUMREF_AMAX_PROPAGATE == static_cast<unsigned>(AmaxInf::propagate) &&
              NUMREF_AMAX_IGNORE == static_cast<unsigned>(AmaxInf::ignore));
static_assert(NUMREF_REASON_ACCEPTED == static_cast<unsigned>(Reason::accepted) &&
              NUMREF_REASON_ALL_ZERO == static_cast<unsigned>(Reason::all_zero) &&
              NUMREF_REASON_EXACT == static_cast<unsigned>(Reason::exact) &&
              NUMREF_REASON_THRESHOLD == static_cast<unsigned>(Reason::threshold) &&
              NUMREF_REASON_NOT_LOWER == static_cast<unsigned>(Reason::not_lower) &&
              NUMREF_REASON_RANGE == static_cast<unsigned>(Reason::range) &&
              NUMREF_REASON_NONFINITE_INPUT == static_cast<unsigned>(Reason::nonfinite_input) &&
              NUMREF_REASON_NONFINITE_QUANT == static_cast<unsigned>(Reason::nonfinite_quant) &&
              NUMREF_REASON_CUSTOM == static_cast<unsigned>(Reason::custom) &&
              NUMREF_REASON_FALLBACK == static_cast<unsigned>(Reason::fallback) &&
              NUMREF_REASON_NOT_EVALUATED == static_cast<unsigned>(Reason::not_evaluated));
static_assert(NUMREF_BLOCK_F8E4M3FN == static_cast<unsigned>(BlockType::f8e4m3fn) &&
              NUMREF_BLOCK_F8E5M2 == static_cast<unsigned>(BlockType::f8e5m2) &&
              NUMREF_BLOCK_KEPT == static_cast<unsigned>(BlockType::bf16));

// §32.5 A C tensor operation as the reference's QuantizeSpec plus the view, every field read
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
  const auto recipe = from_c_recipe(op.recipe);
  if (!elem || !t.src || !t.out || !rule || !pol || !wide) throw std::invalid_argument("bad format, rule or policy id");
  if (!recipe) throw std::invalid_argument("recipe field out of range or reserved byte set");
  t.rows = op.rows;
  t.cols = op.cols;
  t.rs = static_cast<std::ptrdiff_t>(op.row_stride);
  t.cs = static_cast<std::ptrdiff_t>(op.col_stride);
  QuantizeSpec& q = t.spec;
  q.element = elem;
  q.rule = *rule;
  q.partition = Partition::blocks(op.block_rows, op.block_cols);
  q.group = has_group_mantissa(*rule) ? Partition::blocks(op.group_rows, op.group_cols) : Partition::tensor();
  q.amax.nan = op.amax_nan == NUMREF_AMAX_IGNORE ? AmaxNan::ignore : AmaxNan::propagate;
  q.amax.inf = op.amax_inf == NUMREF_AMAX_IGNORE ? AmaxInf::ignore : AmaxInf::propagate;
  q.policy = *pol;
  q.wide = *wide;
  q.apply = op.apply == NUMREF_APPLY_FUSED ? ScaleApply::fused : ScaleApply::rn32;
  q.dequant = op.dequant == NUMREF_DEQUANT_RECIPROCAL ? DequantOp::reciprocal : DequantOp::divide;
  q.q_max = exact_f32(op.q_max);
  q.recipe = *recipe;
  q.source = t.src;  // §14.5 scale_round=source
  // §13.8 the C recipe says all_ones_tensor only for the `tensor` partition (one block)
  if (q.recipe.nan_scale == NanScale::all_ones_tensor) {
    if (op.n_blocks != 1) throw std::invalid_argument("recipe nan_scale=all_ones_tensor needs the tensor partition");
    q.partition = Partition::tensor();
  }
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

// §32.7 The C form of the reference's MoR results (the reference backend and the test
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

// ---- §32.2 minor versions: what a backend of an earlier minor version is never offered ----------

// A knob table's `since` column covers every word of its row (or is empty: all 1.0's).
template <class Table>
constexpr bool since_columns_cover(const Table& t) {
  bool ok = true;
  for_each_knob_row(t, [&](const auto& k) { ok = ok && (k.since.empty() || k.since.size() >= k.words.size()); });
  return ok;
}
static_assert(since_columns_cover(kPolicyKnobs) && since_columns_cover(kRecipeKnobs),
              "a knob's since column names the minor version of each of its words");

// The earliest C ABI minor version that knows every knob value of p (Annex C.1).
inline std::uint32_t abi_minor(const Policy& p) {
  std::uint32_t m = 0;
  for_each_policy_knob([&](const auto& k) {
    if (!k.words.empty()) m = std::max<std::uint32_t>(m, k.since_minor(static_cast<std::size_t>(p.*k.member)));
  });
  return m;
}
// ... of every recipe knob value of r.
inline std::uint32_t abi_minor(const RecipeKnobs& r) {
  std::uint32_t m = 0;
  for_each_knob_row(kRecipeKnobs, [&](const auto& k) {
    m = std::max<std::uint32_t>(m, k.since_minor(static_cast<std::size_t>(r.*k.member)));
  });
  return m;
}
// ... of a NUMREF_PROFILE_* value (NUMREF_PROFILE_NONE: 1.0).
inline std::uint32_t abi_minor_of_profile(std::int32_t c_profile) {
  if (c_profile < 0 || c_profile >= kProfileCount) return 0;
  return all_profiles()[c_profile].abi_minor;
}
// The minor version that paired scale_exp=log2f with the rule mx-floor (log2f served pow2 and the
// RCEIL rules before).
inline constexpr std::uint32_t kMxFloorLog2fMinor = 6;
// ... of a tensor operation: its rule, its recipe, and that pairing.
inline std::uint32_t abi_minor(ScaleRule rule, const RecipeKnobs& r) {
  std::uint32_t m = std::max<std::uint32_t>(rule_info(rule).abi_minor, abi_minor(r));
  if (rule == ScaleRule::mx_floor && r.scale_exp == ScaleExp::log2f) m = std::max(m, kMxFloorLog2fMinor);
  return m;
}

// ---- §32.9 MMA (1.9) ---------------------------------------------------------------------------
// The knob constants are the enums' values in table order (mma.hpp kMmaKnobs).
static_assert(NUMREF_MMA_ALGO_IDEAL == static_cast<unsigned>(MmaAlgo::ideal) &&
              NUMREF_MMA_ALGO_FDPA == static_cast<unsigned>(MmaAlgo::fdpa) &&
              NUMREF_MMA_ALGO_TR_FDPA == static_cast<unsigned>(MmaAlgo::tr_fdpa) &&
              NUMREF_MMA_ALGO_GTR_FDPA == static_cast<unsigned>(MmaAlgo::gtr_fdpa) &&
              NUMREF_MMA_ALGO_FMA == static_cast<unsigned>(MmaAlgo::fma) &&
              NUMREF_MMA_ALGO_EFDPA == static_cast<unsigned>(MmaAlgo::efdpa) &&
              NUMREF_MMA_ALGO_FTZ == static_cast<unsigned>(MmaAlgo::ftz));
static_assert(NUMREF_MMA_ROUND_RNE == static_cast<unsigned>(MmaRound::rne) &&
              NUMREF_MMA_ROUND_RZ == static_cast<unsigned>(MmaRound::rz) &&
              NUMREF_MMA_ROUND_RZ13 == static_cast<unsigned>(MmaRound::rz13));
static_assert(NUMREF_MMA_SCALE_NONE == static_cast<unsigned>(MmaScale::none) &&
              NUMREF_MMA_SCALE_PRODUCT == static_cast<unsigned>(MmaScale::product) &&
              NUMREF_MMA_SCALE_GROUP == static_cast<unsigned>(MmaScale::group));
static_assert(NUMREF_MMA_NAN_ONES == static_cast<unsigned>(MmaNan::ones) &&
              NUMREF_MMA_NAN_CANONICAL == static_cast<unsigned>(MmaNan::canonical));
static_assert(NUMREF_MMA_ZERO_PLUS == static_cast<unsigned>(MmaZero::plus) &&
              NUMREF_MMA_ZERO_IEEE == static_cast<unsigned>(MmaZero::ieee) &&
              NUMREF_MMA_ZERO_ROUNDED == static_cast<unsigned>(MmaZero::rounded));
inline constexpr std::uint32_t kMmaMinor = 9;  // the C ABI minor version of the mma family (Annex C.1)
static_assert(since_columns_cover(kMmaKnobs), "an mma knob's since column names the minor version of each word");
// The earliest C ABI minor version that knows every knob value of an mma model (1.10: algo=fma).
inline std::uint32_t abi_minor(const MmaKnobs& k) {
  std::uint32_t m = kMmaMinor;
  for_each_knob_row(kMmaKnobs, [&](const auto& row) {
    if (!row.words.empty()) m = std::max<std::uint32_t>(m, row.since_minor(static_cast<std::size_t>(k.*row.member)));
  });
  return m;
}

// An operand type as (format, ignored bits) and back (§36.2).
inline std::optional<MmaType> mma_type_from_c(std::uint32_t fmt, std::uint32_t ignore) {
  for (const MmaTypeInfo& t : mma_types())
    if (c_format(format(t.format)) == fmt && t.ignore_mask == ignore) return t.id;
  return std::nullopt;
}

// §32.9 The C description of an operation: the spec (profile, types, block, model) and the shape.
inline numref_mma_op to_c_mma(const MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const char* text) {
  numref_mma_op c{};
  c.struct_size = sizeof(numref_mma_op);
  const MmaTypeInfo &a = mma_type(s.a), &b = mma_type(s.b), &cc = mma_type(s.c), &sc = mma_type(s.scale);
  c.a_format = c_format(format(a.format));
  c.b_format = c_format(format(b.format));
  c.c_format = c_format(format(cc.format));
  c.a_ignore = a.ignore_mask;
  c.b_ignore = b.ignore_mask;
  c.m = static_cast<std::uint32_t>(m);
  c.n = static_cast<std::uint32_t>(n);
  c.k = static_cast<std::uint32_t>(k);
  c.block = static_cast<std::uint32_t>(s.block);
  c.scale_format = s.block ? c_format(format(sc.format)) : 0u;
  c.scale_ignore = s.block ? sc.ignore_mask : 0u;
  const MmaKnobs& kn = s.model();
  c.algo = static_cast<std::uint32_t>(kn.algo);
  c.align = kn.align;
  c.fused = static_cast<std::uint32_t>(mma_fused(s));
  c.e_zero = s.c == MmaType::f16 ? kn.e_zero_f16 : kn.e_zero;
  c.round = static_cast<std::uint32_t>(kn.round);
  c.scale = static_cast<std::uint32_t>(kn.scale);
  c.group = static_cast<std::uint32_t>(kn.group);
  c.nan = static_cast<std::uint32_t>(kn.nan);
  c.zero = static_cast<std::uint32_t>(kn.zero);
  c.align2 = kn.align2;
  c.profile = s.profile->name.data();
  c.text = text;
  return c;
}

// The reference's spec of a C description; throws std::invalid_argument naming what it cannot read.
inline MmaSpec mma_spec_from_c(const numref_mma_op& c) {
  if (c.struct_size < sizeof(numref_mma_op)) throw std::invalid_argument("numref_mma_op: struct_size too small");
  MmaSpec s;
  s.profile = c.profile ? find_mma_profile(c.profile) : nullptr;
  if (!s.profile) throw std::invalid_argument("numref_mma_op: unknown profile");
  const auto a = mma_type_from_c(c.a_format, c.a_ignore), b = mma_type_from_c(c.b_format, c.b_ignore),
             cc = mma_type_from_c(c.c_format, 0);
  if (!a || !b || !cc) throw std::invalid_argument("numref_mma_op: an operand type numref does not have");
  s.a = *a;
  s.b = *b;
  s.c = *cc;
  s.block = static_cast<int>(c.block);
  if (c.block) {
    const auto st = mma_type_from_c(c.scale_format, c.scale_ignore);
    if (!st) throw std::invalid_argument("numref_mma_op: a scale type numref does not have");
    s.scale = *st;
  }
  if (c.algo > NUMREF_MMA_ALGO_FTZ || c.round > 2 || c.scale > 2 || c.nan > 1 || c.zero > 2)
    throw std::invalid_argument("numref_mma_op: a knob value outside its table");
  MmaKnobs k;
  k.algo = static_cast<MmaAlgo>(c.algo);
  k.align = c.align;
  k.align2 = c.align2;
  k.e_zero = k.e_zero_f16 = c.e_zero;
  k.round = static_cast<MmaRound>(c.round);
  k.scale = static_cast<MmaScale>(c.scale);
  k.group = static_cast<int>(c.group);
  k.nan = static_cast<MmaNan>(c.nan);
  k.zero = static_cast<MmaZero>(c.zero);
  s.knobs = k;
  if (k.algo != MmaAlgo::ideal) {  // §38.1 L = 2 · fused_bytes / h: fused_bytes from L
    s.knobs = k;
    const std::size_t bytes2 = static_cast<std::size_t>(c.fused) * static_cast<std::size_t>(mma_nibbles(s));
    if (c.fused == 0 || bytes2 % 2 != 0)
      throw std::invalid_argument("numref_mma_op: fused is no whole number of bytes");
    k.fused_bytes = static_cast<int>(bytes2 / 2);
    s.knobs = k;
  }
  return s;
}

}  // namespace numref::conform
