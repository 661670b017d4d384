// numref tests — quantize / dequantize / fake-quant vs the exact rational oracle.
//   spec §12 – §20
//
// Random tensors with mixed magnitudes (2^-40 … 2^40 within the source format's range,
// zeros of both signs, subnormals, ±Inf, NaN with random payloads), random shapes (ragged
// partitions included), every scale rule, every partition kind, every element format,
// random element policies (all rounding modes incl. both SR variants, saturating and not,
// every NaN knob), both NaN/Inf amax policies, rn32 and fused application, divide and
// reciprocal dequantization, transposed views. The reference (numref::quantize, dequantize,
// fake_quantize) and the oracle (numref::oracle::rq, exact rationals, no numref_reference
// code) must agree bit for bit on every code, scale, group mantissa, amax, dequantized value,
// fake-quant value and count (test_quantize_cases.hpp). sweep_quantize runs many more.
#include <gtest/gtest.h>

#include "test_quantize_cases.hpp"

namespace numref::qtest {
namespace {

void run_cases(std::uint64_t seed, std::uint64_t n, std::size_t max_rows, std::size_t max_cols) {
  int failures = 0;
  for (std::uint64_t t = 0; t < n && failures < 5; ++t) {
    const std::string report = run_one(seed, t, max_rows, max_cols);
    if (!report.empty()) {
      ADD_FAILURE() << report;
      ++failures;
    }
  }
}

TEST(QuantizeOracle, RandomTensorsEveryRuleAndPartition) {  // §12–§20
  run_cases(0x5CA1E5, 1500, 9, 24);
}

TEST(QuantizeOracle, TallAndWideShapes) {  // §12.2 ragged edges on long dimensions
  run_cases(0xB10C5, 150, 40, 3);
  run_cases(0xB10C6, 150, 2, 80);
}

TEST(QuantizeOracle, SingleElementBlocksAndTensors) {  // §12.2 one-element blocks
  run_cases(77, 450, 3, 3);
}

}  // namespace
}  // namespace numref::qtest
