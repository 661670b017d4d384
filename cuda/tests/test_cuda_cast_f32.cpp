// numref CUDA tests — f32 sources of cast.cuh against the reference: a structured set (every
// exponent, ties, ±1 ulp around them, max finite and beyond, NaN payloads, Inf, zeros,
// subnormals) under every deterministic policy, and 4 million seeded random codes under
// the named profiles.                                                   spec §A.4 (§3–§8)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "host_check.hpp"
#include "numref/convert.hpp"

namespace {

using numref::FormatId;
using numref_cuda_test::Checker;

// Every exponent field and sign; fractions 0, 1, all ones, and for every split position
// d = 1..23 (the discarded bits of any target) the tie 2^(d-1), its neighbours ±1, and the
// same with the kept part odd (2^d | tie): the cases where RNE, the subnormal boundary and
// overflow decide. Plus NaNs with assorted payloads (quiet and signalling) and ±Inf.
std::vector<std::uint32_t> structured_f32() {
  std::vector<std::uint32_t> v;
  for (std::uint32_t s = 0; s < 2; ++s)
    for (std::uint32_t ef = 0; ef < 255; ++ef) {
      const std::uint32_t hi = (s << 31) | (ef << 23);
      for (std::uint32_t f : {0u, 1u, 2u, 0x7FFFFFu, 0x7FFFFEu, 0x400000u, 0x3FFFFFu, 0x400001u}) v.push_back(hi | f);
      for (int d = 1; d <= 23; ++d) {
        const std::uint32_t tie = 1u << (d - 1);
        const std::uint32_t odd = d < 23 ? (1u << d) : 0u;
        for (std::uint32_t base : {0u, odd, 0x7FFFFFu & ~((1u << d) - 1u)})
          for (std::uint32_t f : {tie - 1u, tie, tie + 1u}) v.push_back(hi | ((base | f) & 0x7FFFFFu));
      }
    }
  for (std::uint32_t s : {0u, 0x80000000u}) {
    v.push_back(s | 0x7F800000u);  // ±Inf
    for (std::uint32_t f : {1u, 2u, 0x200000u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x5A5A5Au, 0x7FFFFFu})
      v.push_back(s | 0x7F800000u | f);  // NaN payloads, signalling (bit 22 clear) and quiet
  }
  return v;
}

TEST(CudaCastF32, StructuredEveryTargetEveryDeterministicPolicy) {
  const std::vector<std::uint32_t> inputs = structured_f32();
  ASSERT_GT(inputs.size(), 100000u);
  for (FormatId to : numref_cuda_test::kElementFormats)  // every target of cast.cuh
    for (const numref::Policy& p : numref_cuda_test::deterministic_policies(numref::format(to))) {
      Checker c(FormatId::f32, to, p);
      for (std::uint32_t x : inputs) c.check(x);
      ASSERT_TRUE(c.result());
    }
}

// 4M seeded random codes per target under every named profile: half uniform over all 2^32
// patterns, half with the exponent field drawn around the target's range.
TEST(CudaCastF32, RandomNamedProfiles) {
  std::mt19937_64 rng(0x5eed);
  std::vector<std::uint32_t> inputs(4000000);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::uint32_t x = static_cast<std::uint32_t>(rng());
    if (i & 1) x = (x & 0x807FFFFFu) | ((87u + static_cast<std::uint32_t>(rng() % 61u)) << 23);
    inputs[i] = x;
  }
  for (FormatId to : {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::bf16})
    for (const auto& [name, p] :
         numref_cuda_test::profile_policies(numref::format(FormatId::f32), numref::format(to))) {
      if (name == "ieee") continue;  // a synonym of ocp (§10.1)
      SCOPED_TRACE(name);
      Checker c(FormatId::f32, to, p);
      for (std::uint32_t x : inputs) c.check(x);
      ASSERT_TRUE(c.result());
    }
}

}  // namespace
