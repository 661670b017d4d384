// numref — the rounding increment: does the truncated candidate N become N + 1?
//                                                                  spec §4.1, §4.2, §5.1, §5.2
//
// The one definition of each rounding mode's decision, shared by the reference core
// (reference/src/round_core.hpp: the general path and the in-range fast path), the §11.1
// binade path (reference/src/convert.cpp) and the CUDA kernels (arith/include/numref_arith/
// cast.cuh, quantize.cuh), compiled by g++ and by nvcc for host and device. Each caller
// computes the inputs its own way (64- or 128-bit rests, sticky bits, compile-time modes)
// and asks this function; integer arithmetic only (§1.3).
#pragma once

#include <cstdint>

#include "numref/hd.hpp"
#include "numref/policy.hpp"

namespace numref {

// §4.2 / §5.1 Whether the mode rounds |x| = (N + f) * 2^q up to N + 1 (away from zero), with
// the discarded fraction given as  f = (rem + e) / (2 * half),  e = 0 if !sticky, 0 < e < 1 if
// sticky (half >= 1, rem < 2 * half): typically rem = the d discarded bits, half = 2^(d-1),
// sticky = non-zero bits below them; rem = 0 when nothing is discarded (any half >= 1). A
// caller that has classified f already passes rem = 0, 1, 2, 3 for f = 0, below 1/2, 1/2,
// above 1/2 with half = 2.
//   sign  x < 0 (rup / rdn);
//   odd   the CODE of N is odd (§4.2 ties to the even code: N's last bit where the target has
//         fraction bits, the biased exponent's for f8e8m0fnu); read on a tie only;
//   fk, r, k  (sr only) f truncated to k bits (fraction_bits), the random value r < 2^k, k in
//         1..32: up iff f_k + r >= 2^k (§5.1).
// §5.2 (sr_variant=add) adds r to the operand first and then truncates: its callers pass rtz.
// Each mode reads only what it needs, so that a caller with a compile-time mode (CUDA) or a
// predictable one (the reference's hot paths) pays for nothing else. The short-circuit || and
// && are deliberate: a branch-free form (bitwise | and &) is faster on random codes but slower
// on sweep-like input, the case docs/performance.md holds the §11.1 path to.
NUMREF_HD NUMREF_FORCEINLINE constexpr bool round_increment(Round mode, bool sign, std::uint64_t rem,
                                                            std::uint64_t half, bool sticky, bool odd,
                                                            std::uint64_t fk = 0, std::uint64_t r = 0, int k = 0) {
  switch (mode) {
    case Round::rne: return rem > half || (rem == half && (sticky || odd));  // f > 1/2, or a tie to an odd code
    case Round::rna: return rem >= half;                                     // f >= 1/2
    case Round::rtz: return false;
    case Round::rup: return (rem != 0u || sticky) && !sign;  // f > 0, x > 0
    case Round::rdn: return (rem != 0u || sticky) && sign;   // f > 0, x < 0
    case Round::sr: return fk + r >= (std::uint64_t{1} << k);
  }
  return false;
}

// §5.1 f_k: the d discarded bits `rem` (d >= 1) as a fraction truncated (or zero-extended) to k bits.
NUMREF_HD NUMREF_FORCEINLINE constexpr std::uint64_t fraction_bits(std::uint64_t rem, int d, int k) {
  return d >= k ? rem >> (d - k) : rem << (k - d);
}

}  // namespace numref
