// numref CUDA kernels — block quantization and fake-quant: the kernels of one shard of the
// element formats (quantize_shards.hpp).                          spec §19, §20, §A.7
//
// Every kernel is a grid-stride loop over the work units of tiling.cuh and calls the same
// __host__ __device__ functions the host emulation (host_run_quantize.cpp) runs in the tests:
//   quantize_kernel  §19.2 / §19.6 quantize_unit: codes, fake-quant, counts (atomicAdd)
//   row_block_kernel §A.7 item 3 one pass per row block (MX 1x32, 1x128, ...): amax, scale, codes
// after the scale pipeline (block_scale.cu). Loads are 16-byte vectors when the view is dense
// and aligned (Geometry::vec). Included only by quantize_shard<K>.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "block_launch.cuh"
#include "block_scale.cuh"
#include "numref_arith/format_list.hpp"
#include "numref_arith/tiling.cuh"
#include "numref_cuda/api.hpp"
#include "quantize_shards.hpp"

namespace numref_cuda::kernels {
namespace {

using numref::FormatId;

// §19.5 A thread's counts into the launch's four counters (integer adds: order-free), and an
// invalid random value into the status word.
__device__ __forceinline__ void flush_counts(const Counts& c, bool ok, std::uint64_t* counts, std::uint32_t* status) {
  if (counts != nullptr) {
    add_u64(&counts[0], c.saturated);
    add_u64(&counts[1], c.flushed);
    add_u64(&counts[2], c.nan);
    add_u64(&counts[3], c.inf);
  }
  if (!ok) atomicOr(status, 1u);
}

template <class S, class D, int V>
__global__ void quantize_kernel(Geometry g, const unsigned char* x, QuantizeArgs<D> a, std::uint64_t* counts,
                                std::uint32_t* status) {
  Counts c;
  bool ok = true;
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads())
    ok &= quantize_unit<S, D, V>(g, x, u, a, c);
  flush_counts(c, ok, counts, status);
}

template <class S, class D, int V>
__global__ void row_block_kernel(Geometry g, std::uint32_t nb, const unsigned char* x, ScaleParams sp, AmaxPolicy ap,
                                 QuantizeArgs<D> a, std::uint32_t* scales, std::uint32_t* amax, std::uint64_t* counts,
                                 std::uint32_t* status) {
  Counts c;
  bool ok = true;
  for (std::uint64_t b = first_thread(); b < nb; b += grid_threads())
    ok &= quantize_row_block<S, D, V>(g, x, static_cast<std::uint32_t>(b), sp, ap, a, scales, amax, c);
  flush_counts(c, ok, counts, status);
}

template <class S, int V, class D>
cudaError_t run_quantize(const QuantizePlan& p, const void* x, const RandomSource& rnd, const QuantizeOutputs& out,
                         cudaStream_t stream) {
  Scratch sc(stream);
  ScaleState st;
  cudaError_t e = cudaSuccess;
  if (!p.row_blocks) {
    e = run_scale(p, x, false, sc, st, out.scales, out.group_mantissa, out.tensor_amax, out.amax);
    if (e != cudaSuccess) return e;
  }
  QuantizeArgs<D> a;
  a.factors = st.f;
  a.elem = make_element_ctx<D>(p.elem, p.fused, p.symmetric);
  a.wide_d = p.wide_d;
  a.wide_out = p.wide_out;
  a.out = p.out == FormatId::bf16 ? OutFormat::bf16 : (p.out == FormatId::f16 ? OutFormat::f16 : OutFormat::f32);
  a.codes = out.codes;
  a.fake = out.fake;
  a.rnd.k = p.sr_bits;
  if (rnd.use_philox)
    a.rnd.philox = rnd.philox;
  else
    a.rnd.values = rnd.values;
  std::uint32_t* status = sc.get<std::uint32_t>(1);
  if (sc.err != cudaSuccess) return sc.err;
  if (p.row_blocks)  // §A.7 item 3 one pass: amax, scale and codes of a row block in one thread
    row_block_kernel<S, D, V><<<blocks_for(p.n_blocks), 256, 0, stream>>>(
        p.geom, p.n_blocks, static_cast<const unsigned char*>(x), p.scale, p.amax, a, out.scales, out.amax,
        reinterpret_cast<std::uint64_t*>(out.counts), status);
  else
    quantize_kernel<S, D, V><<<blocks_for(p.geom.n_units), 256, 0, stream>>>(
        p.geom, static_cast<const unsigned char*>(x), a, reinterpret_cast<std::uint64_t*>(out.counts), status);
  e = cudaGetLastError();
  if (e != cudaSuccess || p.sr_bits == 0 || rnd.use_philox) return e;
  std::uint32_t h = 0;
  e = cudaMemcpyAsync(&h, status, 4, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess && h != 0u) return invalid_argument(quantize_random_error(p.sr_bits));
  return e;
}

}  // namespace

// quantize_shards.hpp: the kernels of p for p.source and p.element, p.element being in shard K
// (quantize.cu calls the shard that holds it); only this shard's elements are instantiated.
template <int K>
cudaError_t quantize_shard(const QuantizePlan& p, const void* x, const RandomSource& rnd, const QuantizeOutputs& out,
                           cudaStream_t stream, bool& found) {
  static_assert(0 <= K && K < kQuantizeShards);
  cudaError_t e = cudaErrorInvalidValue;
  with_source(p.source, [&]<class S, int V>() {
    found = visit_format<kElement>(p.element, [&]<FormatId F>() {
      if constexpr (quantize_shard_of(F) == K) e = run_quantize<S, V, ElementTraits<F>>(p, x, rnd, out, stream);
    });
  });
  return e;
}

}  // namespace numref_cuda::kernels
