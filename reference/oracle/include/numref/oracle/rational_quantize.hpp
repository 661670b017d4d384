// numref oracle — scales, GAM, quantize, dequantize and fake-quant recomputed with exact
// rationals.                                                    spec §12 – §20
//
// Independent of numref_reference (no function of it is called): elements arrive as codes in
// element order, blocks are cut by index arithmetic, every scale rule is computed from its
// mathematical definition. Of the scale-rule table (numref/scale.hpp, constexpr) it reads only
// the descriptive columns of the rule's row — the kind, the MX exponent rule, the tensor-level
// output, the default q_max, the integer range and the default application — and computes
// everything itself (logarithms by comparison with powers of two, RN32 by the rational rounding
// of rational_round.hpp). Tests compare it with numref::quantize bit for bit.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref/scale.hpp"

namespace numref::oracle::rq {

struct Spec {
  FormatId source = FormatId::f32;
  FormatId element = FormatId::f8e4m3fn;
  std::size_t rows = 0, cols = 0;
  std::size_t block_rows = 0, block_cols = 0;  // 0 = whole extent
  std::size_t group_rows = 0, group_cols = 0;  // GAM groups
  ScaleRule rule = ScaleRule::amax;
  bool nan_ignore = false, inf_ignore = false;
  Policy policy;              // element conversion (int_range is overridden by the rule's row, §20.2)
  Policy wide;                // NaN codes -> binary32, and the fake-quant output
  std::optional<bool> fused;  // default: the rule's row (true for the int8 rules)
  bool dequant_reciprocal = false;
  // explicit q_max = q_sig * 2^q_exp (0: the element's default)
  std::uint64_t q_sig = 0;
  int q_exp = 0;
  FormatId fake_format = FormatId::bf16;
};

struct Out {
  std::vector<std::uint8_t> codes;    // element order
  std::vector<std::uint32_t> amax;    // per block, binary32 code
  std::vector<std::uint32_t> scales;  // per block, stored code
  std::vector<std::uint32_t> group_mantissa;
  std::uint32_t tensor_amax = 0;
  std::vector<std::uint32_t> dequant;  // binary32 codes, element order
  std::vector<std::uint32_t> fake;     // fake_format codes, element order
  std::uint64_t saturated = 0, flushed = 0, nan = 0, inf = 0;
};

// `x`: the source codes in element order (rows * cols); `random`: one value per element
// (stochastic rounding) or empty.
Out quantize(const Spec& s, std::span<const std::uint32_t> x, std::span<const std::uint32_t> random);

}  // namespace numref::oracle::rq
