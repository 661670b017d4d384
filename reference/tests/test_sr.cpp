// Stochastic rounding (§5): the properties of §5.1 checked with exact rationals on the
// core's results, variant `add` (§5.2) against the oracle and against `fraction`, SR
// beyond max finite (§5.3), tininess (§5.4), and the validity rules of §4.3.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "test_support.hpp"

namespace numref {
namespace {

using convtest::f32_code;
using convtest::Mismatches;
using convtest::SplitMix64;
using oracle::BigInt;
using oracle::Rational;

const Format& kF32 = format(FormatId::f32);
constexpr std::uint8_t X = kInexact, U = kUnderflow, O = kOverflow;

Policy sr(int k, SrVariant v = SrVariant::fraction, Overflow o = Overflow::nonsat) {
  Policy p;
  p.round = Round::sr;
  p.sr_bits = k;
  p.sr_variant = v;
  p.overflow = o;
  return p;
}

Rational pow2(int e) { return e >= 0 ? Rational(BigInt(1) << e) : Rational(BigInt(1), BigInt(1) << -e); }

// Largest finite magnitude of a format, as a rational (from the table's max_finite code).
Rational max_value(const Format& f) { return oracle::rational_value(f.max_finite, f); }
int emin_of(const Format& f) { return f.has_subnormals ? 1 - f.bias : -f.bias; }

// A random f32 code whose exponent lies in [qmin - 2, E(max)] of `to` (so results include
// the target's subnormals and zero), random fraction, random sign (positive for unsigned).
std::uint32_t operand_for(const Format& to, SplitMix64& g) {
  int lo, hi;
  if (to.specials == Specials::integer) {
    lo = -3;
    hi = 6;
  } else {
    lo = emin_of(to) - to.man_bits - 2;
    hi = static_cast<int>(to.max_finite >> to.man_bits) - to.bias;
  }
  lo = std::max(lo, -149);
  const std::uint64_t w = g.next();
  const int e = lo + static_cast<int>(w % static_cast<std::uint64_t>(hi - lo + 1));
  const std::uint32_t frac = static_cast<std::uint32_t>(w >> 20) & 0x7FFFFFu;
  const std::uint32_t sign = (to.is_signed && ((w >> 60) & 1u)) ? 0x80000000u : 0u;
  if (e < -126) {
    const std::uint32_t sub = (0x800000u | frac) >> (-126 - e);
    return sign | std::max(sub, 1u);
  }
  return sign | (static_cast<std::uint32_t>(e + 127) << 23) | frac;
}

const FormatId kTargets[] = {FormatId::f8e4m3fn, FormatId::f8e5m2,    FormatId::bf16, FormatId::f4e2m1fn,
                             FormatId::int8,     FormatId::f8e8m0fnu, FormatId::f16,  FormatId::f6e2m3fn};

// §5.1: averaged over all 2^k values of r, the result is exactly the operand with its
// fraction (in units of the target quantum 2^q) truncated to k bits, i.e.
// floor(|x| / 2^(q-k)) * 2^(q-k) with the sign of x; every result is one of the two
// neighbours N 2^q, (N+1) 2^q; the number of r that round up is f_k.
TEST(SrFraction, AverageOverAllRIsTheTruncatedOperandExactly) {
  SplitMix64 g(0x5352);
  std::uint64_t checked = 0;
  for (FormatId tid : kTargets) {
    const Format& to = format(tid);
    for (int i = 0; i < 250; ++i) {
      const std::uint32_t xc = operand_for(to, g);
      const Rational x = oracle::rational_value(xc, kF32);
      if (x == 0) continue;
      for (int k = 1; k <= 8; ++k) {
        const oracle::SrSplit sp = oracle::sr_split(x, to, k);
        const Rational au = sp.upper < 0 ? Rational(-sp.upper) : sp.upper;
        const Rational al = sp.lower < 0 ? Rational(-sp.lower) : sp.lower;
        if (au > max_value(to)) continue;  // §5.3, tested below
        if (!to.has_subnormals && to.specials != Specials::integer && al < pow2(emin_of(to)))
          continue;  // §7.4: below 2^-127 the result is the minimum, tested in the oracle sweeps
        const Converter conv(kF32, to, sr(k));
        Rational sum = 0;
        BigInt ups = 0;
        for (std::uint64_t r = 0; r < (std::uint64_t{1} << k); ++r) {
          const Result res = conv(xc, r);
          const Rational v = oracle::rational_value(res.bits, to);
          ASSERT_TRUE(v == sp.lower || v == sp.upper)
              << to.name << " x=" << convtest::hex(xc, kF32) << " k=" << k << " r=" << r;
          if (v == sp.upper && sp.upper != sp.lower) ups += 1;
          sum += v;
        }
        // floor(|x| / 2^(q-k)) * 2^(q-k), signed
        const Rational ax = x < 0 ? Rational(-x) : x;
        const Rational scaled = ax / pow2(sp.q - k);
        const BigInt fl = boost::multiprecision::numerator(scaled) / boost::multiprecision::denominator(scaled);
        Rational truncated = Rational(fl) * pow2(sp.q - k);
        if (x < 0) truncated = -truncated;
        EXPECT_EQ(sum / Rational(BigInt(1) << k), truncated)
            << to.name << " x=" << convtest::hex(xc, kF32) << " k=" << k;
        EXPECT_EQ(ups, sp.fk) << to.name << " x=" << convtest::hex(xc, kF32) << " k=" << k;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 10000u);
}

// §5.1 exact inputs never move (for every r), and inputs with 0 < f < 2^-k never move.
TEST(SrFraction, ExactAndTinyFractionInputsNeverMove) {
  SplitMix64 g(0x4558);
  for (FormatId tid : kTargets) {
    const Format& to = format(tid);
    const std::uint32_t ncodes = to.bits <= 8 ? (1u << to.bits) : 4096;  // 16-bit: a stride
    for (std::uint32_t i = 0; i < ncodes; ++i) {
      const std::uint32_t c = to.bits <= 8 ? i : static_cast<std::uint32_t>(g.next()) & 0xFFFFu;
      const oracle::Value v = oracle::read_code(c, to);
      if (v.kind == oracle::Kind::nan || v.kind == oracle::Kind::inf) continue;
      const Rational val = oracle::rational_value(c, to);
      const auto xc = f32_code(val);
      if (!xc) continue;
      for (int k : {1, 3, 8, 16, 32}) {
        const Converter conv(kF32, to, sr(k));
        for (int t = 0; t < 8; ++t) {
          const std::uint64_t r = t == 0 ? 0 : (t == 1 ? (std::uint64_t{1} << k) - 1 : g.next() >> (64 - k));
          const Result res = conv(*xc, r);
          ASSERT_EQ(oracle::rational_value(res.bits, to), val)
              << to.name << " " << convtest::hex(c, to) << " k=" << k << " r=" << r;
          ASSERT_EQ(res.flags, 0) << to.name << " " << convtest::hex(c, to);
          // 0 < f < 2^-k: x + 2^(q - k - 1) where 2^q is the quantum at x (never moves),
          // for non-zero values below max finite that stay f32 values.
          if (val == 0 || k > 16) continue;
          const oracle::SrSplit sp = oracle::sr_split(val, to, k);
          const Rational delta = pow2(sp.q - k - 1);
          const auto yc = f32_code(val < 0 ? Rational(val - delta) : Rational(val + delta));
          if (!yc) continue;
          const Result moved = conv(*yc, r);
          ASSERT_EQ(oracle::rational_value(moved.bits, to), val)
              << to.name << " y=" << convtest::hex(*yc, kF32) << " k=" << k << " r=" << r;
          ASSERT_TRUE(moved.flags & X);
        }
      }
    }
  }
}

// §5.1 / §5.2 core vs oracle: every code of every narrow source with every r for small k,
// every 11th code of the 16-bit sources with random r, f32 with random k in 1..32 and random r; both variants.
TEST(SrOracle, BothVariantsAgainstOracle) {
  Mismatches mm;
  SplitMix64 g(0x4F52);
  for (const auto& from : kFormats) {
    for (const auto& to : kFormats)
      for (SrVariant var : {SrVariant::fraction, SrVariant::add})
        for (Overflow o : convtest::kOverflows) {
          if (!convtest::swept(from) || !convtest::swept(to)) continue;             // §2.5: test_p3109_members
          if (var == SrVariant::add && to.specials == Specials::integer) continue;  // not defined, §5.2
          if (from.bits <= 8) {
            for (int k : {1, 2, 3, 5}) {
              const Policy p = sr(k, var, o);
              const Converter conv(from, to, p);
              for (std::uint32_t c = 0; c < (1u << from.bits); ++c)
                for (std::uint64_t r = 0; r < (std::uint64_t{1} << k); ++r) convtest::check_one(conv, p, c, r, mm);
            }
          } else if (from.bits == 16) {
            for (int k : {3, 12, 32}) {
              const Policy p = sr(k, var, o);
              const Converter conv(from, to, p);
              convtest::parallel_for(1u << 16, [&](std::uint64_t b, std::uint64_t e) {
                SplitMix64 lg(b * 0x9E37 + static_cast<std::uint64_t>(k));
                for (std::uint64_t c = b; c < e; c += 11)
                  convtest::check_one(conv, p, static_cast<std::uint32_t>(c), lg.next() >> (64 - k), mm);
              });
            }
          } else {
            for (int i = 0; i < 4000; ++i) {
              const int k = 1 + static_cast<int>(g.next() % 32);
              const Policy p = sr(k, var, o);
              const Converter conv(from, to, p);
              const std::uint32_t x = (i & 1) ? static_cast<std::uint32_t>(g.next()) : operand_for(to, g);
              convtest::check_one(conv, p, x, g.next() >> (64 - k), mm);
            }
          }
        }
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// §5.1 / §5.2 with the other knobs (§6.2 inf_sat, §6.5 int_range, §7.1 e8m0_round, §7.2,
// §7.3, §8.1 daz, §8.2 ftz, §9.2 / §5.4 tininess), core vs oracle: every code of every
// narrow source with 4 random r each (k = 4 and 13), every 31st code of the 16-bit
// sources (k = 13).
TEST(SrOracle, KnobsAgainstOracle) {
  constexpr std::string_view knobs[] = {
      "daz=1",
      "ftz=1",
      "tininess=before ftz=1",
      "zero_to_nozero=min negative=abs",
      "e8m0_round=floor",
      "e8m0_round=tiesup",
      "int_range=symmetric",
      "overflow=saturate inf_sat=keep",
  };
  Mismatches mm;
  for (const std::string_view kn : knobs)
    for (const auto& from : kFormats) {
      if (from.bits > 16) continue;
      for (const auto& to : kFormats)
        for (SrVariant var : {SrVariant::fraction, SrVariant::add})
          for (int k : {4, 13}) {
            if (!convtest::swept(from) || !convtest::swept(to)) continue;  // §2.5: test_p3109_members
            if (var == SrVariant::add && to.specials == Specials::integer) continue;
            if (from.bits > 8 && k == 4) continue;
            const Policy p = convtest::with(kn, sr(k, var));
            const Converter conv(from, to, p);
            const std::uint64_t step = from.bits <= 8 ? 1 : 31;
            convtest::parallel_for(std::uint64_t{1} << from.bits, [&](std::uint64_t b, std::uint64_t e) {
              SplitMix64 lg(b * 0x51ED + static_cast<std::uint64_t>(k));
              for (std::uint64_t c = b - b % step; c < e; c += step) {
                if (c < b) continue;
                for (int t = 0; t < (from.bits <= 8 ? 4 : 1); ++t)
                  convtest::check_one(conv, p, static_cast<std::uint32_t>(c), lg.next() >> (64 - k), mm);
              }
            });
          }
    }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

// §5.2: for normal source operands whose value is in the target's normal range, and
// k <= d = m_src - m_dst, variant `add` gives the same bits and flags as `fraction`.
TEST(SrAdd, AgreesWithFractionForNormalResults) {
  SplitMix64 g(0x4144);
  std::uint64_t compared = 0;
  for (const auto& from : kFormats)
    for (const auto& to : kFormats) {
      if (from.specials == Specials::integer || to.specials == Specials::integer) continue;
      if (!convtest::swept(from) || !convtest::swept(to)) continue;  // §2.5: test_p3109_members
      const int d = from.man_bits - to.man_bits;
      for (int k = 1; k <= std::min(d, 12); ++k) {
        const Converter frac(from, to, sr(k)), add(from, to, sr(k, SrVariant::add));
        for (int i = 0; i < 3000; ++i) {
          const std::uint32_t c =
              from.bits == 32 ? operand_for(to, g) : static_cast<std::uint32_t>(g.next()) & from.mask();
          const oracle::Value v = oracle::read_code(c, from);
          if (v.kind != oracle::Kind::normal) continue;
          if (!to.is_signed && v.sign) continue;
          const Rational ax = oracle::rational_value(c & from.mag_mask(), from);
          if (ax < pow2(emin_of(to))) continue;
          const std::uint64_t r = g.next() >> (64 - k);
          ASSERT_EQ(frac(c, r), add(c, r))
              << from.name << " -> " << to.name << " " << convtest::hex(c, from) << " k=" << k << " r=" << r;
          ++compared;
        }
      }
    }
  EXPECT_GT(compared, 100000u);
}

// Hand examples of §5.1 / §5.2 where the variants differ, §5.3 and §5.4.
TEST(SrExamples, SubnormalResultsDifferBetweenVariants) {
  // x = 1.25 * 2^-9 = f32 0x3B200000 into f8e4m3fn: subnormal there (2^-9 is the quantum,
  // emin = -6). fraction: N = 1, f = 0.25, k = 2: f_2 = 1; r = 3: 1 + 3 >= 4 -> N + 1 = 2:
  // 2 * 2^-9 = code 0x02; tiny before rounding (§5.4) and inexact: u|x.
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  EXPECT_EQ(convert(0x3B200000, kF32, e4m3, sr(2), 3), (Result{0x02, U | X}));
  // add: d = 23 - 3 = 20, r aligned at the top of the 20 discarded bits: 3 << 18 = 0xC0000;
  // 0x3B200000 + 0xC0000 = 0x3B2C0000 = 1.34375 * 2^-9, rtz into E4M3 -> 1 quantum = 0x01;
  // the rtz conversion is tiny and inexact (u|x); the value 2^-9 differs from x (x).
  EXPECT_EQ(convert(0x3B200000, kF32, e4m3, sr(2, SrVariant::add), 3), (Result{0x01, U | X}));
  EXPECT_EQ(oracle::convert(0x3B200000, kF32, e4m3, sr(2), 3), (oracle::Out{0x02, U | X}));
  EXPECT_EQ(oracle::convert(0x3B200000, kF32, e4m3, sr(2, SrVariant::add), 3), (oracle::Out{0x01, U | X}));
}

TEST(SrExamples, BeyondMaxFinite) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  const Format& e5m2 = format(FormatId::f8e5m2);
  const Format& e8m0 = format(FormatId::f8e8m0fnu);
  for (SrVariant var : {SrVariant::fraction, SrVariant::add}) {
    // 464 = 0x43E80000: N = 14 (448), f = 0.5; k = 1: f_1 = 1. r = 0 -> 448 (x); r = 1 -> 480 > 448:
    // §5.3 overflow "to nearest": nonsat -> NaN 0x7F (o|x), saturate -> 0x7E (o|x).
    // add: r = 1 << 19 added to 0x43E80000 gives 0x43F00000 = 480 (rtz keeps it): the same.
    EXPECT_EQ(convert(0x43E80000, kF32, e4m3, sr(1, var), 0), (Result{0x7E, X}));
    EXPECT_EQ(convert(0x43E80000, kF32, e4m3, sr(1, var), 1), (Result{0x7F, O | X}));
    EXPECT_EQ(convert(0xC3E80000, kF32, e4m3, sr(1, var), 1), (Result{0xFF, O | X}));
    EXPECT_EQ(convert(0x43E80000, kF32, e4m3, sr(1, var, Overflow::saturate), 1), (Result{0x7E, O | X}));
    // 450 = 0x43E10000: f = 2/32 = 0.0625; k = 4: f_4 = 1, r = 15 -> 1 + 15 >= 16 -> up -> overflow.
    // add: 15 << 16 = 0xF0000 + 0x43E10000 = 0x43F00000 = 480: the same.
    EXPECT_EQ(convert(0x43E10000, kF32, e4m3, sr(4, var), 15), (Result{0x7F, O | X}));
    EXPECT_EQ(convert(0x43E10000, kF32, e4m3, sr(4, var), 14), (Result{0x7E, X}));
    // E5M2: 61440 = 0x47700000 (7.5 quanta of 8192), k = 1, r = 1 -> 65536: +Inf 0x7C (o|x).
    EXPECT_EQ(convert(0x47700000, kF32, e5m2, sr(1, var), 1), (Result{0x7C, O | X}));
    // E8M0: 1.5 * 2^127 = 0x7F400000, k = 1, r = 1 -> 2^128: NaN FF (o|x); saturate -> FE (o|x).
    EXPECT_EQ(convert(0x7F400000, kF32, e8m0, sr(1, var), 1), (Result{0xFF, O | X}));
    EXPECT_EQ(convert(0x7F400000, kF32, e8m0, sr(1, var, Overflow::saturate), 1), (Result{0xFE, O | X}));
  }
}

TEST(SrExamples, TininessBeforeRounding) {
  // x = 2^-6 - 2^-12 = f32 0x3C7C0000 (1.96875 * 2^-7) into f8e4m3fn: x / 2^-9 = 7.875, N = 7,
  // f_1 = 1; r = 1 -> 8 * 2^-9 = 2^-6 (min normal, code 0x08). §5.4: tiny since |x| < 2^-6,
  // and inexact -> u|x; r = 0 -> 7 * 2^-9 = 0x07, u|x.
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  EXPECT_EQ(convert(0x3C7C0000, kF32, e4m3, sr(1), 1), (Result{0x08, U | X}));
  EXPECT_EQ(convert(0x3C7C0000, kF32, e4m3, sr(1), 0), (Result{0x07, U | X}));
  // rne for comparison (§9.2 tininess after): 7.875 -> 8 quanta = 2^-6; rounded with 4 bits and
  // an unbounded exponent, x / 2^-10 = 15.75 -> 16 -> 2^-6: not tiny -> x only.
  EXPECT_EQ(convert(0x3C7C0000, kF32, e4m3, Policy{}), (Result{0x08, X}));
  // int8: 2.75 = 0x40300000, k = 2: f_2 = 3: r = 0 -> 2 (x); r = 1, 2, 3 -> 3 (x).
  const Format& i8 = format(FormatId::int8);
  EXPECT_EQ(convert(0x40300000, kF32, i8, sr(2), 0), (Result{0x02, X}));
  EXPECT_EQ(convert(0x40300000, kF32, i8, sr(2), 1), (Result{0x03, X}));
  // 127.25 = 0x42FE8000, k = 2: f_2 = 1; r = 3 -> 128: out of range -> 127, invalid only (§6.5).
  EXPECT_EQ(convert(0x42FE8000, kF32, i8, sr(2), 3), (Result{0x7F, kInvalid}));
}

// §4.3 k must be in 1..32 and 0 <= r < 2^k: errors, never a silently masked value.
TEST(SrValidity, KAndRRange) {
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  for (int k : {0, -1, 33, 64}) {
    EXPECT_FALSE(validate(sr(k), e4m3).empty()) << k;
    EXPECT_THROW(Converter(kF32, e4m3, sr(k)), std::invalid_argument) << k;
    EXPECT_FALSE(oracle::validate(sr(k), e4m3).empty()) << k;
    EXPECT_THROW(oracle::convert(0x3F800000, kF32, e4m3, sr(k), 0), std::invalid_argument) << k;
  }
  // §4.3 sr_variant=add requires a floating-point target.
  const Format& i8 = format(FormatId::int8);
  EXPECT_FALSE(validate(sr(4, SrVariant::add), i8).empty());
  EXPECT_THROW(Converter(kF32, i8, sr(4, SrVariant::add)), std::invalid_argument);
  EXPECT_THROW(oracle::convert(0x3F800000, kF32, i8, sr(4, SrVariant::add), 0), std::invalid_argument);
  EXPECT_TRUE(validate(sr(4, SrVariant::add), e4m3).empty());
  for (int k : {1, 4, 31, 32}) {
    EXPECT_TRUE(validate(sr(k), e4m3).empty());
    const Converter conv(kF32, e4m3, sr(k));
    const std::uint64_t top = std::uint64_t{1} << k;
    EXPECT_NO_THROW(conv(0x3F900000, top - 1));
    // r = 2^k is out of range for a finite operand and for every other operand class too.
    for (std::uint32_t x : {0x3F900000u, 0x00000000u, 0x80000000u, 0x7FC00000u, 0x7F800000u, 0x00000001u}) {
      EXPECT_THROW(conv(x, top), std::invalid_argument) << k << " " << std::hex << x;
      EXPECT_THROW(conv(x, ~std::uint64_t{0}), std::invalid_argument) << k << " " << std::hex << x;
      EXPECT_THROW(oracle::convert(x, kF32, e4m3, sr(k), top), std::invalid_argument);
    }
  }
}

}  // namespace
}  // namespace numref
