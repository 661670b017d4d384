// numref — Group Amax Mantissa scaling (MoR Algorithm 1).          spec §17
//
// §17.4 No saturation (proof). Let b = b_amax > 0 be finite, s* = q_max / b, and
// s_b = RN32(s*) (or max finite f32 when s* overflows binary32). Write
// s_b = (1 + m_b / 2^23) 2^E_b and G_b = (1 + m_g / 2^23) 2^e_b.
//  (1) G_b <= s_b: if m_g <= m_b then e_b = E_b and (1 + m_g/2^23) <= (1 + m_b/2^23); else
//      e_b = E_b - 1 and G_b < 2 * 2^(E_b - 1) = 2^E_b <= s_b.
//  (2) s_b <= s* (1 + 2^-24): round-to-nearest errs by at most half an ulp of the binade of
//      s*, i.e. by at most 2^-24 s* (a clamped s_b is below s*).
//  (3) Hence for every element |x| <= b: |x G_b| <= b s_b <= q_max (1 + 2^-24)
//      < q_max + 2^(E(q_max) - 23) = q_max + ulp32(q_max) =: q_max⁺, because q_max < 2^(E(q_max)+1).
//      RN32 is monotone and q_max⁺ is a binary32 value, so |RN32(x G_b)| <= q_max⁺.
//  (4) If m_g < m_b, or e_b was decremented, or s_b was clamped, then G_b < s*. For
//      m_g < m_b: m_b > 0 puts s* in the binade of s_b, so s_b - s* <= 2^(E_b - 24) while
//      G_b <= s_b - 2^(E_b - 23). After a decrement: G_b <= (2 - 2^-23) 2^(E_b - 1)
//      = 2^E_b - 2^(E_b - 24), while s* (which rounds to s_b >= 2^E_b) is at least
//      2^E_b - 2^(E_b - 25), half an ulp of the binade below. Clamped: G_b <= s_b < s*.
//      Then |x G_b| < q_max and |RN32(x G_b)| <= q_max.
//  (5) Only blocks with m_b = m_g (e.g. the block holding the group amax, where G_b = s_b is
//      exactly the §14.1 scale) can reach q_max⁺, and q_max⁺ - q_max = 2^(E(q_max) - 23) is
//      below half an ulp of the element format at q_max (2^(E(q_max) - m - 1), m <= 21 for
//      every element format of §2.1). So the element conversion (§19.2) of RN32(x G_b) — or
//      of the exact x G_b under the fused variant — never overflows under rne, rna and rtz.
//      Rounding away from zero can: rup for positive and rdn for negative values, and sr with
//      k >= 23 - m random bits, may take a value in (q_max, q_max⁺] past max finite — the
//      same exposure as the plain FP32 amax scale (§14.1).
// tests/test_gam.cpp checks (3)–(5) as RapidCheck properties and shows a block where
// RN32(b_amax G_b) = q_max⁺ for f8e4m3fn.
#include "numref/gam.hpp"

#include <stdexcept>
#include <string>

namespace numref {

GamGroup gam_group(Amax g_amax, const Exact& q_max) {
  if (g_amax.poisoned()) return GamGroup{0, true};
  const std::uint32_t s_g = fp32_amax_scale(g_amax, q_max);  // §14.1, 1.0 for a zero group
  return GamGroup{mant_exp(exact_f32(s_g)).m, false};
}

std::uint32_t gam_block_code(Amax b_amax, const GamGroup& g, const Exact& q_max) {
  if (g.poisoned || b_amax.poisoned()) return 0xFFu;
  const std::uint32_t s_b = fp32_amax_scale(b_amax, q_max);  // 1.0 for a zero block
  const MantExp me = mant_exp(exact_f32(s_b));
  long e = g.m_g <= me.m ? me.e : me.e - 1;
  // E8M0 range. §17.3: e >= E(s_g) >= -126 and e <= E(FLT_MAX) = 127 for q_max >= 4, so the
  // clamp never binds; it is kept so that the code is in range by construction.
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return static_cast<std::uint32_t>(e + 127);
}

Exact gam_block_scale(std::uint32_t code, std::uint32_t m_g) {
  if (code > 0xFEu) throw std::invalid_argument("gam_block_scale: NaN block code");
  if (m_g > 0x7FFFFFu) throw std::invalid_argument("gam_block_scale: group mantissa wider than 23 bits");
  return Exact{false, (std::uint64_t{1} << 23) | m_g, static_cast<int>(code) - 127 - 23, false};
}

std::uint32_t gam_block_scale_f32(std::uint32_t code, std::uint32_t m_g) {
  if (code == 0xFFu) return kF32NaN;
  if (code == 0u)
    throw std::invalid_argument("gam_block_scale_f32: code 00 (2^-127) with a mantissa is not a binary32 value");
  if (m_g > 0x7FFFFFu) throw std::invalid_argument("gam_block_scale_f32: group mantissa wider than 23 bits");
  return (code << 23) | m_g;
}

}  // namespace numref
