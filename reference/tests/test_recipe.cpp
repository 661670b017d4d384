// numref tests — quantization-recipe knobs and the recipe profiles.   spec §10.4, §13.5 – §13.7,
//                                                                     §15.2, §16.8, §16.9, §16.11, §19.8,
//                                                                     §19.9, §19.10, §19.11, §14.5, §14.6,
//                                                                     §14.7
//
// Every expected value is worked by hand in the comments (binary32 quotients checked with exact
// fractions). Each case is chosen so that numref's default rule gives a different result: the
// "default" line of each case shows it, so a knob that is ignored fails the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "numref/quantize.hpp"
#include "numref/scale.hpp"

namespace numref {
namespace {

const Format& E4M3 = format(FormatId::f8e4m3fn);

struct Out {
  std::vector<std::uint32_t> scales;
  std::vector<std::uint8_t> codes;
};

// The bytes of a row of codes (binary32 as uint32, bf16 as uint16; native order, as TensorView reads).
template <class T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& x) {
  std::vector<std::uint8_t> bytes(x.size() * sizeof(T));
  std::memcpy(bytes.data(), x.data(), bytes.size());
  return bytes;
}
// Quantizes a 1 x n row of `f` codes with `spec`.
template <class T>
Out run_row(const QuantizeSpec& spec, const Format& f, const std::vector<T>& x) {
  const std::vector<std::uint8_t> bytes = bytes_of(x);
  const TensorView v = TensorView::vector(f, bytes.data(), x.size());
  Out o;
  o.codes.resize(x.size());
  o.scales = quantize(v, spec, o.codes).meta.scales;
  return o;
}
// Quantizes a 1 x n binary32 row with `spec`.
Out run(const QuantizeSpec& spec, const std::vector<std::uint32_t>& x) {
  return run_row(spec, format(FormatId::f32), x);
}
QuantizeSpec prof(ProfileId id, const Format& elem = E4M3) { return recipe_spec(profile(id), elem); }
QuantizeSpec plain(ScaleRule r, const Format& elem = E4M3) {
  QuantizeSpec s;
  s.element = &elem;
  s.rule = r;
  return s;
}

// §16.8 issue 12's RCEIL example: amax = 0x48E00001 = 448 * 2^10 * (1 + 2^-23).
// torchao: d = RN32(amax / 448) = 2^10 (1 + 2^-23) exactly; log2f(d) = 10 (test_log2f), ceil 10,
// code 127 + 10 = 0x89; amax / 2^10 = 448 (1 + 2^-23) saturates to 448 = 0x7E.
// numref mx-rceil (exact quotient): ceil(log2(2^10 (1 + 2^-23))) = 11: code 0x8A, 224 = 0x76.
TEST(Recipe, RceilLog2fClipsLikeTorchao) {
  const Out t = run(prof(ProfileId::torchao_mx_rceil), {0x48E00001u});
  EXPECT_EQ(t.scales[0], 0x89u);
  EXPECT_EQ(t.codes[0], 0x7Eu);
  const Out d = run(plain(ScaleRule::mx_rceil), {0x48E00001u});
  EXPECT_EQ(d.scales[0], 0x8Au);
  EXPECT_EQ(d.codes[0], 0x76u);
  EXPECT_EQ(mx_rceil_log2f_code(exact_f32(0x48E00001u), Exact{false, 7, 6, false}), 0x89u);
}

// §15.2 exp2(floor(log2f(S))): S = 0x497FFFFF = 2^20 (1 - 2^-24); log2 S = 20 - 8.6e-8 rounds to
// 20 in binary32 (spacing 1.9e-6 near 20), so P = 2^20; the bits give E(S) = 19.
TEST(Recipe, Pow2Log2fRoundsUpJustBelowAPowerOfTwo) {
  EXPECT_EQ(pow2_log2f(0x497FFFFFu), 0x49800000u);
  EXPECT_EQ(pow2_floor(0x497FFFFFu), 0x49000000u);
  EXPECT_EQ(pow2_log2f(0x49800000u), 0x49800000u);
  EXPECT_EQ(pow2_log2f(0x00000003u), 0x00000002u);  // 3 * 2^-149: log2 = -147.4 -> floor -148
  EXPECT_EQ(pow2_log2f(0u), 0u);
  EXPECT_EQ(pow2_log2f(kF32NaN), kF32NaN);
  // end to end: amax = 0x39E00001 = 448 * 2^-20 (1 + 2^-23) gives S = RN32(448 / amax) =
  // 0x497FFFFF (exact fractions); torchao_float8_pow2 stores 2^20 and amax * 2^20 = 448 (1 + 2^-23)
  // saturates to 0x7E; the pow2 rule stores 2^19 and gives 224 = 0x76.
  const Out t = run(prof(ProfileId::torchao_float8_pow2), {0x39E00001u});
  EXPECT_EQ(t.scales[0], 0x49800000u);
  EXPECT_EQ(t.codes[0], 0x7Eu);
  const Out d = run(plain(ScaleRule::pow2), {0x39E00001u});
  EXPECT_EQ(d.scales[0], 0x49000000u);
  EXPECT_EQ(d.codes[0], 0x76u);
}

// §13.5 amax_floor=1e-12: an all-zero tensor gets S = RN32(448 / RN64(1e-12)) = 0x57CBBA10
// (4.48e14; exact fractions with the binary64 1e-12 = 0x3D719799812DEA11); numref's amax rule: 1.0.
// For f8e5m2: RN32(57344 / RN64(1e-12)) = 0x5B4BBA10. A subnormal amax (2^-149) is floored too.
TEST(Recipe, AmaxFloorOfTorchaoFloat8) {
  EXPECT_EQ(run(prof(ProfileId::torchao_float8), {0u, 0x80000000u}).scales[0], 0x57CBBA10u);
  EXPECT_EQ(run(prof(ProfileId::torchao_float8, format(FormatId::f8e5m2)), {0u}).scales[0], 0x5B4BBA10u);
  EXPECT_EQ(run(prof(ProfileId::torchao_float8), {1u}).scales[0], 0x57CBBA10u);
  EXPECT_EQ(run(plain(ScaleRule::amax), {0u}).scales[0], kF32One);
  // an amax above the floor is not changed: 448 / 448 = 1
  EXPECT_EQ(run(prof(ProfileId::torchao_float8), {0x43E00000u}).scales[0], kF32One);
  // RN32(1e-4) = 0x38D1B717 (DeepGEMM's floor) and RN64(1e-12) = 0x119799812DEA11 * 2^-92
  // (bits 0x3D719799812DEA11: exponent field 0x3D7 = 2^-40, fraction 0x19799812DEA11)
  EXPECT_EQ(compare_abs(amax_floor_value(AmaxFloor::eps_1e4), exact_f32(0x38D1B717u)), 0);
  EXPECT_EQ(compare_abs(amax_floor_value(AmaxFloor::eps_1e12), Exact{false, 0x119799812DEA11ull, -92, false}), 0);
}

// §16.9 the factor of code 00. Elements 2^-130 (0x00080000): amax subnormal, so FLOOR gives
// code 00 (E = -130 - 8, clamped). stored: x * 2^127 = 2^-3 = E4M3 0x20; min_normal (torchao
// FLOOR): x * 2^126 = 2^-4 = 0x18; one (torchao RCEIL: d = RN32(2^-130 / 448) -> ceil(log2) =
// -138, clamped, code 00): x * 1 = 2^-130 -> 0x00.
TEST(Recipe, ZeroCodeFactor) {
  const std::vector<std::uint32_t> x = {0x00080000u, 0x80080000u};
  const Out d = run(plain(ScaleRule::mx_floor), x);
  EXPECT_EQ(d.scales[0], 0x00u);
  EXPECT_EQ(d.codes, (std::vector<std::uint8_t>{0x20, 0xA0}));
  const Out f = run(prof(ProfileId::torchao_mx_floor), x);
  EXPECT_EQ(f.scales[0], 0x00u);
  EXPECT_EQ(f.codes, (std::vector<std::uint8_t>{0x18, 0x98}));
  const Out r = run(prof(ProfileId::torchao_mx_rceil), x);
  EXPECT_EQ(r.scales[0], 0x00u);
  EXPECT_EQ(r.codes, (std::vector<std::uint8_t>{0x00, 0x80}));
}

// §13.6 +Inf in a block. [Inf, 1, -2]:
//   default: poisoned, code FF, every element NaN (torch narrow: 0x7F);
//   torchao FLOOR (inf_block=exponent): amax read as 2^128, e = 128 - 8 = 120, code 0xF7;
//     Inf / 2^120 = Inf saturates to 0x7E; 1 / 2^120 and -2 / 2^120 flush to 0x00 / 0x80;
//   torchao RCEIL (max_code): code 0xFE, x * 2^-127: 0x7E, 0x00, 0x80;
//   torchao float8 (zero_scale): S = 448 / Inf = 0; x * 0: +0, -0; Inf * 0 = the x86 default
//     NaN 0xFFC00000, cast by torch with its sign: 0xFF.
TEST(Recipe, InfBlocks) {
  const std::vector<std::uint32_t> x = {kF32Inf, kF32One, 0xC0000000u};
  QuantizeSpec def = prof(ProfileId::torchao_mx_floor);
  def.recipe = RecipeKnobs{};
  const Out d = run(def, x);
  EXPECT_EQ(d.scales[0], 0xFFu);
  EXPECT_EQ(d.codes, (std::vector<std::uint8_t>{0x7F, 0x7F, 0x7F}));
  const Out f = run(prof(ProfileId::torchao_mx_floor), x);
  EXPECT_EQ(f.scales[0], 0xF7u);
  EXPECT_EQ(f.codes, (std::vector<std::uint8_t>{0x7E, 0x00, 0x80}));
  const Out r = run(prof(ProfileId::torchao_mx_rceil), x);
  EXPECT_EQ(r.scales[0], 0xFEu);
  EXPECT_EQ(r.codes, (std::vector<std::uint8_t>{0x7E, 0x00, 0x80}));
  const Out z = run(prof(ProfileId::torchao_float8), x);
  EXPECT_EQ(z.scales[0], 0u);
  EXPECT_EQ(z.codes, (std::vector<std::uint8_t>{0xFF, 0x00, 0x80}));
}

// §13.7 NaN in a block, torchao FLOOR (nan_block=inf_divisor): code FF, scale +Inf, x / Inf:
// [-NaN, 1, -1, Inf] -> -NaN stays (0xFF with torch's sign-keeping NaN), +0, -0, and
// Inf / Inf = 0xFFC00000 -> 0xFF. numref's default: all four the canonical NaN -> 0x7F.
TEST(Recipe, NanBlockDividedByInfinity) {
  const std::vector<std::uint32_t> x = {0xFFC00000u, kF32One, 0xBF800000u, kF32Inf};
  const Out f = run(prof(ProfileId::torchao_mx_floor), x);
  EXPECT_EQ(f.scales[0], 0xFFu);
  EXPECT_EQ(f.codes, (std::vector<std::uint8_t>{0xFF, 0x00, 0x80, 0xFF}));
  QuantizeSpec def = prof(ProfileId::torchao_mx_floor);
  def.recipe = RecipeKnobs{};
  EXPECT_EQ(run(def, x).codes, (std::vector<std::uint8_t>{0x7F, 0x7F, 0x7F, 0x7F}));
}

// §19.9 elem_nan=half: a NaN reaching FP4 / FP6 becomes +-1.5: e2m1 0x3 / 0xB, e2m3 0x0C / 0x2C,
// e3m2 0x0E / 0x2E. torchao FLOOR block [NaN, -NaN, 1]: NaN / Inf keeps each NaN's sign; 1 / Inf = +0.
// Default (§6.4 nan_to_finite=zero of the torch narrow policy): 0.
TEST(Recipe, NanElementsOfFormatsWithoutNan) {
  const std::vector<std::uint32_t> x = {kF32NaN, 0xFFC00000u, kF32One};
  EXPECT_EQ(run(prof(ProfileId::torchao_mx_floor, format(FormatId::f4e2m1fn)), x).codes,
            (std::vector<std::uint8_t>{0x3, 0xB, 0x0}));
  EXPECT_EQ(run(prof(ProfileId::torchao_mx_floor, format(FormatId::f6e2m3fn)), x).codes,
            (std::vector<std::uint8_t>{0x0C, 0x2C, 0x00}));
  EXPECT_EQ(run(prof(ProfileId::torchao_mx_floor, format(FormatId::f6e3m2fn)), x).codes,
            (std::vector<std::uint8_t>{0x0E, 0x2E, 0x00}));
  QuantizeSpec def = prof(ProfileId::torchao_mx_floor, format(FormatId::f4e2m1fn));
  def.recipe.elem_nan = ElemNan::policy;
  EXPECT_EQ(run(def, x).codes, (std::vector<std::uint8_t>{0x0, 0x0, 0x0}));
}

// §13.8 nan_scale=all_ones_tensor (measured with torchao 0.18 on torch 2.15 CPU): a tensorwise
// NaN amax comes out of torch.max as 0xFFFFFFFF, the scale 448 / NaN keeps it, and x * scale is
// that negative NaN: torch's cast gives 0xFF. Rowwise (amax(dim=-1)) the NaN is 0x7FC00000: 0x7F.
TEST(Recipe, TensorwiseNanScaleIsAllOnes) {
  const std::vector<std::uint32_t> x = {kF32NaN, kF32One};
  const Out t = run(prof(ProfileId::torchao_float8), x);
  EXPECT_EQ(t.scales[0], 0xFFFFFFFFu);
  EXPECT_EQ(t.codes, (std::vector<std::uint8_t>{0xFF, 0xFF}));
  QuantizeSpec rows = prof(ProfileId::torchao_float8);
  rows.partition = Partition::per_row();
  const Out r = run(rows, x);
  EXPECT_EQ(r.scales[0], kF32NaN);
  EXPECT_EQ(r.codes, (std::vector<std::uint8_t>{0x7F, 0x7F}));
}

// §10.4 deepgemm (source-cited: deep_gemm/utils/math.py per_token_cast_to_fp8, use_ue8m0=True):
// amax.clamp(1e-4); d = RN32(amax / 448); ceil_to_ue8m0: exponent field + 1 if the fraction is
// non-zero, clamped to [1, 254]; x * (1 / sf) cast to e4m3fn saturating.
//   zero block: amax -> RN32(1e-4) = 0x38D1B717, d = RN32(1.00000005e-4 / 448) = 0x346FACAD
//     (exponent field 0x68, fraction non-zero) -> code 0x69; numref's mx-rceil-f32: 00;
//   amax 0x48E00001: d = 2^10 (1 + 2^-23) = 0x44800001 -> code 0x8A (torchao RCEIL: 0x89);
//   +Inf: d = +Inf, field 255 + 0 clamped to 254 -> FE, Inf * 2^-127 saturates to 0x7E;
//   NaN: amax NaN (clamp keeps it), field 255 + 1 clamped to 254 -> FE; -NaN stays -NaN -> 0xFF,
//     1 * 2^-127 -> 0x00, Inf -> 0x7E. numref's default poisons both (FF).
TEST(Recipe, DeepGemm) {  // §10.4, §16.10 (deepgemm sets mx_descale=divide)
  const QuantizeSpec dg = prof(ProfileId::deepgemm);
  EXPECT_EQ(dg.rule, ScaleRule::mx_rceil_f32);
  EXPECT_EQ(to_string(dg.partition), "block:1x128");
  EXPECT_EQ(run(dg, {0u, 0u}).scales[0], 0x69u);
  EXPECT_EQ(run(plain(ScaleRule::mx_rceil_f32), {0u, 0u}).scales[0], 0x00u);
  const Out a = run(dg, {0x48E00001u});
  EXPECT_EQ(a.scales[0], 0x8Au);
  EXPECT_EQ(a.codes[0], 0x76u);
  const Out i = run(dg, {kF32Inf, kF32One});
  EXPECT_EQ(i.scales[0], 0xFEu);
  EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0x7E, 0x00}));
  const Out n = run(dg, {0xFFC00000u, kF32One, kF32Inf});
  EXPECT_EQ(n.scales[0], 0xFEu);
  EXPECT_EQ(n.codes, (std::vector<std::uint8_t>{0xFF, 0x00, 0x7E}));
  EXPECT_EQ(run(plain(ScaleRule::mx_rceil_f32), {0xFFC00000u, kF32One}).scales[0], 0xFFu);
  // §16.10 d = RN32(amax / 448) from the floored amax 0x38D1B717, then the E8M0 ceiling: 0x69
  EXPECT_EQ(mx_rceil_div_code(exact_f32(0x38D1B717u), Exact{false, 7, 6, false}), 0x69u);
}

// §16.10 mx_descale=divide: d = RN32(amax / q_max), not §16.6's RN32(amax · RN32(1 / q_max)); the
// two differ where one is a power of two and the other is not. int8 elements (q_max 127, §16.1
// emax_elem 6), amax a = 0x42FE0001 = 127 + 2^-17 (the ulp of [64, 128) is 2^-17):
//   divide: a / 127 = 1 + 2^-17 / 127 = 1 + 1.008 · 2^-24, above the midpoint 1 + 2^-24 of 1 and
//     1 + 2^-23: d = 0x3F800001, fraction non-zero -> e = 0 + 1, code 0x80.
//   recip: RN32(1 / 127) = 0x3C010204 = (1 / 127)(1 - 0.0625 · 2^-24); a · that = 1 + 0.945 · 2^-24
//     (to first order), below the midpoint: d = 1.0 exactly -> e = 0, code 0x7F.
TEST(Recipe, MxDescaleDivideRoundsTheQuotientOnce) {
  const Format& i8 = format(FormatId::int8);
  QuantizeSpec s = plain(ScaleRule::mx_rceil_f32, i8);
  EXPECT_EQ(run(s, {0x42FE0001u}).scales[0], 0x7Fu);  // §16.6 (default recip)
  s.recipe.mx_descale = MxDescale::divide;
  EXPECT_EQ(run(s, {0x42FE0001u}).scales[0], 0x80u);  // §16.10
  EXPECT_EQ(mx_rceil_div_code(exact_f32(0x42FE0001u), format_qmax(i8)), 0x80u);
  // a quotient that is exactly a power of two has no ceiling step: 254 / 127 = 2 -> e = 1, code 0x80
  EXPECT_EQ(mx_rceil_div_code(exact_f32(0x437E0000u), format_qmax(i8)), 0x80u);
  EXPECT_EQ(run(s, {0x437E0000u}).scales[0], 0x80u);
}

// §10.4 te_mxfp8 (source-cited: TransformerEngine float_to_e8m0 / exp2f_rcp, utils.cuh L937 /
// L971 at commit 1ae1d228): d = RN32(amax * RN32(1 / 448)) = RN32(amax * 0x3B124925), E8M0 round-up.
//   NaN elements are ignored by fmaxf: [NaN, 448] -> amax 448, d = RN32(448 * 0x3B124925) = 1.0
//     (the product rounds to 0x3F800000) -> code 0x7F; NaN * 1 -> e4m3 0x7F
//     (cuda_satfinite: nan=ones); 448 -> 0x7E. numref's default poisons the block (FF).
//   +Inf: code FE, exp2f_rcp(FE) = __int_as_float(0 << 23) = 0.0: x * 0 -> 0x00 / 0x80,
//     Inf * 0 = NaN -> 0x7F.
//   subnormal amax 2^-130: d = 2^-130 * RN32(1/448) < 2^-127 -> code 00, exp2f_rcp(0) = 1:
//     x * 1 = 2^-130 -> 0x00 (default factor 2^127: 2^-3 -> 0x20).
TEST(Recipe, TeMxfp8) {
  const QuantizeSpec te = prof(ProfileId::te_mxfp8);
  EXPECT_EQ(te.rule, ScaleRule::mx_rceil_f32);
  EXPECT_EQ(te.amax.nan, AmaxNan::ignore);
  const Out n = run(te, {kF32NaN, 0x43E00000u});
  EXPECT_EQ(n.scales[0], 0x7Fu);
  EXPECT_EQ(n.codes, (std::vector<std::uint8_t>{0x7F, 0x7E}));
  const Out i = run(te, {kF32Inf, kF32One, 0xBF800000u});
  EXPECT_EQ(i.scales[0], 0xFEu);
  EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0x7F, 0x00, 0x80}));
  const Out z = run(te, {0x00080000u});
  EXPECT_EQ(z.scales[0], 0x00u);
  EXPECT_EQ(z.codes[0], 0x00u);
  QuantizeSpec def = te;
  def.recipe = RecipeKnobs{};
  EXPECT_EQ(run(def, {0x00080000u}).codes[0], 0x20u);
  def.amax = AmaxPolicy{};
  EXPECT_EQ(run(def, {kF32NaN, 0x43E00000u}).scales[0], 0xFFu);
}

// §10.4 te_float8_current (source-cited: TransformerEngine recipe_common.cuh compute_scale_from_amax,
// current_scaling.cu amax_kernel, commit 01c24fe0): per tensor, amax by fmaxf from 0 (NaN ignored),
// S = RN32(448 / amax) (Inf / zero / NaN amax -> 1.0, an Inf quotient -> FLT_MAX), stored 1 / S,
// elements RN32(x * S) cast satfinite (cuda_satfinite: NaN -> 0x7F, overflow and Inf -> +-448).
//   [0.5, 7, -3]: amax 7, S = 448 / 7 = 64 exactly, stored 1/64 = 0x3C800000; 0.5 * 64 = 32 = 2^5
//     -> e4m3 exponent field 5 + 7 = 12: 0x60; 7 * 64 = 448 -> 0x7E; -3 * 64 = -192 = -1.5 * 2^7
//     -> 0x80 | (14 << 3) | 4 = 0xF4.
//   [Inf, NaN, 1, -3]: NaN ignored, amax +Inf -> S = 1.0, stored 1.0 = 0x3F800000; Inf * 1 ->
//     satfinite 448 = 0x7E; NaN -> 0x7F; 1 -> 0x38; -3 = -1.5 * 2 -> 0x80 | (8 << 3) | 4 = 0xC4.
//     numref's default (amax_nan=propagate, inf_block=poison) poisons the tensor: stored NaN.
//   [NaN, NaN]: nothing left, amax +0 -> S = 1.0 (§14.1), both elements 0x7F.
//   [2^-149]: 448 / 2^-149 overflows binary32 -> S = FLT_MAX 0x7F7FFFFF; stored RN32(1 / FLT_MAX):
//     1 / ((2 - 2^-23) 2^127) = 2^-128 (1 + 2^-24 + ...) lies in the subnormal grid of step 2^-149
//     just above 2^-128 = 0x00200000 (the excess is far below half a step) -> 0x00200000; the
//     element 2^-149 * FLT_MAX = 2^-21 (1 - 2^-24) rounds to 0 in e4m3 (below 2^-10) -> 0x00.
TEST(Recipe, TeFloat8Current) {
  const QuantizeSpec te = prof(ProfileId::te_float8_current);
  EXPECT_EQ(te.rule, ScaleRule::amax_recip);
  EXPECT_EQ(te.amax.nan, AmaxNan::ignore);
  const Out f = run(te, {0x3F000000u, 0x40E00000u, 0xC0400000u});
  EXPECT_EQ(f.scales, (std::vector<std::uint32_t>{0x3C800000u}));
  EXPECT_EQ(f.codes, (std::vector<std::uint8_t>{0x60, 0x7E, 0xF4}));
  const Out i = run(te, {kF32Inf, kF32NaN, kF32One, 0xC0400000u});
  EXPECT_EQ(i.scales, (std::vector<std::uint32_t>{0x3F800000u}));
  EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0x7E, 0x7F, 0x38, 0xC4}));
  const Out n = run(te, {kF32NaN, kF32NaN});
  EXPECT_EQ(n.scales, (std::vector<std::uint32_t>{0x3F800000u}));
  EXPECT_EQ(n.codes, (std::vector<std::uint8_t>{0x7F, 0x7F}));
  const Out t = run(te, {0x00000001u});
  EXPECT_EQ(t.scales, (std::vector<std::uint32_t>{0x00200000u}));
  EXPECT_EQ(t.codes, (std::vector<std::uint8_t>{0x00}));
  QuantizeSpec def = te;
  def.recipe = RecipeKnobs{};  // inf_block=poison: the +Inf amax poisons the tensor
  EXPECT_EQ(run(def, {kF32Inf, kF32One}).scales[0], kF32NaN);
  // one_scale belongs to the binary32 quotient rules
  QuantizeSpec mx = plain(ScaleRule::mx_floor);
  mx.recipe.inf_block = InfBlock::one_scale;
  EXPECT_THROW(run(mx, {kF32One}), std::invalid_argument);
}

// §10.4 te_float8_block (source-cited: TransformerEngine quantize_transpose_vector_blockwise.cu /
// quantize_transpose_square_blockwise.cu, compute_scale.cuh, commit 01c24fe0): per 1 x 128 tile,
// amax by fmaxf from 0 (NaN ignored), S = RN32(448 / amax) with its fraction bits cleared (§15),
// stored 1 / P (§15.3), elements RN32(x * P) cast satfinite.
//   [0.5, 5, -3]: amax 5, 448 / 5 = 89.6 -> P = 64 (89.6 lies in [2^6, 2^7)), stored 1/64 =
//     2^-6 = 0x3C800000; 0.5 * 64 = 32 -> 0x60; 5 * 64 = 320 = 1.25 * 2^8 -> (15 << 3) | 2 = 0x7A;
//     -3 * 64 = -192 -> 0xF4. The pow2 rule stores P itself: 0x42800000.
//   amax 0x39E00001 = 448 * 2^-20 (1 + 2^-23): S = 0x497FFFFF (test Pow2Log2f...), P = 2^19,
//     stored 2^-19 = 0x36000000; x * P = 224 (1 + 2^-23) -> 224 = 0x76 (torchao's log2f: 2^20, 0x7E).
//   [Inf, NaN, 1, -3]: NaN ignored, +Inf amax -> scale 1.0 (inf_block=one_scale), stored 1.0;
//     codes 7E (Inf satfinite) 7F 38 C4.
//   [2^-149]: 448 / 2^-149 overflows -> FLT_MAX (§14.1; TE: value_for_inf = 2^127 for binary32
//     input with power-of-two scales) -> P = 2^127, stored 2^-127 = 2^22 * 2^-149 = 0x00400000
//     (subnormal, exact); 2^-149 * 2^127 = 2^-22 is below half of e4m3's 2^-9 -> 0x00.
TEST(Recipe, TeFloat8Block) {
  const QuantizeSpec te = prof(ProfileId::te_float8_block);
  EXPECT_EQ(te.rule, ScaleRule::pow2_recip);
  EXPECT_EQ(te.amax.nan, AmaxNan::ignore);
  const Out f = run(te, {0x3F000000u, 0x40A00000u, 0xC0400000u});
  EXPECT_EQ(f.scales, (std::vector<std::uint32_t>{0x3C800000u}));
  EXPECT_EQ(f.codes, (std::vector<std::uint8_t>{0x60, 0x7A, 0xF4}));
  EXPECT_EQ(run(plain(ScaleRule::pow2), {0x3F000000u, 0x40A00000u, 0xC0400000u}).scales[0], 0x42800000u);
  const Out b = run(te, {0x39E00001u});
  EXPECT_EQ(b.scales[0], 0x36000000u);
  EXPECT_EQ(b.codes[0], 0x76u);
  const Out i = run(te, {kF32Inf, kF32NaN, kF32One, 0xC0400000u});
  EXPECT_EQ(i.scales, (std::vector<std::uint32_t>{0x3F800000u}));
  EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0x7E, 0x7F, 0x38, 0xC4}));
  const Out t = run(te, {0x00000001u});
  EXPECT_EQ(t.scales[0], 0x00400000u);
  EXPECT_EQ(t.codes[0], 0x00u);
  // the 1 x 128 tile: 130 elements make two blocks; the second holds only 2 (amax 2: 448 / 2 =
  // 224 -> P = 128, stored 2^-7 = 0x3C000000), the first amax 5 as above
  std::vector<std::uint32_t> row(130, 0x40A00000u);
  row[128] = row[129] = 0x40000000u;
  EXPECT_EQ(run(te, row).scales, (std::vector<std::uint32_t>{0x3C800000u, 0x3C000000u}));
  // a rule's knobs: pow2-recip takes scale_exp=log2f (as pow2), not the MX knobs
  QuantizeSpec lg = plain(ScaleRule::pow2_recip);
  lg.recipe.scale_exp = ScaleExp::log2f;
  EXPECT_EQ(run(lg, {0x39E00001u}).scales[0], 0x35800000u);  // P = 2^20 -> stored 2^-20
  QuantizeSpec zc = plain(ScaleRule::pow2_recip);
  zc.recipe.zero_code = ZeroCode::one;
  EXPECT_THROW(run(zc, {kF32One}), std::invalid_argument);
}

// §10.4 te_mxfp8_2_13 (source-cited: TransformerEngine util/ptx.cuh exp2f_rcp<float> at d0067d0,
// changed by 71971e33d for TE 2.13; tests/cpp/test_common.h exp2f_rcp alike): the multiplier of
// code c is 2^(127 - c) for c < FE, 2^-127 (0x00400000) for FE.
//   The block: amax 0x00019422 (103 458 * 2^-149), d = amax * RN32(1/448) < 2^-127 -> code
//     00, multiplier 2^127: x = 0x800011B4 = -4532 * 2^-149 -> -4532 * 2^-22 = -0.00108 -> nearest
//     e4m3 subnormal -2^-9 (0.00108 / 2^-9 = 0.553) -> 0x81 (te_mxfp8: x * 1 -> -0 = 0x80); the
//     amax -> 103458 * 2^-22 = 0.02467 = 1.579 * 2^-6 -> 1.625 * 2^-6 -> (1 << 3) | 5 = 0x0D
//     (ml_dtypes float8_e4m3fn of the binary32 product agrees).
//   [Inf, 1, -1]: code FE, multiplier 2^-127: Inf -> Inf, satfinite 448 = 0x7E (te_mxfp8: Inf * 0 =
//     NaN, 0x7F); +-1 * 2^-127 -> +-0 (below half of 2^-9): 0x00 0x80.
//   [NaN, 448] as te_mxfp8: code 0x7F, codes 7F 7E.
TEST(Recipe, TeMxfp8From2_13) {
  const QuantizeSpec te = prof(ProfileId::te_mxfp8_2_13);
  EXPECT_EQ(te.rule, ScaleRule::mx_rceil_f32);
  EXPECT_EQ(te.amax.nan, AmaxNan::ignore);
  const Out z = run(te, {0x00019422u, 0x800011B4u});
  EXPECT_EQ(z.scales[0], 0x00u);
  EXPECT_EQ(z.codes, (std::vector<std::uint8_t>{0x0D, 0x81}));
  EXPECT_EQ(run(prof(ProfileId::te_mxfp8), {0x00019422u, 0x800011B4u}).codes[1], 0x80u);
  const Out i = run(te, {kF32Inf, kF32One, 0xBF800000u});
  EXPECT_EQ(i.scales[0], 0xFEu);
  EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0x7E, 0x00, 0x80}));
  const Out n = run(te, {kF32NaN, 0x43E00000u});
  EXPECT_EQ(n.scales[0], 0x7Fu);
  EXPECT_EQ(n.codes, (std::vector<std::uint8_t>{0x7F, 0x7E}));
  EXPECT_THROW(prof(ProfileId::te_mxfp8_2_13, format(FormatId::f4e2m1fn)), std::invalid_argument);
}

// §10.4 te_float8_current_pow2 and te_float8_block_f32 (TransformerEngine recipe_common.cuh
// compute_scale_from_amax at d0067d0; measured against TE's test references, docs/profiles.md).
// te_float8_current_pow2 (force_pow_2_scales, value_for_inf FLT_MAX from current_scaling.cu) is
// te_float8_block's arithmetic on the whole tensor: [0.5, 5, -3] -> P = 64 (89.6 masked), stored
// 0x3C800000, codes 60 7A F4 (TeFloat8Block); [2^-149] -> P = 2^127 (FLT_MAX masked), stored
// 0x00400000; the row of 128 x 5 and 2 x 2 is one tensor: one scale, amax 5 -> 0x3C800000.
// te_float8_block_f32 (pow_2_scaling false) is te_float8_current's per 1 x 128 tile. Values from
// numpy's binary32 arithmetic (np.float32(448) / np.float32(5) etc.) and ml_dtypes' f8e4m3fn:
//   [0.5, 5, -3]: S = RN32(89.6) = 0x42B33333 (89.5999985), stored RN32(1 / S) = 0x3C36DB6E;
//     0.5 S = 44.8 -> 44 = 1.375 * 2^5 -> (12 << 3) | 3 = 0x63; 5 S = 58720255 * 2^-17 rounds to
//     448 in binary32 (ulp 2^-15) -> 0x7E; -3 S = -268.8 -> -256 (e4m3 step 32) -> 0xF8.
//   the 130-element row: tiles of amax 5 and 2; 448 / 2 = 224 exactly, stored RN32(1 / 224) =
//     0x3B924925. [2^-149] -> S = FLT_MAX (TE's value_for_inf for binary32 input), stored 0x00200000.
// Both: [Inf, NaN, 1, -3] -> scale 1.0, codes 7E 7F 38 C4 (NaN ignored, Inf satfinite); 2^-149 -> 00.
TEST(Recipe, TeFloat8Pow2AndF32Variants) {
  struct Want {
    ProfileId id;
    ScaleRule rule;
    std::uint32_t scale;              // of [0.5, 5, -3]
    std::vector<std::uint8_t> codes;  // of [0.5, 5, -3]
    std::uint32_t tiny;               // the scale of [2^-149]
    std::vector<std::uint32_t> row;   // the scales of the 130-element row
  };
  const Want want[] = {
      {ProfileId::te_float8_current_pow2,
       ScaleRule::pow2_recip,
       0x3C800000u,
       {0x60, 0x7A, 0xF4},
       0x00400000u,
       {0x3C800000u}},
      {ProfileId::te_float8_block_f32,
       ScaleRule::amax_recip,
       0x3C36DB6Eu,
       {0x63, 0x7E, 0xF8},
       0x00200000u,
       {0x3C36DB6Eu, 0x3B924925u}},
  };
  std::vector<std::uint32_t> row(130, 0x40A00000u);
  row[128] = row[129] = 0x40000000u;
  for (const Want& w : want) {
    const QuantizeSpec te = prof(w.id);
    EXPECT_EQ(te.rule, w.rule);
    EXPECT_EQ(te.amax.nan, AmaxNan::ignore);
    const Out f = run(te, {0x3F000000u, 0x40A00000u, 0xC0400000u});
    EXPECT_EQ(f.scales, (std::vector<std::uint32_t>{w.scale}));
    EXPECT_EQ(f.codes, w.codes);
    const Out i = run(te, {kF32Inf, kF32NaN, kF32One, 0xC0400000u});
    EXPECT_EQ(i.scales, (std::vector<std::uint32_t>{0x3F800000u}));
    EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0x7E, 0x7F, 0x38, 0xC4}));
    const Out t = run(te, {0x00000001u});
    EXPECT_EQ(t.scales, (std::vector<std::uint32_t>{w.tiny}));
    EXPECT_EQ(t.codes[0], 0x00u);
    EXPECT_EQ(run(te, row).scales, w.row);
    EXPECT_THROW(prof(w.id, format(FormatId::f6e2m3fn)), std::invalid_argument);
  }
}

// Fake-quantizes a 1 x n binary32 row with `spec` into binary32 (§19.6).
std::vector<std::uint32_t> fq(const QuantizeSpec& spec, const std::vector<std::uint32_t>& x) {
  const std::vector<std::uint8_t> bytes = bytes_of(x);
  const TensorView v = TensorView::vector(format(FormatId::f32), bytes.data(), x.size());
  std::vector<std::uint32_t> out(x.size());
  fake_quantize(v, spec, format(FormatId::f32), out);
  return out;
}

// §10.4 microxcaling (mx/mx_ops.py _quantize_mx, CPU path): §16.11 floor(log2f(amax)), rna
// elements clamped to max_norm, §19.10 zero_sign=plus, §13.7 nan_block=first_nan.
TEST(Recipe, Microxcaling) {
  const QuantizeSpec mx = prof(ProfileId::microxcaling);
  EXPECT_EQ(mx.rule, ScaleRule::mx_floor);
  // amax 0x72FFFFFF = 2^102 (2 - 2^-23): log2 = 103 - 8.6e-8, and binary32 near 103 has ulp
  // 2^-17, so log2f = 103; e = 103 - emax 8 = 95, code 127 + 95 = 0xDE (§16.2 reads E = 102:
  // 0xDD). x * 2^-95 = 256 - 2^-16 rounds to 256 = 0x78 (exponent field 15); -2^-63 * 2^-95 =
  // -2^-158 is -0 in binary32, so +0 (keep: 0x80); -0 gives +0; 1 * 2^-95 rounds to +0.
  const std::vector<std::uint32_t> a{0x72FFFFFFu, 0xA0000000u, 0x80000000u, kF32One};
  const Out o = run(mx, a);
  EXPECT_EQ(o.scales[0], 0xDEu);
  EXPECT_EQ(o.codes, (std::vector<std::uint8_t>{0x78, 0x00, 0x00, 0x00}));
  EXPECT_EQ(run(plain(ScaleRule::mx_floor), a).scales[0], 0xDDu);
  QuantizeSpec keep = mx;
  keep.recipe.zero_sign = ZeroSign::keep;
  EXPECT_EQ(run(keep, a).codes, (std::vector<std::uint8_t>{0x78, 0x80, 0x80, 0x00}));
  // fake-quant: 256 * 2^95 = 2^103 = 0x73000000 (microxcaling gives the same, measured)
  EXPECT_EQ(fq(mx, a), (std::vector<std::uint32_t>{0x73000000u, 0u, 0u, 0u}));
  // FLT_MAX = 2^127 (2 - 2^-23): log2 = 128 - 8.6e-8 rounds to 128 (ulp 2^-17 below 128):
  // e = 120, code 0xF7; FLT_MAX * 2^-120 = 256 - 2^-16 rounds to 256 = 0x78, and 256 * 2^120 =
  // 2^128 overflows to +Inf in the binary32 product. §16.2: e = 119, 512 - 2^-15 clamps to 448
  // = 0x7E, 448 * 2^119 is finite (0x7F600000).
  const std::vector<std::uint32_t> big{0x7F7FFFFFu, 0x40000000u};
  EXPECT_EQ(run(mx, big).scales[0], 0xF7u);
  EXPECT_EQ(run(mx, big).codes[0], 0x78u);
  EXPECT_EQ(fq(mx, big)[0], kF32Inf);
  QuantizeSpec bits = mx;
  bits.recipe.scale_exp = ScaleExp::bits;
  EXPECT_EQ(run(bits, big).scales[0], 0xF6u);
  EXPECT_EQ(fq(bits, big)[0], 0x7F600000u);
  // rna: amax 1 -> e = -8, code 0x77; 1 * 2^8 = 256 = 0x78. 0x3B880000 = 1.0625 * 2^-8 -> 1.0625, the tie between
  // 1 (0x38) and 1.125 (0x39): away -> 0x39 (rne: 0x38); its negative -> 0xB9. 0x37A00000 =
  // 1.25 * 2^-16 -> 5 * 2^-10, the subnormal tie between 2 * 2^-9 (0x02) and 3 * 2^-9 (0x03):
  // away -> 0x03 (rne: 0x02).
  const Out t = run(mx, {kF32One, 0x3B880000u, 0xBB880000u, 0x37A00000u});
  EXPECT_EQ(t.scales[0], 0x77u);
  EXPECT_EQ(t.codes, (std::vector<std::uint8_t>{0x78, 0x39, 0xB9, 0x03}));
  // an all-zero block: amax 0 read as 2^-126, e = -134 clamped to -127: code 00; -0 -> +0
  const Out z = run(mx, {0u, 0x80000000u});
  EXPECT_EQ(z.scales[0], 0x00u);
  EXPECT_EQ(z.codes, (std::vector<std::uint8_t>{0x00, 0x00}));
  // §13.7 first_nan: the block's first NaN 0xFFBB5C5D (signalling, negative) quieted and made
  // positive is every output's NaN, a NaN element keeps its own (0x7FC00002); code FF; the
  // element codes are the e4m3 NaN 0x7F. An Inf block: the canonical NaN.
  const std::vector<std::uint32_t> n{kF32One, 0xFFBB5C5Du, 0x7FC00002u};
  EXPECT_EQ(run(mx, n).scales[0], 0xFFu);
  EXPECT_EQ(run(mx, n).codes, (std::vector<std::uint8_t>{0x7F, 0x7F, 0x7F}));
  EXPECT_EQ(fq(mx, n), (std::vector<std::uint32_t>{0x7FFB5C5Du, 0x7FFB5C5Du, 0x7FC00002u}));
  EXPECT_EQ(fq(plain(ScaleRule::mx_floor), n), (std::vector<std::uint32_t>{kF32NaN, kF32NaN, kF32NaN}));
  EXPECT_EQ(fq(mx, {0xFF800000u, kF32One}), (std::vector<std::uint32_t>{kF32NaN, kF32NaN}));
  // §10.4 its int8 is not numref's (docs/profiles.md): the recipe refuses it
  EXPECT_THROW(prof(ProfileId::microxcaling, format(FormatId::int8)), std::invalid_argument);
  EXPECT_NO_THROW(prof(ProfileId::microxcaling, format(FormatId::f6e2m3fn)));
}

// §10.4 microxcaling_even (_round_mantissa with round="even": floor(|q| + 0.5) minus 1 where
// (|q| - 0.5) % 2 == 0): the microxcaling recipe with elements rounded half to even. The block of
// the rna case above: amax 1 -> code 0x77; 1.0625 (the tie of 1 and 1.125, scaled |q| = 8.5:
// floor(9) - 1 = 8) -> 0x38, its negative 0xB8; 5 * 2^-10 (the subnormal tie of 2 and 3 * 2^-9,
// scaled |q| = 2.5: floor(3) - 1 = 2) -> 0x02. 1.1875 = 9.5 / 8 (|q| = 9.5, (9.5 - 0.5) % 2 = 1:
// floor(10) - 0 = 10) -> 1.25 = 0x3A, as rna. Everything else as microxcaling: the log2f exponent
// of amax 0x72FFFFFF (0xDE), +0 for a zero quotient, the first NaN of a NaN block.
TEST(Recipe, MicroxcalingEven) {
  const QuantizeSpec ev = prof(ProfileId::microxcaling_even);
  EXPECT_EQ(ev.rule, ScaleRule::mx_floor);
  EXPECT_EQ(ev.policy.round, Round::rne);
  const Out t = run(ev, {kF32One, 0x3B880000u, 0xBB880000u, 0x37A00000u, 0x3B980000u});
  EXPECT_EQ(t.scales[0], 0x77u);
  EXPECT_EQ(t.codes, (std::vector<std::uint8_t>{0x78, 0x38, 0xB8, 0x02, 0x3A}));
  EXPECT_EQ(run(prof(ProfileId::microxcaling), {kF32One, 0x3B880000u}).codes[1], 0x39u);  // nearest: away
  const Out o = run(ev, {0x72FFFFFFu, 0xA0000000u, 0x80000000u});
  EXPECT_EQ(o.scales[0], 0xDEu);
  EXPECT_EQ(o.codes, (std::vector<std::uint8_t>{0x78, 0x00, 0x00}));
  EXPECT_EQ(fq(ev, {kF32One, 0xFFBB5C5Du, 0x7FC00002u}),
            (std::vector<std::uint32_t>{0x7FFB5C5Du, 0x7FFB5C5Du, 0x7FC00002u}));
  EXPECT_THROW(prof(ProfileId::microxcaling_even, format(FormatId::int8)), std::invalid_argument);
}

// §10.4 microxcaling_floor (_quantize_mx with round="floor": sign(q) * floor(|q|) at the private
// exponent floor(torch.log2(|q|))), §19.11 elem_exp=log2f. Hand-worked:
//   f8e4m3fn, amax 256: log2f = 8, e = 8 - 8 = 0 (code 0x7F), F = 1, q = x.
//     x = 0x417FFFFF = 16 - 2^-20: log2(x) = 4 - 2^-24 / ln 2 = 4 - 8.6e-8; binary32 steps next to 4
//     are 2^-22 = 2.4e-7 (below) -> log2f = 4.0, so the grid is binade 4's (step 2^(4-3) = 2): 14 =
//     1.75 * 2^3 -> field 3 + 7 = 10, fraction 110: 0x56 (its own binade 3, step 1: 15 = 0x57;
//     nearest: 16 = 0x58); -x -> 0xD6; 256 -> 0x78; -2^-12 below the smallest subnormal 2^-9 -> -0
//     (0x80: q is not 0, so zero_sign=plus leaves it).
//   f4e2m1fn, amax 0x3FFFFFFF = 2 - 2^-23: log2 = 1 - 8.6e-8, nearer 0x3F7FFFFF = 1 - 2^-24 than 1
//     (the step below 1 is 2^-24 = 6.0e-8) -> floor 0, e = 0 - 2 = -2 (code 0x7D), F = 4: q = 8 - 2^-21
//     = 0x40FFFFFF, log2 = 3 - 8.6e-8 -> 3.0 (steps 2.4e-7): binade 3's grid, step 4: 4 = code 0x6,
//     fake-quant 4 / 4 = 1.0 (own binade 2, step 2: 6 = 0x7, 1.5). 1.0 -> q = 4 (a power of two) ->
//     0x6; 0x3FBFFFFF = 1.5 - 2^-23 -> q = 6 - 2^-21, not next to a power of two -> floor on step 2:
//     4 = 0x6.
TEST(Recipe, MicroxcalingFloor) {
  const QuantizeSpec fl = prof(ProfileId::microxcaling_floor);
  EXPECT_EQ(fl.rule, ScaleRule::mx_floor);
  EXPECT_EQ(fl.policy.round, Round::rtz);
  EXPECT_EQ(fl.recipe.elem_exp, ElemExp::log2f);
  const Out a = run(fl, {0x43800000u, 0x417FFFFFu, 0xC17FFFFFu, 0xB9800000u});
  EXPECT_EQ(a.scales[0], 0x7Fu);
  EXPECT_EQ(a.codes, (std::vector<std::uint8_t>{0x78, 0x56, 0xD6, 0x80}));
  QuantizeSpec bits = fl;
  bits.recipe.elem_exp = ElemExp::bits;
  EXPECT_EQ(run(bits, {0x43800000u, 0x417FFFFFu}).codes[1], 0x57u);
  EXPECT_EQ(run(prof(ProfileId::microxcaling), {0x43800000u, 0x417FFFFFu}).codes[1], 0x58u);
  const Format& e2m1 = format(FormatId::f4e2m1fn);
  const QuantizeSpec f4 = prof(ProfileId::microxcaling_floor, e2m1);
  const Out b = run(f4, {0x3FFFFFFFu, kF32One, 0x3FBFFFFFu});
  EXPECT_EQ(b.scales[0], 0x7Du);
  EXPECT_EQ(b.codes, (std::vector<std::uint8_t>{0x6, 0x6, 0x6}));
  EXPECT_EQ(fq(f4, {0x3FFFFFFFu}), (std::vector<std::uint32_t>{kF32One}));
  QuantizeSpec f4bits = f4;
  f4bits.recipe.elem_exp = ElemExp::bits;
  EXPECT_EQ(run(f4bits, {0x3FFFFFFFu}).codes[0], 0x7u);
  // §19.11 refused with integer elements and with stochastic rounding
  QuantizeSpec i8 = plain(ScaleRule::mx_floor, format(FormatId::int8));
  i8.recipe.elem_exp = ElemExp::log2f;
  EXPECT_THROW(Quantizer(i8, 1, 4), std::invalid_argument);
  QuantizeSpec sr = plain(ScaleRule::mx_floor);
  sr.recipe.elem_exp = ElemExp::log2f;
  sr.policy.round = Round::sr;
  EXPECT_THROW(Quantizer(sr, 1, 4), std::invalid_argument);
}

// Quantizes a 1 x n bf16 row (16-bit patterns) with `spec`.
Out run_bf16(const QuantizeSpec& spec, const std::vector<std::uint16_t>& x) {
  return run_row(spec, format(FormatId::bf16), x);
}

// §10.4 torchao_float8_inference (Float8Tensor.from_hp: _choose_scale_float8 and
// _quantize_affine_float8): amax-dequant with §14.5 scale_round=source, §14.6 zero_divisor=keep,
// §13.6 inf_block=zero_scale (D = +Inf), §13.7 nan_block=own_nan; torch's saturating cast.
TEST(Recipe, TorchaoFloat8Inference) {
  const QuantizeSpec ti = prof(ProfileId::torchao_float8_inference);
  EXPECT_EQ(ti.rule, ScaleRule::amax_dequant);
  // D = RN32(3 / 448): 3/448 = (3/7) 2^-6 = 1.101101101...b * 2^-8; the 24-bit significand
  // 1.10110110110110110110110 is followed by 1101... -> rounds up: fraction 0x5B6DB7, exponent
  // field 119: 0x3BDB6DB7. A binary32 source keeps it; 3 / D = 447.9999955 (RN32: 448) gives 0x7E
  // and 1 / D = 149.33 to 144 = 1.125 * 2^7 (0x71).
  const Out f = run(ti, {0x40400000u, kF32One});
  EXPECT_EQ(f.scales[0], 0x3BDB6DB7u);
  EXPECT_EQ(f.codes, (std::vector<std::uint8_t>{0x7E, 0x71}));
  // bf16 source: D rounded to bf16 (RNE): 0x3BDB|6DB7, low half < 0x8000 -> 0x3BDB0000 = 219 *
  // 2^-15; 3 / D = 98304 / 219 = 448.88 clamps to 448 (0x7E), 1 / D = 32768 / 219 = 149.6 -> 144
  // (0x71). amax-dequant alone keeps 0x3BDB6DB7.
  const Out b = run_bf16(ti, {0x4040, 0x3F80});
  EXPECT_EQ(b.scales[0], 0x3BDB0000u);
  EXPECT_EQ(b.codes, (std::vector<std::uint8_t>{0x7E, 0x71}));
  EXPECT_EQ(run_bf16(plain(ScaleRule::amax_dequant), {0x4040, 0x3F80}).scales[0], 0x3BDB6DB7u);
  // zeros: D = 0 kept; 0 / 0 = the x86 NaN 0xFFC00000 -> torch's e4m3fn NaN with its sign, 0xFF
  // (amax-dequant: D = 1.0, codes 00 80)
  const Out z = run(ti, {0u, 0x80000000u});
  EXPECT_EQ(z.scales[0], 0u);
  EXPECT_EQ(z.codes, (std::vector<std::uint8_t>{0xFF, 0xFF}));
  EXPECT_EQ(run(plain(ScaleRule::amax_dequant), {0u, 0x80000000u}).codes, (std::vector<std::uint8_t>{0x00, 0x80}));
  // amax 2^-149: D = RN32(2^-149 / 448) = 0 kept; x / 0 = +-Inf -> +-448 (7E FE), 0 / 0 -> FF
  // (amax-dequant: D = 2^-149, x / D = 1 -> 0x38)
  const Out t = run(ti, {0x00000001u, 0x80000001u, 0u});
  EXPECT_EQ(t.scales[0], 0u);
  EXPECT_EQ(t.codes, (std::vector<std::uint8_t>{0x7E, 0xFE, 0xFF}));
  EXPECT_EQ(run(plain(ScaleRule::amax_dequant), {0x00000001u}).codes[0], 0x38u);
  // +Inf amax: D = +Inf stored; Inf / Inf = NaN 0xFFC00000 -> FF, 1 / Inf = 0 -> 00
  const Out i = run(ti, {kF32Inf, kF32One, 0xFF800000u});
  EXPECT_EQ(i.scales[0], kF32Inf);
  EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0xFF, 0x00, 0xFF}));
  // NaN amax: D canonical; the NaN element divides to its own NaN (negative: FF), 1 / NaN is D's
  // NaN (7F) (poison: 7F 7F)
  const Out n = run(ti, {0xFFC12345u, kF32One});
  EXPECT_EQ(n.scales[0], kF32NaN);
  EXPECT_EQ(n.codes, (std::vector<std::uint8_t>{0xFF, 0x7F}));
  EXPECT_THROW(prof(ProfileId::torchao_float8_inference, format(FormatId::f4e2m1fn)), std::invalid_argument);
}

// §10.4 deepgemm_f32, §14.7 divisor=recip, §13.5 amax_floor with amax-dequant (DeepGEMM
// deep_gemm/utils/math.py per_token_cast_to_fp8(x, use_ue8m0=False) at 54e2261: amax.clamp(1e-4),
// sf = amax / 448.0, (x * (1.0 / sf)).to(float8_e4m3fn); the codes below are also what that
// function gives under torch 2.15 on AVX2 / AVX-512, tools/tests/recipe_diff.py --deepgemm).
//   amax 1: D = RN32(1 / 448): 1/448 = (1/7) 2^-6 = 1.001001...b * 2^-9; 23 fraction bits
//     00100100100100100100100 then 1001... -> round up: fraction 0x124925, field 118: 0x3B124925.
//     R = RN32(1 / D) = 0x43DFFFFF = 448 - 2^-15 (D is above 1/448, so 1/D is below 448);
//     x = 0x3C9B6DB8: x * R rounds to 0x41080000 = 8.5, a tie of e4m3 (8 and 9, spacing 1 in
//     [8, 16)) -> even: 8 = 0x50; x / D rounds to 0x41080001, above the tie -> 9 = 0x51 (the
//     default divide). 1 * R = 447.99997 -> 448 = 0x7E; -0 -> 0x80.
//   zeros: amax floored to RN32(1e-4) = 0x38D1B717, D = RN32(that / 448) = 0x346FACAD (see
//     DeepGemm above); amax-dequant without the floor stores 1.0.
//   +Inf: D = +Inf stored, R = 0: Inf * 0 = the x86 NaN 0xFFC00000 -> FF, -2 * 0 = -0 -> 80.
//   NaN amax: D canonical, every element the canonical NaN -> 7F (the NaN element too).
TEST(Recipe, DeepGemmF32) {
  const QuantizeSpec dg = prof(ProfileId::deepgemm_f32);
  EXPECT_EQ(dg.rule, ScaleRule::amax_dequant);
  EXPECT_EQ(to_string(dg.partition), "block:1x128");
  EXPECT_EQ(dg.recipe.divisor, Divisor::recip);
  const Out a = run(dg, {kF32One, 0x3C9B6DB8u, 0x80000000u});
  EXPECT_EQ(a.scales[0], 0x3B124925u);
  EXPECT_EQ(a.codes, (std::vector<std::uint8_t>{0x7E, 0x50, 0x80}));
  QuantizeSpec divide = dg;
  divide.recipe.divisor = Divisor::divide;
  EXPECT_EQ(run(divide, {kF32One, 0x3C9B6DB8u}).codes[1], 0x51u);
  const Out z = run(dg, {0u, 0x80000000u});
  EXPECT_EQ(z.scales[0], 0x346FACADu);
  EXPECT_EQ(z.codes, (std::vector<std::uint8_t>{0x00, 0x80}));
  EXPECT_EQ(run(plain(ScaleRule::amax_dequant), {0u}).scales[0], kF32One);
  const Out i = run(dg, {kF32Inf, 0xC0000000u, 0xFF800000u, 0u});
  EXPECT_EQ(i.scales[0], kF32Inf);
  EXPECT_EQ(i.codes, (std::vector<std::uint8_t>{0xFF, 0x80, 0xFF, 0x00}));
  const Out n = run(dg, {0xFFC12345u, 0x40400000u, 0u});
  EXPECT_EQ(n.scales[0], kF32NaN);
  EXPECT_EQ(n.codes, (std::vector<std::uint8_t>{0x7F, 0x7F, 0x7F}));
  // §14.7 R overflows: amax 2^-149 without the floor, D raised to 2^-149 (§14.3), 1 / D = 2^149 >
  // FLT_MAX -> R = +Inf: x / 0's elements (§14.6), +-Inf -> +-448 (7E FE, saturating), 0 -> 0 * Inf
  // = 0xFFC00000 -> FF; with divide, x / D = 1 -> 0x38
  QuantizeSpec tiny = dg;
  tiny.recipe.amax_floor = AmaxFloor::none;
  const Out t = run(tiny, {0x00000001u, 0x80000001u, 0u});
  EXPECT_EQ(t.scales[0], 0x00000001u);
  EXPECT_EQ(t.codes, (std::vector<std::uint8_t>{0x7E, 0xFE, 0xFF}));
  tiny.recipe.divisor = Divisor::divide;
  EXPECT_EQ(run(tiny, {0x00000001u}).codes[0], 0x38u);
  EXPECT_THROW(prof(ProfileId::deepgemm_f32, format(FormatId::f4e2m1fn)), std::invalid_argument);
}

// §18.5 / §18.6 torchao_nvfp4 (per-tensor scale p = t_amax / 2688) and torchao_nvfp4_block (none).
// Every binary32 value below is checked with exact fractions; the codes and dequantized values are
// also what torchao 0.18's NVFP4Tensor.to_nvfp4 / .dequantize give (tools/tests/nvfp4_diff.py).
Out run_dequant(const QuantizeSpec& spec, const std::vector<std::uint32_t>& x, std::vector<std::uint32_t>& deq) {
  const std::vector<std::uint8_t> bytes = bytes_of(x);
  const TensorView v = TensorView::vector(format(FormatId::f32), bytes.data(), x.size());
  Out o;
  o.codes.resize(x.size());
  const QuantizeResult r = quantize(v, spec, o.codes);
  o.scales = r.meta.scales;
  deq.assign(x.size(), 0);
  dequantize(o.codes, r.meta, deq);
  return o;
}
std::vector<std::uint32_t> block16(std::uint32_t first, std::uint32_t rest) {
  std::vector<std::uint32_t> b(16, rest);
  b[0] = first;
  return b;
}
std::vector<std::uint32_t> concat(std::vector<std::uint32_t> a, const std::vector<std::uint32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Recipe, TorchaoNvfp4) {
  const Format& fp4 = format(FormatId::f4e2m1fn);
  const QuantizeSpec ao = prof(ProfileId::torchao_nvfp4, fp4);
  EXPECT_EQ(ao.rule, ScaleRule::nvfp4);
  QuantizeSpec te = ao;  // the same with §18.2's encode-direction scale (TransformerEngine)
  te.recipe.nvfp4_scale = NvScale::encode;
  // Two blocks: t = 0x3C8A7051 (0.016899...) alone, then b = 0x3B773649 alone.
  // p = RN32(t / 2688) = 0x36D2F44B. Block 1: RN32(b / 6) = 0x3A24CEDB and RN32(0x3A24CEDB / p) =
  // 0x42C80000 = 100 (the exact quotient is 100 + 3.76e-6, below half an ulp, 2^-18 = 3.81e-6): the E4M3
  // midpoint of 96 (0x6C)
  // and 104 (0x6D), ties to even: 0x6C. §18.2 instead: S_enc = RN32(2688 / t) = 0x481B550E, times
  // RN32(1/6) = 0x46CF1C13, times b = 0x42C80001 (100 + 2^-17), above the midpoint: 0x6D.
  // Block 0: RN32(RN32(t / 6) / p) = 0x43DFFFFF (448 - 2^-5) -> E4M3 448, 0x7E. Elements: b * m_1 with
  // m_1 = RN32(RN32(1 / p) / 96) is 6.2500005 -> clamped, 6 = 0x7; t * m_0 = 6.0 -> 0x7.
  std::vector<std::uint32_t> deq;
  const Out a = run_dequant(ao, concat(block16(0x3C8A7051u, 0), block16(0x3B773649u, 0)), deq);
  EXPECT_EQ(a.scales, (std::vector<std::uint32_t>{0x7E, 0x6C}));
  EXPECT_EQ(a.codes[0], 0x7u);
  EXPECT_EQ(a.codes[16], 0x7u);
  // dequantized: RN32(6 * RN32(p * 96)) = RN32(6 * 0x3A1E3738) = 0x3B6D52D4 — torchao's
  // .dequantize(torch.float32) gives the same
  EXPECT_EQ(deq[16], 0x3B6D52D4u);
  EXPECT_EQ(run(te, concat(block16(0x3C8A7051u, 0), block16(0x3B773649u, 0))).scales[1], 0x6Du);
  // An all-zero tensor: p = 0 / 2688 = +0; s = 0 / 0 = the x86 NaN 0xFFC00000 -> d_b 0xFF; m = (1 / 0) /
  // NaN = the NaN of v(0xFF) = 0xFFF00000: every element converts it, bits -> 0x4 | sign = 0xC
  // (§18.1's encode scale: S_enc = 1, d_b = 0x00 with the code of zero)
  const Out z = run(ao, concat(block16(0, 0), block16(0x80000000u, 0)));
  EXPECT_EQ(z.scales, (std::vector<std::uint32_t>{0xFF, 0xFF}));
  EXPECT_EQ(z.codes, std::vector<std::uint8_t>(32, 0xC));
  EXPECT_EQ(run(te, concat(block16(0, 0), block16(0x80000000u, 0))).codes[0], 0x0u);
  // +Inf in the second block: p = +Inf; block 0: (1 / 6) / Inf = 0 -> clamped to 2^-6 (0x08), m = (1 / Inf)
  // / 2^-6 = 0: 1.0 * 0 = +0 (0x0); block 1: Inf / Inf = 0xFFC00000 -> 0xFF, elements 0xFFF00000 -> 0xC
  const Out i = run(ao, concat(block16(kF32One, kF32One), block16(kF32Inf, 0xBF800000u)));
  EXPECT_EQ(i.scales, (std::vector<std::uint32_t>{0x08, 0xFF}));
  EXPECT_EQ(i.codes[0], 0x0u);
  EXPECT_EQ(i.codes[16], 0xCu);
  EXPECT_EQ(i.codes[17], 0xCu);
  // a NaN tensor: p = 0xFFFFFFFF (§18.5); a NaN block amax is the first operand of s = NaN / p: 0x7F;
  // every m is p's NaN (0xFFFFFFFF), whose bits give 0x4 | sign = 0xC (elem_nan=half: 0xB)
  const Out n = run(ao, concat(block16(kF32NaN, kF32NaN), block16(kF32NaN, kF32NaN)));
  EXPECT_EQ(n.scales, (std::vector<std::uint32_t>{0x7F, 0x7F}));
  EXPECT_EQ(n.codes, std::vector<std::uint8_t>(32, 0xC));
  QuantizeSpec half = ao;
  half.recipe.elem_nan = ElemNan::half;
  EXPECT_EQ(run(half, concat(block16(kF32NaN, kF32NaN), block16(kF32NaN, kF32NaN))).codes[0], 0xBu);
}

TEST(Recipe, TorchaoNvfp4Block) {
  const Format& fp4 = format(FormatId::f4e2m1fn);
  const QuantizeSpec ao = prof(ProfileId::torchao_nvfp4_block, fp4);
  // A zero block: 0 / 6 = 0, clamped to 2^-6 (0x08), m = 64: codes 0x0 / 0x8 (signed zeros).
  // A NaN block: NaN / 6 -> 0x7F; m = 1 / v(0x7F) = 1 / 0x7FF00000 = 0x7FF00000: every element converts
  // it, its bit 21 set: 0x4 (elem_nan=half: 0x3). The second element 1.0 of that block too.
  std::vector<std::uint32_t> deq;
  const Out a = run_dequant(ao, concat(block16(0x80000000u, 0), block16(kF32NaN, kF32One)), deq);
  EXPECT_EQ(a.scales, (std::vector<std::uint32_t>{0x08, 0x7F}));
  EXPECT_EQ(a.codes[0], 0x8u);
  EXPECT_EQ(a.codes[1], 0x0u);
  EXPECT_EQ(a.codes[16], 0x4u);
  EXPECT_EQ(a.codes[17], 0x4u);
  QuantizeSpec half = ao;
  half.recipe.elem_nan = ElemNan::half;
  EXPECT_EQ(run(half, concat(block16(0x80000000u, 0), block16(kF32NaN, kF32One))).codes[16], 0x3u);
  // amax 1.0: RN32(1 / 6) = 0x3E2AAAAB (0.16666667163) -> E4M3: 0.1666 lies between 0.15625 (1.25 * 2^-3,
  // 0x22) and 0.171875 (1.375 * 2^-3, 0x23), above their midpoint 0.1640625: 0x23. m = RN32(1 / 0.171875) = RN32(64 / 11)
  // = 0x40BA2E8C (5.8181819); 1.0 * m = 5.818 -> FP4 6 (0x7), 0.5 * m = 2.909 -> 3 (0x5). Dequantized:
  // 6 * 0.171875 = 1.03125 (0x3F840000), 3 * 0.171875 = 0.515625 (0x3F040000).
  // With p (torchao_nvfp4, t = 1): p = RN32(1 / 2688), s = RN32(0x3E2AAAAB / p) = 448 -> 0x7E instead.
  const Out b = run_dequant(ao, block16(kF32One, 0x3F000000u), deq);
  EXPECT_EQ(b.scales, (std::vector<std::uint32_t>{0x23}));
  EXPECT_EQ(b.codes[0], 0x7u);
  EXPECT_EQ(b.codes[1], 0x5u);
  EXPECT_EQ(deq[0], 0x3F840000u);
  EXPECT_EQ(deq[1], 0x3F040000u);
  EXPECT_EQ(run(prof(ProfileId::torchao_nvfp4, fp4), block16(kF32One, 0x3F000000u)).scales[0], 0x7Eu);
  EXPECT_THROW(prof(ProfileId::torchao_nvfp4_block, E4M3), std::invalid_argument);
}

// §10.4 te_nvfp4 / te_nvfp4_2d: §18 with nvfp4_scale=encode_inf_one (§18.5): TransformerEngine's
// compute_global_encode_scaling_factor_FP4 gives S_enc = 1.0 for t_amax = +Inf (2688 / Inf = 0 -> 1.0).
TEST(Recipe, TeNvfp4) {
  const Format& fp4 = format(FormatId::f4e2m1fn);
  const QuantizeSpec te = prof(ProfileId::te_nvfp4, fp4);
  EXPECT_EQ(te.rule, ScaleRule::nvfp4);
  // [+Inf, 1.0 x 15 | 1.0 x 16]: S_enc = 1. Block 0: RN32(Inf * RN32(1 * RN32(1/6))) = Inf -> 448 (0x7E);
  // c_0 = RN32(1 / RN32(448 * RN32(1 / 1))) = RN32(1/448); Inf * c_0 = Inf -> satfinite 6 (0x7), 1.0 * c_0 =
  // 0.00223 -> 0 (0x0). Block 1: RN32(1 * 0x3E2AAAAB) = 0.16666667 -> E4M3 0.171875 (0x23, above the
  // midpoint 0.1640625 of 0x22 and 0x23); c_1 = RN32(1 / 0.171875) = 5.818 -> 1.0 * c_1 -> 6 (0x7).
  // (nvfp4_scale=encode, §18.1: t_amax = +Inf poisons every block: scales 0x7F 0x7F.)
  std::vector<std::uint32_t> x = concat(block16(kF32Inf, kF32One), block16(kF32One, kF32One));
  const Out a = run(te, x);
  EXPECT_EQ(a.scales, (std::vector<std::uint32_t>{0x7E, 0x23}));
  EXPECT_EQ(a.codes[0], 0x7u);
  EXPECT_EQ(a.codes[1], 0x0u);
  EXPECT_EQ(a.codes[16], 0x7u);
  QuantizeSpec poison = te;
  poison.recipe.nvfp4_scale = NvScale::encode;
  EXPECT_EQ(run(poison, x).scales, (std::vector<std::uint32_t>{0x7F, 0x7F}));
  // a NaN is ignored by the amaxes (fmaxf): [NaN, 1.0 x 15] has t_amax 1, S_enc = 2688, RN32(2688 *
  // RN32(1/6)) = 448 (2688 * 0x3E2AAAAB = 448.0000133, RN32: 448), 1 * 448 -> 0x7E (amax_nan=propagate:
  // a poisoned t_amax, 0x7F)
  EXPECT_EQ(run(te, block16(kF32NaN, kF32One)).scales[0], 0x7Eu);
  QuantizeSpec propagate = te;
  propagate.amax.nan = AmaxNan::propagate;
  EXPECT_EQ(run(propagate, block16(kF32NaN, kF32One)).scales[0], 0x7Fu);
  // te_nvfp4_2d: one scale per 16 x 16 tile (16 rows of 32: two tiles of amax 1.0 and 0.5; t_amax 1):
  // 1 * 448 -> 0x7E, 0.5 * 448 = 224 = 1.75 * 2^7 -> 0x76
  const QuantizeSpec te2 = prof(ProfileId::te_nvfp4_2d, fp4);
  std::vector<std::uint32_t> t(16 * 32, 0);
  t[5 * 32 + 3] = kF32One;       // tile 0, row 5
  t[9 * 32 + 20] = 0x3F000000u;  // tile 1, row 9
  std::vector<std::uint8_t> bytes(t.size() * 4);
  std::memcpy(bytes.data(), t.data(), bytes.size());
  std::vector<std::uint8_t> codes(t.size());
  const TensorView v(format(FormatId::f32), bytes.data(), 16, 32);
  EXPECT_EQ(quantize(v, te2, codes).meta.scales, (std::vector<std::uint32_t>{0x7E, 0x76}));
  EXPECT_THROW(prof(ProfileId::te_nvfp4, E4M3), std::invalid_argument);
}

// §19.9 elem_nan=bits on FP6: f6e2m3fn (bias 1, m = 3; o = bit 20): 0x7FC00000 (o = 0) -> (0x7FC00000 -
// 126 * 2^23 + 2^19 - 1) >> 20 = 0x40C7FFFF >> 20 = 0x40C -> 0x0C (1.5, as `half`); 0x7FF00000 (o = 1) ->
// 0x40F80000 >> 20 -> 0x0F; 0x7FFFFFFF (o = 1) -> 0x4107FFFF >> 20 = 0x410 -> 0x10; the sign bit 0x20 ORed in.
TEST(Recipe, ElemNanBitsReadsThePayload) {
  const Format& e2m3 = format(FormatId::f6e2m3fn);
  QuantizeSpec s = plain(ScaleRule::nvfp4, e2m3);
  s.recipe.nvfp4_scale = NvScale::block;
  s.recipe.elem_nan = ElemNan::bits;
  // A NaN block of torchao's arithmetic: every element converts m = 0x7FF00000 -> 0x0F.
  EXPECT_EQ(run(s, {kF32NaN, kF32One}).codes, (std::vector<std::uint8_t>{0x0F, 0x0F}));
  // The all-zero tensor under decode: m = 0xFFF00000 -> 0x0F | 0x20 = 0x2F.
  s.recipe.nvfp4_scale = NvScale::decode;
  EXPECT_EQ(run(s, {0u, 0u}).codes, (std::vector<std::uint8_t>{0x2F, 0x2F}));
  // A NaN tensor: m = p = 0xFFFFFFFF -> 0x10 | 0x20 = 0x30.
  EXPECT_EQ(run(s, {kF32NaN, kF32One}).codes, (std::vector<std::uint8_t>{0x30, 0x30}));
}

// §19.8 a knob outside the rules of its clause is an error.
TEST(Recipe, KnobsOutsideTheirRulesAreRefused) {
  auto refused = [](ScaleRule r, std::string_view settings) {
    QuantizeSpec s = plain(r);
    EXPECT_FALSE(apply_recipe_settings(s.recipe, settings).has_value());
    EXPECT_THROW(Quantizer(s, 1, 4), std::invalid_argument) << settings;
  };
  refused(ScaleRule::mx_ceil, "scale_exp=log2f");
  refused(ScaleRule::mx_floor, "scale_exp=log2f inf_block=exponent");
  refused(ScaleRule::mx_floor, "nan_block=first_nan nan_scale=all_ones_tensor");
  refused(ScaleRule::amax, "scale_round=source");
  refused(ScaleRule::mx_floor, "zero_divisor=keep");
  refused(ScaleRule::amax_recip, "inf_block=zero_scale");
  refused(ScaleRule::amax, "zero_code=one");
  refused(ScaleRule::amax, "inf_block=exponent");
  refused(ScaleRule::mx_floor, "inf_block=zero_scale");
  refused(ScaleRule::amax, "nan_block=inf_divisor");
  refused(ScaleRule::mx_floor, "amax_floor=1e-12");
  refused(ScaleRule::amax_recip, "amax_floor=1e-4");
  refused(ScaleRule::amax, "divisor=recip");
  refused(ScaleRule::mx_floor, "divisor=recip");
  refused(ScaleRule::mx_rceil, "mx_descale=divide");
  refused(ScaleRule::amax, "nan_block=max_code");
  refused(ScaleRule::mx_floor, "nan_scale=all_ones_tensor");
  refused(ScaleRule::amax, "nvfp4_scale=decode");
  refused(ScaleRule::mx_floor, "nvfp4_scale=block");
}

// §19.8 text form: describe() writes every knob; apply_recipe_settings() reads it back and names
// an unknown key or word.
TEST(Recipe, TextForm) {
  RecipeKnobs k;
  EXPECT_EQ(describe(k),
            "amax_floor=none scale_exp=bits zero_code=stored inf_block=poison nan_block=poison elem_nan=policy "
            "mx_descale=recip nan_scale=canonical zero_sign=keep scale_round=f32 zero_divisor=raise divisor=divide "
            "elem_exp=bits nvfp4_scale=encode");
  ASSERT_FALSE(apply_recipe_settings(k, "zero_code=one inf_block=max_code").has_value());
  EXPECT_EQ(k.zero_code, ZeroCode::one);
  RecipeKnobs back;
  ASSERT_FALSE(apply_recipe_settings(back, describe(k)).has_value());
  EXPECT_EQ(back, k);
  EXPECT_EQ(*apply_recipe_settings(k, "zero=one"), "unknown recipe key 'zero'");
  EXPECT_EQ(*apply_recipe_settings(k, "zero_code=two"), "bad value 'two' for recipe key 'zero_code'");
  EXPECT_EQ(*apply_recipe_settings(k, "zero_code"), "recipe setting 'zero_code' is not key=value");
  // a key given twice is refused, naming it (not "the last one wins"); k is left unchanged
  const RecipeKnobs before = k;
  const auto twice = apply_recipe_settings(k, "zero_code=one inf_block=max_code zero_code=stored");
  ASSERT_TRUE(twice.has_value());
  EXPECT_NE(twice->find("'zero_code' given twice"), std::string::npos) << *twice;
  EXPECT_EQ(k, before);
}

// §10.4 every recipe of the profile table is well formed and builds a quantizer for the first
// element format it lists (E4M3 but for the NVFP4 recipes, f4e2m1fn).
TEST(Recipe, ProfileTableRecipesAreWellFormed) {
  int n = 0;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& p = all_profiles()[i];
    if (!p.recipe) {
      EXPECT_THROW(recipe_spec(p, E4M3), std::invalid_argument);
      continue;
    }
    ++n;
    const std::string_view list = p.recipe->elements;
    const auto first = find_format(list.substr(0, std::min(list.find(' '), list.size())));
    ASSERT_TRUE(first.has_value()) << p.name;
    EXPECT_NO_THROW(Quantizer(recipe_spec(p, format(*first)), 4, 64)) << p.name;
    EXPECT_FALSE(p.recipe->source.empty());
  }
  // the 12 of ABI 1.7 (torchao x 7, deepgemm, te_mxfp8, te_float8_current, te_float8_block,
  // microxcaling) at least: rows are appended, never removed (§32.3)
  EXPECT_GE(n, 12);
}

// §10.4 every recipe lists the element formats it reproduces (names of the format table, E4M3 or
// f4e2m1fn among them); every other format of the table is refused with one error naming both. DeepGEMM's
// per_token_cast_to_fp8 casts to torch.float8_e4m3fn only; its FP4 path (per_token_cast_to_fp4)
// counts the thresholds 0.25, 0.75, ... that |x| exceeds, so the tie 0.25 gives code 0 (RNE: 0.5,
// code 1) and -0.1 gives +0 (code 0, the sign kept only for a non-zero code): not the deepgemm
// recipe's arithmetic, so f4e2m1fn is refused.
TEST(Recipe, RecipesRefuseElementFormatsTheyDoNotReproduce) {
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& p = all_profiles()[i];
    if (!p.recipe) continue;
    const std::string_view list = p.recipe->elements;
    ASSERT_FALSE(list.empty()) << p.name;
    int listed = 0;
    for (std::size_t at = 0; at < list.size();) {
      const std::size_t end = std::min(list.find(' ', at), list.size());
      const auto id = find_format(list.substr(at, end - at));
      EXPECT_TRUE(id.has_value()) << p.name << ": " << list.substr(at, end - at);
      if (id) {
        EXPECT_TRUE(p.recipe->takes(format(*id))) << p.name;
      }
      ++listed;
      at = end + 1;
    }
    int taken = 0;
    for (int f = 0; f < kFormatCount; ++f) {
      const Format& fmt = format(static_cast<FormatId>(f));
      if (p.recipe->takes(fmt)) {
        ++taken;
        EXPECT_NO_THROW(recipe_spec(p, fmt)) << p.name << " " << fmt.name;
        continue;
      }
      try {
        recipe_spec(p, fmt);
        ADD_FAILURE() << p.name << " accepts " << fmt.name;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("profile " + std::string(p.name) + " quantizes to " + std::string(list) +
                                             ", not " + std::string(fmt.name)),
                  std::string::npos)
            << e.what();
      }
    }
    EXPECT_EQ(taken, listed) << p.name;
  }
  EXPECT_EQ(profile(ProfileId::deepgemm).recipe->elements, "f8e4m3fn");
  EXPECT_THROW(prof(ProfileId::deepgemm, format(FormatId::f4e2m1fn)), std::invalid_argument);
}

}  // namespace
}  // namespace numref
