// numref — partitions of a 2-D tensor into blocks.                spec §12.2 – §12.5
//
// A partition is a block shape br x bc (0 = the whole extent of that dimension). It tiles
// the rows x cols view from the top-left corner; blocks on the bottom and right edges are
// ragged (smaller) when the shape does not divide. Blocks are numbered in block-row-major
// order: block (I, J), 0 <= I < nbr, 0 <= J < nbc, has index I * nbc + J and covers rows
// [I*br, min((I+1)*br, rows)) and columns [J*bc, min((J+1)*bc, cols)). Every scale array
// of numref is in this order (§19.4).
#pragma once

#include <cstddef>
#include <string>

namespace numref {

// §12.3 Which operand of a GEMM C = A · B a tensor is: per-channel scaling runs along
// the dot-product (contraction) dimension, so it is one scale per ROW of A (M x K) and one
// scale per COLUMN of B (K x N); sub-channel 1 x k blocks of A are k x 1 blocks of B.
enum class GemmOperand : unsigned char { lhs, rhs };

struct Partition {
  std::size_t block_rows = 0;  // 0: the whole row extent
  std::size_t block_cols = 0;  // 0: the whole column extent

  // §12.2 the named partitions
  static constexpr Partition tensor() { return {0, 0}; }
  static constexpr Partition per_row() { return {1, 0}; }
  static constexpr Partition per_col() { return {0, 1}; }
  static constexpr Partition blocks(std::size_t br, std::size_t bc) { return {br, bc}; }
  // §12.3 one block per channel along the dot-product dimension of `op`.
  static constexpr Partition per_channel(GemmOperand op) { return op == GemmOperand::lhs ? per_row() : per_col(); }
  // §12.3 sub-channel blocks of k elements along the dot-product dimension of `op`
  // (1 x k for the lhs, k x 1 for the rhs: 1x32 MX, 1x16 NVFP4, 1x128 DeepSeek-V3).
  static constexpr Partition sub_channel(GemmOperand op, std::size_t k) {
    return op == GemmOperand::lhs ? Partition{1, k} : Partition{k, 1};
  }
  // §12.3 the same blocks seen on the transposed tensor (br x bc becomes bc x br).
  constexpr Partition transposed() const { return {block_cols, block_rows}; }
  friend constexpr bool operator==(const Partition&, const Partition&) = default;
};

// §12.2 The rectangle of one block: rows [r0, r1), columns [c0, c1).
struct BlockRange {
  std::size_t r0, r1, c0, c1;
  std::size_t rows() const { return r1 - r0; }
  std::size_t cols() const { return c1 - c0; }
  std::size_t size() const { return rows() * cols(); }
};

// §12.2 A partition applied to a rows x cols shape.
class BlockGrid {
 public:
  // Throws std::invalid_argument for a zero dimension (empty tensor).
  BlockGrid(std::size_t rows, std::size_t cols, Partition p);
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t block_rows() const { return br_; }  // effective (0 resolved to the extent)
  std::size_t block_cols() const { return bc_; }
  std::size_t grid_rows() const { return nbr_; }  // nbr = ceil(rows / br)
  std::size_t grid_cols() const { return nbc_; }  // nbc = ceil(cols / bc)
  std::size_t count() const { return nbr_ * nbc_; }
  // §12.2 block index b = I * nbc + J
  BlockRange range(std::size_t b) const;
  // §12.2 the block that holds element (i, j)
  std::size_t block_of(std::size_t i, std::size_t j) const { return (i / br_) * nbc_ + (j / bc_); }

 private:
  std::size_t rows_, cols_, br_, bc_, nbr_, nbc_;
};

// §12.4 Groups of blocks (GAM, §17): a group partition G and a block partition B of the
// same shape are compatible iff every block lies inside one group, i.e. along each
// dimension the group extent is the whole dimension or a multiple of the block extent.
// Returns an empty string if compatible, else a message naming the dimension.
std::string check_groups(const BlockGrid& groups, const BlockGrid& blocks);

// §12.5 Text form used by the CLI and reports: "tensor", "rows", "cols", "block:RxC"
// (with R, C >= 1), and the aliases "channel:rows" (= rows), "channel:cols" (= cols).
// parse_partition returns an error message naming the problem, or an empty string.
std::string parse_partition(const std::string& text, Partition& out);
std::string to_string(const Partition& p);

}  // namespace numref
