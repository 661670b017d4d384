// numref reference — §40.6 a GEMM of operands quantized by a recipe profile: the recipe's
// quantization of A and B along K (§19, §10.4), then the instruction with the scales as its block
// scales, or §40.5 promotion with the scales.                              spec §40.6
#include <algorithm>
#include <stdexcept>
#include <string>

#include "numref/mma.hpp"
#include "numref/profiles.hpp"
#include "numref/quantize.hpp"
#include "numref/scale.hpp"

namespace numref {

namespace {

// clang-format off
constexpr GemmRecipe kGemmRecipes[] = {
  {"deepgemm",         "block:1x128", "block:128x128", GemmRecipeScales::promote, 128,
   "DeepGEMM fp8_gemm_nt (Hopper): per-token 1 x 128 activations, 128 x 128 weights, each promoted "
   "128-element partial sum multiplied by scale_a * scale_b in one FFMA"},
  {"torchao_mx_floor", "block:1x32",  "block:32x1",    GemmRecipeScales::block,    32,
   "torchao MXTensor matmul: to_mx of A and of B along K, torch._scaled_mm with the E8M0 block scales"},
  {"torchao_mx_ceil",  "block:1x32",  "block:32x1",    GemmRecipeScales::block,    32,
   "torchao MXTensor matmul (scaling_mode=CEIL), as torchao_mx_floor"},
  {"torchao_mx_even",  "block:1x32",  "block:32x1",    GemmRecipeScales::block,    32,
   "torchao MXTensor matmul (scaling_mode=EVEN), as torchao_mx_floor"},
  {"torchao_mx_rceil", "block:1x32",  "block:32x1",    GemmRecipeScales::block,    32,
   "torchao MXTensor matmul (scaling_mode=RCEIL), as torchao_mx_floor"},
  {"te_mxfp8",         "block:1x32",  "block:32x1",    GemmRecipeScales::block,    32,
   "TransformerEngine MXFP8: row-wise and column-wise 1 x 32 scales along K, the block-scaled GEMM"},
};
// clang-format on

// The dequantize factor X = 2^(c - 127) of an E8M0 code as a binary32 code (§16.1; 00 is the
// subnormal 2^-127, FF the canonical NaN, §13.3).
std::uint32_t e8m0_factor(std::uint32_t c) {
  if (c == 0xFFu) return 0x7FC00000u;
  return c == 0 ? 0x00400000u : (c << 23);
}

// One operand's quantization: the rule and partition it ran with, the stored scales.
struct Quantized {
  ScaleRule rule;
  Partition partition;
  std::vector<std::uint32_t> scales;
};

// The MMA operand type that holds an element format's codes unchanged.
MmaType operand_type(const Format& f) {
  for (const MmaTypeInfo& t : mma_types())
    if (t.format == f.id && t.ignore_mask == 0) return t.id;
  throw std::invalid_argument("the element format " + std::string(f.name) + " is not an operand type of §36.2");
}

}  // namespace

std::span<const GemmRecipe> gemm_recipes() { return kGemmRecipes; }

const GemmRecipe* find_gemm_recipe(std::string_view profile) {
  for (const GemmRecipe& r : kGemmRecipes)
    if (r.profile == profile) return &r;
  return nullptr;
}

RecipeGemmOperands quantize_for_gemm(const GemmRecipe& r, const Format& element, const TensorView& A,
                                     const TensorView& B) {
  const auto pid = find_profile(r.profile);
  if (!pid || !profile(*pid).recipe)
    throw std::invalid_argument("recipe: '" + std::string(r.profile) + "' is not a recipe profile (§10.4)");
  const Profile& prof = profile(*pid);
  if (!prof.recipe->takes(element))
    throw std::invalid_argument("recipe " + std::string(r.profile) + " does not quantize to " +
                                std::string(element.name) + " (its elements: " + std::string(prof.recipe->elements) +
                                ")");
  RecipeGemmOperands out;
  out.element = operand_type(element);
  const std::size_t M = A.rows(), K = A.cols(), N = B.cols();
  if (B.rows() != K)
    throw std::invalid_argument("B must be K x N with K = " + std::to_string(K) + " (A's columns), it has " +
                                std::to_string(B.rows()) + " rows");
  const auto blk = static_cast<std::size_t>(r.block);
  if (K % blk != 0)
    throw std::invalid_argument("recipe " + std::string(r.profile) + ": K = " + std::to_string(K) +
                                " is not a multiple of its block of " + std::to_string(blk) + " elements");
  const auto quantize_one = [&](const TensorView& x, std::string_view partition, std::vector<std::uint32_t>& codes) {
    QuantizeOptions qo;
    qo.profile = std::string(r.profile);
    qo.partition = std::string(partition);
    QuantizeSpec q = quantize_spec(element, qo, [](std::string_view key) { return std::string(key); });
    q.policy = prof.for_target(element);
    q.wide = prof.wide;
    std::vector<std::uint8_t> c(x.size());
    QuantizeResult res = quantize(x, q, c);
    codes.assign(c.begin(), c.end());
    return Quantized{q.rule, q.partition, std::move(res.meta.scales)};
  };
  auto [rule, part_a, sa] = quantize_one(A, r.a_partition, out.a);
  auto [rule_b, part_b, sb] = quantize_one(B, r.b_partition, out.b);
  (void)part_a, (void)rule_b;
  if (r.scales == GemmRecipeScales::block) {
    out.sa = std::move(sa);  // M x K/block and K/block x N: the grids of 1 x B and B x 1 blocks
    out.sb = std::move(sb);
    return out;
  }
  // §40.5 promotion scales: the dequantize factors as binary32, B's spread over its block's columns
  if (scale_format(rule).id != FormatId::f8e8m0fnu)
    throw std::invalid_argument("recipe " + std::string(r.profile) + ": promotion scales are read from E8M0 codes");
  const std::size_t nc = K / blk;
  const std::size_t bw = BlockGrid(K, N, part_b).block_cols();
  const std::size_t nbc = (N + bw - 1) / bw;
  out.sa.resize(M * nc);
  out.sb.resize(nc * N);
  for (std::size_t i = 0; i < M * nc; ++i) out.sa[i] = e8m0_factor(sa[i]);
  for (std::size_t t = 0; t < nc; ++t)
    for (std::size_t j = 0; j < N; ++j) out.sb[t * N + j] = e8m0_factor(sb[t * nbc + j / bw]);
  return out;
}

void recipe_gemm_spec(const GemmRecipe& r, const RecipeGemmOperands& q, std::size_t K, MmaSpec& s, GemmOptions& g) {
  s.a = s.b = q.element;
  if (r.scales == GemmRecipeScales::block) {
    const ScaleRule rule = *parse_scale_rule(profile(*find_profile(r.profile)).recipe->rule);
    s.block = r.block;
    s.scale = operand_type(scale_format(rule));
  } else {
    g.promote = static_cast<std::size_t>(r.block);
    g.promote_sa = q.sa;
    g.promote_sb = q.sb;
  }
  try {
    validate(s, g, K);
  } catch (const std::invalid_argument& e) {
    std::string why = e.what();
    if (why.rfind("mma: ", 0) == 0) why.erase(0, 5);
    throw std::invalid_argument(
        "recipe " + std::string(r.profile) + " with profile " + std::string(s.profile->name) + ": " + why +
        (r.scales == GemmRecipeScales::block
             ? " (the recipe's scales are the instruction's block scales of " + std::to_string(r.block) +
                   " elements: use a profile that takes them, `numref mma --profiles`)"
             : ""));
  }
}

}  // namespace numref
