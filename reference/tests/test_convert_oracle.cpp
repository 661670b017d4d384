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

using convtest::kDeterministic;
using convtest::kOverflows;
using convtest::Mismatches;
using convtest::small_sources;
using convtest::sweep_codes;

// §4.2 x §6.1: every source of <= 16 bits, every target, every deterministic mode, both
// overflow policies, all other knobs at their defaults (the `ocp` profile, §10.1).
TEST(OracleAgreement, EverySmallSourceEveryTargetModeAndOverflow) {
  Mismatches mm;
  std::uint64_t cases = 0;
  for (const Format* from : small_sources())
    for (const auto& to : kFormats)
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows) {
          if (!convtest::swept(to)) continue;  // §2.5 extra P3109 members: test_p3109_members, sweep_p3109
          sweep_codes(*from, to, convtest::with(r, o), mm);
          cases += std::uint64_t{1} << from->bits;
        }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
  EXPECT_GT(cases, 17'000'000u);  // 2 x 65536 x 13 targets x 10 policies, plus the narrow sources
}

// One knob (or a few) changed from the defaults. `acts_on` names the targets whose
// results the knob can change (read from the spec clause); there it runs with every mode
// (or, for knobs independent of rounding, a nearest and a directed one) and both overflow
// policies where the knob interacts with overflow. On every other target it runs once
// (rne, nonsat): the knob must change nothing there, which the oracle checks too.
struct Variant {
  const char* name;
  void (*apply)(Policy&);
  bool (*acts_on)(const Format&);
  bool mode_free;  // §6.2 – §6.4, §7.2: results do not depend on the rounding mode
  bool with_overflow;
};
bool any_target(const Format&) { return true; }
bool has_nan_target(const Format& f) { return f.has_nan(); }
bool no_nan_target(const Format& f) { return !f.has_nan(); }
bool e8m0_target(const Format& f) { return !f.is_integer() && f.man_bits == 0; }
bool float_target(const Format& f) { return !f.is_integer(); }
bool int_target(const Format& f) { return f.is_integer(); }
const Variant kVariants[] = {
    {"inf_sat=keep", [](Policy& p) { p.inf_sat = InfSat::keep; }, float_target, true, true},
    {"nan=sign", [](Policy& p) { p.nan = NanOut::sign; }, has_nan_target, true, false},
    {"nan=canonical", [](Policy& p) { p.nan = NanOut::canonical; }, has_nan_target, true, false},
    {"nan=ones", [](Policy& p) { p.nan = NanOut::ones; }, has_nan_target, true, false},
    {"nan=ones_sign", [](Policy& p) { p.nan = NanOut::ones_sign; }, has_nan_target, true, false},
    {"nan=all_ones", [](Policy& p) { p.nan = NanOut::all_ones; }, has_nan_target, true, false},
    {"nan=raw", [](Policy& p) { p.nan = NanOut::raw; }, has_nan_target, true, false},
    {"nan=raw_plus", [](Policy& p) { p.nan = NanOut::raw_plus; }, has_nan_target, true, false},
    {"nan_to_finite=negzero", [](Policy& p) { p.nan_to_finite = NanToFinite::negzero; }, no_nan_target, true, false},
    {"nan_to_finite=max", [](Policy& p) { p.nan_to_finite = NanToFinite::max; }, no_nan_target, true, false},
    {"e8m0_round=floor", [](Policy& p) { p.e8m0_round = E8m0Round::floor; }, e8m0_target, false, true},
    {"e8m0_round=ceil", [](Policy& p) { p.e8m0_round = E8m0Round::ceil; }, e8m0_target, false, true},
    {"e8m0_round=even", [](Policy& p) { p.e8m0_round = E8m0Round::even; }, e8m0_target, false, true},
    {"e8m0_round=tiesup", [](Policy& p) { p.e8m0_round = E8m0Round::tiesup; }, e8m0_target, false, true},
    {"zero_to_nozero=min negative=abs",
     [](Policy& p) {
       p.zero_to_nozero = ZeroToNoZero::min;
       p.negative = Negative::abs;
     },
     e8m0_target, false, true},
    {"daz=1", [](Policy& p) { p.daz = true; }, any_target, false, false},
    {"ftz=1", [](Policy& p) { p.ftz = true; }, float_target, false, false},
    {"tininess=before", [](Policy& p) { p.tininess = Tininess::before; }, float_target, false, false},
    {"ftz=1 tininess=before",
     [](Policy& p) {
       p.ftz = true;
       p.tininess = Tininess::before;
     },
     float_target, false, false},
    {"daz=1 ftz=1 zero_to_nozero=min",
     [](Policy& p) {
       p.daz = true;
       p.ftz = true;
       p.zero_to_nozero = ZeroToNoZero::min;
     },
     any_target, false, false},
    {"int_range=symmetric", [](Policy& p) { p.int_range = IntRange::symmetric; }, int_target, false, true},
};

TEST(OracleAgreement, EveryKnobEverySmallSourceEveryTarget) {
  Mismatches mm;
  for (const auto& v : kVariants)
    for (const Format* from : small_sources())
      for (const auto& to : kFormats)
        for (Round r : kDeterministic)
          for (Overflow o : kOverflows) {
            if (!convtest::swept(to)) continue;  // §2.5 extra P3109 members: test_p3109_members, sweep_p3109
            if (!v.acts_on(to) && (r != Round::rne || o != Overflow::nonsat)) continue;
            if (!v.with_overflow && o == Overflow::saturate) continue;
            if (v.mode_free && r != Round::rne && r != Round::rup) continue;
            Policy p = convtest::with(r, o);
            v.apply(p);
            sweep_codes(*from, to, p, mm);
          }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// §10 every profile, its narrow and wide policies and its §10.2 pair rules, on every target,
// every mode; and every profile's policy with e8m0_low=grid (§7.4) against the oracle.
TEST(OracleAgreement, EveryProfileEverySmallSourceEveryTarget) {
  Mismatches mm;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& prof = all_profiles()[i];
    for (const Format* from : small_sources())
      for (const auto& to : kFormats)
        for (Round r : kDeterministic) {
          if (!convtest::swept(to)) continue;  // §2.5 extra P3109 members: test_p3109_members, sweep_p3109
          Policy p = prof.for_cast(*from, to);
          p.round = r;
          if (p == convtest::with(r, Overflow::nonsat)) continue;  // ocp / ieee: the sweep above
          sweep_codes(*from, to, p, mm);
          if (to.id == FormatId::f8e8m0fnu && p.e8m0_low == E8m0Low::linear) {
            p.e8m0_low = E8m0Low::grid;
            sweep_codes(*from, to, p, mm);
          }
        }
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// numref::convert() (validating on every call) is the same function as Converter.
TEST(OracleAgreement, ConvertEqualsConverter) {
  for (const auto& from : kFormats) {
    if (from.bits > 8 || !convtest::swept(from)) continue;
    for (const auto& to : kFormats)
      for (Round r : kDeterministic) {
        if (!convtest::swept(to)) continue;  // §2.5 extra P3109 members: test_p3109_members, sweep_p3109
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
