// numref — MoR relative-error metrics, exact and independent of the summation order.
//   spec §21 (per-element relative error), §22 (exact accumulation), §23 (mean, threshold),
//   §24 (block error sums, MoR Eq. 3; dynamic range, Eq. 4), §29 (backward error of a
//   quantized matmul, [MD] Eq. 3)
//
// What a GPU kernel has to mirror to reproduce every metric bit for bit is small and lives
// at the top of this header:
//
//   §21  e = RN32( RN32(|x - q|) / |x| )         float d = fabsf(__fsub_rn(x, q));
//                                                float e = __fdiv_rn(d, fabsf(x));
//        x the source element widened to binary32 (exact), q = Q(x) the fake-quant value
//        (§19.6, BF16 by default) widened to binary32, x != 0; IEEE binary32 with
//        round-to-nearest-even, no FMA contraction, no flush-to-zero of inputs or results.
//   §22  S += e · 2^149 as an integer              ExactSum::add(e): e's significand shifted
//        into a 320-bit (5 x 64) unsigned integer; integer addition is associative and
//        commutative, so every order, split and sharding of the sum gives the same S.
//   §23  mean = S · 2^-149 / n; decision S · den < num · n · 2^149 for a threshold num/den.
//
// The reference computes the two roundings of §21 with the integer rounding core (§4),
// never with host floats.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "numref/bignum.hpp"
#include "numref/convert.hpp"
#include "numref/exact.hpp"
#include "numref/partition.hpp"
#include "numref/quantize.hpp"
#include "numref/tensor.hpp"

namespace numref {

// ---- §21 per-element relative error -------------------------------------------------------

// §21.2 RN32(|a − b|) for finite binary32 codes a and b: the correctly rounded difference
// (one rounding of the exact a − b), then the sign cleared. +Inf (0x7F800000) when the
// difference overflows.
std::uint32_t f32_sub_abs(std::uint32_t a, std::uint32_t b);

// §21.2 The relative error of one element: e = RN32(RN32(|x − q|) / |x|), x a finite
// non-zero binary32 code, q a finite binary32 code. Returns a non-negative binary32 code:
// finite, or +Inf when d or the quotient overflows (§21.3 then treats it as non-finite).
std::uint32_t relative_error(std::uint32_t x, std::uint32_t q);

// ---- §22 exact, order-independent accumulation ---------------------------------------------

// §22.1 The exact sum of non-negative finite binary32 values. A value e = M · 2^E (M < 2^24)
// is the integer k = e · 2^149 < (2^24 − 1) · 2^253 < 2^277 in units of 2^-149 (binary32's
// smallest quantum); the sum S = Σ k is held exactly in 320 bits. §22.2: for up to 2^40 terms
// S < 2^40 · 2^277 = 2^317 < 2^320, so no carry ever leaves the top limb (2^43 terms would
// still fit). The integer S is the state: merging two sums is integer addition.
class ExactSum {
 public:
  static constexpr int kLimbs = 5;                                    // 320 bits
  static constexpr int kScale = 149;                                  // S is in units of 2^-149
  static constexpr std::uint64_t kMaxTerms = std::uint64_t{1} << 40;  // §22.2

  // Adds e (a binary32 code, sign bit clear, finite: e < 0x7F800000). The code's
  // significand M (with its implicit bit for a normal e) goes in at bit position
  // max(field, 1) − 1 — e.g. 1.0 = 0x3F800000: M = 2^23 at bit 126, k = 2^149.
  void add(std::uint32_t e) {
    const std::uint32_t field = e >> 23, frac = e & 0x7FFFFFu;
    const std::uint64_t m = field ? (frac | 0x800000u) : frac;
    add_shifted(m, field ? static_cast<int>(field) - 1 : 0);
  }
  // Adds `count` copies of e (count · M < 2^64 for count <= 2^40).
  void add_multiple(std::uint32_t e, std::uint64_t count);
  ExactSum& operator+=(const ExactSum& o);
  // §22.1 Exact comparison of two sums (<=>: the integers S).
  friend bool operator==(const ExactSum&, const ExactSum&) = default;
  int compare(const ExactSum& o) const;
  bool is_zero() const;
  const std::array<std::uint64_t, kLimbs>& limbs() const { return limb_; }
  // The integer S (the sum is S · 2^-149).
  BigUInt value() const { return BigUInt::from_limbs(limb_); }
  // The exact sum as a decimal and as a hex float (both exact; S · 2^-149 is dyadic).
  std::string decimal() const { return dyadic_decimal(value(), -kScale); }
  std::string hexfloat() const { return dyadic_hexfloat(value(), -kScale); }

 private:
  void add_shifted(std::uint64_t m, int pos) {
    const int w = pos >> 6, b = pos & 63;
    const std::uint64_t lo = m << b;
    const std::uint64_t hi = b ? (m >> (64 - b)) : 0;
    std::uint64_t before = limb_[w];
    limb_[w] = before + lo;
    std::uint64_t carry = (limb_[w] < before) ? 1u : 0u;
    int i = w + 1;                         // w <= 3 (pos <= 253), so i <= 4
    const std::uint64_t add = hi + carry;  // hi < 2^23: no wrap
    before = limb_[i];
    limb_[i] = before + add;
    carry = (limb_[i] < before) ? 1u : 0u;
    for (++i; carry && i < kLimbs; ++i) carry = (++limb_[i] == 0) ? 1u : 0u;
  }
  std::array<std::uint64_t, kLimbs> limb_{};
};

// §22.3 What a set of elements (a block, a region, a tensor) contributes to a metric: the
// exact sum S of the errors of its finite non-zero elements, their count n (Eq. 1), and the
// number of elements that make the metric undefined (§21.3). Merging is exact and
// associative, so any grouping of the elements gives the same ErrorSum.
struct ErrorSum {
  ExactSum sum;
  std::uint64_t n = 0;                // finite non-zero elements (Eq. 1)
  std::uint64_t nonfinite_input = 0;  // NaN / ±Inf elements x
  std::uint64_t nonfinite_quant = 0;  // finite x whose Q(x) or e is NaN / ±Inf
  std::uint64_t zeros = 0;            // ±0 elements (excluded from n and S)
  bool finite() const { return nonfinite_input == 0 && nonfinite_quant == 0; }
  ErrorSum& operator+=(const ErrorSum& o) {
    sum += o.sum;
    n += o.n;
    nonfinite_input += o.nonfinite_input;
    nonfinite_quant += o.nonfinite_quant;
    zeros += o.zeros;
    return *this;
  }
  friend bool operator==(const ErrorSum&, const ErrorSum&) = default;
};

// ---- §23 the mean and the threshold --------------------------------------------------------

// §23.2 A threshold t = num / den, an exact non-negative rational kept reduced (den >= 1).
// The default is MoR's 4.5 % = 9 / 200.
struct Threshold {
  std::uint64_t num = 9;
  std::uint64_t den = 200;
  // §23.2 Parses "0.045", ".045", "4.5%", "9/200", "0" (decimal digits with at most one
  // point and an optional trailing '%', or p/q with decimal p and q >= 1) exactly — never
  // through a binary floating-point value. Returns an error message naming the problem (empty
  // on success): negative, empty, malformed, or a numerator / denominator beyond 2^64 − 1.
  static std::string parse(std::string_view text, Threshold& out);
  std::string to_string() const;  // "9/200"
  friend bool operator==(const Threshold&, const Threshold&) = default;
};

// §23.1 The mean relative error RN32(S · 2^-149 / n) as a binary32 code: the exact quotient
// rounded once. +0 for n = 0 (the mean of no elements is defined as 0); the canonical NaN
// 0x7FC00000 when the sum is not finite (§21.3).
std::uint32_t mean_f32(const ErrorSum& s);
// §23.2 Eq. 2: the exact comparison mean < t, i.e. S · den < num · n · 2^149 in integers; for
// n = 0 the mean is 0 and the result is 0 < t. False when the sum is not finite (§21.3).
bool mean_below(const ErrorSum& s, const Threshold& t);

// ---- §24 block metrics ----------------------------------------------------------------------

// §24.2 The magnitude range of a set of elements: the largest and the smallest non-zero
// magnitude as binary32 codes (exact widening), the number of non-zero finite elements and of
// NaN / ±Inf elements.
struct MagnitudeRange {
  std::uint32_t max = 0, min = 0;  // binary32 codes; 0 when there is no non-zero finite element
  std::uint64_t nonzero = 0, nonfinite = 0;
};
MagnitudeRange magnitude_range(const TensorView& x, const BlockRange& r);
// §24.2 MoR Eq. 4 for a format t: max / min < max_finite(t) / 2^emin(t), decided exactly as
// max · 2^emin(t) < max_finite(t) · min (f8e5m2: max · 2^-14 < 57344 · min). False when the
// set holds a NaN / ±Inf element or no non-zero element.
bool fits_normal_range(const MagnitudeRange& m, const Format& t);

// §24.1 The error sums of one quantization of a tensor: per block of spec.partition, every
// element's §21 error with Q = the §19.6 fake-quant into `fake` (BF16 by default).
//
// Streaming: the constructor runs pass 1 (the amax of every block, §13) and the rule's
// preparation (GAM group mantissas, §17.1); each block is then evaluated from its own
// elements and its BlockScale. State: O(number of blocks) (amaxes, scales, cached block
// sums) plus, for sources of at most 16 bits, at most kMaxTables lookup tables of 2^bits
// entries (the (Q(x), e) of every source code under one block factor, filled lazily for the
// codes that occur: an element's Q and e depend only on its code and its block's factors).
class ErrorEvaluator {
 public:
  static constexpr std::size_t kMaxTables = 16;
  // The evaluator keeps a view of x: the tensor's data must outlive it.
  // Throws std::invalid_argument for a spec the Quantizer rejects, for stochastic rounding
  // (Q must be a function of x: §21.1), for a `fake` format that is not bf16 / f16 / f32, and
  // for a tensor of more than 2^40 elements (§22.2).
  ErrorEvaluator(const TensorView& x, const QuantizeSpec& spec, const Format& fake = format(FormatId::bf16),
                 bool memoize = true);

  const TensorView& tensor() const { return x_; }
  const QuantizeSpec& spec() const { return q_.spec(); }
  const Format& fake_format() const { return *fake_; }
  const Quantizer& quantizer() const { return q_; }
  const BlockGrid& grid() const { return q_.grid(); }
  const std::vector<Amax>& block_amax() const { return amax_; }
  const std::vector<BlockScale>& scales() const { return scales_; }
  ScaleMeta meta() const { return q_.meta(scales_); }

  // §24.1 The error sum of block b (computed once, then cached).
  const ErrorSum& block(std::size_t b);
  // §23 The sum over every block that lies inside `r` (r must be a union of whole blocks:
  // std::invalid_argument otherwise). Blocks not yet evaluated are evaluated grouped by
  // their factor, so each lookup table is built once.
  ErrorSum region(const BlockRange& r);
  ErrorSum total() { return region(BlockRange{0, x_.rows(), 0, x_.cols()}); }
  // The indices of the blocks inside `r` (a union of whole blocks; std::invalid_argument
  // otherwise), block-row-major.
  std::vector<std::size_t> blocks_in(const BlockRange& r) const;
  // §22 The error sums of `blocks` as `other` cached them: `other` evaluates the same tensor
  // (the same view), quantization and fake format, so its block sums are this evaluator's (exact
  // integers); a block `other` has not evaluated is left alone. So disjoint block ranges can be
  // evaluated in evaluators of their own, one per thread, and merged (tensor_mor's RangeRunner).
  // std::invalid_argument for an evaluator of another tensor shape or partition.
  void adopt(const ErrorEvaluator& other, std::span<const std::size_t> blocks);
  // An evaluator of the same tensor, quantization, amaxes and scales with no block evaluated yet
  // (its own caches and tables): one per thread, merged back with adopt().
  ErrorEvaluator fresh() const { return ErrorEvaluator(*this, Fresh{}); }
  // §19.6 The fake-quant codes (of fake_format()) of block b, written into `dst` (one entry per
  // element of the tensor, element order); other entries are left alone.
  void fake_block(std::size_t b, std::span<std::uint32_t> dst);

 private:
  struct Fresh {};
  ErrorEvaluator(const ErrorEvaluator& proto, Fresh);
  void init_work();  // the caches and conversion helpers every evaluator has of its own
  struct Entry {
    std::uint32_t fake;  // Q(x) as a code of fake_format()
    std::uint32_t err;   // e (binary32 code) or one of the markers below
  };
  static constexpr std::uint32_t kZero = 0xFFFFFFFFu, kNonfiniteInput = 0xFFFFFFFEu, kNonfiniteQuant = 0xFFFFFFFDu,
                                 kUnfilled = 0xFFFFFFFCu;
  using Key = std::tuple<bool, bool, std::uint64_t, int, bool, std::uint64_t, int, bool>;
  static Key key_of(const BlockScale& s);
  // (Q, e) of `m` source codes under block scale s: out[i] for codes[i].
  void evaluate_codes(std::span<const std::uint32_t> codes, const BlockScale& s, std::span<Entry> out);
  std::vector<Entry>* table_for(const BlockScale& s);
  ErrorSum evaluate_block(std::size_t b);
  template <class F>
  void for_block_entries(std::size_t b, F&& f);

  TensorView x_;
  Quantizer q_;
  const Format* fake_;
  bool memo_;
  std::vector<Amax> amax_;
  std::vector<BlockScale> scales_;
  std::vector<std::optional<ErrorSum>> cache_;
  // helper: a 1 x kChunk tensor of gathered codes quantized with a given BlockScale
  static constexpr std::size_t kChunk = 256;
  std::vector<std::uint8_t> chunk_bytes_;
  std::optional<Quantizer> chunk_q_;
  std::optional<Converter> widen_src_, widen_fake_;
  std::map<Key, std::vector<Entry>> tables_;
  std::vector<Key> lru_;
};

// ---- §29 backward error of a quantized matmul ([MD] Eq. 3) ----------------------------------

// §29 For C = L · R (L: M x K, R: K x N), per output element
//   BE_ij = RN32( |Σ_k L_ik R_kj − Σ_k Q(L)_ik Q(R)_kj| / Σ_k |L_ik| |R_kj| ),
// Q the §19.3 dequantized binary32 operands (or, with q_format, the §19.6 fake-quant in that
// format), every dot product exact (so the reduction order is irrelevant) and one rounding
// per element; BE_ij = 0 where the denominator is 0 (then both products are 0).
struct BackwardError {
  std::size_t rows = 0, cols = 0;
  std::vector<std::uint32_t> be;  // binary32 codes, row-major M x N
  std::uint32_t max = 0;          // the largest BE_ij
  ExactSum sum;                   // §22 exact sum of the BE_ij
  std::uint32_t mean = 0;         // RN32(sum / (M N))
};
// Throws std::invalid_argument for mismatched shapes (L.cols() != R.rows()), NaN / ±Inf in L
// or R, or a non-finite Q. lq quantizes L (per row: Partition::per_channel(lhs)), rq R.
BackwardError backward_error(const TensorView& L, const TensorView& R, const QuantizeSpec& lq, const QuantizeSpec& rq,
                             const Format* q_format = nullptr);

// §29.1 The backward error of a product D computed from L and R by any means (binary32 codes,
// M x N, row-major; e.g. a GEMM under an instruction profile, §40.6):
//   BE_ij = RN32( |Σ_k L_ik R_kj − D_ij| / Σ_k |L_ik| |R_kj| ),
// the numerator exact, one rounding. Throws std::invalid_argument for mismatched shapes, NaN /
// ±Inf in L, R or D, or a non-zero D_ij where every product of row i and column j is zero.
BackwardError backward_error_of(const TensorView& L, const TensorView& R, std::span<const std::uint32_t> D);

}  // namespace numref
