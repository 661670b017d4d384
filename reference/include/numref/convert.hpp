// numref — conversion between any two formats.                 spec §11 (Conversion)
#pragma once

#include <cstdint>

#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref/round.hpp"
#include "numref/value.hpp"

namespace numref {

// §11 Convert the code `bits` of format `from` to format `to` under policy `p`.
// `r` carries the random bits for stochastic rounding (p.round == Round::sr).
// Throws std::invalid_argument if the policy is malformed (e.g. sr with k outside 1..32).
Result convert(std::uint32_t bits, const Format& from, const Format& to, const Policy& p, std::uint64_t r = 0);
inline Result convert(std::uint32_t bits, FormatId from, FormatId to, const Policy& p, std::uint64_t r = 0) {
  return convert(bits, format(from), format(to), p, r);
}

// Checks that a policy is well formed for a conversion into `to` (§4.3, §5.4):
// returns an error message naming the problem, or an empty string.
std::string validate(const Policy& p, const Format& to);

// A conversion bound to (from, to, policy), validated once; operator() is the
// same function as convert() (tests check this exhaustively) without re-validation.
namespace detail {
// §11.1 The bit-level path of a Converter between two binary floating-point formats (signed,
// with subnormals, the target with fewer fraction bits), precomputed at construction. For a
// normal operand whose value lies in the target's normal range, rounding to the target is
// rounding the source pattern, rebiased, at d = (source fraction bits − target fraction
// bits): the carry out of the fraction is the step to the next binade. Below half the
// smallest subnormal and at or beyond 2^(emax+1) the result of a deterministic mode depends
// on the sign alone and is taken from a table computed by the generic core. Everything
// else (subnormal results, the top binade when it overflows, specials, §5.2) goes to the
// generic core. Equality with the generic core is tested on every 8/16-bit code and on
// structured and random binary32 codes (test_convert_fastpath), and by the 2^32 sweep.
struct BinadePath {
  bool on = false;
  bool constants = false;  // deterministic mode: the two constant regions apply
  Round mode = Round::rne;
  int k = 0;                 // sr_bits (mode sr, §5.1)
  int d = 0;                 // fraction bits dropped
  int ef_lo = 0, ef_hi = 0;  // source exponent fields whose values are normal in the target
  int ef_tiny = 0;           // fields 1..ef_tiny: |x| < 2^(qmin−1)
  std::uint32_t sign_in = 0, sign_out = 0, mag_mask = 0;
  int man_in = 0;
  std::int64_t rebias = 0;     // (source bias − target bias) << source fraction bits
  std::uint32_t max_code = 0;  // magnitude code of the largest finite target value
  Result ovf[2]{}, tiny[2]{};  // [sign]
};
}  // namespace detail

class Converter {
 public:
  Converter(const Format& from, const Format& to, const Policy& p) : Converter(from, to, p, true) {}
  Converter(FormatId from, FormatId to, const Policy& p) : Converter(format(from), format(to), p) {}
  Result operator()(std::uint32_t bits, std::uint64_t r = 0) const;
  const Format& from() const { return *from_; }
  const Format& to() const { return *to_; }
  const Policy& policy() const { return p_; }

 private:
  // binade = false: no §11.1 tables (convert() builds a Converter for a single operand,
  // where computing them would cost more than it saves).
  Converter(const Format& from, const Format& to, const Policy& p, bool binade);
  friend Result convert(std::uint32_t, const Format&, const Format&, const Policy&, std::uint64_t);
  const Format* from_;
  const Format* to_;
  Policy p_;
  detail::Target t_;
  detail::BinadePath bp_;
  std::uint32_t from_special_;  // from_->first_special_magnitude() (§2.2), read per operand
};

}  // namespace numref
