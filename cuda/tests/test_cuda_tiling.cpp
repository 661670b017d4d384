// numref CUDA tests — the index arithmetic of the block kernels: FastDiv (multiply-high
// division by a run-time constant) and the unit map of tiling.cuh.             spec §A.7
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "numref_arith/intmath.cuh"
#include "numref_cuda/quantize_plan.hpp"

namespace {

// §A.7 floor(n / d) and n mod d equal C++'s '/' and '%' (the expected values) for every divisor
// shape a plan produces (1 … 1024, powers of two up to 2^31, block extents, large odd values)
// and dividends at 0, around multiples of d, near 2^32, and seeded random.
TEST(CudaFastDiv, EqualsIntegerDivision) {
  std::vector<std::uint32_t> ds;
  for (std::uint32_t d = 1; d <= 1024; ++d) ds.push_back(d);
  for (int s = 11; s <= 31; ++s)
    ds.push_back(std::uint32_t{1} << s), ds.push_back((std::uint32_t{1} << s) - 1u),
        ds.push_back((std::uint32_t{1} << s) + 1u);
  std::mt19937 rng(11);
  for (int i = 0; i < 200; ++i) ds.push_back(static_cast<std::uint32_t>((rng() >> 1) | 1u));
  std::uint64_t bad = 0;
  for (std::uint32_t d : ds) {
    const numref_cuda::FastDiv f(d);
    std::vector<std::uint32_t> ns = {0u, 1u, d - 1u, d, d + 1u, 0xFFFFFFFFu, 0xFFFFFFFEu, 0x80000000u, 0x7FFFFFFFu};
    for (std::uint32_t k = 1; k < 50; ++k) {
      const std::uint64_t m = static_cast<std::uint64_t>(d) * (k * 2654435761u % 100000u);
      if (m < 0xFFFFFFFFu)
        ns.push_back(static_cast<std::uint32_t>(m)), ns.push_back(static_cast<std::uint32_t>(m) - 1u);
    }
    for (int i = 0; i < 200; ++i) ns.push_back(static_cast<std::uint32_t>(rng()));
    for (std::uint32_t n : ns) {
      if (f.div(n) != n / d || f.mod(n) != n % d) {
        if (bad++ < 5) ADD_FAILURE() << n << " / " << d << ": got " << f.div(n) << " want " << n / d;
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

// §A.7 The units of a plan cover every element exactly once and never cross a block row.
TEST(CudaTiling, UnitsCoverTheTensorOnce) {
  for (auto part : {numref::Partition::blocks(1, 32), numref::Partition::blocks(128, 128), numref::Partition::per_row(),
                    numref::Partition::per_col(), numref::Partition::tensor(), numref::Partition::blocks(24, 20)}) {
    for (std::size_t rows : {1u, 5u, 130u}) {
      for (std::size_t cols : {3u, 64u, 129u}) {
        numref::QuantizeSpec s;
        s.partition = part;
        const auto p =
            numref_cuda::plan_quantize(s, numref::FormatId::bf16, rows, cols, static_cast<std::ptrdiff_t>(cols), 1);
        std::vector<int> seen(rows * cols, 0);
        for (std::uint64_t u = 0; u < p.geom.n_units; ++u) {
          const auto t = numref_cuda::unit_of<8>(p.geom, u);
          ASSERT_LT(t.r0, t.r1);
          // §12.2 block row of the first and last row agree (or there is one block row)
          EXPECT_EQ((t.r0) / p.geom.br, (t.r1 - 1) / p.geom.br);
          for (std::uint32_t i = t.r0; i < t.r1; ++i)
            for (std::uint32_t j = t.c0; j < t.c0 + t.n; ++j) ++seen[i * cols + j];
        }
        for (int v : seen) ASSERT_EQ(v, 1) << numref::to_string(part) << " " << rows << "x" << cols;
      }
    }
  }
}

}  // namespace
