// numref — the dot product inside a matrix multiply-accumulate (MMA) instruction.
//   spec §36 (the mma operation), §37 (the ideal result), §38 (the fused truncated
//   dot-product-add model), §39 (instruction profiles)
//
// D = A·B + C, one output element at a time: d = c + Σ_k a_k·b_k (with block scales along K
// where the instruction has them). The ideal profile rounds the exact sum once (§37); every
// instruction profile evaluates the same sum by the steps of §38 — products exact, aligned to
// the largest exponent of the step, truncated to `align` fraction bits, added exactly, rounded
// once to the accumulator — with the knobs of its row in kMmaProfiles. Integer arithmetic only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref/tensor.hpp"

namespace numref {

// ---- §36.2 operand types ------------------------------------------------------------------
// An operand type is a format of §2.1 read in a way the instruction defines: tf32 is a binary32
// code whose 13 low fraction bits are ignored; ue4m3 is an f8e4m3fn code whose sign bit is
// ignored. `bytes2` is the storage of one element in half-bytes as an instruction reads it
// (f6 / f4 held one per byte in the f8f6f4 kinds; f4 packed two per byte in mxf4 / mxf4nvf4).
enum class MmaType : std::uint8_t {
  f32,
  tf32,
  f16,
  bf16,
  f8e4m3fn,
  f8e5m2,
  f6e3m2fn,
  f6e2m3fn,
  f4e2m1fn,
  f8e8m0fnu,
  ue4m3,
  f8e4m3fnuz,
  f8e5m2fnuz
};
struct MmaTypeInfo {
  MmaType id;
  std::string_view name;
  FormatId format;
  std::uint32_t ignore_mask;  // bits of the code that are ignored (tf32: 0x1FFF, ue4m3: 0x80)
};
std::span<const MmaTypeInfo> mma_types();
const MmaTypeInfo& mma_type(MmaType t);
std::optional<MmaType> find_mma_type(std::string_view name);

// ---- §38 model knobs --------------------------------------------------------------------------
enum class MmaAlgo : std::uint8_t {
  ideal,     // §37 the exact sum rounded once
  fdpa,      // §38 fused truncated dot-product-add steps
  tr_fdpa,   // §38.7 two-level steps: products truncated, then floored with C
  gtr_fdpa,  // §38.8 the same with the products in two interleaved halves
  fma,       // §38.9 a chain of fused multiply-adds, one product per step, each rounded (rne)
  efdpa,     // §38.10 exact steps: L products and the accumulator summed exactly, rounded once (rne)
  ftz,       // §38.11 binary32 additions in a tree per step, subnormals flushed to zero
};
enum class MmaRound : std::uint8_t {
  rne,   // round to nearest, ties to even (IEEE 754), overflow to ±Inf
  rz,    // toward zero, binary32; a magnitude of 2^128 or more is ±Inf (§38.5)
  rz13,  // toward zero to 13 fraction bits in the binary32 exponent range; overflow as rz
};
enum class MmaScale : std::uint8_t {
  none,     // no block scales
  product,  // §38.3 each product carries its block's two scale exponents
  group,    // §38.4 products summed exactly in groups of `group`, then scaled
};
enum class MmaNan : std::uint8_t {
  ones,       // every magnitude bit set, positive: 7FFFFFFF, 7FFF
  canonical,  // the format's canonical quiet NaN: 7FC00000, 7E00
};
enum class MmaZero : std::uint8_t {
  plus,     // a zero result is +0
  ieee,     // IEEE 754 §6.3: −0 only when every addend is −0 (rne; rz alike)
  rounded,  // an exact zero sum is +0; a non-zero sum that rounds to zero keeps its sign
};

struct MmaKnobs {
  MmaAlgo algo = MmaAlgo::ideal;
  int align = 0;                   // F: fraction bits kept after aligning to the step's largest exponent
  int align2 = 0;                  // F2: fraction bits of the second level (tr_fdpa, gtr_fdpa)
  int fused_bytes = 0;             // bytes of A's row per step: the step fuses fused_bytes / element bytes products
  int e_zero = 0;                  // exponent given to a zero term, binary32 accumulator
  int e_zero_f16 = 0;              // exponent given to a zero term, binary16 accumulator
  MmaRound round = MmaRound::rne;  // rounding to a binary32 accumulator (binary16: always rne)
  MmaScale scale = MmaScale::none;
  int group = 0;  // G for scale=group
  MmaNan nan = MmaNan::canonical;
  MmaZero zero = MmaZero::ieee;
  friend bool operator==(const MmaKnobs&, const MmaKnobs&) = default;
};

namespace mma_words {
inline constexpr std::string_view algo[] = {"ideal", "fdpa", "tr_fdpa", "gtr_fdpa", "fma", "efdpa", "ftz"};
inline constexpr std::string_view round[] = {"rne", "rz", "rz13"};
inline constexpr std::string_view scale[] = {"none", "product", "group"};
inline constexpr std::string_view nan[] = {"ones", "canonical"};
inline constexpr std::string_view zero[] = {"plus", "ieee", "rounded"};
// §32.3 the C ABI minor version that introduced each word (Annex C.1): 1.9 the mma family, 1.10 algo=fma,
// 1.11 algo=efdpa and algo=ftz
inline constexpr std::uint8_t algo_since[] = {9, 9, 9, 9, 10, 11, 11};
inline constexpr std::uint8_t since_1_9[] = {9, 9, 9};
}  // namespace mma_words

template <class T>
using MmaKnob = KnobRow<MmaKnobs, T>;
// The single definition of the model knobs' text form (§38.6): `numref mma --profiles`, the
// spec's generated table and the parser of --model read it.
// clang-format off
inline constexpr auto kMmaKnobs = std::make_tuple(
    MmaKnob<MmaAlgo>{.key = "algo", .member = &MmaKnobs::algo, .words = mma_words::algo, .since = mma_words::algo_since, .clause = "§37, §38, §38.7, §38.8, §38.9, §38.10, §38.11"},
    MmaKnob<int>{.key = "align", .member = &MmaKnobs::align, .clause = "§38.2"},
    MmaKnob<int>{.key = "align2", .member = &MmaKnobs::align2, .clause = "§38.7"},
    MmaKnob<int>{.key = "fused_bytes", .member = &MmaKnobs::fused_bytes, .clause = "§38.1"},
    MmaKnob<int>{.key = "e_zero", .member = &MmaKnobs::e_zero, .clause = "§38.2"},
    MmaKnob<int>{.key = "e_zero_f16", .member = &MmaKnobs::e_zero_f16, .clause = "§38.2"},
    MmaKnob<MmaRound>{.key = "round", .member = &MmaKnobs::round, .words = mma_words::round, .since = mma_words::since_1_9, .clause = "§38.5"},
    MmaKnob<MmaScale>{.key = "scale", .member = &MmaKnobs::scale, .words = mma_words::scale, .since = mma_words::since_1_9, .clause = "§38.3, §38.4"},
    MmaKnob<int>{.key = "group", .member = &MmaKnobs::group, .clause = "§38.4"},
    MmaKnob<MmaNan>{.key = "nan", .member = &MmaKnobs::nan, .words = mma_words::nan, .since = mma_words::since_1_9, .clause = "§38.5"},
    MmaKnob<MmaZero>{.key = "zero", .member = &MmaKnobs::zero, .words = mma_words::zero, .since = mma_words::since_1_9, .clause = "§37, §38.5"});
// clang-format on

// "algo=fdpa align=13 ..." (every knob, table order).
std::string describe(const MmaKnobs& k);
// §38.6 Applies "key=value ..." (separated by spaces or commas) to k. Returns "" on success, else
// the message naming the problem (unknown knob, a value not among its words or out of range, a
// key given twice); k is then unchanged.
std::string apply_model_text(MmaKnobs& k, std::string_view text);

// ---- §39 instruction profiles -----------------------------------------------------------------
struct MmaProfile {
  std::string_view name;          // "sm90_wgmma_f8"
  std::string_view instruction;   // the PTX / ISA instruction and kinds it models
  std::string_view types;         // A / B operand types it takes, space separated
  std::string_view accumulators;  // C / D types: "f32" or "f32 f16"
  std::string_view scale_types;   // block-scale types ("" = no block scales)
  std::string_view blocks;        // block sizes along K it takes ("" = none)
  MmaKnobs knobs;
  std::string_view evidence;  // where the knob values come from
};
std::span<const MmaProfile> mma_profiles();
const MmaProfile* find_mma_profile(std::string_view name);
// True iff the space-separated list contains the word.
bool mma_list_has(std::string_view list, std::string_view word);

// ---- §36 the operation ------------------------------------------------------------------------
struct MmaSpec {
  const MmaProfile* profile = nullptr;                           // required
  MmaType a = MmaType::f32, b = MmaType::f32, c = MmaType::f32;  // D has C's type
  int block = 0;                                                 // block size along K of the scales (0 = none)
  MmaType scale = MmaType::f8e8m0fnu;                            // scale type (used when block > 0)
  std::optional<MmaKnobs> knobs;                                 // overrides the profile's knobs (a model, §38.6)
  const MmaKnobs& model() const { return knobs ? *knobs : profile->knobs; }
};

// §36.3 Checks the spec (types the profile takes, block and scale) for a K; throws
// std::invalid_argument naming the problem.
void validate(const MmaSpec& s, std::size_t K);

// §38.1 Products fused per step for the spec's A type: 2 · fused_bytes / mma_nibbles(s) (also for
// algo=efdpa and algo=ftz); 1 for algo=fma (§38.9), 0 for algo=ideal.
std::size_t mma_fused(const MmaSpec& s);
// §38.1 h: half-bytes one A element occupies (8 tf32, 4 f16 / bf16, 2 narrower, 1 packed f4).
int mma_nibbles(const MmaSpec& s);

// One output element: d = c + Σ_{k<K} a[k·as]·b[k·bs] (scales sa / sb: one per `block`
// elements, strides sas / sbs), by the spec's profile. Returns D's code and the §9 flags.
struct MmaResult {
  std::uint32_t bits;
  std::uint8_t flags;
};
MmaResult mma_dot(const MmaSpec& s, std::size_t K, const std::uint32_t* a, std::size_t as, const std::uint32_t* b,
                  std::size_t bs, std::uint32_t c, const std::uint32_t* sa = nullptr, std::size_t sas = 1,
                  const std::uint32_t* sb = nullptr, std::size_t sbs = 1);

// §36.1 D (M × N) = A (M × K) · B (K × N) + C (M × N), row-major codes; scale_a is
// M × K/block, scale_b is K/block × N (row-major). flags (optional) gets one entry per element.
void mma(const MmaSpec& s, std::size_t M, std::size_t N, std::size_t K, std::span<const std::uint32_t> A,
         std::span<const std::uint32_t> B, std::span<const std::uint32_t> C, std::span<std::uint32_t> D,
         std::span<const std::uint32_t> scale_a = {}, std::span<const std::uint32_t> scale_b = {},
         std::span<std::uint8_t> flags = {});

// ---- §40 the GEMM level ------------------------------------------------------------------------
// How a kernel accumulates a long K around the instruction: promotion of partial sums into a
// binary32 accumulator (§40.1), split-K with a sequential reduction (§40.2).
struct GemmOptions {
  std::size_t promote = 0;  // §40.1 elements of K per promoted chunk (0 = none)
  std::size_t split_k = 1;  // §40.2 slices of K reduced in order (1 = none)
  // §40.5 promotion scales (binary32 codes): chunk t of row i is scaled by RN32(sa[i][t] · sb[t][j]),
  // sa M x K/promote, sb K/promote x N, row-major; empty: no promotion scales
  std::span<const std::uint32_t> promote_sa = {}, promote_sb = {};
};

// §40.3 Checks the options against the spec for a K; throws std::invalid_argument naming the problem.
void validate(const MmaSpec& s, const GemmOptions& g, std::size_t K);

// §40 D = A·B + C as mma() with the GEMM options (shapes and scales as mma()).
void gemm(const MmaSpec& s, const GemmOptions& g, std::size_t M, std::size_t N, std::size_t K,
          std::span<const std::uint32_t> A, std::span<const std::uint32_t> B, std::span<const std::uint32_t> C,
          std::span<std::uint32_t> D, std::span<const std::uint32_t> scale_a = {},
          std::span<const std::uint32_t> scale_b = {}, std::span<std::uint8_t> flags = {});

// ---- §40.6 a GEMM of operands quantized by a recipe profile ----------------------------------
// How a library's quantized GEMM uses a recipe profile's scales (§10.4): the partitions of A
// (M x K) and B (K x N), and whether the instruction applies the scales per block of K (§38.3,
// §38.4) or the kernel multiplies them into §40.5 promotion. One row per recipe profile that has
// a GEMM; the CLI (`numref mma --recipe`), the Python package and the spec's table read it.
enum class GemmRecipeScales : std::uint8_t {
  block,    // the stored scales go to the instruction as its block scales (§36.1)
  promote,  // §40.5: each chunk of `block` elements promoted with RN32(pa · pb), the scales as binary32
};
struct GemmRecipe {
  std::string_view profile;      // the recipe profile (§10.4)
  std::string_view a_partition;  // A's blocks along K
  std::string_view b_partition;  // B's blocks along K
  GemmRecipeScales scales;
  int block;                // elements of K per scale (block) or per promoted chunk (promote)
  std::string_view source;  // informative: the GEMM of the library this follows
};
std::span<const GemmRecipe> gemm_recipes();
const GemmRecipe* find_gemm_recipe(std::string_view profile);

// The quantized operands: element codes (A M x K, B K x N, row-major, of type `element`) and
// the scales the GEMM takes — block scales (stored codes; sa M x K/block, sb K/block x N) or
// promotion scales (binary32; same shapes, B's spread over the columns of its block).
struct RecipeGemmOperands {
  MmaType element = MmaType::f8e4m3fn;
  std::vector<std::uint32_t> a, b, sa, sb;
};
// §40.6 Quantizes A and B by the recipe (§19 under the recipe profile, the partitions above)
// into `element`. Throws std::invalid_argument naming the problem: an element the recipe does not
// take or the instruction types cannot hold, K not a multiple of the block.
RecipeGemmOperands quantize_for_gemm(const GemmRecipe& r, const Format& element, const TensorView& A,
                                     const TensorView& B);
// The MmaSpec and GemmOptions of the recipe's GEMM under `profile` (C binary32): block scales set
// the spec's block and scale type, promotion sets the options' promote and scales (which view
// `q`). Throws std::invalid_argument when the profile cannot take them (§36.3, §40.3).
void recipe_gemm_spec(const GemmRecipe& r, const RecipeGemmOperands& q, std::size_t K, MmaSpec& s, GemmOptions& g);

}  // namespace numref
