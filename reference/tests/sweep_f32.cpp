// Exhaustive sweep (CTest label `exhaustive`): every one of the 2^32 f32 codes converted
// by the core (numref::Converter, §11) and by the independent oracle
// (numref::oracle::convert), bits and flags compared, for a set of (target, mode,
// overflow policy) combinations.
//
//   sweep_f32 [--shard I/N] [--target LIST|all] [--mode LIST|all] [--overflow LIST|all]
//             [--policy "key=value ..."] [--inputs LO:HI] [--threads T]
//
// --shard I/N   this process takes the I-th of N equal slices of the 2^32 inputs (0 <= I < N)
//               for every combination, so N processes (or machines) cover everything.
// --target / --mode / --overflow   comma-separated lists (or `all`). Without any of them
//               the sweep runs the default set below (about one hour on 2 cores).
// --policy      further §10.3 settings applied on top (e.g. "daz=1 ftz=1 tininess=before").
// --inputs      restrict to the hex code range [LO, HI) (quick checks).
// Prints progress per combination, the first mismatches in full, and exits 1 on any.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "numref/convert.hpp"
#include "numref/oracle/oracle_convert.hpp"
#include "numref/policy.hpp"

namespace {

using namespace numref;

struct Combo {
  const Format* to;
  Policy p;
};

[[noreturn]] void usage(const std::string& msg) {
  std::fprintf(stderr,
               "sweep_f32: %s\nusage: sweep_f32 [--shard I/N] [--target LIST|all] [--mode LIST|all] "
               "[--overflow LIST|all] [--policy \"k=v ...\"] [--inputs LO:HI] [--threads T]\n",
               msg.c_str());
  std::exit(2);
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The default set: the OCP / MX narrow targets under the default rne, both overflow
// policies where they differ, E8M0 under each of its rounding rules, the wide targets, the
// fnuz rows, the IEEE-like f8e4m3 / f8e3m4 and three P3109 rows.
std::vector<Combo> default_combos() {
  std::vector<Combo> v;
  auto add = [&](FormatId to, Round r, Overflow o, E8m0Round e = E8m0Round::follow) {
    Policy p;
    p.round = r;
    p.overflow = o;
    p.e8m0_round = e;
    v.push_back({&format(to), p});
  };
  add(FormatId::f8e4m3fn, Round::rne, Overflow::saturate);
  add(FormatId::f8e4m3fn, Round::rne, Overflow::nonsat);
  add(FormatId::f8e5m2, Round::rne, Overflow::saturate);
  add(FormatId::f8e5m2, Round::rne, Overflow::nonsat);
  add(FormatId::f8e8m0fnu, Round::rne, Overflow::nonsat);  // ties to the even code
  add(FormatId::f8e8m0fnu, Round::rne, Overflow::saturate, E8m0Round::floor);
  add(FormatId::f8e8m0fnu, Round::rne, Overflow::nonsat, E8m0Round::tiesup);
  add(FormatId::bf16, Round::rne, Overflow::nonsat);
  add(FormatId::f16, Round::rne, Overflow::nonsat);
  add(FormatId::f4e2m1fn, Round::rne, Overflow::saturate);
  add(FormatId::int8, Round::rne, Overflow::saturate);
  // the fnuz family (§2.2): one NaN for overflow, Inf and NaN; no −0 for negative underflow
  add(FormatId::f8e4m3fnuz, Round::rne, Overflow::nonsat);
  add(FormatId::f8e4m3fnuz, Round::rne, Overflow::saturate);
  add(FormatId::f8e5m2fnuz, Round::rne, Overflow::nonsat);
  add(FormatId::f8e4m3b11fnuz, Round::rne, Overflow::saturate);
  add(FormatId::f8e4m3, Round::rne, Overflow::nonsat);  // the IEEE-like 8-bit rows
  add(FormatId::f8e3m4, Round::rne, Overflow::nonsat);
  // P3109 (§2.5): Inf of the extended domain at 7F / FE, one NaN, no −0, unsigned NaN for negatives
  add(FormatId::p3109_k8p3se, Round::rne, Overflow::nonsat);
  add(FormatId::p3109_k8p4uf, Round::rne, Overflow::nonsat);
  add(FormatId::p3109_k8p1ue, Round::rne, Overflow::saturate);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned shard = 0, nshards = 1, threads = 2;
  std::string targets, modes, overflows, settings;
  std::uint64_t lo = 0, hi = std::uint64_t{1} << 32;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value after " + a);
      return argv[++i];
    };
    if (a == "--shard") {
      const std::string s = val();
      if (std::sscanf(s.c_str(), "%u/%u", &shard, &nshards) != 2 || nshards == 0 || shard >= nshards)
        usage("bad --shard '" + s + "' (want I/N with 0 <= I < N)");
    } else if (a == "--target")
      targets = val();
    else if (a == "--mode")
      modes = val();
    else if (a == "--overflow")
      overflows = val();
    else if (a == "--policy")
      settings = val();
    else if (a == "--threads") {
      threads = static_cast<unsigned>(std::atoi(val().c_str()));
      if (threads < 1 || threads > 256) usage("bad --threads");
    } else if (a == "--inputs") {
      const std::string s = val();
      unsigned long long l = 0, h = 0;
      if (std::sscanf(s.c_str(), "%llx:%llx", &l, &h) != 2 || l >= h || h > (1ull << 32))
        usage("bad --inputs '" + s + "' (want LO:HI in hex, LO < HI <= 100000000)");
      lo = l;
      hi = h;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }

  std::vector<Combo> combos;
  if (targets.empty() && modes.empty() && overflows.empty()) {
    combos = default_combos();
  } else {
    std::vector<const Format*> tl;
    for (const auto& t : split_list(targets.empty() || targets == "all" ? std::string() : targets)) {
      const auto id = find_format(t);
      if (!id) usage("unknown target format '" + t + "'");
      tl.push_back(&format(*id));
    }
    if (tl.empty())
      for (const auto& f : kFormats)
        if (f.id != FormatId::f32) tl.push_back(&f);
    std::vector<Round> ml;
    for (const auto& m : split_list(modes.empty() || modes == "all" ? "rne,rtz,rup,rdn,rna" : modes)) {
      const auto r = parse_round(m);
      if (!r || *r == Round::sr) usage("unknown deterministic mode '" + m + "'");
      ml.push_back(*r);
    }
    std::vector<Overflow> ol;
    for (const auto& o : split_list(overflows.empty() || overflows == "all" ? "saturate,nonsat" : overflows)) {
      const auto v = parse_overflow(o);
      if (!v) usage("unknown overflow policy '" + o + "'");
      ol.push_back(*v);
    }
    for (const Format* t : tl)
      for (Round r : ml)
        for (Overflow o : ol) {
          Policy p;
          p.round = r;
          p.overflow = o;
          combos.push_back({t, p});
        }
  }
  if (!settings.empty())
    for (auto& c : combos)
      if (auto err = apply_policy_settings(c.p, settings)) usage(*err);

  // this shard's slice of [lo, hi)
  const std::uint64_t span = hi - lo;
  const std::uint64_t s_lo = lo + span * shard / nshards, s_hi = lo + span * (shard + 1) / nshards;
  const Format& f32 = format(FormatId::f32);
  std::uint64_t total_mismatches = 0;
  const auto t_all = std::chrono::steady_clock::now();
  std::printf("sweep_f32: shard %u/%u, inputs [%08llx, %08llx), %zu combination(s), %u thread(s)\n", shard, nshards,
              static_cast<unsigned long long>(s_lo), static_cast<unsigned long long>(s_hi), combos.size(), threads);
  for (const Combo& c : combos) {
    const Converter conv(f32, *c.to, c.p);
    std::atomic<std::uint64_t> next{s_lo}, done{0}, mismatches{0};
    std::mutex print_mutex;
    constexpr std::uint64_t kChunk = 1 << 20;
    const auto t0 = std::chrono::steady_clock::now();
    std::printf("f32 -> %s [%s]\n", std::string(c.to->name).c_str(), describe(c.p).c_str());
    std::fflush(stdout);
    auto worker = [&] {
      for (;;) {
        const std::uint64_t b = next.fetch_add(kChunk);
        if (b >= s_hi) break;
        const std::uint64_t e = std::min(s_hi, b + kChunk);
        for (std::uint64_t x = b; x < e; ++x) {
          const auto code = static_cast<std::uint32_t>(x);
          const Result got = conv(code);
          const oracle::Out want = oracle::convert(code, f32, *c.to, c.p);
          if (got.bits != want.bits || got.flags != want.flags) {
            if (mismatches.fetch_add(1) < 20) {
              std::lock_guard<std::mutex> lock(print_mutex);
              std::printf("  MISMATCH in=%08X got=%0*X %s expected=%0*X %s\n", code, c.to->bits <= 8 ? 2 : 4, got.bits,
                          flags_to_string(got.flags).c_str(), c.to->bits <= 8 ? 2 : 4, want.bits,
                          flags_to_string(want.flags).c_str());
            }
          }
        }
        const std::uint64_t d = done.fetch_add(e - b) + (e - b);
        const std::uint64_t n = s_hi - s_lo;
        // progress at every 1/16 of the slice
        if ((d * 16) / n != ((d - (e - b)) * 16) / n) {
          const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::lock_guard<std::mutex> lock(print_mutex);
          std::printf("  %5.1f%%  %llu / %llu  %.0f s  mismatches %llu\n",
                      100.0 * static_cast<double>(d) / static_cast<double>(n), static_cast<unsigned long long>(d),
                      static_cast<unsigned long long>(n), secs, static_cast<unsigned long long>(mismatches.load()));
          std::fflush(stdout);
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  done: %llu inputs, %llu mismatches, %.1f s\n", static_cast<unsigned long long>(s_hi - s_lo),
                static_cast<unsigned long long>(mismatches.load()), secs);
    std::fflush(stdout);
    total_mismatches += mismatches.load();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
  std::printf("sweep_f32: %s — %llu mismatches in %zu combination(s), %.1f s\n", total_mismatches ? "FAIL" : "PASS",
              static_cast<unsigned long long>(total_mismatches), combos.size(), secs);
  return total_mismatches ? 1 : 0;
}
