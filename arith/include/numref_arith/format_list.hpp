// numref CUDA kernels — THE list of the formats the kernels are instantiated for.   spec §A.3, §A.7
//
// Every place that turns a run-time numref::FormatId into a kernel (or a host emulation of one)
// expands this list: the cast launchers (cuda/src/cast_f8.cu, cast_wide.cu, cast_e8m0.cu), their
// validation (api.cu), the quantize / dequantize / MoR launchers (cuda/src/quantize*.cu*,
// block_scale.cu, mor*.cu), their host emulation (host_run*.cpp) and the plan's validation
// (quantize_plan.cpp). A format's facts come from its row of numref::kFormats (FloatTraits), so
// adding a format of an existing encoding family to the kernels is one row of kKernelFormats
// (the quantize kernels' translation units deal the kElement rows out: quantize_shards.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "numref/format.hpp"
#include "numref_arith/format_traits.cuh"

namespace numref_cuda {

// What the kernels do with a format (a row may have several roles).
enum KernelRole : unsigned {
  kWide = 1u,     // read by the rounding casts (into kNarrow formats, and into a kWide format with
                  // fewer fraction bits: f32 -> bf16) and by cast_to_e8m0; written by the decode casts
  kNarrow = 2u,   // written by a rounding cast from every kWide format, decoded into every kWide one
  kElement = 4u,  // element format of the quantize / dequantize kernels
  kSource = 8u,   // source tensor of the quantize / fake-quant / scale / MoR kernels (2- or 4-byte
                  // codes, 16-byte chunks; widened exactly to binary32 by amax.cuh's widen_finite_mag)
};

struct KernelFormat {
  numref::FormatId id;
  unsigned roles;
};

inline constexpr KernelFormat kKernelFormats[] = {
    {numref::FormatId::f32, kWide | kSource},
    {numref::FormatId::bf16, kWide | kSource},
    {numref::FormatId::f16, kSource},
    {numref::FormatId::f8e4m3fn, kNarrow | kElement},
    {numref::FormatId::f8e5m2, kNarrow | kElement},
    {numref::FormatId::f6e3m2fn, kElement},
    {numref::FormatId::f6e2m3fn, kElement},
    {numref::FormatId::f4e2m1fn, kElement},
    {numref::FormatId::int8, kElement},
};

// What the roles require of a row of the descriptor table (the kernels' static_asserts say the
// same where they are instantiated): kWide, binary32's exponent (f32, or bf16 widened by a shift,
// §A.5) in 16 or 32 bits; kNarrow, a signed 8-bit floating-point format with a zero and
// subnormals (one byte per code); kElement, at most 8 bits; kSource, a signed floating-point
// format with a zero and subnormals in 2 or 4 bytes (the 16-byte chunk of tiling.cuh's load_chunk).
constexpr bool row_fits(const KernelFormat& k) {
  const numref::Format& f = numref::format(k.id);
  if ((k.roles & kWide) != 0u && (f.is_integer() || f.exp_bits != 8 || f.bias != 127 || (f.bits != 32 && f.bits != 16)))
    return false;
  if ((k.roles & kNarrow) != 0u && (f.is_integer() || f.bits != 8 || !f.is_signed || !f.has_zero || !f.has_subnormals))
    return false;
  if ((k.roles & kSource) != 0u &&
      (f.is_integer() || !f.is_signed || !f.has_zero || !f.has_subnormals || (f.bits != 32 && f.bits != 16)))
    return false;
  return (k.roles & kElement) == 0u || f.bits <= 8;
}
constexpr bool rows_fit() {
  for (const KernelFormat& k : kKernelFormats)
    if (!row_fits(k)) return false;
  return true;
}
static_assert(rows_fit(), "a row of kKernelFormats has a role its format cannot take");

constexpr bool has_role(numref::FormatId id, unsigned role) {
  for (const KernelFormat& k : kKernelFormats)
    if (k.id == id) return (k.roles & role) != 0u;
  return false;
}

// §A.3 The cast kernels: a "narrow" cast rounds a kWide format into a kNarrow one (cast_f8.cu);
// a "wide" one rounds a kWide format into a kWide one with fewer fraction bits, or decodes a
// kNarrow format into a kWide one (cast_wide.cu).
constexpr bool is_narrow_cast(numref::FormatId from, numref::FormatId to) {
  return has_role(from, kWide) && has_role(to, kNarrow);
}
constexpr bool is_wide_cast(numref::FormatId from, numref::FormatId to) {
  if (!has_role(to, kWide)) return false;
  return has_role(from, kNarrow) ||
         (has_role(from, kWide) && numref::format(from).man_bits > numref::format(to).man_bits);
}

// The names of the formats with `role`, e.g. "f32, bf16" (for messages).
inline std::string role_names(unsigned role, const char* sep = ", ") {
  std::string s;
  for (const KernelFormat& k : kKernelFormats) {
    if ((k.roles & role) == 0u) continue;
    if (!s.empty()) s += sep;
    s += numref::format(k.id).name;
  }
  return s;
}

namespace list_detail {
template <unsigned Role, std::size_t I, class Fn>
void visit_row(numref::FormatId id, Fn& fn, bool& found) {
  constexpr KernelFormat k = kKernelFormats[I];
  if constexpr ((k.roles & Role) != 0u) {
    if (!found && id == k.id) {
      found = true;
      fn.template operator()<k.id>();
    }
  }
}
template <unsigned Role, class Fn, std::size_t... I>
bool visit(numref::FormatId id, Fn& fn, std::index_sequence<I...>) {
  bool found = false;
  (visit_row<Role, I>(id, fn, found), ...);
  return found;
}
}  // namespace list_detail

// Calls fn.template operator()<F>() for the row F with a role in `Role` whose id is `id` (a
// run-time format to a compile-time instantiation); false when there is no such row.
template <unsigned Role, class Fn>
bool visit_format(numref::FormatId id, Fn&& fn) {
  return list_detail::visit<Role>(id, fn, std::make_index_sequence<std::size(kKernelFormats)>{});
}

// §A.7 The kSource format `id` as fn.template operator()<S, V>(): S its FloatTraits, V the codes
// in one 16-byte vector load. False when the kernels read no such source.
template <class Fn>
bool with_source(numref::FormatId id, Fn&& fn) {
  return visit_format<kSource>(id, [&]<numref::FormatId F>() {
    using S = FloatTraits<F>;
    fn.template operator()<S, 128 / S::bits>();
  });
}

// §19 / §20 The traits of an element format: FloatTraits, or Int8Elem (quantize.cuh) for the
// integer element.
struct Int8Elem;
template <numref::FormatId F>
using ElementTraits = std::conditional_t<numref::format(F).is_integer(), Int8Elem, FloatTraits<F>>;

// §A.7 The kElement format `id` as fn.template operator()<D>() (D: ElementTraits). False when
// the kernels have no such element.
template <class Fn>
bool with_element(numref::FormatId id, Fn&& fn) {
  return visit_format<kElement>(id, [&]<numref::FormatId F>() { fn.template operator()<ElementTraits<F>>(); });
}

}  // namespace numref_cuda
