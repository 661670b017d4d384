// The gfloat profiles (spec §10.5) and gfloat's stochastic rounding modes as §5.1 settings
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
  EXPECT_EQ(cast("gfloat", 0x477FF000, f32, f16), 0x7C00u);     // 65520: tie above 65504 -> even -> overflow
  EXPECT_EQ(cast("gfloat", 0xC3FA0000, f32, e4m3), 0xFFu);      // -500: the NaN (gfloat: FF as well)
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

Result res(std::uint32_t bits, int flags) { return Result{bits, static_cast<std::uint8_t>(flags)}; }
Result castr(const char* prof, std::uint32_t bits, FormatId from, FormatId to, Round mode = Round::rne) {
  Policy p = profile(*find_profile(prof)).for_cast(format(from), format(to));
  p.round = mode;
  return convert(bits, from, to, p);
}

// G1 (was a departure; now §7.4 e8m0_low=nan): round_float rounds into E8M0 with an unbounded
// exponent (round.py L75-L139), then encode_float gives code_of_nan (FF) for a value below
// fi.min = 2^-127 (encode.py L45-L49). f32 codes: 2^-127 = 00400000, 2^-128 = 00200000.
TEST(GfloatProfile, E8m0BelowTwoToMinus127IsNan) {
  for (const char* prof : {"gfloat", "gfloat_sat"}) {
    // 2^-128 is on the unbounded grid: rounded value 2^-128 < 2^-127 -> FF, flag invalid alone (§9.3)
    EXPECT_EQ(castr(prof, 0x00200000, f32, e8m0), res(0xFFu, kInvalid)) << prof;
    // 1.25 * 2^-128 (00280000): nearest is 2^-128 -> FF; under TowardPositive it is 2^-127 -> 00
    EXPECT_EQ(castr(prof, 0x00280000, f32, e8m0).bits, 0xFFu) << prof;
    EXPECT_EQ(castr(prof, 0x00280000, f32, e8m0, Round::rup), res(0x00u, kInexact))
        << prof;  // 2^-127 after rounding: not tiny (§9.2)
    // 1.5 * 2^-128 (00300000): a tie between 2^-128 (code -1, odd: -128 + 127 = -1) and 2^-127
    // (code 0, even): TiesToEven goes up to 2^-127 -> 00; TowardZero stays at 2^-128 -> FF
    EXPECT_EQ(castr(prof, 0x00300000, f32, e8m0).bits, 0x00u) << prof;
    EXPECT_EQ(castr(prof, 0x00300000, f32, e8m0, Round::rtz).bits, 0xFFu) << prof;
    EXPECT_EQ(castr(prof, 0x00400000, f32, e8m0), res(0x00u, 0)) << prof;  // 2^-127 exactly: fi.min
    EXPECT_EQ(castr(prof, 0x00000001, f32, e8m0).bits, 0xFFu) << prof;     // 2^-149
    EXPECT_EQ(castr(prof, 0x0001, bf16, e8m0).bits, 0xFFu) << prof;        // bf16 2^-133
  }
  // the knob alone, on the ocp base: linear gives 00 (§7.4 the minimum), nan gives FF
  Policy p;
  EXPECT_EQ(convert(0x00200000, FormatId::f32, e8m0, p).bits, 0x00u);
  p.e8m0_low = E8m0Low::nan;
  EXPECT_EQ(convert(0x00200000, FormatId::f32, e8m0, p).bits, 0xFFu);
}

// G2 (was a departure; now §7.3 negative=inf_abs): round_float takes the sign as
// `signbit(v) and fi.is_signed` (L65), so for the unsigned E8M0 -Inf is seen as +Inf (L68) and
// saturates to fi.max = 2^127 (FE) with sat=True; sat=False gives NaN (FF). A finite negative
// stays negative: encode_float's v < fi.min -> FF.
TEST(GfloatProfile, NegativeInfIntoE8m0) {
  for (std::uint32_t ninf : {0xFF800000u}) {
    EXPECT_EQ(castr("gfloat_sat", ninf, f32, e8m0), res(0xFEu, kOverflow | kInexact));
    EXPECT_EQ(castr("gfloat", ninf, f32, e8m0), res(0xFFu, kInvalid));
  }
  EXPECT_EQ(castr("gfloat_sat", 0xFF80, bf16, e8m0).bits, 0xFEu);
  EXPECT_EQ(castr("gfloat_sat", 0xFC00, f16, e8m0).bits, 0xFEu);
  EXPECT_EQ(castr("gfloat_sat", 0xFF7FFFFF, f32, e8m0), res(0xFFu, kInvalid));  // -max finite: NaN
  EXPECT_EQ(castr("gfloat_sat", 0xBF800000, f32, e8m0).bits, 0xFFu);            // -1
  EXPECT_EQ(castr("gfloat_sat", 0x80000000, f32, e8m0).bits, 0xFFu);            // -0: a zero (§7.2)
  Policy p;  // the knob alone: negative=nan gives FF, inf_abs FE, when saturating with inf_sat=max
  p.overflow = Overflow::saturate;
  EXPECT_EQ(convert(0xFF800000, FormatId::f32, e8m0, p).bits, 0xFFu);
  p.negative = Negative::inf_abs;
  EXPECT_EQ(convert(0xFF800000, FormatId::f32, e8m0, p).bits, 0xFEu);
}

// G3 (was a departure; now §6.7 inf_nan=nan): with sat=False, round_float turns +Inf and a
// positive overflow into np.nan for f8e4m3fn (no Inf, L158-L161; directed modes clamp finite
// overflow only, L150-L156), and encode_float gives code_of_nan = FF (L34) for it, as for -Inf.
TEST(GfloatProfile, InfAndOverflowIntoE4m3AreAllOnes) {
  EXPECT_EQ(castr("gfloat", 0x7F800000, f32, e4m3), res(0xFFu, kInvalid));              // +Inf
  EXPECT_EQ(castr("gfloat", 0x7F800000, f32, e4m3, Round::rtz), res(0xFFu, kInvalid));  // Inf: no clamp
  EXPECT_EQ(castr("gfloat", 0x43F00000, f32, e4m3), res(0xFFu, kOverflow | kInexact));  // 480
  EXPECT_EQ(castr("gfloat", 0x43E80001, f32, e4m3).bits, 0xFFu);                        // just above the tie 464 -> 480
  EXPECT_EQ(castr("gfloat", 0x43E80000, f32, e4m3).bits, 0x7Eu);              // 464: tie -> even 448, no overflow
  EXPECT_EQ(castr("gfloat", 0x43F00000, f32, e4m3, Round::rtz).bits, 0x7Eu);  // TowardZero: fi.max
  EXPECT_EQ(castr("gfloat", 0x7C00, f16, e4m3).bits, 0xFFu);
  EXPECT_EQ(castr("gfloat", 0x7F80, bf16, e4m3).bits, 0xFFu);
  EXPECT_EQ(castr("gfloat", 0x7C, e5m2, e4m3).bits, 0xFFu);       // e5m2 +Inf
  EXPECT_EQ(castr("gfloat", 0xFF800000, f32, e4m3).bits, 0xFFu);  // -Inf: FF before and after
  // the knob alone: nan=all_ones with inf_nan=slot gives the slot's 7F; inf_nan=nan gives FF
  Policy p;
  p.nan = NanOut::all_ones;
  EXPECT_EQ(convert(0x7F800000, FormatId::f32, e4m3, p).bits, 0x7Fu);
  p.inf_nan = InfNan::nan;
  EXPECT_EQ(convert(0x7F800000, FormatId::f32, e4m3, p).bits, 0xFFu);
  p.nan = NanOut::canonical;  // the canonical NaN 7F for -Inf too
  EXPECT_EQ(convert(0xFF800000, FormatId::f32, e4m3, p).bits, 0x7Fu);
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
  const std::uint32_t want_fastest[] = {n, n, n, up}, want_fast[] = {n, n, up, up}, want_st[] = {n, n, up, up},
                      want_odd[] = {n, n, n, up};
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
