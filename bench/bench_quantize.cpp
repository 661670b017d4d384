// numref benchmark — reference quantize of a 4096 x 4096 bf16 tensor.   spec §19
//
// The target: GAM quantize (one group = the tensor, 128 x 128 blocks, f8e4m3fn,
// default policy) of a 4096 x 4096 bf16 tensor in <= 1 s on one core, with memory beyond
// input and output O(number of blocks). Further rows give the other rules for comparison.
// Inputs: bf16 codes with random signs, exponents uniform in [-12, 4] and random fractions
// (splitmix64, fixed seed), i.e. values in roughly ±[2^-12, 2^5). Items/s = elements/s.
// numref::quantize() memoizes the per-element function for the most frequent block factors
// of <= 16-bit sources (quantize.hpp); BM_gam_128x128_per_block times the plain streaming path.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench_support.hpp"
#include "numref/quantize.hpp"

namespace {

constexpr std::size_t kRows = 4096, kCols = 4096;

const std::vector<std::uint16_t>& input() {
  static const std::vector<std::uint16_t> data = numref::bench::random_bf16(kRows * kCols, 42);
  return data;
}

void run(benchmark::State& state, numref::QuantizeSpec spec) {
  const auto& data = input();
  const numref::TensorView x(numref::format(numref::FormatId::bf16), data.data(), kRows, kCols);
  std::vector<std::uint8_t> codes(kRows * kCols);
  for (auto _ : state) {
    numref::QuantizeResult r = numref::quantize(x, spec, codes);
    benchmark::DoNotOptimize(r.meta.scales.data());
    benchmark::DoNotOptimize(codes.data());
  }
  numref::bench::set_items(state, kRows * kCols);
}

// The streaming per-block path (Quantizer::quantize_block, no memo tables): what a caller
// that walks the blocks itself pays.
void run_per_block(benchmark::State& state, numref::QuantizeSpec spec) {
  const auto& data = input();
  const numref::TensorView x(numref::format(numref::FormatId::bf16), data.data(), kRows, kCols);
  std::vector<std::uint8_t> codes(kRows * kCols);
  for (auto _ : state) {
    numref::Quantizer q(spec, kRows, kCols);
    std::vector<numref::Amax> amax(q.grid().count());
    for (std::size_t b = 0; b < amax.size(); ++b) amax[b] = q.amax(x, b);
    q.prepare(amax);
    for (std::size_t b = 0; b < amax.size(); ++b) q.quantize_block(x, b, q.block_scale(b, amax[b]), codes, {});
    benchmark::DoNotOptimize(codes.data());
  }
  numref::bench::set_items(state, kRows * kCols);
}

numref::QuantizeSpec spec(numref::ScaleRule rule, numref::Partition p) {
  numref::QuantizeSpec s;
  s.rule = rule;
  s.partition = p;
  return s;
}

void BM_gam_128x128(benchmark::State& st) {
  run(st, spec(numref::ScaleRule::gam, numref::Partition::blocks(128, 128)));
}
void BM_gam_128x128_per_block(benchmark::State& st) {
  run_per_block(st, spec(numref::ScaleRule::gam, numref::Partition::blocks(128, 128)));
}
void BM_gam_128x128_fused(benchmark::State& st) {
  auto s = spec(numref::ScaleRule::gam, numref::Partition::blocks(128, 128));
  s.apply = numref::ScaleApply::fused;
  run(st, s);
}
void BM_amax_tensor(benchmark::State& st) { run(st, spec(numref::ScaleRule::amax, numref::Partition::tensor())); }
void BM_mx_floor_1x32(benchmark::State& st) {
  run(st, spec(numref::ScaleRule::mx_floor, numref::Partition::blocks(1, 32)));
}
void BM_nvfp4_1x16(benchmark::State& st) {
  auto s = spec(numref::ScaleRule::nvfp4, numref::Partition::blocks(1, 16));
  s.element = &numref::format(numref::FormatId::f4e2m1fn);
  run(st, s);
}
void BM_int8_rows(benchmark::State& st) {
  auto s = spec(numref::ScaleRule::int8, numref::Partition::per_row());
  s.element = &numref::format(numref::FormatId::int8);
  run(st, s);
}

BENCHMARK(BM_gam_128x128)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_gam_128x128_per_block)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_gam_128x128_fused)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_amax_tensor)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_mx_floor_1x32)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_nvfp4_1x16)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_int8_rows)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
