// One-core streaming memory bandwidth: the CPU side of the roofline in docs/performance.md
// ("Roofline"). Three loops over buffers far larger than the last-level cache, on one thread:
//   BM_StreamRead   sum of 64-bit words       (bytes read)
//   BM_StreamWrite  fill with a 64-bit word   (bytes written)
//   BM_StreamCopy   dst[i] = src[i]           (bytes read + written)
//   BM_StreamCast   read 4 bytes, write 1 byte per element (the shape of an f32 -> 8-bit cast)
//   BM_StreamCastThreads/T  the same loop split into T contiguous parts on T threads (real
//                   time): the T-core bound that issue 32's thread scaling is measured against
// bytes_per_second is the bandwidth a memory-bound kernel on one core can reach; cpu-fast's
// casts and block quantization are reported as a percentage of it. Speed is never asserted.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kBytes = std::size_t{256} << 20;  // 256 MiB per buffer: far beyond any cache

void BM_StreamRead(benchmark::State& st) {
  std::vector<std::uint64_t> a(kBytes / 8, 1u);
  for (auto _ : st) {
    std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four chains: the adds are not the bound
    for (std::size_t i = 0; i < a.size(); i += 4) s0 += a[i], s1 += a[i + 1], s2 += a[i + 2], s3 += a[i + 3];
    benchmark::DoNotOptimize(s0 + s1 + s2 + s3);
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(kBytes));
}
BENCHMARK(BM_StreamRead)->Unit(benchmark::kMillisecond);

void BM_StreamWrite(benchmark::State& st) {
  std::vector<std::uint64_t> a(kBytes / 8, 1u);
  std::uint64_t v = 0;
  for (auto _ : st) {
    ++v;
    for (auto& x : a) x = v;
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(a.data());
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(kBytes));
}
BENCHMARK(BM_StreamWrite)->Unit(benchmark::kMillisecond);

void BM_StreamCopy(benchmark::State& st) {
  std::vector<std::uint64_t> a(kBytes / 8, 1u), b(kBytes / 8, 2u);
  for (auto _ : st) {
    for (std::size_t i = 0; i < a.size(); ++i) b[i] = a[i];
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(b.data());
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(2 * kBytes));
}
BENCHMARK(BM_StreamCopy)->Unit(benchmark::kMillisecond);

// 4 bytes in, 1 byte out per element (the low byte: no arithmetic worth the name).
void BM_StreamCast(benchmark::State& st) {
  std::vector<std::uint32_t> a(kBytes / 4, 0x3F800000u);
  std::vector<std::uint8_t> b(kBytes / 4, 0u);
  for (auto _ : st) {
    for (std::size_t i = 0; i < a.size(); ++i) b[i] = static_cast<std::uint8_t>(a[i] >> 24);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(b.data());
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(kBytes + kBytes / 4));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(kBytes / 4));
}
BENCHMARK(BM_StreamCast)->Unit(benchmark::kMillisecond);

// BM_StreamCast's loop on one part (restrict: the same vector code as the one-thread loop).
void cast_part(const std::uint32_t* __restrict a, std::uint8_t* __restrict b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(a[i] >> 24);
}

void BM_StreamCastThreads(benchmark::State& st) {
  const std::size_t T = static_cast<std::size_t>(st.range(0)), n = kBytes / 4;
  std::vector<std::uint32_t> a(n, 0x3F800000u);
  std::vector<std::uint8_t> b(n, 0u);
  for (auto _ : st) {
    std::vector<std::thread> th;
    for (std::size_t t = 0; t < T; ++t)
      th.emplace_back([&, t] { cast_part(a.data() + n * t / T, b.data() + n * t / T, n * (t + 1) / T - n * t / T); });
    for (auto& x : th) x.join();
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(b.data());
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(kBytes + kBytes / 4));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_StreamCastThreads)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
