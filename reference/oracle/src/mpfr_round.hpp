// numref oracle — internal: rounding with MPFR onto the value grid of a format.
//   spec §4.1 (grid and quantum), §4.2 (deterministic modes), §6.5 (integers), §7.1 (E8M0)
#pragma once

#include <mpfr.h>

#include <cstdint>

#include "numref/format.hpp"

namespace numref::oracle::detail {

// Parameters of a format derived by the oracle itself from the stated columns.
struct Grid {
  int prec;          // significand precision m + 1 (floating point)
  long emin;         // exponent of the smallest normal binade: 2^emin (§3.2)
  long qmin;         // quantum of the lowest binade (formats with subnormals)
  bool subnormals;   // gradual underflow below 2^emin
  bool integer;      // quantum 1, no exponent
  bool code_parity;  // ties to the even CODE differ from MPFR's even significand (no fraction bits)
  int bias;
};
Grid grid_of(const Format& f);

// How the oracle rounds: MPFR's own modes, ties away from zero, or ties to the even code.
enum class Dir : std::uint8_t { nearest_even, nearest_away, toward_zero, up, down };

// A per-thread set of MPFR variables (initialised once per thread; MPFR is built with
// thread-local exponent ranges, mpfr_buildopt_tls_p()).
struct Scratch {
  mpfr_t x;   // operand, 64 bits (every code of every format is exact in 64 bits)
  mpfr_t y;   // rounded result, 64 bits
  mpfr_t u;   // rounded with an unbounded exponent range (tininess after, §9.2)
  mpfr_t t;   // working variable at the target precision
  mpfr_t lo;  // candidates for the tie rules
  mpfr_t hi;
  mpfr_t wide;  // exact sums, 1024 bits
  mpfr_t wide2;
  mpfr_t a;    // |y| and scaled copies used by the encoder, 64 bits
  mpfr_t sum;  // §5.2 the sum of the source pattern and r, 64 bits
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};
Scratch& scratch();

// The value of v, a non-negative integer below 2^64, read exactly without allocating.
std::uint64_t exact_u64(Scratch& s, const mpfr_t v);

// Rounds x onto the grid of `g` in direction `dir` into `out` (a 64-bit variable):
//   * floating point with subnormals: precision g.prec, and below 2^emin the fixed
//     quantum 2^qmin (mpfr_check_range + mpfr_subnormalize with emin = qmin + 1);
//     no upper bound on the exponent (overflow is decided by the caller, §6.1);
//   * `unbounded` or a format without subnormals: precision g.prec at every exponent;
//   * integers: quantum 1 (mpfr_rint).
// Returns true when the result differs from x.
bool round_to_grid(mpfr_t out, const mpfr_t x, const Grid& g, Dir dir, bool unbounded);

}  // namespace numref::oracle::detail
