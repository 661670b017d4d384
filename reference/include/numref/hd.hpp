// numref — function qualifiers for code shared by the reference (g++) and the CUDA kernels
// (nvcc, host and device passes).                                          spec §1.3, §A.1
//
// NUMREF_HD marks a function callable from host and device code; NUMREF_FORCEINLINE asks
// every compiler to inline it (the hot paths of both sides rely on it).
#pragma once

#if defined(__CUDACC__)
#define NUMREF_HD __host__ __device__
#define NUMREF_FORCEINLINE __forceinline__
#else
#define NUMREF_HD
#define NUMREF_FORCEINLINE inline __attribute__((always_inline))
#endif
