// cpu-fast's byte lanes (backends/cpu_fast/fast_lanes.hpp) against the reference, directly (no
// runner), flags included, with and without the flags output, on unaligned slices too:
//   * every bf16 and f16 code under every (target, policy) the lanes take: each profile's policy
//     for the pair (§10.2) and its level-1 variants (§34.3);
//   * f32: a structured set (every exponent, every cut position of the mantissa with the codes
//     at and next to the tie, signs, zeros, subnormals, Inf, NaNs) and 3 M seeded random codes
//     (1 M over the whole code space, 2 M in the binades of the narrow targets) per (target,
//     policy) with distinct lane constants; the structured set for the rest (they differ in
//     NaN handling only, which the scalar path does);
//   * which casts take the lanes (FastCast, and so the cpu-fast backend, numref.cast);
//   * label `exhaustive` (test conform_fast_lanes_exhaustive): every f32 code.
// spec §11; the reference is the oracle (it is itself checked against MPFR).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fast_cast.hpp"
#include "fast_lanes.hpp"
#include "numref/conform/util.hpp"
#include "numref/convert.hpp"
#include "ops/cast/cast.hpp"

using namespace numref;

namespace {

struct Cast {
  const Format* to;
  Policy p;
  std::string name;
};

// Every (target, policy) the lanes take from `from`: the profiles' policies and their level-1
// variants, without duplicates.
std::vector<Cast> supported(const Format& from) {
  std::vector<Cast> out;
  for (const auto& to : kFormats)
    for (int pi = 0; pi < kProfileCount; ++pi) {
      const Profile& prof = all_profiles()[pi];
      for (const auto& v : conform::cast::variants(conform::Level::l1, prof.for_cast(from, to), from, to)) {
        if (cpu_fast::byte_lanes_unsupported(from, to, v.policy)) continue;
        bool dup = false;
        for (const auto& c : out) dup = dup || (c.to == &to && conform::cast::equivalent(c.p, v.policy, from, to));
        if (!dup) out.push_back({&to, v.policy, std::string(prof.name) + (v.name.empty() ? "" : " " + v.name)});
      }
    }
  return out;
}

// The lanes on xs against the reference; the number of mismatches (the first few reported).
template <class In>
int compare(const Format& from, const Cast& c, const std::vector<In>& xs) {
  const cpu_fast::ByteLanes lanes(from, *c.to, c.p);
  const Converter ref(from, *c.to, c.p);
  const std::size_t n = xs.size();
  std::vector<std::uint8_t> out(n), fl(n), codes_only(n), slice(n);
  lanes.run(xs.data(), out.data(), fl.data(), n);
  lanes.run(xs.data(), codes_only.data(), nullptr, n);
  // an unaligned slice with a ragged tail: the same results
  lanes.run(xs.data() + 3, slice.data() + 3, nullptr, n - 3);
  int bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Result e = ref(xs[i]);
    const bool ok = e.bits == out[i] && e.flags == fl[i] && e.bits == codes_only[i] && (i < 3 || e.bits == slice[i]);
    if (!ok && ++bad <= 3)
      ADD_FAILURE() << from.name << "->" << c.to->name << " [" << c.name << ": " << describe(c.p) << "] x=" << std::hex
                    << +xs[i] << ": got " << +out[i] << "/" << +fl[i] << " (codes only " << +codes_only[i] << ", slice "
                    << +slice[i] << ") expected " << e.bits << "/" << +e.flags;
  }
  return bad;
}

// f32 codes: every exponent and sign, the mantissa cut at every position p (the bits a target
// keeps) with the low p bits 0, the tie, the tie +-1 and all ones, under a few random tops;
// and zeros, subnormals, Inf and NaNs of every kind among them (NaNs in most lane blocks).
std::vector<std::uint32_t> structured_f32() {
  std::vector<std::uint32_t> xs;
  std::uint64_t k = 0;
  for (std::uint32_t e = 0; e < 256; ++e)
    for (int p = 1; p <= 23; ++p) {
      const std::uint32_t low = (1u << p) - 1u, tie = 1u << (p - 1);
      for (int t = 0; t < 3; ++t) {
        const std::uint32_t top = (t == 0 ? 0u : static_cast<std::uint32_t>(conform::mix64(k++))) & 0x7FFFFFu & ~low;
        for (const std::uint32_t b : {0u, tie, tie - 1u, tie + 1u, low, 1u})
          for (const std::uint32_t s : {0u, 0x80000000u}) xs.push_back(s | (e << 23) | top | (b & low));
      }
    }
  return xs;
}

std::vector<std::uint32_t> random_f32() {
  std::vector<std::uint32_t> xs;
  for (std::uint64_t i = 0; i < 1000000; ++i) xs.push_back(static_cast<std::uint32_t>(conform::mix64(i)));
  // 2 M in the binades 2^-30 .. 2^20 (biased exponents 97..147): where the narrow targets round
  for (std::uint64_t i = 0; i < 2000000; ++i) {
    const std::uint64_t r = conform::mix64(~i);
    const std::uint32_t e = 97u + static_cast<std::uint32_t>((r >> 32) % 51u);
    xs.push_back((static_cast<std::uint32_t>(r) & 0x807FFFFFu) | (e << 23));
  }
  return xs;
}

}  // namespace

// The lanes take the common casts (the narrow targets under every profile that rounds to nearest
// even; microxcaling rounds ties away and microxcaling_floor toward zero: both go to the scalar
// path), and nothing else.
TEST(ByteLanes, TakeTheCommonCastsOnly) {
  const Format &f32 = format(FormatId::f32), &bf16 = format(FormatId::bf16), &f16 = format(FormatId::f16);
  const Format& e4m3 = format(FormatId::f8e4m3fn);
  std::set<std::string> ties_away;
  for (const Format* from : {&f32, &bf16, &f16})
    for (const auto id :
         {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f6e3m2fn, FormatId::f6e2m3fn, FormatId::f4e2m1fn})
      for (int pi = 0; pi < kProfileCount; ++pi) {
        const Policy p = all_profiles()[pi].for_cast(*from, format(id));
        const char* why = cpu_fast::byte_lanes_unsupported(*from, format(id), p);
        if (p.round != Round::rne) {
          ties_away.insert(std::string(all_profiles()[pi].name));
          EXPECT_STREQ(why, "byte lanes: the rounding is not rne");
          continue;
        }
        EXPECT_EQ(why, nullptr) << from->name << "->" << format(id).name << " " << all_profiles()[pi].name;
      }
  EXPECT_EQ(ties_away, (std::set<std::string>{"microxcaling", "microxcaling_floor"}));
  const Policy ocp = profile(ProfileId::ocp).narrow;
  auto with = [&](const char* settings) {
    Policy p = ocp;
    EXPECT_FALSE(apply_policy_settings(p, settings).has_value()) << settings;
    return p;
  };
  // other rounding, daz / ftz, declined (§A.1), other targets and sources
  for (const char* s : {"round=rtz", "round=rna", "round=sr sr_bits=8", "daz=1", "ftz=1", "nan=raw"})
    EXPECT_NE(cpu_fast::byte_lanes_unsupported(f32, e4m3, with(s)), nullptr) << s;
  for (const auto id : {FormatId::f8e8m0fnu, FormatId::int8, FormatId::bf16, FormatId::f16, FormatId::f32})
    EXPECT_NE(cpu_fast::byte_lanes_unsupported(f32, format(id), ocp), nullptr) << format(id).name;
  EXPECT_NE(cpu_fast::byte_lanes_unsupported(format(FormatId::f8e5m2), e4m3, ocp), nullptr);
  EXPECT_THROW(cpu_fast::ByteLanes(f32, e4m3, with("round=rtz")), std::invalid_argument);
  // FastCast (the cpu-fast backend, fast_quant, numref.cast) holds them where they apply
  EXPECT_NE(cpu_fast::FastCast(f32, e4m3, ocp).byte_lanes(), nullptr);
  EXPECT_NE(cpu_fast::FastCast(bf16, e4m3, ocp).byte_lanes(), nullptr);
  EXPECT_EQ(cpu_fast::FastCast(f32, e4m3, with("round=rtz")).byte_lanes(), nullptr);
  // the source width of run() is checked
  const cpu_fast::ByteLanes l32(f32, e4m3, ocp), l16(bf16, e4m3, ocp);
  std::uint32_t w = 0;
  std::uint16_t h = 0;
  std::uint8_t o = 0;
  EXPECT_THROW(l32.run(&h, &o, nullptr, 1), std::logic_error);
  EXPECT_THROW(l16.run(&w, &o, nullptr, 1), std::logic_error);
}

TEST(ByteLanes, MatchTheReferenceOnEveryBf16AndF16Code) {
  for (const auto id : {FormatId::bf16, FormatId::f16}) {
    const Format& from = format(id);
    std::vector<std::uint16_t> xs;
    for (std::uint32_t c = 0; c <= 0xFFFFu; ++c) xs.push_back(static_cast<std::uint16_t>(c));
    const auto casts = supported(from);
    EXPECT_GE(casts.size(), 5u * 4u) << from.name;  // 5 targets, several distinct policies each
    for (const Cast& c : casts) ASSERT_EQ(compare(from, c, xs), 0);
  }
}

TEST(ByteLanes, MatchTheReferenceOnF32Codes) {
  const Format& f32 = format(FormatId::f32);
  const auto structured = structured_f32();
  const auto random = random_f32();
  std::vector<std::pair<const Format*, cpu_fast::ByteLanes::Consts>> seen;
  const auto casts = supported(f32);
  EXPECT_GE(casts.size(), 5u * 4u);
  for (const Cast& c : casts) {
    ASSERT_EQ(compare(f32, c, structured), 0);
    const auto k = cpu_fast::ByteLanes(f32, *c.to, c.p).consts();
    if (std::find(seen.begin(), seen.end(), std::pair{c.to, k}) != seen.end()) continue;
    seen.emplace_back(c.to, k);
    ASSERT_EQ(compare(f32, c, random), 0);
  }
  EXPECT_GE(seen.size(), 5u * 3u);  // overflow, Inf and tininess variants per target
}

// Label `exhaustive` (ctest conform_fast_lanes_exhaustive; NUMREF_SHARD=I/N takes slice I of
// N of the code space, 0 <= I < N): every f32 code, on every thread, for every target and every
// distinct set of lane constants of the policies above, against the reference.
TEST(ByteLanes, DISABLED_MatchTheReferenceOnEveryF32Code) {
  unsigned shard = 0, shards = 1;
  if (const char* s = std::getenv("NUMREF_SHARD")) {
    ASSERT_TRUE(std::sscanf(s, "%u/%u", &shard, &shards) == 2 && shard < shards) << "NUMREF_SHARD=" << s;
  }
  const std::uint64_t lo = (std::uint64_t{1} << 32) * shard / shards,
                      hi = (std::uint64_t{1} << 32) * (shard + 1) / shards;
  const Format& f32 = format(FormatId::f32);
  std::vector<std::pair<const Format*, cpu_fast::ByteLanes::Consts>> seen;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (const Cast& c : supported(f32)) {
    const cpu_fast::ByteLanes lanes(f32, *c.to, c.p);
    if (std::find(seen.begin(), seen.end(), std::pair{c.to, lanes.consts()}) != seen.end()) continue;
    seen.emplace_back(c.to, lanes.consts());
    const Converter ref(f32, *c.to, c.p);
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<std::uint64_t> next{lo}, bad{0}, first_bad{~std::uint64_t{0}};
    auto work = [&] {
      constexpr std::uint64_t kChunk = 1 << 16;
      std::vector<std::uint32_t> xs(kChunk);
      std::vector<std::uint8_t> out(kChunk), fl(kChunk);
      for (std::uint64_t b; (b = next.fetch_add(kChunk)) < hi;) {
        const std::size_t m = static_cast<std::size_t>(std::min(kChunk, hi - b));
        for (std::size_t i = 0; i < m; ++i) xs[i] = static_cast<std::uint32_t>(b + i);
        lanes.run(xs.data(), out.data(), fl.data(), m);
        for (std::size_t i = 0; i < m; ++i) {
          const Result e = ref(xs[i]);
          if (e.bits != out[i] || e.flags != fl[i]) {
            ++bad;
            std::uint64_t f = first_bad.load();
            while (b + i < f && !first_bad.compare_exchange_weak(f, b + i)) {}
          }
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("f32->%s [%s]: codes %llx..%llx, %llu mismatches, %.0f s on %u threads\n",
                std::string(c.to->name).c_str(), c.name.c_str(), static_cast<unsigned long long>(lo),
                static_cast<unsigned long long>(hi - 1), static_cast<unsigned long long>(bad.load()), s, threads);
    EXPECT_EQ(bad.load(), 0u) << "f32->" << c.to->name << " [" << c.name << "] first mismatch at x=" << std::hex
                              << first_bad.load();
  }
  EXPECT_GE(seen.size(), 5u * 3u);
}
