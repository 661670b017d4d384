// numref tests — amax and the scale rules.                 spec §13 – §16, §18
//
// Expected values are worked by hand in the comments (binary32 codes of quotients were
// checked with exact fractions), or come from the independent rational oracle's decoder.
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numref/convert.hpp"
#include "numref/oracle/rational_round.hpp"
#include "numref/quantize.hpp"
#include "numref/scale.hpp"

namespace numref {
namespace {

const Format& F32 = format(FormatId::f32);
const Format& BF16 = format(FormatId::bf16);
const Format& E4M3 = format(FormatId::f8e4m3fn);
const Exact kQ448{false, 7, 6, false};  // 448 = 7 * 2^6

Amax amax_of(const Format& f, const std::vector<std::uint32_t>& codes, AmaxPolicy p = {}) {
  std::vector<std::uint8_t> bytes(codes.size() * storage_bytes(f));
  for (std::size_t i = 0; i < codes.size(); ++i) std::memcpy(&bytes[i * storage_bytes(f)], &codes[i], storage_bytes(f));
  const TensorView x = TensorView::vector(f, bytes.data(), codes.size());
  return block_amax(x, BlockRange{0, 1, 0, codes.size()}, p);
}

// ---- §13 amax ---------------------------------------------------------------------------

TEST(Amax, HandExamples) {  // §13.1
  // bf16 [1, -3, 2.5, -0]: 3F80 C040 4020 8000 -> max |x| = 3 = f32 40400000
  EXPECT_EQ(amax_of(BF16, {0x3F80, 0xC040, 0x4020, 0x8000}).f32, 0x40400000u);
  // all zeros (both signs) -> +0
  EXPECT_EQ(amax_of(BF16, {0x0000, 0x8000}).f32, 0u);
  // bf16 subnormal 0x0001 = 2^-133 widens exactly to the f32 subnormal 2^-133 = 0x00010000
  EXPECT_EQ(amax_of(BF16, {0x8001, 0x0000}).f32, 0x00010000u);
  // f8e4m3fn as a source: 0xFE = -448 -> 448 = 43E00000
  EXPECT_EQ(amax_of(E4M3, {0x01, 0xFE}).f32, 0x43E00000u);
}

TEST(Amax, NanAndInfPolicies) {                                          // §13.2
  const std::vector<std::uint32_t> with_nan = {0x3F80, 0x7FC1, 0xC000};  // 1, NaN, -2
  EXPECT_EQ(amax_of(BF16, with_nan).f32, kF32NaN);
  EXPECT_EQ(amax_of(BF16, with_nan, {AmaxNan::ignore, AmaxInf::propagate}).f32, 0x40000000u);  // 2
  const std::vector<std::uint32_t> with_inf = {0x3F80, 0xFF80, 0xC000};                        // 1, -Inf, -2
  EXPECT_EQ(amax_of(BF16, with_inf).f32, kF32Inf);
  EXPECT_EQ(amax_of(BF16, with_inf, {AmaxNan::propagate, AmaxInf::ignore}).f32, 0x40000000u);
  // both: NaN wins under propagate; nan=ignore, inf=propagate gives Inf
  const std::vector<std::uint32_t> both = {0x7F80, 0xFFC0};
  EXPECT_EQ(amax_of(BF16, both).f32, kF32NaN);
  EXPECT_EQ(amax_of(BF16, both, {AmaxNan::ignore, AmaxInf::propagate}).f32, kF32Inf);
  EXPECT_EQ(amax_of(BF16, both, {AmaxNan::ignore, AmaxInf::ignore}).f32, 0u);  // nothing finite left
  // fn source: 0x7F / 0xFF are the NaNs of f8e4m3fn (§2.2)
  EXPECT_EQ(amax_of(E4M3, {0x10, 0xFF}).f32, kF32NaN);
  EXPECT_EQ(amax_of(E4M3, {0x10, 0xFF}, {AmaxNan::ignore, AmaxInf::propagate}).f32,
            0x3D000000u);  // 0x10: field 2 -> 2^(2-7) = 2^-5
}

TEST(Amax, CombineOrdersNanAboveInfAboveFinite) {  // §13.4
  EXPECT_EQ(combine(Amax{0x40000000u}, Amax{0x3F800000u}).f32, 0x40000000u);
  EXPECT_EQ(combine(Amax{kF32Inf}, Amax{kF32Max}).f32, kF32Inf);
  EXPECT_EQ(combine(Amax{kF32Inf}, Amax{kF32NaN}).f32, kF32NaN);
  EXPECT_EQ(combine(Amax{0}, Amax{1}).f32, 1u);
}

// §13.1 relies on: finite magnitudes are ordered like their codes. Checked for every source
// format of at most 16 bits against the oracle's independent rational decoder.
TEST(Amax, FiniteMagnitudeOrderIsCodeOrder) {
  for (const Format& f : kFormats) {
    if (!check_source_format(f).empty() || f.bits > 16) continue;
    oracle::rat::Rational prev = -1;
    for (std::uint32_t mag = 0; mag <= f.mag_mask(); ++mag) {
      const auto v = oracle::rat::decode(mag, f);
      if (v.kind != oracle::rat::Value::finite) continue;
      ASSERT_GT(v.v, prev) << f.name << " magnitude code " << mag;
      prev = v.v;
    }
  }
}

// ---- §14 FP32 scales --------------------------------------------------------------------

TEST(Fp32Scale, HandExamples) {                                   // §14.1
  EXPECT_EQ(fp32_amax_scale(Amax{0x43E00000u}, kQ448), kF32One);  // 448 / 448 = 1
  EXPECT_EQ(fp32_amax_scale(Amax{kF32One}, kQ448), 0x43E00000u);  // 448 / 1 = 448
  // 448 / 3 = 149.333... = 1.1666...·2^7; fraction 0.1666...·2^23 = 1398101.33 -> 0x155555
  EXPECT_EQ(fp32_amax_scale(Amax{0x40400000u}, kQ448), 0x43155555u);
  EXPECT_EQ(fp32_amax_scale(Amax{0}, kQ448), kF32One);        // zero block: unit scale
  EXPECT_EQ(fp32_amax_scale(Amax{kF32NaN}, kQ448), kF32NaN);  // poisoned
  EXPECT_EQ(fp32_amax_scale(Amax{kF32Inf}, kQ448), kF32NaN);
  // subnormal amax 2^-149: 448·2^149 overflows binary32 -> clamped to max finite
  EXPECT_EQ(fp32_amax_scale(Amax{kF32MinSub}, kQ448), kF32Max);
  // 2^-120: 448·2^120 = 1.75·2^128 > FLT_MAX -> clamped; 2^-119: 1.75·2^127 fits exactly
  EXPECT_EQ(fp32_amax_scale(Amax{0x03800000u}, kQ448), kF32Max);
  EXPECT_EQ(fp32_amax_scale(Amax{0x04000000u}, kQ448), 0x7F600000u);
}

TEST(Fp32Scale, DequantScale) {  // §14.3
  EXPECT_EQ(fp32_dequant_scale(Amax{0x43E00000u}, kQ448), kF32One);
  EXPECT_EQ(fp32_dequant_scale(Amax{0x44600000u}, kQ448), 0x40000000u);  // 896 / 448 = 2
  EXPECT_EQ(fp32_dequant_scale(Amax{0}, kQ448), kF32One);
  EXPECT_EQ(fp32_dequant_scale(Amax{kF32Inf}, kQ448), kF32NaN);
  // 2^-149 / 448 < 2^-150 rounds to 0: raised to the smallest subnormal
  EXPECT_EQ(fp32_dequant_scale(Amax{kF32MinSub}, kQ448), kF32MinSub);
}

TEST(Fp32Scale, QmaxOfFormatsAndChecks) {  // §14.4
  EXPECT_EQ(compare_abs(format_qmax(E4M3), kQ448), 0);
  EXPECT_EQ(compare_abs(format_qmax(format(FormatId::f8e5m2)), Exact{false, 7, 13, false}), 0);  // 57344
  EXPECT_EQ(compare_abs(format_qmax(format(FormatId::f4e2m1fn)), Exact{false, 6, 0, false}), 0);
  EXPECT_EQ(compare_abs(format_qmax(format(FormatId::int8)), Exact{false, 127, 0, false}), 0);
  EXPECT_TRUE(check_qmax(Exact{false, 255, -1, false}).empty());             // 127.5
  EXPECT_FALSE(check_qmax(Exact{false, 3, 0, false}).empty());               // below 4
  EXPECT_FALSE(check_qmax(Exact{false, 1, 128, false}).empty());             // beyond FLT_MAX
  EXPECT_FALSE(check_qmax(Exact{false, (1u << 25) + 1, 0, false}).empty());  // 26 bits
}

// ---- §4.4 correctly rounded division -------------------------------------------------------

// §4.4 The quotient a / b of exact values, as 64 significant bits and a sticky bit, rounded
// once, is the correctly rounded quotient: in binary32 (RN32, subnormal results included), bf16
// and f8e4m3fn, every deterministic mode and stochastic rounding with k = 8 and k = 32 (64 >= k + 24).
// Expected: the oracle rounding the exact rational a / b (numref::oracle::rat, no reference code).
// Hand cases first: 448 / 3 = 149.33 -> 0x43155555 (Fp32Scale.HandExamples); 1 / 3 = 0x3EAAAAAB
// (0.0101... fraction 0x2AAAAA, next bits 1010...: up); 2^-148 / 4 = 2^-150, the tie between 0 and
// 2^-149: even 0; 3 · 2^-149 / 2 = 1.5 · 2^-149: tie, even 2 · 2^-149 = 0x00000002.
TEST(Division, CorrectlyRoundedQuotientAgainstTheOracle) {  // §4.4
  EXPECT_EQ(rn32_div(kQ448, exact_f32(0x40400000u)), 0x43155555u);
  EXPECT_EQ(rn32_div(exact_f32(kF32One), exact_f32(0x40400000u)), 0x3EAAAAABu);
  EXPECT_EQ(rn32_div(exact_f32(0x00000002u), exact_f32(0x40800000u)), 0u);
  EXPECT_EQ(rn32_div(exact_f32(0x00000003u), exact_f32(0x40000000u)), 0x00000002u);
  std::mt19937_64 g(44);
  auto f32_code = [&](int lo, int hi) {  // a random binary32 with exponent field in [lo, hi]
    const std::uint32_t e = static_cast<std::uint32_t>(lo + static_cast<int>(g() % static_cast<unsigned>(hi - lo + 1)));
    return ((g() & 1) ? 0x80000000u : 0u) | (e << 23) | static_cast<std::uint32_t>(g() & 0x7FFFFFu);
  };
  const Round modes[] = {Round::rne, Round::rtz, Round::rup, Round::rdn, Round::rna, Round::sr};
  for (int t = 0; t < 20000; ++t) {
    // f32: quotients from 2^-160 (below the subnormals) to 2^100; bf16 alike; f8e4m3fn near its range
    const int which = t % 3;
    const Format& to = which == 0 ? F32 : which == 1 ? BF16 : E4M3;
    std::uint32_t a, b;
    if (which == 2) {
      a = f32_code(117, 135);
      b = f32_code(120, 131);
    } else {
      a = f32_code(t % 7 == 0 ? 0 : 1, 200);  // subnormal dividends too
      b = f32_code(60, 240);
    }
    if ((a & 0x7FFFFFFFu) == 0) continue;
    Policy p;
    p.round = modes[(t / 3) % 6];
    if (p.round == Round::sr) p.sr_bits = (t / 18) % 2 ? 32 : 8;
    const std::uint64_t r = p.round == Round::sr ? (g() & ((std::uint64_t{1} << p.sr_bits) - 1)) : 0;
    const oracle::rat::Rational q = oracle::rat::decode(a, F32).v / oracle::rat::decode(b, F32).v;
    const std::uint32_t want = oracle::rat::round(q, q < 0, to, p.round, p.round, p, r).code;
    ASSERT_EQ(round_finite(exact_div(exact_f32(a), exact_f32(b)), to, p, r).bits, want)
        << std::hex << a << " / " << b << " into " << to.name << " mode " << static_cast<int>(p.round) << " r " << r;
    if (&to == &F32 && p.round == Round::rne) {
      ASSERT_EQ(rn32_div(exact_f32(a), exact_f32(b)), want);
    }
  }
}

// ---- §15 power-of-two scales --------------------------------------------------------------

// §15.1 P = 2^E(S) read from the bits: a normal S keeps sign and exponent field, fraction
// cleared (bits & 0xFF800000); a subnormal S gives its top fraction bit; NaN stays NaN.
TEST(Pow2Scale, ExponentFromBits) {                 // §15.1
  EXPECT_EQ(pow2_floor(0x43155555u), 0x43000000u);  // 149.33 -> 128
  EXPECT_EQ(pow2_floor(kF32One), kF32One);
  EXPECT_EQ(pow2_floor(kF32Max), 0x7F000000u);      // 2^127
  EXPECT_EQ(pow2_floor(0x00000005u), 0x00000004u);  // subnormal 5·2^-149 -> 2^-147
  EXPECT_EQ(pow2_floor(0x007FFFFFu), 0x00400000u);  // largest subnormal -> 2^-127
  EXPECT_EQ(pow2_floor(kF32NaN), kF32NaN);
}

// §15.1 through the rule `pow2` (f8e4m3fn, q_max 448): amax 0 gives P = 1.0 and its zeros stay
// zeros; amax 3 gives S = RN32(448 / 3) = 0x43155555 (149.33, Fp32Scale.HandExamples) and
// P = 2^7 = 128 (0x43000000); quantize multiplies by P: 3 · 128 = 384 = 1.5 · 2^8 (E4M3 field
// 15, mantissa 100: 0x7C), 1 · 128 = 2^7 (field 14: 0x70); dequantize divides by P: 384 / 128 = 3.
TEST(Pow2Scale, RuleStoresPAndMultipliesByIt) {  // §15.1
  QuantizeSpec s;
  s.rule = ScaleRule::pow2;
  std::vector<std::uint8_t> codes(2);
  const std::vector<std::uint32_t> zero = {0u, 0x80000000u};
  QuantizeResult r = quantize(TensorView::vector(F32, zero.data(), 2), s, codes);
  EXPECT_EQ(r.meta.scales, std::vector<std::uint32_t>{kF32One});
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x00, 0x80}));
  const std::vector<std::uint32_t> v = {0x40400000u, 0x3F800000u};  // 3, 1
  r = quantize(TensorView::vector(F32, v.data(), 2), s, codes);
  EXPECT_EQ(r.meta.scales, std::vector<std::uint32_t>{0x43000000u});
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x7C, 0x70}));
  std::vector<std::uint32_t> back(2);
  dequantize(codes, r.meta, back);
  EXPECT_EQ(back, v);
}

// Why never floor(log2f(x)): for x = nextbelow(2^k), log2 x = k + log2(1 - 2^-24)
// = k - 8.6e-8, and for k >= 4 the binary32 numbers around k are >= 2.4e-7 apart, so a
// correctly rounded log2f returns exactly k and floor() gives k instead of E(x) = k - 1.
// MPFR's correctly rounded log2 at 24 bits (what a perfect log2f returns) shows it.
TEST(Pow2Scale, FloorLog2fIsWrongJustBelowPowersOfTwo) {  // §15.1 never floor(log2f(S))
  mpfr_t v, l;
  mpfr_init2(v, 24);
  mpfr_init2(l, 24);
  for (int k = 4; k <= 100; k += 8) {
    const std::uint32_t x = (static_cast<std::uint32_t>(k + 127) << 23) - 1;  // nextbelow(2^k)
    EXPECT_EQ(pow2_floor(x), static_cast<std::uint32_t>(k - 1 + 127) << 23) << k;
    float xf;
    std::memcpy(&xf, &x, 4);
    mpfr_set_flt(v, xf, MPFR_RNDN);
    mpfr_log2(l, v, MPFR_RNDN);
    EXPECT_EQ(mpfr_get_si(l, MPFR_RNDD), k) << "a correctly rounded log2f(nextbelow(2^" << k << ")) rounds up to " << k;
  }
  mpfr_clear(v);
  mpfr_clear(l);
}

// ---- §16 MX E8M0 shared scales ------------------------------------------------------------

std::uint32_t mx(ScaleRule r, std::uint32_t amax, const Format& elem = E4M3) {
  return mx_scale_code(r, Amax{amax}, format_qmax(elem), elem.precision());
}

// Hand-worked: amax = 480 (f32 43F00000) with f8e4m3fn elements (q_max 448, emax_elem 8).
//   FLOOR: E(480) = 8 -> X = 2^(8-8) = 1, code 7F; 480 / 1 = 480 > 448: the amax CLIPS.
//   RCEIL: 480 / 448 = 1.0714 -> ceil(log2) = 1 -> X = 2, code 80; 480 / 2 = 240 fits.
//   CEIL:  ceil(log2 480) = 9 -> X = 2, code 80.
//   EVEN:  480 = 1.875·2^8; rounded to 4 significant bits 1.875 stays (< 1.9375) -> X = 1.
//   RCEIL-F32: RN32(480·RN32(1/448)) = RN32(480·0x3B124925) = 0x3F892493 (1.0714287) -> X = 2.
TEST(MxScale, FloorVersusRceilAt480) {  // §16.2 – §16.6; §16.1 quantize divides by X
  EXPECT_EQ(mx(ScaleRule::mx_floor, 0x43F00000u), 0x7Fu);
  EXPECT_EQ(mx(ScaleRule::mx_rceil, 0x43F00000u), 0x80u);
  EXPECT_EQ(mx(ScaleRule::mx_ceil, 0x43F00000u), 0x80u);
  EXPECT_EQ(mx(ScaleRule::mx_even, 0x43F00000u), 0x7Fu);
  EXPECT_EQ(mx(ScaleRule::mx_rceil_f32, 0x43F00000u), 0x80u);
  // and the elements: FLOOR saturates 480 to 448 (7E); RCEIL stores 480/2 = 240 = 1.875·2^7 = 0x77
  const std::vector<std::uint32_t> v = {0x43F00000u, 0x3F800000u};
  std::vector<std::uint8_t> codes(2);
  QuantizeSpec s;
  s.rule = ScaleRule::mx_floor;
  QuantizeResult r = quantize(TensorView::vector(F32, v.data(), 2), s, codes);
  EXPECT_EQ(codes[0], 0x7E);
  EXPECT_EQ(r.total.saturated, 1u);
  s.rule = ScaleRule::mx_rceil;
  r = quantize(TensorView::vector(F32, v.data(), 2), s, codes);
  EXPECT_EQ(codes[0], 0x77);
  EXPECT_EQ(codes[1], 0x30);  // 1 / 2 = 0.5 = 2^-1: field -1 + 7 = 6 -> 0x30
  EXPECT_EQ(r.total.saturated, 0u);
}

TEST(MxScale, EdgeCases) {  // §16
  // amax exactly 448: FLOOR and RCEIL X = 1; CEIL rounds 448 up to 512 -> X = 2
  EXPECT_EQ(mx(ScaleRule::mx_floor, 0x43E00000u), 0x7Fu);
  EXPECT_EQ(mx(ScaleRule::mx_rceil, 0x43E00000u), 0x7Fu);
  EXPECT_EQ(mx(ScaleRule::mx_ceil, 0x43E00000u), 0x80u);
  // EVEN: 496 = 1.9375·2^8 rounds (ties away) to 2^9 at 4 bits -> X = 2; 495.99 does not
  EXPECT_EQ(mx(ScaleRule::mx_even, 0x43F80000u), 0x80u);
  EXPECT_EQ(mx(ScaleRule::mx_even, 0x43F7FFFFu), 0x7Fu);
  // zero block -> 00; NaN / Inf -> FF
  for (ScaleRule r :
       {ScaleRule::mx_floor, ScaleRule::mx_ceil, ScaleRule::mx_even, ScaleRule::mx_rceil, ScaleRule::mx_rceil_f32}) {
    EXPECT_EQ(mx(r, 0u), 0x00u);
    EXPECT_EQ(mx(r, kF32NaN), 0xFFu);
    EXPECT_EQ(mx(r, kF32Inf), 0xFFu);
    EXPECT_EQ(mx(r, kF32MinSub), 0x00u);  // 2^-149 -> below 2^-127: clamped to 00 (§16.1 e >= -127)
  }
  // §16.1 e clamped to [-127, 127], code e + 127:
  // tiny: amax = 2^-120 (03800000): FLOOR -120 - 8 = -128 -> clamp -127 = 00; 2^-118 -> -126 = 01
  EXPECT_EQ(mx(ScaleRule::mx_floor, 0x03800000u), 0x00u);
  EXPECT_EQ(mx(ScaleRule::mx_floor, 0x04800000u), 0x01u);
  // top: amax = FLT_MAX with f4e2m1fn (emax 2): FLOOR 127 - 2 = 125 (FC); CEIL 128 - 2 = 126;
  // RCEIL: FLT_MAX / 6 = 1.33·2^125 -> 126 (FD)
  const Format& e2m1 = format(FormatId::f4e2m1fn);
  EXPECT_EQ(mx(ScaleRule::mx_floor, kF32Max, e2m1), 0xFCu);
  EXPECT_EQ(mx(ScaleRule::mx_ceil, kF32Max, e2m1), 0xFDu);
  EXPECT_EQ(mx(ScaleRule::mx_rceil, kF32Max, e2m1), 0xFDu);
  // int8 elements: emax_elem = E(127) = 6; amax 127 -> FLOOR 6 - 6 = 0
  EXPECT_EQ(mx_emax_elem(format_qmax(format(FormatId::int8))), 6);
  EXPECT_EQ(mx(ScaleRule::mx_floor, 0x42FE0000u, format(FormatId::int8)), 0x7Fu);
}

// §16.1 emax_elem = E(q_max) = floor(log2 q_max), read from the element format: q_max 448 =
// 1.75 · 2^8 -> 8 (f8e4m3fn); 57344 = 1.75 · 2^15 -> 15 (f8e5m2); 28 = 1.75 · 2^4 -> 4 (f6e3m2fn);
// 7.5 = 1.875 · 2^2 -> 2 (f6e2m3fn); 6 = 1.5 · 2^2 -> 2 (f4e2m1fn); 127 -> 6 (int8). The stored
// code is c = e + 127 and X = 2^e: FLOOR of amax 1.0 gives e = 0 - emax_elem, code 127 - emax_elem.
TEST(MxScale, EmaxElemOfEachElementFormat) {  // §16.1
  const std::pair<FormatId, int> want[] = {{FormatId::f8e4m3fn, 8}, {FormatId::f8e5m2, 15},  {FormatId::f6e3m2fn, 4},
                                           {FormatId::f6e2m3fn, 2}, {FormatId::f4e2m1fn, 2}, {FormatId::int8, 6}};
  for (const auto& [id, emax] : want) {
    const Format& f = format(id);
    EXPECT_EQ(mx_emax_elem(format_qmax(f)), emax) << f.name;
    EXPECT_EQ(mx(ScaleRule::mx_floor, kF32One, f), static_cast<std::uint32_t>(127 - emax)) << f.name;
  }
}

// A quantization of ONE element under the scale that its whole block gets (the streaming
// API takes the block amax as input), so that saturation is observed per element.
QuantizeStats one_element(const QuantizeSpec& s, std::uint32_t x, Amax block_amax) {
  Quantizer q(s, 1, 1);
  const BlockScale bs = q.block_scale(0, block_amax);
  std::uint8_t code;
  return q.quantize_block(TensorView::vector(F32, &x, 1), 0, bs, std::span<std::uint8_t>(&code, 1), {});
}

std::uint32_t f32_from(bool neg, int e, std::uint32_t frac) {
  return (neg ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(e + 127) << 23) | (frac & 0x7FFFFFu);
}

// §16.2 MX FLOOR clips only values above q_max·X; §16.5 RCEIL (and §16.3 CEIL) never clip.
RC_GTEST_PROP(MxScale, FloorClipsOnlyAboveQmaxTimesX_RceilNeverClips, ()) {
  static constexpr FormatId kElems[] = {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f6e3m2fn, FormatId::f6e2m3fn,
                                        FormatId::f4e2m1fn};
  const Format& elem = format(*rc::gen::elementOf(std::vector<FormatId>(std::begin(kElems), std::end(kElems))));
  const int n = *rc::gen::inRange(1, 40);
  std::vector<std::uint32_t> x(static_cast<std::size_t>(n));
  const int base = *rc::gen::inRange(-60, 60);
  for (auto& v : x)
    v = f32_from(*rc::gen::arbitrary<bool>(), base - *rc::gen::inRange(0, 12), *rc::gen::arbitrary<std::uint32_t>());
  Amax a{0};
  for (std::uint32_t v : x) a = combine(a, Amax{v & 0x7FFFFFFFu});
  QuantizeSpec s;
  s.element = &elem;
  s.rule = ScaleRule::mx_floor;
  const std::uint32_t code = mx_scale_code(ScaleRule::mx_floor, a, format_qmax(elem), elem.precision());
  const oracle::rat::Rational limit =
      oracle::rat::max_finite(elem, false, false) * oracle::rat::pow2(static_cast<int>(code) - 127);
  for (std::uint32_t v : x) {
    const QuantizeStats st = one_element(s, v, a);
    const oracle::rat::Rational mag = abs(oracle::rat::decode(v, F32).v);
    if (mag <= limit) RC_ASSERT(st.saturated == 0u);
  }
  for (ScaleRule r : {ScaleRule::mx_rceil, ScaleRule::mx_ceil}) {
    s.rule = r;
    for (std::uint32_t v : x) RC_ASSERT(one_element(s, v, a).saturated == 0u);
  }
}

// ---- §18 NVFP4 ----------------------------------------------------------------------------

// Hand-worked: f4e2m1fn elements (q_max 6), tensor amax 2688 = 448·6, block amax 6.
//   C = RN32(448·6) = 2688; S_enc = RN32(2688 / 2688) = 1.
//   d_b: RN32(1/6) = 0x3E2AAAAB; RN32(S_enc·that) = 0x3E2AAAAB; RN32(6·0x3E2AAAAB) = RN32(1.0000000298)
//        = 1.0 -> E4M3 1.0 = 0x38.
//   c_b = RN32(1 / RN32(1.0·RN32(1/1))) = 1.0.
//   f_b = RN32(RN32(1.0·2688)·RN32(1/2688)) = RN32(2688·0x39C30C31) = 1.0 (0x3F800000).
TEST(Nvfp4Scale, HandExample) {  // §18
  const Exact q6{false, 3, 1, false};
  EXPECT_EQ(nvfp4_global_constant(q6), 0x45280000u);  // 2688 = 1.3125·2^11
  const std::uint32_t s_enc = nvfp4_tensor_scale(Amax{0x45280000u}, q6);
  EXPECT_EQ(s_enc, kF32One);
  const std::uint32_t d = nvfp4_block_code(Amax{0x40C00000u}, s_enc, q6);
  EXPECT_EQ(d, 0x38u);                                                // §18.2
  EXPECT_EQ(nvfp4_encode_factor(d, s_enc), kF32One);                  // §18.3
  EXPECT_EQ(nvfp4_decode_factor(d, Amax{0x45280000u}, q6), kF32One);  // §18.4
  // zero tensor: S_enc = 1; zero block: d_b = 0 -> c_b = 1 / 0 clamped to FLT_MAX (§18.3)
  EXPECT_EQ(nvfp4_tensor_scale(Amax{0}, q6), kF32One);
  EXPECT_EQ(nvfp4_block_code(Amax{0}, kF32One, q6), 0x00u);
  EXPECT_EQ(nvfp4_encode_factor(0x00u, kF32One), kF32Max);
  // poisoned tensor
  EXPECT_EQ(nvfp4_tensor_scale(Amax{kF32NaN}, q6), kF32NaN);
  EXPECT_EQ(nvfp4_block_code(Amax{0x3F800000u}, kF32NaN, q6), 0x7Fu);
}

// §18.2 – §18.4 with factors other than 1, each value an exact rational rounded once by hand
// (binary32 RNE; checked with Python's fractions.Fraction): f4e2m1fn (q_max 6), C = 2688,
// tensor amax t = 10, block amax b = 3.
//   §18.1 S_enc = RN32(2688 / 10) = RN32(268.8) = 1.05 · 2^8: fraction 0.05 · 2^23 = 419430.4
//         -> 0x066666: 0x43866666 (268.79998779...).
//   §18.2 RN32(1 / 6) = 0x3E2AAAAB; d = RN32(3 · RN32(S_enc · RN32(1 / 6))) = 134.39999 (≈ b · 448 / t);
//         E4M3 in [128, 256) has step 16: 128 | 144, 134.4 is nearer 128 = 2^7: field 14, code 0x70.
//   §18.3 c_b = RN32(1 / RN32(128 · RN32(1 / S_enc))) = 0x40066666 (2.0999999, ≈ 268.8 / 128).
//   §18.4 f_b = RN32(RN32(128 · 10) · RN32(1 / 2688)) = RN32(1280 · 0x39C30C31) = 0x3EF3CF3D
//         (0.47619048, ≈ 1280 / 2688 = 10 / 21).
// Saturation (§18.2): d = RN32(6000 · RN32(1 / 6)) ≈ 1000 (S_enc = 1) lies above 448: code 0x7E, not
// NaN; RN32(FLT_MAX · RN32(FLT_MAX · RN32(1/6))) overflows to +Inf: 448 as well.
TEST(Nvfp4Scale, FactorsOtherThanOne) {  // §18.2 – §18.4
  const Exact q6{false, 3, 1, false};
  const Amax t{0x41200000u};  // 10
  const std::uint32_t s_enc = nvfp4_tensor_scale(t, q6);
  EXPECT_EQ(s_enc, 0x43866666u);
  const std::uint32_t d = nvfp4_block_code(Amax{0x40400000u}, s_enc, q6);  // b = 3
  EXPECT_EQ(d, 0x70u);                                                     // §18.2
  EXPECT_EQ(nvfp4_encode_factor(d, s_enc), 0x40066666u);                   // §18.3
  EXPECT_EQ(nvfp4_decode_factor(d, t, q6), 0x3EF3CF3Du);                   // §18.4
  EXPECT_EQ(nvfp4_block_code(Amax{0x45BB8000u}, kF32One, q6), 0x7Eu);      // 6000: saturates
  EXPECT_EQ(nvfp4_block_code(Amax{kF32Max}, kF32Max, q6), 0x7Eu);          // +Inf -> 448
}

TEST(ScaleRuleNames, RoundTrip) {  // §19.6
  for (int i = 0; i < kScaleRuleCount; ++i) {
    const auto r = static_cast<ScaleRule>(i);
    EXPECT_EQ(parse_scale_rule(to_string(r)), r);
  }
  EXPECT_FALSE(parse_scale_rule("mx-round").has_value());
  EXPECT_EQ(scale_format(ScaleRule::gam).id, FormatId::f8e8m0fnu);
  EXPECT_EQ(scale_format(ScaleRule::nvfp4).id, FormatId::f8e4m3fn);
  EXPECT_EQ(scale_format(ScaleRule::int8).id, FormatId::f32);
}

// §19.3 / §19.4 / §20 The columns of the rule table against the spec's tables and clauses.
TEST(ScaleRuleTable, ColumnsMatchTheSpec) {
  for (const ScaleRuleInfo& r : kScaleRules) {
    SCOPED_TRACE(std::string(r.name));
    EXPECT_EQ(&rule_info(r.rule), &r);
    const std::string_view n = r.name;
    const bool mx = n.substr(0, 3) == "mx-", int8 = n.substr(0, 4) == "int8";
    // §19.4 binary32 codes (amax, amax-recip, amax-dequant, pow2, int8 rules), E8M0 codes (MX
    // rules, GAM), E4M3 codes (NVFP4)
    const FormatId want_fmt = mx || n == "gam" ? FormatId::f8e8m0fnu
                              : n == "nvfp4"   ? FormatId::f8e4m3fn
                                               : FormatId::f32;
    EXPECT_EQ(scale_format(r.rule).id, want_fmt);
    EXPECT_EQ(is_mx(r.rule), mx);
    EXPECT_EQ(is_int8(r.rule), int8);
    // §19.3 table: the dequantize of amax, pow2 and gam is v / S (a multiplying scale undone)
    EXPECT_EQ(dequant_is_multiplier(r.rule), n == "amax" || n == "pow2" || n == "gam");
    // §19.2 application fused is the default for the int8 rules only
    EXPECT_EQ(r.apply == ScaleApply::fused, int8);
    // §17.1 / §18.1 tensor-level state
    EXPECT_EQ(needs_tensor_state(r.rule), n == "gam" || n == "nvfp4");
  }
  // §20.1 / §20.2 q_max 127 with [-127, 127], 127.5 (= 255 / 2) with [-128, 127]
  const Format& i8 = format(FormatId::int8);
  EXPECT_EQ(compare_abs(rule_qmax(ScaleRule::int8, i8), Exact{false, 127, 0, false}), 0);
  EXPECT_EQ(compare_abs(rule_qmax(ScaleRule::int8_127_5, i8), Exact{false, 255, -1, false}), 0);
  EXPECT_EQ(rule_info(ScaleRule::int8).int_range, IntRange::symmetric);
  EXPECT_EQ(rule_info(ScaleRule::int8_127_5).int_range, IntRange::full);
  // §14.4 the element's max finite otherwise: 448 for f8e4m3fn, 6 = 3 * 2 for f4e2m1fn
  EXPECT_EQ(compare_abs(rule_qmax(ScaleRule::mx_floor, E4M3), kQ448), 0);
  EXPECT_EQ(compare_abs(rule_qmax(ScaleRule::amax, format(FormatId::f4e2m1fn)), Exact{false, 3, 1, false}), 0);
  // §16.2 – §16.6 each MX rule has its own exponent rule
  EXPECT_EQ(rule_info(ScaleRule::mx_floor).mx, MxExponent::floor);
  EXPECT_EQ(rule_info(ScaleRule::mx_rceil_f32).mx, MxExponent::rceil_f32);
  EXPECT_EQ(rule_info(ScaleRule::amax).mx, MxExponent::none);
  EXPECT_THROW(mx_scale_code(ScaleRule::gam, Amax{0x3F800000u}, kQ448, 4), std::invalid_argument);
}

// §17.1 / §18.1 The tensor_output column against its definition: the group mantissas are the
// tensor-level output of kind gam (one per group of the spec's group partition), the tensor amax
// that of kind nvfp4, nothing else has one; quantize() produces exactly what the column names.
TEST(ScaleRuleTable, TensorOutputColumn) {
  // a 4 x 8 binary32 tensor 1, 2, ..., 32 (tensor amax 32 = 42000000), blocks 2 x 4, groups 4 x 4
  std::vector<std::uint32_t> x32(32);
  for (std::size_t i = 0; i < x32.size(); ++i) x32[i] = std::bit_cast<std::uint32_t>(static_cast<float>(i + 1));
  const TensorView x(F32, x32.data(), 4, 8);
  for (const ScaleRuleInfo& r : kScaleRules) {
    SCOPED_TRACE(std::string(r.name));
    EXPECT_EQ(has_group_mantissa(r.rule), r.kind == ScaleKind::gam);
    EXPECT_EQ(has_tensor_amax(r.rule), r.kind == ScaleKind::nvfp4);
    EXPECT_EQ(needs_tensor_state(r.rule), needs_tensor_state(r.kind));
    QuantizeSpec s;
    s.rule = r.rule;
    s.element = is_int8(r.rule)              ? &format(FormatId::int8)
                : r.kind == ScaleKind::nvfp4 ? &format(FormatId::f4e2m1fn)
                                             : &E4M3;
    s.partition = Partition::blocks(2, 4);
    s.group = Partition::blocks(4, 4);
    EXPECT_EQ(scale_groups(s), has_group_mantissa(r.rule) ? s.group : Partition::tensor());
    std::vector<std::uint8_t> codes(x.size());
    const QuantizeResult q = quantize(x, s, codes);
    EXPECT_EQ(q.meta.group, scale_groups(s));
    EXPECT_EQ(q.meta.group_mantissa.size(), has_group_mantissa(r.rule) ? 2u : 0u);
    EXPECT_EQ(q.meta.tensor_amax, has_tensor_amax(r.rule) ? 0x42000000u : 0u);
    // a backend's dequantize inputs: exactly the named ones are required
    const std::uint32_t given = 0;
    EXPECT_NO_THROW(check_tensor_inputs(r.rule, &given, &given));
    if (has_group_mantissa(r.rule))
      EXPECT_THROW(check_tensor_inputs(r.rule, nullptr, &given), std::invalid_argument);
    else
      EXPECT_NO_THROW(check_tensor_inputs(r.rule, nullptr, &given));
    if (has_tensor_amax(r.rule))
      EXPECT_THROW(check_tensor_inputs(r.rule, &given, nullptr), std::invalid_argument);
    else
      EXPECT_NO_THROW(check_tensor_inputs(r.rule, &given, nullptr));
  }
  try {
    check_tensor_inputs(ScaleRule::nvfp4, nullptr, nullptr);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "nvfp4 needs the tensor amax");
  }
}

TEST(ScaleRuleTable, LibraryOrderIsAPermutation) {
  // The order tensor_compare.cpp diagnosed scale mismatches in (d157a66): the MX RCEIL rules,
  // FLOOR, EVEN, CEIL, then the binary32 rules, the int8 rules; gam and nvfp4 last.
  const ScaleRule want[] = {
      ScaleRule::mx_rceil,   ScaleRule::mx_rceil_f32, ScaleRule::mx_floor,   ScaleRule::mx_even, ScaleRule::mx_ceil,
      ScaleRule::amax,       ScaleRule::amax_dequant, ScaleRule::amax_recip, ScaleRule::pow2,    ScaleRule::int8,
      ScaleRule::int8_127_5, ScaleRule::gam,          ScaleRule::nvfp4};
  const auto got = rules_by_library_use();
  ASSERT_GE(got.size(), std::size(want));  // rules added later rank after these
  for (std::size_t i = 0; i < std::size(want); ++i) EXPECT_EQ(got[i], want[i]) << i;
  std::vector<bool> seen(got.size(), false);
  for (const ScaleRule r : got) {
    ASSERT_LT(static_cast<std::size_t>(r), seen.size());
    EXPECT_FALSE(seen[static_cast<std::size_t>(r)]) << to_string(r);
    seen[static_cast<std::size_t>(r)] = true;
  }
  EXPECT_EQ(scale_rule_names(", ").substr(0, 24), "amax, amax-recip, amax-d");
}

}  // namespace
}  // namespace numref
