// numref CUDA kernels — export of a Philox random stream.                          spec §A.3
//
// philox_bits writes r_0 .. r_{n-1} of a stream (the exact values an SR cast with that
// stream uses), so a caller can check a device result on the CPU or replay it elsewhere.
#include "launch.hpp"

namespace numref_cuda::kernels {
namespace {

__global__ void __launch_bounds__(256) philox_kernel(std::uint32_t* __restrict__ out, std::size_t n, RandomArgs rnd) {
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  bool bad = false;
  for (std::size_t g = tid; 4 * g < n; g += stride) {
    std::uint32_t r[4];
    rnd.fetch<4>(4 * g, r, bad);
#pragma unroll
    for (int t = 0; t < 4; ++t)
      if (4 * g + t < n) out[4 * g + t] = r[t];
  }
}

}  // namespace

cudaError_t launch_philox(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  RandomArgs rnd;
  rnd.philox = s;
  rnd.k = k;
  unsigned blocks = 0;
  cudaError_t e = grid_size((n + 3) / 4, blocks);
  if (e != cudaSuccess) return e;
  philox_kernel<<<blocks, 256, 0, stream>>>(out, n, rnd);
  return cudaGetLastError();
}

}  // namespace numref_cuda::kernels
