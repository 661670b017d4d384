// numref conformance — the MoR families as Family objects, and the header of their vector
// files.                                                               spec §26, §27, §31.7
#include "mor.hpp"

namespace numref::conform::mor {

namespace {

class MorFamily final : public Family {
 public:
  explicit MorFamily(Kind k) : Family(kind_name(k), k == Kind::tensor ? "§21-§23 §25 §26" : "§21-§25 §27", 2), k_(k) {}
  ParamsPtr parse_params(std::string_view text) const override { return parse(k_, text); }
  void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const override { mor::plan(k_, req, out); }
  void generate_vectors(std::vector<VectorFileText>& out) const override { mor::generate_vectors(k_, out); }

  // §31.7 every parameter but the shape, and the fixed policy (informative).
  std::vector<HeaderLine> header(const Params& p) const override {
    return kit::header_lines(p,
                             "f8e4m3fn / f8e5m2: ocp, overflow=saturate, rule gam (one group), amax_nan=ignore "
                             "amax_inf=ignore, apply=rn32, dequant=divide; Q(x) and kept blocks: bf16 (§26.1, §27.1)");
  }

  ParamsPtr params_from_header(const VectorHeader& h, std::size_t rows, std::size_t cols) const override {
    return parse(k_, kit::text_from_header(h, rows, cols));
  }

 private:
  Kind k_;
};

}  // namespace

const Family& family(Kind k) {
  static const MorFamily f[] = {MorFamily(Kind::tensor), MorFamily(Kind::sub)};
  return f[static_cast<int>(k)];
}

}  // namespace numref::conform::mor

// Registration, called from the list CMake generates from the folders of src/ops.
void numref_conform_register_mor(numref::conform::Registry& r) {
  r.add(numref::conform::mor::family(numref::conform::mor::Kind::tensor));
  r.add(numref::conform::mor::family(numref::conform::mor::Kind::sub));
}
