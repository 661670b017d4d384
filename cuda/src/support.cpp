// numref CUDA kernels — what the cast kernels accept (host).                  spec §A.2, §A.3
#include "numref_cuda/support.hpp"

#include "numref_arith/format_list.hpp"

namespace numref_cuda {

std::string cast_support(numref::FormatId from, numref::FormatId to, const CastPolicy& p, bool has_random) {
  const std::string pair = std::string(numref::format(from).name) + " -> " + std::string(numref::format(to).name);
  if (!is_narrow_cast(from, to) && !is_wide_cast(from, to)) {
    const std::string wide = role_names(kWide, "/"), narrow = role_names(kNarrow, "/");
    return "no CUDA cast kernel for " + pair + " (kernels: " + wide + " -> " + narrow + ", " + wide +
           " to fewer fraction bits, " + narrow + " -> " + wide + "; " + wide + " -> f8e8m0fnu via cast_to_e8m0)";
  }
  const bool rounds = numref::format(from).man_bits > numref::format(to).man_bits;  // every mode has a kernel
  if (p.mode == Mode::sr && rounds) {
    if (p.sr_bits < 1 || p.sr_bits > 32)
      return "stochastic rounding needs sr_bits (k) in 1..32, got " + std::to_string(p.sr_bits);
    if (!has_random)
      return "stochastic rounding " + pair + " needs a random source (explicit values or a Philox stream)";
  }
  return {};
}

std::string cast_random_error(int k) {
  return "stochastic rounding: an explicit random value has more than k = " + std::to_string(k) +
         " bits (§4.3); the output is not valid";
}

std::string quantize_random_error(int k) { return "an explicit random value is >= 2^" + std::to_string(k) + " (§4.3)"; }

}  // namespace numref_cuda
