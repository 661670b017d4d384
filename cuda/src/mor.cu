// numref CUDA kernels — tensor-level MoR.                              spec §21 – §23, §26, §A.8
//
// After the scale pipeline (block_scale.cu), a grid-stride loop over the work units of
// tiling.cuh calling the same __host__ __device__ functions the host emulation
// (host_run_mor.cpp) runs in the tests:
//   tensor_mor_kernel     §21, §22 mor_error_unit: each thread's window and counts, pieces by
//                          atomicAdd into the carry-save counters (integer adds: order-free)
// Sub-tensor MoR: mor_subtensor.cu.
#include <cuda_runtime.h>

#include <cstdint>

#include "block_launch.cuh"
#include "block_scale.cuh"
#include "mor_sum.cuh"
#include "numref_arith/format_list.hpp"
#include "numref_arith/tiling.cuh"
#include "numref_cuda/api.hpp"
#include "numref_cuda/host_run.hpp"

namespace numref_cuda {
namespace kernels {
namespace {

using numref::FormatId;
using E4 = FloatTraits<FormatId::f8e4m3fn>;
using BF16 = FloatTraits<FormatId::bf16>;

template <class S, int V>
__global__ void tensor_mor_kernel(Geometry g, const unsigned char* x, MorArgs<E4> a, ErrorSumState* st) {
  ErrorAcc acc;
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads())
    mor_error_unit<S, E4, BF16, V>(g, x, u, a, acc, [&](int d, std::uint32_t v) { add_u64(&st->digit[d], v); });
  flush(acc, st);
}

template <class S, int V>
cudaError_t run_tensor_mor(const QuantizePlan& p, const void* x, const numref::TensorMorSpec& spec,
                           TensorMorDecision& r, std::uint8_t* codes, std::uint32_t* scales, std::uint32_t* gm,
                           cudaStream_t s) {
  Scratch sc(s);
  ScaleState st;
  cudaError_t e = run_scale(p, x, false, sc, st, scales, gm, nullptr, nullptr);
  if (e != cudaSuccess) return e;
  auto* sum = sc.get<ErrorSumState>(1);
  if (sc.err != cudaSuccess) return sc.err;
  const MorArgs<E4> a{st.f, make_element_ctx<E4>(p.elem, p.fused), p.wide_d, p.wide_out, codes};
  tensor_mor_kernel<S, V>
      <<<blocks_for(p.geom.n_units), 256, 0, s>>>(p.geom, static_cast<const unsigned char*>(x), a, sum);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  ErrorSumState h{};
  if ((e = cudaMemcpyAsync(&h, sum, sizeof h, cudaMemcpyDeviceToHost, s)) != cudaSuccess) return e;
  if ((e = cudaStreamSynchronize(s)) != cudaSuccess) return e;
  r.error = normalize(h);  // §22: the counters' integer is S, whatever the order of the atomics
  r.verdict = tensor_verdict(r.error, spec.threshold.num, spec.threshold.den);
  r.quantized = r.verdict.accept;
  r.mean = mean_f32(r.error);
  return cudaSuccess;
}

}  // namespace
}  // namespace kernels

using kernels::guard;

cudaError_t try_tensor_mor(const numref::TensorView& x, const numref::TensorMorSpec& spec, TensorMorDecision& result,
                           std::uint8_t* codes, std::uint32_t* scales, std::uint32_t* group_mantissa,
                           cudaStream_t stream) noexcept {
  kernels::clear_why();
  return guard([&]() -> cudaError_t {
    QuantizePlan p = host::plan_tensor_mor(x, spec);
    p.geom.vec = vector_loads_ok(p, x.data());
    cudaError_t e = cudaErrorInvalidValue;
    if (!with_source(p.source, [&]<class S, int V>() {
          e = kernels::run_tensor_mor<S, V>(p, x.data(), spec, result, codes, scales, group_mantissa, stream);
        }))
      return kernels::invalid_argument("no CUDA kernel reads this source format");
    return e;
  });
}

}  // namespace numref_cuda
