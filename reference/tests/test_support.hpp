// numref tests — helpers shared by the conversion tests (namespace numref::convtest):
// hex rendering of codes (§1.2), a 2-thread parallel loop, mismatch collection with
// full reports (from / to / policy / input / got / expected in hex), policy builders.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "numref/convert.hpp"
#include "numref/format.hpp"
#include "numref/oracle/oracle_convert.hpp"
#include "numref/policy.hpp"
#include "numref/splitmix64.hpp"

namespace numref::convtest {

// §1.2 a code in hex with as many digits as the storage width needs.
inline std::string hex(std::uint32_t code, const Format& f) {
  const int digits = f.bits <= 8 ? 2 : (f.bits <= 16 ? 4 : 8);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*X", digits, code);
  return buf;
}
inline std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llX", static_cast<unsigned long long>(v));
  return buf;
}

// Number of worker threads for the long loops: NUMREF_TEST_THREADS, default 2 (the
// project's machines have 2 cores).
inline unsigned test_threads() {
  if (const char* s = std::getenv("NUMREF_TEST_THREADS")) {
    const int n = std::atoi(s);
    if (n >= 1 && n <= 64) return static_cast<unsigned>(n);
  }
  return 2;
}

// Runs body(begin, end) over [0, n) split in contiguous chunks of at least `grain`
// indices across test_threads().
inline void parallel_for(std::uint64_t n, const std::function<void(std::uint64_t, std::uint64_t)>& body,
                         std::uint64_t grain = 1024) {
  const unsigned t = test_threads();
  if (t == 1 || n <= grain) {
    body(0, n);
    return;
  }
  std::vector<std::thread> workers;
  std::atomic<std::uint64_t> next{0};
  const std::uint64_t chunk = std::max<std::uint64_t>(grain, n / (t * 16));
  for (unsigned i = 0; i < t; ++i) {
    workers.emplace_back([&] {
      for (;;) {
        const std::uint64_t b = next.fetch_add(chunk);
        if (b >= n) break;
        body(b, std::min(n, b + chunk));
      }
    });
  }
  for (auto& w : workers) w.join();
}

// One conversion case described for a mismatch report.
inline std::string describe_case(const Format& from, const Format& to, const Policy& p, std::uint32_t in,
                                 std::uint64_t r, Result got, oracle::Out want) {
  std::string s = std::string(from.name) + " -> " + std::string(to.name) + " [" + describe(p) + "] in=" + hex(in, from);
  if (p.round == Round::sr) s += " r=" + hex64(r);
  s += " got=" + hex(got.bits, to) + " " + flags_to_string(got.flags) + " expected=" + hex(want.bits, to) + " " +
       flags_to_string(want.flags);
  return s;
}

// Thread-safe mismatch collector: counts every mismatch, keeps the first few reports.
class Mismatches {
 public:
  void add(const std::string& report) {
    std::lock_guard<std::mutex> lock(m_);
    ++count_;
    if (reports_.size() < 12) reports_.push_back(report);
  }
  std::uint64_t count() const { return count_; }
  std::string summary() const {
    std::string s = std::to_string(count_) + " mismatches";
    for (const auto& r : reports_) s += "\n  " + r;
    return s;
  }

 private:
  std::mutex m_;
  std::uint64_t count_ = 0;
  std::vector<std::string> reports_;
};

// Compares the core's Converter with the oracle on one code; records a mismatch.
inline bool check_one(const Converter& conv, const Policy& p, std::uint32_t code, std::uint64_t r, Mismatches& mm) {
  const Result got = conv(code, r);
  const oracle::Out want = oracle::convert(code, conv.from(), conv.to(), p, r);
  if (got.bits == want.bits && got.flags == want.flags) return true;
  mm.add(describe_case(conv.from(), conv.to(), p, code, r, got, want));
  return false;
}

inline constexpr Round kDeterministic[] = {Round::rne, Round::rtz, Round::rup, Round::rdn, Round::rna};
inline constexpr Overflow kOverflows[] = {Overflow::saturate, Overflow::nonsat};

inline Policy with(Round r, Overflow o, Policy base = Policy{}) {
  base.round = r;
  base.overflow = o;
  return base;
}
// `base` with the §10.3 text-form settings ("key=value ...") applied; a bad one fails the test.
inline Policy with(std::string_view settings, Policy base) {
  if (const auto err = apply_policy_settings(base, settings)) ADD_FAILURE() << *err << " in '" << settings << "'";
  return base;
}

// Whether the default suite's all-pairs sweeps take row f: every row but the extra P3109 members
// (Format::is_p3109_extra, spec §2.5: the 128 beyond gfloat's binary8 set). Those have their own
// default test (test_p3109_members.cpp) and an exhaustive one (sweep_p3109.cpp, label exhaustive)
// that sweeps every code of every source of at most 16 bits into every member.
inline bool swept(const Format& f) { return !f.is_p3109_extra(); }

// The formats of at most 16 bits (the sources the oracle tests sweep exhaustively), swept() only.
inline std::vector<const Format*> small_sources() {
  std::vector<const Format*> v;
  for (const auto& f : kFormats)
    if (f.bits <= 16 && swept(f)) v.push_back(&f);
  return v;
}

// Every code of `from` into `to` under `p` (and random bits r for round=sr), core vs oracle.
inline void sweep_codes(const Format& from, const Format& to, const Policy& p, Mismatches& mm, std::uint64_t r = 0) {
  const Converter conv(from, to, p);
  parallel_for(std::uint64_t{1} << from.bits, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t c = b; c < e; ++c) check_one(conv, p, static_cast<std::uint32_t>(c), r, mm);
  });
}

// A 64-bit seeded generator (splitmix64): deterministic across platforms.
using numref::SplitMix64;

// The f32 code of the dyadic value (-1)^s * sig * 2^exp, or nothing when it is not an
// f32 value (§3.3 for binary32: bias 127, 23 fraction bits, subnormal quantum 2^-149).
inline std::optional<std::uint32_t> f32_code(bool s, std::uint64_t sig, int exp) {
  if (sig == 0) return s ? 0x80000000u : 0u;
  while ((sig & 1u) == 0) {
    sig >>= 1;
    ++exp;
  }
  int bl = 0;
  for (std::uint64_t t = sig; t; t >>= 1) ++bl;
  const int e = exp + bl - 1;
  if (e > 127) return std::nullopt;
  std::uint32_t mag;
  if (e >= -126) {
    if (bl - 1 > 23) return std::nullopt;
    mag =
        (static_cast<std::uint32_t>(e + 127) << 23) | static_cast<std::uint32_t>((sig << (23 - (bl - 1))) & 0x7FFFFFu);
  } else {
    if (exp < -149) return std::nullopt;
    mag = static_cast<std::uint32_t>(sig << (exp + 149));
  }
  return (s ? 0x80000000u : 0u) | mag;
}
inline std::optional<std::uint32_t> f32_code(const oracle::Rational& v) {
  const bool s = v < 0;
  const oracle::Rational a = s ? oracle::Rational(-v) : v;
  oracle::BigInt num = boost::multiprecision::numerator(a), den = boost::multiprecision::denominator(a);
  int exp = 0;
  while (den > 1) {  // dyadic: den is a power of two
    den >>= 1;
    --exp;
  }
  if (num != 0 && boost::multiprecision::msb(num) >= 63) {
    while ((num & 1) == 0) {
      num >>= 1;
      ++exp;
    }
    if (boost::multiprecision::msb(num) >= 63) return std::nullopt;
  }
  return f32_code(s, num.convert_to<std::uint64_t>(), exp);
}

}  // namespace numref::convtest
