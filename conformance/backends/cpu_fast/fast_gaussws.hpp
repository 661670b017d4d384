// numref backend "cpu-fast" — GaussWS (Gaussian weight sampling), forward and backward.   spec §30
//
// The arithmetic is the CUDA kernels' own __host__ __device__ code (arith/include/numref_arith/
// gaussws.cuh: noise, generator, exp2 bounds, block scale, the exact sum and its one RNE cast to
// bf16, the exact Σ g R and the ln 2 product), compiled here by the host compiler; this file only
// walks the matrix the way a CPU likes it: one 32 x 32 tile at a time, row segments left to right,
// one generator word per four elements, e = RN32(2^(1 - b_t)) cached across tiles with the same b_t,
// the exact sums in plain 64-bit counters. Where the kernels' fixed-width bounds do not decide a
// value (§A.13; no such input is known), the tile is computed by the reference instead, so
// cpu-fast accepts every operation the reference accepts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "numref/format.hpp"

namespace numref::cpu_fast {

struct GausswsOp {
  std::size_t rows = 1, cols = 1;
  FormatId w = FormatId::f32, g = FormatId::f32;  // f32 or bf16
  bool key = false;                               // R from the generator (§30.3), else from u (§30.2)
  std::uint64_t seed = 0, layer = 0, step = 0;
  bool sum_f32 = false;  // §30.5 the variant sum=f32
};

// The C ABI's outputs (numref_backend::gaussws): r_packed[ceil(n / 8)], scale[tiles], w_hat[n] (bf16
// codes), grad[tiles]. w, g: codes of op.w / op.g (2 or 4 bytes each); bt: one binary32 per tile;
// u: one 16-bit word per element (read unless op.key). Throws std::invalid_argument for a NaN or
// ±Inf b_t, naming the block (§30.1).
void gaussws(const GausswsOp& op, const void* w, const std::uint32_t* bt, const std::uint16_t* u, const void* g,
             std::uint32_t* r_packed, std::uint32_t* scale, std::uint32_t* w_hat, std::uint32_t* grad);

}  // namespace numref::cpu_fast
