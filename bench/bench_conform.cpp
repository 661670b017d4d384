// Conformance backends, speed: cpu-fast against the reference and against NVIDIA's host
// conversion functions (nv-host) on the same inputs, and the 2^32 f32 sweep.
// Results and the command: docs/performance.md, "Conformance and cpu-fast".
//
// items/s = conversions per second on one thread (the sweep: on two threads).
// Inputs (65 536 codes, fixed seed):
//   range  — f32 values with random sign, exponent uniform in [2^-14, 2^10) and random
//            significand: what a kernel converts (about 2 % overflow f8e4m3fn);
//   random — uniformly random 32-bit codes (every class, unpredictable branches).
// bf16 inputs are the upper halves of the same f32 codes.
// Block quantization (BM_Quantize_*): one 256 x 256 f32 tensor of the `range` kind (the
// first 65 536 codes), quantized to f8e4m3fn under ocp with overflow=saturate (§19.1) by
// four scale rules — MX 1 x 32 E8M0 FLOOR (§16.2) and RCEIL (§16.5), 128 x 128 blocks and one
// per-tensor FP32 scale (rule amax, §14.1) — codes and scales, items/s = elements per
// second; cpu-fast's FastQuant against numref::quantize on the same input.
// BM_QuantizeLarge (issue 32): FastQuant on an 8192 x 8192 tensor (f32 or bf16, 256 / 128 MiB: far
// beyond the caches) to f8e4m3fn, codes and scales, on 1 or 2 threads; bytes/s counts the minimal
// traffic (the source read once, one byte written per element) for comparison with bench_stream's
// BM_StreamCast (one core's 4-in / 1-out bound). Real time (threads).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "fast_cast.hpp"
#include "fast_lanes.hpp"
#include "fast_quant.hpp"
#include "numref/convert.hpp"
#include "numref/quantize.hpp"

#if NUMREF_BENCH_NV_HOST
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#endif

namespace {

using numref::FormatId;

constexpr std::size_t kN = 65536;

const std::vector<std::uint32_t>& f32_inputs(int kind) {
  static const std::array<std::vector<std::uint32_t>, 2> sets = [] {
    std::vector<std::uint32_t> range(kN), random(kN);
    std::uint64_t s = 12345;
    for (std::size_t i = 0; i < kN; ++i) {
      const std::uint64_t r = numref::splitmix64_next(s);
      const std::uint32_t exp = 127 - 14 + static_cast<std::uint32_t>(r % 24);  // 2^-14 .. 2^9
      range[i] =
          (static_cast<std::uint32_t>(r >> 63) << 31) | (exp << 23) | static_cast<std::uint32_t>((r >> 20) & 0x7FFFFF);
      random[i] = static_cast<std::uint32_t>(numref::splitmix64_next(s));
    }
    return std::array<std::vector<std::uint32_t>, 2>{range, random};
  }();
  return sets[static_cast<std::size_t>(kind)];
}

// The inputs of a cast benchmark from `from` (f32, or bf16: the upper halves of the f32 codes);
// range(0) picks the kind (0 range, 1 random).
std::vector<std::uint32_t> inputs(FormatId from, const benchmark::State& st) {
  std::vector<std::uint32_t> v = f32_inputs(static_cast<int>(st.range(0)));
  if (from == FormatId::bf16)
    for (auto& c : v) c >>= 16;
  return v;
}

// ocp's narrow policy with overflow=saturate (§19.1 quantize's default element policy).
numref::Policy satfinite_ocp() {
  numref::Policy p = numref::profile(numref::ProfileId::ocp).narrow;
  p.overflow = numref::Overflow::saturate;
  return p;
}

const numref::Policy& satfinite() { return numref::profile(numref::ProfileId::cuda_satfinite).narrow; }

// Times `pass()` (one conversion of the kN inputs into `out`) per iteration.
template <class Pass>
void time_casts(benchmark::State& st, const std::vector<std::uint32_t>& out, Pass&& pass) {
  for (auto _ : st) {
    pass();
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  numref::bench::set_items(st, kN);
}

// ---- `from` -> f8e4m3fn, cuda_satfinite: cpu-fast (range(1): with flags), the reference --------

void cast_cpu_fast(benchmark::State& st, FormatId from) {
  const auto in = inputs(from, st);
  const bool flags = st.range(1) != 0;
  const numref::cpu_fast::FastCast fc(numref::format(from), numref::format(FormatId::f8e4m3fn), satfinite());
  std::vector<std::uint32_t> out(kN);
  std::vector<std::uint8_t> fl(kN);
  time_casts(st, out, [&] { fc.run(in.data(), nullptr, out.data(), flags ? fl.data() : nullptr, kN); });
}

// kWithFlags: the flags are stored too (as the runner stores them).
template <bool kWithFlags>
void cast_reference(benchmark::State& st, FormatId from) {
  const auto in = inputs(from, st);
  const numref::Converter conv(from, FormatId::f8e4m3fn, satfinite());
  std::vector<std::uint32_t> out(kN);
  std::vector<std::uint8_t> fl(kN);
  time_casts(st, out, [&] {
    for (std::size_t i = 0; i < kN; ++i) {
      const numref::Result r = conv(in[i]);
      out[i] = r.bits;
      if constexpr (kWithFlags) fl[i] = r.flags;
    }
  });
}

void BM_F32ToE4M3_CpuFast(benchmark::State& st) { cast_cpu_fast(st, FormatId::f32); }
BENCHMARK(BM_F32ToE4M3_CpuFast)->ArgNames({"random", "flags"})->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 1});
void BM_F32ToE4M3_Reference(benchmark::State& st) { cast_reference<true>(st, FormatId::f32); }
BENCHMARK(BM_F32ToE4M3_Reference)->ArgName("random")->Arg(0)->Arg(1);

#if NUMREF_BENCH_NV_HOST
void BM_F32ToE4M3_NvHost(benchmark::State& st) {
  const auto in = inputs(FormatId::f32, st);
  std::vector<std::uint32_t> out(kN);
  time_casts(st, out, [&] {
    for (std::size_t i = 0; i < kN; ++i) {
      float f;
      std::memcpy(&f, &in[i], sizeof f);
      out[i] = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
    }
  });
}
BENCHMARK(BM_F32ToE4M3_NvHost)->ArgName("random")->Arg(0)->Arg(1);
#endif

void BM_Bf16ToE4M3_CpuFast(benchmark::State& st) { cast_cpu_fast(st, FormatId::bf16); }
BENCHMARK(BM_Bf16ToE4M3_CpuFast)->ArgNames({"random", "flags"})->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 1});
void BM_Bf16ToE4M3_Reference(benchmark::State& st) { cast_reference<false>(st, FormatId::bf16); }
BENCHMARK(BM_Bf16ToE4M3_Reference)->ArgName("random")->Arg(0)->Arg(1);

#if NUMREF_BENCH_NV_HOST
void BM_Bf16ToE4M3_NvHost(benchmark::State& st) {
  const auto in = inputs(FormatId::bf16, st);
  std::vector<std::uint32_t> out(kN);
  time_casts(st, out, [&] {
    for (std::size_t i = 0; i < kN; ++i) {
      __nv_bfloat16_raw r;
      r.x = static_cast<unsigned short>(in[i]);
      out[i] = __nv_cvt_bfloat16raw_to_fp8(r, __NV_SATFINITE, __NV_E4M3);
    }
  });
}
BENCHMARK(BM_Bf16ToE4M3_NvHost)->ArgName("random")->Arg(0)->Arg(1);
#endif

// ---- the exhaustive 2^32 f32 sweep, two threads ----------------------------------------------
// Each thread converts its half of all 2^32 codes in chunks of 65 536 (arg 0: cpu-fast
// without flags, 1: cpu-fast with flags, 2: the reference with flags).

void BM_Sweep2e32(benchmark::State& st) {
  const int which = static_cast<int>(st.range(0));
  const numref::cpu_fast::FastCast fc(numref::format(FormatId::f32), numref::format(FormatId::f8e4m3fn), satfinite());
  const numref::Converter conv(FormatId::f32, FormatId::f8e4m3fn, satfinite());
  for (auto _ : st) {
    std::atomic<std::uint64_t> sum{0};
    auto work = [&](std::uint64_t lo, std::uint64_t hi) {
      std::vector<std::uint32_t> in(kN), out(kN);
      std::vector<std::uint8_t> fl(kN);
      std::uint64_t s = 0;
      for (std::uint64_t base = lo; base < hi; base += kN) {
        for (std::size_t i = 0; i < kN; ++i) in[i] = static_cast<std::uint32_t>(base + i);
        if (which < 2) {
          fc.run(in.data(), nullptr, out.data(), which == 1 ? fl.data() : nullptr, kN);
        } else {
          for (std::size_t i = 0; i < kN; ++i) {
            const numref::Result r = conv(in[i]);
            out[i] = r.bits;
            fl[i] = r.flags;
          }
        }
        s += out[kN / 3] + fl[kN / 5];
      }
      sum += s;
    };
    const std::uint64_t half = std::uint64_t{1} << 31;
    std::thread t(work, 0, half);
    work(half, 2 * half);
    t.join();
    benchmark::DoNotOptimize(sum.load());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * (std::int64_t{1} << 32));
}
BENCHMARK(BM_Sweep2e32)
    ->ArgName("impl")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

// ---- block quantization, f32 -> f8e4m3fn (§16, §14.1, §19.2) ------------------------------------

// Configuration c: 0 MX 1x32 FLOOR, 1 MX 1x32 RCEIL, 2 amax over 128 x 128 blocks, 3 amax per tensor
// (BM_QuantizeLarge also: 4 MX 1 x 128 RCEIL-f32 — DeepGEMM's rule and block —, 5 NVFP4 1 x 16 into
// f4e2m1fn, 6 amax 1 x 128, 7 amax per row).
constexpr std::size_t kQR = 256, kQC = 256;
struct QuantCfg {
  numref::ScaleRule rule;
  numref::Partition partition;
  FormatId element;
};
constexpr QuantCfg kQuantCfgs[] = {
    {numref::ScaleRule::mx_floor, numref::Partition::blocks(1, 32), FormatId::f8e4m3fn},
    {numref::ScaleRule::mx_rceil, numref::Partition::blocks(1, 32), FormatId::f8e4m3fn},
    {numref::ScaleRule::amax, numref::Partition::blocks(128, 128), FormatId::f8e4m3fn},
    {numref::ScaleRule::amax, numref::Partition::tensor(), FormatId::f8e4m3fn},
    {numref::ScaleRule::mx_rceil_f32, numref::Partition::blocks(1, 128), FormatId::f8e4m3fn},
    {numref::ScaleRule::nvfp4, numref::Partition::blocks(1, 16), FormatId::f4e2m1fn},
    {numref::ScaleRule::amax, numref::Partition::blocks(1, 128), FormatId::f8e4m3fn},
    {numref::ScaleRule::amax, numref::Partition::per_row(), FormatId::f8e4m3fn},
};
numref::QuantizeSpec quant_spec(int c) {
  const QuantCfg& k = kQuantCfgs[static_cast<std::size_t>(c)];
  numref::QuantizeSpec q;
  q.element = &numref::format(k.element);
  q.policy = numref::profile(numref::ProfileId::ocp).narrow;
  q.policy.overflow = numref::Overflow::saturate;  // §19.1
  q.wide = numref::profile(numref::ProfileId::ocp).wide;
  q.rule = k.rule;
  q.partition = k.partition;
  return q;
}

void BM_Quantize_Reference(benchmark::State& st) {
  const auto& in = f32_inputs(0);
  const numref::QuantizeSpec q = quant_spec(static_cast<int>(st.range(0)));
  const numref::TensorView v(numref::format(FormatId::f32), in.data(), kQR, kQC);
  std::vector<std::uint8_t> codes(kQR * kQC);
  for (auto _ : st) {
    const numref::QuantizeResult r = numref::quantize(v, q, codes);
    benchmark::DoNotOptimize(r.meta.scales.data());
    benchmark::DoNotOptimize(codes.data());
    benchmark::ClobberMemory();
  }
  numref::bench::set_items(st, kQR * kQC);
}
BENCHMARK(BM_Quantize_Reference)->ArgName("cfg")->DenseRange(0, 3);

void BM_Quantize_CpuFast(benchmark::State& st) {
  const auto& in = f32_inputs(0);
  const numref::QuantizeSpec q = quant_spec(static_cast<int>(st.range(0)));
  const numref::Quantizer ref(q, kQR, kQC);  // the effective blocks and q_max, as the runner passes them
  const numref::cpu_fast::QuantOp op =
      numref::cpu_fast::quant_op_of(numref::TensorView(numref::format(FormatId::f32), in.data(), kQR, kQC), q, ref);
  if (const std::string why = numref::cpu_fast::FastQuant::unsupported(op); !why.empty()) {
    st.SkipWithError(why.c_str());
    return;
  }
  const numref::cpu_fast::FastQuant fq(op);
  std::vector<std::uint8_t> codes(kQR * kQC);
  std::vector<std::uint32_t> scales(fq.blocks());
  for (auto _ : st) {
    fq.quantize(in.data(), nullptr, codes.data(), scales.data(), nullptr);
    benchmark::DoNotOptimize(codes.data());
    benchmark::DoNotOptimize(scales.data());
    benchmark::ClobberMemory();
  }
  // the same answer as the reference, or the numbers mean nothing
  std::vector<std::uint8_t> rc(kQR * kQC);
  const numref::QuantizeResult r =
      numref::quantize(numref::TensorView(numref::format(FormatId::f32), in.data(), kQR, kQC), q, rc);
  if (rc != codes || r.meta.scales != scales) st.SkipWithError("cpu-fast differs from the reference");
  numref::bench::set_items(st, kQR * kQC);
}
BENCHMARK(BM_Quantize_CpuFast)->ArgName("cfg")->DenseRange(0, 3);

// The 8192 x 8192 inputs of the *Large benchmarks: f32 codes (the range set of f32_inputs, spread
// and perturbed in the low bits), and bf16 codes (their upper halves).
constexpr std::size_t kLR = 8192, kLC = 8192;
const void* large_input(bool bf16) {
  static const std::vector<std::uint32_t> f32 = [] {
    std::vector<std::uint32_t> v(kLR * kLC);
    const auto& base = f32_inputs(0);
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = base[(i * 7919) % base.size()] ^ (static_cast<std::uint32_t>(i) & 0xFFu);
    return v;
  }();
  static const std::vector<std::uint16_t> b16 = [] {
    std::vector<std::uint16_t> v(kLR * kLC);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint16_t>(f32[i] >> 16);
    return v;
  }();
  return bf16 ? static_cast<const void*>(b16.data()) : static_cast<const void*>(f32.data());
}

// FastQuant on the 8192 x 8192 input (f32 or bf16, 256 / 128 MiB: far beyond the caches) to
// quant_spec(cfg), codes and scales, on 1 or 2 threads; bytes/s counts the minimal traffic (the
// source read once, one byte written per element) for comparison with bench_stream's
// BM_StreamCast (one core's 4-in / 1-out bound). Real time (threads). For 1-row blocks the result's
// first 64 rows are compared with the reference's (numref::quantize): the numbers of a wrong
// result are not reported.
void BM_QuantizeLarge(benchmark::State& st) {
  constexpr std::size_t R = kLR, C = kLC;
  const int cfg = static_cast<int>(st.range(0));
  const bool bf16 = st.range(1) != 0;
  const unsigned threads = static_cast<unsigned>(st.range(2));
  const numref::QuantizeSpec q = quant_spec(cfg);
  const numref::Quantizer ref(q, R, C);
  const void* x = large_input(bf16);
  const numref::cpu_fast::QuantOp op = numref::cpu_fast::quant_op_of(
      numref::TensorView(numref::format(bf16 ? FormatId::bf16 : FormatId::f32), x, R, C), q, ref);
  if (const std::string why = numref::cpu_fast::FastQuant::unsupported(op); !why.empty()) {
    st.SkipWithError(why.c_str());
    return;
  }
  const numref::cpu_fast::FastQuant fq(op);
  std::vector<std::uint8_t> codes(R * C);
  std::vector<std::uint32_t> scales(fq.blocks());
  std::uint32_t tamax = 0;
  for (auto _ : st) {
    fq.quantize(x, nullptr, codes.data(), scales.data(), nullptr, threads, nullptr, &tamax);
    benchmark::DoNotOptimize(codes.data());
    benchmark::ClobberMemory();
  }
  if (op.br == 1 &&
      q.rule != numref::ScaleRule::nvfp4) {  // 1-row blocks: the first 64 rows (all the reference can do quickly)
    constexpr std::size_t kRows = 64;
    std::vector<std::uint8_t> rc(kRows * C);
    const numref::QuantizeResult r = numref::quantize(numref::TensorView(*op.src, x, kRows, C), q, rc);
    const std::size_t nb = r.meta.scales.size();
    if (!std::equal(rc.begin(), rc.end(), codes.begin()) ||
        !std::equal(r.meta.scales.begin(), r.meta.scales.end(), scales.begin()) || nb * R != scales.size() * kRows)
      st.SkipWithError("cpu-fast differs from the reference");
  }
  numref::bench::set_items(st, R * C);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(R * C * (bf16 ? 3 : 5)));
  st.counters["one_pass"] = fq.one_pass() ? 1 : 0;
  st.counters["streams"] = fq.streams() ? 1 : 0;
}
BENCHMARK(BM_QuantizeLarge)
    ->ArgNames({"cfg", "bf16", "threads"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The casts' rate on the same input, in the same run: cpu-fast's byte lanes f32 / bf16 ->
// f8e4m3fn (ocp, overflow=saturate), one thread — what one pass of the element encode costs.
void BM_CastLarge(benchmark::State& st) {
  const bool bf16 = st.range(0) != 0;
  const numref::cpu_fast::ByteLanes lanes(numref::format(bf16 ? FormatId::bf16 : FormatId::f32),
                                          numref::format(FormatId::f8e4m3fn), satfinite_ocp());
  std::vector<std::uint8_t> codes(kLR * kLC);
  const void* x = large_input(bf16);
  for (auto _ : st) {
    if (bf16)
      lanes.run(static_cast<const std::uint16_t*>(x), codes.data(), nullptr, codes.size());
    else
      lanes.run(static_cast<const std::uint32_t*>(x), codes.data(), nullptr, codes.size());
    benchmark::DoNotOptimize(codes.data());
    benchmark::ClobberMemory();
  }
  numref::bench::set_items(st, kLR * kLC);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) *
                       static_cast<std::int64_t>(kLR * kLC * (bf16 ? 3 : 5)));
}
BENCHMARK(BM_CastLarge)->ArgName("bf16")->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
