// The GaussWS op family (spec §30; runner clauses §31.9 vector files, §32.8 the C
// description, §33.8 pipe lines, §34.10 suites and comparison). Expected values are derived
// by hand from §30 and shown inline; "what a wrong backend returns" is a hand-made edit.
#include <gtest/gtest.h>

#include <algorithm>

#include "family_test_support.hpp"
#include "numref/conform/vectors.hpp"
#include "ops/gaussws/gaussws.hpp"

using namespace numref;
using namespace numref::conform;
using namespace numref::conform::gaussws;

namespace {

// One case of suite text `t` with the given input columns (empty: zeros), run through the
// reference.
struct OneRun {
  GausswsParamsPtr p;
  std::vector<std::uint32_t> in, exp;
  std::uint32_t y(std::size_t k) const { return exp[static_cast<std::size_t>(p->layout().y) + k]; }
  std::uint32_t out(int at, std::size_t k = 0) const { return exp[static_cast<std::size_t>(at) + k]; }
};
OneRun run(const std::string& t, const std::vector<std::uint32_t>& w, const std::vector<std::uint32_t>& bt,
           const std::vector<std::uint32_t>& u, const std::vector<std::uint32_t>& g) {
  OneRun r{parse(t), {}, {}};
  const GausswsLayout& L = r.p->layout();
  r.in.assign(static_cast<std::size_t>(L.in), 0);
  std::copy(w.begin(), w.end(), r.in.begin() + L.w);
  std::copy(bt.begin(), bt.end(), r.in.begin() + L.bt);
  if (L.u >= 0) std::copy(u.begin(), u.end(), r.in.begin() + L.u);
  std::copy(g.begin(), g.end(), r.in.begin() + L.g);
  r.exp.assign(static_cast<std::size_t>(L.out), 0);
  r.p->expected(1, r.in.data(), r.exp.data());
  return r;
}

constexpr std::uint32_t kOne = 0x3F800000u;
// §30.2 words: R = +1 (u10, u12, u14), -1 (and u15), +2 (u0, u2..u9), -2, 0.
constexpr std::uint32_t kP1 = 0x5400u, kM1 = 0xD400u, kP2 = 0x03FDu, kM2 = 0x83FDu;

}  // namespace

// §34.10 canonical text: keys in a fixed order, defaults written out, round trip; the C
// description (§32.8).
TEST(GausswsParams, CanonicalText) {
  const auto p = parse("shape=70x45 w=bf16");
  EXPECT_EQ(p->text(), "w=bf16 g=f32 shape=70x45 noise=bits sum=exact");
  EXPECT_EQ(parse(p->text())->text(), p->text());
  const auto q = parse("sum=f32 noise=key g=bf16 w=f32 shape=1x1");
  EXPECT_EQ(q->text(), "w=f32 g=bf16 shape=1x1 noise=key sum=f32");
  // 70 x 45: ceil(70/32) x ceil(45/32) = 3 x 2 blocks, ceil(3150 / 8) = 394 packed words
  EXPECT_EQ(p->layout().nb, 6u);
  EXPECT_EQ(p->layout().nr, 394u);
  EXPECT_EQ(p->c_op().n_blocks, 6u);
  EXPECT_EQ(p->c_op().block_rows, 32u);
  EXPECT_EQ(p->c_op().w_format, NUMREF_FMT_BF16);
  EXPECT_EQ(p->c_op().noise, NUMREF_GAUSSWS_NOISE_BITS);
  EXPECT_EQ(q->c_op().noise, NUMREF_GAUSSWS_NOISE_KEY);
  EXPECT_EQ(q->c_op().sum, NUMREF_GAUSSWS_SUM_F32);
  EXPECT_EQ(q->c_op().g_format, NUMREF_FMT_BF16);
  EXPECT_EQ(p->schema().names(), "shape w bt u g r scale y grad");
  EXPECT_EQ(q->schema().names(), "shape w bt key g r scale y grad");
}

TEST(GausswsParams, BadParametersAreNamed) {
  auto err = [](const std::string& t) {
    try {
      parse(t);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err("w=f16 shape=4x4").find("w='f16', expected f32 or bf16"), std::string::npos);
  EXPECT_NE(err("w=f32 g=f8e4m3fn shape=4x4").find("g='f8e4m3fn'"), std::string::npos);
  EXPECT_NE(err("w=f32 shape=4x4 noise=philox").find("noise='philox'"), std::string::npos);
  EXPECT_NE(err("w=f32 shape=4x4 sum=f16").find("sum='f16'"), std::string::npos);
  EXPECT_NE(err("shape=4x4").find("w"), std::string::npos);
  EXPECT_NE(err("w=f32 shape=0x4").find("empty"), std::string::npos);
  EXPECT_NE(err("w=f32 shape=4x4 transpose=1").find("unknown"), std::string::npos);
}

// §30.5 with b_t = 9, a = 1: e = 2^-8, s = 2^-8 (0x3b800000). bf16 has 7 fraction bits, so
// the ulp is 2^-7 in [1, 2) and 2^-8 in [0.5, 1):
//   1 + 2^-8 (R = +1): the midpoint of 1 and 1 + 2^-7, ties to even: 1 (0x3f80; Lemma 1 tight)
//   1 - 2^-8 (R = -1): 0x3f7f;  -0 with R = 0: -0 (0x8000, "no noise" keeps w)
//   0.5 + 2^-7 (R = +2): 0x3f02; 1 - 2^-7 (R = -2): 0x3f7e; 1 (R = 0): 0x3f80
//   1 + 2^-7 (R = +2): 0x3f81;  0.75 - 2^-8 (R = -1): 0x3f3f
// R = [+1 -1 0 +2 -2 0 +2 -1] packs (§30.9) as nibbles 1 9 0 2 a 0 2 9, element 0 lowest:
// 0x920a2091. With g = 1: T = 1 - 1 + 2 - 2 + 2 - 1 = 1, dL/db_t = RN32(-ln2 * 2^-8):
// RN32(ln 2) = 0x3f317218 (ln 2 = 0.693147180559945..., 0x3f317218 = 0.693147182...), the
// exponent 8 lower and the sign: 0xbb317218.
TEST(GausswsFamily, HandComputedCase) {
  const OneRun r = run("w=f32 shape=1x8", {kOne, kOne, 0x80000000u, 0x3F000000u, kOne, kOne, kOne, 0x3F400000u},
                       {0x41100000u}, {kP1, kM1, 0, kP2, kM2, 0, kP2, kM1}, std::vector<std::uint32_t>(8, kOne));
  const GausswsLayout& L = r.p->layout();
  const std::uint32_t y[] = {0x3F80, 0x3F7F, 0x8000, 0x3F02, 0x3F7E, 0x3F80, 0x3F81, 0x3F3F};
  for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(r.y(k), y[k]) << k;
  EXPECT_EQ(r.out(L.r), 0x920A2091u);
  EXPECT_EQ(r.out(L.scale), 0x3B800000u);
  EXPECT_EQ(r.out(L.grad), 0xBB317218u);
}

// §30.6 a NaN in w poisons its block only; §30.7 an Inf in g poisons that block's gradient.
// 1 x 40: block 0 holds columns 0-31, block 1 columns 32-39; b_t = 4: s = 2^-3, R = +1:
// 1 + 2^-3 = 1.125 (0x3f90) in block 1.
TEST(GausswsFamily, PoisonedBlocks) {
  std::vector<std::uint32_t> w(40, kOne), g(40, kOne);
  w[5] = 0x7FC00000u;
  g[35] = 0xFF800000u;
  const OneRun r = run("w=f32 shape=1x40", w, {0x40800000u, 0x40800000u}, std::vector<std::uint32_t>(40, kP1), g);
  const GausswsLayout& L = r.p->layout();
  for (std::size_t k = 0; k < 32; ++k) EXPECT_EQ(r.y(k), 0x7FC0u) << k;
  for (std::size_t k = 32; k < 40; ++k) EXPECT_EQ(r.y(k), 0x3F90u) << k;
  EXPECT_EQ(r.out(L.scale, 0), 0x7FC00000u);
  EXPECT_EQ(r.out(L.scale, 1), 0x3E000000u);
  EXPECT_EQ(r.out(L.grad, 0), 0x7FC00000u);
  EXPECT_EQ(r.out(L.grad, 1), 0x7FC00000u);
}

// §30.4 b_t = -130: 2^131 overflows binary32, s = +Inf; R = +-1 gives +-Inf, R = 0 keeps w (-1,
// 0xbf80); T = 1 - 1 + 0 + 1 = 1 so dL/db_t = -Inf. b_t = 200 (bf16 w): 2^-199 underflows to
// 0, s = 0, no noise: w itself, and a zero gradient.
TEST(GausswsFamily, ScaleOverflowAndUnderflow) {
  const OneRun r = run("w=f32 shape=1x4", {kOne, 0x40000000u, 0xBF800000u, 0x40400000u}, {0xC3020000u},
                       {kP1, kM1, 0, kP1}, {kOne, kOne, kOne, kOne});
  const GausswsLayout& L = r.p->layout();
  EXPECT_EQ(r.y(0), 0x7F80u);
  EXPECT_EQ(r.y(1), 0xFF80u);
  EXPECT_EQ(r.y(2), 0xBF80u);
  EXPECT_EQ(r.y(3), 0x7F80u);
  EXPECT_EQ(r.out(L.scale), 0x7F800000u);
  EXPECT_EQ(r.out(L.grad), 0xFF800000u);
  const OneRun z = run("w=bf16 shape=1x2", {0x4040u, 0xC000u}, {0x43480000u}, {kP2, kM1}, {kOne, kOne});
  EXPECT_EQ(z.y(0), 0x4040u);
  EXPECT_EQ(z.y(1), 0xC000u);
  EXPECT_EQ(z.out(z.p->layout().scale), 0u);
  EXPECT_EQ(z.out(z.p->layout().grad), 0u);
}

// §30.3 noise=key: the key column's words are seed, layer, step as (low, high) pairs, and R is
// the generator's; the packed R of a 1 x 8 matrix is the §30.9 packing of
// noise_from_bits(noise_word(block_key(k, 0, 0), e)) for e = 0..7.
TEST(GausswsFamily, KeyColumn) {
  const auto p = parse("w=f32 shape=1x8 noise=key");
  const GausswsLayout& L = p->layout();
  std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in), 0), out(static_cast<std::size_t>(L.out), 0);
  const numref::gaussws::NoiseKey k{0x0123456789ABCDEFull, 7, 0xFEDCBA9876543210ull};
  put_key(k, in.data() + L.key);
  EXPECT_EQ(in[static_cast<std::size_t>(L.key)], 0x89ABCDEFu);
  EXPECT_EQ(in[static_cast<std::size_t>(L.key) + 1], 0x01234567u);
  EXPECT_EQ(in[static_cast<std::size_t>(L.key) + 2], 7u);
  EXPECT_EQ(in[static_cast<std::size_t>(L.key) + 5], 0xFEDCBA98u);
  for (std::size_t j = 0; j < 8; ++j) in[static_cast<std::size_t>(L.w) + j] = kOne;
  in[static_cast<std::size_t>(L.bt)] = 0x40800000u;
  p->expected(1, in.data(), out.data());
  const std::uint64_t bk = numref::gaussws::block_key(k, 0, 0);
  std::uint32_t word = 0;
  for (std::uint32_t e = 0; e < 8; ++e) {
    const int v = numref::gaussws::noise_from_bits(numref::gaussws::noise_word(bk, e));
    word |= static_cast<std::uint32_t>(v < 0 ? 8 - v : v) << (4 * e);
  }
  EXPECT_EQ(out[static_cast<std::size_t>(L.r)], word);
}

// §34.4 a wrong backend: one output element, one scale, one gradient, one packed R word; the
// class names the first differing column.
TEST(GausswsFamily, MismatchClasses) {
  const auto p = parse("w=f32 shape=33x40");
  const GausswsLayout& L = p->layout();
  std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in)), exp(static_cast<std::size_t>(L.out));
  generate_case(*p, 1, 0, in.data());
  p->expected(1, in.data(), exp.data());
  auto cls = [&](int at, std::size_t k) {
    std::vector<std::uint32_t> got = exp;
    got[static_cast<std::size_t>(at) + k] ^= 1u;
    return compare(*p, single_case(in.data(), in.size()), single_case(exp.data(), exp.size()),
                   single_case(got.data(), got.size()), {})
        .cls;
  };
  EXPECT_EQ(cls(L.y, 1000), "gaussws/output");
  EXPECT_EQ(cls(L.scale, 3), "gaussws/scale");
  EXPECT_EQ(cls(L.grad, 2), "gaussws/grad");
  EXPECT_EQ(cls(L.r, 7), "gaussws/noise");
}

// §33.8 a pipe result line is the output columns flat, and reads back.
TEST(GausswsFamily, PipeRoundTrip) {
  const auto p = parse("w=bf16 g=bf16 shape=3x5 noise=key");
  const GausswsLayout& L = p->layout();
  std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in)), exp(static_cast<std::size_t>(L.out));
  generate_case(*p, 1, 2, in.data());
  p->expected(1, in.data(), exp.data());
  const std::string line = pipe_result_line(*p, single_case(exp.data(), exp.size()), false);
  // r (2 words) scale (1) y (15) grad (1): four fields
  EXPECT_EQ(split_ws(line).size(), 4u) << line;
  std::vector<std::uint32_t> back(exp.size(), 0);
  EXPECT_EQ(pipe_result(*p, line, false, back.data(), 1, 0), "") << line;
  EXPECT_EQ(back, exp);
}

// §34.10 the plan: level 0 has both w formats, both noise sources and both sums, every
// suite within 8192 elements; generated cases are a pure function of (seed, text, index).
TEST(GausswsFamily, Plan) {
  std::vector<GeneratedSuite> s0, s1;
  PlanRequest req;
  family().plan(req, s0);
  req.level = Level::l1;
  family().plan(req, s1);
  EXPECT_GT(s1.size(), s0.size());
  std::string all;
  for (const auto& g : s1) {
    all += g.params->text() + "\n";
    const auto& p = static_cast<const GausswsParams&>(*g.params);
    EXPECT_LE(p.layout().n, 8192u) << p.text();
  }
  for (const char* want : {"w=f32", "w=bf16", "g=bf16", "noise=key", "noise=bits", "sum=f32", "sum=exact"})
    EXPECT_NE(all.find(want), std::string::npos) << want;
  const auto p = parse("w=f32 shape=40x70");
  std::vector<std::uint32_t> a(static_cast<std::size_t>(p->layout().in)), b(a.size());
  generate_case(*p, 5, 3, a.data());
  generate_case(*p, 5, 3, b.data());
  EXPECT_EQ(a, b);
  generate_case(*p, 5, 4, b.data());
  EXPECT_NE(a, b);
  // selectors: gaussws:f32:bf16:key keeps only w=f32 noise=key suites; a bad word is refused
  std::vector<GeneratedSuite> sel;
  req.selectors = {"f32:bf16:key"};
  family().plan(req, sel);
  ASSERT_FALSE(sel.empty());
  for (const auto& g : sel) {
    EXPECT_NE(g.params->text().find("w=f32"), std::string::npos);
    EXPECT_NE(g.params->text().find("noise=key"), std::string::npos);
  }
  req.selectors = {"f32:bf16:philox"};
  EXPECT_THROW(family().plan(req, sel), std::invalid_argument);
}

// §30.1 the generated b_t are finite (the reference refuses any other) and cover integers,
// fractions and the extremes; some blocks are poisoned, some all zero.
TEST(GausswsFamily, GeneratedCoverage) {
  const auto p = parse("w=f32 shape=64x64");
  const GausswsLayout& L = p->layout();
  bool integer = false, fraction = false, extreme = false, poisoned = false, zero_scale = false;
  std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in)), out(static_cast<std::size_t>(L.out));
  for (std::uint64_t j = 0; j < 40; ++j) {
    generate_case(*p, 1, j, in.data());
    p->expected(1, in.data(), out.data());
    for (std::size_t b = 0; b < L.nb; ++b) {
      const std::uint32_t bt = in[static_cast<std::size_t>(L.bt) + b];
      ASSERT_LT(bt & 0x7FFFFFFFu, 0x7F800000u);
      const int e = static_cast<int>((bt >> 23) & 0xFF) - 127;
      const bool is_int = e >= 0 && e < 23 && (bt & ((1u << (23 - e)) - 1)) == 0;
      if (is_int && e <= 3) integer = true;
      if (!is_int && e >= 0) fraction = true;
      if ((bt >> 31) || bt == 0 || e >= 4 + 1) extreme = true;
      poisoned |= out[static_cast<std::size_t>(L.scale) + b] == 0x7FC00000u;
      zero_scale |= out[static_cast<std::size_t>(L.scale) + b] == 0u;
    }
  }
  EXPECT_TRUE(integer);
  EXPECT_TRUE(fraction);
  EXPECT_TRUE(extreme);
  EXPECT_TRUE(poisoned);
  EXPECT_TRUE(zero_scale);
}
