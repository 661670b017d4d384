// numref CUDA kernels — GaussWS (Gaussian weight sampling): forward (noise, block scale, scaled
// add, the one RNE cast to bf16) and backward (the exact, order-independent Σ g R and dL/db_t).
//                                                                              spec §30, §A.13
// Every value is computed by gaussws.cuh's __host__ __device__ functions (checked on the CPU
// against the reference by cuda/tests/test_cuda_gaussws.cpp and, through the same lane layout, by
// the cuda-emu backend's host grid walk). One CUDA block of 256 threads per 32 x 32 tile (a
// grid-stride loop over the tiles); thread l is lane l (4 consecutive elements of one row). What
// leaves a thread is merged with an integer operation: the amax with atomicMax in shared memory,
// the 24-bit pieces of g R with atomicAdd into the tile's carry-save counters, the nibbles of R
// with atomicOr into the packed words; so no result depends on the scheduling (§A.7 item 4).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "launch.hpp"
#include "numref_arith/gaussws.cuh"
#include "numref_arith/gaussws_plan.hpp"
#include "numref_cuda/api.hpp"

namespace numref_cuda {
namespace kernels {
namespace {

namespace gw = gaussws;
using F32T = FloatTraits<numref::FormatId::f32>;

// §30.4 e = RN32(2^(1 - b_t)) per tile into e[] (the forward kernel turns it into s in place).
__global__ void gw_exp2_kernel(const std::uint32_t* bt, std::uint64_t n, std::uint32_t* e, std::uint32_t* status) {
  for (std::uint64_t t = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; t < n;
       t += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint32_t b = bt[t];
    if (!f32_finite(b)) {
      atomicOr(status, gw::kStatusBtNonFinite);
      e[t] = gw::kNaN32;
      continue;
    }
    const gw::Rounded r = gw::exp2_one_minus(b);
    if (!r.decided) atomicOr(status, gw::kStatusExp2Undecided);
    e[t] = r.code;
  }
}

// §30.4 – §30.6, §30.9 One tile per block iteration: amax, s, then each lane's w_hat and R nibbles.
template <class W, bool SumF32>
__global__ void __launch_bounds__(gw::kLanes)
    gw_forward_kernel(gw::Problem p, const void* w, const std::uint16_t* u, std::uint32_t* scale, std::uint16_t* w_hat,
                      std::uint32_t* r_packed) {
  __shared__ std::uint32_t s_amax, s_scale;
  const SpecialCodes<gw::BF16> sp = gw::bf16_codes();
  const std::uint32_t lane = threadIdx.x;
  for (std::uint64_t tile = blockIdx.x; tile < p.tiles(); tile += gridDim.x) {
    if (lane == 0) s_amax = 0u;
    __syncthreads();
    const gw::Lane l = gw::lane_of(p, tile, lane);
    const std::uint32_t a = __reduce_max_sync(0xFFFFFFFFu, gw::lane_amax<W>(p, l, w));
    if ((lane & 31u) == 0u) atomicMax(&s_amax, a);
    __syncthreads();
    if (lane == 0) {
      const std::uint32_t s = s_amax >= kF32Inf ? gw::kNaN32 : gw::block_scale(s_amax, scale[tile]);
      scale[tile] = s;
      s_scale = s;
    }
    __syncthreads();
    if (l.count != 0) {
      const std::uint64_t key = p.key ? gw::block_key(p.seed, p.layer, p.step, l.block_row, l.block_col) : 0u;
      int r[gw::kLaneElems];
      gw::lane_noise(p, l, lane, key, u, r);
      gw::lane_forward<W, SumF32>(p, l, w, r, s_scale, sp, w_hat, [&](std::uint64_t word, std::uint32_t bits) {
        if (r_packed != nullptr) atomicOr(&r_packed[word], bits);
      });
    }
    __syncthreads();  // s_amax / s_scale are reused by the next tile
  }
}

// §30.7 One tile per block iteration: the exact T in shared carry-save counters, then dL/db_t.
template <class G>
__global__ void __launch_bounds__(gw::kLanes)
    gw_backward_kernel(gw::Problem p, const std::uint32_t* scale, const std::uint16_t* u, const void* g,
                       std::uint32_t* grad, std::uint32_t* status) {
  __shared__ unsigned long long s_digits[2][kSumDigits];
  __shared__ int s_nonfinite;
  const std::uint32_t lane = threadIdx.x;
  auto sink = [&](int neg, int d, std::uint32_t v) {
    atomicAdd(&s_digits[neg][d], static_cast<unsigned long long>(v));
  };
  for (std::uint64_t tile = blockIdx.x; tile < p.tiles(); tile += gridDim.x) {
    if (lane < 2u * kSumDigits) s_digits[lane / kSumDigits][lane % kSumDigits] = 0u;
    if (lane == 0) s_nonfinite = 0;
    __syncthreads();
    const gw::Lane l = gw::lane_of(p, tile, lane);
    if (l.count != 0) {
      const std::uint64_t key = p.key ? gw::block_key(p.seed, p.layer, p.step, l.block_row, l.block_col) : 0u;
      int r[gw::kLaneElems];
      gw::lane_noise(p, l, lane, key, u, r);
      gw::LaneTerms t;
      gw::lane_terms<G>(p, l, g, r, t, sink);
      gw::flush_terms(t, sink);
      if (t.nonfinite) s_nonfinite = 1;
    }
    __syncthreads();
    if (lane == 0) {
      std::uint64_t d[2][kSumDigits];
      for (int s = 0; s < 2; ++s)
        for (int i = 0; i < kSumDigits; ++i) d[s][i] = s_digits[s][i];
      const gw::Rounded res = gw::grad_finish(d, s_nonfinite != 0, scale[tile]);
      if (!res.decided) atomicOr(status, gw::kStatusGradUndecided);
      grad[tile] = res.code;
    }
    __syncthreads();
  }
}

cudaError_t tile_grid(std::uint64_t tiles, unsigned& blocks) {
  int dev = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) return e;
  const std::uint64_t cap = static_cast<std::uint64_t>(sms > 0 ? sms : 1) * 8u;  // 8 resident blocks per SM
  blocks = static_cast<unsigned>(tiles < cap ? (tiles == 0 ? 1 : tiles) : cap);
  return cudaSuccess;
}

// A status word: the caller's, or one of our own that is checked (synchronizing) at the end.
struct Status {
  std::uint32_t* word = nullptr;
  bool own = false;
  cudaError_t open(std::uint32_t* given, cudaStream_t stream) {
    if (given != nullptr) {
      word = given;
      return cudaSuccess;
    }
    own = true;
    cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&word), sizeof(std::uint32_t), stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(word, 0, sizeof(std::uint32_t), stream);
    return e;
  }
  cudaError_t close(cudaError_t e, cudaStream_t stream) {
    if (!own) return e;
    std::uint32_t st = 0;
    if (e == cudaSuccess) e = cudaMemcpyAsync(&st, word, sizeof st, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    const cudaError_t f = cudaFreeAsync(word, stream);
    if (e == cudaSuccess) e = f;
    if (e == cudaSuccess && st != 0u) return invalid_argument(gw::status_error(st));
    return e;
  }
};

std::string check_formats(numref::FormatId f, const char* what) {
  if (f != numref::FormatId::f32 && f != numref::FormatId::bf16)
    return std::string("gaussws: ") + what + " must be f32 or bf16";
  return {};
}

}  // namespace
}  // namespace kernels

cudaError_t try_gaussws_forward(const gaussws::Problem& p, numref::FormatId wf, const void* w, const std::uint32_t* bt,
                                const std::uint16_t* u, std::uint16_t* w_hat, std::uint32_t* scale,
                                std::uint32_t* r_packed, cudaStream_t stream, std::uint32_t* device_status) noexcept {
  using namespace kernels;
  clear_why();
  try {
    if (const std::string err = check_formats(wf, "w"); !err.empty()) return invalid_argument(err);
    if (p.size() == 0) return invalid_argument("gaussws: empty matrix");
    if (w == nullptr || bt == nullptr || w_hat == nullptr || scale == nullptr || (!p.key && u == nullptr))
      return invalid_argument("null device pointer");
    Status st;
    cudaError_t e = st.open(device_status, stream);
    if (e != cudaSuccess) return e;
    const std::uint64_t tiles = p.tiles();
    if (r_packed != nullptr) e = cudaMemsetAsync(r_packed, 0, ((p.size() + 7) / 8) * sizeof(std::uint32_t), stream);
    unsigned blocks = 0;
    if (e == cudaSuccess) e = grid_size(tiles, blocks);
    if (e == cudaSuccess) {
      gw_exp2_kernel<<<blocks, 256, 0, stream>>>(bt, tiles, scale, st.word);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = tile_grid(tiles, blocks);
    if (e == cudaSuccess) {
      const bool bf = wf == numref::FormatId::bf16;
      if (bf && p.sum_f32)
        gw_forward_kernel<gw::BF16, true><<<blocks, gw::kLanes, 0, stream>>>(p, w, u, scale, w_hat, r_packed);
      else if (bf)
        gw_forward_kernel<gw::BF16, false><<<blocks, gw::kLanes, 0, stream>>>(p, w, u, scale, w_hat, r_packed);
      else if (p.sum_f32)
        gw_forward_kernel<F32T, true><<<blocks, gw::kLanes, 0, stream>>>(p, w, u, scale, w_hat, r_packed);
      else
        gw_forward_kernel<F32T, false><<<blocks, gw::kLanes, 0, stream>>>(p, w, u, scale, w_hat, r_packed);
      e = cudaGetLastError();
    }
    return st.close(e, stream);
  } catch (const std::exception& ex) {
    return invalid_argument(ex.what());
  }
}

cudaError_t try_gaussws_backward(const gaussws::Problem& p, const std::uint32_t* scale, const std::uint16_t* u,
                                 numref::FormatId gf, const void* g, std::uint32_t* grad, cudaStream_t stream,
                                 std::uint32_t* device_status) noexcept {
  using namespace kernels;
  clear_why();
  try {
    if (const std::string err = check_formats(gf, "dL/dw_hat"); !err.empty()) return invalid_argument(err);
    if (p.size() == 0) return invalid_argument("gaussws: empty matrix");
    if (scale == nullptr || g == nullptr || grad == nullptr || (!p.key && u == nullptr))
      return invalid_argument("null device pointer");
    Status st;
    cudaError_t e = st.open(device_status, stream);
    if (e != cudaSuccess) return e;
    unsigned blocks = 0;
    e = tile_grid(p.tiles(), blocks);
    if (e == cudaSuccess) {
      if (gf == numref::FormatId::bf16)
        gw_backward_kernel<gw::BF16><<<blocks, gw::kLanes, 0, stream>>>(p, scale, u, g, grad, st.word);
      else
        gw_backward_kernel<F32T><<<blocks, gw::kLanes, 0, stream>>>(p, scale, u, g, grad, st.word);
      e = cudaGetLastError();
    }
    return st.close(e, stream);
  } catch (const std::exception& ex) {
    return invalid_argument(ex.what());
  }
}

}  // namespace numref_cuda
