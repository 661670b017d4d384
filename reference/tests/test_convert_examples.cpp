// Hand-checked conversion examples. Every expected code and flag set is worked out in
// the comment next to it from the spec clause it cites; each case is checked against
// BOTH the core (numref::convert) and the oracle (numref::oracle::convert), so a wrong
// hand value, a core bug or an oracle bug all fail here.
//
// f32 codes: value = 1.fraction * 2^(field - 127); e.g. 0x43E00000 = 1.75 * 2^8 = 448.
#include <gtest/gtest.h>

#include "numref/convert.hpp"
#include "numref/oracle/oracle_convert.hpp"
#include "test_support.hpp"

namespace numref {
namespace {

constexpr FormatId F32 = FormatId::f32, BF16 = FormatId::bf16, F16 = FormatId::f16, E4M3 = FormatId::f8e4m3fn,
                   E5M2 = FormatId::f8e5m2, E8M0 = FormatId::f8e8m0fnu, FP4 = FormatId::f4e2m1fn,
                   E3M2 = FormatId::f6e3m2fn, INT8 = FormatId::int8, E4FNUZ = FormatId::f8e4m3fnuz,
                   E5FNUZ = FormatId::f8e5m2fnuz, B11FNUZ = FormatId::f8e4m3b11fnuz, IE4M3 = FormatId::f8e4m3,
                   IE3M4 = FormatId::f8e3m4;
constexpr std::uint8_t X = kInexact, U = kUnderflow, O = kOverflow, V = kInvalid;

Policy pol(Round r = Round::rne, Overflow o = Overflow::nonsat) { return convtest::with(r, o); }
Policy prof(ProfileId id, FormatId to) { return profile(id).for_target(format(to)); }

// Checks core and oracle against the hand-computed (bits, flags).
void expect(std::uint32_t in, FormatId from, FormatId to, const Policy& p, std::uint32_t bits, std::uint8_t flags,
            std::uint64_t r = 0) {
  const Result core = convert(in, from, to, p, r);
  const oracle::Out orc = oracle::convert(in, format(from), format(to), p, r);
  const std::string where = std::string(format(from).name) + " " + convtest::hex(in, format(from)) + " -> " +
                            std::string(format(to).name) + " [" + describe(p) + "]";
  EXPECT_EQ(convtest::hex(core.bits, format(to)), convtest::hex(bits, format(to))) << "core: " << where;
  EXPECT_EQ(flags_to_string(core.flags), flags_to_string(flags)) << "core: " << where;
  EXPECT_EQ(convtest::hex(orc.bits, format(to)), convtest::hex(bits, format(to))) << "oracle: " << where;
  EXPECT_EQ(flags_to_string(orc.flags), flags_to_string(flags)) << "oracle: " << where;
}

// ---- §4.2 / §6.1 f32 -> f8e4m3fn (bias 7, m = 3, max 0x7E = 1.75 * 2^8 = 448) --------

TEST(Examples, E4M3NearMaxFinite) {
  // 448 = 0x43E00000 = 1.110b * 2^8: exactly max finite, code 0 1111 110 = 0x7E.
  expect(0x43E00000, F32, E4M3, pol(), 0x7E, 0);
  // 464 = 0x43E80000 = 1.1101b * 2^8. Quantum at E = 8 is 2^(8-3) = 32; 464 / 32 = 14.5:
  // a tie between N = 14 (448, code 0x7E, even) and 15 (480, code 0x7F): even -> 448, inexact.
  expect(0x43E80000, F32, E4M3, pol(), 0x7E, X);
  expect(0x43E80000, F32, E4M3, pol(Round::rne, Overflow::saturate), 0x7E, X);
  // 464.00003 = 0x43E80001 = 464 + 2^(8-23): above the tie, rounds to 480 > 448: overflow (§6.1).
  // nonsat + rne: "infinity" = the NaN of the infinity slot with the sign of x = 0x7F, flags o|x.
  expect(0x43E80001, F32, E4M3, pol(), 0x7F, O | X);
  // saturate: +max finite 0x7E, flags o|x.
  expect(0x43E80001, F32, E4M3, pol(Round::rne, Overflow::saturate), 0x7E, O | X);
  // -464.00003 = 0xC3E80001, nonsat: NaN with the sign of x: S.1111.111 = 0xFF.
  expect(0xC3E80001, F32, E4M3, pol(), 0xFF, O | X);
  // 500 = 0x43FA0000 = 1.953125 * 2^8: 500/32 = 15.625, truncated N = 15 (480) > 448 already.
  // §6.1 nonsat directions: rtz -> max 0x7E; rup (positive) -> "inf" 0x7F; rdn (positive) -> max.
  expect(0x43FA0000, F32, E4M3, pol(Round::rtz), 0x7E, O | X);
  expect(0x43FA0000, F32, E4M3, pol(Round::rup), 0x7F, O | X);
  expect(0x43FA0000, F32, E4M3, pol(Round::rdn), 0x7E, O | X);
  // -500: rup -> -max 0xFE; rdn -> "-inf" = 0xFF; rna -> 0xFF.
  expect(0xC3FA0000, F32, E4M3, pol(Round::rup), 0xFE, O | X);
  expect(0xC3FA0000, F32, E4M3, pol(Round::rdn), 0xFF, O | X);
  expect(0xC3FA0000, F32, E4M3, pol(Round::rna), 0xFF, O | X);
}

TEST(Examples, E4M3BottomOfRange) {
  // emin = 1 - 7 = -6, qmin = -6 - 3 = -9: the minimum subnormal is 2^-9 = code 0x01.
  // 2^-9 = 0x3B000000 -> 0x01 exactly (a subnormal result that is exact: no underflow).
  expect(0x3B000000, F32, E4M3, pol(), 0x01, 0);
  // 2^-10 = 0x3A800000 = half of 2^-9: a tie between 0 (N = 0, even) and 2^-9 (N = 1):
  // even -> +0 = 0x00; rounded to zero from a non-zero operand: tiny and inexact (§9.2): u|x.
  expect(0x3A800000, F32, E4M3, pol(), 0x00, U | X);
  expect(0xBA800000, F32, E4M3, pol(), 0x80, U | X);  // -2^-10 -> -0
  // rna: the tie goes away from zero -> 0x01, tiny and inexact: u|x.
  expect(0x3A800000, F32, E4M3, pol(Round::rna), 0x01, U | X);
  // 2^-10 * (1 + 2^-23) = 0x3A800001: just above half -> 0x01, u|x.
  expect(0x3A800001, F32, E4M3, pol(), 0x01, U | X);
  // 3 * 2^-10 = 0x3B400000 = 1.5 * 2^-9: 1.5 quanta, tie between 1 (odd) and 2 (even) -> 0x02.
  expect(0x3B400000, F32, E4M3, pol(), 0x02, U | X);
  // Min normal 2^-6 = 0x3C800000 -> 0 0001 000 = 0x08.
  expect(0x3C800000, F32, E4M3, pol(), 0x08, 0);
  // 1 + 2^-23 = 0x3F800001, directed: rup -> 1.125 = 0 0111 001 = 0x39; rdn -> 1.0 = 0x38.
  expect(0x3F800001, F32, E4M3, pol(Round::rup), 0x39, X);
  expect(0x3F800001, F32, E4M3, pol(Round::rdn), 0x38, X);
  expect(0xBF800001, F32, E4M3, pol(Round::rup), 0xB8, X);  // -1.0
  expect(0xBF800001, F32, E4M3, pol(Round::rdn), 0xB9, X);  // -1.125
  // -0.0 keeps its sign (§6.6): 0x80.
  expect(0x80000000, F32, E4M3, pol(), 0x80, 0);
}

// ---- §6.1 f32 -> f8e5m2 (bias 15, m = 2, max 0x7B = 1.75 * 2^15 = 57344) --------------

TEST(Examples, E5M2Overflow) {
  // 57344 = 0x47600000 -> 0x7B exactly.
  expect(0x47600000, F32, E5M2, pol(), 0x7B, 0);
  // 61440 = 0x47700000 = 1.875 * 2^15. Quantum 2^(15-2) = 8192; 61440/8192 = 7.5: a tie between
  // 7 (57344, code 0x7B, odd) and 8 (65536, even) -> 65536 > max: overflow. nonsat: +Inf 0x7C.
  expect(0x47700000, F32, E5M2, pol(), 0x7C, O | X);
  expect(0x47700000, F32, E5M2, pol(Round::rne, Overflow::saturate), 0x7B, O | X);
  // rtz does not round up: 57344, inexact only (no overflow: the rounded value is max finite).
  expect(0x47700000, F32, E5M2, pol(Round::rtz), 0x7B, X);
  // +Inf -> +Inf (§6.2 step 4), no flag; under saturate + inf_sat=max -> 0x7B o|x (step 3).
  expect(0x7F800000, F32, E5M2, pol(), 0x7C, 0);
  expect(0x7F800000, F32, E5M2, pol(Round::rne, Overflow::saturate), 0x7B, O | X);
}

// ---- §4.2, §7 f32 -> f8e8m0fnu (2^(code - 127), FF = NaN) ----------------------------

TEST(Examples, E8M0Rounding) {
  Policy even = pol();  // e8m0_round=follow with rne = even code
  // 1.5 = 0x3FC00000: between 2^0 (code 0x7F = 127, odd) and 2^1 (0x80 = 128, even); the
  // midpoint in the linear domain is 1.5 * 2^0: a tie -> the even code 0x80; inexact.
  expect(0x3FC00000, F32, E8M0, even, 0x80, X);
  // 3.0 = 0x40400000 = 1.5 * 2^1: 2^1 (0x80, even) vs 2^2 (0x81, odd) -> 0x80 = 2.0.
  expect(0x40400000, F32, E8M0, even, 0x80, X);
  // 0.75 = 0x3F400000 = 1.5 * 2^-1: 2^-1 (0x7E, even) vs 2^0 (0x7F) -> 0x7E.
  expect(0x3F400000, F32, E8M0, even, 0x7E, X);
  Policy tiesup = pol();
  tiesup.e8m0_round = E8m0Round::tiesup;           // a tie goes to 2^(e+1)
  expect(0x40400000, F32, E8M0, tiesup, 0x81, X);  // 3.0 -> 4.0
  expect(0x3FC00000, F32, E8M0, tiesup, 0x80, X);  // 1.5 -> 2.0
  Policy floor = pol(), ceil = pol();
  floor.e8m0_round = E8m0Round::floor;
  ceil.e8m0_round = E8m0Round::ceil;
  expect(0x40400000, F32, E8M0, floor, 0x80, X);  // 3.0 -> 2.0
  expect(0x40400000, F32, E8M0, ceil, 0x81, X);   // 3.0 -> 4.0
  // 1.25 = 0x3FA00000 < 1.5: nearest -> 1.0 = 0x7F under even and tiesup.
  expect(0x3FA00000, F32, E8M0, even, 0x7F, X);
  expect(0x3FA00000, F32, E8M0, tiesup, 0x7F, X);
  // 2^-127 exactly: f32 subnormal 0x00400000 (= 2^22 * 2^-149) -> 0x00, exact.
  expect(0x00400000, F32, E8M0, even, 0x00, 0);
  // 2^-128: f32 subnormal 0x00200000. Rounded with the unbounded range it stays 2^-128
  // < 2^-127: §7.4 -> 0x00 with u|x.
  expect(0x00200000, F32, E8M0, even, 0x00, U | X);
  // §7.4 ceil: 1.5 * 2^-127 = f32 0x00600000 (3 * 2^21 * 2^-149) is in (2^-127, 2^-126) -> 0x01.
  expect(0x00600000, F32, E8M0, ceil, 0x01, X);
  // floor: the same value -> 2^-127 = 0x00, inexact; not below 2^-127 after rounding: no u.
  expect(0x00600000, F32, E8M0, floor, 0x00, X);
  // §7.5 1.5 * 2^127 = 0x7F400000: tie between 2^127 (0xFE, even) and 2^128 (code 255, odd) -> FE.
  expect(0x7F400000, F32, E8M0, even, 0xFE, X);
  // tiesup -> 2^128 > 2^127: overflow; nonsat rne-like direction -> FF (NaN), o|x; saturate -> FE.
  expect(0x7F400000, F32, E8M0, tiesup, 0xFF, O | X);
  Policy tiesup_sat = tiesup;
  tiesup_sat.overflow = Overflow::saturate;
  expect(0x7F400000, F32, E8M0, tiesup_sat, 0xFE, O | X);
  // floor never overflows for finite f32: max f32 0x7F7FFFFF -> 2^127 = 0xFE, inexact.
  expect(0x7F7FFFFF, F32, E8M0, floor, 0xFE, X);
}

TEST(Examples, E8M0SpecialOperands) {
  // §7.2 zero: ocp -> FF invalid; zero_to_nozero=min -> 00 (= 2^-127), inexact. -0 is a zero.
  expect(0x00000000, F32, E8M0, pol(), 0xFF, V);
  expect(0x80000000, F32, E8M0, pol(), 0xFF, V);
  Policy zmin = pol();
  zmin.zero_to_nozero = ZeroToNoZero::min;
  expect(0x80000000, F32, E8M0, zmin, 0x00, X);
  // §7.3 negative: -2.0 = 0xC0000000 -> FF invalid; negative=abs -> 2.0 = 0x80.
  expect(0xC0000000, F32, E8M0, pol(), 0xFF, V);
  Policy abs = pol();
  abs.negative = Negative::abs;
  expect(0xC0000000, F32, E8M0, abs, 0x80, 0);
  // §7.5 / §6.2: +Inf -> FF invalid (nonsat); saturate + inf_sat=max -> FE o|x.
  expect(0x7F800000, F32, E8M0, pol(), 0xFF, V);
  expect(0x7F800000, F32, E8M0, pol(Round::rne, Overflow::saturate), 0xFE, O | X);
  // NaN -> FF; a quiet NaN raises nothing (§6.3).
  expect(0x7FC00000, F32, E8M0, pol(), 0xFF, 0);
  // §8.1 DAZ: an f32 subnormal becomes +0 -> §7.2 -> FF invalid (ocp).
  Policy daz = pol();
  daz.daz = true;
  expect(0x00400000, F32, E8M0, daz, 0xFF, V);
}

// ---- §10 profiles ------------------------------------------------------------------------

// ---- §2.2 / §6 the fnuz family: f8e4m3fnuz bias 8, max 7F = 1.875 * 2^7 = 240; f8e5m2fnuz
// bias 16, max 7F = 1.75 * 2^15 = 57344; f8e4m3b11fnuz bias 11, max 7F = 1.875 * 2^4 = 30.
// One NaN 80, no Inf, no −0. ----------------------------------------------------------------

TEST(Examples, FnuzOverflowAndSpecials) {
  // 240 = 0x43700000 = 1.875 * 2^7: field 7 + 8 = 15, fraction 111: 0x7F exactly.
  expect(0x43700000, F32, E4FNUZ, pol(), 0x7F, 0);
  // 248 = 0x43780000: quantum 2^(7-3) = 16, 248 / 16 = 15.5, a tie between 15 (240, code 7F, odd)
  // and 16 (256): even -> 256 > 240 overflows (§6.1). nonsat: the NaN 80 (no sign); flags o|x.
  expect(0x43780000, F32, E4FNUZ, pol(), 0x80, O | X);
  expect(0xC3780000, F32, E4FNUZ, pol(), 0x80, O | X);
  // saturate: ±max 7F / FF.
  expect(0x43780000, F32, E4FNUZ, pol(Round::rne, Overflow::saturate), 0x7F, O | X);
  expect(0xC3780000, F32, E4FNUZ, pol(Round::rne, Overflow::saturate), 0xFF, O | X);
  // rtz truncates -248 to -240 = FF: in range, no overflow; rdn rounds it to -256: overflow with
  // the "to -∞" direction (§6.1 nonsat): the NaN.
  expect(0xC3780000, F32, E4FNUZ, pol(Round::rtz), 0xFF, X);
  expect(0xC3780000, F32, E4FNUZ, pol(Round::rdn), 0x80, O | X);
  // §6.2 ±Inf: nonsat (or inf_sat=keep) -> 80 with invalid; saturate + inf_sat=max -> ±max, o|x.
  expect(0x7F800000, F32, E4FNUZ, pol(), 0x80, V);
  expect(0xFF800000, F32, E4FNUZ, pol(), 0x80, V);
  expect(0xFF800000, F32, E4FNUZ, pol(Round::rne, Overflow::saturate), 0xFF, O | X);
  // §6.3 NaN operands: 80 under every nan option (ones would be 7F = 240, all_ones FF = -240).
  for (NanOut n : {NanOut::payload, NanOut::sign, NanOut::canonical, NanOut::ones, NanOut::ones_sign, NanOut::all_ones,
                   NanOut::raw, NanOut::raw_plus}) {
    Policy p = pol();
    p.nan = n;
    expect(0xFFC00000, F32, E4FNUZ, p, 0x80, 0);
    expect(0x7F800001, F32, E4FNUZ, p, 0x80, V);  // signaling: invalid (§6.3)
    expect(0x80, E5FNUZ, E4FNUZ, p, 0x80, 0);
  }
  // 57344 = 1.75 * 2^15 = 0x47600000 -> f8e5m2fnuz 0x7F; 61440 = 1.875 * 2^15 is the tie between
  // 7F (odd) and 65536: even -> overflow -> 80; 30 = 0x41F00000 -> f8e4m3b11fnuz 7F.
  expect(0x47600000, F32, E5FNUZ, pol(), 0x7F, 0);
  expect(0x47700000, F32, E5FNUZ, pol(), 0x80, O | X);
  expect(0x41F00000, F32, B11FNUZ, pol(), 0x7F, 0);
}

TEST(Examples, FnuzZeroAndBottomOfRange) {
  // §6.6 −0 -> +0 (00): the −0 pattern is the NaN.
  expect(0x80000000, F32, E4FNUZ, pol(), 0x00, 0);
  expect(0x8000, F16, E4FNUZ, pol(), 0x00, 0);
  // -2^-12 = 0xB9800000: below half the smallest subnormal 2^-10 / 2: rounds to zero, +0 (§6.6,
  // §9.2 tiny and inexact: u|x); under rdn it is -2^-10 = 0x81.
  expect(0xB9800000, F32, E4FNUZ, pol(), 0x00, U | X);
  expect(0xB9800000, F32, E4FNUZ, pol(Round::rdn), 0x81, U | X);
  // §8.2 FTZ of a negative tiny value: +0.
  Policy ftz = pol();
  ftz.ftz = true;
  expect(0xBA800000, F32, E4FNUZ, ftz, 0x00, U | X);  // -2^-10 = 0x81 exactly, flushed
  // 2^-7 = 0x3C000000: the smallest normal, code 08 (field 1).
  expect(0x3C000000, F32, E4FNUZ, pol(), 0x08, 0);
}

TEST(Examples, FromFnuz) {
  // §3.1 80 is a NaN read with sign 1, payload 0; §6.3 payload into f32: sign kept, quiet:
  // FFC00000; sign: FFC00000; canonical: 7FC00000; into f8e4m3fn with payload: FF; int8: 00, v.
  expect(0x80, E4FNUZ, F32, pol(), 0xFFC00000, 0);
  Policy canon = pol();
  canon.nan = NanOut::canonical;
  expect(0x80, E4FNUZ, F32, canon, 0x7FC00000, 0);
  expect(0x80, E4FNUZ, E4M3, pol(), 0xFF, 0);
  expect(0x80, E4FNUZ, INT8, pol(), 0x00, V);
  // 7F = 240 into f8e4m3fn: 240 = 1.875 * 2^7 = field 14, fraction 111 = 0x77; C0 = -1 (field 8 = bias) -> BF800000.
  expect(0x7F, E4FNUZ, E4M3, pol(), 0x77, 0);
  expect(0xC0, E4FNUZ, F32, pol(), 0xBF800000, 0);
  // 01 = 2^-10 into f8e4m3fn (qmin -9): half the smallest subnormal, a tie to the even 0 -> 00, u|x.
  expect(0x01, E4FNUZ, E4M3, pol(), 0x00, U | X);
  // 7F = 57344 of f8e5m2fnuz into f8e4m3fnuz: overflow -> 80; into f8e5m2 = 0x7B exactly.
  expect(0x7F, E5FNUZ, E4FNUZ, pol(), 0x80, O | X);
  expect(0x7F, E5FNUZ, E5M2, pol(), 0x7B, 0);
}

// ---- §2.5 the IEEE P3109 family (hand values; gfloat format_info_p3109 agrees, p3109_diff.py):
// p3109_k8p3se bias 16, m 2, Inf 7F, max 7E = 1.5 * 2^15 = 49152, NaN 80; _sf the same fields with
// max 7F = 1.75 * 2^15 = 57344; p3109_k8p3ue bias 32, 6 exponent bits, Inf FE, max FD =
// 1.25 * 2^31, NaN FF; _uf max FE = 1.5 * 2^31; p3109_k8p1se bias 64, no fraction: code c = 2^(c-64).
constexpr FormatId P3SE = FormatId::p3109_k8p3se, P3SF = FormatId::p3109_k8p3sf, P3UE = FormatId::p3109_k8p3ue,
                   P3UF = FormatId::p3109_k8p3uf, P1SE = FormatId::p3109_k8p1se;

TEST(Examples, P3109Specials) {
  // 49152 = 0x47400000 -> field 15 + 16 = 31, fraction 10: 7E exactly. 53248 = 1.625 * 2^15 is the
  // tie between 7E (even) and 57344: 7E, x. 57344 = 0x47600000 overflows the extended member
  // (rne: +Inf 7F, o|x; saturate 7E) and is the max 7F of the finite one.
  expect(0x47400000, F32, P3SE, pol(), 0x7E, 0);
  expect(0x47500000, F32, P3SE, pol(), 0x7E, X);
  expect(0x47600000, F32, P3SE, pol(), 0x7F, O | X);
  expect(0xC7600000, F32, P3SE, pol(), 0xFF, O | X);
  expect(0x47600000, F32, P3SE, pol(Round::rne, Overflow::saturate), 0x7E, O | X);
  expect(0x47600000, F32, P3SF, pol(), 0x7F, 0);
  // 65536 into the finite member: overflow to the NaN 80 for both signs (nonsat), ±max saturating;
  // rtz: max 7F (§6.1, IEEE 754 §7.4).
  expect(0x47800000, F32, P3SF, pol(), 0x80, O | X);
  expect(0xC7800000, F32, P3SF, pol(), 0x80, O | X);
  expect(0xC7800000, F32, P3SF, pol(Round::rne, Overflow::saturate), 0xFF, O | X);
  expect(0x47800000, F32, P3SF, pol(Round::rtz), 0x7F, O | X);
  // §6.2 ±Inf: extended -> 7F / FF exactly; finite -> 80, invalid; saturate + inf_sat=max -> ±max.
  expect(0x7F800000, F32, P3SE, pol(), 0x7F, 0);
  expect(0xFF800000, F32, P3SE, pol(), 0xFF, 0);
  expect(0xFF800000, F32, P3SF, pol(), 0x80, V);
  expect(0x7F800000, F32, P3SF, pol(Round::rne, Overflow::saturate), 0x7F, O | X);
  // §6.3 every NaN option gives the one NaN (ones would be 7F = +Inf, all_ones FF = -Inf).
  for (NanOut n : {NanOut::payload, NanOut::sign, NanOut::canonical, NanOut::ones, NanOut::ones_sign, NanOut::all_ones,
                   NanOut::raw, NanOut::raw_plus}) {
    Policy p = pol();
    p.nan = n;
    expect(0xFFC00000, F32, P3SE, p, 0x80, 0);
    expect(0x7FC00000, F32, P3UE, p, 0xFF, 0);
    expect(0x7F800001, F32, P3SF, p, 0x80, V);
  }
}

TEST(Examples, P3109ZeroSignAndUnsigned) {
  // §6.6 −0 -> 00; -2^-20 (half the smallest subnormal 2^(1-16-2) = 2^-17 is 2^-18): rounds to
  // zero, +0, u|x; under rdn it is -2^-17 = 0x81.
  expect(0x80000000, F32, P3SE, pol(), 0x00, 0);
  expect(0xB5800000, F32, P3SE, pol(), 0x00, U | X);
  expect(0xB5800000, F32, P3SE, pol(Round::rdn), 0x81, U | X);
  // unsigned: 1 = field 32, code 0x80; the smallest subnormal 2^(1-32-2) = 2^-33 is 01; Inf FE,
  // the NaN FF; 1.25 * 2^31 = 0x4F200000 -> FD, 1.5 * 2^31 = 0x4F400000 overflows _ue (rne: FE) and
  // is the max FE of _uf.
  expect(0x3F800000, F32, P3UE, pol(), 0x80, 0);
  expect(0x2F000000, F32, P3UE, pol(), 0x01, 0);
  expect(0x4F200000, F32, P3UE, pol(), 0xFD, 0);
  expect(0x4F400000, F32, P3UE, pol(), 0xFE, O | X);
  expect(0x4F400000, F32, P3UF, pol(), 0xFE, 0);
  expect(0x7F800000, F32, P3UE, pol(), 0xFE, 0);
  // §7.3 a negative operand: the NaN FF, invalid (negative=abs: |x|); −0 is the zero 00.
  expect(0xBF800000, F32, P3UF, pol(), 0xFF, V);
  expect(0xFF800000, F32, P3UE, pol(), 0xFF, V);
  expect(0x80000000, F32, P3UF, pol(), 0x00, 0);
  Policy ab = pol();
  ab.negative = Negative::abs;
  expect(0xBF800000, F32, P3UF, ab, 0x80, 0);
}

TEST(Examples, P3109Decode) {
  // §3.1 / §2.5 the NaN decodes with sign 0: 80 (signed) and FF (unsigned) -> 7FC00000.
  expect(0x80, P3SE, F32, pol(), 0x7FC00000, 0);
  expect(0xFF, P3UF, F32, pol(), 0x7FC00000, 0);
  expect(0x80, P3SF, BF16, pol(), 0x7FC0, 0);
  // Inf: 7F / FF of _se -> ±Inf; FE of _ue -> +Inf. The finite 7F of _sf = 57344 = 0x47600000.
  expect(0x7F, P3SE, F32, pol(), 0x7F800000, 0);
  expect(0xFF, P3SE, F32, pol(), 0xFF800000, 0);
  expect(0xFE, P3UE, F32, pol(), 0x7F800000, 0);
  expect(0x7F, P3SF, F32, pol(), 0x47600000, 0);
  // 01 of _se = 2^(1-16-2) = 2^-17 = 0x37000000; FD of _ue = 1.25 * 2^31 = 0x4F200000.
  expect(0x01, P3SE, F32, pol(), 0x37000000, 0);
  expect(0xFD, P3UE, F32, pol(), 0x4F200000, 0);
  // p3109_k8p1se: code c is 2^(c-64); 3 * 2^-1 = 1.5 ties between 2^0 (code 64, even) and 2^1
  // (65): 40; 1.75 -> 2 = 41; 2^62 = 7E is the max; 0x5E800000 = 2^62 exactly.
  expect(0x3FC00000, F32, P1SE, pol(), 0x40, X);
  expect(0x3FE00000, F32, P1SE, pol(), 0x41, X);
  expect(0x5E800000, F32, P1SE, pol(), 0x7E, 0);
  expect(0x7E, P1SE, F32, pol(), 0x5E800000, 0);
  // between formats of the family: _se max 7E = 49152 into _sf = 7E; _sf 7F = 57344 into _se
  // overflows: +Inf 7F, o|x; _se -Inf FF into _sf: the NaN 80, invalid.
  expect(0x7E, P3SE, P3SF, pol(), 0x7E, 0);
  expect(0x7F, P3SF, P3SE, pol(), 0x7F, O | X);
  expect(0xFF, P3SE, P3SF, pol(), 0x80, V);
}

// ---- §2.2 ieee 8-bit rows: f8e4m3 (bias 7, Inf 78, max 77 = 240), f8e3m4 (bias 3, Inf 70, max
// 6F = 15.5, qmin = 1 - 3 - 4 = -6). ---------------------------------------------------------

TEST(Examples, IeeeEightBitRows) {
  // 240 = 0x43700000 -> 0 1110 111 = 77; 248 = 0x43780000: quantum 16, 15.5 is a tie between 77
  // (odd) and 256: even -> 256 > 240: overflow, nonsat rne -> +Inf 78 (§6.1); saturate -> 77.
  expect(0x43700000, F32, IE4M3, pol(), 0x77, 0);
  expect(0x43780000, F32, IE4M3, pol(), 0x78, O | X);
  expect(0xC3780000, F32, IE4M3, pol(Round::rne, Overflow::saturate), 0xF7, O | X);
  // §6.3 payload: f32 7FC00000 -> fraction 400000 >> 20 = 4, quiet -> 7C; -0 stays -0 (80).
  expect(0x7FC00000, F32, IE4M3, pol(), 0x7C, 0);
  expect(0x80000000, F32, IE4M3, pol(), 0x80, 0);
  // f8e4m3 79 (fraction 001, quiet bit clear: signaling) -> f32: payload 1 << 20, quieted:
  // 7FC00000 | 00100000 = 7FD00000, invalid (§6.3).
  expect(0x79, IE4M3, F32, pol(), 0x7FD00000, V);
  // 15.5 = 0x41780000 -> f8e3m4 0 110 1111 = 6F; 16 = 0x41800000 overflows -> +Inf 70, o|x;
  // 2^-6 = 0x3C800000 is the smallest subnormal 01.
  expect(0x41780000, F32, IE3M4, pol(), 0x6F, 0);
  expect(0x41800000, F32, IE3M4, pol(), 0x70, O | X);
  expect(0x3C800000, F32, IE3M4, pol(), 0x01, 0);
  // ±Inf -> ±Inf (§6.2 step 4): f8e3m4 F0.
  expect(0xFF800000, F32, IE3M4, pol(), 0xF0, 0);
}

TEST(Examples, CudaProfiles) {
  // cuda_satfinite narrow: NaN -> 0x7F with the sign dropped (nan=ones), quiet: no flag.
  expect(0xFFC00000, F32, E4M3, prof(ProfileId::cuda_satfinite, E4M3), 0x7F, 0);
  // E5M2: nan=ones -> every magnitude bit set = 0x7F.
  expect(0xFFC00000, F32, E5M2, prof(ProfileId::cuda_satfinite, E5M2), 0x7F, 0);
  // +Inf -> max finite 0x7E under SATFINITE (§6.2 step 3): o|x; -Inf -> 0xFE.
  expect(0x7F800000, F32, E4M3, prof(ProfileId::cuda_satfinite, E4M3), 0x7E, O | X);
  expect(0xFF800000, F32, E4M3, prof(ProfileId::cuda_satfinite, E4M3), 0xFE, O | X);
  // 465 = 0x43E88000 -> 448 under SATFINITE (o|x); NOSAT -> NaN 0x7F (o|x).
  expect(0x43E88000, F32, E4M3, prof(ProfileId::cuda_satfinite, E4M3), 0x7E, O | X);
  expect(0x43E88000, F32, E4M3, prof(ProfileId::cuda_nosat, E4M3), 0x7F, O | X);
  // -Inf under NOSAT: E4M3 has no Inf: the NaN of the infinity slot with the sign: 0xFF, invalid.
  expect(0xFF800000, F32, E4M3, prof(ProfileId::cuda_nosat, E4M3), 0xFF, V);
  // E8M0 with cudaRoundZero (floor): 3.0 -> 2.0 = 0x80; negative taken as |x|: -3.0 -> 0x80.
  expect(0x40400000, F32, E8M0, prof(ProfileId::cuda_satfinite, E8M0), 0x80, X);
  expect(0xC0400000, F32, E8M0, prof(ProfileId::cuda_satfinite, E8M0), 0x80, X);
  // zero -> 0x00 (zero_to_nozero=min), inexact.
  expect(0x00000000, F32, E8M0, prof(ProfileId::cuda_satfinite, E8M0), 0x00, X);
  // FP4: NaN -> +max finite 0x7 (nan_to_finite=max), invalid.
  expect(0x7FC00000, F32, FP4, prof(ProfileId::cuda_satfinite, FP4), 0x7, V);
  // wide target (bf16): NaN -> 0x7FFF (nan=ones); 2^128-ish overflow -> Inf (nonsat).
  expect(0xFFC00000, F32, BF16, prof(ProfileId::cuda_satfinite, BF16), 0x7FFF, 0);
  expect(0x7F7FFFFF, F32, BF16, prof(ProfileId::cuda_satfinite, BF16), 0x7F80, O | X);
}

TEST(Examples, MlDtypesProfile) {
  // NaN sign kept: -NaN -> 0xFF in E4M3 (nan=sign: canonical 0x7F with the sign bit).
  expect(0xFFC00000, F32, E4M3, prof(ProfileId::ml_dtypes, E4M3), 0xFF, 0);
  // Inf -> NaN even when saturating (inf_sat=keep, §6.2 step 5): 0x7F, invalid.
  Policy sat = prof(ProfileId::ml_dtypes, E4M3);
  sat.overflow = Overflow::saturate;
  expect(0x7F800000, F32, E4M3, sat, 0x7F, V);
  // ... while a finite overflow does saturate: 465 -> 0x7E o|x.
  expect(0x43E88000, F32, E4M3, sat, 0x7E, O | X);
  // E8M0 ties up: 3.0 -> 4.0 = 0x81; zero -> NaN FF invalid; negative -> FF invalid.
  expect(0x40400000, F32, E8M0, prof(ProfileId::ml_dtypes, E8M0), 0x81, X);
  expect(0x00000000, F32, E8M0, prof(ProfileId::ml_dtypes, E8M0), 0xFF, V);
  expect(0xBF800000, F32, E8M0, prof(ProfileId::ml_dtypes, E8M0), 0xFF, V);
  // FP4: NaN -> -0 = 0x8 (nan_to_finite=negzero), invalid.
  expect(0x7FC00000, F32, FP4, prof(ProfileId::ml_dtypes, FP4), 0x8, V);
  // bf16: -NaN -> 0xFFC0 (canonical with the sign).
  expect(0xFFC00001, F32, BF16, prof(ProfileId::ml_dtypes, BF16), 0xFFC0, 0);
}

// ---- §6.5 int8 ----------------------------------------------------------------------------

TEST(Examples, Int8) {
  // 127.5 = 0x42FF0000: tie between 127 (odd) and 128 (even) -> 128 > 127: saturate to 127 = 0x7F,
  // invalid only (§6.5: IEEE 754 §5.8; integers never raise overflow, no inexact).
  expect(0x42FF0000, F32, INT8, pol(), 0x7F, V);
  // 126.5 = 0x42FD0000: tie between 126 (even) and 127 -> 126 = 0x7E, inexact.
  expect(0x42FD0000, F32, INT8, pol(), 0x7E, X);
  // -128.5 = 0xC3008000: tie between -128 (even) and -129 -> -128 = 0x80, inexact.
  expect(0xC3008000, F32, INT8, pol(), 0x80, X);
  // rna: -128.5 -> -129, out of range -> -128, invalid.
  expect(0xC3008000, F32, INT8, pol(Round::rna), 0x80, V);
  // int_range=symmetric: -128.0 = 0xC3000000 -> -127 = 0x81, invalid.
  Policy sym = pol();
  sym.int_range = IntRange::symmetric;
  expect(0xC3000000, F32, INT8, sym, 0x81, V);
  // 2.5 = 0x40200000: rne -> 2, rna -> 3, rup -> 3, rdn -> 2; -2.5: rup -> -2 = 0xFE, rdn -> -3 = 0xFD.
  expect(0x40200000, F32, INT8, pol(), 0x02, X);
  expect(0x40200000, F32, INT8, pol(Round::rna), 0x03, X);
  expect(0xC0200000, F32, INT8, pol(Round::rup), 0xFE, X);
  expect(0xC0200000, F32, INT8, pol(Round::rdn), 0xFD, X);
  // 0.25 = 0x3E800000 -> 0, inexact only (integers never raise underflow); -0.25 -> 00.
  expect(0x3E800000, F32, INT8, pol(), 0x00, X);
  expect(0xBE800000, F32, INT8, pol(), 0x00, X);
  // +-Inf -> 127 / -128, invalid (§6.2 step 1); NaN -> 00 invalid (§6.4).
  expect(0x7F800000, F32, INT8, pol(), 0x7F, V);
  expect(0xFF800000, F32, INT8, pol(), 0x80, V);
  expect(0x7FC00000, F32, INT8, pol(), 0x00, V);
  // -0 -> 00 (§6.6).
  expect(0x80000000, F32, INT8, pol(), 0x00, 0);
  // int8 -> f4e2m1fn: -128 -> overflow, FP4 always saturates: -6 = 0xF, o|x.
  expect(0x80, INT8, FP4, pol(), 0xF, O | X);
}

// ---- wide targets, NaN payloads, subnormal knobs ---------------------------------------

TEST(Examples, WideTargetsAndNaNPayloads) {
  // bf16 (m = 7): 1 + 2^-8 = 0x3F808000: tie between 0x3F80 (even) and 0x3F81 -> 0x3F80.
  expect(0x3F808000, F32, BF16, pol(), 0x3F80, X);
  // 1 + 3 * 2^-8 = 0x3F818000: tie between 0x3F81 (odd) and 0x3F82 -> 0x3F82.
  expect(0x3F818000, F32, BF16, pol(), 0x3F82, X);
  // sNaN 0x7FA00001 (fraction 0x200001, top bit clear): invalid. payload -> bf16: the top 7 of
  // 23 fraction bits, 0x200001 >> 16 = 0x20, quiet bit 0x40 set: 0x60 -> 0x7F80 | 0x60 = 0x7FE0.
  expect(0x7FA00001, F32, BF16, pol(), 0x7FE0, V);
  // -> f16: 0x200001 >> 13 = 0x100, | quiet 0x200 = 0x300 -> 0x7C00 | 0x300 = 0x7F00.
  expect(0x7FA00001, F32, F16, pol(), 0x7F00, V);
  // E4M3 NaN 0xFF (fraction 111): -> f16 payload 111 zero-extended to 10 bits = 0x380, quiet
  // bit already set -> 0x8000 | 0x7C00 | 0x380 = 0xFF80; -> f32: 111 << 20 = 0x700000 -> 0xFFF00000.
  expect(0xFF, E4M3, F16, pol(), 0xFF80, 0);
  expect(0xFF, E4M3, F32, pol(), 0xFFF00000, 0);
  // f16 -> E5M2 payload: 0x7D01 (sNaN, fraction 0x101) -> 0x101 >> 8 = 1, | quiet 2 = 3 -> 0x7F, v.
  expect(0x7D01, F16, E5M2, pol(), 0x7F, V);
  // nan=canonical drops the sign: -qNaN -> 0x7E (E5M2 canonical).
  Policy canon = pol();
  canon.nan = NanOut::canonical;
  expect(0xFE00, F16, E5M2, canon, 0x7E, 0);
  // f16 min subnormal 0x0001 = 2^-24 -> f32 0x33800000 exactly.
  expect(0x0001, F16, F32, pol(), 0x33800000, 0);
  // f16 -> f8e4m3fn: 0x0001 = 2^-24, far below half the E4M3 minimum 2^-9: +0, u|x; rup -> 0x01.
  expect(0x0001, F16, E4M3, pol(), 0x00, U | X);
  expect(0x0001, F16, E4M3, pol(Round::rup), 0x01, U | X);
  expect(0x8001, F16, E4M3, pol(Round::rup), 0x80, U | X);
  // FP6 E3M2 (bias 3, max 0x1F = 1.75 * 2^4 = 28): 30 = 0x41F00000 -> 30/4 = 7.5 quanta of 2^2,
  // tie -> 8 quanta = 32 > 28: overflow; FP6 always saturates (§6.1): 0x1F o|x. Inf -> 0x1F, v.
  expect(0x41F00000, F32, E3M2, pol(), 0x1F, O | X);
  expect(0x7F800000, F32, E3M2, pol(), 0x1F, V);
  expect(0xFF800000, F32, E3M2, pol(), 0x3F, V);
  // FP4 E2M1: 5.0 = 0x40A00000 = tie between 4 (0x6, even) and 6 (0x7) -> 0x6.
  expect(0x40A00000, F32, FP4, pol(), 0x6, X);
}

TEST(Examples, SubnormalKnobsAndTininess) {
  Policy daz = pol(), ftz = pol(), before = pol();
  daz.daz = true;
  ftz.ftz = true;
  before.tininess = Tininess::before;
  // f32 min subnormal 2^-149 -> bf16: below half of the bf16 minimum 2^-133: +0, u|x.
  expect(0x00000001, F32, BF16, pol(), 0x0000, U | X);
  // with DAZ it is a zero before conversion: +0, no flag; -2^-149 -> -0.
  expect(0x00000001, F32, BF16, daz, 0x0000, 0);
  expect(0x80000001, F32, BF16, daz, 0x8000, 0);
  // 2^-127 = f32 0x00400000 is an exact bf16 subnormal 0x0040 (2^-127 / 2^-133 = 64): no flag.
  expect(0x00400000, F32, BF16, pol(), 0x0040, 0);
  // FTZ flushes the tiny result even though it was exact: +0, u|x (§8.2).
  expect(0x00400000, F32, BF16, ftz, 0x0000, U | X);
  // x = 2^-126 - 2^-135 = f32 0x007FC000 (subnormal field 2^23 - 2^14). bf16: emin = -126,
  // subnormal quantum 2^-133: x / 2^-133 = 127.75 -> 128 = 2^-126 = bf16 0x0080, inexact.
  // Tininess after: rounding with 8 bits and an unbounded exponent, quantum 2^-134:
  // x / 2^-134 = 255.5, tie -> 256 (255 odd) = 2^-126: not tiny -> x only.
  expect(0x007FC000, F32, BF16, pol(), 0x0080, X);
  // Tininess before: x < 2^-126 -> tiny and inexact -> u|x.
  expect(0x007FC000, F32, BF16, before, 0x0080, U | X);
  // x = 2^-126 - 2^-134 = f32 0x007F8000: unbounded rounding 255 * 2^-134 exactly: tiny;
  // on the grid x / 2^-133 = 127.5 -> 128 (even) = 0x0080: tiny and inexact -> u|x.
  expect(0x007F8000, F32, BF16, pol(), 0x0080, U | X);
  // f16 subnormal 0x0200 = 2^-15 -> E5M2 (same exponent range): subnormal 0x02, exact; DAZ -> 0.
  expect(0x0200, F16, E5M2, pol(), 0x02, 0);
  expect(0x0200, F16, E5M2, daz, 0x00, 0);
}

}  // namespace
}  // namespace numref
