// numref conformance — the mma op family (internal).          spec §36 – §40, §31.10, §32.9, §33.9, §34.12
//
//   mma   A (M x K), B (K x N), C (M x N), block scales -> D = A·B + C (M x N) and the §36.4 flags
// A case is ONE OPERATION (case-major words). Parameters (canonical text):
//   profile=P a=T b=T c=f32|f16 shape=MxN k=K [block=16|32 scale=f8e8m0fnu|ue4m3]
// The model is the profile's (§39); the vector-file case lines start with the shape M x N.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../kit.hpp"
#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/mma.hpp"

namespace numref::conform::mma {

inline constexpr std::string_view kName = "mma";
const Family& family();

// Word offsets of one case (case-major), read from the schema's columns. -1: absent.
struct MmaLayout {
  int a = 0, b = 0, c = 0, sa = -1, sb = -1, in = 0;
  int d = 0, flags = 0, out = 0;
};

// Schema (case-major; the vector-file columns, in order):  a b c [sa sb] | d flags
class MmaParams final : public Params {
 public:
  struct Spec {
    const MmaProfile* profile = nullptr;
    MmaType a = MmaType::f8e4m3fn, b = MmaType::f8e4m3fn, c = MmaType::f32;
    std::size_t m = 1, n = 1, k = 1;
    int block = 0;
    MmaType scale = MmaType::f8e8m0fnu;
  };
  explicit MmaParams(const Spec& s);  // throws std::invalid_argument naming the problem

  void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const override;
  std::string case_note(const std::uint32_t* in, const std::uint32_t* out) const override;
  // §32.2 / §34.3 the family's 1.9, or the minor version of a newer knob value (1.10: algo=fma)
  std::uint32_t abi_minor() const override;
  bool plugin_supported(const numref_backend& b) const override;
  bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out, bool optional,
                   std::string& error) const override;

  const Spec& spec() const { return s_; }
  const MmaLayout& layout() const { return L_; }
  const MmaSpec& mma_spec() const { return ms_; }
  const numref_mma_op& c_op() const { return cop_; }

 private:
  void build_schema();
  Spec s_;
  MmaSpec ms_;
  MmaLayout L_;
  numref_mma_op cop_{};
};
using MmaParamsPtr = std::shared_ptr<const MmaParams>;

MmaParamsPtr parse(std::string_view text);
std::string spec_text(const MmaParams::Spec& s);

// ---- generation (§34.12) --------------------------------------------------------------------
void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out);
void generate_case(const MmaParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in);

// ---- vectors (§31.10) -------------------------------------------------------------------------
void generate_vectors(std::vector<VectorFileText>& out);

}  // namespace numref::conform::mma
