// numref CUDA kernels — block quantization, fake-quant, dequantize and MoR.   spec §13 – §27, §35.7, §35.8
//
// Every kernel is a grid-stride loop over the work units of tiling.cuh and calls the same
// __host__ __device__ functions the host emulation (host_run.cpp) runs in the tests:
//   amax_kernel      §13   amax_unit -> atomicMax / atomicMin on the integer keys (§13.4: any
//                          order of atomics gives the reference's amax)
//   reduce_kernel    §17.1 / §18.1 group and tensor amax (atomicMax over block amaxes)
//   factors_kernel   §14–§18, §20 block_factors per block; GAM group mantissas
//   quantize_kernel  §19.2 / §19.6 quantize_unit: codes, fake-quant, counts (atomicAdd)
//   row_block_kernel §35.7 item 3 one pass per row block (MX 1x32, 1x128, ...): amax, scale, codes
//   dequant_kernel   §19.3 dequantize_unit
//   tensor_mor_kernel     §21, §22 mor_error_unit: each thread's window and counts, pieces by
//                          atomicAdd into the carry-save counters (integer adds: order-free)
//   subtensor_err_kernel  §27 subtensor_error_unit: per-block counters for E4M3 and E5M2
//   subtensor_out_kernel  §27.4 subtensor_output_unit
// Loads are 16-byte vectors when the view is dense and aligned (Geometry::vec).
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "launch.hpp"
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
using ull = unsigned long long;

__device__ __forceinline__ std::uint64_t first_thread() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::uint64_t grid_threads() { return static_cast<std::uint64_t>(gridDim.x) * blockDim.x; }
__device__ __forceinline__ void add_u64(std::uint64_t* p, std::uint64_t v) {
  if (v != 0u) atomicAdd(reinterpret_cast<ull*>(p), static_cast<ull>(v));
}

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

__global__ void factors_kernel(ScaleParams sp, Geometry g, std::uint32_t nb, std::uint32_t ng, const std::uint32_t* amax,
                               const std::uint32_t* gamax, const std::uint32_t* tamax, BlockFactors* f,
                               std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax_out) {
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
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads()) ok &= quantize_unit<S, D, V>(g, x, u, a, c);
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

template <class D, int V>
__global__ void dequant_kernel(Geometry g, const std::uint8_t* codes, const BlockFactors* f, CastPolicy wide,
                               std::uint32_t* out) {
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads()) dequantize_unit<D, V>(g, codes, u, f, wide, out);
}

__global__ void stored_factors_kernel(ScaleParams sp, Geometry g, std::uint32_t nb, const std::uint32_t* scales,
                                      const std::uint32_t* gm, std::uint32_t tamax, BlockFactors* f) {
  for (std::uint64_t i = first_thread(); i < nb; i += grid_threads()) {
    const auto b = static_cast<std::uint32_t>(i);
    f[b] = factors_from_stored(sp, scales[b], sp.kind == ScaleKind::gam ? gm[g.group_of_block(b)] : 0u, tamax);
  }
}

__device__ __forceinline__ void flush(const ErrorAcc& acc, ErrorSumState* st) {
  for (int i = 0; i < kWindowDigits; ++i) add_u64(&st->digit[kWindowFirstDigit + i], acc.w.piece(i));
  add_u64(&st->n, acc.c.n);
  add_u64(&st->zeros, acc.c.zeros);
  add_u64(&st->nonfinite_input, acc.c.nonfinite_input);
  add_u64(&st->nonfinite_quant, acc.c.nonfinite_quant);
}

template <class S, int V>
__global__ void tensor_mor_kernel(Geometry g, const unsigned char* x, MorArgs<E4> a, ErrorSumState* st) {
  ErrorAcc acc;
  for (std::uint64_t u = first_thread(); u < g.n_units; u += grid_threads())
    mor_error_unit<S, E4, BF16, V>(g, x, u, a, acc, [&](int d, std::uint32_t v) { add_u64(&st->digit[d], v); });
  flush(acc, st);
}

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

// ---- host side --------------------------------------------------------------------------------

// Device scratch freed on scope exit (stream-ordered).
struct Scratch {
  cudaStream_t s;
  std::vector<void*> ptrs;
  cudaError_t err = cudaSuccess;
  explicit Scratch(cudaStream_t st) : s(st) {}
  template <class T>
  T* get(std::size_t n, int fill = 0) {
    void* p = nullptr;
    if (err == cudaSuccess) err = cudaMallocAsync(&p, n * sizeof(T) + 16, s);
    if (err == cudaSuccess) {
      ptrs.push_back(p);
      err = cudaMemsetAsync(p, fill, n * sizeof(T) + 16, s);
    }
    return static_cast<T*>(p);
  }
  ~Scratch() {
    for (void* p : ptrs) cudaFreeAsync(p, s);
  }
};

unsigned blocks_for(std::uint64_t work) {
  unsigned b = 1;
  return grid_size(static_cast<std::size_t>(work), b) == cudaSuccess ? b : 1u;
}

// The scale pipeline of a plan: block amax (and min), group / tensor amax, block factors.
struct ScaleState {
  std::uint32_t *amax = nullptr, *mn = nullptr, *gamax = nullptr, *tamax = nullptr;
  BlockFactors* f = nullptr;
};
template <class S, int V>
cudaError_t run_scale(const QuantizePlan& p, const void* x, bool want_min, Scratch& sc, ScaleState& st,
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

template <class S, int V, class D>
cudaError_t run_quantize(const QuantizePlan& p, const void* x, const RandomSource& rnd, const QuantizeOutputs& out,
                         cudaStream_t stream) {
  Scratch sc(stream);
  ScaleState st;
  cudaError_t e = cudaSuccess;
  if (!p.row_blocks) {
    e = run_scale<S, V>(p, x, false, sc, st, out.scales, out.group_mantissa, out.tensor_amax, out.amax);
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
  if (rnd.use_philox) a.rnd.philox = rnd.philox;
  else a.rnd.values = rnd.values;
  std::uint32_t* status = sc.get<std::uint32_t>(1);
  if (sc.err != cudaSuccess) return sc.err;
  if (p.row_blocks)  // §35.7 item 3 one pass: amax, scale and codes of a row block in one thread
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
  if (e == cudaSuccess && h != 0u)
    return invalid_argument(quantize_random_error(p.sr_bits));
  return e;
}


template <class D>
cudaError_t run_dequant(const QuantizePlan& p, const std::uint8_t* codes, const BlockFactors* f, std::uint32_t* out,
                        cudaStream_t s) {
  if (p.chunk == 4) dequant_kernel<D, 4><<<blocks_for(p.geom.n_units), 256, 0, s>>>(p.geom, codes, f, p.wide_d, out);
  else dequant_kernel<D, 8><<<blocks_for(p.geom.n_units), 256, 0, s>>>(p.geom, codes, f, p.wide_d, out);
  return cudaGetLastError();
}

template <class S, int V>
cudaError_t run_tensor_mor(const QuantizePlan& p, const void* x, const numref::TensorMorSpec& spec, TensorMorDecision& r,
                           std::uint8_t* codes, std::uint32_t* scales, std::uint32_t* gm, cudaStream_t s) {
  Scratch sc(s);
  ScaleState st;
  cudaError_t e = run_scale<S, V>(p, x, false, sc, st, scales, gm, nullptr, nullptr);
  if (e != cudaSuccess) return e;
  auto* sum = sc.get<ErrorSumState>(1);
  if (sc.err != cudaSuccess) return sc.err;
  const MorArgs<E4> a{st.f, make_element_ctx<E4>(p.elem, p.fused), p.wide_d, p.wide_out, codes};
  tensor_mor_kernel<S, V><<<blocks_for(p.geom.n_units), 256, 0, s>>>(p.geom, static_cast<const unsigned char*>(x), a, sum);
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
  cudaError_t e = run_scale<S, V>(p4, x, true, sc, st4, sc4, gm, nullptr, nullptr);
  if (e == cudaSuccess) e = run_scale<S, V>(p5, x, false, sc, st5, sc5, gm + p4.n_groups, nullptr, nullptr);
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

template <class F>
cudaError_t guard(F&& f) noexcept {
  try {
    return f();
  } catch (const std::exception& ex) {
    return invalid_argument(ex.what());
  }
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
    cudaError_t e = cudaErrorInvalidValue;
    bool found = false;
    with_source(p.source, [&]<class S, int V>() {
      found = with_element(p.element, [&]<class D>() { e = kernels::run_quantize<S, V, D>(p, x, rnd, out, stream); });
    });
    return found ? e : kernels::invalid_argument("no CUDA kernel for this source or element format");
  });
}

cudaError_t try_dequantize(const QuantizePlan& p, const std::uint8_t* codes, const std::uint32_t* scales,
                           const std::uint32_t* group_mantissa, std::uint32_t tensor_amax, std::uint32_t* out,
                           cudaStream_t stream) noexcept {
  kernels::clear_why();
  return guard([&]() -> cudaError_t {
    if (codes == nullptr || scales == nullptr || out == nullptr) return kernels::invalid_argument("null pointer");
    if (p.scale.kind == ScaleKind::gam && group_mantissa == nullptr) return kernels::invalid_argument("GAM needs the group mantissas");
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
