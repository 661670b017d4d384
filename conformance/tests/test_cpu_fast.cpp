// cpu-fast against the reference, directly (no runner): every code of every <= 16-bit
// source into every format under every profile and every level-1 policy variant, and
// f32 sources on the lane path (seeded random codes, plus every special class).
// spec §11; the reference is the oracle here (it is itself checked against MPFR).
#include <gtest/gtest.h>

#include <vector>

#include "ops/cast/cast.hpp"
#include "fast_cast.hpp"
#include "numref/conform/util.hpp"
#include "numref/convert.hpp"

using namespace numref;

namespace {

// Compares FastCast with the reference on `xs` (and r values for SR); returns the number
// of mismatches and reports the first few.
int compare(const Format& from, const Format& to, const Policy& p, const std::vector<std::uint32_t>& xs,
            const std::vector<std::uint32_t>& rs) {
  if (cpu_fast::declined(from, to, p)) return 0;  // §A.1: the plugin answers "unsupported"
  const cpu_fast::FastCast fc(from, to, p);
  const Converter ref(from, to, p);
  std::vector<std::uint32_t> out(xs.size());
  std::vector<std::uint8_t> fl(xs.size());
  fc.run(xs.data(), rs.empty() ? nullptr : rs.data(), out.data(), fl.data(), xs.size());
  int bad = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Result e = ref(xs[i], rs.empty() ? 0u : rs[i]);
    if (e.bits != out[i] || e.flags != fl[i]) {
      if (++bad <= 3)
        ADD_FAILURE() << from.name << "->" << to.name << " [" << describe(p) << "] path " << fc.path()
                      << " x=" << std::hex << xs[i] << " r=" << (rs.empty() ? 0u : rs[i]) << ": got " << out[i] << "/"
                      << int(fl[i]) << " expected " << e.bits << "/" << int(e.flags);
    }
  }
  return bad;
}

}  // namespace

// Every <= 16-bit source, exhaustively, under the level-1 variants of every profile
// (SR variants with a few r per code; the flags are compared too).
TEST(CpuFast, MatchesTheReferenceOnEverySmallSourceCode) {
  for (const auto& from : kFormats) {
    if (from.bits > 16 || from.is_p3109_extra()) continue;  // §2.5 item 7: cpu-fast declines P3109
    std::vector<std::uint32_t> xs;
    for (std::uint32_t c = 0; c <= from.mask(); ++c) xs.push_back(c);
    for (const auto& to : kFormats)
      for (int pi = 0; pi < kProfileCount; ++pi) {  // every named profile, its pair rules applied (§10.2)
        if (to.is_p3109_extra()) continue;          // declined like the 12 binary8 members (compare() checks those)
        const Policy base = all_profiles()[pi].for_cast(from, to);
        const auto vars =
            conform::cast::variants(from.bits <= 8 ? conform::Level::l1 : conform::Level::l0, base, from, to);
        for (const auto& v : vars) {
          if (effective_round(to, v.policy) != Round::sr) {
            ASSERT_EQ(compare(from, to, v.policy, xs, {}), 0);
            continue;
          }
          const std::uint32_t rmask = v.policy.sr_bits >= 32 ? 0xFFFFFFFFu : (1u << v.policy.sr_bits) - 1u;
          for (std::uint32_t salt : {0u, 1u, 2u}) {
            std::vector<std::uint32_t> rs(xs.size());
            for (std::size_t i = 0; i < xs.size(); ++i)
              rs[i] = static_cast<std::uint32_t>(conform::mix64(i * 3 + salt)) & rmask;
            if (salt == 1)
              for (auto& r : rs) r = rmask;
            ASSERT_EQ(compare(from, to, v.policy, xs, rs), 0);
          }
        }
      }
  }
}

// f32 sources: the lane path (deterministic modes, floating targets) and the scalar path
// (SR, integer target) on seeded random codes that hit every binade of every target, and
// on every special: zeros, subnormals, the ends of the range, Inf, NaNs.
TEST(CpuFast, MatchesTheReferenceOnF32Sources) {
  std::vector<std::uint32_t> xs;
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t m : {0u, 1u, 2u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFEu, 0x7FFFFFu, 0x080000u, 0x0FFFFFu,
                            0x100000u, 0x0C0000u, 0x07FFFFu, 0x008000u, 0x00FFFFu, 0x010000u})
      for (std::uint32_t s : {0u, 0x80000000u}) xs.push_back(s | (e << 23) | m);
  for (std::uint64_t i = 0; i < 40000; ++i) xs.push_back(static_cast<std::uint32_t>(conform::mix64(i)));
  const Format& f32 = format(FormatId::f32);
  for (const auto& to : kFormats)
    for (int pi = 0; pi < kProfileCount; ++pi) {  // every named profile, its pair rules applied (§10.2)
      if (to.is_p3109_extra()) continue;          // §2.5 item 7: declined like the 12 binary8 members
      const Policy base = all_profiles()[pi].for_cast(f32, to);
      for (const auto& v : conform::cast::variants(conform::Level::l1, base, f32, to)) {
        std::vector<std::uint32_t> rs;
        if (effective_round(to, v.policy) == Round::sr) {
          const std::uint32_t rmask = v.policy.sr_bits >= 32 ? 0xFFFFFFFFu : (1u << v.policy.sr_bits) - 1u;
          for (std::size_t i = 0; i < xs.size(); ++i)
            rs.push_back(static_cast<std::uint32_t>(conform::mix64(~i)) & rmask);
        }
        ASSERT_EQ(compare(f32, to, v.policy, xs, rs), 0);
      }
    }
}

// The path selection the benchmarks rely on.
TEST(CpuFast, Paths) {
  const Policy& sat = profile(ProfileId::cuda_satfinite).narrow;
  EXPECT_STREQ(cpu_fast::FastCast(format(FormatId::f32), format(FormatId::f8e4m3fn), sat).path(), "lanes");
  EXPECT_STREQ(cpu_fast::FastCast(format(FormatId::bf16), format(FormatId::f8e4m3fn), sat).path(), "lut");
  Policy sr = sat;
  sr.round = Round::sr;
  sr.sr_bits = 8;
  EXPECT_STREQ(cpu_fast::FastCast(format(FormatId::f32), format(FormatId::f8e4m3fn), sr).path(), "scalar");
}
