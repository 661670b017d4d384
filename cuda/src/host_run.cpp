// numref CUDA kernels — the kernels' work run on the CPU (host emulation).        spec §A.4, §A.7
//
// Every function walks the work units of the plan the way the grid-stride loops of the kernels
// (cuda/src: block_scale.cu, quantize_shard.cuh, quantize.cu, mor*.cu, gaussws.cu) do —
// `threads` simulated threads, thread t taking units t, t + T, t + 2T, … — and visits the threads
// in the walk's order (host_walk.hpp). Each thread's contributions leave it exactly as on the
// device: amax / min keys as integer max / min into the per-block words (atomicMax / atomicMin),
// error terms as 24-bit pieces into the carry-save counters (atomicAdd), counts as integer adds.
// Only the per-unit functions of tiling.cuh and the per-block functions of scale.cuh /
// exact_sum.cuh / mor.cuh compute anything. This file: the casts and the scale pipeline;
// quantize / dequantize, MoR and GaussWS: host_run_quantize.cpp, host_run_mor.cpp,
// host_run_gaussws.cpp.
#include "numref_cuda/host_run.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_walk.hpp"
#include "numref_arith/cast_kernels.hpp"
#include "numref_arith/format_list.hpp"
#include "numref_cuda/support.hpp"

namespace numref_cuda::host {
namespace {

// §17.1 / §18.1 The per-block tensor state from the block amaxes.
std::vector<TensorState> tensor_states(const QuantizePlan& p, const std::vector<std::uint32_t>& amax,
                                       std::vector<std::uint32_t>& group_mantissa, std::uint32_t& tensor_amax) {
  const Geometry& g = p.geom;
  std::vector<TensorState> per_block(amax.size());
  tensor_amax = 0;
  for (std::uint32_t a : amax) tensor_amax = amax_max(tensor_amax, a);  // §13.4
  if (p.scale.kind == ScaleKind::gam) {
    std::vector<std::uint32_t> gamax(p.n_groups, 0u);
    for (std::uint32_t b = 0; b < amax.size(); ++b) {
      const std::uint32_t G = g.group_of_block(b);
      gamax[G] = amax_max(gamax[G], amax[b]);
    }
    std::vector<TensorState> groups(p.n_groups);
    group_mantissa.assign(p.n_groups, 0u);
    for (std::uint32_t G = 0; G < p.n_groups; ++G) {
      groups[G] = gam_group(gamax[G], p.scale.q_max);
      group_mantissa[G] = groups[G].m_g;
    }
    for (std::uint32_t b = 0; b < amax.size(); ++b) per_block[b] = groups[g.group_of_block(b)];
  } else if (p.scale.kind == ScaleKind::nvfp4) {
    TensorState t;
    t.t_amax = tensor_amax;
    t.s_enc = nvfp4_tensor_scale(tensor_amax, p.scale);
    for (auto& s : per_block) s = t;
  }
  return per_block;
}

template <class S, int V>
ScaleOut scale_impl(const QuantizePlan& p0, const void* x, const Walk& w, std::vector<std::uint32_t>* min_out) {
  QuantizePlan p = p0;
  p.geom.vec = vector_loads_ok(p, x);
  const Geometry& g = p.geom;
  ScaleOut o;
  o.amax.assign(p.n_blocks, 0u);
  if (min_out != nullptr) min_out->assign(p.n_blocks, kNoMin);
  const auto* base = static_cast<const unsigned char*>(x);
  walk_units(g, w, [&](std::uint32_t, std::uint64_t u) {
    amax_unit<S, V>(g, base, u, p.amax, min_out != nullptr, [&](std::uint32_t b, std::uint32_t a, std::uint32_t m) {
      o.amax[b] = amax_max(o.amax[b], a);                                  // atomicMax
      if (min_out != nullptr) (*min_out)[b] = std::min((*min_out)[b], m);  // atomicMin
    });
  });
  const auto states = tensor_states(p, o.amax, o.group_mantissa, o.tensor_amax);
  o.factors.resize(p.n_blocks);
  o.scales.resize(p.n_blocks);
  for (std::uint32_t b = 0; b < p.n_blocks; ++b) {
    o.factors[b] = block_factors(p.scale, o.amax[b], states[b]);
    o.scales[b] = o.factors[b].stored;
  }
  if (p.scale.kind != ScaleKind::nvfp4) o.tensor_amax = 0;
  return o;
}

}  // namespace

ScaleOut scale_any(const QuantizePlan& p, const void* x, const Walk& w, std::vector<std::uint32_t>* min_out) {
  ScaleOut o;
  for_source(p.source, [&]<class S, int V>() { o = scale_impl<S, V>(p, x, w, min_out); });
  return o;
}

bool cast(const std::uint32_t* in, FormatId from, std::uint32_t* out, FormatId to, std::size_t n, const CastPolicy& p,
          const std::uint32_t* r, const Walk& w) {
  if (const std::string err = cast_support(from, to, p, r != nullptr); !err.empty()) throw std::invalid_argument(err);
  bool random_ok = true;
  visit_format<kWide | kNarrow>(from, [&]<FormatId SF>() {
    visit_format<kWide | kNarrow>(to, [&]<FormatId DF>() {
      if constexpr (is_narrow_cast(SF, DF) || is_wide_cast(SF, DF)) {
        using S = FloatTraits<SF>;
        using D = FloatTraits<DF>;
        const SpecialCodes<D> sp = make_special_codes<D>(p);
        const int k = p.sr_bits;
        constexpr int bytes_in = (S::bits + 7) / 8, bytes_out = (D::bits + 7) / 8;  // storage per code
        constexpr std::uint64_t V = 16 / static_cast<std::uint64_t>(bytes_in < bytes_out ? bytes_in : bytes_out);
        with_cast_kernel<S, D>(p, [&]<Mode M, SrVariant SV>() {
          walk_units((n + V - 1) / V, w, [&](std::uint32_t, std::uint64_t u) {
            for (std::uint64_t i = u * V; i < n && i < (u + 1) * V; ++i) {
              std::uint32_t ri = 0;
              if constexpr (M == Mode::sr) {
                ri = r[i];
                if (!sr_value_valid(ri, k)) random_ok = false;
              }
              out[i] = convert_as<S, D, M, SV>(in[i], sp, k, ri);
            }
          });
        });
      }
    });
  });
  return random_ok;
}

ScaleOut scale(const QuantizePlan& p, const void* x, const Walk& w) { return scale_any(p, x, w); }

}  // namespace numref_cuda::host
