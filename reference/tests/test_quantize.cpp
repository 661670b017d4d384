// numref tests — quantize, dequantize, fake-quant: the arithmetic steps.    spec §19
//
// Hand-worked examples (binary32 codes of quotients checked with exact fractions, shown in
// the comments), the random-stream order, the output layout, the memoized whole-tensor path
// against the per-block path, the dequantization error bound as a property, and the errors.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "numref/oracle/rational_round.hpp"
#include "numref/quantize.hpp"
#include "test_support.hpp"

namespace numref {
namespace {

const Format& F32 = format(FormatId::f32);
const Format& BF16 = format(FormatId::bf16);

// §19.2 rn32 (two roundings) vs fused (one rounding). Tensor [448 - 2^-14, 1.0625 - 2^-23]:
//   S = RN32(448 / (448 - 2^-14)) = RN32(1 + 1.1428·2^-23) = 1 + 2^-23 (0x3F800001).
//   x1·S = (1.0625 - 2^-23)(1 + 2^-23) = 1.0625 + 2^-27 - 2^-46, just above the E4M3 midpoint
//   1.0625 between 1.0 (0x38) and 1.125 (0x39).
//   rn32:  RN32(x1·S) = 1.0625 exactly (the binary32 step there is 2^-23), a tie -> even -> 0x38.
//   fused: the exact product is above the midpoint -> 0x39.
//   x0·S = 448 - 2^-17 - 2^-37 -> 448 (0x7E) either way.
TEST(Quantize, Rn32VersusFusedDoubleRounding) {
  const std::vector<std::uint32_t> x = {0x43DFFFFEu, 0x3F87FFFFu};  // 448 - 2^-14, 1.0625 - 2^-23
  std::vector<std::uint8_t> codes(2);
  QuantizeSpec s;  // amax rule, tensor, f8e4m3fn, rn32
  QuantizeResult r = quantize(TensorView::vector(F32, x.data(), 2), s, codes);
  EXPECT_EQ(r.meta.scales[0], 0x3F800001u);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x7E, 0x38}));
  s.apply = ScaleApply::fused;
  r = quantize(TensorView::vector(F32, x.data(), 2), s, codes);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x7E, 0x39}));
}

// §19.3 dequantize: divide vs reciprocal. amax = 3 -> S = RN32(448/3) = 0x43155555 (149.33).
// Element 2.5714 ... code 0x7C = 384: 384 / S = 2.5714286 -> RN32 = 0x4024924A; the reciprocal
// RN32(1/S) = 0x3BDB6DB7 and RN32(384·0x3BDB6DB7) = 0x40249249 (one ulp lower).
TEST(Quantize, DequantizeDivideVersusReciprocal) {
  const std::vector<std::uint32_t> x = {0x40400000u, 0x40249249u};  // 3, 2.5714285
  std::vector<std::uint8_t> codes(2);
  QuantizeSpec s;
  QuantizeResult r = quantize(TensorView::vector(F32, x.data(), 2), s, codes);
  ASSERT_EQ(r.meta.scales[0], 0x43155555u);
  ASSERT_EQ(codes[1], 0x7C);  // 2.5714·149.33 = 384.0 -> 0x7C
  std::vector<std::uint32_t> out(2);
  dequantize(codes, r.meta, out);
  EXPECT_EQ(out[0], 0x40400000u);  // 448 / S = 3.0000000 (exactly representable after rounding)
  EXPECT_EQ(out[1], 0x4024924Au);
  s.dequant = DequantOp::reciprocal;
  r = quantize(TensorView::vector(F32, x.data(), 2), s, codes);
  dequantize(codes, r.meta, out);
  EXPECT_EQ(out[1], 0x40249249u);
  // amax-recip stores R = RN32(1/S) and multiplies: the same value
  s.rule = ScaleRule::amax_recip;
  s.dequant = DequantOp::divide;
  r = quantize(TensorView::vector(F32, x.data(), 2), s, codes);
  EXPECT_EQ(r.meta.scales[0], 0x3BDB6DB7u);
  dequantize(codes, r.meta, out);
  EXPECT_EQ(out[1], 0x40249249u);
}

// §19.6 fake-quant (MoR Figure 4), bf16 in and out: [1.0, 3.0] -> S = 0x43155555;
// 1·S = 149.333 -> E4M3 (128..256 step 16) 144 = 0x71 -> 144 / S = 0.96428573 (0x3F76DB6E)
// -> bf16 RNE: 0x3F76 | 0xDB6E > 0x8000 -> 0x3F77. 3·S = 448 -> 448 / S = 3 -> 0x4040.
TEST(Quantize, FakeQuantToBf16) {
  const std::vector<std::uint16_t> x = {0x3F80, 0x4040};
  std::vector<std::uint32_t> out(2);
  QuantizeSpec s;
  fake_quantize(TensorView::vector(BF16, x.data(), 2), s, BF16, out);
  EXPECT_EQ(out, (std::vector<std::uint32_t>{0x3F77, 0x4040}));
}

TEST(Quantize, SpecialElements) {  // §13.2, §19.2
  // [1, -NaN, +Inf, -0] with nan=ignore, inf=ignore: S = 448; -NaN -> E4M3 NaN with its sign
  // (0xFF, §6.3 one NaN per sign); +Inf -> max finite under saturate + inf_sat=max (0x7E);
  // -0 -> 0x80.
  const std::vector<std::uint32_t> x = {0x3F800000u, 0xFFC00000u, 0x7F800000u, 0x80000000u};
  std::vector<std::uint8_t> codes(4);
  QuantizeSpec s;
  s.amax = {AmaxNan::ignore, AmaxInf::ignore};
  QuantizeResult r = quantize(TensorView::vector(F32, x.data(), 4), s, codes);
  EXPECT_EQ(r.meta.scales[0], 0x43E00000u);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x7E, 0xFF, 0x7E, 0x80}));
  EXPECT_EQ(r.total.nan, 1u);
  EXPECT_EQ(r.total.inf, 1u);
  EXPECT_EQ(r.total.saturated, 0u);  // Inf is counted as inf, not as a saturated finite value
  std::vector<std::uint32_t> out(4);
  dequantize(codes, r.meta, out);
  // 0xFF (E4M3 NaN, fraction 111) -> f32 under the ocp wide policy (payload): sign kept,
  // fraction 111 at the top, quiet -> 0xFFF00000
  EXPECT_EQ(out, (std::vector<std::uint32_t>{0x3F800000u, 0xFFF00000u, 0x3F800000u, 0x80000000u}));
  // propagate (default): the block is poisoned; every code is the NaN of binary32's canonical
  // NaN (0x7F), every dequantized value the canonical NaN, the fake-quant bf16 7FC0
  r = quantize(TensorView::vector(F32, x.data(), 4), QuantizeSpec{}, codes);
  EXPECT_EQ(r.meta.scales[0], kF32NaN);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x7F, 0x7F, 0x7F, 0x7F}));
  EXPECT_EQ(r.total.nan, 4u);
  dequantize(codes, r.meta, out);
  EXPECT_EQ(out, (std::vector<std::uint32_t>(4, kF32NaN)));
  fake_quantize(TensorView::vector(F32, x.data(), 4), QuantizeSpec{}, BF16, out);
  EXPECT_EQ(out, (std::vector<std::uint32_t>(4, 0x7FC0u)));
}

// §19.4 layout: a 3 x 5 tensor in 2 x 2 blocks is a 2 x 3 grid, scales block-row-major; the
// bottom-right block is the single element (2, 4). Values: element (i, j) = i*5 + j + 1, so
// block (I, J)'s amax is its bottom-right element; with the mx-floor rule and E4M3 (emax 8)
// X = 2^(E(amax) - 8): block amaxes 7, 9, 10, 12, 14, 15 -> E = 2,3,3,3,3,3 -> exponents
// -6, -5, ... -> codes 127 - 6 = 0x79, then 0x7A five times.
TEST(Quantize, OutputLayout) {
  std::vector<std::uint32_t> x(15);
  for (int i = 0; i < 15; ++i) {
    const float v = static_cast<float>(i + 1);  // exact small integers
    std::memcpy(&x[static_cast<std::size_t>(i)], &v, 4);
  }
  QuantizeSpec s;
  s.rule = ScaleRule::mx_floor;
  s.partition = Partition::blocks(2, 2);
  std::vector<std::uint8_t> codes(15);
  const QuantizeResult r = quantize(TensorView(F32, x.data(), 3, 5), s, codes);
  EXPECT_EQ(r.meta.scales, (std::vector<std::uint32_t>{0x79, 0x7A, 0x7A, 0x7A, 0x7A, 0x7A}));
  EXPECT_EQ(r.block_amax[2].f32, 0x41200000u);  // 10
  EXPECT_EQ(r.block_amax[5].f32, 0x41700000u);  // 15
  // element (0, 0) = 1 in block X = 2^-6: 1·2^6 = 64 = 2^6 -> field 6 + 7 = 13 -> 13 << 3 = 0x68
  EXPECT_EQ(codes[0], 0x68);
  // element (2, 4) = 15 in block X = 2^-5: 15·32 = 480 -> saturates to 448 (0x7E)
  EXPECT_EQ(codes[14], 0x7E);
}

std::vector<std::uint32_t> random_f32(convtest::SplitMix64& g, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (auto& c : v)
    c = (static_cast<std::uint32_t>(g.next() & 1) << 31) | (static_cast<std::uint32_t>(120 + g.next() % 12) << 23) |
        (static_cast<std::uint32_t>(g.next()) & 0x7FFFFFu);
  return v;
}

// §19.2 random bits: element (i, j) takes random[i * cols + j] whatever the partition and
// however a backend walks the blocks; a transposed view takes them in ITS element order.
TEST(Quantize, RandomStreamIsInElementOrder) {
  convtest::SplitMix64 g(2024);
  const std::size_t rows = 4, cols = 8;
  std::vector<std::uint32_t> x = random_f32(g, rows * cols);
  // give every row the same amax (32 in column 0; the others are below 2^4) so that per-row
  // and per-tensor scales agree
  for (std::size_t i = 0; i < rows; ++i) x[i * cols] = 0x42000000u;
  std::vector<std::uint32_t> rnd(rows * cols);
  for (auto& r : rnd) r = static_cast<std::uint32_t>(g.next() & 0xFF);
  QuantizeSpec s;
  s.policy.round = Round::sr;
  s.policy.sr_bits = 8;
  std::vector<std::uint8_t> a(rows * cols), b(rows * cols), c(rows * cols);
  const TensorView view(F32, x.data(), rows, cols);
  quantize(view, s, a, rnd);
  s.partition = Partition::per_row();
  quantize(view, s, b, rnd);
  EXPECT_EQ(a, b);
  // the transpose, with the random bits re-ordered into its element order
  std::vector<std::uint32_t> rnd_t(rows * cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) rnd_t[j * rows + i] = rnd[i * cols + j];
  s.partition = Partition::per_col();  // per row of x = per column of x^T
  quantize(view.transposed(), s, c, rnd_t);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      EXPECT_EQ(c[j * rows + i], a[i * cols + j]);
    }
  // each value drives its own element only
  std::vector<std::uint32_t> r0(rows * cols, 0), r1 = r0;
  r1[13] = 0xFF;
  quantize(view, s, a, r0);
  quantize(view, s, b, r1);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i != 13) {
      EXPECT_EQ(a[i], b[i]) << i;
    }
  }
}

// The memoized whole-tensor path (quantize_all, used by quantize()) equals the plain
// per-block path, on tensors large enough to build the tables (>= 2^16 elements per factor).
TEST(Quantize, MemoizedPathEqualsPerBlockPath) {
  convtest::SplitMix64 g(99);
  struct Src {
    FormatId id;
    std::size_t rows, cols;
  };
  for (const Src src : {Src{FormatId::bf16, 256, 512}, Src{FormatId::f16, 300, 300}, Src{FormatId::f8e5m2, 64, 64}}) {
    const Format& f = format(src.id);
    std::vector<std::uint16_t> x(src.rows * src.cols);
    for (auto& c : x) c = static_cast<std::uint16_t>(g.next() & f.mask());  // every code, NaN and Inf included
    const TensorView view(f, x.data(), src.rows, src.cols);
    for (ScaleRule rule : {ScaleRule::amax, ScaleRule::gam, ScaleRule::mx_floor, ScaleRule::int8}) {
      QuantizeSpec s;
      s.rule = rule;
      s.amax = {AmaxNan::ignore, AmaxInf::ignore};
      s.element = &format(rule == ScaleRule::int8 ? FormatId::int8 : FormatId::f8e4m3fn);
      s.partition = rule == ScaleRule::mx_floor ? Partition::blocks(1, 32) : Partition::blocks(128, 128);
      std::vector<std::uint8_t> fast(view.size()), slow(view.size());
      const QuantizeResult r = quantize(view, s, fast);
      Quantizer q(s, view.rows(), view.cols());
      std::vector<Amax> am(q.grid().count());
      for (std::size_t b = 0; b < am.size(); ++b) am[b] = q.amax(view, b);
      q.prepare(am);
      for (std::size_t b = 0; b < am.size(); ++b) {
        const QuantizeStats st = q.quantize_block(view, b, q.block_scale(b, am[b]), slow, {});
        EXPECT_EQ(st, r.block_stats[b]) << f.name << " " << to_string(rule) << " block " << b;
      }
      EXPECT_EQ(fast, slow) << f.name << " " << to_string(rule);
    }
  }
  // a sub-byte source with garbage above its width (§2.4: ignored, as by decode) on both paths
  const Format& e2m1 = format(FormatId::f4e2m1fn);
  std::vector<std::uint8_t> x(256 * 300);
  for (auto& c : x) c = static_cast<std::uint8_t>(g.next());
  const TensorView view(e2m1, x.data(), 256, 300);
  QuantizeSpec s;
  std::vector<std::uint8_t> fast(view.size()), slow(view.size());
  quantize(view, s, fast);
  Quantizer q(s, 256, 300);
  const Amax a = q.amax(view, 0);
  q.prepare(std::span<const Amax>(&a, 1));
  q.quantize_block(view, 0, q.block_scale(0, a), slow, {});
  EXPECT_EQ(fast, slow);
  for (auto& c : x) c &= 0x0F;
  quantize(view, s, slow);
  EXPECT_EQ(fast, slow);
}

// §19.3 error bound: for an element whose scaled value y = RN32(x·S) lies in the element's
// normal range [2^emin, q_max], dequant(quant(x)) = x (1+d1)(1+d2)(1+d3) with |d1|, |d3| <=
// 2^-24 (two RN32 with normal binary32 results) and |d2| <= 2^-(m+1) (RNE at m fraction bits),
// so the relative error is at most 2^-(m+1) + 2^-22. Checked exactly (rationals) for the amax,
// pow2 and gam rules.
RC_GTEST_PROP(Quantize, DequantRelativeErrorBound, ()) {
  static const std::vector<FormatId> kElems = {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f6e3m2fn,
                                               FormatId::f6e2m3fn, FormatId::f4e2m1fn};
  const Format& e = format(*rc::gen::elementOf(kElems));
  const ScaleRule rule = *rc::gen::elementOf(std::vector<ScaleRule>{ScaleRule::amax, ScaleRule::pow2, ScaleRule::gam});
  const std::size_t n = static_cast<std::size_t>(*rc::gen::inRange(1, 64));
  const int base = *rc::gen::inRange(-100, 100);  // x, y and the result stay normal binary32
  std::vector<std::uint32_t> x(n);
  for (auto& v : x)
    v = (*rc::gen::arbitrary<bool>() ? 0x80000000u : 0u) |
        (static_cast<std::uint32_t>(base + 127 - *rc::gen::inRange(0, 8)) << 23) |
        (*rc::gen::arbitrary<std::uint32_t>() & 0x7FFFFFu);
  QuantizeSpec s;
  s.rule = rule;
  s.element = &e;
  s.partition = Partition::blocks(1, static_cast<std::size_t>(*rc::gen::inRange(1, 9)));
  std::vector<std::uint8_t> codes(n);
  const QuantizeResult r = quantize(TensorView::vector(F32, x.data(), n), s, codes);
  std::vector<std::uint32_t> out(n);
  dequantize(codes, r.meta, out);
  using oracle::rat::Rational;
  const Rational bound = oracle::rat::pow2(-(e.man_bits + 1)) + oracle::rat::pow2(-22);
  const Rational lo = oracle::rat::pow2(e.emin()), hi = oracle::rat::max_finite(e, false, false);
  for (std::size_t i = 0; i < n; ++i) {
    const oracle::rat::Value xd = oracle::rat::decode(x[i], F32), cd = oracle::rat::decode(codes[i], e);
    const Rational code_v = abs(cd.v);
    // y is in [2^emin, q_max) when its code is strictly inside (2^emin, q_max): a code of 2^emin
    // may come from a subnormal y, a code of q_max from a clamped one
    if (code_v <= lo || code_v >= hi) continue;
    const Rational err = abs(oracle::rat::decode(out[i], F32).v - xd.v) / abs(xd.v);
    RC_ASSERT(err <= bound);
  }
}

TEST(Quantize, Errors) {  // §19 bad input is an error naming the problem
  const std::vector<std::uint32_t> x = {kF32One, 0x40000000u};
  const TensorView v = TensorView::vector(F32, x.data(), 2);
  std::vector<std::uint8_t> codes(2);
  auto throws = [&](QuantizeSpec s, std::span<const std::uint32_t> rnd = {}) {
    EXPECT_THROW(quantize(v, s, codes, rnd), std::invalid_argument);
  };
  QuantizeSpec s;
  s.element = &format(FormatId::f16);  // not <= 8 bits
  throws(s);
  s.element = &format(FormatId::f8e8m0fnu);  // unsigned, no zero
  throws(s);
  s = QuantizeSpec{};
  s.rule = ScaleRule::int8;  // int8 rule with a floating-point element
  throws(s);
  s = QuantizeSpec{};
  s.q_max = Exact{false, 3, 0, false};  // q_max below 4
  throws(s);
  s = QuantizeSpec{};
  s.policy.round = Round::sr;  // sr without k
  throws(s);
  s.policy.sr_bits = 8;
  throws(s);  // sr without random values
  const std::vector<std::uint32_t> rnd = {1, 2};
  s.policy.sr_variant = SrVariant::add;
  s.apply = ScaleApply::fused;  // add needs a source pattern
  throws(s, rnd);
  s = QuantizeSpec{};
  throws(s, rnd);  // random values without sr
  s.apply = ScaleApply::fused;
  s.policy.daz = true;
  throws(s);
  std::vector<std::uint8_t> short_codes(1);
  EXPECT_THROW(quantize(v, QuantizeSpec{}, short_codes), std::invalid_argument);
  EXPECT_THROW(TensorView(F32, x.data(), 0, 2), std::invalid_argument);  // empty tensor
  EXPECT_THROW(TensorView(format(FormatId::int8), x.data(), 1, 2), std::invalid_argument);
}

}  // namespace
}  // namespace numref
