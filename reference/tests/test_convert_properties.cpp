// RapidCheck properties of conversion (§4, §6, §11) over RAW BIT PATTERNS: codes are
// drawn as integers of the source width (uniform, plus exponent / fraction fields at their
// edges), so NaN, Inf, zeros and subnormals all occur — RapidCheck's float generators
// never produce them. Every generator is pinned to full size (gen::resize(100, ...)) so
// the first cases are not confined to small integers.
// Each property run checks kBatch drawn cases (RapidCheck shrinks all of them on failure).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "test_support.hpp"

namespace numref {
namespace {

constexpr int kBatch = 100;

template <class T>
T uniform(T lo, T hi) {  // [lo, hi)
  return *rc::gen::resize(100, rc::gen::inRange<T>(lo, hi));
}

const Format& any_format() { return kFormats[static_cast<std::size_t>(uniform<int>(0, kFormatCount))]; }
const Format& any_source() {  // the formats of <= 32 bits with the richest encodings
  static const FormatId ids[] = {FormatId::f32,      FormatId::bf16,     FormatId::f16,
                                 FormatId::f8e4m3fn, FormatId::f8e5m2,   FormatId::f8e8m0fnu,
                                 FormatId::int8,     FormatId::f6e3m2fn, FormatId::f4e2m1fn};
  return format(ids[uniform<int>(0, 9)]);
}
Round any_mode() { return convtest::kDeterministic[uniform<int>(0, 5)]; }
Overflow any_overflow() { return convtest::kOverflows[uniform<int>(0, 2)]; }

// A code of f: 3/4 uniform raw patterns; 1/4 with the exponent field at an edge
// (0, 1, top - 1, top) and the fraction at an edge (0, 1, all ones, quiet bit) or random.
std::uint32_t any_code(const Format& f) {
  const std::uint32_t raw = static_cast<std::uint32_t>(uniform<std::uint64_t>(0, std::uint64_t{1} << f.bits));
  if (f.is_integer() || f.exp_bits == 0 || uniform<int>(0, 4) != 0) return raw;
  const std::uint32_t top = f.exp_all_ones();
  const std::uint32_t efs[] = {0u, 1u, top - 1u, top};
  const std::uint32_t ef = efs[uniform<int>(0, 4)];
  std::uint32_t fr = raw & f.man_mask();
  if (f.man_bits > 0) {
    const std::uint32_t frs[] = {0u, 1u, f.man_mask(), 1u << (f.man_bits - 1), fr};
    fr = frs[uniform<int>(0, 5)];
  }
  return (raw & f.sign_bit()) | ((ef << f.man_bits) & f.mag_mask()) | fr;
}

bool is_nan(std::uint32_t c, const Format& f) { return oracle::read_code(c, f).kind == oracle::Kind::nan; }
bool is_inf(std::uint32_t c, const Format& f) { return oracle::read_code(c, f).kind == oracle::Kind::inf; }

// Monotonicity (§4.2 every deterministic mode is monotone, §6.1 overflow results are
// ordered): x <= y by value => conv(x) <= conv(y) by value (NaN results excluded).
// y is either an independent code or a near neighbour of x (code +- 1..16).
RC_GTEST_PROP(ConvertProperties, Monotone, ()) {
  for (int i = 0; i < kBatch; ++i) {
    const Format& from = any_source();
    const Format& to = any_format();
    const Policy p = convtest::with(any_mode(), any_overflow());
    const std::uint32_t x = any_code(from);
    std::uint32_t y = any_code(from);
    if (uniform<int>(0, 2) == 0) y = (x + static_cast<std::uint32_t>(uniform<int>(-16, 17))) & from.mask();
    if (is_nan(x, from) || is_nan(y, from)) continue;
    const int in = oracle::compare_values(x, from, y, from);
    const Result rx = convert(x, from, to, p), ry = convert(y, from, to, p);
    if (is_nan(rx.bits, to) || is_nan(ry.bits, to)) continue;
    const int out = oracle::compare_values(rx.bits, to, ry.bits, to);
    RC_ASSERT(in >= 0 || out <= 0);
    RC_ASSERT(in <= 0 || out >= 0);
  }
}

// Sign symmetry for the modes symmetric in the sign (§4.2 rne, rtz, rna): conv(-x) = -conv(x)
// by value with the same flags; a NaN result stays a NaN. Signed targets; int8 with the
// symmetric range (§6.5; the full range is asymmetric by definition).
RC_GTEST_PROP(ConvertProperties, SignSymmetric, ()) {
  for (int i = 0; i < kBatch; ++i) {
    const Format& from = any_source();
    const Format& to = any_format();
    if (!from.is_signed || !to.is_signed || from.is_integer()) continue;
    const Round modes[] = {Round::rne, Round::rtz, Round::rna};
    Policy p = convtest::with(modes[uniform<int>(0, 3)], any_overflow());
    p.int_range = IntRange::symmetric;
    const std::uint32_t x = any_code(from);
    const std::uint32_t nx = x ^ from.sign_bit();
    const Result a = convert(x, from, to, p), b = convert(nx, from, to, p);
    RC_ASSERT(a.flags == b.flags);
    RC_ASSERT(is_nan(a.bits, to) == is_nan(b.bits, to));
    if (is_nan(a.bits, to)) continue;
    if (is_inf(a.bits, to) || is_inf(b.bits, to)) {
      RC_ASSERT(a.bits == (b.bits ^ to.sign_bit()));
      continue;
    }
    RC_ASSERT(oracle::rational_value(a.bits, to) == -oracle::rational_value(b.bits, to));
  }
}

// Round trip (§3.3, §11): a value that converts exactly (no flag, not NaN) into another
// format converts back to the same code under every deterministic mode and overflow policy.
RC_GTEST_PROP(ConvertProperties, ExactRoundTrip, ()) {
  for (int i = 0; i < kBatch; ++i) {
    const Format& narrow = any_source();
    const Format& wide = any_format();
    const std::uint32_t c = any_code(narrow);
    if (is_nan(c, narrow)) continue;
    const Result w = convert(c, narrow, wide, Policy{});
    if (w.flags != 0 || is_nan(w.bits, wide) || is_inf(w.bits, wide)) continue;  // Inf saturates under saturate (§6.2)
    const Policy p = convtest::with(any_mode(), any_overflow());
    const Result back = convert(w.bits, wide, narrow, p);
    if (!wide.has_negative_zero() && oracle::read_code(c, narrow).kind == oracle::Kind::zero)
      RC_ASSERT(oracle::read_code(back.bits, narrow).kind == oracle::Kind::zero);  // int8, fnuz: no -0 (§6.6)
    else
      RC_ASSERT(back.bits == c);
    RC_ASSERT(back.flags == 0);
  }
}

// Widening into f32 is exact for every non-NaN code of every format (every value grid is a
// subset of binary32's, §2.1), and +-Inf stays +-Inf.
RC_GTEST_PROP(ConvertProperties, WideningIntoF32IsExact, ()) {
  const Format& f32 = format(FormatId::f32);
  for (int i = 0; i < kBatch; ++i) {
    const Format& from = any_source();
    const std::uint32_t c = any_code(from);
    if (is_nan(c, from)) continue;
    const Result w = convert(c, from, f32, convtest::with(any_mode(), Overflow::nonsat));  // Inf stays Inf
    RC_ASSERT(w.flags == 0);
    RC_ASSERT(oracle::compare_values(c, from, w.bits, f32) == 0);
  }
}

// §4.2 rne: the f32 midpoint of two adjacent codes lands on the one with the even code
// (the even magnitude field; E8M0: the even biased exponent); rna takes the larger magnitude.
RC_GTEST_PROP(ConvertProperties, TiesLandOnTheEvenCode, ()) {
  const Format& f32 = format(FormatId::f32);
  for (int i = 0; i < kBatch; ++i) {
    const Format& to = any_format();
    if (to.bits >= 32) continue;
    // a: a non-negative finite code below max finite; b: the next value up
    const std::uint32_t a = static_cast<std::uint32_t>(uniform<std::uint64_t>(0, to.max_finite));
    const std::uint32_t b = a + 1;
    const bool neg = to.is_signed && uniform<int>(0, 2) == 1;
    const oracle::Rational mid = (oracle::rational_value(a, to) + oracle::rational_value(b, to)) / 2;
    const auto xm = convtest::f32_code(neg ? oracle::Rational(-mid) : mid);
    RC_ASSERT(xm.has_value());  // every midpoint of a <= 16-bit format is an f32 value
    const Result r = convert(*xm, f32, to, convtest::with(Round::rne, Overflow::nonsat));
    const std::uint32_t even = (a & 1u) == 0 ? a : b;
    std::uint32_t want = even;
    if (neg) want = to.is_integer() ? ((~even + 1u) & to.mask()) : (even | to.sign_bit());
    if (neg && even == 0 && !to.has_negative_zero()) want = 0;  // fnuz: -0 rounds to +0 (§6.6)
    RC_ASSERT(r.bits == want);
    RC_ASSERT((r.flags & kInexact) != 0);
    const Result away = convert(*xm, f32, to, convtest::with(Round::rna, Overflow::nonsat));
    std::uint32_t want_away = neg ? (to.is_integer() ? ((~b + 1u) & to.mask()) : (b | to.sign_bit())) : b;
    RC_ASSERT(away.bits == want_away);
  }
}

// §6.1 / §6.2 saturation bounds: under overflow=saturate, inf_sat=max (and, for E8M0,
// negative=abs, zero_to_nozero=min) no non-NaN operand gives NaN or Inf, and the result's
// magnitude never exceeds max finite.
RC_GTEST_PROP(ConvertProperties, SaturationBounds, ()) {
  for (int i = 0; i < kBatch; ++i) {
    const Format& from = any_source();
    const Format& to = any_format();
    Policy p = convtest::with(any_mode(), Overflow::saturate);
    p.negative = Negative::abs;
    p.zero_to_nozero = ZeroToNoZero::min;
    const std::uint32_t x = any_code(from);
    if (is_nan(x, from)) continue;
    const Result r = convert(x, from, to, p);
    RC_ASSERT(!is_nan(r.bits, to));
    RC_ASSERT(!is_inf(r.bits, to));
    const oracle::Rational v = oracle::rational_value(r.bits, to);
    const oracle::Rational mx = oracle::rational_value(to.max_finite, to);
    RC_ASSERT(v <= mx);
    RC_ASSERT(-v <= (to.is_integer() ? mx + 1 : mx));
  }
}

// Idempotence: converting an already converted value again changes nothing — the same
// format into itself, and the value widened to f32 and converted back, under the same
// policy, give the same code with no flag.
RC_GTEST_PROP(ConvertProperties, Idempotent, ()) {
  const Format& f32 = format(FormatId::f32);
  for (int i = 0; i < kBatch; ++i) {
    const Format& from = any_source();
    const Format& to = any_format();
    const Policy p = convtest::with(any_mode(), any_overflow());
    const std::uint32_t x = any_code(from);
    const Result y = convert(x, from, to, p);
    if (is_nan(y.bits, to)) continue;
    const Result same = convert(y.bits, to, to, p);
    RC_ASSERT(same.bits == y.bits);
    RC_ASSERT(same.flags == 0);
    const Result z = convert(y.bits, to, f32, Policy{});
    const Result again = convert(z.bits, f32, to, p);
    RC_ASSERT(again.bits == y.bits);
    RC_ASSERT(again.flags == 0);
  }
}

}  // namespace
}  // namespace numref
