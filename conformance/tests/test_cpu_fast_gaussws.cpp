// cpu-fast's GaussWS (conformance/backends/cpu_fast/fast_gaussws.cpp: the CUDA kernels'
// __host__ __device__ arithmetic on the CPU) against the reference numref::gaussws, through the
// plugin's C ABI entry as the runner calls it.                                 spec §30, §32.8
// Cases: the runner's own generator (§34.10: b_t integers 1..12, fractions, extremes where s
// underflows or overflows; zero, subnormal, near-overflow and poisoned blocks; g with NaN / ±Inf
// and cancelling ±1; noise from given words, with |R| = 2 forced, and from the generator) over
// ragged shapes, every w / g format, both noise sources and both sums: more than 10 million
// elements. Expected values: GausswsParams::expected (the reference). The golden vectors run in
// conform_cpu_fast_level1 (`numref conform --backend cpu-fast --level 1`).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "numref/backend.h"
#include "ops/gaussws/gaussws.hpp"

using namespace numref::conform;

namespace {

const numref_backend* cpu_fast() {
  static const numref_backend* b = [] {
    const std::string path = std::string(NUMREF_BACKEND_DIR) + "/libnumref_backend_cpu_fast.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return static_cast<const numref_backend*>(nullptr);
    auto open = reinterpret_cast<numref_backend_open_fn>(dlsym(h, "numref_backend_open"));
    char err[512] = {0};
    return open ? open("", err, sizeof err) : nullptr;
  }();
  return b;
}

// The words of each output column that differ, reported by column.
void expect_same(const gaussws::GausswsParams& p, const std::vector<std::uint32_t>& got,
                 const std::vector<std::uint32_t>& want, std::uint64_t index) {
  const gaussws::GausswsLayout& L = p.layout();
  struct Col {
    const char* name;
    int at;
    std::size_t n;
  } cols[] = {{"r", L.r, L.nr}, {"scale", L.scale, L.nb}, {"y", L.y, L.n}, {"grad", L.grad, L.nb}};
  for (const Col& c : cols)
    for (std::size_t k = 0; k < c.n; ++k) {
      const std::size_t at = static_cast<std::size_t>(c.at) + k;
      ASSERT_EQ(got[at], want[at]) << p.text() << " case " << index << " " << c.name << "[" << k << "]";
    }
}

TEST(CpuFastGaussws, MatchesReferenceOnTenMillionGeneratedElements) {
  const numref_backend* b = cpu_fast();
  ASSERT_NE(b, nullptr) << "cannot open cpu-fast in " << NUMREF_BACKEND_DIR;
  const char* shapes[] = {"96x80", "45x70", "33x129", "1x1000", "200x33", "64x64", "7x3", "128x96"};
  std::size_t elements = 0;
  int suite = 0;
  for (const char* w : {"f32", "bf16"})
    for (const char* g : {"f32", "bf16"})
      for (const char* noise : {"bits", "key"})
        for (const char* sum : {"exact", "f32"}) {
          std::size_t in_suite = 0;
          for (std::uint64_t index = 0; in_suite < 660000; ++index) {
            const std::string text = std::string("w=") + w + " g=" + g + " shape=" + shapes[index % std::size(shapes)] +
                                     " noise=" + noise + " sum=" + sum;
            const auto p = gaussws::parse(text);
            ASSERT_TRUE(p->plugin_supported(*b)) << text;
            const gaussws::GausswsLayout& L = p->layout();
            std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in)), want(static_cast<std::size_t>(L.out)),
                got(static_cast<std::size_t>(L.out), 0xDEADBEEFu);
            gaussws::generate_case(*p, 1000u + static_cast<std::uint64_t>(suite), index, in.data());
            p->expected(1, in.data(), want.data());
            std::string error;
            ASSERT_TRUE(p->plugin_call(*b, 1, in.data(), got.data(), false, error)) << text << ": " << error;
            expect_same(*p, got, want, index);
            if (::testing::Test::HasFatalFailure()) return;
            in_suite += L.n;
          }
          elements += in_suite;
          ++suite;
        }
  EXPECT_GE(elements, 10'000'000u);
  std::printf("%zu elements in %d suites\n", elements, suite);
}

// §30.1 A NaN or ±Inf b_t: the call fails, naming the block.
TEST(CpuFastGaussws, NonFiniteBtIsAnErrorNamingTheBlock) {
  const numref_backend* b = cpu_fast();
  ASSERT_NE(b, nullptr);
  const auto p = gaussws::parse("w=f32 shape=40x40");  // 2 x 2 blocks
  const gaussws::GausswsLayout& L = p->layout();
  std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in), 0u), out(static_cast<std::size_t>(L.out));
  for (std::size_t k = 0; k < 4; ++k) in[static_cast<std::size_t>(L.bt) + k] = 0x40800000u;  // 4.0
  in[static_cast<std::size_t>(L.bt) + 2] = 0x7FC00000u;
  std::string error;
  EXPECT_FALSE(p->plugin_call(*b, 1, in.data(), out.data(), false, error));
  EXPECT_NE(error.find("block 2"), std::string::npos) << error;
}

}  // namespace
