// numref backend "cpu-fast" — byte-output lanes: f32 / bf16 / f16 into the narrow
// floating-point targets under the common policies, writing the target codes as bytes.   spec §11
//
// The casts ML code runs most (a float tensor into FP8 / FP6 / FP4, round to nearest even,
// saturating or not) read 2 or 4 bytes and write 1 per element; the 32-bit lane path of
// fast_cast.cpp writes 4 (and its callers narrow them). Here one branch-free integer lane
// function per source layout reads the source codes as they are stored (uint32 / uint16) and
// writes bytes, in blocks the compiler vectorises (no intrinsics). Inf operands and overflow
// take constants computed once by cpu-fast's scalar path; NaN operands (rare, and their
// results depend on the payload) are recomputed by the scalar path after the block.
//
// Where the lanes apply (byte_lanes_unsupported() == nullptr):
//   source  f32, bf16 or f16 (the binary32 / bfloat16 / binary16 layouts of the format table);
//   target  a signed floating-point format of at most 8 bits with zero, subnormals and at least
//           one mantissa bit (f8e4m3fn, f8e5m2, f6e3m2fn, f6e2m3fn, f4e2m1fn), whose normal range
//           lies above the source's subnormals (every such pair today);
//   policy  effective rounding rne (§4.1), no daz / ftz (§8); every other knob (overflow,
//           inf_sat, nan, nan_to_finite, tininess) as the policy says. What cpu-fast declines
//           (declined(), §A.1) is never taken.
// Every result equals the reference's, flags included: tests/test_fast_lanes.cpp compares every
// bf16 / f16 code and millions of f32 codes per (target, policy) in the default test run, and
// every f32 code under the `exhaustive` label.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fast_cast.hpp"

namespace numref::cpu_fast {

// Why the byte lanes do not take (from, to, p), or nullptr when they do.
const char* byte_lanes_unsupported(const Format& from, const Format& to, const Policy& p);

class ByteLanes {
 public:
  // Precondition: byte_lanes_unsupported(from, to, p) == nullptr (std::invalid_argument otherwise).
  ByteLanes(const Format& from, const Format& to, const Policy& p);

  // n source codes (f32 sources: uint32; bf16 / f16 sources: uint16) -> n target codes, and their
  // §9 flags when `flags` is not null. The wrong overload for the source throws std::logic_error.
  void run(const std::uint32_t* in, std::uint8_t* out, std::uint8_t* flags, std::size_t n) const;
  void run(const std::uint16_t* in, std::uint8_t* out, std::uint8_t* flags, std::size_t n) const;

  // The constants of the lane function (derived once from the plan; fast_lanes.cpp lane()).
  struct Consts {
    std::int32_t m, d0, dk, ek;           // target mantissa bits; shift bounds; the target's emin, biased as the source
    std::uint32_t maxc, sign_bit, one_m;  // largest finite code; sign bit; 2^m
    std::uint32_t tiny_rb, tiny_odd;      // §9.2 tininess after rounding (0, 0: before)
    std::uint32_t ovf_mag, ovf_fl, inf_mag, inf_fl;  // overflow (§6.1), Inf operands (§6.2): magnitude code, flags
    friend bool operator==(const Consts&, const Consts&) = default;
  };
  // Two casts with equal constants (and source) run the same lanes on every non-NaN operand.
  const Consts& consts() const { return c_; }

 private:
  enum class Src : std::uint8_t { f32, bf16, f16 };
  Plan pl_;
  Src src_;
  Consts c_;
};

}  // namespace numref::cpu_fast
