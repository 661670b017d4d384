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
#include <string_view>
#include <vector>

#include "bench_support.hpp"
#include "numref/convert.hpp"

namespace {

using numref::Converter;
using numref::FormatId;
using numref::Policy;

constexpr std::size_t kN = std::size_t{1} << 16;  // codes per pass (fits in L2 with the results)

std::vector<std::uint32_t> random_codes(std::uint32_t mask, std::uint64_t seed) {
  std::vector<std::uint32_t> v(kN);
  for (auto& c : v) c = static_cast<std::uint32_t>(numref::splitmix64_next(seed) >> 32) & mask;
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
  numref::bench::set_items(state, codes.size());
}

Policy saturating() {
  Policy p;                                 // ocp: rne (§4.2)
  p.overflow = numref::Overflow::saturate;  // §6.1
  return p;
}
// §5.1 stochastic rounding with k random bits per value (variant `add`: §5.2).
Policy sr(Policy p, int k, numref::SrVariant v = Policy{}.sr_variant) {
  p.round = numref::Round::sr;
  p.sr_bits = k;
  p.sr_variant = v;
  return p;
}

// One Converter benchmark: the conversion and its input codes (for sr, the random values
// of the same length, masked to k bits, from another seed).
enum class Input { sweep_f32, sweep_bf16, sweep_sample, random };
struct Case {
  const char* name;
  FormatId from, to;
  Policy policy;
  Input input;
  std::uint64_t seed;  // random codes (Input::random); sr: seed - 1 for the random values
};
std::vector<std::uint32_t> codes_of(Input in, std::uint64_t seed) {
  switch (in) {
    case Input::sweep_f32: return sweep_codes(0x3F000000u, 0xFFFFFFFFu);
    case Input::sweep_bf16: return sweep_codes(0, 0xFFFFu);
    case Input::sweep_sample: return sweep_sample_codes();
    case Input::random: break;
  }
  return random_codes(0xFFFFFFFFu, seed);
}

const Case kCases[] = {
    // §11 f32 -> f8e4m3fn, RNE, saturating: the headline number (target >= 100M/s per core).
    {"BM_f32_to_e4m3_rne_sat_sweep", FormatId::f32, FormatId::f8e4m3fn, saturating(), Input::sweep_f32, 0},
    {"BM_f32_to_e4m3_rne_sat_sweep_sample", FormatId::f32, FormatId::f8e4m3fn, saturating(), Input::sweep_sample, 0},
    {"BM_f32_to_e4m3_rne_sat_random", FormatId::f32, FormatId::f8e4m3fn, saturating(), Input::random, 1},
    // bf16 -> f8e4m3fn over all 65536 codes.
    {"BM_bf16_to_e4m3_rne_sat_all", FormatId::bf16, FormatId::f8e4m3fn, saturating(), Input::sweep_bf16, 0},
    // f32 -> bf16, RNE, IEEE overflow (ocp wide policy).
    {"BM_f32_to_bf16_rne_sweep", FormatId::f32, FormatId::bf16, Policy{}, Input::sweep_f32, 0},
    {"BM_f32_to_bf16_rne_random", FormatId::f32, FormatId::bf16, Policy{}, Input::random, 2},
    // f32 -> f8e8m0fnu, ocp (§7.1 follow -> even code). Random codes: half are negative (NaN, §7.3).
    {"BM_f32_to_e8m0_even_sweep", FormatId::f32, FormatId::f8e8m0fnu, Policy{}, Input::sweep_f32, 0},
    {"BM_f32_to_e8m0_even_random", FormatId::f32, FormatId::f8e8m0fnu, Policy{}, Input::random, 3},
    // §5.1 stochastic rounding f32 -> f8e4m3fn, k = 8 random bits per value, saturating;
    // §5.2 the `add` variant of the same; f32 -> bf16 with k = 16.
    {"BM_f32_to_e4m3_sr8_sat_random", FormatId::f32, FormatId::f8e4m3fn, sr(saturating(), 8), Input::random, 5},
    {"BM_f32_to_e4m3_sr8add_sat_random", FormatId::f32, FormatId::f8e4m3fn, sr(saturating(), 8, numref::SrVariant::add),
     Input::random, 7},
    {"BM_f32_to_bf16_sr16_random", FormatId::f32, FormatId::bf16, sr(Policy{}, 16), Input::random, 9},
};

void convert_case(benchmark::State& s, const Case& c) {
  const Converter conv(c.from, c.to, c.policy);
  if (c.policy.round != numref::Round::sr) return run(s, conv, codes_of(c.input, c.seed));
  const auto rs = random_codes((1u << c.policy.sr_bits) - 1u, c.seed - 1);
  run(s, conv, codes_of(c.input, c.seed), &rs);
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
  numref::bench::set_items(s, codes.size());
}

// Registered in the order of the table, the free-function row after the random f32 -> e4m3 one.
const bool kRegistered = [] {
  for (const Case& c : kCases) {
    benchmark::RegisterBenchmark(c.name, convert_case, c);
    if (c.name == std::string_view("BM_f32_to_e4m3_rne_sat_random"))
      benchmark::RegisterBenchmark("BM_f32_to_e4m3_rne_sat_random_convert_fn",
                                   BM_f32_to_e4m3_rne_sat_random_convert_fn);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
