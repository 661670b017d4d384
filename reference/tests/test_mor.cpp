// numref tests — MoR selection: tensor-level MoR (Eq. 1 – 2), sub-tensor MoR (Eq. 3 – 4,
// three-way and two-way), the framework (MoR Algorithm 2) with custom metrics, agreement with
// the exact rational oracle, order independence, and properties.   spec §25 – §27 (§21 – §24)
//
// Hand-worked examples: the derivations are in the comments; bf16 codes are the top 16 bits of
// the binary32 codes (448 = 0x43E0, 1.0625 = 0x3F88, 1 = 0x3F80, 2^-10 = 0x3A80, 2^-20 = 0x3580,
// 2^-40 = 0x2B80, 288 = 1.125 · 2^8 = 0x4390, 0.75 = 0x3F40).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "numref/mor.hpp"
#include "test_mor_cases.hpp"

namespace numref {
namespace {

using namespace mortest;  // Tensor, Rational, SplitMix64, F32, BF16
namespace rat = oracle::rat;

Tensor bf16(std::size_t rows, std::size_t cols, std::vector<std::uint32_t> v) {
  return Tensor(BF16, rows, cols, std::move(v));
}

ExactSum sum_of(std::initializer_list<std::uint32_t> es) {
  ExactSum s;
  for (std::uint32_t e : es) s.add(e);
  return s;
}

// ---- §26 tensor-level MoR: hand-worked ------------------------------------------------------

// x = [448, 1.0625, 1.0625, 1.0625] (1 x 4, one scaling block). GAM: s_g = RN32(448/448) = 1,
// m_g = 0; the block's s_b = 1, m_b = 0 >= m_g: e_b = 0, code 0x7F, G = 1.
// 448 -> E4M3 448 exactly: e = 0. 1.0625 is the E4M3 tie between 1 (mantissa 000) and 1.125 (001)
// -> 1.0 (even); Q = 1/1 = 1 (bf16 exact); d = 1/16, e = RN32(1/17) = 0x3D70F0F1
// (test_metrics RelativeError.HandWorked). n = 4, S = 3 · RN32(1/17), mean = 0.04412 -> RN32
// 0x3D34B4B5 (test_metrics Mean.HandWorked): below 4.5 % (accepted), not below 4.4 % (rejected).
// §26.3 every output: the decision and its reason, the ErrorSum, RN32(mean), the E8M0 code and the
// group mantissa, and the block amax 448 (0x43E00000; the one scaling block holds the tensor).
TEST(TensorMor, AcceptedAt45RejectedAt44) {
  const Tensor x = bf16(1, 4, {0x43E0, 0x3F88, 0x3F88, 0x3F88});
  for (const Partition p : {Partition::blocks(128, 128), Partition::tensor(), Partition::per_row()}) {
    TensorMorSpec spec;
    spec.scaling = p;
    const TensorMorResult r = tensor_mor(x.view(), spec);
    EXPECT_TRUE(r.quantized);
    EXPECT_EQ(r.verdict, (Verdict{true, Reason::accepted}));
    EXPECT_EQ(r.error.n, 4u);
    EXPECT_EQ(r.error.sum, sum_of({0x3D70F0F1u, 0x3D70F0F1u, 0x3D70F0F1u}));
    EXPECT_EQ(r.mean, 0x3D34B4B5u);
    EXPECT_EQ(r.scales.group_mantissa, std::vector<std::uint32_t>{0u});
    EXPECT_EQ(r.scales.scales, std::vector<std::uint32_t>{0x7Fu});
    ASSERT_EQ(r.block_amax.size(), 1u);  // §26.3 the block amaxes
    EXPECT_EQ(r.block_amax[0].f32, 0x43E00000u);
    spec.threshold = Threshold{11, 250};  // 4.4 %
    const TensorMorResult s = tensor_mor(x.view(), spec);
    EXPECT_FALSE(s.quantized);
    EXPECT_EQ(s.verdict, (Verdict{false, Reason::threshold}));  // §25.3 threshold: Eq. 2 false
    EXPECT_EQ(s.mean, 0x3D34B4B5u);
  }
}

// MoR §4.1.3: "as long as there are 2.4 % values that are flushed to zero, the relative error for
// the tensor will exceed 4.5 %". x = [448, 448, 2^-10, 2^-10].
// Per tensor: G = 1 (as above); 2^-10 · 1 = 2^-10 is exactly half of E4M3's smallest subnormal
// 2^-9: a tie between 0 (code 00, even) and 2^-9 -> 0. Both small values are flushed: e = 1
// each; S = 2, n = 4, mean = 0.5 (0x3F000000) -> rejected.
// Per 1 x 2 block: block 0 as before (e = 0); block 1 has amax 2^-10: s_b = RN32(448 · 2^10)
// = 458752 = 1.75 · 2^18, m_b = 0x600000 >= m_g = 0 -> e_b = 18, code 0x91, G = 2^18:
// 2^-10 · 2^18 = 256, E4M3 exact; Q = 256 / 2^18 = 2^-10: e = 0. Mean 0 -> accepted.
TEST(TensorMor, PerTensorRejectsPerBlockAccepts) {
  const Tensor x = bf16(1, 4, {0x43E0, 0x43E0, 0x3A80, 0x3A80});
  TensorMorSpec spec;
  spec.scaling = Partition::tensor();
  const TensorMorResult t = tensor_mor(x.view(), spec);
  EXPECT_FALSE(t.quantized);
  EXPECT_EQ(t.verdict.reason, Reason::threshold);
  EXPECT_EQ(t.error.sum, sum_of({0x3F800000u, 0x3F800000u}));
  EXPECT_EQ(t.mean, 0x3F000000u);
  spec.scaling = Partition::blocks(1, 2);
  const TensorMorResult b = tensor_mor(x.view(), spec);
  EXPECT_TRUE(b.quantized);
  EXPECT_EQ(b.verdict, (Verdict{true, Reason::accepted}));
  EXPECT_TRUE(b.error.sum.is_zero());
  EXPECT_EQ(b.error.n, 4u);
  EXPECT_EQ(b.mean, 0u);
  EXPECT_EQ(b.scales.scales, (std::vector<std::uint32_t>{0x7Fu, 0x91u}));
  // §26.3 one amax per scaling block: 448 (0x43E00000) and 2^-10 (0x3A800000)
  ASSERT_EQ(b.block_amax.size(), 2u);
  EXPECT_EQ(b.block_amax[0].f32, 0x43E00000u);
  EXPECT_EQ(b.block_amax[1].f32, 0x3A800000u);
}

// §26.2 An all-zero tensor: n = 0, the mean is defined as 0: accepted for any positive
// threshold (every code is a zero, Q(x) = x), rejected only at threshold 0 (0 < 0 is false).
TEST(TensorMor, AllZeroTensor) {
  const Tensor x = bf16(2, 2, {0x0000, 0x8000, 0x0000, 0x0000});
  const TensorMorResult r = tensor_mor(x.view());
  EXPECT_TRUE(r.quantized);
  EXPECT_EQ(r.verdict, (Verdict{true, Reason::all_zero}));
  EXPECT_EQ(r.error.n, 0u);
  EXPECT_EQ(r.error.zeros, 4u);
  EXPECT_EQ(r.mean, 0u);
  TensorMorSpec zero;
  zero.threshold = Threshold{0, 1};
  EXPECT_EQ(tensor_mor(x.view(), zero).verdict, (Verdict{false, Reason::threshold}));
}

// §21.3 / §25.2 NaN and ±Inf inputs reject E4M3; so does a Q(x) that is not finite.
TEST(TensorMor, NonFiniteRejects) {
  const Tensor nan = bf16(1, 4, {0x43E0, 0x7FC0, 0x3F80, 0x3F80});
  const TensorMorResult a = tensor_mor(nan.view());
  EXPECT_FALSE(a.quantized);
  EXPECT_EQ(a.verdict, (Verdict{false, Reason::nonfinite_input}));
  EXPECT_EQ(a.error.nonfinite_input, 1u);
  EXPECT_EQ(a.mean, kF32NaN);
  const Tensor inf = bf16(1, 2, {0xFF80, 0x3F80});
  EXPECT_EQ(tensor_mor(inf.view()).verdict.reason, Reason::nonfinite_input);
  // f32 x = FLT_MAX = (2 − 2^-23) · 2^127: S = RN32(448 / FLT_MAX) = RN32(1.75 (1 + 2^-24 + ...) ·
  // 2^-120) = (1.75 + 2^-23) · 2^-120 (1.75 · 2^-24 = 0.875 ulp rounds up). x · S = 448 + 2^-18
  // − 2^-39 -> RN32 448 -> E4M3 448. Dequantize 448 / S = 2^128 / (1 + 2^-23 / 1.75) =
  // 2^128 − 1.14 · 2^104 -> RN32 = FLT_MAX (2^128 − 2^104 is nearer than 2^128 − 2^105). BF16
  // of FLT_MAX: above the midpoint 2^128 − 2^119 of bf16's max and 2^128 -> +Inf. Q = Inf.
  const Tensor big(F32, 1, 1, {0x7F7FFFFFu});
  const TensorMorResult c = tensor_mor(big.view());
  EXPECT_FALSE(c.quantized);
  EXPECT_EQ(c.verdict, (Verdict{false, Reason::nonfinite_quant}));  // §25.3 nonfinite_quant
  EXPECT_EQ(c.error.nonfinite_quant, 1u);
}

// GAM with amax 2^k keeps a mantissa of 1.75 (s = 448 / 2^k): E4M3 values are NOT reproduced.
// x = [1, 0.75]: s_g = 448, G = 448; 0.75 · 448 = 336 is the E4M3 tie between 320 (1.25 · 2^8,
// mantissa 010) and 352 (011) -> 320; Q = RN32(320 / 448) = 0.714285... -> bf16: 1.428571 · 2^-1,
// 7 fraction bits 54.86 -> 55: 1.4296875 · 2^-1 = 0.71484375. d = 0.03515625 = 9/256,
// e = RN32(9/256 / 0.75) = 3/64 = 0x3D400000 (exact). Mean = 3/128 = 0x3CC00000.
// (With amax 448 · 2^j the GAM scale is a power of two and the error is 0: property below.)
TEST(TensorMor, GamMantissaMovesExactValues) {
  const Tensor x = bf16(1, 2, {0x3F80, 0x3F40});
  const TensorMorResult r = tensor_mor(x.view());
  EXPECT_EQ(r.error.sum, sum_of({0x3D400000u}));
  EXPECT_EQ(r.mean, 0x3CC00000u);
  EXPECT_EQ(r.scales.group_mantissa, std::vector<std::uint32_t>{0x600000u});
}

// ---- §27 sub-tensor MoR: hand-worked --------------------------------------------------------

SubtensorMorSpec sub_spec(SubtensorRecipe r, Partition p) {
  SubtensorMorSpec s;
  s.recipe = r;
  s.blocks = p;
  return s;
}

// Eq. 3 fails, Eq. 4 holds. x = [1, 2^-20], one 1 x 2 block.
// E4M3: s_g = 448 = G; 1 -> 448 exact (e = 0); 2^-20 · 448 = 1.75 · 2^-12 < 2^-10 (half the
// smallest subnormal 2^-9) -> 0, e = 1. Σ4 = 1.
// E5M2: s_g = 57344 = 1.75 · 2^15 = G; 1 -> 57344 exact; 2^-20 · 57344 = 1.75 · 2^-5 = 7 · 2^-7,
// on E5M2's grid (binade [2^-5, 2^-4), step 2^-7): exact, Q = 2^-20, e = 0. Σ5 = 0.
// Eq. 3: 1 < 0 is false. Eq. 4: max / min = 2^20 < 57344 / 2^-14 = 1.75 · 2^29: E5M2 (three-way);
// the two-way recipe falls back to BF16.
// §27.4 the outputs: type map (0 = f8e4m3fn, 1 = f8e5m2, 2 = bf16), the Eq. 3 and Eq. 4 verdicts,
// both block ErrorSums, the output tensor in F and the blocks / elements of each type.
// §27.2 two-way: E5M2 is the Eq. 3 benchmark only, never selected: the block stays BF16 and Eq. 4
// is never evaluated (§25.3 not_evaluated).
TEST(SubtensorMor, E4m3SumExceedsE5m2Sum) {
  const Tensor x = bf16(1, 2, {0x3F80, 0x3580});
  const SubtensorMorResult t = subtensor_mor(x.view(), sub_spec(SubtensorRecipe::three_way, Partition::blocks(1, 2)));
  ASSERT_EQ(t.type.size(), 1u);
  EXPECT_EQ(t.type[0], BlockType::f8e5m2);
  EXPECT_EQ(t.eq3[0], (Verdict{false, Reason::not_lower}));
  EXPECT_EQ(t.eq4[0], (Verdict{true, Reason::accepted}));
  EXPECT_EQ(t.e4m3_sum[0].sum, sum_of({0x3F800000u}));
  EXPECT_TRUE(t.e5m2_sum[0].sum.is_zero());
  EXPECT_EQ(t.e4m3_sum[0].n, 2u);
  EXPECT_EQ(t.fake, (std::vector<std::uint32_t>{0x3F80, 0x3580}));
  EXPECT_EQ(t.blocks_of, (std::array<std::uint64_t, 3>{0, 1, 0}));  // §27.4
  EXPECT_EQ(t.elements_of, (std::array<std::uint64_t, 3>{0, 2, 0}));
  EXPECT_EQ(static_cast<int>(t.type[0]), 1);  // §27.4 the type map's value for f8e5m2
  // §27.2 two-way: [f8e4m3fn, bf16 (kept)]
  const SubtensorMorResult w = subtensor_mor(x.view(), sub_spec(SubtensorRecipe::two_way, Partition::blocks(1, 2)));
  EXPECT_EQ(w.type[0], BlockType::bf16);
  EXPECT_EQ(static_cast<int>(w.type[0]), 2);
  EXPECT_EQ(w.eq3[0], (Verdict{false, Reason::not_lower}));      // §25.3 not_lower: Eq. 3 false
  EXPECT_EQ(w.eq4[0], (Verdict{false, Reason::not_evaluated}));  // §25.3 not_evaluated
  EXPECT_TRUE(w.e5m2_sum[0].sum.is_zero());                      // the benchmark's sum is still reported
  EXPECT_EQ(w.blocks_of, (std::array<std::uint64_t, 3>{0, 0, 1}));
  EXPECT_EQ(w.fake, (std::vector<std::uint32_t>{0x3F80, 0x3580}));
  EXPECT_EQ(w.elements_of, (std::array<std::uint64_t, 3>{0, 0, 2}));
}

// §24.2 / §27.5 (b): Eq. 4's min is taken over the NON-ZERO elements. x = [1, 2^-20, 0]: the
// zero changes neither amax nor any sum (zeros do not count, Eq. 1), so Σ4 = 1, Σ5 = 0 as above,
// and Eq. 4 compares 2^20 with 1.75 · 2^29: E5M2. Read literally (min over all elements = 0, an
// infinite ratio) the block would fail Eq. 4 and stay BF16.
TEST(SubtensorMor, Eq4MinIsOverTheNonZeroElements) {
  const Tensor x = bf16(1, 3, {0x3F80, 0x3580, 0x0000});
  const SubtensorMorResult t = subtensor_mor(x.view(), sub_spec(SubtensorRecipe::three_way, Partition::blocks(1, 3)));
  ASSERT_EQ(t.type.size(), 1u);
  EXPECT_EQ(t.type[0], BlockType::f8e5m2);
  EXPECT_EQ(t.eq3[0], (Verdict{false, Reason::not_lower}));
  EXPECT_EQ(t.eq4[0], (Verdict{true, Reason::accepted}));
  EXPECT_EQ(t.e4m3_sum[0].n, 2u);
  EXPECT_EQ(t.e4m3_sum[0].zeros, 1u);
}

// Eq. 3 and Eq. 4 both fail: x = [1, 2^-40]. E4M3 flushes 2^-40 (e = 1); E5M2: 2^-40 · 57344 =
// 1.75 · 2^-25 < 2^-17 (half its smallest subnormal 2^-16) -> 0, e = 1. Σ4 = Σ5 = 1: not lower.
// Eq. 4: 2^40 >= 1.75 · 2^29. BF16: the block is kept.
TEST(SubtensorMor, RangeTooWideStaysBf16) {
  const Tensor x = bf16(1, 2, {0x3F80, 0x2B80});
  const SubtensorMorResult t = subtensor_mor(x.view(), sub_spec(SubtensorRecipe::three_way, Partition::blocks(1, 2)));
  EXPECT_EQ(t.type[0], BlockType::bf16);
  EXPECT_EQ(t.eq3[0].reason, Reason::not_lower);
  EXPECT_EQ(t.eq4[0], (Verdict{false, Reason::range}));  // §25.3 range: Eq. 4 false
  EXPECT_EQ(t.e4m3_sum[0].sum, t.e5m2_sum[0].sum);
  EXPECT_EQ(t.fake, x.codes);
}

// Eq. 3 holds: x = [448, 288, 1.0625], one 1 x 3 block. E4M3: s = 1, G = 1: 448 and 288 =
// 1.125 · 2^8 are E4M3 values; 1.0625 is the tie 1 | 1.125 -> 1: Σ4 = RN32(1/17) = 0x3D70F0F1.
// E5M2: s = RN32(57344 / 448) = 128 = G (code 0x86); 448 -> 57344 exact; 288 · 128 = 36864 =
// 1.125 · 2^15 is the tie between 1.0 and 1.25 (2 mantissa bits) -> 1.0 (even): 32768, Q = 256,
// d = 32, e = RN32(1/9) = 0x3DE38E39 (1/9 = 1.(110001)... · 2^-4: 24 bits 0xE38E38, next bit 1
// then non-zero -> 0xE38E39); 1.0625 · 128 = 1.0625 · 2^7 lies below the midpoint 1.125 of 1.0 and
// 1.25 -> 128, Q = 1, e = RN32(1/17). Σ4 = RN32(1/17) < Σ5 = RN32(1/17) + RN32(1/9): E4M3,
// reason accepted. Without the 1.0625, E4M3 is exact (Σ4 = 0): reason exact (§27.3).
// §27.2 the two-way recipe decides Eq. 3 the same way (E5M2 as the benchmark); §27.4 both formats'
// scales are output for every block.
TEST(SubtensorMor, E4m3Chosen) {
  const Tensor x = bf16(1, 3, {0x43E0, 0x4390, 0x3F88});
  for (SubtensorRecipe r : {SubtensorRecipe::three_way, SubtensorRecipe::two_way}) {
    const SubtensorMorResult t = subtensor_mor(x.view(), sub_spec(r, Partition::blocks(1, 3)));
    EXPECT_EQ(t.type[0], BlockType::f8e4m3fn);
    EXPECT_EQ(t.eq3[0], (Verdict{true, Reason::accepted}));
    EXPECT_EQ(t.e4m3_sum[0].sum, sum_of({0x3D70F0F1u}));
    EXPECT_EQ(t.e5m2_sum[0].sum, sum_of({0x3D70F0F1u, 0x3DE38E39u}));
    EXPECT_EQ(t.fake, (std::vector<std::uint32_t>{0x43E0, 0x4390, 0x3F80}));
    EXPECT_EQ(t.e4m3_scales.scales, std::vector<std::uint32_t>{0x7Fu});  // G = 1
    EXPECT_EQ(t.e5m2_scales.scales, std::vector<std::uint32_t>{0x86u});  // G = 128 = 2^7
  }
  const Tensor e = bf16(1, 2, {0x43E0, 0x4390});
  const SubtensorMorResult t = subtensor_mor(e.view(), sub_spec(SubtensorRecipe::three_way, Partition::blocks(1, 2)));
  EXPECT_EQ(t.type[0], BlockType::f8e4m3fn);
  EXPECT_EQ(t.eq3[0], (Verdict{true, Reason::exact}));
  EXPECT_EQ(t.e5m2_sum[0].sum, sum_of({0x3DE38E39u}));
}

// §27.3 An all-zero block is E4M3 (Eq. 3's strict 0 < 0 would reject it), and so is a block
// E4M3 reproduces exactly (Σ4 = 0) even where E5M2 is exact too (Eq. 3 read literally would send
// it to E5M2, or to BF16 in the two-way recipe). x = [[0, 0], [1, 1]], 1 x 2 blocks.
// Block 1: G4 = 448, G5 = 57344 (group amax 1): both formats exact, Σ4 = Σ5 = 0.
TEST(SubtensorMor, AllZeroAndExactBlocksAreE4m3) {
  const Tensor x = bf16(2, 2, {0x0000, 0x0000, 0x3F80, 0x3F80});
  for (SubtensorRecipe rc : {SubtensorRecipe::three_way, SubtensorRecipe::two_way}) {
    const SubtensorMorResult t = subtensor_mor(x.view(), sub_spec(rc, Partition::blocks(1, 2)));
    EXPECT_EQ(t.type, (std::vector<BlockType>{BlockType::f8e4m3fn, BlockType::f8e4m3fn}));
    EXPECT_EQ(t.eq3[0], (Verdict{true, Reason::all_zero}));  // §25.3 all_zero, accepted
    EXPECT_EQ(t.eq3[1], (Verdict{true, Reason::exact}));     // §25.3 exact, accepted
    EXPECT_TRUE(t.e5m2_sum[1].sum.is_zero());
    EXPECT_EQ(t.fake, x.codes);
  }
}

// §25.2 A block holding NaN or ±Inf skips every quantized type and stays BF16 (values kept);
// the amax policy `ignore` (§26.1) keeps the other blocks' scales as without it.
TEST(SubtensorMor, NonFiniteBlockStaysBf16) {
  const Tensor x = bf16(2, 2, {0x7FC1, 0x3F80, 0x3F80, 0x3F80});
  const SubtensorMorResult t = subtensor_mor(x.view(), sub_spec(SubtensorRecipe::three_way, Partition::blocks(1, 2)));
  EXPECT_EQ(t.type, (std::vector<BlockType>{BlockType::bf16, BlockType::f8e4m3fn}));  // block 1: exact
  EXPECT_EQ(t.eq3[0], (Verdict{false, Reason::nonfinite_input}));                     // §25.3 nonfinite_input
  EXPECT_EQ(t.eq4[0], (Verdict{false, Reason::nonfinite_input}));
  EXPECT_EQ(t.fake, x.codes);  // the NaN keeps its payload (bf16 -> bf16 is the identity)
  EXPECT_EQ(t.e4m3_scales.group_mantissa, std::vector<std::uint32_t>{0x600000u});  // s_g = 448
}

// ---- §25 the framework -----------------------------------------------------------------------

// A custom metric (even blocks accepted) and the output assembled from the chosen types.
// §25.4 a FunctionMetric is a metric; its verdicts (reason custom, §25.3) decide the blocks.
// §25.1 a kept type's block is x converted to F: the identity for BF16 in and out.
TEST(MorFramework, CustomMetricAndOutput) {
  SplitMix64 g(25);
  const Tensor x = mortest::random_tensor(BF16, 4, 6, g, 12);
  const QuantizeSpec e4 = mor_quantize_spec(format(FormatId::f8e4m3fn), Partition::blocks(2, 3));
  MorContext ctx(x.view(), Partition::blocks(2, 3), {Representation{"e4m3", e4}, Representation{"bf16", std::nullopt}});
  FunctionMetric even("even blocks", [](MorContext&, std::size_t, std::size_t b) {
    return Verdict{b % 2 == 0, b % 2 == 0 ? Reason::accepted : Reason::custom};
  });
  Metric* ms[] = {&even};
  const Selection s = mor_select(ctx, ms);
  EXPECT_EQ(s.choice, (std::vector<std::uint8_t>{0, 1, 0, 1}));
  EXPECT_EQ(s.verdicts[1], (Verdict{false, Reason::custom}));
  EXPECT_EQ(s.blocks_per_type, (std::vector<std::uint64_t>{2, 2}));
  EXPECT_EQ(s.elements_per_type, (std::vector<std::uint64_t>{12, 12}));
  // E4M3 blocks carry the §19.6 fake-quant of the whole tensor, BF16 blocks the input
  std::vector<std::uint32_t> fq(x.codes.size());
  fake_quantize(x.view(), e4, BF16, fq);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 6; ++j) {
      const std::size_t b = (i / 2) * 2 + j / 3, idx = i * 6 + j;
      EXPECT_EQ(s.output[idx], b % 2 == 0 ? fq[idx] : x.codes[idx]) << i << "," << j;
    }
}

TEST(MorFramework, RejectsBadSetups) {
  SplitMix64 g(26);
  const Tensor x = mortest::random_tensor(BF16, 4, 6, g, 12);
  const QuantizeSpec e4 = mor_quantize_spec(format(FormatId::f8e4m3fn), Partition::blocks(3, 3));
  // §25.1 a quantized type's partition must refine B: 3 x 3 quantization blocks straddle the
  // 2 x 2 selection blocks, an error
  EXPECT_THROW(MorContext(x.view(), Partition::blocks(2, 2), {Representation{"e4m3", e4}}), std::invalid_argument);
  EXPECT_THROW(MorContext(x.view(), Partition::tensor(), {}), std::invalid_argument);
  MorContext ctx(x.view(), Partition::tensor(), {Representation{"e4m3", e4}, Representation{"bf16", std::nullopt}});
  std::vector<Metric*> none;
  EXPECT_THROW(mor_select(ctx, none), std::invalid_argument);  // 2 types need 1 metric
  MorContext kept(x.view(), Partition::tensor(),
                  {Representation{"bf16", std::nullopt}, Representation{"bf16", std::nullopt}});
  MeanErrorMetric m;
  Metric* ms[] = {&m};
  EXPECT_THROW(mor_select(kept, ms), std::invalid_argument);  // a mean error needs a quantized type
}

// §25.4 a metric is any object with a per-tensor preparation and a per-block evaluation: a
// Metric subclass is prepared once (with the index of the type it accepts) and evaluated once per
// block of B, in block-row-major order. §25.5 without the output tensor the selection streams:
// what it returns is per block only (the choice, the verdicts, the counts per type), the same as
// with the output, and no element-sized output.
// x: 4 x 6, B = 2 x 3 blocks (4 blocks); the metric accepts blocks 0 and 3 (reason accepted),
// rejects 1 and 2 (custom): choice [0, 1, 1, 0], 2 blocks / 12 elements per type.
class FirstAndLastBlocks : public Metric {
 public:
  std::string name() const override { return "first and last block"; }
  void prepare(MorContext& ctx, std::size_t type) override {
    ++prepared;
    type_prepared = type;
    blocks = ctx.blocks().count();
  }
  Verdict evaluate(MorContext&, std::size_t b) override {
    evaluated.push_back(b);
    const bool ok = b == 0 || b + 1 == blocks;
    return Verdict{ok, ok ? Reason::accepted : Reason::custom};
  }
  int prepared = 0;
  std::size_t type_prepared = 99, blocks = 0;
  std::vector<std::size_t> evaluated;
};

TEST(MorFramework, MetricObjectAndStreamingSelection) {
  SplitMix64 g(25);
  const Tensor x = mortest::random_tensor(BF16, 4, 6, g, 12);
  const QuantizeSpec e4 = mor_quantize_spec(format(FormatId::f8e4m3fn), Partition::blocks(2, 3));
  auto select = [&](bool want_output, FirstAndLastBlocks& m) {
    MorContext ctx(x.view(), Partition::blocks(2, 3),
                   {Representation{"e4m3", e4}, Representation{"bf16", std::nullopt}});
    Metric* ms[] = {&m};
    return mor_select(ctx, ms, want_output);
  };
  FirstAndLastBlocks ms, mo;
  const Selection streamed = select(false, ms), full = select(true, mo);
  for (const FirstAndLastBlocks* m : {&ms, &mo}) {  // §25.4
    EXPECT_EQ(m->prepared, 1);
    EXPECT_EQ(m->type_prepared, 0u);
    EXPECT_EQ(m->evaluated, (std::vector<std::size_t>{0, 1, 2, 3}));
  }
  EXPECT_EQ(streamed.choice, (std::vector<std::uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(streamed.verdicts[1], (Verdict{false, Reason::custom}));
  EXPECT_EQ(streamed.blocks_per_type, (std::vector<std::uint64_t>{2, 2}));
  EXPECT_EQ(streamed.elements_per_type, (std::vector<std::uint64_t>{12, 12}));
  // §25.5 the streamed selection: per-block state only, equal to the one with the output
  EXPECT_TRUE(streamed.output.empty());
  EXPECT_EQ(streamed.verdicts.size(), 4u);  // (k − 1) per block
  EXPECT_EQ(streamed.choice, full.choice);
  EXPECT_EQ(streamed.verdicts, full.verdicts);
  EXPECT_EQ(streamed.blocks_per_type, full.blocks_per_type);
  EXPECT_EQ(streamed.elements_per_type, full.elements_per_type);
  EXPECT_EQ(full.output.size(), x.codes.size());
}

// Tensor-level MoR decides exactly mean_below(total error, threshold) (§26.1).
TEST(MorFramework, TensorLevelIsEq2OverTheTensor) {
  SplitMix64 g(27);
  for (int t = 0; t < 30; ++t) {
    const Tensor x = random_shaped_tensor(BF16, g, 30, 30, 25);
    TensorMorSpec spec;
    spec.scaling = Partition::blocks(1 + g.next() % 8, 1 + g.next() % 8);
    spec.threshold = Threshold{1 + g.next() % 100, 1000};
    QuantizeSpec q = spec.quant;
    q.partition = spec.scaling;
    ErrorEvaluator ev(x.view(), q);
    const ErrorSum total = ev.total();
    const TensorMorResult r = tensor_mor(x.view(), spec);
    ASSERT_EQ(r.error, total);
    ASSERT_EQ(r.quantized, mean_below(total, spec.threshold));
    ASSERT_EQ(r.mean, mean_f32(total));
  }
}

// ---- oracle agreement ------------------------------------------------------------------------

Partition random_partition(SplitMix64& g, std::size_t rows, std::size_t cols) {
  switch (g.next() % 5) {
    case 0: return Partition::tensor();
    case 1: return Partition::per_row();
    case 2: return Partition::per_col();
    default: return Partition::blocks(1 + g.next() % (rows + 1), 1 + g.next() % (cols + 1));
  }
}

// The transpose's codes in its own row-major order (what the oracle receives for a transposed view).
std::vector<std::uint32_t> transposed_codes(const Tensor& x) {
  std::vector<std::uint32_t> t(x.codes.size());
  for (std::size_t i = 0; i < x.rows; ++i)
    for (std::size_t j = 0; j < x.cols; ++j) t[j * x.rows + i] = x.codes[i * x.cols + j];
  return t;
}

TEST(MorOracle, TensorLevel) {
  SplitMix64 g(260);
  const FormatId sources[] = {FormatId::bf16, FormatId::f32, FormatId::f16};
  for (int t = 0; t < 160; ++t) {
    const Format& src = format(sources[t % 3]);
    const Tensor x = random_shaped_tensor(src, g, 16, 24, 28, 40, t % 7 == 0 ? 30 : 0);
    const bool transpose = t % 4 == 3;
    const TensorView v = transpose ? x.view().transposed() : x.view();
    TensorMorSpec spec;
    spec.scaling = random_partition(g, v.rows(), v.cols());
    const Threshold ths[] = {{9, 200}, {11, 250}, {1, 20}, {g.next() % 300, 1000}};
    spec.threshold = ths[g.next() % 4];
    if (t % 5 == 0) spec.quant.rule = ScaleRule::mx_floor;  // MoR's E8M0 ablation
    QuantizeSpec q = spec.quant;
    q.partition = spec.scaling;
    const TensorMorResult r = tensor_mor(v, spec);
    const auto codes = transpose ? transposed_codes(x) : x.codes;
    const oracle::rm::TensorDecision o = oracle::rm::tensor_mor(mortest::oracle_spec(q, src, v.rows(), v.cols()), codes,
                                                                Rational(spec.threshold.num) / spec.threshold.den);
    ASSERT_EQ(r.quantized, o.quantized) << "case " << t;
    ASSERT_EQ(r.mean, o.mean) << "case " << t;
    ASSERT_EQ(mortest::rational_of(r.error.sum), o.total.sum) << "case " << t;
    ASSERT_EQ(r.error.n, o.total.n);
    ASSERT_EQ(r.error.nonfinite_input, o.total.nonfinite_input);
    ASSERT_EQ(r.error.nonfinite_quant, o.total.nonfinite_quant);
  }
}

TEST(MorOracle, SubTensor) {
  SplitMix64 g(270);
  const FormatId sources[] = {FormatId::bf16, FormatId::f32, FormatId::f16};
  for (int t = 0; t < 160; ++t) {
    const Format& src = format(sources[t % 3]);
    const Tensor x = random_shaped_tensor(src, g, 16, 24, 45, 100, t % 6 == 0 ? 25 : 0);
    SubtensorMorSpec spec;
    spec.recipe = t % 2 ? SubtensorRecipe::two_way : SubtensorRecipe::three_way;
    spec.blocks = Partition::blocks(1 + g.next() % 6, 1 + g.next() % 8);
    const SubtensorMorResult r = subtensor_mor(x.view(), spec);
    QuantizeSpec e4 = spec.e4m3, e5 = spec.e5m2;
    e4.partition = e5.partition = spec.blocks;
    const oracle::rm::Subtensor o = oracle::rm::subtensor_mor(mortest::oracle_spec(e4, src, x.rows, x.cols),
                                                              mortest::oracle_spec(e5, src, x.rows, x.cols),
                                                              spec.recipe == SubtensorRecipe::three_way, x.codes);
    ASSERT_EQ(r.type.size(), o.type.size());
    for (std::size_t b = 0; b < o.type.size(); ++b) {
      ASSERT_EQ(static_cast<int>(r.type[b]), o.type[b]) << "case " << t << " block " << b;
      ASSERT_EQ(mortest::rational_of(r.e4m3_sum[b].sum), o.sum4[b].sum);
      ASSERT_EQ(mortest::rational_of(r.e5m2_sum[b].sum), o.sum5[b].sum);
    }
    ASSERT_EQ(r.fake, o.out) << "case " << t;
  }
}

// Medium tensors (64 x 64 blocks, several blocks, both recipes) against the oracle.
TEST(MorOracle, MediumTensor) {
  SplitMix64 g(271);
  const Tensor x = mortest::random_tensor(BF16, 128, 192, g, 14, 20);
  TensorMorSpec spec;
  spec.scaling = Partition::blocks(64, 64);
  QuantizeSpec q = spec.quant;
  q.partition = spec.scaling;
  const TensorMorResult r = tensor_mor(x.view(), spec);
  const oracle::rm::TensorDecision o =
      oracle::rm::tensor_mor(mortest::oracle_spec(q, BF16, 128, 192), x.codes, Rational(9, 200));
  EXPECT_EQ(r.quantized, o.quantized);
  EXPECT_EQ(r.mean, o.mean);
  EXPECT_EQ(mortest::rational_of(r.error.sum), o.total.sum);
  SubtensorMorSpec ss;
  ss.blocks = Partition::blocks(64, 64);
  const SubtensorMorResult s = subtensor_mor(x.view(), ss);
  QuantizeSpec e4 = ss.e4m3, e5 = ss.e5m2;
  e4.partition = e5.partition = ss.blocks;
  const oracle::rm::Subtensor os = oracle::rm::subtensor_mor(mortest::oracle_spec(e4, BF16, 128, 192),
                                                             mortest::oracle_spec(e5, BF16, 128, 192), true, x.codes);
  for (std::size_t b = 0; b < os.type.size(); ++b) EXPECT_EQ(static_cast<int>(s.type[b]), os.type[b]) << b;
  EXPECT_EQ(s.fake, os.out);
}

// ---- §22 order independence ------------------------------------------------------------------

// Every element's e (computed from the fake-quant and §21.2), summed in many orders and
// shardings: every output bit is the same, and equal to the evaluator's total.
TEST(OrderIndependence, PermutationsAndShards) {
  SplitMix64 g(22);
  const Tensor x = mortest::random_tensor(BF16, 96, 160, g, 20, 30);
  const QuantizeSpec q = mor_quantize_spec(format(FormatId::f8e4m3fn), Partition::blocks(32, 32));
  ErrorEvaluator ev(x.view(), q);
  std::vector<std::uint32_t> fq(x.codes.size());
  for (std::size_t b = 0; b < ev.grid().count(); ++b) ev.fake_block(b, fq);
  std::vector<std::uint32_t> es;
  for (std::size_t i = 0; i < x.codes.size(); ++i) {
    if ((x.codes[i] & 0x7FFF) == 0) continue;
    es.push_back(relative_error(x.codes[i] << 16, fq[i] << 16));
  }
  const ErrorSum total = ev.total();
  ASSERT_EQ(es.size(), total.n);
  auto summed = [](const std::vector<std::uint32_t>& v) {
    ErrorSum s;
    for (std::uint32_t e : v) s.sum.add(e);
    s.n = v.size();
    return s;
  };
  const ErrorSum forward = summed(es);
  EXPECT_EQ(forward.sum, total.sum);
  std::mt19937_64 rng(7);
  for (int rep = 0; rep < 6; ++rep) {
    std::vector<std::uint32_t> p = es;
    if (rep == 0)
      std::reverse(p.begin(), p.end());
    else
      std::shuffle(p.begin(), p.end(), rng);
    // shards of random sizes, each summed on its own, merged in a random order / as a tree
    std::vector<ErrorSum> shards;
    for (std::size_t i = 0; i < p.size();) {
      const std::size_t len = 1 + rng() % 3000;
      shards.push_back(
          summed(std::vector<std::uint32_t>(p.begin() + static_cast<std::ptrdiff_t>(i),
                                            p.begin() + static_cast<std::ptrdiff_t>(std::min(p.size(), i + len)))));
      i += len;
    }
    std::shuffle(shards.begin(), shards.end(), rng);
    ErrorSum merged;
    if (rep % 2) {
      for (const ErrorSum& s : shards) merged += s;
    } else {
      while (shards.size() > 1) {  // pairwise tree reduction
        std::vector<ErrorSum> next;
        for (std::size_t i = 0; i + 1 < shards.size(); i += 2) next.push_back(shards[i] += shards[i + 1]);
        if (shards.size() % 2) next.push_back(shards.back());
        shards = std::move(next);
      }
      merged = shards[0];
    }
    ASSERT_EQ(merged.sum.limbs(), forward.sum.limbs()) << "rep " << rep;
    ASSERT_EQ(merged.n, forward.n);
    ASSERT_EQ(mean_f32(merged), mean_f32(total));
    ASSERT_EQ(mean_below(merged, Threshold{}), mean_below(total, Threshold{}));
  }
}

// Moving elements inside their scaling blocks, or swapping whole blocks, changes no scale and
// no output bit of tensor-level MoR (the block-level permutation permutes the scale array).
TEST(OrderIndependence, PermutedBlocksAndElements) {
  SplitMix64 g(221);
  const Tensor x = mortest::random_tensor(BF16, 32, 48, g, 18, 30);
  TensorMorSpec spec;
  spec.scaling = Partition::blocks(8, 8);
  const TensorMorResult base = tensor_mor(x.view(), spec);
  std::mt19937_64 rng(3);
  // within-block shuffles
  Tensor y = x;
  for (std::size_t I = 0; I < 4; ++I)
    for (std::size_t J = 0; J < 6; ++J) {
      std::vector<std::size_t> idx;
      for (std::size_t i = I * 8; i < I * 8 + 8; ++i)
        for (std::size_t j = J * 8; j < J * 8 + 8; ++j) idx.push_back(i * 48 + j);
      std::vector<std::uint32_t> vals;
      for (std::size_t k : idx) vals.push_back(x.codes[k]);
      std::shuffle(vals.begin(), vals.end(), rng);
      for (std::size_t k = 0; k < idx.size(); ++k) y.codes[idx[k]] = vals[k];
    }
  y.sync();
  const TensorMorResult a = tensor_mor(y.view(), spec);
  EXPECT_EQ(a.error, base.error);
  EXPECT_EQ(a.mean, base.mean);
  EXPECT_EQ(a.quantized, base.quantized);
  EXPECT_EQ(a.scales.scales, base.scales.scales);
  // swap blocks (0,0) <-> (3,5) and (1,2) <-> (2,1)
  Tensor z = x;
  auto swap_blocks = [&](std::size_t I1, std::size_t J1, std::size_t I2, std::size_t J2) {
    for (std::size_t i = 0; i < 8; ++i)
      for (std::size_t j = 0; j < 8; ++j)
        std::swap(z.codes[(I1 * 8 + i) * 48 + J1 * 8 + j], z.codes[(I2 * 8 + i) * 48 + J2 * 8 + j]);
  };
  swap_blocks(0, 0, 3, 5);
  swap_blocks(1, 2, 2, 1);
  z.sync();
  const TensorMorResult c = tensor_mor(z.view(), spec);
  EXPECT_EQ(c.error, base.error);
  EXPECT_EQ(c.mean, base.mean);
  std::vector<std::uint32_t> s = base.scales.scales;
  std::swap(s[0], s[3 * 6 + 5]);
  std::swap(s[1 * 6 + 2], s[2 * 6 + 1]);
  EXPECT_EQ(c.scales.scales, s);
}

// ---- properties ------------------------------------------------------------------------------

Tensor prop_tensor(std::uint64_t seed) {
  SplitMix64 g(seed);
  return random_shaped_tensor(BF16, g, 20, 20, 30, 60);
}

// §23.2 The decision is monotone in the threshold.
RC_GTEST_PROP(MorProperties, MonotoneInThreshold, ()) {
  const Tensor x = prop_tensor(*rc::gen::arbitrary<std::uint64_t>());
  const auto a = *rc::gen::inRange<std::uint64_t>(0, 200), b = *rc::gen::inRange<std::uint64_t>(0, 200);
  TensorMorSpec lo, hi;
  lo.scaling = hi.scaling =
      Partition::blocks(*rc::gen::inRange<std::size_t>(1, 9), *rc::gen::inRange<std::size_t>(1, 9));
  lo.threshold = Threshold{std::min(a, b), 1000};
  hi.threshold = Threshold{std::max(a, b), 1000};
  const TensorMorResult rl = tensor_mor(x.view(), lo), rh = tensor_mor(x.view(), hi);
  RC_ASSERT(rl.error == rh.error);
  RC_ASSERT(!rl.quantized || rh.quantized);
}

// A tensor of E4M3 values times 2^s whose amax is 448 · 2^s has error 0 under GAM for every
// block partition: s_g = 2^-s exactly (m_g = 0), every block scale is the power of two
// 2^E(s_b) >= 2^-s, so x · G_b is an E4M3 value times 2^k, k >= 0, at most 448 — on E4M3's grid.
// With MX FLOOR (the paper's E8M0 ablation) per tensor and a power-of-two amax 2^m · 2^s,
// X = 2^(m + s − 8) and x / X = y · 2^(8 − m) <= 256: on the grid as well.
RC_GTEST_PROP(MorProperties, ExactE4m3ValuesHaveZeroError, ()) {
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, 12), cols = *rc::gen::inRange<std::size_t>(1, 12);
  const int s = *rc::gen::inRange(-60, 60);
  const bool mx = *rc::gen::arbitrary<bool>();
  const int m = *rc::gen::inRange(-9, 9);  // MX: the amax 2^m of the E4M3 values
  const Format& e4 = format(FormatId::f8e4m3fn);
  std::vector<std::uint32_t> v(rows * cols);
  for (auto& c : v) {
    std::uint32_t code = *rc::gen::inRange<std::uint32_t>(0, 0x7F);  // 00 .. 7E: every finite magnitude
    // MX: magnitudes up to 2^m, whose code is (m + 7) << 3 (normal) or 2^(m + 9) (subnormal, 2^-9 units)
    const std::uint32_t cap = m >= -6 ? static_cast<std::uint32_t>(m + 7) << 3 : 1u << (m + 9);
    if (mx && code > cap) code = cap;
    const Decoded d = decode(code | (*rc::gen::arbitrary<bool>() ? 0x80u : 0u), e4);
    // y · 2^s in bf16 (exact: 4 significant bits, exponent in range)
    c = d.cls == Class::zero ? (d.sign ? 0x8000u : 0u) : *mortest::bf16_code(d.sign, d.sig, d.exp + s);
  }
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, v.size());
  if (mx)
    v[k] = *mortest::bf16_code(false, 1, m + s);
  else
    v[k] = *mortest::bf16_code(false, 7, 6 + s);  // 448 · 2^s
  const Tensor x(BF16, rows, cols, v);
  TensorMorSpec spec;
  if (mx) {
    spec.quant.rule = ScaleRule::mx_floor;
    spec.scaling = Partition::tensor();
  } else {
    spec.scaling = Partition::blocks(*rc::gen::inRange<std::size_t>(1, 6), *rc::gen::inRange<std::size_t>(1, 6));
  }
  const TensorMorResult r = tensor_mor(x.view(), spec);
  RC_ASSERT(r.error.sum.is_zero());
  RC_ASSERT(r.mean == 0u);
  RC_ASSERT(r.quantized);
}

// §12.3 / §26.4 Per-channel decisions on X (rows, the first GEMM operand) equal those on Xᵀ with
// the other direction (cols); any block shape p on X equals p.transposed() on Xᵀ: same decision,
// ErrorSum, mean and (per channel) scales.
RC_GTEST_PROP(MorProperties, TransposeSymmetry, ()) {
  const Tensor x = prop_tensor(*rc::gen::arbitrary<std::uint64_t>());
  TensorMorSpec a, b;
  const int kind = *rc::gen::inRange(0, 3);
  if (kind == 0)
    a.scaling = Partition::per_row();
  else if (kind == 1)
    a.scaling = Partition::per_col();
  else
    a.scaling = Partition::blocks(*rc::gen::inRange<std::size_t>(1, 7), *rc::gen::inRange<std::size_t>(1, 7));
  b.scaling = a.scaling.transposed();
  const TensorMorResult r = tensor_mor(x.view(), a), t = tensor_mor(x.view().transposed(), b);
  RC_ASSERT(r.quantized == t.quantized);
  RC_ASSERT(r.error == t.error);
  RC_ASSERT(r.mean == t.mean);
  if (kind < 2) RC_ASSERT(r.scales.scales == t.scales.scales);  // channel i of X is channel i of Xᵀ
}

}  // namespace
}  // namespace numref
