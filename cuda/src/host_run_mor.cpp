// numref CUDA kernels — MoR run on the CPU (host emulation of mor*.cu; the walk: host_walk.hpp),
// and the MoR plans shared with the device API.                           spec §21 – §27, §A.8
#include <stdexcept>
#include <string>
#include <vector>

#include "host_walk.hpp"
#include "numref_cuda/host_run.hpp"
#include "numref_cuda/policy_map.hpp"

namespace numref_cuda::host {

namespace {

void flush(const ErrorAcc& acc, ErrorSumState& st) {  // a thread's share into the counters (atomicAdd)
  for (int i = 0; i < kWindowDigits; ++i) st.digit[kWindowFirstDigit + i] += acc.w.piece(i);
  st.n += acc.c.n, st.zeros += acc.c.zeros, st.nonfinite_input += acc.c.nonfinite_input;
  st.nonfinite_quant += acc.c.nonfinite_quant;
}
void check_mor_elements(const QuantizePlan& p, FormatId want) {
  if (p.element != want)
    throw std::invalid_argument("CUDA MoR: the quantized type must be " + std::string(numref::format(want).name));
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
    const MorArgs<E4> a4{o.e4m3_scale.factors.data(), make_element_ctx<E4>(p4.elem, p4.fused), p4.wide_d, p4.wide_out,
                         nullptr};
    const MorArgs<E5> a5{o.e5m2_scale.factors.data(), make_element_ctx<E5>(p5.elem, p5.fused), p5.wide_d, p5.wide_out,
                         nullptr};
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

}  // namespace numref_cuda::host
