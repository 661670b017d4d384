// Profiles and the textual policy (§10): the knob table of §10.1 transcribed by hand,
// describe() in the fixed order of §10.2, apply_policy_settings() reading it back, and
// errors that name the offending key or value.
#include <gtest/gtest.h>

#include <string>

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
    {"ocp", Overflow::nonsat, InfSat::max, NanOut::payload, NanToFinite::zero, E8m0Round::follow,
     ZeroToNoZero::nan, Negative::nan},
    {"ieee", Overflow::nonsat, InfSat::max, NanOut::payload, NanToFinite::zero, E8m0Round::follow,
     ZeroToNoZero::nan, Negative::nan},
    {"cuda_satfinite", Overflow::saturate, InfSat::max, NanOut::ones, NanToFinite::max, E8m0Round::floor,
     ZeroToNoZero::min, Negative::abs},
    {"cuda_nosat", Overflow::nonsat, InfSat::max, NanOut::ones, NanToFinite::max, E8m0Round::floor,
     ZeroToNoZero::min, Negative::abs},
    {"ml_dtypes", Overflow::nonsat, InfSat::keep, NanOut::sign, NanToFinite::negzero, E8m0Round::tiesup,
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
  for (const auto& f : kFormats)
    EXPECT_EQ(&cuda.for_target(f), f.bits <= 8 ? &cuda.narrow : &cuda.wide) << f.name;
}

// §10.2 the fixed order, verbatim from the spec for the default policy.
TEST(PolicyText, DescribeDefault) {
  EXPECT_EQ(describe(Policy{}),
            "round=rne overflow=nonsat inf_sat=max nan=payload nan_to_finite=zero e8m0_round=follow "
            "zero_to_nozero=nan negative=nan daz=0 ftz=0 tininess=after int_range=full");
  Policy p;
  p.round = Round::sr;
  p.sr_bits = 12;
  p.sr_variant = SrVariant::add;
  EXPECT_EQ(describe(p),
            "round=sr sr_bits=12 sr_variant=add overflow=nonsat inf_sat=max nan=payload nan_to_finite=zero "
            "e8m0_round=follow zero_to_nozero=nan negative=nan daz=0 ftz=0 tininess=after int_range=full");
}

// §10.2 describe() / apply_policy_settings() round trip for every profile and for a
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
}  // namespace numref
