// numref CUDA kernels — compilation environment shared by host (g++) and device (nvcc).  spec §A.1
//
// Every per-element function of the kernels lives in a header and is marked NUMREF_HD, so
// that the same source is compiled three ways: by nvcc for the device (what the kernels
// run), by nvcc for the host, and by g++ for the host tests that compare it against the
// reference bit for bit (§A.4). No function here uses floating-point arithmetic: a float
// is only ever moved as its bit pattern (§1.3).
#pragma once

#include <cstdint>

#include "numref/hd.hpp"  // NUMREF_HD, NUMREF_FORCEINLINE (shared with the reference)
// Unroll hint for the device pass only: the host compilers (g++, and g++ behind nvcc's host
// pass) reject "#pragma unroll" under -Werror=unknown-pragmas and unroll on their own.
// NUMREF_NO_UNROLL keeps a loop a loop on every architecture: for the per-element loops whose body
// is a whole exact conversion, where nvcc's device pass for sm_100 and later would otherwise
// unroll the (at most V) iterations and quadruple the code and its compile time, for no gain.
#if defined(__CUDA_ARCH__)
#define NUMREF_UNROLL _Pragma("unroll")
#define NUMREF_NO_UNROLL _Pragma("unroll 1")
#else
#define NUMREF_UNROLL
#define NUMREF_NO_UNROLL
#endif

namespace numref_cuda {

// §A.1 Number of leading zero bits of a non-zero 32-bit word (bit_length = 32 - clz).
NUMREF_HD NUMREF_FORCEINLINE int clz32(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(x));
#else
  return __builtin_clz(x);
#endif
}

// §A.1 High 32 bits of the 64-bit product a * b (used by Philox, §A.3).
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t mulhi32(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
#endif
}

}  // namespace numref_cuda
