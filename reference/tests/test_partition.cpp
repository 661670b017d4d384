// numref tests — tensor views and partitions.                   spec §12
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <vector>

#include "numref/partition.hpp"
#include "numref/tensor.hpp"

namespace numref {
namespace {

const Format& F32 = format(FormatId::f32);

TEST(Partition, RaggedGridByHand) {  // §12.2
  // 5 x 7 in 2 x 3 blocks: nbr = ceil(5/2) = 3, nbc = ceil(7/3) = 3; block 8 = (2, 2) covers
  // row 4 and column 6 only (1 x 1); block 5 = (1, 2): rows 2-3, column 6 (2 x 1).
  const BlockGrid g(5, 7, Partition::blocks(2, 3));
  EXPECT_EQ(g.grid_rows(), 3u);
  EXPECT_EQ(g.grid_cols(), 3u);
  EXPECT_EQ(g.count(), 9u);
  const BlockRange b8 = g.range(8);
  EXPECT_EQ((std::vector<std::size_t>{b8.r0, b8.r1, b8.c0, b8.c1}), (std::vector<std::size_t>{4, 5, 6, 7}));
  const BlockRange b5 = g.range(5);
  EXPECT_EQ((std::vector<std::size_t>{b5.r0, b5.r1, b5.c0, b5.c1}), (std::vector<std::size_t>{2, 4, 6, 7}));
  EXPECT_EQ(g.block_of(4, 6), 8u);
  EXPECT_EQ(g.block_of(3, 2), 3u);
  EXPECT_THROW(g.range(9), std::out_of_range);
}

TEST(Partition, NamedPartitions) {  // §12.2, §12.3
  EXPECT_EQ(BlockGrid(4, 6, Partition::tensor()).count(), 1u);
  EXPECT_EQ(BlockGrid(4, 6, Partition::per_row()).count(), 4u);
  EXPECT_EQ(BlockGrid(4, 6, Partition::per_col()).count(), 6u);
  // per channel = along the dot-product dimension: rows of A (M x K), columns of B (K x N)
  EXPECT_EQ(Partition::per_channel(GemmOperand::lhs), Partition::per_row());
  EXPECT_EQ(Partition::per_channel(GemmOperand::rhs), Partition::per_col());
  EXPECT_EQ(Partition::sub_channel(GemmOperand::lhs, 32), Partition::blocks(1, 32));
  EXPECT_EQ(Partition::sub_channel(GemmOperand::rhs, 16), Partition::blocks(16, 1));
  EXPECT_EQ(Partition::blocks(1, 128).transposed(), Partition::blocks(128, 1));
  // a block larger than the tensor is the tensor
  EXPECT_EQ(BlockGrid(3, 3, Partition::blocks(128, 128)).count(), 1u);
  EXPECT_THROW(BlockGrid(0, 3, Partition::tensor()), std::invalid_argument);
  EXPECT_THROW(BlockGrid(3, 0, Partition::tensor()), std::invalid_argument);
}

// §12.2 every element lies in exactly one block; block_of agrees with the ranges; blocks
// are numbered block-row-major; ragged edges included.
RC_GTEST_PROP(Partition, CoversEveryElementExactlyOnce, ()) {
  const auto rows = static_cast<std::size_t>(*rc::gen::inRange(1, 70));
  const auto cols = static_cast<std::size_t>(*rc::gen::inRange(1, 70));
  const Partition p{static_cast<std::size_t>(*rc::gen::inRange(0, 80)),
                    static_cast<std::size_t>(*rc::gen::inRange(0, 80))};
  const BlockGrid g(rows, cols, p);
  std::vector<int> seen(rows * cols, 0);
  std::size_t total = 0;
  for (std::size_t b = 0; b < g.count(); ++b) {
    const BlockRange r = g.range(b);
    RC_ASSERT(r.r0 < r.r1 && r.c0 < r.c1);
    RC_ASSERT(r.rows() <= g.block_rows() && r.cols() <= g.block_cols());
    RC_ASSERT(b / g.grid_cols() == r.r0 / g.block_rows() && b % g.grid_cols() == r.c0 / g.block_cols());
    total += r.size();
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) {
        ++seen[i * cols + j];
        RC_ASSERT(g.block_of(i, j) == b);
      }
  }
  RC_ASSERT(total == rows * cols);
  for (int s : seen) RC_ASSERT(s == 1);
}

// §12.3 a partition applied to the transpose: block (I, J) of x^T under p holds exactly the
// transposed elements of block (J, I) of x under p.transposed().
RC_GTEST_PROP(Partition, TransposeCommutes, ()) {
  const auto rows = static_cast<std::size_t>(*rc::gen::inRange(1, 30));
  const auto cols = static_cast<std::size_t>(*rc::gen::inRange(1, 30));
  const Partition p{static_cast<std::size_t>(*rc::gen::inRange(0, 9)),
                    static_cast<std::size_t>(*rc::gen::inRange(0, 9))};
  const BlockGrid gt(cols, rows, p), g(rows, cols, p.transposed());
  RC_ASSERT(gt.grid_rows() == g.grid_cols() && gt.grid_cols() == g.grid_rows());
  for (std::size_t i = 0; i < cols; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      const std::size_t bt = gt.block_of(i, j);
      const std::size_t I = bt / gt.grid_cols(), J = bt % gt.grid_cols();
      RC_ASSERT(g.block_of(j, i) == J * g.grid_cols() + I);
    }
}

TEST(Partition, Groups) {  // §12.4
  const BlockGrid blocks(10, 10, Partition::blocks(2, 3));
  EXPECT_TRUE(check_groups(BlockGrid(10, 10, Partition::tensor()), blocks).empty());
  EXPECT_TRUE(check_groups(BlockGrid(10, 10, Partition::blocks(4, 0)), blocks).empty());
  EXPECT_TRUE(check_groups(BlockGrid(10, 10, Partition::blocks(2, 6)), blocks).empty());
  EXPECT_NE(check_groups(BlockGrid(10, 10, Partition::blocks(3, 3)), blocks).find("group rows"), std::string::npos);
  EXPECT_NE(check_groups(BlockGrid(10, 10, Partition::blocks(2, 4)), blocks).find("group columns"), std::string::npos);
}

TEST(Partition, TextForm) {  // §12.5
  Partition p;
  EXPECT_EQ(parse_partition("tensor", p), "");
  EXPECT_EQ(p, Partition::tensor());
  EXPECT_EQ(parse_partition("channel:rows", p), "");
  EXPECT_EQ(p, Partition::per_row());
  EXPECT_EQ(parse_partition("cols", p), "");
  EXPECT_EQ(p, Partition::per_col());
  EXPECT_EQ(parse_partition("block:128x64", p), "");
  EXPECT_EQ(p, Partition::blocks(128, 64));
  EXPECT_EQ(to_string(Partition::blocks(1, 32)), "block:1x32");
  EXPECT_EQ(to_string(Partition::per_col()), "cols");
  for (const char* bad : {"block:0x4", "block:4", "block:axb", "blocks:2x2", "", "block:4x"})
    EXPECT_FALSE(parse_partition(bad, p).empty()) << bad;
}

TEST(TensorView, StridesAndTranspose) {  // §12.1
  // a 2 x 3 f32 tensor stored with a row stride of 4 (one padding element per row)
  const std::vector<std::uint32_t> store = {1, 2, 3, 99, 4, 5, 6, 99};
  const TensorView v(F32, store.data(), 2, 3, 4, 1);
  EXPECT_EQ(v.code(1, 2), 6u);
  const TensorView t = v.transposed();
  EXPECT_EQ(t.rows(), 3u);
  EXPECT_EQ(t.cols(), 2u);
  EXPECT_EQ(t.code(2, 1), 6u);
  EXPECT_EQ(t.code(0, 1), 4u);
  const std::vector<std::uint16_t> half = {0x3C00, 0xC000};
  const TensorView h = TensorView::vector(format(FormatId::f16), half.data(), 2);
  EXPECT_EQ(h.rows(), 1u);
  EXPECT_EQ(h.code(0, 1), 0xC000u);
  // sources: floating point, signed, with a zero, binary32-representable
  EXPECT_TRUE(check_source_format(format(FormatId::bf16)).empty());
  EXPECT_TRUE(check_source_format(format(FormatId::f8e4m3fn)).empty());
  EXPECT_FALSE(check_source_format(format(FormatId::int8)).empty());
  EXPECT_FALSE(check_source_format(format(FormatId::f8e8m0fnu)).empty());
  EXPECT_THROW(TensorView(F32, nullptr, 1, 1), std::invalid_argument);
  EXPECT_THROW(TensorView(F32, store.data(), 2, 2, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace numref
