// cpu-fast's byte lanes (conformance/backends/cpu_fast/fast_lanes.hpp), speed: the casts behind
// numref.cast's 16 M-element targets of issue 13 — f32 -> f8e4m3fn (>= 1 G elements/s on one core)
// and bf16 -> f8e4m3fn (>= 2 G/s) — and the other narrow targets and f16, with and without the
// flags output, each against the path it replaces on the same input:
//   BM_Bytes       ByteLanes::run: the source codes in place -> one byte per element (+ flags);
//   BM_Lut8        bf16 / f16 only: a 64 KiB byte table of every source code, one load per
//                  element (+ a second table for the flags) — what a table path at best does;
//   BM_FastCast32  FastCast::run into 32-bit codes in 1024-element blocks, narrowed to bytes
//                  afterwards: the module's call pattern before the byte lanes (FastCast itself
//                  now takes the byte lanes inside for f32 sources; its table for bf16).
// Input: 16 777 216 values uniform in [-512, 512) (splitmix64, fixed seed): the E4M3 range and a
// little beyond it (about 12 % overflow f8e4m3fn), as bench/python_cast.py; bf16 / f16 inputs are
// those values rounded by numref (RNE). items/s = elements per CPU second of the one thread
// (Google Benchmark's default: robust to other jobs on a shared machine, apart from cache and
// frequency effects). Results and the command: docs/performance.md, "numref.cast".
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bench_support.hpp"
#include "fast_cast.hpp"
#include "fast_lanes.hpp"

namespace {

using numref::format;
using numref::FormatId;

constexpr std::size_t kN = std::size_t{1} << 24;

// The f32 codes of kN values uniform in [-512, 512): a random 24-bit integer k, k / 2^14 - 512.
const std::vector<std::uint32_t>& f32_codes() {
  static const std::vector<std::uint32_t> v = [] {
    std::vector<std::uint32_t> c(kN);
    std::uint64_t s = 20261126;
    for (auto& x : c) {
      const auto k = static_cast<std::int32_t>(numref::splitmix64_next(s) >> 40);  // 0 .. 2^24 - 1
      const float f = static_cast<float>(k - (1 << 23)) / 16384.0f;                // exact: |k - 2^23| < 2^24
      std::memcpy(&x, &f, 4);
    }
    return c;
  }();
  return v;
}

// The same values in a 16-bit source format (RNE, numref's own conversion).
const std::vector<std::uint16_t>& codes16(FormatId id) {
  static std::vector<std::uint16_t> bf16, f16;
  auto& v = id == FormatId::bf16 ? bf16 : f16;
  if (v.empty()) {
    const numref::cpu_fast::FastCast to16(format(FormatId::f32), format(id), numref::Policy{});
    std::vector<std::uint32_t> w(kN);
    to16.run(f32_codes().data(), nullptr, w.data(), nullptr, kN);
    v.assign(w.begin(), w.end());
  }
  return v;
}

const FormatId kTargets[] = {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f6e3m2fn, FormatId::f4e2m1fn};
const FormatId kSources[] = {FormatId::f32, FormatId::bf16, FormatId::f16};

// range(0): source (0 f32, 1 bf16, 2 f16); range(1): target (kTargets); range(2): flags
void BM_Bytes(benchmark::State& st) {
  const FormatId from = kSources[st.range(0)], to = kTargets[st.range(1)];
  const numref::cpu_fast::ByteLanes lanes(format(from), format(to), numref::profile(numref::ProfileId::ocp).narrow);
  std::vector<std::uint8_t> out(kN), fl(st.range(2) ? kN : 0);
  std::uint8_t* f = st.range(2) ? fl.data() : nullptr;
  for (auto _ : st) {
    if (from == FormatId::f32)
      lanes.run(f32_codes().data(), out.data(), f, kN);
    else
      lanes.run(codes16(from).data(), out.data(), f, kN);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  numref::bench::set_items(st, kN);
}
BENCHMARK(BM_Bytes)
    ->ArgNames({"from", "to", "flags"})
    ->ArgsProduct({{0, 1, 2}, {0}, {0, 1}})
    ->ArgsProduct({{0}, {1, 2, 3}, {0}})
    ->Unit(benchmark::kMillisecond);

// range(0): source (1 bf16, 2 f16); range(1): flags — into f8e4m3fn
void BM_Lut8(benchmark::State& st) {
  const FormatId from = kSources[st.range(0)];
  const numref::cpu_fast::FastCast fc(format(from), format(FormatId::f8e4m3fn),
                                      numref::profile(numref::ProfileId::ocp).narrow);
  std::vector<std::uint32_t> all(65536), code(65536);
  std::vector<std::uint8_t> t(65536), tf(65536);
  for (std::uint32_t c = 0; c < 65536; ++c) all[c] = c;
  fc.run(all.data(), nullptr, code.data(), tf.data(), 65536);
  for (std::size_t c = 0; c < 65536; ++c) t[c] = static_cast<std::uint8_t>(code[c]);
  const std::vector<std::uint16_t>& x = codes16(from);
  std::vector<std::uint8_t> out(kN), fl(kN);
  for (auto _ : st) {
    if (st.range(1))
      for (std::size_t i = 0; i < kN; ++i) {
        out[i] = t[x[i]];
        fl[i] = tf[x[i]];
      }
    else
      for (std::size_t i = 0; i < kN; ++i) out[i] = t[x[i]];
    benchmark::DoNotOptimize(out.data());
    benchmark::DoNotOptimize(fl.data());
    benchmark::ClobberMemory();
  }
  numref::bench::set_items(st, kN);
}
BENCHMARK(BM_Lut8)->ArgNames({"from", "flags"})->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);

// range(0): source (0 f32, 1 bf16); range(1): flags — into f8e4m3fn through FastCast's 32-bit
// output in 1024-element blocks, narrowed (as python/src/numref_core.cpp did for f32 sources)
void BM_FastCast32(benchmark::State& st) {
  const FormatId from = kSources[st.range(0)];
  const numref::cpu_fast::FastCast fc(format(from), format(FormatId::f8e4m3fn),
                                      numref::profile(numref::ProfileId::ocp).narrow);
  std::vector<std::uint32_t> in(kN);
  if (from == FormatId::f32)
    in = f32_codes();
  else
    in.assign(codes16(from).begin(), codes16(from).end());
  std::vector<std::uint8_t> out(kN), fl(st.range(1) ? kN : 0);
  std::uint32_t buf[1024];
  for (auto _ : st) {
    for (std::size_t b = 0; b < kN; b += 1024) {
      fc.run(in.data() + b, nullptr, buf, st.range(1) ? fl.data() + b : nullptr, 1024);
      for (std::size_t i = 0; i < 1024; ++i) out[b + i] = static_cast<std::uint8_t>(buf[i]);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  numref::bench::set_items(st, kN);
}
BENCHMARK(BM_FastCast32)->ArgNames({"from", "flags"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
