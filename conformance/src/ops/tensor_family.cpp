// numref conformance — the tensor op families as Family objects.      spec §12–§20, §33.8
#include "tensor.hpp"

namespace numref::conform::tensor {

namespace {

class TensorFamily final : public Family {
 public:
  explicit TensorFamily(Kind k) : k_(k) {}
  std::string_view name() const override { return kind_name(k_); }
  std::string_view clause() const override {
    switch (k_) {
      case Kind::scale: return "§13-§18 §20.1";
      case Kind::quantize: return "§19.2 §19.4 §19.5 §20";
      case Kind::dequantize: return "§19.3";
      case Kind::fake_quant: return "§19.6";
    }
    return "";
  }
  ParamsPtr parse_params(std::string_view text) const override { return parse(k_, text); }
  void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const override { tensor::plan(k_, req, out); }
  void generate_vectors(std::vector<VectorFileText>& out) const override { tensor::generate_vectors(k_, out); }
  std::unique_ptr<VectorFileReader> open_vectors(const VectorHeader& h,
                                                 const std::vector<std::string>& profiles) const override {
    return tensor::open_vectors(k_, h, profiles);
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
