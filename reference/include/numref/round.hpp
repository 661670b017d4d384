// numref — the one rounding core.                   spec §4, §5, §6, §7, §8, §9
//
// round_finite() takes an exact (or exact-with-sticky) non-negative magnitude and
// a sign, a target format and a Policy, and returns the target code and the flags.
// Every conversion, every scale computation that rounds to a format (RN32 of a
// quotient or product), every quantize step ends here.
#pragma once

#include <cstdint>

#include "numref/format.hpp"
#include "numref/policy.hpp"

namespace numref {

// §4.1 A finite operand of the rounding core:
//     |x| = (sig + e) * 2^exp,   e = 0 if !sticky, 0 < e < 1 if sticky.
// `sticky` records that non-zero bits exist below sig's last bit (e.g. the
// remainder of a division). Precondition when sticky: sig has enough low-order
// bits that the sticky part lies below the target quantum (callers provide >= 64
// significant bits, see divide_to_exact()); with stochastic rounding, at least k
// bits below the target quantum as well.
struct Exact {
  bool sign;
  std::uint64_t sig;
  int exp;
  bool sticky;
};

struct Result {
  std::uint32_t bits;
  std::uint8_t flags;
  friend bool operator==(const Result&, const Result&) = default;
};

// §4–§9 Round a finite value (zero included) to `to` under `p`. `r` is the random
// value for stochastic rounding (its low p.sr_bits bits are used).
Result round_finite(const Exact& x, const Format& to, const Policy& p, std::uint64_t r = 0);

// §4.4 Exact quotient a / b of two positive integers, with 64 significant bits and a
// sticky bit: the operand for a correctly rounded division ("RN32(q_max / amax)").
Exact divide_to_exact(bool sign, std::uint64_t a, int a_exp, std::uint64_t b, int b_exp);

namespace detail {
// Constants of a rounding target, derived once from the format row and the policy
// (a Converter holds one; round_finite() builds one per call).
struct Target {
  const Format* f;
  Round mode;              // effective rounding mode (§7.1)
  std::uint64_t max_n[2];  // largest finite magnitude max_n * 2^max_q, [0] positive, [1] negative
  int max_q[2];
  int max_e[2];  // floor(log2(max finite magnitude))
  int emin, qmin, man, bias;
  std::uint32_t sign_bit;  // 0 for unsigned targets
  bool fast;               // floating-point target: the in-range fast path applies
};
Target make_target(const Format& to, const Policy& p);
// The core proper: `mode` decides the rounding, `ovf_mode` the IEEE 754 §7.4 overflow
// direction (they differ only for §5.2, which truncates but overflows like SR).
Result round_core(const Exact& x, const Target& t, const Policy& p, Round mode, Round ovf_mode, std::uint64_t r);
}  // namespace detail

// §7.1 The effective rounding mode for a target: for targets without fraction bits
// (f8e8m0fnu) Policy::e8m0_round is mapped onto Round (floor->rtz, ceil->rup,
// even->rne, tiesup->rna); otherwise Policy::round.
Round effective_round(const Format& to, const Policy& p);

}  // namespace numref
