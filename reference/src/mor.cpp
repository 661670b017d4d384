// numref — MoR selection framework, tensor-level and sub-tensor MoR.   spec §25 – §27
#include "numref/mor.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

#include "numref/convert.hpp"

namespace numref {

std::string_view to_string(Reason r) {
  switch (r) {
    case Reason::accepted: return "accepted";
    case Reason::all_zero: return "all_zero";
    case Reason::exact: return "exact";
    case Reason::threshold: return "threshold";
    case Reason::not_lower: return "not_lower";
    case Reason::range: return "range";
    case Reason::nonfinite_input: return "nonfinite_input";
    case Reason::nonfinite_quant: return "nonfinite_quant";
    case Reason::custom: return "custom";
    case Reason::fallback: return "fallback";
    case Reason::not_evaluated: return "not_evaluated";
  }
  return "?";
}

std::string_view to_string(BlockType t) {
  switch (t) {
    case BlockType::f8e4m3fn: return "f8e4m3fn";
    case BlockType::f8e5m2: return "f8e5m2";
    case BlockType::bf16: return "bf16";
  }
  return "?";
}

std::string_view to_string(SubtensorRecipe r) { return r == SubtensorRecipe::three_way ? "subtensor3" : "subtensor2"; }

bool is_fp8_mor_rule(ScaleRule r) {
  const ScaleRuleInfo& i = rule_info(r);
  return i.kind != ScaleKind::nvfp4 && !i.int_range;
}

std::string fp8_mor_rule_names() {
  std::string s;
  for (const ScaleRuleInfo& r : kScaleRules)
    if (is_fp8_mor_rule(r.rule)) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

QuantizeSpec mor_quantize_spec(const Format& element, Partition p) {
  QuantizeSpec s;
  s.element = &element;
  s.rule = ScaleRule::gam;
  s.partition = p;
  s.group = Partition::tensor();
  s.amax = AmaxPolicy{AmaxNan::ignore, AmaxInf::ignore};
  s.policy = default_element_policy();
  s.wide = Policy{};
  s.apply = ScaleApply::rn32;
  s.dequant = DequantOp::divide;
  return s;
}

// ---- §25 context -----------------------------------------------------------------------------

namespace {
void check_refines(const BlockGrid& B, const TensorView& x, const QuantizeSpec& q, const std::string& name) {
  const BlockGrid qg(x.rows(), x.cols(), q.partition);
  const std::string err = check_groups(B, qg);
  if (!err.empty())
    throw std::invalid_argument("MoR: the partition " + to_string(q.partition) + " of type " + name +
                                " does not refine the selection partition: " + err);
}
}  // namespace

MorContext::MorContext(const TensorView& x, Partition B, std::vector<Representation> types, const Format& out,
                       Policy wide)
    : x_(x), grid_(x.rows(), x.cols(), B), types_(std::move(types)), out_(&out), wide_(wide) {
  if (types_.empty()) throw std::invalid_argument("MoR: at least one representation type is needed");
  if (types_.size() > 255) throw std::invalid_argument("MoR: at most 255 representation types");
  if (out.is_integer() || out.bits < 16)
    throw std::invalid_argument("MoR: the output format must be bf16, f16 or f32, not " + std::string(out.name));
  for (const Representation& t : types_)
    if (t.quant) check_refines(grid_, x_, *t.quant, t.name);
  evals_.resize(types_.size());
}

ErrorEvaluator* MorContext::evaluator(std::size_t i) {
  const Representation& t = types_.at(i);
  if (!t.quant) return nullptr;
  if (!evals_[i]) evals_[i] = std::make_unique<ErrorEvaluator>(x_, *t.quant, *out_);
  return evals_[i].get();
}

ErrorEvaluator& MorContext::extra(const QuantizeSpec& spec) {
  check_refines(grid_, x_, spec, "(reference)");
  extras_.push_back(std::make_unique<ErrorEvaluator>(x_, spec, *out_));
  return *extras_.back();
}

// ---- §26.1 / §27 metrics ---------------------------------------------------------------------

namespace {
ErrorEvaluator& quantized_type(MorContext& ctx, std::size_t type, const char* metric) {
  ErrorEvaluator* ev = ctx.evaluator(type);
  if (!ev)
    throw std::invalid_argument(std::string("MoR: the ") + metric + " metric needs a quantized type, but type " +
                                ctx.type(type).name + " is kept");
  return *ev;
}
}  // namespace

void MeanErrorMetric::prepare(MorContext& ctx, std::size_t type) {
  quantized_type(ctx, type, "mean-error");
  type_ = type;
  sums_.assign(ctx.blocks().count(), std::nullopt);
}

Verdict MeanErrorMetric::evaluate(MorContext& ctx, std::size_t b) {
  const ErrorSum es = ctx.evaluator(type_)->region(ctx.range(b));
  sums_[b] = es;
  if (es.nonfinite_input) return {false, Reason::nonfinite_input};
  if (es.nonfinite_quant) return {false, Reason::nonfinite_quant};
  const bool below = mean_below(es, t_);  // §23.2 (n = 0: mean := 0)
  if (es.n == 0) return {below, below ? Reason::all_zero : Reason::threshold};
  return {below, below ? Reason::accepted : Reason::threshold};
}

void LowerErrorMetric::prepare(MorContext& ctx, std::size_t type) {
  quantized_type(ctx, type, "lower-error");
  type_ = type;
  if (ref_type_)
    ref_ = &quantized_type(ctx, *ref_type_, "lower-error (reference)");
  else
    ref_ = &ctx.extra(*ref_spec_);
  sums_.assign(ctx.blocks().count(), std::nullopt);
  ref_sums_.assign(ctx.blocks().count(), std::nullopt);
}

Verdict LowerErrorMetric::evaluate(MorContext& ctx, std::size_t b) {
  const BlockRange r = ctx.range(b);
  const ErrorSum a = ctx.evaluator(type_)->region(r);
  const ErrorSum c = ref_->region(r);
  sums_[b] = a;
  ref_sums_[b] = c;
  if (a.nonfinite_input) return {false, Reason::nonfinite_input};
  if (a.nonfinite_quant) return {false, Reason::nonfinite_quant};
  if (a.n == 0) return {true, Reason::all_zero};                   // §27.3
  if (a.sum.is_zero()) return {true, Reason::exact};               // §27.3: nothing can do better
  if (c.nonfinite_quant) return {false, Reason::nonfinite_quant};  // §27.3: no comparison possible
  return a.sum.compare(c.sum) < 0 ? Verdict{true, Reason::accepted} : Verdict{false, Reason::not_lower};  // Eq. 3
}

void RangeMetric::prepare(MorContext& ctx, std::size_t type) {
  if (!t_) {
    const Representation& rep = ctx.type(type);
    if (!rep.quant) throw std::invalid_argument("MoR: the range metric needs a format (type " + rep.name + " is kept)");
    t_ = rep.quant->element;
  }
  if (t_->is_integer() || !t_->has_zero)
    throw std::invalid_argument("MoR: the range metric needs a floating-point format, not " + std::string(t_->name));
  ranges_.assign(ctx.blocks().count(), std::nullopt);
}

Verdict RangeMetric::evaluate(MorContext& ctx, std::size_t b) {
  const MagnitudeRange m = magnitude_range(ctx.tensor(), ctx.range(b));
  ranges_[b] = m;
  if (m.nonfinite) return {false, Reason::nonfinite_input};
  if (m.nonzero == 0) return {true, Reason::all_zero};
  return fits_normal_range(m, *t_) ? Verdict{true, Reason::accepted} : Verdict{false, Reason::range};  // Eq. 4
}

// ---- §25.2 the framework ---------------------------------------------------------------------

Selection mor_select(MorContext& ctx, std::span<Metric* const> metrics, bool want_output) {
  const std::size_t k = ctx.type_count();
  if (metrics.size() != k - 1)
    throw std::invalid_argument("MoR: " + std::to_string(k) + " types need " + std::to_string(k - 1) +
                                " metrics, got " + std::to_string(metrics.size()));
  for (std::size_t i = 0; i + 1 < k; ++i) {
    if (!metrics[i]) throw std::invalid_argument("MoR: metric " + std::to_string(i + 1) + " is null");
    metrics[i]->prepare(ctx, i);
  }
  const TensorView& x = ctx.tensor();
  const std::size_t nb = ctx.blocks().count();
  Selection s;
  s.choice.assign(nb, 0);
  s.verdicts.assign(nb * (k - 1), Verdict{});
  s.blocks_per_type.assign(k, 0);
  s.elements_per_type.assign(k, 0);
  std::optional<Converter> keep;
  if (want_output) s.output.assign(x.size(), 0);
  for (std::size_t b = 0; b < nb; ++b) {
    const BlockRange r = ctx.range(b);
    std::size_t chosen = k - 1;
    for (std::size_t i = 0; i + 1 < k; ++i) {
      Verdict v;
      ErrorEvaluator* ev = ctx.evaluator(i);
      const ErrorSum es = ev ? ev->region(r) : ErrorSum{};
      if (ev && es.nonfinite_input)
        v = {false, Reason::nonfinite_input};  // §25.2 rule 1
      else if (ev && es.nonfinite_quant)
        v = {false, Reason::nonfinite_quant};  // §25.2 rule 2
      else
        v = metrics[i]->evaluate(ctx, b);
      s.verdicts[b * (k - 1) + i] = v;
      if (v.accept) {
        chosen = i;
        break;
      }
    }
    s.choice[b] = static_cast<std::uint8_t>(chosen);
    ++s.blocks_per_type[chosen];
    s.elements_per_type[chosen] += r.size();
    if (!want_output) continue;
    if (ErrorEvaluator* ev = ctx.evaluator(chosen)) {
      for (std::size_t qb : ev->blocks_in(r)) ev->fake_block(qb, s.output);
    } else {
      if (!keep) keep.emplace(x.format(), ctx.output_format(), ctx.wide_policy());
      for (std::size_t i = r.r0; i < r.r1; ++i)
        for (std::size_t j = r.c0; j < r.c1; ++j) s.output[i * x.cols() + j] = (*keep)(x.code(i, j)).bits;
    }
  }
  return s;
}

// ---- §26 tensor-level MoR --------------------------------------------------------------------

namespace {
// §22 every block's error sum of `ev`, evaluated by `run`'s ranges of block rows, each in an
// evaluator of its own (ev.fresh(): the same tensor, amaxes and scales), merged into `ev`.
void evaluate_by_ranges(ErrorEvaluator& ev, const RangeRunner& run) {
  if (!run) return;
  const BlockGrid& g = ev.grid();
  std::mutex mu;
  run(g.grid_rows(), [&](std::size_t I0, std::size_t I1) {
    if (I0 >= I1) return;
    const BlockRange r{I0 * g.block_rows(), std::min(I1 * g.block_rows(), g.rows()), 0, g.cols()};
    ErrorEvaluator local = ev.fresh();
    (void)local.region(r);
    const std::vector<std::size_t> blocks = local.blocks_in(r);
    const std::lock_guard<std::mutex> lock(mu);
    ev.adopt(local, blocks);
  });
}
}  // namespace

TensorMorResult tensor_mor(const TensorView& x, const TensorMorSpec& spec, const RangeRunner& run) {
  QuantizeSpec q = spec.quant;
  q.partition = spec.scaling;
  MorContext ctx(
      x, Partition::tensor(),
      {Representation{std::string(q.element->name), q}, Representation{std::string(spec.fake->name), std::nullopt}},
      *spec.fake);
  evaluate_by_ranges(*ctx.evaluator(0), run);
  MeanErrorMetric m(spec.threshold);
  Metric* ms[] = {&m};
  const Selection s = mor_select(ctx, ms, false);
  TensorMorResult r;
  r.quantized = s.choice[0] == 0;
  r.verdict = s.verdicts[0];
  ErrorEvaluator& ev = *ctx.evaluator(0);
  r.error = ev.total();
  r.mean = mean_f32(r.error);
  r.scales = ev.meta();
  r.block_amax = ev.block_amax();
  return r;
}

// ---- §27 sub-tensor MoR ----------------------------------------------------------------------

SubtensorMorResult subtensor_mor(const TensorView& x, const SubtensorMorSpec& spec, const RangeRunner& run) {
  QuantizeSpec e4 = spec.e4m3, e5 = spec.e5m2;
  e4.partition = spec.blocks;
  e5.partition = spec.blocks;
  const bool three = spec.recipe == SubtensorRecipe::three_way;
  const std::string keep_name(spec.fake->name);
  std::vector<Representation> types;
  types.push_back({std::string(e4.element->name), e4});
  if (three) types.push_back({std::string(e5.element->name), e5});
  types.push_back({keep_name, std::nullopt});
  MorContext ctx(x, spec.blocks, std::move(types), *spec.fake);
  for (std::size_t i = 0; i + 1 < ctx.type_count(); ++i) evaluate_by_ranges(*ctx.evaluator(i), run);
  LowerErrorMetric eq3_three(std::size_t{1}), eq3_two(e5);
  RangeMetric eq4;
  std::vector<Metric*> ms;
  if (three)
    ms = {&eq3_three, &eq4};
  else
    ms = {&eq3_two};
  Selection s = mor_select(ctx, ms, true);
  const std::size_t nb = ctx.blocks().count(), k = ctx.type_count();
  SubtensorMorResult r;
  r.type.resize(nb);
  r.eq3.resize(nb);
  r.eq4.assign(nb, Verdict{});
  r.e4m3_sum.resize(nb);
  r.e5m2_sum.resize(nb);
  ErrorEvaluator& ev4 = *ctx.evaluator(0);
  ErrorEvaluator& ev5 = three ? *ctx.evaluator(1) : *eq3_two.reference();
  for (std::size_t b = 0; b < nb; ++b) {
    const std::uint8_t c = s.choice[b];
    const BlockType t = c == 0 ? BlockType::f8e4m3fn : (c + 1u == k ? BlockType::bf16 : BlockType::f8e5m2);
    r.type[b] = t;
    r.eq3[b] = s.verdicts[b * (k - 1)];
    if (three) r.eq4[b] = s.verdicts[b * (k - 1) + 1];
    // The partition is the same for B and both formats: block b of each evaluator is block b of B.
    r.e4m3_sum[b] = ev4.block(b);
    r.e5m2_sum[b] = ev5.block(b);
    const auto ti = static_cast<std::size_t>(t);
    ++r.blocks_of[ti];
    r.elements_of[ti] += ctx.range(b).size();
  }
  r.fake = std::move(s.output);
  r.e4m3_scales = ev4.meta();
  r.e5m2_scales = ev5.meta();
  return r;
}

}  // namespace numref
