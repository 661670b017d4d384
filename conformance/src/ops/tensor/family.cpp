// numref conformance — the tensor op families as Family objects, and the header of their
// vector files.                                              spec §12–§20, §31.6, §34.8
#include "numref/convert.hpp"
#include "tensor.hpp"

namespace numref::conform::tensor {

namespace {

constexpr std::string_view kClauses[] = {"§13-§18 §20.1", "§19.2 §19.4 §19.5 §20", "§19.3", "§19.6"};

class TensorFamily final : public Family {
 public:
  explicit TensorFamily(Kind k) : Family(kind_name(k), kClauses[static_cast<int>(k)], 1), k_(k) {}
  ParamsPtr parse_params(std::string_view text) const override { return parse(k_, text); }
  void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const override { tensor::plan(k_, req, out); }
  void generate_vectors(std::vector<VectorFileText>& out) const override { tensor::generate_vectors(k_, out); }

  // §31.6 every parameter but the shape, in canonical order; then the element policy and how
  // it derives from the profile.
  std::vector<HeaderLine> header(const Params& p) const override {
    const auto& t = static_cast<const TensorParams&>(p);
    std::vector<HeaderLine> out;
    const std::string text = spec_text(t.spec());
    for (auto w : split_ws(text)) {
      const auto eq = w.find('=');
      const std::string key(w.substr(0, eq));
      if (key == "round") break;  // the policy follows the parameter keys
      if (key != "shape") out.push_back({key, std::string(w.substr(eq + 1))});
    }
    if (has_policy(k_)) {
      const std::string ov = t.overrides();
      out.push_back({"policy", describe(t.spec().policy)});
      out.push_back({"derived",
                     "profile " + t.spec().profile + " (narrow, overflow=saturate)" + (ov.empty() ? "" : " with " + ov),
                     false});  // informative
    }
    return out;
  }

  ParamsPtr params_from_header(const VectorHeader& h, std::size_t rows, std::size_t cols) const override {
    std::string text = "shape=" + std::to_string(rows) + "x" + std::to_string(cols);
    // every header line that is not one of §31.2's own is a parameter key (parse() names an unknown one)
    for (const auto& [k, v] : h.fields)
      if (!is_file_key(k) && k != "policy" && k != "derived") kit::put(text, k, v);
    if (has_policy(k_)) text += " " + h.get("policy");
    return parse(k_, text);
  }

  std::unique_ptr<VectorFileReader> open_special(const VectorHeader& h, const std::string& kind,
                                                 const std::vector<std::string>& profiles) const override {
    if (kind == "divergence" && (k_ == Kind::quantize || k_ == Kind::fake_quant))
      return open_divergence(k_, h, profiles);
    return Family::open_special(h, kind, profiles);
  }

 private:
  Kind k_;
};

}  // namespace

const Family& family(Kind k) {
  static const TensorFamily f[] = {TensorFamily(Kind::scale), TensorFamily(Kind::quantize),
                                   TensorFamily(Kind::dequantize), TensorFamily(Kind::fake_quant)};
  return f[static_cast<int>(k)];
}

}  // namespace numref::conform::tensor

// Registration, called from the list CMake generates from the folders of src/ops.
void numref_conform_register_tensor(numref::conform::Registry& r) {
  for (auto k : numref::conform::tensor::kKinds) r.add(numref::conform::tensor::family(k));
}
