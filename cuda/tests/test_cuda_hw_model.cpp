// numref CUDA tests — the hardware path, on a model of the instructions.       spec §A.5
//
// The PTX ISA specifies cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 as: round to nearest even; a
// NaN input gives "NaN in the destination format" (which NaN is not said); an input whose
// magnitude exceeds MAX_NORM (±Inf included) gives ±MAX_NORM. cvt.rn.bf16x2.f32: round to
// nearest even, IEEE overflow to ±Inf, NaN to a canonical NaN (again not pinned here).
// This test builds that model (the rounding of the exact value by the reference, every
// admissible NaN encoding in turn) and checks that hardware_lane() of cast.cuh — the lane
// fix-up the sm_89+ / sm_80+ kernels apply to the instruction's output — turns it into the
// portable path's result for every policy the kernels send down the hardware path. What
// it cannot check is that the silicon follows the ISA text: that is the device test's job.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "host_check.hpp"
#include "numref/convert.hpp"
#include "numref_arith/cast.cuh"
#include "numref_cuda/policy_map.hpp"

namespace {

using numref::FormatId;
using numref_cuda::FloatTraits;

// Every NaN code of a format (both signs).
std::vector<std::uint32_t> nan_codes(const numref::Format& f) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t c = 0; c <= f.mask(); ++c)
    if (numref::decode(c, f).cls == numref::Class::nan) v.push_back(c);
  return v;
}

std::vector<std::uint32_t> inputs(FormatId from) {
  std::vector<std::uint32_t> v;
  if (from == FormatId::bf16) {
    for (std::uint32_t c = 0; c < 65536u; ++c) v.push_back(c);
  } else {
    for (std::uint32_t s : {0u, 0x80000000u})
      for (std::uint32_t ef = 0; ef < 256; ++ef)
        for (std::uint32_t f : {0u, 1u, 0x80000u, 0x7FFFFu, 0x80001u, 0x100000u, 0x8000u, 0x7FFFFFu, 0x400000u})
          v.push_back(s | (ef << 23) | f);
  }
  return v;
}

template <FormatId SF, FormatId DF, bool Saturating>
void check_model() {
  using S = FloatTraits<SF>;
  using D = FloatTraits<DF>;
  const numref::Format& to = numref::format(DF);
  // The instruction's arithmetic on non-NaN inputs (rne; saturating: inf and overflow -> max).
  numref::Policy model;
  model.overflow = Saturating ? numref::Overflow::saturate : numref::Overflow::nonsat;
  model.inf_sat = numref::InfSat::max;
  const numref::Converter instr(SF, DF, model);
  // Every policy the kernels route to this instruction: rne with the instruction's overflow
  // behaviour, any inf_sat, any NaN output.
  for (auto inf : {numref::InfSat::max, numref::InfSat::keep})
    for (auto nan : {numref::NanOut::payload, numref::NanOut::sign, numref::NanOut::canonical, numref::NanOut::ones}) {
      numref::Policy p = model;
      p.inf_sat = inf;
      p.nan = nan;
      const numref_cuda::CastPolicy cp = numref_cuda::cast_policy(p, numref::format(SF), to);
      ASSERT_EQ(Saturating ? numref_cuda::hardware_f8_path(cp) : numref_cuda::hardware_bf16_path(cp), true);
      const numref_cuda::SpecialCodes<D> sp = numref_cuda::make_special_codes<D>(cp);
      int bad = 0;
      for (std::uint32_t x : inputs(SF)) {
        const std::uint32_t want = numref_cuda::convert<S, D>(x, cp);
        const bool is_nan = numref::decode(x, numref::format(SF)).cls == numref::Class::nan;
        const std::vector<std::uint32_t> outs = is_nan ? nan_codes(to) : std::vector<std::uint32_t>{instr(x).bits};
        for (std::uint32_t hw : outs) {
          const std::uint32_t got = numref_cuda::hardware_lane<S, D, Saturating>(x, hw, sp);
          if (got != want && bad++ < 5)
            ADD_FAILURE() << numref::format(SF).name << " -> " << to.name << " [" << numref::describe(p)
                          << "] x=" << numref_cuda_test::hex(x) << " instruction " << numref_cuda_test::hex(hw)
                          << " -> " << numref_cuda_test::hex(got) << ", portable " << numref_cuda_test::hex(want);
        }
      }
      ASSERT_EQ(bad, 0);
    }
}

TEST(CudaHardwareModel, SatfiniteE4m3) {
  check_model<FormatId::f32, FormatId::f8e4m3fn, true>();
  check_model<FormatId::bf16, FormatId::f8e4m3fn, true>();
}
TEST(CudaHardwareModel, SatfiniteE5m2) {
  check_model<FormatId::f32, FormatId::f8e5m2, true>();
  check_model<FormatId::bf16, FormatId::f8e5m2, true>();
}
TEST(CudaHardwareModel, Bf16x2) { check_model<FormatId::f32, FormatId::bf16, false>(); }

// Under the cuda_satfinite policy itself the model and the portable path already agree on
// every non-NaN input without any fix-up (the profile describes the instruction).
TEST(CudaHardwareModel, CudaSatfiniteIsTheInstruction) {
  numref::Policy model;
  model.overflow = numref::Overflow::saturate;
  const numref::Policy cuda = numref::profile(numref::ProfileId::cuda_satfinite).narrow;
  for (FormatId to : {FormatId::f8e4m3fn, FormatId::f8e5m2}) {
    const numref::Converter instr(FormatId::bf16, to, model), prof(FormatId::bf16, to, cuda);
    for (std::uint32_t x = 0; x < 65536u; ++x) {
      if (numref::decode(x, numref::format(FormatId::bf16)).cls == numref::Class::nan) continue;
      ASSERT_EQ(instr(x).bits, prof(x).bits) << "x=" << numref_cuda_test::hex(x);
    }
  }
}

}  // namespace
