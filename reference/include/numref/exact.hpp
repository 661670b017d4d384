// numref — small exact-arithmetic helpers for scales and quantization.
//   spec §1.2 (RN32), §3 (exact values), §4.4 (correctly rounded division); used by §13–§20
//
// Every helper here either is exact (products, comparisons, exponents of dyadic values)
// or ends in the one rounding core (round_finite / detail::round_core): there is no
// second rounding implementation. An operand is a numref::Exact with sticky == false
// ("a dyadic value"), except the quotients of exact_div(), which carry 64 significant bits
// and a sticky bit, exactly as divide_to_exact() builds them for the core (§4.4).
#pragma once

#include <cstdint>

#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref/round.hpp"
#include "numref/value.hpp"

namespace numref {

// ---- binary32 constants (codes) -------------------------------------------------------
inline constexpr std::uint32_t kF32One = 0x3F800000u;     // 1.0
inline constexpr std::uint32_t kF32Max = 0x7F7FFFFFu;     // (2 - 2^-23) * 2^127
inline constexpr std::uint32_t kF32Inf = 0x7F800000u;     // +Inf
inline constexpr std::uint32_t kF32NaN = 0x7FC00000u;     // canonical quiet NaN, positive
inline constexpr std::uint32_t kF32MinSub = 0x00000001u;  // 2^-149

// §3.1 The exact value of a finite code (zero, subnormal or normal) of `f` as a dyadic
// Exact (sticky = false). Throws std::invalid_argument for a NaN or infinite code.
Exact exact_value(std::uint32_t code, const Format& f);
inline Exact exact_f32(std::uint32_t bits) { return exact_value(bits, format(FormatId::f32)); }
// The dyadic value 2^e.
constexpr Exact exact_pow2(int e) { return Exact{false, 1, e, false}; }

// §1.2 E(v) = floor(log2 |v|) of a non-zero dyadic value (exact: the position of the top bit).
int ilog2(const Exact& v);
// Exact comparison of magnitudes of two dyadic values: -1, 0 or +1 for |a| <, =, > |b|.
int compare_abs(const Exact& a, const Exact& b);
// True iff the dyadic value is an integer power of two (non-zero).
bool is_pow2(const Exact& v);

// The exact product a * b of two dyadic values. The significands' product must fit in
// 64 bits after trailing zeros are removed (every product in §14–§20 multiplies values of
// at most 24 significant bits); otherwise std::logic_error.
Exact exact_mul(const Exact& a, const Exact& b);
// The quotient a / b (b != 0) as a rounding-core operand: 64 significant bits and a sticky
// bit, by divide_to_exact() (§4.4). Rounded once by the core it is the correctly rounded
// quotient in every format and mode (incl. stochastic rounding with k <= 32).
Exact exact_div(const Exact& a, const Exact& b);

// A rounding target bound once: the format, the policy and the core's precomputed
// constants. operator() is round_finite(x, to, p, r) without re-deriving the target.
class Rounder {
 public:
  Rounder(const Format& to, const Policy& p);  // throws std::invalid_argument if validate() fails
  Result operator()(const Exact& x, std::uint64_t r = 0) const {
    return detail::round_core(x, t_, p_, t_.mode, t_.mode, r);
  }
  const Format& to() const { return *t_.f; }
  const Policy& policy() const { return p_; }

 private:
  detail::Target t_;
  Policy p_;
};

// §1.2 RN32: the binary32 value nearest to the exact operand, ties to even, IEEE 754
// overflow to ±Inf and gradual underflow (policy: the `ocp` wide policy). Returns the code.
std::uint32_t rn32(const Exact& x);
inline std::uint32_t rn32_mul(const Exact& a, const Exact& b) { return rn32(exact_mul(a, b)); }
inline std::uint32_t rn32_div(const Exact& a, const Exact& b) { return rn32(exact_div(a, b)); }
// §14.1 RN32 clamped to the finite range: an overflow gives ±max finite (0x7F7FFFFF)
// instead of ±Inf, i.e. min(RN32(v), FLT_MAX) for positive v (TransformerEngine's
// fminf(q / amax, FLT_MAX)).
std::uint32_t rn32_sat(const Exact& x);

// Sign-cleared f32 code classification helpers (f32 codes only).
constexpr bool f32_is_nan(std::uint32_t b) { return (b & 0x7FFFFFFFu) > kF32Inf; }
constexpr bool f32_is_inf(std::uint32_t b) { return (b & 0x7FFFFFFFu) == kF32Inf; }
constexpr bool f32_is_finite(std::uint32_t b) { return (b & 0x7FFFFFFFu) < kF32Inf; }

// §17.1 A finite non-zero dyadic value of at most 24 significant bits split as
// (1 + m / 2^23) * 2^e: e = E(v), m = the 23 fraction bits after the leading one
// (for a normal f32 code: the exponent and fraction fields).
struct MantExp {
  std::uint32_t m;  // 0 .. 2^23 - 1
  int e;
};
MantExp mant_exp(const Exact& v);

}  // namespace numref
