// The knob values that model gfloat 0.5 (issue 12: departures G1-G3 of the gfloat profiles),
// core (numref::Converter) against the independent oracle (numref::oracle::convert), bits and flags:
//   §7.4 e8m0_low=nan     a rounded value below 2^-127 into f8e8m0fnu gives the NaN FF (G1);
//   §7.3 negative=inf_abs finite negatives give NaN, -Inf converts as +Inf (G2: FE saturating);
//   §6.7 inf_nan=nan      the NaN standing for Inf (overflow, Inf operands) in a format with NaN
//                         but no Inf is the one nan= gives (G3: FF under nan=all_ones).
// Every code of every <= 16-bit source into every target the knob acts on, in every
// deterministic mode, both overflow policies and both inf_sat values; stochastic rounding into
// f8e8m0fnu (both variants); and a seeded binary32 sample (structured codes near 2^-127, the
// overflow thresholds, +-Inf and NaNs, plus random patterns).
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
using convtest::small_sources;
using convtest::sweep_codes;

struct Knob {
  const char* settings;
  bool (*acts_on)(const Format&);
};
bool e8m0_target(const Format& f) { return !f.is_integer() && f.man_bits == 0 && !f.has_zero; }
bool unsigned_target(const Format& f) { return !f.is_signed; }
bool inf_slot_target(const Format& f) { return !f.is_integer() && f.has_nan() && !f.has_inf(); }
const Knob kKnobs[] = {
    {"e8m0_low=nan", e8m0_target},
    {"e8m0_low=nan zero_to_nozero=min", e8m0_target},
    {"negative=inf_abs", unsigned_target},
    {"negative=inf_abs zero_to_nozero=min e8m0_low=nan", unsigned_target},
    {"inf_nan=nan", inf_slot_target},  // nan=payload: the slot's NaN again
    {"inf_nan=nan nan=all_ones", inf_slot_target},
    {"inf_nan=nan nan=canonical", inf_slot_target},
    {"inf_nan=nan nan=ones", inf_slot_target},
    {"inf_nan=nan nan=ones_sign", inf_slot_target},
    {"inf_nan=nan nan=sign", inf_slot_target},
    {"inf_nan=nan nan=raw", inf_slot_target},
    {"inf_nan=nan nan=raw_plus", inf_slot_target},
    {"inf_nan=nan nan=all_ones e8m0_low=nan negative=inf_abs", inf_slot_target},  // the gfloat rows' settings
};

TEST(GfloatKnobsOracle, EverySmallSourceEveryModeOverflowInfSat) {
  Mismatches mm;
  std::uint64_t cases = 0;
  for (const Knob& k : kKnobs)
    for (const Format* from : small_sources())
      for (const auto& to : kFormats) {
        if (!k.acts_on(to) || !convtest::swept(to)) continue;  // §2.5: test_p3109_members
        for (Round r : kDeterministic)
          for (Overflow o : kOverflows)
            for (InfSat s : {InfSat::max, InfSat::keep}) {
              if (o == Overflow::nonsat && s == InfSat::keep) continue;  // inf_sat acts under saturate only
              Policy p = convtest::with(k.settings, convtest::with(r, o));
              p.inf_sat = s;
              sweep_codes(*from, to, p, mm);
              cases += std::uint64_t{1} << from->bits;
            }
      }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
  EXPECT_GT(cases, 2'000'000u);
}

// §5.1 / §5.2 stochastic rounding into f8e8m0fnu: the rounded value decides 00 or FF at 2^-127.
TEST(GfloatKnobsOracle, StochasticIntoE8m0) {
  Mismatches mm;
  const Format& to = format(FormatId::f8e8m0fnu);
  for (const Format* from : small_sources())
    for (SrVariant v : {SrVariant::fraction, SrVariant::add})
      for (int k : {1, 8})
        for (std::uint64_t r : {std::uint64_t{0}, std::uint64_t{1}, (std::uint64_t{1} << k) - 1}) {
          Policy p = convtest::with("e8m0_low=nan negative=inf_abs", convtest::with(Round::sr, Overflow::nonsat));
          p.sr_bits = k;
          p.sr_variant = v;
          sweep_codes(*from, to, p, mm, r);
        }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// binary32 operands: structured codes (every f32 subnormal exponent near 2^-127, the
// f8e4m3fn overflow threshold 464 and its neighbours, the top binade, +-Inf, NaNs of both
// signs) and seeded random patterns, into f8e8m0fnu and f8e4m3fn.
TEST(GfloatKnobsOracle, Binary32Sample) {
  std::vector<std::uint32_t> codes;
  for (std::uint32_t base : {0x00000000u, 0x00200000u, 0x00300000u, 0x00400000u, 0x00600000u, 0x00800000u, 0x43E80000u,
                             0x43F00000u, 0x7F7FFFFFu, 0x7F000000u})
    for (std::uint32_t d = 0; d < 64; ++d) {
      for (std::uint32_t s : {0u, 0x80000000u}) {
        codes.push_back((base + d) | s);
        if (base >= d) codes.push_back((base - d) | s);
      }
    }
  for (std::uint32_t c : {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu})
    codes.push_back(c);
  SplitMix64 rng(20261127);
  for (int i = 0; i < 200000; ++i) codes.push_back(static_cast<std::uint32_t>(rng.next()));
  Mismatches mm;
  const Format& f32 = format(FormatId::f32);
  for (const Knob& k : kKnobs)
    for (FormatId t : {FormatId::f8e8m0fnu, FormatId::f8e4m3fn}) {
      const Format& to = format(t);
      if (!k.acts_on(to)) continue;
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows) {
          const Policy p = convtest::with(k.settings, convtest::with(r, o));
          const Converter conv(f32, to, p);
          parallel_for(codes.size(), [&](std::uint64_t b, std::uint64_t e) {
            for (std::uint64_t i = b; i < e; ++i) check_one(conv, p, codes[i], 0, mm);
          });
        }
    }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

}  // namespace
}  // namespace numref
