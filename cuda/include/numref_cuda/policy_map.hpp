// numref CUDA kernels — from a numref::Policy to the knobs a kernel implements.   spec §A.2
//
// Host-only (plain C++, no CUDA headers): used by the host API (api.hpp), by the backend
// plugin and by the host tests. A knob the kernels do not implement is an error that names
// it; a knob that cannot affect the conversion (e.g. `e8m0_round` for an f8e4m3fn target,
// `tininess`, which only decides flags the kernels do not return) is ignored.
#pragma once

#include <string>

#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref_arith/cast.cuh"

namespace numref_cuda {

// §A.2 The CastPolicy for a conversion from -> to under p (to: a signed floating-point
// format with a zero). Throws std::invalid_argument naming the problem: a malformed
// policy (§4.3), daz=1, ftz=1, or an unsupported target.
CastPolicy cast_policy(const numref::Policy& p, const numref::Format& from, const numref::Format& to);

// §A.2 The E8m0Policy for a conversion from -> f8e8m0fnu under p. Throws
// std::invalid_argument for daz=1 and for stochastic rounding (not implemented).
E8m0Policy e8m0_policy(const numref::Policy& p, const numref::Format& from);

// §A.5 Whether the sm_89+ hardware path (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32) computes
// this conversion: an 8-bit target with round-to-nearest-even and saturation (the
// cuda_satfinite arithmetic); NaN and ±Inf operands are then re-encoded per `p` (§A.5).
bool hardware_f8_path(const CastPolicy& p);
// §A.5 Whether the sm_80+ hardware path (cvt.rn.bf16x2.f32) computes an f32 -> bf16
// conversion: round-to-nearest-even without saturation; NaN lanes re-encoded per `p`.
bool hardware_bf16_path(const CastPolicy& p);

// Text forms for messages and reports.
std::string describe(const CastPolicy& p);
std::string describe(const E8m0Policy& p);

}  // namespace numref_cuda
