// numref benchmark — the mma reference (spec §36 – §39): multiply-adds per second.  docs/performance.md
//
// D = A·B + C with A 64 x K, B K x 64 (K = 4096), C = +0, e4m3 operands from normally
// distributed values (splitmix64, fixed seed), f32 accumulator; one row per profile kind:
//   Mma/ideal                 §37: the exact sum rounded once (128-bit accumulator)
//   Mma/sm90_wgmma_f8         §38: steps of 32 products, align 13, rz13
//   Mma/sm100_tcgen05_f8f6f4  §38: steps of 32 products, align 25, rz
//   Mma/sm89_mma_f8           §38: steps of 16 products
//   Mma/sm100_tcgen05_mxf8f6f4  §38.3 with E8M0 scales per 32
//   CpuFast/<profile>         the same through cpu-fast's model (arith/include/numref_arith/mma.cuh)
// Items/s = multiply-adds/s (M · N · K per iteration), one core.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "numref/mma.hpp"
#if NUMREF_BENCH_CPU_FAST
#include "fast_mma.hpp"
#endif
#include "numref/splitmix64.hpp"

namespace {

constexpr std::size_t kM = 64, kN = 64, kK = 4096;

// e4m3 codes of values with exponents -6 .. 5 and random fractions and signs (no NaN).
std::vector<std::uint32_t> e4m3_codes(std::size_t n, std::uint64_t seed) {
  numref::SplitMix64 g(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& c : v) {
    const std::uint64_t w = g.next();
    const std::uint32_t e = 1 + static_cast<std::uint32_t>(w % 12);  // exponent field 1..12
    c = static_cast<std::uint32_t>(((w >> 8) & 1) << 7) | (e << 3) | static_cast<std::uint32_t>((w >> 16) & 7);
  }
  return v;
}

template <bool kFast>
void Run(benchmark::State& state, const char* profile) {
  static const std::vector<std::uint32_t> A = e4m3_codes(kM * kK, 1), B = e4m3_codes(kK * kN, 2);
  const std::vector<std::uint32_t> C(kM * kN, 0);
  std::vector<std::uint32_t> D(kM * kN);
  numref::MmaSpec s;
  s.profile = numref::find_mma_profile(profile);
  s.a = s.b = numref::MmaType::f8e4m3fn;
  s.c = numref::MmaType::f32;
  std::vector<std::uint32_t> SA, SB;
  if (s.profile->knobs.scale != numref::MmaScale::none) {
    s.block = 32;
    SA.assign(kM * kK / 32, 0x7F);
    SB.assign(kK / 32 * kN, 0x80);
  }
  for (auto _ : state) {
#if NUMREF_BENCH_CPU_FAST
    if constexpr (kFast)
      numref::cpu_fast::mma(s, kM, kN, kK, A.data(), B.data(), C.data(), SA.data(), SB.data(), D.data(), nullptr);
    else
#endif
      numref::mma(s, kM, kN, kK, A, B, C, D, SA, SB);
    benchmark::DoNotOptimize(D.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kM * kN * kK));
}

void Mma(benchmark::State& state, const char* profile) { Run<false>(state, profile); }
[[maybe_unused]] void CpuFast(benchmark::State& state, const char* profile) { Run<true>(state, profile); }

BENCHMARK_CAPTURE(Mma, ideal, "ideal")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Mma, sm90_wgmma_f8, "sm90_wgmma_f8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Mma, sm100_tcgen05_f8f6f4, "sm100_tcgen05_f8f6f4")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Mma, sm89_mma_f8, "sm89_mma_f8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Mma, sm100_tcgen05_mxf8f6f4, "sm100_tcgen05_mxf8f6f4")->Unit(benchmark::kMillisecond);

#if NUMREF_BENCH_CPU_FAST
BENCHMARK_CAPTURE(CpuFast, sm90_wgmma_f8, "sm90_wgmma_f8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(CpuFast, sm100_tcgen05_f8f6f4, "sm100_tcgen05_f8f6f4")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(CpuFast, sm89_mma_f8, "sm89_mma_f8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(CpuFast, sm100_tcgen05_mxf8f6f4, "sm100_tcgen05_mxf8f6f4")->Unit(benchmark::kMillisecond);
#endif

}  // namespace

BENCHMARK_MAIN();
