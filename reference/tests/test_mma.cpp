// numref tests — the mma dot product: hand-worked cases, the rational oracle, validation.
//   spec §36 – §39
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "numref/mma.hpp"
#include "numref/profiles.hpp"
#include "numref/scale.hpp"
#include "numref/tensor.hpp"
#include "numref/oracle/rational_mma.hpp"
#include "numref/splitmix64.hpp"

namespace numref {
namespace {

MmaSpec spec(std::string_view profile, MmaType a, MmaType b, MmaType c, int block = 0,
             MmaType scale = MmaType::f8e8m0fnu) {
  MmaSpec s;
  s.profile = find_mma_profile(profile);
  EXPECT_NE(s.profile, nullptr) << profile;
  s.a = a;
  s.b = b;
  s.c = c;
  s.block = block;
  s.scale = scale;
  return s;
}

std::uint32_t random_code(SplitMix64& g, MmaType t, std::uint32_t centre);

MmaResult dot(const MmaSpec& s, const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
              std::uint32_t c, const std::vector<std::uint32_t>& sa = {}, const std::vector<std::uint32_t>& sb = {}) {
  validate(s, a.size());
  return mma_dot(s, a.size(), a.data(), 1, b.data(), 1, c, sa.empty() ? nullptr : sa.data(), 1,
                 sb.empty() ? nullptr : sb.data(), 1);
}

constexpr auto E4 = MmaType::f8e4m3fn;
constexpr auto F32 = MmaType::f32;

// §38.2 F = 13 drops a product 14 binades below the largest (§36.4: the step is inexact): a = [1, 2^-7], b = [1, 2^-7] in
// e4m3 (2^-7 = subnormal 4·2^-9 = 0x04, alignment exponent emin = -6): products 1 (e 0) and
// 2^-14 (e -12). u = 0 - 13: trunc(2^-14 / 2^-13) = 0, so D = 1.0 = 3F800000 under
// sm90_wgmma_f8. With F = 25 (sm100_tcgen05_f8f6f4) 2^-14 / 2^-25 = 2^11 is kept:
// D = 1 + 2^-14 = 3F800000 + 2^(23-14) = 3F800200, which is also the ideal result.
TEST(Mma, AlignmentWidthDropsASmallProduct) {
  const std::vector<std::uint32_t> a = {0x38, 0x04}, b = {0x38, 0x04};
  const MmaResult h = dot(spec("sm90_wgmma_f8", E4, E4, F32), a, b, 0);
  EXPECT_EQ(h.bits, 0x3F800000u);
  EXPECT_EQ(h.flags, kInexact);
  EXPECT_EQ(dot(spec("sm100_tcgen05_f8f6f4", E4, E4, F32), a, b, 0).bits, 0x3F800200u);
  EXPECT_EQ(dot(spec("ideal", E4, E4, F32), a, b, 0).bits, 0x3F800200u);
  EXPECT_EQ(dot(spec("ideal", E4, E4, F32), a, b, 0).flags, 0);
}

// §38.5 rz13: products 1.875, 1.875 (e4m3 0x3F × 0x38) and 2^-13 (0x04 × 0x08: 2^-7 · 2^-6,
// e = -12). F = 13 keeps all three (u = -13): V = 3.75 + 2^-13 = 2^1 · (1.875 + 2^-14). Rounded
// toward zero to 13 fraction bits at exponent 1 the 2^-13 goes: D = 3.75 = 40700000. Rounded to
// binary32 (round=rz) it stays: 40700000 + 2^(23-1-13) = 40700200.
TEST(Mma, Rz13TruncatesTheSumTo13FractionBits) {
  const std::vector<std::uint32_t> a = {0x3F, 0x3F, 0x04}, b = {0x38, 0x38, 0x08};
  MmaSpec s = spec("sm90_wgmma_f8", E4, E4, F32);
  EXPECT_EQ(dot(s, a, b, 0).bits, 0x40700000u);
  MmaKnobs k = s.profile->knobs;
  k.round = MmaRound::rz;
  s.knobs = k;
  EXPECT_EQ(dot(s, a, b, 0).bits, 0x40700200u);
}

// §38.2 e_zero decides the alignment when C is zero. sm90_mma_f16, f16 operands and
// accumulator (F = 25, e_zero_f16 = -21): a = [2^-12, 2^-24], b = [2^-13, 2^-24]. Products
// 2^-25 (e = -12 - 13 = -25) and 2^-48 (subnormals: e = -14 - 14 = -28); C = +0 gets e = -21,
// the largest, so u = -21 - 25 = -46 and 2^-48 truncates to 0. V = 2^-25, a tie between 0 and
// the smallest binary16 subnormal 2^-24: rne gives the even 0, +0. The ideal sum 2^-25 + 2^-48 is
// above the tie: 2^-24 = 0001.
TEST(Mma, EZeroOfAZeroAccumulatorSetsTheAlignment) {
  // f16 codes: 2^-12 = (15-12)<<10 = 0C00, 2^-13 = 0800, 2^-24 = 0001.
  const std::vector<std::uint32_t> a = {0x0C00, 0x0001}, b = {0x0800, 0x0001};
  const auto F16 = MmaType::f16;
  EXPECT_EQ(dot(spec("sm90_mma_f16", F16, F16, F16), a, b, 0).bits, 0x0000u);
  EXPECT_EQ(dot(spec("ideal", F16, F16, F16), a, b, 0).bits, 0x0001u);
  // With e_zero_f16 = -30 the largest exponent is the product's (-25), u = -50, and 2^-48 is kept.
  MmaSpec s = spec("sm90_mma_f16", F16, F16, F16);
  MmaKnobs k = s.profile->knobs;
  k.e_zero_f16 = -30;
  s.knobs = k;
  EXPECT_EQ(dot(s, a, b, 0).bits, 0x0001u);
}

// §38.5 rz overflow is Inf, not max finite: C = max binary32 (2 - 2^-23)·2^127, one bf16 product
// 2^60 · 2^60 = 2^120. u = 127 - 25: V = max + 2^120 >= 2^128 → +Inf, flags overflow, inexact.
TEST(Mma, RzOverflowIsInf) {
  // bf16 2^60 = (60+127)<<7 = 0x5D80.
  const MmaResult r = dot(spec("sm90_mma_f16", MmaType::bf16, MmaType::bf16, F32), {0x5D80}, {0x5D80}, 0x7F7FFFFFu);
  EXPECT_EQ(r.bits, 0x7F800000u);
  EXPECT_EQ(r.flags, kOverflow | kInexact);
}

// §38.5 / §36.4 specials: a NaN operand or C, Inf × 0, +Inf + −Inf give the NaN 7FFFFFFF (nan=ones);
// Inf × finite gives Inf; zero results are +0 (zero=plus). §37: the ideal gives the canonical
// NaN 7FC00000 and −0 only when every addend is −0.
TEST(Mma, Specials) {
  const auto E5 = MmaType::f8e5m2;
  const MmaSpec s = spec("sm90_wgmma_f8", E5, E5, F32);
  const MmaSpec ideal = spec("ideal", E5, E5, F32);
  // e5m2: +Inf 7C, -Inf FC, NaN 7E, 1.0 3C, -1.0 BC, 0 00, -0 80.
  EXPECT_EQ(dot(s, {0x7C, 0x3C}, {0x00, 0x3C}, 0).bits, 0x7FFFFFFFu);  // Inf × 0
  EXPECT_EQ(dot(s, {0x7C, 0x3C}, {0x00, 0x3C}, 0).flags, kInvalid);
  EXPECT_EQ(dot(s, {0x7C, 0xFC}, {0x3C, 0x3C}, 0).bits, 0x7FFFFFFFu);  // +Inf + -Inf
  EXPECT_EQ(dot(s, {0x7C, 0x3C}, {0xBC, 0x3C}, 0).bits, 0xFF800000u);  // -Inf
  EXPECT_EQ(dot(s, {0x3C}, {0x3C}, 0xFF800000u).bits, 0xFF800000u);    // C = -Inf
  EXPECT_EQ(dot(s, {0x7E}, {0x3C}, 0).bits, 0x7FFFFFFFu);              // NaN operand
  EXPECT_EQ(dot(s, {0x7E}, {0x3C}, 0).flags, 0);                       // a NaN in is not invalid
  EXPECT_EQ(dot(s, {0x3C}, {0x3C}, 0xFFC00001u).bits, 0x7FFFFFFFu);    // NaN C
  EXPECT_EQ(dot(ideal, {0x7E}, {0x3C}, 0).bits, 0x7FC00000u);
  EXPECT_EQ(dot(ideal, {0x7C, 0xFC}, {0x3C, 0x3C}, 0).flags, kInvalid);
  // -0 · 1 + (-0): every addend -0. fdpa: +0; ideal: -0. 1·1 + (-1): exact zero sum, +0 both.
  EXPECT_EQ(dot(s, {0x80}, {0x3C}, 0x80000000u).bits, 0u);
  EXPECT_EQ(dot(ideal, {0x80}, {0x3C}, 0x80000000u).bits, 0x80000000u);
  EXPECT_EQ(dot(s, {0x3C}, {0x3C}, 0xBF800000u).bits, 0u);
  EXPECT_EQ(dot(ideal, {0x3C}, {0x3C}, 0xBF800000u).bits, 0u);
}

// §38.1 a step fuses fused_bytes / element bytes products; K is split into steps chained
// through C. sm89_mma_f8: 16 bytes = 16 e4m3 products per step; sm90_wgmma_f8: 32.
// K = 32, b = 1 (38); a = 16 × 2^-6 (08), then 2^8 (78), then 15 × 2^-6.
// sm89, step 1: 16 · 2^-6 = 0.25 exactly (every term at e = -6). Step 2: 2^8 sets u = 8 - 13 = -5;
// the 2^-6 products truncate to 0, C = 0.25 is kept: D = 256.25 = 2^8 · (1 + 2^-10) = 43802000.
// sm90_wgmma_f8, one step: u = -5 drops all 31 products 2^-6: D = 256 = 43800000.
// ideal: 256 + 31 · 2^-6 = 2^8 · (1 + 31 · 2^-14), exact in binary32: 43800000 + 31 · 2^9.
TEST(Mma, StepsAreChainedThroughC) {
  std::vector<std::uint32_t> a(32, 0x08), b(32, 0x38);
  a[16] = 0x78;
  MmaSpec ada = spec("sm89_mma_f8", E4, E4, F32), hop = spec("sm90_wgmma_f8", E4, E4, F32);
  EXPECT_EQ(mma_fused(ada), 16u);
  EXPECT_EQ(mma_fused(hop), 32u);
  EXPECT_EQ(dot(ada, a, b, 0).bits, 0x43802000u);
  EXPECT_EQ(dot(hop, a, b, 0).bits, 0x43800000u);
  // 256 + 31 · 2^-6 = 256.484375 exactly; rne binary32 keeps it: 2^8 · (1 + 31·2^-14) = 43800000 + 31·2^9.
  EXPECT_EQ(dot(spec("ideal", E4, E4, F32), a, b, 0).bits, 0x43800000u + 31u * 512u);
}

// §38.4 scale=group (sm100_tcgen05_mxf4nvf4, block 16 ue8m0, K = 64 in one step of 64):
// group 0: 1 · 1 (e2m1 2 × 2), scales 2^0 (7F) → +1, e = 0; group 1: -1 · 1 (A × 2) → -1,
// e = 0; group 2: 6 · 6 = 36 (7 × 7), scales 2^-20 each (6B) → 36 · 2^-40, e = -40; group 3: zero
// products → e_zero. u = 0 - 35: the terms are 2^35, -2^35 and trunc(36 · 2^-5) = 1: D = 2^-35 =
// 2E000000. The ideal keeps 36 · 2^-40 = 1.125 · 2^-35 = 2E100000.
TEST(Mma, GroupScaleSumsGroupsThenAligns) {
  const auto F4 = MmaType::f4e2m1fn;
  std::vector<std::uint32_t> a(64, 0), b(64, 0);
  a[0] = 0x2, b[0] = 0x2;
  a[16] = 0xA, b[16] = 0x2;
  a[32] = 0x7, b[32] = 0x7;
  const std::vector<std::uint32_t> sa = {0x7F, 0x7F, 0x6B, 0x7F}, sb = sa;
  EXPECT_EQ(dot(spec("sm100_tcgen05_mxf4nvf4", F4, F4, F32, 16), a, b, 0, sa, sb).bits, 0x2E000000u);
  EXPECT_EQ(dot(spec("ideal", F4, F4, F32, 16), a, b, 0, sa, sb).bits, 0x2E100000u);
  // An E8M0 NaN scale (FF) makes the result NaN.
  std::vector<std::uint32_t> nan_scale = sa;
  nan_scale[3] = 0xFF;
  EXPECT_EQ(dot(spec("sm100_tcgen05_mxf4nvf4", F4, F4, F32, 16), a, b, 0, nan_scale, sb).bits, 0x7FFFFFFFu);
}

// §38.3 scale=product (mxf8f6f4): each product carries its block's scale exponents. a = [1],
// b = [1] (e4m3 38) over K = 32 with A's block scale 2^3 (82) and B's 2^-1 (7E): D = 4.
TEST(Mma, ProductScale) {
  std::vector<std::uint32_t> a(32, 0), b(32, 0);
  a[5] = 0x38, b[5] = 0x38;
  EXPECT_EQ(dot(spec("sm100_tcgen05_mxf8f6f4", E4, E4, F32, 32), a, b, 0, {0x82}, {0x7E}).bits, 0x40800000u);
}

// §38.7 the second level floors: cdna3_mfma_f16, a = b = 1 (f16 3C00), C = -2^-30 (B0800000).
// Level 1: T = 1 at E = 0. e_max = 0; the product in units 2^-32 is 2^32; C floored to a multiple
// of 2^(0 - 24): floor(-2^-6) = -1, i.e. -2^-24. V = 1 - 2^-24, exact in binary32: 3F7FFFFF. The
// ideal 1 - 2^-30 rounds to 1.0 (3F800000).
TEST(Mma, TwoLevelFloorsTheAccumulator) {
  const auto F16 = MmaType::f16;
  EXPECT_EQ(dot(spec("cdna3_mfma_f16", F16, F16, F32), {0x3C00}, {0x3C00}, 0xB0800000u).bits, 0x3F7FFFFFu);
  EXPECT_EQ(dot(spec("ideal", F16, F16, F32), {0x3C00}, {0x3C00}, 0xB0800000u).bits, 0x3F800000u);
}

// §38.8 a NaN C (alignment exponent -1) is dropped when the products lie more than F + 1 = 25
// binades above it: cdna3_mfma_f8, e5m2fnuz a = b = 2^13 (74; bias 16): e = 26 > 24, D = 2^26 =
// 4C800000. With a = b = 2^12 (70): e = 24, the NaN stays: 7FFFFFFF (nan=ones).
TEST(Mma, GtrDropsANaNAccumulatorFarBelowTheProducts) {
  const auto E5 = MmaType::f8e5m2fnuz;
  EXPECT_EQ(dot(spec("cdna3_mfma_f8", E5, E5, F32), {0x74}, {0x74}, 0x7FC00000u).bits, 0x4C800000u);
  EXPECT_EQ(dot(spec("cdna3_mfma_f8", E5, E5, F32), {0x70}, {0x70}, 0x7FC00000u).bits, 0x7FFFFFFFu);
}

// §36.1 D = A·B + C is the matrix of independent dot products: mma() equals mma_dot() of row i
// and column j for every element, and permuting A's rows permutes D's rows.
// §38.9 the FMA chain rounds after every product. c = 1 (3F800000), a = [1, 1], b = [2^-24,
// 2^-24] (33800000): step 1: 1 + 2^-24 is the tie between 1 and 1 + 2^-23, to even: 1 (inexact);
// step 2 the same: D = 1 = 3F800000. The ideal sum 1 + 2^-23 = 3F800001 is representable.
TEST(Mma, FmaChainRoundsEveryStep) {
  const std::vector<std::uint32_t> a = {0x3F800000, 0x3F800000}, b = {0x33800000, 0x33800000};
  for (const std::string_view p : {"cdna1_mfma_f32", "cdna2_mfma_f32", "cdna3_mfma_f32"}) {
    const MmaResult r = dot(spec(p, F32, F32, F32), a, b, 0x3F800000);
    EXPECT_EQ(r.bits, 0x3F800000u) << p;
    EXPECT_EQ(r.flags, kInexact) << p;
  }
  EXPECT_EQ(dot(spec("ideal", F32, F32, F32), a, b, 0x3F800000).bits, 0x3F800001u);
  // The order is K's: c = 2^24 (4B800000), products 1 then -2^24 (a = [1, 1], b = [1, -2^24
  // = CB800000]): 2^24 + 1 ties to even 2^24, minus 2^24 is an exact zero: +0 (rne).
  const MmaResult z =
      dot(spec("cdna3_mfma_f32", F32, F32, F32), {0x3F800000, 0x3F800000}, {0x3F800000, 0xCB800000}, 0x4B800000);
  EXPECT_EQ(z.bits, 0u);
  EXPECT_EQ(z.flags, kInexact);
}

// §38.9 the product is not rounded before the addition: a = b = 1 + 2^-12 (3F800800), c = -1
// (BF800000). a·b = 1 + 2^-11 + 2^-24 exactly; + c = 2^-11 + 2^-24 = 2^-11 · (1 + 2^-13), exact
// in binary32: exponent field 127 - 11 = 116 (3A000000), fraction 2^-13 · 2^23 = 0x400:
// 3A000400, no flag. (Rounding the product first would give 1 + 2^-11, the tie to even, and
// D = 2^-11 = 3A000000.)
TEST(Mma, FmaChainFusesTheProduct) {
  const MmaResult r = dot(spec("cdna1_mfma_f32", F32, F32, F32), {0x3F800800}, {0x3F800800}, 0xBF800000);
  EXPECT_EQ(r.bits, 0x3A000400u);
  EXPECT_EQ(r.flags, 0);
}

// §38.9 specials and zeros per step (IEEE 754): Inf × 0 is the canonical NaN 7FC00000 and invalid;
// a NaN C stays NaN through later finite steps; +Inf then −Inf is invalid; −0 · 1 + −0 = −0
// (80000000) and −0 · 1 + +0 = +0; 1 · −1 + 1 = +0 exactly; max · 2 (7F7FFFFF · 40000000)
// overflows to +Inf (7F800000, overflow and inexact); 2^-126 · 0.5 = 2^-127 exactly, the
// subnormal 00400000 (gradual underflow).
TEST(Mma, FmaChainSpecialsAndZeros) {
  const MmaSpec s = spec("cdna2_mfma_f32", F32, F32, F32);
  const MmaResult nan = dot(s, {0x7F800000, 0x3F800000}, {0x00000000, 0x3F800000}, 0x3F800000);
  EXPECT_EQ(nan.bits, 0x7FC00000u);
  EXPECT_EQ(nan.flags & kInvalid, kInvalid);
  EXPECT_EQ(dot(s, {0x3F800000, 0x3F800000}, {0x3F800000, 0x3F800000}, 0xFFC00001).bits, 0x7FC00000u);
  const MmaResult ii = dot(s, {0x7F800000, 0xFF800000}, {0x3F800000, 0x3F800000}, 0);
  EXPECT_EQ(ii.bits, 0x7FC00000u);
  EXPECT_EQ(ii.flags & kInvalid, kInvalid);
  EXPECT_EQ(dot(s, {0x7F800000}, {0x3F800000}, 0x3F800000).bits, 0x7F800000u);
  EXPECT_EQ(dot(s, {0x80000000}, {0x3F800000}, 0x80000000).bits, 0x80000000u);
  EXPECT_EQ(dot(s, {0x80000000}, {0x3F800000}, 0x00000000).bits, 0x00000000u);
  EXPECT_EQ(dot(s, {0x3F800000}, {0xBF800000}, 0x3F800000).bits, 0x00000000u);
  const MmaResult ov = dot(s, {0x7F7FFFFF}, {0x40000000}, 0);
  EXPECT_EQ(ov.bits, 0x7F800000u);
  EXPECT_EQ(ov.flags, kOverflow | kInexact);
  EXPECT_EQ(dot(s, {0x00800000}, {0x3F000000}, 0).bits, 0x00400000u);
  // the knobs nan and zero as §38.5 says: nan=ones gives 7FFFFFFF, zero=plus makes −0 +0
  MmaSpec w = s;
  MmaKnobs k = s.profile->knobs;
  ASSERT_EQ(apply_model_text(k, "nan=ones zero=plus"), "");
  w.knobs = k;
  EXPECT_EQ(dot(w, {0x7F800000}, {0x00000000}, 0).bits, 0x7FFFFFFFu);
  EXPECT_EQ(dot(w, {0x80000000}, {0x3F800000}, 0x80000000).bits, 0x00000000u);
  // algo=fma takes no scale=group (§38.9)
  MmaKnobs g = s.profile->knobs;
  EXPECT_NE(apply_model_text(g, "scale=group group=16"), "");
}

// §38.10 exact steps round once per step of L products. c = 1 (3F800000), four products of
// 2^-25 (a = 1, b = 2^-25). cdna1_mfma_f16 (L = 2 · 8 / 4 = 4; f16 codes: 2^-12 = 0C00, 2^-13 =
// 0800, their product 2^-25): one step, 1 + 4 · 2^-25 = 1 + 2^-23 exactly = 3F800001.
// cdna1_mfma_bf16 (L = 2 · 4 / 4 = 2; bf16 1 = 3F80, 2^-25 = 3300): step 1 is 1 + 2^-24, the tie
// between 1 and 1 + 2^-23, to even: 1; step 2 the same: D = 3F800000 (inexact). The ideal result
// of both is 3F800001.
TEST(Mma, ExactStepsRoundOncePerStep) {
  const MmaResult h = dot(spec("cdna1_mfma_f16", MmaType::f16, MmaType::f16, F32), {0x0C00, 0x0C00, 0x0C00, 0x0C00},
                          {0x0800, 0x0800, 0x0800, 0x0800}, 0x3F800000);
  EXPECT_EQ(h.bits, 0x3F800001u);
  EXPECT_EQ(h.flags, 0);
  const std::vector<std::uint32_t> one = {0x3F80, 0x3F80, 0x3F80, 0x3F80}, tiny = {0x3300, 0x3300, 0x3300, 0x3300};
  const MmaResult b = dot(spec("cdna1_mfma_bf16", MmaType::bf16, MmaType::bf16, F32), one, tiny, 0x3F800000);
  EXPECT_EQ(b.bits, 0x3F800000u);
  EXPECT_EQ(b.flags, kInexact);
  EXPECT_EQ(dot(spec("ideal", MmaType::bf16, MmaType::bf16, F32), one, tiny, 0x3F800000).bits, 0x3F800001u);
}

// §38.10 zeros and specials of the exact steps (zero=rounded): products −0 · 1 twice and c = −0
// give +0 (the ideal result, zero=ieee, gives −0 = 80000000); −2^-80 · 2^-80 (bf16 9780, 1780) =
// −2^-160 rounds to −0 (below half of 2^-149): 80000000, underflow and inexact; +Inf and −Inf
// products give the canonical NaN 7FC00000 (invalid); a NaN operand 7FC00000 too.
TEST(Mma, ExactStepsZerosAndSpecials) {
  const MmaSpec s = spec("cdna1_mfma_bf16", MmaType::bf16, MmaType::bf16, F32);
  EXPECT_EQ(dot(s, {0x8000, 0x8000}, {0x3F80, 0x3F80}, 0x80000000).bits, 0u);
  EXPECT_EQ(dot(spec("ideal", MmaType::bf16, MmaType::bf16, F32), {0x8000, 0x8000}, {0x3F80, 0x3F80}, 0x80000000).bits,
            0x80000000u);
  const MmaResult u = dot(s, {0x9780}, {0x1780}, 0);
  EXPECT_EQ(u.bits, 0x80000000u);
  EXPECT_EQ(u.flags, kUnderflow | kInexact);
  const MmaResult ii = dot(s, {0x7F80, 0xFF80}, {0x3F80, 0x3F80}, 0);
  EXPECT_EQ(ii.bits, 0x7FC00000u);
  EXPECT_EQ(ii.flags & kInvalid, kInvalid);
  EXPECT_EQ(dot(s, {0xFFC1, 0x3F80}, {0x3F80, 0x3F80}, 0x3F800000).bits, 0x7FC00000u);
}

// §38.11 the flush-to-zero steps add a step's products in a tree. cdna2_mfma_f16 (L = 4), f16 codes
// 2^12 = 6C00, −2^12 = EC00, 1 = 3C00: products [2^24, 1, 1, −2^24]; (2^24 + 1) is the tie between
// 2^24 and 2^24 + 2, to even: 2^24; (1 − 2^24) = −16777215 exactly; their sum 1; c = +0 + 1:
// D = 3F800000 (inexact). The ideal result is 2 (40000000); a chain left to right would give +0.
TEST(Mma, FlushToZeroStepsAddInATree) {
  const std::vector<std::uint32_t> a = {0x6C00, 0x3C00, 0x3C00, 0x6C00}, b = {0x6C00, 0x3C00, 0x3C00, 0xEC00};
  const MmaResult r = dot(spec("cdna2_mfma_f16", MmaType::f16, MmaType::f16, F32), a, b, 0);
  EXPECT_EQ(r.bits, 0x3F800000u);
  EXPECT_EQ(r.flags, kInexact);
  EXPECT_EQ(dot(spec("ideal", MmaType::f16, MmaType::f16, F32), a, b, 0).bits, 0x40000000u);
}

// §38.11 what is flushed. A subnormal operand is +0: f16 2^-24 (0001) · −1 (BC00) is +0 · −1 = −0,
// and c = −0 is flushed to +0: +0 + −0 = +0 (the ideal result is −2^-24 = B3800000). A subnormal C
// (00000001) with zero products: +0. A sum below 2^-126 keeps its sign: bf16 1.5 · 2^-63 (2040) ·
// 2^-63 (2000) = 1.5 · 2^-126 (normal), + 0 · 1; c = −2^-125 (81000000): −2^-127, flushed to −0
// (80000000; the ideal result is 80400000). A subnormal product is flushed with its sign:
// 2^-70 (1C80) · −2^-60 (A180) = −2^-130 → −0; with c = 1: 1 + −0 = 1 (3F800000).
TEST(Mma, FlushToZeroStepsFlushOperandsSumsAndProducts) {
  const MmaSpec h = spec("cdna2_mfma_f16", MmaType::f16, MmaType::f16, F32);
  EXPECT_EQ(dot(h, {0x0001}, {0xBC00}, 0x80000000).bits, 0u);
  EXPECT_EQ(dot(spec("ideal", MmaType::f16, MmaType::f16, F32), {0x0001}, {0xBC00}, 0x80000000).bits, 0xB3800000u);
  EXPECT_EQ(dot(h, {0x0000}, {0x3C00}, 0x00000001).bits, 0u);
  const MmaSpec b = spec("cdna2_mfma_bf16", MmaType::bf16, MmaType::bf16, F32);
  EXPECT_EQ(dot(b, {0x2040, 0x0000}, {0x2000, 0x3F80}, 0x81000000).bits, 0x80000000u);
  EXPECT_EQ(dot(spec("ideal", MmaType::bf16, MmaType::bf16, F32), {0x2040, 0x0000}, {0x2000, 0x3F80}, 0x81000000).bits,
            0x80400000u);
  EXPECT_EQ(dot(b, {0x1C80, 0x0000}, {0xA180, 0x0000}, 0x3F800000).bits, 0x3F800000u);
  // specials: +Inf + −Inf in the tree is the canonical NaN (invalid); a product beyond binary32
  // (bf16 2^127 = 7F00, squared) is +Inf (overflow)
  const MmaResult ii = dot(b, {0x7F80, 0xFF80}, {0x3F80, 0x3F80}, 0);
  EXPECT_EQ(ii.bits, 0x7FC00000u);
  EXPECT_EQ(ii.flags & kInvalid, kInvalid);
  const MmaResult ov = dot(b, {0x7F00, 0x0000}, {0x7F00, 0x0000}, 0);
  EXPECT_EQ(ov.bits, 0x7F800000u);
  EXPECT_EQ(ov.flags & kOverflow, kOverflow);
  // algo=ftz accumulates in binary32 only and takes no block scales (§38.11)
  MmaSpec w = spec("ideal", MmaType::f16, MmaType::f16, MmaType::f16);
  MmaKnobs k = w.profile->knobs;
  ASSERT_EQ(apply_model_text(k, "algo=ftz fused_bytes=8"), "");
  w.knobs = k;
  EXPECT_THROW(validate(w, 4), std::invalid_argument);
  MmaKnobs g = h.profile->knobs;
  EXPECT_NE(apply_model_text(g, "scale=product"), "");
}

TEST(Mma, MatrixIsTheDotProductOfEachRowAndColumn) {
  const std::size_t M = 3, N = 2, K = 5;
  // e4m3 codes: 1 (38), 2 (40), -0.5 (B0), 0.125 (20), 448 (7E), 2^-9 (01), 0
  const std::vector<std::uint32_t> A = {0x38, 0x40, 0xB0, 0x20, 0x7E, 0x01, 0x00, 0x38,
                                        0x38, 0xB0, 0x7E, 0x7E, 0x01, 0x20, 0x40};
  const std::vector<std::uint32_t> B = {0x38, 0x20, 0x40, 0xB0, 0x01, 0x7E, 0x38, 0x38, 0x20, 0x01};
  const std::vector<std::uint32_t> C = {0x3F800000u, 0, 0xC0000000u, 0x00000001u, 0, 0x7F7FFFFFu};
  for (const char* prof : {"ideal", "sm89_mma_f8", "sm90_wgmma_f8", "sm120_mma_f8"}) {
    const MmaSpec s = spec(prof, E4, E4, F32);
    std::vector<std::uint32_t> D(M * N);
    mma(s, M, N, K, A, B, C, D);
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j)
        EXPECT_EQ(D[i * N + j], mma_dot(s, K, A.data() + i * K, 1, B.data() + j, N, C[i * N + j]).bits) << prof;
    std::vector<std::uint32_t> Ar(M * K), Cr(M * N), Dr(M * N);
    for (std::size_t i = 0; i < M; ++i) {  // rows in reverse order
      std::copy_n(A.begin() + static_cast<std::ptrdiff_t>((M - 1 - i) * K), K,
                  Ar.begin() + static_cast<std::ptrdiff_t>(i * K));
      std::copy_n(C.begin() + static_cast<std::ptrdiff_t>((M - 1 - i) * N), N,
                  Cr.begin() + static_cast<std::ptrdiff_t>(i * N));
    }
    mma(s, M, N, K, Ar, B, Cr, Dr);
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) EXPECT_EQ(Dr[i * N + j], D[(M - 1 - i) * N + j]) << prof;
  }
}

// §36.3 every rule of a valid operation, each refused with a message naming it.
TEST(Mma, ValidationNamesTheProblem) {
  const auto expect_error = [](const MmaSpec& s, std::size_t K, const std::string& part) {
    try {
      validate(s, K);
      ADD_FAILURE() << "no error; expected " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error(spec("sm90_wgmma_f8", MmaType::f16, MmaType::f16, F32), 32, "does not take operand type f16");
  expect_error(spec("sm90_wgmma_f16", MmaType::f16, MmaType::bf16, F32), 16, "only 8-bit and narrower");
  expect_error(spec("sm90_wgmma_f16", MmaType::bf16, MmaType::bf16, MmaType::f16), 16, "binary16 accumulator");
  expect_error(spec("sm90_wgmma_tf32", MmaType::tf32, MmaType::tf32, MmaType::f16), 8, "does not accumulate in f16");
  expect_error(spec("sm100_tcgen05_mxf8f6f4", E4, E4, F32), 32, "needs block scales");
  expect_error(spec("sm100_tcgen05_mxf8f6f4", E4, E4, F32, 32), 48, "not a multiple of the block");
  expect_error(spec("sm100_tcgen05_mxf8f6f4", E4, E4, F32, 16), 32, "takes no block size 16");
  expect_error(spec("sm100_tcgen05_mxf4nvf4", MmaType::f4e2m1fn, MmaType::f4e2m1fn, F32, 32, MmaType::ue4m3), 64,
               "ue4m3 scales come with block 16");
  expect_error(spec("sm100_tcgen05_mxf4", MmaType::f4e2m1fn, MmaType::f4e2m1fn, F32, 32, MmaType::ue4m3), 64,
               "takes no scale type ue4m3");
  expect_error(spec("sm90_wgmma_f8", E4, E4, F32, 32), 32, "takes no block size 32");
  expect_error(spec("sm90_wgmma_f8", E4, E4, F32), 0, "K must be at least 1");
}

// §39.1 Every profile name is unique and every row's types and accumulators are operand types;
// §39.2 every name is <target>_<instruction>_<kind> (or ideal).
TEST(Mma, ProfileTableIsWellFormed) {
  // <target>_<instruction>_<kind>, each from its list (std::regex is avoided: GCC 12's false
  // warnings inside it under -fsanitize)
  const auto well_named = [](std::string_view n) {
    if (n == "ideal") return true;
    const std::size_t u1 = n.find('_'), u2 = n.find('_', u1 + 1);
    if (u1 == std::string_view::npos || u2 == std::string_view::npos) return false;
    const std::string_view t = n.substr(0, u1), i = n.substr(u1 + 1, u2 - u1 - 1), k = n.substr(u2 + 1);
    const std::string_view targets[] = {"sm70",  "sm75",  "sm80",  "sm89",  "sm90",
                                        "sm100", "sm120", "cdna1", "cdna2", "cdna3"};
    const std::string_view instrs[] = {"mma", "wgmma", "tcgen05", "mfma"};
    const std::string_view kinds[] = {"f16", "bf16",   "tf32",     "xf32", "f32",
                                      "f8",  "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4"};
    return std::find(std::begin(targets), std::end(targets), t) != std::end(targets) &&
           std::find(std::begin(instrs), std::end(instrs), i) != std::end(instrs) &&
           std::find(std::begin(kinds), std::end(kinds), k) != std::end(kinds);
  };
  for (const MmaProfile& p : mma_profiles()) EXPECT_TRUE(well_named(p.name)) << p.name;
  EXPECT_FALSE(well_named("sm90_wgmma_fp8"));
  std::vector<std::string_view> names;
  for (const MmaProfile& p : mma_profiles()) {
    for (const std::string_view n : names) EXPECT_NE(n, p.name);
    names.push_back(p.name);
    for (const std::string_view list : {p.types, p.accumulators, p.scale_types}) {
      std::string_view l = list;
      while (!l.empty()) {
        const std::size_t sp = l.find(' ');
        EXPECT_TRUE(find_mma_type(l.substr(0, sp))) << p.name << ": " << l.substr(0, sp);
        if (sp == std::string_view::npos) break;
        l.remove_prefix(sp + 1);
      }
    }
    if (p.knobs.algo != MmaAlgo::ideal) {
      EXPECT_EQ(p.knobs.scale != MmaScale::none, !p.blocks.empty()) << p.name;
    }
  }
  EXPECT_EQ(names.front(), "ideal");
}

// §40.1 promotion: sm90_wgmma_f8, K = 64, b = 1 (38). a[0] = 2^8 (78), a[32..63] = 2^-6 (08).
// Plain (§38.1, steps of 32 chained through C): the second step aligns to C = 256 (u = 8 - 13),
// every 2^-6 truncates to 0: D = 256 = 43800000. promote = 32: the chunks are computed from +0,
// q0 = 256 and q1 = 32 · 2^-6 = 0.5 exactly, then RN32(RN32(0 + 256) + 0.5) = 256.5 = 43804000
// (2^8 · (1 + 2^-9): 43800000 + 2^14), the ideal result.
TEST(Gemm, PromotionRecoversTheTruncatedBits) {
  const std::size_t K = 64;
  std::vector<std::uint32_t> a(K, 0), b(K, 0x38);
  a[0] = 0x78;
  for (std::size_t k = 32; k < K; ++k) a[k] = 0x08;
  const MmaSpec s = spec("sm90_wgmma_f8", E4, E4, F32);
  std::vector<std::uint32_t> d(1);
  const std::vector<std::uint32_t> c = {0};
  gemm(s, GemmOptions{}, 1, 1, K, a, b, c, d);
  EXPECT_EQ(d[0], 0x43800000u);
  gemm(s, GemmOptions{.promote = 32}, 1, 1, K, a, b, c, d);
  EXPECT_EQ(d[0], 0x43804000u);
  gemm(spec("ideal", E4, E4, F32), GemmOptions{}, 1, 1, K, a, b, c, d);
  EXPECT_EQ(d[0], 0x43804000u);
}

// §40.2 split-K adds the slices' partial sums to c in slice order, each addition rounded:
// c = 2^24 (4B800000), a[0] = a[32] = 1, b = 1, K = 64, split_k = 2: P0 = P1 = 1;
// RN32(2^24 + 1) = 2^24 (a tie: the even 2^24), twice: D = 4B800000. The ideal 2^24 + 2 is
// representable: 4B800001 (another order, c + (P0 + P1), would give it too).
TEST(Gemm, SplitKReducesInDeclaredOrder) {
  const std::size_t K = 64;
  std::vector<std::uint32_t> a(K, 0), b(K, 0x38);
  a[0] = a[32] = 0x38;
  const std::vector<std::uint32_t> c = {0x4B800000u};
  std::vector<std::uint32_t> d(1);
  gemm(spec("sm100_tcgen05_f8f6f4", E4, E4, F32), GemmOptions{.split_k = 2}, 1, 1, K, a, b, c, d);
  EXPECT_EQ(d[0], 0x4B800000u);
  gemm(spec("ideal", E4, E4, F32), GemmOptions{}, 1, 1, K, a, b, c, d);
  EXPECT_EQ(d[0], 0x4B800001u);
}

// §40.5 promotion with scales (DeepGEMM's `final_accum += (scale_a * scale_b) * accum`):
// sm90_wgmma_f8, K = 256, promote = 128. Chunk 0: a[0] = -1.125 (B9), b = 1: q0 = -1.125, scale
// RN32(1 · 1) = 1: r = -1.125. Chunk 1: a[128] = 1.125 (39): q1 = 1.125, scale
// RN32((1 + 2^-23)^2) = RN32(1 + 2^-22 + 2^-46) = 1 + 2^-22 (3F800002). Fused: r = -1.125 + 1.125 ·
// (1 + 2^-22) = 1.125 · 2^-22 exactly = 34900000. (Multiplying first would round 1.125 + 2.25 ·
// 2^-23 to 1.125 + 2 · 2^-23 and give 2^-22 = 34800000.)
TEST(Gemm, PromotionScalesAreOneFusedMultiplyAdd) {
  const std::size_t K = 256;
  std::vector<std::uint32_t> a(K, 0), b(K, 0x38);
  a[0] = 0xB9;
  a[128] = 0x39;
  const std::vector<std::uint32_t> c = {0}, sa = {0x3F800000u, 0x3F800001u}, sb = {0x3F800000u, 0x3F800001u};
  std::vector<std::uint32_t> d(1);
  GemmOptions g;
  g.promote = 128;
  g.promote_sa = sa;
  g.promote_sb = sb;
  gemm(spec("sm90_wgmma_f8", E4, E4, F32), g, 1, 1, K, a, b, c, d);
  EXPECT_EQ(d[0], 0x34900000u);
  // scales 2 · 4 and 0.5 · 8 on chunks 1 and 1.5: 8 + 6 = 14 = 41600000
  std::vector<std::uint32_t> a2(K, 0);
  a2[0] = 0x38;
  a2[128] = 0x3C;
  const std::vector<std::uint32_t> sa2 = {0x40000000u, 0x3F000000u}, sb2 = {0x40800000u, 0x41000000u};
  g.promote_sa = sa2;
  g.promote_sb = sb2;
  gemm(spec("sm90_wgmma_f8", E4, E4, F32), g, 1, 1, K, a2, b, c, d);
  EXPECT_EQ(d[0], 0x41600000u);
  GemmOptions bad = g;
  bad.promote = 0;
  EXPECT_THROW(validate(spec("sm90_wgmma_f8", E4, E4, F32), bad, K), std::invalid_argument);
}

// §40.6 a recipe's GEMM, by hand. te_mxfp8 (mx-rceil-f32, §16.6): a block of 1.0 has amax 1 and
// X = 2^ceil(log2(1 / 448)) = 2^-8 (1 / 448 = 2^-8.807), E8M0 code 127 - 8 = 0x77; each element
// 1 · 2^8 = 256 = f8e4m3fn 0x78 (exponent field 15, fraction 0). A = 1 x 32 ones, B = 32 x 1 twos
// (B's block: amax 2, X = 2^ceil(log2(2 / 448)) = 2^-7, code 0x78, elements 2 · 2^7 = 0x78).
// D = Σ (256 · 2^-8)(256 · 2^-7) = 32 · 2 = 64 = 0x42800000, exact under sm100_tcgen05_mxf8f6f4.
TEST(GemmRecipe, MxBlockScalesByHand) {
  const GemmRecipe* r = find_gemm_recipe("te_mxfp8");
  ASSERT_NE(r, nullptr);
  const std::vector<std::uint32_t> ones(32, 0x3F800000u), twos(32, 0x40000000u);
  const Format& f32 = format(FormatId::f32);
  const RecipeGemmOperands q = quantize_for_gemm(*r, format(FormatId::f8e4m3fn), TensorView(f32, ones.data(), 1, 32),
                                                 TensorView(f32, twos.data(), 32, 1));
  EXPECT_EQ(q.element, MmaType::f8e4m3fn);
  EXPECT_EQ(q.a, std::vector<std::uint32_t>(32, 0x78u));
  EXPECT_EQ(q.b, std::vector<std::uint32_t>(32, 0x78u));
  EXPECT_EQ(q.sa, std::vector<std::uint32_t>{0x77u});
  EXPECT_EQ(q.sb, std::vector<std::uint32_t>{0x78u});
  MmaSpec s = spec("sm100_tcgen05_mxf8f6f4", E4, E4, F32);
  GemmOptions g;
  recipe_gemm_spec(*r, q, 32, s, g);
  EXPECT_EQ(s.block, 32);
  EXPECT_EQ(s.scale, MmaType::f8e8m0fnu);
  EXPECT_EQ(g.promote, 0u);
  std::vector<std::uint32_t> d(1);
  gemm(s, g, 1, 1, 32, q.a, q.b, std::vector<std::uint32_t>{0}, d, q.sa, q.sb);
  EXPECT_EQ(d[0], 0x42800000u);
  // the same recipe on an instruction without block scales is refused, naming both
  MmaSpec h = spec("sm90_wgmma_f8", E4, E4, F32);
  GemmOptions gh;
  try {
    recipe_gemm_spec(*r, q, 32, h, gh);
    ADD_FAILURE() << "sm90_wgmma_f8 took E8M0 block scales";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("recipe te_mxfp8 with profile sm90_wgmma_f8"), std::string::npos) << e.what();
  }
}

// §40.6 deepgemm: promotion scales 2^(c - 127) as binary32, B's per 128 x 128 block spread over
// its columns. A = 1 x 128 of 448 (amax 448: mx-rceil-f32 X = 2^ceil(log2(448 / 448)) = 2^0,
// code 0x7F, elements 448 = 0x7E); B = 128 x 130 of 1 except column 129 = 4 (two column blocks:
// amax 1 -> X = 2^ceil(log2(1/448)) = 2^-8, code 0x77; amax 4 -> 2^ceil(log2(4/448)) = 2^-6, 0x79).
TEST(GemmRecipe, DeepGemmPromotionScales) {
  const GemmRecipe* r = find_gemm_recipe("deepgemm");
  ASSERT_NE(r, nullptr);
  const Format& f32 = format(FormatId::f32);
  const std::vector<std::uint32_t> a(128, 0x43E00000u);
  std::vector<std::uint32_t> b(128 * 130, 0x3F800000u);
  for (std::size_t k = 0; k < 128; ++k) b[k * 130 + 129] = 0x40800000u;
  const RecipeGemmOperands q = quantize_for_gemm(*r, format(FormatId::f8e4m3fn), TensorView(f32, a.data(), 1, 128),
                                                 TensorView(f32, b.data(), 128, 130));
  EXPECT_EQ(q.sa, std::vector<std::uint32_t>{0x3F800000u});  // 2^0
  ASSERT_EQ(q.sb.size(), 130u);
  EXPECT_EQ(q.sb[0], 0x77u << 23);  // 2^-8 for the columns of the first block
  EXPECT_EQ(q.sb[127], 0x77u << 23);
  EXPECT_EQ(q.sb[128], 0x79u << 23);  // 2^-6 for the second block (columns 128, 129)
  EXPECT_EQ(q.sb[129], 0x79u << 23);
  MmaSpec s = spec("sm90_wgmma_f8", E4, E4, F32);
  GemmOptions g;
  recipe_gemm_spec(*r, q, 128, s, g);
  EXPECT_EQ(g.promote, 128u);
  EXPECT_EQ(s.block, 0);
  // column 0: Σ 448 · 256 = 128 · 114688 = 14680064 = 2^23 · 1.75; scaled by 2^0 · 2^-8: 57344 = 0x47600000
  std::vector<std::uint32_t> d(130);
  gemm(s, g, 1, 130, 128, q.a, q.b, std::vector<std::uint32_t>(130, 0), d);
  EXPECT_EQ(d[0], 0x47600000u);
  // column 129: B's elements 4 · 2^6 = 256 again, scale 2^-6: 4 · 57344 = 229376 = 0x48600000
  EXPECT_EQ(d[129], 0x48600000u);
}

// §40.6 the table: every row is a recipe profile; block-scale rows have E8M0 rules and blocks
// along K of their size in both operands (1 x B and B x 1).
TEST(GemmRecipe, TableIsWellFormed) {
  for (const GemmRecipe& r : gemm_recipes()) {
    const auto pid = find_profile(r.profile);
    ASSERT_TRUE(pid && profile(*pid).recipe) << r.profile;
    const std::string b = std::to_string(r.block);
    EXPECT_EQ(r.a_partition, "block:1x" + b) << r.profile;
    if (r.scales == GemmRecipeScales::block) {
      EXPECT_EQ(r.b_partition, "block:" + b + "x1") << r.profile;
      const auto rule = parse_scale_rule(profile(*pid).recipe->rule);
      ASSERT_TRUE(rule) << r.profile;
      EXPECT_EQ(scale_format(*rule).id, FormatId::f8e8m0fnu) << r.profile;
    }
    EXPECT_EQ(find_gemm_recipe(r.profile), &r);
  }
  EXPECT_EQ(find_gemm_recipe("torchao_float8"), nullptr);
  const std::vector<std::uint32_t> z(48, 0);
  const Format& f32 = format(FormatId::f32);
  EXPECT_THROW(quantize_for_gemm(*find_gemm_recipe("te_mxfp8"), format(FormatId::f8e4m3fn),
                                 TensorView(f32, z.data(), 1, 48), TensorView(f32, z.data(), 48, 1)),
               std::invalid_argument);  // K = 48 is not a multiple of 32
  EXPECT_THROW(quantize_for_gemm(*find_gemm_recipe("te_mxfp8"), format(FormatId::int8),
                                 TensorView(f32, z.data(), 1, 32), TensorView(f32, z.data(), 32, 1)),
               std::invalid_argument);  // int8: not an element te_mxfp8 reproduces (§10.4)
}

// §40.5 against the oracle: random promotion scales (binary32 values near 1, some far) on random
// e4m3 GEMMs under the FP8 profiles, composed from the oracle's §38 dot product and its
// scaled_add_rn32.
TEST(Gemm, PromotionScalesMatchTheOracle) {
  SplitMix64 g(0x5343414C);
  for (const char* prof : {"sm90_wgmma_f8", "sm89_mma_f8", "sm100_tcgen05_f8f6f4"}) {
    const MmaSpec s = spec(prof, E4, E4, F32);
    const std::size_t M = 3, N = 2, K = 256, P = 128, nc = K / P;
    std::vector<std::uint32_t> A(M * K), B(K * N), C(M * N), D(M * N), SA(M * nc), SB(nc * N);
    for (int rep = 0; rep < 20; ++rep) {
      for (auto& v : A) v = random_code(g, E4, 0x3C);
      for (auto& v : B) v = random_code(g, E4, 0x3C);
      for (auto& v : C) v = random_code(g, F32, 0x3F800000u);
      for (auto& v : SA)
        v = g.next() % 8 == 0 ? static_cast<std::uint32_t>(g.next())
                              : 0x3F800000u + static_cast<std::uint32_t>(g.next() % 64);
      for (auto& v : SB)
        v = g.next() % 8 == 0 ? static_cast<std::uint32_t>(g.next())
                              : 0x3F7FFFC0u + static_cast<std::uint32_t>(g.next() % 64);
      GemmOptions opt;
      opt.promote = P;
      opt.promote_sa = SA;
      opt.promote_sb = SB;
      gemm(s, opt, M, N, K, A, B, C, D);
      const oracle::rat::MmaOperands in{FormatId::f8e4m3fn, FormatId::f8e4m3fn, FormatId::f32, FormatId::f8e8m0fnu};
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
          std::vector<std::uint32_t> col(K);
          for (std::size_t k = 0; k < K; ++k) col[k] = B[k * N + j];
          std::uint32_t part = 0;
          for (std::size_t t = 0; t < nc; ++t) {
            const std::uint32_t q =
                oracle::rat::mma_dot(s.profile->knobs, mma_fused(s), in, P, A.data() + i * K + t * P,
                                     col.data() + t * P, 0, nullptr, nullptr);
            part = oracle::rat::scaled_add_rn32(part, SA[i * nc + t], SB[t * N + j], q);
          }
          const std::uint32_t want = oracle::rat::add_rn(C[i * N + j], part, format(FormatId::f32));
          EXPECT_EQ(D[i * N + j], want) << prof << " rep " << rep << " at " << i << "," << j;
        }
    }
  }
}

// §40.3 the GEMM options' rules.
TEST(Gemm, OptionsAreValidated) {
  const MmaSpec s = spec("sm90_wgmma_f8", E4, E4, F32);
  EXPECT_THROW(validate(s, GemmOptions{.split_k = 3}, 64), std::invalid_argument);  // 64 / 3
  EXPECT_THROW(validate(s, GemmOptions{.split_k = 0}, 64), std::invalid_argument);
  EXPECT_THROW(validate(s, GemmOptions{.promote = 48}, 128), std::invalid_argument);  // not a multiple of 32
  EXPECT_THROW(validate(spec("sm90_wgmma_f8", E4, E4, MmaType::f16), GemmOptions{.promote = 32}, 64),
               std::invalid_argument);  // promotion is binary32
  EXPECT_THROW(validate(spec("sm100_tcgen05_mxf8f6f4", E4, E4, F32, 32), GemmOptions{.split_k = 4}, 64),
               std::invalid_argument);  // slices of 16: not whole blocks of 32
  EXPECT_NO_THROW(validate(s, GemmOptions{.promote = 128, .split_k = 2}, 512));
}

// §40 against the oracle: promotion and split-K composed from the oracle's §38 dot product and
// its binary32 rounding (rational_round), on random e4m3 / e5m2 GEMMs.
TEST(Gemm, MatchesTheOracleComposition) {
  SplitMix64 g(0x47454D4D);
  for (const char* prof : {"sm90_wgmma_f8", "sm89_mma_f8", "sm100_tcgen05_f8f6f4", "ideal"}) {
    const MmaSpec s = spec(prof, E4, MmaType::f8e5m2, F32);
    for (const GemmOptions opt :
         {GemmOptions{.promote = 32}, GemmOptions{.split_k = 4}, GemmOptions{.promote = 64, .split_k = 2}}) {
      const std::size_t M = 3, N = 3, K = 256;
      std::vector<std::uint32_t> A(M * K), B(K * N), C(M * N), D(M * N);
      for (auto& v : A) v = random_code(g, E4, 0x3C);
      for (auto& v : B) v = random_code(g, MmaType::f8e5m2, 0x3C);
      for (auto& v : C) v = random_code(g, F32, 0x3F800000u);
      gemm(s, opt, M, N, K, A, B, C, D);
      const std::size_t L = s.profile->knobs.algo == MmaAlgo::ideal ? 1 : mma_fused(s);
      const oracle::rat::MmaOperands in{FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f32, FormatId::f8e8m0fnu};
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
          std::vector<std::uint32_t> col(K);
          for (std::size_t k = 0; k < K; ++k) col[k] = B[k * N + j];
          const std::size_t slice = K / opt.split_k, chunk = opt.promote ? opt.promote : slice;
          std::uint32_t t = C[i * N + j];
          for (std::size_t s0 = 0; s0 < K; s0 += slice) {
            std::uint32_t part = 0;
            for (std::size_t k0 = s0; k0 < s0 + slice; k0 += chunk) {
              const std::uint32_t q = oracle::rat::mma_dot(s.profile->knobs, L, in, chunk, A.data() + i * K + k0,
                                                           col.data() + k0, 0, nullptr, nullptr);
              part = opt.promote ? oracle::rat::add_rn(part, q, format(FormatId::f32)) : q;
            }
            t = oracle::rat::add_rn(t, part, format(FormatId::f32));
          }
          EXPECT_EQ(D[i * N + j], t) << prof << " promote " << opt.promote << " split " << opt.split_k << " at " << i
                                     << "," << j;
        }
    }
  }
}

// ---- against the rational oracle ------------------------------------------------------------
// Random operand codes: mostly finite values near one binade (so that cancellation and
// alignment happen), some anywhere in the format, some zeros and specials.
std::uint32_t random_code(SplitMix64& g, MmaType t, std::uint32_t centre) {
  const Format& f = format(mma_type(t).format);
  const std::uint64_t w = g.next();
  const std::uint32_t any = static_cast<std::uint32_t>(w >> 32) & f.mask();
  switch (w % 16) {
    case 0: return 0;
    case 1: return any;           // anywhere, specials included
    case 2: return f.sign_bit();  // -0 (0 for unsigned)
    default: {
      // near `centre`: the centre code's exponent field ± a few binades, random fraction and sign
      const std::uint32_t span = static_cast<std::uint32_t>((w >> 8) % (3u << f.man_bits));
      std::uint32_t mag = (centre & f.mag_mask()) + span - (span > (centre & f.mag_mask()) ? 0 : span / 2);
      mag &= f.mag_mask();
      if ((w >> 4) & 1) mag |= f.sign_bit();
      return mag;
    }
  }
}

void check_against_oracle(const MmaProfile& p, MmaType a_t, MmaType b_t, MmaType c_t, int block, MmaType scale_t,
                          int cases, std::uint64_t seed) {
  MmaSpec s;
  s.profile = &p;
  s.a = a_t;
  s.b = b_t;
  s.c = c_t;
  s.block = block;
  s.scale = scale_t;
  const std::size_t L = p.knobs.algo == MmaAlgo::ideal ? 32 : mma_fused(s);
  oracle::rat::MmaOperands in{
      mma_type(a_t).format,      mma_type(b_t).format,      mma_type(c_t).format,          mma_type(scale_t).format,
      mma_type(a_t).ignore_mask, mma_type(b_t).ignore_mask, mma_type(scale_t).ignore_mask, block};
  SplitMix64 g(seed);
  int mismatches = 0;
  for (int n = 0; n < cases; ++n) {
    const std::size_t unit = block ? static_cast<std::size_t>(block) : 1;
    std::size_t K = 1 + g.next() % (2 * L + 1);
    K = (K + unit - 1) / unit * unit;
    std::vector<std::uint32_t> a(K), b(K), sa(block ? K / unit : 0), sb(block ? K / unit : 0);
    const Format& fa = format(mma_type(a_t).format);
    const std::uint32_t centre_a = (fa.max_finite >> 1) + static_cast<std::uint32_t>(g.next() % 3);
    const std::uint32_t centre_b = (format(mma_type(b_t).format).max_finite >> 1);
    for (std::size_t i = 0; i < K; ++i) {
      a[i] = random_code(g, a_t, centre_a);
      b[i] = random_code(g, b_t, centre_b);
    }
    for (std::size_t i = 0; i < sa.size(); ++i) {
      const Format& fs = format(mma_type(scale_t).format);
      sa[i] = static_cast<std::uint32_t>(g.next() % 8 == 0 ? g.next() : (fs.max_finite >> 1) + g.next() % 24 - 12) &
              fs.mask();
      sb[i] = static_cast<std::uint32_t>(g.next() % 8 == 0 ? g.next() : (fs.max_finite >> 1) + g.next() % 24 - 12) &
              fs.mask();
    }
    const Format& fc = format(mma_type(c_t).format);
    std::uint32_t c = random_code(g, c_t, fc.max_finite >> 1);
    if (g.next() % 4 == 0) c = 0;
    const MmaResult r =
        mma_dot(s, K, a.data(), 1, b.data(), 1, c, block ? sa.data() : nullptr, 1, block ? sb.data() : nullptr, 1);
    const std::uint32_t o = oracle::rat::mma_dot(p.knobs, L, in, K, a.data(), b.data(), c, block ? sa.data() : nullptr,
                                                 block ? sb.data() : nullptr);
    if (r.bits != o && ++mismatches <= 5) {
      std::ostringstream codes;
      codes << std::hex;
      for (std::size_t i = 0; i < K; ++i) codes << ' ' << a[i] << '*' << b[i];
      ADD_FAILURE() << p.name << " " << mma_type(a_t).name << "x" << mma_type(b_t).name << "->" << mma_type(c_t).name
                    << " K=" << K << " c=" << std::hex << c << " reference " << r.bits << " oracle " << o << std::dec
                    << " |" << codes.str();
    }
  }
  EXPECT_EQ(mismatches, 0) << p.name;
}

// §37 / §38 every profile, every operand type pair it takes, every accumulator, against the
// oracle on random dot products of random K (1 to 2·fused + 1, multiples of the block).
TEST(Mma, EveryProfileMatchesTheRationalOracle) {
  std::uint64_t seed = 0x4D4D41;
  for (const MmaProfile& p : mma_profiles()) {
    std::vector<MmaType> types, accs, scales;
    for (const MmaTypeInfo& t : mma_types()) {
      if (mma_list_has(p.types, t.name)) types.push_back(t.id);
      if (mma_list_has(p.accumulators, t.name)) accs.push_back(t.id);
      if (mma_list_has(p.scale_types, t.name)) scales.push_back(t.id);
    }
    for (const MmaType a : types)
      for (const MmaType b : types)
        for (const MmaType c : accs) {
          MmaSpec s;
          s.profile = &p;
          s.a = a;
          s.b = b;
          s.c = c;
          if (p.knobs.scale == MmaScale::none) {
            try {
              validate(s, 1);
            } catch (const std::invalid_argument&) {
              continue;  // a combination the instruction does not take
            }
            check_against_oracle(p, a, b, c, 0, MmaType::f8e8m0fnu, 40, ++seed);
            continue;
          }
          for (const MmaType st : scales)
            for (const int block : {16, 32}) {
              s.block = block;
              s.scale = st;
              try {
                validate(s, 64);
              } catch (const std::invalid_argument&) {
                continue;
              }
              check_against_oracle(p, a, b, c, block, st, 40, ++seed);
            }
        }
  }
}

// One model (a profile, with a what-if `model` text, §38.6) of the chains of §38.9 – §38.11 against
// the rational oracle: n random dot products, K from 1 to 64 (whole blocks under scale=product).
// Operands near 1 (codes around max_finite >> 1); with `low_too` half of the dot products take
// operands and C near the format's small values instead (max_finite >> 3: flushing, tiny sums).
struct ChainCase {
  std::string_view profile, model;
  MmaType a, c;
  int block;
};
void check_chain_against_oracle(const ChainCase& cs, SplitMix64& g, int n, bool low_too) {
  MmaSpec s = spec(cs.profile, cs.a, cs.a, cs.c, cs.block);
  MmaKnobs k = s.profile->knobs;
  const std::string err = apply_model_text(k, cs.model);
  EXPECT_EQ(err, "") << cs.model;
  if (!err.empty()) return;
  s.knobs = k;
  const std::size_t L = mma_fused(s);
  EXPECT_GE(L, 1u) << cs.profile << " " << cs.model;
  const oracle::rat::MmaOperands in{
      mma_type(cs.a).format, mma_type(cs.a).format, mma_type(cs.c).format, FormatId::f8e8m0fnu, 0, 0, 0, cs.block};
  const Format& fa = format(mma_type(cs.a).format);
  const Format& fc = format(mma_type(cs.c).format);
  int mismatches = 0;
  for (int t = 0; t < n; ++t) {
    const std::size_t unit = cs.block ? static_cast<std::size_t>(cs.block) : 1;
    const std::size_t K = (1 + g.next() % 64 + unit - 1) / unit * unit;
    std::vector<std::uint32_t> a(K), b(K), sa(K / unit), sb(K / unit);
    const bool low = low_too && g.next() % 2 == 0;
    const std::uint32_t centre = fa.max_finite >> (low ? 3 : 1);
    for (std::size_t i = 0; i < K; ++i) {
      a[i] = random_code(g, cs.a, centre);
      b[i] = random_code(g, cs.a, centre + static_cast<std::uint32_t>(g.next() % 5));
    }
    for (std::size_t i = 0; i < sa.size(); ++i) {
      sa[i] = static_cast<std::uint32_t>(g.next() % 8 == 0 ? g.next() % 256 : 127 + g.next() % 24 - 12);
      sb[i] = static_cast<std::uint32_t>(g.next() % 8 == 0 ? g.next() % 256 : 127 + g.next() % 24 - 12);
    }
    std::uint32_t c = random_code(g, cs.c, fc.max_finite >> (low ? 3 : 1));
    if (g.next() % 4 == 0) c = g.next() % 2 ? fc.sign_bit() : 0;
    const std::uint32_t* psa = cs.block ? sa.data() : nullptr;
    const std::uint32_t* psb = cs.block ? sb.data() : nullptr;
    const MmaResult r = mma_dot(s, K, a.data(), 1, b.data(), 1, c, psa, 1, psb, 1);
    const std::uint32_t o = oracle::rat::mma_dot(k, L, in, K, a.data(), b.data(), c, psa, psb);
    if (r.bits != o && ++mismatches <= 5)
      ADD_FAILURE() << cs.profile << " " << cs.model << " K=" << K << " c=" << std::hex << c << " reference " << r.bits
                    << " oracle " << o;
  }
  EXPECT_EQ(mismatches, 0) << cs.profile << " " << cs.model;
}

// §38.9 the FMA chain against the oracle over longer K (1 to 64): its three profiles, and what-if
// models of it (§38.6) with other zero / nan knobs, a binary16 accumulator, bf16 and e4m3
// operands, and E8M0 block scales under scale=product.
TEST(Mma, FmaChainMatchesTheRationalOracle) {
  const ChainCase cases[] = {
      {"cdna1_mfma_f32", "", F32, F32, 0},
      {"cdna2_mfma_f32", "", F32, F32, 0},
      {"cdna3_mfma_f32", "", F32, F32, 0},
      {"cdna3_mfma_f32", "zero=plus nan=ones", F32, F32, 0},
      {"cdna3_mfma_f32", "zero=rounded", F32, F32, 0},
      {"ideal", "algo=fma fused_bytes=4", MmaType::f16, MmaType::f16, 0},
      {"ideal", "algo=fma fused_bytes=4", MmaType::bf16, F32, 0},
      {"ideal", "algo=fma fused_bytes=4 scale=product", E4, F32, 32},
  };
  SplitMix64 g(0xF3A);
  for (const ChainCase& cs : cases) {
    MmaSpec s = spec(cs.profile, cs.a, cs.a, cs.c, cs.block);
    MmaKnobs k = s.profile->knobs;
    ASSERT_EQ(apply_model_text(k, cs.model), "") << cs.model;
    s.knobs = k;
    ASSERT_EQ(mma_fused(s), 1u);  // §38.9 one product per step
    check_chain_against_oracle(cs, g, 120, false);
  }
}

// §38.10 / §38.11 the exact steps and the flush-to-zero steps against the oracle over K from 1 to
// 64: the four CDNA1 / CDNA2 f16 / bf16 profiles, and what-if models (§38.6): exact steps with
// zero=ieee / plus, a binary16 accumulator, e4m3 operands with E8M0 scales; flush-to-zero steps of
// 3 products (an unpaired product in the tree) and 8, nan=ones, f32 operands (inexact products).
TEST(Mma, ExactAndFlushToZeroStepsMatchTheRationalOracle) {
  constexpr auto F16 = MmaType::f16, BF16 = MmaType::bf16;
  const ChainCase cases[] = {
      {"cdna1_mfma_f16", "", F16, F32, 0},
      {"cdna1_mfma_bf16", "", BF16, F32, 0},
      {"cdna2_mfma_f16", "", F16, F32, 0},
      {"cdna2_mfma_f16", "", BF16, F32, 0},
      {"cdna2_mfma_bf16", "", BF16, F32, 0},
      {"cdna1_mfma_f16", "zero=ieee", F16, F32, 0},
      {"cdna1_mfma_f16", "zero=plus nan=ones", F16, F32, 0},
      {"ideal", "algo=efdpa fused_bytes=8", F16, F16, 0},
      {"ideal", "algo=efdpa fused_bytes=16 scale=product", E4, F32, 32},
      {"cdna2_mfma_bf16", "fused_bytes=6", BF16, F32, 0},
      {"cdna2_mfma_bf16", "fused_bytes=16 nan=ones", BF16, F32, 0},
      {"ideal", "algo=ftz fused_bytes=8", F32, F32, 0},
  };
  SplitMix64 g(0xEFD);
  for (const ChainCase& cs : cases) check_chain_against_oracle(cs, g, 150, true);
}

}  // namespace
}  // namespace numref
