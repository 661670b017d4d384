// numref — policy names, descriptions and the named profiles.     spec §9, §10
#include "numref/policy.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace numref {

std::string flags_to_string(std::uint8_t flags) {
  // §9: fixed-position letters in SoftFloat order: v(invalid) o(overflow) u(underflow) x(inexact)
  std::string s = "----";
  if (flags & kInvalid) s[0] = 'v';
  if (flags & kOverflow) s[1] = 'o';
  if (flags & kUnderflow) s[2] = 'u';
  if (flags & kInexact) s[3] = 'x';
  return s;
}

namespace {

// ---- §10 profiles -------------------------------------------------------------------

constexpr Policy make_ocp() { return Policy{}; }

constexpr Policy cuda_narrow(Overflow o) {
  Policy p;
  p.round = Round::rne;
  p.overflow = o;
  p.inf_sat = InfSat::max;          // __NV_SATFINITE: +-Inf -> +-max finite
  p.nan = NanOut::ones;            // NaN -> 0x7F for E4M3 and E5M2, sign dropped
  p.nan_to_finite = NanToFinite::max;  // __nv_cvt_float_to_fp4/fp6: NaN -> +max
  p.e8m0_round = E8m0Round::floor;     // cudaRoundZero (cudaRoundPosInf = ceil)
  p.zero_to_nozero = ZeroToNoZero::min;  // 0 -> 0x00
  p.negative = Negative::abs;          // the sign bit is ignored
  return p;
}
constexpr Policy cuda_wide() {
  Policy p;
  p.overflow = Overflow::nonsat;  // __float2bfloat16_rn / __float2half_rn: IEEE, overflow -> Inf
  p.nan = NanOut::ones;       // NaN -> 0x7FFF
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

// §10.4 The pair rules (docs/profiles.md gives the evidence for each).
// The rules of one profile are a named group (kCudaRules, ...); rules two profiles share are
// named one by one and listed by name (torch_rule below). Order matters: settings apply in rule order.
constexpr ProfileRule kCudaRules[] = {
    {.from = "bf16", .to = "f32", .settings = "nan=raw",
     .why = "__bfloat162float widens by a 16-bit shift (__internal_bfloat162float: u = h << 16)"},
};
constexpr ProfileRule kMlDtypesRules[] = {
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
constexpr ProfileRule e4m3fn_saturates{
    .from = "*", .to = "f8e4m3fn", .settings = "overflow=saturate",
    .why = "fp8e4m3fn_from_fp32_value saturates finite overflow and +-Inf to +-448"};
constexpr ProfileRule bf16_canonical_nan{.from = "*", .to = "bf16", .settings = "nan=canonical",
                                         .why = "c10::BFloat16 round_to_nearest_even: any NaN -> 0x7FC0"};
constexpr ProfileRule f32_bf16_vector_kernel{
    .from = "f32", .to = "bf16", .settings = "nan=all_ones",
    .why = "the AVX2 / AVX-512 float -> bfloat16 kernel: any NaN -> 0xFFFF"};
constexpr ProfileRule widen_by_shift{.from = "bf16 f8e8m0fnu", .to = "f32", .settings = "nan=raw",
                                     .why = "bfloat16 / e8m0 -> float widen by a bit shift (NaN bits kept)"};
constexpr ProfileRule same_dtype(std::string_view f) {
  return {.from = f, .to = f, .settings = "nan=raw", .why = "a .to() to the same dtype returns the tensor itself"};
}
constexpr ProfileRule same_bf16 = same_dtype("bf16"), same_f16 = same_dtype("f16"), same_f32 = same_dtype("f32"),
                      same_f8e5m2 = same_dtype("f8e5m2");
constexpr ProfileRule fnuz_to_f16{
    .from = "f8e4m3fnuz f8e5m2fnuz", .to = "f16", .settings = "nan=canonical",
    .why = "the fnuz NaN (80) widens to the positive 7F800001 (fp8_fnuz_to_fp32_value), then to c10::Half: 7E00"};
constexpr ProfileRule fnuz_to_fp8{.from = "f8e4m3fnuz f8e5m2fnuz", .to = "f8e4m3fn f8e5m2", .settings = "nan=ones",
                                  .why = "the fnuz NaN goes through the positive 7F800001: 7F"};
constexpr ProfileRule fnuz_to_f32{
    .from = "f8e4m3fnuz f8e5m2fnuz", .to = "f32", .settings = "nan=raw_plus",
    .why = "fp8_fnuz_to_fp32_value returns the positive signaling NaN 7F800001 for the fnuz NaN 80"};
// ATEN_CPU_CAPABILITY=default only
constexpr ProfileRule scalar_half{.from = "bf16 f8e4m3fn f8e5m2", .to = "f16", .settings = "nan=sign",
                                  .why = "the scalar c10::Half conversion: canonical NaN with the sign"};
}  // namespace torch_rule
constexpr ProfileRule kTorchRules[] = {
    torch_rule::e4m3fn_saturates, torch_rule::bf16_canonical_nan, torch_rule::f32_bf16_vector_kernel,
    torch_rule::widen_by_shift,   torch_rule::same_bf16,          torch_rule::same_f16,
    torch_rule::same_f32,         torch_rule::same_f8e5m2,        torch_rule::fnuz_to_f16,
    torch_rule::fnuz_to_fp8,      torch_rule::fnuz_to_f32,
};
// ATEN_CPU_CAPABILITY=default: the scalar f32 -> bf16 path (0x7FC0, no vector-kernel rule) and the
// scalar c10::Half conversion; the rest as torch.
constexpr ProfileRule kTorchDefaultRules[] = {
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
constexpr ProfileRule kXlaRules[] = {
    {.from = "bf16 f16 f8e4m3fn f8e8m0fnu", .to = "f8e5m2", .settings = "nan=ones",
     .why = "sources other than f32 reach f8e5m2 through f16 bits: NaN -> 0x7F"},
    {.from = "f8e4m3fn f8e5m2", .to = "f16 f32", .settings = "nan=sign",
     .why = "float8 widenings give the canonical NaN with the sign"},
    {.from = "f8e5m2", .to = "f8e5m2", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "*", .to = "bf16", .settings = "nan=sign", .why = "conversions into bf16 give the canonical NaN with the sign"},
    {.from = "bf16", .to = "f32", .settings = "nan=raw", .why = "bf16 -> f32 is a 16-bit shift"},
    {.from = "bf16", .to = "bf16", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "f16", .to = "f16", .settings = "nan=raw", .why = "a convert to the same type is removed"},
    {.from = "f32", .to = "f32", .settings = "nan=raw", .why = "a convert to the same type is removed"},
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

// §10.5 torchao 0.18 (prototype/mx_formats/mx_tensor.py to_mx; float8/float8_utils.py
// amax_to_scale, hp_tensor_and_scale_to_float8). Elements: torchao clamps to +-max_pos in
// binary32, then casts with torch (.to(float8) = the torch profile) or with
// _f32_to_floatx_unpacked (FP6 / FP4: RNE, saturating) — torch's narrow policy saturating.
constexpr Policy torchao_narrow() {
  Policy p = torch_narrow();
  p.overflow = Overflow::saturate;
  return p;
}
// FLOOR, CEIL and EVEN share their handling of code 00, Inf / NaN blocks and FP6 / FP4 NaN.
constexpr std::string_view kTorchaoMxKnobs =
    "zero_code=min_normal inf_block=exponent nan_block=inf_divisor elem_nan=half";
constexpr Recipe kTorchaoMxFloor{.rule = "mx-floor", .partition = "block:1x32", .knobs = kTorchaoMxKnobs,
                                 .source = "torchao 0.18 prototype.mx_formats.mx_tensor.to_mx(scaling_mode=FLOOR)"};
constexpr Recipe kTorchaoMxCeil{.rule = "mx-ceil", .partition = "block:1x32", .knobs = kTorchaoMxKnobs,
                                .source = "torchao 0.18 prototype.mx_formats.mx_tensor.to_mx(scaling_mode=CEIL)"};
constexpr Recipe kTorchaoMxEven{.rule = "mx-even", .partition = "block:1x32", .knobs = kTorchaoMxKnobs,
                                .source = "torchao 0.18 prototype.mx_formats.mx_tensor.to_mx(scaling_mode=EVEN)"};
constexpr Recipe kTorchaoMxRceil{.rule = "mx-rceil", .partition = "block:1x32",
                                 .knobs = "scale_exp=log2f zero_code=one inf_block=max_code elem_nan=half",
                                 .source = "torchao 0.18 prototype.mx_formats.mx_tensor._to_mx_rceil (eager fallback)"};
constexpr Recipe kTorchaoFloat8{.rule = "amax", .partition = "tensor",
                                .knobs = "amax_floor=1e-12 inf_block=zero_scale nan_scale=all_ones_tensor",
                                .source = "torchao 0.18 float8.float8_utils.amax_to_scale + to_fp8_saturated"};
constexpr Recipe kTorchaoFloat8Pow2{
    .rule = "pow2", .partition = "tensor",
    .knobs = "amax_floor=1e-12 scale_exp=log2f inf_block=zero_scale nan_scale=all_ones_tensor",
    .source = "torchao 0.18 float8.float8_utils.amax_to_scale(round_scales_to_power_of_2=True)"};

// §10.5 DeepGEMM (deep_gemm/utils/math.py per_token_cast_to_fp8 / per_block_cast_to_fp8 with
// use_ue8m0=True): amax.clamp(1e-4); sf = ceil_to_ue8m0(amax / 448.0) — the exponent field of
// the binary32 quotient plus one when its fraction is non-zero, clamped to [1, 254];
// (x * (1.0 / sf)).to(torch.float8_e4m3fn) with torch's saturating cast. Per token: 1 x 128.
constexpr Recipe kDeepGemm{
    .rule = "mx-rceil-f32", .partition = "block:1x128",
    .knobs = "amax_floor=1e-4 mx_descale=divide inf_block=max_code nan_block=max_code",
    .source = "DeepGEMM deep_gemm/utils/math.py per_token_cast_to_fp8(use_ue8m0=True) (source-cited)"};

// §10.5 TransformerEngine MXFP8 (transformer_engine/common/util/ptx.cuh float_to_e8m0 and
// exp2f_rcp, cast kernels; commit 1ae1d228 utils.cuh L937 / L971): amax by fmaxf (NaN ignored),
// code = float_to_e8m0(amax * (1.0f / 448)) (E8M0 round-up; Inf -> FE, 0 -> 00), elements
// multiplied by exp2f_rcp(code) (1 for code 00, 0.0 for FE) and cast with __NV_SATFINITE.
constexpr Recipe kTeMxfp8{.rule = "mx-rceil-f32", .partition = "block:1x32", .knobs = "zero_code=one inf_block=max_code_zero",
                          .source = "TransformerEngine MXFP8 float_to_e8m0 / exp2f_rcp (source-cited)",
                          .amax_nan_ignore = true};

// §10.5 TransformerEngine Float8CurrentScaling (common/recipe/current_scaling.cu amax_kernel and
// compute_scale_from_amax_kernel, recipe/recipe_common.cuh compute_scale_from_amax; read at commit
// 01c24fe0): amax = fmaxf(|x|, max) from 0 (NaN ignored; __hmax for bf16 / f16 likewise), then
// amax_epsilon (default 0.0) as a floor, scale 1.0 for an Inf, zero or NaN amax, else
// __fdiv_rn(max_fp8, amax) with an Inf quotient replaced by FLT_MAX (value_for_inf); scale_inv =
// 1 / scale stored; elements static_cast<fp8>(x * scale) (satfinite). force_pow_2_scales is off by
// default (the pow2 variant masks the mantissa: numref's pow2 rule, not a profile here).
constexpr Recipe kTeFloat8Current{
    .rule = "amax-recip", .partition = "tensor", .knobs = "inf_block=one_scale",
    .source = "TransformerEngine Float8CurrentScaling compute_scale_from_amax (source-cited)", .amax_nan_ignore = true};

// §10.5 TransformerEngine Float8BlockScaling (common/transpose/quantize_transpose_vector_blockwise.cu
// for 1 x 128 tiles, quantize_transpose_square_blockwise.cu for 128 x 128; compute_scale.cuh
// ComputeScale -> recipe_common.cuh compute_scale_from_amax; read at commit 01c24fe0): per tile
// amax = fmaxf(fabsf(x), amax) from 0 (NaN ignored), scale as Float8CurrentScaling with
// force_pow_2_scales on (the recipe's default power_2_scale=True: scale bits & 0xFF800000) and
// value_for_inf = 2^127 for binary32 / bf16 input (HighPrecisionFloatScaleLimitsTrait<T, true>),
// which equals §15's mask of the §14.1 FLT_MAX clamp; scale_inv = 1 / scale stored (exact);
// elements static_cast<fp8>(x * scale) (satfinite). Activations and gradients use 1 x 128 tiles
// (the default partition here), weights 128 x 128 (--partition block:128x128).
constexpr Recipe kTeFloat8Block{
    .rule = "pow2-recip", .partition = "block:1x128", .knobs = "inf_block=one_scale",
    .source = "TransformerEngine Float8BlockScaling quantize_transpose_*_blockwise (source-cited)",
    .amax_nan_ignore = true};

// §10.5 microxcaling (Microsoft's MX reference, mx/mx_ops.py _quantize_mx and mx/elemwise_ops.py
// _quantize_elemwise_core, CPU path, round="nearest"; read at commit 3b429a84): shared exponent
// floor(torch.log2(amax)) in binary32, amax 0 read as FP32_MIN_NORMAL, minus the element's emax,
// clamped below at -127 (above: NaN, for a +Inf amax); A / 2^e in binary32; elements rounded
// sign(q) * floor(|q| * 2^m + 0.5) / 2^m at the private exponent (ties away; torch.sign(±0) = 0,
// so a zero quotient gives +0) and clamped to +-max_norm; then times 2^e in binary32. A NaN or
// +-Inf element makes the shared exponent NaN: every output of the block is NaN — on torch's
// scalar CPU kernels (ATEN_CPU_CAPABILITY=default) the first NaN of the block (torch.max keeps
// it; x / 2^NaN keeps x's own NaN), quieted and positive (torch.abs in the rounding), or the
// canonical NaN for a +-Inf block (shared_exp set to float("NaN")).
constexpr Policy microxcaling_narrow() {
  Policy p;
  p.round = Round::rna;             // floor(|q| + 0.5)
  p.overflow = Overflow::saturate;  // torch.clamp(out, -max_norm, max_norm)
  p.int_range = IntRange::symmetric;     // int8: +-127 (max_norm = 127 / 64)
  return p;
}
constexpr Policy microxcaling_wide() {
  Policy p;
  p.round = Round::rna;  // _quantize_elemwise_core, saturate_normals=False: > max_norm -> Inf
  return p;
}
// Its int8 element (sign-magnitude k * 2^-6 with -0, factor down to 2^-133) is not numref's int8
// (§20): the recipe takes the five float element formats (docs/profiles.md).
constexpr Recipe kMicroxcaling{
    .rule = "mx-floor", .partition = "block:1x32", .knobs = "scale_exp=log2f nan_block=first_nan zero_sign=plus",
    .source = "microxcaling mx/mx_ops.py _quantize_mx (CPU path, round=nearest; commit 3b429a84)",
    .elements = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn"};

// §10.5 torchao 0.18 float8 inference (quantization/quantize_/workflows/float8/float8_tensor.py
// Float8Tensor.from_hp with the torch kernel -> quant_primitives.py _choose_scale_float8 and
// _quantize_affine_float8): amax = tensor.abs().amax() in the input dtype; scale = amax /
// finfo.max in the input dtype (binary32 division, then rounded to bf16 / f16 for those inputs),
// stored as binary32; elements x.to(float32) / scale, clamped to +-max and cast (torch). A zero
// scale stays zero (x / 0 = +-Inf -> +-max, 0 / 0 = NaN), an Inf scale divides (x / Inf = +-0,
// Inf / Inf = NaN), a NaN scale leaves each NaN element its own NaN (x86 division). torch's
// scalar kernels (ATEN_CPU_CAPABILITY=default): the NaN scale is canonical, also for bf16 input.
constexpr Recipe kTorchaoFloat8Inference{
    .rule = "amax-dequant", .partition = "tensor",
    .knobs = "inf_block=zero_scale nan_block=own_nan scale_round=source zero_divisor=keep",
    .source = "torchao 0.18 quantization Float8Tensor.from_hp (_choose_scale_float8 + _quantize_affine_float8)",
    .elements = "f8e4m3fn f8e5m2"};

// §10 The profile table: one row per ProfileId, in enum order (= the C ABI numbering, §31.3).
// A new profile is one row here (with its Recipe above, if it has one), its enumerator in
// NUMREF_PROFILE_IDS (policy.hpp) and its NUMREF_PROFILE_LIST entry (backend.h); every list of
// profiles elsewhere (CLI help, `numref profiles`, Python, the conformance plan) reads this table.
constexpr Profile kProfiles[] = {
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
     .wide = torch_wide(), .rules = kTorchDefaultRules},
    {.id = ProfileId::xla, .name = "xla", .summary = "XLA's convert on CPU (jax 0.10: jax.jit(lambda v: v.astype(t)))",
     .narrow = xla_narrow(), .wide = xla_wide(), .rules = kXlaRules},
    // §10.5 profiles with a quantization recipe
    {.id = ProfileId::torchao_mx_floor, .name = "torchao_mx_floor",
     .summary = "torchao 0.18 to_mx, FLOOR, block 32 (CPU eager)", .narrow = torchao_narrow(), .wide = torch_wide(),
     .rules = kTorchRules, .recipe = &kTorchaoMxFloor},
    {.id = ProfileId::torchao_mx_ceil, .name = "torchao_mx_ceil", .summary = "torchao 0.18 to_mx, CEIL, block 32 (CPU eager)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoMxCeil},
    {.id = ProfileId::torchao_mx_even, .name = "torchao_mx_even", .summary = "torchao 0.18 to_mx, EVEN, block 32 (CPU eager)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoMxEven},
    {.id = ProfileId::torchao_mx_rceil, .name = "torchao_mx_rceil",
     .summary = "torchao 0.18 to_mx, RCEIL, block 32 (CPU eager fallback)", .narrow = torchao_narrow(),
     .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoMxRceil},
    {.id = ProfileId::torchao_float8, .name = "torchao_float8",
     .summary = "torchao 0.18 float8 training scaling (tensorwise; rowwise with --partition rows)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoFloat8},
    {.id = ProfileId::torchao_float8_pow2, .name = "torchao_float8_pow2",
     .summary = "torchao 0.18 float8 training scaling with round_scales_to_power_of_2 (tensorwise / rowwise)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoFloat8Pow2},
    {.id = ProfileId::deepgemm, .name = "deepgemm",
     .summary = "DeepGEMM per_token_cast_to_fp8 / per_block_cast_to_fp8 with UE8M0 scales (block 1 x 128; 128 x 128 "
                "with --partition)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kDeepGemm},
    {.id = ProfileId::te_mxfp8, .name = "te_mxfp8",
     .summary = "TransformerEngine MXFP8 quantization (block 1 x 32, E8M0 round-up, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules, .recipe = &kTeMxfp8},
    // element profiles added after the recipe profiles (the C numbers of §31.3 stay)
    {.id = ProfileId::gfloat, .name = "gfloat", .summary = "gfloat 0.5 round_float(sat=False) + encode_float (Graphcore)",
     .narrow = gfloat_policy(Overflow::nonsat), .wide = gfloat_policy(Overflow::nonsat)},
    {.id = ProfileId::gfloat_sat, .name = "gfloat_sat",
     .summary = "gfloat 0.5 round_float(sat=True) + encode_float (as its encode_block)",
     .narrow = gfloat_policy(Overflow::saturate), .wide = gfloat_policy(Overflow::saturate)},
    // recipe profiles added later
    {.id = ProfileId::te_float8_current, .name = "te_float8_current",
     .summary =
         "TransformerEngine Float8CurrentScaling (per tensor: scale = FP8 max / amax, scale_inv stored, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules,
     .recipe = &kTeFloat8Current},
    {.id = ProfileId::te_float8_block, .name = "te_float8_block",
     .summary = "TransformerEngine Float8BlockScaling (tiles 1 x 128 / 128 x 128: power-of-two scale, scale_inv "
                "stored, satfinite)",
     .narrow = cuda_narrow(Overflow::saturate), .wide = cuda_wide(), .rules = kCudaRules, .recipe = &kTeFloat8Block},
    {.id = ProfileId::microxcaling, .name = "microxcaling",
     .summary = "microxcaling (Microsoft MX reference) _quantize_mx: floor(log2f(amax)) shared exponent, elements "
                "rounded half away and clamped, a zero quotient gives +0",
     .narrow = microxcaling_narrow(), .wide = microxcaling_wide(), .recipe = &kMicroxcaling},
    {.id = ProfileId::torchao_float8_inference, .name = "torchao_float8_inference",
     .summary = "torchao 0.18 float8 inference (Float8Tensor: per tensor; per row with --partition rows; scale in the "
                "input dtype)",
     .narrow = torchao_narrow(), .wide = torch_wide(), .rules = kTorchRules, .recipe = &kTorchaoFloat8Inference},
};

// The enumerators' spellings, for the check below.
#define NUMREF_PROFILE_ID_NAME(name) #name,
constexpr std::string_view kProfileIdNames[] = {NUMREF_PROFILE_IDS(NUMREF_PROFILE_ID_NAME)};
#undef NUMREF_PROFILE_ID_NAME

constexpr bool profiles_well_formed() {
  if (std::size(kProfiles) != static_cast<std::size_t>(kProfileCount)) return false;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& p = kProfiles[i];
    if (static_cast<int>(p.id) != i) return false;      // enum order
    if (p.name != kProfileIdNames[i]) return false;     // the name is the enumerator's
    if (p.summary.empty()) return false;
  }  // (so the names are unique: the enumerators are)
  return true;
}
static_assert(profiles_well_formed(), "kProfiles: one row per ProfileId in enum order, named as its enumerator "
                                      "(so the names are unique), with a summary");

// §10.4 Is `name` one of the space-separated names of `list` ("*" matches every format)?
bool names_format(std::string_view list, const Format& f) {
  while (!list.empty()) {
    const std::size_t end = std::min(list.find(' '), list.size());
    const std::string_view n = list.substr(0, end);
    if (n == "*" || n == f.name) return true;
    list.remove_prefix(std::min(end + 1, list.size()));
  }
  return false;
}

}  // namespace

bool Recipe::takes(const Format& element) const { return elements.empty() || names_format(elements, element); }

bool ProfileRule::matches(const Format& f, const Format& t) const { return names_format(from, f) && names_format(to, t); }

Policy Profile::for_cast(const Format& from, const Format& to) const {
  Policy p = for_target(to);
  for (const ProfileRule& r : rules)
    if (r.matches(from, to))
      if (const auto err = apply_policy_settings(p, r.settings))
        throw std::logic_error("profile " + std::string(name) + ": rule '" + std::string(r.settings) + "': " + *err);
  return p;
}

const Profile& profile(ProfileId id) { return kProfiles[static_cast<std::size_t>(id)]; }
const Profile* all_profiles() { return kProfiles; }

std::string profile_names() {
  std::string s;
  for (int i = 0; i < kProfileCount; ++i) {
    if (!s.empty()) s += ", ";
    s += all_profiles()[i].name;
  }
  return s;
}
std::optional<ProfileId> find_profile(std::string_view name) {
  for (const auto& p : kProfiles)
    if (p.name == name) return p.id;
  return std::nullopt;
}

std::string_view to_string(Round v) { return knob_word(v); }
std::string_view to_string(SrVariant v) { return knob_word(v); }
std::string_view to_string(Overflow v) { return knob_word(v); }
std::string_view to_string(InfSat v) { return knob_word(v); }
std::string_view to_string(NanOut v) { return knob_word(v); }
std::string_view to_string(NanToFinite v) { return knob_word(v); }
std::string_view to_string(E8m0Round v) { return knob_word(v); }
std::string_view to_string(ZeroToNoZero v) { return knob_word(v); }
std::string_view to_string(Negative v) { return knob_word(v); }
std::string_view to_string(Tininess v) { return knob_word(v); }
std::string_view to_string(IntRange v) { return knob_word(v); }
std::string_view to_string(E8m0Low v) { return knob_word(v); }
std::string_view to_string(InfNan v) { return knob_word(v); }
std::optional<Round> parse_round(std::string_view s) { return parse_knob_word<Round>(s); }
std::optional<SrVariant> parse_sr_variant(std::string_view s) { return parse_knob_word<SrVariant>(s); }
std::optional<Overflow> parse_overflow(std::string_view s) { return parse_knob_word<Overflow>(s); }
std::optional<InfSat> parse_inf_sat(std::string_view s) { return parse_knob_word<InfSat>(s); }
std::optional<NanOut> parse_nan_out(std::string_view s) { return parse_knob_word<NanOut>(s); }
std::optional<NanToFinite> parse_nan_to_finite(std::string_view s) { return parse_knob_word<NanToFinite>(s); }
std::optional<E8m0Round> parse_e8m0_round(std::string_view s) { return parse_knob_word<E8m0Round>(s); }
std::optional<ZeroToNoZero> parse_zero_to_nozero(std::string_view s) { return parse_knob_word<ZeroToNoZero>(s); }
std::optional<Negative> parse_negative(std::string_view s) { return parse_knob_word<Negative>(s); }
std::optional<Tininess> parse_tininess(std::string_view s) { return parse_knob_word<Tininess>(s); }
std::optional<IntRange> parse_int_range(std::string_view s) { return parse_knob_word<IntRange>(s); }
std::optional<E8m0Low> parse_e8m0_low(std::string_view s) { return parse_knob_word<E8m0Low>(s); }
std::optional<InfNan> parse_inf_nan(std::string_view s) { return parse_knob_word<InfNan>(s); }

namespace {

// ---- §10.2 / §19.8 the text form of a knob struct, written once for both tables -----------

// The text of one knob's value ("?" for a value past the last word).
template <class S, class T>
std::string knob_text(const KnobRow<S, T>& k, const S& s) {
  const T v = s.*k.member;
  if constexpr (std::is_same_v<T, int>) return std::to_string(v);  // sr_bits
  const auto i = static_cast<std::size_t>(v);
  return std::string(i < k.words.size() ? k.words[i] : "?");
}

// Sets one knob from its text; false for a bad value. A number (sr_bits) is one or two decimal
// digits (validate() checks the range).
template <class S, class T>
bool set_knob(const KnobRow<S, T>& k, std::string_view v, S& s) {
  if constexpr (std::is_same_v<T, int>) {  // sr_bits
    if (v.empty() || v.size() > 2) return false;
    int n = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + (c - '0');
    }
    s.*k.member = n;
    return true;
  }
  for (std::size_t i = 0; i < k.words.size(); ++i)
    if (k.words[i] == v) {
      s.*k.member = static_cast<T>(i);
      return true;
    }
  return false;
}

// "key=word key=word ...": the rows of `table` that keep(row) accepts, in table order.
template <class S, class Table, class Keep>
std::string knobs_text(const S& s, const Table& table, Keep&& keep) {
  std::string out;
  for_each_knob_row(table, [&](const auto& row) {
    if (!keep(row)) return;
    if (!out.empty()) out += ' ';
    out += row.key;
    out += '=';
    out += knob_text(row, s);
  });
  return out;
}

// Splits "key=word key=word" and calls set(key, word) for each: set returns 0 (applied),
// 1 (unknown key) or 2 (bad word). Returns an error naming the setting, or nullopt.
template <class Set>
std::optional<std::string> for_each_setting(std::string_view settings, std::string_view what, Set&& set) {
  std::size_t i = 0;
  while (i < settings.size()) {
    while (i < settings.size() && settings[i] == ' ') ++i;
    if (i >= settings.size()) break;
    std::size_t j = settings.find(' ', i);
    if (j == std::string_view::npos) j = settings.size();
    const std::string_view kv = settings.substr(i, j - i);
    i = j;
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) return std::string(what) + " setting '" + std::string(kv) + "' is not key=value";
    const std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    const int r = set(k, v);
    if (r == 1) return "unknown " + std::string(what) + " key '" + std::string(k) + "'";
    if (r == 2) return "bad value '" + std::string(v) + "' for " + std::string(what) + " key '" + std::string(k) + "'";
  }
  return std::nullopt;
}

// Applies "key=word ..." settings of the rows of `table` on top of `base` (all or nothing).
template <class S, class Table>
std::optional<std::string> apply_settings(S& base, std::string_view settings, std::string_view what,
                                          const Table& table) {
  S s = base;
  const auto err = for_each_setting(settings, what, [&](std::string_view key, std::string_view v) {
    int r = 1;
    for_each_knob_row(table, [&](const auto& row) {
      if (row.key == key) r = set_knob(row, v, s) ? 0 : 2;
    });
    return r;
  });
  if (err) return err;
  base = s;
  return std::nullopt;
}

}  // namespace

// §10.2 sr_bits and sr_variant are written only with round=sr.
std::string describe(const Policy& p) {
  return knobs_text(p, kPolicyKnobs, [&](const auto& row) { return !row.sr_only || p.round == Round::sr; });
}
std::optional<std::string> apply_policy_settings(Policy& base, std::string_view settings) {
  return apply_settings(base, settings, "policy", kPolicyKnobs);
}

// §19.8
std::string describe(const RecipeKnobs& k) {
  return knobs_text(k, kRecipeKnobs, [](const auto&) { return true; });
}
std::string recipe_changes(const RecipeKnobs& base, const RecipeKnobs& k) {
  return knobs_text(k, kRecipeKnobs, [&](const auto& row) { return base.*row.member != k.*row.member; });
}
std::optional<std::string> apply_recipe_settings(RecipeKnobs& base, std::string_view settings) {
  return apply_settings(base, settings, "recipe", kRecipeKnobs);
}

std::string describe_rules(const Profile& pr) {
  std::string s;
  for (const ProfileRule& r : pr.rules) {
    if (!s.empty()) s += "; ";
    s += std::string(r.from) + " > " + std::string(r.to) + ": " + std::string(r.settings);
  }
  return s;
}

}  // namespace numref
