// numref CUDA kernels — small integer helpers shared by host and device.          spec §A.1
#pragma once

#include <cstdint>

#include "numref_arith/config.cuh"

namespace numref_cuda {

// Number of significant bits of x (0 for 0).
NUMREF_HD NUMREF_FORCEINLINE int bitlen32(std::uint32_t x) { return x == 0u ? 0 : 32 - clz32(x); }
NUMREF_HD NUMREF_FORCEINLINE int bitlen64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(x));
#else
  return x == 0u ? 0 : 64 - __builtin_clzll(x);
#endif
}

// §A.7 Division by a run-time constant d (1 <= d <= 2^31) of any n < 2^32, by one multiply-high
// and a shift (Granlund & Montgomery 1994, Fig. 4.1): with l = ceil(log2 d) and
// m = floor(2^32 (2^l - d) / d) + 1, floor(n / d) = (mulhi(n, m) + n) >> l, the sum formed in
// 64 bits. The kernels use it for the block and chunk index maps (no division per element);
// test_cuda_tiling.cpp checks it against '/' for every divisor shape the plans produce.
struct FastDiv {
  std::uint32_t d = 1, m = 1;
  int l = 0;
  FastDiv() = default;
  NUMREF_HD explicit FastDiv(std::uint32_t divisor) : d(divisor) {
    l = 0;
    while ((std::uint64_t{1} << l) < divisor) ++l;
    m = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << l) - divisor)) / divisor + 1u);
  }
  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t div(std::uint32_t n) const {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(mulhi32(n, m)) + n) >> l);
  }
  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t mod(std::uint32_t n) const { return n - div(n) * d; }
};

// Exact comparison of two non-negative dyadic values a · 2^ea < b · 2^eb (a, b < 2^64).
NUMREF_HD inline bool dyadic_less(std::uint64_t a, int ea, std::uint64_t b, int eb) {
  if (a == 0u) return b != 0u;
  if (b == 0u) return false;
  const int ta = ea + bitlen64(a), tb = eb + bitlen64(b);  // one above the top bits' exponents
  if (ta != tb) return ta < tb;
  // Same top exponent: align the significands at the common top (both have the same length
  // after shifting the shorter one left; neither exceeds 64 bits).
  const int la = bitlen64(a), lb = bitlen64(b);
  if (la < lb)
    a <<= (lb - la);
  else
    b <<= (la - lb);
  return a < b;
}

}  // namespace numref_cuda
