// numref conformance — the GaussWS family as a Family object, and the header of its vector
// files.                                                                  spec §30, §31.9
#include "gaussws.hpp"

namespace numref::conform::gaussws {

namespace {

class GausswsFamily final : public Family {
 public:
  GausswsFamily() : Family(kName, "§30", 3) {}
  ParamsPtr parse_params(std::string_view text) const override { return parse(text); }
  void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const override { gaussws::plan(req, out); }
  void generate_vectors(std::vector<VectorFileText>& out) const override { gaussws::generate_vectors(out); }

  // §31.9 every parameter but the shape, and the fixed blocks and cast (informative).
  std::vector<HeaderLine> header(const Params& p) const override {
    return kit::header_lines(p,
                             "blocks 32x32 (ragged edges); s = RN32(max|w| * RN32(2^(1-b_t))); w_hat = RNE_bf16(w + "
                             "R s), overflow to Inf, gradual underflow; dL/db_t = RN32(-ln2 s sum(g R)) (§30.4-§30.7)");
  }

  ParamsPtr params_from_header(const VectorHeader& h, std::size_t rows, std::size_t cols) const override {
    return parse(kit::text_from_header(h, rows, cols));
  }
};

}  // namespace

const Family& family() {
  static const GausswsFamily f;
  return f;
}

}  // namespace numref::conform::gaussws

// Registration, called from the list CMake generates from the folders of src/ops.
void numref_conform_register_gaussws(numref::conform::Registry& r) { r.add(numref::conform::gaussws::family()); }
