// numref — amax and per-block scale rules.            spec §13 – §16, §18 (GAM §17: gam.hpp)
//
// Every function here is O(1) or one pass over one block, so a caller can stream a tensor
// block by block; quantize() (quantize.hpp) is built from them. All results are decided in
// integers: amax is an exact maximum of magnitudes, every division or product is rounded
// once by the core (exact.hpp), power-of-two exponents are read from bits, never log2f.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "numref/exact.hpp"
#include "numref/format.hpp"
#include "numref/partition.hpp"
#include "numref/policy.hpp"
#include "numref/tensor.hpp"

namespace numref {

// ---- §13 amax --------------------------------------------------------------------------

// §13.2 What a NaN element does to the amax of its block.
enum class AmaxNan : std::uint8_t {
  propagate,  // default: the amax is NaN, the block is poisoned (§13.3)
  ignore,     // the amax is taken over the non-NaN elements
};
// §13.2 What a ±Inf element does to the amax of its block.
enum class AmaxInf : std::uint8_t {
  propagate,  // default: the amax is +Inf, the block is poisoned (§13.3)
  ignore,     // the amax is taken over the finite elements (the ±Inf elements are then
              // converted like any element, §19.2: ±max finite under saturation)
};
struct AmaxPolicy {
  AmaxNan nan = AmaxNan::propagate;
  AmaxInf inf = AmaxInf::propagate;
  friend bool operator==(const AmaxPolicy&, const AmaxPolicy&) = default;
};

// §13.1 The amax of a block as a binary32 code: +0, a positive finite value (the exact
// maximum magnitude, widened exactly to binary32), +Inf (0x7F800000) or the canonical NaN
// (0x7FC00000). For these codes integer order is value order with NaN above +Inf, so the
// amax of a union of blocks is the integer maximum of their amaxes (§13.4).
struct Amax {
  std::uint32_t f32 = 0;
  bool is_zero() const { return f32 == 0; }
  bool poisoned() const { return !f32_is_finite(f32); }  // §13.3
  friend bool operator==(const Amax&, const Amax&) = default;
};

// §13.1 / §13.2 amax of the elements of `r` in `x` under `p`.
Amax block_amax(const TensorView& x, const BlockRange& r, const AmaxPolicy& p);
// §13.4 amax of the union of two element sets.
constexpr Amax combine(Amax a, Amax b) { return a.f32 >= b.f32 ? a : b; }

// ---- scale rules: the table --------------------------------------------------------------
//
// §19.6 kScaleRules below is the single definition of the scale rules: name, C ABI id, stored
// scale format, how the factor is formed, q_max, integer range, default application, how
// dequantization undoes the scale, spec clause. The reference, the oracle (descriptive columns
// only), cpu-fast, the CUDA plans, the conformance runner and the CLI read it; the arithmetic
// dispatches on the KIND (and the MX exponent rule), never on a rule's identity, so a new rule
// of an existing kind is a new enumerator and a new row (plus its NUMREF_RULE_* define, pinned
// in conformance/include/numref/conform/abi.hpp).

enum class ScaleRule : std::uint8_t {
  amax,          // §14.1 S = RN32(q_max / amax), stored S (f32)
  amax_recip,    // §14.2 quantize with S, store R = RN32(1 / S) (f32), dequantize x R
  amax_dequant,  // §14.3 store D = RN32(amax / q_max) (f32), quantize x / D, dequantize x D
  pow2,          // §15   P = 2^E(S), the exponent read from the bits of S (f32)
  mx_floor,      // §16.2 OCP MX v1.0 §6.3: X = 2^(E(amax) - emax_elem) (E8M0)
  mx_ceil,       // §16.3 X = 2^(ceil(log2 amax) - emax_elem)
  mx_even,       // §16.4 X = 2^(E(amax rounded to the element precision) - emax_elem)
  mx_rceil,      // §16.5 X = 2^ceil(log2(amax / q_max)): the smallest X with amax / X <= q_max
  mx_rceil_f32,  // §16.6 cuBLAS / TransformerEngine: X = ceil_E8M0(RN32(amax * RN32(1 / q_max)))
  gam,           // §17   (1.m_g) * 2^e_b: group mantissa (23 bits) + E8M0 block exponent
  nvfp4,         // §18   f32 tensor scale x E4M3 block scale (TransformerEngine NVFP4 recipe)
  int8,          // §20   delta = RN32(amax / 127) (f32), range [-127, 127]
  int8_127_5,    // §20   delta = RN32(amax / 127.5) (f32), range [-128, 127]
  pow2_recip,    // §15.3 quantize with P of §15, store R = 1 / P (exact, f32), dequantize x R
};

// §14 – §18 How a rule forms its block scale and factors (what implementations dispatch on).
enum class ScaleKind : std::uint8_t {
  fp32_quotient,  // §14.1 S = RN32(q_max / amax); stored S; quantize x · S
  fp32_recip,     // §14.2 the same S for quantize; stored R = RN32(1 / S); dequantize v · R
  fp32_dequant,   // §14.3 / §20.1 stored D = RN32(amax / q_max); quantize x / D; dequantize v · D
  pow2,           // §15 stored P = 2^E(S) of the §14.1 S; quantize x · P
  mx,             // §16 stored E8M0 code of X = 2^e, e by the row's MxExponent; quantize x / X
  gam,            // §17 group mantissa + E8M0 block exponent (tensor-level state: the groups)
  nvfp4,          // §18 E4M3 block scale under an f32 tensor scale (tensor-level state: t_amax)
  pow2_recip,     // §15.3 the P of §15 for quantize; stored R = 1 / P (exact); dequantize v · R
};
inline constexpr int kScaleKindCount = 8;

// §16 The exponent e of an MX shared scale X = 2^e (kind mx only).
enum class MxExponent : std::uint8_t {
  none,       // not an MX rule
  floor,      // §16.2 e = E(amax) - emax_elem
  ceil,       // §16.3 e = ceil(log2 amax) - emax_elem
  even,       // §16.4 e = E(amax rounded to the element precision) - emax_elem
  rceil,      // §16.5 e = ceil(log2(amax / q_max)), the exact quotient
  rceil_f32,  // §16.6 e = ceil(log2 RN32(amax · RN32(1 / q_max))), the binary32 descale
};

// §14.4 / §20.1 The q_max a rule uses when none is given.
enum class RuleQmax : std::uint8_t {
  element_max,       // the element format's largest finite value (§14.4)
  element_max_half,  // that value + 1/2 = 2^(n-1) - 1/2 for an n-bit integer: 127.5 (§20.1)
};

// §17.1 / §18.1 The tensor-level output a rule has next to its per-block scales: what
// ScaleMeta, the C ABI (the group_mantissa / tensor_amax arrays), the CLI (.npy files, summary
// fields) and Python carry for it. Code asks the row's column, never the rule's identity.
enum class TensorOutput : std::uint8_t {
  none,            // the per-block scales alone
  group_mantissa,  // §17.1 one 23-bit group mantissa per group of the spec's `group` partition
  tensor_amax,     // §18.1 the tensor amax (a binary32 code)
};

// §19.2 How the block factor is applied before the element conversion.
enum class ScaleApply : std::uint8_t {
  rn32,   // y = RN32(x op f) in binary32, then one conversion to the element (kernels do this)
  fused,  // the exact x op f rounded once into the element format
};

struct ScaleRuleInfo {
  ScaleRule rule;
  std::string_view name;                             // §19.6 the rule's name (CLI, vectors, reports)
  std::uint32_t abi_id;                              // §32.5 NUMREF_RULE_* of backend.h (pinned in conform/abi.hpp)
  FormatId scale_format;                             // §19.4 format of the stored per-block scale
  ScaleKind kind;                                    // how the factor is formed
  MxExponent mx = MxExponent::none;                  // kind mx: the exponent rule
  TensorOutput tensor_output = TensorOutput::none;   // §17.1 / §18.1 the tensor-level output
  RuleQmax q_max = RuleQmax::element_max;            // §14.4 default q_max
  std::optional<IntRange> int_range = std::nullopt;  // §20.2 set: integer elements only, this range fixed
  ScaleApply apply = ScaleApply::rn32;               // §19.2 default application
  bool dequant_multiplier = false;                   // §19.3 the stored S multiplies at quantize time, so dequantize
      // divides (dequant=divide) or multiplies by RN32(1 / S) (=reciprocal)
  int library_rank = 0;        // order of use in libraries, 1 = most used (mismatch diagnosis)
  std::string_view clause;     // spec clause
  std::uint8_t abi_minor = 1;  // §32.3 the C ABI minor version that introduced the rule (Annex C.1)
};

// §19.6 One row per ScaleRule, in enum order (checked below); omitted columns take the defaults above.
// clang-format off
inline constexpr ScaleRuleInfo kScaleRules[] = {
    // §14 – §15 binary32 scales
    {.rule = ScaleRule::amax, .name = "amax", .abi_id = 0, .scale_format = FormatId::f32,
     .kind = ScaleKind::fp32_quotient, .dequant_multiplier = true, .library_rank = 6, .clause = "§14.1"},
    {.rule = ScaleRule::amax_recip, .name = "amax-recip", .abi_id = 1, .scale_format = FormatId::f32,
     .kind = ScaleKind::fp32_recip, .library_rank = 8, .clause = "§14.2"},
    {.rule = ScaleRule::amax_dequant, .name = "amax-dequant", .abi_id = 2, .scale_format = FormatId::f32,
     .kind = ScaleKind::fp32_dequant, .library_rank = 7, .clause = "§14.3"},
    {.rule = ScaleRule::pow2, .name = "pow2", .abi_id = 3, .scale_format = FormatId::f32,
     .kind = ScaleKind::pow2, .dequant_multiplier = true, .library_rank = 9, .clause = "§15.1"},
    // §16 MX E8M0 shared scales
    {.rule = ScaleRule::mx_floor, .name = "mx-floor", .abi_id = 4, .scale_format = FormatId::f8e8m0fnu,
     .kind = ScaleKind::mx, .mx = MxExponent::floor, .library_rank = 3, .clause = "§16.2"},
    {.rule = ScaleRule::mx_ceil, .name = "mx-ceil", .abi_id = 5, .scale_format = FormatId::f8e8m0fnu,
     .kind = ScaleKind::mx, .mx = MxExponent::ceil, .library_rank = 5, .clause = "§16.3"},
    {.rule = ScaleRule::mx_even, .name = "mx-even", .abi_id = 6, .scale_format = FormatId::f8e8m0fnu,
     .kind = ScaleKind::mx, .mx = MxExponent::even, .library_rank = 4, .clause = "§16.4"},
    {.rule = ScaleRule::mx_rceil, .name = "mx-rceil", .abi_id = 7, .scale_format = FormatId::f8e8m0fnu,
     .kind = ScaleKind::mx, .mx = MxExponent::rceil, .library_rank = 1, .clause = "§16.5"},
    {.rule = ScaleRule::mx_rceil_f32, .name = "mx-rceil-f32", .abi_id = 8, .scale_format = FormatId::f8e8m0fnu,
     .kind = ScaleKind::mx, .mx = MxExponent::rceil_f32, .library_rank = 2, .clause = "§16.6"},
    // §17 – §18 scales with tensor-level state
    {.rule = ScaleRule::gam, .name = "gam", .abi_id = 9, .scale_format = FormatId::f8e8m0fnu,
     .kind = ScaleKind::gam, .tensor_output = TensorOutput::group_mantissa, .dequant_multiplier = true,
     .library_rank = 12, .clause = "§17"},
    {.rule = ScaleRule::nvfp4, .name = "nvfp4", .abi_id = 10, .scale_format = FormatId::f8e4m3fn,
     .kind = ScaleKind::nvfp4, .tensor_output = TensorOutput::tensor_amax, .library_rank = 13, .clause = "§18"},
    // §20 INT8: integer elements, the exact quotient rounded once
    {.rule = ScaleRule::int8, .name = "int8", .abi_id = 11, .scale_format = FormatId::f32,
     .kind = ScaleKind::fp32_dequant, .int_range = IntRange::symmetric, .apply = ScaleApply::fused,
     .library_rank = 10, .clause = "§20"},
    {.rule = ScaleRule::int8_127_5, .name = "int8-127.5", .abi_id = 12, .scale_format = FormatId::f32,
     .kind = ScaleKind::fp32_dequant, .q_max = RuleQmax::element_max_half, .int_range = IntRange::full,
     .apply = ScaleApply::fused, .library_rank = 11, .clause = "§20"},
    // §15.3 appended (C ABI 1.5): the power-of-two scale stored as its reciprocal
    {.rule = ScaleRule::pow2_recip, .name = "pow2-recip", .abi_id = 13, .scale_format = FormatId::f32,
     .kind = ScaleKind::pow2_recip, .library_rank = 14, .clause = "§15.3", .abi_minor = 5},
};
// clang-format on
inline constexpr int kScaleRuleCount = static_cast<int>(std::size(kScaleRules));

namespace detail {
constexpr bool scale_rules_well_formed() {
  for (int i = 0; i < kScaleRuleCount; ++i) {
    const ScaleRuleInfo& r = kScaleRules[i];
    if (static_cast<int>(r.rule) != i) return false;                            // enum order
    if ((r.kind == ScaleKind::mx) != (r.mx != MxExponent::none)) return false;  // an exponent iff mx
    // §17.1 the group mantissas iff gam, §18.1 the tensor amax iff nvfp4 (the kind's arithmetic makes them)
    if ((r.kind == ScaleKind::gam) != (r.tensor_output == TensorOutput::group_mantissa)) return false;
    if ((r.kind == ScaleKind::nvfp4) != (r.tensor_output == TensorOutput::tensor_amax)) return false;
    if (r.library_rank < 1 || r.library_rank > kScaleRuleCount) return false;
    for (int j = 0; j < i; ++j)
      if (kScaleRules[j].name == r.name || kScaleRules[j].abi_id == r.abi_id ||
          kScaleRules[j].library_rank == r.library_rank)
        return false;  // names, ids and ranks are unique
  }
  return true;
}
}  // namespace detail
static_assert(detail::scale_rules_well_formed(),
              "kScaleRules: one row per ScaleRule in enum order, unique names, "
              "ids and ranks, an MX exponent exactly for kind mx, group "
              "mantissas exactly for kind gam, a tensor amax exactly for nvfp4");

constexpr const ScaleRuleInfo& rule_info(ScaleRule r) { return kScaleRules[static_cast<std::size_t>(r)]; }

// §19.6 names, read from the table.
constexpr std::string_view to_string(ScaleRule r) {
  return static_cast<int>(r) < kScaleRuleCount ? rule_info(r).name : std::string_view("?");
}
constexpr std::optional<ScaleRule> parse_scale_rule(std::string_view s) {
  for (const ScaleRuleInfo& r : kScaleRules)
    if (r.name == s) return r.rule;
  return std::nullopt;
}
// Every rule name in table order, joined by `sep` ("amax, amax-recip, ..."): CLI help and errors.
std::string scale_rule_names(std::string_view sep);
// The rules in the order of their use in libraries (library_rank 1 first).
constexpr std::array<ScaleRule, kScaleRuleCount> rules_by_library_use() {
  std::array<ScaleRule, kScaleRuleCount> out{};
  for (const ScaleRuleInfo& r : kScaleRules) out[static_cast<std::size_t>(r.library_rank - 1)] = r.rule;
  return out;
}

// §19.4 The format of the stored per-block scale: f32, f8e8m0fnu (MX, GAM) or f8e4m3fn (NVFP4).
constexpr const Format& scale_format(ScaleRule r) { return format(rule_info(r).scale_format); }
constexpr ScaleKind scale_kind(ScaleRule r) { return rule_info(r).kind; }
constexpr bool is_mx(ScaleRule r) { return rule_info(r).kind == ScaleKind::mx; }
// §20 The rule needs integer elements (and fixes their range).
constexpr bool is_int8(ScaleRule r) { return rule_info(r).int_range.has_value(); }
// §19.3 The stored scale multiplies at quantize time (amax, pow2, gam): dequant=divide|reciprocal applies.
constexpr bool dequant_is_multiplier(ScaleRule r) { return rule_info(r).dequant_multiplier; }
// §17.1 / §18.1 The block scale needs tensor-level state (group mantissas, tensor amax).
constexpr bool needs_tensor_state(ScaleKind k) { return k == ScaleKind::gam || k == ScaleKind::nvfp4; }
constexpr bool needs_tensor_state(ScaleRule r) { return rule_info(r).tensor_output != TensorOutput::none; }
// §17.1 The rule's scale has group mantissas: the spec's `group` partition applies, one
// mantissa per group is an output (ScaleMeta::group_mantissa) and an input of dequantize.
constexpr bool has_group_mantissa(ScaleRule r) { return rule_info(r).tensor_output == TensorOutput::group_mantissa; }
// §18.1 The rule's scale has a tensor amax: an output (ScaleMeta::tensor_amax) and an input of dequantize.
constexpr bool has_tensor_amax(ScaleRule r) { return rule_info(r).tensor_output == TensorOutput::tensor_amax; }

// §14.4 q_max of an element format: its largest finite value (448 for f8e4m3fn, 57344 for
// f8e5m2, 6 for f4e2m1fn, 127 for int8, ...).
Exact format_qmax(const Format& elem);
// §14.4 / §20.1 The default q_max of `rule` for `elem` (the row's RuleQmax): format_qmax(elem),
// or format_qmax(elem) + 1/2 (127.5 for int8-127.5).
Exact rule_qmax(ScaleRule rule, const Format& elem);
// §14.4 Checks an explicit q_max: finite, 4 <= q_max <= max finite f32, at most 24
// significant bits. Returns an error message or an empty string.
std::string check_qmax(const Exact& q);

// §14.1 FP32 amax scale S (a binary32 code): 1.0 for amax = 0; NaN for a poisoned amax;
// else RN32(q_max / amax) clamped to the largest finite binary32 (an amax so small that
// q_max / amax overflows binary32 gets 0x7F7FFFFF; clamping the scale DOWN never makes an
// element saturate).
std::uint32_t fp32_amax_scale(Amax a, const Exact& q_max);
// §14.3 FP32 dequant scale D: 1.0 for amax = 0; NaN for a poisoned amax; else
// RN32(amax / q_max), raised to the smallest positive binary32 2^-149 if it rounds to 0
// (raising a divisor never makes an element saturate).
std::uint32_t fp32_dequant_scale(Amax a, const Exact& q_max);
// §15 The power of two 2^E(S) of a scale S (binary32 code): the exponent field kept and the
// fraction cleared for a normal S; the top bit of the fraction for a subnormal S; NaN stays NaN.
std::uint32_t pow2_floor(std::uint32_t s);

// §16.1 emax_elem = E(q_max) = floor(log2 q_max): 8 for f8e4m3fn, 15 for f8e5m2, 4 for
// f6e3m2fn, 2 for f6e2m3fn and f4e2m1fn, 6 for int8.
int mx_emax_elem(const Exact& q_max);
// §16 The E8M0 shared-scale code of a block under a rule of kind mx (its MxExponent): X =
// 2^(code - 127). The exponent is clamped to [-127, 127] (codes 00..FE); amax = 0 gives 00 (the
// exponent is -infinity, clamped); a poisoned amax gives FF (NaN). `elem_precision` (fraction
// bits + 1) is used by MxExponent::even only. Throws std::invalid_argument for another kind.
std::uint32_t mx_scale_code(ScaleRule rule, Amax a, const Exact& q_max, int elem_precision);
// §16 / §13.6 The same for a positive value v that need not be a binary32 (2^128 for an
// amax read from the +Inf exponent field, inf_block=exponent).
std::uint32_t mx_scale_code_of(ScaleRule rule, const Exact& v, const Exact& q_max, int elem_precision);
// §16.8 RCEIL "as binary32 log2f would" (scale_exp=log2f; torchao _to_mx_rceil, DeepGEMM
// ceil_to_ue8m0): d = RN32(v / q_max), e = ceil(log2f_cr(d)) clamped to [-127, 127];
// d = 0 gives code 00 (log2 0 = -Inf). v > 0 (the amax, or its floor §13.5).
std::uint32_t mx_rceil_log2f_code(const Exact& v, const Exact& q_max);
// §16.11 FLOOR "as binary32 log2f would" (scale_exp=log2f with mx-floor; microxcaling
// _shared_exponents): e = floor(log2f_cr(a)) - emax_elem clamped to [-127, 127], where a is the
// binary32 amax and an amax of 0 is read as 2^-126 (FP32_MIN_NORMAL). Differs from §16.2 just
// below a power of two, where log2f rounds up (amax FLT_MAX: e = 128 - emax_elem).
std::uint32_t mx_floor_log2f_code(std::uint32_t amax, const Exact& q_max);
// §16.10 mx-rceil-f32 with mx_descale=divide (DeepGEMM ceil_to_ue8m0): d = RN32(v / q_max),
// e = E(d) + 1 unless d is a power of two, clamped to [-127, 127]; d = 0 gives 00.
std::uint32_t mx_rceil_div_code(const Exact& v, const Exact& q_max);
// §15.2 exp2(floor(log2f(s))) of a binary32 scale s (scale_exp=log2f): the power of two
// 2^floor(log2f_cr(s)); 0 stays 0, NaN stays NaN. Differs from pow2_floor just below a
// power of two, where log2f rounds up (s = 0x497FFFFF gives 2^20, pow2_floor 2^19).
std::uint32_t pow2_log2f(std::uint32_t s);
// §13.5 The amax floor's value (amax_floor != none): RN64(1e-12) or RN32(1e-4), exact.
Exact amax_floor_value(AmaxFloor f);

// §16.8 log2f as a correctly rounded function: the binary32 value nearest to log2 x (ties
// cannot occur: log2 of a binary32 that is not a power of two is irrational) for a binary32
// code x. +0 / -0 give -Inf, a negative x gives the canonical NaN, +Inf gives +Inf, a NaN
// is returned quieted. Computed exactly in integers: log2 of the significand by the atanh
// series in 124-bit fixed point with a proven error bound, checked to round unambiguously
// (std::logic_error otherwise; the oracle test compares with MPFR's mpfr_log2).
std::uint32_t log2f_cr(std::uint32_t x);
// The integer floor / ceiling of a finite binary32 value (|x| < 2^31).
long f32_floor(std::uint32_t x);
long f32_ceil(std::uint32_t x);

// ---- §18 NVFP4 two-level scale ----------------------------------------------------------
// C = RN32(q_scale * q_max) with q_scale = max finite of f8e4m3fn (448): 2688 for f4e2m1fn.
std::uint32_t nvfp4_global_constant(const Exact& q_max);
// §18.1 tensor encode scale S_enc: 1.0 for amax = 0, NaN for a poisoned amax, else
// RN32(C / t_amax) clamped to max finite.
std::uint32_t nvfp4_tensor_scale(Amax t, const Exact& q_max);
// §18.2 block decode scale d_b (an f8e4m3fn code): RNE, saturating, of
// RN32(b_amax * RN32(S_enc * RN32(1 / q_max))); 7F (NaN) when S_enc is NaN.
std::uint32_t nvfp4_block_code(Amax b, std::uint32_t s_enc, const Exact& q_max);
// §18.3 quantize factor c_b = min(RN32(1 / RN32(d_b * RN32(1 / S_enc))), max finite) (f32 code).
std::uint32_t nvfp4_encode_factor(std::uint32_t d_b, std::uint32_t s_enc);
// §18.4 dequantize factor f_b = RN32(RN32(d_b * t_amax) * RN32(1 / C)) (f32 code).
std::uint32_t nvfp4_decode_factor(std::uint32_t d_b, Amax t, const Exact& q_max);

// §18.5 binary32 arithmetic with x86 SSE / AVX NaN rules (f32 codes in, f32 code out): a NaN operand
// gives that NaN quieted (the first when both are); 0 / 0, Inf / Inf and 0 * Inf give the default NaN
// 0xFFC00000; otherwise IEEE 754 round to nearest even, overflow to +-Inf.
std::uint32_t f32_div_x86(std::uint32_t a, std::uint32_t b);
std::uint32_t f32_mul_x86(std::uint32_t a, std::uint32_t b);
// §18.5 the decode-direction tensor scale p = RN32(t_amax / C) (x86 rules); for a NaN t_amax 0xFFFFFFFF
// (binary32 source) or 0x7FC00000 (16-bit sources).
std::uint32_t nvfp4_decode_tensor_scale(Amax t, const Exact& q_max, bool f32_source);
// §18.5 / §18.6 one block of nvfp4_scale=decode (p given) or =block (p empty): the E4M3 code d_b and the
// binary32 quantize multiplier m_b (x86 rules; NaN, +Inf and 0 are possible).
struct Nvfp4TorchaoBlock {
  std::uint32_t code;
  std::uint32_t multiplier;
};
Nvfp4TorchaoBlock nvfp4_torchao_block(Amax b, std::optional<std::uint32_t> p, const Exact& q_max);
// §18.5 / §18.6 the dequantize factor: v(d_b) (block) or RN32(p * v(d_b)) (decode) as an f32 code.
std::uint32_t nvfp4_torchao_dequant(std::uint32_t d_b, std::optional<std::uint32_t> p);

}  // namespace numref
