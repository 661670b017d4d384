// Exhaustive agreement of the core (numref::Converter, §11) with the independent oracle
// (numref::oracle::convert, MPFR + rationals) for every code of every source format of
// at most 16 bits, into every target format.
//   * every deterministic mode (§4.2) x both overflow policies (§6.1), every target;
//   * every other knob (§6.2 inf_sat, §6.3 nan, §6.4 nan_to_finite, §7.1 e8m0_round,
//     §7.2 zero_to_nozero, §7.3 negative, §8.1 daz, §8.2 ftz, §9.2 tininess,
//     §6.5 int_range) and the four profiles (§10), on every target, every mode;
//   * bits AND flags are compared; a mismatch prints from/to/policy/input/got/expected.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.hpp"

namespace numref {
namespace {

using convtest::check_one;
using convtest::kDeterministic;
using convtest::kOverflows;
using convtest::Mismatches;
using convtest::parallel_for;

std::vector<const Format*> small_sources() {
  std::vector<const Format*> v;
  for (const auto& f : kFormats)
    if (f.bits <= 16) v.push_back(&f);
  return v;
}

// Every code of `from` into `to` under `p`, core vs oracle.
void sweep_codes(const Format& from, const Format& to, const Policy& p, Mismatches& mm) {
  const Converter conv(from, to, p);
  parallel_for(std::uint64_t{1} << from.bits, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t c = b; c < e; ++c) check_one(conv, p, static_cast<std::uint32_t>(c), 0, mm);
  });
}

// §4.2 x §6.1: every source of <= 16 bits, every target, every deterministic mode, both
// overflow policies, all other knobs at their defaults (the `ocp` profile, §10.1).
TEST(OracleAgreement, EverySmallSourceEveryTargetModeAndOverflow) {
  Mismatches mm;
  std::uint64_t cases = 0;
  for (const Format* from : small_sources())
    for (const auto& to : kFormats)
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows) {
          sweep_codes(*from, to, convtest::with(r, o), mm);
          cases += std::uint64_t{1} << from->bits;
        }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
  EXPECT_GT(cases, 13'000'000u);  // 2 x 65536 x 10 targets x 10 policies, plus the narrow sources
}

// One knob (or a few) changed from the defaults; applied with every mode and both
// overflow policies, every source of <= 16 bits, every target.
struct Variant {
  const char* name;
  void (*apply)(Policy&);
};
const Variant kVariants[] = {
    {"inf_sat=keep", [](Policy& p) { p.inf_sat = InfSat::keep; }},
    {"nan=sign", [](Policy& p) { p.nan = NanOut::keep_sign; }},
    {"nan=canonical", [](Policy& p) { p.nan = NanOut::canonical; }},
    {"nan=ones", [](Policy& p) { p.nan = NanOut::all_ones; }},
    {"nan_to_finite=negzero", [](Policy& p) { p.nan_to_finite = NanToFinite::neg_zero; }},
    {"nan_to_finite=max", [](Policy& p) { p.nan_to_finite = NanToFinite::pos_max; }},
    {"e8m0_round=floor", [](Policy& p) { p.e8m0_round = E8m0Round::floor; }},
    {"e8m0_round=ceil", [](Policy& p) { p.e8m0_round = E8m0Round::ceil; }},
    {"e8m0_round=even", [](Policy& p) { p.e8m0_round = E8m0Round::even; }},
    {"e8m0_round=tiesup", [](Policy& p) { p.e8m0_round = E8m0Round::tiesup; }},
    {"zero_to_nozero=min negative=abs", [](Policy& p) {
       p.zero_to_nozero = ZeroToNoZero::min;
       p.negative = Negative::abs;
     }},
    {"daz=1", [](Policy& p) { p.daz = true; }},
    {"ftz=1", [](Policy& p) { p.ftz = true; }},
    {"tininess=before", [](Policy& p) { p.tininess = Tininess::before; }},
    {"ftz=1 tininess=before", [](Policy& p) {
       p.ftz = true;
       p.tininess = Tininess::before;
     }},
    {"daz=1 ftz=1 zero_to_nozero=min", [](Policy& p) {
       p.daz = true;
       p.ftz = true;
       p.zero_to_nozero = ZeroToNoZero::min;
     }},
    {"int_range=symmetric", [](Policy& p) { p.int_range = IntRange::symmetric; }},
};

// Knobs that act on a few classes of operands only (specials, zero, negative, E8M0
// rounding, subnormals) need every target but not both overflow policies for the
// knobs that do not interact with overflow; the list below runs both anyway for the
// knobs that do (inf_sat).
TEST(OracleAgreement, EveryKnobEverySmallSourceEveryTarget) {
  Mismatches mm;
  for (const auto& v : kVariants)
    for (const Format* from : small_sources())
      for (const auto& to : kFormats)
        for (Round r : kDeterministic)
          for (Overflow o : kOverflows) {
            // Both overflow policies only where the knob interacts with overflow.
            const std::string n = v.name;
            const bool ovf_matters = n.rfind("inf_sat", 0) == 0 || n.rfind("int_range", 0) == 0 ||
                                     n.rfind("e8m0", 0) == 0 || n.rfind("zero_to", 0) == 0;
            if (!ovf_matters && o == Overflow::saturate) continue;
            Policy p = convtest::with(r, o);
            v.apply(p);
            sweep_codes(*from, to, p, mm);
          }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// §10 every profile, its narrow and wide policies, on every target (the profile picks
// the policy by the target's width), every mode.
TEST(OracleAgreement, EveryProfileEverySmallSourceEveryTarget) {
  Mismatches mm;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& prof = all_profiles()[i];
    for (const Format* from : small_sources())
      for (const auto& to : kFormats)
        for (Round r : kDeterministic) {
          Policy p = prof.for_target(to);
          p.round = r;
          sweep_codes(*from, to, p, mm);
        }
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// numref::convert() (validating on every call) is the same function as Converter.
TEST(OracleAgreement, ConvertEqualsConverter) {
  for (const auto& from : kFormats) {
    if (from.bits > 8) continue;
    for (const auto& to : kFormats)
      for (Round r : kDeterministic) {
        const Policy p = convtest::with(r, Overflow::nonsat);
        const Converter conv(from, to, p);
        for (std::uint32_t c = 0; c < (1u << from.bits); ++c) {
          const Result a = convert(c, from, to, p), b = conv(c);
          ASSERT_EQ(a, b) << from.name << " -> " << to.name << " " << convtest::hex(c, from);
        }
      }
  }
}

}  // namespace
}  // namespace numref
