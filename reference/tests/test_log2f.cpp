// numref tests — the correctly rounded binary32 log2 (log2f_cr).          spec §16.8
//
// The expected value of every case is MPFR's mpfr_log2 of the binary32 operand rounded to
// nearest at 24 bits of precision (exponent range set to binary32's, subnormals by
// mpfr_subnormalize): the definition of a correctly rounded log2f.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "numref/scale.hpp"

namespace numref {
namespace {

class Mpfr24 {
 public:
  Mpfr24() {
    mpfr_init2(v_, 24);
    mpfr_init2(l_, 24);
  }
  ~Mpfr24() {
    mpfr_clear(v_);
    mpfr_clear(l_);
  }
  std::uint32_t log2(std::uint32_t x) {
    float xf;
    std::memcpy(&xf, &x, 4);
    mpfr_set_flt(v_, xf, MPFR_RNDN);  // exact: 24 bits hold every binary32
    mpfr_log2(l_, v_, MPFR_RNDN);     // |log2 x| <= 149: no overflow or underflow at 24 bits
    const float r = mpfr_get_flt(l_, MPFR_RNDN);
    std::uint32_t b;
    std::memcpy(&b, &r, 4);
    return b;
  }

 private:
  mpfr_t v_, l_;
};

TEST(Log2fCr, SpecialOperands) {                  // §16.8
  EXPECT_EQ(log2f_cr(0x00000000u), 0xFF800000u);  // log2(+0) = -Inf
  EXPECT_EQ(log2f_cr(0x80000000u), 0xFF800000u);  // log2(-0) = -Inf
  EXPECT_EQ(log2f_cr(0xBF800000u), 0x7FC00000u);  // log2(-1) = NaN
  EXPECT_EQ(log2f_cr(0x7F800000u), 0x7F800000u);  // log2(+Inf) = +Inf
  EXPECT_EQ(log2f_cr(0x7FC00000u), 0x7FC00000u);
  EXPECT_EQ(log2f_cr(0x3F800000u), 0x00000000u);  // log2(1) = +0
  EXPECT_EQ(log2f_cr(0x40000000u), 0x3F800000u);  // log2(2) = 1
  EXPECT_EQ(log2f_cr(0x00000001u), 0xC3150000u);  // log2(2^-149) = -149
  EXPECT_EQ(log2f_cr(0x3F000000u), 0xBF800000u);  // log2(0.5) = -1
}

// Hand-checked: 2^10 (1 + 2^-23) (the descale of the amax 0x48E00001 / 448):
// log2 = 10 + 1.72e-7, and binary32 numbers near 10 are 2^-20 = 9.5e-7 apart, so the
// correctly rounded log2 is exactly 10 (ceil gives 10, not 11).
TEST(Log2fCr, JustAboveAPowerOfTwoRoundsToTheInteger) {
  EXPECT_EQ(log2f_cr(0x44800001u), 0x41200000u);  // 10.0
  // near 1: log2(1 + 2^-23) = 1.7199e-7 is representable to full precision (not 0)
  EXPECT_EQ(log2f_cr(0x3F800001u), Mpfr24().log2(0x3F800001u));
  EXPECT_NE(log2f_cr(0x3F800001u), 0u);
}

TEST(Log2fCr, EveryExponentAndItsBoundariesMatchMpfr) {
  Mpfr24 m;
  std::vector<std::uint32_t> xs;
  for (std::uint32_t e = 0; e < 255; ++e) {
    const std::uint32_t base = e << 23;
    for (std::uint32_t f = 0; f < 96; ++f) {
      xs.push_back(base + f);                // 2^E and just above
      xs.push_back(base + 0x007FFFFFu - f);  // just below 2^(E+1)
      xs.push_back(base + 0x00400000u + f);  // around 1.5 * 2^E
      xs.push_back(base + 0x00400000u - f);
    }
  }
  std::size_t n = 0;
  for (std::uint32_t x : xs) {
    if (x == 0) continue;
    ASSERT_EQ(log2f_cr(x), m.log2(x)) << std::hex << x;
    ++n;
  }
  EXPECT_GT(n, 97000u);
}

TEST(Log2fCr, OneMillionRandomCodesMatchMpfr) {
  Mpfr24 m;
  std::mt19937_64 g(20261126);
  for (int i = 0; i < 1'000'000; ++i) {
    const std::uint32_t x = static_cast<std::uint32_t>(g() % 0x7F800000u) + 1u;  // positive finite, not 0
    ASSERT_EQ(log2f_cr(x), m.log2(x)) << std::hex << x;
  }
}

TEST(FloorCeil, OfBinary32Values) {
  EXPECT_EQ(f32_floor(0x41200000u), 10);
  EXPECT_EQ(f32_ceil(0x41200000u), 10);
  EXPECT_EQ(f32_floor(0x41200001u), 10);
  EXPECT_EQ(f32_ceil(0x41200001u), 11);
  EXPECT_EQ(f32_floor(0xC1200001u), -11);
  EXPECT_EQ(f32_ceil(0xC1200001u), -10);
  EXPECT_EQ(f32_floor(0x34000000u), 0);  // 2^-23
  EXPECT_EQ(f32_ceil(0x34000000u), 1);
  EXPECT_EQ(f32_floor(0xB4000000u), -1);
  EXPECT_EQ(f32_ceil(0xB4000000u), 0);
}

}  // namespace
}  // namespace numref
