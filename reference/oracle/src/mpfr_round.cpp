// numref oracle — rounding with MPFR onto the value grid of a format.
//   spec §4.1, §4.2, §6.5, §7.1
//
// Deterministic rounding is MPFR's: mpfr_set at the target precision (round to nearest
// even, toward zero, up, down), then mpfr_check_range + mpfr_subnormalize with
// emin = qmin + 1 so that values below 2^emin land on the fixed subnormal quantum (the
// idiom of the MPFR manual for emulating IEEE 754 subnormals). Two rules MPFR does not
// offer are built from its directed roundings: ties away from zero (§4.2 rna; MPFR
// reserves MPFR_RNDNA) and, for formats without fraction bits, ties to the even CODE
// (§4.2, §7.1): the candidates lo = RNDZ(x), hi = RNDA(x) are compared with x exactly.
#include "mpfr_round.hpp"

#include <stdexcept>

namespace numref::oracle::detail {

Grid grid_of(const Format& f) {
  Grid g{};
  g.integer = f.specials == Specials::integer;
  g.prec = f.man_bits + 1;
  g.bias = f.bias;
  g.subnormals = f.has_subnormals;
  // §3.2: emin = 1 - bias with subnormals (field 0 is the subnormal binade), else -bias.
  g.emin = f.has_subnormals ? 1L - f.bias : -static_cast<long>(f.bias);
  g.qmin = g.emin - f.man_bits;
  g.code_parity = !g.integer && f.man_bits == 0;
  return g;
}

Scratch::Scratch() {
  mpfr_inits2(64, x, y, u, t, lo, hi, a, sum, static_cast<mpfr_ptr>(nullptr));
  mpfr_inits2(1024, wide, wide2, static_cast<mpfr_ptr>(nullptr));
}
Scratch::~Scratch() { mpfr_clears(x, y, u, t, lo, hi, a, sum, wide, wide2, static_cast<mpfr_ptr>(nullptr)); }

std::uint64_t exact_u64(Scratch& s, const mpfr_t v) {
  (void)s;
  if (mpfr_zero_p(v)) return 0;
  const long e = static_cast<long>(mpfr_get_exp(v));  // v = 0.1b... * 2^e, so 2^(e-1) <= v < 2^e
  if (mpfr_sgn(v) < 0 || !mpfr_integer_p(v) || e > 64 || mpfr_get_prec(v) > GMP_NUMB_BITS)
    throw std::logic_error("oracle: not a u64");
  // One limb holds the whole significand, most significant bit first (MPFR custom interface).
  const auto* limb = static_cast<const mp_limb_t*>(mpfr_custom_get_significand(v));
  return static_cast<std::uint64_t>(limb[0]) >> (GMP_NUMB_BITS - e);
}

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

namespace {

// One MPFR rounding of x in MPFR mode `rnd` onto the grid; result (exact in 64 bits) in out.
void round_mpfr(mpfr_t out, const mpfr_t x, const Grid& g, mpfr_rnd_t rnd, bool unbounded) {
  if (g.integer) {
    mpfr_rint(out, x, rnd);  // out has 64 bits: every rounded operand fits (<= 64 significant bits)
    return;
  }
  Scratch& s = scratch();
  mpfr_set_prec(s.t, g.prec);
  int tern = mpfr_set(s.t, x, rnd);  // precision g.prec, the default (huge) exponent range
  // Below 2^emin the subnormal grid applies (|x| >= 2^emin rounds to >= 2^emin: nothing to do).
  if (g.subnormals && !unbounded && static_cast<long>(mpfr_get_exp(x)) - 1 < g.emin) {
    // Emulated exponent range: the smallest positive value 2^qmin = 0.1b * 2^(qmin+1).
    const mpfr_exp_t old_emin = mpfr_get_emin();
    if (mpfr_set_emin(g.qmin + 1) != 0) throw std::logic_error("oracle: mpfr_set_emin failed");
    tern = mpfr_check_range(s.t, tern, rnd);
    tern = mpfr_subnormalize(s.t, tern, rnd);
    mpfr_set_emin(old_emin);
  }
  (void)tern;
  if (mpfr_set(out, s.t, MPFR_RNDN) != 0) throw std::logic_error("oracle: inexact copy");
}

// §4.2 parity of the code of the power of two v (format without fraction bits): the
// code is the biased exponent E + bias (extended to every integer E for §7.4).
bool code_is_even(const mpfr_t v, const Grid& g) {
  const long e = static_cast<long>(mpfr_get_exp(v)) - 1;  // v = 0.1b * 2^EXP = 2^(EXP-1)
  const long biased = e + g.bias;
  return ((biased % 2) + 2) % 2 == 0;
}

}  // namespace

bool round_to_grid(mpfr_t out, const mpfr_t x, const Grid& g, Dir dir, bool unbounded) {
  if (mpfr_zero_p(x)) {
    mpfr_set(out, x, MPFR_RNDN);
    return false;
  }
  const bool by_code = dir == Dir::nearest_even && g.code_parity;
  if (dir == Dir::nearest_away || by_code) {
    Scratch& s = scratch();
    round_mpfr(s.lo, x, g, MPFR_RNDZ, unbounded);
    if (mpfr_equal_p(s.lo, x)) {
      mpfr_set(out, s.lo, MPFR_RNDN);
      return false;
    }
    round_mpfr(s.hi, x, g, MPFR_RNDA, unbounded);
    // 2|x| versus |lo + hi|: above the midpoint, below it, or a tie (all exact).
    if (mpfr_add(s.wide, s.lo, s.hi, MPFR_RNDN) != 0 || mpfr_mul_2ui(s.wide2, x, 1, MPFR_RNDN) != 0)
      throw std::logic_error("oracle: midpoint not exact");
    const int c = mpfr_cmpabs(s.wide2, s.wide);
    bool take_hi;
    if (c != 0)
      take_hi = c > 0;
    else if (dir == Dir::nearest_away)
      take_hi = true;
    // tie: the even code (§4.2, §7.1); a zero lo is code 00 (or the sign bit alone): even. (Its MPFR
    // exponent is not a number: p3109_k2p1sf, bias 1, would read 0 as odd.)
    else
      take_hi = !mpfr_zero_p(s.lo) && !code_is_even(s.lo, g);
    mpfr_set(out, take_hi ? s.hi : s.lo, MPFR_RNDN);
    return true;
  }
  mpfr_rnd_t rnd = MPFR_RNDN;
  switch (dir) {
    case Dir::nearest_even: rnd = MPFR_RNDN; break;
    case Dir::toward_zero: rnd = MPFR_RNDZ; break;
    case Dir::up: rnd = MPFR_RNDU; break;
    case Dir::down: rnd = MPFR_RNDD; break;
    case Dir::nearest_away: break;  // handled above
  }
  round_mpfr(out, x, g, rnd, unbounded);
  return !mpfr_equal_p(out, x);
}

}  // namespace numref::oracle::detail
