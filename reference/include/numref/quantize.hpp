// numref — quantize, dequantize and fake-quant of a 2-D tensor.       spec §19
//
// quantize(x, spec) = for every block b of spec.partition (§12):
//   1. amax_b (§13), then the block scale of spec.rule (§14–§18, §20);
//   2. for every element x of b, with its random value r (stochastic rounding only):
//        rn32 (default):  y = RN32(x · f) or RN32(x / f), then code = convert(y, f32 -> elem,
//                          spec.policy, r)                                   (two roundings)
//        fused:           code = the exact x · f (or x / f) rounded once into elem (§4, §5)
//      where f is the block's quantize factor (§19.2 table);
// dequantize(code) = RN32(v · d) or RN32(v / d), v the exact value of the code (§19.3);
// fake_quantize(x) = the dequantized binary32 value converted to BF16 (or another wide
// format) with spec.wide — MoR Figure 4.
//
// Output layout (§19.4), the layout every backend reproduces:
//   codes   one byte per element (sub-byte formats in the low bits, §2.4), in the element
//           order of the view (§12.1: row-major of the view, i * cols + j);
//   scales  one stored scale code per block in block-row-major order (§12.2), in
//           scale_format(rule): f32 codes, E8M0 codes (MX, GAM) or E4M3 codes (NVFP4);
//   GAM     plus one 23-bit group mantissa per group, group-row-major;
//   NVFP4   plus the tensor amax (binary32 code).
// Random bits: one value per element, in element order (random[i * cols + j]), whatever the
// partition, so results do not depend on how a backend walks the blocks.
//
// Memory: the Quantizer holds O(number of blocks) state (block amaxes, scales, per-block
// counts); every per-block function streams over one block.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numref/exact.hpp"
#include "numref/gam.hpp"
#include "numref/partition.hpp"
#include "numref/policy.hpp"
#include "numref/scale.hpp"
#include "numref/tensor.hpp"

namespace numref {

// §19.2 ScaleApply (rn32 | fused) is defined with the scale-rule table in scale.hpp.
// §19.3 How a multiplying scale S (rules whose row has dequant_multiplier: amax, pow2, gam) is undone.
enum class DequantOp : std::uint8_t {
  divide,      // default: RN32(v / S), one rounding
  reciprocal,  // RN32(v * RN32(1 / S)): multiply by the binary32 reciprocal
};
std::string_view to_string(ScaleApply a);
std::string_view to_string(DequantOp d);
std::optional<ScaleApply> parse_scale_apply(std::string_view s);
std::optional<DequantOp> parse_dequant_op(std::string_view s);

// §19.1 The default element-conversion policy: the `ocp` profile for narrow targets with
// overflow=saturate (the MX specification clamps, [MX] §6.3; MoR and [MD] saturate).
Policy default_element_policy();

struct QuantizeSpec {
  const Format* element = &format(FormatId::f8e4m3fn);  // target element format (<= 8 bits)
  Partition partition = Partition::tensor();            // §12.2 blocks
  Partition group = Partition::tensor();                // §17 GAM groups (GAM only)
  ScaleRule rule = ScaleRule::amax;
  AmaxPolicy amax;                           // §13.2
  Policy policy = default_element_policy();  // §19.2 element conversion
  Policy wide = Policy{};                    // §19.3 code -> f32 of NaN/Inf codes,
                                             //       and the fake-quant output (ocp wide)
  std::optional<ScaleApply> apply;           // default: the rule's row (fused for int8 rules)
  DequantOp dequant = DequantOp::divide;     // §19.3
  std::optional<Exact> q_max;                // §14.4 default: rule_qmax(rule, element)
                                             //       (max finite; int8-127.5: 127.5)
  RecipeKnobs recipe;                        // §19.8 library recipe knobs (default: none)
  const Format* source = nullptr;            // the input's format: needed by §14.5
                                             // scale_round=source (quantize() and
                                             // fake_quantize() set it from x)
};

// §17.1 The groups of `spec`'s scale: spec.group for a rule with group mantissas
// (has_group_mantissa: one mantissa per group), else the whole tensor (no group output).
inline Partition scale_groups(const QuantizeSpec& spec) {
  return has_group_mantissa(spec.rule) ? spec.group : Partition::tensor();
}

// §10.4 The quantization of a profile with a recipe: its rule, partition and recipe knobs,
// its narrow policy for the elements and its wide policy (§19.1). Throws
// std::invalid_argument if the profile has no recipe.
QuantizeSpec recipe_spec(const Profile& p, const Format& element);

// §10.4, §19.8 The options of `numref quantize` and of Python's numref.quantize() that fix the
// rule, partitions, recipe knobs, q_max, amax policies, application and dequantization (the
// element and wide policies are the caller's). Unset options take the recipe profile's values
// (a profile with a recipe) or numref's defaults (rule amax, partition and group tensor); a
// scale, recipe or amax option that differs from a recipe profile's is an error naming both.
struct QuantizeOptions {
  std::string profile = "ocp";
  std::optional<std::string> partition, group, scale, recipe, amax_nan, amax_inf, apply, dequant;
  std::optional<Exact> q_max;  // §14.4, checked here (check_qmax)
};
// `opt` spells an option's key ("q_max") as its interface does ("--q-max" or "q_max") in the
// messages. Throws std::invalid_argument with one message naming the option and the problem.
using OptionSpelling = std::string (*)(std::string_view key);
QuantizeSpec quantize_spec(const Format& element, const QuantizeOptions& o, OptionSpelling opt);

// §19.2 The factor of one block: the element is multiplied (divide = false) or divided
// (divide = true) by `value`, a positive dyadic value.
struct Factor {
  bool divide = false;
  Exact value{false, 1, 0, false};
  bool infinite = false;  // §18.4 f_b = +Inf (d_b · t_amax beyond binary32): `value` unused
};
// §19.2 / §19.3 Everything known about one block.
// §13.6 / §13.7 What the elements of a block whose amax is not finite become when a recipe
// does not poison it.
enum class ElemAction : std::uint8_t {
  scale,  // the quantize factor applies (every finite-amax block)
  zero,   // multiplied by 0 / divided by +Inf: finite -> signed zero, ±Inf -> NaN (the x86
          // default NaN 0xFFC00000, what Inf * 0 and Inf / Inf give there), NaN -> itself
  inf,    // §14.6 divided by 0: non-zero -> ±Inf, ±0 -> NaN (the x86 default NaN, 0 / 0), NaN -> itself
};
struct BlockScale {
  Amax amax;                 // §13
  std::uint32_t stored = 0;  // the stored scale code (scale_format(rule))
  bool poisoned = false;     // §13.3 NaN scale: codes are NaN, dequantized values NaN
  ElemAction action = ElemAction::scale;
  Factor quant;                             // §19.2
  Factor dequant;                           // §19.3
  std::optional<std::uint32_t> poison_nan;  // §18.5 the binary32 NaN the elements of a poisoned block convert
  bool nan_dequant = false;                 // §18.5 codes kept, dequantized values NaN (t_amax not finite)
};

// §19.5 Element counts of one block (or a tensor).
struct QuantizeStats {
  std::uint64_t saturated = 0;  // finite x whose conversion overflowed (int8: went out of range)
  std::uint64_t flushed = 0;    // finite non-zero x whose code is a zero
  std::uint64_t nan = 0;        // elements quantized as NaN (x NaN, or a poisoned block)
  std::uint64_t inf = 0;        // ±Inf elements of non-poisoned blocks
  QuantizeStats& operator+=(const QuantizeStats& o) {
    saturated += o.saturated;
    flushed += o.flushed;
    nan += o.nan;
    inf += o.inf;
    return *this;
  }
  friend bool operator==(const QuantizeStats&, const QuantizeStats&) = default;
};

// §19.4 The scale metadata: with the codes, everything dequantize() needs.
struct ScaleMeta {
  ScaleRule rule = ScaleRule::amax;
  const Format* element = nullptr;
  std::size_t rows = 0, cols = 0;
  Partition partition, group;
  Exact q_max{false, 0, 0, false};
  DequantOp dequant = DequantOp::divide;
  RecipeKnobs recipe;  // §18.5 / §18.6 nvfp4_scale picks the dequantize factor (the other knobs: none)
  Policy wide;
  std::vector<std::uint32_t> scales;          // per block, block-row-major (scale_format(rule))
  std::vector<std::uint32_t> group_mantissa;  // GAM: per group, group-row-major
  std::uint32_t tensor_amax = 0;              // NVFP4: tensor amax (binary32 code)
};

struct QuantizeResult {
  ScaleMeta meta;
  std::vector<Amax> block_amax;            // per block (§13), block-row-major
  std::vector<QuantizeStats> block_stats;  // per block
  QuantizeStats total;
};

// §19 The streaming interface: one object per (spec, shape); validates once.
class Quantizer {
 public:
  // Throws std::invalid_argument naming the problem: element format not a signed <= 8-bit
  // format with a zero, int8 rule without int8 elements, bad q_max, policy rejected by
  // validate(), fused with sr_variant=add or daz=1, groups incompatible with blocks, empty shape.
  Quantizer(const QuantizeSpec& spec, std::size_t rows, std::size_t cols);

  const BlockGrid& grid() const { return grid_; }
  const BlockGrid& group_grid() const { return ggrid_; }
  const QuantizeSpec& spec() const { return spec_; }
  ScaleApply apply() const { return apply_; }
  const Exact& q_max() const { return qmax_; }
  bool uses_random() const { return sr_; }

  // Pass 1 (§13): the amax of block b.
  Amax amax(const TensorView& x, std::size_t b) const;
  // Rule context from all block amaxes (GAM group mantissas §17.1, NVFP4 tensor amax §18.1).
  // Must be called once before block_scale() for the gam and nvfp4 rules.
  void prepare(std::span<const Amax> block_amax);
  const std::vector<GamGroup>& groups() const { return groups_; }
  Amax tensor_amax() const { return tensor_amax_; }
  // §14–§18, §20 The scale of block b with amax a.
  BlockScale block_scale(std::size_t b, Amax a) const;
  // Pass 2 (§19.2): writes the codes of block b into `codes` (the whole tensor's code array,
  // element order) and returns the block's counts. `random` is empty or has one value per
  // element of the tensor (element order).
  QuantizeStats quantize_block(const TensorView& x, std::size_t b, const BlockScale& s, std::span<std::uint8_t> codes,
                               std::span<const std::uint32_t> random) const;
  // §19.6 fake-quant of block b: quantize, dequantize and convert to `out` (spec.wide),
  // element by element, into `dst` (codes of `out`, element order).
  QuantizeStats fake_quantize_block(const TensorView& x, std::size_t b, const BlockScale& s, const Format& out,
                                    std::span<std::uint32_t> dst, std::span<const std::uint32_t> random) const;
  // The metadata of a finished quantization (scales of every block).
  ScaleMeta meta(std::span<const BlockScale> scales) const;
  // §19 (speed only) quantize_block() for every block, memoized: for sources of at most 16
  // bits without stochastic rounding an element's code and counts are a function of its
  // source code and the block's quantize factor, so the factors shared by at least 2^bits
  // elements (the 16 most frequent) get a table of that function over every source code,
  // built by the same per-element code. Identical results (tests compare); O(1) extra memory.
  // Only blocks [first, last) are quantized (their stats set, the others' left zero), so that
  // callers may share the blocks among threads (`numref quantize --threads`).
  std::vector<QuantizeStats> quantize_all(const TensorView& x, std::span<const BlockScale> scales,
                                          std::span<std::uint8_t> codes, std::span<const std::uint32_t> random,
                                          std::size_t first = 0, std::size_t last = SIZE_MAX) const;

 private:
  void check_input(const TensorView& x, std::span<const std::uint32_t> random) const;
  BlockScale torchao_nvfp4_scale(BlockScale& s, Amax a) const;  // §18.5 / §18.6
  struct Engines;                                               // the conversion objects, built once (quantize.cpp)
  QuantizeSpec spec_;
  BlockGrid grid_, ggrid_;
  ScaleApply apply_;
  Exact qmax_;
  bool sr_;
  std::vector<GamGroup> groups_;
  Amax tensor_amax_;
  std::uint32_t nvfp4_s_enc_ = kF32One;
  bool prepared_ = false;
  std::shared_ptr<const Engines> eng_;
};

// §19 Whole-tensor quantize: codes.size() must be x.size(); random as in quantize_block.
QuantizeResult quantize(const TensorView& x, const QuantizeSpec& spec, std::span<std::uint8_t> codes,
                        std::span<const std::uint32_t> random = {});
// §19.3 The dequantize factor of block b, from the stored metadata only.
Factor dequant_factor(const ScaleMeta& m, std::size_t b);
bool block_poisoned(const ScaleMeta& m, std::size_t b);
// §17.1 / §18.1 The tensor-level inputs dequantize needs besides the scales (the row's
// tensor_output), as a backend receives them: throws std::invalid_argument naming the rule and
// the missing input ("gam needs the group mantissas", "nvfp4 needs the tensor amax").
void check_tensor_inputs(ScaleRule rule, const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax);
// §19.3 Dequantize: out[i] = binary32 code of the dequantized element i (element order).
void dequantize(std::span<const std::uint8_t> codes, const ScaleMeta& m, std::span<std::uint32_t> out);
// §19.6 Fake-quant: quantize, dequantize and convert to `out_format` (default bf16) with
// spec.wide; dst gets codes of out_format in element order. Returns the counts.
QuantizeStats fake_quantize(const TensorView& x, const QuantizeSpec& spec, const Format& out_format,
                            std::span<std::uint32_t> dst, std::span<const std::uint32_t> random = {});

}  // namespace numref
