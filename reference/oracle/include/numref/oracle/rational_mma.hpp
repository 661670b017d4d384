// numref oracle — the mma dot product by value.              spec §37, §38
//
// A second implementation of §37 and §38 that shares nothing with numref_reference's
// mma.cpp: operands are rationals (rational_round.hpp's decode), exponents come from
// floor_log2 by comparison, every alignment is a rational truncation toward zero, and the
// final rounding is rational_round's. It reads the knob struct and the format table only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "numref/format.hpp"
#include "numref/mma.hpp"
#include "numref/oracle/rational_round.hpp"

namespace numref::oracle::rat {

// How the operands are read (§36.2): the format and the bits ignored.
struct MmaOperands {
  FormatId a, b, c, scale;
  std::uint32_t ignore_a = 0, ignore_b = 0, ignore_scale = 0;
  int block = 0;  // scale block along K (0 = no scales)
};

// d = c + Σ_{k<K} a[k]·b[k] (scales sa[k / block], sb[k / block]) under the knobs, with
// `fused` products per step (§38.1). Returns D's code (C's format).
std::uint32_t mma_dot(const MmaKnobs& knobs, std::size_t fused, const MmaOperands& in, std::size_t K,
                      const std::uint32_t* a, const std::uint32_t* b, std::uint32_t c, const std::uint32_t* sa,
                      const std::uint32_t* sb);

// §40 RN(x + y) of two accumulator codes of f (binary32 or binary16): IEEE 754 addition, rne,
// NaN operands and Inf - Inf give the canonical NaN; an exact zero sum is +0 unless both are -0.
std::uint32_t add_rn(std::uint32_t x, std::uint32_t y, const Format& f);

// §40.5 RN32(r + RN32(a · b) · q) of binary32 codes, the second product exact (a fused
// multiply-add); NaN operands, Inf · 0 and Inf − Inf give the canonical NaN.
std::uint32_t scaled_add_rn32(std::uint32_t r, std::uint32_t a, std::uint32_t b, std::uint32_t q);

}  // namespace numref::oracle::rat
