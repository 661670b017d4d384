// numref tests — MoR metrics: the per-element relative error, exact order-independent sums,
// the mean and the exact threshold comparison, Eq. 4, the block error sums of the
// ErrorEvaluator, and the backward error of a quantized matmul.     spec §21 – §24, §29
//
// Expected values are hand-computed (derivations in the comments) or come from the exact
// rational oracle (numref::oracle::rm / rat, no numref_reference code).
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <numeric>

#include "numref/metrics.hpp"
#include "numref/mma.hpp"
#include "numref/mor.hpp"
#include "test_mor_cases.hpp"

namespace numref {
namespace {

using namespace mortest;  // Tensor, Rational, SplitMix64, F32, BF16, hex32
namespace rat = oracle::rat;

// ---- §21 --------------------------------------------------------------------------------------

// §21.2 e = RN32(RN32(|x − q|) / |x|).
TEST(RelativeError, HandWorked) {
  // x = 1.0625 = 17/16 (0x3F880000), q = 1 (the E4M3 tie 1.0625 -> 1.0): d = 1/16 exactly,
  // e = RN32(1/17). 1/17 = 0.(00001111) in binary = 1.1110000111100001111000011110...·2^-5;
  // 24 significant bits 1111 0000 1111 0000 1111 0000, next bit 1 followed by non-zero bits:
  // round up to 0xF0F0F1 · 2^-28 -> field 122, fraction 0x70F0F1: 0x3D70F0F1.
  EXPECT_EQ(relative_error(0x3F880000u, 0x3F800000u), 0x3D70F0F1u);
  // q = x: 0.  q = 0 (flushed): d = |x|, e = 1.0.
  EXPECT_EQ(relative_error(0x3F880000u, 0x3F880000u), 0u);
  EXPECT_EQ(relative_error(0xC2000000u, 0x00000000u), 0x3F800000u);
  EXPECT_EQ(relative_error(0x3F880000u, 0x80000000u), 0x3F800000u);  // q = -0
  // x = -3, q = -2.5: d = 0.5, e = RN32(1/6); 1/6 = 1.0101...·2^-3, 23 fraction bits 0101...010,
  // next bits 1010... > half: round up -> 0x2AAAAB, field 124: 0x3E2AAAAB.
  EXPECT_EQ(relative_error(0xC0400000u, 0xC0200000u), 0x3E2AAAABu);
  // subnormal x = 3·2^-149, q = 2·2^-149: d = 2^-149 (exact), e = RN32(1/3) = 0x3EAAAAAB
  // (1/3 = 1.0101...·2^-2, rounded up like 1/6).
  EXPECT_EQ(relative_error(0x00000003u, 0x00000002u), 0x3EAAAAABu);
  // e >= 1 when Q overshoots: x = 1, q = 3: d = 2, e = 2.
  EXPECT_EQ(relative_error(0x3F800000u, 0x40400000u), 0x40000000u);
  // quotient overflow: x = 2^-149, q = 2^127: d = RN32(2^127 − 2^-149) = 2^127, e = 2^276 -> +Inf
  EXPECT_EQ(relative_error(0x00000001u, 0x7F000000u), kF32Inf);
  EXPECT_THROW(relative_error(0u, 0x3F800000u), std::invalid_argument);
  EXPECT_THROW(relative_error(0x3F800000u, kF32NaN), std::invalid_argument);
}

// §21.2 RN32 of the exact difference, then |·|.
TEST(RelativeError, SubtractionRoundsOnce) {
  // 1 − 2^-30: the neighbours are 1 − 2^-24 and 1; 2^-30 is far below half of 2^-24 -> 1.0.
  EXPECT_EQ(f32_sub_abs(0x3F800000u, 0x30800000u), 0x3F800000u);
  // 1 + 2^-24 = the midpoint of 1 and 1 + 2^-23 -> ties to even: 1.0 (b = -2^-24 = 0xB3800000).
  EXPECT_EQ(f32_sub_abs(0x3F800000u, 0xB3800000u), 0x3F800000u);
  // 1 + 2^-24 + 2^-47 (b = -(2^-24 + 2^-47) = 0xB3800001): above the midpoint -> 1 + 2^-23.
  EXPECT_EQ(f32_sub_abs(0x3F800000u, 0xB3800001u), 0x3F800001u);
  // operands 70 binades apart (the sticky branch): 1 ∓ 2^-70 -> 1.0 (2^-70 = 0x1C800000)
  EXPECT_EQ(f32_sub_abs(0x3F800000u, 0x1C800000u), 0x3F800000u);
  EXPECT_EQ(f32_sub_abs(0x3F800000u, 0x9C800000u), 0x3F800000u);
  // just below a power of two: 2 − 2^-70 -> 2.0 (the neighbour below, 2 − 2^-23, is far)
  EXPECT_EQ(f32_sub_abs(0x40000000u, 0x1C800000u), 0x40000000u);
  // 2^-149 − 2^-148 = -2^-149 -> |.| = 0x00000001; exact cancellation -> +0
  EXPECT_EQ(f32_sub_abs(0x00000001u, 0x00000002u), 0x00000001u);
  EXPECT_EQ(f32_sub_abs(0xC0400000u, 0xC0400000u), 0u);
  // FLT_MAX − (−FLT_MAX) = 2^129 − 2^105 rounds past the overflow point -> +Inf
  EXPECT_EQ(f32_sub_abs(0x7F7FFFFFu, 0xFF7FFFFFu), kF32Inf);
}

// §21.2 against the rational oracle on random operand pairs: q near x (the quantized case),
// q anywhere, subnormals, opposite signs.
TEST(RelativeError, AgreesWithOracle) {
  SplitMix64 g(2101);
  auto rnd = [&] {
    const std::uint32_t c = static_cast<std::uint32_t>(g.next());
    return (c & 0x7F800000u) == 0x7F800000u ? (c & 0x807FFFFFu) : c;  // finite
  };
  for (int t = 0; t < 20000; ++t) {
    std::uint32_t x = rnd();
    if ((x & 0x7FFFFFFFu) == 0) x |= 1;
    std::uint32_t q;
    switch (t % 4) {
      case 0: q = x ^ (static_cast<std::uint32_t>(g.next()) & 0xFFFFu); break;                // same binade
      case 1: q = x + static_cast<std::uint32_t>(g.next() % 0x2000000u) - 0x1000000u; break;  // nearby binades
      case 2: q = rnd(); break;
      default: q = static_cast<std::uint32_t>(g.next()) & 0x807FFFFFu; break;  // subnormal or zero
    }
    if (!f32_is_finite(q)) q = 0;
    const Rational xv = rat::decode(x, F32).v, qv = rat::decode(q, F32).v;
    const Rational diff = xv > qv ? Rational(xv - qv) : Rational(qv - xv);
    const std::uint32_t d = rat::rn32(diff);
    ASSERT_EQ(f32_sub_abs(x, q), d) << hex32(x) << " " << hex32(q);
    const std::uint32_t want =
        (d & 0x7FFFFFFFu) == 0x7F800000u ? kF32Inf : rat::rn32(rat::decode(d, F32).v / (xv < 0 ? Rational(-xv) : xv));
    ASSERT_EQ(relative_error(x, q), want) << hex32(x) << " " << hex32(q);
  }
}

// ---- §22 --------------------------------------------------------------------------------------

TEST(ExactSum, BitPositions) {  // §22.1 k = e · 2^149
  ExactSum s;
  s.add(0x3F800000u);  // 1.0 -> 2^149: limb 2, bit 21
  EXPECT_EQ(s.limbs(), (std::array<std::uint64_t, 5>{0, 0, std::uint64_t{1} << 21, 0, 0}));
  ExactSum t;
  t.add(0x00000001u);  // 2^-149 -> 1
  EXPECT_EQ(t.limbs(), (std::array<std::uint64_t, 5>{1, 0, 0, 0, 0}));
  ExactSum m;
  m.add(0x7F7FFFFFu);  // FLT_MAX = 0xFFFFFF · 2^104 -> 0xFFFFFF · 2^253: 253 = 3·64 + 61
  EXPECT_EQ(m.limbs(), (std::array<std::uint64_t, 5>{0, 0, 0, 0xE000000000000000ull, 0x1FFFFFull}));
  // carry across limbs: (2^24 − 1) · 2^40 (field 41, fraction all ones: 0x14FFFFFF) plus
  // 2^40 units of 2^-149 is exactly 2^64: limb 0 becomes 0, limb 1 becomes 1.
  ExactSum carry;
  carry.add(0x14FFFFFFu);
  EXPECT_EQ(carry.limbs()[0], 0xFFFFFF0000000000ull);
  carry.add_multiple(0x00000001u, std::uint64_t{1} << 40);
  EXPECT_EQ(carry.limbs(), (std::array<std::uint64_t, 5>{0, 1, 0, 0, 0}));
  EXPECT_THROW(s.add_multiple(kF32Inf, 1), std::invalid_argument);
  EXPECT_THROW(s.add_multiple(0xBF800000u, 1), std::invalid_argument);
}

// §22.2 2^40 terms of the largest binary32 fit: S = (2^24 − 1) · 2^253 · 2^40 < 2^317.
TEST(ExactSum, WidthFor2To40Terms) {
  ExactSum s;
  s.add_multiple(0x7F7FFFFFu, ExactSum::kMaxTerms);
  const BigUInt want = BigUInt(0xFFFFFFull) << (253 + 40);
  EXPECT_EQ(s.value(), want);
  EXPECT_EQ(s.value().bit_length(), 317);
  ExactSum t = s;
  t += s;  // 2^41 terms: 318 bits, still no carry out
  EXPECT_EQ(t.value(), want << 1);
  EXPECT_THROW(s.add_multiple(0x3F800000u, ExactSum::kMaxTerms + 1), std::invalid_argument);
}

TEST(ExactSum, AddMultipleIsRepeatedAdd) {
  SplitMix64 g(22);
  for (int t = 0; t < 2000; ++t) {
    const std::uint32_t e = static_cast<std::uint32_t>(g.next()) % 0x7F800000u;
    const std::uint64_t k = g.next() % 40;
    ExactSum a, b;
    a.add_multiple(e, k);
    for (std::uint64_t i = 0; i < k; ++i) b.add(e);
    ASSERT_EQ(a, b) << hex32(e) << " x" << k;
    ASSERT_EQ(rat::rn32(mortest::rational_of(a)),
              rat::rn32(Rational(static_cast<unsigned long long>(k)) * rat::decode(e, F32).v));
  }
}

ExactSum sum_of_errors(std::initializer_list<std::uint32_t> es) {
  ExactSum s;
  for (std::uint32_t e : es) s.add(e);
  return s;
}

TEST(ExactSum, TextIsExact) {
  ExactSum s;
  s.add(0x3F800000u);  // 1
  s.add(0x3F000000u);  // 0.5
  s.add(0x00000001u);  // 2^-149
  // 1.5 + 2^-149: fraction bits 1 (0.5) and 149; 149 bits pad to 38 hex digits, bit 149 is
  // the top bit of the 38th digit: "8", 36 zeros, "8".
  EXPECT_EQ(s.hexfloat(), "0x1.8" + std::string(36, '0') + "8p+0");
  ExactSum t;
  t.add(0x3D800000u);  // 0.0625
  t.add(0x3E000000u);  // 0.125
  EXPECT_EQ(t.decimal(), "0.1875");
  EXPECT_EQ(t.hexfloat(), "0x1.8p-3");
  EXPECT_EQ(ExactSum{}.decimal(), "0");
}

// §22.3 An ErrorSum is (S, n, zeros, non-finite inputs, non-finite Q); merging adds every field;
// "finite" means both non-finite counts are 0. Hand values: a = {S = 1 + 0.5, n 2, zeros 1,
// 0 non-finite}, b = {S = 0.25, n 1, zeros 3, 2 NaN / Inf inputs, 1 non-finite Q}:
// a + b = {S = 1.75, n 3, zeros 4, inputs 2, Q 1}; the merge in either order is the same.
TEST(ErrorSum, MergingAddsEveryField) {
  ErrorSum a;
  a.sum.add(0x3F800000u);  // 1
  a.sum.add(0x3F000000u);  // 0.5
  a.n = 2;
  a.zeros = 1;
  ErrorSum b;
  b.sum.add(0x3E800000u);  // 0.25
  b.n = 1;
  b.zeros = 3;
  b.nonfinite_input = 2;
  b.nonfinite_quant = 1;
  EXPECT_TRUE(a.finite());
  EXPECT_FALSE(b.finite());
  ErrorSum ab = a;
  ab += b;
  EXPECT_EQ(ab.sum, sum_of_errors({0x3FE00000u}));  // 1.75 = 1.75 · 2^0
  EXPECT_EQ(ab.n, 3u);
  EXPECT_EQ(ab.zeros, 4u);
  EXPECT_EQ(ab.nonfinite_input, 2u);
  EXPECT_EQ(ab.nonfinite_quant, 1u);
  EXPECT_FALSE(ab.finite());
  ErrorSum ba = b;
  ba += a;
  EXPECT_EQ(ba, ab);
  // one non-finite count alone makes a sum not finite
  ErrorSum q;
  q.nonfinite_quant = 1;
  EXPECT_FALSE(q.finite());
  ErrorSum i;
  i.nonfinite_input = 1;
  EXPECT_FALSE(i.finite());
  EXPECT_TRUE(ErrorSum{}.finite());
}

// ---- §23 --------------------------------------------------------------------------------------

TEST(Threshold, ParsesExactly) {  // §23.2
  auto parse = [](const char* s) {
    Threshold t;
    const std::string err = Threshold::parse(s, t);
    EXPECT_TRUE(err.empty()) << s << ": " << err;
    return t;
  };
  EXPECT_EQ(parse("0.045"), (Threshold{9, 200}));
  EXPECT_EQ(parse(".045"), (Threshold{9, 200}));
  EXPECT_EQ(parse("4.5%"), (Threshold{9, 200}));
  EXPECT_EQ(parse("9/200"), (Threshold{9, 200}));
  EXPECT_EQ(parse("18/400"), (Threshold{9, 200}));
  EXPECT_EQ(parse("0.044"), (Threshold{11, 250}));
  EXPECT_EQ(parse("5%"), (Threshold{1, 20}));
  EXPECT_EQ(parse("1"), (Threshold{1, 1}));
  EXPECT_EQ(parse("0"), (Threshold{0, 1}));
  EXPECT_EQ(parse("0.1000000000000000000"), (Threshold{1, 10}));  // 19 decimals still fit
}

TEST(Threshold, RejectsMalformed) {  // §23.2
  for (const char* s : {"", "-0.1", "abc", "1e-2", "0.0.1", "1/0", "/2", "3/", "%", ".", "0x1p-4", "0.045 ",
                        "99999999999999999999", "0.1000000000000000055511151231257827"}) {
    Threshold t;
    EXPECT_FALSE(Threshold::parse(s, t).empty()) << "accepted '" << s << "'";
  }
  Threshold t;
  EXPECT_NE(Threshold::parse("-0.1", t).find("negative"), std::string::npos);
}

// §23.1 / §23.2 The tensor-level hand example (test_mor.cpp TensorMor.AcceptedAt45RejectedAt44):
// errors 0, e, e, e with e = RN32(1/17) = 0xF0F0F1 · 2^-28 and n = 4.
// S = 3 · 0xF0F0F1 · 2^-28 = 47370963 · 2^-28; mean = 47370963 · 2^-30 = 0.0441176...;
// 47370963 has 26 bits: 47370963 / 4 = 11842740.75 -> RN32 significand 11842741 = 0xB4B4B5,
// value 0xB4B4B5 · 2^-28 = 1.41176...·2^-5: field 122, fraction 0x34B4B5 -> 0x3D34B4B5.
TEST(Mean, HandWorked) {
  ErrorSum s;
  s.sum.add(0x3D70F0F1u);
  s.sum.add(0x3D70F0F1u);
  s.sum.add(0x3D70F0F1u);
  s.n = 4;
  EXPECT_EQ(mean_f32(s), 0x3D34B4B5u);
  EXPECT_TRUE(mean_below(s, Threshold{9, 200}));                 // 0.04412 < 0.045
  EXPECT_FALSE(mean_below(s, Threshold{11, 250}));               // 0.04412 >= 0.044
  EXPECT_EQ(s.sum.decimal(), "0.1764705888926982879638671875");  // 47370963 / 2^28 exactly
}

// §23.2 The decision uses the exact mean, not RN32(mean). e1 = 0x3D3851EB = 12079595 · 2^-28,
// e2 = 0x3D3851EC = 12079596 · 2^-28 = RN32(0.045) (0.045 · 2^28 = 12079595.52). Their mean
// 12079595.5 · 2^-28 lies below 0.045 (12079595.5 < 12079595.52): accepted. RN32 of that mean
// is a tie between the two codes and goes to the even one, 0x3D3851EC, which is NOT below
// RN32(0.045): a decision made on the rounded mean in binary32 would reject.
TEST(Mean, DecidedOnTheExactMean) {
  ErrorSum s;
  s.sum.add(0x3D3851EBu);
  s.sum.add(0x3D3851ECu);
  s.n = 2;
  EXPECT_TRUE(mean_below(s, Threshold{9, 200}));
  EXPECT_EQ(mean_f32(s), 0x3D3851ECu);
  // strictness (Eq. 2 "<"): a mean exactly equal to the threshold is rejected: 1/8 vs 1/8
  ErrorSum eq;
  eq.sum.add(0x3E000000u);  // 0.125
  eq.n = 1;
  EXPECT_FALSE(mean_below(eq, Threshold{1, 8}));
  EXPECT_TRUE(mean_below(eq, Threshold{1000001, 8000000}));
}

TEST(Mean, NoElementsAndNonFinite) {  // §23.1, §21.3
  ErrorSum zero;
  zero.zeros = 5;
  EXPECT_EQ(mean_f32(zero), 0u);
  EXPECT_TRUE(mean_below(zero, Threshold{9, 200}));
  EXPECT_FALSE(mean_below(zero, Threshold{0, 1}));  // 0 < 0 is false
  ErrorSum bad;
  bad.n = 3;
  bad.nonfinite_quant = 1;
  EXPECT_EQ(mean_f32(bad), kF32NaN);
  EXPECT_FALSE(mean_below(bad, Threshold{1, 1}));
}

// §23 against the oracle: random error multisets, random counts (zeros add to n? no: n counts
// the terms), random thresholds.
TEST(Mean, AgreesWithOracle) {
  SplitMix64 g(23);
  for (int t = 0; t < 3000; ++t) {
    SumWithOracle p;
    auto& [s, o] = p;
    const int k = 1 + static_cast<int>(g.next() % 12);
    for (int i = 0; i < k; ++i) {
      // errors mostly in [2^-12, 2), sometimes tiny or large
      std::uint32_t e = random_error(g, 117, 12);
      if (g.next() % 10 == 0) e = static_cast<std::uint32_t>(g.next() % 0x7F800000u);
      p.add(e);
    }
    s.n = o.n = static_cast<std::uint64_t>(k);
    ASSERT_EQ(mean_f32(s), oracle::rm::mean_rn32(o)) << t;
    ASSERT_EQ(mortest::rational_of(s.sum), o.sum);
    const Threshold th{1 + g.next() % 1000, 1 + g.next() % 20000};
    Rational tr(static_cast<unsigned long long>(th.num));
    tr /= static_cast<unsigned long long>(th.den);
    ASSERT_EQ(mean_below(s, th), oracle::rm::mean_below(o, tr)) << t;
  }
}

// ---- §24.2 Eq. 4 -------------------------------------------------------------------------------

TEST(Range, Eq4HandWorked) {
  const Format& E5 = format(FormatId::f8e5m2);
  auto range_of = [](std::vector<std::uint32_t> f32) {
    const std::size_t n = f32.size();
    const Tensor x(F32, 1, n, std::move(f32));
    return magnitude_range(x.view(), BlockRange{0, 1, 0, x.cols});
  };
  // [1, -2^-20, 0]: max / min = 2^20 < 57344 / 2^-14 = 1.75 · 2^29
  const MagnitudeRange a = range_of({0x3F800000u, 0xB5800000u, 0u});
  EXPECT_EQ(a.max, 0x3F800000u);
  EXPECT_EQ(a.min, 0x35800000u);
  EXPECT_EQ(a.nonzero, 2u);
  EXPECT_TRUE(fits_normal_range(a, E5));
  // [57344, 2^-14]: max · 2^-14 = 57344 · min exactly -> not below (strict): false
  EXPECT_FALSE(fits_normal_range(range_of({0x47600000u, 0x38800000u}), E5));
  // [57344, 2^-14 · (1 + 2^-23)]: min one ulp larger -> true
  EXPECT_TRUE(fits_normal_range(range_of({0x47600000u, 0x38800001u}), E5));
  // [1, 2^-40]: 2^40 >= 1.75 · 2^29 -> false
  EXPECT_FALSE(fits_normal_range(range_of({0x3F800000u, 0x2B800000u}), E5));
  // E4M3: max_finite 448, 2^emin = 2^-6: [448, 2^-6] is equal -> false; [448, 2^-6 + ulp] -> true
  EXPECT_FALSE(fits_normal_range(range_of({0x43E00000u, 0x3C800000u}), format(FormatId::f8e4m3fn)));
  EXPECT_TRUE(fits_normal_range(range_of({0x43E00000u, 0x3C800001u}), format(FormatId::f8e4m3fn)));
  // no non-zero element; a NaN / Inf element
  EXPECT_FALSE(fits_normal_range(range_of({0u, 0x80000000u}), E5));
  EXPECT_FALSE(fits_normal_range(range_of({0x3F800000u, kF32Inf}), E5));
  EXPECT_EQ(range_of({0x3F800000u, kF32NaN}).nonfinite, 1u);
}

// ---- §24.1 ErrorEvaluator -------------------------------------------------------------------

QuantizeSpec gam_spec(FormatId elem, Partition p) { return mor_quantize_spec(format(elem), p); }

// The lookup tables (sources <= 16 bits) give the same sums and fake-quant codes as the
// direct per-element evaluation.
TEST(ErrorEvaluator, MemoizedEqualsDirect) {
  SplitMix64 g(241);
  for (int t = 0; t < 40; ++t) {
    const Format& src = t % 3 == 0 ? format(FormatId::f16) : BF16;
    const Tensor x = mortest::random_tensor(src, 1 + g.next() % 40, 1 + g.next() % 70, g,
                                            2 + static_cast<int>(g.next() % 30), 60, t % 5 == 0 ? 20 : 0);
    const Partition p = Partition::blocks(1 + g.next() % 17, 1 + g.next() % 17);
    const QuantizeSpec q = gam_spec(t % 2 ? FormatId::f8e4m3fn : FormatId::f8e5m2, p);
    ErrorEvaluator memo(x.view(), q), direct(x.view(), q, BF16, false);
    std::vector<std::uint32_t> fm(x.codes.size(), 0), fd(x.codes.size(), 0);
    for (std::size_t b = 0; b < memo.grid().count(); ++b) {
      ASSERT_EQ(memo.block(b), direct.block(b)) << "case " << t << " block " << b;
      memo.fake_block(b, fm);
      direct.fake_block(b, fd);
    }
    ASSERT_EQ(fm, fd) << "case " << t;
    ASSERT_EQ(memo.total(), direct.total());
  }
}

// Block sums, totals, counts and Q(x) against the oracle: every source, scale rules of the
// MoR ablations (gam, amax, mx-floor), every partition kind, Q in bf16 or f32, NaN / Inf.
// §21.1 Q(x) is the §19.6 fake-quant of x in its block converted to F (bf16, or f32: the §19.3
// value itself): the evaluator's fake-quant codes equal the oracle's. §22.3 each block's ErrorSum
// (S, n = finite non-zero elements, zeros, non-finite inputs, non-finite Q) equals the oracle's.
TEST(ErrorEvaluator, AgreesWithOracle) {
  SplitMix64 g(242);
  const ScaleRule rules[] = {ScaleRule::gam, ScaleRule::amax, ScaleRule::mx_floor};
  const FormatId sources[] = {FormatId::bf16, FormatId::f32, FormatId::f16};
  for (int t = 0; t < 150; ++t) {
    const Format& src = format(sources[t % 3]);
    const std::size_t rows = 1 + g.next() % 12, cols = 1 + g.next() % 20;
    const Tensor x =
        mortest::random_tensor(src, rows, cols, g, static_cast<int>(g.next() % 40), 80, t % 4 == 0 ? 40 : 0);
    Partition p;
    switch (g.next() % 4) {
      case 0: p = Partition::tensor(); break;
      case 1: p = Partition::per_row(); break;
      case 2: p = Partition::per_col(); break;
      default: p = Partition::blocks(1 + g.next() % 6, 1 + g.next() % 9); break;
    }
    QuantizeSpec q = gam_spec(t % 2 ? FormatId::f8e4m3fn : FormatId::f8e5m2, p);
    q.rule = rules[(t / 2) % 3];
    const Format& fake = t % 5 == 0 ? F32 : BF16;
    ErrorEvaluator ev(x.view(), q, fake);
    const oracle::rm::Errors o = oracle::rm::errors(mortest::oracle_spec(q, src, rows, cols, fake), x.codes);
    ASSERT_EQ(ev.grid().count(), o.block.size());
    std::vector<std::uint32_t> fq(x.codes.size(), 0);
    for (std::size_t b = 0; b < o.block.size(); ++b) {
      const ErrorSum& s = ev.block(b);
      const oracle::rm::Sum& w = o.block[b];
      ASSERT_EQ(mortest::rational_of(s.sum), w.sum) << "case " << t << " block " << b;  // §22.3
      ASSERT_EQ(s.n, w.n);
      ASSERT_EQ(s.nonfinite_input, w.nonfinite_input);
      ASSERT_EQ(s.nonfinite_quant, w.nonfinite_quant);
      ASSERT_EQ(s.zeros, w.zeros);
      ev.fake_block(b, fq);
    }
    ASSERT_EQ(fq, o.fake) << "case " << t;  // §21.1 Q(x) in F
    const ErrorSum total = ev.total();
    ASSERT_EQ(mean_f32(total), oracle::rm::mean_rn32(o.total)) << "case " << t;
    ASSERT_EQ(ev.meta().scales, o.quant.scales);
  }
}

TEST(ErrorEvaluator, RejectsBadInput) {
  const Tensor x(BF16, 2, 4, {0x3F80, 0x4000, 0, 0x3F80, 0x3F80, 0x3F80, 0x3F80, 0x3F80});
  QuantizeSpec sr = gam_spec(FormatId::f8e4m3fn, Partition::blocks(1, 2));
  sr.policy.round = Round::sr;
  sr.policy.sr_bits = 8;
  // §21.1 Q must be a function of x and its block's factors: stochastic rounding is an error
  EXPECT_THROW(ErrorEvaluator(x.view(), sr), std::invalid_argument);
  const QuantizeSpec ok = gam_spec(FormatId::f8e4m3fn, Partition::blocks(1, 2));
  EXPECT_THROW(ErrorEvaluator(x.view(), ok, format(FormatId::f8e5m2)), std::invalid_argument);
  ErrorEvaluator ev(x.view(), ok);
  EXPECT_THROW(ev.region(BlockRange{0, 1, 1, 3}), std::invalid_argument);  // straddles blocks
  EXPECT_THROW(ev.block(8), std::out_of_range);
  EXPECT_EQ(ev.blocks_in(BlockRange{0, 2, 2, 4}), (std::vector<std::size_t>{1, 3}));
}

// ---- §29 backward error --------------------------------------------------------------------

// L = [1.0625, 448] (1 x 2), R = [1, 1]ᵀ (2 x 1), FP32 amax scale per tensor, f8e4m3fn.
// Q(L): amax 448, S = 1: 1.0625 is the E4M3 tie between 1 and 1.125 -> 1.0; 448 exact.
// Q(R): amax 1, S = 448: 448 -> 448 / 448 = 1 (exact).
// L·R = 449.0625, Q(L)·Q(R) = 449: |difference| = 0.0625; |L|·|R| = 449.0625.
// BE = RN32(0.0625 / 449.0625) = RN32(1/7185): 2^36 / 7185 = 9564297.39 (24 bits) -> 9564297 =
// 0x91F089 · 2^-36 = 1.14...·2^-13: field 114, fraction 0x11F089 -> 0x3911F089.
TEST(BackwardError, HandWorked) {
  const Tensor L(F32, 1, 2, {0x3F880000u, 0x43E00000u}), R(F32, 2, 1, {0x3F800000u, 0x3F800000u});
  QuantizeSpec q;  // amax, tensor, f8e4m3fn, saturating
  const BackwardError be = backward_error(L.view(), R.view(), q, q);
  ASSERT_EQ(be.be.size(), 1u);
  EXPECT_EQ(be.be[0], 0x3911F089u);
  EXPECT_EQ(be.max, 0x3911F089u);
  EXPECT_EQ(be.mean, 0x3911F089u);
  // a zero row of L: denominator 0 -> BE 0
  const Tensor Z(F32, 1, 2, {0u, 0x80000000u});
  EXPECT_EQ(backward_error(Z.view(), R.view(), q, q).be[0], 0u);
}

TEST(BackwardError, AgreesWithOracle) {
  SplitMix64 g(29);
  for (int t = 0; t < 60; ++t) {
    const Format& src = t % 2 ? BF16 : F32;
    const std::size_t M = 1 + g.next() % 5, K = 1 + g.next() % 9, N = 1 + g.next() % 5;
    const Tensor L = mortest::random_tensor(src, M, K, g, static_cast<int>(g.next() % 24), 100);
    const Tensor R = mortest::random_tensor(src, K, N, g, static_cast<int>(g.next() % 24), 100);
    QuantizeSpec lq, rq;
    lq.element = rq.element = &format(t % 3 ? FormatId::f8e4m3fn : FormatId::f8e5m2);
    lq.partition = Partition::per_channel(GemmOperand::lhs);
    rq.partition = Partition::per_channel(GemmOperand::rhs);
    if (t % 4 == 1) {
      lq.rule = rq.rule = ScaleRule::int8;
      lq.element = rq.element = &format(FormatId::int8);
    }
    const BackwardError be = backward_error(L.view(), R.view(), lq, rq);
    const std::vector<std::uint32_t> want = oracle::rm::backward_error(mortest::oracle_spec(lq, src, M, K), L.codes,
                                                                       mortest::oracle_spec(rq, src, K, N), R.codes);
    ASSERT_EQ(be.be, want) << "case " << t;
    ASSERT_EQ(be.max, *std::max_element(want.begin(), want.end()));
    Rational sum = 0;
    for (std::uint32_t w : want) sum += rat::decode(w, F32).v;
    ASSERT_EQ(mortest::rational_of(be.sum), sum);
    ASSERT_EQ(be.mean, rat::rn32(sum / Rational(static_cast<unsigned long long>(M * N))));
  }
}

// §29.1 the backward error of a computed D. With the §29 example's D = Q(L)·Q(R) = 449 (exact in
// binary32): |449.0625 − 449| / 449.0625 = RN32(1/7185) = 0x3911F089, as above.
TEST(BackwardError, OfAComputedProductHandWorked) {
  const Tensor L(F32, 1, 2, {0x3F880000u, 0x43E00000u}), R(F32, 2, 1, {0x3F800000u, 0x3F800000u});
  const std::vector<std::uint32_t> d = {0x43E08000u};  // 449
  const BackwardError be = backward_error_of(L.view(), R.view(), d);
  EXPECT_EQ(be.be, std::vector<std::uint32_t>{0x3911F089u});
  EXPECT_EQ(be.max, 0x3911F089u);
  EXPECT_EQ(be.mean, 0x3911F089u);
  // D exactly L·R (449.0625 = 0x43E08800): 0; a zero row with D = -0: 0
  EXPECT_EQ(backward_error_of(L.view(), R.view(), std::vector<std::uint32_t>{0x43E08800u}).be[0], 0u);
  const Tensor Z(F32, 1, 2, {0u, 0x80000000u});
  EXPECT_EQ(backward_error_of(Z.view(), R.view(), std::vector<std::uint32_t>{0x80000000u}).be[0], 0u);
  // errors: a non-zero D where every product is zero, a NaN D, a D of the wrong size
  EXPECT_THROW(backward_error_of(Z.view(), R.view(), std::vector<std::uint32_t>{0x3F800000u}), std::invalid_argument);
  EXPECT_THROW(backward_error_of(L.view(), R.view(), std::vector<std::uint32_t>{kF32NaN}), std::invalid_argument);
  EXPECT_THROW(backward_error_of(L.view(), R.view(), std::vector<std::uint32_t>{0u, 0u}), std::invalid_argument);
}

// §29.1 against the oracle: D from the recipe GEMM of §40.6 (te_mxfp8 under
// sm100_tcgen05_mxf8f6f4, deepgemm under sm90_wgmma_f8) and D a binary32 value near the exact sum.
TEST(BackwardError, OfAComputedProductAgreesWithOracle) {
  SplitMix64 g(291);
  int compared = 0;
  for (int t = 0; t < 24; ++t) {
    const Format& src = t % 2 ? BF16 : F32;
    const bool deep = t % 3 == 2;
    const std::size_t M = 1 + g.next() % 3, K = deep ? 128 : 32 * (1 + g.next() % 3), N = 1 + g.next() % 4;
    const Tensor L = mortest::random_tensor(src, M, K, g, static_cast<int>(g.next() % 12), 100);
    const Tensor R = mortest::random_tensor(src, K, N, g, static_cast<int>(g.next() % 12), 100);
    const GemmRecipe& r = *find_gemm_recipe(deep ? "deepgemm" : "te_mxfp8");
    const RecipeGemmOperands q = quantize_for_gemm(r, format(FormatId::f8e4m3fn), L.view(), R.view());
    MmaSpec s;
    s.profile = find_mma_profile(deep ? "sm90_wgmma_f8" : "sm100_tcgen05_mxf8f6f4");
    s.c = MmaType::f32;
    GemmOptions go;
    recipe_gemm_spec(r, q, K, s, go);
    std::vector<std::uint32_t> d(M * N);
    gemm(s, go, M, N, K, q.a, q.b, std::vector<std::uint32_t>(M * N, 0), d,
         s.block ? std::span(q.sa) : std::span<const std::uint32_t>{},
         s.block ? std::span(q.sb) : std::span<const std::uint32_t>{});
    bool finite = true;
    for (std::uint32_t v : d) finite = finite && f32_is_finite(v);
    if (!finite) continue;
    for (int variant = 0; variant < 2; ++variant) {
      if (variant) {  // a binary32 value a few units from D
        for (std::uint32_t& v : d) v = (v & 0x7FFFFFFFu) > 4 ? v + static_cast<std::uint32_t>(g.next() % 5) - 2u : v;
      }
      const BackwardError be = backward_error_of(L.view(), R.view(), d);
      const std::vector<std::uint32_t> want =
          oracle::rm::backward_error_of(L.codes, src.id, R.codes, src.id, M, K, N, d);
      ASSERT_EQ(be.be, want) << "case " << t << " variant " << variant;
      ++compared;
    }
  }
  EXPECT_GE(compared, 40);  // 24 cases x 2 variants, a few GEMMs may overflow to Inf
}

TEST(BackwardError, RejectsBadInput) {
  const Tensor L(F32, 1, 2, {0x3F800000u, kF32NaN}), R(F32, 2, 1, {0x3F800000u, 0x3F800000u}),
      R3(F32, 3, 1, {0u, 0u, 0u});
  QuantizeSpec q;
  EXPECT_THROW(backward_error(L.view(), R.view(), q, q), std::invalid_argument);   // NaN
  EXPECT_THROW(backward_error(R.view(), R3.view(), q, q), std::invalid_argument);  // 2x1 · 3x1
}

}  // namespace
}  // namespace numref
