// numref backend "cpu-fast" — an optimized CPU implementation of the casts.   spec §11
//
// Independent of the reference's conversion code: it reads only the format table
// (numref/format.hpp) and the policy knobs, and computes results with its own integer
// arithmetic:
//   * f32 sources, deterministic rounding into floating-point targets: a branch-free
//     32-bit lane function over blocks (auto-vectorised; no table, no division), with
//     the rare special lanes (NaN, Inf, and whatever the target cannot take in the lane
//     form) recomputed by the scalar path;
//   * sources of at most 16 bits, deterministic rounding: a lookup table of every
//     source code (built once per (from, to, policy) with the scalar path);
//   * everything else (stochastic rounding, integer targets from f32): the scalar path.
// Every path must match the reference bit for bit, flags included; the conformance suite
// checks it (exhaustively for <= 16-bit sources).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "numref/format.hpp"
#include "numref/policy.hpp"

namespace numref::cpu_fast {

struct Out {
  std::uint32_t code;
  std::uint8_t flags;
};

// The constants of one conversion, derived once from the two format rows and the policy.
struct Plan {
  // source
  int s_m, s_bias, s_qmin, s_emin;
  bool s_sub, s_int, s_signed, s_ieee, s_fn;
  std::uint32_t s_mask, s_mag, s_man, s_sign, s_expones;
  // target
  int m, qmin, emin, bias;
  int emax[2];            // floor(log2(max finite)), [0] positive, [1] negative
  std::uint32_t maxn[2];  // integer targets: largest magnitude per sign
  bool sub, integer, is_signed, has_zero, has_inf, has_nan, finite;
  std::uint32_t sign_bit, mag_mask, man_mask, max_code, inf_code, canonical_nan, off, min_code;
  // policy
  Round mode;   // effective rounding mode (§7.1 applied)
  int k;        // SR bits
  bool sr_add;  // §5.2 variant (floating-point sources)
  Policy p;
  bool exact_e;  // the lane path needs the exact exponent of f32 subnormals
};
Plan make_plan(const Format& from, const Format& to, const Policy& p);

// The scalar path: any source, any target, any policy. `r` for round=sr.
Out convert_scalar(const Plan& pl, std::uint32_t bits, std::uint32_t r);

// Batched conversion with the fastest applicable path. flags may be null.
// Spec §A.1 What cpu-fast declines (the plugin answers "unsupported" with this reason; its
// tests skip exactly these): e8m0_low=grid (§7.4) into f8e8m0fnu, nan=raw and nan=raw_plus from
// 32-bit sources (§6.3; the binary32 lanes have no "zero payload becomes 1" step), and the fnuz
// (§2.2) and P3109 (§2.5) formats. nullptr: implemented.
const char* declined(const Format& from, const Format& to, const Policy& p);

class ByteLanes;  // fast_lanes.hpp

class FastCast {
 public:
  FastCast(const Format& from, const Format& to, const Policy& p);
  void run(const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags,
           std::size_t n) const;
  // Which path run() takes: "lut", "lanes" or "scalar" (for benchmarks and tests).
  const char* path() const;
  const Plan& plan() const { return pl_; }
  // The byte-output lanes of this cast (fast_lanes.hpp; run() takes them on its lane path), or
  // null where they do not apply.
  const ByteLanes* byte_lanes() const { return bytes_.get(); }

 private:
  Plan pl_;
  enum class Path { lut, lanes, scalar } path_;
  std::vector<std::uint32_t> lut_code_;  // targets wider than 8 bits
  std::vector<std::uint8_t> lut_code8_;  // targets of at most 8 bits: a 4x smaller table
  std::vector<std::uint8_t> lut_flags_;
  std::shared_ptr<const ByteLanes> bytes_;
};

}  // namespace numref::cpu_fast
