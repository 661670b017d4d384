// numref — Gaussian weight sampling (GaussWS, Ahn & Yoo): pseudo-quantization noise.  spec §30
//
//   u (16 random bits) -> R in {-2..2}                          §30.2 (Eq. 9 - 10)
//   (seed, layer, step, block, element) -> u                     §30.3
//   s = RN32(max|w| * RN32(2^(1 - b_t)))                         §30.4
//   w_hat = RNE_bf16(w + R * s)                                  §30.5 (Eq. 3), §30.6
//   dL/db_t = RN32(-ln2 * s * sum(dL/dw_hat * R))                §30.7 (Eq. 4)
//   b_t = RN32(b_target + b_i * (b_init - b_target))             §30.8 (Eq. 11)
//   R packed 8 x 4-bit sign-magnitude per 32-bit word            §30.9
//
// Integer arithmetic only; the transcendental steps (exp2, ln 2) are bracketed by integer
// bounds and narrowed until both bounds round alike (a Ziv loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "numref/bignum.hpp"
#include "numref/format.hpp"

namespace numref::gaussws {

inline constexpr std::size_t kBlock = 32;             // b_l (Eq. 3)
inline constexpr std::uint32_t kNaN32 = 0x7FC00000u;  // §30.6 / §30.7 poisoned gradient and scale

// §30.2 The noise of one 16-bit word u.
constexpr int noise_from_bits(std::uint32_t u) {
  const bool a = ((u & 1u) | ((u >> 1) & 1u)) && ((u >> 2) & 0xFFu) == 0xFFu;
  const bool b = (((u >> 10) & 1u) | ((u >> 11) & 1u)) && (((u >> 12) & 1u) | ((u >> 13) & 1u)) && ((u >> 14) & 1u);
  const int mag = a ? 2 : (b ? 1 : 0);
  return ((u >> 15) & 1u) ? -mag : mag;
}

// §30.3 The counter-based generator.
struct NoiseKey {
  std::uint64_t seed = 0, layer = 0, step = 0;
};
std::uint64_t block_key(const NoiseKey& k, std::uint32_t block_row, std::uint32_t block_col);
// The 16-bit word of element index e (0 <= e < 1024) of the block keyed by `bk`.
std::uint32_t noise_word(std::uint64_t bk, std::uint32_t e);

// The matrix geometry (§30.1).
struct Shape {
  std::size_t m = 1, n = 1;
  std::size_t block_rows() const { return (m + kBlock - 1) / kBlock; }
  std::size_t block_cols() const { return (n + kBlock - 1) / kBlock; }
  std::size_t blocks() const { return block_rows() * block_cols(); }
  std::size_t size() const { return m * n; }
  std::size_t block_of(std::size_t i, std::size_t j) const { return (i / kBlock) * block_cols() + j / kBlock; }
};

// R for every element (row-major) from the generator, or from given 16-bit words.
std::vector<std::int8_t> noise(Shape s, const NoiseKey& k);
std::vector<std::int8_t> noise_from_words(std::span<const std::uint16_t> u);

// §30.9 Packing: ceil(size / 8) words. unpack throws std::invalid_argument on a magnitude > 2.
std::vector<std::uint32_t> pack(std::span<const std::int8_t> r);
std::vector<std::int8_t> unpack(std::span<const std::uint32_t> words, std::size_t count);

// §30.4 e = RN32(2^(1 - b_t)) for a finite binary32 b_t (code); std::invalid_argument otherwise.
std::uint32_t exp2_one_minus(std::uint32_t bt);
// §30.4 s from a = max|w| (a finite non-negative binary32 code) and b_t.
std::uint32_t block_scale(std::uint32_t amax, std::uint32_t bt);
// §30.8 Eq. 11, rounded once. std::invalid_argument for a non-finite operand.
std::uint32_t bitwidth(std::uint32_t bi, std::uint32_t binit, std::uint32_t btarget);

// A signed dyadic value (-1)^neg * mag * 2^exp (the exact v of §30.5).
struct Dyadic {
  bool neg = false;
  BigUInt mag;
  int exp = 0;
  std::string hex() const;  // "-0x1.8p+3"; "0x0p+0" for zero
};

enum class Sum : std::uint8_t { exact, f32 };  // §30.5 the variant sum=f32 rounds v to binary32 first

struct ForwardSpec {
  FormatId w_format = FormatId::f32;  // f32 or bf16
  FormatId out = FormatId::bf16;      // the cast's target (§30.5)
  Sum sum = Sum::exact;
};

struct Forward {
  std::vector<std::uint32_t> w_hat;  // codes of `out`, row-major
  std::vector<std::uint32_t> scale;  // s per block (kNaN32 for a poisoned block)
  std::vector<Dyadic> exact;         // v per element when requested (zero for poisoned blocks)
};

// §30.5 / §30.6. w: shape.size() codes of spec.w_format; bt: shape.blocks() binary32 codes;
// r: shape.size() noise values. std::invalid_argument on a size mismatch, a bad format or a
// non-finite b_t (the message names the block).
Forward forward(const ForwardSpec& spec, Shape shape, std::span<const std::uint32_t> w,
                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, bool want_exact = false);

// §30.7 dL/db_t per block (binary32 codes). g: codes of g_format (f32 or bf16), w's shape.
std::vector<std::uint32_t> grad_bt(FormatId w_format, Shape shape, std::span<const std::uint32_t> w,
                                   std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId g_format,
                                   std::span<const std::uint32_t> g);

// §30.2 The exact distribution: numerators over 65536 of R = -2, -1, 0, 1, 2 (by enumeration).
std::vector<std::uint32_t> noise_counts();

}  // namespace numref::gaussws
