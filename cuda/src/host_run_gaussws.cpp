// numref CUDA kernels — GaussWS run on the CPU (host emulation of gaussws.cu; the walk:
// host_walk.hpp).                                                           spec §30, §A.13
#include <cstdint>
#include <stdexcept>

#include "host_walk.hpp"
#include "numref_arith/gaussws_plan.hpp"
#include "numref_cuda/host_run.hpp"

namespace numref_cuda::host {

namespace {

template <class W, class G, bool SumF32>
void gaussws_tiles(const gaussws::Problem& p, const void* w, const std::uint32_t* bt, const std::uint16_t* u,
                   const void* g, const Walk& walk, GausswsOut& o) {
  namespace gw = gaussws;
  const SpecialCodes<BF16> sp = gw::bf16_codes();
  const bool reverse = walk.order == Walk::Order::reverse;
  // the lanes of one simulated CUDA block, in the order the walk visits them
  auto each_lane = [&](auto&& body) {
    for (std::uint32_t k = 0; k < gw::kLanes; ++k) body(reverse ? gw::kLanes - 1 - k : k);
  };
  std::uint32_t status = 0;
  walk_units(p.tiles(), walk, [&](std::uint32_t, std::uint64_t tile) {
    const gw::Lane l0 = gw::lane_of(p, tile, 0);
    const std::uint64_t key = p.key ? gw::block_key(p.seed, p.layer, p.step, l0.block_row, l0.block_col) : 0u;
    // forward: the amax (integer max over the lanes), e and s by one thread, then every lane
    std::uint32_t amax = 0;
    each_lane([&](std::uint32_t lane) {
      const std::uint32_t a = gw::lane_amax<W>(p, gw::lane_of(p, tile, lane), w);
      amax = a > amax ? a : amax;
    });
    const gw::Rounded e = gw::exp2_one_minus(bt[tile]);
    if (!e.decided) status |= gw::kStatusExp2Undecided;
    const std::uint32_t s = amax >= kF32Inf ? gw::kNaN32 : gw::block_scale(amax, e.code);
    o.scale[tile] = s;
    std::uint64_t digits[2][kSumDigits] = {};
    bool nonfinite = false;
    auto sink = [&](int neg, int d, std::uint32_t v) { digits[neg][d] += v; };
    each_lane([&](std::uint32_t lane) {
      const gw::Lane l = gw::lane_of(p, tile, lane);
      if (l.count == 0) return;
      int r[gw::kLaneElems];
      gw::lane_noise(p, l, lane, key, u, r);
      gw::lane_forward<W, SumF32>(p, l, w, r, s, sp, o.w_hat.data(),
                                  [&](std::uint64_t word, std::uint32_t bits) { o.r_packed[word] |= bits; });
      gw::LaneTerms t;
      gw::lane_terms<G>(p, l, g, r, t, sink);
      gw::flush_terms(t, sink);
      nonfinite = nonfinite || t.nonfinite;
    });
    const gw::Rounded d = gw::grad_finish(digits, nonfinite, s);
    if (!d.decided) status |= gw::kStatusGradUndecided;
    o.grad[tile] = d.code;
  });
  if (status != 0u) throw std::invalid_argument(gw::status_error(status));
}

}  // namespace

GausswsOut gaussws(const gaussws::Problem& p, FormatId wf, const void* w, const std::uint32_t* bt,
                   const std::uint16_t* u, FormatId gf, const void* g, const Walk& walk) {
  gaussws::check_bt(bt, p.tiles());
  if (!p.key && u == nullptr) throw std::invalid_argument("gaussws: noise=bits needs u");
  GausswsOut o;
  o.r_packed.assign(static_cast<std::size_t>((p.size() + 7) / 8), 0u);
  o.scale.assign(static_cast<std::size_t>(p.tiles()), 0u);
  o.grad.assign(static_cast<std::size_t>(p.tiles()), 0u);
  o.w_hat.assign(static_cast<std::size_t>(p.size()), 0u);
  using F32T = FloatTraits<FormatId::f32>;
  auto with_g = [&]<class W, bool SumF32>() {
    if (gf == FormatId::bf16)
      gaussws_tiles<W, BF16, SumF32>(p, w, bt, u, g, walk, o);
    else
      gaussws_tiles<W, F32T, SumF32>(p, w, bt, u, g, walk, o);
  };
  auto with_sum = [&]<class W>() {
    if (p.sum_f32)
      with_g.template operator()<W, true>();
    else
      with_g.template operator()<W, false>();
  };
  if ((wf != FormatId::f32 && wf != FormatId::bf16) || (gf != FormatId::f32 && gf != FormatId::bf16))
    throw std::invalid_argument("gaussws: w and g must be f32 or bf16");
  if (wf == FormatId::bf16)
    with_sum.template operator()<BF16>();
  else
    with_sum.template operator()<F32T>();
  return o;
}

}  // namespace numref_cuda::host
