// numref conformance — one cast suite: its parameters and its cases.   spec §11, §34
//
// The public part of the `cast` op family, for code outside the runner that drives one suite
// itself (the Python package's numref.conform.CastSuite): make() builds the suite's Params (the
// same expected results, comparison and mismatch rendering as `numref conform`), cases() its case
// generator at a level. The rest of the family (its registration, the pairs and variants it
// generates, its vector files) is internal to the runner: conformance/src/ops/cast/cast.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "numref/conform/core.hpp"
#include "numref/convert.hpp"
#include "numref/policy.hpp"

namespace numref::conform::cast {

// §11 One cast suite. Schema (column-major): x [r] | y, flags (optional, NUMREF_CAP_FLAGS).
class CastParams final : public Params {
 public:
  CastParams(const Format& from, const Format& to, std::string profile, const Policy& p);

  void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const override;
  std::string classify(const CaseDiff& d) const override;
  bool plugin_supported(const numref_backend& b) const override;
  bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out, bool optional,
                   std::string& error) const override;
  std::string pipe_params() const override;
  std::uint32_t abi_minor() const override;

  const Format& from() const { return *from_; }
  const Format& to() const { return *to_; }
  const Policy& policy() const { return policy_; }
  bool sr() const { return sr_; }
  int sr_bits() const { return policy_.sr_bits; }
  // The reference result of one case.
  Result reference(std::uint32_t x, std::uint32_t r) const { return conv_(x, r); }
  // Knob settings that differ from the profile's policy: "round=rtz daz=1" ("" = none).
  std::string overrides() const;
  // The classification of a value mismatch (§34.4).
  std::string classify(std::uint32_t x, std::uint32_t r, Result exp, Result got) const;

 private:
  const Format* from_;
  const Format* to_;
  Policy policy_;
  Converter conv_;
  bool sr_ = false;
  std::string policy_text_;
  numref_policy cpol_;
};

// The suite from -> to under `profile` with policy p (p: the profile's policy for `to` with the
// caller's settings applied).
std::shared_ptr<const CastParams> make(const Format& from, const Format& to, std::string_view profile, const Policy& p);

// §34.3 The cases of suite p at `level` (seed: the random cases').
std::shared_ptr<const CaseSource> cases(const std::shared_ptr<const CastParams>& p, Level level, std::uint64_t seed);

}  // namespace numref::conform::cast
