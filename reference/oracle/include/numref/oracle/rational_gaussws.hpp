// numref oracle — GaussWS (spec §30) with rationals (Boost) and MPFR, independent of the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "numref/format.hpp"

namespace numref::oracle::gw {

// §30.2 R of a 16-bit word (the AND / OR network written out bit by bit).
int noise(std::uint32_t u);
// §30.4 RN32(2^(1 - b_t)) by MPFR's mpfr_exp2.
std::uint32_t exp2_one_minus(std::uint32_t bt);
// §30.4 s = RN32(amax * e), rationally.
std::uint32_t scale(std::uint32_t amax, std::uint32_t bt);
// §30.8 Eq. 11 rounded once.
std::uint32_t bitwidth(std::uint32_t bi, std::uint32_t binit, std::uint32_t btarget);

struct Forward {
  std::vector<std::uint32_t> w_hat;  // codes of `out`
  std::vector<std::uint32_t> scale;  // per block
};
// §30.5 / §30.6 (w: f32 or bf16 codes, row-major m x n; bt per 32 x 32 block).
Forward forward(FormatId w_format, std::size_t m, std::size_t n, std::span<const std::uint32_t> w,
                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId out, bool sum_f32);
// §30.7 dL/db_t per block.
std::vector<std::uint32_t> grad(FormatId w_format, std::size_t m, std::size_t n, std::span<const std::uint32_t> w,
                                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId g_format,
                                std::span<const std::uint32_t> g);

}  // namespace numref::oracle::gw
