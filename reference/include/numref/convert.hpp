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
Result convert(std::uint32_t bits, const Format& from, const Format& to, const Policy& p,
               std::uint64_t r = 0);
inline Result convert(std::uint32_t bits, FormatId from, FormatId to, const Policy& p,
                      std::uint64_t r = 0) {
  return convert(bits, format(from), format(to), p, r);
}

// Checks that a policy is well formed for a conversion into `to` (§4.3, §5.4):
// returns an error message naming the problem, or an empty string.
std::string validate(const Policy& p, const Format& to);

// A conversion bound to (from, to, policy), validated once; operator() is the
// same function as convert() (tests check this exhaustively) without re-validation.
class Converter {
 public:
  Converter(const Format& from, const Format& to, const Policy& p);
  Converter(FormatId from, FormatId to, const Policy& p) : Converter(format(from), format(to), p) {}
  Result operator()(std::uint32_t bits, std::uint64_t r = 0) const;
  const Format& from() const { return *from_; }
  const Format& to() const { return *to_; }
  const Policy& policy() const { return p_; }

 private:
  const Format* from_;
  const Format* to_;
  Policy p_;
  detail::Target t_;
};

}  // namespace numref
