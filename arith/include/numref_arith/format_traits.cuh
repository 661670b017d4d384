// numref CUDA kernels — compile-time constants of a format, read from the descriptor table.  spec §2, §A.1
//
// FloatTraits<F> copies the columns of numref::kFormats (reference/include/numref/format.hpp,
// the only place a format is described) into integral constants that device code may use.
// The kernels never branch on a format's identity: every rule reads these constants.
#pragma once

#include <cstdint>

#include "numref/format.hpp"
#include "numref_arith/config.cuh"

namespace numref_cuda {

template <numref::FormatId F>
struct FloatTraits {
  static constexpr numref::FormatId id = F;
  static constexpr int bits = numref::format(F).bits;
  static constexpr int exp_bits = numref::format(F).exp_bits;
  static constexpr int man = numref::format(F).man_bits;  // fraction field width m
  static constexpr int bias = numref::format(F).bias;
  static constexpr bool is_signed = numref::format(F).is_signed;
  static constexpr bool has_zero = numref::format(F).has_zero;
  static constexpr bool has_subnormals = numref::format(F).has_subnormals;
  // §2.2 encoding families, as properties
  static constexpr bool has_inf = numref::format(F).has_inf();
  static constexpr bool has_nan = numref::format(F).has_nan();
  static constexpr bool nan_is_all_ones = numref::format(F).specials == numref::Specials::fn;
  static constexpr bool is_fnuz = numref::format(F).specials == numref::Specials::fnuz;  // §2.2, §A.12 item 9
  static constexpr bool is_integer = numref::format(F).is_integer();
  // §2.1 / §3.2 derived columns
  static constexpr std::uint32_t mask = numref::format(F).mask();
  static constexpr std::uint32_t sign_bit = numref::format(F).sign_bit();
  static constexpr std::uint32_t mag_mask = numref::format(F).mag_mask();
  static constexpr std::uint32_t man_mask = numref::format(F).man_mask();
  static constexpr std::uint32_t exp_all_ones = numref::format(F).exp_all_ones();
  static constexpr std::uint32_t first_special = numref::format(F).first_special_magnitude();  // §2.2
  static constexpr std::uint32_t inf_mag = first_special;  // meaningful when has_inf
  static constexpr std::uint32_t max_finite = numref::format(F).max_finite;
  static constexpr std::uint32_t canonical_nan = numref::format(F).canonical_nan;
  static constexpr int emin = numref::format(F).emin();
  static constexpr int qmin = numref::format(F).qmin();
  static_assert(!is_integer, "FloatTraits describes floating-point formats");
  static_assert(bits <= 32 && man <= 23, "codes and significands are held in 32 bits");
};

}  // namespace numref_cuda
