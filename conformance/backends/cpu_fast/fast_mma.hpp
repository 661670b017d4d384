// numref backend "cpu-fast" — the MMA dot-product model (§38) over whole matrices.     spec §36 – §38
//
// The arithmetic is the kernels' own __host__ __device__ code (arith/include/numref_arith/mma.cuh:
// operand decode, one fused truncated dot-product-add step, its rounding and flags), compiled
// here by the host compiler; this file decodes A's rows and B's columns once, and walks every
// element of D through its steps. It takes the `fdpa` models of every instruction profile (§39);
// the `ideal` profile is the reference's (it declines it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "numref/mma.hpp"

namespace numref::cpu_fast {

// Whether the model runs here (algo=fdpa, every scale kind).
bool mma_supported(const MmaSpec& s);

// D (m x n) = A (m x k) · B (k x n) + C, codes one per uint32_t, row-major; scales sa (m x k/block)
// and sb (k/block x n) with a block; flags (m x n) unless null. s must be valid (validate()).
void mma(const MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const std::uint32_t* a, const std::uint32_t* b,
         const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d,
         std::uint8_t* flags);

}  // namespace numref::cpu_fast
