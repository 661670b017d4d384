// The gfloat profiles (spec §10.6) and gfloat's stochastic rounding modes as §5.1 settings
// (spec §5.5). Expected codes computed by hand from gfloat 0.5's round_float / encode_float
// (gfloat/round.py, gfloat/encode.py); tools/tests/gfloat_diff.py compares with gfloat itself.
#include <gtest/gtest.h>

#include <cstdint>

#include "numref/convert.hpp"
#include "numref/policy.hpp"

namespace numref {
namespace {

std::uint32_t cast(const char* prof, std::uint32_t bits, FormatId from, FormatId to, const Policy* over = nullptr,
                   std::uint64_t r = 0) {
  const auto id = find_profile(prof);
  EXPECT_TRUE(id.has_value()) << prof;
  if (!id) return 0xDEADBEEF;
  const Policy p = over ? *over : profile(*id).for_cast(format(from), format(to));
  return convert(bits, from, to, p, r).bits;
}

constexpr auto f32 = FormatId::f32, bf16 = FormatId::bf16, f16 = FormatId::f16, e4m3 = FormatId::f8e4m3fn,
               e5m2 = FormatId::f8e5m2, e8m0 = FormatId::f8e8m0fnu;

// encode_float: np.isnan(v) -> fi.code_of_nan = 2^k - 1 for every format with high NaNs, whatever the
// operand's sign and payload.
TEST(GfloatProfile, EveryNanIsAllOnes) {
  for (const char* prof : {"gfloat", "gfloat_sat"}) {
    for (std::uint32_t nan : {0x7FC00000u, 0xFFC00001u, 0x7F800001u}) {
      EXPECT_EQ(cast(prof, nan, f32, e4m3), 0xFFu) << prof;
      EXPECT_EQ(cast(prof, nan, f32, e5m2), 0xFFu) << prof;
      EXPECT_EQ(cast(prof, nan, f32, e8m0), 0xFFu) << prof;
      EXPECT_EQ(cast(prof, nan, f32, bf16), 0xFFFFu) << prof;
      EXPECT_EQ(cast(prof, nan, f32, f16), 0xFFFFu) << prof;
      EXPECT_EQ(cast(prof, nan, f32, f32), 0xFFFFFFFFu) << prof;
    }
    EXPECT_EQ(cast(prof, 0x7F, e4m3, bf16), 0xFFFFu) << prof;  // f8e4m3fn's positive NaN
    EXPECT_EQ(cast(prof, 0x7E01, f16, f32), 0xFFFFFFFFu) << prof;
  }
}

// round_float(sat=False): Inf stays Inf where the format has it; overflow past max -> Inf.
// sat=True: amax = fi.max for Inf and overflow in every format, wide ones included.
TEST(GfloatProfile, Saturation) {
  EXPECT_EQ(cast("gfloat", 0x7F800000, f32, e5m2), 0x7Cu);
  EXPECT_EQ(cast("gfloat", 0xFF800000, f32, f16), 0xFC00u);
  EXPECT_EQ(cast("gfloat", 0x477FF000, f32, f16), 0x7C00u);  // 65520: tie above 65504 -> even -> overflow
  EXPECT_EQ(cast("gfloat", 0xC3FA0000, f32, e4m3), 0xFFu);    // -500: the NaN (gfloat: FF as well)
  EXPECT_EQ(cast("gfloat_sat", 0x7F800000, f32, e4m3), 0x7Eu);  // +Inf -> 448
  EXPECT_EQ(cast("gfloat_sat", 0xFF800000, f32, e4m3), 0xFEu);
  EXPECT_EQ(cast("gfloat_sat", 0x43FA0000, f32, e4m3), 0x7Eu);  // 500 -> 448
  EXPECT_EQ(cast("gfloat_sat", 0x7F800000, f32, e5m2), 0x7Bu);  // +Inf -> 57344
  EXPECT_EQ(cast("gfloat_sat", 0x7F800000, f32, f16), 0x7BFFu);
  EXPECT_EQ(cast("gfloat_sat", 0x7F7FFFFF, f32, bf16), 0x7F7Fu);  // rounds to 2^128 -> bf16 max
  EXPECT_EQ(cast("gfloat_sat", 0xFF800000, f32, f32), 0xFF7FFFFFu);
  EXPECT_EQ(cast("gfloat_sat", 0x7F800000, f32, e8m0), 0xFEu);  // 2^127
}

// E8M0 (precision 1, no subnormals, unsigned): ties by the code's parity (code_is_odd =
// odd(expval + bias)); 0 and negative values fall below fi.min = 2^-127 -> code_of_nan.
TEST(GfloatProfile, E8m0) {
  EXPECT_EQ(cast("gfloat", 0x3F800000, f32, e8m0), 0x7Fu);  // 1
  EXPECT_EQ(cast("gfloat", 0x3FC00000, f32, e8m0), 0x80u);  // 1.5: code 7F is odd -> 2
  EXPECT_EQ(cast("gfloat", 0x40400000, f32, e8m0), 0x80u);  // 3: code 80 is even -> 2
  EXPECT_EQ(cast("gfloat", 0x00000000, f32, e8m0), 0xFFu);
  EXPECT_EQ(cast("gfloat", 0x80000000, f32, e8m0), 0xFFu);
  EXPECT_EQ(cast("gfloat", 0xBF800000, f32, e8m0), 0xFFu);
  EXPECT_EQ(cast("gfloat", 0x7F800000, f32, e8m0), 0xFFu);  // sat=False: Inf -> NaN
}

// Subnormals and -0 are kept (has_subnormals, has_nz); a negative value rounding to 0 gives -0.
TEST(GfloatProfile, ZerosAndSubnormals) {
  EXPECT_EQ(cast("gfloat", 0x80000000, f32, e4m3), 0x80u);
  EXPECT_EQ(cast("gfloat", 0xBB000000, f32, e4m3), 0x81u);  // -2^-9: the smallest subnormal
  EXPECT_EQ(cast("gfloat", 0xBA800000, f32, e4m3), 0x80u);  // -2^-10: tie with 0 -> even 0 -> -0
  EXPECT_EQ(cast("gfloat", 0x00000001, f32, bf16), 0x0000u);
}

// §5.5: gfloat's four SR modes through (sr_bits, r'). Operand 1 + 3/64 (f32 3F860000) into
// f8e4m3fn: quantum 1/8, delta = 3/8; N = 1 (38), N + 1 = 1.125 (39). With k = 2, delta * 4 = 1.5:
// Stochastic rounds it to 2 (ties to even), so away iff 2 + r >= 4 (r >= 2); StochasticOdd to 1,
// away iff r >= 3; StochasticFastest: delta + r/4 >= 1 iff r >= 3 (r = 2 gives 7/8);
// StochasticFast: delta + (r + 1/2)/4 >= 1 iff r >= 2 (r = 2: 3/8 + 5/8 = 1).
struct Sr {
  int bits;
  std::uint64_t r;
};
Sr fastest(int k, std::uint64_t r) { return {k, r}; }
Sr fast(int k, std::uint64_t r) { return {k + 1, 2 * r + 1}; }
Sr stochastic(int k, std::uint64_t r) { return {32, (2 * r + 1) * (std::uint64_t{1} << (31 - k)) - (r & 1)}; }
Sr stochastic_odd(int k, std::uint64_t r) { return {32, (2 * r + 1) * (std::uint64_t{1} << (31 - k)) - (1 - (r & 1))}; }

std::uint32_t sr(Sr s) {
  Policy p = profile(ProfileId::gfloat).narrow;
  p.round = Round::sr;
  p.sr_bits = static_cast<std::uint8_t>(s.bits);
  return cast("gfloat", 0x3F860000, f32, e4m3, &p, s.r);
}

TEST(GfloatProfile, StochasticModesMapOntoFractionSr) {
  const std::uint32_t n = 0x38, up = 0x39;
  const std::uint32_t want_fastest[] = {n, n, n, up}, want_fast[] = {n, n, up, up},
                      want_st[] = {n, n, up, up}, want_odd[] = {n, n, n, up};
  for (std::uint64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(sr(fastest(2, r)), want_fastest[r]) << r;
    EXPECT_EQ(sr(fast(2, r)), want_fast[r]) << r;
    EXPECT_EQ(sr(stochastic(2, r)), want_st[r]) << r;
    EXPECT_EQ(sr(stochastic_odd(2, r)), want_odd[r]) << r;
  }
  // delta just above the RNE tie (delta * 4 = 1.5 + 2^-10 -> 2 in both Stochastic modes, so r = 2
  // rounds away in StochasticOdd too): 1 + 3/64 + 2^-15 = f32 3F860100.
  Policy p = profile(ProfileId::gfloat).narrow;
  p.round = Round::sr;
  p.sr_bits = 32;
  const Sr s = stochastic_odd(2, 2);
  EXPECT_EQ(cast("gfloat", 0x3F860100, f32, e4m3, &p, s.r), up);
}

}  // namespace
}  // namespace numref
