// numref tests — INT8 symmetric quantization ([MD] Eq. 1).          spec §20
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "numref/int8.hpp"

namespace numref {
namespace {

const Format& F32 = format(FormatId::f32);

std::vector<std::uint8_t> run(const std::vector<std::uint32_t>& x, const Int8Spec& s, QuantizeResult* res = nullptr,
                              std::span<const std::uint32_t> rnd = {}) {
  std::vector<std::uint8_t> codes(x.size());
  QuantizeResult r = quantize_int8(TensorView::vector(F32, x.data(), x.size()), s, codes, rnd);
  if (res) *res = r;
  return codes;
}

// Hand-worked: a tensor whose amax is 127.5·δ. x = [255, -255, 3, 5], variant 127.5:
//   δ = RN32(255 / 127.5) = 2 exactly (0x40000000).
//   x / δ = 127.5, -127.5, 1.5, 2.5.
//   rne:  128 -> out of [-128, 127] -> 127 (saturated); -128 (even); 2; 2 (even)
//   rna:  128 -> 127 (saturated); -128; 2; 3
//   ceil: 128 -> 127 (saturated); -127; 2; 3
// Codes are two's complement bytes: 127 = 7F, -128 = 80, -127 = 81.
TEST(Int8, AmaxIs127Point5TimesDelta) {  // §20.1 – §20.3
  const std::vector<std::uint32_t> x = {0x437F0000u, 0xC37F0000u, 0x40400000u, 0x40A00000u};
  Int8Spec s;
  s.variant = Int8Variant::d127_5;
  QuantizeResult r;
  EXPECT_EQ(run(x, s, &r), (std::vector<std::uint8_t>{0x7F, 0x80, 0x02, 0x02}));
  EXPECT_EQ(r.meta.scales[0], 0x40000000u);
  EXPECT_EQ(r.total.saturated, 1u);
  s.round = Int8Round::rna;
  EXPECT_EQ(run(x, s), (std::vector<std::uint8_t>{0x7F, 0x80, 0x02, 0x03}));
  s.round = Int8Round::ceil;
  EXPECT_EQ(run(x, s), (std::vector<std::uint8_t>{0x7F, 0x81, 0x02, 0x03}));
  // dequantize the ceil codes: q·δ = 127·2, -127·2, 2·2, 3·2 = 254, -254, 4, 6
  std::vector<std::uint8_t> codes = run(x, s, &r);
  std::vector<std::uint32_t> out(4);
  dequantize(codes, r.meta, out);
  EXPECT_EQ(out, (std::vector<std::uint32_t>{0x437E0000u, 0xC37E0000u, 0x40800000u, 0x40C00000u}));
}

// Variant 127 (the default): δ = RN32(amax / 127), codes in [-127, 127].
// amax = 1: δ = RN32(1/127) = 0x3C010204 = 0.0078740157 < 1/127, so 1/δ = 127.0000002:
//   rne -> 127; the ceiling of Eq. 1 -> 128 -> clamped to 127 and counted saturated.
//   -1/δ = -127.0000002: rne -> -127; never -128 (symmetric range).
TEST(Int8, Variant127SymmetricAndTheEq1Ceiling) {                                             // §20.1 – §20.3
  const std::vector<std::uint32_t> x = {0x3F800000u, 0xBF800000u, 0x3E4CCCCDu, 0xBE4CCCCDu};  // 1, -1, 0.2, -0.2
  Int8Spec s;
  QuantizeResult r;
  // 0.2 / δ = 25.4 -> 25 (0x19); -25 = 0xE7
  EXPECT_EQ(run(x, s, &r), (std::vector<std::uint8_t>{0x7F, 0x81, 0x19, 0xE7}));
  EXPECT_EQ(r.meta.scales[0], 0x3C010204u);
  EXPECT_EQ(r.total.saturated, 0u);
  s.round = Int8Round::ceil;  // ceil(25.4) = 26, ceil(-25.4) = -25
  EXPECT_EQ(run(x, s, &r), (std::vector<std::uint8_t>{0x7F, 0x81, 0x1A, 0xE7}));
  EXPECT_EQ(r.total.saturated, 1u);  // 127.0000002 -> 128 -> 127
}

TEST(Int8, ZeroTensorAndNan) {  // §20.1
  const std::vector<std::uint32_t> zeros = {0u, 0x80000000u};
  QuantizeResult r;
  EXPECT_EQ(run(zeros, Int8Spec{}, &r), (std::vector<std::uint8_t>{0x00, 0x00}));  // -0 is 0 in int8
  EXPECT_EQ(r.meta.scales[0], 0x3F800000u);                                        // δ = 1.0 for amax = 0
  // NaN: poisoned (δ NaN, codes by §6.4 nan_to_finite = zero); ignored: the NaN element -> 0
  const std::vector<std::uint32_t> with_nan = {0x7FC00000u, 0x42FE0000u};  // NaN, 127
  EXPECT_EQ(run(with_nan, Int8Spec{}, &r), (std::vector<std::uint8_t>{0x00, 0x00}));
  EXPECT_EQ(r.meta.scales[0], kF32NaN);
  Int8Spec ign;
  ign.amax.nan = AmaxNan::ignore;
  EXPECT_EQ(run(with_nan, ign, &r), (std::vector<std::uint8_t>{0x00, 0x7F}));
  EXPECT_EQ(r.meta.scales[0], 0x3F800000u);  // δ = 127 / 127
}

// Granularity: per channel (rows of the lhs operand) and fine-grained 1 x k.
// 2 x 4 tensor [[1, 2, 3, 4], [-8, 0.5, 0.25, 8]], per row: δ0 = RN32(4/127), δ1 = RN32(8/127).
// δ1 = 8·RN32(1/127) (a power-of-two multiple rounds the same) < 8/127, so
// Row 1: 8 / δ1 = 127.0000002 -> 127, -8 -> -127, 0.5 / δ1 = 7.9375 -> 8, 0.25 / δ1 = 3.97 -> 4.
TEST(Int8, PerChannelAndSubChannel) {  // §20.4
  const std::vector<std::uint32_t> x = {0x3F800000u, 0x40000000u, 0x40400000u, 0x40800000u,
                                        0xC1000000u, 0x3F000000u, 0x3E800000u, 0x41000000u};
  Int8Spec s;
  s.partition = Partition::per_channel(GemmOperand::lhs);
  std::vector<std::uint8_t> codes(8);
  const QuantizeResult r = quantize_int8(TensorView(F32, x.data(), 2, 4), s, codes);
  ASSERT_EQ(r.meta.scales.size(), 2u);
  EXPECT_EQ(std::vector<std::uint8_t>(codes.begin() + 4, codes.end()),
            (std::vector<std::uint8_t>{0x81, 0x08, 0x04, 0x7F}));
  EXPECT_EQ(codes[3], 0x7F);  // 4 / δ0 -> 127
  // 1 x 2 sub-channels: block [1, 2] -> δ = RN32(2/127) = 2·RN32(1/127) < 2/127, 2 / δ -> 127
  s.partition = Partition::sub_channel(GemmOperand::lhs, 2);
  const QuantizeResult r2 = quantize_int8(TensorView(F32, x.data(), 2, 4), s, codes);
  EXPECT_EQ(r2.meta.scales.size(), 4u);
  EXPECT_EQ(codes[1], 0x7F);
}

// Stochastic rounding of x / δ, with the 127.5 variant for exact quotients: x = [255, 0.5]:
// δ = 2; 0.5 / 2 = 0.25 with k = 2: f_k = 1 -> up iff 1 + r >= 4, i.e. r = 3.
TEST(Int8, StochasticRounding) {  // §20.3, §5.1
  const std::vector<std::uint32_t> x = {0x437F0000u, 0x3F000000u};
  Int8Spec s;
  s.variant = Int8Variant::d127_5;
  s.round = Int8Round::sr;
  s.sr_bits = 2;
  const std::vector<std::uint32_t> r_low = {0, 2}, r_high = {0, 3};
  EXPECT_EQ(run(x, s, nullptr, r_low)[1], 0x00);
  EXPECT_EQ(run(x, s, nullptr, r_high)[1], 0x01);
}

TEST(Int8, SpecIsTheGenericQuantize) {  // §20: the INT8 layer is quantize() with the int8 rules
  Int8Spec s;
  s.variant = Int8Variant::d127_5;
  s.round = Int8Round::ceil;
  const QuantizeSpec q = int8_quantize_spec(s);
  EXPECT_EQ(q.rule, ScaleRule::int8_127_5);
  EXPECT_EQ(q.element->id, FormatId::int8);
  EXPECT_EQ(q.policy.round, Round::rup);
  EXPECT_EQ(*q.apply, ScaleApply::fused);
}

}  // namespace
}  // namespace numref
