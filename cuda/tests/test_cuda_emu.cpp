// numref CUDA tests — the host emulation behind the cuda-emu backend (host_run.hpp) and the
// coverage of the kernels (format_list.hpp, cast_kernels.hpp).        spec §A.3, §A.7, §A.11
//
// host::cast runs the cast kernel cast_kernels.hpp selects for every pair of the kernels and every
// rounding mode (rna, rup, rdn included, §A.2), and must equal numref::Converter on every source
// code of the 8- and 16-bit sources and on structured f32 codes, in three grid walks. The quantize
// plan accepts f16 sources and FP6 elements (§A.7), whose host run equals numref::quantize.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cuda_tensors.hpp"
#include "numref/convert.hpp"
#include "numref/quantize.hpp"
#include "numref_arith/format_list.hpp"
#include "numref_cuda/host_run.hpp"
#include "numref_cuda/policy_map.hpp"
#include "numref_cuda/quantize_plan.hpp"
#include "numref_cuda/support.hpp"

namespace {

using numref::FormatId;
using Walk = numref_cuda::host::Walk;

const Walk kWalks[] = {{256, Walk::Order::forward, 1}, {7, Walk::Order::reverse, 1}, {33, Walk::Order::shuffled, 9}};

std::vector<std::uint32_t> sources(FormatId f) {
  std::vector<std::uint32_t> v;
  const numref::Format& fm = numref::format(f);
  if (fm.bits <= 16) {
    for (std::uint32_t c = 0; c < (1u << fm.bits); ++c) v.push_back(c);  // every code
    return v;
  }
  for (std::uint32_t s : {0u, 0x80000000u})  // every f32 exponent, fractions at every split, ties
    for (std::uint32_t e = 0; e < 256; ++e)
      for (int d = 0; d < 23; ++d)
        for (std::uint32_t f0 : {0u, 1u << d, (1u << d) - 1u, (1u << d) + 1u, 0x7FFFFFu})
          v.push_back(s | (e << 23) | (f0 & 0x7FFFFFu));
  return v;
}

// §A.2 / §A.3 every cast pair of the kernels, every rounding mode, every walk, against the reference
TEST(CudaEmu, CastEveryPairEveryModeEqualsReference) {
  int pairs = 0;
  for (const auto& a : numref_cuda::kKernelFormats)
    for (const auto& b : numref_cuda::kKernelFormats) {
      if (!numref_cuda::is_narrow_cast(a.id, b.id) && !numref_cuda::is_wide_cast(a.id, b.id)) continue;
      ++pairs;
      const numref::Format& from = numref::format(a.id);
      const numref::Format& to = numref::format(b.id);
      const std::vector<std::uint32_t> in = sources(a.id);
      for (numref::Round m : {numref::Round::rne, numref::Round::rna, numref::Round::rtz, numref::Round::rup,
                              numref::Round::rdn, numref::Round::sr}) {
        for (bool sat : {false, true}) {
          numref::Policy p;
          p.round = m;
          if (m == numref::Round::sr) p.sr_bits = 3;
          p.overflow = sat ? numref::Overflow::saturate : numref::Overflow::nonsat;
          const numref_cuda::CastPolicy cp = numref_cuda::cast_policy(p, from, to);
          ASSERT_EQ(numref_cuda::cast_support(a.id, b.id, cp, true), "") << from.name << "->" << to.name;
          std::vector<std::uint32_t> r(in.size());
          for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint32_t>(i * 5u) & 7u;
          const numref::Converter ref(from, to, p);
          std::vector<std::uint32_t> want(in.size());
          for (std::size_t i = 0; i < in.size(); ++i) want[i] = ref(in[i], r[i]).bits;
          for (const Walk& w : kWalks) {
            std::vector<std::uint32_t> got(in.size(), 0xDEADBEEFu);
            ASSERT_TRUE(numref_cuda::host::cast(in.data(), a.id, got.data(), b.id, in.size(), cp, r.data(), w));
            for (std::size_t i = 0; i < in.size(); ++i)
              ASSERT_EQ(got[i], want[i]) << from.name << "->" << to.name << " " << numref::to_string(m)
                                         << (sat ? " saturate" : "") << " x=" << std::hex << in[i];
          }
        }
      }
    }
  EXPECT_EQ(pairs, 9);  // f32/bf16 -> e4m3/e5m2, f32 -> bf16, e4m3/e5m2 -> f32/bf16
}

// §4.3 an explicit random value with more than k bits fails the call (never masked)
TEST(CudaEmu, CastRejectsWideRandomValue) {
  numref::Policy p;
  p.round = numref::Round::sr;
  p.sr_bits = 4;
  const auto& f = numref::format(FormatId::f32);
  const auto& t = numref::format(FormatId::f8e4m3fn);
  const numref_cuda::CastPolicy cp = numref_cuda::cast_policy(p, f, t);
  const std::uint32_t in[3] = {0x3F800001u, 0x3F800001u, 0x3F800001u}, r[3] = {1u, 16u, 2u};  // 16 = 2^4
  std::uint32_t out[3];
  EXPECT_FALSE(numref_cuda::host::cast(in, f.id, out, t.id, 3, cp, r));
  // and a pair without a kernel is refused with cast_support's message
  EXPECT_THROW(numref_cuda::host::cast(in, FormatId::f8e4m3fn, out, FormatId::f8e5m2, 3, cp, r), std::invalid_argument);
}

// §A.7 f16 sources and FP6 elements: planned, and the host run equals numref::quantize.
TEST(CudaEmu, QuantizeF16SourcesAndFp6Elements) {
  const std::size_t rows = 5, cols = 70;
  const auto f32 = numref_cuda_test::gen_f32(rows, cols, 11, {false, true, 12});
  std::vector<std::uint16_t> h(f32.size());
  const numref::Converter to_f16(FormatId::f32, FormatId::f16, numref::Policy{});
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<std::uint16_t>(to_f16(f32[i]).bits);
  int checked = 0;
  for (FormatId e : {FormatId::f6e3m2fn, FormatId::f6e2m3fn, FormatId::f8e4m3fn, FormatId::f4e2m1fn})
    for (numref::ScaleRule rule : {numref::ScaleRule::mx_floor, numref::ScaleRule::amax, numref::ScaleRule::gam}) {
      const numref::QuantizeSpec spec = numref_cuda_test::spec_of(e, numref::Partition::blocks(1, 32), rule);
      const numref::TensorView v(numref::format(FormatId::f16), h.data(), rows, cols, static_cast<std::ptrdiff_t>(cols),
                                 1);
      std::vector<std::uint8_t> want(rows * cols);
      const numref::QuantizeResult ref = numref::quantize(v, spec, want);
      const numref_cuda::QuantizePlan p =
          numref_cuda::plan_quantize(spec, FormatId::f16, rows, cols, static_cast<std::ptrdiff_t>(cols), 1);
      for (const Walk& w : kWalks) {
        const auto got = numref_cuda::host::quantize(p, h.data(), {}, true, false, w);
        ASSERT_EQ(got.codes, want) << numref::format(e).name << " " << numref::to_string(rule);
        ASSERT_EQ(got.scale.scales, ref.meta.scales) << numref::format(e).name << " " << numref::to_string(rule);
      }
      ++checked;
    }
  EXPECT_EQ(checked, 12);
}

}  // namespace
