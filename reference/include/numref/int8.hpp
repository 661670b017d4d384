// numref — INT8 symmetric quantization ([MD] Eq. 1).               spec §20
//
//   delta = RN32(amax / 127)      (default; codes in [-127, 127])
//   delta = RN32(amax / 127.5)    (variant; codes in [-128, 127])
//   q     = round(x / delta)      the exact quotient rounded ONCE to an integer by the policy's
//                                 mode (rne default, rna, sr, or rup = the ceiling written in
//                                 Eq. 1), out-of-range results saturated (§6.5)
//   x'    = RN32(q * delta)       dequantized
// delta is a stored binary32 dequant scale (the metadata of §19.4); x / delta is never
// rounded to binary32 first (the fused application of §19.2). amax = 0 gives delta = 1.0
// (every code 0). Granularity is any partition: tensor, per channel (rows of the lhs,
// columns of the rhs), or fine-grained 1 x k / k x 1 sub-channels.
// This header is a convenience layer: an INT8 quantization IS quantize() with
// rule = int8 / int8-127.5 and element = int8 (tests check the two agree bit for bit).
#pragma once

#include <cstdint>
#include <span>

#include "numref/quantize.hpp"

namespace numref {

enum class Int8Variant : std::uint8_t {
  d127,    // delta = amax / 127, range [-127, 127] (Eq. 1 with n = 8)
  d127_5,  // delta = amax / 127.5, range [-128, 127]
};
// §20.3 Rounding of x / delta.
enum class Int8Round : std::uint8_t {
  rne,   // default: nearest, ties to even
  rna,   // nearest, ties away from zero
  sr,    // stochastic (§5.1), `sr_bits` random bits per element
  ceil,  // toward +infinity: the ceiling exactly as written in [MD] Eq. 1
};

struct Int8Spec {
  Int8Variant variant = Int8Variant::d127;
  Int8Round round = Int8Round::rne;
  int sr_bits = 0;  // 1..32 when round == sr
  Partition partition = Partition::tensor();
  AmaxPolicy amax;
};

// §20 The generic quantize() spec of an INT8 quantization.
QuantizeSpec int8_quantize_spec(const Int8Spec& s);
// §20 INT8 quantization: codes are int8 two's complement bytes in element order; the
// result's meta.scales holds delta (binary32 code) per block.
QuantizeResult quantize_int8(const TensorView& x, const Int8Spec& s, std::span<std::uint8_t> codes,
                             std::span<const std::uint32_t> random = {});

}  // namespace numref
