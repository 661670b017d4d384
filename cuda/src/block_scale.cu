// numref CUDA kernels — the scale pipeline of a quantization plan, compiled once for the quantize
// and MoR kernels (quantize_shard.cuh, mor.cu, mor_subtensor.cu).  spec §13 – §18, §20, §A.7
//
//   amax_kernel      §13   amax_unit -> atomicMax / atomicMin on the integer keys (§13.4: any
//                          order of atomics gives the reference's amax)
//   reduce_kernel    §17.1 / §18.1 group and tensor amax (atomicMax over block amaxes)
//   factors_kernel   §14–§18, §20 block_factors per block; GAM group mantissas
#include "block_scale.cuh"

#include <cuda_runtime.h>

#include <cstdint>

#include "block_launch.cuh"
#include "numref_arith/format_list.hpp"
#include "numref_arith/tiling.cuh"

namespace numref_cuda::kernels {
namespace {

template <class S, int V>
__global__ void amax_kernel(Geometry g, const unsigned char* x, AmaxPolicy p, std::uint32_t* amax, std::uint32_t* mn) {
  const bool want_min = mn != nullptr;
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads())
    amax_unit<S, V>(g, x, u, p, want_min, [&](std::uint32_t b, std::uint32_t a, std::uint32_t m) {
      if (a != 0u) atomicMax(&amax[b], a);
      if (want_min && m != kNoMin) atomicMin(&mn[b], m);
    });
}

__global__ void reduce_kernel(Geometry g, std::uint32_t nb, const std::uint32_t* amax, std::uint32_t* gamax,
                              std::uint32_t* tamax) {
  for (std::uint64_t b = first_thread(); b < nb; b += grid_threads()) {
    const std::uint32_t a = amax[b];
    if (a == 0u) continue;
    atomicMax(&gamax[g.group_of_block(static_cast<std::uint32_t>(b))], a);
    atomicMax(tamax, a);
  }
}

__global__ void factors_kernel(ScaleParams sp, Geometry g, std::uint32_t nb, std::uint32_t ng,
                               const std::uint32_t* amax, const std::uint32_t* gamax, const std::uint32_t* tamax,
                               BlockFactors* f, std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax_out) {
  const std::uint64_t n = nb > ng ? nb : ng;
  for (std::uint64_t i = first_thread(); i < n; i += grid_threads()) {
    if (i < nb) {
      const auto b = static_cast<std::uint32_t>(i);
      TensorState t;
      if (sp.kind == ScaleKind::gam) t = gam_group(gamax[g.group_of_block(b)], sp.q_max);
      if (sp.kind == ScaleKind::nvfp4) {
        t.t_amax = *tamax;
        t.s_enc = nvfp4_tensor_scale(*tamax, sp);
      }
      const BlockFactors bf = block_factors(sp, amax[b], t);
      f[b] = bf;
      if (scales != nullptr) scales[b] = bf.stored;
    }
    if (i < ng && gm != nullptr && sp.kind == ScaleKind::gam) gm[i] = gam_group(gamax[i], sp.q_max).m_g;
    if (i == 0 && tamax_out != nullptr) *tamax_out = *tamax;
  }
}

template <class S, int V>
cudaError_t run_scale_as(const QuantizePlan& p, const void* x, bool want_min, Scratch& sc, ScaleState& st,
                         std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax_out, std::uint32_t* amax_out) {
  st.amax = amax_out != nullptr ? amax_out : sc.get<std::uint32_t>(p.n_blocks);
  if (amax_out != nullptr && sc.err == cudaSuccess) sc.err = cudaMemsetAsync(amax_out, 0, p.n_blocks * 4u, sc.s);
  if (want_min) st.mn = sc.get<std::uint32_t>(p.n_blocks, 0xFF);
  st.gamax = sc.get<std::uint32_t>(p.n_groups);
  st.tamax = sc.get<std::uint32_t>(1);
  st.f = sc.get<BlockFactors>(p.n_blocks);
  if (sc.err != cudaSuccess) return sc.err;
  const auto* xb = static_cast<const unsigned char*>(x);
  amax_kernel<S, V><<<blocks_for(p.geom.n_units), 256, 0, sc.s>>>(p.geom, xb, p.amax, st.amax, st.mn);
  reduce_kernel<<<blocks_for(p.n_blocks), 256, 0, sc.s>>>(p.geom, p.n_blocks, st.amax, st.gamax, st.tamax);
  factors_kernel<<<blocks_for(p.n_blocks > p.n_groups ? p.n_blocks : p.n_groups), 256, 0, sc.s>>>(
      p.scale, p.geom, p.n_blocks, p.n_groups, st.amax, st.gamax, st.tamax, st.f, scales, gm, tamax_out);
  return cudaGetLastError();
}

}  // namespace

cudaError_t run_scale(const QuantizePlan& p, const void* x, bool want_min, Scratch& sc, ScaleState& st,
                      std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax_out, std::uint32_t* amax_out) {
  cudaError_t e = cudaErrorInvalidValue;  // no kernel reads p.source (the plan refuses it first)
  with_source(p.source, [&]<class S, int V>() {
    e = run_scale_as<S, V>(p, x, want_min, sc, st, scales, gm, tamax_out, amax_out);
  });
  return e;
}

}  // namespace numref_cuda::kernels
