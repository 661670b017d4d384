// The rounding increment (round_increment.hpp), one decision per mode, on hand-made rests:
// §4.2 deterministic modes, §5.1 stochastic rounding, and f_k (fraction_bits). The callers
// (the reference core, the binade path, the CUDA kernels) are checked end to end by
// test_convert_*, test_sr, sweep_f32 and test_cuda_cast_*.
#include <gtest/gtest.h>

#include <cstdint>

#include "numref/round_increment.hpp"

namespace numref {
namespace {

// f = (rem + e) / (2 half): with d = 3 discarded bits half = 4 (binary 100).
constexpr std::uint64_t kHalf = 4;

// Usable in constant expressions (the CUDA kernels evaluate it with compile-time modes):
// 0.101b = 5/8 > 1/2 rounds up to nearest; a tie 0.100b with an even code stays.
static_assert(round_increment(Round::rne, false, 5, kHalf, false, false));
static_assert(!round_increment(Round::rne, false, 4, kHalf, false, false));

TEST(RoundIncrement, NearestEven) {                                          // §4.2 rne
  EXPECT_TRUE(round_increment(Round::rne, false, 5, kHalf, false, false));   // f = 5/8
  EXPECT_FALSE(round_increment(Round::rne, false, 3, kHalf, false, true));   // f = 3/8, odd code: still down
  EXPECT_FALSE(round_increment(Round::rne, false, 4, kHalf, false, false));  // tie, even code: stays
  EXPECT_TRUE(round_increment(Round::rne, true, 4, kHalf, false, true));     // tie, odd code: to the even one
  EXPECT_TRUE(round_increment(Round::rne, false, 4, kHalf, true, false));    // 1/2 + sticky > 1/2: up
  EXPECT_FALSE(round_increment(Round::rne, false, 0, kHalf, true, true));    // 0 < f < 1/8: down
}

TEST(RoundIncrement, NearestAway) {                                         // §4.2 rna
  EXPECT_TRUE(round_increment(Round::rna, false, 4, kHalf, false, false));  // tie: away from zero
  EXPECT_TRUE(round_increment(Round::rna, true, 4, kHalf, false, false));
  EXPECT_FALSE(round_increment(Round::rna, false, 3, kHalf, true, true));  // 3/8 < f < 1/2
  EXPECT_TRUE(round_increment(Round::rna, false, 7, kHalf, false, false));
}

TEST(RoundIncrement, Directed) {  // §4.2 rtz, rup, rdn
  EXPECT_FALSE(round_increment(Round::rtz, false, 7, kHalf, true, true));
  EXPECT_FALSE(round_increment(Round::rtz, true, 7, kHalf, true, true));
  EXPECT_TRUE(round_increment(Round::rup, false, 1, kHalf, false, false));  // x > 0, f = 1/8
  EXPECT_TRUE(round_increment(Round::rup, false, 0, kHalf, true, false));   // x > 0, f = sticky only
  EXPECT_FALSE(round_increment(Round::rup, false, 0, kHalf, false, true));  // exact: never moves
  EXPECT_FALSE(round_increment(Round::rup, true, 7, kHalf, false, false));  // x < 0: toward +inf is down
  EXPECT_TRUE(round_increment(Round::rdn, true, 1, kHalf, false, false));
  EXPECT_FALSE(round_increment(Round::rdn, false, 7, kHalf, false, false));
  EXPECT_FALSE(round_increment(Round::rdn, true, 0, kHalf, false, false));
}

// A caller that classified the rest passes 0 / 1 / 2 / 3 against half = 2.
TEST(RoundIncrement, ClassifiedRest) {
  EXPECT_FALSE(round_increment(Round::rne, false, 1, 2, false, true));   // below
  EXPECT_FALSE(round_increment(Round::rne, false, 2, 2, false, false));  // tie, even
  EXPECT_TRUE(round_increment(Round::rne, false, 2, 2, false, true));    // tie, odd
  EXPECT_TRUE(round_increment(Round::rne, false, 3, 2, false, false));   // above
  EXPECT_FALSE(round_increment(Round::rup, false, 0, 2, false, false));  // zero
  EXPECT_TRUE(round_increment(Round::rup, false, 1, 2, false, false));
}

// §5.1 up iff f_k + r >= 2^k; the rest, sign and parity play no part.
TEST(RoundIncrement, Stochastic) {
  // k = 2, f = 0.01b: f_k = 1; r = 3 moves it (1 + 3 = 4 = 2^2), r = 2 does not.
  EXPECT_TRUE(round_increment(Round::sr, false, 2, kHalf, false, false, 1, 3, 2));
  EXPECT_FALSE(round_increment(Round::sr, true, 2, kHalf, false, true, 1, 2, 2));
  // exact input (f_k = 0) never moves, whatever r < 2^k
  EXPECT_FALSE(round_increment(Round::sr, false, 0, kHalf, false, false, 0, 3, 2));
  // k = 32: f_k = 2^31 (f = 1/2) and r = 2^31 reach 2^32
  EXPECT_TRUE(round_increment(Round::sr, false, 4, kHalf, false, false, 0x80000000u, 0x80000000u, 32));
  EXPECT_FALSE(round_increment(Round::sr, false, 4, kHalf, false, false, 0x80000000u, 0x7FFFFFFFu, 32));
}

// §5.1 f_k = floor(f * 2^k) of d discarded bits: 0.101b to 2 bits is 10b, to 5 bits 10100b.
TEST(RoundIncrement, FractionBits) {
  EXPECT_EQ(fraction_bits(0b101, 3, 2), 0b10u);
  EXPECT_EQ(fraction_bits(0b101, 3, 3), 0b101u);
  EXPECT_EQ(fraction_bits(0b101, 3, 5), 0b10100u);
  EXPECT_EQ(fraction_bits(0, 40, 8), 0u);
  EXPECT_EQ(fraction_bits(std::uint64_t{1} << 62, 63, 32), std::uint64_t{1} << 31);  // f = 1/2
}

}  // namespace
}  // namespace numref
