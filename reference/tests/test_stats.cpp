// numref tests — MoR statistics: 0.5 % histogram bins decided exactly, per-tensor rows and
// fallback counts, exact percentages, and tensor moments against hand computation and the
// rational oracle.                                                    spec §28
#include <gtest/gtest.h>

#include "numref/stats.hpp"
#include "test_mor_cases.hpp"

namespace numref {
namespace {

using namespace mortest;  // Tensor, Rational, SplitMix64, F32, BF16

// An ErrorSum with sum `ones` · 1.0 + extra and n elements.
ErrorSum sum_of(std::uint64_t ones, std::uint64_t n, std::uint32_t extra = 0) {
  ErrorSum s;
  s.sum.add_multiple(0x3F800000u, ones);
  if (extra) s.sum.add(extra);
  s.n = n;
  return s;
}

// §28.1 bin i = [i · 0.5 %, (i + 1) · 0.5 %), overflow >= 5.5 %, membership exact.
TEST(Histogram, BinsAreExact) {
  EXPECT_EQ(histogram_bin(sum_of(0, 0)), 0u);      // no element: mean 0
  EXPECT_EQ(histogram_bin(sum_of(0, 7)), 0u);      // mean 0
  EXPECT_EQ(histogram_bin(sum_of(1, 201)), 0u);    // 1/201 = 0.4975 % < 0.5 %
  EXPECT_EQ(histogram_bin(sum_of(1, 200)), 1u);    // 1/200 = 0.5 % exactly: the lower edge of bin 1
  EXPECT_EQ(histogram_bin(sum_of(9, 200)), 9u);    // 4.5 %: bin 9 = [4.5 %, 5 %)
  EXPECT_EQ(histogram_bin(sum_of(11, 201)), 10u);  // 5.47 %
  EXPECT_EQ(histogram_bin(sum_of(11, 200)), 11u);  // 5.5 % exactly: the overflow bin
  EXPECT_EQ(histogram_bin(sum_of(3, 1)), 11u);     // 300 %
  // The tensor-level hand example: mean 0.0441176 (test_mor TensorMor.AcceptedAt45RejectedAt44)
  ErrorSum h;
  h.sum.add_multiple(0x3D70F0F1u, 3);
  h.n = 4;
  EXPECT_EQ(histogram_bin(h), 8u);  // [4 %, 4.5 %)
  // one 2^-149 above the edge 1/200 still lands in bin 1; an exact edge minus nothing stays
  EXPECT_EQ(histogram_bin(sum_of(1, 200, 0x00000001u)), 1u);
  ErrorSum bad = sum_of(1, 3);
  bad.nonfinite_input = 1;
  EXPECT_FALSE(histogram_bin(bad).has_value());
  HistogramSpec coarse;
  coarse.width = Threshold{1, 10};
  coarse.bins = 3;
  EXPECT_EQ(histogram_bin(sum_of(1, 4), coarse), 2u);  // 25 % in [20 %, 30 %)
  EXPECT_EQ(histogram_bin(sum_of(1, 2), coarse), 3u);  // 50 %: overflow (>= 30 %)
  coarse.bins = 0;
  EXPECT_THROW(histogram_bin(sum_of(1, 2), coarse), std::invalid_argument);
}

// §28.1 against the oracle's bin (the first i with mean < (i + 1) w) on random sums.
TEST(Histogram, AgreesWithOracle) {
  SplitMix64 g(281);
  for (int t = 0; t < 3000; ++t) {
    SumWithOracle p;
    auto& [s, o] = p;
    const int k = 1 + static_cast<int>(g.next() % 8);
    for (int i = 0; i < k; ++i) p.add(random_error(g, 115, 10));
    s.n = o.n = static_cast<std::uint64_t>(k) + g.next() % 3;
    ASSERT_EQ(histogram_bin(s), oracle::rm::bin(o, Rational(1, 200), 11)) << t;
  }
}

TEST(Histogram, RowsLabelsAndFallbacks) {  // §28.2, §28.3
  ErrorHistogram h;
  h.add("fc2.act", sum_of(1, 10), true);       // 10 %: overflow
  h.add("fc1.weight", sum_of(1, 100), false);  // 1 %: bin 2
  h.add("fc2.act", sum_of(1, 40), false);      // 2.5 %: bin 5
  ErrorSum bad = sum_of(0, 1);
  bad.nonfinite_quant = 1;
  h.add("fc2.act", bad, true);
  ASSERT_EQ(h.rows().size(), 2u);
  const HistogramRow& a = h.rows()[0];
  EXPECT_EQ(a.name, "fc2.act");
  EXPECT_EQ(a.observations, 3u);
  EXPECT_EQ(a.fallbacks, 2u);
  EXPECT_EQ(a.nonfinite, 1u);
  EXPECT_EQ(a.counts, (std::vector<std::uint64_t>{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(h.rows()[1].counts[2], 1u);
  EXPECT_EQ(h.observations(), 4u);
  EXPECT_EQ(h.fallbacks(), 2u);
  EXPECT_EQ(h.bin_label(0), "[0%,0.5%)");
  EXPECT_EQ(h.bin_label(1), "[0.5%,1%)");
  EXPECT_EQ(h.bin_label(9), "[4.5%,5%)");
  EXPECT_EQ(h.bin_label(11), ">=5.5%");
  HistogramSpec third;
  third.width = Threshold{1, 3};
  third.bins = 2;
  EXPECT_EQ(ErrorHistogram(third).bin_label(1), "[100/3%,200/3%)");
}

// §28.2 MoR §4.1.3 resets the histogram every 6000 steps: with reset_every = 6000 the steps
// 0 and 5999 share the window [0, 6000), 6000 and 11999 the next; rows are (name, window) in
// first-seen order, and an observation without a step is refused.
TEST(Histogram, ResetEveryNStepsStartsANewRow) {
  HistogramSpec spec;
  spec.reset_every = 6000;
  ErrorHistogram h(spec);
  h.add("fc2", sum_of(1, 100), false, 0);      // 1 %: bin 2, window 0
  h.add("fc2", sum_of(1, 10), true, 5999);     // 10 %: overflow, window 0
  h.add("fc2", sum_of(1, 40), false, 6000);    // 2.5 %: bin 5, window 1
  h.add("fc1", sum_of(0, 5), false, 11999);    // 0 %: bin 0, window 1 of fc1
  h.add("fc2", sum_of(1, 200), false, 11999);  // 0.5 %: bin 1, window 1
  ASSERT_EQ(h.rows().size(), 3u);
  EXPECT_EQ(h.row_label(h.rows()[0]), "fc2 steps [0,6000)");
  EXPECT_EQ(h.row_label(h.rows()[1]), "fc2 steps [6000,12000)");
  EXPECT_EQ(h.row_label(h.rows()[2]), "fc1 steps [6000,12000)");
  EXPECT_EQ(h.rows()[0].observations, 2u);
  EXPECT_EQ(h.rows()[0].fallbacks, 1u);
  EXPECT_EQ(h.rows()[0].counts, (std::vector<std::uint64_t>{0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(h.rows()[1].counts, (std::vector<std::uint64_t>{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(h.rows()[2].counts[0], 1u);
  EXPECT_EQ(h.observations(), 5u);
  EXPECT_THROW(h.add("fc2", sum_of(1, 100), false), std::invalid_argument);
  // without windows the step is ignored: one row per name
  ErrorHistogram all;
  all.add("fc2", sum_of(1, 100), false, 0);
  all.add("fc2", sum_of(1, 100), false, 6000);
  ASSERT_EQ(all.rows().size(), 1u);
  EXPECT_EQ(all.row_label(all.rows()[0]), "fc2");
}

TEST(Percent, RoundsExactly) {  // §28.3
  EXPECT_EQ(percent_string(1, 8), "12.50");
  EXPECT_EQ(percent_string(1, 3), "33.33");
  EXPECT_EQ(percent_string(2, 3), "66.67");
  EXPECT_EQ(percent_string(0, 5), "0.00");
  EXPECT_EQ(percent_string(5, 5), "100.00");
  EXPECT_EQ(percent_string(1, 800), "0.12");  // 0.125 %: a tie, to the even 0.12
  EXPECT_EQ(percent_string(3, 800), "0.38");  // 0.375 %: a tie, to the even 0.38
  EXPECT_EQ(percent_string(1, 3, 0), "33");
  EXPECT_EQ(percent_string(2, 3, 4), "66.6667");
  EXPECT_THROW(percent_string(1, 0), std::invalid_argument);
}

// §28.4 by hand.
// [1, 2, 3, 4]: μ = 2.5; deviations ±1.5, ±0.5: m2 = (2.25 + 0.25) · 2 / 4 = 1.25 (0x3FA00000);
// m3 = 0; m4 = (5.0625 + 0.0625) · 2 / 4 = 2.5625; kurtosis = 2.5625 / 1.5625 = 1.64 = 41/25:
// 1.64 · 2^23 = 13757317.12 -> 13757317 = 0xD1EB85: 0x3FD1EB85.
// [0, 0, 3]: μ = 1; deviations -1, -1, 2: m2 = 6/3 = 2, m3 = 6/3 = 2, m4 = 18/3 = 6;
// skewness = 2 / 2^1.5 = 1/sqrt(2): RN32 = 0x3F3504F3 (sqrt(0.5) = 0.70710678118...,
// 0.70710678118 · 2^24 = 11863283.2 -> 11863283 = 0xB504F3); kurtosis = 6 / 4 = 1.5.
TEST(Moments, HandWorked) {
  const Tensor a(F32, 1, 4, {0x3F800000u, 0x40000000u, 0x40400000u, 0x40800000u});
  const Moments m = tensor_moments(a.view());
  EXPECT_EQ(m.n, 4u);
  EXPECT_EQ(m.mean, 0x40200000u);
  EXPECT_EQ(m.variance, 0x3FA00000u);
  EXPECT_EQ(m.skewness, 0u);
  EXPECT_EQ(m.kurtosis, 0x3FD1EB85u);
  const Tensor b(BF16, 1, 3, {0x0000, 0x8000, 0x4040});
  const Moments s = tensor_moments(b.view());
  EXPECT_EQ(s.mean, 0x3F800000u);
  EXPECT_EQ(s.variance, 0x40000000u);
  EXPECT_EQ(s.skewness, 0x3F3504F3u);
  EXPECT_EQ(s.kurtosis, 0x3FC00000u);
  const Tensor c(BF16, 1, 3, {0x0000, 0x0000, 0xC040});  // mirrored: skewness -1/sqrt(2)
  EXPECT_EQ(tensor_moments(c.view()).skewness, 0xBF3504F3u);
  EXPECT_EQ(tensor_moments(c.view()).mean, 0xBF800000u);
  // constant: variance 0, no skewness or kurtosis; NaN / Inf are excluded and counted
  const Tensor d(BF16, 1, 4, {0x40A0, 0x40A0, 0x7FC0, 0xFF80});
  const Moments k = tensor_moments(d.view());
  EXPECT_EQ(k.n, 2u);
  EXPECT_EQ(k.nonfinite, 2u);
  EXPECT_EQ(k.mean, 0x40A00000u);
  EXPECT_EQ(k.variance, 0u);
  EXPECT_FALSE(k.skewness.has_value());
  EXPECT_FALSE(k.kurtosis.has_value());
  const Tensor e(BF16, 1, 1, {0x7FC0});
  EXPECT_FALSE(tensor_moments(e.view()).mean.has_value());
}

// §28.4 against the oracle (central sums with the rational mean; square roots by bisection).
TEST(Moments, AgreesWithOracle) {
  SplitMix64 g(284);
  const FormatId sources[] = {FormatId::f32, FormatId::bf16, FormatId::f16};
  for (int t = 0; t < 120; ++t) {
    const Format& src = format(sources[t % 3]);
    const Tensor x = random_shaped_tensor(src, g, 6, 12, 60, 150, t % 5 == 0 ? 50 : 0);
    const Moments m = tensor_moments(x.view());
    const oracle::rm::Moments o = oracle::rm::moments(src.id, x.codes);
    ASSERT_EQ(m.n, o.n) << t;
    ASSERT_EQ(m.nonfinite, o.nonfinite);
    ASSERT_EQ(m.mean, o.mean) << t;
    ASSERT_EQ(m.variance, o.variance) << t;
    ASSERT_EQ(m.skewness, o.skewness) << t;
    ASSERT_EQ(m.kurtosis, o.kurtosis) << t;
  }
  // extremes: the largest and smallest binary32 magnitudes together
  const Tensor w(F32, 1, 3, {0x7F7FFFFFu, 0x00000001u, 0xFF7FFFFFu});
  const Moments m = tensor_moments(w.view());
  const oracle::rm::Moments o = oracle::rm::moments(FormatId::f32, w.codes);
  EXPECT_EQ(m.mean, o.mean);
  EXPECT_EQ(m.variance, o.variance);  // overflows binary32: +Inf in both
  EXPECT_EQ(m.skewness, o.skewness);
  EXPECT_EQ(m.kurtosis, o.kurtosis);
}

// The oracle's square root by bisection, checked on perfect squares and known roots.
TEST(Moments, OracleSquareRoot) {
  EXPECT_EQ(oracle::rm::rn32_sqrt(Rational(1, 2), false), 0x3F3504F3u);
  EXPECT_EQ(oracle::rm::rn32_sqrt(Rational(9, 4), true), 0xBFC00000u);  // -1.5
  EXPECT_EQ(oracle::rm::rn32_sqrt(Rational(0), false), 0u);
}

}  // namespace
}  // namespace numref
