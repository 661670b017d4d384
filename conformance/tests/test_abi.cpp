// The C ABI <-> C++ mappings of conform/abi.hpp round-trip for every enumerator and profile.
//                                                                       spec §32.3, §32.5
//
// abi.hpp pins every NUMREF_* constant of backend.h to its enumerator by static_assert (a
// build-time check); this test checks the run-time mappings built on them: formats, scale
// rules, every value of every policy knob (field by field, so a knob written into the wrong
// field of numref_policy fails), the range checks of from_c_policy, and c_profile. Expected
// values come from the spec's lists (§2.1 table order, §19.6 rule names, §10.3 words), written
// out here, not read from the tables under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"

namespace numref::conform {
namespace {

TEST(Abi, FormatsRoundTripInTableOrder) {  // §2.1, §32.3
  const char* const spec_order[] = {"f32",       "bf16",     "f16",      "f8e4m3fn", "f8e5m2",
                                    "f8e8m0fnu", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn", "int8"};
  ASSERT_LE(std::size(spec_order), std::size_t{NUMREF_FMT_COUNT});  // later formats are appended
  for (std::uint32_t id = 0; id < NUMREF_FMT_COUNT; ++id) {
    const Format* f = format_from_c(id);
    ASSERT_NE(f, nullptr) << id;
    if (id < std::size(spec_order)) {
      EXPECT_EQ(f->name, spec_order[id]);
    }
    EXPECT_EQ(c_format(*f), id);
  }
  EXPECT_EQ(format_from_c(NUMREF_FMT_COUNT), nullptr);
  EXPECT_EQ(c_format(format(FormatId::f8e8m0fnu)), NUMREF_FMT_F8E8M0FNU);
}

TEST(Abi, ScaleRulesRoundTripInSpecOrder) {  // §19.6, §32.5: NUMREF_RULE_* in the order of §14–§20
  const char* const spec_names[] = {"amax",    "amax-recip", "amax-dequant", "pow2",         "mx-floor",
                                    "mx-ceil", "mx-even",    "mx-rceil",     "mx-rceil-f32", "gam",
                                    "nvfp4",   "int8",       "int8-127.5"};
  ASSERT_LE(std::size(spec_names), std::size_t{NUMREF_RULE_COUNT});  // later rules are appended
  for (std::uint32_t id = 0; id < std::size(spec_names); ++id) {
    const auto r = parse_scale_rule(spec_names[id]);
    ASSERT_TRUE(r.has_value()) << spec_names[id];
    EXPECT_EQ(c_rule(*r), id) << spec_names[id];
    EXPECT_EQ(rule_from_c(id), r) << id;
  }
  for (int i = 0; i < kScaleRuleCount; ++i) {
    const auto r = static_cast<ScaleRule>(i);
    EXPECT_EQ(rule_from_c(c_rule(r)), r) << to_string(r);
  }
  EXPECT_FALSE(rule_from_c(NUMREF_RULE_COUNT).has_value());
  EXPECT_FALSE(rule_from_c(0xFFFFFFFFu).has_value());
  EXPECT_EQ(c_rule(ScaleRule::mx_rceil), NUMREF_RULE_MX_RCEIL);
}

// One knob value set on the default policy and the C field that must carry it.
struct KnobCase {
  const char* setting;  // §10.3 key=word
  std::uint8_t numref_policy::*field;
  std::uint8_t c_value;
};

// §10.3 words, §32.3 numbering (backend.h), named fields: every value of every knob.
const std::vector<KnobCase>& knob_cases() {
  static const std::vector<KnobCase> cases = {
      {"round=rne", &numref_policy::round, NUMREF_ROUND_RNE},
      {"round=rtz", &numref_policy::round, NUMREF_ROUND_RTZ},
      {"round=rup", &numref_policy::round, NUMREF_ROUND_RUP},
      {"round=rdn", &numref_policy::round, NUMREF_ROUND_RDN},
      {"round=rna", &numref_policy::round, NUMREF_ROUND_RNA},
      {"overflow=saturate", &numref_policy::overflow, NUMREF_OVERFLOW_SATURATE},
      {"overflow=nonsat", &numref_policy::overflow, NUMREF_OVERFLOW_NONSAT},
      {"inf_sat=max", &numref_policy::inf_sat, NUMREF_INF_SAT_MAX},
      {"inf_sat=keep", &numref_policy::inf_sat, NUMREF_INF_SAT_KEEP},
      {"nan=sign", &numref_policy::nan, NUMREF_NAN_SIGN},
      {"nan=canonical", &numref_policy::nan, NUMREF_NAN_CANONICAL},
      {"nan=ones", &numref_policy::nan, NUMREF_NAN_ONES},
      {"nan=payload", &numref_policy::nan, NUMREF_NAN_PAYLOAD},
      {"nan_to_finite=zero", &numref_policy::nan_to_finite, NUMREF_NAN_TO_FINITE_ZERO},
      {"nan_to_finite=negzero", &numref_policy::nan_to_finite, NUMREF_NAN_TO_FINITE_NEGZERO},
      {"nan_to_finite=max", &numref_policy::nan_to_finite, NUMREF_NAN_TO_FINITE_MAX},
      {"e8m0_round=follow", &numref_policy::e8m0_round, NUMREF_E8M0_FOLLOW},
      {"e8m0_round=floor", &numref_policy::e8m0_round, NUMREF_E8M0_FLOOR},
      {"e8m0_round=ceil", &numref_policy::e8m0_round, NUMREF_E8M0_CEIL},
      {"e8m0_round=even", &numref_policy::e8m0_round, NUMREF_E8M0_EVEN},
      {"e8m0_round=tiesup", &numref_policy::e8m0_round, NUMREF_E8M0_TIESUP},
      {"zero_to_nozero=nan", &numref_policy::zero_to_nozero, NUMREF_ZERO_TO_NOZERO_NAN},
      {"zero_to_nozero=min", &numref_policy::zero_to_nozero, NUMREF_ZERO_TO_NOZERO_MIN},
      {"negative=nan", &numref_policy::negative, NUMREF_NEGATIVE_NAN},
      {"negative=abs", &numref_policy::negative, NUMREF_NEGATIVE_ABS},
      {"negative=inf_abs", &numref_policy::negative, NUMREF_NEGATIVE_INF_ABS},
      {"daz=0", &numref_policy::daz, 0},
      {"daz=1", &numref_policy::daz, 1},
      {"ftz=0", &numref_policy::ftz, 0},
      {"ftz=1", &numref_policy::ftz, 1},
      {"tininess=after", &numref_policy::tininess, NUMREF_TININESS_AFTER},
      {"tininess=before", &numref_policy::tininess, NUMREF_TININESS_BEFORE},
      {"int_range=full", &numref_policy::int_range, NUMREF_INT_RANGE_FULL},
      {"int_range=symmetric", &numref_policy::int_range, NUMREF_INT_RANGE_SYMMETRIC},
      {"nan=ones_sign", &numref_policy::nan, NUMREF_NAN_ONES_SIGN},
      {"nan=raw", &numref_policy::nan, NUMREF_NAN_RAW},
      {"nan=all_ones", &numref_policy::nan, NUMREF_NAN_ALL_ONES},
      {"nan=raw_plus", &numref_policy::nan, NUMREF_NAN_RAW_PLUS},
      {"nan_to_finite=signzero", &numref_policy::nan_to_finite, NUMREF_NAN_TO_FINITE_SIGNZERO},
      {"nan_to_finite=flipzero", &numref_policy::nan_to_finite, NUMREF_NAN_TO_FINITE_FLIPZERO},
      {"e8m0_low=linear", &numref_policy::e8m0_low, NUMREF_E8M0_LOW_LINEAR},
      {"e8m0_low=grid", &numref_policy::e8m0_low, NUMREF_E8M0_LOW_GRID},
      {"e8m0_low=nan", &numref_policy::e8m0_low, NUMREF_E8M0_LOW_NAN},
      {"inf_nan=slot", &numref_policy::inf_nan, NUMREF_INF_NAN_SLOT},
      {"inf_nan=nan", &numref_policy::inf_nan, NUMREF_INF_NAN_NAN},
      // stochastic rounding: round, sr_bits and sr_variant together (§5)
      {"round=sr sr_bits=7 sr_variant=fraction", &numref_policy::sr_variant, NUMREF_SR_FRACTION},
      {"round=sr sr_bits=7 sr_variant=add", &numref_policy::sr_variant, NUMREF_SR_ADD},
  };
  return cases;
}

// The fields of a C policy, named, for comparing two structs field by field.
std::vector<int> fields(const numref_policy& c) {
  return {c.round,         c.sr_bits,    c.sr_variant,     c.overflow, c.inf_sat, c.nan,
          c.nan_to_finite, c.e8m0_round, c.zero_to_nozero, c.negative, c.daz,     c.ftz,
          c.tininess,      c.int_range,  c.e8m0_low,       c.inf_nan};
}

TEST(Abi, EveryKnobValueReachesItsField) {  // §10.3, §32.3
  const Format& to = format(FormatId::f8e4m3fn);
  std::string base_text;
  const numref_policy base = to_c_policy(Policy{}, to, base_text);
  // §10.3 the default policy's text, and its C form (backend.h: the first word of each knob
  // is 0, except nan=payload (3), overflow=nonsat (1))
  EXPECT_EQ(base_text,
            "round=rne overflow=nonsat inf_sat=max nan=payload nan_to_finite=zero e8m0_round=follow "
            "zero_to_nozero=nan negative=nan daz=0 ftz=0 tininess=after int_range=full e8m0_low=linear inf_nan=slot");
  EXPECT_EQ(fields(base), (std::vector<int>{0, 0, 0, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_STREQ(base.text, base_text.c_str());
  for (const KnobCase& k : knob_cases()) {
    SCOPED_TRACE(k.setting);
    Policy p;
    ASSERT_FALSE(apply_policy_settings(p, k.setting).has_value());
    std::string text;
    const numref_policy c = to_c_policy(p, to, text);
    EXPECT_EQ(c.*k.field, k.c_value);
    // every other field keeps the default's value (sr_bits and round move together under sr)
    numref_policy want = base;
    want.*k.field = k.c_value;
    if (p.round == Round::sr) {
      want.round = NUMREF_ROUND_SR;
      want.sr_bits = 7;
    }
    EXPECT_EQ(fields(c), fields(want));
    // and back
    const auto back = from_c_policy(c);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, p);
    EXPECT_EQ(describe(*back), text);
  }
}

TEST(Abi, SrBitsOnlyWithStochasticRounding) {  // §32.3 sr_bits: k when round == SR, else 0
  Policy p;
  p.sr_bits = 9;  // not meaningful under rne
  std::string text;
  numref_policy c = to_c_policy(p, format(FormatId::f8e5m2), text);
  EXPECT_EQ(c.sr_bits, 0);
  c.sr_bits = 12;
  EXPECT_EQ(from_c_policy(c)->sr_bits, 0);
  c.round = NUMREF_ROUND_SR;
  EXPECT_EQ(from_c_policy(c)->sr_bits, 12);
}

TEST(Abi, OutOfRangeFieldsAreRejected) {  // §32.3 from_c_policy: nullopt for a field out of range
  std::string text;
  const numref_policy good = to_c_policy(Policy{}, format(FormatId::f32), text);
  ASSERT_TRUE(from_c_policy(good).has_value());
  struct Bad {
    std::uint8_t numref_policy::*field;
    std::uint8_t first_bad;  // one past the last value of backend.h
  };
  const Bad bad[] = {
      {&numref_policy::round, NUMREF_ROUND_SR + 1},
      {&numref_policy::sr_variant, NUMREF_SR_ADD + 1},
      {&numref_policy::overflow, NUMREF_OVERFLOW_NONSAT + 1},
      {&numref_policy::inf_sat, NUMREF_INF_SAT_KEEP + 1},
      {&numref_policy::nan, NUMREF_NAN_RAW_PLUS + 1},
      {&numref_policy::nan_to_finite, NUMREF_NAN_TO_FINITE_FLIPZERO + 1},
      {&numref_policy::e8m0_round, NUMREF_E8M0_TIESUP + 1},
      {&numref_policy::zero_to_nozero, NUMREF_ZERO_TO_NOZERO_MIN + 1},
      {&numref_policy::negative, NUMREF_NEGATIVE_INF_ABS + 1},
      {&numref_policy::daz, 2},
      {&numref_policy::ftz, 2},
      {&numref_policy::tininess, NUMREF_TININESS_BEFORE + 1},
      {&numref_policy::int_range, NUMREF_INT_RANGE_SYMMETRIC + 1},
      {&numref_policy::e8m0_low, NUMREF_E8M0_LOW_NAN + 1},
      {&numref_policy::inf_nan, NUMREF_INF_NAN_NAN + 1},
  };
  for (const Bad& b : bad) {
    numref_policy c = good;
    c.*b.field = static_cast<std::uint8_t>(b.first_bad - 1);
    EXPECT_TRUE(from_c_policy(c).has_value()) << int(b.first_bad);
    c.*b.field = b.first_bad;
    EXPECT_FALSE(from_c_policy(c).has_value()) << int(b.first_bad);
    c.*b.field = 0xFF;
    EXPECT_FALSE(from_c_policy(c).has_value()) << int(b.first_bad);
  }
}

TEST(Abi, ProfilesMapToTheirIds) {  // §10.1, §32.3 c_profile: the first profile with an equal policy
  const Format& narrow = format(FormatId::f8e4m3fn);
  const Format& wide = format(FormatId::bf16);
  const struct {
    ProfileId id;
    std::int32_t c_narrow, c_wide;  // backend.h; ieee = ocp and the two CUDA wide policies coincide
  } want[] = {
      {ProfileId::ocp, NUMREF_PROFILE_OCP, NUMREF_PROFILE_OCP},
      {ProfileId::ieee, NUMREF_PROFILE_OCP, NUMREF_PROFILE_OCP},
      {ProfileId::cuda_satfinite, NUMREF_PROFILE_CUDA_SATFINITE, NUMREF_PROFILE_CUDA_SATFINITE},
      {ProfileId::cuda_nosat, NUMREF_PROFILE_CUDA_NOSAT, NUMREF_PROFILE_CUDA_SATFINITE},
      {ProfileId::ml_dtypes, NUMREF_PROFILE_ML_DTYPES, NUMREF_PROFILE_ML_DTYPES},
      // torch, torch_default and xla differ from ocp's wide policy (payload) only by pair rules
      {ProfileId::torch, NUMREF_PROFILE_TORCH, NUMREF_PROFILE_OCP},
      {ProfileId::torch_default, NUMREF_PROFILE_TORCH, NUMREF_PROFILE_OCP},
      {ProfileId::xla, NUMREF_PROFILE_XLA, NUMREF_PROFILE_OCP},
      // §10.4 the recipe profiles share one element policy (torch's, saturating): the first of
      // them is named
      {ProfileId::torchao_mx_floor, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      {ProfileId::torchao_mx_ceil, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      {ProfileId::torchao_mx_even, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      {ProfileId::torchao_mx_rceil, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      {ProfileId::torchao_float8, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      {ProfileId::torchao_float8_pow2, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      {ProfileId::deepgemm, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      // te_mxfp8's element policies are cuda_satfinite's
      {ProfileId::te_mxfp8, NUMREF_PROFILE_CUDA_SATFINITE, NUMREF_PROFILE_CUDA_SATFINITE},
      // gfloat: nan=all_ones (and saturation for gfloat_sat) on both widths, no other profile's
      {ProfileId::gfloat, NUMREF_PROFILE_GFLOAT, NUMREF_PROFILE_GFLOAT},
      {ProfileId::gfloat_sat, NUMREF_PROFILE_GFLOAT_SAT, NUMREF_PROFILE_GFLOAT_SAT},
      // te_float8_current's element policies are cuda_satfinite's
      {ProfileId::te_float8_current, NUMREF_PROFILE_CUDA_SATFINITE, NUMREF_PROFILE_CUDA_SATFINITE},
      {ProfileId::te_float8_block, NUMREF_PROFILE_CUDA_SATFINITE, NUMREF_PROFILE_CUDA_SATFINITE},
      // microxcaling rounds ties away (rna) on both widths: no other profile does
      {ProfileId::microxcaling, NUMREF_PROFILE_MICROXCALING, NUMREF_PROFILE_MICROXCALING},
      {ProfileId::torchao_float8_inference, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      // microxcaling_even: narrow rne with microxcaling's symmetric int8 range, no earlier profile's;
      // its wide policy (rne, overflow to Inf, payload kept) is ocp's
      {ProfileId::microxcaling_even, NUMREF_PROFILE_MICROXCALING_EVEN, NUMREF_PROFILE_OCP},
      // the TransformerEngine variants: cuda_satfinite's element policies, as te_float8_current / _block
      {ProfileId::te_float8_current_pow2, NUMREF_PROFILE_CUDA_SATFINITE, NUMREF_PROFILE_CUDA_SATFINITE},
      {ProfileId::te_float8_block_f32, NUMREF_PROFILE_CUDA_SATFINITE, NUMREF_PROFILE_CUDA_SATFINITE},
      {ProfileId::te_mxfp8_2_13, NUMREF_PROFILE_CUDA_SATFINITE, NUMREF_PROFILE_CUDA_SATFINITE},
      // deepgemm_f32: deepgemm's (torch's, saturating) element policies
      {ProfileId::deepgemm_f32, NUMREF_PROFILE_TORCHAO_MX_FLOOR, NUMREF_PROFILE_OCP},
      // microxcaling_floor: narrow and wide rtz, no earlier profile's
      {ProfileId::microxcaling_floor, NUMREF_PROFILE_MICROXCALING_FLOOR, NUMREF_PROFILE_MICROXCALING_FLOOR},
  };
  for (const auto& w : want) {
    const Profile& pr = profile(w.id);
    SCOPED_TRACE(std::string(pr.name));
    EXPECT_EQ(c_profile(pr.narrow, narrow), w.c_narrow);
    EXPECT_EQ(c_profile(pr.wide, wide), w.c_wide);
  }
  // Every row of the table (a profile appended after the rows above included): its C profile is
  // the first row with the same policy, and its policy survives the C struct.
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& pr = all_profiles()[i];
    SCOPED_TRACE(std::string(pr.name));
    for (const Format* to : {&narrow, &wide}) {
      const Policy& p = pr.for_target(*to);
      const std::int32_t id = c_profile(p, *to);
      ASSERT_GE(id, 0);
      ASSERT_LE(id, i);
      EXPECT_EQ(profile(static_cast<ProfileId>(id)).for_target(*to), p);
      for (int j = 0; j < id; ++j) EXPECT_FALSE(all_profiles()[j].for_target(*to) == p) << all_profiles()[j].name;
      std::string text;
      const numref_policy c = to_c_policy(p, *to, text);
      EXPECT_EQ(c.profile, id);
      const auto back = from_c_policy(c);
      ASSERT_TRUE(back.has_value());
      EXPECT_EQ(*back, p);
    }
  }
  Policy odd = profile(ProfileId::ocp).narrow;
  odd.tininess = Tininess::before;
  EXPECT_EQ(c_profile(odd, narrow), NUMREF_PROFILE_NONE);
}

}  // namespace
}  // namespace numref::conform

namespace numref::conform {
namespace {

// §32.2 The minor version of what a suite passes, as Annex C.1 lists the versions: 1.0's knob
// values; nan=ones_sign and e8m0_low=grid 1.2; inf_nan=nan, negative=inf_abs, e8m0_low=nan 1.5;
// nan=raw_plus 1.7; the recipe's non-default values 1.4, inf_block=one_scale 1.5, nan_block=
// first_nan and zero_sign=plus 1.6; the rule pow2-recip 1.5; scale_exp=log2f with mx-floor 1.6;
// the profiles xla 1.2, te_float8_current 1.5, microxcaling 1.6.
TEST(Abi, MinorVersionOfWhatASuitePasses) {
  const Policy ocp;
  EXPECT_EQ(abi_minor(ocp), 0u);
  Policy p = ocp;
  p.nan = NanOut::ones_sign;
  EXPECT_EQ(abi_minor(p), 2u);
  p.e8m0_low = E8m0Low::grid;
  EXPECT_EQ(abi_minor(p), 2u);
  p.negative = Negative::inf_abs;
  EXPECT_EQ(abi_minor(p), 5u);
  p.nan = NanOut::raw_plus;
  EXPECT_EQ(abi_minor(p), 7u);
  Policy q = ocp;
  q.inf_nan = InfNan::nan;
  EXPECT_EQ(abi_minor(q), 5u);
  q = ocp;
  q.e8m0_low = E8m0Low::nan;
  EXPECT_EQ(abi_minor(q), 5u);

  RecipeKnobs r;
  EXPECT_EQ(abi_minor(r), 0u);
  EXPECT_EQ(abi_minor(ScaleRule::amax, r), 1u);  // the tensor families came in 1.1
  r.amax_floor = AmaxFloor::eps_1e12;
  EXPECT_EQ(abi_minor(r), 4u);
  r.inf_block = InfBlock::one_scale;
  EXPECT_EQ(abi_minor(r), 5u);
  r.nan_block = NanBlock::first_nan;
  EXPECT_EQ(abi_minor(r), 6u);
  RecipeKnobs z;
  z.zero_sign = ZeroSign::plus;
  EXPECT_EQ(abi_minor(z), 6u);
  EXPECT_EQ(abi_minor(ScaleRule::pow2_recip, RecipeKnobs{}), 5u);
  RecipeKnobs l;
  l.scale_exp = ScaleExp::log2f;
  EXPECT_EQ(abi_minor(ScaleRule::pow2, l), 4u);
  EXPECT_EQ(abi_minor(ScaleRule::mx_floor, l), 6u);

  EXPECT_EQ(abi_minor_of_profile(NUMREF_PROFILE_NONE), 0u);
  EXPECT_EQ(abi_minor_of_profile(NUMREF_PROFILE_OCP), 0u);
  EXPECT_EQ(abi_minor_of_profile(NUMREF_PROFILE_XLA), 2u);
  EXPECT_EQ(abi_minor_of_profile(NUMREF_PROFILE_TE_FLOAT8_CURRENT), 5u);
  EXPECT_EQ(abi_minor_of_profile(NUMREF_PROFILE_MICROXCALING), 6u);
  // nothing is newer than the header's own minor version
  EXPECT_LE(abi_minor(p), NUMREF_BACKEND_ABI_MINOR);
}

// Annex C.1: the mma family and every knob value of 1.9's models are 1.9; algo=fma is 1.10
// (NUMREF_MMA_ALGO_FMA 4), so the profiles of the FMA chain need 1.10 and the others 1.9.
TEST(Abi, MmaMinorVersionOfAModel) {
  EXPECT_EQ(NUMREF_MMA_ALGO_FMA, 4u);
  EXPECT_EQ(abi_minor(MmaKnobs{}), 9u);  // ideal
  for (const std::string_view n : {"sm90_wgmma_f8", "cdna3_mfma_f16", "cdna3_mfma_f8", "sm100_tcgen05_mxf4"})
    EXPECT_EQ(abi_minor(find_mma_profile(n)->knobs), 9u) << n;
  for (const std::string_view n : {"cdna1_mfma_f32", "cdna2_mfma_f32", "cdna3_mfma_f32"})
    EXPECT_EQ(abi_minor(find_mma_profile(n)->knobs), 10u) << n;
  EXPECT_LE(abi_minor(find_mma_profile("cdna3_mfma_f32")->knobs), NUMREF_BACKEND_ABI_MINOR);
  // the C description round-trips algo=fma with one product per step (§38.9)
  MmaSpec s;
  s.profile = find_mma_profile("cdna2_mfma_f32");
  s.a = s.b = s.c = MmaType::f32;
  const numref_mma_op c = to_c_mma(s, 2, 3, 5, "t");
  EXPECT_EQ(c.algo, NUMREF_MMA_ALGO_FMA);
  EXPECT_EQ(c.fused, 1u);
  const MmaSpec back = mma_spec_from_c(c);
  EXPECT_EQ(back.model().algo, MmaAlgo::fma);
  EXPECT_EQ(mma_fused(back), 1u);
  numref_mma_op bad = c;
  bad.algo = 7;  // one past algo=ftz (§38.11, 1.11)
  EXPECT_THROW(mma_spec_from_c(bad), std::invalid_argument);
}

// Annex C.1: algo=efdpa (NUMREF_MMA_ALGO_EFDPA 5) and algo=ftz (NUMREF_MMA_ALGO_FTZ 6) are 1.11, so
// the CDNA1 / CDNA2 f16 and bf16 profiles need 1.11; their C descriptions carry the fused products
// of §38.1 (f16: 2 · 8 / 4 = 4, CDNA1 bf16: 2 · 4 / 4 = 2) and round-trip.
TEST(Abi, MmaMinorVersionOfTheExactAndFlushingSteps) {
  EXPECT_EQ(NUMREF_MMA_ALGO_EFDPA, 5u);
  EXPECT_EQ(NUMREF_MMA_ALGO_FTZ, 6u);
  const struct {
    std::string_view profile;
    MmaType a;
    unsigned algo, fused;
  } want[] = {{"cdna1_mfma_f16", MmaType::f16, NUMREF_MMA_ALGO_EFDPA, 4},
              {"cdna1_mfma_bf16", MmaType::bf16, NUMREF_MMA_ALGO_EFDPA, 2},
              {"cdna2_mfma_f16", MmaType::bf16, NUMREF_MMA_ALGO_FTZ, 4},
              {"cdna2_mfma_bf16", MmaType::bf16, NUMREF_MMA_ALGO_FTZ, 2}};
  for (const auto& w : want) {
    const MmaProfile* p = find_mma_profile(w.profile);
    ASSERT_NE(p, nullptr) << w.profile;
    EXPECT_EQ(abi_minor(p->knobs), 11u) << w.profile;
    MmaSpec s;
    s.profile = p;
    s.a = s.b = w.a;
    s.c = MmaType::f32;
    const numref_mma_op c = to_c_mma(s, 2, 3, 8, "t");
    EXPECT_EQ(c.algo, w.algo) << w.profile;
    EXPECT_EQ(c.fused, w.fused) << w.profile;
    const MmaSpec back = mma_spec_from_c(c);
    EXPECT_EQ(back.model(), p->knobs) << w.profile;
    EXPECT_EQ(mma_fused(back), w.fused) << w.profile;
  }
  EXPECT_LE(11u, NUMREF_BACKEND_ABI_MINOR);
}

}  // namespace
}  // namespace numref::conform
