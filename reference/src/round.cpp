// numref — the one rounding core.                 spec §4 – §9
//
// All arithmetic is on integers. The operand is |x| = (sig + e) * 2^exp (e in [0,1),
// non-zero iff sticky). The core
//   1. picks the target quantum 2^q (§4.1: q = max(E - m, qmin); 0 for integers),
//   2. splits |x| / 2^q into the truncated integer N and the discarded fraction,
//   3. decides whether to add one quantum (§4.2 deterministic modes, §5 stochastic),
//   4. resolves overflow (§6.1), tininess / underflow / flush (§8, §9.2), and encodes.
#include "numref/round.hpp"

#include <stdexcept>
#include <string>

#include "numref/value.hpp"
#include "round_core.hpp"

namespace numref {

using detail::bit_length;
using detail::u128;

Round effective_round(const Format& to, const Policy& p) {
  if (to.man_bits != 0 || to.is_integer()) return p.round;
  switch (p.e8m0_round) {  // §7.1
    case E8m0Round::follow: return p.round;
    case E8m0Round::floor: return Round::rtz;
    case E8m0Round::ceil: return Round::rup;
    case E8m0Round::even: return Round::rne;
    case E8m0Round::tiesup: return Round::rna;
  }
  return p.round;
}

detail::Target detail::make_target(const Format& to, const Policy& p) { return core_impl::make_target_inline(to, p); }

Result detail::round_core(const Exact& x, const Target& t, const Policy& p, Round mode, Round ovf_mode,
                          std::uint64_t r) {
  return core_impl::round_core_inline(x, t, p, mode, ovf_mode, r);
}

Result round_finite(const Exact& x, const Format& to, const Policy& p, std::uint64_t r) {
  const detail::Target t = core_impl::make_target_inline(to, p);
  return core_impl::round_core_inline(x, t, p, t.mode, t.mode, r);
}

Exact divide_to_exact(bool sign, std::uint64_t a, int a_exp, std::uint64_t b, int b_exp) {
  if (a == 0) return {sign, 0, 0, false};
  if (b == 0) throw std::invalid_argument("divide_to_exact: division by zero");
  const int la = bit_length(a), lb = bit_length(b);
  const int sh = 64 + lb - la;  // quotient gets 64 or 65 bits
  const u128 num = static_cast<u128>(a) << sh;
  u128 quo = num / b;
  bool sticky = (num % b) != 0;
  int exp = a_exp - b_exp - sh;
  if (quo >> 64) {
    sticky = sticky || (quo & 1);
    quo >>= 1;
    exp += 1;
  }
  return {sign, static_cast<std::uint64_t>(quo), exp, sticky};
}

}  // namespace numref
