// numref CUDA kernels — the scale pipeline of a quantization plan: block amax (and min), group /
// tensor amax, block factors (block_scale.cu).                    spec §13 – §18, §20, §A.7
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "block_launch.cuh"
#include "numref_arith/tiling.cuh"
#include "numref_cuda/quantize_plan.hpp"

namespace numref_cuda::kernels {

// The device arrays of a plan's scale pipeline (Scratch memory, or the caller's).
struct ScaleState {
  std::uint32_t *amax = nullptr, *mn = nullptr, *gamax = nullptr, *tamax = nullptr;
  BlockFactors* f = nullptr;
};
// Launches the pipeline of p (its source format's kernels) on sc's stream: st receives the block
// amaxes (amax_out when given), the smallest non-zero magnitudes (want_min), the group and tensor
// amax and the block factors; scales, gm, tamax_out (when not null) the stored scales, GAM group
// mantissas and the tensor amax.
cudaError_t run_scale(const QuantizePlan& p, const void* x, bool want_min, Scratch& sc, ScaleState& st,
                      std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax_out, std::uint32_t* amax_out);

}  // namespace numref_cuda::kernels
