// numref CUDA kernels — GaussWS forward and backward throughput (Google Benchmark).
//                                                              spec §30, §A.13, docs/performance.md
//
// An 8192 x 8192 bf16 weight matrix (64 M elements, 65 536 tiles of 32 x 32) in device memory;
// b_t per tile from {4, 4.5, 6, 5.25}; dL/dw_hat in bf16. Rows:
//   forward_key        R from the §30.3 generator: reads w, writes w_hat           4 B / element
//   forward_key_packR  the same and writes packed R (§30.9)                        4.5 B / element
//   forward_bits       R from given 16-bit words: reads w and u, writes w_hat      6 B / element
//   backward_key       reads g (R regenerated), writes dL/db_t per tile           2 B / element
//   backward_bits      reads g and u                                               4 B / element
// (the per-tile b_t, s and dL/db_t words add 8 to 12 B per 1024 elements, below 1 %). Time per
// call by CUDA events; GB/s = those bytes / time; %peak = GB/s over the peak DRAM bandwidth from
// the device attributes (2 x memory clock x bus width). The target (issue 14) is >= 85 % on an
// H100. Without a CUDA device every benchmark reports the skip and measures nothing.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "numref/splitmix64.hpp"
#include "numref_arith/gaussws.cuh"
#include "numref_cuda/api.hpp"

namespace {

using numref::FormatId;
namespace gw = numref_cuda::gaussws;
constexpr std::size_t kRows = 8192, kCols = 8192, kN = kRows * kCols, kTiles = (kRows / 32) * (kCols / 32);

// Device buffers shared by every benchmark.
struct Buffers {
  std::uint16_t *w = nullptr, *g = nullptr, *u = nullptr, *w_hat = nullptr;
  std::uint32_t *bt = nullptr, *scale = nullptr, *grad = nullptr, *packed = nullptr, *status = nullptr;
  bool ok = false;
};
const Buffers& buffers() {
  static const Buffers b = [] {
    Buffers x;
    std::vector<std::uint16_t> h(kN);
    bool ok = true;
    auto upload = [&](std::uint16_t*& d, std::uint64_t seed, bool words) {
      for (auto& v : h) {
        const std::uint64_t r = numref::splitmix64_next(seed);
        v = words ? static_cast<std::uint16_t>(r)
                  : static_cast<std::uint16_t>(((115u + r % 17u) << 7) | ((r >> 8) & 0x807Fu));
      }
      ok = ok && cudaMalloc(reinterpret_cast<void**>(&d), kN * 2) == cudaSuccess &&
           cudaMemcpy(d, h.data(), kN * 2, cudaMemcpyHostToDevice) == cudaSuccess;
    };
    upload(x.w, 1, false);
    upload(x.g, 2, false);
    upload(x.u, 3, true);
    std::vector<std::uint32_t> bt(kTiles);
    const std::uint32_t bts[] = {0x40800000u, 0x40900000u, 0x40C00000u, 0x40A80000u};
    for (std::size_t t = 0; t < kTiles; ++t) bt[t] = bts[t % 4];
    ok = ok && cudaMalloc(reinterpret_cast<void**>(&x.w_hat), kN * 2) == cudaSuccess &&
         cudaMalloc(reinterpret_cast<void**>(&x.bt), kTiles * 4) == cudaSuccess &&
         cudaMalloc(reinterpret_cast<void**>(&x.scale), kTiles * 4) == cudaSuccess &&
         cudaMalloc(reinterpret_cast<void**>(&x.grad), kTiles * 4) == cudaSuccess &&
         cudaMalloc(reinterpret_cast<void**>(&x.packed), (kN / 8) * 4) == cudaSuccess &&
         cudaMalloc(reinterpret_cast<void**>(&x.status), 4) == cudaSuccess &&
         cudaMemcpy(x.bt, bt.data(), kTiles * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemset(x.status, 0, 4) == cudaSuccess;
    x.ok = ok;
    return x;
  }();
  return b;
}

double peak_dram_bytes_per_second() {
  int dev = 0, clock_khz = 0, bus_bits = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  return 2.0 * clock_khz * 1e3 * bus_bits / 8.0;
}

// Times `call` (one kernel pipeline, returning a cudaError_t) with CUDA events; counters GB/s and %peak.
template <class Call>
void run_timed(benchmark::State& state, double bytes_per_element, Call&& call) {
  if (numref_cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device: no kernel was run (see docs/performance.md, CUDA kernels)");
    return;
  }
  if (!buffers().ok || call() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    state.SkipWithError(numref_cuda::why().empty() ? "set-up or kernel failed" : numref_cuda::why().c_str());
    return;
  }
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  double seconds = 0;
  for (auto _ : state) {
    cudaEventRecord(t0);
    (void)call();
    cudaEventRecord(t1);
    cudaEventSynchronize(t1);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    state.SetIterationTime(ms / 1e3);
    seconds += ms / 1e3;
  }
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  const double per_call = seconds / static_cast<double>(state.iterations());
  const double rate = bytes_per_element * static_cast<double>(kN) / per_call;
  state.counters["GB/s"] = rate / 1e9;
  if (const double peak = peak_dram_bytes_per_second(); peak > 0) state.counters["%peak"] = 100.0 * rate / peak;
  state.counters["B/elem"] = bytes_per_element;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kN));
}

gw::Problem problem(bool key) {
  gw::Problem p = gw::make_problem(kRows, kCols);
  p.key = key;
  p.seed = 42, p.layer = 3, p.step = 1000;
  return p;
}

void forward(benchmark::State& state, bool key, bool packed) {
  const Buffers& b = buffers();
  const gw::Problem p = problem(key);
  // the status word is the caller's: no synchronization inside the timed call
  run_timed(state, (key ? 4.0 : 6.0) + (packed ? 0.5 : 0.0), [&] {
    return numref_cuda::try_gaussws_forward(p, FormatId::bf16, b.w, b.bt, key ? nullptr : b.u, b.w_hat, b.scale,
                                            packed ? b.packed : nullptr, nullptr, b.status);
  });
}

void backward(benchmark::State& state, bool key) {
  const Buffers& b = buffers();
  const gw::Problem p = problem(key);
  if (numref_cuda::device_count() != 0 && buffers().ok)  // the scales of a forward pass
    (void)numref_cuda::try_gaussws_forward(p, FormatId::bf16, b.w, b.bt, key ? nullptr : b.u, b.w_hat, b.scale, nullptr,
                                           nullptr, b.status);
  run_timed(state, key ? 2.0 : 4.0, [&] {
    return numref_cuda::try_gaussws_backward(p, b.scale, key ? nullptr : b.u, FormatId::bf16, b.g, b.grad, nullptr,
                                             b.status);
  });
}

BENCHMARK_CAPTURE(forward, key, true, false)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(forward, key_packR, true, true)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(forward, bits, false, false)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(backward, key, true)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(backward, bits, false)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
