// numref conformance — the MoR op families (internal).          spec §21–§27, §32.7, §34.9
//
//   mor       x -> the tensor-level decision (§26): decision, the §25.3 reason, the §23.1
//             mean, the GAM group mantissa, the §22.3 exact error sum, the E8M0 scales
//   mor-sub   x -> per block (§27): the type map, the Eq. 3 / Eq. 4 reasons, both exact
//             error sums, both scale sets, the two group mantissas, the output tensor
// A case is ONE TENSOR (case-major words, MorLayout). Parameters (canonical text):
//   mor:      src= shape=RxC transpose=0|1 scaling=<partition> threshold=num/den
//   mor-sub:  src= shape=RxC transpose=0|1 blocks=<partition> recipe=three-way|two-way
// The element policy is fixed by §26.1 / §27.1 (ocp, saturating, rn32, divide); the output
// format is bf16 (§21.1).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../kit.hpp"
#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/metrics.hpp"
#include "numref/mor.hpp"

namespace numref::conform::mor {

enum class Kind : std::uint8_t { tensor, sub };
std::string_view kind_name(Kind k);  // "mor", "mor-sub"
const Family& family(Kind k);

// Word offsets of one case (case-major), read from the schema's columns. -1: absent.
struct MorLayout {
  std::size_t n = 0, nb = 0;
  int x = 0, in = 0;
  // mor
  int decision = -1, reason = -1, mean = -1, gm = -1, sum = -1, scales = -1;
  // mor-sub
  int type = -1, eq3 = -1, eq4 = -1, sum4 = -1, sum5 = -1, scales4 = -1, scales5 = -1, gm2 = -1, y = -1;
  int out = 0;
};

// Schema (case-major; the vector-file columns, in order):
//   mor       x | decision reason mean gm sum scales
//   mor-sub   x | type eq3 eq4 sum4 sum5 scales4 scales5 gm y
// decision / type are NUMREF_BLOCK_* codes, reasons NUMREF_REASON_* codes; a sum is the §22.3
// exact error sum (18 words, §32.7).
class MorParams final : public Params {
 public:
  struct Spec {
    Kind kind = Kind::tensor;
    const Format* src = &format(FormatId::bf16);
    std::size_t rows = 1, cols = 1;
    bool transpose = false;
    Partition part = Partition::blocks(128, 128);         // mor: the scaling partition; mor-sub: the blocks B
    Threshold threshold;                                  // mor only
    SubtensorRecipe recipe = SubtensorRecipe::three_way;  // mor-sub only
  };
  explicit MorParams(const Spec& s);  // throws std::invalid_argument naming the problem

  void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const override;
  std::string case_note(const std::uint32_t* in, const std::uint32_t* out) const override;
  const BlockGrid* blocks() const override { return &grid_; }
  std::pair<std::size_t, std::size_t> memory_to_view(std::size_t k) const override { return view_.of_memory(k); }
  bool plugin_supported(const numref_backend& b) const override;
  bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out, bool optional,
                   std::string& error) const override;

  const Spec& spec() const { return s_; }
  const MorLayout& layout() const { return L_; }
  const BlockGrid& grid() const { return grid_; }
  const kit::View& view() const { return view_; }
  const numref_mor_op& c_op() const { return cop_; }
  // The reference results of one case.
  void reference(const std::uint32_t* in, std::uint32_t* out) const;

 private:
  void build_schema();
  Spec s_;
  kit::View view_;
  MorLayout L_;
  BlockGrid grid_;
  std::string policy_text_, wide_text_;
  numref_mor_op cop_{};
};
using MorParamsPtr = std::shared_ptr<const MorParams>;

MorParamsPtr parse(Kind k, std::string_view text);
std::string spec_text(const MorParams::Spec& s);

// §22.3 an ErrorSum <-> the 18 words / the C struct.
void put_sum(const numref_error_sum& s, std::uint32_t* w);
numref_error_sum get_sum(const std::uint32_t* w);

// ---- generation (§34.9) ---------------------------------------------------------------------
void plan(Kind k, const PlanRequest& req, std::vector<GeneratedSuite>& out);
void generate_case(const MorParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in);
std::shared_ptr<const CaseSource> cases(const MorParamsPtr& p, std::uint64_t count, std::uint64_t seed);

// ---- vectors (§31.7) --------------------------------------------------------------------------
void generate_vectors(Kind k, std::vector<VectorFileText>& out);

}  // namespace numref::conform::mor
