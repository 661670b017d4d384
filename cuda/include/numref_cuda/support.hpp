// numref CUDA kernels — what the cast kernels accept, and the messages of their refusals.
//                                                                                     spec §A.2, §A.3
//
// Host-only (plain C++, no CUDA headers): the device API (api.cu), the `cuda` and `cuda-emu`
// conformance backends and the host emulation share these, so a refusal reads the same wherever
// it is made.
#pragma once

#include <string>

#include "numref/format.hpp"
#include "numref_arith/cast.cuh"

namespace numref_cuda {

// §A.2 Whether the kernels implement from -> to under p: "" if so, else the reason.
// `has_random`: the call has a random source (explicit values or a Philox stream).
std::string cast_support(numref::FormatId from, numref::FormatId to, const CastPolicy& p, bool has_random);

// §4.3 / §A.3 The message of a stochastic-rounding cast given an explicit value r >= 2^k.
std::string cast_random_error(int k);
// §4.3 / §A.7 The message of a quantization given an explicit value r >= 2^k.
std::string quantize_random_error(int k);

}  // namespace numref_cuda
