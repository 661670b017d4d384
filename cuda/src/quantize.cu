// numref CUDA kernels — block quantization, fake-quant and dequantize: the entry points and the
// dequantize kernels.                                               spec §13 – §20, §A.7
//
// try_quantize validates its arguments and runs the kernels of the plan's element format, which
// are compiled in shards (quantize_shards.hpp, quantize_shard.cuh): the scale pipeline
// (block_scale.cu), then quantize_kernel or the one-pass row_block_kernel. try_dequantize:
//   stored_factors_kernel  the block factors from the stored scales (group mantissas, NVFP4
//                          tensor amax)
//   dequant_kernel         §19.3 dequantize_unit
// grid-stride loops over the work units of tiling.cuh, calling the same __host__ __device__
// functions the host emulation (host_run_quantize.cpp) runs in the tests. MoR: mor*.cu.
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "block_launch.cuh"
#include "numref_arith/format_list.hpp"
#include "numref_arith/tiling.cuh"
#include "numref_cuda/api.hpp"
#include "quantize_shards.hpp"

namespace numref_cuda {
namespace kernels {
namespace {

template <class D, int V>
__global__ void dequant_kernel(Geometry g, const std::uint8_t* codes, const BlockFactors* f, CastPolicy wide,
                               std::uint32_t* out) {
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads())
    dequantize_unit<D, V>(g, codes, u, f, wide, out);
}

__global__ void stored_factors_kernel(ScaleParams sp, Geometry g, std::uint32_t nb, const std::uint32_t* scales,
                                      const std::uint32_t* gm, std::uint32_t tamax, BlockFactors* f) {
  for (std::uint64_t i = first_thread(); i < nb; i += grid_threads()) {
    const auto b = static_cast<std::uint32_t>(i);
    f[b] = factors_from_stored(sp, scales[b], sp.kind == ScaleKind::gam ? gm[g.group_of_block(b)] : 0u, tamax);
  }
}

// §A.7 The quantize kernels of p, from the shard that holds p.element.
cudaError_t quantize_shards(const QuantizePlan& p, const void* x, const RandomSource& rnd, const QuantizeOutputs& out,
                            cudaStream_t stream, bool& found) {
  found = false;
  const int shard = quantize_shard_of(p.element);
  cudaError_t e = cudaErrorInvalidValue;
  [&]<int... K>(std::integer_sequence<int, K...>) {
    ((shard == K ? (e = quantize_shard<K>(p, x, rnd, out, stream, found), 0) : 0), ...);
  }
  (std::make_integer_sequence<int, kQuantizeShards>{});
  return e;
}

template <class D>
cudaError_t run_dequant(const QuantizePlan& p, const std::uint8_t* codes, const BlockFactors* f, std::uint32_t* out,
                        cudaStream_t s) {
  if (p.chunk == 4)
    dequant_kernel<D, 4><<<blocks_for(p.geom.n_units), 256, 0, s>>>(p.geom, codes, f, p.wide_d, out);
  else
    dequant_kernel<D, 8><<<blocks_for(p.geom.n_units), 256, 0, s>>>(p.geom, codes, f, p.wide_d, out);
  return cudaGetLastError();
}

}  // namespace
}  // namespace kernels

using kernels::guard;

cudaError_t try_quantize(const QuantizePlan& p0, const void* x, const RandomSource& rnd, const QuantizeOutputs& out,
                         cudaStream_t stream) noexcept {
  kernels::clear_why();
  return guard([&]() -> cudaError_t {
    if (x == nullptr) return kernels::invalid_argument("null input");
    if (p0.sr_bits != 0 && !rnd.use_philox && rnd.values == nullptr)
      return kernels::invalid_argument("stochastic rounding needs random values (explicit or Philox)");
    QuantizePlan p = p0;
    p.geom.vec = vector_loads_ok(p, x);
    bool found = false;
    const cudaError_t e = kernels::quantize_shards(p, x, rnd, out, stream, found);
    return found ? e : kernels::invalid_argument("no CUDA kernel for this source or element format");
  });
}

cudaError_t try_dequantize(const QuantizePlan& p, const std::uint8_t* codes, const std::uint32_t* scales,
                           const std::uint32_t* group_mantissa, std::uint32_t tensor_amax, std::uint32_t* out,
                           cudaStream_t stream) noexcept {
  kernels::clear_why();
  return guard([&]() -> cudaError_t {
    if (codes == nullptr || scales == nullptr || out == nullptr) return kernels::invalid_argument("null pointer");
    if (p.scale.kind == ScaleKind::gam && group_mantissa == nullptr)
      return kernels::invalid_argument("GAM needs the group mantissas");
    kernels::Scratch sc(stream);
    auto* f = sc.get<BlockFactors>(p.n_blocks);
    if (sc.err != cudaSuccess) return sc.err;
    kernels::stored_factors_kernel<<<kernels::blocks_for(p.n_blocks), 256, 0, stream>>>(
        p.scale, p.geom, p.n_blocks, scales, group_mantissa, tensor_amax, f);
    cudaError_t e = cudaErrorInvalidValue;
    if (!with_element(p.element, [&]<class D>() { e = kernels::run_dequant<D>(p, codes, f, out, stream); }))
      return kernels::invalid_argument("no CUDA kernel for this element format");
    return e;
  });
}

}  // namespace numref_cuda
