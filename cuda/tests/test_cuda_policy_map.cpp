// numref CUDA tests — numref::Policy -> kernel knobs, and the errors that name what the
// kernels do not implement.                                                   spec §A.2
#include <gtest/gtest.h>

#include <iterator>
#include <stdexcept>
#include <string>

#include "numref/convert.hpp"
#include "numref/policy.hpp"
#include "numref_cuda/policy_map.hpp"

namespace {

using numref::FormatId;
const numref::Format& F(FormatId id) { return numref::format(id); }

// §10.1 cuda_satfinite, narrow: rne, saturate, inf_sat=max, nan=ones, nan_to_finite=max.
TEST(CudaPolicyMap, CudaSatfiniteNarrow) {
  const numref::Policy p = numref::profile(numref::ProfileId::cuda_satfinite).narrow;
  const numref_cuda::CastPolicy c = numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn));
  EXPECT_EQ(c.mode, numref_cuda::Mode::rne);
  EXPECT_TRUE(c.saturate);
  EXPECT_TRUE(c.inf_to_max);
  EXPECT_EQ(c.nan, numref_cuda::NanOut::ones);
  EXPECT_EQ(c.nan_to_finite, numref_cuda::NanToFinite::max);
  EXPECT_TRUE(numref_cuda::hardware_f8_path(c));
  EXPECT_FALSE(numref_cuda::hardware_bf16_path(c));
  const numref_cuda::E8m0Policy e = numref_cuda::e8m0_policy(p, F(FormatId::f32));
  EXPECT_EQ(e.mode, numref_cuda::E8m0Mode::floor);
  EXPECT_TRUE(e.saturate && e.inf_to_max && e.zero_to_min && e.negative_abs);
}

// cuda_nosat narrow: not saturating, so no hardware f8 path; its wide policy takes the bf16 one.
TEST(CudaPolicyMap, CudaNosatAndWide) {
  const numref::Profile& pr = numref::profile(numref::ProfileId::cuda_nosat);
  const numref_cuda::CastPolicy n = numref_cuda::cast_policy(pr.narrow, F(FormatId::f32), F(FormatId::f8e5m2));
  EXPECT_FALSE(n.saturate);
  EXPECT_FALSE(numref_cuda::hardware_f8_path(n));
  const numref_cuda::CastPolicy w = numref_cuda::cast_policy(pr.wide, F(FormatId::f32), F(FormatId::bf16));
  EXPECT_EQ(w.nan, numref_cuda::NanOut::ones);
  EXPECT_TRUE(numref_cuda::hardware_bf16_path(w));
}

// §7.1 follow: the e8m0 rounding follows `round` (rne -> even, rna -> tiesup, rup -> ceil).
TEST(CudaPolicyMap, E8m0Follow) {
  numref::Policy p;  // ocp: follow + rne
  EXPECT_EQ(numref_cuda::e8m0_policy(p, F(FormatId::f32)).mode, numref_cuda::E8m0Mode::even);
  p.round = numref::Round::rna;
  EXPECT_EQ(numref_cuda::e8m0_policy(p, F(FormatId::f32)).mode, numref_cuda::E8m0Mode::tiesup);
  p.round = numref::Round::rup;
  EXPECT_EQ(numref_cuda::e8m0_policy(p, F(FormatId::bf16)).mode, numref_cuda::E8m0Mode::ceil);
  p.e8m0_round = numref::E8m0Round::floor;  // an explicit e8m0_round wins
  EXPECT_EQ(numref_cuda::e8m0_policy(p, F(FormatId::bf16)).mode, numref_cuda::E8m0Mode::floor);
}

void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Knobs the kernels do not implement are errors that name them (§A.2).
TEST(CudaPolicyMap, Errors) {
  numref::Policy p;
  p.daz = true;
  expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn)); }, "daz=1");
  expect_error([&] { numref_cuda::e8m0_policy(p, F(FormatId::f32)); }, "daz=1");
  p = {};
  p.ftz = true;
  expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::bf16)); }, "ftz=1");
  EXPECT_NO_THROW(numref_cuda::e8m0_policy(p, F(FormatId::f32)));  // no zero: ftz is moot (§8.2)
  p = {};
  expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::int8)); }, "target");
  expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e8m0fnu)); }, "e8m0_policy");
  expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::int8), F(FormatId::f32)); }, "sources");
  p.round = numref::Round::sr;
  p.sr_bits = 0;
  expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn)); }, "sr_bits");
  p.sr_bits = 8;
  EXPECT_NO_THROW(numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn)));
  p.e8m0_round = numref::E8m0Round::follow;
  expect_error([&] { numref_cuda::e8m0_policy(p, F(FormatId::f32)); }, "stochastic");
}

// §A.2 nan=: the kernels' nan_code implements sign, canonical, ones and payload; every other
// word of the knob table (ones_sign, raw, all_ones, raw_plus, and any value added later) is
// refused with its name.
TEST(CudaPolicyMap, NanValuesOutsideTheKernelsRefusedByName) {
  int refused = 0;
  for (std::size_t i = 0; i < std::size(numref::knob_words::nan); ++i) {
    numref::Policy p;
    p.nan = static_cast<numref::NanOut>(i);
    const std::string word(numref::knob_words::nan[i]);
    const bool kernel = word == "sign" || word == "canonical" || word == "ones" || word == "payload";
    if (kernel) {
      EXPECT_NO_THROW(numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn))) << word;
    } else {
      expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn)); }, "nan=" + word);
      ++refused;
    }
  }
  EXPECT_EQ(refused, 4);  // ones_sign, raw, all_ones, raw_plus
}

// §A.2 the gfloat profiles' rules (§7.4 e8m0_low=nan, §7.3 negative=inf_abs, §6.7 inf_nan=nan) are
// refused by name where they can change a result, and accepted where they cannot.
TEST(CudaPolicyMap, GfloatKnobsRefusedByName) {
  numref::Policy p;
  p.e8m0_low = numref::E8m0Low::nan;
  expect_error([&] { numref_cuda::e8m0_policy(p, F(FormatId::f32)); }, "e8m0_low=nan");
  EXPECT_NO_THROW(numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn)));
  p = {};
  p.negative = numref::Negative::inf_abs;
  expect_error([&] { numref_cuda::e8m0_policy(p, F(FormatId::bf16)); }, "negative=inf_abs");
  EXPECT_NO_THROW(numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn)));  // signed target
  p = {};
  p.inf_nan = numref::InfNan::nan;
  expect_error([&] { numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn)); }, "inf_nan=nan");
  expect_error([&] { numref_cuda::e8m0_policy(p, F(FormatId::f32)); }, "inf_nan=nan");
  EXPECT_NO_THROW(numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e5m2)));  // has Inf
  for (const auto id : {numref::ProfileId::gfloat, numref::ProfileId::gfloat_sat})
    expect_error([&] { numref_cuda::e8m0_policy(numref::profile(id).narrow, F(FormatId::f32)); }, "is not implemented");
}

TEST(CudaPolicyMap, Describe) {
  const numref::Policy p = numref::profile(numref::ProfileId::cuda_satfinite).narrow;
  EXPECT_EQ(numref_cuda::describe(numref_cuda::cast_policy(p, F(FormatId::f32), F(FormatId::f8e4m3fn))),
            "round=rne overflow=saturate inf_sat=max nan=ones nan_to_finite=max");
  EXPECT_EQ(numref_cuda::describe(numref_cuda::e8m0_policy(p, F(FormatId::f32))),
            "e8m0_round=floor overflow=saturate inf_sat=max zero_to_nozero=min negative=abs");
}

}  // namespace
