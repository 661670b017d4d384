// The descriptor table (§2): stated bias, max finite and canonical NaN agree with the
// values derived from the field widths and the encoding family (§2.2, §3.2, §3.3);
// the stated values match the defining documents; names and aliases parse (§2.3).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "numref/format.hpp"
#include "numref/oracle/oracle_convert.hpp"
#include "numref/value.hpp"

namespace numref {
namespace {

using oracle::BigInt;
using oracle::Rational;

Rational p2(int e) { return e >= 0 ? Rational(BigInt(1) << e) : Rational(BigInt(1), BigInt(1) << -e); }

// The hand-computed tables below list the rows in FormatId order (f32 .. int8 = ids 0 .. 9, then
// f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz = 10 .. 12, f8e4m3, f8e3m4 = 13, 14). A
// row added to the table later is checked by the derivations and against the oracle (the
// tests that loop over every row), and has no hand value here until someone computes one.
template <class T, std::size_t N>
const T* hand(const T (&table)[N], const Format& f) {
  const auto i = static_cast<std::size_t>(f.id);
  return i < N ? &table[i] : nullptr;
}

// §2.2 / §3.2: bias = 2^(exp_bits - 1) - 1 for every floating-point row, one more for fnuz
// (2^(exp_bits - 1)), and the number after `b` where the name states it (f8e4m3b11fnuz: 11,
// §2.3); integers have none. P3109 (§2.5.2): 2^(K-P-1) rounded down (signed), 2^(K-P) (unsigned).
TEST(FormatTable, StatedBiasMatchesTheFieldWidths) {
  for (const auto& f : kFormats) {
    if (f.is_p3109()) {
      const int k = f.bits, p = f.man_bits + 1;
      EXPECT_EQ(f.bias, f.is_signed ? (k - p - 1 < 0 ? 0 : 1 << (k - p - 1)) : 1 << (k - p)) << f.name;
      continue;
    }
    int derived = f.is_integer() ? 0 : (1 << (f.exp_bits - 1)) - (f.specials == Specials::fnuz ? 0 : 1);
    const std::string n(f.name);
    if (const auto b = n.find('b', 1); b != std::string::npos && b + 1 < n.size() && n[b + 1] >= '0' && n[b + 1] <= '9')
      derived = std::stoi(n.substr(b + 1));
    EXPECT_EQ(f.bias, derived) << f.name;
  }
}

// Storage width = sign bit (if any) + exponent + fraction for floats; sign + 7 for int8.
TEST(FormatTable, StorageWidthIsTheSumOfTheFields) {
  for (const auto& f : kFormats) EXPECT_EQ(f.bits, (f.is_signed ? 1 : 0) + f.exp_bits + f.man_bits) << f.name;
}

// §2.2: the largest finite code by family:
//   ieee: exponent all ones minus one, fraction all ones;
//   fn: the all-ones magnitude is the NaN, so one below it (S.1111.110; unsigned: FE);
//   finite and fnuz (whose NaN is the sign bit alone): the all-ones magnitude;
//   integer: 2^(bits-1) - 1.
TEST(FormatTable, StatedMaxFiniteMatchesTheFamily) {
  for (const auto& f : kFormats) {
    const std::uint32_t mag_all_ones = (f.is_signed ? (1u << (f.bits - 1)) : (f.bits >= 32 ? 0u : (1u << f.bits))) - 1u;
    std::uint32_t derived = 0;
    switch (f.specials) {
      case Specials::ieee: derived = (((1u << f.exp_bits) - 2u) << f.man_bits) | ((1u << f.man_bits) - 1u); break;
      case Specials::fn: derived = mag_all_ones - 1u; break;
      case Specials::finite:
      case Specials::fnuz: derived = mag_all_ones; break;
      // §2.5.3 below +Inf (extended) or below the NaN (finite); the unsigned NaN is all ones
      case Specials::p3109e: derived = mag_all_ones - (f.is_signed ? 1u : 2u); break;
      case Specials::p3109f: derived = mag_all_ones - (f.is_signed ? 0u : 1u); break;
      case Specials::integer: derived = (1u << (f.bits - 1)) - 1u; break;
    }
    EXPECT_EQ(f.max_finite, derived) << f.name;
  }
}

// The max finite VALUES of §2.1, by hand: f32 (2 - 2^-23) 2^127, bf16 (2 - 2^-7) 2^127,
// f16 65504, E4M3 448 = 1.75 * 2^8, E5M2 57344 = 1.75 * 2^15, E8M0 2^127, E3M2 28 = 1.75 * 2^4,
// E2M3 7.5 = 1.875 * 2^2, E2M1 6 = 1.5 * 2^2, int8 127, E4M3FNUZ 240 = 1.875 * 2^(15-8),
// E5M2FNUZ 57344 = 1.75 * 2^(31-16), E4M3B11FNUZ 30 = 1.875 * 2^(15-11); decoded by the core and
// by the oracle; the IEEE-like E4M3 77 = 1.875 * 2^(14-7) = 240 and E3M4 6F = 1.9375 * 2^(6-3) = 15.5.
TEST(FormatTable, MaxFiniteValues) {
  // clang-format off
  const Rational want[] = {(2 - p2(-23)) * p2(127), (2 - p2(-7)) * p2(127), 65504, 448, 57344,
                           p2(127), 28, Rational(15, 2), 6, 127, 240, 57344, 30, 240, Rational(31, 2)};
  // clang-format on
  for (const auto& f : kFormats) {
    const Rational* w = hand(want, f);
    if (w == nullptr) continue;
    EXPECT_EQ(oracle::rational_value(f.max_finite, f), *w) << f.name;
    const Decoded d = decode(f.max_finite, f);
    EXPECT_EQ(Rational(BigInt(d.sig)) * p2(d.exp), *w) << f.name;
  }
}

// §3.2 emin and qmin by hand: f32 -126/-149, bf16 -126/-133, f16 -14/-24, E4M3 -6/-9,
// E5M2 -14/-16, E8M0 -127/-127 (field 0 is the normal binade 2^-127), E3M2 -2/-4,
// E2M3 0/-3, E2M1 0/-1, (int8: none), E4M3FNUZ -7/-10, E5M2FNUZ -15/-17, E4M3B11FNUZ -10/-13,
// E4M3 -6/-9, E3M4 -2/-6.
TEST(FormatTable, DerivedExponents) {
  const int emin[] = {-126, -126, -14, -6, -14, -127, -2, 0, 0, 0, -7, -15, -10, -6, -2};
  const int qmin[] = {-149, -133, -24, -9, -16, -127, -4, -3, -1, 0, -10, -17, -13, -9, -6};
  for (const auto& f : kFormats) {
    if (f.is_integer()) continue;
    // the smallest positive code (1 with subnormals, 0 for E8M0) is 2^qmin, by the oracle; in
    // p3109_k2p1se / _k2p2se code 1 is +Inf (no positive finite value, §2.5 item 1)
    if (f.is_finite_code(f.has_subnormals ? 1u : 0u))
      EXPECT_EQ(oracle::rational_value(f.has_subnormals ? 1u : 0u, f), p2(f.qmin())) << f.name;
    else
      EXPECT_EQ(f.max_finite, 0u) << f.name;
    if (hand(emin, f) == nullptr) continue;
    EXPECT_EQ(f.emin(), *hand(emin, f)) << f.name;
    EXPECT_EQ(f.qmin(), *hand(qmin, f)) << f.name;
  }
}

// §2.2 / §3.3 the canonical NaN: ieee = all-ones exponent with the quiet bit; fn = the
// all-ones magnitude; fnuz = the sign bit alone (80); it decodes as NaN (core and oracle).
// finite / integer: no NaN.
TEST(FormatTable, CanonicalNaN) {
  for (const auto& f : kFormats) {
    if (!f.has_nan()) {
      EXPECT_EQ(f.canonical_nan, 0u) << f.name;
      EXPECT_FALSE(f.has_inf()) << f.name;
      continue;
    }
    const std::uint32_t derived = f.specials == Specials::ieee
                                      ? (((1u << f.exp_bits) - 1u) << f.man_bits) | (1u << (f.man_bits - 1))
                                      : (f.specials == Specials::fnuz ? f.sign_bit() : f.mag_mask());
    if (f.is_p3109()) {  // §2.5.3 the sign bit alone (signed), all ones (unsigned)
      EXPECT_EQ(f.canonical_nan, f.is_signed ? 1u << (f.bits - 1) : (1u << f.bits) - 1u) << f.name;
      EXPECT_EQ(decode(f.canonical_nan, f).cls, Class::nan) << f.name;
      EXPECT_EQ(oracle::read_code(f.canonical_nan, f).kind, oracle::Kind::nan) << f.name;
      continue;
    }
    EXPECT_EQ(f.canonical_nan, derived) << f.name;
    EXPECT_EQ(decode(f.canonical_nan, f).cls, Class::nan) << f.name;
    EXPECT_EQ(oracle::read_code(f.canonical_nan, f).kind, oracle::Kind::nan) << f.name;
    EXPECT_FALSE(oracle::read_code(f.canonical_nan, f).signaling) << f.name;
  }
}

// §2.2 number of NaN and Inf codes by hand: f16 2 x 1023 NaN, 2 Inf; bf16 2 x 127, 2;
// E4M3 2 NaN (7F, FF), no Inf; E5M2 2 x 3 NaN, 2 Inf; E8M0 1 NaN (FF); FP6/FP4/int8 none;
// the fnuz rows 1 NaN (80), no Inf; IEEE-like E4M3 2 x 7 NaN, 2 Inf; E3M4 2 x 15 NaN, 2 Inf.
TEST(FormatTable, SpecialCodeCounts) {
  const int nans[] = {-1, 254, 2046, 2, 6, 1, 0, 0, 0, 0, 1, 1, 1, 14, 30};
  const int infs[] = {-1, 2, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2};
  for (const auto& f : kFormats) {
    if (f.bits > 16) continue;
    int n = 0, inf = 0, on = 0, oinf = 0;
    for (std::uint32_t c = 0; c < (1u << f.bits); ++c) {
      n += decode(c, f).cls == Class::nan;
      inf += decode(c, f).cls == Class::inf;
      on += oracle::read_code(c, f).kind == oracle::Kind::nan;
      oinf += oracle::read_code(c, f).kind == oracle::Kind::inf;
    }
    EXPECT_EQ(n, on) << f.name;  // core and oracle agree on every row
    EXPECT_EQ(inf, oinf) << f.name;
    if (hand(nans, f) == nullptr) continue;
    EXPECT_EQ(n, *hand(nans, f)) << f.name;
    EXPECT_EQ(inf, *hand(infs, f)) << f.name;
  }
}

// §2.2 The first special magnitude, by hand: f32 7F800000 (exponent all ones), bf16 7F80,
// f16 7C00, E5M2 7C (Inf), E4M3 7F, E8M0 FF (the NaN: all-ones magnitude), FP6 E3M2 / E2M3 20,
// FP4 8, int8 and the fnuz rows 80 (= mag_mask + 1: none; the fnuz NaN is a code, not a
// magnitude). Then for every code of the formats of at most 16 bits, against the oracle's
// independent reading of the code: finite iff the magnitude is below it, Inf iff it is the Inf
// magnitude, NaN otherwise; the code classes (is_nan_code, is_finite_code) for every row.
TEST(FormatTable, FirstSpecialMagnitude) {
  const std::uint32_t want[] = {
      0x7F800000u, 0x7F80u, 0x7C00u, 0x7Fu, 0x7Cu, 0xFFu, 0x20u, 0x20u,
      0x8u,        0x80u,   0x80u,   0x80u, 0x80u, 0x78u, 0x70u};  // E4M3 / E3M4: the Inf magnitude
  for (const auto& f : kFormats) {
    if (const std::uint32_t* w = hand(want, f)) {
      EXPECT_EQ(f.first_special_magnitude(), *w) << f.name;
    }
    if (f.bits > 16) continue;
    for (std::uint32_t c = 0; c < (1u << f.bits); ++c) {
      const std::uint32_t mag = c & f.mag_mask();
      const oracle::Kind k = oracle::read_code(c, f).kind;
      EXPECT_EQ(f.is_nan_code(c), k == oracle::Kind::nan) << f.name << " " << c;
      EXPECT_EQ(f.is_finite_code(c), k != oracle::Kind::nan && k != oracle::Kind::inf) << f.name << " " << c;
      if (f.has_single_nan() && f.is_signed) continue;  // its NaN has the magnitude of the zero
      EXPECT_EQ(f.is_finite_magnitude(mag), k != oracle::Kind::nan && k != oracle::Kind::inf) << f.name << " " << c;
      EXPECT_EQ(f.is_inf_magnitude(mag), k == oracle::Kind::inf) << f.name << " " << c;
      EXPECT_EQ(f.is_nan_magnitude(mag), k == oracle::Kind::nan) << f.name << " " << c;
    }
  }
}

// §2.1 table order = FormatId order, names are the LLVM/MLIR spellings.
TEST(FormatNames, EveryNameParses) {
  const char* names[] = {"f32",        "bf16",       "f16",           "f8e4m3fn", "f8e5m2",
                         "f8e8m0fnu",  "f6e3m2fn",   "f6e2m3fn",      "f4e2m1fn", "int8",
                         "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3",   "f8e3m4"};
  for (const auto& f : kFormats) {
    EXPECT_EQ(&format(f.id), &f) << f.name;  // row i has FormatId i
    const auto id = find_format(f.name);
    ASSERT_TRUE(id.has_value()) << f.name;
    EXPECT_EQ(*id, f.id);
    if (const char* const* n = hand(names, f)) {
      EXPECT_EQ(f.name, *n);
    }
  }
}

// §2.3 the aliases (the spec's list), and that nothing else is accepted.
TEST(FormatNames, Aliases) {
  const std::pair<const char*, FormatId> aliases[] = {{"fp32", FormatId::f32},
                                                      {"float32", FormatId::f32},
                                                      {"bfloat16", FormatId::bf16},
                                                      {"fp16", FormatId::f16},
                                                      {"float16", FormatId::f16},
                                                      {"e4m3", FormatId::f8e4m3fn},
                                                      {"float8_e4m3fn", FormatId::f8e4m3fn},
                                                      {"e5m2", FormatId::f8e5m2},
                                                      {"float8_e5m2", FormatId::f8e5m2},
                                                      {"e8m0", FormatId::f8e8m0fnu},
                                                      {"float8_e8m0fnu", FormatId::f8e8m0fnu},
                                                      {"e3m2", FormatId::f6e3m2fn},
                                                      {"e2m3", FormatId::f6e2m3fn},
                                                      {"e2m1", FormatId::f4e2m1fn},
                                                      {"e4m3fnuz", FormatId::f8e4m3fnuz},
                                                      {"float8_e4m3fnuz", FormatId::f8e4m3fnuz},
                                                      {"e5m2fnuz", FormatId::f8e5m2fnuz},
                                                      {"float8_e5m2fnuz", FormatId::f8e5m2fnuz},
                                                      {"e4m3b11fnuz", FormatId::f8e4m3b11fnuz},
                                                      {"float8_e4m3b11fnuz", FormatId::f8e4m3b11fnuz},
                                                      {"float8_e4m3", FormatId::f8e4m3},
                                                      {"e3m4", FormatId::f8e3m4},
                                                      {"float8_e3m4", FormatId::f8e3m4}};
  for (const auto& [a, id] : aliases) {
    const auto got = find_format(a);
    ASSERT_TRUE(got.has_value()) << a;
    EXPECT_EQ(*got, id) << a;
  }
  // The aliases column is well formed (single spaces, no empty entry), and no name or alias
  // is used twice across the table.
  std::vector<std::string_view> all;
  for (const auto& f : kFormats) {
    all.push_back(f.name);
    for (std::string_view rest = f.aliases; !rest.empty();) {
      const std::size_t end = std::min(rest.find(' '), rest.size());
      ASSERT_NE(end, 0u) << "empty alias in the row of " << f.name;
      all.push_back(rest.substr(0, end));
      rest.remove_prefix(end);
      if (!rest.empty()) {
        rest.remove_prefix(1);
        ASSERT_FALSE(rest.empty()) << "trailing space in the aliases of " << f.name;
      }
    }
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a name or alias appears twice";
  for (const char* bad : {"", "E4M3", "f8e4m3f", "fp8", "float8_e4m3fnu", "int4", "f32 ", "bf16x", "e8m0fnu", "uint8"})
    EXPECT_FALSE(find_format(bad).has_value()) << "'" << bad << "'";
}

// §2.2 The fnuz family (by hand, f8e4m3fnuz): 80 is the only NaN and decodes with sign 1 and
// payload 0; 00 is the only zero (no −0 code); 01 = 2^-10 (qmin = 1 - 8 - 3), 08 = 2^-7 (the
// smallest normal), C0 = -1 (field 1000 = 8 = bias); encode of a −0 gives 00 (§3.3).
TEST(FormatTable, FnuzCodes) {
  const Format& f = format(FormatId::f8e4m3fnuz);
  int zeros = 0, nans = 0;
  for (std::uint32_t c = 0; c < 256; ++c) {
    const Decoded d = decode(c, f);
    zeros += d.cls == Class::zero;
    nans += d.cls == Class::nan;
  }
  EXPECT_EQ(zeros, 1);
  EXPECT_EQ(nans, 1);
  const Decoded n = decode(0x80, f);
  EXPECT_EQ(n.cls, Class::nan);
  EXPECT_TRUE(n.sign);
  EXPECT_EQ(n.sig, 0u);
  EXPECT_EQ(oracle::rational_value(0x01, f), p2(-10));
  EXPECT_EQ(oracle::rational_value(0x08, f), p2(-7));
  EXPECT_EQ(oracle::rational_value(0xC0, f), Rational(-1));
  EXPECT_EQ(encode_exact(true, 0, 0, f), std::optional<std::uint32_t>(0u));
  EXPECT_EQ(encode_zero(true, f), 0u);
  EXPECT_FALSE(f.has_negative_zero());
  EXPECT_TRUE(format(FormatId::f8e4m3fn).has_negative_zero());
  EXPECT_EQ(f.nan_code(true), 0x80u);
  EXPECT_EQ(f.nan_code(false), 0x80u);
}

// §2.5 The P3109 rows: one zero, one NaN, Inf codes 2 (signed extended), 1 (unsigned extended)
// or 0 (finite), for the core and the oracle; by hand for p3109_k8p3se (bias 16, m 2): 01 = 2^-17,
// 04 = 2^-15 (the smallest normal), C0 = -2^0 (field 10000 = 16), 7F = +Inf, FF = -Inf, 80 the NaN
// read with sign 0; p3109_k8p8uf (bias 1, one exponent bit): 01 = 2^-7, 80 = 1, FE = 254/128.
TEST(FormatTable, P3109Codes) {
  int rows = 0;
  for (const auto& f : kFormats) {
    if (!f.is_p3109()) continue;
    ++rows;
    int zeros = 0, nans = 0, infs = 0, onans = 0, oinfs = 0;
    for (std::uint32_t c = 0; c < (1u << f.bits); ++c) {
      const Decoded d = decode(c, f);
      zeros += d.cls == Class::zero;
      nans += d.cls == Class::nan;
      infs += d.cls == Class::inf;
      onans += oracle::read_code(c, f).kind == oracle::Kind::nan;
      oinfs += oracle::read_code(c, f).kind == oracle::Kind::inf;
    }
    const int want_inf = f.specials == Specials::p3109e ? (f.is_signed ? 2 : 1) : 0;
    EXPECT_EQ(zeros, 1) << f.name;
    EXPECT_EQ(nans, 1) << f.name;
    EXPECT_EQ(onans, 1) << f.name;
    EXPECT_EQ(infs, want_inf) << f.name;
    EXPECT_EQ(oinfs, want_inf) << f.name;
    EXPECT_FALSE(f.has_negative_zero()) << f.name;
    EXPECT_FALSE(decode(f.canonical_nan, f).sign) << f.name;
  }
  EXPECT_EQ(rows, 140);  // §2.5: every member gfloat's format_info_p3109 accepts for K = 2..8
  const Format& s = format(FormatId::p3109_k8p3se);
  EXPECT_EQ(s.name, "p3109_k8p3se");
  EXPECT_EQ(find_format("binary8p3se"), std::optional<FormatId>(FormatId::p3109_k8p3se));
  EXPECT_EQ(oracle::rational_value(0x01, s), p2(-17));
  EXPECT_EQ(oracle::rational_value(0x04, s), p2(-15));
  EXPECT_EQ(oracle::rational_value(0xC0, s), Rational(-1));
  EXPECT_EQ(decode(0x7F, s).cls, Class::inf);
  EXPECT_EQ(decode(0xFF, s).cls, Class::inf);
  EXPECT_TRUE(decode(0xFF, s).sign);
  EXPECT_EQ(s.nan_code(true), 0x80u);
  const Format& u = format(FormatId::p3109_k8p8uf);
  EXPECT_EQ(oracle::rational_value(0x01, u), p2(-7));
  EXPECT_EQ(oracle::rational_value(0x80, u), Rational(1));
  EXPECT_EQ(oracle::rational_value(0xFE, u), Rational(254, 128));
  EXPECT_EQ(decode(0xFF, u).cls, Class::nan);
}

// §2.5 item 1 The table holds exactly one row per (K, P, signedness, domain) with K = 2..8 and
// 1 <= P <= K (4 x 35 = 140, gfloat 0.5.2's format_info_p3109 domain), named p3109_k<K>p<P><s|u><e|f>
// with the alias binary<K>p<P><s|u><e|f>; the 12 binary8 ones come first and are not extra.
TEST(FormatTable, P3109EveryMemberOnce) {
  int extra = 0;
  for (int k = 2; k <= 8; ++k)
    for (int p = 1; p <= k; ++p)
      for (const char* sd : {"se", "sf", "ue", "uf"}) {
        const std::string tail = std::to_string(k) + "p" + std::to_string(p) + sd;
        const auto id = find_format("p3109_k" + tail);
        ASSERT_TRUE(id.has_value()) << tail;
        EXPECT_EQ(find_format("binary" + tail), id) << tail;
        const Format& f = format(*id);
        EXPECT_EQ(f.bits, k) << f.name;
        EXPECT_EQ(f.precision(), p) << f.name;
        EXPECT_EQ(f.is_signed, sd[0] == 's') << f.name;
        EXPECT_EQ(f.specials, sd[1] == 'e' ? Specials::p3109e : Specials::p3109f) << f.name;
        extra += f.is_p3109_extra();
      }
  EXPECT_EQ(extra, 128);
  int i = static_cast<int>(FormatId::f8e3m4);
  for (FormatId b : kP3109Binary8) EXPECT_EQ(static_cast<int>(b), ++i);  // ids 15..26, never renumbered
  EXPECT_EQ(static_cast<int>(FormatId::p3109_k2p1se), 27);
  EXPECT_EQ(static_cast<int>(FormatId::p3109_k8p8ue), 154);
}

// §2.5 item 1 The degenerate members, by hand. p3109_k2p1se (1 exponent bit, no fraction, bias 1)
// and p3109_k2p2se (no exponent bit, 1 fraction bit, bias 0): 00 = 0, 01 = +Inf, 10 = NaN,
// 11 = -Inf; no finite value but 0, so max finite is 00. p3109_k2p2sf: 01 = 0.1b * 2^(1-0) = 1.
// p3109_k2p1ue (2 exponent bits, bias 2): 01 = 2^(1-2) = 0.5, 10 = +Inf, 11 = NaN.
// p3109_k8p8se (signed P = K: no exponent bit, bias 0): code c = c / 64, 7E = 126/64, 7F = +Inf.
TEST(FormatTable, P3109DegenerateMembers) {
  for (FormatId id : {FormatId::p3109_k2p1se, FormatId::p3109_k2p2se}) {
    const Format& f = format(id);
    EXPECT_EQ(f.max_finite, 0u) << f.name;
    EXPECT_EQ(decode(0, f).cls, Class::zero) << f.name;
    EXPECT_EQ(decode(1, f).cls, Class::inf) << f.name;
    EXPECT_EQ(decode(2, f).cls, Class::nan) << f.name;
    EXPECT_EQ(decode(3, f).cls, Class::inf) << f.name;
    EXPECT_TRUE(decode(3, f).sign) << f.name;
    EXPECT_EQ(encode_max_finite(true, f), 0u) << f.name;  // −max is +0: the −0 pattern is the NaN
  }
  const Format& sf = format(FormatId::p3109_k2p2sf);
  EXPECT_EQ(oracle::rational_value(0x1, sf), Rational(1));
  EXPECT_EQ(oracle::rational_value(0x3, sf), Rational(-1));
  const Format& ue = format(FormatId::p3109_k2p1ue);
  EXPECT_EQ(oracle::rational_value(0x1, ue), Rational(1, 2));
  EXPECT_EQ(decode(0x2, ue).cls, Class::inf);
  EXPECT_EQ(decode(0x3, ue).cls, Class::nan);
  const Format& s8 = format(FormatId::p3109_k8p8se);
  EXPECT_EQ(s8.exp_bits, 0);
  EXPECT_EQ(oracle::rational_value(0x01, s8), Rational(1, 64));
  EXPECT_EQ(oracle::rational_value(0x7E, s8), Rational(126, 64));
  EXPECT_EQ(decode(0x7F, s8).cls, Class::inf);
}

}  // namespace
}  // namespace numref
