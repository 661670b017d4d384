// §11.1 The binade path of numref::Converter against the generic rounding core.
//
// Converter takes bit-level shortcuts for normal operands of a binary floating-point source
// (§11.1): the rebias-and-shift rounding in the target's normal range, and sign-only
// constants far above max finite and far below the smallest subnormal. round_finite() is the
// generic core (§4–§9) without any of them, fed the operand's exact value from decode()
// (§3.1). The two must agree on bits and flags for every operand the shortcuts can see:
//   - every code of every floating-point source of at most 16 bits, into every narrower
//     floating-point target, under every deterministic mode x both overflow policies x both
//     Inf-saturation settings x FTZ x tininess, and §5.1 stochastic rounding for k = 1, 3, 8,
//     24 with random r;
//   - binary32 operands: every exponent field x both signs x fractions at and around every
//     rounding point of every target (d = 23 − m dropped bits: 0, 1, half − 1, half,
//     half + 1, 2^d − 1 above a random kept part) plus random fractions.
// The generic core is itself checked against the MPFR / rational oracle
// (test_convert_oracle, test_convert_f32), so agreement here makes the shortcuts exact.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "numref/convert.hpp"
#include "numref/round.hpp"
#include "numref/value.hpp"
#include "test_support.hpp"

namespace numref {
namespace {

struct Setting {
  Policy p;
  std::string name;
};

std::vector<Setting> settings() {
  std::vector<Setting> out;
  const Round modes[] = {Round::rne, Round::rtz, Round::rup, Round::rdn, Round::rna};
  const char* mode_names[] = {"rne", "rtz", "rup", "rdn", "rna"};
  for (int m = 0; m < 5; ++m)
    for (Overflow o : {Overflow::saturate, Overflow::nonsat})
      for (int variant = 0; variant < 3; ++variant) {
        Policy p;
        p.round = modes[m];
        p.overflow = o;
        p.inf_sat = variant == 1 ? InfSat::keep : InfSat::max;
        p.ftz = variant == 2;
        p.tininess = variant == 2 ? Tininess::before : Tininess::after;
        out.push_back({p, std::string(mode_names[m]) + (o == Overflow::saturate ? " sat" : " nonsat") +
                              (variant == 1   ? " inf_sat=keep"
                               : variant == 2 ? " ftz tininess=before"
                                              : "")});
      }
  for (int k : {1, 3, 8, 24})
    for (Overflow o : {Overflow::saturate, Overflow::nonsat}) {
      Policy p;
      p.round = Round::sr;
      p.sr_bits = k;
      p.overflow = o;
      out.push_back({p, "sr k=" + std::to_string(k) + (o == Overflow::saturate ? " sat" : " nonsat")});
    }
  return out;
}

bool is_float(const Format& f) { return !f.is_integer() && f.is_signed && f.has_subnormals; }

// Compares Converter with the generic core on `codes` (normal operands only: the others
// never reach the shortcuts and take the same code path in both). Returns the number of
// operands compared; records at most a few failures.
std::uint64_t compare(const Format& from, const Format& to, const Setting& s, const std::vector<std::uint32_t>& codes,
                      std::mt19937_64& rng) {
  const Converter conv(from, to, s.p);
  std::uint64_t n = 0;
  int failures = 0;
  for (std::uint32_t c : codes) {
    const Decoded d = decode(c, from);
    if (d.cls != Class::normal) continue;
    const std::uint64_t r = s.p.round == Round::sr ? (rng() & ((std::uint64_t{1} << s.p.sr_bits) - 1u)) : 0u;
    const Result got = conv(c, r);
    const Result want = round_finite(Exact{d.sign, d.sig, d.exp, false}, to, s.p, r);
    ++n;
    if (got != want && failures++ < 5)
      ADD_FAILURE() << from.name << " -> " << to.name << " [" << s.name << "] x=" << std::hex << c << " r=" << r
                    << ": Converter " << got.bits << "/" << int(got.flags) << ", generic core " << want.bits << "/"
                    << int(want.flags);
  }
  return n;
}

TEST(ConvertFastPath, EveryCodeOfNarrowSources) {
  std::mt19937_64 rng(20261123);
  const auto all = settings();
  std::uint64_t compared = 0;
  for (const Format& from : kFormats) {
    if (!is_float(from) || from.bits > 16 || !convtest::swept(from)) continue;
    std::vector<std::uint32_t> codes(std::size_t{1} << from.bits);
    for (std::uint32_t c = 0; c < codes.size(); ++c) codes[c] = c;
    for (const Format& to : kFormats) {
      if (!is_float(to) || to.man_bits >= from.man_bits || !convtest::swept(to)) continue;
      for (const auto& s : all) compared += compare(from, to, s, codes, rng);
    }
  }
  // bf16 (65 024 normal codes) and f16 (63 488) into six / five narrower targets, 48 settings.
  EXPECT_GT(compared, 25'000'000u);
}

TEST(ConvertFastPath, Binary32AtEveryRoundingPoint) {
  std::mt19937_64 rng(7);
  const Format& f32 = format(FormatId::f32);
  const auto all = settings();
  std::uint64_t compared = 0;
  for (const Format& to : kFormats) {
    if (!is_float(to) || to.man_bits >= f32.man_bits || !convtest::swept(to)) continue;
    const int d = f32.man_bits - to.man_bits;
    const std::uint32_t half = 1u << (d - 1), ulp = 1u << d;
    std::vector<std::uint32_t> codes;
    for (std::uint32_t sign : {0u, 0x80000000u})
      for (std::uint32_t ef = 1; ef < 255; ++ef) {
        const std::uint32_t base = sign | (ef << 23);
        for (int i = 0; i < 8; ++i) {
          const std::uint32_t kept = i == 0   ? 0u
                                     : i == 1 ? (0x7FFFFFu & ~(ulp - 1u))
                                              : (static_cast<std::uint32_t>(rng()) & 0x7FFFFFu & ~(ulp - 1u));
          for (std::uint32_t low : {0u, 1u, half - 1u, half, half + 1u, ulp - 1u})
            codes.push_back(base | kept | (low & (ulp - 1u)));
        }
        for (int i = 0; i < 64; ++i) codes.push_back(base | (static_cast<std::uint32_t>(rng()) & 0x7FFFFFu));
      }
    for (const auto& s : all) compared += compare(f32, to, s, codes, rng);
  }
  EXPECT_GT(compared, 5'000'000u);
}

// The shortcut regions, by hand (§11.1, §4, §6.1): f32 -> f8e4m3fn, emax = 8, qmin = -9.
TEST(ConvertFastPath, HandCheckedRegions) {
  const Format& f32 = format(FormatId::f32);
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  Policy sat;  // ocp narrow with overflow=saturate
  sat.overflow = Overflow::saturate;
  const Converter c(f32, e4m3, sat);
  // 1.0 = 0x3F800000: field 127 -> 127 - 7 bias difference = field 7, code 0x38, exact.
  EXPECT_EQ(c(0x3F800000u), (Result{0x38u, 0}));
  // 1 + 2^-4 = 0x3F880000: the tie between 0x38 (1.0) and 0x39 (1.125): even -> 0x38, inexact.
  EXPECT_EQ(c(0x3F880000u), (Result{0x38u, kInexact}));
  // 1.1875 = 1 + 3*2^-4 = 0x3F980000: tie between 0x39 and 0x3A: even -> 0x3A.
  EXPECT_EQ(c(0x3F980000u), (Result{0x3Au, kInexact}));
  // 1.9375 = 0x3FF80000: tie between 1.875 (0x3F) and 2.0: even code 0x40 — the carry
  // out of the fraction steps into the next binade.
  EXPECT_EQ(c(0xBFF80000u), (Result{0xC0u, kInexact}));
  // 464 = 0x43E80000 (tie between 448 = 0x7E and 480): even -> 0x7E, in range, exact? no: inexact.
  EXPECT_EQ(c(0x43E80000u), (Result{0x7Eu, kInexact}));
  // 480 = 0x43F00000 rounds to 0x7F, past max finite: the generic core saturates (§6.1).
  EXPECT_EQ(c(0x43F00000u), (Result{0x7Eu, static_cast<std::uint8_t>(kOverflow | kInexact)}));
  // 2^9 = 0x44000000 and 2^127: the constant overflow region, saturated.
  EXPECT_EQ(c(0x44000000u), (Result{0x7Eu, static_cast<std::uint8_t>(kOverflow | kInexact)}));
  EXPECT_EQ(c(0xFF000000u), (Result{0xFEu, static_cast<std::uint8_t>(kOverflow | kInexact)}));
  // 2^-11 = 0x3A000000 (< 2^(qmin-1) = 2^-10): the constant tiny region -> +0, underflow + inexact.
  EXPECT_EQ(c(0x3A000000u), (Result{0x00u, static_cast<std::uint8_t>(kUnderflow | kInexact)}));
  // Non-saturating (ocp default for 8-bit targets): 2^9 -> NaN 0x7F (§6.1), flags overflow + inexact.
  const Converter ns(f32, e4m3, Policy{});
  EXPECT_EQ(ns(0x44000000u), (Result{0x7Fu, static_cast<std::uint8_t>(kOverflow | kInexact)}));
  // rup: 2^-11 -> the smallest subnormal 2^-9 = 0x01; negative -> -0 (0x80).
  Policy up;
  up.round = Round::rup;
  const Converter cu(f32, e4m3, up);
  EXPECT_EQ(cu(0x3A000000u), (Result{0x01u, static_cast<std::uint8_t>(kUnderflow | kInexact)}));
  EXPECT_EQ(cu(0xBA000000u), (Result{0x80u, static_cast<std::uint8_t>(kUnderflow | kInexact)}));
}

}  // namespace
}  // namespace numref
