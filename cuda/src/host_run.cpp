// numref CUDA kernels — the kernels' work run on the CPU (host emulation).        spec §35.4, §35.7
//
// Every function walks the work units of the plan the way the grid-stride loops of the kernels
// (cuda/src/quantize.cu, mor.cu) do — `threads` simulated threads, thread t taking units
// t, t + T, t + 2T, … — and visits the threads in the walk's order. Each thread's contributions
// leave it exactly as on the device: amax / min keys as integer max / min into the per-block
// words (atomicMax / atomicMin), error terms as 24-bit pieces into the carry-save counters
// (atomicAdd), counts as integer adds. Only the per-unit functions of tiling.cuh and the
// per-block functions of scale.cuh / exact_sum.cuh / mor.cuh compute anything.
#include "numref_cuda/host_run.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "numref/metrics.hpp"
#include "numref_arith/cast_kernels.hpp"
#include "numref_arith/format_list.hpp"
#include "numref_arith/gaussws_plan.hpp"
#include "numref_cuda/policy_map.hpp"
#include "numref_cuda/support.hpp"

namespace numref_cuda::host {
namespace {

using numref::FormatId;
using E4 = FloatTraits<FormatId::f8e4m3fn>;
using E5 = FloatTraits<FormatId::f8e5m2>;
using BF16 = FloatTraits<FormatId::bf16>;

// The order in which the simulated threads run.
std::vector<std::uint32_t> thread_order(const Walk& w, std::uint64_t n_units) {
  const std::uint64_t t = std::min<std::uint64_t>(w.threads == 0 ? 1 : w.threads, n_units);
  std::vector<std::uint32_t> ord(static_cast<std::size_t>(t));
  std::iota(ord.begin(), ord.end(), 0u);
  if (w.order == Walk::Order::reverse) std::reverse(ord.begin(), ord.end());
  if (w.order == Walk::Order::shuffled) {
    std::mt19937_64 rng(w.seed);
    std::shuffle(ord.begin(), ord.end(), rng);
  }
  return ord;
}
// Runs body(u) for every unit of thread `t` of `T` (the grid-stride loop), units in the order a
// thread visits them (forward; the reverse walk also reverses each thread's loop).
template <class Body>
void thread_units(std::uint32_t t, std::uint64_t T, std::uint64_t n_units, const Walk& w, Body&& body) {
  if (w.order == Walk::Order::reverse) {
    if (t >= n_units) return;
    std::uint64_t last = t + ((n_units - 1 - t) / T) * T;
    for (std::uint64_t u = last;; u -= T) {
      body(u);
      if (u < T) break;
    }
  } else {
    for (std::uint64_t u = t; u < n_units; u += T) body(u);
  }
}
template <class Body>
void walk_units(std::uint64_t n_units, const Walk& w, Body&& body) {  // body(thread, unit)
  const auto ord = thread_order(w, n_units);
  for (std::uint32_t t : ord) thread_units(t, ord.size(), n_units, w, [&](std::uint64_t u) { body(t, u); });
}
template <class Body>
void walk_units(const Geometry& g, const Walk& w, Body&& body) {
  walk_units(g.n_units, w, body);
}

// Calls f.template operator()<S, V>() for the plan's source format (format_list.hpp, as the
// launchers of quantize.cu do).
template <class F>
void for_source(FormatId s, F&& f) {
  if (!with_source(s, f)) throw std::invalid_argument("CUDA host run: sources are " + role_names(kSource));
}
// Calls f.template operator()<D>() for the plan's element format.
template <class F>
void for_element(FormatId e, F&& f) {
  if (!with_element(e, f)) throw std::invalid_argument("CUDA host run: no kernel for this element format");
}

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
      o.amax[b] = amax_max(o.amax[b], a);  // atomicMax
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

ScaleOut scale_any(const QuantizePlan& p, const void* x, const Walk& w, std::vector<std::uint32_t>* min_out = nullptr) {
  ScaleOut o;
  for_source(p.source, [&]<class S, int V>() { o = scale_impl<S, V>(p, x, w, min_out); });
  return o;
}

}  // namespace

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

QuantizeOut quantize(const QuantizePlan& p0, const void* x, const ElementRandom& rnd, bool want_codes, bool want_fake,
                     const Walk& w, bool row_blocks) {
  if (row_blocks && !p0.row_blocks) throw std::invalid_argument("CUDA host run: the plan has no one-pass row-block path");
  QuantizePlan p = p0;
  p.geom.vec = vector_loads_ok(p, x);
  QuantizeOut o;
  if (row_blocks) {  // §35.7 item 3: every output comes from the one pass
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
      if (p.chunk == 4) dequantize_unit<D, 4>(p.geom, codes, u, f.data(), p.wide_d, out.data());
      else dequantize_unit<D, 8>(p.geom, codes, u, f.data(), p.wide_d, out.data());
    });
    return 0;
  });
  return out;
}

// ---- MoR -------------------------------------------------------------------------------------

namespace {

void flush(const ErrorAcc& acc, ErrorSumState& st) {  // a thread's share into the counters (atomicAdd)
  for (int i = 0; i < kWindowDigits; ++i) st.digit[kWindowFirstDigit + i] += acc.w.piece(i);
  st.n += acc.c.n, st.zeros += acc.c.zeros, st.nonfinite_input += acc.c.nonfinite_input;
  st.nonfinite_quant += acc.c.nonfinite_quant;
}
void check_mor_elements(const QuantizePlan& p, FormatId want) {
  if (p.element != want) throw std::invalid_argument("CUDA MoR: the quantized type must be " +
                                                     std::string(numref::format(want).name));
}

}  // namespace

QuantizePlan plan_tensor_mor(const numref::TensorView& x, const numref::TensorMorSpec& spec) {
  if (spec.fake == nullptr || spec.fake->id != FormatId::bf16)
    throw std::invalid_argument("CUDA MoR: the fake-quant format must be bf16");
  numref::QuantizeSpec q = spec.quant;
  q.partition = spec.scaling;
  QuantizePlan p = plan_quantize(q, x.format().id, x.rows(), x.cols(), x.row_stride(), x.col_stride());
  check_mor_elements(p, FormatId::f8e4m3fn);
  if (p.sr_bits != 0) throw std::invalid_argument("CUDA MoR: stochastic rounding (Q must be a function of x, §21.1)");
  return p;
}

void plan_subtensor_mor(const numref::TensorView& x, const numref::SubtensorMorSpec& spec, QuantizePlan& e4m3,
                        QuantizePlan& e5m2) {
  if (spec.fake == nullptr || spec.fake->id != FormatId::bf16)
    throw std::invalid_argument("CUDA MoR: the fake-quant format must be bf16");
  numref::QuantizeSpec a = spec.e4m3, b = spec.e5m2;
  a.partition = spec.blocks;
  b.partition = spec.blocks;
  e4m3 = plan_quantize(a, x.format().id, x.rows(), x.cols(), x.row_stride(), x.col_stride());
  e5m2 = plan_quantize(b, x.format().id, x.rows(), x.cols(), x.row_stride(), x.col_stride());
  check_mor_elements(e4m3, FormatId::f8e4m3fn);
  check_mor_elements(e5m2, FormatId::f8e5m2);
  if (e4m3.sr_bits != 0 || e5m2.sr_bits != 0)
    throw std::invalid_argument("CUDA MoR: stochastic rounding (Q must be a function of x, §21.1)");
}

TensorMorOut tensor_mor(const numref::TensorView& x, const numref::TensorMorSpec& spec, const Walk& w) {
  QuantizePlan p = plan_tensor_mor(x, spec);
  p.geom.rs = x.row_stride();
  p.geom.cs = x.col_stride();
  p.geom.vec = vector_loads_ok(p, x.data());
  TensorMorOut o;
  o.scale = scale_any(p, x.data(), w);
  o.codes.assign(static_cast<std::size_t>(p.geom.rows) * p.geom.cols, 0u);
  ErrorSumState st{};
  for_source(p.source, [&]<class S, int V>() {
    const MorArgs<E4> a{o.scale.factors.data(), make_element_ctx<E4>(p.elem, p.fused), p.wide_d, p.wide_out,
                        o.codes.data()};
    const auto* base = static_cast<const unsigned char*>(x.data());
    const auto ord = thread_order(w, p.geom.n_units);
    for (std::uint32_t t : ord) {
      ErrorAcc acc;  // one accumulator per thread over all its units (one ErrorSum: the tensor)
      thread_units(t, ord.size(), p.geom.n_units, w, [&](std::uint64_t u) {
        mor_error_unit<S, E4, BF16, V>(p.geom, base, u, a, acc, [&](int d, std::uint32_t v) { st.digit[d] += v; });
      });
      flush(acc, st);
    }
    return 0;
  });
  o.error = normalize(st);
  o.verdict = tensor_verdict(o.error, spec.threshold.num, spec.threshold.den);
  o.quantized = o.verdict.accept;
  o.mean = mean_f32(o.error);
  return o;
}

SubtensorMorOut subtensor_mor(const numref::TensorView& x, const numref::SubtensorMorSpec& spec, const Walk& w) {
  QuantizePlan p4, p5;
  plan_subtensor_mor(x, spec, p4, p5);
  for (QuantizePlan* p : {&p4, &p5}) p->geom.vec = vector_loads_ok(*p, x.data());
  SubtensorMorOut o;
  std::vector<std::uint32_t> mins;
  o.e4m3_scale = scale_any(p4, x.data(), w, &mins);
  o.e5m2_scale = scale_any(p5, x.data(), w);
  const std::uint32_t nb = p4.n_blocks;
  std::vector<ErrorSumState> s4(nb, ErrorSumState{}), s5(nb, ErrorSumState{});
  const bool three = spec.recipe == numref::SubtensorRecipe::three_way;
  o.type.resize(nb);
  o.eq3.resize(nb);
  o.eq4.resize(nb);
  o.e4m3_sum.resize(nb);
  o.e5m2_sum.resize(nb);
  o.fake.assign(static_cast<std::size_t>(p4.geom.rows) * p4.geom.cols, 0u);
  for_source(p4.source, [&]<class S, int V>() {
    const MorArgs<E4> a4{o.e4m3_scale.factors.data(), make_element_ctx<E4>(p4.elem, p4.fused), p4.wide_d,
                         p4.wide_out, nullptr};
    const MorArgs<E5> a5{o.e5m2_scale.factors.data(), make_element_ctx<E5>(p5.elem, p5.fused), p5.wide_d,
                         p5.wide_out, nullptr};
    const auto* base = static_cast<const unsigned char*>(x.data());
    // pass 2: per-block error sums (a unit's accumulators are flushed into its block)
    walk_units(p4.geom, w, [&](std::uint32_t, std::uint64_t u) {
      subtensor_error_unit<S, BF16, V>(
          p4.geom, base, u, a4, a5,
          [&](std::uint32_t b, const ErrorAcc& acc4, const ErrorAcc& acc5) {
            flush(acc4, s4[b]);
            flush(acc5, s5[b]);
          },
          [&](std::uint32_t b, int fmt, int d, std::uint32_t v) { (fmt == 0 ? s4 : s5)[b].digit[d] += v; });
    });
    // the decision of every block
    std::vector<std::uint8_t> type(nb);
    for (std::uint32_t b = 0; b < nb; ++b) {
      o.e4m3_sum[b] = normalize(s4[b]);
      o.e5m2_sum[b] = normalize(s5[b]);
      const std::uint32_t mx = o.e4m3_scale.amax[b], mn = mins[b] == kNoMin ? 0u : mins[b];
      type[b] = subtensor_decide(o.e4m3_sum[b], o.e5m2_sum[b], mx, mn, three, E5::emin,
                                 widen_finite_mag<E5>(E5::max_finite), o.eq3[b], o.eq4[b]);
      o.type[b] = type[b];
    }
    // pass 3: the output tensor
    const CastPolicy keep = cast_policy(numref::Policy{}, numref::format(p4.source), numref::format(FormatId::bf16));
    std::vector<std::uint16_t> out16(o.fake.size());
    walk_units(p4.geom, w, [&](std::uint32_t, std::uint64_t u) {
      subtensor_output_unit<S, BF16, V>(p4.geom, base, u, type.data(), a4, a5, keep, out16.data());
    });
    for (std::size_t i = 0; i < out16.size(); ++i) o.fake[i] = out16[i];
    return 0;
  });
  return o;
}

// ---- §37, §35.13 GaussWS ----------------------------------------------------------------------------

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
    if (gf == FormatId::bf16) gaussws_tiles<W, BF16, SumF32>(p, w, bt, u, g, walk, o);
    else gaussws_tiles<W, F32T, SumF32>(p, w, bt, u, g, walk, o);
  };
  auto with_sum = [&]<class W>() {
    if (p.sum_f32) with_g.template operator()<W, true>();
    else with_g.template operator()<W, false>();
  };
  if ((wf != FormatId::f32 && wf != FormatId::bf16) || (gf != FormatId::f32 && gf != FormatId::bf16))
    throw std::invalid_argument("gaussws: w and g must be f32 or bf16");
  if (wf == FormatId::bf16) with_sum.template operator()<BF16>();
  else with_sum.template operator()<F32T>();
  return o;
}

}  // namespace numref_cuda::host
