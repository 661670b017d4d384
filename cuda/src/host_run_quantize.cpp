// numref CUDA kernels — quantize, fake-quant and dequantize run on the CPU (host emulation of
// quantize_shard.cuh and quantize.cu; the walk: host_walk.hpp).                   spec §A.4, §A.7
#include <cstring>
#include <stdexcept>
#include <vector>

#include "host_walk.hpp"
#include "numref_arith/format_list.hpp"
#include "numref_cuda/host_run.hpp"

namespace numref_cuda::host {

QuantizeOut quantize(const QuantizePlan& p0, const void* x, const ElementRandom& rnd, bool want_codes, bool want_fake,
                     const Walk& w, bool row_blocks) {
  if (row_blocks && !p0.row_blocks)
    throw std::invalid_argument("CUDA host run: the plan has no one-pass row-block path");
  QuantizePlan p = p0;
  p.geom.vec = vector_loads_ok(p, x);
  QuantizeOut o;
  if (row_blocks) {  // §A.7 item 3: every output comes from the one pass
    o.scale.amax.assign(p.n_blocks, 0u);
    o.scale.scales.assign(p.n_blocks, 0u);
  } else {
    o.scale = scale_any(p, x, w);
  }
  const std::size_t n = static_cast<std::size_t>(p.geom.rows) * p.geom.cols;
  if (want_codes) o.codes.assign(n, 0u);
  if (want_fake) o.fake.assign(n, 0u);
  for_source(p.source, [&]<class S, int V>() {
    for_element(p.element, [&]<class D>() {
      QuantizeArgs<D> a;
      a.factors = o.scale.factors.data();
      a.elem = make_element_ctx<D>(p.elem, p.fused, p.symmetric);
      a.wide_d = p.wide_d;
      a.wide_out = p.wide_out;
      a.out = p.out == FormatId::bf16 ? OutFormat::bf16 : (p.out == FormatId::f16 ? OutFormat::f16 : OutFormat::f32);
      a.rnd = rnd;
      a.codes = want_codes ? o.codes.data() : nullptr;
      a.fake = want_fake ? static_cast<void*>(o.fake.data()) : nullptr;
      std::vector<std::uint32_t> fake16;
      if (want_fake && p.out != FormatId::f32) {  // the kernels store 16-bit outputs
        fake16.assign((n + 1) / 2, 0u);
        a.fake = fake16.data();
      }
      const auto* base = static_cast<const unsigned char*>(x);
      auto add = [&](const Counts& c) {  // the thread's counts, added to the totals (atomicAdd)
        o.counts.saturated += c.saturated, o.counts.flushed += c.flushed, o.counts.nan += c.nan, o.counts.inf += c.inf;
      };
      if (row_blocks) {
        Geometry blocks = p.geom;  // the simulated grid walks blocks
        blocks.n_units = p.n_blocks;
        walk_units(blocks, w, [&](std::uint32_t, std::uint64_t b) {
          Counts c;
          if (!quantize_row_block<S, D, V>(p.geom, base, static_cast<std::uint32_t>(b), p.scale, p.amax, a,
                                           o.scale.scales.data(), o.scale.amax.data(), c))
            o.random_ok = false;
          add(c);
        });
      } else {
        walk_units(p.geom, w, [&](std::uint32_t, std::uint64_t u) {
          Counts c;
          if (!quantize_unit<S, D, V>(p.geom, base, u, a, c)) o.random_ok = false;
          add(c);
        });
      }
      if (!fake16.empty()) {
        std::vector<std::uint16_t> h(n);
        std::memcpy(h.data(), fake16.data(), n * 2);
        for (std::size_t i = 0; i < n; ++i) o.fake[i] = h[i];
      }
      return 0;
    });
    return 0;
  });
  return o;
}

std::vector<std::uint32_t> dequantize(const QuantizePlan& p, const std::uint8_t* codes, const std::uint32_t* scales,
                                      const std::uint32_t* group_mantissa, std::uint32_t tensor_amax, const Walk& w) {
  std::vector<BlockFactors> f(p.n_blocks);
  for (std::uint32_t b = 0; b < p.n_blocks; ++b) {
    const std::uint32_t m_g = p.scale.kind == ScaleKind::gam ? group_mantissa[p.geom.group_of_block(b)] : 0u;
    f[b] = factors_from_stored(p.scale, scales[b], m_g, tensor_amax);
  }
  std::vector<std::uint32_t> out(static_cast<std::size_t>(p.geom.rows) * p.geom.cols);
  // Dequantize reads the dense codes: the unit geometry of the codes (V = 16 one-byte codes).
  for_element(p.element, [&]<class D>() {
    walk_units(p.geom, w, [&](std::uint32_t, std::uint64_t u) {
      if (p.chunk == 4)
        dequantize_unit<D, 4>(p.geom, codes, u, f.data(), p.wide_d, out.data());
      else
        dequantize_unit<D, 8>(p.geom, codes, u, f.data(), p.wide_d, out.data());
    });
    return 0;
  });
  return out;
}

}  // namespace numref_cuda::host
