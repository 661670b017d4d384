// numref backend "cpu-fast" — optimized block scaling and quantization.   spec §12–§20
//
// Independent of the reference's scale and quantize code: it reads the format table and
// the knobs, computes amax with integer maxima over the binary32 bit patterns, the scales
// with bit arithmetic (E8M0 exponents, GAM mantissas, power-of-two floors) and single
// IEEE binary32 operations where the spec defines a binary32 result (RN32(q_max / amax),
// RN32(x * S), RN32(v / S): a correctly rounded division or product in round-to-nearest-even,
// which the host's SSE/AVX unit delivers in its default mode — no FMA contraction,
// -ffp-contract=off), and converts elements with its own FastCast lanes. Every loop is a
// straight pass over one row segment of a block (vectorised; NaN lanes by select masks).
// The exact one-rounding application (`fused`) is supported for integer elements: the
// product x * S is exact in binary64 (24 + 24 bits) and a quotient x / D rounded to
// binary64 cannot cross or land on an integer or a half-integer boundary of a result below
// 2^8 (the exact quotient's distance to such a point is at least 2^-26, binary64's error
// below 2^-44), so rounding the binary64 value to an integer is the exact rounding.
// The rule is read through numref::kScaleRules: the engine computes by the row's kind (and MX
// exponent rule), so any rule of a kind it implements works; it implements every kind but
// nvfp4. Not supported (answered "no"): kind nvfp4, `fused` for floating-point elements and
// `fused` with stochastic rounding; GAM block code 00 as dequantize input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fast_cast.hpp"
#include "numref/scale.hpp"

namespace numref::cpu_fast {

// One tensor operation (the fields of numref_tensor_op, resolved).
struct QuantOp {
  const Format* src = nullptr;
  const Format* elem = nullptr;
  const Format* out = nullptr;  // fake-quant output
  ScaleRule rule = ScaleRule::amax;
  std::size_t rows = 0, cols = 0;
  std::ptrdiff_t rs = 0, cs = 0;               // strides of x in elements
  std::size_t br = 0, bc = 0, gr = 0, gc = 0;  // effective block and group extents
  bool nan_ignore = false, inf_ignore = false;
  bool fused = false;
  bool reciprocal = false;
  Policy policy, wide;
  std::uint32_t q_max = 0;  // binary32 code
  RecipeKnobs recipe;       // §19.8 (unsupported() declines every knob other than numref's rule)
};

class FastQuant {
 public:
  // "" when the operation is supported, else the reason.
  static std::string unsupported(const QuantOp& op);
  explicit FastQuant(const QuantOp& op);  // precondition: unsupported(op) is ""

  void scale(const void* x, std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm) const;
  void quantize(const void* x, const std::uint32_t* r, std::uint8_t* codes, std::uint32_t* scales,
                std::uint32_t* gm) const;
  // Returns false (with `err`) for metadata it does not take (GAM code 00).
  bool dequantize(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm, std::uint32_t* out,
                  std::string& err) const;
  void fake_quant(const void* x, const std::uint32_t* r, std::uint32_t* out) const;

  std::size_t blocks() const { return nbr_ * nbc_; }
  std::size_t groups() const { return ngr_ * ngc_; }

 private:
  // Per block: the binary32 factor and how it is applied.
  struct BlockFactor {
    float f = 1.0f;
    bool divide = false;
    bool poisoned = false;
  };
  const std::uint32_t* widen(const void* x, std::vector<std::uint32_t>& buf) const;
  void amaxes(const std::uint32_t* f, std::uint32_t* amax) const;
  void scales_of(const std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm,
                 std::vector<BlockFactor>& fac) const;
  void codes_of(const std::uint32_t* f, const std::uint32_t* r, const std::vector<BlockFactor>& fac,
                std::uint8_t* codes) const;

  QuantOp op_;
  std::size_t nbr_, nbc_, ngr_, ngc_;
  FastCast to_elem_;                                             // binary32 -> element, the element policy
  std::shared_ptr<const std::vector<std::uint32_t>> widen_lut_;  // source code -> binary32 (<= 16-bit sources)
  std::vector<std::uint32_t> elem_f32_;                          // element code -> binary32, the wide policy (§19.3)
  std::optional<FastCast> to_out_;                               // binary32 -> fake-quant output, the wide policy
  float qmax_;
  int emax_ = 0;            // E(q_max)
  std::uint32_t qsig_ = 0;  // q_max's 24-bit significand
  float inv_qmax_ = 0;      // RN32(1 / q_max) (mx-rceil-f32)
};

}  // namespace numref::cpu_fast
