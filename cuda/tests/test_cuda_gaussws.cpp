// numref CUDA tests — the GaussWS kernels' arithmetic (gaussws.cuh) and the host grid walk of the
// GaussWS kernels (host_run.cpp), against the reference numref::gaussws.      spec §30, §A.13
// Expected values come from the reference (reference/src/gaussws.cpp: BigUInt interval bounds,
// Ziv loops) and, for the kernels' constants, from independent integer computations here
// (iterated integer square roots, the series of ln 2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "numref/bignum.hpp"
#include "numref/gaussws.hpp"
#include "numref/splitmix64.hpp"
#include "numref_arith/gaussws.cuh"
#include "numref_arith/gaussws_plan.hpp"
#include "numref_cuda/host_run.hpp"

namespace {

using numref::BigUInt;
using numref::FormatId;
namespace gw = numref_cuda::gaussws;
namespace ref = numref::gaussws;
namespace host = numref_cuda::host;

// §30.2 every 16-bit word.
TEST(CudaGaussws, NoiseEveryWord) {
  for (std::uint32_t u = 0; u < 65536; ++u) ASSERT_EQ(gw::noise(u), ref::noise_from_bits(u)) << "u = " << u;
}

// §30.3 the generator, lane by lane, against the reference's element-by-element definition.
TEST(CudaGaussws, GeneratorWords) {
  numref::SplitMix64 rng(11);
  for (int k = 0; k < 40; ++k) {
    const ref::NoiseKey key{rng.next(), rng.next() % 64, k % 3 == 0 ? rng.next() : rng.next() % 100000};
    const auto I = static_cast<std::uint32_t>(rng.next() % 5), J = static_cast<std::uint32_t>(rng.next() % 1000);
    const std::uint64_t bk = gw::block_key(key.seed, key.layer, key.step, I, J);
    ASSERT_EQ(bk, ref::block_key(key, I, J));
    for (std::uint32_t lane = 0; lane < 256; ++lane) {
      const std::uint64_t z = gw::lane_word(bk, lane);
      for (std::uint32_t t = 0; t < 4; ++t)
        ASSERT_EQ((z >> (16 * t)) & 0xFFFFu, ref::noise_word(bk, 4 * lane + t)) << "lane " << lane << " t " << t;
    }
  }
}

// The kernels' table: floor(2^(2^-i) · 2^127) from 400-bit lower and upper bounds of iterated square roots.
TEST(CudaGaussws, Exp2TableRecomputed) {
  const int W = 400;
  BigUInt lo = BigUInt(2) << W, hi = lo;
  for (int i = 1; i <= 96; ++i) {
    lo = (lo << W).isqrt();
    BigUInt h = (hi << W).isqrt();
    if (!((h * h) == (hi << W))) h += BigUInt(1);
    hi = h;
    const BigUInt a = lo >> (W - 127), b = hi >> (W - 127);
    ASSERT_TRUE(a == b) << "bounds do not fix entry " << i;
    const gw::U128 e = gw::exp2_entry(i);
    EXPECT_EQ(e.lo, a.low64()) << i;
    EXPECT_EQ(e.hi, (a >> 64).low64()) << i;
  }
}

// floor(ln 2 · 2^256) from ln 2 = Σ 1 / (k 2^k): 400 terms, each floored (at most one unit low),
// tail below one unit.
TEST(CudaGaussws, Ln2Recomputed) {
  const int P = 400;
  BigUInt s;
  for (int k = 1; k <= P; ++k) {
    BigUInt q, r;
    BigUInt::divmod(BigUInt(1) << (P - k), BigUInt(static_cast<std::uint64_t>(k)), q, r);
    s += q;
  }
  const BigUInt a = s >> (P - 256), b = (s + BigUInt(static_cast<std::uint64_t>(P) + 1)) >> (P - 256);
  ASSERT_TRUE(a == b);
  EXPECT_EQ(gw::kLn2W0, a.low64());
  EXPECT_EQ(gw::kLn2W1, (a >> 64).low64());
  EXPECT_EQ(gw::kLn2W2, (a >> 128).low64());
  EXPECT_EQ(gw::kLn2W3, (a >> 192).low64());
}

std::uint32_t f32_code(float f) {
  std::uint32_t c;
  std::memcpy(&c, &f, 4);
  return c;
}

void expect_exp2(std::uint32_t bt) {
  const gw::Rounded e = gw::exp2_one_minus(bt);
  ASSERT_TRUE(e.decided) << std::hex << "b_t " << bt;
  ASSERT_EQ(e.code, ref::exp2_one_minus(bt)) << std::hex << "b_t " << bt;
}

// §30.4 e against the reference: integers, dyadic fractions, the range ends, tiny values, random codes.
TEST(CudaGaussws, Exp2MatchesReference) {
  for (int v = -140; v <= 160; ++v) expect_exp2(f32_code(static_cast<float>(v)));
  for (int d = 1; d <= 10; ++d)
    for (int k = -(131 << d); k <= (153 << d); k += 1 + (k & 7) * 37)
      expect_exp2(f32_code(std::ldexp(static_cast<float>(k), -d)));
  for (std::uint32_t c : {0x42FE0000u, 0x42FDFFFFu, 0xC2FE0000u, 0xC2FDFFFFu, 0x43170000u, 0x4316FFFFu, 0x43160000u,
                          0x43168000u, 0x43167FFFu, 0x43150000u, 0xC2FC0000u, 0x80000000u, 0x00000001u, 0x80000001u,
                          0x1F800000u, 0x9F800000u, 0x1F7FFFFFu, 0x9F7FFFFFu, 0x20000000u, 0xA0000000u, 0x33000000u,
                          0x32FFFFFFu, 0xB3000000u, 0x3F800001u, 0x3F7FFFFFu})
    expect_exp2(c);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 60000; ++i) {
    // |b_t| in [2^-70, 2^8): every exponent the computation distinguishes
    const std::uint32_t e = 127 - 70 + static_cast<std::uint32_t>(rng() % 78);
    const std::uint32_t c = (static_cast<std::uint32_t>(rng() & 1u) << 31) | (e << 23) | (rng() & 0x7FFFFFu);
    expect_exp2(c);
  }
}

// §30.5 forward_element on hand-computed cases (the random cases below rarely reach a bf16 tie
// whose sticky bits lie more than 25 bits down, or a zero sum).
TEST(CudaGaussws, ForwardElementHandCases) {
  using F = numref_cuda::FloatTraits<FormatId::f32>;
  const auto sp = gw::bf16_codes();
  const std::uint32_t one_p8 = 0x3F808000u;  // 1 + 2^-8: halfway between the bf16 values 1 and 1 + 2^-7
  const std::uint32_t s40 = 0x2B800000u;     // 2^-40
  // 1 + 2^-8 + 2^-40 is above the tie: 1 + 2^-7 (3F81); sum=f32 first rounds to 1 + 2^-8, then the tie goes to even (3F80)
  EXPECT_EQ((gw::forward_element<F, false>(one_p8, 1, s40, sp)), 0x3F81u);
  EXPECT_EQ((gw::forward_element<F, true>(one_p8, 1, s40, sp)), 0x3F80u);
  EXPECT_EQ((gw::forward_element<F, false>(one_p8, -1, s40, sp)), 0x3F80u);               // below the tie
  EXPECT_EQ((gw::forward_element<F, false>(0x3F800000u, -1, 0x3F800000u, sp)), 0x0000u);  // 1 - 1: +0
  EXPECT_EQ((gw::forward_element<F, false>(0xBF800000u, 1, 0x3F800000u, sp)), 0x0000u);   // -1 + 1: +0
  EXPECT_EQ((gw::forward_element<F, false>(0x80000000u, 0, 0x3F800000u, sp)), 0x8000u);   // R = 0 keeps -0
  EXPECT_EQ((gw::forward_element<F, false>(0x3F800000u, -2, 0x7F800000u, sp)), 0xFF80u);  // s = +Inf: -Inf
  EXPECT_EQ((gw::forward_element<F, false>(0x7F7FFFFFu, 1, 0x73800000u, sp)), 0x7F80u);   // max + 2^104: +Inf
  EXPECT_EQ((gw::forward_element<F, false>(0x00000000u, -1, 0x00000200u, sp)),
            0x8000u);  // -2^-140 (s subnormal) rounds to -0
  EXPECT_EQ((gw::forward_element<F, false>(0x00000000u, 2, 0x3E800000u, sp)), 0x3F00u);  // 0 + 2 * 0.25 = 0.5
}

// ---- the host grid walk of the kernels against numref::gaussws::forward / grad_bt ---------------------

struct Case {
  std::size_t m, n;
  FormatId wf, gf;
  bool key, sum_f32;
};

std::uint32_t rnd_f32(std::mt19937_64& rng, int lo, int hi) {  // sign, exponent in [lo, hi], 23 random bits
  const int e = lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  std::uint32_t field = static_cast<std::uint32_t>(e + 127), mant = static_cast<std::uint32_t>(rng()) & 0x7FFFFFu;
  if (e < -126) field = 0, mant = (mant | 0x800000u) >> (-126 - e < 24 ? -126 - e : 24);
  return (static_cast<std::uint32_t>(rng() & 1u) << 31) | (field << 23) | mant;
}

void run_case(const Case& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const ref::Shape sh{c.m, c.n};
  const std::size_t n = sh.size(), nb = sh.blocks();
  const bool wb = c.wf == FormatId::bf16, gb = c.gf == FormatId::bf16;
  std::vector<std::uint32_t> w(n), g(n), bt(nb);
  std::vector<std::uint16_t> u(n);
  for (std::size_t b = 0; b < nb; ++b) {
    const std::uint64_t k = rng() % 8;
    bt[b] = k < 4   ? f32_code(static_cast<float>(1 + rng() % 12))
            : k < 7 ? f32_code(1.0f + std::ldexp(static_cast<float>(rng() % (11u << 20)), -20))
                    : std::vector<std::uint32_t>{0x3F000000u, 0u,          0xC0400000u, 0x42200000u,
                                                 0x43020000u, 0xC2FC0000u, 0xC3020000u}[rng() % 7];
  }
  const std::size_t bc = sh.block_cols();
  std::vector<int> kind(nb);
  for (auto& k : kind) k = static_cast<int>(rng() % 10);
  for (std::size_t i = 0; i < c.m; ++i) {
    for (std::size_t j = 0; j < c.n; ++j) {
      const std::size_t k = i * c.n + j, b = (i / 32) * bc + j / 32;
      std::uint32_t wv = kind[b] == 0   ? 0u
                         : kind[b] == 1 ? rnd_f32(rng, -149, -120)
                         : kind[b] == 2 ? rnd_f32(rng, 125, 127)
                                        : rnd_f32(rng, -12, 8);
      if (kind[b] == 3 && rng() % 200 == 0) wv = (rng() & 1u) ? 0x7FC00000u : 0xFF800000u;  // poisoned block
      std::uint32_t gv = kind[b] == 4 ? ((rng() & 1u) ? 0x3F800000u : 0xBF800000u) : rnd_f32(rng, -30, 10);
      if (kind[b] == 5 && rng() % 300 == 0) gv = 0x7F800000u;
      w[k] = wb ? wv >> 16 : wv;
      g[k] = gb ? gv >> 16 : gv;
      const std::uint16_t word = static_cast<std::uint16_t>(rng());
      u[k] = (kind[b] == 6 && rng() % 4 == 0) ? static_cast<std::uint16_t>(word | 0x3FC) : word;  // |R| = 2 often
    }
  }
  const ref::NoiseKey key{rng(), rng() % 64, rng() % 100000};
  const std::vector<std::int8_t> r = c.key ? ref::noise(sh, key) : ref::noise_from_words(u);
  ref::ForwardSpec fs;
  fs.w_format = c.wf;
  fs.sum = c.sum_f32 ? ref::Sum::f32 : ref::Sum::exact;
  const ref::Forward want = ref::forward(fs, sh, w, bt, r);
  const std::vector<std::uint32_t> want_grad = ref::grad_bt(c.wf, sh, w, bt, r, c.gf, g);
  const std::vector<std::uint32_t> want_r = ref::pack(r);

  gw::Problem p = gw::make_problem(c.m, c.n);
  p.key = c.key;
  p.seed = key.seed, p.layer = key.layer, p.step = key.step;
  p.sum_f32 = c.sum_f32;
  // the codes as the kernels read them (2 or 4 bytes each)
  std::vector<std::uint16_t> w16(w.begin(), w.end()), g16(g.begin(), g.end());
  const void* wp = wb ? static_cast<const void*>(w16.data()) : w.data();
  const void* gp = gb ? static_cast<const void*>(g16.data()) : g.data();
  for (const host::Walk walk :
       {host::Walk{256, host::Walk::Order::forward, 1}, host::Walk{7, host::Walk::Order::reverse, 1},
        host::Walk{3, host::Walk::Order::shuffled, 9}}) {
    const host::GausswsOut o = host::gaussws(p, c.wf, wp, bt.data(), c.key ? nullptr : u.data(), c.gf, gp, walk);
    ASSERT_EQ(o.scale, want.scale);
    ASSERT_EQ(o.grad, want_grad);
    ASSERT_EQ(o.r_packed, want_r);
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(o.w_hat[k], want.w_hat[k]) << "element " << k;
  }
}

TEST(CudaGaussws, HostRunMatchesReference) {
  const std::pair<std::size_t, std::size_t> shapes[] = {{1, 1},   {1, 37},  {33, 1},  {32, 32},
                                                        {45, 70}, {96, 80}, {64, 100}};
  std::uint64_t seed = 1;
  for (const auto& [m, n] : shapes)
    for (FormatId wf : {FormatId::f32, FormatId::bf16})
      for (FormatId gf : {FormatId::f32, FormatId::bf16})
        for (bool key : {false, true})
          for (bool sum : {false, true}) {
            SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + (wf == FormatId::bf16 ? " w=bf16" : " w=f32") +
                         (gf == FormatId::bf16 ? " g=bf16" : " g=f32") + (key ? " key" : " bits") +
                         (sum ? " sum=f32" : ""));
            run_case({m, n, wf, gf, key, sum}, seed++);
          }
}

// §30.1 a non-finite b_t is refused, naming the block.
TEST(CudaGaussws, NonFiniteBtNamesTheBlock) {
  const gw::Problem p = gw::make_problem(33, 2);  // two blocks
  const std::vector<std::uint32_t> w(66, 0x3F800000u), g(66, 0u), bt{0x40800000u, 0x7F800000u};
  const std::vector<std::uint16_t> u(66, 0);
  try {
    (void)host::gaussws(p, FormatId::f32, w.data(), bt.data(), u.data(), FormatId::f32, g.data());
    FAIL() << "accepted b_t = +Inf";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("block 1"), std::string::npos) << e.what();
  }
}

}  // namespace
