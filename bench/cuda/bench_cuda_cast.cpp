// numref CUDA kernels — cast throughput (Google Benchmark).                  spec §A, docs/cuda.md
//
// Device-memory to device-memory casts of 64M elements: reported as elements/s and as
// bytes/s (bytes read + bytes written), the number docs/performance.md compares with the
// device's peak bandwidth. Without a CUDA device every benchmark reports an error and
// measures nothing. Timing uses CUDA events around each launch (manual time).
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "numref/policy.hpp"
#include "numref_cuda/api.hpp"
#include "numref_cuda/policy_map.hpp"

namespace {

using numref::FormatId;

std::size_t bytes_of(FormatId f) { return numref::format(f).bits <= 8 ? 1 : (numref::format(f).bits <= 16 ? 2 : 4); }

void bench_cast(benchmark::State& state, FormatId from, FormatId to, numref::Policy p, bool philox) {
  if (numref_cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  void *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, n * bytes_of(from)) != cudaSuccess || cudaMalloc(&out, n * bytes_of(to)) != cudaSuccess) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  cudaMemset(in, 0x3C, n * bytes_of(from));  // finite values of every source format
  const numref_cuda::CastPolicy cp = numref_cuda::cast_policy(p, numref::format(from), numref::format(to));
  const numref_cuda::RandomSource rnd =
      philox ? numref_cuda::RandomSource::philox_stream(1, 0, 0) : numref_cuda::RandomSource::none();
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  numref_cuda::cast(in, from, out, to, n, cp, rnd);  // warm-up
  for (auto _ : state) {
    cudaEventRecord(start);
    numref_cuda::cast(in, from, out, to, n, cp, rnd);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(static_cast<double>(ms) / 1e3);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(n * (bytes_of(from) + bytes_of(to))));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(in);
  cudaFree(out);
}

numref::Policy narrow(numref::ProfileId id) { return numref::profile(id).narrow; }
numref::Policy wide(numref::ProfileId id) { return numref::profile(id).wide; }
numref::Policy sr8() {
  numref::Policy p = narrow(numref::ProfileId::cuda_satfinite);
  p.round = numref::Round::sr;
  p.sr_bits = 8;
  return p;
}

constexpr std::int64_t kN = std::int64_t{64} << 20;

BENCHMARK_CAPTURE(bench_cast, f32_e4m3_cuda_satfinite, FormatId::f32, FormatId::f8e4m3fn,
                  narrow(numref::ProfileId::cuda_satfinite), false)
    ->Arg(kN)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_cast, f32_e4m3_cuda_nosat, FormatId::f32, FormatId::f8e4m3fn,
                  narrow(numref::ProfileId::cuda_nosat), false)
    ->Arg(kN)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_cast, bf16_e5m2_cuda_satfinite, FormatId::bf16, FormatId::f8e5m2,
                  narrow(numref::ProfileId::cuda_satfinite), false)
    ->Arg(kN)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_cast, f32_e4m3_sr8_philox, FormatId::f32, FormatId::f8e4m3fn, sr8(), true)
    ->Arg(kN)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_cast, f32_bf16_cuda, FormatId::f32, FormatId::bf16, wide(numref::ProfileId::cuda_satfinite),
                  false)
    ->Arg(kN)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bench_cast, e4m3_f32_decode, FormatId::f8e4m3fn, FormatId::f32,
                  wide(numref::ProfileId::cuda_satfinite), false)
    ->Arg(kN)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
