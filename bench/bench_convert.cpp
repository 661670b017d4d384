// numref — throughput of the reference conversions (numref::Converter, spec §11).
//
// Each benchmark converts a fixed array of source codes with one Converter built outside
// the timed loop and reports items (conversions) per second on one core. Two input orders:
//   sweep  — 65536 consecutive codes from 0.5 up (all in range: the in-range path only);
//   sweep_sample — 64 windows of 1024 consecutive codes spread over all 2^32 codes, the
//            mix of classes and exponents of the exhaustive sweep;
//   random — uniformly random 32-bit codes (splitmix64), which defeats branch prediction.
// Results and the exact command: docs/performance.md, "## Reference conversions".
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "numref/convert.hpp"

namespace {

using numref::Converter;
using numref::FormatId;
using numref::Policy;

constexpr std::size_t kN = std::size_t{1} << 16;  // codes per pass (fits in L2 with the results)

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<std::uint32_t> random_codes(std::uint32_t mask, std::uint64_t seed) {
  std::vector<std::uint32_t> v(kN);
  for (auto& c : v) c = static_cast<std::uint32_t>(splitmix64(seed) >> 32) & mask;
  return v;
}

// Consecutive codes starting in the middle of the positive finite range of f32
// (0x3F000000 = 0.5): the sweep pattern.
std::vector<std::uint32_t> sweep_codes(std::uint32_t start, std::uint32_t mask) {
  std::vector<std::uint32_t> v(kN);
  for (std::size_t i = 0; i < kN; ++i) v[i] = (start + static_cast<std::uint32_t>(i)) & mask;
  return v;
}

// A sample of the full 2^32 sweep with its real mix of classes and exponents: 64 windows
// of 1024 consecutive codes, one starting every 2^26 codes (offset so that the windows do
// not all start at a zero fraction).
std::vector<std::uint32_t> sweep_sample_codes() {
  std::vector<std::uint32_t> v;
  v.reserve(kN);
  for (std::uint32_t w = 0; w < 64; ++w)
    for (std::uint32_t i = 0; i < 1024; ++i) v.push_back((w << 26) + 0x123456u + i);
  return v;
}

void run(benchmark::State& state, const Converter& conv, const std::vector<std::uint32_t>& codes,
         const std::vector<std::uint32_t>* rs = nullptr) {
  std::uint32_t acc = 0;
  for (auto _ : state) {
    if (rs) {
      for (std::size_t i = 0; i < codes.size(); ++i) {
        const numref::Result r = conv(codes[i], (*rs)[i]);
        acc += r.bits + r.flags;
      }
    } else {
      for (const std::uint32_t c : codes) {
        const numref::Result r = conv(c);
        acc += r.bits + r.flags;
      }
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(codes.size()));
}

Policy saturating() {
  Policy p;  // ocp: rne (§4.2)
  p.overflow = numref::Overflow::saturate;  // §6.1
  return p;
}

// §11 f32 -> f8e4m3fn, RNE, saturating: the headline number (target >= 100M/s per core).
void BM_f32_to_e4m3_rne_sat_sweep(benchmark::State& s) {
  const Converter conv(FormatId::f32, FormatId::f8e4m3fn, saturating());
  run(s, conv, sweep_codes(0x3F000000u, 0xFFFFFFFFu));
}
void BM_f32_to_e4m3_rne_sat_sweep_sample(benchmark::State& s) {
  const Converter conv(FormatId::f32, FormatId::f8e4m3fn, saturating());
  run(s, conv, sweep_sample_codes());
}
void BM_f32_to_e4m3_rne_sat_random(benchmark::State& s) {
  const Converter conv(FormatId::f32, FormatId::f8e4m3fn, saturating());
  run(s, conv, random_codes(0xFFFFFFFFu, 1));
}
// The free function validates the policy on every call (§11 step 1).
void BM_f32_to_e4m3_rne_sat_random_convert_fn(benchmark::State& s) {
  const Policy p = saturating();
  const auto codes = random_codes(0xFFFFFFFFu, 1);
  std::uint32_t acc = 0;
  for (auto _ : s) {
    for (const std::uint32_t c : codes) {
      const numref::Result r = numref::convert(c, FormatId::f32, FormatId::f8e4m3fn, p);
      acc += r.bits + r.flags;
    }
    benchmark::DoNotOptimize(acc);
  }
  s.SetItemsProcessed(static_cast<std::int64_t>(s.iterations()) * static_cast<std::int64_t>(codes.size()));
}
// bf16 -> f8e4m3fn over all 65536 codes.
void BM_bf16_to_e4m3_rne_sat_all(benchmark::State& s) {
  const Converter conv(FormatId::bf16, FormatId::f8e4m3fn, saturating());
  run(s, conv, sweep_codes(0, 0xFFFFu));
}
// f32 -> bf16, RNE, IEEE overflow (ocp wide policy).
void BM_f32_to_bf16_rne_sweep(benchmark::State& s) {
  const Converter conv(FormatId::f32, FormatId::bf16, Policy{});
  run(s, conv, sweep_codes(0x3F000000u, 0xFFFFFFFFu));
}
void BM_f32_to_bf16_rne_random(benchmark::State& s) {
  const Converter conv(FormatId::f32, FormatId::bf16, Policy{});
  run(s, conv, random_codes(0xFFFFFFFFu, 2));
}
// f32 -> f8e8m0fnu, ocp (§7.1 follow -> even code). Random codes: half are negative (NaN, §7.3).
void BM_f32_to_e8m0_even_sweep(benchmark::State& s) {
  const Converter conv(FormatId::f32, FormatId::f8e8m0fnu, Policy{});
  run(s, conv, sweep_codes(0x3F000000u, 0xFFFFFFFFu));
}
void BM_f32_to_e8m0_even_random(benchmark::State& s) {
  const Converter conv(FormatId::f32, FormatId::f8e8m0fnu, Policy{});
  run(s, conv, random_codes(0xFFFFFFFFu, 3));
}
// §5.1 stochastic rounding f32 -> f8e4m3fn, k = 8 random bits per value, saturating.
void BM_f32_to_e4m3_sr8_sat_random(benchmark::State& s) {
  Policy p = saturating();
  p.round = numref::Round::sr;
  p.sr_bits = 8;
  const Converter conv(FormatId::f32, FormatId::f8e4m3fn, p);
  const auto rs = random_codes(0xFFu, 4);
  run(s, conv, random_codes(0xFFFFFFFFu, 5), &rs);
}
// §5.2 the `add` variant of the same.
void BM_f32_to_e4m3_sr8add_sat_random(benchmark::State& s) {
  Policy p = saturating();
  p.round = numref::Round::sr;
  p.sr_bits = 8;
  p.sr_variant = numref::SrVariant::add;
  const Converter conv(FormatId::f32, FormatId::f8e4m3fn, p);
  const auto rs = random_codes(0xFFu, 6);
  run(s, conv, random_codes(0xFFFFFFFFu, 7), &rs);
}
// §5.1 f32 -> bf16 with k = 16.
void BM_f32_to_bf16_sr16_random(benchmark::State& s) {
  Policy p;
  p.round = numref::Round::sr;
  p.sr_bits = 16;
  const Converter conv(FormatId::f32, FormatId::bf16, p);
  const auto rs = random_codes(0xFFFFu, 8);
  run(s, conv, random_codes(0xFFFFFFFFu, 9), &rs);
}

BENCHMARK(BM_f32_to_e4m3_rne_sat_sweep);
BENCHMARK(BM_f32_to_e4m3_rne_sat_sweep_sample);
BENCHMARK(BM_f32_to_e4m3_rne_sat_random);
BENCHMARK(BM_f32_to_e4m3_rne_sat_random_convert_fn);
BENCHMARK(BM_bf16_to_e4m3_rne_sat_all);
BENCHMARK(BM_f32_to_bf16_rne_sweep);
BENCHMARK(BM_f32_to_bf16_rne_random);
BENCHMARK(BM_f32_to_e8m0_even_sweep);
BENCHMARK(BM_f32_to_e8m0_even_random);
BENCHMARK(BM_f32_to_e4m3_sr8_sat_random);
BENCHMARK(BM_f32_to_e4m3_sr8add_sat_random);
BENCHMARK(BM_f32_to_bf16_sr16_random);

}  // namespace

BENCHMARK_MAIN();
