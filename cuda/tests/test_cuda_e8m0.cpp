// numref CUDA tests — to_e8m0 of cast.cuh against the reference.           spec §A.4 (§7)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "element_table.hpp"
#include "host_check.hpp"
#include "numref/convert.hpp"
#include "numref_arith/cast.cuh"
#include "numref_cuda/policy_map.hpp"

namespace {

using numref::FormatId;

// Every policy that changes an f8e8m0fnu result: e8m0_round (4 explicit + follow of the 4
// rounding modes that map onto them) x overflow x inf_sat x zero_to_nozero x negative.
std::vector<numref::Policy> e8m0_policies() {
  std::vector<numref::Policy> out;
  const std::pair<numref::E8m0Round, numref::Round> rounds[] = {
      {numref::E8m0Round::floor, numref::Round::rne},  {numref::E8m0Round::ceil, numref::Round::rne},
      {numref::E8m0Round::even, numref::Round::rne},   {numref::E8m0Round::tiesup, numref::Round::rne},
      {numref::E8m0Round::follow, numref::Round::rne}, {numref::E8m0Round::follow, numref::Round::rna},
      {numref::E8m0Round::follow, numref::Round::rtz}, {numref::E8m0Round::follow, numref::Round::rup},
      {numref::E8m0Round::follow, numref::Round::rdn}};
  for (const auto& [er, rm] : rounds)
    for (auto o : {numref::Overflow::nonsat, numref::Overflow::saturate})
      for (auto i : {numref::InfSat::max, numref::InfSat::keep})
        for (auto z : {numref::ZeroToNoZero::nan, numref::ZeroToNoZero::min})
          for (auto n : {numref::Negative::nan, numref::Negative::abs}) {
            numref::Policy p;
            p.round = rm;
            p.e8m0_round = er;
            p.overflow = o;
            p.inf_sat = i;
            p.zero_to_nozero = z;
            p.negative = n;
            out.push_back(p);
          }
  return out;
}

struct E8m0Checker {
  E8m0Checker(FormatId from, const numref::Policy& p)
      : ref(from, FormatId::f8e8m0fnu, p),
        ep(numref_cuda::e8m0_policy(p, numref::format(from))),
        gxx(numref_cuda_test::gxx::e8m0_fn(from)),
        nvcc(numref_cuda_test::nvcc::e8m0_fn(from)),
        policy(p) {}
  void check(std::uint32_t x) {
    const std::uint32_t expected = ref(x).bits;
    const std::uint32_t got = gxx(x, ep);
    if (got != expected && bad++ < 8)
      msg += "\n  g++ x=" + numref_cuda_test::hex(x) + " got " + numref_cuda_test::hex(got) + " expected " +
             numref_cuda_test::hex(expected);
    if (nvcc != nullptr) {
      const std::uint32_t got_nvcc = nvcc(x, ep);
      if (got_nvcc != expected && bad++ < 8)
        msg += "\n  nvcc-host x=" + numref_cuda_test::hex(x) + " got " + numref_cuda_test::hex(got_nvcc) +
               " expected " + numref_cuda_test::hex(expected);
    }
  }
  ::testing::AssertionResult result() const {
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << bad << " mismatches under [" << numref::describe(policy) << "]" << msg;
  }
  numref::Converter ref;
  numref_cuda::E8m0Policy ep;
  numref_cuda_test::E8m0Fn gxx, nvcc;
  numref::Policy policy;
  int bad = 0;
  std::string msg;
};

TEST(CudaE8m0, Bf16EveryCodeEveryPolicy) {
  for (const numref::Policy& p : e8m0_policies()) {
    E8m0Checker c(FormatId::bf16, p);
    for (std::uint32_t x = 0; x < 65536u; ++x) c.check(x);
    ASSERT_TRUE(c.result());
  }
}

// f32: every exponent field with the fraction patterns that decide floor / ceil / nearest
// (0, 1, the midpoint 0x400000 and its neighbours, all ones), subnormals of every length,
// ±Inf, NaNs; plus 1M seeded random codes; under every policy.
TEST(CudaE8m0, F32StructuredAndRandomEveryPolicy) {
  std::vector<std::uint32_t> inputs;
  for (std::uint32_t s : {0u, 0x80000000u}) {
    for (std::uint32_t ef = 0; ef < 256; ++ef)
      for (std::uint32_t f : {0u, 1u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFFu, 0x200000u, 0x600000u})
        inputs.push_back(s | (ef << 23) | f);
    for (int b = 0; b < 23; ++b) {  // subnormals with a leading bit at every position
      inputs.push_back(s | (1u << b));
      inputs.push_back(s | (1u << b) | ((1u << b) >> 1));
      inputs.push_back(s | ((2u << b) - 1u));
    }
  }
  std::mt19937_64 rng(0xe8);
  for (int i = 0; i < 1000000; ++i) inputs.push_back(static_cast<std::uint32_t>(rng()));
  for (const numref::Policy& p : e8m0_policies()) {
    E8m0Checker c(FormatId::f32, p);
    for (std::uint32_t x : inputs) c.check(x);
    ASSERT_TRUE(c.result());
  }
}

// Hand-computed (§7): the code is the biased exponent 127 + e of 2^e.
TEST(CudaE8m0, HandComputed) {
  using F32 = numref_cuda::FloatTraits<FormatId::f32>;
  numref_cuda::E8m0Policy cuda{numref_cuda::E8m0Mode::floor, true, true, true, true};  // cuda_satfinite
  auto e = [](std::uint32_t x, const numref_cuda::E8m0Policy& p) { return numref_cuda::to_e8m0<F32>(x, p); };
  EXPECT_EQ(e(0x3F800000u, cuda), 0x7Fu);  // 1.0 = 2^0
  EXPECT_EQ(e(0x3FC00000u, cuda), 0x7Fu);  // 1.5 floors to 2^0
  EXPECT_EQ(e(0xC0800000u, cuda), 0x81u);  // -4: |x| = 2^2 (negative=abs)
  EXPECT_EQ(e(0x00000000u, cuda), 0x00u);  // zero -> 00 (zero_to_nozero=min)
  EXPECT_EQ(e(0x7F800000u, cuda), 0xFEu);  // +Inf saturates to 2^127
  EXPECT_EQ(e(0x7FC00000u, cuda), 0xFFu);  // NaN
  EXPECT_EQ(e(0x00400000u, cuda), 0x00u);  // 2^-127 (an f32 subnormal) = code 00
  numref_cuda::E8m0Policy ceil = cuda;
  ceil.mode = numref_cuda::E8m0Mode::ceil;
  EXPECT_EQ(e(0x3FC00000u, ceil), 0x80u);  // 1.5 -> 2^1
  EXPECT_EQ(e(0x00600000u, ceil), 0x01u);  // 1.5 * 2^-127 -> 2^-126 (§7.4)
  EXPECT_EQ(e(0x7F7FFFFFu, ceil), 0xFEu);  // max f32 -> 2^128 overflows: saturate -> FE
  ceil.saturate = false;
  EXPECT_EQ(e(0x7F7FFFFFu, ceil), 0xFFu);  // ... non-saturating: NaN
  numref_cuda::E8m0Policy even = cuda;
  even.mode = numref_cuda::E8m0Mode::even;
  EXPECT_EQ(e(0x3FC00000u, even), 0x80u);  // 1.5: tie between 7F (odd) and 80 (even) -> 80
  EXPECT_EQ(e(0x40400000u, even), 0x80u);  // 3.0 = 1.5 * 2^1: tie between 80 (even) and 81 -> 80
  numref_cuda::E8m0Policy tiesup = cuda;
  tiesup.mode = numref_cuda::E8m0Mode::tiesup;
  EXPECT_EQ(e(0x40400000u, tiesup), 0x81u);  // 3.0: tie -> up to 2^2
}

}  // namespace
