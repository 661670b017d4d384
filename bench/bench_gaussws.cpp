// numref benchmark — GaussWS (spec §30) on the CPU: the reference and cpu-fast.   docs/performance.md
//
// A 1024 x 1024 bf16 weight matrix (1024 tiles of 32 x 32), b_t per tile from {4, 4.5, 6, 5.25}
// (integer and fractional: the exp2 of §30.4 runs its bounds for the fractional ones), R from the
// §30.3 generator, dL/dw_hat in bf16. Rows:
//   Reference_Forward         numref::gaussws::noise + forward (w_hat, s)
//   Reference_ForwardBackward the same plus grad_bt (the exact Σ g R and the ln 2 product)
//   CpuFast_ForwardBackward   cpu-fast's gaussws (the CUDA kernels' arithmetic, one tile at a time):
//                             packed R, s, w_hat and dL/db_t in one call
// Inputs: splitmix64 with fixed seeds (bench_support.hpp). Items/s = elements/s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench_support.hpp"
#include "fast_gaussws.hpp"
#include "numref/gaussws.hpp"

namespace {

namespace gw = numref::gaussws;
constexpr std::size_t kRows = 1024, kCols = 1024;

struct Data {
  std::vector<std::uint16_t> w16, g16;
  std::vector<std::uint32_t> w, g, bt;
};
const Data& data() {
  static const Data d = [] {
    Data x;
    x.w16 = numref::bench::random_bf16(kRows * kCols, 7);
    x.g16 = numref::bench::random_bf16(kRows * kCols, 8);
    x.w.assign(x.w16.begin(), x.w16.end());
    x.g.assign(x.g16.begin(), x.g16.end());
    const std::uint32_t bts[] = {0x40800000u /* 4 */, 0x40900000u /* 4.5 */, 0x40C00000u /* 6 */,
                                 0x40A80000u /* 5.25 */};
    for (std::size_t b = 0; b < (kRows / 32) * (kCols / 32); ++b) x.bt.push_back(bts[b % 4]);
    return x;
  }();
  return d;
}
const gw::NoiseKey kKey{42, 3, 1000};

// The reference: noise and forward, and with `backward` also grad_bt.
void reference(benchmark::State& state, bool backward) {
  const Data& d = data();
  gw::ForwardSpec fs;
  fs.w_format = numref::FormatId::bf16;
  for (auto _ : state) {
    const std::vector<std::int8_t> r = gw::noise({kRows, kCols}, kKey);
    const gw::Forward f = gw::forward(fs, {kRows, kCols}, d.w, d.bt, r);
    benchmark::DoNotOptimize(f.w_hat.data());
    if (backward) {
      const std::vector<std::uint32_t> g =
          gw::grad_bt(numref::FormatId::bf16, {kRows, kCols}, d.w, d.bt, r, numref::FormatId::bf16, d.g);
      benchmark::DoNotOptimize(g.data());
    }
  }
  numref::bench::set_items(state, kRows * kCols);
}
void BM_Gaussws_Reference_Forward(benchmark::State& state) { reference(state, false); }
void BM_Gaussws_Reference_ForwardBackward(benchmark::State& state) { reference(state, true); }

void BM_Gaussws_CpuFast_ForwardBackward(benchmark::State& state) {
  const Data& d = data();
  numref::cpu_fast::GausswsOp op;
  op.rows = kRows;
  op.cols = kCols;
  op.w = op.g = numref::FormatId::bf16;
  op.key = true;
  op.seed = kKey.seed, op.layer = kKey.layer, op.step = kKey.step;
  const std::size_t n = kRows * kCols, nb = d.bt.size();
  std::vector<std::uint32_t> packed((n + 7) / 8), scale(nb), w_hat(n), grad(nb);
  for (auto _ : state) {
    numref::cpu_fast::gaussws(op, d.w16.data(), d.bt.data(), nullptr, d.g16.data(), packed.data(), scale.data(),
                              w_hat.data(), grad.data());
    benchmark::DoNotOptimize(w_hat.data());
    benchmark::DoNotOptimize(grad.data());
  }
  numref::bench::set_items(state, n);
}

BENCHMARK(BM_Gaussws_Reference_Forward)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gaussws_Reference_ForwardBackward)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gaussws_CpuFast_ForwardBackward)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
