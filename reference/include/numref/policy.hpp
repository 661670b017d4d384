// numref — conversion policy knobs, exception flags and named profiles.
//   spec §4 (rounding), §5 (stochastic rounding), §6 (overflow and special values),
//   §7 (f8e8m0fnu targets), §8 (subnormals), §9 (flags), §10 (profiles)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "numref/format.hpp"

namespace numref {

// §9 Exception flags, SoftFloat bit values (softfloat_flag_*), so that a TestFloat user
// reads them unchanged. Bit 3 (SoftFloat's "infinite", division by zero) is never raised
// by a conversion and is reserved.
enum Flag : std::uint8_t {
  kInexact = 0x01,
  kUnderflow = 0x02,
  kOverflow = 0x04,
  kInvalid = 0x10,
};
std::string flags_to_string(std::uint8_t flags);  // e.g. "v-ux" style, §9

// §4 Rounding modes.
enum class Round : std::uint8_t {
  rne,  // to nearest, ties to the even CODE (§4.2; = ties to even significand when m >= 1)
  rtz,  // toward zero
  rup,  // toward +infinity
  rdn,  // toward -infinity
  rna,  // to nearest, ties away from zero
  sr,   // stochastic, with explicit random bits r of width k (§5)
};

// §5.1 / §5.2 How the random bits are applied in stochastic rounding.
enum class SrVariant : std::uint8_t {
  fraction,  // §5.1: fraction below the target ulp truncated to k bits; up iff frac_k + r >= 2^k
  add,       // §5.2: r added to the source bit pattern below the target's normal ulp, then truncate
};

// §6.1 Overflow of a finite value beyond the largest finite magnitude.
enum class Overflow : std::uint8_t {
  saturate,  // clamp to +-max finite
  nonsat,    // IEEE 754 §7.4 result: +-Inf, or NaN where the format has no Inf (OCP non-saturating)
};

// §6.2 An infinite operand when the policy saturates.
enum class InfSat : std::uint8_t {
  max,   // +-Inf becomes +-max finite
  keep,  // +-Inf stays special: Inf where the target has Inf, else NaN
};

// §6.3 The NaN produced from a NaN operand.
enum class NanOut : std::uint8_t {
  sign,       // target's canonical quiet NaN with the operand's sign
  canonical,  // target's canonical quiet NaN, positive (sign dropped)
  ones,       // positive NaN with every magnitude bit set (CUDA: 0x7F, 0x7FFF, 0x7FFFFFFF)
  payload,    // IEEE 754 §6.2.3: sign kept, payload truncated to the target's width, quieted
  ones_sign,  // sign kept, every magnitude bit set (torch f32 -> f8e5m2: 0x7F / 0xFF)
  raw,        // sign kept, fraction field shifted to the target's width, NOT quieted; a zero
              // fraction becomes 1 (NumPy's half casts, bit-shift widenings, copies)
  all_ones,   // every bit set, the sign bit included (torch's AVX2 / AVX-512 f32 -> bf16: 0xFFFF)
  raw_plus,   // raw with the sign dropped (torch's fp8_fnuz_to_fp32_value: the fnuz NaN 80 -> 0x7F800001)
};

// §6.4 A NaN operand converted into a format that has no NaN (FP6, FP4, int8).
enum class NanToFinite : std::uint8_t {
  zero,      // +0
  negzero,   // -0 (the sign pattern with zero magnitude; ml_dtypes)
  max,       // +max finite (CUDA __nv_cvt_float_to_fp4)
  signzero,  // the zero with the operand's sign (XLA)
  flipzero,  // the -0 pattern with the operand's sign flipped: +NaN -> -0, -NaN -> +0 (ml_dtypes)
};

// §7.1 Rounding for targets without trailing significand bits (f8e8m0fnu).
enum class E8m0Round : std::uint8_t {
  follow,  // derived from Policy::round: rne->even, rna->tiesup, rtz/rdn->floor, rup->ceil, sr->sr
  floor,   // toward zero (= toward -inf for the positive operands this applies to)
  ceil,    // toward +inf
  even,    // nearest; a tie 1.5*2^e goes to the even CODE
  tiesup,  // nearest; a tie 1.5*2^e goes up to 2^(e+1)
};

// §7.4 Operands below 2^-126 into f8e8m0fnu (the binade under code 01).
enum class E8m0Low : std::uint8_t {
  linear,  // §7.1 rounding between 2^-127 (00) and 2^-126 (01), §7.4 below 2^-127
  grid,    // rounded to n * 2^-126, n in {0, 1}, on the integer grid (ties to n = 0); code n
           // (ml_dtypes, torch: f32 00400001..005FFFFF -> 01)
  nan,     // §7.1 rounding as `linear`; a rounded value below 2^-127 gives the NaN FF, flag invalid
           // (gfloat 0.5 encode_float: v < fi.min -> code_of_nan)
};

// §7.2 Zero into a format that has no zero (f8e8m0fnu).
enum class ZeroToNoZero : std::uint8_t { nan, min };
// §7.3 A negative (non-zero) operand into an unsigned format (f8e8m0fnu).
enum class Negative : std::uint8_t {
  nan,      // NaN (FF), flag invalid
  abs,      // convert |x| (CUDA drops the sign bit)
  inf_abs,  // a finite negative operand gives NaN as `nan`; -Inf is converted as +Inf (§6.2: FE when
            // saturating with inf_sat=max) (gfloat 0.5 round_float: the sign of an unsigned format is
            // dropped before the Inf test, L65-L68)
};
// §6.7 The NaN that stands for an infinity in a format with NaN but no Inf (f8e4m3fn,
// f8e8m0fnu): the result of an overflow to "infinity" (§6.1) and of an infinite operand (§6.2 rule 5).
enum class InfNan : std::uint8_t {
  slot,  // the NaN of the infinity slot with the sign of x (7F / FF in f8e4m3fn)
  nan,   // the NaN that nan= (§6.3) gives a quiet NaN operand of x's sign (gfloat: every NaN FF)
};
// §9.2 When tininess (for the underflow flag and flushing) is detected.
enum class Tininess : std::uint8_t { after, before };
// §6.5 Range of integer targets: two's complement [-2^(n-1), 2^(n-1)-1] or symmetric.
enum class IntRange : std::uint8_t { full, symmetric };

// The complete set of knobs for one conversion. Default-constructed = the `ocp`
// profile for an 8-bit target (§10.1).
struct Policy {
  Round round = Round::rne;
  int sr_bits = 0;  // k, 1..32, required when round == sr
  SrVariant sr_variant = SrVariant::fraction;
  Overflow overflow = Overflow::nonsat;
  InfSat inf_sat = InfSat::max;
  NanOut nan = NanOut::payload;
  NanToFinite nan_to_finite = NanToFinite::zero;
  E8m0Round e8m0_round = E8m0Round::follow;
  E8m0Low e8m0_low = E8m0Low::linear;
  ZeroToNoZero zero_to_nozero = ZeroToNoZero::nan;
  Negative negative = Negative::nan;
  bool daz = false;  // §8.1 input subnormals treated as (signed) zero
  bool ftz = false;  // §8.2 tiny results flushed to (signed) zero
  Tininess tininess = Tininess::after;
  IntRange int_range = IntRange::full;
  InfNan inf_nan = InfNan::slot;

  friend bool operator==(const Policy&, const Policy&) = default;
};

// ---- §10.3 / §19.8 the knob rows ----------------------------------------------------------
//
// One row of a knob table (kPolicyKnobs, kRecipeKnobs below): S is the struct the knob sets
// (Policy or RecipeKnobs), T the type of its member (an enum; bool for daz / ftz, int for
// sr_bits). The rows are the single definition of the knobs' text form: describe(),
// apply_*_settings() (reference/src/policy.cpp), the C ABI mapping (conform/abi.hpp) and the
// CLI / Python options read them.
// (an alias, not `T S::*member;`: nvcc's front end re-emits that declaration with
// parentheses, which g++ then flags under -Werror=parentheses in the CUDA build)
template <class S, class T>
using KnobMember = T S::*;
template <class S, class T>
struct KnobRow {
  std::string_view key;                          // §10.3 "nan", §19.8 "zero_code"
  KnobMember<S, T> member;                       // &Policy::nan
  std::span<const std::string_view> words = {};  // canonical words in enum order; empty: a number (sr_bits)
  std::uint8_t c_first = 0;  // policy knobs: §32.3 the C value of word 0 (recipe knobs: the index, from 0)
  // §32.3 the C ABI minor version that introduced word i (Annex C.1); empty: every word is 1.0's.
  // A backend that declares an earlier minor is never offered the word (§34.3).
  std::span<const std::uint8_t> since = {};
  bool sr_only = false;  // policy knobs: meaningful (and written by describe()) only with round=sr
  std::string_view clause;

  constexpr std::uint8_t since_minor(std::size_t word) const { return word < since.size() ? since[word] : 0; }
  // "a|b|c": the canonical words, for messages and help texts.
  std::string words_text() const {
    std::string s;
    for (const std::string_view w : words) {
      if (!s.empty()) s += '|';
      s += w;
    }
    return s;
  }
  // The value named by one of the words (bool knobs included: their words are 0, 1).
  std::optional<T> parse_word(std::string_view v) const {
    for (std::size_t i = 0; i < words.size(); ++i)
      if (words[i] == v) return static_cast<T>(i);
    return std::nullopt;
  }
};
// Calls f(row) for every row of a knob table, in table order.
template <class Table, class F>
constexpr void for_each_knob_row(const Table& table, F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, table);
}

// ---- §19.8 quantization-recipe knobs ---------------------------------------------------
//
// How a library's quantization recipe departs from numref's rules (§13 – §19) around the
// scale: the amax floor, exponents taken "as binary32 log2f would", the factor of E8M0 code
// 00, blocks whose amax is +Inf or NaN, and NaN elements of formats without NaN. Defaults
// are numref's rules. kRecipeKnobs (below) is the single definition of their text form.
enum class AmaxFloor : std::uint8_t {
  none,      // §13.5 no floor
  eps_1e12,  // max(amax, RN64(1e-12)) in binary64 (torchao float8 amax_to_scale: EPS = 1e-12)
  eps_1e4,   // max(amax, RN32(1e-4)) in binary32 (DeepGEMM: amax.clamp(1e-4))
};
enum class ScaleExp : std::uint8_t {
  bits,   // §15 / §16.5: exponents read exactly from the bits / the exact quotient
  log2f,  // §16.8: pow2 = 2^floor(log2f(S)); mx-rceil: e = ceil(log2f(RN32(amax / q_max)));
          // §16.11 mx-floor: e = floor(log2f(amax)) - emax_elem (amax 0 read as 2^-126)
};
enum class ZeroCode : std::uint8_t {
  stored,      // §16.9 code 00 quantizes with its value X = 2^-127
  min_normal,  // X = 2^-126 (torchao FLOOR / CEIL / EVEN: clamp(scale, min=F32_MIN_NORMAL))
  one,         // X = 1 (torchao RCEIL, TransformerEngine exp2f_rcp(0) = 1)
};
enum class InfBlock : std::uint8_t {
  poison,         // §13.3 default: NaN scale, NaN codes
  exponent,       // §13.6 MX: amax read as 2^128 (exponent field 255, torchao FLOOR / CEIL / EVEN)
  max_code,       // MX: code FE, X = 2^127 (torchao RCEIL, cvt.rp.satfinite of +Inf)
  zero_scale,     // FP32 quotient: S = q_max / Inf = 0 (torchao float8)
  max_code_zero,  // MX: code FE, elements multiplied by 0 (TransformerEngine exp2f_rcp(0xFE) = 0.0)
  one_scale,      // FP32 quotient: S = 1.0, as for amax = 0 (TransformerEngine compute_scale_from_amax)
};
enum class NanBlock : std::uint8_t {
  poison,       // §13.3 default: every element converts the canonical NaN
  inf_divisor,  // §13.7 MX code FF, elements divided by X = +Inf (torchao FLOOR / CEIL / EVEN)
  max_code,     // MX: code FE, X = 2^127 (DeepGEMM ceil_to_ue8m0: NaN exponent 255 + 1, clamped to 254)
  first_nan,    // poisoned, but the elements convert the block's first NaN element (a NaN element
                // its own NaN), quieted and positive (microxcaling on torch's scalar kernels)
  own_nan,      // poisoned; a NaN element converts its own NaN (quieted, sign kept), the others the
                // canonical NaN (x / NaN on x86: torchao float8 inference)
};
enum class ScaleRound : std::uint8_t {
  f32,     // §14.3 D = RN32(amax / q_max)
  source,  // §14.5 then rounded (RNE) to the source format when it is bf16 / f16 (torch divides
           // in the input dtype: torchao _choose_scale_float8)
};
enum class ZeroDivisor : std::uint8_t {
  raise,  // §14.3 D = 1.0 for amax 0, 2^-149 when it rounds to 0
  keep,   // §14.6 D = 0 is stored and divides: x / 0 = ±Inf, 0 / 0 = NaN (torchao float8 inference)
};
enum class Divisor : std::uint8_t {
  divide,  // §14.3 the elements are divided by D: x / D
  recip,   // §14.7 multiplied by its binary32 reciprocal: x * RN32(1 / D) (DeepGEMM use_ue8m0=False)
};
enum class NanScale : std::uint8_t {
  canonical,        // §13.8 a poisoned binary32 scale is 0x7FC00000 and its elements convert it
  all_ones_tensor,  // with the tensor partition it is 0xFFFFFFFF (torch.max(torch.abs(x)): the
                    // vectorised full reduction ORs the NaN mask into the result; torchao float8
                    // tensorwise); other partitions stay canonical (torch.amax(dim=...))
};
enum class MxDescale : std::uint8_t {
  recip,   // §16.6 mx-rceil-f32: d = RN32(amax * RN32(1 / q_max)) (cuBLAS, TransformerEngine)
  divide,  // §16.10 d = RN32(amax / q_max) (DeepGEMM: ceil_to_ue8m0(x_amax / 448.0))
};
enum class ElemNan : std::uint8_t {
  policy,  // §19.9 a NaN reaching a format without NaN follows §6.4 (nan_to_finite)
  half,    // it becomes ±1.5 with the NaN's sign (torchao _f32_to_floatx_unpacked, quiet NaN)
  bits,    // §19.9 the NaN's binary32 bits rounded as if they were a normal number (torchao
           // _f32_to_floatx_unpacked on any NaN: f4e2m1fn 0x3 or 0x4 by payload bit 21)
};
enum class NvScale : std::uint8_t {
  encode,          // §18.1 - §18.4 S_enc = C / t_amax (TransformerEngine)
  decode,          // §18.5 p = t_amax / C divides the block scales; x86 binary32 NaN rules (torchao to_nvfp4
                   // with the per-tensor scale per_tensor_amax_to_scale(torch.max(torch.abs(x))))
  block,           // §18.6 no tensor scale: d_b = e4m3(clamp(b_amax / q_max, 2^-6, 448)) (torchao to_nvfp4
                   // without a per_tensor_scale)
  encode_inf_one,  // §18.5 encode, with S_enc = 1.0 for t_amax = +Inf as for 0 (TransformerEngine
                   // compute_global_encode_scaling_factor_FP4: 2688 / Inf = 0 -> 1.0)
};
// §18.5 / §18.6 nvfp4_scale is torchao's arithmetic (not §18.1 - §18.4's).
constexpr bool torchao_nvfp4(NvScale s) { return s == NvScale::decode || s == NvScale::block; }
enum class ZeroSign : std::uint8_t {
  keep,  // §19.10 a zero element keeps the sign of x (§6.6)
  plus,  // an element whose scaled value RN32(x * F) is ±0 becomes +0 (microxcaling:
         // sign(q) * floor(|q| + 0.5) with torch.sign(±0) = 0; -0 inputs, binary32 underflow)
};
enum class ElemExp : std::uint8_t {
  bits,   // §19.2 an element is rounded on the grid of the binade of RN32(x * F), read from its bits
  log2f,  // §19.11 on the grid of binade floor(log2f(|y|)): one binade up just below a power of two,
          // where the binary32 log2f rounds up to the integer (microxcaling's private exponent)
};
struct RecipeKnobs {
  AmaxFloor amax_floor = AmaxFloor::none;
  ScaleExp scale_exp = ScaleExp::bits;
  ZeroCode zero_code = ZeroCode::stored;
  InfBlock inf_block = InfBlock::poison;
  NanBlock nan_block = NanBlock::poison;
  ElemNan elem_nan = ElemNan::policy;
  MxDescale mx_descale = MxDescale::recip;
  NanScale nan_scale = NanScale::canonical;
  ZeroSign zero_sign = ZeroSign::keep;
  ScaleRound scale_round = ScaleRound::f32;
  ZeroDivisor zero_divisor = ZeroDivisor::raise;
  Divisor divisor = Divisor::divide;
  ElemExp elem_exp = ElemExp::bits;
  NvScale nvfp4_scale = NvScale::encode;
  friend bool operator==(const RecipeKnobs&, const RecipeKnobs&) = default;
};
namespace recipe_words {
inline constexpr std::string_view amax_floor[] = {"none", "1e-12", "1e-4"};
inline constexpr std::string_view scale_exp[] = {"bits", "log2f"};
inline constexpr std::string_view zero_code[] = {"stored", "min_normal", "one"};
inline constexpr std::string_view inf_block[] = {"poison",     "exponent",      "max_code",
                                                 "zero_scale", "max_code_zero", "one_scale"};
inline constexpr std::string_view nan_block[] = {"poison", "inf_divisor", "max_code", "first_nan", "own_nan"};
inline constexpr std::string_view mx_descale[] = {"recip", "divide"};
inline constexpr std::string_view nan_scale[] = {"canonical", "all_ones_tensor"};
inline constexpr std::string_view elem_nan[] = {"policy", "half", "bits"};
inline constexpr std::string_view zero_sign[] = {"keep", "plus"};
inline constexpr std::string_view scale_round[] = {"f32", "source"};
inline constexpr std::string_view zero_divisor[] = {"raise", "keep"};
inline constexpr std::string_view divisor[] = {"divide", "recip"};
inline constexpr std::string_view elem_exp[] = {"bits", "log2f"};
inline constexpr std::string_view nvfp4_scale[] = {"encode", "decode", "block", "encode_inf_one"};
// The C ABI minor version of each word (Annex C.1): the recipe came in 1.4 (its defaults, word 0,
// are the rules of every earlier version); later words say so.
inline constexpr std::uint8_t since_1_4[] = {0, 4, 4, 4, 4, 4};
inline constexpr std::uint8_t inf_block_since[] = {0, 4, 4, 4, 4, 5};
inline constexpr std::uint8_t nan_block_since[] = {0, 4, 4, 6, 6};
inline constexpr std::uint8_t since_1_6[] = {0, 6};
inline constexpr std::uint8_t elem_nan_since[] = {0, 4, 12};
inline constexpr std::uint8_t since_1_12[] = {0, 12, 12, 12};
}  // namespace recipe_words
template <class T>
using RecipeKnob = KnobRow<RecipeKnobs, T>;
// clang-format off
inline constexpr auto kRecipeKnobs = std::make_tuple(
    RecipeKnob<AmaxFloor>{.key = "amax_floor", .member = &RecipeKnobs::amax_floor, .words = recipe_words::amax_floor, .since = recipe_words::since_1_4,
                          .clause = "§13.5"},
    RecipeKnob<ScaleExp>{.key = "scale_exp", .member = &RecipeKnobs::scale_exp, .words = recipe_words::scale_exp, .since = recipe_words::since_1_4,
                         .clause = "§16.8"},
    RecipeKnob<ZeroCode>{.key = "zero_code", .member = &RecipeKnobs::zero_code, .words = recipe_words::zero_code, .since = recipe_words::since_1_4,
                         .clause = "§16.9"},
    RecipeKnob<InfBlock>{.key = "inf_block", .member = &RecipeKnobs::inf_block, .words = recipe_words::inf_block, .since = recipe_words::inf_block_since,
                         .clause = "§13.6"},
    RecipeKnob<NanBlock>{.key = "nan_block", .member = &RecipeKnobs::nan_block, .words = recipe_words::nan_block, .since = recipe_words::nan_block_since,
                         .clause = "§13.7"},
    RecipeKnob<ElemNan>{.key = "elem_nan", .member = &RecipeKnobs::elem_nan, .words = recipe_words::elem_nan, .since = recipe_words::elem_nan_since,
                        .clause = "§19.9"},
    RecipeKnob<MxDescale>{.key = "mx_descale", .member = &RecipeKnobs::mx_descale, .words = recipe_words::mx_descale, .since = recipe_words::since_1_4,
                          .clause = "§16.10"},
    RecipeKnob<NanScale>{.key = "nan_scale", .member = &RecipeKnobs::nan_scale, .words = recipe_words::nan_scale, .since = recipe_words::since_1_4,
                         .clause = "§13.8"},
    RecipeKnob<ZeroSign>{.key = "zero_sign", .member = &RecipeKnobs::zero_sign, .words = recipe_words::zero_sign, .since = recipe_words::since_1_6,
                         .clause = "§19.10"},
    RecipeKnob<ScaleRound>{.key = "scale_round", .member = &RecipeKnobs::scale_round,
                           .words = recipe_words::scale_round, .since = recipe_words::since_1_6, .clause = "§14.5"},
    RecipeKnob<ZeroDivisor>{.key = "zero_divisor", .member = &RecipeKnobs::zero_divisor,
                            .words = recipe_words::zero_divisor, .since = recipe_words::since_1_6, .clause = "§14.6"},
    RecipeKnob<Divisor>{.key = "divisor", .member = &RecipeKnobs::divisor, .words = recipe_words::divisor,
                        .since = recipe_words::since_1_12, .clause = "§14.7"},
    RecipeKnob<ElemExp>{.key = "elem_exp", .member = &RecipeKnobs::elem_exp, .words = recipe_words::elem_exp,
                        .since = recipe_words::since_1_12, .clause = "§19.11"},
    RecipeKnob<NvScale>{.key = "nvfp4_scale", .member = &RecipeKnobs::nvfp4_scale,
                        .words = recipe_words::nvfp4_scale, .since = recipe_words::since_1_12, .clause = "§18.5"});
// clang-format on
// The row of the recipe knob whose RecipeKnobs member has type E (every recipe knob has its own enum).
template <class E>
constexpr const RecipeKnob<E>& recipe_knob() {
  return std::get<RecipeKnob<E>>(kRecipeKnobs);
}
// "amax_floor=none scale_exp=bits ..." (every knob, table order).
std::string describe(const RecipeKnobs& k);
// The settings of k that differ from base, in table order ("zero_code=one inf_block=max_code"); "" if none.
std::string recipe_changes(const RecipeKnobs& base, const RecipeKnobs& k);
// Applies "key=word ..." on top of `base`; an error naming the key or word, or nullopt.
std::optional<std::string> apply_recipe_settings(RecipeKnobs& base, std::string_view settings);

// §10.4 A profile's quantization recipe (data): the scale rule (a kScaleRules name), the
// default partition (§12.2 text), the recipe knob settings and the library function it follows.
// The element conversion is the profile's narrow policy; its wide policy converts NaN codes
// back and produces the fake-quant output (§19.1).
struct Recipe {
  std::string_view rule;
  std::string_view partition;
  std::string_view knobs;
  std::string_view source;
  bool amax_nan_ignore = false;  // §13.2 amax_nan=ignore (TransformerEngine: fmaxf drops NaN)
  // §10.4 the element formats the recipe reproduces its library for (space-separated names; every
  // recipe lists them, checked in profiles.hpp). Another element format is an error (recipe_spec),
  // and the conformance plan leaves it out.
  std::string_view elements = {};
  bool takes(const Format& element) const;
};

// ---- §10.3 the knob table ---------------------------------------------------------------
//
// kPolicyKnobs is the single definition of the knobs' text form: per knob its key, the
// canonical words of its values in enum order (word i names the enumerator with value i; the
// enumerator names equal the words), the Policy member it sets, the C ABI numbering
// (NUMREF_<KEY>_<WORD> = c_first + i, backend.h; pinned in conform/abi.hpp) and its clause. The
// rows are in describe() order, which is also the field order of the C struct numref_policy.
// describe(), apply_policy_settings(), to_string() / parse_*(), the C ABI mapping, the CUDA
// describe() and the CLI options read it.
namespace knob_words {
inline constexpr std::string_view round[] = {"rne", "rtz", "rup", "rdn", "rna", "sr"};
inline constexpr std::string_view sr_variant[] = {"fraction", "add"};
inline constexpr std::string_view overflow[] = {"saturate", "nonsat"};
inline constexpr std::string_view inf_sat[] = {"max", "keep"};
inline constexpr std::string_view nan[] = {"sign",      "canonical", "ones",     "payload",
                                           "ones_sign", "raw",       "all_ones", "raw_plus"};
inline constexpr std::string_view nan_to_finite[] = {"zero", "negzero", "max", "signzero", "flipzero"};
inline constexpr std::string_view e8m0_round[] = {"follow", "floor", "ceil", "even", "tiesup"};
inline constexpr std::string_view e8m0_low[] = {"linear", "grid", "nan"};
inline constexpr std::string_view zero_to_nozero[] = {"nan", "min"};
inline constexpr std::string_view negative[] = {"nan", "abs", "inf_abs"};
inline constexpr std::string_view bit[] = {"0", "1"};  // daz, ftz
inline constexpr std::string_view tininess[] = {"after", "before"};
inline constexpr std::string_view int_range[] = {"full", "symmetric"};
inline constexpr std::string_view inf_nan[] = {"slot", "nan"};
// The C ABI minor version of each word, where a word is later than 1.0 (Annex C.1).
inline constexpr std::uint8_t nan_since[] = {0, 0, 0, 0, 2, 2, 2, 7};
inline constexpr std::uint8_t nan_to_finite_since[] = {0, 0, 0, 2, 2};
inline constexpr std::uint8_t negative_since[] = {0, 0, 5};
inline constexpr std::uint8_t e8m0_low_since[] = {0, 2, 5};
inline constexpr std::uint8_t inf_nan_since[] = {0, 5};
}  // namespace knob_words

// One knob: T is the type of its Policy member (an enum, bool for daz / ftz, int for sr_bits).
template <class T>
using PolicyKnob = KnobRow<Policy, T>;
// clang-format off
inline constexpr auto kPolicyKnobs = std::make_tuple(
    PolicyKnob<Round>{.key = "round", .member = &Policy::round, .words = knob_words::round, .clause = "§4.2, §5"},
    PolicyKnob<int>{.key = "sr_bits", .member = &Policy::sr_bits, .sr_only = true, .clause = "§4.3"},
    PolicyKnob<SrVariant>{.key = "sr_variant", .member = &Policy::sr_variant, .words = knob_words::sr_variant,
                          .sr_only = true, .clause = "§5.1, §5.2"},
    PolicyKnob<Overflow>{.key = "overflow", .member = &Policy::overflow, .words = knob_words::overflow, .clause = "§6.1"},
    PolicyKnob<InfSat>{.key = "inf_sat", .member = &Policy::inf_sat, .words = knob_words::inf_sat, .clause = "§6.2"},
    PolicyKnob<NanOut>{.key = "nan", .member = &Policy::nan, .words = knob_words::nan, .since = knob_words::nan_since,
                      .clause = "§6.3"},
    PolicyKnob<NanToFinite>{.key = "nan_to_finite", .member = &Policy::nan_to_finite, .words = knob_words::nan_to_finite,
                            .since = knob_words::nan_to_finite_since,
                            .clause = "§6.4"},
    PolicyKnob<E8m0Round>{.key = "e8m0_round", .member = &Policy::e8m0_round, .words = knob_words::e8m0_round,
                          .clause = "§7.1"},
    PolicyKnob<ZeroToNoZero>{.key = "zero_to_nozero", .member = &Policy::zero_to_nozero,
                             .words = knob_words::zero_to_nozero, .clause = "§7.2"},
    PolicyKnob<Negative>{.key = "negative", .member = &Policy::negative, .words = knob_words::negative,
                         .since = knob_words::negative_since, .clause = "§7.3"},
    PolicyKnob<bool>{.key = "daz", .member = &Policy::daz, .words = knob_words::bit, .clause = "§8.1"},
    PolicyKnob<bool>{.key = "ftz", .member = &Policy::ftz, .words = knob_words::bit, .clause = "§8.2"},
    PolicyKnob<Tininess>{.key = "tininess", .member = &Policy::tininess, .words = knob_words::tininess, .clause = "§9.2"},
    PolicyKnob<IntRange>{.key = "int_range", .member = &Policy::int_range, .words = knob_words::int_range,
                         .clause = "§6.5"},
    PolicyKnob<E8m0Low>{.key = "e8m0_low", .member = &Policy::e8m0_low, .words = knob_words::e8m0_low,
                        .since = knob_words::e8m0_low_since, .clause = "§7.4"},
    PolicyKnob<InfNan>{.key = "inf_nan", .member = &Policy::inf_nan, .words = knob_words::inf_nan,
                       .since = knob_words::inf_nan_since, .clause = "§6.7"});
// clang-format on
inline constexpr std::size_t kPolicyKnobCount = std::tuple_size_v<decltype(kPolicyKnobs)>;

// Calls f(knob) for every row, in table order.
template <class F>
constexpr void for_each_policy_knob(F&& f) {
  for_each_knob_row(kPolicyKnobs, f);
}
// The row of the knob whose Policy member has type T (every enum knob has its own type).
template <class T>
constexpr const PolicyKnob<T>& policy_knob() {
  return std::get<PolicyKnob<T>>(kPolicyKnobs);
}
// The canonical word of an enum knob's value ("?" past the last word).
template <class E>
constexpr std::string_view knob_word(E v) {
  const auto i = static_cast<std::size_t>(v);
  const auto& w = policy_knob<E>().words;
  return i < w.size() ? w[i] : std::string_view("?");
}
// The value of an enum knob named by its canonical word.
template <class E>
constexpr std::optional<E> parse_knob_word(std::string_view s) {
  const auto& w = policy_knob<E>().words;
  for (std::size_t i = 0; i < w.size(); ++i)
    if (w[i] == s) return static_cast<E>(i);
  return std::nullopt;
}
// "key=word" of a knob's value, e.g. "nan=ones" ("sr_bits=8" for the number).
template <class E>
std::string knob_setting(E v) {
  const std::string key(policy_knob<E>().key);
  if constexpr (std::is_same_v<E, int>)
    return key + "=" + std::to_string(v);
  else
    return key + "=" + std::string(knob_word(v));
}

// Name <-> enum helpers for the CLI, the vector files and reports (§10.3), read from the table.
std::string_view to_string(Round r);
std::string_view to_string(SrVariant v);
std::string_view to_string(Overflow o);
std::string_view to_string(InfSat v);
std::string_view to_string(NanOut v);
std::string_view to_string(NanToFinite v);
std::string_view to_string(E8m0Round v);
std::string_view to_string(ZeroToNoZero v);
std::string_view to_string(Negative v);
std::string_view to_string(Tininess v);
std::string_view to_string(IntRange v);
std::string_view to_string(E8m0Low v);
std::string_view to_string(InfNan v);
std::optional<Round> parse_round(std::string_view s);
std::optional<SrVariant> parse_sr_variant(std::string_view s);
std::optional<Overflow> parse_overflow(std::string_view s);
std::optional<InfSat> parse_inf_sat(std::string_view s);
std::optional<NanOut> parse_nan_out(std::string_view s);
std::optional<NanToFinite> parse_nan_to_finite(std::string_view s);
std::optional<E8m0Round> parse_e8m0_round(std::string_view s);
std::optional<ZeroToNoZero> parse_zero_to_nozero(std::string_view s);
std::optional<Negative> parse_negative(std::string_view s);
std::optional<Tininess> parse_tininess(std::string_view s);
std::optional<IntRange> parse_int_range(std::string_view s);
std::optional<E8m0Low> parse_e8m0_low(std::string_view s);
std::optional<InfNan> parse_inf_nan(std::string_view s);

// A complete, canonical one-line description of a policy ("round=rne overflow=nonsat ..."),
// used in vector headers and mismatch reports; parse_policy() reads it back (§10.3).
std::string describe(const Policy& p);
// Applies "key=value" settings (space separated) on top of `base`. Returns an error
// message naming the offending key or value, or nullopt on success.
std::optional<std::string> apply_policy_settings(Policy& base, std::string_view settings);

}  // namespace numref

// §10 the named profiles (ProfileId, Profile, the profile table): numref/profiles.hpp, which
// needs the declarations above.
#include "numref/profiles.hpp"  // IWYU pragma: export
