// numref — Mixture of Representations: the selection framework (MoR Algorithm 2), tensor-level
// MoR (MoR §3.1) and sub-tensor MoR (MoR §3.2).                       spec §25 – §27
//
//   foreach block b of B:                          (§25.2)
//     for i = 1 .. k:
//       if i = k:                     b -> T_k     (the fallback, no metric)
//       elif T_i quantizes and b holds NaN/Inf:          skip T_i (nonfinite_input)
//       elif T_i quantizes and Q_i(x) is not finite:     skip T_i (nonfinite_quant)
//       elif M_i(B, b, A):            b -> T_i
//
// Tensor-level MoR (§26) is this framework with B = the whole tensor, types
// [f8e4m3fn, bf16] and M_1 = "mean relative error over the non-zero elements < threshold"
// (Eq. 2), where E4M3 is quantized with GAM over its own scaling partition (128 x 128 blocks,
// the tensor, or one block per channel). Sub-tensor MoR (§27) is the framework with B = 128 x 128
// blocks, types [f8e4m3fn, f8e5m2, bf16] and M_1 = Eq. 3, M_2 = Eq. 4 (three-way), or types
// [f8e4m3fn, bf16] and M_1 = Eq. 3 with E5M2 as a benchmark only (two-way).
//
// Custom metrics plug in by deriving from Metric (or wrapping a std::function in
// FunctionMetric); custom representations are any QuantizeSpec.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numref/metrics.hpp"
#include "numref/quantize.hpp"
#include "numref/tensor.hpp"

namespace numref {

// §25.3 Why a type was accepted or rejected for a block.
enum class Reason : std::uint8_t {
  accepted,         // the metric's comparison held
  all_zero,         // accepted: the block has no non-zero element (§26.2, §27.3)
  exact,            // accepted: the type reproduces every element of the block (Σ e = 0, §27.3)
  threshold,        // rejected: mean relative error >= threshold (Eq. 2)
  not_lower,        // rejected: Σ e under T >= Σ e under the reference (Eq. 3)
  range,            // rejected: max / min >= max_finite / 2^emin (Eq. 4)
  nonfinite_input,  // rejected: the block holds a NaN or ±Inf element (§25.2)
  nonfinite_quant,  // rejected: Q(x) or e(x) is NaN / ±Inf for a finite x (§25.2)
  custom,           // rejected by a custom metric
  fallback,         // the last type: chosen without a metric (§25.2)
  not_evaluated,    // not reached: an earlier type was accepted
};
std::string_view to_string(Reason r);

struct Verdict {
  bool accept = false;
  Reason reason = Reason::not_evaluated;
  friend bool operator==(const Verdict&, const Verdict&) = default;
};

// §25.1 A representation type T_i: quantized (fake-quant, §19.6, with `quant`) or kept
// (`quant` empty: the block is converted to the output format under the wide policy — the
// identity for a BF16 source and a BF16 output).
struct Representation {
  std::string name;
  std::optional<QuantizeSpec> quant;
};

// §26.1 / §27.1 The quantization MoR uses for a type: `element`, rule gam, one group (the
// tensor, MoR §2), partition p, amax policies `ignore` for NaN and ±Inf (a non-finite element
// rejects its block's or tensor's quantized types anyway (§25.2); ignoring it keeps the scales
// of the other blocks what they would be without it), the default element policy (ocp,
// saturating, §19.1), rn32 application and division for the dequantization (§19.2, §19.3).
QuantizeSpec mor_quantize_spec(const Format& element, Partition p = Partition::blocks(128, 128));

// §26.1 The scale rules FP8 MoR may use in place of gam (MoR §4.1.2's ablations): every rule of
// kScaleRules but NVFP4's and those for integer elements. The names, joined by ", ", for messages.
bool is_fp8_mor_rule(ScaleRule r);
std::string fp8_mor_rule_names();

// §25 The state shared by one selection (it keeps a view of x: the data must outlive it): the tensor, the partition B, the types, the output
// format and one ErrorEvaluator per quantized type (built on first use; metrics and the
// framework share them, so each block's errors are computed once). Checks (std::invalid_argument):
// at least one type; every quantized type's partition refines B (each block of B is a union of
// whole quantization blocks, §12.4); an output format of 16 or 32 bits.
class MorContext {
 public:
  MorContext(const TensorView& x, Partition B, std::vector<Representation> types,
             const Format& out = format(FormatId::bf16), Policy wide = Policy{});
  const TensorView& tensor() const { return x_; }
  const BlockGrid& blocks() const { return grid_; }
  BlockRange range(std::size_t b) const { return grid_.range(b); }
  std::size_t type_count() const { return types_.size(); }
  const Representation& type(std::size_t i) const { return types_.at(i); }
  const Format& output_format() const { return *out_; }
  const Policy& wide_policy() const { return wide_; }
  // The evaluator of type i (nullptr for a kept type).
  ErrorEvaluator* evaluator(std::size_t i);
  // An evaluator for a quantization that is not one of the types (the E5M2 benchmark of the
  // two-way recipe); owned by the context, valid as long as it lives.
  ErrorEvaluator& extra(const QuantizeSpec& spec);

 private:
  TensorView x_;
  BlockGrid grid_;
  std::vector<Representation> types_;
  const Format* out_;
  Policy wide_;
  std::vector<std::unique_ptr<ErrorEvaluator>> evals_;
  std::vector<std::unique_ptr<ErrorEvaluator>> extras_;
};

// §25.2 An acceptance metric M_i(B, b, A).
class Metric {
 public:
  virtual ~Metric() = default;
  virtual std::string name() const = 0;
  // Once per tensor, before any evaluate(): `type` is the index i of the type it accepts. The
  // whole-tensor state A (GAM group mantissas, ...) lives in the context's evaluators.
  virtual void prepare(MorContext& ctx, std::size_t type) = 0;
  // M_i on block b of B. Called only for blocks the framework rules let through (§25.2).
  virtual Verdict evaluate(MorContext& ctx, std::size_t b) = 0;
};

// §26.1 MoR Eq. 2: the mean relative error of the type's fake-quant over the non-zero elements
// of the block is below the threshold (exact comparison, §23.2); a block with no non-zero
// element is accepted (reason all_zero) whenever the threshold is positive (mean := 0).
class MeanErrorMetric : public Metric {
 public:
  explicit MeanErrorMetric(Threshold t = {}) : t_(t) {}
  std::string name() const override { return "mean relative error < " + t_.to_string(); }
  void prepare(MorContext& ctx, std::size_t type) override;
  Verdict evaluate(MorContext& ctx, std::size_t b) override;
  const Threshold& threshold() const { return t_; }
  // The error sum of each evaluated block of B (empty for blocks not evaluated).
  const std::vector<std::optional<ErrorSum>>& sums() const { return sums_; }

 private:
  Threshold t_;
  std::size_t type_ = 0;
  std::vector<std::optional<ErrorSum>> sums_;
};

// §27.1 MoR Eq. 3: Σ e under this type < Σ e under a reference quantization (another type, or a
// benchmark spec that is never selected), both over the block's non-zero elements, exactly
// (§22.1). §27.3: a block this type reproduces exactly (Σ e = 0) is accepted — reason all_zero
// when it has no non-zero element, exact otherwise — even where the reference is exact too.
class LowerErrorMetric : public Metric {
 public:
  explicit LowerErrorMetric(std::size_t reference_type) : ref_type_(reference_type) {}
  explicit LowerErrorMetric(QuantizeSpec reference) : ref_spec_(std::move(reference)) {}
  std::string name() const override { return "sum of relative errors below the reference's"; }
  void prepare(MorContext& ctx, std::size_t type) override;
  Verdict evaluate(MorContext& ctx, std::size_t b) override;
  const std::vector<std::optional<ErrorSum>>& sums() const { return sums_; }
  const std::vector<std::optional<ErrorSum>>& reference_sums() const { return ref_sums_; }
  ErrorEvaluator* reference() const { return ref_; }

 private:
  std::optional<std::size_t> ref_type_;
  std::optional<QuantizeSpec> ref_spec_;
  std::size_t type_ = 0;
  ErrorEvaluator* ref_ = nullptr;
  std::vector<std::optional<ErrorSum>> sums_, ref_sums_;
};

// §27.2 MoR Eq. 4: the block's dynamic range fits the normal range of `t` (default: the
// type's element format): max · 2^emin(t) < max_finite(t) · min over the non-zero magnitudes.
class RangeMetric : public Metric {
 public:
  RangeMetric() = default;
  explicit RangeMetric(const Format& t) : t_(&t) {}
  std::string name() const override { return "dynamic range within the normal range"; }
  void prepare(MorContext& ctx, std::size_t type) override;
  Verdict evaluate(MorContext& ctx, std::size_t b) override;
  const std::vector<std::optional<MagnitudeRange>>& ranges() const { return ranges_; }

 private:
  const Format* t_ = nullptr;
  std::vector<std::optional<MagnitudeRange>> ranges_;
};

// §25.4 A custom metric from a function (plus an optional preparation).
class FunctionMetric : public Metric {
 public:
  using Fn = std::function<Verdict(MorContext&, std::size_t type, std::size_t b)>;
  using Prep = std::function<void(MorContext&, std::size_t type)>;
  FunctionMetric(std::string name, Fn fn, Prep prep = {})
      : name_(std::move(name)), fn_(std::move(fn)), prep_(std::move(prep)) {}
  std::string name() const override { return name_; }
  void prepare(MorContext& ctx, std::size_t type) override {
    type_ = type;
    if (prep_) prep_(ctx, type);
  }
  Verdict evaluate(MorContext& ctx, std::size_t b) override { return fn_(ctx, type_, b); }

 private:
  std::string name_;
  Fn fn_;
  Prep prep_;
  std::size_t type_ = 0;
};

// §25.2 The result of a selection.
struct Selection {
  std::vector<std::uint8_t> choice;            // per block of B (block-row-major): the chosen type index
  std::vector<Verdict> verdicts;               // per block, (k − 1) entries: verdicts[b * (k−1) + i] for M_(i+1)
  std::vector<std::uint64_t> blocks_per_type;  // k entries
  std::vector<std::uint64_t> elements_per_type;
  std::vector<std::uint32_t> output;  // with want_output: the fake-quantized tensor, element order,
                                      // codes of the context's output format
};
// §25.2 MoR Algorithm 2. `metrics` has k − 1 entries (std::invalid_argument otherwise); each
// is prepared once, then evaluated block by block. Without want_output the selection streams:
// memory beyond the input is O(number of blocks) (§26.3).
Selection mor_select(MorContext& ctx, std::span<Metric* const> metrics, bool want_output = true);

// ---- §26 tensor-level MoR ------------------------------------------------------------------

struct TensorMorSpec {
  Partition scaling = Partition::blocks(128, 128);  // per-block (128 x 128, 64 x 64), tensor, rows, cols
  Threshold threshold;                              // 4.5 % = 9/200
  QuantizeSpec quant = mor_quantize_spec(format(FormatId::f8e4m3fn));  // its partition is replaced by `scaling`
  const Format* fake = &format(FormatId::bf16);                        // the format of Q(x) (§21.1)
};
struct TensorMorResult {
  bool quantized = false;  // true: f8e4m3fn; false: fall back to bf16
  Verdict verdict;
  ErrorSum error;          // §22.3 over the whole tensor
  std::uint32_t mean = 0;  // §23.1 RN32 of the exact mean (NaN when not finite)
  ScaleMeta scales;        // the E4M3 scales used (per block of `scaling`; GAM: + group mantissa)
  std::vector<Amax> block_amax;
};
// A caller's way of running fn(lo, hi) over ranges that cover [0, n) exactly once, possibly at
// once on several threads (the CLI and Python pass cpu-fast's parallel.hpp); empty: the calling
// thread alone. The reference computes each range's blocks from its own inputs only, so the
// result is the same for every split.
using RangeRunner = std::function<void(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn)>;

// §26 Tensor-level MoR. Streams: O(number of scaling blocks) memory beyond the input. With `run`,
// the error sums of the quantization blocks are evaluated by ranges of block rows, each range in
// an ErrorEvaluator of its own (ErrorEvaluator::fresh: the same amaxes and scales), then merged.
TensorMorResult tensor_mor(const TensorView& x, const TensorMorSpec& spec = {}, const RangeRunner& run = {});

// ---- §27 sub-tensor MoR --------------------------------------------------------------------

enum class SubtensorRecipe : std::uint8_t { three_way, two_way };
// §27.4 The per-block type map: 0 = f8e4m3fn, 1 = f8e5m2, 2 = bf16 (the kept source).
enum class BlockType : std::uint8_t { f8e4m3fn = 0, f8e5m2 = 1, bf16 = 2 };
std::string_view to_string(BlockType t);
std::string_view to_string(SubtensorRecipe r);

struct SubtensorMorSpec {
  SubtensorRecipe recipe = SubtensorRecipe::three_way;
  Partition blocks = Partition::blocks(128, 128);
  QuantizeSpec e4m3 = mor_quantize_spec(format(FormatId::f8e4m3fn));  // partitions replaced by `blocks`
  QuantizeSpec e5m2 = mor_quantize_spec(format(FormatId::f8e5m2));
  const Format* fake = &format(FormatId::bf16);  // Q(x) and the output tensor
};
struct SubtensorMorResult {
  std::vector<BlockType> type;                              // per block, block-row-major
  std::vector<Verdict> eq3, eq4;                            // per block (eq4: three-way only; not_evaluated otherwise)
  std::vector<ErrorSum> e4m3_sum, e5m2_sum;                 // per block (Eq. 3 operands; evaluated for every block)
  std::vector<std::uint32_t> fake;                          // the output tensor (codes of spec.fake), element order
  std::array<std::uint64_t, 3> blocks_of{}, elements_of{};  // by BlockType
  ScaleMeta e4m3_scales, e5m2_scales;                       // every block's scale under each format
};
// §27 Sub-tensor MoR. With `run`, the types' error sums by ranges of block rows as tensor_mor
// (the two-way recipe's E5M2 benchmark stays on the calling thread).
SubtensorMorResult subtensor_mor(const TensorView& x, const SubtensorMorSpec& spec = {}, const RangeRunner& run = {});

}  // namespace numref
