// numref CUDA kernels — the tensor cores' FP8 mma.sync itself (issue 29 item 4).   spec §39, §A.4
//
// Not a model: each warp issues mma.sync.aligned.m16n8k32.row.col.f32.<a>.<b>.f32 (PTX ISA,
// "Matrix Fragments for mma.m16n8k32", 8-bit operand types) for one 16 x 8 tile of D, K in steps
// of 32 chained through the four f32 accumulator registers, so that the device test can hold the
// hardware's result against the profile of the device's architecture (sm89_mma_f8, sm120_mma_f8).
// No arithmetic here: the operands' bytes are packed into registers and the accumulators moved
// as bits (__uint_as_float / __float_as_uint).
//
// Fragments (lane = 4 · groupID + threadID_in_group; g = groupID, t = threadID_in_group):
//   A (16 x 32, row): register r (0..3) holds a[4r .. 4r+3], the lowest index in the lowest byte;
//                     row g (+8 for r = 1, 3), columns 4t .. 4t+3 (+16 for r = 2, 3)
//   B (32 x 8, col):  register r (0..1) holds b[4r .. 4r+3]; rows (k) 4t .. 4t+3 (+16 for r = 1),
//                     column g
//   C, D (16 x 8):    c[i], i = 0..3: row g (+8 for i = 2, 3), column 2t + (i & 1)
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>

#include "launch.hpp"
#include "numref_cuda/api.hpp"

namespace numref_cuda {
namespace kernels {
namespace {

// AT, BT: 0 e4m3, 1 e5m2 (the PTX type names of f8e4m3fn and f8e5m2).
template <int AT, int BT>
__global__ void mma_sync_f8_kernel(const std::uint8_t* A, const std::uint8_t* B, const std::uint32_t* C, std::size_t m,
                                   std::size_t n, std::size_t k, std::uint32_t* D) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const std::size_t tiles_n = n / 8, tiles = (m / 16) * tiles_n;
  const std::size_t warps = gridDim.x * static_cast<std::size_t>(blockDim.x) / 32;
  const unsigned lane = threadIdx.x & 31u, g = lane >> 2, t = lane & 3u;
  // a warp-stride loop over the tiles (the grid is capped); a warp's lanes take the same tiles
  for (std::size_t tile = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32; tile < tiles;
       tile += warps) {
    const std::size_t tm = tile / tiles_n * 16, tn = tile % tiles_n * 8;
    std::uint32_t c[4];
    for (int i = 0; i < 4; ++i) c[i] = C[(tm + g + (i >= 2 ? 8 : 0)) * n + tn + 2 * t + (i & 1)];
    for (std::size_t k0 = 0; k0 < k; k0 += 32) {
      std::uint32_t a[4], b[2];
      for (int r = 0; r < 4; ++r) {
        const std::uint8_t* p = A + (tm + g + ((r & 1) ? 8 : 0)) * k + k0 + 4 * t + (r >= 2 ? 16 : 0);
        a[r] = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
               static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
      }
      for (int r = 0; r < 2; ++r) {
        b[r] = 0;
        for (int q = 0; q < 4; ++q)
          b[r] |= static_cast<std::uint32_t>(B[(k0 + 4 * t + q + (r ? 16 : 0)) * n + tn + g]) << (8 * q);
      }
      float d0 = __uint_as_float(c[0]), d1 = __uint_as_float(c[1]), d2 = __uint_as_float(c[2]),
            d3 = __uint_as_float(c[3]);
#define NUMREF_MMA_F8(TA, TB)                                                         \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TA "." TB                     \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" \
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)                               \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
      if constexpr (AT == 0 && BT == 0)
        NUMREF_MMA_F8("e4m3", "e4m3");
      else if constexpr (AT == 0 && BT == 1)
        NUMREF_MMA_F8("e4m3", "e5m2");
      else if constexpr (AT == 1 && BT == 0)
        NUMREF_MMA_F8("e5m2", "e4m3");
      else
        NUMREF_MMA_F8("e5m2", "e5m2");
#undef NUMREF_MMA_F8
      c[0] = __float_as_uint(d0);
      c[1] = __float_as_uint(d1);
      c[2] = __float_as_uint(d2);
      c[3] = __float_as_uint(d3);
    }
    for (int i = 0; i < 4; ++i) D[(tm + g + (i >= 2 ? 8 : 0)) * n + tn + 2 * t + (i & 1)] = c[i];
  }
#else
  (void)A, (void)B, (void)C, (void)m, (void)n, (void)k, (void)D;
  __trap();  // unreachable: the host refuses devices below compute capability 8.9
#endif
}

int f8_kind(numref::FormatId f) {
  if (f == numref::FormatId::f8e4m3fn) return 0;
  if (f == numref::FormatId::f8e5m2) return 1;
  return -1;
}

}  // namespace
}  // namespace kernels

cudaError_t try_mma_sync_f8(numref::FormatId a_fmt, numref::FormatId b_fmt, std::size_t m, std::size_t n, std::size_t k,
                            const std::uint8_t* a, const std::uint8_t* b, const std::uint32_t* c, std::uint32_t* d,
                            cudaStream_t stream) noexcept {
  using namespace kernels;
  clear_why();
  try {
    const int ka = f8_kind(a_fmt), kb = f8_kind(b_fmt);
    if (ka < 0 || kb < 0)
      return invalid_argument(std::string("mma.sync FP8: A and B must be f8e4m3fn or f8e5m2, got ") +
                              std::string(numref::format(a_fmt).name) + " and " +
                              std::string(numref::format(b_fmt).name));
    if (m == 0 || n == 0 || k == 0 || m % 16 || n % 8 || k % 32)
      return invalid_argument("mma.sync FP8: m must be a positive multiple of 16, n of 8 and k of 32, got " +
                              std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k));
    if (!a || !b || !c || !d) return invalid_argument("null device pointer");
    int dev = 0, major = 0, minor = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (e != cudaSuccess) return e;
    if (major * 10 + minor < 89)
      return invalid_argument("mma.sync FP8 needs compute capability 8.9 or later, the device has " +
                              std::to_string(major) + "." + std::to_string(minor));
    unsigned blocks = 0;
    e = grid_size((m / 16) * (n / 8) * 32, blocks);
    if (e != cudaSuccess) return e;
    const int which = ka * 2 + kb;
    if (which == 0) mma_sync_f8_kernel<0, 0><<<blocks, 256, 0, stream>>>(a, b, c, m, n, k, d);
    if (which == 1) mma_sync_f8_kernel<0, 1><<<blocks, 256, 0, stream>>>(a, b, c, m, n, k, d);
    if (which == 2) mma_sync_f8_kernel<1, 0><<<blocks, 256, 0, stream>>>(a, b, c, m, n, k, d);
    if (which == 3) mma_sync_f8_kernel<1, 1><<<blocks, 256, 0, stream>>>(a, b, c, m, n, k, d);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    return e;
  } catch (const std::exception& ex) {
    return invalid_argument(ex.what());
  }
}

}  // namespace numref_cuda
