// numref CUDA kernels — amax as an integer maximum.                               spec §13, §A.7
//
// Every element contributes one 32-bit *key*; the amax of any set of elements is the integer
// maximum of its keys (§13.4: binary32 codes of non-negative values, +Inf and the canonical NaN
// order like integers, NaN above +Inf above every finite value). The key applies the §13.2
// policies to the element itself:
//   finite element      its magnitude widened exactly to binary32 (§12.1);
//   ±Inf                +Inf (0x7F800000) under amax_inf=propagate, else 0;
//   NaN                 the canonical NaN (0x7FC00000) under amax_nan=propagate, else 0.
// So "NaN is examined first" (§13.2) is just "NaN > Inf", a set with nothing left has amax +0,
// and because max is associative and commutative on integers, every reduction tree (warp
// shuffles, atomicMax on u32, any grid order) yields the reference's amax bit for bit.
#pragma once

#include <cstdint>

#include "numref_arith/cast.cuh"
#include "numref_arith/f32.cuh"
#include "numref_arith/intmath.cuh"

namespace numref_cuda {

// §13.2 The amax policies of one launch.
struct AmaxPolicy {
  bool ignore_nan = false;  // amax_nan=ignore
  bool ignore_inf = false;  // amax_inf=ignore
};

// §12.1 The binary32 code of the finite magnitude `mag` of a source format S (exact: every
// finite value of a source format is a binary32 value, normal in binary32 unless S is f32).
template <class S>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t widen_finite_mag(std::uint32_t mag) {
  if constexpr (S::exp_bits == 8 && S::bias == 127) {
    return mag << (32 - S::bits);  // f32, bf16: the top bits of a binary32 code
  } else {
    if (mag == 0u) return 0u;
    const detail::Unpacked u = detail::unpack<S>(mag);
    const int len = bitlen32(u.sig);
    const int E = u.exp + len - 1;  // >= -126 for every narrower source (f16: >= -24)
    return (static_cast<std::uint32_t>(E + 127) << 23) | ((u.sig << (24 - len)) & 0x7FFFFFu);
  }
}

// §13.1 / §13.2 The amax key of one source code.
template <class S>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t amax_key(std::uint32_t code, const AmaxPolicy& p) {
  const std::uint32_t mag = code & S::mag_mask;
  if (detail::is_nan_mag<S>(mag)) return p.ignore_nan ? 0u : kF32NaN;
  if (detail::is_inf_mag<S>(mag)) return p.ignore_inf ? 0u : kF32Inf;
  return widen_finite_mag<S>(mag);
}

// §24.2 The key of the smallest non-zero magnitude: the widened magnitude of a finite non-zero
// element, 0xFFFFFFFF (no contribution) otherwise. The minimum of a set is the integer minimum.
inline constexpr std::uint32_t kNoMin = 0xFFFFFFFFu;
template <class S>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t min_key(std::uint32_t code) {
  const std::uint32_t mag = code & S::mag_mask;
  if (mag == 0u || detail::is_nan_mag<S>(mag) || detail::is_inf_mag<S>(mag)) return kNoMin;
  return widen_finite_mag<S>(mag);
}

// §13.1 The reduced keys are already the amax: +0, a positive finite binary32 code, +Inf or
// the canonical NaN (a key is one of these for every element, and max picks one of them).
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t amax_max(std::uint32_t a, std::uint32_t b) { return a > b ? a : b; }
NUMREF_HD NUMREF_FORCEINLINE bool amax_poisoned(std::uint32_t amax) { return !f32_finite(amax); }  // §13.3

}  // namespace numref_cuda
