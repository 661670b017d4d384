// numref backend "cpu-fast" — the byte-lane function itself (private to cpu-fast): one source
// code in a 16-bit lane word to one narrow target code, branch-free (see lane() below). Shared by
// the casts' byte lanes (fast_lanes.cpp) and the block quantizer's streaming kernel
// (fast_quant.cpp), so that both encode elements by the same code.       spec §4.1, §6, §9, §11
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "fast_lanes.hpp"

namespace numref::cpu_fast::lane_fn {

constexpr std::uint32_t NX = kInexact, UF = kUnderflow;

template <class W>
inline W sel(W cond01, W a, W b) {  // cond ? a : b
  const W m = static_cast<W>(0u - cond01);
  return static_cast<W>((a & m) | (b & ~m));
}

// One source code u (the low SB bits; SM mantissa and SE exponent bits, IEEE layout): the
// target code, and its flags in `fl` when FLAGS. Branch-free integer code that GCC vectorises
// (select masks instead of branches). NaN operands give garbage here (the caller recomputes them).
//
// With ef the exponent field, sig the significand (implicit bit for ef > 0) and the value
// sig * 2^(max(ef, 1) - bias - SM): the target quantum is 2^qt with qt = max(E - m, qmin), so the
// kept part is sig >> d, d = qt - (max(ef, 1) - bias - SM) = max(SM - m, dk - max(ef, 1)) (at
// most the word's bits - 1: everything shifted out rounds to zero). §4.1 RNE by the carry of
// sig + (2^(d-1) - 1) + (the kept part's parity); parity of the code = parity of the kept part
// (m >= 1). The code = the binades above the subnormals, (max(ef - ek, 0) << m), plus the
// rounded kept part (a carry into the next binade lands on its code).
//
// W is the lane word: uint16_t for bf16, f16 and squeezed f32 codes (every quantity fits:
// sig < 2^11, d <= 15, codes < 2^12), so that a vector holds twice the lanes of 32-bit words.
template <class W, int SM, int SE, bool FLAGS>
[[gnu::always_inline]] inline W lane(W u, const ByteLanes::Consts& c, W& fl) {
  using S = std::make_signed_t<W>;
  constexpr int SB = 8 * sizeof(W);
  constexpr W kMag = static_cast<W>((1u << (SB - 1)) - 1u);
  constexpr W kMan = static_cast<W>((1u << SM) - 1u);
  constexpr W kInf = static_cast<W>(((1u << SE) - 1u) << SM);
  constexpr S kDmax = static_cast<S>(SB - 1);
  const W a = static_cast<W>(u & kMag);
  const W ef = static_cast<W>(a >> SM);
  const W sub = static_cast<W>(ef == 0);
  const W sig = static_cast<W>((a & kMan) | ((sub ^ 1u) << SM));
  // (& kDmax: no change of value, but it tells GCC that the shifts fit the lane word)
  const W d = static_cast<W>(
      std::min(std::max(static_cast<S>(c.d0), static_cast<S>(c.dk - static_cast<S>(std::max(ef, W{1})))), kDmax) &
      kDmax);
  const W q = static_cast<W>(W{1} << d);
  const W kept = static_cast<W>(sig >> d);
  const W rounded = static_cast<W>(static_cast<W>(sig + static_cast<W>((q >> 1) - 1u) + (kept & 1u)) >> d);
  const W base =
      static_cast<W>(static_cast<W>(std::max(static_cast<S>(static_cast<S>(ef) - static_cast<S>(c.ek)), S{0})) *
                     static_cast<W>(c.one_m));
  const W code = static_cast<W>(base + rounded);
  const W ovf = static_cast<W>(code > static_cast<W>(c.maxc));
  const W is_inf = static_cast<W>(a == kInf);
  const W sgn = static_cast<W>(static_cast<W>(0u - static_cast<W>(u >> (SB - 1))) & static_cast<W>(c.sign_bit));
  const W res =
      static_cast<W>(sel<W>(ovf, sel<W>(is_inf, static_cast<W>(c.inf_mag), static_cast<W>(c.ovf_mag)), code) | sgn);
  if constexpr (FLAGS) {
    // §9.2 tininess: the exponent before rounding (before), or after rounding with the target's
    // precision and an unbounded exponent range (after: the carry of rounding the source's bits
    // at position SM - m; a source subnormal is first normalised by one place, enough here
    // because the target's emin is at least the source's), against the target's emin (ek).
    const W at = static_cast<W>(a << sub);
    const S er =
        static_cast<S>(static_cast<S>(static_cast<W>(
                           static_cast<W>(at + static_cast<W>(c.tiny_rb) + ((at >> c.d0) & c.tiny_odd)) >> SM)) -
                       static_cast<S>(sub));
    const W tiny = static_cast<W>(er < static_cast<S>(c.ek));
    const W inexact = static_cast<W>((sig & static_cast<W>(q - 1u)) != 0);
    W f = static_cast<W>(inexact * NX | (inexact & tiny) * UF);
    f = sel<W>(ovf, sel<W>(is_inf, static_cast<W>(c.inf_fl), static_cast<W>(c.ovf_fl)), f);
    fl = f;
  }
  return res;
}

// An f32 code squeezed to a 16-bit (bfloat16-layout) lane word: the upper half with a sticky bit
// OR-ed into its lowest bit when the lower half is not zero (f32 rounded to odd at 8 significant
// bits; see fast_lanes.cpp lanes_impl for why the lanes' result is the f32 value's).
[[gnu::always_inline]] inline std::uint16_t squeeze_f32(std::uint32_t x) {
  return static_cast<std::uint16_t>((x >> 16) | static_cast<std::uint32_t>((x & 0xFFFFu) != 0));
}

}  // namespace numref::cpu_fast::lane_fn
