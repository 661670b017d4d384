// Exact values (§3): decode agrees with the oracle's own reader on every code of every
// format of at most 16 bits; encode_exact inverts decode on every finite code and
// rejects values off the grid or out of range; exact_decimal / exact_hexfloat (§3.4)
// on hand-computed examples.
#include <gtest/gtest.h>

#include <string>

#include "numref/format.hpp"
#include "numref/oracle/oracle_convert.hpp"
#include "numref/value.hpp"
#include "test_support.hpp"

namespace numref {
namespace {

using oracle::BigInt;
using oracle::Rational;

Class class_of(oracle::Kind k) {
  switch (k) {
    case oracle::Kind::zero: return Class::zero;
    case oracle::Kind::subnormal: return Class::subnormal;
    case oracle::Kind::normal: return Class::normal;
    case oracle::Kind::inf: return Class::inf;
    case oracle::Kind::nan: return Class::nan;
  }
  return Class::nan;
}

Rational value(const Decoded& d) {
  const Rational m =
      Rational(BigInt(d.sig)) * (d.exp >= 0 ? Rational(BigInt(1) << d.exp) : Rational(BigInt(1), BigInt(1) << -d.exp));
  return d.sign ? Rational(-m) : m;
}

// §3.1 decode == the oracle's reader (class, sign, exact value, NaN payload), and §3.3
// encode_exact(decode(c)) == c for every finite code (signed zeros included).
TEST(Value, DecodeAndEncodeRoundTripOnEveryCode) {
  for (const auto& f : kFormats) {
    if (f.bits > 16) continue;
    for (std::uint32_t c = 0; c < (1u << f.bits); ++c) {
      const Decoded d = decode(c, f);
      const oracle::Value o = oracle::read_code(c, f);
      ASSERT_EQ(d.cls, class_of(o.kind)) << f.name << " " << convtest::hex(c, f);
      ASSERT_EQ(d.sign, o.sign) << f.name << " " << convtest::hex(c, f);
      if (d.cls == Class::nan) {
        EXPECT_EQ(d.sig, o.sig) << f.name << " payload " << convtest::hex(c, f);
        continue;
      }
      if (d.cls == Class::inf) continue;
      ASSERT_EQ(value(d), oracle::rational_value(c, f)) << f.name << " " << convtest::hex(c, f);
      const auto back = encode_exact(d.sign, d.sig, d.exp, f);
      ASSERT_TRUE(back.has_value()) << f.name << " " << convtest::hex(c, f);
      EXPECT_EQ(*back, c) << f.name << " " << convtest::hex(c, f);
    }
  }
}

// §3.1 bits above the width are ignored by decode (§2.4).
TEST(Value, DecodeIgnoresBitsAboveTheWidth) {
  for (const auto& f : kFormats) {
    if (f.bits >= 32) continue;
    for (std::uint32_t c = 0; c < (1u << f.bits); c += 7) {
      const Decoded a = decode(c, f), b = decode(c | (0xA5A5A5A5u << f.bits), f);
      EXPECT_EQ(a.cls, b.cls);
      EXPECT_EQ(a.sig, b.sig);
      EXPECT_EQ(a.exp, b.exp);
      EXPECT_EQ(a.sign, b.sign);
    }
  }
}

// §3.3 values that are not codes: one more significant bit than the grid allows, one
// quantum past max finite, negatives / zero / values below 2^-127 for E8M0.
TEST(Value, EncodeExactRejectsValuesOffTheGrid) {
  for (const auto& f : kFormats) {
    if (f.bits > 16) continue;
    for (std::uint32_t c = 0; c < (1u << f.bits); ++c) {
      const Decoded d = decode(c, f);
      if (d.cls != Class::normal && d.cls != Class::subnormal) continue;
      // (2 sig + 1) * 2^(exp - 1): half a quantum off the grid of the code's binade
      EXPECT_FALSE(encode_exact(d.sign, 2 * d.sig + 1, d.exp - 1, f).has_value()) << f.name << " " << c;
    }
    const Decoded mx = decode(f.max_finite, f);
    // max + one quantum of the top binade is beyond max finite
    EXPECT_FALSE(encode_exact(false, mx.sig + 1, mx.exp, f).has_value()) << f.name;
    EXPECT_FALSE(encode_exact(false, 1, 200, f).has_value()) << f.name;
  }
  const Format& e8m0 = format(FormatId::f8e8m0fnu);
  EXPECT_FALSE(encode_exact(true, 1, 0, e8m0).has_value());      // negative
  EXPECT_FALSE(encode_exact(false, 0, 0, e8m0).has_value());     // zero
  EXPECT_FALSE(encode_exact(false, 1, -128, e8m0).has_value());  // 2^-128 < 2^-127
  EXPECT_EQ(encode_exact(false, 1, -127, e8m0), 0x00u);
  EXPECT_EQ(encode_exact(false, 1, 127, e8m0), 0xFEu);
  EXPECT_FALSE(encode_exact(false, 1, 128, e8m0).has_value());
  // int8: -128 is a code, 128 is not; -0 is +0.
  const Format& i8 = format(FormatId::int8);
  EXPECT_EQ(encode_exact(true, 128, 0, i8), 0x80u);
  EXPECT_FALSE(encode_exact(false, 128, 0, i8).has_value());
  EXPECT_EQ(encode_exact(true, 0, 0, i8), 0x00u);
  // E4M3: -0 = 0x80; 480 = 15 * 2^5 is past 448 (its pattern 0x7F is the NaN).
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  EXPECT_EQ(encode_exact(true, 0, 0, e4m3), 0x80u);
  EXPECT_FALSE(encode_exact(false, 15, 5, e4m3).has_value());
  EXPECT_EQ(encode_exact(false, 14, 5, e4m3), 0x7Eu);
}

struct Rendering {
  FormatId f;
  std::uint32_t code;
  const char* decimal;
  const char* hexfloat;
};

// §3.4 by hand.
TEST(Value, ExactDecimalAndHexFloat) {
  const Rendering cases[] = {
      // E4M3 0x01: subnormal 1 * 2^qmin = 2^-9 = 0.001953125
      {FormatId::f8e4m3fn, 0x01, "0.001953125", "0x1p-9"},
      // E4M3 0x7E: 1.110b * 2^8 = 448; fraction .11 -> hex digit c
      {FormatId::f8e4m3fn, 0x7E, "448", "0x1.cp+8"},
      {FormatId::f8e4m3fn, 0xFE, "-448", "-0x1.cp+8"},
      {FormatId::f8e4m3fn, 0x80, "-0", "-0x0p+0"},
      {FormatId::f8e4m3fn, 0x7F, "nan", "nan"},
      // E4M3 0x08 = 2^-6 = 0.015625; 0x07 = 7 * 2^-9 = 0.013671875 = 1.11b * 2^-7
      {FormatId::f8e4m3fn, 0x08, "0.015625", "0x1p-6"},
      {FormatId::f8e4m3fn, 0x07, "0.013671875", "0x1.cp-7"},
      // E5M2 0x7B = 1.75 * 2^15 = 57344; 0x7C = +Inf, 0xFC = -Inf
      {FormatId::f8e5m2, 0x7B, "57344", "0x1.cp+15"},
      {FormatId::f8e5m2, 0x7C, "inf", "inf"},
      {FormatId::f8e5m2, 0xFC, "-inf", "-inf"},
      // E8M0 00 = 2^-127, FE = 2^127
      {FormatId::f8e8m0fnu, 0x00,
       "0."
       "000000000000000000000000000000000000005877471754111437539843682686111228389093327783860437607543758531392086297"
       "2736358642578125",
       "0x1p-127"},
      {FormatId::f8e8m0fnu, 0xFE, "170141183460469231731687303715884105728", "0x1p+127"},
      // bf16 max (2 - 2^-7) * 2^127 = 2^128 - 2^120; fraction 1111111b -> hex fe
      {FormatId::bf16, 0x7F7F, "338953138925153547590470800371487866880", "0x1.fep+127"},
      // f32 min subnormal 2^-149
      {FormatId::f32, 0x00000001,
       "0."
       "000000000000000000000000000000000000000000001401298464324817070923729583289916131280261941876515771757068283889"
       "79108268586060148663818836212158203125",
       "0x1p-149"},
      // f32 1/3 rounded: 0x3EAAAAAB = 0xAAAAAB * 2^-25 = 11184811 / 33554432
      {FormatId::f32, 0x3EAAAAAB, "0.3333333432674407958984375", "0x1.555556p-2"},
      // f16 min subnormal 2^-24; max 65504 = 1.1111111111b * 2^15
      {FormatId::f16, 0x0001, "0.000000059604644775390625", "0x1p-24"},
      {FormatId::f16, 0x7BFF, "65504", "0x1.ffcp+15"},
      // FP6 E2M3 0x01 = 1 * 2^-3 = 0.125; FP4 0x1 = 0.5, 0xF = -6 = -1.1b * 2^2
      {FormatId::f6e2m3fn, 0x01, "0.125", "0x1p-3"},
      {FormatId::f4e2m1fn, 0x1, "0.5", "0x1p-1"},
      {FormatId::f4e2m1fn, 0xF, "-6", "-0x1.8p+2"},
      // int8 0x80 = -128 = -0x1p+7; 0x7F = 127 = 1.111111b * 2^6
      {FormatId::int8, 0x80, "-128", "-0x1p+7"},
      {FormatId::int8, 0x7F, "127", "0x1.fcp+6"},
  };
  for (const auto& c : cases) {
    const Decoded d = decode(c.code, format(c.f));
    EXPECT_EQ(exact_decimal(d), c.decimal) << format(c.f).name << " " << c.code;
    EXPECT_EQ(exact_hexfloat(d), c.hexfloat) << format(c.f).name << " " << c.code;
  }
}

}  // namespace
}  // namespace numref
