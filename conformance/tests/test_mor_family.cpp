// The MoR op families (spec §26, §27; runner clauses §31.7 vector files, §32.7 the C
// description, §33.7 pipe lines, §34.9 comparison). Expected values are derived by hand
// from the spec and shown inline; "what a wrong backend returns" is a hand-made edit of
// one field.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "family_test_support.hpp"
#include "ops/mor/mor.hpp"
#include "numref/conform/vectors.hpp"

using namespace numref;
using namespace numref::conform;
using namespace numref::conform::mor;

namespace {

using Case1 = test::OneCase<MorParams>;
Case1 run(MorParamsPtr p, std::vector<std::uint32_t> x) { return test::run_case(std::move(p), x); }

// The near-threshold tensor of mor_vectors.cpp: 448, three times 1.0625, four zeros.
const std::vector<std::uint32_t> kNear = {0x43E00000u, 0x3F880000u, 0, 0x3F880000u, 0x80000000u, 0, 0x3F880000u, 0};

}  // namespace

// §34.9 canonical text: keys in a fixed order, defaults written out, round trip.
TEST(MorParams, CanonicalText) {
  const auto p = parse(Kind::tensor, "scaling=block:64x64 shape=100x70 src=bf16");
  EXPECT_EQ(p->text(), "src=bf16 shape=100x70 transpose=0 scaling=block:64x64 threshold=9/200");
  EXPECT_EQ(parse(Kind::tensor, p->text())->text(), p->text());
  const auto q = parse(Kind::sub, "src=f32 shape=8x8 blocks=block:4x4 recipe=two-way transpose=1");
  EXPECT_EQ(q->text(), "src=f32 shape=8x8 transpose=1 blocks=block:4x4 recipe=two-way");
  // 100 x 70 over 64 x 64: 2 x 2 blocks (ragged); the C description carries the effective blocks
  EXPECT_EQ(p->layout().nb, 4u);
  EXPECT_EQ(p->c_op().n_blocks, 4u);
  EXPECT_EQ(p->c_op().threshold_num, 9u);
  EXPECT_EQ(p->c_op().threshold_den, 200u);
  EXPECT_EQ(q->c_op().kind, NUMREF_MOR_TWO_WAY);
  EXPECT_EQ(q->c_op().row_stride, 1);  // transposed: memory is 8 x 8 column-major of the view
  EXPECT_EQ(q->c_op().col_stride, 8);
}

TEST(MorParams, BadParametersAreNamed) {
  auto err = [](Kind k, const std::string& t) {
    try {
      parse(k, t);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err(Kind::tensor, "src=f8e4m3fn shape=4x4 scaling=tensor").find("bf16, f16 or f32"), std::string::npos);
  EXPECT_NE(err(Kind::tensor, "src=bf16 shape=4x4").find("scaling="), std::string::npos);
  EXPECT_NE(err(Kind::tensor, "src=bf16 shape=4x4 scaling=tensor threshold=-1").find("threshold"), std::string::npos);
  EXPECT_NE(err(Kind::sub, "src=bf16 shape=4x4 blocks=tensor recipe=four-way").find("recipe"), std::string::npos);
  EXPECT_NE(err(Kind::sub, "src=bf16 shape=0x4 blocks=tensor").find("empty"), std::string::npos);
  EXPECT_NE(err(Kind::sub, "src=bf16 shape=300x300 blocks=tensor").find("65536"), std::string::npos);
  EXPECT_NE(err(Kind::sub, "src=bf16 shape=4x4 blocks=tensor threshold=1/2").find("unknown"), std::string::npos);
}

// §26 by hand: amax 448 = q_max makes the GAM scale 1 (group mantissa 1.0, stored E8M0 0x7f);
// 1.0625 is the E4M3 tie between 1 and 1.125 and rounds to even, 1, so e = RN32(1/17) =
// 0xF0F0F1 · 2^-28 for three elements and 0 for 448; n = 4, zeros = 4. S = 3 · 0xF0F0F1 ·
// 2^-28 = 0x2D2D2D3 · 2^-28, in units of 2^-149: 0x2D2D2D3 · 2^121 -> limb 1 = (0x2D2D2D3 mod
// 2^7) << 57 = 0x53 << 57 = 0xA600000000000000, limb 2 = 0x2D2D2D3 >> 7 = 0x5A5A5. The mean
// 0x2D2D2D3 · 2^-30 rounds (26 -> 24 bits, remainder 3/4: up) to 0xB4B4B5 · 2^-28 = 0x3D34B4B5.
// 3/68 = 0.0441 < 9/200: accepted.
TEST(MorReference, NearThresholdTensorByHand) {
  const auto p = parse(Kind::tensor, "src=f32 shape=2x4 scaling=tensor");
  const Case1 c = run(p, kNear);
  const MorLayout& L = p->layout();
  EXPECT_EQ(c.exp[L.decision], NUMREF_BLOCK_F8E4M3FN);
  EXPECT_EQ(c.exp[L.reason], NUMREF_REASON_ACCEPTED);
  EXPECT_EQ(c.exp[L.mean], 0x3D34B4B5u);
  EXPECT_EQ(c.exp[L.scales], 0x7Fu);
  const numref_error_sum s = get_sum(c.exp.data() + L.sum);
  EXPECT_EQ(s.limb[0], 0u);
  EXPECT_EQ(s.limb[1], 0xA600000000000000ull);
  EXPECT_EQ(s.limb[2], 0x5A5A5ull);
  EXPECT_EQ(s.n, 4u);
  EXPECT_EQ(s.zeros, 4u);
  EXPECT_EQ(s.nonfinite_input, 0u);
  // 11/250 = 0.044 <= 0.0441: rejected, reason threshold (Eq. 2)
  const Case1 d = run(parse(Kind::tensor, "src=f32 shape=2x4 scaling=tensor threshold=11/250"), kNear);
  EXPECT_EQ(d.exp[L.decision], NUMREF_BLOCK_KEPT);
  EXPECT_EQ(d.exp[L.reason], NUMREF_REASON_THRESHOLD);
  // the threshold equal to the exact mean 0x2D2D2D3 / 2^30 = 47370963 / 2^30: strict, rejected
  const Case1 e = run(parse(Kind::tensor, "src=f32 shape=2x4 scaling=tensor threshold=47370963/1073741824"), kNear);
  EXPECT_EQ(e.exp[L.reason], NUMREF_REASON_THRESHOLD);
}

// §26.2 an all-zero tensor: mean 0 < threshold, accepted with reason all_zero; §25.2 a NaN
// rejects the tensor (nonfinite_input) and the mean is the canonical NaN (§23.1).
TEST(MorReference, ZeroAndNanTensors) {
  const auto p = parse(Kind::tensor, "src=bf16 shape=2x2 scaling=tensor");
  const MorLayout& L = p->layout();
  const Case1 z = run(p, {0, 0x8000, 0, 0});
  EXPECT_EQ(z.exp[L.decision], NUMREF_BLOCK_F8E4M3FN);
  EXPECT_EQ(z.exp[L.reason], NUMREF_REASON_ALL_ZERO);
  EXPECT_EQ(z.exp[L.mean], 0u);
  EXPECT_EQ(get_sum(z.exp.data() + L.sum).zeros, 4u);
  const Case1 n = run(p, {0x3F80, 0x7FC0, 0x4000, 0});
  EXPECT_EQ(n.exp[L.decision], NUMREF_BLOCK_KEPT);
  EXPECT_EQ(n.exp[L.reason], NUMREF_REASON_NONFINITE_INPUT);
  EXPECT_EQ(n.exp[L.mean], 0x7FC00000u);
  EXPECT_EQ(get_sum(n.exp.data() + L.sum).nonfinite_input, 1u);
}

// §27 by hand, bf16 1 x 4 with blocks 1 x 2: block 0 = {1, 2} (E4M3 exact after the scale:
// reason exact, type f8e4m3fn); block 1 = {NaN, 1}: §25.2 every quantized type is skipped,
// the block is kept (bf16), Eq. 3 nonfinite_input; the output keeps the NaN code.
TEST(MorReference, SubtensorTypeMapByHand) {
  const auto p = parse(Kind::sub, "src=bf16 shape=1x4 blocks=block:1x2 recipe=three-way");
  const MorLayout& L = p->layout();
  const Case1 c = run(p, {0x3F80, 0x4000, 0x7FC0, 0x3F80});
  EXPECT_EQ(c.exp[L.type + 0], NUMREF_BLOCK_F8E4M3FN);
  EXPECT_EQ(c.exp[L.eq3 + 0], NUMREF_REASON_EXACT);
  EXPECT_EQ(c.exp[L.eq4 + 0], NUMREF_REASON_NOT_EVALUATED);
  EXPECT_EQ(c.exp[L.type + 1], NUMREF_BLOCK_KEPT);
  EXPECT_EQ(c.exp[L.eq3 + 1], NUMREF_REASON_NONFINITE_INPUT);
  EXPECT_EQ(c.exp[static_cast<std::size_t>(L.y) + 0], 0x3F80u);
  EXPECT_EQ(c.exp[static_cast<std::size_t>(L.y) + 2], 0x7FC0u);
  EXPECT_EQ(get_sum(c.exp.data() + L.sum4 + 1 * kSumWords).nonfinite_input, 1u);
}

// §34.9 each field is compared and the first differing one names the class; the line says
// which block and renders both values decoded.
TEST(MorCompare, FieldByField) {
  const auto p = parse(Kind::tensor, "src=f32 shape=2x4 scaling=block:1x2");
  const MorLayout& L = p->layout();
  Case1 c = run(p, kNear);
  EXPECT_EQ(c.compare().outcome, Outcome::pass);
  c.got[L.reason] = NUMREF_REASON_THRESHOLD;
  EXPECT_EQ(c.compare().cls, "mor/reason");
  EXPECT_EQ(c.text().got, "03 (threshold)");
  c.got = c.exp;
  c.got[static_cast<std::size_t>(L.scales) + 3] ^= 1;
  EXPECT_EQ(c.compare().cls, "mor/scale");
  EXPECT_NE(c.text().inputs.find("scale of block 3 (rows 1-1, cols 2-3)"), std::string::npos) << c.text().inputs;
  c.got = c.exp;
  c.got[static_cast<std::size_t>(L.sum) + 10] += 1;  // n
  EXPECT_EQ(c.compare().cls, "mor/error-sum/n");
  c.got[static_cast<std::size_t>(L.sum) + 0] += 1;  // and a limb: the sum itself
  EXPECT_EQ(c.compare().cls, "mor/error-sum");
  EXPECT_EQ(c.text().detail, "1 of 1 error sums differ");

  const auto q = parse(Kind::sub, "src=bf16 shape=1x4 blocks=block:1x2");
  Case1 s = run(q, {0x3F80, 0x4000, 0x7FC0, 0x3F80});
  s.got[static_cast<std::size_t>(q->layout().y) + 3] = 0x3F81;
  EXPECT_EQ(s.compare().cls, "mor-sub/output");
  EXPECT_EQ(s.text().got, "3f81 (1.0078125)");
  s.got[static_cast<std::size_t>(q->layout().type) + 1] = NUMREF_BLOCK_F8E5M2;
  EXPECT_EQ(s.compare().cls, "mor-sub/type");
  EXPECT_EQ(s.text().detail, "1 of 2 block types, 1 of 4 values differ");
}

// §33.7 a pipe result line: the output columns, flat; parsed back to the same words.
TEST(MorPipe, ResultLineRoundTrip) {
  for (const char* t : {"src=f32 shape=2x4 transpose=0 scaling=block:1x2 threshold=9/200",
                        "src=bf16 shape=1x4 transpose=0 blocks=block:1x2 recipe=three-way"}) {
    const auto p = parse(std::string(t).find("recipe") != std::string::npos ? Kind::sub : Kind::tensor, t);
    const Case1 c =
        run(p, p->spec().src->bits == 32 ? kNear : std::vector<std::uint32_t>{0x3F80, 0x4000, 0x7FC0, 0x3F80});
    const std::string line = pipe_result_line(*p, single_case(c.exp.data(), c.exp.size()), false);
    EXPECT_EQ(std::count(line.begin(), line.end(), ' '), p->spec().kind == Kind::tensor ? 5 : 8) << line;
    EXPECT_EQ(line.find('/'), std::string::npos) << line;  // flat (§33.7)
    std::vector<std::uint32_t> back(c.exp.size(), 0xDEADu);
    EXPECT_EQ(pipe_result(*p, line, false, back.data(), 1, 0), "") << line;
    EXPECT_EQ(back, c.exp);
    EXPECT_NE(pipe_result(*p, "00 01", false, back.data(), 1, 0).find("expected"), std::string::npos);
  }
}

// §31.7 the generated MoR files parse; a damaged sum is refused naming the column.
TEST(MorVectors, FilesParseAndDamageIsNamed) {
  std::vector<VectorFileText> files;
  family(Kind::tensor).generate_vectors(files);
  family(Kind::sub).generate_vectors(files);
  ASSERT_GE(files.size(), 8u);
  for (const auto& f : files) {
    std::istringstream in(f.text);
    EXPECT_GT(parse_vector_text(in, f.path), 0u) << f.path;
  }
  std::string bad = files.front().text;
  const auto at = bad.find(":0000000000000000:");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at + 1, 16, "00000000000000g0");
  std::istringstream in(bad);
  try {
    parse_vector_text(in, "bad.vec");
    ADD_FAILURE() << "accepted a damaged sum";
  } catch (const VectorError& e) {
    EXPECT_NE(std::string(e.what()).find("column sum"), std::string::npos) << e.what();
  }
}

// §34.9 --ops selectors: source format, then bf16, then the partition (mor, without
// "block:") or the recipe (mor-sub); every planned suite matches its selector.
TEST(MorPlan, SelectorsNarrowTheSuites) {
  PlanRequest r;
  r.level = Level::l1;
  std::vector<GeneratedSuite> all, sel;
  family(Kind::sub).plan(r, all);
  r.selectors = {"f32:bf16:two-way"};
  family(Kind::sub).plan(r, sel);
  ASSERT_FALSE(sel.empty());
  EXPECT_LT(sel.size(), all.size());
  for (const auto& g : sel) EXPECT_EQ(g.params->selector_text().substr(0, 9), "f32 bf16 ") << g.params->text();
  for (const auto& g : sel) EXPECT_NE(g.params->text().find("recipe=two-way"), std::string::npos) << g.params->text();
  sel.clear();
  r.selectors = {"*:*:128x128"};
  family(Kind::tensor).plan(r, sel);
  ASSERT_FALSE(sel.empty());
  for (const auto& g : sel) EXPECT_NE(g.params->text().find("scaling=block:128x128"), std::string::npos);
}
