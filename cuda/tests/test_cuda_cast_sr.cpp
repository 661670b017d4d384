// numref CUDA tests — stochastic rounding of cast.cuh against the reference: every 16-bit
// and 8-bit source code with every r of small k, both variants, both overflow policies;
// sampled r for large k; random f32 with random r.                  spec §A.4 (§5.1–§5.4)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "host_check.hpp"
#include "numref/convert.hpp"
#include "numref_arith/cast.cuh"

namespace {

using numref::FormatId;
using numref_cuda_test::Checker;

numref::Policy sr_policy(int k, numref::SrVariant v, numref::Overflow o) {
  numref::Policy p = numref::profile(numref::ProfileId::cuda_satfinite).narrow;  // NaN/Inf knobs of a real profile
  p.round = numref::Round::sr;
  p.sr_bits = k;
  p.sr_variant = v;
  p.overflow = o;
  return p;
}

constexpr numref::SrVariant kVariants[] = {numref::SrVariant::fraction, numref::SrVariant::add};
constexpr numref::Overflow kOverflows[] = {numref::Overflow::saturate, numref::Overflow::nonsat};

// §5.1 / §5.2 Every code of `from` with every r in [0, 2^k) for k = 1..kmax.
void every_r(FormatId from, FormatId to, int kmax) {
  for (auto v : kVariants)
    for (auto o : kOverflows)
      for (int k = 1; k <= kmax; ++k) {
        Checker c(from, to, sr_policy(k, v, o));
        for (std::uint32_t r = 0; r < (1u << k); ++r) c.check_all_codes(r);
        ASSERT_TRUE(c.result()) << "k=" << k;
      }
}

TEST(CudaCastSr, Bf16EveryCodeEveryRSmallK) {
  every_r(FormatId::bf16, FormatId::f8e4m3fn, 5);
  every_r(FormatId::bf16, FormatId::f8e5m2, 5);
  every_r(FormatId::bf16, FormatId::f4e2m1fn, 3);
}

TEST(CudaCastSr, F16EveryCodeEveryRSmallK) {
  every_r(FormatId::f16, FormatId::f8e4m3fn, 4);
  every_r(FormatId::f16, FormatId::f8e5m2, 4);
  every_r(FormatId::f16, FormatId::bf16, 4);  // f16 subnormals are exact in bf16 or round
}

// 8-bit sources: e4m3 -> e5m2 and FP6/FP4 targets round (d > 0), e5m2 -> e4m3 widens the
// fraction (d < 0: nothing is added under §5.2), every r up to k = 8.
TEST(CudaCastSr, NarrowSourcesEveryCodeEveryR) {
  for (FormatId from : {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f6e2m3fn})
    for (FormatId to : {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f4e2m1fn, FormatId::f6e3m2fn})
      every_r(from, to, 8);
}

// Large k (beyond the discarded bits d = m_src - m_dst for §5.2, up to 32): every code with
// the extreme values 0, 1, 2^k - 2, 2^k - 1 and 4 seeded random values.
TEST(CudaCastSr, EveryCodeSampledRLargeK) {
  std::mt19937_64 rng(20240611);
  for (FormatId from : {FormatId::bf16, FormatId::f16})
    for (FormatId to : {FormatId::f8e4m3fn, FormatId::f8e5m2})
      for (auto v : kVariants)
        for (auto o : kOverflows)
          for (int k : {6, 7, 8, 11, 16, 23, 24, 31, 32}) {
            Checker c(from, to, sr_policy(k, v, o));
            const std::uint64_t top = (std::uint64_t{1} << k) - 1u;
            for (std::uint32_t code = 0; code < 65536u; ++code) {
              for (std::uint64_t r : {std::uint64_t{0}, std::uint64_t{1}, top - 1u, top})
                c.check(code, static_cast<std::uint32_t>(r));
              for (int j = 0; j < 4; ++j) c.check(code, static_cast<std::uint32_t>(rng() & top));
            }
            ASSERT_TRUE(c.result()) << "k=" << k;
          }
}

// f32 sources: 400k random codes per (target, variant, overflow, k), with random r; the
// exponents are drawn around each target's range half of the time (so that subnormal
// results, ties at the k-bit resolution and overflow are frequent).
TEST(CudaCastSr, RandomF32RandomR) {
  std::mt19937_64 rng(7);
  for (FormatId to : {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::bf16, FormatId::f4e2m1fn})
    for (auto v : kVariants)
      for (auto o : kOverflows)
        for (int k : {1, 3, 8, 13, 20, 21, 23, 24, 32}) {
          Checker c(FormatId::f32, to, sr_policy(k, v, o));
          const std::uint64_t top = (std::uint64_t{1} << k) - 1u;
          for (int i = 0; i < 400000; ++i) {
            std::uint32_t x = static_cast<std::uint32_t>(rng());
            if (i & 1) {  // exponent field in [127 - 40, 127 + 20]
              const std::uint32_t ef = 87u + static_cast<std::uint32_t>(rng() % 61u);
              x = (x & 0x807FFFFFu) | (ef << 23);
            }
            c.check(x, static_cast<std::uint32_t>(rng() & top));
          }
          ASSERT_TRUE(c.result()) << "k=" << k;
        }
}

// §4.3 A random value is valid iff r < 2^k.
TEST(CudaCastSr, RandomValueValidity) {
  EXPECT_TRUE(numref_cuda::sr_value_valid(0u, 1));
  EXPECT_TRUE(numref_cuda::sr_value_valid(1u, 1));
  EXPECT_FALSE(numref_cuda::sr_value_valid(2u, 1));
  EXPECT_TRUE(numref_cuda::sr_value_valid(0xFFu, 8));
  EXPECT_FALSE(numref_cuda::sr_value_valid(0x100u, 8));
  EXPECT_TRUE(numref_cuda::sr_value_valid(0xFFFFFFFFu, 32));
}

// Hand-computed (§5.1): bf16 1 + 2^-5 = 0x3F84 into e4m3 (quantum 2^-3 at 1.0): the discarded
// fraction is f = 2^-5 / 2^-3 = 1/4. With k = 2, f_k = 1: r = 3 rounds up (1 + 3 >= 4) to
// 1.125 (0x39), r = 2 does not (0x38). Under §5.2 (d = 7 - 3 = 4 discarded bits, r aligned
// at r * 2^(4-2)): 0x3F84 + 3*4 = 0x3F90 -> truncates to 1.125 (39); + 2*4 = 0x3F8C -> 38.
TEST(CudaCastSr, HandComputed) {
  using BF = numref_cuda::FloatTraits<FormatId::bf16>;
  using E4 = numref_cuda::FloatTraits<FormatId::f8e4m3fn>;
  numref_cuda::CastPolicy p;
  p.mode = numref_cuda::Mode::sr;
  p.sr_bits = 2;
  p.saturate = true;
  EXPECT_EQ((numref_cuda::convert<BF, E4>(0x3F84u, p, 3u)), 0x39u);
  EXPECT_EQ((numref_cuda::convert<BF, E4>(0x3F84u, p, 2u)), 0x38u);
  p.sr_variant = numref_cuda::SrVariant::add;
  EXPECT_EQ((numref_cuda::convert<BF, E4>(0x3F84u, p, 3u)), 0x39u);
  EXPECT_EQ((numref_cuda::convert<BF, E4>(0x3F84u, p, 2u)), 0x38u);
  // Exact inputs never move (§5.1): 1.0 with the largest r.
  p.sr_variant = numref_cuda::SrVariant::fraction;
  EXPECT_EQ((numref_cuda::convert<BF, E4>(0x3F80u, p, 3u)), 0x38u);
}

}  // namespace
