// f32 sources against the oracle (§11, §4, §6 – §9):
//   1. a structured set, for every target: every f32 exponent x {on the target grid,
//      ties, ties +- 1 f32 ulp, grid +- 1 ulp}; every target value and the midpoints to
//      its neighbours (max finite and just beyond, min subnormal and half of it, ...);
//      NaN payloads quiet / signaling of both signs; +-0; +-Inf — under every
//      deterministic mode, both overflow policies, and every knob variant;
//   2. >= 10 million seeded random f32 codes PER MODE (uniform bit patterns, plus patterns
//      concentrated on each target's exponent range), random target and overflow policy.
// Bits and flags are compared; a mismatch prints from/to/policy/input/got/expected.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace numref {
namespace {

using convtest::f32_code;
using convtest::kDeterministic;
using convtest::kOverflows;
using convtest::Mismatches;
using oracle::Rational;

const Format& kF32 = format(FormatId::f32);

// Adds c, c - 1 and c + 1 (same sign, finite magnitudes) and the negatives.
void add_with_neighbours(std::set<std::uint32_t>& out, std::uint32_t c) {
  for (std::uint32_t sgn : {0u, 0x80000000u}) {
    const std::uint32_t m = c & 0x7FFFFFFFu;
    out.insert(sgn | m);
    if (m > 0) out.insert(sgn | (m - 1));
    if (m < 0x7F800000u) out.insert(sgn | (m + 1));
  }
}

// The structured set of f32 codes for the target `to`.
std::vector<std::uint32_t> structured_codes(const Format& to) {
  std::set<std::uint32_t> s;
  // every f32 exponent: the target's quantum 2^q at that exponent (§4.1), values on the
  // grid b = 2^E + j 2^q (j = 0, 1, 3), the ties b + 2^(q-1), each +- 1 f32 ulp.
  for (int e = -149; e <= 127; ++e) {
    int q;
    if (to.specials == Specials::integer)
      q = 0;
    else {
      q = e - to.man_bits;
      const int emin = to.has_subnormals ? 1 - to.bias : -to.bias;
      if (to.has_subnormals && q < emin - to.man_bits) q = emin - to.man_bits;
    }
    for (std::uint64_t j : {0u, 1u, 3u}) {
      Rational b = Rational(oracle::BigInt(1) << (e + 200)) / Rational(oracle::BigInt(1) << 200);
      const Rational quantum = Rational(oracle::BigInt(1) << (q + 200)) / Rational(oracle::BigInt(1) << 200);
      if (j > 0 && quantum * j >= b) continue;
      b += quantum * j;
      if (auto c = f32_code(b)) add_with_neighbours(s, *c);
      if (auto c = f32_code(b + quantum / 2)) add_with_neighbours(s, *c);
    }
    if (auto c = f32_code(false, 1, e)) add_with_neighbours(s, *c);
  }
  // every target value (codes of <= 16 bits) and the midpoint to the next one up; for
  // the largest one, the midpoint to and the value of the next grid point beyond it.
  if (to.bits <= 16) {
    std::vector<Rational> values;
    for (std::uint32_t c = 0; c < (1u << to.bits); ++c) {
      const oracle::Value v = oracle::read_code(c, to);
      if (v.kind == oracle::Kind::nan || v.kind == oracle::Kind::inf || v.sign) continue;
      values.push_back(oracle::rational_value(c, to));
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (auto c = f32_code(values[i])) add_with_neighbours(s, *c);
      const Rational next = i + 1 < values.size() ? values[i + 1] : Rational(values[i] + (values[i] - values[i - 1]));
      if (auto c = f32_code((values[i] + next) / 2)) add_with_neighbours(s, *c);
      if (i + 1 == values.size()) {
        if (auto c = f32_code(next)) add_with_neighbours(s, *c);
        if (auto c = f32_code(next * 2)) add_with_neighbours(s, *c);
      }
    }
    // half, a quarter and 3/4 of the smallest positive value
    const Rational minpos = values[0] == 0 ? values[1] : values[0];
    for (const Rational& v :
         std::vector<Rational>{Rational(minpos / 2), Rational(minpos / 4), Rational(minpos * 3 / 4)})
      if (auto c = f32_code(v)) add_with_neighbours(s, *c);
  }
  // f32 extremes, zeros, infinities, NaN payloads (quiet and signaling, both signs)
  for (std::uint32_t c :
       {0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0x7F800000u, 0x7F800001u, 0x7FA00000u,
        0x7FBFFFFFu, 0x7FC00000u, 0x7FC00001u, 0x7FD55555u, 0x7FFFFFFFu, 0x7F80FFFFu, 0x7FE00000u}) {
    s.insert(c);
    s.insert(c | 0x80000000u);
  }
  return {s.begin(), s.end()};
}

// The knob settings tried on top of every mode and overflow policy (§10.3 text form).
constexpr std::string_view kVariants[] = {
    "",  // the defaults
    "inf_sat=keep",
    "nan=sign",
    "nan=canonical",
    "nan=ones nan_to_finite=max",
    "nan_to_finite=negzero",
    "e8m0_round=floor",
    "e8m0_round=ceil",
    "e8m0_round=even",
    "e8m0_round=tiesup",
    "zero_to_nozero=min negative=abs",
    "daz=1",
    "ftz=1",
    "tininess=before",
    "ftz=1 tininess=before daz=1",
    "int_range=symmetric",
};

TEST(F32Structured, EveryTargetModeOverflowAndKnob) {
  Mismatches mm;
  std::uint64_t cases = 0;
  for (const auto& to : kFormats) {
    if (!convtest::swept(to)) continue;  // §2.5 extra P3109 members: test_p3109_members, sweep_p3109
    const std::vector<std::uint32_t> codes = structured_codes(to);
    for (const std::string_view n : kVariants)
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows) {
          // both overflow policies for the defaults and the knobs that interact with overflow
          const bool ovf_matters = n.empty() || n.starts_with("inf_sat") || n.starts_with("int_range") ||
                                   n.starts_with("e8m0") || n.starts_with("zero_to");
          if (!ovf_matters && o == Overflow::saturate) continue;
          const Policy p = convtest::with(n, convtest::with(r, o));
          const Converter conv(kF32, to, p);
          convtest::parallel_for(codes.size(), [&](std::uint64_t b, std::uint64_t e) {
            for (std::uint64_t i = b; i < e; ++i) convtest::check_one(conv, p, codes[i], 0, mm);
          });
          cases += codes.size();
        }
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
  std::printf("structured f32 cases: %llu\n", static_cast<unsigned long long>(cases));
}

// The structured set really contains what it claims, checked by hand for f8e4m3fn:
// 448 = 0x43E00000 (max), 464 = 0x43E80000 (tie beyond max), 0x43E80001 (tie + 1 ulp),
// 2^-9 = 0x3B000000 (min subnormal), 2^-10 = 0x3A800000 (half of it), NaN / Inf / zeros.
TEST(F32Structured, ContainsTheNamedCases) {
  const std::vector<std::uint32_t> codes = structured_codes(format(FormatId::f8e4m3fn));
  const std::set<std::uint32_t> s(codes.begin(), codes.end());
  for (std::uint32_t c :
       {0x43E00000u, 0x43E80000u, 0x43E80001u, 0x43E7FFFFu, 0x3B000000u, 0x3A800000u, 0x3A7FFFFFu, 0x3A800001u,
        0xC3E80000u, 0x7F800000u, 0xFF800000u, 0x7FA00000u, 0xFFC00000u, 0x80000000u, 0x7F7FFFFFu, 0x00000001u})
    EXPECT_TRUE(s.count(c)) << std::hex << c;
}

// Random f32 codes: half uniform 32-bit patterns, half concentrated on a random target's
// exponent range (qmin - 4 .. top + 4, random fraction and sign).
std::uint32_t random_f32(convtest::SplitMix64& g) {
  const std::uint64_t w = g.next();
  if (w & 1u) return static_cast<std::uint32_t>(w >> 32);
  const Format& t = kFormats[(w >> 1) % kFormatCount];
  int lo, hi;
  if (t.specials == Specials::integer) {
    lo = -4;
    hi = 10;
  } else {
    const int emin = t.has_subnormals ? 1 - t.bias : -t.bias;
    lo = emin - t.man_bits - 4;
    hi = ((static_cast<int>(t.max_finite >> t.man_bits)) - t.bias) + 4;
  }
  int e = lo + static_cast<int>((w >> 8) % static_cast<std::uint64_t>(hi - lo + 1));
  if (e > 127) e = 127;
  const std::uint32_t frac = static_cast<std::uint32_t>(w >> 40) & 0x7FFFFFu;
  const std::uint32_t sign = (w & 2u) ? 0x80000000u : 0u;
  if (e < -126) {  // f32 subnormal (or far below: the smallest subnormals)
    const int shift = -126 - e;
    const std::uint32_t sub = shift >= 24 ? 1u : ((0x800000u | frac) >> shift);
    return sign | (sub == 0 ? 1u : sub);
  }
  return sign | (static_cast<std::uint32_t>(e + 127) << 23) | frac;
}

constexpr std::uint64_t kRandomPerMode = 10'000'000;

class F32Random : public ::testing::TestWithParam<Round> {};

TEST_P(F32Random, TenMillionPerModeAgainstOracle) {
  const Round mode = GetParam();
  // One Converter per (target, overflow policy).
  std::vector<std::pair<Converter, Policy>> convs;
  for (const auto& to : kFormats)
    for (Overflow o : kOverflows) {
      if (!convtest::swept(to)) continue;  // §2.5 extra P3109 members: test_p3109_members, sweep_p3109
      const Policy p = convtest::with(mode, o);
      convs.emplace_back(Converter(kF32, to, p), p);
    }
  Mismatches mm;
  constexpr std::uint64_t kChunk = 1 << 16;
  convtest::parallel_for(
      kRandomPerMode / kChunk + 1,
      [&](std::uint64_t b, std::uint64_t e) {
        for (std::uint64_t chunk = b; chunk < e; ++chunk) {
          convtest::SplitMix64 g(0x6E756D726566ull ^ (static_cast<std::uint64_t>(mode) << 56) ^ chunk);
          for (std::uint64_t i = 0; i < kChunk; ++i) {
            const std::uint32_t x = random_f32(g);
            const auto& [conv, p] = convs[g.next() % convs.size()];
            convtest::check_one(conv, p, x, 0, mm);
          }
        }
      },
      1);
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

INSTANTIATE_TEST_SUITE_P(Modes, F32Random,
                         ::testing::Values(Round::rne, Round::rtz, Round::rup, Round::rdn, Round::rna),
                         [](const ::testing::TestParamInfo<Round>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace numref
