// numref — small arbitrary-precision integers for the exact MoR metrics and statistics.
//   spec §22 (exact sums), §23 (the mean rounded once), §28 (moments), §29 (backward error)
//
// BigUInt is a non-negative integer of any width (64-bit limbs, little-endian, no leading
// zero limb). It does exactly what the metrics need — add, subtract, multiply, shift,
// compare, divide with remainder, integer square root, decimal text — with no host
// floating point. The only rounding is at the end, by the one rounding core (§4): a
// quotient or square root is reduced to 64 significant bits plus a sticky bit, exactly as
// §4.4 builds a correctly rounded division, and rounded once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "numref/round.hpp"

namespace numref {

class BigUInt {
 public:
  BigUInt() = default;
  explicit BigUInt(std::uint64_t v) {
    if (v) l_.push_back(v);
  }
  // From little-endian 64-bit limbs (leading zero limbs are dropped).
  static BigUInt from_limbs(std::span<const std::uint64_t> limbs);

  bool is_zero() const { return l_.empty(); }
  // Number of significant bits (0 for zero).
  int bit_length() const;
  bool bit(int i) const;
  std::uint64_t low64() const { return l_.empty() ? 0 : l_[0]; }
  const std::vector<std::uint64_t>& limbs() const { return l_; }
  // True iff some bit below position `n` is set.
  bool any_bit_below(int n) const;

  // -1, 0, +1 for *this <, =, > o.
  int compare(const BigUInt& o) const;
  friend bool operator==(const BigUInt& a, const BigUInt& b) { return a.l_ == b.l_; }
  friend bool operator<(const BigUInt& a, const BigUInt& b) { return a.compare(b) < 0; }

  BigUInt& operator+=(const BigUInt& o);
  // Requires *this >= o (std::logic_error otherwise).
  BigUInt& operator-=(const BigUInt& o);
  BigUInt& operator<<=(int n);
  BigUInt& operator>>=(int n);
  BigUInt& mul_small(std::uint64_t m);
  friend BigUInt operator+(BigUInt a, const BigUInt& b) { return a += b; }
  friend BigUInt operator-(BigUInt a, const BigUInt& b) { return a -= b; }
  friend BigUInt operator<<(BigUInt a, int n) { return a <<= n; }
  friend BigUInt operator>>(BigUInt a, int n) { return a >>= n; }
  friend BigUInt operator*(const BigUInt& a, const BigUInt& b);

  // a = q * b + r, 0 <= r < b (b != 0, std::invalid_argument otherwise).
  static void divmod(const BigUInt& a, const BigUInt& b, BigUInt& q, BigUInt& r);
  // floor(sqrt(a)).
  BigUInt isqrt() const;
  // Decimal digits ("0" for zero).
  std::string to_decimal() const;

 private:
  void trim();
  std::vector<std::uint64_t> l_;
};

// A signed integer: sign and magnitude (zero is never negative).
struct BigInt {
  bool neg = false;
  BigUInt mag;
  BigInt() = default;
  BigInt(bool n, BigUInt m) : neg(n && !m.is_zero()), mag(std::move(m)) {}
  friend BigInt operator+(const BigInt& a, const BigInt& b);
  friend BigInt operator-(const BigInt& a, const BigInt& b) { return a + BigInt(!b.neg, b.mag); }
  friend BigInt operator*(const BigInt& a, const BigInt& b) { return BigInt(a.neg != b.neg, a.mag * b.mag); }
};

// §4.4 The operand of the rounding core (64 significant bits and a sticky bit) for the exact
// value (-1)^neg * num * 2^exp2 / den (den > 0): round_finite() of it into any format of at most
// 32 bits is the correctly rounded value of the ratio. Zero for num = 0.
Exact ratio_exact(bool neg, const BigUInt& num, int exp2, const BigUInt& den);
// §1.2 / §4.4 RN32 of the exact value (-1)^neg * num * 2^exp2 / den (den > 0): the quotient is
// formed with at least 64 significant bits and a sticky bit for everything below, then
// rounded once by the core (rne, overflow to ±Inf, gradual underflow). Returns the binary32
// code; ±0 for num = 0.
std::uint32_t rn32_ratio(bool neg, const BigUInt& num, int exp2, const BigUInt& den);
// RN32 of (-1)^neg * sqrt(num * 2^exp2 / den) (den > 0), rounded once the same way.
std::uint32_t rn32_sqrt_ratio(bool neg, const BigUInt& num, int exp2, const BigUInt& den);
// The exact decimal expansion of num * 2^exp2 (finite: a dyadic value), e.g. "0.0625".
std::string dyadic_decimal(const BigUInt& num, int exp2);
// The exact value num * 2^exp2 as a C99 hex float "0x1.hhhp+e" (all significant bits), "0x0p+0"
// for zero.
std::string dyadic_hexfloat(const BigUInt& num, int exp2);

}  // namespace numref
