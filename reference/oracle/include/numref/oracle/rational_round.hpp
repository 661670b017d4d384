// numref oracle — exact rational decoding and rounding (Boost.Multiprecision cpp_rational).
//   spec §3 (exact values), §4 (rounding), §5.1 (stochastic rounding), §6 (overflow, specials)
//
// An independent second implementation for the scale / quantize oracle (rational_quantize):
// it shares nothing with numref_reference but the format table (numref/format.hpp) and the
// Policy knob definitions (numref/policy.hpp), and it computes by value (rationals,
// logarithms by comparison with powers of two), never by bit manipulation of significands.
// Supported policy subset: every rounding mode (sr: variant `fraction`; variant `add` is
// handled by rational_quantize on binary32 patterns), overflow, inf_sat, nan, nan_to_finite,
// int_range. daz / ftz are not modelled (the oracle rejects them).
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>

#include "numref/format.hpp"
#include "numref/policy.hpp"

namespace numref::oracle::rat {

using BigInt = boost::multiprecision::cpp_int;
using Rational = boost::multiprecision::cpp_rational;

Rational pow2(int e);
// floor(log2 a) for a > 0.
int floor_log2(const Rational& a);
// ceil(log2 a) for a > 0.
int ceil_log2(const Rational& a);

// §3.1 A decoded code: kind, sign, exact value (finite), NaN fraction field.
struct Value {
  enum Kind { finite, inf, nan } kind = finite;
  bool sign = false;
  Rational v = 0;             // signed exact value (finite)
  std::uint64_t payload = 0;  // NaN fraction field
};
Value decode(std::uint32_t code, const Format& f);
// The code of the exact value `v` (which must be on f's grid and within range; sign of a
// zero from `zero_sign`).
std::uint32_t encode(const Rational& v, bool zero_sign, const Format& f);
// Largest finite magnitude (integers: 127, or 128 for a negative full-range result).
Rational max_finite(const Format& f, bool negative, bool int_symmetric);

struct Rounded {
  std::uint32_t code = 0;
  bool overflow = false;  // §6.1 (floating-point targets)
  bool invalid = false;   // §6.5 out-of-range integer, §6.2 / §6.4 invalid cases
};
// §4 / §5.1 / §6.1 Round the finite v into f. `mode` decides the rounding, `ovf_mode` the
// IEEE 754 §7.4 overflow direction. r: the random value for sr (k = p.sr_bits).
Rounded round(const Rational& v, bool zero_sign, const Format& f, Round mode, Round ovf_mode, const Policy& p,
              std::uint64_t r);
// §6.2 an infinite operand into f.
Rounded inf_to(bool sign, const Format& f, const Policy& p);
// §6.3 / §6.4 a NaN with sign and fraction field `payload` of a source with `from_man`
// fraction bits (ieee-family source) into f. `signaling` per §6.3.
Rounded nan_to(bool sign, std::uint64_t payload, int from_man, bool from_ieee, const Format& f, const Policy& p);
// §11 A conversion code -> code (floating-point source), without daz.
Rounded convert(std::uint32_t code, const Format& from, const Format& to, const Policy& p, std::uint64_t r = 0);

// §1.2 RN32 of an exact value (rne, overflow to ±Inf) and its finite-clamped form.
// `zero_sign` is the sign of an exact zero result (IEEE 754: the sign of a product or
// quotient of non-zero-signed operands, e.g. -3 * 0 = -0).
std::uint32_t rn32(const Rational& v, bool zero_sign = false);
std::uint32_t rn32_sat(const Rational& v);

}  // namespace numref::oracle::rat
