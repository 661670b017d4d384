// Exhaustive (label exhaustive): the core against the MPFR / rational oracle for every IEEE P3109
// member of the table (spec §2.5; NUMREF_P3109_MEMBERS, read from kFormats, never listed here):
//   * every code of every format of at most 16 bits (bf16, f16, every 8-, 6-, 4-bit row and every
//     P3109 member) into every P3109 member, every deterministic mode (§4.2), both overflow
//     policies (§6.1), inf_sat=keep under saturate (§6.2);
//   * the same sources with stochastic rounding (§5.1 fraction and §5.2 add, k = 1 and 4, every
//     r for the narrow sources, 3 seeded r per 16-bit code);
//   * every code of every P3109 member into every format of the table, every deterministic mode,
//     both overflow policies.
// About 4 * 10^8 conversions; NUMREF_TEST_THREADS sets the threads (default 2).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace numref {
namespace {

using convtest::kDeterministic;
using convtest::kOverflows;
using convtest::Mismatches;
using convtest::sweep_codes;

std::vector<const Format*> small_rows() {  // every row of at most 16 bits, the extra members included
  std::vector<const Format*> v;
  for (const auto& f : kFormats)
    if (f.bits <= 16) v.push_back(&f);
  return v;
}

TEST(SweepP3109, EverySmallSourceIntoEveryMember) {
  Mismatches mm;
  std::uint64_t cases = 0, members = 0;
  for (const auto& to : kFormats) {
    if (!to.is_p3109()) continue;
    ++members;
    for (const Format* from : small_rows())
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows)
          for (InfSat s : {InfSat::max, InfSat::keep}) {
            if (o == Overflow::nonsat && s == InfSat::keep) continue;  // inf_sat acts under saturate only
            Policy p = convtest::with(r, o);
            p.inf_sat = s;
            sweep_codes(*from, to, p, mm);
            cases += std::uint64_t{1} << from->bits;
          }
  }
  EXPECT_EQ(members, 140u);
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
  EXPECT_GT(cases, 250'000'000u);
}

TEST(SweepP3109, StochasticIntoEveryMember) {
  Mismatches mm;
  for (const auto& to : kFormats) {
    if (!to.is_p3109()) continue;
    for (const Format* from : small_rows())
      for (SrVariant v : {SrVariant::fraction, SrVariant::add})
        for (int k : {1, 4}) {
          Policy p = convtest::with(Round::sr, Overflow::nonsat);
          p.sr_bits = k;
          p.sr_variant = v;
          const Converter conv(*from, to, p);
          convtest::parallel_for(std::uint64_t{1} << from->bits, [&](std::uint64_t b, std::uint64_t e) {
            convtest::SplitMix64 g(b * 0x3109 + static_cast<std::uint64_t>(k));
            for (std::uint64_t c = b; c < e; ++c) {
              const auto code = static_cast<std::uint32_t>(c);
              if (from->bits <= 8) {
                for (std::uint64_t r = 0; r < (std::uint64_t{1} << k); ++r) convtest::check_one(conv, p, code, r, mm);
              } else {
                for (int t = 0; t < 3; ++t) convtest::check_one(conv, p, code, g.next() >> (64 - k), mm);
              }
            }
          });
        }
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

TEST(SweepP3109, EveryMemberIntoEveryFormat) {
  Mismatches mm;
  for (const auto& from : kFormats) {
    if (!from.is_p3109()) continue;
    for (const auto& to : kFormats)
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows) sweep_codes(from, to, convtest::with(r, o), mm);
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

}  // namespace
}  // namespace numref
