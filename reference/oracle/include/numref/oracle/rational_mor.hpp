// numref oracle — the MoR metrics, selections and statistics recomputed with exact rationals.
//                                                                 spec §21 – §29
//
// Independent of numref_reference (no function of it is called). Q(x) — the fake-quant of
// §19.6 — comes from the rational quantize oracle (rational_quantize.hpp); everything after it
// is computed here from the definitions with Boost cpp_rational: the two roundings of §21 by
// the rational RN32, sums as exact rationals (no fixed-point accumulator), the mean as the
// rational sum / n rounded once, comparisons of rationals, moments from the central sums
// Σ(x − μ)^k with the rational μ, square roots located by bisection over binary32 codes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "numref/oracle/rational_quantize.hpp"
#include "numref/oracle/rational_round.hpp"

namespace numref::oracle::rm {

using rat::Rational;

// §21.3 What an element contributes.
enum class Kind : std::uint8_t { counted, zero, nonfinite_input, nonfinite_quant };

struct Sum {
  Rational sum = 0;
  std::uint64_t n = 0, nonfinite_input = 0, nonfinite_quant = 0, zeros = 0;
  bool finite() const { return nonfinite_input == 0 && nonfinite_quant == 0; }
  void add(const Sum& o) {
    sum += o.sum;
    n += o.n;
    nonfinite_input += o.nonfinite_input;
    nonfinite_quant += o.nonfinite_quant;
    zeros += o.zeros;
  }
};

// §21 / §24.1 every element's error under the quantization `s` (s.fake_format gives Q's format).
struct Errors {
  std::vector<Kind> kind;           // element order
  std::vector<std::uint32_t> e;     // binary32 code of e for counted elements (0 otherwise)
  std::vector<std::uint32_t> fake;  // Q(x), codes of s.fake_format (from rq::quantize)
  std::vector<Sum> block;           // per block of s's partition, block-row-major
  Sum total;
  rq::Out quant;  // the quantize oracle's full output (scales, mantissas)
};
Errors errors(const rq::Spec& s, std::span<const std::uint32_t> x);

// §23.1 RN32(sum / n): +0 for n = 0.
std::uint32_t mean_rn32(const Sum& s);
// §23.2 mean < t (n = 0: 0 < t); false when not finite.
bool mean_below(const Sum& s, const Rational& t);
// §28.1 the bin of the mean (width w, `bins` bins + the overflow bin); nullopt when not finite.
std::optional<std::size_t> bin(const Sum& s, const Rational& w, std::size_t bins);

// §26 tensor-level MoR: `s` is the E4M3 quantization (its partition = the scaling partition).
struct TensorDecision {
  bool quantized = false;
  Sum total;
  std::uint32_t mean = 0;  // canonical NaN when not finite
};
TensorDecision tensor_mor(const rq::Spec& s, std::span<const std::uint32_t> x, const Rational& threshold);

// §27 sub-tensor MoR: e4 and e5 share the partition (= B). type per block: 0 E4M3, 1 E5M2, 2 kept.
struct Subtensor {
  std::vector<int> type;
  std::vector<std::uint32_t> out;  // codes of e4.fake_format, element order
  std::vector<Sum> sum4, sum5;
};
Subtensor subtensor_mor(const rq::Spec& e4, const rq::Spec& e5, bool three_way, std::span<const std::uint32_t> x);

// §28.4 population moments of the finite elements.
struct Moments {
  std::uint64_t n = 0, nonfinite = 0;
  std::optional<std::uint32_t> mean, variance, skewness, kurtosis;
};
Moments moments(FormatId source, std::span<const std::uint32_t> x);
// RN32 of ±sqrt(r) (r >= 0) found by bisection over the binary32 codes.
std::uint32_t rn32_sqrt(const Rational& r, bool negative);

// §29 backward error: L (m x k) and R (k x n) codes of `source`, quantized by lq / rq
// (Q = the dequantized binary32 values). Row-major m x n binary32 codes.
std::vector<std::uint32_t> backward_error(const rq::Spec& lq, std::span<const std::uint32_t> l, const rq::Spec& rq_,
                                          std::span<const std::uint32_t> r);
// §29.1 BE of a computed product D (binary32 codes, M x N) against L (M x K, codes of lf) and R
// (K x N, codes of rf): exact rationals, one RN32 per element.
std::vector<std::uint32_t> backward_error_of(std::span<const std::uint32_t> l, FormatId lf,
                                             std::span<const std::uint32_t> r, FormatId rf, std::size_t M,
                                             std::size_t K, std::size_t N, std::span<const std::uint32_t> d);

}  // namespace numref::oracle::rm
