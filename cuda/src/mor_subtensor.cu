// numref CUDA kernels — sub-tensor MoR.                                       spec §27, §A.8
//
// After the scale pipeline (block_scale.cu) of both types, grid-stride loops over the work
// units of tiling.cuh calling the same __host__ __device__ functions the host emulation
// (host_run_mor.cpp) runs in the tests:
//   subtensor_err_kernel  §27 subtensor_error_unit: per-block counters for E4M3 and E5M2
//   subtensor_out_kernel  §27.4 subtensor_output_unit
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "block_launch.cuh"
#include "block_scale.cuh"
#include "mor_sum.cuh"
#include "numref_arith/format_list.hpp"
#include "numref_arith/tiling.cuh"
#include "numref_cuda/api.hpp"
#include "numref_cuda/host_run.hpp"
#include "numref_cuda/policy_map.hpp"

namespace numref_cuda {
namespace kernels {
namespace {

using numref::FormatId;
using E4 = FloatTraits<FormatId::f8e4m3fn>;
using E5 = FloatTraits<FormatId::f8e5m2>;
using BF16 = FloatTraits<FormatId::bf16>;

template <class S, int V>
__global__ void subtensor_err_kernel(Geometry g, const unsigned char* x, MorArgs<E4> a4, MorArgs<E5> a5,
                                     ErrorSumState* s4, ErrorSumState* s5) {
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads())
    subtensor_error_unit<S, BF16, V>(
        g, x, u, a4, a5,
        [&](std::uint32_t b, const ErrorAcc& c4, const ErrorAcc& c5) {
          flush(c4, &s4[b]);
          flush(c5, &s5[b]);
        },
        [&](std::uint32_t b, int fmt, int d, std::uint32_t v) { add_u64(&(fmt == 0 ? s4 : s5)[b].digit[d], v); });
}

template <class S, int V>
__global__ void subtensor_out_kernel(Geometry g, const unsigned char* x, const std::uint8_t* type, MorArgs<E4> a4,
                                     MorArgs<E5> a5, CastPolicy keep, std::uint16_t* out) {
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads())
    subtensor_output_unit<S, BF16, V>(g, x, u, type, a4, a5, keep, out);
}

template <class S, int V>
cudaError_t run_subtensor_mor(const QuantizePlan& p4, const QuantizePlan& p5, bool three, const void* x,
                              SubtensorMorDecision& r, std::uint16_t* out, cudaStream_t s) {
  Scratch sc(s);
  ScaleState st4, st5;
  const std::uint32_t nb = p4.n_blocks;
  auto* sc4 = sc.get<std::uint32_t>(nb);
  auto* sc5 = sc.get<std::uint32_t>(nb);
  auto* gm = sc.get<std::uint32_t>(2 * p4.n_groups);
  if (sc.err != cudaSuccess) return sc.err;
  cudaError_t e = run_scale(p4, x, true, sc, st4, sc4, gm, nullptr, nullptr);
  if (e == cudaSuccess) e = run_scale(p5, x, false, sc, st5, sc5, gm + p4.n_groups, nullptr, nullptr);
  if (e != cudaSuccess) return e;
  auto* s4 = sc.get<ErrorSumState>(nb);
  auto* s5 = sc.get<ErrorSumState>(nb);
  auto* type_d = sc.get<std::uint8_t>(nb);
  if (sc.err != cudaSuccess) return sc.err;
  const MorArgs<E4> a4{st4.f, make_element_ctx<E4>(p4.elem, p4.fused), p4.wide_d, p4.wide_out, nullptr};
  const MorArgs<E5> a5{st5.f, make_element_ctx<E5>(p5.elem, p5.fused), p5.wide_d, p5.wide_out, nullptr};
  const auto* xb = static_cast<const unsigned char*>(x);
  subtensor_err_kernel<S, V><<<blocks_for(p4.geom.n_units), 256, 0, s>>>(p4.geom, xb, a4, a5, s4, s5);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  std::vector<ErrorSumState> h4(nb), h5(nb);
  std::vector<std::uint32_t> amax(nb), mn(nb);
  e = cudaMemcpyAsync(h4.data(), s4, nb * sizeof(ErrorSumState), cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(h5.data(), s5, nb * sizeof(ErrorSumState), cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(amax.data(), st4.amax, nb * 4u, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(mn.data(), st4.mn, nb * 4u, cudaMemcpyDeviceToHost, s);
  r.e4m3_scales.resize(nb);
  r.e5m2_scales.resize(nb);
  if (e == cudaSuccess) e = cudaMemcpyAsync(r.e4m3_scales.data(), sc4, nb * 4u, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(r.e5m2_scales.data(), sc5, nb * 4u, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(&r.group_mantissa[0], gm, 4u, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(&r.group_mantissa[1], gm + p4.n_groups, 4u, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) return e;
  // §27.1 – §27.3 the decisions, with the same function the host tests check
  r.type.resize(nb);
  r.eq3.resize(nb);
  r.eq4.resize(nb);
  r.e4m3_sum.resize(nb);
  r.e5m2_sum.resize(nb);
  for (std::uint32_t b = 0; b < nb; ++b) {
    r.e4m3_sum[b] = normalize(h4[b]);
    r.e5m2_sum[b] = normalize(h5[b]);
    r.type[b] = subtensor_decide(r.e4m3_sum[b], r.e5m2_sum[b], amax[b], mn[b] == kNoMin ? 0u : mn[b], three, E5::emin,
                                 widen_finite_mag<E5>(E5::max_finite), r.eq3[b], r.eq4[b]);
  }
  if ((e = cudaMemcpyAsync(type_d, r.type.data(), nb, cudaMemcpyHostToDevice, s)) != cudaSuccess) return e;
  if (out != nullptr) {
    const CastPolicy keep = cast_policy(numref::Policy{}, numref::format(p4.source), numref::format(FormatId::bf16));
    subtensor_out_kernel<S, V><<<blocks_for(p4.geom.n_units), 256, 0, s>>>(p4.geom, xb, type_d, a4, a5, keep, out);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  return cudaStreamSynchronize(s);  // type_d is freed after the kernels that read it
}

}  // namespace
}  // namespace kernels

using kernels::guard;

cudaError_t try_subtensor_mor(const numref::TensorView& x, const numref::SubtensorMorSpec& spec,
                              SubtensorMorDecision& result, std::uint16_t* out, cudaStream_t stream) noexcept {
  kernels::clear_why();
  return guard([&]() -> cudaError_t {
    QuantizePlan p4, p5;
    host::plan_subtensor_mor(x, spec, p4, p5);
    p4.geom.vec = p5.geom.vec = vector_loads_ok(p4, x.data());
    const bool three = spec.recipe == numref::SubtensorRecipe::three_way;
    cudaError_t e = cudaErrorInvalidValue;
    if (!with_source(p4.source, [&]<class S, int V>() {
          e = kernels::run_subtensor_mor<S, V>(p4, p5, three, x.data(), result, out, stream);
        }))
      return kernels::invalid_argument("no CUDA kernel reads this source format");
    return e;
  });
}

}  // namespace numref_cuda
