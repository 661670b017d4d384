// numref — Group Amax Mantissa scaling (MoR Algorithm 1).          spec §17
//
//   s_g = S(g_amax), m_g = mantissa(s_g)             one 23-bit mantissa per group
//   s_b = S(b_amax), m_b = mantissa(s_b), E_b = E(s_b)
//   e_b = E_b      if m_g <= m_b
//         E_b - 1  otherwise                         one E8M0 code (e_b + 127) per block
//   block scale G_b = (1 + m_g / 2^23) * 2^e_b
// where S(a) is the FP32 amax scale of §14.1 (RN32(q_max / a) clamped to max finite; 1.0
// for a = 0), so one block per group reproduces §14.1 bit for bit.
// §17.3 Range: S is monotone, so s_b >= s_g for every non-zero block of a group (b_amax <=
// g_amax); in the binade of s_g that means m_b >= m_g (no decrement), above it e_b >= E_b - 1
// >= E(s_g); a zero block has s_b = 1.0 and e_b in {0, -1}. With q_max >= 4 (§14.4)
// s_g >= 4 / FLT_MAX > 2^-126, hence -126 <= e_b <= 127: the E8M0 code is 01..FE, never 00,
// and G_b is the NORMAL binary32 value with exponent field e_b + 127 and fraction m_g, i.e.
// the bits (code << 23) | m_g.
// §17.4 proves that no element of a block saturates.
#pragma once

#include <cstdint>

#include "numref/exact.hpp"
#include "numref/scale.hpp"

namespace numref {

// §17.1 The per-group result: the group mantissa m_g (23 bits) and whether the group is
// poisoned (its amax is NaN or +Inf under the propagate policies of §13.2: every block of
// the group then gets the NaN code FF, and m_g is stored as 0).
struct GamGroup {
  std::uint32_t m_g = 0;
  bool poisoned = false;
  friend bool operator==(const GamGroup&, const GamGroup&) = default;
};
GamGroup gam_group(Amax g_amax, const Exact& q_max);

// §17.2 The E8M0 code (e_b + 127) of a block of the group `g`; FF for a poisoned group.
std::uint32_t gam_block_code(Amax b_amax, const GamGroup& g, const Exact& q_max);

// §17.3 The exact block scale G_b = (1 + m_g / 2^23) * 2^(code - 127) (code 00..FE).
Exact gam_block_scale(std::uint32_t code, std::uint32_t m_g);
// §17.3 G_b as a binary32 code: (code << 23) | m_g for codes 01..FE; NaN for FF. Code 00
// never comes out of gam_block_code() (§17.3); as metadata it is rejected
// (std::invalid_argument), since (1.m_g) * 2^-127 is not a binary32 value.
std::uint32_t gam_block_scale_f32(std::uint32_t code, std::uint32_t m_g);

}  // namespace numref
