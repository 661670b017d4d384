// numref conformance — the mma family as a Family object, and the header of its vector files.
//                                                                        spec §36 – §39, §31.10
#include "mma.hpp"

#include "numref/conform/abi.hpp"

namespace numref::conform::mma {

namespace {

class MmaFamily final : public Family {
 public:
  MmaFamily() : Family(kName, "§36", kMmaMinor) {}
  ParamsPtr parse_params(std::string_view text) const override { return parse(text); }
  void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const override { mma::plan(req, out); }
  void generate_vectors(std::vector<VectorFileText>& out) const override { mma::generate_vectors(out); }

  // §31.10 every parameter but the shape, and the profile's model (informative).
  std::vector<HeaderLine> header(const Params& p) const override {
    const auto& m = static_cast<const MmaParams&>(p);
    return kit::header_lines(p, "model " + describe(m.mma_spec().model()) + " (§38.6); D = A·B + C per §36.1");
  }

  ParamsPtr params_from_header(const VectorHeader& h, std::size_t rows, std::size_t cols) const override {
    return parse(kit::text_from_header(h, rows, cols));
  }
};

}  // namespace

const Family& family() {
  static const MmaFamily f;
  return f;
}

}  // namespace numref::conform::mma

// Registration, called from the list CMake generates from the folders of src/ops.
void numref_conform_register_mma(numref::conform::Registry& r) { r.add(numref::conform::mma::family()); }
