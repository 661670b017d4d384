// numref CUDA tests — the per-element casts of cast.cuh against the reference, exhaustively
// on every 8- and 16-bit source code.                                  spec §A.4 (§3–§8, §11)
#include <gtest/gtest.h>

#include <cstdint>

#include "host_check.hpp"
#include "numref/convert.hpp"
#include "numref/format.hpp"
#include "numref_arith/cast.cuh"
#include "numref_arith/format_traits.cuh"

namespace {

using numref::FormatId;
using numref_cuda::CastPolicy;
using numref_cuda::FloatTraits;
using numref_cuda_test::Checker;

// §A.4 Every bf16 / f16 code into every target of the table, under every deterministic
// policy (5 modes x overflow x inf_sat x NaN handling).
void sweep_source(FormatId from) {
  for (FormatId to : numref_cuda_test::kElementFormats) {
    for (const numref::Policy& p : numref_cuda_test::deterministic_policies(numref::format(to))) {
      Checker c(from, to, p);
      c.check_all_codes();
      ASSERT_TRUE(c.result());
    }
  }
}

TEST(CudaCastExhaustive, Bf16SourceEveryTargetEveryDeterministicPolicy) { sweep_source(FormatId::bf16); }
TEST(CudaCastExhaustive, F16SourceEveryTargetEveryDeterministicPolicy) { sweep_source(FormatId::f16); }

// §A.4 Every 8-, 6- and 4-bit code (f8 decode to f32/bf16 included) under every policy.
TEST(CudaCastExhaustive, NarrowSourcesEveryTargetEveryDeterministicPolicy) {
  int n = 0;
  for (FormatId from : numref_cuda_test::kElementFormats) {
    if (numref::format(from).bits > 8) continue;
    sweep_source(from);
    ++n;
  }
  EXPECT_GE(n, 5);  // f8e4m3fn, f8e5m2, f6e3m2fn, f6e2m3fn, f4e2m1fn at least
}

// §10 The four profiles exactly as the kernels are called with them (the policy a backend
// claims), every 16-bit and 8-bit source.
TEST(CudaCastExhaustive, NamedProfiles) {
  for (FormatId from : {FormatId::bf16, FormatId::f16, FormatId::f8e4m3fn, FormatId::f8e5m2})
    for (FormatId to : numref_cuda_test::kElementFormats)
      for (const auto& [name, p] : numref_cuda_test::profile_policies(numref::format(from), numref::format(to))) {
        SCOPED_TRACE(name);
        Checker c(from, to, p);
        c.check_all_codes();
        ASSERT_TRUE(c.result());
      }
}

// Hand-computed values (independent of the reference), cuda_satfinite / cuda_nosat narrow.
TEST(CudaCastExhaustive, HandComputedF32ToF8) {
  using F32 = FloatTraits<FormatId::f32>;
  using E4 = FloatTraits<FormatId::f8e4m3fn>;
  using E5 = FloatTraits<FormatId::f8e5m2>;
  CastPolicy sat;  // cuda_satfinite narrow (§10.1)
  sat.saturate = true;
  sat.nan = numref_cuda::NanOut::ones;
  CastPolicy nosat = sat;  // cuda_nosat narrow
  nosat.saturate = false;
  auto e4 = [](std::uint32_t x, const CastPolicy& p) { return numref_cuda::convert<F32, E4>(x, p); };
  auto e5 = [](std::uint32_t x, const CastPolicy& p) { return numref_cuda::convert<F32, E5>(x, p); };
  // 1.0: biased exponent 0 + 7 = 7, fraction 0 -> 0011 1000.
  EXPECT_EQ(e4(0x3F800000u, sat), 0x38u);
  // 464 = 14.5 * 32 (quantum of [256, 512) is 2^(8-3)): a tie between 448 (code 7E, even)
  // and 480 (code 7F); ties to even -> 7E, no overflow under either policy (§6.1).
  EXPECT_EQ(e4(0x43E80000u, sat), 0x7Eu);
  EXPECT_EQ(e4(0x43E80000u, nosat), 0x7Eu);
  // 465 = 14.53 * 32 rounds to 480 > 448: overflow. Saturating: 7E; non-saturating: the NaN
  // of the infinity slot with the sign of x (7F / FF).
  EXPECT_EQ(e4(0x43E88000u, sat), 0x7Eu);
  EXPECT_EQ(e4(0x43E88000u, nosat), 0x7Fu);
  EXPECT_EQ(e4(0xC3E88000u, sat), 0xFEu);
  EXPECT_EQ(e4(0xC3E88000u, nosat), 0xFFu);
  // +-Inf: saturating with inf_sat=max -> +-max (7E / FE); non-saturating -> NaN with sign.
  EXPECT_EQ(e4(0x7F800000u, sat), 0x7Eu);
  EXPECT_EQ(e4(0xFF800000u, sat), 0xFEu);
  EXPECT_EQ(e4(0xFF800000u, nosat), 0xFFu);
  // NaN (any sign, any payload) -> 7F under nan=ones.
  EXPECT_EQ(e4(0xFFC00001u, sat), 0x7Fu);
  EXPECT_EQ(e5(0xFFC00001u, sat), 0x7Fu);
  // 2^-9 is the smallest E4M3 subnormal (code 01); 2^-10 is half of it: a tie between 0 (even)
  // and 01 -> +0; one f32 ulp above -> 01; the sign of a result rounded to zero is kept.
  EXPECT_EQ(e4(0x3B000000u, sat), 0x01u);
  EXPECT_EQ(e4(0x3A800000u, sat), 0x00u);
  EXPECT_EQ(e4(0x3A800001u, sat), 0x01u);
  EXPECT_EQ(e4(0xBA800000u, sat), 0x80u);
  // E5M2: 57344 = 0x47600000 is max finite (7B). 61440 = 7.5 * 2^13 is a tie between 57344
  // (7B, odd) and 65536 (7C): to even -> 65536 -> overflow: 7B saturating, +Inf 7C otherwise.
  EXPECT_EQ(e5(0x47600000u, sat), 0x7Bu);
  EXPECT_EQ(e5(0x47700000u, sat), 0x7Bu);
  EXPECT_EQ(e5(0x47700000u, nosat), 0x7Cu);
  EXPECT_EQ(e5(0xFF800000u, nosat), 0xFCu);
}

TEST(CudaCastExhaustive, HandComputedBf16AndDecode) {
  using F32 = FloatTraits<FormatId::f32>;
  using BF = FloatTraits<FormatId::bf16>;
  using E4 = FloatTraits<FormatId::f8e4m3fn>;
  using E5 = FloatTraits<FormatId::f8e5m2>;
  CastPolicy wide;  // cuda_satfinite wide: rne, nonsat, NaN -> all ones (§10.1)
  wide.nan = numref_cuda::NanOut::ones;
  // 1 + 2^-8 is half a bf16 ulp above 1.0 (ulp 2^-7): tie -> even 3F80; 1 + 3 * 2^-8 is a
  // tie between 3F81 (odd) and 3F82 -> 3F82.
  EXPECT_EQ((numref_cuda::convert<F32, BF>(0x3F808000u, wide)), 0x3F80u);
  EXPECT_EQ((numref_cuda::convert<F32, BF>(0x3F818000u, wide)), 0x3F82u);
  // max finite bf16 7F7F = (2 - 2^-7) * 2^127; f32 7F7FFFFF rounds up to 2^128: overflow -> +Inf.
  EXPECT_EQ((numref_cuda::convert<F32, BF>(0x7F7FFFFFu, wide)), 0x7F80u);
  EXPECT_EQ((numref_cuda::convert<F32, BF>(0xFFC12345u, wide)), 0x7FFFu);
  // Decode: E4M3 7E = 1.75 * 2^8 = 448 = 0x43E00000; 01 = 2^-9 = 0x3B000000; E5M2 7C = +Inf.
  EXPECT_EQ((numref_cuda::convert<E4, F32>(0x7Eu, wide)), 0x43E00000u);
  EXPECT_EQ((numref_cuda::convert<E4, F32>(0x81u, wide)), 0xBB000000u);
  EXPECT_EQ((numref_cuda::convert<E5, F32>(0x7Cu, wide)), 0x7F800000u);
  EXPECT_EQ((numref_cuda::convert<E4, BF>(0x7Eu, wide)), 0x43E0u);
  EXPECT_EQ((numref_cuda::convert<E4, F32>(0xFFu, wide)), 0x7FFFFFFFu);
}

// The nvcc-compiled host copy of the functions is part of every comparison above when CUDA
// is enabled; say so in the log when it is not, so a reader knows what was run.
TEST(CudaCastExhaustive, NvccHostCopyStatus) {
  if (!numref_cuda_test::nvcc::available())
    std::printf("note: CUDA disabled in this build: only the g++-compiled copy of cast.cuh was compared\n");
  else
    EXPECT_NE(numref_cuda_test::nvcc::element_fn(FormatId::f32, FormatId::f8e4m3fn), nullptr);
}

}  // namespace
