// numref CUDA tests — the MoR kernels' arithmetic (fused amax / GAM / quantize / relative error /
// exact error sum / decision), run on the CPU the way the grid runs it, against
// numref::tensor_mor and numref::subtensor_mor.                  spec §21 – §27, §A.4, §A.8
// Expected values come from the reference (reference/src/mor.cpp, metrics.cpp); the walks vary
// the simulated thread count and order, so the carry-save counters receive their pieces in
// different orders and groupings — the 320-bit sum must not change.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_tensors.hpp"
#include "numref/mor.hpp"
#include "numref_cuda/host_run.hpp"

namespace {

using numref::FormatId;
using numref::Partition;
namespace host = numref_cuda::host;

const host::Walk kWalks[] = {
    {256, host::Walk::Order::forward, 1}, {5, host::Walk::Order::reverse, 1}, {31, host::Walk::Order::shuffled, 7}};

void expect_sum(const numref_cuda::ErrorSumValue& got, const numref::ErrorSum& want) {
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got.s[i], want.sum.limbs()[static_cast<std::size_t>(i)]) << "limb " << i;
  EXPECT_EQ(got.n, want.n);
  EXPECT_EQ(got.zeros, want.zeros);
  EXPECT_EQ(got.nonfinite_input, want.nonfinite_input);
  EXPECT_EQ(got.nonfinite_quant, want.nonfinite_quant);
}
void expect_verdict(const numref_cuda::Verdict& got, const numref::Verdict& want) {
  EXPECT_EQ(got.accept, want.accept);
  EXPECT_EQ(static_cast<int>(got.reason), static_cast<int>(want.reason))
      << "got " << numref::to_string(static_cast<numref::Reason>(got.reason)) << " want "
      << numref::to_string(want.reason);
}

struct Input {
  std::string name;
  FormatId src;
  std::size_t rows, cols;
  numref_cuda_test::GenOptions opt;
};
std::vector<Input> inputs() {
  std::vector<Input> v;
  for (FormatId s : {FormatId::bf16, FormatId::f32}) {
    const std::string sn(numref::format(s).name);
    numref_cuda_test::GenOptions narrow;  // errors small: tensor MoR accepts
    narrow.spread = 4;
    v.push_back({sn + "_narrow_130x260", s, 130, 260, narrow});
    v.push_back({sn + "_wide_200x150", s, 200, 150, {}});  // 24 binades: E4M3 loses the small ones
    numref_cuda_test::GenOptions sp;
    sp.specials = true;
    v.push_back({sn + "_specials_40x72", s, 40, 72, sp});
    numref_cuda_test::GenOptions huge;
    huge.spread = 200;
    v.push_back({sn + "_huge_range_129x129", s, 129, 129, huge});
  }
  return v;
}

template <class F>
void with_input(const Input& in, std::uint64_t seed, F&& f) {
  if (in.src == FormatId::f32) {
    const auto d = numref_cuda_test::gen_f32(in.rows, in.cols, seed, in.opt);
    f(numref::TensorView(numref::format(in.src), d.data(), in.rows, in.cols));
  } else {
    const auto d = numref_cuda_test::gen_bf16(in.rows, in.cols, seed, in.opt);
    f(numref::TensorView(numref::format(in.src), d.data(), in.rows, in.cols));
  }
}

// §26 Tensor-level MoR for the three partition strategies (128x128 blocks, the tensor, one
// block per channel) and two thresholds: the decision, its reason, the exact error sum
// (all five limbs and the counts), the mean and the E4M3 scales / group mantissa.
TEST(CudaTensorMor, MatchesReference) {
  std::uint64_t seed = 50;
  int accepted = 0, rejected = 0;  // the inputs exercise both decisions
  for (const Input& in : inputs()) {
    for (Partition part :
         {Partition::blocks(128, 128), Partition::tensor(), Partition::per_row(), Partition::per_col()}) {
      for (numref::Threshold t : {numref::Threshold{9, 200}, numref::Threshold{1, 1000}, numref::Threshold{1, 5}}) {
        with_input(in, ++seed, [&](const numref::TensorView& x) {
          SCOPED_TRACE(in.name + " " + numref::to_string(part) + " t=" + t.to_string());
          numref::TensorMorSpec spec;
          spec.scaling = part;
          spec.threshold = t;
          const numref::TensorMorResult want = numref::tensor_mor(x, spec);
          (want.quantized ? accepted : rejected) += 1;
          for (const host::Walk& w : kWalks) {
            const host::TensorMorOut got = host::tensor_mor(x, spec, w);
            expect_sum(got.error, want.error);
            expect_verdict(got.verdict, want.verdict);
            EXPECT_EQ(got.quantized, want.quantized);
            EXPECT_EQ(got.mean, want.mean);
            EXPECT_EQ(got.scale.scales, want.scales.scales);
            EXPECT_EQ(got.scale.group_mantissa, want.scales.group_mantissa);
          }
        });
      }
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

// §27 Sub-tensor MoR, three-way and two-way, 128x128 and 32x32 selection blocks: per block the
// type, both verdicts, both exact error sums; the output tensor; the scales of both formats.
TEST(CudaSubtensorMor, MatchesReference) {
  std::uint64_t seed = 500;
  std::uint64_t types[3] = {0, 0, 0};  // the inputs reach every block type
  for (const Input& in : inputs()) {
    for (auto recipe : {numref::SubtensorRecipe::three_way, numref::SubtensorRecipe::two_way}) {
      for (Partition part : {Partition::blocks(128, 128), Partition::blocks(32, 32)}) {
        with_input(in, ++seed, [&](const numref::TensorView& x) {
          SCOPED_TRACE(in.name + " " + std::string(numref::to_string(recipe)) + " " + numref::to_string(part));
          numref::SubtensorMorSpec spec;
          spec.recipe = recipe;
          spec.blocks = part;
          const numref::SubtensorMorResult want = numref::subtensor_mor(x, spec);
          for (auto t : want.type) ++types[static_cast<int>(t)];
          for (const host::Walk& w : kWalks) {
            const host::SubtensorMorOut got = host::subtensor_mor(x, spec, w);
            ASSERT_EQ(got.type.size(), want.type.size());
            for (std::size_t b = 0; b < want.type.size(); ++b) {
              SCOPED_TRACE("block " + std::to_string(b));
              EXPECT_EQ(got.type[b], static_cast<std::uint8_t>(want.type[b]));
              expect_verdict(got.eq3[b], want.eq3[b]);
              expect_verdict(got.eq4[b], want.eq4[b]);
              expect_sum(got.e4m3_sum[b], want.e4m3_sum[b]);
              expect_sum(got.e5m2_sum[b], want.e5m2_sum[b]);
            }
            EXPECT_EQ(got.fake, want.fake);
            EXPECT_EQ(got.e4m3_scale.scales, want.e4m3_scales.scales);
            EXPECT_EQ(got.e5m2_scale.scales, want.e5m2_scales.scales);
          }
        });
      }
    }
  }
  EXPECT_GT(types[0], 0u);
  EXPECT_GT(types[1], 0u);
  EXPECT_GT(types[2], 0u);
}

// §22 The carry-save counters: a term in every position of the window and outside it, added in
// two different groupings, normalise to the same five limbs as numref::ExactSum.
TEST(CudaExactSum, CountersNormaliseToExactSum) {
  numref::ExactSum want;
  numref_cuda::ErrorSumState a{}, b{};
  numref_cuda::ErrorAcc acc_a, acc_b1, acc_b2;
  std::uint32_t k = 0;
  for (std::uint32_t field = 0; field < 255; ++field) {
    for (std::uint32_t frac : {0u, 1u, 0x7FFFFFu, 0x400000u}) {
      const std::uint32_t e = (field << 23) | frac;
      if (e == 0u) continue;
      want.add(e);
      auto pa = [&](int d, std::uint32_t v) { a.digit[d] += v; };
      auto pb = [&](int d, std::uint32_t v) { b.digit[d] += v; };
      acc_a.add(numref_cuda::ErrKind::value, e, pa);
      if (++k % 3 == 0)
        acc_b1.add(numref_cuda::ErrKind::value, e, pb);
      else
        acc_b2.add(numref_cuda::ErrKind::value, e, pb);
    }
  }
  auto fl = [](const numref_cuda::ErrorAcc& acc, numref_cuda::ErrorSumState& st) {
    for (int i = 0; i < numref_cuda::kWindowDigits; ++i) st.digit[numref_cuda::kWindowFirstDigit + i] += acc.w.piece(i);
    st.n += acc.c.n;
  };
  fl(acc_a, a);
  fl(acc_b2, b);
  fl(acc_b1, b);
  const auto va = numref_cuda::normalize(a), vb = numref_cuda::normalize(b);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(va.s[i], want.limbs()[static_cast<std::size_t>(i)]);
    EXPECT_EQ(vb.s[i], want.limbs()[static_cast<std::size_t>(i)]);
  }
}

}  // namespace
