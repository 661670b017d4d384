// numref — 2-D tensor views over raw bit patterns.               spec §12.1
//
// A TensorView is rows x cols elements of one source format, read through a row stride
// and a column stride (in elements, so that a transpose is a view, not a copy). Element
// (i, j) is the code stored at data[i * row_stride + j * col_stride]; a code occupies 1,
// 2 or 4 bytes (formats of <= 8, <= 16, <= 32 bits; sub-byte codes one per byte, §2.4),
// native-endian; bits above the format's width are ignored, as by decode(). A 1-D tensor
// of n elements is the 1 x n view.
//
// Element order (§12.1): the row-major order of the VIEW, index i * cols + j. Every
// per-element stream of numref (quantized codes, dequantized values, stochastic-rounding
// random bits) is in this order; for a transposed view it is the row-major order of the
// transpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "numref/format.hpp"

namespace numref {

// §12.1 Storage size in bytes of one code of `f`: 1, 2 or 4.
constexpr std::size_t storage_bytes(const Format& f) { return f.bits <= 8 ? 1 : (f.bits <= 16 ? 2 : 4); }

// §12.1 Returns an empty string if `f` may be the source of a tensor view, else the reason:
// a source is a signed floating-point format with a zero whose every finite value is
// exactly a binary32 value (f32, bf16, f16 and the narrow floating-point formats).
std::string check_source_format(const Format& f);

class TensorView {
 public:
  // §12.1 A rows x cols view; row_stride / col_stride in elements (default: dense row-major).
  // Throws std::invalid_argument for a null pointer, a zero dimension (empty tensors are an
  // error, never silently skipped), a stride of 0 along a dimension of size > 1, or a source
  // format check_source_format() rejects.
  TensorView(const Format& f, const void* data, std::size_t rows, std::size_t cols);
  TensorView(const Format& f, const void* data, std::size_t rows, std::size_t cols, std::ptrdiff_t row_stride,
             std::ptrdiff_t col_stride);
  // §12.1 The 1 x n view of a vector.
  static TensorView vector(const Format& f, const void* data, std::size_t n) { return TensorView(f, data, 1, n); }

  const Format& format() const { return *f_; }
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t size() const { return rows_ * cols_; }
  std::ptrdiff_t row_stride() const { return rs_; }
  std::ptrdiff_t col_stride() const { return cs_; }
  const void* data() const { return data_; }

  // §12.1 The code of element (i, j) (no bounds check).
  std::uint32_t code(std::size_t i, std::size_t j) const {
    const std::ptrdiff_t off = static_cast<std::ptrdiff_t>(i) * rs_ + static_cast<std::ptrdiff_t>(j) * cs_;
    const unsigned char* p = static_cast<const unsigned char*>(data_) + off * static_cast<std::ptrdiff_t>(bytes_);
    switch (bytes_) {
      case 1: return *p;
      case 2: {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
      }
      default: {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
      }
    }
  }
  // §12.1 The transpose as a view (cols x rows, strides swapped); no data moves.
  TensorView transposed() const { return TensorView(*f_, data_, cols_, rows_, cs_, rs_); }

 private:
  const Format* f_;
  const void* data_;
  std::size_t rows_, cols_;
  std::ptrdiff_t rs_, cs_;
  std::size_t bytes_;
};

}  // namespace numref
