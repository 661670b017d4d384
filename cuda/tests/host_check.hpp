// numref CUDA tests — comparing the per-element functions with the reference.   spec §A.4
//
// A Checker binds (from, to, policy): expected codes come from numref::Converter (the exact
// reference, an independent implementation), got codes from cast.cuh compiled by g++ and,
// when CUDA is enabled, by nvcc's host pass. Mismatches are counted and the first few are
// reported in hex with the policy text.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "element_table.hpp"
#include "numref/convert.hpp"
#include "numref/policy.hpp"
#include "numref_cuda/policy_map.hpp"

namespace numref_cuda_test {

inline std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

class Checker {
 public:
  Checker(numref::FormatId from, numref::FormatId to, const numref::Policy& p)
      : from_(from),
        to_(to),
        p_(p),
        ref_(from, to, p),
        cp_(numref_cuda::cast_policy(p, numref::format(from), numref::format(to))),
        gxx_(gxx::element_fn(from, to)),
        nvcc_(nvcc::element_fn(from, to)) {}

  // Compares one code (and random value r under stochastic rounding).
  void check(std::uint32_t code, std::uint32_t r = 0) {
    ++count_;
    const std::uint32_t expected = ref_(code, r).bits;
    const std::uint32_t got = gxx_(code, cp_, r);
    if (got != expected) report("g++", code, r, got, expected);
    if (nvcc_ != nullptr) {
      const std::uint32_t got_nvcc = nvcc_(code, cp_, r);
      if (got_nvcc != expected) report("nvcc-host", code, r, got_nvcc, expected);
    }
  }

  // Every code of the source format.
  void check_all_codes(std::uint32_t r = 0) {
    const std::uint32_t n = std::uint32_t{1} << numref::format(from_).bits;
    for (std::uint32_t c = 0; c < n; ++c) check(c, r);
  }

  std::uint64_t count() const { return count_; }
  std::uint64_t mismatches() const { return mismatches_; }

  ::testing::AssertionResult result() const {
    if (mismatches_ == 0) return ::testing::AssertionSuccess();
    auto f = ::testing::AssertionFailure();
    f << mismatches_ << " mismatches in " << count_ << " conversions " << numref::format(from_).name << " -> "
      << numref::format(to_).name << " under [" << numref::describe(p_) << "]";
    for (const auto& e : examples_) f << "\n  " << e;
    return f;
  }

 private:
  void report(const char* who, std::uint32_t code, std::uint32_t r, std::uint32_t got, std::uint32_t expected) {
    if (mismatches_++ < 8)
      examples_.push_back(std::string(who) + ": x=" + hex(code) + " r=" + hex(r) + " got " + hex(got) + " expected " +
                          hex(expected));
  }

  numref::FormatId from_, to_;
  numref::Policy p_;
  numref::Converter ref_;
  numref_cuda::CastPolicy cp_;
  ElementFn gxx_, nvcc_;
  std::uint64_t count_ = 0, mismatches_ = 0;
  std::vector<std::string> examples_;
};

// The deterministic policies that change a conversion into `to`: every rounding mode x
// overflow x inf_sat x (nan for targets with NaN | nan_to_finite for FP6/FP4).
inline std::vector<numref::Policy> deterministic_policies(const numref::Format& to) {
  std::vector<numref::Policy> out;
  for (numref::Round m :
       {numref::Round::rne, numref::Round::rna, numref::Round::rtz, numref::Round::rup, numref::Round::rdn})
    for (numref::Overflow o : {numref::Overflow::nonsat, numref::Overflow::saturate})
      for (numref::InfSat i : {numref::InfSat::max, numref::InfSat::keep}) {
        numref::Policy p;
        p.round = m;
        p.overflow = o;
        p.inf_sat = i;
        if (to.has_nan()) {
          for (numref::NanOut n :
               {numref::NanOut::payload, numref::NanOut::sign, numref::NanOut::canonical, numref::NanOut::ones}) {
            p.nan = n;
            out.push_back(p);
          }
        } else {
          for (numref::NanToFinite n :
               {numref::NanToFinite::zero, numref::NanToFinite::negzero, numref::NanToFinite::max}) {
            p.nan_to_finite = n;
            out.push_back(p);
          }
        }
      }
  return out;
}

// The narrow/wide policy of each named profile for a target (§10.1).
// Every named profile's policy for the cast from -> to (§10.2 pair rules applied) that the kernels
// implement. A profile whose knobs the kernels refuse (§A.2: e.g. torch's nan=ones_sign,
// ml_dtypes' nan_to_finite=flipzero) is left out; the profiles the CUDA backend claims (ocp,
// ieee, cuda_satfinite, cuda_nosat) never are: the helper fails the test if one is refused.
inline std::vector<std::pair<std::string, numref::Policy>> profile_policies(const numref::Format& from,
                                                                            const numref::Format& to) {
  std::vector<std::pair<std::string, numref::Policy>> out;
  const numref::Profile* all = numref::all_profiles();
  for (int i = 0; i < numref::kProfileCount; ++i) {
    const std::string name(all[i].name);
    const numref::Policy p = all[i].for_cast(from, to);
    try {
      (void)numref_cuda::cast_policy(p, from, to);
    } catch (const std::invalid_argument& e) {
      // The one exception (§A.12): the cuda_* pair rule bf16 > f32 nan=raw (__bfloat162float keeps
      // a NaN's payload) is not a kernel knob; the kernels refuse that pair under those profiles.
      const bool pair_rule = from.id == numref::FormatId::bf16 && to.id == numref::FormatId::f32 &&
                             (name == "cuda_satfinite" || name == "cuda_nosat");
      const bool claimed = name == "ocp" || name == "ieee" || name == "cuda_satfinite" || name == "cuda_nosat";
      EXPECT_FALSE(claimed && !pair_rule) << name << " refused by the kernels: " << e.what();
      continue;
    }
    out.emplace_back(name, p);
  }
  return out;
}

}  // namespace numref_cuda_test
