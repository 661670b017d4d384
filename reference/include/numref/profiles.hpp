// numref — the named profiles (spec §10): the profile ids, the profile table and its accessors.
//
// A profile is one row of kProfiles (below) with its id in NUMREF_PROFILE_IDS; its C ABI number is
// its position, NUMREF_PROFILE_LIST in conformance/include/numref/backend.h (pinned one by one in
// conform/abi.hpp). A new profile is that row here and its entry there: docs/contributing.md.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "numref/format.hpp"
#include "numref/policy.hpp"

namespace numref {

// §10 Named profiles. A profile gives one Policy for "narrow" targets (storage width
// <= 8 bits: the OCP 8-bit, MX and int8 formats) and one for "wide" targets (f16, bf16,
// f32), because real libraries treat them differently (CUDA saturates FP8 under
// __NV_SATFINITE while __float2bfloat16_rn is IEEE round-to-nearest with Inf), and then
// a short list of rules keyed on the (source, target) pair (§10.2): where a library's
// behaviour depends on the source too (XLA's f8e5m2 NaN from f32 vs from 16-bit sources,
// NumPy's own f32 -> f16 cast inside ml_dtypes), the rule's knob settings are applied on top.
// The profiles are data: one row each in kProfiles below (designated fields .id, .name, .summary,
// .narrow, .wide, .rules, .recipe; checked at compile time: one row per ProfileId in enum order,
// names unique and spelled as the enumerators).
//
// NUMREF_PROFILE_IDS(X) names them in table order, which is the C ABI numbering: the C header
// lists the same names (NUMREF_PROFILE_LIST in conformance/include/numref/backend.h, pinned one
// by one in conform/abi.hpp). A number never changes: a new profile is appended.
// clang-format off
#define NUMREF_PROFILE_IDS(X)                                                                     \
  X(ocp) X(ieee) X(cuda_satfinite) X(cuda_nosat) X(ml_dtypes) X(torch) X(torch_default) X(xla)    \
  /* §10.4 profiles with a quantization recipe */                                               \
  X(torchao_mx_floor) X(torchao_mx_ceil) X(torchao_mx_even) X(torchao_mx_rceil) X(torchao_float8) \
  X(torchao_float8_pow2) X(deepgemm) X(te_mxfp8)                                                \
  /* element profiles added later (numbers of §32.3 kept) */                                    \
  X(gfloat) X(gfloat_sat)                                                                       \
  /* recipe profiles added later */                                                             \
  X(te_float8_current) X(te_float8_block) X(microxcaling) X(torchao_float8_inference)          \
  X(microxcaling_even) X(te_float8_current_pow2) X(te_float8_block_f32) X(te_mxfp8_2_13)        \
  X(deepgemm_f32) X(microxcaling_floor) X(torchao_nvfp4) X(torchao_nvfp4_block) X(te_nvfp4) X(te_nvfp4_2d)
// clang-format on
#define NUMREF_PROFILE_ENUMERATOR(name) name,
enum class ProfileId : std::uint8_t { NUMREF_PROFILE_IDS(NUMREF_PROFILE_ENUMERATOR) };
#undef NUMREF_PROFILE_ENUMERATOR
#define NUMREF_PROFILE_COUNT_ONE(name) +1
inline constexpr int kProfileCount = 0 NUMREF_PROFILE_IDS(NUMREF_PROFILE_COUNT_ONE);
#undef NUMREF_PROFILE_COUNT_ONE

// §10.2 One (source, target) rule of a profile: `from` and `to` are space-separated format
// names ("*" = any format); `settings` are §10.3 "key=word" settings applied, in rule order,
// on top of the narrow / wide policy of the target; `why` names the library behaviour.
struct ProfileRule {
  std::string_view from;
  std::string_view to;
  std::string_view settings;
  std::string_view why;
  bool matches(const Format& f, const Format& t) const;
};

struct Profile {
  ProfileId id;
  std::string_view name;
  std::string_view summary;
  Policy narrow;
  Policy wide;
  std::span<const ProfileRule> rules = {};
  const Recipe* recipe = nullptr;  // §10.4 set: the profile names a quantization recipe
  std::uint8_t abi_minor = 0;      // §32.3 the C ABI minor version that introduced its constant (Annex C.1)
  // The policy by target width alone (§10.1), without the pair rules: for callers that have
  // no source format (the element policy of a quantizer is narrow by definition).
  const Policy& for_target(const Format& to) const { return to.bits <= 8 ? narrow : wide; }
  // §10.2 The policy of the cast from -> to: for_target(to) and every matching rule.
  Policy for_cast(const Format& from, const Format& to) const;
};

const Profile& profile(ProfileId id);
std::optional<ProfileId> find_profile(std::string_view name);
const Profile* all_profiles();  // kProfileCount entries
// "ocp, ieee, ...": the profile names in table order, for messages and help texts.
std::string profile_names();
// §10.2 The rules of a profile in one line: "bf16>f32: nan=raw; * > f32: ..." ("" when none).
std::string describe_rules(const Profile& pr);

// ---- §10 the profile table: each library's policies, pair rules and recipes, then one row per profile ----
namespace profile_table {

constexpr Policy make_ocp() { return Policy{}; }

constexpr Policy cuda_narrow(Overflow o) {
  Policy p;
  p.round = Round::rne;
  p.overflow = o;
  p.inf_sat = InfSat::max;               // __NV_SATFINITE: +-Inf -> +-max finite
  p.nan = NanOut::ones;                  // NaN -> 0x7F for E4M3 and E5M2, sign dropped
  p.nan_to_finite = NanToFinite::max;    // __nv_cvt_float_to_fp4/fp6: NaN -> +max
  p.e8m0_round = E8m0Round::floor;       // cudaRoundZero (cudaRoundPosInf = ceil)
  p.zero_to_nozero = ZeroToNoZero::min;  // 0 -> 0x00
  p.negative = Negative::abs;            // the sign bit is ignored
  return p;
}
constexpr Policy cuda_wide() {
  Policy p;
  p.overflow = Overflow::nonsat;  // __float2bfloat16_rn / __float2half_rn: IEEE, overflow -> Inf
  p.nan = NanOut::ones;           // NaN -> 0x7FFF
  return p;
}
constexpr Policy mld_narrow() {
  Policy p;
  p.overflow = Overflow::nonsat;
  p.inf_sat = InfSat::keep;  // Inf stays NaN (E4M3) / Inf (E5M2)
  p.nan = NanOut::sign;
  p.nan_to_finite = NanToFinite::flipzero;  // quiet_NaN() is the -0 pattern, negated for -NaN (D2)
  p.e8m0_round = E8m0Round::tiesup;
  p.e8m0_low = E8m0Low::grid;  // below 2^-126: x / 2^-126 rounded to an integer (D1)
  p.zero_to_nozero = ZeroToNoZero::nan;
  p.negative = Negative::nan;
  return p;
}
constexpr Policy mld_wide() {
  Policy p;
  p.overflow = Overflow::nonsat;
  p.nan = NanOut::sign;  // Eigen bfloat16: 0x7FC0 / 0xFFC0
  return p;
}

// clang-format off
// §10.2 The pair rules (docs/profiles.md gives the evidence for each).
// The rules of one profile are a named group (kCudaRules, ...); rules two profiles share are
// named one by one and listed by name (torch_rule below). Order matters: settings apply in rule order.
inline constexpr ProfileRule kCudaRules[] = {
    {.from = "bf16", .to = "f32", .settings = "nan=raw",
     .why = "__bfloat162float widens by a 16-bit shift (__internal_bfloat162float: u = h << 16)"},
};
inline constexpr ProfileRule kMlDtypesRules[] = {
    {.from = "bf16 f16 f32", .to = "f32", .settings = "nan=raw",
     .why = "widening to float32 copies the NaN bits (NumPy's half -> float, bf16 shift)"},
    {.from = "bf16", .to = "bf16", .settings = "nan=raw", .why = "a cast to the same dtype is a copy in NumPy (D3)"},
    {.from = "f16", .to = "f16", .settings = "nan=raw", .why = "a cast to the same dtype is a copy in NumPy (D3)"},
    {.from = "f8e5m2", .to = "f8e5m2", .settings = "nan=raw", .why = "a cast to the same dtype is a copy in NumPy"},
    {.from = "f8e4m3", .to = "f8e4m3", .settings = "nan=raw", .why = "a cast to the same dtype is a copy in NumPy"},
    {.from = "f8e3m4", .to = "f8e3m4", .settings = "nan=raw", .why = "a cast to the same dtype is a copy in NumPy"},
    {.from = "f32", .to = "f16", .settings = "nan=raw",
     .why = "NumPy's own float32 -> float16 cast truncates the payload unquieted (D4)"},
};

// torch 2.15 CPU eager (c10/util/Float8_*.h, BFloat16.h, Half.h and the ATen copy kernels).
constexpr Policy torch_narrow() {
  Policy p;
  p.overflow = Overflow::nonsat;        // fp8e5m2_from_fp32_value: overflow -> Inf; e8m0: -> 0xFF
  p.inf_sat = InfSat::max;             // f8e4m3fn (saturating by rule below): +-Inf -> +-448
  p.nan = NanOut::ones_sign;           // fp8e5m2: 0x7F | sign; e4m3fn: 0x7F | sign; e8m0: 0xFF
  p.e8m0_round = E8m0Round::tiesup;    // Float8_e8m0fnu: round half up on the exponent
  p.e8m0_low = E8m0Low::grid;          // f32 00400001..005FFFFF -> 0x01
  p.zero_to_nozero = ZeroToNoZero::min;  // 0 -> 0x00
  p.negative = Negative::abs;            // the sign bit is dropped
  return p;
}
constexpr Policy torch_wide() {
  Policy p;
  p.nan = NanOut::payload;  // c10::Half / float widenings keep and quiet the payload
  return p;
}
// torch's rules, one constant each: torch and torch_default list them by name.
namespace torch_rule {
inline constexpr ProfileRule e4m3fn_saturates{
    .from = "*", .to = "f8e4m3fn", .settings = "overflow=saturate",
    .why = "fp8e4m3fn_from_fp32_value saturates finite overflow and +-Inf to +-448"};
inline constexpr ProfileRule bf16_canonical_nan{.from = "*", .to = "bf16", .settings = "nan=canonical",
                                         .why = "c10::BFloat16 round_to_nearest_even: any NaN -> 0x7FC0"};
inline constexpr ProfileRule f32_bf16_vector_kernel{
    .from = "f32", .to = "bf16", .settings = "nan=all_ones",
    .why = "the AVX2 / AVX-512 float -> bfloat16 kernel: any NaN -> 0xFFFF"};
inline constexpr ProfileRule widen_by_shift{.from = "bf16 f8e8m0fnu", .to = "f32", .settings = "nan=raw",
                                     .why = "bfloat16 / e8m0 -> float widen by a bit shift (NaN bits kept)"};
constexpr ProfileRule same_dtype(std::string_view f) {
  return {.from = f, .to = f, .settings = "nan=raw", .why = "a .to() to the same dtype returns the tensor itself"};
}
inline constexpr ProfileRule same_bf16 = same_dtype("bf16"), same_f16 = same_dtype("f16"), same_f32 = same_dtype("f32"),
                      same_f8e5m2 = same_dtype("f8e5m2");
inline constexpr ProfileRule fnuz_to_f16{
    .from = "f8e4m3fnuz f8e5m2fnuz", .to = "f16", .settings = "nan=canonical",
    .why = "the fnuz NaN (80) widens to the positive 7F800001 (fp8_fnuz_to_fp32_value), then to c10::Half: 7E00"};
inline constexpr ProfileRule fnuz_to_fp8{.from = "f8e4m3fnuz f8e5m2fnuz", .to = "f8e4m3fn f8e5m2", .settings = "nan=ones",
                                  .why = "the fnuz NaN goes through the positive 7F800001: 7F"};
inline constexpr ProfileRule fnuz_to_f32{
    .from = "f8e4m3fnuz f8e5m2fnuz", .to = "f32", .settings = "nan=raw_plus",
    .why = "fp8_fnuz_to_fp32_value returns the positive signaling NaN 7F800001 for the fnuz NaN 80"};
// ATEN_CPU_CAPABILITY=default only
inline constexpr ProfileRule scalar_half{.from = "bf16 f8e4m3fn f8e5m2", .to = "f16", .settings = "nan=sign",
                                  .why = "the scalar c10::Half conversion: canonical NaN with the sign"};
}  // namespace torch_rule
inline constexpr ProfileRule kTorchRules[] = {
    torch_rule::e4m3fn_saturates, torch_rule::bf16_canonical_nan, torch_rule::f32_bf16_vector_kernel,
    torch_rule::widen_by_shift,   torch_rule::same_bf16,          torch_rule::same_f16,
    torch_rule::same_f32,         torch_rule::same_f8e5m2,        torch_rule::fnuz_to_f16,
    torch_rule::fnuz_to_fp8,      torch_rule::fnuz_to_f32,
};
// ATEN_CPU_CAPABILITY=default: the scalar f32 -> bf16 path (0x7FC0, no vector-kernel rule) and the
// scalar c10::Half conversion; the rest as torch.
inline constexpr ProfileRule kTorchDefaultRules[] = {
    torch_rule::e4m3fn_saturates, torch_rule::bf16_canonical_nan, torch_rule::widen_by_shift,
    torch_rule::same_bf16,        torch_rule::same_f16,           torch_rule::same_f32,
    torch_rule::same_f8e5m2,      torch_rule::fnuz_to_f16,        torch_rule::fnuz_to_fp8,
    torch_rule::fnuz_to_f32,      torch_rule::scalar_half,
};

// XLA (jax 0.10 CPU, xla/service/cpu elemental convert and the float8 normalisation passes).
constexpr Policy xla_narrow() {
  Policy p;
  p.overflow = Overflow::nonsat;
  p.inf_sat = InfSat::keep;
  p.nan = NanOut::sign;                    // f32 -> f8e5m2: 0x7E / 0xFE; e4m3fn 0x7F / 0xFF
  p.nan_to_finite = NanToFinite::negzero;  // f4e2m1fn: every NaN -> 0x8
  p.e8m0_round = E8m0Round::tiesup;
  p.e8m0_low = E8m0Low::grid;
  p.zero_to_nozero = ZeroToNoZero::nan;
  p.negative = Negative::nan;
  return p;
}
constexpr Policy xla_wide() {
  Policy p;
  p.nan = NanOut::payload;  // f32 -> f16, bf16 -> f16, f16 -> f32: payload kept, quieted
  return p;
}
inline constexpr ProfileRule kXlaRules[] = {
    {.from = "bf16 f16 f8e4m3fn f8e8m0fnu f8e4m3fnuz f8e5m2fnuz f8e4m3b11fnuz f8e4m3 f8e3m4", .to = "f8e5m2",
     .settings = "nan=ones", .why = "sources other than f32 reach f8e5m2 through f16 bits: NaN -> 0x7F"},
    {.from = "f8e4m3fn f8e5m2 f8e4m3 f8e3m4", .to = "f16 f32", .settings = "nan=sign",
     .why = "float8 widenings give the canonical NaN with the sign"},
    {.from = "f8e5m2", .to = "f8e5m2", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "*", .to = "bf16", .settings = "nan=sign", .why = "conversions into bf16 give the canonical NaN with the sign"},
    {.from = "bf16", .to = "f32", .settings = "nan=raw", .why = "bf16 -> f32 is a 16-bit shift"},
    {.from = "bf16", .to = "bf16", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "f16", .to = "f16", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "f32", .to = "f32", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "f8e4m3", .to = "f8e4m3", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "f8e3m4", .to = "f8e3m4", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "f8e4m3fnuz f8e5m2fnuz f8e4m3b11fnuz", .to = "f32 bf16 f16 f8e4m3fn f8e4m3 f8e3m4",
     .settings = "nan=canonical", .why = "the fnuz NaN (0x80) is read as a positive NaN: the canonical NaN"},
};

// gfloat 0.5 (Graphcore; gfloat/round.py round_float + gfloat/encode.py encode_float, the scalar
// API that gfloat's own encode_block uses; docs/profiles.md): one rule for every target. The
// operand's value is rounded with an unbounded exponent (subnormals and -0 kept, E8M0 ties by code
// parity = §7.1 follow); overflow gives +-Inf (f8e5m2, wide) or the NaN (sat=False) or +-max
// (sat=True; also +-Inf); every NaN is encoded as code_of_nan = all bits set (FF, FFFF, FFFFFFFF),
// the NaN that stands for Inf in f8e4m3fn included; zero and negative finite operands into the
// unsigned E8M0, and rounded values below its fi.min = 2^-127, give FF; round_float drops the sign
// of an unsigned target before its Inf test, so -Inf is +Inf there (FE with sat=True). gfloat
// raises for a NaN (and, with sat=False, an overflow) into FP6 / FP4, so nan_to_finite is never
// observed.
constexpr Policy gfloat_policy(Overflow o) {
  Policy p;
  p.overflow = o;
  p.inf_sat = InfSat::max;        // sat=True: round_float's Inf -> amax
  p.nan = NanOut::all_ones;       // encode_float: np.isnan(v) -> fi.code_of_nan = 2^k - 1 (L34)
  p.inf_nan = InfNan::nan;        // §6.7 round_float's NaN for Inf / overflow is encoded the same (G3)
  p.e8m0_low = E8m0Low::nan;      // §7.4 encode_float: v < fi.min (2^-127) -> code_of_nan (L45, G1)
  p.negative = Negative::inf_abs;  // §7.3 round_float L65 / L68: -Inf -> +Inf for unsigned (G2)
  return p;
}

// §10.4 torchao 0.18 (prototype/mx_formats/mx_tensor.py to_mx; float8/float8_utils.py
// amax_to_scale, hp_tensor_and_scale_to_float8). Elements: torchao clamps to +-max_pos in
// binary32, then casts with torch (.to(float8) = the torch profile) or with
// _f32_to_floatx_unpacked (FP6 / FP4: RNE, saturating) — torch's narrow policy saturating.
constexpr Policy torchao_narrow() {
  Policy p = torch_narrow();
  p.overflow = Overflow::saturate;
  return p;
}
// FLOOR, CEIL and EVEN share their handling of code 00, Inf / NaN blocks and FP6 / FP4 NaN.
inline constexpr std::string_view kTorchaoMxKnobs =
    "zero_code=min_normal inf_block=exponent nan_block=inf_divisor elem_nan=half";
inline constexpr Recipe kTorchaoMxFloor{.rule = "mx-floor", .partition = "block:1x32", .knobs = kTorchaoMxKnobs,
                                 .source = "torchao 0.18 prototype.mx_formats.mx_tensor.to_mx(scaling_mode=FLOOR)",
                                 .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};
inline constexpr Recipe kTorchaoMxCeil{.rule = "mx-ceil", .partition = "block:1x32", .knobs = kTorchaoMxKnobs,
                                .source = "torchao 0.18 prototype.mx_formats.mx_tensor.to_mx(scaling_mode=CEIL)",
                                .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};
inline constexpr Recipe kTorchaoMxEven{.rule = "mx-even", .partition = "block:1x32", .knobs = kTorchaoMxKnobs,
                                .source = "torchao 0.18 prototype.mx_formats.mx_tensor.to_mx(scaling_mode=EVEN)",
                                .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};
inline constexpr Recipe kTorchaoMxRceil{.rule = "mx-rceil", .partition = "block:1x32",
                                 .knobs = "scale_exp=log2f zero_code=one inf_block=max_code elem_nan=half",
                                 .source = "torchao 0.18 prototype.mx_formats.mx_tensor._to_mx_rceil (eager fallback)",
                                 .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};
inline constexpr Recipe kTorchaoFloat8{.rule = "amax", .partition = "tensor",
                                .knobs = "amax_floor=1e-12 inf_block=zero_scale nan_scale=all_ones_tensor",
                                .source = "torchao 0.18 float8.float8_utils.amax_to_scale + to_fp8_saturated",
                                .elements = "f8e4m3fn f8e5m2"};
inline constexpr Recipe kTorchaoFloat8Pow2{
    .rule = "pow2", .partition = "tensor",
    .knobs = "amax_floor=1e-12 scale_exp=log2f inf_block=zero_scale nan_scale=all_ones_tensor",
    .source = "torchao 0.18 float8.float8_utils.amax_to_scale(round_scales_to_power_of_2=True)",
    .elements = "f8e4m3fn f8e5m2"};

// §10.4 DeepGEMM (deep_gemm/utils/math.py per_token_cast_to_fp8 / per_block_cast_to_fp8 with
// use_ue8m0=True): amax.clamp(1e-4); sf = ceil_to_ue8m0(amax / 448.0) — the exponent field of
// the binary32 quotient plus one when its fraction is non-zero, clamped to [1, 254];
// (x * (1.0 / sf)).to(torch.float8_e4m3fn) with torch's saturating cast. Per token: 1 x 128.
// Elements: f8e4m3fn only; per_token_cast_to_fp4 is other arithmetic (amax / 6, codes by counting
// the thresholds |x| exceeds: ties toward zero, a code-0 negative is +0), not this recipe.
inline constexpr Recipe kDeepGemm{
    .rule = "mx-rceil-f32", .partition = "block:1x128",
    .knobs = "amax_floor=1e-4 mx_descale=divide inf_block=max_code nan_block=max_code",
    .source = "DeepGEMM deep_gemm/utils/math.py per_token_cast_to_fp8(use_ue8m0=True) (source-cited)",
    .elements = "f8e4m3fn"};

// §10.4 TransformerEngine MXFP8 (transformer_engine/common/util/ptx.cuh float_to_e8m0 and
// exp2f_rcp, cast kernels; commit 1ae1d228 utils.cuh L937 / L971): amax by fmaxf (NaN ignored),
// code = float_to_e8m0(amax * (1.0f / 448)) (E8M0 round-up; Inf -> FE, 0 -> 00), elements
// multiplied by exp2f_rcp(code) (1 for code 00, 0.0 for FE) and cast with __NV_SATFINITE.
inline constexpr Recipe kTeMxfp8{.rule = "mx-rceil-f32", .partition = "block:1x32", .knobs = "zero_code=one inf_block=max_code_zero",
                          .source = "TransformerEngine MXFP8 float_to_e8m0 / exp2f_rcp (source-cited)",
                          .amax_nan_ignore = true,
                          .elements = "f8e4m3fn f8e5m2"};

// §10.4 TransformerEngine Float8CurrentScaling (common/recipe/current_scaling.cu amax_kernel and
// compute_scale_from_amax_kernel, recipe/recipe_common.cuh compute_scale_from_amax; read at commit
// 01c24fe0): amax = fmaxf(|x|, max) from 0 (NaN ignored; __hmax for bf16 / f16 likewise), then
// amax_epsilon (default 0.0) as a floor, scale 1.0 for an Inf, zero or NaN amax, else
// __fdiv_rn(max_fp8, amax) with an Inf quotient replaced by FLT_MAX (value_for_inf); scale_inv =
// 1 / scale stored; elements static_cast<fp8>(x * scale) (satfinite). force_pow_2_scales is off by
// default (the variant that masks the mantissa is te_float8_current_pow2, below).
inline constexpr Recipe kTeFloat8Current{
    .rule = "amax-recip", .partition = "tensor", .knobs = "inf_block=one_scale",
    .source = "TransformerEngine Float8CurrentScaling compute_scale_from_amax (source-cited)", .amax_nan_ignore = true,
    .elements = "f8e4m3fn f8e5m2"};

// §10.4 TransformerEngine Float8BlockScaling (common/transpose/quantize_transpose_vector_blockwise.cu
// for 1 x 128 tiles, quantize_transpose_square_blockwise.cu for 128 x 128; compute_scale.cuh
// ComputeScale -> recipe_common.cuh compute_scale_from_amax; read at commit 01c24fe0): per tile
// amax = fmaxf(fabsf(x), amax) from 0 (NaN ignored), scale as Float8CurrentScaling with
// force_pow_2_scales on (the recipe's default power_2_scale=True: scale bits & 0xFF800000) and
// value_for_inf = 2^127 for binary32 / bf16 input (HighPrecisionFloatScaleLimitsTrait<T, true>),
// which equals §15's mask of the §14.1 FLT_MAX clamp; scale_inv = 1 / scale stored (exact);
// elements static_cast<fp8>(x * scale) (satfinite). Activations and gradients use 1 x 128 tiles
// (the default partition here), weights 128 x 128 (--partition block:128x128).
inline constexpr Recipe kTeFloat8Block{
    .rule = "pow2-recip", .partition = "block:1x128", .knobs = "inf_block=one_scale",
    .source = "TransformerEngine Float8BlockScaling quantize_transpose_*_blockwise (source-cited)",
    .amax_nan_ignore = true,
    .elements = "f8e4m3fn f8e5m2"};

// §10.4 TransformerEngine MXFP8 from 2.13 on (commit 71971e33d, "Fix exp2f_rcp to properly handle
// nan and 0xFE cases", Feb 2026; read at d0067d0 util/ptx.cuh exp2f_rcp<float>): the quantize
// multiplier of code c is 2^(127 - c) by bits for every c below FE — code 00 multiplies by 2^127
// (te_mxfp8, TE 2.7 – 2.12: by 1) — and 0x00400000 = 2^-127 for FE (before: 0.0); FF gives NaN (not
// reached: the amax ignores NaN). float_to_e8m0 and the amax as te_mxfp8. TE's C++ test reference
// (tests/cpp/test_common.h exp2f_rcp) changed in the same commit: each version's kernel and
// reference agree.
inline constexpr Recipe kTeMxfp8_2_13{.rule = "mx-rceil-f32", .partition = "block:1x32", .knobs = "inf_block=max_code",
                               .source = "TransformerEngine >= 2.13 MXFP8 float_to_e8m0 / exp2f_rcp (source-cited)",
                               .amax_nan_ignore = true,
                               .elements = "f8e4m3fn f8e5m2"};

// §10.4 The two TransformerEngine scale variants (read at TE d0067d0; measured against TE's CPU test
// references tests/pytorch/references, which agree on finite tensors: docs/profiles.md).
// te_float8_current_pow2 = Float8CurrentScaling with force_pow_2_scales (the recipe's
//   NVTE_FP8_CURRENT_SCALING_POWER_2_SCALES=1): compute_scale_from_amax with value_for_inf = FLT_MAX
//   (current_scaling.cu compute_scale_from_amax_kernel), the scale bits then masked with 0xFF800000:
//   §15's P of the §14.1 S (FLT_MAX -> 2^127), stored scale_inv = 1 / P (exact) — te_float8_block's
//   rule on the whole tensor.
// te_float8_block_f32 = Float8BlockScaling with power_2_scale=False (the recipe's
//   NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1): the blockwise kernels' compute_scale_from_types without the
//   mask, S = RN32(448 / amax) (1.0 for a zero / Inf / NaN amax), stored scale_inv = RN32(1 / S),
//   elements RN32(x * S) satfinite —
//   te_float8_current's rule per 1 x 128 (or 128 x 128) tile. An Inf quotient becomes value_for_inf =
//   the input type's largest finite value: FLT_MAX for binary32 (§14.1's clamp) but 0x7F7F0000 for
//   bf16 (a bf16 tile of amax below q_max / FLT_MAX): numref keeps FLT_MAX, a declared departure.
inline constexpr Recipe kTeFloat8CurrentPow2{
    .rule = "pow2-recip", .partition = "tensor", .knobs = "inf_block=one_scale",
    .source = "TransformerEngine Float8CurrentScaling force_pow_2_scales (d0067d0; measured vs its test reference)",
    .amax_nan_ignore = true, .elements = "f8e4m3fn f8e5m2"};
inline constexpr Recipe kTeFloat8BlockF32{
    .rule = "amax-recip", .partition = "block:1x128", .knobs = "inf_block=one_scale",
    .source = "TransformerEngine Float8BlockScaling power_2_scale=False (d0067d0; measured vs test reference)",
    .amax_nan_ignore = true, .elements = "f8e4m3fn f8e5m2"};

// §10.4 microxcaling (Microsoft's MX reference, mx/mx_ops.py _quantize_mx and mx/elemwise_ops.py
// _quantize_elemwise_core, CPU path, round="nearest"; read at commit 3b429a84): shared exponent
// floor(torch.log2(amax)) in binary32, amax 0 read as FP32_MIN_NORMAL, minus the element's emax,
// clamped below at -127 (above: NaN, for a +Inf amax); A / 2^e in binary32; elements rounded
// sign(q) * floor(|q| * 2^m + 0.5) / 2^m at the private exponent (ties away; torch.sign(±0) = 0,
// so a zero quotient gives +0) and clamped to +-max_norm; then times 2^e in binary32. A NaN or
// +-Inf element makes the shared exponent NaN: every output of the block is NaN — on torch's
// scalar CPU kernels (ATEN_CPU_CAPABILITY=default) the first NaN of the block (torch.max keeps
// it; x / 2^NaN keeps x's own NaN), quieted and positive (torch.abs in the rounding), or the
// canonical NaN for a +-Inf block (shared_exp set to float("NaN")).
constexpr Policy microxcaling_narrow(Round r = Round::rna) {
  Policy p;
  p.round = r;                      // nearest: floor(|q| + 0.5); even: minus 1 at the ties 0.5, 2.5, ...
  p.overflow = Overflow::saturate;  // torch.clamp(out, -max_norm, max_norm)
  p.int_range = IntRange::symmetric;     // int8: +-127 (max_norm = 127 / 64)
  return p;
}
constexpr Policy microxcaling_wide(Round r = Round::rna) {
  Policy p;
  p.round = r;  // _quantize_elemwise_core, saturate_normals=False: > max_norm -> Inf
  return p;
}
// Its int8 element (sign-magnitude k * 2^-6 with -0, factor down to 2^-133) is not numref's int8
// (§20): the recipe takes the five float element formats (docs/profiles.md).
inline constexpr Recipe kMicroxcaling{
    .rule = "mx-floor", .partition = "block:1x32", .knobs = "scale_exp=log2f nan_block=first_nan zero_sign=plus",
    .source = "microxcaling mx/mx_ops.py _quantize_mx (CPU path, round=nearest; commit 3b429a84)",
    .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};
// §10.4 microxcaling with round="even" (_round_mantissa: sign(q) * (floor(|q| + 0.5) - m) with m = 1
// where (|q| - 0.5) % 2 == 0, i.e. at the ties 0.5, 2.5, 4.5, ...: round half to even; |q| is a small
// integer plus a fraction, so |q| - 0.5 is exact). The rest as kMicroxcaling: only the elements'
// rounding differs. round="floor" is kMicroxcalingFloor, below.
inline constexpr Recipe kMicroxcalingEven{
    .rule = "mx-floor", .partition = "block:1x32", .knobs = "scale_exp=log2f nan_block=first_nan zero_sign=plus",
    .source = "microxcaling mx/mx_ops.py _quantize_mx (CPU path, round=even; commit 7bc4195)",
    .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};


// §10.4 torchao 0.18 float8 inference (quantization/quantize_/workflows/float8/float8_tensor.py
// Float8Tensor.from_hp with the torch kernel -> quant_primitives.py _choose_scale_float8 and
// _quantize_affine_float8): amax = tensor.abs().amax() in the input dtype; scale = amax /
// finfo.max in the input dtype (binary32 division, then rounded to bf16 / f16 for those inputs),
// stored as binary32; elements x.to(float32) / scale, clamped to +-max and cast (torch). A zero
// scale stays zero (x / 0 = +-Inf -> +-max, 0 / 0 = NaN), an Inf scale divides (x / Inf = +-0,
// Inf / Inf = NaN), a NaN scale leaves each NaN element its own NaN (x86 division). torch's
// scalar kernels (ATEN_CPU_CAPABILITY=default): the NaN scale is canonical, also for bf16 input.
inline constexpr Recipe kTorchaoFloat8Inference{
    .rule = "amax-dequant", .partition = "tensor",
    .knobs = "inf_block=zero_scale nan_block=own_nan scale_round=source zero_divisor=keep",
    .source = "torchao 0.18 quantization Float8Tensor.from_hp (_choose_scale_float8 + _quantize_affine_float8)",
    .elements = "f8e4m3fn f8e5m2"};

// §10.4 microxcaling with round="floor" (_round_mantissa: sign(q) * floor(|q|), toward zero), the
// rest as kMicroxcaling. Its private exponent floor(torch.log2(|q|)) is one binade too large just
// below a power of two, where the binary32 log2 rounds up to the integer: there the truncation is
// on the coarser grid (§19.11 elem_exp=log2f).
inline constexpr Recipe kMicroxcalingFloor{
    .rule = "mx-floor", .partition = "block:1x32",
    .knobs = "scale_exp=log2f nan_block=first_nan zero_sign=plus elem_exp=log2f",
    .source = "microxcaling mx/mx_ops.py _quantize_mx (CPU path, round=floor; commit 7bc4195)",
    .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};

// §10.4 DeepGEMM with use_ue8m0=False (deep_gemm/utils/math.py per_token_cast_to_fp8 /
// per_block_cast_to_fp8, DeepGEMM 54e2261): x_amax = x.abs().float().amax().clamp(1e-4) (a NaN
// amax propagates), sf = x_amax / 448.0 stored (binary32 division), elements
// (x * (1.0 / sf)).to(torch.float8_e4m3fn): multiplied by RN32(1 / sf) (§14.7) and cast by torch
// (saturating). An Inf amax stores sf = +Inf and multiplies by 0 (x * 0 = +-0, Inf * 0 = the x86
// default NaN 0xFFC00000); a NaN amax stores the canonical NaN and every element of the block,
// a NaN element too, becomes it (torch's AVX2 / AVX-512 kernels; the scalar ones keep the sign of
// some NaN elements: docs/profiles.md).
inline constexpr Recipe kDeepGemmF32{
    .rule = "amax-dequant", .partition = "block:1x128",
    .knobs = "amax_floor=1e-4 inf_block=zero_scale divisor=recip",
    .source = "DeepGEMM deep_gemm/utils/math.py per_token_cast_to_fp8(use_ue8m0=False)",
    .elements = "f8e4m3fn"};

// §10.4 torchao 0.18 NVFP4 (prototype/mx_formats/nvfp4_tensor.py NVFP4Tensor.to_nvfp4 -> nvfp4_quantize, the
// eager torch path; block 1 x 16, element f4e2m1fn by f32_to_f4_unpacked = _f32_to_floatx_unpacked).
// torchao_nvfp4: with the per-tensor scale its workflows pass (use_dynamic_per_tensor_scale:
//   per_tensor_amax_to_scale(torch.max(torch.abs(x))) = t_amax / 2688 in binary32): §18.5.
// torchao_nvfp4_block: without a per_tensor_scale (single-level E4M3 block scales): §18.6.
// Both: binary32 arithmetic with x86's NaN rules (a NaN operand's NaN, the default NaN 0xFFC00000 for
// 0 / 0, Inf / Inf, 0 * Inf), torch.clamp(y, -6, 6) then the bit arithmetic of _f32_to_floatx_unpacked,
// which reads a NaN's bits as a number (§19.9 elem_nan=bits). Measured on x86-64 AVX-512 (docs/profiles.md).
inline constexpr Recipe kTorchaoNvfp4{
    .rule = "nvfp4", .partition = "block:1x16", .knobs = "elem_nan=bits nvfp4_scale=decode",
    .source = "torchao 0.18 prototype.mx_formats NVFP4Tensor.to_nvfp4 with per_tensor_amax_to_scale(amax)",
    .elements = "f4e2m1fn"};
inline constexpr Recipe kTorchaoNvfp4Block{
    .rule = "nvfp4", .partition = "block:1x16", .knobs = "elem_nan=bits nvfp4_scale=block",
    .source = "torchao 0.18 prototype.mx_formats NVFP4Tensor.to_nvfp4 without per_tensor_scale",
    .elements = "f4e2m1fn"};

// §10.4 TransformerEngine NVFP4 (common/cast/nvfp4/core_nvfp4.cuh compute_global_encode_scaling_factor_FP4
// and compute_decoding_scaling_factor, quantize_transpose_nvfp4.cuh; read at d0067d0): §18 — S_enc =
// 2688 / t_amax (fminf FLT_MAX; 1.0 for t_amax 0 and, 2688 / Inf being 0, for +Inf: nvfp4_scale=encode_inf_one),
// d_b = (fp8e4m3)(b_amax * (S_enc * (1.0f / 6))) satfinite, multiplier fminf(1 / (d_b * (1.0 / S_enc)),
// FLT_MAX), elements cvt.rn.satfinite.e2m1x2.f32 of x * multiplier; amaxes by fmaxf(fabsf) (NaN ignored).
// te_nvfp4: 1 x 16 blocks (activations, gradients); te_nvfp4_2d: 16 x 16 blocks (weights, one scale per
// tile). Measured against TE's CPU reference quantizer (pytorch/custom_recipes/reference_nvfp4.py), which
// gives +0 for -0 and 0 for NaN elements where the kernel's cvt keeps -0 and saturates: docs/profiles.md.
inline constexpr Recipe kTeNvfp4{
    .rule = "nvfp4", .partition = "block:1x16", .knobs = "nvfp4_scale=encode_inf_one",
    .source = "TransformerEngine NVFP4 quantize (core_nvfp4.cuh; measured vs reference_nvfp4.py)",
    .amax_nan_ignore = true, .elements = "f4e2m1fn"};
inline constexpr Recipe kTeNvfp4_2d{
    .rule = "nvfp4", .partition = "block:16x16", .knobs = "nvfp4_scale=encode_inf_one",
    .source = "TransformerEngine NVFP4 2-D quantize, 16 x 16 weight tiles (measured vs reference_nvfp4.py)",
    .amax_nan_ignore = true, .elements = "f4e2m1fn"};

// §10 The profile table: one row per ProfileId, in enum order (= the C ABI numbering, §32.3).
// A new profile is one row here (with its Recipe above, if it has one), its enumerator in
// NUMREF_PROFILE_IDS (above) and its NUMREF_PROFILE_LIST entry (backend.h); every list of
// profiles elsewhere (CLI help, `numref profiles`, Python, the conformance plan) reads this table.
inline constexpr Profile kProfiles[] = {
    {.id = ProfileId::ocp, .name = "ocp",
     .summary = "OCP OFP8 v1.0 / MX v1.0 with IEEE 754-2019 defaults: RNE, non-saturating, NaN payload kept",
     .narrow = make_ocp(), .wide = make_ocp()},
    {.id = ProfileId::ieee, .name = "ieee",
     .summary = "IEEE 754-2019 conversion semantics for every target (same as ocp today)", .narrow = make_ocp(),
     .wide = make_ocp()},
    {.id = ProfileId::cuda_satfinite, .name = "cuda_satfinite",
     .summary = "CUDA cuda_fp8.h host path with __NV_SATFINITE; __float2bfloat16_rn / __float2half_rn for wide targets",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules},
    {.id = ProfileId::cuda_nosat, .name = "cuda_nosat",
     .summary = "CUDA cuda_fp8.h host path with __NV_NOSAT; __float2bfloat16_rn / __float2half_rn for wide targets",
     .narrow = cuda_narrow(Overflow::nonsat), .wide = cuda_wide(), .rules = kCudaRules},
    {.id = ProfileId::ml_dtypes, .name = "ml_dtypes", .summary = "NumPy ml_dtypes 0.5/0.6 astype() casts",
     .narrow = mld_narrow(), .wide = mld_wide(), .rules = kMlDtypesRules},
    {.id = ProfileId::torch, .name = "torch",
     .summary = "PyTorch 2.15 CPU eager .to(dtype), x86-64 AVX2 / AVX-512 kernels", .narrow = torch_narrow(),
     .wide = torch_wide(), .rules = kTorchRules},
    {.id = ProfileId::torch_default, .name = "torch_default",
     .summary = "PyTorch 2.15 CPU eager .to(dtype) with ATEN_CPU_CAPABILITY=default", .narrow = torch_narrow(),
     .wide = torch_wide(), .rules = kTorchDefaultRules, .abi_minor = 2},
    {.id = ProfileId::xla, .name = "xla", .summary = "XLA's convert on CPU (jax 0.10: jax.jit(lambda v: v.astype(t)))",
     .narrow = xla_narrow(), .wide = xla_wide(), .rules = kXlaRules, .abi_minor = 2},
    // §10.4 profiles with a quantization recipe
    {.id = ProfileId::torchao_mx_floor, .name = "torchao_mx_floor",
     .summary = "torchao 0.18 to_mx, FLOOR, block 32 (CPU eager)", .narrow = torchao_narrow(), .wide = torch_wide(),
     .rules = kTorchRules, .recipe = &kTorchaoMxFloor, .abi_minor = 3},
    {.id = ProfileId::torchao_mx_ceil, .name = "torchao_mx_ceil", .summary = "torchao 0.18 to_mx, CEIL, block 32 (CPU eager)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoMxCeil, .abi_minor = 3},
    {.id = ProfileId::torchao_mx_even, .name = "torchao_mx_even", .summary = "torchao 0.18 to_mx, EVEN, block 32 (CPU eager)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoMxEven, .abi_minor = 3},
    {.id = ProfileId::torchao_mx_rceil, .name = "torchao_mx_rceil",
     .summary = "torchao 0.18 to_mx, RCEIL, block 32 (CPU eager fallback)", .narrow = torchao_narrow(),
     .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoMxRceil, .abi_minor = 3},
    {.id = ProfileId::torchao_float8, .name = "torchao_float8",
     .summary = "torchao 0.18 float8 training scaling (tensorwise; rowwise with --partition rows)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoFloat8, .abi_minor = 3},
    {.id = ProfileId::torchao_float8_pow2, .name = "torchao_float8_pow2",
     .summary = "torchao 0.18 float8 training scaling with round_scales_to_power_of_2 (tensorwise / rowwise)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoFloat8Pow2, .abi_minor = 3},
    {.id = ProfileId::deepgemm, .name = "deepgemm",
     .summary = "DeepGEMM per_token_cast_to_fp8 / per_block_cast_to_fp8 with UE8M0 scales (block 1 x 128; 128 x 128 "
                "with --partition)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kDeepGemm, .abi_minor = 3},
    {.id = ProfileId::te_mxfp8, .name = "te_mxfp8",
     .summary = "TransformerEngine MXFP8 quantization (block 1 x 32, E8M0 round-up, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules, .recipe = &kTeMxfp8, .abi_minor = 3},
    // element profiles added after the recipe profiles (the C numbers of §32.3 stay)
    {.id = ProfileId::gfloat, .name = "gfloat", .summary = "gfloat 0.5 round_float(sat=False) + encode_float (Graphcore)",
     .narrow = gfloat_policy(Overflow::nonsat), .wide = gfloat_policy(Overflow::nonsat), .abi_minor = 3},
    {.id = ProfileId::gfloat_sat, .name = "gfloat_sat",
     .summary = "gfloat 0.5 round_float(sat=True) + encode_float (as its encode_block)",
     .narrow = gfloat_policy(Overflow::saturate), .wide = gfloat_policy(Overflow::saturate), .abi_minor = 3},
    // recipe profiles added later
    {.id = ProfileId::te_float8_current, .name = "te_float8_current",
     .summary =
         "TransformerEngine Float8CurrentScaling (per tensor: scale = FP8 max / amax, scale_inv stored, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules,
     .recipe = &kTeFloat8Current, .abi_minor = 5},
    {.id = ProfileId::te_float8_block, .name = "te_float8_block",
     .summary = "TransformerEngine Float8BlockScaling (tiles 1 x 128 / 128 x 128: power-of-two scale, scale_inv "
                "stored, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules, .recipe = &kTeFloat8Block, .abi_minor = 5},
    {.id = ProfileId::microxcaling, .name = "microxcaling",
     .summary = "microxcaling (Microsoft MX reference) _quantize_mx: floor(log2f(amax)) shared exponent, elements "
                "rounded half away and clamped, a zero quotient gives +0",
     .narrow = microxcaling_narrow(), .wide = microxcaling_wide(), .recipe = &kMicroxcaling, .abi_minor = 6},
    {.id = ProfileId::torchao_float8_inference, .name = "torchao_float8_inference",
     .summary = "torchao 0.18 float8 inference (Float8Tensor: per tensor; per row with --partition rows; scale in the "
                "input dtype)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoFloat8Inference, .abi_minor = 6},
    {.id = ProfileId::microxcaling_even, .name = "microxcaling_even",
     .summary = "microxcaling _quantize_mx with round='even': as microxcaling, elements rounded half to even",
     .narrow = microxcaling_narrow(Round::rne), .wide = microxcaling_wide(Round::rne), .recipe = &kMicroxcalingEven,
     .abi_minor = 10},
    {.id = ProfileId::te_float8_current_pow2, .name = "te_float8_current_pow2",
     .summary = "TransformerEngine Float8CurrentScaling with force_pow_2_scales (per tensor: power-of-two scale, "
                "scale_inv stored, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules,
     .recipe = &kTeFloat8CurrentPow2, .abi_minor = 11},
    {.id = ProfileId::te_float8_block_f32, .name = "te_float8_block_f32",
     .summary = "TransformerEngine Float8BlockScaling with power_2_scale=False (tiles 1 x 128 / 128 x 128: scale = "
                "FP8 max / amax, scale_inv stored, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules,
     .recipe = &kTeFloat8BlockF32, .abi_minor = 11},
    {.id = ProfileId::te_mxfp8_2_13, .name = "te_mxfp8_2_13",
     .summary = "TransformerEngine 2.13+ MXFP8 quantization (block 1 x 32, E8M0 round-up, code 00 multiplies by "
                "2^127, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules, .recipe = &kTeMxfp8_2_13,
     .abi_minor = 11},
    {.id = ProfileId::deepgemm_f32, .name = "deepgemm_f32",
     .summary = "DeepGEMM per_token_cast_to_fp8 / per_block_cast_to_fp8 with use_ue8m0=False (block 1 x 128; 128 x "
                "128 with --partition): binary32 scale amax / 448, elements times its reciprocal",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kDeepGemmF32, .abi_minor = 12},
    {.id = ProfileId::microxcaling_floor, .name = "microxcaling_floor",
     .summary = "microxcaling _quantize_mx with round='floor': as microxcaling, elements truncated toward zero on the "
                "grid of floor(log2f(|q|))",
     .narrow = microxcaling_narrow(Round::rtz), .wide = microxcaling_wide(Round::rtz), .recipe = &kMicroxcalingFloor,
     .abi_minor = 12},
    {.id = ProfileId::torchao_nvfp4, .name = "torchao_nvfp4",
     .summary = "torchao 0.18 NVFP4Tensor.to_nvfp4 with the dynamic per-tensor scale (block 1 x 16: E4M3 scale of "
                "amax / 6 / (t_amax / 2688), FP4 elements)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoNvfp4,
     .abi_minor = 12},
    {.id = ProfileId::torchao_nvfp4_block, .name = "torchao_nvfp4_block",
     .summary = "torchao 0.18 NVFP4Tensor.to_nvfp4 without a per-tensor scale (block 1 x 16: E4M3 scale of amax / 6, "
                "FP4 elements)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoNvfp4Block,
     .abi_minor = 12},
    {.id = ProfileId::te_nvfp4, .name = "te_nvfp4",
     .summary = "TransformerEngine NVFP4 quantization (block 1 x 16: E4M3 scale under the FP32 tensor scale "
                "2688 / amax, satfinite FP4 elements)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules, .recipe = &kTeNvfp4,
     .abi_minor = 12},
    {.id = ProfileId::te_nvfp4_2d, .name = "te_nvfp4_2d",
     .summary = "TransformerEngine NVFP4 2-D quantization of weights (16 x 16 tiles, one E4M3 scale each, under "
                "the FP32 tensor scale 2688 / amax)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules, .recipe = &kTeNvfp4_2d,
     .abi_minor = 12},
};

// clang-format on
// The enumerators' spellings, for the check below.
#define NUMREF_PROFILE_ID_NAME(name) #name,
inline constexpr std::string_view kProfileIdNames[] = {NUMREF_PROFILE_IDS(NUMREF_PROFILE_ID_NAME)};
#undef NUMREF_PROFILE_ID_NAME

constexpr bool profiles_well_formed() {
  if (std::size(kProfiles) != static_cast<std::size_t>(kProfileCount)) return false;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& p = kProfiles[i];
    if (static_cast<int>(p.id) != i) return false;   // enum order
    if (p.name != kProfileIdNames[i]) return false;  // the name is the enumerator's
    if (p.summary.empty()) return false;
    if (p.recipe != nullptr && p.recipe->elements.empty()) return false;  // §10.4 every recipe lists its elements
  }  // (so the names are unique: the enumerators are)
  return true;
}
static_assert(profiles_well_formed(),
              "kProfiles: one row per ProfileId in enum order, named as its enumerator "
              "(so the names are unique), with a summary, and every recipe with its element formats");

}  // namespace profile_table

}  // namespace numref
