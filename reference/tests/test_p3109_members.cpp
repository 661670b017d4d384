// The extra IEEE P3109 members (spec §2.5: the 128 rows of NUMREF_P3109_MORE_MEMBERS, every member
// gfloat's format_info_p3109 accepts for K = 2..8 beyond its 12 binary8 ones), core vs the MPFR /
// rational oracle, in the default suite. The default suite's all-pairs sweeps leave these rows out
// (convtest::swept); this file bounds their cost, and sweep_p3109.cpp (label exhaustive) sweeps every
// code of every source of at most 16 bits into every member.
//   * out of each member: every code into f32, bf16, f16 and every P3109 member of the same width K,
//     every deterministic mode, both overflow policies;
//   * into each member: every 61st bf16 and f16 code (and their specials), every deterministic mode,
//     both overflow policies; stochastic rounding (fraction and add, k = 3) on every 61st code;
//     600 seeded random f32 codes concentrated on the member's range (rne, rdn; both overflows);
//   * the degenerate members by hand (§2.5 item 1, §6.1).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace numref {
namespace {

using convtest::kDeterministic;
using convtest::kOverflows;
using convtest::Mismatches;

std::vector<const Format*> extra_members() {
  std::vector<const Format*> v;
  for (const auto& f : kFormats)
    if (f.is_p3109_extra()) v.push_back(&f);
  return v;
}

// Every code of `from` (stride 1) or every `step`-th code plus the special magnitudes' codes.
void sweep_step(const Format& from, const Format& to, const Policy& p, std::uint32_t step, Mismatches& mm,
                std::uint64_t r = 0) {
  const Converter conv(from, to, p);
  const std::uint64_t n = std::uint64_t{1} << from.bits;
  for (std::uint64_t c = 0; c < n; c += step) convtest::check_one(conv, p, static_cast<std::uint32_t>(c), r, mm);
  if (step == 1) return;
  for (std::uint32_t c :
       {from.max_finite, from.max_finite | from.sign_bit(), from.canonical_nan, from.mask(), from.sign_bit(),
        from.first_special_magnitude(), from.first_special_magnitude() | from.sign_bit()})
    convtest::check_one(conv, p, c & from.mask(), r, mm);
}

TEST(P3109Members, OutOfEveryExtraMember) {
  Mismatches mm;
  std::uint64_t cases = 0;
  const auto members = extra_members();
  ASSERT_EQ(members.size(), 128u);
  for (const Format* from : members)
    for (const auto& to : kFormats) {
      const bool wide = to.id == FormatId::f32 || to.id == FormatId::bf16 || to.id == FormatId::f16;
      if (!wide && !(to.is_p3109() && to.bits == from->bits)) continue;
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows) {
          sweep_step(*from, to, convtest::with(r, o), 1, mm);
          cases += std::uint64_t{1} << from->bits;
        }
    }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
  EXPECT_GT(cases, 1'000'000u);
}

TEST(P3109Members, IntoEveryExtraMemberFrom16BitSources) {
  Mismatches mm;
  const auto members = extra_members();
  convtest::parallel_for(
      members.size(),
      [&](std::uint64_t b, std::uint64_t e) {
        for (std::uint64_t i = b; i < e; ++i)
          for (FormatId src : {FormatId::bf16, FormatId::f16}) {
            const Format& from = format(src);
            for (Round r : kDeterministic)
              for (Overflow o : kOverflows) sweep_step(from, *members[i], convtest::with(r, o), 61, mm);
            for (SrVariant v : {SrVariant::fraction, SrVariant::add})
              for (std::uint64_t rr : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{6}}) {
                Policy p = convtest::with(Round::sr, Overflow::nonsat);
                p.sr_bits = 3;
                p.sr_variant = v;
                sweep_step(from, *members[i], p, 61, mm, rr);
              }
          }
      },
      1);
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

TEST(P3109Members, IntoEveryExtraMemberFromRandomF32) {
  Mismatches mm;
  convtest::SplitMix64 g(0x3109);
  const Format& f32 = format(FormatId::f32);
  for (const Format* to : extra_members()) {
    // exponents from qmin - 3 to the largest finite value's + 3, random fraction and sign
    const int lo = to->qmin() - 3, hi = to->emin() + (1 << to->exp_bits) + 3;
    for (Round r : {Round::rne, Round::rdn})
      for (Overflow o : kOverflows) {
        const Policy p = convtest::with(r, o);
        const Converter conv(f32, *to, p);
        for (int i = 0; i < 150; ++i) {
          const std::uint64_t w = g.next();
          const int e = lo + static_cast<int>((w >> 32) % static_cast<std::uint64_t>(hi - lo + 1));
          const std::uint32_t code =
              (static_cast<std::uint32_t>(w) & 0x807FFFFFu) | (static_cast<std::uint32_t>(e + 127) << 23);
          convtest::check_one(conv, p, code, 0, mm);
        }
      }
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// §2.5 item 1, §6.1 The members with no finite value but 0 (p3109_k2p1se, p3109_k2p2se: 00 = 0,
// 01 = +Inf, 10 = NaN, 11 = -Inf): a finite overflow saturates to +0 whatever its sign (−max is 0;
// the −0 pattern 10 is the NaN), with overflow and inexact; a value that is not an overflow rounds
// to 0 as usual; under nonsat the nearest modes give ±Inf. gfloat 0.5.2 gives the same codes
// (tools/tests/p3109_diff.py).
TEST(P3109Members, DegenerateSignedK2Extended) {
  const Format& f32 = format(FormatId::f32);
  for (FormatId id : {FormatId::p3109_k2p1se, FormatId::p3109_k2p2se}) {
    const Format& to = format(id);
    const Policy sat = convtest::with(Round::rne, Overflow::saturate);
    const Policy nonsat = convtest::with(Round::rne, Overflow::nonsat);
    const Policy rtz = convtest::with(Round::rtz, Overflow::nonsat);
    const std::uint8_t ovf = kOverflow | kInexact;
    EXPECT_EQ(convert(0xBF800000u, f32, to, sat), (Result{0x0, ovf})) << to.name;     // -1 -> +0
    EXPECT_EQ(convert(0x3F800000u, f32, to, sat), (Result{0x0, ovf})) << to.name;     // +1 -> +0
    EXPECT_EQ(convert(0xFF800000u, f32, to, sat), (Result{0x0, ovf})) << to.name;     // §6.2 rule 3: -Inf -> -max = +0
    EXPECT_EQ(convert(0xBF800000u, f32, to, nonsat), (Result{0x3, ovf})) << to.name;  // -1 -> -Inf
    EXPECT_EQ(convert(0xBF800000u, f32, to, rtz), (Result{0x0, ovf})) << to.name;     // -1 -> -max = +0
    EXPECT_EQ(convert(0x7FC00000u, f32, to, sat).bits, 0x2u) << to.name;              // NaN -> 10
  }
}

}  // namespace
}  // namespace numref
