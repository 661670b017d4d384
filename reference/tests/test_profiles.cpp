// Profiles and the textual policy (§10): the knob table of §10.1 transcribed by hand,
// describe() in the fixed order of §10.3, apply_policy_settings() reading it back, and
// errors that name the offending key or value.
#include <gtest/gtest.h>

#include <string>

#include "numref/convert.hpp"
#include "numref/policy.hpp"

namespace numref {
namespace {

struct Row {
  const char* name;
  Overflow narrow_overflow;
  InfSat inf_sat;
  NanOut nan;
  NanToFinite nan_to_finite;
  E8m0Round e8m0;
  ZeroToNoZero zero;
  Negative negative;
};

// §10.1, column by column (round rne, wide overflow nonsat, daz 0, ftz 0, tininess after,
// int_range full in every profile).
const Row kTable[] = {
    {"ocp", Overflow::nonsat, InfSat::max, NanOut::payload, NanToFinite::zero, E8m0Round::follow, ZeroToNoZero::nan,
     Negative::nan},
    {"ieee", Overflow::nonsat, InfSat::max, NanOut::payload, NanToFinite::zero, E8m0Round::follow, ZeroToNoZero::nan,
     Negative::nan},
    {"cuda_satfinite", Overflow::saturate, InfSat::max, NanOut::ones, NanToFinite::max, E8m0Round::floor,
     ZeroToNoZero::min, Negative::abs},
    {"cuda_nosat", Overflow::nonsat, InfSat::max, NanOut::ones, NanToFinite::max, E8m0Round::floor, ZeroToNoZero::min,
     Negative::abs},
    {"ml_dtypes", Overflow::nonsat, InfSat::keep, NanOut::sign, NanToFinite::flipzero, E8m0Round::tiesup,
     ZeroToNoZero::nan, Negative::nan},
};

TEST(Profiles, NarrowPoliciesMatchTheSpecTable) {
  for (const Row& row : kTable) {
    const auto id = find_profile(row.name);
    ASSERT_TRUE(id.has_value()) << row.name;
    const Profile& prof = profile(*id);
    EXPECT_EQ(prof.name, row.name);
    const Policy& p = prof.narrow;
    EXPECT_EQ(p.round, Round::rne) << row.name;
    EXPECT_EQ(p.overflow, row.narrow_overflow) << row.name;
    EXPECT_EQ(p.inf_sat, row.inf_sat) << row.name;
    EXPECT_EQ(p.nan, row.nan) << row.name;
    EXPECT_EQ(p.nan_to_finite, row.nan_to_finite) << row.name;
    EXPECT_EQ(p.e8m0_round, row.e8m0) << row.name;
    EXPECT_EQ(p.zero_to_nozero, row.zero) << row.name;
    EXPECT_EQ(p.negative, row.negative) << row.name;
    EXPECT_FALSE(p.daz);
    EXPECT_FALSE(p.ftz);
    EXPECT_EQ(p.tininess, Tininess::after);
    EXPECT_EQ(p.int_range, IntRange::full);
    // wide targets: never saturating (§10.1 "overflow (wide)" row); same NaN rule
    EXPECT_EQ(prof.wide.overflow, Overflow::nonsat) << row.name;
    EXPECT_EQ(prof.wide.round, Round::rne) << row.name;
    EXPECT_EQ(prof.wide.nan, row.nan) << row.name;
  }
  EXPECT_FALSE(find_profile("cuda").has_value());
  EXPECT_FALSE(find_profile("").has_value());
  EXPECT_FALSE(find_profile("OCP").has_value());
}

// §10.1: a profile picks its policy by the target's storage width (<= 8 bits: narrow).
TEST(Profiles, ForTargetSplitsAtEightBits) {
  const Profile& cuda = profile(ProfileId::cuda_satfinite);
  for (const auto& f : kFormats) EXPECT_EQ(&cuda.for_target(f), f.bits <= 8 ? &cuda.narrow : &cuda.wide) << f.name;
}

// §10.3 the fixed order, verbatim from the spec for the default policy.
TEST(PolicyText, DescribeDefault) {
  EXPECT_EQ(describe(Policy{}),
            "round=rne overflow=nonsat inf_sat=max nan=payload nan_to_finite=zero e8m0_round=follow "
            "zero_to_nozero=nan negative=nan daz=0 ftz=0 tininess=after int_range=full e8m0_low=linear inf_nan=slot");
  Policy p;
  p.round = Round::sr;
  p.sr_bits = 12;
  p.sr_variant = SrVariant::add;
  EXPECT_EQ(describe(p),
            "round=sr sr_bits=12 sr_variant=add overflow=nonsat inf_sat=max nan=payload nan_to_finite=zero "
            "e8m0_round=follow zero_to_nozero=nan negative=nan daz=0 ftz=0 tininess=after int_range=full "
            "e8m0_low=linear inf_nan=slot");
}

// §10.3 describe() / apply_policy_settings() round trip for every profile and for a
// policy with every knob away from its default.
TEST(PolicyText, RoundTrip) {
  std::vector<Policy> all;
  for (int i = 0; i < kProfileCount; ++i) {
    all.push_back(all_profiles()[i].narrow);
    all.push_back(all_profiles()[i].wide);
  }
  Policy odd;
  odd.round = Round::sr;
  odd.sr_bits = 32;
  odd.sr_variant = SrVariant::add;
  odd.overflow = Overflow::saturate;
  odd.inf_sat = InfSat::keep;
  odd.nan = NanOut::canonical;
  odd.nan_to_finite = NanToFinite::negzero;
  odd.e8m0_round = E8m0Round::ceil;
  odd.zero_to_nozero = ZeroToNoZero::min;
  odd.negative = Negative::abs;
  odd.daz = odd.ftz = true;
  odd.tininess = Tininess::before;
  odd.int_range = IntRange::symmetric;
  all.push_back(odd);
  for (const Policy& p : all) {
    Policy q;  // defaults, then the text
    const auto err = apply_policy_settings(q, describe(p));
    ASSERT_FALSE(err.has_value()) << *err;
    EXPECT_EQ(q, p) << describe(p);
  }
}

TEST(PolicyText, ErrorsNameTheProblem) {
  Policy p;
  const Policy before = p;
  auto err = apply_policy_settings(p, "round=rne colour=blue");
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("colour"), std::string::npos) << *err;
  err = apply_policy_settings(p, "round=nearest");
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("nearest"), std::string::npos) << *err;
  err = apply_policy_settings(p, "daz=2");
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("daz"), std::string::npos) << *err;
  err = apply_policy_settings(p, "overflow");
  ASSERT_TRUE(err.has_value());
  err = apply_policy_settings(p, "sr_bits=x1");
  ASSERT_TRUE(err.has_value());
  // §10.3 a key given twice is an error naming it, even with the same word (never "the last wins")
  for (const char* twice : {"round=rne round=rtz", "round=rtz daz=1 round=rtz"}) {
    err = apply_policy_settings(p, twice);
    ASSERT_TRUE(err.has_value()) << twice;
    EXPECT_NE(err->find("'round' given twice"), std::string::npos) << *err;
  }
  EXPECT_EQ(p, before);  // a failed parse leaves the policy unchanged
}

// §9.1 flag text: fixed positions v o u x.
TEST(Flags, Text) {
  EXPECT_EQ(flags_to_string(0), "----");
  EXPECT_EQ(flags_to_string(kInexact), "---x");
  EXPECT_EQ(flags_to_string(kOverflow | kInexact), "-o-x");
  EXPECT_EQ(flags_to_string(kUnderflow | kInexact), "--ux");
  EXPECT_EQ(flags_to_string(kInvalid), "v---");
  EXPECT_EQ(kInexact, 0x01);
  EXPECT_EQ(kUnderflow, 0x02);
  EXPECT_EQ(kOverflow, 0x04);
  EXPECT_EQ(kInvalid, 0x10);
}

}  // namespace
// §10.2 the pair rules, §6.3 nan=ones_sign / raw / all_ones / raw_plus, §6.4 signzero / flipzero, §7.4
// e8m0_low=grid. Every expected code is computed by hand in the comment (the library's value,
// measured: docs/profiles.md).
TEST(Profiles, PairRulesAndNewKnobsByHand) {
  constexpr std::uint8_t V = kInvalid, O = kOverflow, U = kUnderflow, X = kInexact;
  struct Case {
    const char* prof;
    FormatId from, to;
    std::uint32_t x, want;
    std::uint8_t flags;
  } cases[] = {
      // ml_dtypes D1: 2^-127 + 2^-149 is n = 0.5 + 2^-23 of 2^-126 -> n = 1 -> code 01 (not tiny: >= 2^-127)
      {"ml_dtypes", FormatId::f32, FormatId::f8e8m0fnu, 0x00400001, 0x01, X},
      {"ml_dtypes", FormatId::f32, FormatId::f8e8m0fnu, 0x005FFFFF, 0x01, X},
      {"ml_dtypes", FormatId::f32, FormatId::f8e8m0fnu, 0x00400000, 0x00, 0},  // 2^-127: the tie n = 1/2 -> 0, exact
      {"ml_dtypes", FormatId::f32, FormatId::f8e8m0fnu, 0x00200000, 0x00, X | U},  // 2^-128 -> n = 0, tiny
      {"ml_dtypes", FormatId::bf16, FormatId::f8e8m0fnu, 0x0041, 0x01, X},
      // D2: quiet_NaN() is the -0 pattern (8 / 20), negated for a negative NaN
      {"ml_dtypes", FormatId::f32, FormatId::f4e2m1fn, 0xFFC00000, 0x0, V},
      {"ml_dtypes", FormatId::f32, FormatId::f4e2m1fn, 0x7FC00000, 0x8, V},
      {"ml_dtypes", FormatId::bf16, FormatId::f6e3m2fn, 0xFFC0, 0x00, V},
      // D3: a copy (signaling NaN 7F81 stays signaling; invalid is still raised)
      {"ml_dtypes", FormatId::bf16, FormatId::bf16, 0x7F81, 0x7F81, V},
      // D4: payload 1 >> 13 = 0, unquieted, zero -> 1: 7C01; 7F9A8971: 0x1A8971 >> 13 = 0xD4 -> 7CD4
      {"ml_dtypes", FormatId::f32, FormatId::f16, 0x7F800001, 0x7C01, V},
      {"ml_dtypes", FormatId::f32, FormatId::f16, 0x7F9A8971, 0x7CD4, V},
      // D5: bf16 -> f32 shift by 16; f32 -> bf16 stays nan=sign (Eigen): 7FC0
      {"ml_dtypes", FormatId::bf16, FormatId::f32, 0xFFC1, 0xFFC10000, 0},
      {"ml_dtypes", FormatId::f32, FormatId::bf16, 0x7F800001, 0x7FC0, V},
      // cuda: __bfloat162float is u << 16 (7F81 stays signaling); __half2float still 7FFFFFFF
      {"cuda_satfinite", FormatId::bf16, FormatId::f32, 0x7F81, 0x7F810000, V},
      {"cuda_nosat", FormatId::bf16, FormatId::f32, 0xFFC1, 0xFFC10000, 0},
      {"cuda_satfinite", FormatId::f16, FormatId::f32, 0xFE01, 0x7FFFFFFF, 0},
      // torch: f32 -> f8e5m2 NaN 7F | sign; f8e4m3fn saturates Inf to 448 (7E); e5m2 overflows to Inf
      {"torch", FormatId::f32, FormatId::f8e5m2, 0xFFC00000, 0xFF, 0},
      {"torch", FormatId::f32, FormatId::f8e5m2, 0x7FC00000, 0x7F, 0},
      {"torch", FormatId::f32, FormatId::f8e4m3fn, 0x7F800000, 0x7E, O | X},
      {"torch", FormatId::f32, FormatId::f8e5m2, 0x47800000, 0x7C, O | X},  // 65536 -> Inf
      {"torch", FormatId::f32, FormatId::bf16, 0x7FC00000, 0xFFFF, 0},      // AVX2 / AVX-512 kernel
      {"torch_default", FormatId::f32, FormatId::bf16, 0xFFC00000, 0x7FC0, 0},
      {"torch", FormatId::f16, FormatId::bf16, 0xFE00, 0x7FC0, 0},
      {"torch", FormatId::f32, FormatId::f8e8m0fnu, 0x00400001, 0x01, X},
      {"torch", FormatId::f32, FormatId::f8e8m0fnu, 0xBF800000, 0x7F, 0},  // -1: sign dropped -> 2^0
      {"torch", FormatId::f8e8m0fnu, FormatId::f32, 0xFF, 0x7F800001, 0},  // raw: fraction 0 -> 1
      // torch: c10 fp8_fnuz_to_fp32_value returns 0x7F800001 for the fnuz NaN 80 (a positive
      // signaling NaN; numref reads 80 with sign 1, §3.1): raw_plus gives fraction 0 -> 1, sign 0.
      // No invalid flag: the fnuz source is not ieee, its NaN is not signaling (§6.3).
      {"torch", FormatId::f8e4m3fnuz, FormatId::f32, 0x80, 0x7F800001, 0},
      {"torch", FormatId::f8e5m2fnuz, FormatId::f32, 0x80, 0x7F800001, 0},
      {"torch_default", FormatId::f8e4m3fnuz, FormatId::f32, 0x80, 0x7F800001, 0},
      {"torch_default", FormatId::f8e5m2fnuz, FormatId::f32, 0x80, 0x7F800001, 0},
      // ... then c10::Half of 7F800001 (7E00) and the OCP FP8 NaN 7F (the rules before it)
      {"torch", FormatId::f8e4m3fnuz, FormatId::f16, 0x80, 0x7E00, 0},
      {"torch", FormatId::f8e5m2fnuz, FormatId::f8e5m2, 0x80, 0x7F, 0},
      // ml_dtypes reads 80 with sign 1 too and keeps it: FFC00000 (no rule; nan=payload)
      {"ml_dtypes", FormatId::f8e4m3fnuz, FormatId::f32, 0x80, 0xFFC00000, 0},
      // xla: f8e5m2 NaN keeps the sign from f32 (7E | sign), 7F from 16-bit sources
      {"xla", FormatId::f32, FormatId::f8e5m2, 0xFFC00000, 0xFE, 0},
      {"xla", FormatId::bf16, FormatId::f8e5m2, 0xFFC0, 0x7F, 0},
      {"xla", FormatId::f16, FormatId::f8e5m2, 0xFE00, 0x7F, 0},
      {"xla", FormatId::bf16, FormatId::f16, 0x7F81, 0x7E08, V},  // payload 1 << 3, quieted
      {"xla", FormatId::f32, FormatId::bf16, 0xFF800001, 0xFFC0, V},
      {"xla", FormatId::f32, FormatId::f4e2m1fn, 0x7FC00000, 0x8, V},
  };
  for (const Case& c : cases) {
    const Profile& pr = profile(*find_profile(c.prof));
    const Result r = convert(c.x, format(c.from), format(c.to), pr.for_cast(format(c.from), format(c.to)));
    EXPECT_EQ(r.bits, c.want) << c.prof << " " << format(c.from).name << "->" << format(c.to).name << " " << std::hex
                              << c.x;
    EXPECT_EQ(r.flags, c.flags) << c.prof << " " << format(c.from).name << "->" << format(c.to).name << " " << std::hex
                                << c.x;
  }
  // The knobs alone (ocp base): signzero / flipzero / all_ones / ones_sign; e8m0_low=grid with ceil.
  Policy p;
  ASSERT_FALSE(apply_policy_settings(p, "nan_to_finite=signzero").has_value());
  EXPECT_EQ(convert(0xFFC00000, format(FormatId::f32), format(FormatId::f4e2m1fn), p).bits, 0x8u);
  EXPECT_EQ(convert(0x7FC00000, format(FormatId::f32), format(FormatId::f4e2m1fn), p).bits, 0x0u);
  // nan=raw_plus (§6.3): raw without the sign. f32 FF800001: fraction 1 >> 13 = 0 -> 1, sign 0:
  // f16 7C01 (raw gives FC01); FFC00001: 0x400001 >> 13 = 0x200 -> 7E00; into f8e4m3fn the
  // positive NaN 7F (raw: FF); into bf16 FF800001 >> 16 -> fraction 0 -> 1: 7F81; flags: the
  // signaling operand raises invalid, the quiet one nothing.
  p = Policy{};
  ASSERT_FALSE(apply_policy_settings(p, "nan=raw_plus").has_value());
  EXPECT_EQ(convert(0xFF800001, format(FormatId::f32), format(FormatId::f16), p).bits, 0x7C01u);
  EXPECT_EQ(convert(0xFF800001, format(FormatId::f32), format(FormatId::f16), p).flags, kInvalid);
  EXPECT_EQ(convert(0xFFC00001, format(FormatId::f32), format(FormatId::f16), p).bits, 0x7E00u);
  EXPECT_EQ(convert(0xFFC00001, format(FormatId::f32), format(FormatId::f16), p).flags, 0u);
  EXPECT_EQ(convert(0xFFC00000, format(FormatId::f32), format(FormatId::f8e4m3fn), p).bits, 0x7Fu);
  EXPECT_EQ(convert(0xFF800001, format(FormatId::f32), format(FormatId::bf16), p).bits, 0x7F81u);
  EXPECT_EQ(convert(0xFFC1, format(FormatId::bf16), format(FormatId::f32), p).bits, 0x7FC10000u);
  ASSERT_FALSE(apply_policy_settings(p, "nan=raw").has_value());
  EXPECT_EQ(convert(0xFF800001, format(FormatId::f32), format(FormatId::f16), p).bits, 0xFC01u);
  p = Policy{};
  ASSERT_FALSE(apply_policy_settings(p, "e8m0_round=ceil e8m0_low=grid").has_value());
  EXPECT_EQ(convert(0x00000001, format(FormatId::f32), format(FormatId::f8e8m0fnu), p).bits, 0x01u);  // 2^-149 -> n = 1
  p.e8m0_low = E8m0Low::linear;
  EXPECT_EQ(convert(0x00000001, format(FormatId::f32), format(FormatId::f8e8m0fnu), p).bits, 0x00u);  // §7.4 minimum
  // A rule that does not parse is a logic error, never silently ignored.
  const ProfileRule bad[] = {{"*", "*", "nan=bogus", ""}};
  Profile broken = profile(ProfileId::ocp);
  broken.rules = bad;
  EXPECT_THROW(broken.for_cast(format(FormatId::f32), format(FormatId::bf16)), std::logic_error);
}

}  // namespace numref
