// numref conformance — the MoR op families (internal).          spec §21–§27, §31.7, §33.9
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

#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/metrics.hpp"
#include "numref/mor.hpp"

namespace numref::conform::mor {

enum class Kind : std::uint8_t { tensor, sub };
std::string_view kind_name(Kind k);  // "mor", "mor-sub"
const Family& family(Kind k);

// §31.7 An exact error sum travels as 18 words: limb[0..4] as (low, high) word pairs, then
// n, nonfinite_input, nonfinite_quant, zeros as (low, high) pairs.
inline constexpr int kSumWords = 18;

// Word offsets of one case (case-major). -1: absent.
struct MorLayout {
  std::size_t n = 0, nb = 0;
  int x = 0, in = 0;
  // mor
  int decision = -1, reason = -1, mean = -1, gm = -1, sum = -1, scales = -1;
  // mor-sub
  int type = -1, eq3 = -1, eq4 = -1, sum4 = -1, sum5 = -1, scales4 = -1, scales5 = -1, gm2 = -1, y = -1;
  int out = 0;
};

class MorParams final : public Params {
 public:
  struct Spec {
    Kind kind = Kind::tensor;
    const Format* src = &format(FormatId::bf16);
    std::size_t rows = 1, cols = 1;
    bool transpose = false;
    Partition part = Partition::blocks(128, 128);  // mor: the scaling partition; mor-sub: the blocks B
    Threshold threshold;                           // mor only
    SubtensorRecipe recipe = SubtensorRecipe::three_way;  // mor-sub only
  };
  explicit MorParams(const Spec& s);  // throws std::invalid_argument naming the problem

  const Family& family() const override;
  const std::string& text() const override { return text_; }
  std::string label() const override;
  const std::string& profile() const override { return profile_; }
  std::string formats() const override { return std::string(s_.src->name) + " bf16"; }
  std::string selector_text() const override;
  std::string clause() const override;
  Shape shape() const override { return {L_.in, L_.out, true}; }

  void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const override;
  Finding compare(CaseView in, CaseView expected, CaseView got, const CompareOptions& o) const override;
  std::string render_inputs(CaseView in) const override;
  std::string render_output(CaseView out, bool with_counts) const override;
  MismatchText render_mismatch(CaseView in, CaseView expected, CaseView got, const CompareOptions& o) const override;

  bool plugin_supported(const numref_backend& b) const override;
  bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out, bool want_counts,
                   std::string& error) const override;

  std::string pipe_params() const override { return text_; }
  void pipe_case(CaseView in, std::string& line) const override;
  std::string pipe_result(std::string_view line, bool with_counts, std::uint32_t* out, std::size_t n,
                          std::size_t i) const override;

  const Spec& spec() const { return s_; }
  const MorLayout& layout() const { return L_; }
  const BlockGrid& grid() const { return grid_; }
  const numref_mor_op& c_op() const { return cop_; }
  // The view index of the x word at memory position k (transposed views).
  std::size_t view_index_of_mem(std::size_t k) const;
  // The reference results of one case.
  void reference(const std::uint32_t* in, std::uint32_t* out) const;

 private:
  Spec s_;
  std::string profile_ = "ocp";
  std::string text_;
  MorLayout L_;
  BlockGrid grid_;
  std::string policy_text_, wide_text_;
  numref_mor_op cop_{};
};
using MorParamsPtr = std::shared_ptr<const MorParams>;

MorParamsPtr parse(Kind k, std::string_view text);
std::string spec_text(const MorParams::Spec& s);

// §22.3 an ErrorSum <-> the 18 words / the C struct.
void put_sum(const ErrorSum& s, std::uint32_t* w);
void put_sum(const numref_error_sum& s, std::uint32_t* w);
numref_error_sum get_sum(const std::uint32_t* w);
std::string sum_text(const std::uint32_t* w);  // "S=0x...p-149 n=.. nfi=.. nfq=.. zeros=.."

// ---- case text (vector files §30.7, pipe lines §32.7) -------------------------------------------
// One column of a case: a grid of rows x cols values of `digits` hex digits (<= limit); a
// `sum` column holds rows x cols exact error sums, each 9 values of 16 hex digits (limb 0..4,
// n, nonfinite_input, nonfinite_quant, zeros) separated by ':'.
struct MorColumn {
  std::string name;
  int at;
  bool input;
  std::size_t rows, cols;
  int digits;
  std::uint64_t limit;
  bool sum = false;
};
std::vector<MorColumn> columns(const MorParams& p);
// strict (vector files): rows separated by '/'; flat (pipe): one row.
std::string render_column(const MorColumn& c, const std::uint32_t* words, bool strict);
std::string parse_column(const MorColumn& c, std::string_view text, std::uint32_t* words, bool strict);

// ---- generation (§33.9) ---------------------------------------------------------------------
void plan(Kind k, const PlanRequest& req, std::vector<GeneratedSuite>& out);
void generate_case(const MorParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in);
std::shared_ptr<const CaseSource> cases(const MorParamsPtr& p, std::uint64_t count, std::uint64_t seed);

// ---- vectors (§30.7) --------------------------------------------------------------------------
void generate_vectors(Kind k, std::vector<VectorFileText>& out);
std::unique_ptr<VectorFileReader> open_vectors(Kind k, const VectorHeader& h, const std::vector<std::string>& profiles);

}  // namespace numref::conform::mor
