// numref CUDA kernels — the MMA dot-product model (§38) on CUDA cores.           spec §36 – §38
//
// Not the tensor cores' own instructions: these kernels evaluate the numref model of an
// instruction (numref_arith/mma.cuh, the same step() that cpu-fast and cuda-emu run), so that the
// conformance suite checks the arithmetic as the device compiles it. Two decode kernels turn the
// codes into mma::Dec (A row-major, B and its scales transposed), then one thread per element of D
// runs its steps (a grid-stride loop).
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>

#include "launch.hpp"
#include "numref_arith/mma.cuh"
#include "numref_arith/mma_plan.hpp"
#include "numref_cuda/api.hpp"

namespace numref_cuda {
namespace kernels {
namespace {

// out[r * cols + c] = decode(in[...]): row-major (transpose = false) or from the transposed
// layout in[c * rows + r] (transpose = true: B k x n read as n x k).
__global__ void mma_decode_kernel(const std::uint32_t* in, std::size_t rows, std::size_t cols, bool transpose,
                                  mma::DecFmt f, mma::Dec* out) {
  const std::size_t n = rows * cols;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = e / cols, c = e % cols;
    out[e] = mma::decode(in[transpose ? c * rows + r : e], f);
  }
}

__global__ void mma_kernel(const mma::Dec* A, const mma::Dec* Bt, const mma::Dec* SA, const mma::Dec* SBt,
                           const std::uint32_t* C, std::size_t m, std::size_t n, std::size_t k, std::size_t nb,
                           std::size_t fused, mma::DecFmt fc, mma::Knobs kn, std::uint32_t* D, std::uint8_t* F) {
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < m * n;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i = e / n, j = e % n;
    std::uint32_t acc = C[e];
    std::uint8_t fl = 0;
    for (std::size_t k0 = 0; k0 < k; k0 += fused) {
      const std::size_t k1 = k0 + fused < k ? k0 + fused : k;
      const mma::Out r = mma::step(A + i * k, Bt + j * k, nb ? SA + i * nb : nullptr, nb ? SBt + j * nb : nullptr,
                                   static_cast<int>(k0), static_cast<int>(k1), mma::decode(acc, fc), kn);
      acc = r.bits;
      fl |= r.flags;
    }
    D[e] = acc;
    if (F) F[e] = fl;
  }
}

struct DevDec {
  mma::Dec* p = nullptr;
  cudaError_t alloc(std::size_t n) { return cudaMalloc(&p, (n ? n : 1) * sizeof(mma::Dec)); }
  ~DevDec() { cudaFree(p); }
};

}  // namespace
}  // namespace kernels

cudaError_t try_mma(const numref::MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const std::uint32_t* a,
                    const std::uint32_t* b, const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb,
                    std::uint32_t* d, std::uint8_t* flags, cudaStream_t stream) noexcept {
  using namespace kernels;
  clear_why();
  try {
    numref::validate(s, k);
    if (s.model().algo != numref::MmaAlgo::fdpa)
      return invalid_argument(
          "mma: the kernels compute the fdpa models (§38); the ideal result (§37) is the reference's");
    if (m == 0 || n == 0) return invalid_argument("mma: empty D");
    if (!a || !b || !c || !d || (s.block && (!sa || !sb))) return invalid_argument("null device pointer");
    const mma::Plan pl = mma::plan(s);
    const std::size_t nb = s.block ? k / static_cast<std::size_t>(s.block) : 0;
    DevDec A, Bt, SA, SBt;
    cudaError_t e = A.alloc(m * k);
    if (e == cudaSuccess) e = Bt.alloc(n * k);
    if (e == cudaSuccess) e = SA.alloc(m * nb);
    if (e == cudaSuccess) e = SBt.alloc(n * nb);
    unsigned blocks = 0;
    const auto decode = [&](const std::uint32_t* in, std::size_t rows, std::size_t cols, bool tr, const mma::DecFmt& f,
                            mma::Dec* out) {
      if (e != cudaSuccess || rows * cols == 0) return;
      e = grid_size(rows * cols, blocks);
      if (e != cudaSuccess) return;
      mma_decode_kernel<<<blocks, 256, 0, stream>>>(in, rows, cols, tr, f, out);
      e = cudaGetLastError();
    };
    decode(a, m, k, false, pl.a, A.p);
    decode(b, n, k, true, pl.b, Bt.p);
    if (nb) {
      decode(sa, m, nb, false, pl.s, SA.p);
      decode(sb, n, nb, true, pl.s, SBt.p);
    }
    if (e == cudaSuccess) e = grid_size(m * n, blocks);
    if (e == cudaSuccess) {
      mma_kernel<<<blocks, 256, 0, stream>>>(A.p, Bt.p, SA.p, SBt.p, c, m, n, k, nb, pl.fused, pl.c, pl.k, d, flags);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);  // the decode buffers are freed on return
    return e;
  } catch (const std::exception& ex) {
    return invalid_argument(ex.what());
  }
}

}  // namespace numref_cuda
