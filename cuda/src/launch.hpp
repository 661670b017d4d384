// numref CUDA kernels — host-side launch planning shared by the kernel files.   spec §A.3
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "numref/format.hpp"
#include "numref_arith/cast.cuh"
#include "numref_arith/plan.hpp"
#include "elementwise.cuh"

namespace numref_cuda::kernels {

// Blocks of 256 threads: enough to cover the work, at most 16 resident blocks' worth per SM
// (the grid-stride loop does the rest).
inline cudaError_t grid_size(std::size_t work_items, unsigned& blocks) {
  int dev = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) return e;
  const std::size_t want = (work_items + 255u) / 256u;
  const std::size_t cap = static_cast<std::size_t>(sms > 0 ? sms : 1) * 16u;
  blocks = static_cast<unsigned>(want == 0 ? 1 : (want < cap ? want : cap));
  return cudaSuccess;
}

// Launches elementwise_kernel<Op> over n elements; `rnd_values` is the explicit random
// array (or nullptr), which takes part in the alignment plan.
template <class Op>
cudaError_t launch_elementwise(const void* in, void* out, std::size_t n, const Op& op, const void* rnd_values,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  constexpr int V = VectorWidth<Op>::value;
  const Plan pl = plan_vectors(n, V,
                               {{reinterpret_cast<std::uintptr_t>(in), Op::in_bytes},
                                {reinterpret_cast<std::uintptr_t>(out), Op::out_bytes},
                                {reinterpret_cast<std::uintptr_t>(rnd_values), 4}});
  const std::size_t scalars = pl.scalars(n, V);
  unsigned blocks = 0;
  cudaError_t e = grid_size(pl.nvec > scalars ? pl.nvec : scalars, blocks);
  if (e != cudaSuccess) return e;
  elementwise_kernel<Op><<<blocks, 256, 0, stream>>>(in, out, n, pl.head, pl.nvec, op);
  return cudaGetLastError();
}

// Launchers of the kernel files (cast_f8.cu, cast_wide.cu, cast_e8m0.cu, philox.cu). Each
// returns cudaErrorInvalidValue for a pair it does not handle; api.cu validates first.
cudaError_t launch_narrow(numref::FormatId from, numref::FormatId to, const void* in, void* out, std::size_t n,
                          const CastPolicy& p, const RandomArgs& rnd, cudaStream_t stream);
cudaError_t launch_wide(numref::FormatId from, numref::FormatId to, const void* in, void* out, std::size_t n,
                        const CastPolicy& p, const RandomArgs& rnd, cudaStream_t stream);
cudaError_t launch_e8m0(numref::FormatId from, const void* in, void* out, std::size_t n, const E8m0Policy& p,
                        cudaStream_t stream);
// §A.3 Records why() for a try_* call of another kernel file and returns cudaErrorInvalidValue.
cudaError_t invalid_argument(std::string reason);
void clear_why();

cudaError_t launch_philox(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k, cudaStream_t stream);

}  // namespace numref_cuda::kernels
