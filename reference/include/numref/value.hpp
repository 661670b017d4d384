// numref — exact values of code points.                    spec §3 (Exact values)
//
// Every finite code point of every format is a dyadic rational
//     v = (-1)^sign * sig * 2^exp      (sig a non-negative integer)
// decode() returns that triple exactly; encode_exact() maps an exactly representable
// triple back to its code. No host floating-point arithmetic is involved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "numref/format.hpp"

namespace numref {

enum class Class : std::uint8_t { zero, subnormal, normal, inf, nan };
std::string_view to_string(Class c);

// §3.1 Decoded code point. For zero/subnormal/normal: |v| = sig * 2^exp, with
// sig = 1.fraction (man_bits+1 bits) for normal numbers and 0.fraction for subnormals.
// For NaN: sig holds the raw fraction field (the payload), exp = 0. For Inf: sig = 0.
// For integers: sig = |v|, exp = 0.
struct Decoded {
  Class cls;
  bool sign;
  std::uint64_t sig;
  int exp;
  // fields as stored (for `numref explain`)
  std::uint32_t exp_field;
  std::uint32_t man_field;
};

// §3.1 Exact decode of a code point (bits above the format's width are ignored).
Decoded decode(std::uint32_t code, const Format& f);

// §3.3 Exact encode: the code of (-1)^sign * sig * 2^exp if that value is a finite
// code point of f (sig == 0 gives the signed zero where the format has one), else nullopt.
std::optional<std::uint32_t> encode_exact(bool sign, std::uint64_t sig, int exp, const Format& f);

// Canonical codes (§3.3).
std::uint32_t encode_zero(bool sign, const Format& f);        // requires f.has_zero
std::uint32_t encode_inf(bool sign, const Format& f);         // requires f.has_inf()
std::uint32_t encode_max_finite(bool sign, const Format& f);  // integers: 127 / -128
std::uint32_t encode_min_positive(const Format& f);           // smallest positive finite

namespace detail {
// Code of (-1)^sign * n * 2^q where (n, q) is already a representable finite value
// in the format's grid (n != 0; q >= qmin for subnormals). Used by the rounding core.
inline std::uint32_t encode_grid(bool sign, std::uint64_t n, int q, const Format& f);
// Largest finite magnitude as n * 2^q (for integers it depends on the sign and range:
// 127, or 128 for negatives of the full two's complement range).
struct Magnitude {
  std::uint64_t n;
  int q;
};
Magnitude max_magnitude(const Format& f, bool negative, bool int_symmetric);
inline int bit_length(std::uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

inline std::uint32_t encode_grid(bool sign, std::uint64_t n, int q, const Format& f) {
  if (f.is_integer()) {
    const std::uint64_t v = n << q;  // q == 0 for integers
    const std::uint64_t c = sign ? (~v + 1) : v;
    return static_cast<std::uint32_t>(c) & f.mask();
  }
  const int bl = bit_length(n);
  const int e = q + bl - 1;
  std::uint32_t mag;
  if (f.has_subnormals && e < f.emin()) {
    mag = static_cast<std::uint32_t>(n);  // q == qmin: n is the fraction field
  } else {
    const int top = bl - 1;
    const std::uint64_t frac =
        (top >= f.man_bits ? (n >> (top - f.man_bits)) : (n << (f.man_bits - top))) & f.man_mask();
    mag = (static_cast<std::uint32_t>(e + f.bias) << f.man_bits) | static_cast<std::uint32_t>(frac);
  }
  return mag | (sign ? f.sign_bit() : 0u);
}
}  // namespace detail

// Decimal expansion of the exact value of a finite code point, e.g. "-0.001953125",
// and the C99 hex-float spelling, e.g. "-0x1p-9" (§3.4; used by `numref explain`).
std::string exact_decimal(const Decoded& d);
std::string exact_hexfloat(const Decoded& d);

}  // namespace numref
