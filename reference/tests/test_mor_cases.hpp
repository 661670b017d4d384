// numref tests — helpers shared by the MoR metric, selection and statistics tests:
// tensors held as codes and bytes, random MoR-like tensors, the oracle spec matching a
// QuantizeSpec, and exact sums as oracle rationals.               spec §21 – §29
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "numref/metrics.hpp"
#include "numref/mor.hpp"
#include "numref/oracle/rational_mor.hpp"
#include "test_support.hpp"

namespace numref::mortest {

using convtest::SplitMix64;
using oracle::rat::Rational;

inline const Format& F32 = format(FormatId::f32);
inline const Format& BF16 = format(FormatId::bf16);

// A tensor owned by the test: codes in element order and the bytes a TensorView reads.
struct Tensor {
  const Format* f = nullptr;
  std::size_t rows = 0, cols = 0;
  std::vector<std::uint32_t> codes;
  std::vector<std::uint8_t> bytes;
  Tensor() = default;
  Tensor(const Format& fmt, std::size_t r, std::size_t c, std::vector<std::uint32_t> v)
      : f(&fmt), rows(r), cols(c), codes(std::move(v)) {
    sync();
  }
  void sync() {
    const std::size_t b = storage_bytes(*f);
    bytes.assign(codes.size() * b, 0);
    for (std::size_t i = 0; i < codes.size(); ++i) std::memcpy(bytes.data() + i * b, &codes[i], b);
  }
  TensorView view() const { return TensorView(*f, bytes.data(), rows, cols); }
};

// The bf16 code of (-1)^s · sig · 2^exp, or nothing when it is not a bf16 value.
inline std::optional<std::uint32_t> bf16_code(bool s, std::uint64_t sig, int exp) {
  const auto c = convtest::f32_code(s, sig, exp);
  if (!c || (*c & 0xFFFFu)) return std::nullopt;
  return *c >> 16;
}

// A random source code with MoR-like statistics: sign random; magnitude 2^e · (1 + f) with e
// in [e_hi − spread, e_hi]; a zero with probability zero_permille / 1000; NaN / ±Inf with
// probability special_permille / 1000 (ieee-family sources).
inline std::uint32_t mor_code(const Format& f, SplitMix64& g, int e_hi, int spread, unsigned zero_permille,
                              unsigned special_permille) {
  const std::uint32_t sign = (g.next() & 1) ? f.sign_bit() : 0u;
  const std::uint64_t pick = g.next() % 1000;
  if (pick < special_permille) {
    if (g.next() & 1) return sign | (f.exp_all_ones() << f.man_bits);  // ±Inf
    return sign | (f.exp_all_ones() << f.man_bits) | 1u;               // NaN
  }
  if (pick < special_permille + zero_permille) return sign;
  const int e = e_hi - static_cast<int>(g.next() % static_cast<std::uint64_t>(spread + 1));
  const int field = std::max(1, std::min(e + f.bias, static_cast<int>(f.exp_all_ones()) - 1));
  return sign | (static_cast<std::uint32_t>(field) << f.man_bits) |
         (static_cast<std::uint32_t>(g.next()) & f.man_mask());
}

inline Tensor random_tensor(const Format& f, std::size_t rows, std::size_t cols, SplitMix64& g, int spread,
                            unsigned zero_permille = 30, unsigned special_permille = 0) {
  std::vector<std::uint32_t> v(rows * cols);
  const int e_hi = static_cast<int>(g.next() % 21) - 10;
  for (auto& c : v) c = mor_code(f, g, e_hi, spread, zero_permille, special_permille);
  return Tensor(f, rows, cols, std::move(v));
}
// random_tensor of a random shape, 1 .. max_rows x 1 .. max_cols, and spread 0 .. max_spread - 1.
inline Tensor random_shaped_tensor(const Format& f, SplitMix64& g, std::uint64_t max_rows, std::uint64_t max_cols,
                                   std::uint64_t max_spread, unsigned zero_permille = 30,
                                   unsigned special_permille = 0) {
  return random_tensor(f, 1 + g.next() % max_rows, 1 + g.next() % max_cols, g, static_cast<int>(g.next() % max_spread),
                       zero_permille, special_permille);
}

// The oracle's spec for the reference QuantizeSpec `q` applied to a rows x cols tensor of `src`.
inline oracle::rq::Spec oracle_spec(const QuantizeSpec& q, const Format& src, std::size_t rows, std::size_t cols,
                                    const Format& fake = format(FormatId::bf16)) {
  oracle::rq::Spec s;
  s.source = src.id;
  s.element = q.element->id;
  s.rows = rows;
  s.cols = cols;
  s.block_rows = q.partition.block_rows;
  s.block_cols = q.partition.block_cols;
  s.group_rows = q.group.block_rows;
  s.group_cols = q.group.block_cols;
  s.rule = q.rule;
  s.nan_ignore = q.amax.nan == AmaxNan::ignore;
  s.inf_ignore = q.amax.inf == AmaxInf::ignore;
  s.policy = q.policy;
  s.wide = q.wide;
  if (q.apply) s.fused = *q.apply == ScaleApply::fused;
  s.dequant_reciprocal = q.dequant == DequantOp::reciprocal;
  s.fake_format = fake.id;
  return s;
}

// The exact value S · 2^-149 of an ExactSum as an oracle rational.
inline Rational rational_of(const ExactSum& s) {
  oracle::rat::BigInt v = 0;
  for (int i = ExactSum::kLimbs; i-- > 0;) {
    v <<= 64;
    v += s.limbs()[static_cast<std::size_t>(i)];
  }
  return Rational(v) / oracle::rat::pow2(ExactSum::kScale);
}

// §22 An ErrorSum and the oracle's sum of the same f32 terms: add() puts a term in both.
struct SumWithOracle {
  ErrorSum s;
  oracle::rm::Sum o;
  void add(std::uint32_t e) {
    s.sum.add(e);
    o.sum += oracle::rat::decode(e, F32).v;
  }
};
// A positive normal f32 error with a random exponent field in [field_lo, field_lo + fields)
// and a random fraction.
inline std::uint32_t random_error(SplitMix64& g, std::uint64_t field_lo, std::uint64_t fields) {
  return static_cast<std::uint32_t>(((field_lo + g.next() % fields) << 23) | (g.next() & 0x7FFFFF));
}

inline std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08x", v);
  return b;
}

}  // namespace numref::mortest
