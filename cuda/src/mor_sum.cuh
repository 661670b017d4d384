// numref CUDA kernels — what the MoR kernels (mor.cu, mor_subtensor.cu) share: a thread's error
// sum into the launch's carry-save counters.                             spec §22, §A.8
#pragma once

#include <cuda_runtime.h>

#include "block_launch.cuh"
#include "numref_arith/tiling.cuh"

namespace numref_cuda::kernels {

// A thread's window pieces and counts into the counters (integer adds: order-free).
__device__ __forceinline__ void flush(const ErrorAcc& acc, ErrorSumState* st) {
  for (int i = 0; i < kWindowDigits; ++i) add_u64(&st->digit[kWindowFirstDigit + i], acc.w.piece(i));
  add_u64(&st->n, acc.c.n);
  add_u64(&st->zeros, acc.c.zeros);
  add_u64(&st->nonfinite_input, acc.c.nonfinite_input);
  add_u64(&st->nonfinite_quant, acc.c.nonfinite_quant);
}

}  // namespace numref_cuda::kernels
