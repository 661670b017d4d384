// numref — quantize, dequantize and fake-quant of a 2-D tensor.        spec §19 (and §20)
#include "numref/quantize.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "numref/convert.hpp"

namespace numref {

using detail::bit_length;

std::string_view to_string(ScaleApply a) { return a == ScaleApply::rn32 ? "rn32" : "fused"; }
std::string_view to_string(DequantOp d) { return d == DequantOp::divide ? "divide" : "reciprocal"; }
std::optional<ScaleApply> parse_scale_apply(std::string_view s) {
  if (s == "rn32") return ScaleApply::rn32;
  if (s == "fused") return ScaleApply::fused;
  return std::nullopt;
}
std::optional<DequantOp> parse_dequant_op(std::string_view s) {
  if (s == "divide") return DequantOp::divide;
  if (s == "reciprocal") return DequantOp::reciprocal;
  return std::nullopt;
}

Policy default_element_policy() {
  Policy p = profile(ProfileId::ocp).narrow;
  p.overflow = Overflow::saturate;
  return p;
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("quantize: " + what); }

// §13.6 The NaN that x86 SSE / AVX produce for Inf * 0 and Inf / Inf (the "default NaN":
// negative, quiet): torch's CPU kernels hand it to the element cast.
constexpr std::uint32_t kF32DefaultNaNx86 = 0xFFC00000u;

// §18.5 the tensor scale p of nvfp4_scale=decode; none for =block (and for =encode, which has S_enc).
// (Its NaN for a NaN t_amax depends on the source format; a dequantize, which has no source, never
// reads it: the block is poisoned.)
std::optional<std::uint32_t> torchao_tensor_scale(const RecipeKnobs& rk, Amax t, const Exact& q_max,
                                                  const Format* source = nullptr) {
  if (rk.nvfp4_scale != NvScale::decode) return std::nullopt;
  return nvfp4_decode_tensor_scale(t, q_max, source == nullptr || source->id == FormatId::f32);
}

// §13.3 A stored scale that is not a finite value of the rule's scale format (§19.4).
bool is_poisoned_code(ScaleRule rule, std::uint32_t stored) {
  switch (scale_kind(rule)) {
    case ScaleKind::mx:
    case ScaleKind::gam: return stored == 0xFFu;  // the E8M0 NaN
    case ScaleKind::nvfp4: return decode(stored, format(FormatId::f8e4m3fn)).cls == Class::nan;
    case ScaleKind::fp32_quotient:
    case ScaleKind::pow2:
      // §13.6 inf_block=zero_scale stores S = 0: v / 0 of a zero or NaN code is NaN
      return !f32_is_finite(stored) || (stored & 0x7FFFFFFFu) == 0;
    case ScaleKind::fp32_recip:
    case ScaleKind::pow2_recip:
    case ScaleKind::fp32_dequant: break;
  }
  return !f32_is_finite(stored);
}

// §19.3 The dequantize factor from the stored scale (the same function serves quantize(),
// which records it, and dequantize(), which reads only the metadata): the scale's value v, then
// v itself, or — for a rule whose stored scale multiplied at quantize time — v undone by `op`.
Factor dequant_from_stored(ScaleRule rule, DequantOp op, const Exact& q_max, std::uint32_t stored, std::uint32_t m_g,
                           std::uint32_t tensor_amax, const RecipeKnobs& rk) {
  Exact v = exact_pow2(0);
  if (scale_kind(rule) == ScaleKind::nvfp4 && torchao_nvfp4(rk.nvfp4_scale)) {  // §18.5 / §18.6
    const std::uint32_t f = nvfp4_torchao_dequant(stored, torchao_tensor_scale(rk, Amax{tensor_amax}, q_max));
    if ((f & 0x7FFFFFFFu) == kF32Inf) return Factor{false, v, true};
    return Factor{false, (f & 0x7FFFFFFFu) == 0 ? Exact{} : exact_f32(f)};
  }
  switch (scale_kind(rule)) {
    case ScaleKind::fp32_quotient:
    case ScaleKind::fp32_recip:
    case ScaleKind::fp32_dequant:
    case ScaleKind::pow2:
    case ScaleKind::pow2_recip: v = exact_f32(stored); break;
    case ScaleKind::gam: v = gam_block_scale(stored, m_g); break;
    case ScaleKind::nvfp4: {
      const std::uint32_t f = nvfp4_decode_factor(stored, Amax{tensor_amax}, q_max);
      if (f == kF32Inf) return Factor{false, v, true};  // §18.4 RN32(d_b · t_amax) overflowed: f_b = +Inf
      v = exact_f32(f);
      break;
    }
    case ScaleKind::mx: v = exact_pow2(static_cast<int>(stored) - 127); break;  // X = 2^(code - 127), exact
  }
  if (!dequant_is_multiplier(rule) || v.sig == 0) return Factor{false, v};  // §14.6 D = 0: times 0
  if (op == DequantOp::divide) return Factor{true, v};
  return Factor{false, exact_f32(rn32(exact_div(exact_pow2(0), v)))};
}

inline Exact mul_or_div(const Exact& v, const Factor& f) {
  return f.divide ? exact_div(v, f.value) : exact_mul(v, f.value);
}

}  // namespace

// The conversion objects of one Quantizer, built once.
struct Quantizer::Engines {
  Engines(const QuantizeSpec& spec)
      : to_elem(format(FormatId::f32), *spec.element, spec.policy),
        elem_round(*spec.element, spec.policy),
        f32_round(format(FormatId::f32), Policy{}),
        code_to_f32(*spec.element, format(FormatId::f32), spec.wide) {
    // §14.5 scale_round=source with a 16-bit source: binary32 -> source -> binary32
    if (spec.recipe.scale_round == ScaleRound::source && spec.source != nullptr && spec.source->bits == 16) {
      f32_to_src.emplace(format(FormatId::f32), *spec.source, Policy{});
      src_to_f32.emplace(*spec.source, format(FormatId::f32), Policy{});
    }
  }
  Converter to_elem;                                // binary32 -> element under the element policy (§19.2 rn32)
  Rounder elem_round;                               // exact -> element (§19.2 fused)
  Rounder f32_round;                                // RN32
  Converter code_to_f32;                            // element code -> binary32 under the wide policy (§19.3 NaN codes)
  std::optional<Converter> f32_to_src, src_to_f32;  // §14.5 (16-bit sources only)
};

// ---- Quantizer --------------------------------------------------------------------------

namespace {
// §19.8 Each recipe knob applies to the rules named in its clause; elsewhere it is an error.
void check_recipe(const RecipeKnobs& k, ScaleRule rule) {
  const ScaleKind kind = scale_kind(rule);
  const bool mx = kind == ScaleKind::mx, quotient = kind == ScaleKind::fp32_quotient || kind == ScaleKind::pow2;
  const bool pow2 = kind == ScaleKind::pow2 || kind == ScaleKind::pow2_recip;  // §15, §15.3
  const bool rceil = rule_info(rule).mx == MxExponent::rceil;
  const bool rceil_f32 = rule_info(rule).mx == MxExponent::rceil_f32;
  const std::string r(to_string(rule));
  const bool dequant = kind == ScaleKind::fp32_dequant;
  if (k.amax_floor != AmaxFloor::none && !quotient && !pow2 && !dequant && !(rceil && k.scale_exp == ScaleExp::log2f) &&
      !(rceil_f32 && k.mx_descale == MxDescale::divide))
    bad("recipe amax_floor applies to the amax, amax-dequant, pow2 and pow2-recip rules, mx-rceil with "
        "scale_exp=log2f and mx-rceil-f32 with mx_descale=divide, not " +
        r);
  if (k.mx_descale == MxDescale::divide && !rceil_f32)
    bad("recipe mx_descale=divide applies to mx-rceil-f32, not " + r);
  if (k.nan_scale != NanScale::canonical && scale_format(rule).id != FormatId::f32)
    bad("recipe nan_scale applies to the rules with binary32 scales, not " + r);
  const bool floor_mx = rule_info(rule).mx == MxExponent::floor;
  if (k.scale_exp == ScaleExp::log2f && !pow2 && !rceil && !floor_mx)
    bad("recipe scale_exp=log2f applies to the pow2, pow2-recip, mx-floor and mx-rceil rules, not " + r);
  if (k.scale_exp == ScaleExp::log2f && floor_mx &&
      (k.amax_floor != AmaxFloor::none || k.inf_block == InfBlock::exponent || k.inf_block == InfBlock::max_code_zero))
    bad("recipe scale_exp=log2f with mx-floor takes no amax_floor and inf_block poison or max_code (§16.11)");
  if (k.zero_code != ZeroCode::stored && !mx) bad("recipe zero_code applies to the mx-* rules, not " + r);
  if ((k.inf_block == InfBlock::exponent || k.inf_block == InfBlock::max_code ||
       k.inf_block == InfBlock::max_code_zero) &&
      !mx)
    bad("recipe inf_block=" + std::string(recipe_words::inf_block[static_cast<int>(k.inf_block)]) +
        " applies to the mx-* rules, not " + r);
  if (k.inf_block == InfBlock::exponent && rceil && k.scale_exp == ScaleExp::log2f)
    bad("recipe inf_block=exponent applies to mx-floor, mx-ceil, mx-even, mx-rceil-f32 and exact mx-rceil");
  if (k.inf_block == InfBlock::zero_scale && !quotient && !dequant)
    bad("recipe inf_block=zero_scale applies to the amax, pow2 and amax-dequant rules, not " + r);
  if (k.scale_round != ScaleRound::f32 && !dequant) bad("recipe scale_round=source applies to amax-dequant, not " + r);
  if (k.zero_divisor != ZeroDivisor::raise && !dequant)
    bad("recipe zero_divisor=keep applies to amax-dequant, not " + r);
  if (k.divisor != Divisor::divide && !dequant) bad("recipe divisor=recip applies to amax-dequant, not " + r);
  if (k.inf_block == InfBlock::one_scale && !quotient && !pow2 && kind != ScaleKind::fp32_recip)
    bad("recipe inf_block=one_scale applies to the amax, amax-recip, pow2 and pow2-recip rules, not " + r);
  if (k.nan_block != NanBlock::poison && k.nan_block != NanBlock::first_nan && k.nan_block != NanBlock::own_nan && !mx)
    bad("recipe nan_block=" + std::string(recipe_words::nan_block[static_cast<int>(k.nan_block)]) +
        " applies to the mx-* rules, not " + r);
  if (k.nvfp4_scale != NvScale::encode && kind != ScaleKind::nvfp4)
    bad("recipe nvfp4_scale=" + std::string(recipe_words::nvfp4_scale[static_cast<int>(k.nvfp4_scale)]) +
        " applies to nvfp4, not " + r);
  if (k.nan_block == NanBlock::first_nan && k.nan_scale != NanScale::canonical)
    bad("recipe nan_block=" + std::string(recipe_words::nan_block[static_cast<int>(k.nan_block)]) +
        " and nan_scale=all_ones_tensor both name the NaN of a poisoned block");
}

Policy resolved_policy(const QuantizeSpec& spec) {
  Policy p = spec.policy;
  // §20.2 the int8 rules fix the integer range
  if (const auto r = rule_info(spec.rule).int_range) p.int_range = *r;
  return p;
}
}  // namespace

Quantizer::Quantizer(const QuantizeSpec& spec, std::size_t rows, std::size_t cols)
    : spec_(spec),
      grid_(rows, cols, spec.partition),
      ggrid_(rows, cols, scale_groups(spec)),
      apply_(ScaleApply::rn32),
      qmax_{false, 0, 0, false},
      sr_(false) {
  if (spec.element == nullptr) bad("no element format");
  const Format& e = *spec.element;
  if (e.bits > 8 || !e.is_signed || !e.has_zero)
    bad("element format " + std::string(e.name) + " is not a signed format of at most 8 bits with a zero");
  if (is_int8(spec.rule) && !e.is_integer())
    bad("scale rule " + std::string(to_string(spec.rule)) + " needs an integer element format, got " +
        std::string(e.name));
  spec_.policy = resolved_policy(spec);
  qmax_ = spec.q_max ? *spec.q_max : rule_qmax(spec.rule, e);  // §14.4
  const std::string qerr = check_qmax(qmax_);
  if (!qerr.empty()) bad(qerr);
  const std::string perr = validate(spec_.policy, e);
  if (!perr.empty()) bad("element policy: " + perr);
  const std::string werr = validate(spec_.wide, format(FormatId::f32));
  if (!werr.empty()) bad("wide policy: " + werr);
  apply_ = spec.apply ? *spec.apply : rule_info(spec.rule).apply;
  sr_ = effective_round(e, spec_.policy) == Round::sr;
  if (apply_ == ScaleApply::fused) {
    if (sr_ && spec_.policy.sr_variant == SrVariant::add)
      bad("sr_variant=add needs a source bit pattern; it cannot be used with the fused scale application");
    if (spec_.policy.daz)
      bad("daz=1 applies to a conversion's source; it cannot be used with the fused scale application");
  }
  check_recipe(spec.recipe, spec.rule);
  if (spec.recipe.elem_exp == ElemExp::log2f && (spec.element == nullptr || spec.element->is_integer() || sr_))
    bad("recipe elem_exp=log2f applies to floating-point elements rounded without stochastic rounding (§19.11)");
  if (has_group_mantissa(spec.rule)) {
    const std::string gerr = check_groups(ggrid_, grid_);
    if (!gerr.empty()) bad(gerr);
  }
  eng_ = std::make_shared<const Engines>(spec_);
}

void Quantizer::check_input(const TensorView& x, std::span<const std::uint32_t> random) const {
  if (x.rows() != grid_.rows() || x.cols() != grid_.cols())
    bad("tensor is " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
        " but the quantizer was built for " + std::to_string(grid_.rows()) + " x " + std::to_string(grid_.cols()));
  if (sr_) {
    if (random.size() != x.size())
      bad("stochastic rounding needs one random value per element: got " + std::to_string(random.size()) + " for " +
          std::to_string(x.size()) + " elements");
  } else if (!random.empty()) {
    bad("random values were given but the element policy does not use stochastic rounding");
  }
}

Amax Quantizer::amax(const TensorView& x, std::size_t b) const {
  if (x.rows() != grid_.rows() || x.cols() != grid_.cols())
    bad("tensor is " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
        " but the quantizer was built for " + std::to_string(grid_.rows()) + " x " + std::to_string(grid_.cols()));
  return block_amax(x, grid_.range(b), spec_.amax);
}

void Quantizer::prepare(std::span<const Amax> block_amax_values) {
  if (block_amax_values.size() != grid_.count()) bad("prepare: one amax per block is needed");
  Amax t{0};
  for (const Amax& a : block_amax_values) t = combine(t, a);
  tensor_amax_ = t;
  const ScaleKind kind = scale_kind(spec_.rule);
  if (kind == ScaleKind::gam) {
    std::vector<Amax> g(ggrid_.count(), Amax{0});
    for (std::size_t b = 0; b < grid_.count(); ++b) {
      const BlockRange r = grid_.range(b);
      const std::size_t gi = ggrid_.block_of(r.r0, r.c0);
      g[gi] = combine(g[gi], block_amax_values[b]);
    }
    groups_.assign(g.size(), GamGroup{});
    for (std::size_t i = 0; i < g.size(); ++i) groups_[i] = gam_group(g[i], qmax_);
  }
  if (kind == ScaleKind::nvfp4) {
    nvfp4_s_enc_ = nvfp4_tensor_scale(tensor_amax_, qmax_);
    // §18.5 nvfp4_scale=encode_inf_one: S_enc = 1.0 for t_amax = +Inf as for 0 (TransformerEngine
    // compute_global_encode_scaling_factor_FP4: 2688 / Inf = 0 -> 1.0)
    if (f32_is_inf(tensor_amax_.f32) && spec_.recipe.nvfp4_scale == NvScale::encode_inf_one) nvfp4_s_enc_ = kF32One;
  }
  prepared_ = true;
}

// §18.5 / §18.6 a block of torchao's NVFP4: the code and multiplier of x86 binary32 arithmetic; a NaN
// multiplier poisons the block and is the NaN its elements convert, +Inf and 0 multiply as such.
BlockScale Quantizer::torchao_nvfp4_scale(BlockScale& s, Amax a) const {
  const std::optional<std::uint32_t> p = torchao_tensor_scale(spec_.recipe, tensor_amax_, qmax_, spec_.source);
  const Nvfp4TorchaoBlock blk = nvfp4_torchao_block(a, p, qmax_);
  s.stored = blk.code;
  const std::uint32_t m = blk.multiplier;
  if (f32_is_nan(m)) {
    s.poisoned = true;
    s.poison_nan = m;
    return s;
  }
  if ((m & 0x7FFFFFFFu) == kF32Inf)
    s.action = ElemAction::inf;  // x * Inf: +-Inf, 0 * Inf the default NaN
  else if ((m & 0x7FFFFFFFu) == 0)
    s.action = ElemAction::zero;  // x * 0: +-0, Inf * 0 the default NaN
  else
    s.quant = Factor{false, exact_f32(m)};
  // §18.5 a tensor amax that is not finite: dequantized values NaN (block_poisoned), codes kept
  s.nan_dequant = p && tensor_amax_.poisoned();
  if (!s.nan_dequant)
    s.dequant = dequant_from_stored(spec_.rule, spec_.dequant, qmax_, s.stored, 0, tensor_amax_.f32, spec_.recipe);
  return s;
}

namespace {
// §13.6 / §13.7 The scale of a block whose amax is +Inf or NaN and that the recipe does not
// poison (inf_block, nan_block); false, `s` untouched, for every other block.
bool nonfinite_scale(const QuantizeSpec& spec, const Exact& qmax, Amax a, BlockScale& s) {
  const RecipeKnobs& rk = spec.recipe;
  // §13.7 a NaN amax that a recipe does not poison
  if (f32_is_nan(a.f32) && rk.nan_block == NanBlock::inf_divisor) {
    s.stored = 0xFFu;
    s.action = ElemAction::zero;  // x / +Inf
    return true;                  // dequantize: the stored NaN scale gives NaN (§19.3)
  }
  // §13.6 a +Inf amax (or with nan_block=max_code a NaN amax) that a recipe does not poison
  if (!(f32_is_inf(a.f32) && rk.inf_block != InfBlock::poison) &&
      !(f32_is_nan(a.f32) && rk.nan_block == NanBlock::max_code))
    return false;
  if (rk.inf_block == InfBlock::zero_scale || rk.inf_block == InfBlock::max_code_zero) {
    // S = q_max / Inf = +0 (amax-dequant: D = Inf / q_max = +Inf, x / Inf), or E8M0 FE
    s.stored = rk.inf_block == InfBlock::zero_scale ? (scale_kind(spec.rule) == ScaleKind::fp32_dequant ? kF32Inf : 0u)
                                                    : 0xFEu;
    s.action = ElemAction::zero;
    if (s.stored == 0xFEu) s.dequant = dequant_from_stored(spec.rule, spec.dequant, qmax, s.stored, 0, 0, spec.recipe);
    return true;
  }
  s.stored = rk.inf_block == InfBlock::max_code || f32_is_nan(a.f32)
                 ? 0xFEu
                 : mx_scale_code_of(spec.rule, exact_pow2(128), qmax, spec.element->precision());
  s.quant = Factor{false, exact_pow2(127 - static_cast<int>(s.stored))};
  s.dequant = dequant_from_stored(spec.rule, spec.dequant, qmax, s.stored, 0, 0, spec.recipe);
  return true;
}

// §13.5 The amax a block's scale is formed from: raised to the amax floor when below it.
struct ScaleAmax {
  Amax a;        // the block's amax (+Inf read as 0 under inf_block=one_scale)
  bool floored;  // raised to the floor (a finite amax below it, zero included)
  Exact av;      // the value used: the floor, the amax, or 0 (a zero or poisoned amax)
};
ScaleAmax scale_amax(Amax a, AmaxFloor f) {
  const bool floored =
      f != AmaxFloor::none && !a.poisoned() && (a.is_zero() || compare_abs(exact_f32(a.f32), amax_floor_value(f)) < 0);
  return {a, floored, floored ? amax_floor_value(f) : a.is_zero() || a.poisoned() ? Exact{} : exact_f32(a.f32)};
}

// §14.1 / §15 The binary32 quotient scale S of the (floored) amax.
std::uint32_t quotient_code(const ScaleAmax& in, const Exact& qmax) {
  if (!in.floored) return fp32_amax_scale(in.a, qmax);
  return rn32_sat(exact_div(qmax, in.av));
}

// §15 / §15.2 The power of two P of a quotient scale S: from its bits, or as log2f would.
std::uint32_t pow2_code(std::uint32_t S, ScaleExp e) { return e == ScaleExp::log2f ? pow2_log2f(S) : pow2_floor(S); }

// §14.3 / §20.1 The stored D, with the recipe's §14.5 rounding through the source format
// (16-bit sources: f32_to_src / src_to_f32) and §14.6 zero divisor.
// §13.5 the amax floor, when it raised the amax, gives D = RN32(floor / q_max).
std::uint32_t dequant_code(const QuantizeSpec& spec, const Exact& qmax, const ScaleAmax& in,
                           const std::optional<Converter>& f32_to_src, const std::optional<Converter>& src_to_f32) {
  const RecipeKnobs& rk = spec.recipe;
  const Amax a = in.a;
  if (((rk.scale_round == ScaleRound::f32 && rk.zero_divisor == ZeroDivisor::raise) && !in.floored) || a.poisoned())
    return fp32_dequant_scale(a, qmax);
  std::uint32_t d = in.floored    ? rn32(exact_div(in.av, qmax))
                    : a.is_zero() ? 0u
                                  : rn32(exact_div(exact_f32(a.f32), qmax));
  if (rk.scale_round == ScaleRound::source && d != 0) {  // §14.5
    if (spec.source == nullptr) throw std::logic_error("scale_round=source: QuantizeSpec::source is not set");
    if (f32_to_src) d = (*src_to_f32)((*f32_to_src)(d).bits).bits;
  }
  if (d == 0) d = rk.zero_divisor == ZeroDivisor::keep ? 0u : a.is_zero() ? kF32One : kF32MinSub;  // §14.6
  return d;
}

// §16 The E8M0 code of a block: the recipe's log2f (§16.8, §16.11) or divide (§16.10) variants,
// else the row's exponent rule (mx_scale_code).
std::uint32_t mx_code(const QuantizeSpec& spec, const Exact& qmax, const ScaleAmax& in) {
  const RecipeKnobs& rk = spec.recipe;
  const Amax a = in.a;
  if (rk.scale_exp == ScaleExp::log2f && !a.poisoned() && rule_info(spec.rule).mx == MxExponent::floor)
    return mx_floor_log2f_code(a.f32, qmax);             // §16.11
  if (rk.scale_exp == ScaleExp::log2f && !a.poisoned())  // §16.8
    return (a.is_zero() && !in.floored) ? 0x00u : mx_rceil_log2f_code(in.av, qmax);
  if (rk.mx_descale == MxDescale::divide && !a.poisoned())  // §16.10
    return (a.is_zero() && !in.floored) ? 0x00u : mx_rceil_div_code(in.av, qmax);
  return mx_scale_code(spec.rule, a, qmax, spec.element->precision());
}

// §16 x / X with X = 2^(code - 127) is exactly x · 2^(127 - code); §16.9 the code 00 by zero_code.
int mx_quant_exp(std::uint32_t code, ZeroCode zc) {
  if (code == 0x00u && zc == ZeroCode::min_normal) return 126;
  if (code == 0x00u && zc == ZeroCode::one) return 0;
  return code != 0xFFu ? 127 - static_cast<int>(code) : 0;
}

// The quantize factor of a binary32 scale: the scale itself, or 1 for a NaN / Inf one.
Factor f32_factor(bool divide, std::uint32_t code) {
  return Factor{divide, f32_is_finite(code) ? exact_f32(code) : exact_pow2(0)};
}
}  // namespace

BlockScale Quantizer::block_scale(std::size_t b, Amax a) const {
  const ScaleKind kind = scale_kind(spec_.rule);
  if (needs_tensor_state(kind) && !prepared_)
    throw std::logic_error("Quantizer::block_scale: prepare() must run first for the gam and nvfp4 rules");
  BlockScale s;
  s.amax = a;
  const RecipeKnobs& rk = spec_.recipe;
  // §13.6 inf_block=one_scale: a +Inf amax gets the scale of amax = 0, 1.0 (§14.1), and its
  // elements are converted times 1 (s.amax keeps the +Inf)
  if (f32_is_inf(a.f32) && rk.inf_block == InfBlock::one_scale) a = Amax{};
  if (nonfinite_scale(spec_, qmax_, a, s)) return s;
  const ScaleAmax in = scale_amax(a, rk.amax_floor);
  std::uint32_t m_g = 0;
  switch (kind) {
    case ScaleKind::fp32_quotient:
      s.stored = quotient_code(in, qmax_);  // §14.1
      s.quant = f32_factor(false, s.stored);
      break;
    case ScaleKind::fp32_recip: {
      const std::uint32_t S = fp32_amax_scale(a, qmax_);  // §14.2
      s.stored = f32_is_finite(S) ? rn32(exact_div(exact_pow2(0), exact_f32(S))) : kF32NaN;
      s.quant = f32_factor(false, S);
      break;
    }
    case ScaleKind::fp32_dequant:
      s.stored = dequant_code(spec_, qmax_, in, eng_->f32_to_src, eng_->src_to_f32);  // §14.3, §20.1
      if (s.stored == 0u) s.action = ElemAction::inf;                                 // §14.6 x / 0
      s.quant = Factor{true, f32_is_finite(s.stored) && s.stored != 0u ? exact_f32(s.stored) : exact_pow2(0)};
      if (rk.divisor == Divisor::recip && s.action != ElemAction::inf && f32_is_finite(s.stored)) {
        // §14.7 x * R, R = RN32(1 / D); an R that overflows to +Inf multiplies as x / 0 does (§14.6)
        const std::uint32_t R = rn32(exact_div(exact_pow2(0), exact_f32(s.stored)));
        if (f32_is_inf(R))
          s.action = ElemAction::inf;
        else
          s.quant = Factor{false, exact_f32(R)};
      }
      break;
    case ScaleKind::pow2:
      s.stored = pow2_code(quotient_code(in, qmax_), rk.scale_exp);  // §15, §15.2
      s.quant = f32_factor(false, s.stored);
      break;
    case ScaleKind::pow2_recip: {  // §15.3: quantize with P, store 1 / P (exact: P is a power of two)
      const std::uint32_t P = pow2_code(quotient_code(in, qmax_), rk.scale_exp);
      const bool finite = f32_is_finite(P) && (P & 0x7FFFFFFFu) != 0;
      s.stored = finite ? rn32(exact_div(exact_pow2(0), exact_f32(P))) : kF32NaN;
      s.quant = Factor{false, finite ? exact_f32(P) : exact_pow2(0)};
      break;
    }
    case ScaleKind::gam: {
      const BlockRange r = grid_.range(b);
      const GamGroup& g = groups_[ggrid_.block_of(r.r0, r.c0)];
      m_g = g.m_g;
      s.stored = gam_block_code(a, g, qmax_);  // §17.2
      s.quant = Factor{false, s.stored != 0xFFu ? gam_block_scale(s.stored, m_g) : exact_pow2(0)};
      break;
    }
    case ScaleKind::nvfp4:
      if (torchao_nvfp4(rk.nvfp4_scale)) return torchao_nvfp4_scale(s, a);       // §18.5 / §18.6
      s.stored = nvfp4_block_code(a, nvfp4_s_enc_, qmax_);                       // §18.2
      s.quant = f32_factor(false, nvfp4_encode_factor(s.stored, nvfp4_s_enc_));  // §18.3
      break;
    case ScaleKind::mx:  // §16
      s.stored = mx_code(spec_, qmax_, in);
      s.quant = Factor{false, exact_pow2(mx_quant_exp(s.stored, rk.zero_code))};
      break;
  }
  // §13.8 the NaN of a poisoned binary32 scale
  if (rk.nan_scale == NanScale::all_ones_tensor && f32_is_nan(a.f32) && f32_is_nan(s.stored) && grid_.count() == 1 &&
      spec_.partition == Partition::tensor())
    s.stored = 0xFFFFFFFFu;
  // §18.1 a NaN S_enc (a poisoned t_amax) poisons every block; with nvfp4_scale=encode_inf_one a +Inf t_amax
  // keeps its codes and dequantizes to NaN (block_poisoned: §18.4 of t_amax = +Inf)
  s.poisoned = is_poisoned_code(spec_.rule, s.stored) || (kind == ScaleKind::nvfp4 && !f32_is_finite(nvfp4_s_enc_));
  if (kind == ScaleKind::nvfp4 && tensor_amax_.poisoned()) s.nan_dequant = true;
  if (!s.poisoned && !s.nan_dequant)
    s.dequant = dequant_from_stored(spec_.rule, spec_.dequant, qmax_, s.stored, m_g, tensor_amax_.f32, spec_.recipe);
  return s;
}

namespace {

// §19.9 elem_nan=bits: the code torchao's _f32_to_floatx_unpacked gives a binary32 NaN y, whose bits
// it rounds as a normal number: with m the element's mantissa bits and e_b its exponent bias,
// ((|y| + ((e_b - 127) << 23) + 2^(22 - m) - 1 + bit (23 - m) of |y|) >> (23 - m)) mod 256, with the sign
// bit ORed in (f4e2m1fn: 0x3 when bit 21 of y is clear, else 0x4; 1.5 for 0x7FC00000).
std::uint32_t nan_bits_code(const Format& elem, std::uint32_t y) {
  const std::uint32_t mag = y & 0x7FFFFFFFu;
  const int m = elem.man_bits;
  const std::uint32_t odd = (mag >> (23 - m)) & 1u;
  const std::uint32_t add = static_cast<std::uint32_t>((elem.bias - 127) * (1 << 23)) + ((1u << (22 - m)) - 1u) + odd;
  const std::uint32_t code = ((mag + add) >> (23 - m)) & 0xFFu;
  return code | ((y & 0x80000000u) ? elem.sign_bit() : 0u);
}

// The per-element machinery shared by quantize_block and fake_quantize_block.
class ElementQuantizer {
 public:
  ElementQuantizer(const Format& src, const Format& elem, ScaleApply apply, const Converter& to_elem,
                   const Rounder& elem_round, const Rounder& f32_round, const RecipeKnobs& rk, Round round)
      : src_(src),
        elem_(elem),
        apply_(apply),
        to_elem_(to_elem),
        elem_round_(elem_round),
        f32_round_(f32_round),
        special_(src.first_special_magnitude()),
        f32_nan_scale_(rk.nan_scale != NanScale::canonical),
        zero_plus_(rk.zero_sign == ZeroSign::plus),
        elem_exp_log2f_(rk.elem_exp == ElemExp::log2f),
        round_(round),
        first_nan_(rk.nan_block == NanBlock::first_nan),
        own_nan_(rk.nan_block == NanBlock::own_nan),
        // §19.9 elem_nan=half: the code of +1.5 in a format without NaN
        half_(rk.elem_nan == ElemNan::half && !elem.has_nan() && !elem.is_integer()
                  ? std::optional<std::uint32_t>(Rounder(elem, Policy{})(Exact{false, 3, -1, false}).bits)
                  : std::nullopt),
        nan_bits_(rk.elem_nan == ElemNan::bits && !elem.has_nan() && !elem.is_integer()) {}

  // §13.7 nan_block=first_nan: reads the first NaN element of block range `br` of x (in element
  // order) before its elements are quantized; a no-op under the other nan_block values.
  void begin_block(const TensorView& x, const BlockRange& br) {
    block_nan_ = kF32NaN;
    if (!first_nan_) return;
    for (std::size_t i = br.r0; i < br.r1; ++i)
      for (std::size_t j = br.c0; j < br.c1; ++j)
        if (is_nan_code(x.code(i, j))) {
          block_nan_ = quiet_abs(x.code(i, j));
          return;
        }
  }
  // The binary32 NaN that element code c of a poisoned block stands for (§13.3 canonical; §13.7
  // first_nan: c's own NaN or the block's first, quieted and positive).
  std::uint32_t poisoned_nan(std::uint32_t c) const {
    if (!first_nan_) return kF32NaN;
    return is_nan_code(c) ? quiet_abs(c) : block_nan_;
  }

  // §19.2 one element: returns the element code and updates the counts.
  std::uint32_t quantize(std::uint32_t c, std::uint64_t r, const BlockScale& s, QuantizeStats& st) {
    if (s.poisoned) {  // §13.3 every element of a poisoned block quantizes as NaN (§13.8: the scale's)
      ++st.nan;
      if (s.poison_nan) return convert(*s.poison_nan, r);                           // §18.5
      if (first_nan_) return convert(poisoned_nan(c), r);                           // §13.7
      if (own_nan_ && is_nan_code(c)) return convert(widened(c) | 0x00400000u, r);  // §13.7 own, quieted
      return convert(f32_nan_scale_ && f32_is_nan(s.stored) ? s.stored : kF32NaN, r);
    }
    const std::uint32_t mag = c & src_.mag_mask();
    const bool neg = (c & src_.sign_bit()) != 0;
    if (mag >= special_) {
      if (src_.is_inf_magnitude(mag)) {      // ±Inf: Inf op f = Inf (§19.2; Inf / 0 = Inf, §14.6)
        if (s.action == ElemAction::zero) {  // §13.6 / §13.7 Inf * 0, Inf / Inf
          ++st.nan;
          return convert(kF32DefaultNaNx86, r);
        }
        ++st.inf;
        return convert(neg ? 0xFF800000u : kF32Inf, r);
      }
      ++st.nan;  // NaN: widened to binary32 with its sign and payload (§6.3 payload), then converted
      return convert(widened(c), r);
    }
    // §19.10 zero_sign=plus: a scaled value that is ±0 in binary32 gives +0
    const bool neg_zero = neg && !zero_plus_;
    if (s.action == ElemAction::zero) {  // §13.6 x * 0 = x / Inf = signed zero
      if (mag != 0) ++st.flushed;
      return convert(neg_zero ? 0x80000000u : 0u, r);
    }
    if (s.action == ElemAction::inf) {  // §14.6 x / 0: ±Inf, 0 / 0 = the x86 default NaN
      if (mag == 0) {
        ++st.nan;
        return convert(kF32DefaultNaNx86, r);
      }
      const Result res = to_elem_(neg ? 0xFF800000u : kF32Inf, r);
      if (elem_.is_inf_magnitude(res.bits & elem_.mag_mask()))
        ++st.inf;
      else
        ++st.saturated;  // ±Inf met the element policy's saturation
      return res.bits;
    }
    if (mag == 0) return convert(neg_zero ? 0x80000000u : 0u, r);  // ±0 (§6.6)
    const std::uint32_t ef = mag >> src_.man_bits;
    const std::uint32_t mf = mag & src_.man_mask();
    Exact v;
    if (ef == 0 && src_.has_subnormals)
      v = Exact{neg, mf, src_.qmin(), false};
    else
      v = Exact{neg, (std::uint64_t{1} << src_.man_bits) | mf, static_cast<int>(ef) - src_.bias - src_.man_bits, false};
    // Products: a source significand (<= 24 bits, §12.1) times a factor of <= 24 significant
    // bits (binary32 values, GAM scales, powers of two) is exact in 64 bits.
    const Exact p = (!s.quant.divide && s.quant.value.sig < (std::uint64_t{1} << 24))
                        ? Exact{neg != s.quant.value.sign, v.sig * s.quant.value.sig, v.exp + s.quant.value.exp, false}
                        : mul_or_div(v, s.quant);
    Result res;
    if (apply_ == ScaleApply::rn32)
      res = to_elem_(f32_round_(p).bits, r);  // finite: never NaN
    else
      res = elem_round_(p, r);
    if (elem_exp_log2f_) {  // §19.11 (either application: y = RN32(x * F))
      if (const auto y = log2f_grid(f32_round_(p).bits)) res = to_elem_(*y, r);
    }
    if (zero_plus_ && neg && (f32_round_(p).bits & 0x7FFFFFFFu) == 0) res.bits = convert(0u, r);  // §19.10
    if ((res.flags & kOverflow) || (elem_.is_integer() && (res.flags & kInvalid))) ++st.saturated;
    if (elem_.is_integer() ? res.bits == 0 : (res.bits & elem_.mag_mask()) == 0) ++st.flushed;
    return res.bits;
  }

 private:
  const Format& src_;
  const Format& elem_;
  ScaleApply apply_;
  const Converter& to_elem_;
  const Rounder& elem_round_;
  const Rounder& f32_round_;
  // The element code of a binary32 value y (§19.2), with §19.9 for a NaN y.
  std::uint32_t convert(std::uint32_t y, std::uint64_t r) const {
    if (half_ && f32_is_nan(y)) return *half_ | ((y & 0x80000000u) ? elem_.sign_bit() : 0u);
    if (nan_bits_ && f32_is_nan(y)) return nan_bits_code(elem_, y);
    return to_elem_(y, r).bits;
  }

  bool is_nan_code(std::uint32_t c) const {
    const std::uint32_t mag = c & src_.mag_mask();
    return mag >= special_ && !src_.is_inf_magnitude(mag);
  }
  // A source NaN code widened to binary32 with its sign and payload (§6.3 payload).
  std::uint32_t widened(std::uint32_t c) const {
    if (!nan_to_f32_) nan_to_f32_.emplace(src_, format(FormatId::f32), Policy{});
    return (*nan_to_f32_)(c).bits;
  }
  // The same, quieted, sign cleared (§13.7 first_nan).
  std::uint32_t quiet_abs(std::uint32_t c) const { return (widened(c) | 0x00400000u) & 0x7FFFFFFFu; }

  mutable std::optional<Converter> nan_to_f32_;
  std::uint32_t special_;  // §2.2 the source's first NaN / Inf magnitude
  bool f32_nan_scale_;     // §13.8 nan_scale: the stored binary32 NaN is the elements' NaN
  bool zero_plus_;         // §19.10 zero_sign=plus
  bool elem_exp_log2f_;    // §19.11 elem_exp=log2f
  Round round_;            // the element policy's rounding (§19.11)

  // §19.11 y = RN32(x * F) (finite) whose log2f rounds up to the integer k above its binade k - 1 >=
  // emin: the element is y rounded on binade k's grid, whose neighbours of y are L = 2^k - 2^(k-m)
  // and U = 2^k (m the element's fraction bits), chosen by the rounding direction (nearest: U, y is
  // within 2^-20 of 2^k relatively); returned as the binary32 value that the element conversion then
  // takes exactly. nullopt where the binade's own grid applies.
  std::optional<std::uint32_t> log2f_grid(std::uint32_t y) const {
    const std::uint32_t mag = y & 0x7FFFFFFFu;
    if (mag < 0x00800000u || mag >= 0x7F800000u || (mag & 0x007FFFFFu) == 0) return std::nullopt;
    const int e = static_cast<int>(mag >> 23) - 127;  // the binade of |y|, 2^e <= |y| < 2^(e+1)
    if (e < elem_.emin() || e >= 127) return std::nullopt;
    if (log2f_cr(mag) != int_f32(e + 1)) return std::nullopt;  // log2f(|y|) < e + 1
    const bool neg = (y & 0x80000000u) != 0;
    const int m = elem_.man_bits;
    const std::uint32_t U = static_cast<std::uint32_t>(e + 1 + 127) << 23;
    // L = 2^e (2 - 2^(1-m)): binade e, the top m - 1 fraction bits set (0 for m = 0)
    const std::uint32_t L = m == 0 ? 0u : (static_cast<std::uint32_t>(e + 127) << 23) | (((1u << m) - 2u) << (23 - m));
    bool up = false;  // magnitude U (away from zero) or L (toward zero)
    switch (round_) {
      case Round::rne:
      case Round::rna: up = true; break;
      case Round::rtz: up = false; break;
      case Round::rup: up = !neg; break;
      case Round::rdn: up = neg; break;
      case Round::sr: return std::nullopt;  // refused with elem_exp=log2f (§19.11)
    }
    return (neg ? 0x80000000u : 0u) | (up ? U : L);
  }
  // The binary32 bits of a small integer n (|n| < 2^24).
  static std::uint32_t int_f32(int n) {
    if (n == 0) return 0u;
    const std::uint32_t sign = n < 0 ? 0x80000000u : 0u;
    std::uint32_t a = static_cast<std::uint32_t>(n < 0 ? -n : n);
    int e = 0;
    while ((a >> (e + 1)) != 0) ++e;
    return sign | (static_cast<std::uint32_t>(e + 127) << 23) | ((a - (1u << e)) << (23 - e));
  }
  bool first_nan_;                     // §13.7 nan_block=first_nan
  bool own_nan_;                       // §13.7 nan_block=own_nan
  std::uint32_t block_nan_ = kF32NaN;  // its NaN of the current block
  std::optional<std::uint32_t> half_;
  bool nan_bits_;  // §19.9 elem_nan=bits
};

// §19.3 one element: the binary32 code of the dequantized value.
class ElementDequantizer {
 public:
  ElementDequantizer(const Format& elem, const Converter& code_to_f32, const Rounder& f32_round)
      : elem_(elem), to_f32_(code_to_f32), f32_round_(f32_round) {}
  std::uint32_t operator()(std::uint32_t code, bool poisoned, const Factor& d) const {
    if (poisoned) return kF32NaN;
    const Decoded v = decode(code, elem_);
    switch (v.cls) {
      case Class::nan: return to_f32_(code).bits;              // §6.3 under the wide policy
      case Class::inf: return v.sign ? 0xFF800000u : kF32Inf;  // ±Inf times a positive factor
      case Class::zero: return v.sign ? 0x80000000u : 0u;
      default: break;
    }
    if (d.infinite) return v.sign ? 0xFF800000u : kF32Inf;  // §19.3 RN32(v · +Inf), v finite non-zero
    return f32_round_(mul_or_div(Exact{v.sign, v.sig, v.exp, false}, d)).bits;
  }

 private:
  const Format& elem_;
  const Converter& to_f32_;
  const Rounder& f32_round_;
};

}  // namespace

QuantizeStats Quantizer::quantize_block(const TensorView& x, std::size_t b, const BlockScale& s,
                                        std::span<std::uint8_t> codes, std::span<const std::uint32_t> random) const {
  check_input(x, random);
  if (codes.size() != x.size())
    bad("the code array has " + std::to_string(codes.size()) + " entries for " + std::to_string(x.size()) +
        " elements");
  const BlockRange r = grid_.range(b);
  ElementQuantizer q(x.format(), *spec_.element, apply_, eng_->to_elem, eng_->elem_round, eng_->f32_round, spec_.recipe,
                     effective_round(*spec_.element, spec_.policy));
  if (s.poisoned) q.begin_block(x, r);
  QuantizeStats st;
  const std::size_t cols = x.cols();
  for (std::size_t i = r.r0; i < r.r1; ++i) {
    for (std::size_t j = r.c0; j < r.c1; ++j) {
      const std::size_t idx = i * cols + j;
      codes[idx] = static_cast<std::uint8_t>(q.quantize(x.code(i, j), sr_ ? random[idx] : 0u, s, st));
    }
  }
  return st;
}

QuantizeStats Quantizer::fake_quantize_block(const TensorView& x, std::size_t b, const BlockScale& s, const Format& out,
                                             std::span<std::uint32_t> dst,
                                             std::span<const std::uint32_t> random) const {
  check_input(x, random);
  if (dst.size() != x.size()) bad("the output array does not have one entry per element");
  const BlockRange r = grid_.range(b);
  ElementQuantizer q(x.format(), *spec_.element, apply_, eng_->to_elem, eng_->elem_round, eng_->f32_round, spec_.recipe,
                     effective_round(*spec_.element, spec_.policy));
  const ElementDequantizer dq(*spec_.element, eng_->code_to_f32, eng_->f32_round);
  const Converter to_out(format(FormatId::f32), out, spec_.wide);
  if (s.poisoned) q.begin_block(x, r);
  const bool first_nan = s.poisoned && spec_.recipe.nan_block == NanBlock::first_nan;  // §13.7: its NaNs out
  QuantizeStats st;
  const std::size_t cols = x.cols();
  for (std::size_t i = r.r0; i < r.r1; ++i) {
    for (std::size_t j = r.c0; j < r.c1; ++j) {
      const std::size_t idx = i * cols + j;
      const std::uint32_t code = q.quantize(x.code(i, j), sr_ ? random[idx] : 0u, s, st);
      dst[idx] =
          to_out(first_nan ? q.poisoned_nan(x.code(i, j)) : dq(code, s.poisoned || s.nan_dequant, s.dequant)).bits;
    }
  }
  return st;
}

std::vector<QuantizeStats> Quantizer::quantize_all(const TensorView& x, std::span<const BlockScale> scales,
                                                   std::span<std::uint8_t> codes, std::span<const std::uint32_t> random,
                                                   std::size_t first, std::size_t last) const {
  check_input(x, random);
  if (codes.size() != x.size())
    bad("the code array has " + std::to_string(codes.size()) + " entries for " + std::to_string(x.size()) +
        " elements");
  if (scales.size() != grid_.count()) bad("quantize_all: one scale per block is needed");
  const std::size_t n = grid_.count();
  std::vector<QuantizeStats> stats(n);
  last = std::min(last, n);
  first = std::min(first, last);
  const Format& src = x.format();
  // The memo key of a block: its quantize factor (poisoned blocks are not memoized).
  using Key = std::tuple<bool, std::uint64_t, int, bool>;
  auto key = [](const BlockScale& s) {
    return Key{s.quant.divide, s.quant.value.sig, s.quant.value.exp, s.quant.value.sign};
  };
  std::map<Key, std::size_t> table_of;  // key -> table index
  if (!sr_ && src.bits <= 16) {
    std::map<Key, std::size_t> uses;
    for (std::size_t b = first; b < last; ++b)
      if (!scales[b].poisoned && scales[b].action == ElemAction::scale) uses[key(scales[b])] += grid_.range(b).size();
    std::vector<std::pair<std::size_t, Key>> by_use;
    const std::size_t codes_n = std::size_t{1} << src.bits;
    for (const auto& [k, u] : uses)
      if (u >= codes_n) by_use.emplace_back(u, k);
    std::sort(by_use.begin(), by_use.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    constexpr std::size_t kMaxTables = 16;
    for (std::size_t i = 0; i < by_use.size() && i < kMaxTables; ++i) table_of[by_use[i].second] = i;
  }
  // table entry: code | count bits << 8 (1 saturated, 2 flushed, 4 nan, 8 inf)
  std::vector<std::vector<std::uint16_t>> tables(table_of.size());
  ElementQuantizer q(src, *spec_.element, apply_, eng_->to_elem, eng_->elem_round, eng_->f32_round, spec_.recipe,
                     effective_round(*spec_.element, spec_.policy));
  const std::size_t cols = x.cols();
  for (std::size_t b = first; b < last; ++b) {
    const BlockScale& s = scales[b];
    const auto it = s.poisoned || s.action != ElemAction::scale ? table_of.end() : table_of.find(key(s));
    if (it == table_of.end()) {
      stats[b] = quantize_block(x, b, s, codes, random);
      continue;
    }
    std::vector<std::uint16_t>& t = tables[it->second];
    if (t.empty()) {
      t.resize(std::size_t{1} << src.bits);
      for (std::uint32_t c = 0; c < t.size(); ++c) {
        QuantizeStats one;
        const std::uint32_t code = q.quantize(c, 0, s, one);
        const unsigned bits =
            (one.saturated ? 1u : 0u) | (one.flushed ? 2u : 0u) | (one.nan ? 4u : 0u) | (one.inf ? 8u : 0u);
        t[c] = static_cast<std::uint16_t>(code | (bits << 8));
      }
    }
    std::uint64_t hist[16] = {};
    const BlockRange r = grid_.range(b);
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) {
        const std::uint16_t e = t[x.code(i, j) & src.mask()];  // bits above the width are ignored (§2.4)
        codes[i * cols + j] = static_cast<std::uint8_t>(e & 0xFFu);
        ++hist[e >> 8];
      }
    for (unsigned h = 0; h < 16; ++h) {
      if (h & 1u) stats[b].saturated += hist[h];
      if (h & 2u) stats[b].flushed += hist[h];
      if (h & 4u) stats[b].nan += hist[h];
      if (h & 8u) stats[b].inf += hist[h];
    }
  }
  return stats;
}

ScaleMeta Quantizer::meta(std::span<const BlockScale> scales) const {
  if (scales.size() != grid_.count()) bad("meta: one scale per block is needed");
  ScaleMeta m;
  m.rule = spec_.rule;
  m.element = spec_.element;
  m.rows = grid_.rows();
  m.cols = grid_.cols();
  m.partition = spec_.partition;
  m.group = scale_groups(spec_);
  m.q_max = qmax_;
  m.dequant = spec_.dequant;
  m.recipe = spec_.recipe;
  m.wide = spec_.wide;
  m.scales.reserve(scales.size());
  for (const BlockScale& s : scales) m.scales.push_back(s.stored);
  if (has_group_mantissa(spec_.rule))  // §17.1 / §18.1 the row's tensor-level output
    for (const GamGroup& g : groups_) m.group_mantissa.push_back(g.m_g);
  if (has_tensor_amax(spec_.rule)) m.tensor_amax = tensor_amax_.f32;
  return m;
}

// ---- whole-tensor entry points ----------------------------------------------------------

namespace {
// The spec with its source format (§14.5) taken from x when unset.
QuantizeSpec with_source(const QuantizeSpec& spec, const TensorView& x) {
  QuantizeSpec s = spec;
  if (s.source == nullptr) s.source = &x.format();
  return s;
}
}  // namespace

QuantizeResult quantize(const TensorView& x, const QuantizeSpec& spec_in, std::span<std::uint8_t> codes,
                        std::span<const std::uint32_t> random) {
  const QuantizeSpec spec = with_source(spec_in, x);
  Quantizer qz(spec, x.rows(), x.cols());
  const std::size_t n = qz.grid().count();
  QuantizeResult res;
  res.block_amax.resize(n);
  for (std::size_t b = 0; b < n; ++b) res.block_amax[b] = qz.amax(x, b);
  qz.prepare(res.block_amax);
  std::vector<BlockScale> scales(n);
  for (std::size_t b = 0; b < n; ++b) scales[b] = qz.block_scale(b, res.block_amax[b]);
  res.block_stats = qz.quantize_all(x, scales, codes, random);
  for (const QuantizeStats& st : res.block_stats) res.total += st;
  res.meta = qz.meta(scales);
  return res;
}

bool block_poisoned(const ScaleMeta& m, std::size_t b) {
  // §18.4 / §18.5 a tensor amax that is not finite poisons every block; §18.6 reads none
  if (scale_kind(m.rule) == ScaleKind::nvfp4 && m.recipe.nvfp4_scale != NvScale::block && !f32_is_finite(m.tensor_amax))
    return true;
  return is_poisoned_code(m.rule, m.scales.at(b));
}

Factor dequant_factor(const ScaleMeta& m, std::size_t b) {
  std::uint32_t m_g = 0;
  if (scale_kind(m.rule) == ScaleKind::gam) {
    const BlockGrid grid(m.rows, m.cols, m.partition), ggrid(m.rows, m.cols, m.group);
    const BlockRange r = grid.range(b);
    m_g = m.group_mantissa.at(ggrid.block_of(r.r0, r.c0));
  }
  return dequant_from_stored(m.rule, m.dequant, m.q_max, m.scales.at(b), m_g, m.tensor_amax, m.recipe);
}

void check_tensor_inputs(ScaleRule rule, const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax) {
  if (has_group_mantissa(rule) && group_mantissa == nullptr)
    throw std::invalid_argument(std::string(to_string(rule)) + " needs the group mantissas");
  if (has_tensor_amax(rule) && tensor_amax == nullptr)
    throw std::invalid_argument(std::string(to_string(rule)) + " needs the tensor amax");
}

void dequantize(std::span<const std::uint8_t> codes, const ScaleMeta& m, std::span<std::uint32_t> out) {
  if (m.element == nullptr) bad("dequantize: metadata without an element format");
  const BlockGrid grid(m.rows, m.cols, m.partition);
  if (codes.size() != m.rows * m.cols || out.size() != codes.size())
    bad("dequantize: the code and output arrays need one entry per element");
  if (m.scales.size() != grid.count()) bad("dequantize: the metadata needs one scale per block");
  if (has_group_mantissa(m.rule) && m.group_mantissa.size() != BlockGrid(m.rows, m.cols, m.group).count())
    bad("dequantize: the metadata needs one group mantissa per group");
  const Converter code_to_f32(*m.element, format(FormatId::f32), m.wide);
  const Rounder f32_round(format(FormatId::f32), Policy{});
  const ElementDequantizer dq(*m.element, code_to_f32, f32_round);
  for (std::size_t b = 0; b < grid.count(); ++b) {
    const bool poisoned = block_poisoned(m, b);
    const Factor d = poisoned ? Factor{} : dequant_factor(m, b);
    const BlockRange r = grid.range(b);
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) {
        const std::size_t idx = i * m.cols + j;
        out[idx] = dq(codes[idx], poisoned, d);
      }
  }
}

QuantizeStats fake_quantize(const TensorView& x, const QuantizeSpec& spec_in, const Format& out_format,
                            std::span<std::uint32_t> dst, std::span<const std::uint32_t> random) {
  const QuantizeSpec spec = with_source(spec_in, x);
  Quantizer qz(spec, x.rows(), x.cols());
  const std::size_t n = qz.grid().count();
  std::vector<Amax> amax(n);
  for (std::size_t b = 0; b < n; ++b) amax[b] = qz.amax(x, b);
  qz.prepare(amax);
  QuantizeStats total;
  for (std::size_t b = 0; b < n; ++b)
    total += qz.fake_quantize_block(x, b, qz.block_scale(b, amax[b]), out_format, dst, random);
  return total;
}

QuantizeSpec recipe_spec(const Profile& p, const Format& element) {
  if (p.recipe == nullptr) bad("profile " + std::string(p.name) + " has no quantization recipe");
  const Recipe& r = *p.recipe;
  if (!r.takes(element))
    bad("profile " + std::string(p.name) + " quantizes to " + std::string(r.elements) + ", not " +
        std::string(element.name) + " (docs/profiles.md)");
  QuantizeSpec spec;
  spec.element = &element;
  const auto rule = parse_scale_rule(r.rule);
  if (!rule) throw std::logic_error("profile " + std::string(p.name) + ": unknown rule " + std::string(r.rule));
  spec.rule = *rule;
  if (const std::string err = parse_partition(std::string(r.partition), spec.partition); !err.empty())
    throw std::logic_error("profile " + std::string(p.name) + ": " + err);
  if (const auto err = apply_recipe_settings(spec.recipe, r.knobs))
    throw std::logic_error("profile " + std::string(p.name) + ": " + *err);
  if (r.amax_nan_ignore) spec.amax.nan = AmaxNan::ignore;
  spec.policy = p.narrow;
  spec.wide = p.wide;
  return spec;
}

QuantizeSpec quantize_spec(const Format& element, const QuantizeOptions& o, OptionSpelling opt) {
  const auto pid = find_profile(o.profile);
  const Profile* rp = pid && profile(*pid).recipe ? &profile(*pid) : nullptr;
  QuantizeSpec spec = rp ? recipe_spec(*rp, element) : QuantizeSpec{};
  spec.element = &element;
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  const std::string contradicts = " contradicts " + opt("profile") + " " + o.profile;
  if (o.partition)
    if (const std::string err = parse_partition(*o.partition, spec.partition); !err.empty())
      fail(opt("partition") + ": " + err);
  if (const std::string err = parse_partition(o.group.value_or("tensor"), spec.group); !err.empty())
    fail(opt("group") + ": " + err);
  if (o.scale) {
    const auto rule = parse_scale_rule(*o.scale);
    if (!rule) fail(opt("scale") + ": unknown rule '" + *o.scale + "' (known: " + scale_rule_names(", ") + ")");
    if (rp && *rule != spec.rule)
      fail(opt("scale") + " " + *o.scale + contradicts + " (its rule is " + std::string(to_string(spec.rule)) + ")");
    spec.rule = *rule;
  }
  if (o.recipe) {
    RecipeKnobs k = spec.recipe;
    if (const auto err = apply_recipe_settings(k, *o.recipe)) fail(opt("recipe") + ": " + *err);
    if (rp && !(k == spec.recipe))
      fail(opt("recipe") + " \"" + *o.recipe + "\"" + contradicts + " (its recipe is " + describe(spec.recipe) + ")");
    spec.recipe = k;
  }
  if (o.q_max) {
    if (const std::string err = check_qmax(*o.q_max); !err.empty()) fail(opt("q_max") + ": " + err);
    spec.q_max = *o.q_max;
  }
  // §13.2 amax policies: a recipe profile sets them; an explicit option that differs is refused
  const std::string an0 = spec.amax.nan == AmaxNan::ignore ? "ignore" : "propagate";
  const std::string ai0 = spec.amax.inf == AmaxInf::ignore ? "ignore" : "propagate";
  const std::string an = o.amax_nan.value_or(an0), ai = o.amax_inf.value_or(ai0);
  if (an != "propagate" && an != "ignore") fail(opt("amax_nan") + ": '" + an + "' is not propagate or ignore");
  if (ai != "propagate" && ai != "ignore") fail(opt("amax_inf") + ": '" + ai + "' is not propagate or ignore");
  if (rp && (an != an0 || ai != ai0))
    fail(opt("amax_nan") + " / " + opt("amax_inf") + " contradict " + opt("profile") + " " + o.profile +
         " (its amax policy is nan=" + an0 + " inf=" + ai0 + ")");
  spec.amax.nan = an == "ignore" ? AmaxNan::ignore : AmaxNan::propagate;
  spec.amax.inf = ai == "ignore" ? AmaxInf::ignore : AmaxInf::propagate;
  if (o.apply) {
    const auto v = parse_scale_apply(*o.apply);
    if (!v) fail(opt("apply") + ": '" + *o.apply + "' is not rn32 or fused");
    spec.apply = *v;
  }
  if (o.dequant) {
    const auto v = parse_dequant_op(*o.dequant);
    if (!v) fail(opt("dequant") + ": '" + *o.dequant + "' is not divide or reciprocal");
    spec.dequant = *v;
  }
  return spec;
}

}  // namespace numref
