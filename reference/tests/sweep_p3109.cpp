// Exhaustive (label exhaustive): the core against the MPFR / rational oracle for every IEEE P3109
// member of the table (spec §2.5; NUMREF_P3109_MEMBERS, read from kFormats, never listed here):
//   * every code of every format of at most 16 bits (bf16, f16, every 8-, 6-, 4-bit row and every
//     P3109 member) into every P3109 member, every deterministic mode (§4.2), both overflow
//     policies (§6.1), inf_sat=keep under saturate (§6.2);
//   * the same sources with stochastic rounding (§5.1 fraction and §5.2 add, k = 1 and 4, every
//     r for the narrow sources, 3 seeded r per 16-bit code);
//   * every code of every P3109 member into every format of the table, every deterministic mode,
//     both overflow policies.
// About 4 * 10^8 conversions; NUMREF_TEST_THREADS sets the threads (default 2).
//
// usage: sweep_p3109 [--shard I/N] [--plan] [GoogleTest flags]
//   --shard I/N  run the work units u with u mod N = I (0 <= I < N): N processes with I = 0 .. N-1
//                do every unit once between them (scripts/sweep.sh passes it). A unit is one
//                (source, target) pair of one test; the units of a source are consecutive, so the
//                costly 16-bit sources are spread over the shards.
//   --plan       print this shard's units ("unit TEST INDEX FROM TO CONVERSIONS") and their
//                total without converting anything (the test sweep_p3109_shards checks that the
//                shards partition the work).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace numref {
namespace {

using convtest::kDeterministic;
using convtest::kOverflows;
using convtest::Mismatches;
using convtest::sweep_codes;

unsigned g_shard = 0, g_shards = 1;
bool g_plan = false;

// The work units of one test, numbered in the test's loop order: mine() says whether this shard
// runs unit `u` (printing it in --plan mode instead, and then answering false).
class Units {
 public:
  explicit Units(const char* test) : test_(test) {}
  bool mine(const Format& from, const Format& to, std::uint64_t conversions) {
    const std::uint64_t u = next_++;
    total_ += conversions;
    if (u % g_shards != g_shard) return false;
    shard_ += conversions;
    if (!g_plan) return true;
    std::printf("unit %s %llu %s %s %llu\n", test_, static_cast<unsigned long long>(u), std::string(from.name).c_str(),
                std::string(to.name).c_str(), static_cast<unsigned long long>(conversions));
    return false;
  }
  // The conversions of every shard together, and of this one.
  std::uint64_t total() const { return total_; }
  ~Units() {
    std::printf("%s %s: shard %u/%u, %llu units, %llu of %llu conversions\n", g_plan ? "plan" : "ran", test_, g_shard,
                g_shards, static_cast<unsigned long long>(next_), static_cast<unsigned long long>(shard_),
                static_cast<unsigned long long>(total_));
  }

 private:
  const char* test_;
  std::uint64_t next_ = 0, total_ = 0, shard_ = 0;
};

std::vector<const Format*> small_rows() {  // every row of at most 16 bits, the extra members included
  std::vector<const Format*> v;
  for (const auto& f : kFormats)
    if (f.bits <= 16) v.push_back(&f);
  return v;
}

TEST(SweepP3109, EverySmallSourceIntoEveryMember) {
  Mismatches mm;
  Units units("EverySmallSourceIntoEveryMember");
  std::uint64_t members = 0;
  for (const auto& to : kFormats) members += to.is_p3109();
  // 5 modes x (nonsat, saturate + inf_sat max, saturate + inf_sat keep) per pair
  constexpr std::uint64_t kPolicies = std::size(kDeterministic) * 3;
  for (const Format* from : small_rows())
    for (const auto& to : kFormats) {
      if (!to.is_p3109() || !units.mine(*from, to, kPolicies << from->bits)) continue;
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows)
          for (InfSat s : {InfSat::max, InfSat::keep}) {
            if (o == Overflow::nonsat && s == InfSat::keep) continue;  // inf_sat acts under saturate only
            Policy p = convtest::with(r, o);
            p.inf_sat = s;
            sweep_codes(*from, to, p, mm);
          }
    }
  EXPECT_EQ(members, 140u);
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
  EXPECT_GT(units.total(), 250'000'000u);
}

TEST(SweepP3109, StochasticIntoEveryMember) {
  Mismatches mm;
  Units units("StochasticIntoEveryMember");
  for (const Format* from : small_rows())
    for (const auto& to : kFormats) {
      // per code: every r (2 + 16) for a narrow source, 3 r for a 16-bit one; 2 variants
      const std::uint64_t per_code = from->bits <= 8 ? 2 + 16 : 3 + 3;
      if (!to.is_p3109() || !units.mine(*from, to, 2 * per_code << from->bits)) continue;
      for (SrVariant v : {SrVariant::fraction, SrVariant::add})
        for (int k : {1, 4}) {
          Policy p = convtest::with(Round::sr, Overflow::nonsat);
          p.sr_bits = k;
          p.sr_variant = v;
          const Converter conv(*from, to, p);
          convtest::parallel_for(std::uint64_t{1} << from->bits, [&](std::uint64_t b, std::uint64_t e) {
            convtest::SplitMix64 g(b * 0x3109 + static_cast<std::uint64_t>(k));
            for (std::uint64_t c = b; c < e; ++c) {
              const auto code = static_cast<std::uint32_t>(c);
              if (from->bits <= 8) {
                for (std::uint64_t r = 0; r < (std::uint64_t{1} << k); ++r) convtest::check_one(conv, p, code, r, mm);
              } else {
                for (int t = 0; t < 3; ++t) convtest::check_one(conv, p, code, g.next() >> (64 - k), mm);
              }
            }
          });
        }
    }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

TEST(SweepP3109, EveryMemberIntoEveryFormat) {
  Mismatches mm;
  Units units("EveryMemberIntoEveryFormat");
  constexpr std::uint64_t kPolicies = std::size(kDeterministic) * std::size(kOverflows);
  for (const auto& from : kFormats) {
    if (!from.is_p3109()) continue;
    for (const auto& to : kFormats) {
      if (!units.mine(from, to, kPolicies << from.bits)) continue;
      for (Round r : kDeterministic)
        for (Overflow o : kOverflows) sweep_codes(from, to, convtest::with(r, o), mm);
    }
  }
  EXPECT_EQ(mm.count(), 0u) << mm.summary();
}

}  // namespace
}  // namespace numref

int main(int argc, char** argv) {
  // --shard I/N and --plan are this program's; the other arguments go to GoogleTest.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--plan") {
      numref::g_plan = true;
    } else if (a == "--shard" || a.rfind("--shard=", 0) == 0) {
      std::string v;
      if (a == "--shard") {
        if (i + 1 >= argc) {
          std::fprintf(stderr, "sweep_p3109: --shard needs I/N\n");
          return 2;
        }
        v = argv[++i];
      } else {
        v = a.substr(8);
      }
      unsigned si = 0, sn = 0;
      char tail = 0;
      if (std::sscanf(v.c_str(), "%u/%u%c", &si, &sn, &tail) != 2 || sn == 0 || si >= sn) {
        std::fprintf(stderr, "sweep_p3109: bad --shard '%s' (want I/N with 0 <= I < N)\n", v.c_str());
        return 2;
      }
      numref::g_shard = si;
      numref::g_shards = sn;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
