// numref CUDA tests — the tensor cores' FP8 mma.sync against the instruction profiles.   spec §39
//
// numref_cuda::try_mma_sync_f8 runs the hardware instruction (mma.sync m16n8k32, chained over K);
// this program holds its D, bit for bit, against numref::mma under the profile that names the
// device's architecture: sm89_mma_f8 on compute capability 8.9, sm120_mma_f8 on 12.x. Inputs:
// random codes of every class (normal, subnormal, zero, Inf, NaN) for the four A / B type pairs,
// exponents spread beyond the 13-bit alignment window, exact cancellation, and a C chained through
// many K steps. A device with mma.sync FP8 but no profile for it (9.0, 10.x) runs the same inputs
// and prints how many D elements each FP8 profile reproduces, then exits 77 (SKIPPED): evidence
// for a profile, not a pass. Label `cuda-device`: without a device, SKIPPED (77).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "numref/mma.hpp"
#include "numref_cuda/api.hpp"

namespace {

using numref::FormatId;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw numref_cuda::CudaError(e, std::string(what) + ": " + cudaGetErrorString(e) + " " + numref_cuda::why());
}

template <class T>
struct Dev {
  T* p = nullptr;
  explicit Dev(const std::vector<T>& h) {
    void* v = nullptr;
    check_cuda(cudaMalloc(&v, h.size() * sizeof(T)), "cudaMalloc");
    p = static_cast<T*>(v);
    check_cuda(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<T> get(std::size_t n) const {
    std::vector<T> h(n);
    check_cuda(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
  }
};

int compute_capability() {
  int dev = 0, major = 0, minor = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "attribute");
  check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "attribute");
  return major * 10 + minor;
}

// The profile that names mma.sync FP8 on this architecture (§39.2), or "" when none does.
std::string profile_of(int cc) {
  if (cc == 89) return "sm89_mma_f8";
  if (cc / 10 == 12) return "sm120_mma_f8";
  return "";
}

numref::MmaType mma_type_of(FormatId f) {
  return f == FormatId::f8e4m3fn ? numref::MmaType::f8e4m3fn : numref::MmaType::f8e5m2;
}

struct Case {
  std::string name;
  std::size_t m, n, k;
  FormatId fa, fb;
  std::vector<std::uint32_t> a, b, c;  // codes, one per word (A, B: one byte each on the device)
};

// Codes of every class: mostly finite with the exponent field in [lo, hi], some zeros,
// subnormals, and (when `specials`) Inf / NaN.
std::uint32_t random_code(std::mt19937_64& g, FormatId f, bool specials) {
  const bool e4m3 = f == FormatId::f8e4m3fn;
  const std::uint32_t r = static_cast<std::uint32_t>(g());
  const std::uint32_t sign = (r >> 31) << 7, kind = r % 64;
  if (kind == 0) return sign;                       // ±0
  if (kind == 1) return sign | ((r >> 8) % 7 + 1);  // e4m3: a subnormal; e5m2: 1..3 subnormal, 4..7 normal
  if (specials && kind == 2) return e4m3 ? (sign | 0x7F) : (sign | 0x7C);      // NaN / Inf
  if (specials && kind == 3 && !e4m3) return sign | 0x7D;                      // e5m2 NaN
  const std::uint32_t mag = e4m3 ? (r >> 8) % 0x7E + 1 : (r >> 8) % 0x7B + 1;  // finite, non-zero
  return sign | mag;
}

Case random_case(const std::string& name, FormatId fa, FormatId fb, std::size_t m, std::size_t n, std::size_t k,
                 std::uint64_t seed, bool specials) {
  std::mt19937_64 g(seed);
  Case c{name, m, n, k, fa, fb, {}, {}, {}};
  for (std::size_t i = 0; i < m * k; ++i) c.a.push_back(random_code(g, fa, specials));
  for (std::size_t i = 0; i < k * n; ++i) c.b.push_back(random_code(g, fb, specials));
  for (std::size_t i = 0; i < m * n; ++i) {
    const std::uint32_t r = static_cast<std::uint32_t>(g());
    // C: zeros of both signs, small and large binary32 values
    c.c.push_back(r % 4 == 0 ? (r & 0x80000000u) : ((r & 0x80000000u) | (0x30000000u + (r >> 4) % 0x18000000u)));
  }
  return c;
}

// Exact cancellation: row i of A and column j of B hold x and y, then x and -y (K = 64).
Case cancellation_case() {
  Case c{"cancellation", 16, 8, 64, FormatId::f8e4m3fn, FormatId::f8e4m3fn, {}, {}, {}};
  std::mt19937_64 g(7);
  c.a.resize(16 * 64);
  c.b.resize(64 * 8);
  for (std::size_t i = 0; i < 16; ++i)
    for (std::size_t q = 0; q < 32; ++q) {
      const std::uint32_t x = static_cast<std::uint32_t>(g() % 0x7E) + 1;
      c.a[i * 64 + 2 * q] = x;
      c.a[i * 64 + 2 * q + 1] = x;
    }
  for (std::size_t q = 0; q < 32; ++q)
    for (std::size_t j = 0; j < 8; ++j) {
      const std::uint32_t y = static_cast<std::uint32_t>(g() % 0x7E) + 1;
      c.b[(2 * q) * 8 + j] = y;
      c.b[(2 * q + 1) * 8 + j] = y | 0x80u;
    }
  c.c.assign(16 * 8, 0x80000000u);  // -0: the sign of an exact zero sum is the profile's (zero=plus: +0)
  return c;
}

std::vector<std::uint32_t> run_device(const Case& c) {
  std::vector<std::uint8_t> a8(c.a.begin(), c.a.end()), b8(c.b.begin(), c.b.end());
  Dev<std::uint8_t> A(a8), B(b8);
  Dev<std::uint32_t> C(c.c), D(std::vector<std::uint32_t>(c.m * c.n, 0xDEADBEEFu));
  check_cuda(numref_cuda::try_mma_sync_f8(c.fa, c.fb, c.m, c.n, c.k, A.p, B.p, C.p, D.p), "try_mma_sync_f8");
  return D.get(c.m * c.n);
}

std::vector<std::uint32_t> run_profile(const Case& c, const std::string& profile) {
  numref::MmaSpec s;
  s.profile = numref::find_mma_profile(profile);
  if (!s.profile) throw std::runtime_error("no profile " + profile);
  s.a = mma_type_of(c.fa);
  s.b = mma_type_of(c.fb);
  s.c = numref::MmaType::f32;
  std::vector<std::uint32_t> d(c.m * c.n);
  numref::mma(s, c.m, c.n, c.k, c.a, c.b, c.c, d);
  return d;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  const FormatId f[2] = {FormatId::f8e4m3fn, FormatId::f8e5m2};
  std::uint64_t seed = 1;
  for (FormatId fa : f)
    for (FormatId fb : f) {
      const std::string tag = std::string(numref::format(fa).name) + "x" + std::string(numref::format(fb).name);
      v.push_back(random_case("random " + tag, fa, fb, 64, 64, 256, seed++, false));
      v.push_back(random_case("random+specials " + tag, fa, fb, 32, 16, 96, seed++, true));
    }
  v.push_back(random_case("long K (C chained through 128 instructions)", FormatId::f8e4m3fn, FormatId::f8e4m3fn, 16, 8,
                          4096, 99, false));
  v.push_back(cancellation_case());
  return v;
}

TEST(DeviceMmaSync, EqualsTheProfileOfTheArchitecture) {
  const int cc = compute_capability();
  const std::string profile = profile_of(cc);
  ASSERT_FALSE(profile.empty());
  for (const Case& c : cases()) {
    const std::vector<std::uint32_t> got = run_device(c), want = run_profile(c, profile);
    std::size_t bad = 0;
    for (std::size_t e = 0; e < got.size(); ++e)
      if (got[e] != want[e] && bad++ < 5)
        ADD_FAILURE() << c.name << " under " << profile << ": D[" << e / c.n << "][" << e % c.n << "] device "
                      << std::hex << got[e] << ", profile " << want[e] << std::dec;
    EXPECT_EQ(bad, 0u) << c.name << ": " << bad << " of " << got.size() << " elements differ from " << profile;
  }
}

TEST(DeviceMmaSync, RefusesWhatTheInstructionDoesNotTake) {
  Dev<std::uint8_t> A(std::vector<std::uint8_t>(16 * 32)), B(std::vector<std::uint8_t>(32 * 8));
  Dev<std::uint32_t> C(std::vector<std::uint32_t>(16 * 8)), D(std::vector<std::uint32_t>(16 * 8));
  EXPECT_EQ(numref_cuda::try_mma_sync_f8(FormatId::f6e3m2fn, FormatId::f8e4m3fn, 16, 8, 32, A.p, B.p, C.p, D.p),
            cudaErrorInvalidValue);
  EXPECT_NE(numref_cuda::why().find("f6e3m2fn"), std::string::npos) << numref_cuda::why();
  EXPECT_EQ(numref_cuda::try_mma_sync_f8(FormatId::f8e4m3fn, FormatId::f8e4m3fn, 16, 8, 48, A.p, B.p, C.p, D.p),
            cudaErrorInvalidValue);
  EXPECT_NE(numref_cuda::why().find("k of 32"), std::string::npos) << numref_cuda::why();
}

// A device with mma.sync FP8 and no profile for it: which profile's bits does it give?
int survey(int cc) {
  const char* candidates[] = {"sm89_mma_f8", "sm90_wgmma_f8", "sm120_mma_f8", "sm100_tcgen05_f8f6f4", "ideal"};
  std::printf("compute capability %d.%d: no profile names mma.sync FP8 here; D elements each profile reproduces:\n",
              cc / 10, cc % 10);
  for (const char* p : candidates) {
    std::size_t same = 0, total = 0;
    for (const Case& c : cases()) {
      const std::vector<std::uint32_t> got = run_device(c), want = run_profile(c, p);
      for (std::size_t e = 0; e < got.size(); ++e) same += got[e] == want[e];
      total += got.size();
    }
    std::printf("  %-22s %zu of %zu\n", p, same, total);
  }
  std::printf("SKIPPED: evidence for a profile of mma.sync FP8 on this architecture, not a pass\n");
  return 77;
}

}  // namespace

int main(int argc, char** argv) {
  if (numref_cuda::device_count() == 0) {
    std::printf("SKIPPED: no CUDA device (or no driver); mma.sync FP8 was not run\n");
    return 77;
  }
  const int cc = compute_capability();
  if (cc < 89) {
    std::printf("SKIPPED: compute capability %d.%d has no FP8 mma.sync (8.9 or later)\n", cc / 10, cc % 10);
    return 77;
  }
  if (profile_of(cc).empty()) return survey(cc);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
