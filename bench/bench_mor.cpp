// numref benchmark — reference MoR on a 4096 x 4096 bf16 tensor.   spec §21 – §28
//
// The target: the tensor-level MoR decision (GAM, 128 x 128 scaling blocks, exact
// metric, §26) of a 4096 x 4096 bf16 tensor in <= 2 s on one core, streaming, with memory
// beyond the input O(number of blocks). Further rows: other scaling partitions, sub-tensor MoR
// (which also writes the fake-quantized tensor), an f32 source (no lookup tables: every element
// goes through quantize, dequantize, BF16 and the two §21 roundings), and the moments (§28.4).
// Inputs: bf16 codes with random signs, exponents uniform in [-12, 4] and random fractions
// (splitmix64, fixed seed, as bench_quantize). Items/s = elements/s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench_support.hpp"
#include "numref/mor.hpp"
#include "numref/stats.hpp"

namespace {

constexpr std::size_t kRows = 4096, kCols = 4096;

const std::vector<std::uint16_t>& input() {
  static const std::vector<std::uint16_t> data = numref::bench::random_bf16(kRows * kCols, 42);
  return data;
}

numref::TensorView view() {
  return numref::TensorView(numref::format(numref::FormatId::bf16), input().data(), kRows, kCols);
}

void tensor_level(benchmark::State& state, numref::Partition p) {
  const numref::TensorView x = view();
  numref::TensorMorSpec spec;
  spec.scaling = p;
  for (auto _ : state) {
    const numref::TensorMorResult r = numref::tensor_mor(x, spec);
    benchmark::DoNotOptimize(r.mean);
    state.counters["mean_f32"] = static_cast<double>(r.mean);  // bits (same every iteration)
    state.counters["quantized"] = r.quantized ? 1 : 0;
  }
  numref::bench::set_items(state, kRows * kCols);
}

void BM_TensorMor_Block128(benchmark::State& s) { tensor_level(s, numref::Partition::blocks(128, 128)); }
void BM_TensorMor_Block64(benchmark::State& s) { tensor_level(s, numref::Partition::blocks(64, 64)); }
void BM_TensorMor_Tensor(benchmark::State& s) { tensor_level(s, numref::Partition::tensor()); }
void BM_TensorMor_ChannelRows(benchmark::State& s) { tensor_level(s, numref::Partition::per_row()); }

void BM_SubtensorMor_ThreeWay(benchmark::State& state) {
  const numref::TensorView x = view();
  for (auto _ : state) {
    const numref::SubtensorMorResult r = numref::subtensor_mor(x);
    benchmark::DoNotOptimize(r.fake.data());
  }
  numref::bench::set_items(state, kRows * kCols);
}

// f32 source, 1024 x 1024 (the direct path: no lookup tables for 32-bit sources)
void BM_TensorMor_F32_1024(benchmark::State& state) {
  constexpr std::size_t n = 1024;
  std::vector<std::uint32_t> f(n * n);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<std::uint32_t>(input()[i]) << 16 | (i & 0xFFFFu);
  const numref::TensorView x(numref::format(numref::FormatId::f32), f.data(), n, n);
  for (auto _ : state) {
    const numref::TensorMorResult r = numref::tensor_mor(x);
    benchmark::DoNotOptimize(r.mean);
  }
  numref::bench::set_items(state, n * n);
}

void BM_Moments(benchmark::State& state) {
  const numref::TensorView x = view();
  for (auto _ : state) {
    const numref::Moments m = numref::tensor_moments(x);
    benchmark::DoNotOptimize(m.kurtosis);
  }
  numref::bench::set_items(state, kRows * kCols);
}

}  // namespace

BENCHMARK(BM_TensorMor_Block128)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_TensorMor_Block64)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_TensorMor_Tensor)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_TensorMor_ChannelRows)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_SubtensorMor_ThreeWay)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_TensorMor_F32_1024)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_Moments)->Unit(benchmark::kMillisecond)->MinTime(2.0);

BENCHMARK_MAIN();
