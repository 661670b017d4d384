// numref CUDA tests — run-time dispatch to the per-element functions of cast.cuh.   spec §A.4
//
// element_fn(from, to) returns &convert<FloatTraits<from>, FloatTraits<to>> for every pair of
// the formats below, so a test can walk formats as data. Two copies of the table exist: one
// compiled by g++ (namespace numref_cuda_test::gxx, element_table_gxx.cpp) and one compiled
// by nvcc's host pass (namespace numref_cuda_test::nvcc, element_table_nvcc.cu, built when
// CUDA is enabled), so the tests check the nvcc-compiled host code as well.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "numref/format.hpp"
#include "numref_arith/cast.cuh"

namespace numref_cuda_test {

using ElementFn = std::uint32_t (*)(std::uint32_t, const numref_cuda::CastPolicy&, std::uint32_t);
using E8m0Fn = std::uint32_t (*)(std::uint32_t, const numref_cuda::E8m0Policy&);

// The formats cast.cuh's convert<S, D> handles on both sides (its static_asserts): every
// signed floating-point row of numref::kFormats with a zero and subnormals, except the fnuz
// and P3109 families (one NaN; refused, spec §A.12 item 9), in table order (f32, bf16, f16,
// f8e4m3fn, f8e5m2, f6e3m2fn, f6e2m3fn, f4e2m1fn, f8e4m3, f8e3m4 today).
constexpr bool is_element_format(const numref::Format& f) {
  return !f.is_integer() && f.is_signed && f.has_zero && f.has_subnormals && !f.has_single_nan();
}
inline constexpr std::size_t kElementCount = [] {
  std::size_t n = 0;
  for (const numref::Format& f : numref::kFormats) n += is_element_format(f) ? 1u : 0u;
  return n;
}();
inline constexpr std::array<numref::FormatId, kElementCount> kElementFormats = [] {
  std::array<numref::FormatId, kElementCount> a{};
  std::size_t i = 0;
  for (const numref::Format& f : numref::kFormats)
    if (is_element_format(f)) a[i++] = f.id;
  return a;
}();

namespace gxx {
ElementFn element_fn(numref::FormatId from, numref::FormatId to);  // nullptr: not in the table
E8m0Fn e8m0_fn(numref::FormatId from);                             // kWide (f32, bf16); else nullptr
}  // namespace gxx
namespace nvcc {
bool available();  // false when the project was built without CUDA (then the table is empty)
ElementFn element_fn(numref::FormatId from, numref::FormatId to);
E8m0Fn e8m0_fn(numref::FormatId from);
}  // namespace nvcc

}  // namespace numref_cuda_test
