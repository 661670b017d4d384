// numref tests — Group Amax Mantissa scaling (MoR Algorithm 1).      spec §17
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "numref/gam.hpp"
#include "numref/quantize.hpp"

namespace numref {
namespace {

const Format& F32 = format(FormatId::f32);

// (−1)^neg · (1 + frac/2²³) · 2^e for e in [−126, 127]; below −126 the subnormal that truncates
// it (0 under 2⁻¹⁴⁹). The exponent field is never formed from a negative number, which would
// wrap into the inf/NaN encodings.
std::uint32_t f32_of(bool neg, int e, std::uint32_t frac) {
  const std::uint32_t sign = neg ? 0x80000000u : 0u;
  const std::uint32_t sig = 0x800000u | (frac & 0x7FFFFFu);
  if (e < -126) return sign | (e < -149 ? 0u : sig >> (-126 - e));
  return sign | (static_cast<std::uint32_t>(e + 127) << 23) | (sig & 0x7FFFFFu);
}

// Hand-worked 2 x 4 tensor, f8e4m3fn (q_max 448), blocks 1 x 2, one group (the tensor):
//     [  3  -1  0.5  0.25 ]
//     [ 10   7  0    0    ]
// group: g_amax = 10, s_g = RN32(448/10) = RN32(44.8) = 0x42333333 -> m_g = 0x333333 (0.4·2^23
//        = 3355443.2 rounded down), E(s_g) = 5.
// block (0,0): amax 3,   s_b = RN32(149.33) = 0x43155555: m_b = 0x155555 < m_g -> e_b = 7-1 = 6,
//              code 0x85, G = (1 + 0x333333/2^23)·2^6 = 89.5999985.
//              3·G = 268.7999954 -> E4M3 (256..512 step 32): 256 = 0x78.
//              -1·G = -89.6 -> (64..128 step 8): 88 = 1.375·2^6 -> 0xEB.
// block (0,1): amax 0.5, s_b = 896 = 0x44600000: m_b = 0x600000 >= m_g -> e_b = 9, code 0x88,
//              G = 716.79998779; 0.5·G = 358.4 -> 352 = 1.375·2^8 = 0x7B; 0.25·G = 179.2 -> 176 = 0x73.
// block (1,0): amax 10 = g_amax: m_b = m_g -> e_b = 5, code 0x84, G = s_g = 44.79999924;
//              10·G = 447.99999237 -> RN32 = 448 (binary32 step 2^-15) -> 0x7E;
//              7·G = 313.6 -> 320 = 1.25·2^8 = 0x7A.
// block (1,1): amax 0: s_b = 1.0 (§14.1), m_b = 0 < m_g -> e_b = -1, code 0x7E; codes 00.
TEST(Gam, HandWorked2x4) {  // §17.1 – §17.3
  const std::vector<std::uint32_t> x = {0x40400000u, 0xBF800000u, 0x3F000000u, 0x3E800000u,
                                        0x41200000u, 0x40E00000u, 0x00000000u, 0x00000000u};
  QuantizeSpec s;
  s.rule = ScaleRule::gam;
  s.partition = Partition::blocks(1, 2);
  std::vector<std::uint8_t> codes(8);
  const QuantizeResult r = quantize(TensorView(F32, x.data(), 2, 4), s, codes);
  ASSERT_EQ(r.meta.group_mantissa.size(), 1u);
  EXPECT_EQ(r.meta.group_mantissa[0], 0x333333u);
  EXPECT_EQ(r.meta.scales, (std::vector<std::uint32_t>{0x85, 0x88, 0x84, 0x7E}));
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x78, 0xEB, 0x7B, 0x73, 0x7E, 0x7A, 0x00, 0x00}));
  EXPECT_EQ(r.total.saturated, 0u);
  // §17.3 the block scale as binary32 bits: (code << 23) | m_g; 0x85 -> 0x42B33333 = 89.6
  EXPECT_EQ(gam_block_scale_f32(0x85, 0x333333), 0x42B33333u);
  EXPECT_EQ(gam_block_scale_f32(0xFF, 0x333333), kF32NaN);
  EXPECT_THROW(gam_block_scale_f32(0x00, 0x333333), std::invalid_argument);
}

TEST(Gam, EdgeCases) {  // §17.2
  const Exact q448{false, 7, 6, false};
  // zero group: s_g = 1.0, m_g = 0; its zero blocks keep e = 0 (code 7F)
  const GamGroup zero = gam_group(Amax{0}, q448);
  EXPECT_EQ(zero, (GamGroup{0, false}));
  EXPECT_EQ(gam_block_code(Amax{0}, zero, q448), 0x7Fu);
  // a zero block in a group with m_g > 0: e = 0 - 1
  EXPECT_EQ(gam_block_code(Amax{0}, GamGroup{0x333333, false}, q448), 0x7Eu);
  // poisoned group: every block FF, m_g stored 0
  EXPECT_EQ(gam_group(Amax{kF32NaN}, q448), (GamGroup{0, true}));
  EXPECT_EQ(gam_group(Amax{kF32Inf}, q448), (GamGroup{0, true}));
  EXPECT_EQ(gam_block_code(Amax{0x3F800000u}, GamGroup{0, true}, q448), 0xFFu);
  // subnormal amax 2^-149: s = clamped FLT_MAX = (2 - 2^-23)·2^127 -> m = 7FFFFF, e = 127 (FE)
  const GamGroup tiny = gam_group(Amax{kF32MinSub}, q448);
  EXPECT_EQ(tiny.m_g, 0x7FFFFFu);
  EXPECT_EQ(gam_block_code(Amax{kF32MinSub}, tiny, q448), 0xFEu);
  // ... and its element: 2^-149·FLT_MAX = (2 - 2^-23)·2^-22 is below half of E4M3's smallest
  // subnormal 2^-9: flushed to 0
  const std::uint32_t one_sub = kF32MinSub;
  std::uint8_t code = 0xAA;
  QuantizeSpec s;
  s.rule = ScaleRule::gam;
  const QuantizeResult r = quantize(TensorView::vector(F32, &one_sub, 1), s, std::span<std::uint8_t>(&code, 1));
  EXPECT_EQ(code, 0x00);
  EXPECT_EQ(r.total.flushed, 1u);
  EXPECT_EQ(r.meta.scales[0], 0xFEu);
}

TEST(Gam, NanInGroupPoisonsTheGroupUnlessIgnored) {  // §13.3, §17.1
  const std::vector<std::uint32_t> x = {0x3F800000u, 0x7FC00000u, 0x40000000u, 0x40400000u};
  QuantizeSpec s;
  s.rule = ScaleRule::gam;
  s.partition = Partition::blocks(1, 2);
  std::vector<std::uint8_t> codes(4);
  QuantizeResult r = quantize(TensorView(F32, x.data(), 1, 4), s, codes);
  EXPECT_EQ(r.meta.scales, (std::vector<std::uint32_t>{0xFF, 0xFF}));
  EXPECT_EQ(r.meta.group_mantissa[0], 0u);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x7F, 0x7F, 0x7F, 0x7F}));  // every element NaN
  EXPECT_EQ(r.total.nan, 4u);
  s.amax.nan = AmaxNan::ignore;
  r = quantize(TensorView(F32, x.data(), 1, 4), s, codes);
  EXPECT_NE(r.meta.scales[0], 0xFFu);
  EXPECT_EQ(codes[1], 0x7F);  // the NaN element itself stays NaN
  EXPECT_EQ(r.total.nan, 1u);
}

TEST(Gam, GroupsOfBlocks) {  // §12.4, §17.1
  // 2 x 4, blocks 1 x 2, groups = rows (1 x 4): each row has its own mantissa.
  // row 0 amax 3 -> RN32(448/3) = 0x43155555 -> m 0x155555; row 1 amax 10 -> m 0x333333.
  const std::vector<std::uint32_t> x = {0x40400000u, 0xBF800000u, 0x3F000000u, 0x3E800000u,
                                        0x41200000u, 0x40E00000u, 0x00000000u, 0x00000000u};
  QuantizeSpec s;
  s.rule = ScaleRule::gam;
  s.partition = Partition::blocks(1, 2);
  s.group = Partition::per_row();
  std::vector<std::uint8_t> codes(8);
  const QuantizeResult r = quantize(TensorView(F32, x.data(), 2, 4), s, codes);
  EXPECT_EQ(r.meta.group_mantissa, (std::vector<std::uint32_t>{0x155555, 0x333333}));
  // block (0,0) now holds its group's amax: e = 7 (0x86); block (0,1): s_b = 896, m_b 0x600000 >= 0x155555 -> 9 (0x88)
  EXPECT_EQ(r.meta.scales[0], 0x86u);
  EXPECT_EQ(r.meta.scales[1], 0x88u);
  // groups must hold whole blocks
  s.partition = Partition::blocks(1, 3);
  s.group = Partition::blocks(1, 2);
  EXPECT_THROW(quantize(TensorView(F32, x.data(), 2, 4), s, codes), std::invalid_argument);
}

// Random tensors for the properties: values 2^(base - [0, 30]) with random fractions and
// signs (finite; subnormal below 2^-126), some exact zeros.
struct RandomTensor {
  std::size_t rows, cols;
  std::vector<std::uint32_t> x;
};
void showValue(const RandomTensor& t, std::ostream& os) {  // RapidCheck prints counterexamples with it
  os << t.rows << " x " << t.cols << " binary32 {" << std::hex;
  for (const std::uint32_t v : t.x) os << " 0x" << v;
  os << std::dec << " }";
}
rc::Gen<RandomTensor> random_tensor() {
  return rc::gen::exec([] {
    RandomTensor t;
    t.rows = static_cast<std::size_t>(*rc::gen::inRange(1, 9));
    t.cols = static_cast<std::size_t>(*rc::gen::inRange(1, 20));
    const int base = *rc::gen::inRange(-100, 100);
    for (std::size_t i = 0; i < t.rows * t.cols; ++i) {
      if (*rc::gen::inRange(0, 10) == 0)
        t.x.push_back(0);
      else
        t.x.push_back(
            f32_of(*rc::gen::arbitrary<bool>(), base - *rc::gen::inRange(0, 30), *rc::gen::arbitrary<std::uint32_t>()));
    }
    return t;
  });
}

// §17.4 No element saturates under rne, rna, rtz (rn32 and fused); every intermediate
// |RN32(x·G_b)| is at most q_max⁺ = q_max + ulp32(q_max), and at most q_max unless m_b = m_g;
// the block codes are never 00 (§17.3).
RC_GTEST_PROP(Gam, NoElementSaturates, ()) {
  static const std::vector<FormatId> kElems = {FormatId::f8e4m3fn, FormatId::f8e5m2,   FormatId::f6e3m2fn,
                                               FormatId::f6e2m3fn, FormatId::f4e2m1fn, FormatId::int8};
  const RandomTensor t = *random_tensor();
  QuantizeSpec s;
  s.rule = ScaleRule::gam;
  s.element = &format(*rc::gen::elementOf(kElems));
  s.partition = Partition::blocks(static_cast<std::size_t>(*rc::gen::inRange(1, 5)),
                                  static_cast<std::size_t>(*rc::gen::inRange(1, 7)));
  if (*rc::gen::arbitrary<bool>()) s.group = Partition::blocks(s.partition.block_rows * 2, 0);
  s.policy.round = *rc::gen::elementOf(std::vector<Round>{Round::rne, Round::rna, Round::rtz});
  s.policy.overflow = *rc::gen::elementOf(std::vector<Overflow>{Overflow::saturate, Overflow::nonsat});
  s.apply = *rc::gen::elementOf(std::vector<ScaleApply>{ScaleApply::rn32, ScaleApply::fused});
  const TensorView x(F32, t.x.data(), t.rows, t.cols);
  std::vector<std::uint8_t> codes(t.x.size());
  const QuantizeResult r = quantize(x, s, codes);
  RC_ASSERT(r.total.saturated == 0u);
  const Exact q = format_qmax(*s.element);
  const std::uint32_t qbits = rn32(q);
  const BlockGrid grid(t.rows, t.cols, s.partition), groups(t.rows, t.cols, s.group);
  for (std::size_t b = 0; b < grid.count(); ++b) {
    const std::uint32_t code = r.meta.scales[b];
    RC_ASSERT(code >= 0x01u && code <= 0xFEu);
    const BlockRange br = grid.range(b);
    const std::uint32_t m_g = r.meta.group_mantissa[groups.block_of(br.r0, br.c0)];
    const Exact G = gam_block_scale(code, m_g);
    const std::uint32_t m_b = mant_exp(exact_f32(fp32_amax_scale(r.block_amax[b], q))).m;
    for (std::size_t i = br.r0; i < br.r1; ++i)
      for (std::size_t j = br.c0; j < br.c1; ++j) {
        const std::uint32_t y = rn32(exact_mul(exact_f32(t.x[i * t.cols + j]), G)) & 0x7FFFFFFFu;
        RC_ASSERT(y <= qbits + 1);              // q_max⁺ is the next binary32 code after q_max
        if (m_b != m_g) RC_ASSERT(y <= qbits);  // §17.4 (4)
      }
  }
}

// §17 GAM with one block per group is the FP32 amax scale (§14.1): same mantissa, same
// exponent, hence the same codes.
RC_GTEST_PROP(Gam, OneBlockPerGroupEqualsFp32AmaxScale, ()) {
  const RandomTensor t = *random_tensor();
  const Partition p = *rc::gen::elementOf(
      std::vector<Partition>{Partition::tensor(), Partition::per_row(), Partition::per_col(), Partition::blocks(2, 3)});
  QuantizeSpec gam;
  gam.rule = ScaleRule::gam;
  gam.partition = p;
  gam.group = p;
  QuantizeSpec fp32 = gam;
  fp32.rule = ScaleRule::amax;
  const TensorView x(F32, t.x.data(), t.rows, t.cols);
  std::vector<std::uint8_t> c1(t.x.size()), c2(t.x.size());
  const QuantizeResult a = quantize(x, gam, c1), b = quantize(x, fp32, c2);
  RC_ASSERT(a.meta.scales.size() == b.meta.scales.size());
  for (std::size_t i = 0; i < a.meta.scales.size(); ++i)
    RC_ASSERT(gam_block_scale_f32(a.meta.scales[i], a.meta.group_mantissa[i]) == b.meta.scales[i]);
  RC_ASSERT(c1 == c2);
}

// §17.4 (5) The bound q_max⁺ is reached: amax = 0x3FC18301 (1.51181042) with f8e4m3fn gives
// s = RN32(448 / amax) = 0x43942AAF and RN32(amax·s) = 0x43E00001 = 448 + 2^-15 (checked with
// exact fractions). Under rne that still converts to 448 without overflow; under rup (for a
// positive value; rdn for a negative one) it rounds past 448 and saturates, as it would with
// the plain FP32 amax scale.
TEST(Gam, QmaxPlusIsReachedAndOnlyRupOrSrCanSaturate) {
  const std::uint32_t amax = 0x3FC18301u;
  const Exact q448{false, 7, 6, false};
  const std::uint32_t s = fp32_amax_scale(Amax{amax}, q448);
  EXPECT_EQ(s, 0x43942AAFu);
  EXPECT_EQ(rn32(exact_mul(exact_f32(amax), exact_f32(s))), 0x43E00001u);
  QuantizeSpec spec;
  spec.rule = ScaleRule::gam;
  std::uint8_t code = 0;
  QuantizeResult r = quantize(TensorView::vector(F32, &amax, 1), spec, std::span<std::uint8_t>(&code, 1));
  EXPECT_EQ(r.meta.scales[0], 0x87u);  // E(s) = 7 (s = 296.3), kept
  EXPECT_EQ(code, 0x7E);
  EXPECT_EQ(r.total.saturated, 0u);
  spec.policy.round = Round::rup;
  r = quantize(TensorView::vector(F32, &amax, 1), spec, std::span<std::uint8_t>(&code, 1));
  EXPECT_EQ(code, 0x7E);  // saturated to 448
  EXPECT_EQ(r.total.saturated, 1u);
  // sr with k = 24: the discarded fraction 2^-15 / 32 = 2^-20 gives f_k = 16, so r >= 2^24 - 16
  // rounds up past max finite
  spec.policy.round = Round::sr;
  spec.policy.sr_bits = 24;
  const std::uint32_t rnd = (1u << 24) - 16;
  r = quantize(TensorView::vector(F32, &amax, 1), spec, std::span<std::uint8_t>(&code, 1),
               std::span<const std::uint32_t>(&rnd, 1));
  EXPECT_EQ(r.total.saturated, 1u);
  const std::uint32_t rnd_low = (1u << 24) - 17;
  r = quantize(TensorView::vector(F32, &amax, 1), spec, std::span<std::uint8_t>(&code, 1),
               std::span<const std::uint32_t>(&rnd_low, 1));
  EXPECT_EQ(r.total.saturated, 0u);
}

}  // namespace
}  // namespace numref
