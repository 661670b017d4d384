// numref — tensor views and partitions.                          spec §12
#include "numref/partition.hpp"

#include <limits>
#include <stdexcept>

#include "numref/tensor.hpp"

namespace numref {

// ---- §12.1 tensor views -----------------------------------------------------------------

std::string check_source_format(const Format& f) {
  if (f.is_integer()) return std::string(f.name) + " is an integer format; a tensor source must be floating point";
  if (!f.is_signed || !f.has_zero) return std::string(f.name) + " is unsigned or has no zero; not a tensor source";
  if (f.has_single_nan())  // §2.2 / §2.5 its NaN is the −0 pattern, which the §13 scans do not read
    return std::string(f.name) + " is a fnuz or P3109 format; not a tensor source";
  // Every finite value must be a binary32 value: at most 23 fraction bits, and the
  // format's range inside binary32's (largest binade <= 127, quantum >= 2^-149).
  const int top = static_cast<int>(f.max_finite >> f.man_bits) - f.bias;  // E(max finite)
  if (f.man_bits > 23 || top > 127 || f.qmin() < -149)
    return std::string(f.name) + " has values that are not binary32 values; not a tensor source";
  return {};
}

TensorView::TensorView(const Format& f, const void* data, std::size_t rows, std::size_t cols)
    : TensorView(f, data, rows, cols, static_cast<std::ptrdiff_t>(cols), 1) {}

TensorView::TensorView(const Format& f, const void* data, std::size_t rows, std::size_t cols, std::ptrdiff_t row_stride,
                       std::ptrdiff_t col_stride)
    : f_(&f), data_(data), rows_(rows), cols_(cols), rs_(row_stride), cs_(col_stride), bytes_(storage_bytes(f)) {
  const std::string err = check_source_format(f);
  if (!err.empty()) throw std::invalid_argument("tensor view: " + err);
  if (rows == 0 || cols == 0)
    throw std::invalid_argument("tensor view: empty tensor (" + std::to_string(rows) + " x " + std::to_string(cols) +
                                "); a tensor needs at least one element");
  if (data == nullptr) throw std::invalid_argument("tensor view: null data pointer");
  if ((rows > 1 && row_stride == 0) || (cols > 1 && col_stride == 0))
    throw std::invalid_argument("tensor view: zero stride along a dimension of size > 1");
}

// ---- §12.2 block grids ------------------------------------------------------------------

BlockGrid::BlockGrid(std::size_t rows, std::size_t cols, Partition p) : rows_(rows), cols_(cols) {
  if (rows == 0 || cols == 0)
    throw std::invalid_argument("partition: empty tensor (" + std::to_string(rows) + " x " + std::to_string(cols) +
                                ")");
  br_ = (p.block_rows == 0 || p.block_rows > rows) ? rows : p.block_rows;
  bc_ = (p.block_cols == 0 || p.block_cols > cols) ? cols : p.block_cols;
  nbr_ = (rows + br_ - 1) / br_;
  nbc_ = (cols + bc_ - 1) / bc_;
}

BlockRange BlockGrid::range(std::size_t b) const {
  if (b >= count()) throw std::out_of_range("block index " + std::to_string(b) + " >= " + std::to_string(count()));
  const std::size_t I = b / nbc_, J = b % nbc_;
  BlockRange r;
  r.r0 = I * br_;
  r.r1 = std::min(rows_, r.r0 + br_);
  r.c0 = J * bc_;
  r.c1 = std::min(cols_, r.c0 + bc_);
  return r;
}

// ---- §12.4 groups -----------------------------------------------------------------------

std::string check_groups(const BlockGrid& g, const BlockGrid& b) {
  if (g.rows() != b.rows() || g.cols() != b.cols()) return "group and block partitions are for different shapes";
  if (g.block_rows() != g.rows() && g.block_rows() % b.block_rows() != 0)
    return "group rows (" + std::to_string(g.block_rows()) + ") are not a multiple of the block rows (" +
           std::to_string(b.block_rows()) + "): a block would straddle two groups";
  if (g.block_cols() != g.cols() && g.block_cols() % b.block_cols() != 0)
    return "group columns (" + std::to_string(g.block_cols()) + ") are not a multiple of the block columns (" +
           std::to_string(b.block_cols()) + "): a block would straddle two groups";
  return {};
}

// ---- §12.5 text form --------------------------------------------------------------------

namespace {
bool parse_size(const std::string& s, std::size_t& out) {
  if (s.empty() || s.size() > 12) return false;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  out = v;
  return true;
}
}  // namespace

std::string parse_partition(const std::string& text, Partition& out) {
  if (text == "tensor") {
    out = Partition::tensor();
    return {};
  }
  if (text == "rows" || text == "channel:rows") {
    out = Partition::per_row();
    return {};
  }
  if (text == "cols" || text == "channel:cols") {
    out = Partition::per_col();
    return {};
  }
  if (text.rfind("block:", 0) == 0) {
    const std::string dims = text.substr(6);
    const auto x = dims.find('x');
    // R or C "all": the whole extent of that dimension (§12.5; what to_string writes for 0)
    auto dim = [](const std::string& d, std::size_t& v) { return d == "all" ? (v = 0, true) : parse_size(d, v); };
    std::size_t r = 0, c = 0;
    if (x == std::string::npos || !dim(dims.substr(0, x), r) || !dim(dims.substr(x + 1), c))
      return "partition '" + text + "': expected block:RxC with decimal R and C (or all), e.g. block:128x128";
    if ((r == 0 && dims.substr(0, x) != "all") || (c == 0 && dims.substr(x + 1) != "all"))
      return "partition '" + text + "': block dimensions must be at least 1 (or all)";
    out = Partition{r, c};
    return {};
  }
  return "unknown partition '" + text + "' (expected tensor, rows, cols, channel:rows, channel:cols or block:RxC)";
}

std::string to_string(const Partition& p) {
  if (p.block_rows == 0 && p.block_cols == 0) return "tensor";
  if (p.block_rows == 1 && p.block_cols == 0) return "rows";
  if (p.block_rows == 0 && p.block_cols == 1) return "cols";
  auto dim = [](std::size_t v) { return v == 0 ? std::string("all") : std::to_string(v); };
  return "block:" + dim(p.block_rows) + "x" + dim(p.block_cols);
}

}  // namespace numref
