// numref CUDA kernels — what the block kernels' translation units share: the grid-stride
// indices, the 64-bit atomic add, stream-ordered scratch, the grid size and the exception
// guard of the try_* entry points.                                       spec §A.7, §A.8
//
// The block kernels (quantize, fake-quant, dequantize, MoR) are compiled in several translation
// units so that the build compiles them in parallel: block_scale.cu (the scale pipeline, once),
// quantize.cu (entry points, dequantize), quantize_shard*.cu (quantize_shards.hpp), mor.cu and
// mor_subtensor.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

#include "launch.hpp"

namespace numref_cuda::kernels {

using ull = unsigned long long;

__device__ __forceinline__ std::uint64_t first_thread() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::uint64_t grid_threads() { return static_cast<std::uint64_t>(gridDim.x) * blockDim.x; }
__device__ __forceinline__ void add_u64(std::uint64_t* p, std::uint64_t v) {
  if (v != 0u) atomicAdd(reinterpret_cast<ull*>(p), static_cast<ull>(v));
}

// Device scratch freed on scope exit (stream-ordered).
struct Scratch {
  cudaStream_t s;
  std::vector<void*> ptrs;
  cudaError_t err = cudaSuccess;
  explicit Scratch(cudaStream_t st) : s(st) {}
  template <class T>
  T* get(std::size_t n, int fill = 0) {
    void* p = nullptr;
    if (err == cudaSuccess) err = cudaMallocAsync(&p, n * sizeof(T) + 16, s);
    if (err == cudaSuccess) {
      ptrs.push_back(p);
      err = cudaMemsetAsync(p, fill, n * sizeof(T) + 16, s);
    }
    return static_cast<T*>(p);
  }
  ~Scratch() {
    for (void* p : ptrs) cudaFreeAsync(p, s);
  }
};

inline unsigned blocks_for(std::uint64_t work) {
  unsigned b = 1;
  return grid_size(static_cast<std::size_t>(work), b) == cudaSuccess ? b : 1u;
}

template <class F>
cudaError_t guard(F&& f) noexcept {
  try {
    return f();
  } catch (const std::exception& ex) {
    return invalid_argument(ex.what());
  }
}

}  // namespace numref_cuda::kernels
