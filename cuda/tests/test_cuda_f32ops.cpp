// numref CUDA tests — the integer binary32 operations of f32.cuh against the reference's
// rounding core (numref::rn32 of exact_mul / exact_div, numref::f32_sub_abs).   spec §1.2, §A.6
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "numref/exact.hpp"
#include "numref/metrics.hpp"
#include "numref_arith/f32.cuh"

namespace {

std::string hex(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08x", v);
  return b;
}

// Operands that stress every path: zero-adjacent subnormals, the normal/subnormal border, max
// finite, powers of two and their neighbours, 448 / 57344 / 127 (q_max values), ties of the
// product and quotient (significands with few bits), plus seeded random finite codes.
std::vector<std::uint32_t> operands() {
  std::vector<std::uint32_t> v = {0x00000001u, 0x00000002u, 0x00000003u, 0x007FFFFFu, 0x00800000u, 0x00800001u,
                                  0x00400000u, 0x7F7FFFFFu, 0x7F000000u, 0x3F800000u, 0x3F800001u, 0x3F7FFFFFu,
                                  0x43E00000u, 0x47600000u, 0x42FE0000u, 0x42FF0000u, 0x40C00000u, 0x3FC00000u,
                                  0x3F400000u, 0x34000000u, 0x0B800000u, 0x73800000u, 0x3EAAAAABu, 0x40490FDBu};
  std::mt19937 rng(20261123);
  for (int i = 0; i < 3000; ++i) {
    std::uint32_t x = static_cast<std::uint32_t>(rng());
    if (i % 3 == 0) x &= 0x807F0000u | (x & 0x7F800000u);    // few significant bits: ties and exact results
    if ((x & 0x7F800000u) == 0x7F800000u) x &= 0xBFFFFFFFu;  // keep finite
    v.push_back(x & 0x7FFFFFFFu);
  }
  return v;
}

// §1.2 RN32(a · b) and RN32(a / b) equal the reference's one-rounding core for finite non-zero
// operands, both signs; every pair of the operand set (about 9 million pairs each).
TEST(CudaF32Ops, MulDivMatchReferenceCore) {
  const auto v = operands();
  std::uint64_t bad = 0;
  std::string msg;
  for (std::uint32_t a : v) {
    if (a == 0u) continue;
    const numref::Exact ea = numref::exact_f32(a);
    for (std::size_t j = 0; j < v.size(); j += (a & 3u) + 1) {
      const std::uint32_t b = v[j] | ((j & 1u) ? 0x80000000u : 0u);
      if ((b & 0x7FFFFFFFu) == 0u) continue;
      const numref::Exact eb = numref::exact_f32(b);
      const std::uint32_t em = numref::rn32_mul(ea, eb), gm = numref_cuda::f32_mul(a, b);
      const std::uint32_t ed = numref::rn32_div(ea, eb), gd = numref_cuda::f32_div(a, b);
      if (em != gm && bad++ < 8) msg += "\n mul " + hex(a) + " " + hex(b) + " got " + hex(gm) + " want " + hex(em);
      if (ed != gd && bad++ < 8) msg += "\n div " + hex(a) + " " + hex(b) + " got " + hex(gd) + " want " + hex(ed);
    }
  }
  EXPECT_EQ(bad, 0u) << msg;
}

// §21.2 |RN32(a − b)| equals numref::f32_sub_abs for every pair (zeros included), and the sign
// of a non-zero difference is the sign of a − b.
TEST(CudaF32Ops, SubMatchesReference) {
  auto v = operands();
  v.push_back(0u);
  std::uint64_t bad = 0;
  std::string msg;
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (std::size_t j = 0; j < v.size(); j += (i % 5) + 1) {
      const std::uint32_t a = v[i] | ((i & 1u) ? 0x80000000u : 0u), b = v[j] | ((j % 3 == 0) ? 0x80000000u : 0u);
      const std::uint32_t want = numref::f32_sub_abs(a, b), got = numref_cuda::f32_sub(a, b);
      bool ok = (got & 0x7FFFFFFFu) == want;
      if (ok && want != 0u) {
        // the sign of a − b: compare the magnitudes of a and −b (exact)
        const bool a_neg = (a >> 31) != 0u, nb_neg = (b >> 31) == 0u;
        const bool a_big = (a & 0x7FFFFFFFu) > (b & 0x7FFFFFFFu);
        const bool neg = a_neg == nb_neg ? a_neg : (a_big ? a_neg : nb_neg);
        ok = ((got >> 31) != 0u) == neg;
      }
      if (!ok && bad++ < 8) msg += "\n sub " + hex(a) + " " + hex(b) + " got " + hex(got) + " |want| " + hex(want);
    }
  }
  EXPECT_EQ(bad, 0u) << msg;
}

// IEEE special operands (hand-checked against IEEE 754 §6, §7): NaN in, NaN out; Inf · 0 and
// 0 / 0, Inf / Inf, Inf − Inf are NaN; x / 0 = ±Inf; overflow to Inf; x − x = +0.
TEST(CudaF32Ops, SpecialOperands) {
  using namespace numref_cuda;
  EXPECT_EQ(f32_mul(0x7F800000u, 0u), kF32NaN);
  EXPECT_EQ(f32_mul(0xFF800000u, 0x3F800000u), 0xFF800000u);
  EXPECT_EQ(f32_mul(0x7F7FFFFFu, 0x40000000u), kF32Inf);      // 2 · FLT_MAX overflows
  EXPECT_EQ(f32_mul(0x80000000u, 0x3F800000u), 0x80000000u);  // −0 · 1 = −0
  EXPECT_EQ(f32_mul(0x00000001u, 0x3F000000u), 0u);           // 2^-150: a tie, to even (0)
  EXPECT_EQ(f32_mul(0x00000003u, 0x3F000000u), 0x00000002u);  // 1.5 · 2^-149: tie to even (2)
  EXPECT_EQ(f32_div(0u, 0u), kF32NaN);
  EXPECT_EQ(f32_div(0x3F800000u, 0u), kF32Inf);
  EXPECT_EQ(f32_div(0x3F800000u, 0x80000000u), 0xFF800000u);
  EXPECT_EQ(f32_div(0x7F800000u, 0x7F800000u), kF32NaN);
  EXPECT_EQ(f32_div(0x3F800000u, 0x7F800000u), 0u);
  EXPECT_EQ(f32_div(0x43E00000u, 0x00000001u), kF32Inf);      // 448 / 2^-149 overflows
  EXPECT_EQ(f32_div_sat(0x43E00000u, 0x00000001u), kF32Max);  // §14.1 clamp
  EXPECT_EQ(f32_sub(0x7F800000u, 0x7F800000u), kF32NaN);
  EXPECT_EQ(f32_sub(0x3F800000u, 0x3F800000u), 0u);
  EXPECT_EQ(f32_sub(0x80000000u, 0u), 0x80000000u);  // −0 − +0 = −0
  EXPECT_EQ(f32_sub(0x7FC00001u, 0u), kF32NaN);
  EXPECT_EQ(f32_sub(0x3F800000u, 0x33800000u), 0x3F7FFFFFu);  // 1 − 2^-24: exact
  EXPECT_EQ(f32_sub(0x3F800000u, 0x33000000u), 0x3F800000u);  // 1 − 2^-25: a tie, to even (1)
  EXPECT_EQ(f32_sub(0x3F800000u, 0x33000001u), 0x3F7FFFFFu);  // just past the tie
}

}  // namespace
