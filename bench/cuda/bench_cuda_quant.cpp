// numref CUDA kernels — block quantization and MoR throughput (Google Benchmark).
//                                                               spec §A.7, §A.8, docs/performance.md
//
// A bf16 tensor of 8192 x 8192 (64 M elements) in device memory, quantized by the kernels of
// cuda/src (quantize, mor): MXFP8 (E4M3, 1x32, E8M0 FLOOR and RCEIL), 1x128 and 128x128 FP32 amax
// scales, GAM 128x128, INT8 per channel, and fused tensor-level MoR (amax, GAM scales, quantize,
// dequantize, relative error, exact sum, decision). Time per call by CUDA events (manual time).
// GB/s is the EFFECTIVE bandwidth: the minimal traffic of the operation (the bf16 tensor read
// once, 2 B per element, plus the 1-byte codes written; MoR: the read only) divided by the time,
// although the pipeline reads the tensor twice (amax pass, then quantize pass); %peak relates
// it to the peak bandwidth computed from the device attributes (2 x memory clock x bus width). The MoR benchmark also reports its time as a
// multiple of the plain MXFP8 quantize of the same tensor (the target is <= 2x).
// Without a CUDA device every benchmark reports the skip (SkipWithError) and measures nothing.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cuda_tensors.hpp"
#include "numref/int8.hpp"
#include "numref/mor.hpp"
#include "numref/quantize.hpp"
#include "numref_cuda/api.hpp"

namespace {

using numref::FormatId;
using numref::Partition;
using numref::ScaleRule;

constexpr std::size_t kRows = 8192, kCols = 8192;
double g_mxfp8_seconds = 0;  // the plain MXFP8 quantize time, for the MoR ratio

double peak_bytes_per_second() {
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return 0;
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  return 2.0 * static_cast<double>(clock_khz) * 1e3 * static_cast<double>(bus_bits) / 8.0;
}

// The device tensor shared by every benchmark (random bf16 over 16 binades).
const std::uint16_t* device_tensor() {
  static std::uint16_t* d = nullptr;
  if (d == nullptr) {
    std::vector<std::uint16_t> h(kRows * kCols);
    std::mt19937 rng(1);
    for (auto& v : h) v = static_cast<std::uint16_t>(((119u + rng() % 16u) << 7) | (rng() & 0x807Fu));
    if (cudaMalloc(reinterpret_cast<void**>(&d), h.size() * 2) != cudaSuccess) return nullptr;
    cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  }
  return d;
}

using numref_cuda_test::spec_of;

template <class Launch>
void timed(benchmark::State& state, Launch&& launch, double bytes) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  if (launch() != cudaSuccess) {  // warm-up (and argument check)
    state.SkipWithError(numref_cuda::why().empty() ? "kernel launch failed" : numref_cuda::why().c_str());
    return;
  }
  double total = 0;
  for (auto _ : state) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(static_cast<double>(ms) / 1e3);
    total += static_cast<double>(ms) / 1e3;
  }
  const double per = total / static_cast<double>(state.iterations());
  const double peak = peak_bytes_per_second();
  state.counters["GB/s"] = bytes / per / 1e9;
  if (peak > 0) state.counters["%peak"] = 100.0 * bytes / per / peak;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kRows * kCols));
  state.counters["seconds"] = per;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

void bench_quantize(benchmark::State& state, numref::QuantizeSpec spec, bool is_mxfp8) {
  if (numref_cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device: no kernel was run (see docs/performance.md, CUDA kernels)");
    return;
  }
  const std::uint16_t* x = device_tensor();
  const auto p = numref_cuda::plan_quantize(spec, FormatId::bf16, kRows, kCols, static_cast<std::ptrdiff_t>(kCols), 1);
  std::uint8_t* codes = nullptr;
  std::uint32_t *scales = nullptr, *gm = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&codes), kRows * kCols);
  cudaMalloc(reinterpret_cast<void**>(&scales), p.n_blocks * 4u);
  cudaMalloc(reinterpret_cast<void**>(&gm), p.n_groups * 4u);
  numref_cuda::QuantizeOutputs o;
  o.codes = codes;
  o.scales = scales;
  o.group_mantissa = gm;
  timed(
      state, [&] { return numref_cuda::try_quantize(p, x, {}, o); }, static_cast<double>(kRows * kCols) * 3.0);
  if (is_mxfp8 && state.counters.count("seconds")) g_mxfp8_seconds = state.counters["seconds"];
  cudaFree(codes);
  cudaFree(scales);
  cudaFree(gm);
}

void bench_tensor_mor(benchmark::State& state) {
  if (numref_cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device: no kernel was run (see docs/performance.md, CUDA kernels)");
    return;
  }
  const std::uint16_t* x = device_tensor();
  const numref::TensorView v(numref::format(FormatId::bf16), x, kRows, kCols);  // device memory, never read on the host
  numref::TensorMorSpec spec;
  numref_cuda::TensorMorDecision d;
  timed(
      state, [&] { return numref_cuda::try_tensor_mor(v, spec, d); }, static_cast<double>(kRows * kCols) * 2.0);
  if (g_mxfp8_seconds > 0 && state.counters.count("seconds"))
    state.counters["x_mxfp8"] = state.counters["seconds"] / g_mxfp8_seconds;
}

numref::QuantizeSpec int8_rows() {
  numref::Int8Spec s;
  s.partition = Partition::per_row();
  return numref::int8_quantize_spec(s);
}

BENCHMARK_CAPTURE(bench_quantize, mxfp8_e4m3_1x32_floor,
                  spec_of(FormatId::f8e4m3fn, Partition::blocks(1, 32), ScaleRule::mx_floor), true)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_quantize, mxfp8_e4m3_1x32_rceil,
                  spec_of(FormatId::f8e4m3fn, Partition::blocks(1, 32), ScaleRule::mx_rceil), false)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_quantize, e4m3_1x128_amax,
                  spec_of(FormatId::f8e4m3fn, Partition::blocks(1, 128), ScaleRule::amax), false)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_quantize, e4m3_128x128_amax,
                  spec_of(FormatId::f8e4m3fn, Partition::blocks(128, 128), ScaleRule::amax), false)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_quantize, e4m3_gam_128x128,
                  spec_of(FormatId::f8e4m3fn, Partition::blocks(128, 128), ScaleRule::gam), false)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_quantize, int8_per_row, int8_rows(), false)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(bench_tensor_mor)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
