// numref — MoR tensor statistics: relative-error histograms with 0.5 % bins, fallback
// percentages, and exact tensor moments.                              spec §28
//
// MoR §4.1.3 collects one count per tensor per step: the tensor's mean relative error falls
// into one 0.5 % bin (the last bin collects 5.5 % and above); a heatmap shows, per tensor, the
// counts normalized over its steps. [MD] samples the mean, variance, skewness and kurtosis of
// the GEMM operands. Every bin membership and every moment here is decided exactly (integers,
// §22 sums) and rounded once for output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numref/metrics.hpp"
#include "numref/tensor.hpp"

namespace numref {

// §28.1 Bins of width w: bin i (0 <= i < bins) holds means in [i·w, (i+1)·w); the overflow
// bin `bins` holds means >= bins·w. Default: w = 0.5 % = 1/200, 11 bins, overflow >= 5.5 %.
struct HistogramSpec {
  Threshold width{1, 200};
  std::size_t bins = 11;
  // §28.2 MoR §4.1.3 "we reset the histogram every 6000 steps": with reset_every = N > 0 each
  // observation carries its training step s and counts in the row (name, window ⌊s / N⌋), one
  // histogram per tensor per N steps; 0 (default): one histogram per tensor over all steps.
  std::uint64_t reset_every = 0;
};
// §28.1 The bin of a mean relative error S · 2^-149 / n: min(bins, floor(S · den / (num · n · 2^149)))
// computed in integers; bin 0 for n = 0 (mean 0); nullopt for a non-finite sum (§21.3).
// std::invalid_argument for a zero width or zero bins.
std::optional<std::size_t> histogram_bin(const ErrorSum& s, const HistogramSpec& h = {});

// §28.2 One heatmap row: the observations of one tensor (same name) over steps.
struct HistogramRow {
  std::string name;
  std::optional<std::uint64_t> window;  // reset_every > 0: the window ⌊step / reset_every⌋
                                        // (steps [window · N, (window + 1) · N))
  std::vector<std::uint64_t> counts;    // bins + 1 entries (the last: overflow)
  std::uint64_t nonfinite = 0;          // observations whose error sum was not finite (no bin)
  std::uint64_t observations = 0;       // all observations of the tensor
  std::uint64_t fallbacks = 0;          // observations that fell back (e.g. to BF16)
};

// §28.2 Per-tensor histograms over a sequence of observations, rows in first-seen order.
class ErrorHistogram {
 public:
  explicit ErrorHistogram(HistogramSpec h = {});
  // One observation of tensor `name` at training step `step`. With spec().reset_every > 0 the
  // step is required (std::invalid_argument without one) and selects the row's window.
  void add(const std::string& name, const ErrorSum& s, bool fell_back, std::optional<std::uint64_t> step = {});
  const std::vector<HistogramRow>& rows() const { return rows_; }
  const HistogramSpec& spec() const { return h_; }
  // §28.3 totals over every row
  std::uint64_t observations() const;
  std::uint64_t fallbacks() const;
  // "[0%,0.5%)", "[0.5%,1%)", ..., ">=5.5%" (exact decimals of i·w in percent; a width whose
  // percentage is not a finite decimal is written as a fraction).
  std::string bin_label(std::size_t i) const;
  // "fc2", or with windows "fc2 steps [6000,12000)".
  std::string row_label(const HistogramRow& r) const;

 private:
  HistogramSpec h_;
  std::vector<HistogramRow> rows_;
};

// §28.3 100 · p / q rounded to `decimals` digits after the point (nearest, ties to even),
// decided in integers: percent_string(1, 8) = "12.50". q >= 1, 0 <= decimals <= 6.
std::string percent_string(std::uint64_t p, std::uint64_t q, int decimals = 2);

// §28.4 Population moments of the finite elements of a tensor (zeros included; NaN and ±Inf
// elements are excluded and counted). With μ = Σx/n and m_k = Σ(x − μ)^k / n (exact rationals,
// from the exact power sums Σx^k): mean μ, variance m2, skewness m3 / m2^(3/2) and kurtosis
// m4 / m2² (Pearson's; 3 for a normal distribution), each rounded once to binary32 (RN32; the
// skewness as the correctly rounded signed square root of m3² / m2³). Mean and variance are
// empty for n = 0; skewness and kurtosis also when m2 = 0.
struct Moments {
  std::uint64_t n = 0;
  std::uint64_t nonfinite = 0;
  std::optional<std::uint32_t> mean, variance, skewness, kurtosis;  // binary32 codes
};
Moments tensor_moments(const TensorView& x);

}  // namespace numref
