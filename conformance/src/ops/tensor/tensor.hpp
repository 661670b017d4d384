// numref conformance — the tensor op families (internal).        spec §12–§20, §31.6, §34.8
//
// Four families share one parameter type:
//   scale        x -> block amax (§13), stored block scales (§14–§18, §20.1), GAM group
//                mantissas (§17.1), the NVFP4 tensor amax (§18.1)
//   quantize     x [, r] -> codes (§19.2), scales, group mantissas, tensor amax, counts (§19.5)
//   dequantize   codes + metadata -> binary32 values (§19.3)
//   fake-quant   x [, r] -> bf16 / f16 / f32 values (§19.6), counts
// A case is ONE TENSOR of the suite's fixed shape: its words are laid out case-major
// (Shape::case_major), in the order of the `Layout` below. Parameters (canonical text, all
// key=value words in a fixed order):
//   src= elem= shape=RxC partition= transpose=0|1 rule= [group=] amax_nan= amax_inf=
//   [q_max=<binary32 hex>] [<recipe knobs, describe() of §19.8>] [apply=] [dequant=] [out=]
//   [profile= <element policy, describe() of §10.3>]
// — each family prints the keys it uses (dequantize: no src, transpose, amax_*, apply;
// scale: no profile, policy, apply, dequant, out). The element policy of profile P is P's
// narrow policy with overflow=saturate (§19.1), the int8 rules fix int_range (§20.2); the
// wide policy is P's (§19.3, §19.6). The recipe knobs (every kind but dequantize) are written
// when the profile has a §10.4 recipe or they differ from numref's rules; absent keys take the
// profile's recipe (scale, which has no profile: numref's rules). q_max= only when it differs
// from the rule's own (§14.4).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../kit.hpp"
#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/quantize.hpp"

namespace numref::conform::tensor {

enum class Kind : std::uint8_t { scale, quantize, dequantize, fake_quant };
inline constexpr Kind kKinds[] = {Kind::scale, Kind::quantize, Kind::dequantize, Kind::fake_quant};
std::string_view kind_name(Kind k);  // "scale", "quantize", "dequantize", "fake-quant"
const Family& family(Kind k);

// Word offsets of one case (case-major), read from the schema's columns. -1: absent.
struct Layout {
  std::size_t n = 0, nb = 0, ng = 0;  // elements, blocks, groups
  // inputs
  int x = -1, r = -1;                                            // scale, quantize, fake-quant
  int codes_in = -1, scales_in = -1, gm_in = -1, tamax_in = -1;  // dequantize
  int in = 0;
  // outputs
  int amax = -1, codes = -1, scales = -1, gm = -1, tamax = -1, counts = -1, y = -1;
  int out = 0;
};

// §12–§20 One tensor suite. Schema (case-major; the vector-file columns, in order):
//   scale       x [r] | amax scales [gm] [tamax]
//   quantize    x [r] | codes scales [gm] [tamax] counts (optional, NUMREF_CAP_COUNTS)
//   dequantize  codes scales [gm] [tamax] | y
//   fake-quant  x [r] | y counts (optional)
class TensorParams final : public Params {
 public:
  struct Spec {
    Kind kind = Kind::quantize;
    const Format* src = &format(FormatId::f32);
    const Format* elem = &format(FormatId::f8e4m3fn);
    const Format* out = &format(FormatId::bf16);  // fake-quant output
    std::size_t rows = 1, cols = 1;
    bool transpose = false;
    Partition partition = Partition::tensor();
    Partition group = Partition::tensor();  // gam only
    ScaleRule rule = ScaleRule::amax;
    AmaxPolicy amax;
    ScaleApply apply = ScaleApply::rn32;
    DequantOp dequant = DequantOp::divide;
    std::string profile = "ocp";
    Policy policy;               // the element policy (resolved: int8 rules fix int_range)
    RecipeKnobs recipe;          // §19.8 (not dequantize): the profile's recipe, knobs on top
    std::optional<Exact> q_max;  // §14.4 explicit q_max (unset: the rule's; never equal to it)
  };
  explicit TensorParams(const Spec& s);  // throws std::invalid_argument naming the problem

  void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const override;
  std::string classify(const CaseDiff& d) const override;
  MismatchText render(const CaseDiff& d) const override;
  const BlockGrid* blocks() const override { return &grid_; }
  const BlockGrid* groups() const override { return &ggrid_; }
  std::pair<std::size_t, std::size_t> memory_to_view(std::size_t k) const override { return view_.of_memory(k); }
  bool plugin_supported(const numref_backend& b) const override;
  bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out, bool optional,
                   std::string& error) const override;
  std::uint32_t abi_minor() const override;

  const Spec& spec() const { return s_; }
  Kind kind() const { return s_.kind; }
  const Layout& layout() const { return layout_; }
  const BlockGrid& grid() const { return grid_; }
  const BlockGrid& group_grid() const { return ggrid_; }
  const kit::View& view() const { return view_; }
  bool sr() const { return sr_; }
  const Exact& q_max() const { return qmax_; }
  // The reference's QuantizeSpec of this suite.
  QuantizeSpec quantize_spec() const;
  // The format of the stored scales.
  const Format& scale_fmt() const { return scale_format(s_.rule); }
  // Knob settings of the element policy that differ from the tensor base of the profile.
  std::string overrides() const;
  // The C struct (valid while this object lives).
  const numref_tensor_op& c_op() const { return cop_; }
  // The metadata of a dequantize case (its input words: scales, group mantissas, tensor amax).
  ScaleMeta dequant_meta(const std::uint32_t* in) const;
  // The reference results of one case: `in` and `out` are the case's words.
  void reference(const std::uint32_t* in, std::uint32_t* out) const;
  // The §19.5 counts as text ("counts s,f,n,i"), "" when not reported.
  std::string counts_text(CaseView out) const;

 private:
  void build_schema();
  Spec s_;
  Layout layout_;
  kit::View view_;
  BlockGrid grid_, ggrid_;
  Exact qmax_;
  bool sr_ = false;
  Policy wide_;
  std::string policy_text_, wide_text_, recipe_text_;
  numref_tensor_op cop_{};
};
using TensorParamsPtr = std::shared_ptr<const TensorParams>;

// The element policy of a tensor suite under profile P before any variant: P's narrow
// policy with overflow=saturate (§19.1), int_range fixed by the int8 rules (§20.2).
Policy tensor_base(const std::string& profile, ScaleRule rule);
// §10.4 / §19.8 The recipe knobs of profile P: its recipe's, numref's rules for a profile without one.
RecipeKnobs recipe_base(const std::string& profile);
// Parses the canonical text; throws std::invalid_argument.
TensorParamsPtr parse(Kind k, std::string_view text);
// The canonical key=value text of a spec (no validation).
std::string spec_text(const TensorParams::Spec& s);
// Whether family k has an element policy (quantize, fake-quant).
bool has_policy(Kind k);

// ---- generation (§34.8) ---------------------------------------------------------------------
// The suites of a level for one family (plan.cpp).
void plan(Kind k, const PlanRequest& req, std::vector<GeneratedSuite>& out);
// Fills the input words of one generated case (cases.cpp).
void generate_case(const TensorParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in);
std::shared_ptr<const CaseSource> cases(const TensorParamsPtr& p, std::uint64_t count, std::uint64_t seed);
// A sweep of source codes as 1 x 1 blocks: case j holds codes [j * cols, (j + 1) * cols)
// of `total` consecutive codes from 0 (the 2^32 f32 sweep at level exhaustive).
std::shared_ptr<const CaseSource> sweep_cases(const TensorParamsPtr& p, std::uint64_t total);

// ---- vectors (§31.6, §B.4) -------------------------------------------------------------------
void generate_vectors(Kind k, std::vector<VectorFileText>& out);
std::unique_ptr<VectorFileReader> open_divergence(Kind k, const VectorHeader& h,
                                                  const std::vector<std::string>& profiles);

}  // namespace numref::conform::tensor
