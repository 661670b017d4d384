// numref oracle — an independent implementation of conversion (spec §3 – §11) on MPFR
// (deterministic modes) and exact rationals (stochastic rounding).
//
// It shares nothing with the reference core (numref_reference) but the descriptor
// table of numref/format.hpp and the knob enums of numref/policy.hpp: it decodes codes
// with its own field reader, rounds with MPFR (target precision, mpfr_check_range +
// mpfr_subnormalize for the subnormal grid), resolves §6 – §9 from the spec text and
// encodes with its own encoder. It does not call any function of numref_reference
// (not even numref::format() helpers beyond the table's stated columns).
//
// Used only by tests: it is slow compared with the core (a few hundred ns per case).
#pragma once

#include <cstdint>
#include <string>

#include <boost/multiprecision/cpp_int.hpp>

#include "numref/format.hpp"
#include "numref/policy.hpp"

namespace numref::oracle {

using Rational = boost::multiprecision::cpp_rational;
using BigInt = boost::multiprecision::cpp_int;

// A result: code and §9.1 flags (SoftFloat bit values, numref::Flag).
struct Out {
  std::uint32_t bits;
  std::uint8_t flags;
  friend bool operator==(const Out&, const Out&) = default;
};

// §3.1 The oracle's own reading of a code (written from the spec, not numref::decode).
enum class Kind : std::uint8_t { zero, subnormal, normal, inf, nan };
struct Value {
  Kind kind;
  bool sign;
  std::uint64_t sig;  // |v| = sig * 2^exp for zero/subnormal/normal; NaN: payload (fraction field)
  int exp;
  bool signaling;  // NaN of an ieee format with the top fraction bit clear (§6.3)
};
Value read_code(std::uint32_t code, const Format& f);

// Exact value of a finite code (zero included) as a rational. Throws for NaN / Inf.
Rational rational_value(std::uint32_t code, const Format& f);

// Orders two codes (possibly of different formats) by value: -1, 0, +1; -0 == +0,
// -Inf < finite < +Inf. Throws for NaN.
int compare_values(std::uint32_t a, const Format& fa, std::uint32_t b, const Format& fb);

// True when the code is a NaN of its format (§2.2).
inline bool is_nan(std::uint32_t code, const Format& f) { return read_code(code, f).kind == Kind::nan; }

// §4.3 / §5.2 Validity of a policy for a conversion into `to`: empty string when
// valid, else a message naming the problem.
std::string validate(const Policy& p, const Format& to);

// §11 Conversion of `code` (format `from`) into `to` under `p`; `r` = random bits for
// round=sr. Throws std::invalid_argument for an invalid policy or r >= 2^k (§4.3).
Out convert(std::uint32_t code, const Format& from, const Format& to, const Policy& p, std::uint64_t r = 0);

// §5.1 For stochastic rounding tests: the two neighbours N * 2^q and (N + 1) * 2^q of
// the (finite, non-zero) value v in format `to` (q per §4.1, computed from the spec with
// rationals), and f_k = floor(f * 2^k) of the discarded fraction f.
struct SrSplit {
  Rational lower;  // |lower| = N * 2^q, with the sign of v
  Rational upper;  // |upper| = (N + 1) * 2^q, with the sign of v
  BigInt fk;       // floor(f * 2^k)
  int q;
};
SrSplit sr_split(const Rational& v, const Format& to, int k);

}  // namespace numref::oracle
