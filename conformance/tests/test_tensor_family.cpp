// The tensor op families (spec §34.8 suites and classification, §31.6 tensor vector files,
// §32.5 the C description, §33.6 pipe lines). Expected values are hand-derived from the spec
// and shown inline; where a test needs "what a wrong backend returns", the wrong value is
// computed independently (the host's IEEE binary32 unit, or the spec's other rule by hand).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <set>
#include <sstream>

#include "family_test_support.hpp"
#include "ops/tensor/tensor.hpp"
#include "numref/conform/abi.hpp"
#include "numref/conform/vectors.hpp"

using namespace numref;
using namespace numref::conform;
using namespace numref::conform::tensor;

namespace {

const char* const kOcp =
    "round=rne overflow=saturate inf_sat=max nan=payload nan_to_finite=zero e8m0_round=follow zero_to_nozero=nan "
    "negative=nan daz=0 ftz=0 tininess=after int_range=full e8m0_low=linear inf_nan=slot";

TensorParamsPtr q(const std::string& extra, const std::string& shape = "1x4", const std::string& rule = "mx-floor",
                  const std::string& elem = "f8e4m3fn") {
  return parse(Kind::quantize,
               "src=f32 elem=" + elem + " shape=" + shape + " partition=tensor rule=" + rule + " profile=ocp " + extra);
}

// The tests' one case, with compare(counts, any_nan) as the runner calls it.
struct Case1 : test::OneCase<TensorParams> {
  Finding compare(bool counts = true, bool any_nan = false) const {
    CompareOptions o;
    o.caps = counts ? NUMREF_CAP_COUNTS : 0u;
    o.any_nan = any_nan;
    return OneCase::compare(o);
  }
};
Case1 run(TensorParamsPtr p, std::vector<std::uint32_t> x) { return {test::run_case(std::move(p), x)}; }

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

std::string parse_error(const std::string& text) { return test::vector_error(text); }

}  // namespace

// §34.8 the canonical parameter text round-trips, names every key in a fixed order, and
// the label is short.
TEST(TensorParams, CanonicalTextRoundTrips) {
  const auto p = parse(Kind::quantize,
                       "src=bf16 elem=f4e2m1fn shape=3x40 partition=block:1x16 transpose=1 rule=gam group=block:3x32 "
                       "amax_nan=ignore profile=cuda_satfinite round=sr sr_bits=8");
  EXPECT_EQ(p->text().substr(0, p->text().find(" round=")),
            "src=bf16 elem=f4e2m1fn shape=3x40 partition=block:1x16 transpose=1 rule=gam group=block:3x32 "
            "amax_nan=ignore amax_inf=propagate apply=rn32 profile=cuda_satfinite");
  EXPECT_EQ(parse(Kind::quantize, p->text())->text(), p->text());
  EXPECT_EQ(p->label(),
            "bf16->f4e2m1fn 3x40^T block:1x16 gam group=block:3x32 cuda_satfinite amax_nan=ignore round=sr sr_bits=8 "
            "sr_variant=fraction");
  EXPECT_EQ(p->selector_text(), "bf16 f4e2m1fn gam");
  EXPECT_EQ(p->formats(), "bf16 f4e2m1fn");
  // dequantize has no source, transpose, amax policy or element policy; scale no profile
  const auto d =
      parse(Kind::dequantize, "elem=int8 shape=2x2 partition=rows rule=int8-127.5 dequant=divide profile=ocp");
  EXPECT_EQ(d->text(), "elem=int8 shape=2x2 partition=rows rule=int8-127.5 dequant=divide profile=ocp");
  EXPECT_EQ(d->formats(), "int8 f32");
  const auto s = parse(Kind::scale, "src=f16 elem=f8e5m2 shape=1x1 partition=tensor rule=mx-even");
  EXPECT_EQ(
      s->text(),
      "src=f16 elem=f8e5m2 shape=1x1 partition=tensor transpose=0 rule=mx-even amax_nan=propagate amax_inf=propagate");
  EXPECT_EQ(s->profile(), "-");
  // §19.2 the int8 rules default to fused, every other rule to rn32; §20.2 fixes int_range
  const auto i8 = q("", "1x4", "int8", "int8");
  EXPECT_NE(i8->text().find("apply=fused"), std::string::npos);
  EXPECT_NE(i8->text().find("int_range=symmetric"), std::string::npos);
  EXPECT_EQ(i8->overrides(), "");
}

TEST(TensorParams, RejectsBadParametersNamingTheProblem) {
  struct Case {
    Kind k;
    std::string text, message;
  };
  const std::string base = "src=f32 elem=f8e4m3fn shape=2x2 partition=tensor profile=ocp ";
  const Case cases[] = {
      {Kind::quantize, base + "rule=mx-floor colour=red", "unknown quantize parameter 'colour'"},
      {Kind::quantize, "src=f32 elem=f8e4m3fn partition=tensor rule=amax profile=ocp", "need shape="},
      {Kind::quantize, base + "rule=int8", "needs an integer element format"},
      {Kind::quantize, base + "rule=mx-ceiling", "unknown scale rule 'mx-ceiling'"},
      {Kind::quantize, base + "rule=amax apply=fused round=sr sr_bits=4 sr_variant=add", "sr_variant=add"},
      {Kind::quantize, "src=f32 elem=f8e4m3fn shape=4x8 partition=block:1x3 rule=gam group=block:1x4 profile=ocp",
       "not a multiple of the block columns"},
      {Kind::quantize, "src=f32 elem=f8e4m3fn shape=0x4 partition=tensor rule=amax profile=ocp", "empty tensor"},
      {Kind::quantize, "src=f32 elem=f8e4m3fn shape=300x300 partition=tensor rule=amax profile=ocp",
       "exceeds the suite limit"},
      {Kind::quantize, "src=int8 elem=f8e4m3fn shape=2x2 partition=tensor rule=amax profile=ocp", "integer format"},
      {Kind::quantize, base + "rule=amax round=sr", "sr_bits"},
      {Kind::quantize, base + "rule=amax group=rows", "does not take group="},
      {Kind::fake_quant, base + "rule=amax out=f8e5m2", "must be bf16, f16 or f32"},
      {Kind::dequantize, "elem=f8e4m3fn shape=2x2 partition=tensor rule=amax profile=ocp round=rtz",
       "has no element policy"},
      {Kind::scale, "src=f32 elem=f8e4m3fn shape=2x2 partition=tensor rule=amax profile=ocp", "does not take profile="},
      {Kind::quantize, "src=f32 elem=f8e4m3fn shape=2x2 partition=tensor rule=amax profile=nvidia",
       "unknown profile 'nvidia'"},
      {Kind::quantize, base + "rule=amax profile=ocp", "'profile' given twice"},
      {Kind::quantize, "src=f32 elem=f8e4m3fn shape=2x2 partition=block:0x2 rule=amax profile=ocp", "at least 1"},
  };
  for (const auto& c : cases) {
    try {
      (void)parse(c.k, c.text);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.text << " -> " << e.what();
    }
  }
}

// §32.5 the C description: effective blocks, strides of a transposed view, q_max as a
// binary32 code (127.5 = 0x42FF0000 for int8-127.5), the rule constant.
TEST(TensorParams, CDescription) {
  const auto p = parse(Kind::quantize,
                       "src=bf16 elem=int8 shape=5x7 partition=block:2xall transpose=1 rule=int8-127.5 profile=ocp");
  const numref_tensor_op& c = p->c_op();
  EXPECT_EQ(c.struct_size, sizeof(numref_tensor_op));
  EXPECT_EQ(c.rows, 5u);
  EXPECT_EQ(c.cols, 7u);
  EXPECT_EQ(c.row_stride, 1);  // memory is 7 x 5: element (i, j) at j * 5 + i
  EXPECT_EQ(c.col_stride, 5);
  EXPECT_EQ(c.block_rows, 2u);
  EXPECT_EQ(c.block_cols, 7u);  // 0 = the whole extent, resolved
  EXPECT_EQ(c.n_blocks, 3u);    // ceil(5 / 2) x 1
  EXPECT_EQ(c.q_max, 0x42FF0000u);
  EXPECT_EQ(c.rule, NUMREF_RULE_INT8_127_5);
  EXPECT_EQ(c.apply, NUMREF_APPLY_FUSED);
  EXPECT_EQ(std::string(c.text), p->text());
  for (std::uint32_t r = 0; r < NUMREF_RULE_COUNT; ++r) EXPECT_EQ(c_rule(*rule_from_c(r)), r);
  EXPECT_FALSE(rule_from_c(NUMREF_RULE_COUNT).has_value());
  // the view index of memory position k: position 1 of the 7 x 5 buffer is view (1, 0)
  EXPECT_EQ(p->view().view_index_of_memory(1), 7u);
}

// §16.2 / §16.5 MX FLOOR against RCEIL, amax 480 in E4M3 (emax_elem = E(448) = 8):
// FLOOR e = E(480) - 8 = 0, code 7f, 480 clips to 448 = 7e; RCEIL e = ceil(log2(480/448)) = 1,
// code 80, 480 / 2 = 240 = 1.875 * 2^7 = 0x77. A backend doing RCEIL where FLOOR is asked.
TEST(TensorClassify, MxFloorImplementedAsRceil) {
  Case1 r = run(q(""), {0x43F00000u, 0x3F800000u, 0xC0600000u, 0x3DCCCCCDu});  // 480, 1, -3.5, 0.1
  const Layout& L = r.p->layout();
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.scales)], 0x7Fu);
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.codes)], 0x7Eu);
  r.got[static_cast<std::size_t>(L.scales)] = 0x80u;
  r.got[static_cast<std::size_t>(L.codes)] = 0x77u;
  EXPECT_EQ(r.compare().cls, "scale/rule=mx-rceil");
  const MismatchText t = r.text();
  EXPECT_NE(t.inputs.find("block 0 (rows 0..0, cols 0..3) amax=43f00000 (480)"), std::string::npos) << t.inputs;
  EXPECT_NE(t.got.find("scale 80 (2^1) code 77 (240)"), std::string::npos) << t.got;
  EXPECT_NE(t.expected.find("scale 7f (2^0) code 7e (448)"), std::string::npos) << t.expected;
  EXPECT_EQ(t.detail, "1 of 1 scales, 1 of 4 codes differ");
}

// §13.3 a NaN poisons its block: scale FF and every code NaN (E4M3 7f). A backend that skips
// NaNs in the amax (max(1, 2, 3) = 3, FLOOR e = E(3) - 8 = -7, code 78) is told so.
TEST(TensorClassify, NanBlockNotPropagated) {
  Case1 r = run(q(""), {0x3F800000u, 0x7FC00000u, 0x40000000u, 0xC0400000u});
  const Layout& L = r.p->layout();
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.scales)], 0xFFu);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(r.exp[static_cast<std::size_t>(L.codes + k)], 0x7Fu);
  r.got[static_cast<std::size_t>(L.scales)] = 0x78u;
  EXPECT_EQ(r.compare().cls, "scale/nan-block");
  // the same with the scale right but a number among the codes: still the NaN block
  r.got = r.exp;
  r.got[static_cast<std::size_t>(L.codes)] = 0x38u;
  EXPECT_EQ(r.compare().cls, "nan-block");
  // -Inf under amax_inf=propagate: the amax is +Inf, the block poisoned
  Case1 s = run(q(""), {0x3F800000u, 0xFF800000u, 0x40000000u, 0xC0400000u});
  s.got[static_cast<std::size_t>(L.scales)] = 0x78u;
  EXPECT_EQ(s.compare().cls, "scale/inf-block");
}

// §16.7 an all-zero block has E8M0 code 00; §14.1 the FP32 scale 1.0.
TEST(TensorClassify, ZeroBlock) {
  Case1 r = run(q(""), {0u, 0x80000000u, 0u, 0u});
  const Layout& L = r.p->layout();
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.scales)], 0x00u);
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.codes + 1)], 0x80u);  // -0 stays -0 (§6.6)
  r.got[static_cast<std::size_t>(L.scales)] = 0x01u;
  EXPECT_EQ(r.compare().cls, "scale/zero-block");
  Case1 a = run(q("", "1x4", "amax"), {0u, 0u, 0u, 0u});
  EXPECT_EQ(a.exp[static_cast<std::size_t>(L.scales)], 0x3F800000u);
}

// Element mismatches with the scales right. FLOOR with amax 480 has X = 1, so element x
// is converted as itself: 1.0625 is the midpoint of 1 (38) and 1.125 (39) -> RNE 38 (§4.2);
// 480 is beyond 448 -> 7e (saturate, §19.1).
TEST(TensorClassify, ElementClasses) {
  Case1 r = run(q(""), {0x43F00000u, 0x3F880000u, 0x3F800000u, 0u});  // 480, 1.0625, 1, 0
  const Layout& L = r.p->layout();
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.codes + 1)], 0x38u);
  r.got[static_cast<std::size_t>(L.codes + 1)] = 0x39u;
  EXPECT_EQ(r.compare().cls, "tie");
  r.got = r.exp;
  r.got[static_cast<std::size_t>(L.codes)] = 0x7Fu;  // NaN instead of saturating
  EXPECT_EQ(r.compare().cls, "overflow/saturation");
  r.got = r.exp;
  r.got[static_cast<std::size_t>(L.codes + 3)] = 0x80u;  // -0 for +0
  EXPECT_EQ(r.compare().cls, "zero/sign");
  r.got = r.exp;
  r.got[static_cast<std::size_t>(L.codes + 2)] = 0x138u;  // bits above the 8-bit width
  EXPECT_EQ(r.compare().cls, "code/width");
}

// §19.2 rn32 against fused. amax = 448 gives S = 1 for rule amax; x = 1 + 2^-23 (the next
// binary32 above 1) times S = 1 is exact either way, so pick S != 1: amax = 480 gives
// S = RN32(448/480) = RN32(0.9333...) = 0x3F6EEEEF. x = 1.0625 / S lands next to the E4M3
// tie 1.0625; the test finds such an x where the exact x * S and RN32(x * S) convert to
// different codes (the binary32 product rounds onto the tie, the exact one lies above it),
// and checks that a backend giving the fused answer is classified "apply/fused".
TEST(TensorClassify, FusedInsteadOfRn32) {
  const auto p = q("", "1x2", "amax");
  const float S = std::bit_cast<float>(0x3F6EEEEFu);
  bool found = false;
  std::vector<std::uint32_t> xs;  // next to every E4M3 midpoint 1.0625, 1.1875, ... 1.9375 over S
  for (int m = 1; m < 16; m += 2)
    for (std::uint32_t d = 0; d < 7; ++d) xs.push_back(bits((1.0f + static_cast<float>(m) / 16.0f) / S) - 3 + d);
  for (const std::uint32_t x : xs) {
    if (found) break;
    Case1 r = run(p, {0x43F00000u, x});
    const Layout& L = r.p->layout();
    ASSERT_EQ(r.exp[static_cast<std::size_t>(L.scales)], 0x3F6EEEEFu);
    std::string ft = p->text();
    ft.replace(ft.find("apply=rn32"), 10, "apply=fused");
    const auto fused = parse(Kind::quantize, ft);
    Case1 f = run(fused, {0x43F00000u, x});
    const std::uint32_t fc = f.exp[static_cast<std::size_t>(L.codes + 1)];
    if (fc == r.exp[static_cast<std::size_t>(L.codes + 1)]) continue;
    r.got[static_cast<std::size_t>(L.codes + 1)] = fc;
    EXPECT_EQ(r.compare().cls, "apply/fused");
    found = true;
  }
  EXPECT_TRUE(found);
}

// §19.3 dequantize divides by S (default); v * RN32(1 / S) is the reciprocal variant.
// amax 256 -> S = RN32(448 / 256) = 1.75 exactly; code 0x31 = 0.5625. The host's binary32
// unit gives the two answers: 0.5625f / 1.75f and 0.5625f * (1.0f / 1.75f).
TEST(TensorClassify, DequantizeReciprocal) {
  const auto p =
      parse(Kind::dequantize, "elem=f8e4m3fn shape=1x1 partition=tensor rule=amax dequant=divide profile=ocp");
  const Layout& L = p->layout();
  Case1 r{p, std::vector<std::uint32_t>(static_cast<std::size_t>(L.in)), std::vector<std::uint32_t>(1), {}};
  r.in[static_cast<std::size_t>(L.codes_in)] = 0x31u;
  r.in[static_cast<std::size_t>(L.scales_in)] = bits(1.75f);
  p->reference(r.in.data(), r.exp.data());
  volatile float v = 0.5625f, s = 1.75f;
  EXPECT_EQ(r.exp[0], bits(v / s));
  r.got = r.exp;
  r.got[0] = bits(v * (1.0f / s));
  ASSERT_NE(r.got[0], r.exp[0]);  // 3ea4924a against 3ea49249
  EXPECT_EQ(r.compare().cls, "dequant/reciprocal");
  // a poisoned scale: every value the canonical NaN (§13.3)
  r.in[static_cast<std::size_t>(L.scales_in)] = 0x7FC00000u;
  p->reference(r.in.data(), r.exp.data());
  EXPECT_EQ(r.exp[0], 0x7FC00000u);
  r.got[0] = 0;
  EXPECT_EQ(r.compare().cls, "nan-block");
}

// §19.5 counts are compared only when the backend reports them; --any-nan accepts another
// NaN code and says so.
TEST(TensorClassify, CountsAndAnyNan) {
  Case1 r = run(q(""), {0x43F00000u, 0x7FC00000u, 0u, 0u});  // poisoned: four NaN codes 7f
  const Layout& L = r.p->layout();
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.counts + 2)], 4u);  // nan = 4
  r.got[static_cast<std::size_t>(L.counts + 2)] = 3u;
  EXPECT_EQ(r.compare().cls, "counts");
  EXPECT_EQ(r.compare(false).outcome, Outcome::pass);  // the backend reports no counts
  for (int k = 0; k < 4; ++k) r.got[static_cast<std::size_t>(L.counts + k)] = kNotReported;
  EXPECT_EQ(r.compare(true).outcome, Outcome::pass);
  r.got = r.exp;
  r.got[static_cast<std::size_t>(L.codes)] = 0xFFu;  // -NaN for NaN
  EXPECT_EQ(r.compare().cls, "nan-block");
  EXPECT_EQ(r.compare(true, true).outcome, Outcome::pass_any_nan);
}

// §34.8 a case depends only on (seed, params text, index); seeds differ; sweeps enumerate.
TEST(TensorCases, DeterministicAndRandomAccess) {
  const auto p = q("round=sr sr_bits=8", "7x33", "mx-rceil");
  const Layout& L = p->layout();
  ASSERT_GE(L.r, 0);
  std::vector<std::uint32_t> a(static_cast<std::size_t>(L.in)), b(a.size()), c(a.size());
  generate_case(*p, 1, 5, a.data());
  generate_case(*p, 1, 5, b.data());
  generate_case(*p, 2, 5, c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (std::size_t k = 0; k < L.n; ++k) EXPECT_LT(a[static_cast<std::size_t>(L.r) + k], 256u);  // r < 2^k
  const auto src = cases(p, 10, 1);
  std::vector<std::uint32_t> batch(3 * static_cast<std::size_t>(L.in));
  src->fill(4, 3, batch.data());
  EXPECT_TRUE(std::equal(a.begin(), a.end(), batch.begin() + L.in));  // case 5 is the second of 4..6
  const auto sw = parse(Kind::scale, "src=f8e4m3fn elem=f8e4m3fn shape=1x256 partition=block:1x1 rule=mx-floor");
  const auto ss = sweep_cases(sw, 256);
  EXPECT_EQ(ss->size(), 1u);
  std::vector<std::uint32_t> w(256);
  ss->fill(0, 1, w.data());
  for (std::uint32_t k = 0; k < 256; ++k) EXPECT_EQ(w[k], k);
}

// §34.8 level 0 takes every (rule, element) pair; level 1 crosses them with every partition.
TEST(TensorPlan, LevelsCoverRulesElementsPartitions) {
  PlanRequest req;
  req.profiles = {"ocp", "cuda_satfinite"};
  std::vector<GeneratedSuite> l0, l1;
  plan(Kind::quantize, req, l0);
  std::set<std::string> pairs, parts, variants;
  bool sr = false, transposed = false, fused = false, second_profile = false;
  for (const auto& g : l0) {
    const auto& t = static_cast<const TensorParams&>(*g.params);
    const auto& s = t.spec();
    pairs.insert(std::string(to_string(s.rule)) + "/" + std::string(s.elem->name));
    parts.insert(to_string(s.partition));
    sr |= t.sr();
    transposed |= s.transpose;
    fused |= s.apply == ScaleApply::fused && !is_int8(s.rule);
    second_profile |= s.profile == "cuda_satfinite";
    EXPECT_LE(t.layout().n, 4096u);
  }
  // §19.1 every rule with every signed element format of at most 8 bits that has a zero, the
  // int8 rules with int8 only: today 11 rules x 6 elements + the two int8 rules = 68 pairs.
  std::set<std::string> every_pair;
  for (const ScaleRuleInfo& r : kScaleRules)
    for (const Format& e : kFormats)
      if (e.bits <= 8 && e.is_signed && e.has_zero && !e.is_p3109() && (!is_int8(r.rule) || e.id == FormatId::int8))
        every_pair.insert(std::string(r.name) + "/" + std::string(e.name));
  EXPECT_EQ(pairs, every_pair);
  EXPECT_GE(every_pair.size(), 68u);
  EXPECT_EQ(parts.size(), 11u);
  EXPECT_TRUE(sr && transposed && fused && second_profile);
  req.level = Level::l1;
  req.profiles = {"ocp"};
  plan(Kind::quantize, req, l1);
  std::set<std::string> triples;
  for (const auto& g : l1) {
    const auto& s = static_cast<const TensorParams&>(*g.params).spec();
    triples.insert(std::string(to_string(s.rule)) + "/" + std::string(s.elem->name) + "/" + to_string(s.partition));
  }
  EXPECT_EQ(triples.size(), every_pair.size() * parts.size());
  // selectors: SRC:ELEM:RULE
  req.level = Level::l0;
  req.selectors = {"*:f4e2m1fn:mx-floor"};
  std::vector<GeneratedSuite> sel;
  plan(Kind::quantize, req, sel);
  ASSERT_FALSE(sel.empty());
  for (const auto& g : sel)
    EXPECT_EQ(g.params->selector_text().substr(g.params->selector_text().find(' ') + 1), "f4e2m1fn mx-floor");
  req.selectors = {"f32:f8e4m3fn:mx-flor"};
  EXPECT_THROW(plan(Kind::quantize, req, sel), std::invalid_argument);
}

// §33.6 pipe lines: flat comma lists; a reply with the wrong number of values, bad hex, or
// counts that are not four decimals is refused with the reason.
TEST(TensorPipe, CaseAndResultLines) {
  const auto p = q("", "1x2", "mx-floor");
  const Layout& L = p->layout();
  std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in));
  in[0] = 0x43F00000u;
  in[1] = 0x3F800000u;
  std::string line;
  pipe_case(*p, CaseView{in.data(), 1, 0, static_cast<std::size_t>(L.in)}, line);
  EXPECT_EQ(line, "43f00000,3f800000");
  std::vector<std::uint32_t> out(static_cast<std::size_t>(L.out));
  EXPECT_EQ(pipe_result(*p, "7e,38 7f", false, out.data(), 1, 0), "");
  EXPECT_EQ(out[0], 0x7Eu);
  EXPECT_EQ(out[static_cast<std::size_t>(L.scales)], 0x7Fu);
  EXPECT_EQ(out[static_cast<std::size_t>(L.counts)], kNotReported);
  EXPECT_EQ(pipe_result(*p, "7e,38 7f 1,0,0,0", true, out.data(), 1, 0), "");
  EXPECT_EQ(out[static_cast<std::size_t>(L.counts)], 1u);
  EXPECT_NE(pipe_result(*p, "7e 7f", false, out.data(), 1, 0).find("codes: 1 values, expected 2"), std::string::npos);
  EXPECT_NE(pipe_result(*p, "7e,zz 7f", false, out.data(), 1, 0).find("not hex"), std::string::npos);
  EXPECT_NE(pipe_result(*p, "7e,38 7f", true, out.data(), 1, 0).find("expected 3 fields"), std::string::npos);
  EXPECT_NE(pipe_result(*p, "7e,38 7f 1,2,3", true, out.data(), 1, 0).find("counts: 3 values, expected 4"),
            std::string::npos);
}

// §31.6 tensor vector files: strict grids, canonical headers; every problem named.
TEST(TensorVectors, RejectsMalformedFiles) {
  const std::string head =
      std::string(
          "numref-vectors 1\nop quantize\nsrc f32\nelem f8e4m3fn\npartition tensor\ntranspose 0\nrule mx-floor\n") +
      "amax_nan propagate\namax_inf propagate\napply rn32\nprofile ocp\npolicy " + kOcp +
      "\ngenerator test\ncolumns shape x codes scales counts\ncount 1\nbegin\n";
  // 480, 1 -> FLOOR scale 7f, codes 7e 38 (§16.2, as above); counts: 480 saturated.
  const std::string good = "1x2 43f00000,3f800000 7e,38 7f 1,0,0,0\nend\n";
  EXPECT_EQ(parse_error(head + good), "");
  struct Case {
    std::string text, message;
  };
  const Case cases[] = {
      {head + "1x2 43f00000 7e,38 7f 1,0,0,0\nend\n", "column x: 1 values, expected 2"},
      {head + "2x1 43f00000,3f800000 7e/38 7f 1,0,0,0\nend\n", "column x: row 0 has more than 1 values"},
      {head + "1x2 43f00000,3f80000 7e,38 7f 1,0,0,0\nend\n", "is not 8 hex digits"},
      {head + "1x2 43f00000,3f800000 7e,138 7f 1,0,0,0\nend\n", "is not 2 hex digits"},
      {head + "1x2 43f00000,3f800000 7e,38 7f 1,0,0\nend\n", "column counts: 3 values, expected 4"},
      {head + "1x2 43f00000,3f800000 7e,38 7f\nend\n", "expected 5 fields"},
      {head + "1by2 43f00000,3f800000 7e,38 7f 1,0,0,0\nend\n", "shape '1by2' is not RxC"},
      {head + "0x2 43f00000,3f800000 7e,38 7f 1,0,0,0\nend\n", "empty tensor"},
      {std::string(head).replace(head.find("rule mx-floor"), 13, "rule mx-flor") + good,
       "unknown scale rule 'mx-flor'"},
      {std::string(head).replace(head.find("columns shape x codes scales counts"), 35, "columns shape x codes scales") +
           good,
       "expected 'shape x codes scales counts'"},
      {std::string(head).replace(head.find("transpose 0\n"), 12, "") + good,
       "header line 'transpose' is not the canonical '0'"},
      {std::string(head).replace(head.find("daz=0"), 5, "daz=1") + good, ""},  // a valid variant, canonical
      {std::string(head).replace(head.find("round=rne "), 10, "") + good, "header line 'policy' is not the canonical"},
  };
  for (const auto& c : cases) {
    const std::string err = parse_error(c.text);
    if (c.message.empty())
      EXPECT_EQ(err, "");
    else
      EXPECT_NE(err.find(c.message), std::string::npos) << err;
  }
  // divergence files: answers are <scales>:<codes>, "-" only where the variant does not apply
  const std::string dhead =
      std::string("numref-vectors 1\nop quantize\nkind divergence\nvariants mx-floor mx-rceil\n") +
      "variant.mx-floor rule=mx-floor | OCP\nvariant.mx-rceil rule=mx-rceil | TE\nprofile ocp\npolicy " + kOcp +
      "\ngenerator test\ncolumns src elem shape partition x mx-floor mx-rceil\ncount 1\nbegin\n";
  // 480, 1: FLOOR 7f:7e,38; RCEIL 80: 240 = 77, 0.5 = 30 (§16.5)
  EXPECT_EQ(parse_error(dhead + "f32 f8e4m3fn 1x2 tensor 43f00000,3f800000 7f:7e,38 80:77,30\nend\n"), "");
  EXPECT_NE(parse_error(dhead + "f32 f8e4m3fn 1x2 tensor 43f00000,3f800000 7f:7e,38 80\nend\n")
                .find("is not <scales>:<codes>"),
            std::string::npos);
  EXPECT_NE(parse_error(dhead + "f32 f8e4m3fn 1x2 tensor 43f00000,3f800000 7f:7e,38 -\nend\n").find("has no answer"),
            std::string::npos);
  EXPECT_NE(parse_error(std::string(dhead).replace(dhead.find("variant.mx-rceil rule=mx-rceil | TE\n"), 36, "") +
                        "f32 f8e4m3fn 1x2 tensor 43f00000,3f800000 7f:7e,38 80:77,30\nend\n")
                .find("no 'variant.mx-rceil' line"),
            std::string::npos);
}

// §31.6 every generated tensor file parses, and re-reading gives the generator's words.
TEST(TensorVectors, GeneratedFilesParse) {
  std::vector<VectorFileText> files;
  for (Kind k : kKinds) tensor::generate_vectors(k, files);
  ASSERT_GT(files.size(), 60u);
  std::uint64_t cases = 0;
  for (const auto& f : files) {
    std::istringstream in(f.text);
    cases += parse_vector_text(in, f.path);
    EXPECT_LT(f.text.size(), 40000u) << f.path;  // the repository stays lean
  }
  EXPECT_GT(cases, 300u);
}

// §10.4 / §19.8 a recipe profile in the tensor family: its recipe knobs are part of the text
// (absent keys take the profile's recipe, a knob set back to numref's rule is written out), an
// explicit q_max is kept only when it differs from the rule's (§14.4), both reach the C op.
TEST(TensorRecipe, TextCarriesTheRecipeAndQmax) {
  const std::string base =
      "src=f32 elem=f8e4m3fn shape=1x32 partition=block:1x32 rule=mx-rceil profile=torchao_mx_rceil";
  const auto p = parse(Kind::quantize, base);
  // torchao_mx_rceil (policy.cpp): scale_exp=log2f zero_code=one inf_block=max_code elem_nan=half
  EXPECT_NE(p->text().find("amax_floor=none scale_exp=log2f zero_code=one inf_block=max_code nan_block=poison "
                           "elem_nan=half mx_descale=recip nan_scale=canonical zero_sign=keep scale_round=f32 "
                           "zero_divisor=raise divisor=divide elem_exp=bits nvfp4_scale=encode apply=rn32 "
                           "profile=torchao_mx_rceil"),
            std::string::npos)
      << p->text();
  EXPECT_EQ(parse(Kind::quantize, p->text())->text(), p->text());
  EXPECT_EQ(p->spec().recipe.scale_exp, ScaleExp::log2f);
  EXPECT_NE(p->clause().find("§19.8"), std::string::npos);
  EXPECT_EQ(p->c_op().recipe.scale_exp, NUMREF_SCALE_EXP_LOG2F);
  EXPECT_EQ(p->c_op().recipe.zero_code, NUMREF_ZERO_CODE_ONE);
  EXPECT_EQ(p->c_op().recipe.inf_block, NUMREF_INF_BLOCK_MAX_CODE);
  EXPECT_EQ(p->c_op().recipe.elem_nan, NUMREF_ELEM_NAN_HALF);
  EXPECT_EQ(std::string(p->c_op().recipe.text), describe(p->spec().recipe));
  // a knob set back to numref's rule stays in the text and shows in the label
  const auto b = parse(Kind::quantize, base + " scale_exp=bits");
  EXPECT_NE(b->text().find(" scale_exp=bits "), std::string::npos);
  EXPECT_EQ(parse(Kind::quantize, b->text())->text(), b->text());
  EXPECT_NE(b->label().find("scale_exp=bits"), std::string::npos) << b->label();
  // a profile without a recipe writes no recipe; the scale family takes knobs without a profile
  EXPECT_EQ(q("")->text().find("zero_code"), std::string::npos);
  EXPECT_EQ(q("")->c_op().recipe.zero_code, NUMREF_ZERO_CODE_STORED);
  const auto s =
      parse(Kind::scale, "src=f32 elem=f8e4m3fn shape=1x1 partition=tensor rule=mx-floor zero_code=min_normal");
  EXPECT_NE(s->text().find("zero_code=min_normal"), std::string::npos);
  EXPECT_NE(s->label().find("zero_code=min_normal"), std::string::npos);
  // q_max: 448 is f8e4m3fn's own (not written), 384 = 0x43C00000 is kept and is the C op's
  EXPECT_EQ(q("q_max=0x43e00000", "1x4", "amax")->text().find("q_max"), std::string::npos);
  const auto m = q("q_max=0x43c00000", "1x4", "amax");
  EXPECT_NE(m->text().find(" q_max=0x43c00000 "), std::string::npos) << m->text();
  EXPECT_EQ(m->c_op().q_max, 0x43C00000u);
  EXPECT_NE(m->label().find("q_max=384"), std::string::npos) << m->label();
  EXPECT_EQ(parse(Kind::quantize, m->text())->text(), m->text());
  // errors name the problem
  for (const auto& [text, msg] : std::vector<std::pair<std::string, std::string>>{
           {base + " zero_code=two", "zero_code"},
           {base + " q_max=448", "q_max='448'"},
           {base + " q_max=0x7f800000", "finite"},
           {"src=f32 elem=f8e4m3fn shape=1x4 partition=tensor rule=amax profile=torchao_mx_rceil", "applies to"},
           {"elem=f8e4m3fn shape=2x2 partition=tensor rule=mx-floor profile=ocp zero_code=one",
            "does not take zero_code="}}) {
    const Kind k = text.starts_with("elem=") ? Kind::dequantize : Kind::quantize;
    try {
      (void)parse(k, text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << text << " -> " << e.what();
    }
  }
}

// §16.8 torchao RCEIL (issue 12, measured against torchao 0.18): amax 0x48E00001 =
// 448·2^10·(1 + 2^-23); amax / 448 = 2^10·(1 + 2^-23) exactly; log2 of it is 10 + 1.7e-7,
// which rounds to 10.0 in binary32 (ulp 2^-20), so e = 10: scale 127 + 10 = 0x89, and
// x / 2^10 = 448·(1 + 2^-23) saturates to 448 = 0x7E. numref's exact rule: e = 11, 0x8A,
// x / 2^11 = 224·(1 + 2^-23) -> 224 = 0x76 (RNE). Small elements: 1.0 / 2^10 = 2^-10, below
// E4M3's smallest subnormal 2^-9 by half: a tie to even -> 0.
TEST(TensorRecipe, TorchaoRceilExpectedValuesAndCapability) {
  const auto p = parse(Kind::quantize,
                       "src=f32 elem=f8e4m3fn shape=1x2 partition=block:1x32 rule=mx-rceil profile=torchao_mx_rceil");
  Case1 r = run(p, {0x48E00001u, 0x3F800000u});
  const Layout& L = r.p->layout();
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.scales)], 0x89u);
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.codes)], 0x7Eu);
  EXPECT_EQ(r.exp[static_cast<std::size_t>(L.codes) + 1], 0x00u);
  const auto o =
      parse(Kind::quantize, "src=f32 elem=f8e4m3fn shape=1x2 partition=block:1x32 rule=mx-rceil profile=ocp");
  Case1 e = run(o, {0x48E00001u, 0x3F800000u});
  EXPECT_EQ(e.exp[static_cast<std::size_t>(L.scales)], 0x8Au);
  EXPECT_EQ(e.exp[static_cast<std::size_t>(L.codes)], 0x76u);
  // §32.5 a backend without NUMREF_CAP_RECIPE is not asked for a recipe case; one with it is
  numref_backend b{};
  b.struct_size = sizeof(numref_backend);
  b.tensor_supported = [](void*, std::uint32_t, const numref_tensor_op*) { return 1; };
  b.quantize = [](void*, const numref_tensor_op*, const void*, const std::uint32_t*, std::uint8_t*, std::uint32_t*,
                  std::uint32_t*, std::uint32_t*, std::uint64_t*) -> std::int64_t { return -1; };
  EXPECT_FALSE(p->plugin_supported(b));
  EXPECT_TRUE(o->plugin_supported(b));
  b.caps = NUMREF_CAP_RECIPE;
  EXPECT_TRUE(p->plugin_supported(b));
}

// §10.4 the plan of a recipe profile: its rule only, the recipe's partition first, its knobs and
// amax policy (te_mxfp8: amax_nan=ignore); scale suites carry the recipe without the profile.
TEST(TensorRecipe, PlanOfRecipeProfiles) {
  for (Kind k : kKinds) {
    PlanRequest req;
    req.level = Level::l0;
    req.profiles = {"te_mxfp8"};
    std::vector<GeneratedSuite> out;
    family(k).plan(req, out);
    std::size_t recipe = 0;
    for (const auto& s : out) {
      const auto& tp = static_cast<const TensorParams&>(*s.params);
      if (k != Kind::scale) {
        EXPECT_EQ(tp.spec().profile, "te_mxfp8");
      }
      if (k == Kind::scale && tp.spec().recipe == RecipeKnobs{}) continue;  // the ocp scale suites
      ++recipe;
      EXPECT_EQ(tp.spec().rule, ScaleRule::mx_rceil_f32) << tp.text();
      if (k != Kind::dequantize) {
        EXPECT_EQ(tp.spec().recipe.zero_code, ZeroCode::one) << tp.text();
        EXPECT_EQ(tp.spec().amax.nan, AmaxNan::ignore) << tp.text();
      }
    }
    EXPECT_GT(recipe, 0u) << kind_name(k);
  }
  // §10.4 a recipe with element formats (microxcaling: the five float ones) plans only those
  PlanRequest req;
  req.level = Level::l1;
  req.profiles = {"microxcaling"};
  std::vector<GeneratedSuite> out;
  family(Kind::quantize).plan(req, out);
  std::set<std::string> elems;
  for (const auto& s : out) elems.insert(std::string(static_cast<const TensorParams&>(*s.params).spec().elem->name));
  EXPECT_EQ(elems, (std::set<std::string>{"f8e4m3fn", "f8e5m2", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn"}));
}

// §32.5 (ABI 1.4) numref_recipe <-> RecipeKnobs: every word of every knob round-trips through its
// byte; a byte past the knob's words or a set reserved byte is refused.
TEST(TensorRecipe, CRecipeRoundTripAndRange) {
  std::apply(
      [](const auto&... row) {
        (
            [&] {
              for (std::size_t w = 0; w < row.words.size(); ++w) {
                RecipeKnobs k;
                k.*row.member = static_cast<std::remove_reference_t<decltype(k.*row.member)>>(w);
                std::string text;
                const numref_recipe c = to_c_recipe(k, text);
                EXPECT_EQ(std::string(c.text), describe(k));
                const auto back = from_c_recipe(c);
                ASSERT_TRUE(back.has_value()) << row.key << "=" << row.words[w];
                EXPECT_TRUE(*back == k) << row.key << "=" << row.words[w];
              }
            }(),
            ...);
      },
      kRecipeKnobs);
  numref_recipe c{};
  c.zero_code = 3;  // stored, min_normal, one: 3 words
  EXPECT_FALSE(from_c_recipe(c).has_value());
  c = numref_recipe{};
  c.reserved[0] = 1;
  EXPECT_FALSE(from_c_recipe(c).has_value());
  EXPECT_TRUE(from_c_recipe(numref_recipe{}).has_value());
}
