// numref CUDA kernels — the hardware conversion path (sm_89+ / sm_80+).              spec §A.5
//
// On sm_89 and newer, `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b` converts two f32 values
// to two 8-bit codes (a in the high byte of d, b in the low byte). PTX ISA (cvt, .satfinite):
// rounding .rn is round-to-nearest-even; "if the input value is NaN, then the result is NaN
// in the specified destination format; if the absolute value of input (ignoring sign) is
// greater than MAX_NORM of the destination format, the result is sign-preserved MAX_NORM"
// — so ±Inf and every overflow give ±max finite, and subnormal results are kept. That is
// the cuda_satfinite arithmetic of §10.1 except for the NaN code, which the ISA leaves open
// (which NaN, and its sign): the kernels therefore re-encode NaN (and, for policies with
// inf_sat=keep, ±Inf) lanes with the portable special-value functions of cast.cuh, so the
// hardware path's output is the portable path's output bit for bit (§A.5). The device test
// (test_cuda_device_cast) checks this on a GPU; no host run can.
//
// On sm_80 and newer, `cvt.rn.bf16x2.f32 d, a, b` rounds two f32 values to bf16 (RNE, IEEE
// overflow to ±Inf, NaN to a canonical NaN, no flush of subnormals); NaN lanes are again
// re-encoded.
#pragma once

#include <cstdint>

#include "numref/format.hpp"
#include "numref_arith/cast.cuh"

namespace numref_cuda::kernels {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
inline constexpr bool kHardwareF8 = true;
#else
inline constexpr bool kHardwareF8 = false;
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
inline constexpr bool kHardwareBf16 = true;
#else
inline constexpr bool kHardwareBf16 = false;
#endif

// The PTX instruction that implements a target: the hardware names formats in its
// instruction set, so this is the one place a format identity selects code. An 8-bit
// target without an instruction here has no hardware path.
template <numref::FormatId D>
struct HwF8 {
  static constexpr bool available = false;
};
template <>
struct HwF8<numref::FormatId::f8e4m3fn> {
  static constexpr bool available = true;
};
template <>
struct HwF8<numref::FormatId::f8e5m2> {
  static constexpr bool available = true;
};

// §A.5 Two f32 codes (lo, hi) -> two 8-bit codes packed as lo | hi << 8.
template <numref::FormatId D>
__device__ __forceinline__ std::uint32_t hw_cvt_f8x2(std::uint32_t lo, std::uint32_t hi) {
  std::uint16_t d = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (D == numref::FormatId::f8e4m3fn) {
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "r"(hi), "r"(lo));
  } else if constexpr (D == numref::FormatId::f8e5m2) {
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "r"(hi), "r"(lo));
  }
#endif
  (void)lo;
  (void)hi;
  return d;
}

// §A.5 Two f32 codes (lo, hi) -> two bf16 codes packed as lo | hi << 16.
__device__ __forceinline__ std::uint32_t hw_cvt_bf16x2(std::uint32_t lo, std::uint32_t hi) {
  std::uint32_t d = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "r"(hi), "r"(lo));
#endif
  (void)lo;
  (void)hi;
  return d;
}

}  // namespace numref_cuda::kernels
