// numref conformance — the GaussWS op family (internal).        spec §30, §31.9, §32.8, §33.8, §34.10
//
//   gaussws   w, b_t per 32 x 32 block, the noise source (16-bit words u per element, or a
//             generator key), dL/dw_hat -> packed R (§30.9), the block scales s (§30.4),
//             w_hat in bf16 (§30.5, §30.6), dL/db_t per block (§30.7)
// A case is ONE MATRIX (case-major words, GausswsLayout). Parameters (canonical text):
//   w=f32|bf16 g=f32|bf16 shape=RxC noise=bits|key sum=exact|f32
// The blocks are fixed by §30.1 (32 x 32, ragged edges); the output format is bf16 (§30.5).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../kit.hpp"
#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/gaussws.hpp"
#include "numref/partition.hpp"

namespace numref::conform::gaussws {

inline constexpr std::string_view kName = "gaussws";
const Family& family();

enum class Noise : std::uint8_t { bits, key };  // §34.10 noise=bits | key

// Word offsets of one case (case-major), read from the schema's columns. -1: absent.
struct GausswsLayout {
  std::size_t n = 0, nb = 0, nr = 0;  // elements, blocks, packed R words
  int w = 0, bt = 0, u = -1, key = -1, g = 0, in = 0;
  int r = 0, scale = 0, y = 0, grad = 0, out = 0;
};

// Schema (case-major; the vector-file columns, in order):
//   w bt u|key g | r scale y grad
// w: codes of w's format (R x C); bt: binary32 per block; u: 16-bit words (R x C, noise=bits);
// key: 6 words seed, layer, step as (low, high) pairs (noise=key); g: codes of g's format;
// r: ceil(R C / 8) packed words (§30.9); scale: binary32 per block; y: bf16 (R x C);
// grad: binary32 per block.
class GausswsParams final : public Params {
 public:
  struct Spec {
    const Format* w = &format(FormatId::f32);
    const Format* g = &format(FormatId::f32);
    std::size_t rows = 1, cols = 1;
    Noise noise = Noise::bits;
    numref::gaussws::Sum sum = numref::gaussws::Sum::exact;
  };
  explicit GausswsParams(const Spec& s);  // throws std::invalid_argument naming the problem

  void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const override;
  std::string case_note(const std::uint32_t* in, const std::uint32_t* out) const override;
  const BlockGrid* blocks() const override { return &grid_; }
  bool plugin_supported(const numref_backend& b) const override;
  bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out, bool optional,
                   std::string& error) const override;

  const Spec& spec() const { return s_; }
  const GausswsLayout& layout() const { return L_; }
  const BlockGrid& grid() const { return grid_; }
  const numref_gaussws_op& c_op() const { return cop_; }
  numref::gaussws::Shape matrix() const { return {s_.rows, s_.cols}; }
  // The reference results of one case.
  void reference(const std::uint32_t* in, std::uint32_t* out) const;
  // R of one case (row-major), from its u words or its key.
  std::vector<std::int8_t> noise_of(const std::uint32_t* in) const;

 private:
  void build_schema();
  Spec s_;
  GausswsLayout L_;
  BlockGrid grid_;
  numref_gaussws_op cop_{};
};
using GausswsParamsPtr = std::shared_ptr<const GausswsParams>;

GausswsParamsPtr parse(std::string_view text);
std::string spec_text(const GausswsParams::Spec& s);
std::string_view noise_name(Noise n);
std::string_view sum_name(numref::gaussws::Sum s);

// The key of a case's key column (6 words) and back.
numref::gaussws::NoiseKey get_key(const std::uint32_t* w);
void put_key(const numref::gaussws::NoiseKey& k, std::uint32_t* w);

// ---- generation (§34.10) --------------------------------------------------------------------
void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out);
void generate_case(const GausswsParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in);
std::shared_ptr<const CaseSource> cases(const GausswsParamsPtr& p, std::uint64_t count, std::uint64_t seed);

// ---- vectors (§31.9) --------------------------------------------------------------------------
void generate_vectors(std::vector<VectorFileText>& out);

}  // namespace numref::conform::gaussws
