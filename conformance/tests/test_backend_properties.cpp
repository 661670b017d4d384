// RapidCheck property tests of the cast family (spec §11) against backends through the C ABI
// (spec §32): the property side of the conformance suite, next to the golden vectors and the
// generated cases of `numref conform`.
//
// The built-in backends reference, cpu-fast and cuda-emu (the CUDA kernels' own arithmetic
// through the host grid walk, spec §A) are the parameter of one test each
// (BuiltIn/BackendPropertiesOf.HoldForEveryClaimedProfile/<name>): each must be built and
// available (all three run on any machine) and is checked in full. Every other backend of the
// build's backend directory (nv-host, ...), or the plugins named in NUMREF_PROPERTY_BACKENDS
// (comma separated .so paths: point it at YOUR backend), is checked by
// BackendProperties.EveryOtherBackendEveryClaimedProfile. Each is loaded with dlopen and checked,
// for every profile it claims and every cast
// between floating-point formats it supports under that profile, on operands drawn by a
// generator that aims at the places where implementations go wrong: arbitrary bit patterns
// (every class: NaN payloads, ±Inf, subnormals, ±0), target values, target midpoints (the
// ties, e.g. f32 464 between f8e4m3fn 448 and 480) and their source neighbours. On a failure
// RapidCheck shrinks the operand and prints the smallest counterexample it finds.
//   P1 agreement: the result (and the flags, when the backend reports them) equals the
//      reference's convert() under the profile's policy — bit for bit;
//   P2 monotone: for non-NaN operands a <= b, result(a) <= result(b) (non-NaN results);
//   P3 sign symmetric: result(-x) = -result(x) (non-NaN operands and results; every profile is symmetric
//      under rne);
//   P4 round trip: a target value widened exactly into the source converts back to itself;
//   P5 faithful: a finite result of a finite operand is the operand rounded down or up in the
//      target (it lies between the two neighbours), or ±max finite under saturation.
// P2–P5 are stated without the reference's rounding (P5 uses the exact value of codes only),
// so they hold for any correct implementation of any profile; P1 pins the bits.
// Another backend that cannot run here ("unavailable: ...", §32.6) is listed and not counted.
// A last test checks that the properties catch the deliberately broken backend (?nansign, ?tie464).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/convert.hpp"
#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref/value.hpp"

namespace numref {
namespace {

// A fixed seed and 300 tests per property, so that a run is reproducible (and the broken
// backend's defects are found the same way every time); RC_PARAMS set by the caller wins.
const int kRcParams = (setenv("RC_PARAMS", "seed=20261123 max_success=300", 0), 0);

struct Loaded {
  std::string path;
  void* handle = nullptr;
  const numref_backend* b = nullptr;
  std::string unavailable;  // reason, when open answered "unavailable: ..."
  ~Loaded() {
    if (b && b->close) b->close(b->ctx);
    if (handle) dlclose(handle);
  }
};

std::unique_ptr<Loaded> load(const std::string& path, const std::string& args = "") {
  auto l = std::make_unique<Loaded>();
  l->path = path;
  l->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!l->handle) throw std::runtime_error("dlopen " + path + ": " + dlerror());
  auto ver = reinterpret_cast<numref_backend_abi_version_fn>(dlsym(l->handle, "numref_backend_abi_version"));
  auto open = reinterpret_cast<numref_backend_open_fn>(dlsym(l->handle, "numref_backend_open"));
  if (!ver || !open) throw std::runtime_error(path + ": missing numref_backend_* symbols");
  if (ver() != NUMREF_BACKEND_ABI_VERSION) throw std::runtime_error(path + ": ABI version " + std::to_string(ver()));
  char err[512] = {0};
  l->b = open(args.c_str(), err, sizeof err);
  if (!l->b) {
    const std::string e = err;
    if (e.rfind("unavailable: ", 0) == 0) {
      l->unavailable = e;
      return l;
    }
    throw std::runtime_error(path + ": open failed: " + e);
  }
  return l;
}

std::vector<std::string> backend_paths() {
  std::vector<std::string> out;
  if (const char* e = std::getenv("NUMREF_PROPERTY_BACKENDS"); e && *e) {
    std::stringstream ss(e);
    for (std::string p; std::getline(ss, p, ',');)
      if (!p.empty()) out.push_back(p);
    return out;
  }
  for (const auto& ent : std::filesystem::directory_iterator(NUMREF_BACKEND_DIR)) {
    const std::string f = ent.path().filename().string();
    if (f.rfind("libnumref_backend_", 0) == 0 && ent.path().extension() == ".so") out.push_back(ent.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool is_float(const Format& f) { return !f.is_integer() && f.is_signed && f.has_subnormals; }

// Exact value order key of a non-NaN code (±0 equal): sign-magnitude to a signed integer is
// monotone in value for every floating-point format (§3.1: magnitude codes grow with value).
std::int64_t order_key(std::uint32_t c, const Format& f) {
  const std::int64_t mag = c & f.mag_mask();
  return (c & f.sign_bit()) ? -mag : mag;
}
bool is_nan(std::uint32_t c, const Format& f) { return decode(c, f).cls == Class::nan; }

struct Pair {
  const Format* from;
  const Format* to;
  Policy p;
  numref_policy cp;
  std::string text;
  std::string profile;
};

// The source operand generator (see the header).
rc::Gen<std::uint32_t> operands(const Format& from, const Format& to) {
  const std::uint32_t width_mask = from.bits >= 32 ? 0xFFFFFFFFu : ((1u << from.bits) - 1u);
  auto raw = rc::gen::map(rc::gen::arbitrary<std::uint32_t>(), [=](std::uint32_t x) { return x & width_mask; });
  // A finite target code c (either sign), then its value, its midpoint to the next larger
  // magnitude (the value grid continues past max finite), or that midpoint ± one source ulp.
  auto grid = rc::gen::map(
      rc::gen::tuple(rc::gen::oneOf(rc::gen::inRange<std::uint32_t>(0, to.mag_mask() + 1),  // any magnitude,
                                    rc::gen::inRange<std::uint32_t>(0, 4),                  // the bottom,
                                    rc::gen::inRange<std::uint32_t>(encode_max_finite(false, to) - 2u,
                                                                    encode_max_finite(false, to) + 1u)),  // the top
                     rc::gen::inRange(0, 5), rc::gen::arbitrary<bool>()),
      [&from, &to](const std::tuple<std::uint32_t, int, bool>& t) -> std::uint32_t {
        const auto [mag, kind, neg] = t;
        const Decoded d = decode(mag, to);
        if (d.cls == Class::nan || d.cls == Class::inf) return from.canonical_nan;
        // value = sig * 2^exp; the midpoint to the next magnitude is (2 sig + 1) * 2^(exp - 1)
        // (exp is the quantum of the code's binade, so sig + 1 is the next grid point).
        std::uint64_t sig = d.sig;
        int exp = d.exp;
        if (kind >= 1) {
          sig = 2 * sig + 1;
          exp -= 1;
        }
        const auto code = encode_exact(neg, sig, exp, from);
        if (!code) return from.canonical_nan;
        if (kind == 2 && (*code & from.mag_mask()) != 0) return *code - 1u;               // one source ulp below
        if (kind == 3 && (*code & from.mag_mask()) < from.mag_mask()) return *code + 1u;  // above
        return *code;
      });
  // Specials of the source: ±0, ±Inf, NaNs of both signs (quiet, and a payload), ±max
  // finite, ±the smallest subnormal.
  std::vector<std::uint32_t> sp;
  for (std::uint32_t sign : {0u, from.sign_bit()}) {
    sp.push_back(sign);
    sp.push_back(sign | from.canonical_nan);
    sp.push_back(sign | from.mag_mask());
    sp.push_back(sign | 1u);
    sp.push_back(encode_max_finite(sign != 0, from));
    if (from.has_inf()) sp.push_back(sign | (from.exp_all_ones() << from.man_bits));
  }
  auto special = rc::gen::elementOf(sp);
  return rc::gen::oneOf(raw, grid, grid, special);
}

// P5 helper: the largest target value <= v and the smallest >= v, by exhaustive search over
// the target's codes (at most 8 bits here, or 16: fine for a property test).
struct Neighbours {
  std::int64_t lo, hi;  // order keys
};

class BackendProperties {
 public:
  explicit BackendProperties(const Loaded& l) : l_(l) {}
  std::vector<Pair> pairs() const {
    std::vector<Pair> out;
    std::stringstream ss(l_.b->profiles ? l_.b->profiles : "");
    for (std::string name; ss >> name;) {
      const auto id = find_profile(name);
      if (!id) continue;
      const Profile& prof = profile(*id);
      for (const Format& from : kFormats)
        for (const Format& to : kFormats) {
          if (!is_float(from) || !is_float(to) || to.man_bits >= from.man_bits || to.bits > 16) continue;
          // §2.5 the extra P3109 members: test_p3109_members and p3109_diff.py (the 12 binary8 ones stay)
          if (from.is_p3109_extra() || to.is_p3109_extra()) continue;
          Pair pr{&from, &to, prof.for_target(to), {}, {}, name};
          pr.cp = conform::to_c_policy(pr.p, to, pr.text);
          if (l_.b->cast_supported(l_.b->ctx, conform::c_format(from), conform::c_format(to), &pr.cp))
            out.push_back(std::move(pr));
        }
    }
    return out;
  }
  // One conversion through the backend.
  std::pair<std::uint32_t, std::uint8_t> cast(const Pair& pr, std::uint32_t x) const {
    std::uint32_t out = 0;
    std::uint8_t flags = 0;
    const bool has_flags = (l_.b->caps & NUMREF_CAP_FLAGS) != 0;
    const auto n = l_.b->cast(l_.b->ctx, conform::c_format(*pr.from), conform::c_format(*pr.to), &pr.cp, 1, &x, nullptr,
                              &out, has_flags ? &flags : nullptr);
    if (n != 1) throw std::runtime_error("backend cast returned " + std::to_string(n));
    return {out, flags};
  }
  bool flags() const { return (l_.b->caps & NUMREF_CAP_FLAGS) != 0; }

 private:
  const Loaded& l_;
};

std::string describe(const Pair& pr) {
  return std::string(pr.from->name) + " -> " + std::string(pr.to->name) + " [" + pr.profile + "]";
}

// Runs P1–P5 for one pair; returns false at the first property that fails.
bool check_pair(const BackendProperties& bp, const Pair& pr) {
  const Format& from = *pr.from;
  const Format& to = *pr.to;
  const Converter ref(from, to, pr.p);
  const std::string tag = describe(pr);
  bool ok = true;
  ok = ok && rc::check("P1 agreement " + tag, [&] {  // 32 operands per test: 9 600 per check
         const auto xs = *rc::gen::container<std::vector<std::uint32_t>>(32, operands(from, to));
         for (std::uint32_t x : xs) {
           const auto [got, fl] = bp.cast(pr, x);
           const Result want = ref(x);
           RC_ASSERT(got == want.bits);
           if (bp.flags()) RC_ASSERT(fl == want.flags);
         }
       });
  ok = ok && rc::check("P2 monotone " + tag, [&] {
         const std::uint32_t a = *operands(from, to), b = *operands(from, to);
         RC_SUCCEED_IF(is_nan(a, from) || is_nan(b, from));
         const auto ra = bp.cast(pr, a).first, rb = bp.cast(pr, b).first;
         RC_SUCCEED_IF(is_nan(ra, to) || is_nan(rb, to));
         if (order_key(a, from) <= order_key(b, from))
           RC_ASSERT(order_key(ra, to) <= order_key(rb, to));
         else
           RC_ASSERT(order_key(ra, to) >= order_key(rb, to));
       });
  if (pr.p.round == Round::rne || pr.p.round == Round::rtz || pr.p.round == Round::rna)
    ok = ok && rc::check("P3 sign symmetric " + tag, [&] {
           const std::uint32_t x = *operands(from, to);
           // (a NaN into a format without NaN becomes a finite value of the policy's sign, §6.4)
           RC_SUCCEED_IF(is_nan(x, from) || is_nan(x ^ from.sign_bit(), from));  // fnuz: -0 is the NaN
           const auto r1 = bp.cast(pr, x).first, r2 = bp.cast(pr, x ^ from.sign_bit()).first;
           RC_SUCCEED_IF(is_nan(r1, to) || is_nan(r2, to));
           if ((r1 & to.mag_mask()) == 0 && !to.has_negative_zero())
             RC_ASSERT(r2 == r1);  // fnuz: +0 only (§6.6)
           else
             RC_ASSERT(r2 == (r1 ^ to.sign_bit()));
         });
  ok = ok && rc::check("P4 round trip " + tag, [&] {
         const std::uint32_t c = *rc::gen::inRange<std::uint32_t>(0, (to.bits >= 32 ? 0u : (1u << to.bits)));
         const Decoded d = decode(c, to);
         RC_SUCCEED_IF(d.cls == Class::nan || d.cls == Class::inf);
         const auto wide = encode_exact(d.sign, d.sig, d.exp, from);
         RC_SUCCEED_IF(!wide.has_value());  // not representable in the source
         RC_SUCCEED_IF(pr.p.daz && decode(*wide, from).cls == Class::subnormal);
         const auto r = bp.cast(pr, *wide).first;
         if (d.cls == Class::zero || (pr.p.ftz && d.cls == Class::subnormal))
           RC_ASSERT(order_key(r, to) == 0 || order_key(r, to) == order_key(c, to));
         else
           RC_ASSERT(r == c);
       });
  ok = ok && rc::check("P5 faithful " + tag, [&] {
         const std::uint32_t x = *operands(from, to);
         const Decoded dx = decode(x, from);
         RC_SUCCEED_IF(dx.cls != Class::normal && dx.cls != Class::subnormal);
         RC_SUCCEED_IF(pr.p.daz && dx.cls == Class::subnormal);
         const auto r = bp.cast(pr, x).first;
         const Decoded dr = decode(r, to);
         RC_SUCCEED_IF(dr.cls == Class::nan || dr.cls == Class::inf);
         RC_SUCCEED_IF(pr.p.ftz && dr.cls == Class::zero);
         // Exact comparison of two values sig·2^exp (integers only): by the exponent of the
         // leading bit, then by the significands aligned to it (both below 2^25 here).
         auto cmp = [](const Decoded& a, const Decoded& b) {  // sign-aware a <=> b
           auto mag_cmp = [](const Decoded& u, const Decoded& v) {
             const bool uz = u.cls == Class::zero || u.sig == 0, vz = v.cls == Class::zero || v.sig == 0;
             if (uz || vz) return uz && vz ? 0 : uz ? -1 : 1;
             const int lu = 64 - __builtin_clzll(u.sig), lv = 64 - __builtin_clzll(v.sig);
             const int tu = u.exp + lu, tv = v.exp + lv;
             if (tu != tv) return tu < tv ? -1 : 1;
             const std::uint64_t su = u.sig << (64 - lu), sv = v.sig << (64 - lv);  // aligned at bit 63
             return su < sv ? -1 : su > sv ? 1 : 0;
           };
           const bool an = a.sign && !(a.cls == Class::zero), bn = b.sign && !(b.cls == Class::zero);
           if (an != bn) return an ? -1 : 1;
           const int m = mag_cmp(a, b);
           return an ? -m : m;
         };
         // r's neighbours in the target: r - 1 ulp and r + 1 ulp (by magnitude code); x must lie
         // strictly between them (or r is ±max finite, which saturation may return from above).
         const std::uint32_t rmag = r & to.mag_mask();
         const bool rneg = (r & to.sign_bit()) != 0;
         const bool at_max = rmag == (encode_max_finite(false, to) & to.mag_mask());
         if (rmag > 0) {
           const Decoded below = decode((rmag - 1u) | (rneg ? to.sign_bit() : 0u), to);
           const bool inside = rneg ? cmp(dx, below) < 0 : cmp(dx, below) > 0;
           RC_ASSERT(inside);
         }
         if (!at_max) {
           const Decoded above = decode((rmag + 1u) | (rneg ? to.sign_bit() : 0u), to);
           const bool inside = rneg ? cmp(dx, above) > 0 : cmp(dx, above) < 0;
           RC_ASSERT(inside);
         }
       });
  return ok;
}

// The built-in backends every build has; each runs on any machine.
constexpr const char* kBuiltIn[] = {"reference", "cpu-fast", "cuda-emu"};

std::string plugin_path(std::string name) {  // "cuda-emu" -> <backend dir>/libnumref_backend_cuda_emu.so
  std::replace(name.begin(), name.end(), '-', '_');
  return std::string(NUMREF_BACKEND_DIR) + "/libnumref_backend_" + name + ".so";
}

// Checks every pair of a loaded backend; returns the number of pairs checked.
std::size_t check_backend(const Loaded& l) {
  const BackendProperties bp(l);
  const auto prs = bp.pairs();
  EXPECT_FALSE(prs.empty()) << l.path << " supports no floating-point cast under the profiles it claims";
  for (const auto& pr : prs) EXPECT_TRUE(check_pair(bp, pr)) << l.path << ": " << describe(pr);
  return prs.size();
}

class BackendPropertiesOf : public ::testing::TestWithParam<const char*> {};

TEST_P(BackendPropertiesOf, HoldForEveryClaimedProfile) {
  (void)kRcParams;
  const std::string path = plugin_path(GetParam());
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is not built";
  const auto l = load(path);
  ASSERT_NE(l->b, nullptr) << path << ": " << l->unavailable;
  EXPECT_STREQ(l->b->name, GetParam());
  const std::size_t n = check_backend(*l);
  std::printf("%s: P1-P5 on %zu (source, target, profile) casts\n", GetParam(), n);
  EXPECT_GE(n, 10u) << "fewer casts than every built-in backend takes";
}

INSTANTIATE_TEST_SUITE_P(BuiltIn, BackendPropertiesOf, ::testing::ValuesIn(kBuiltIn),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string s = i.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

TEST(BackendProperties, EveryOtherBackendEveryClaimedProfile) {
  (void)kRcParams;
  const bool named = std::getenv("NUMREF_PROPERTY_BACKENDS") != nullptr;
  int checked = 0;
  for (const auto& path : backend_paths()) {
    if (!named &&
        std::any_of(std::begin(kBuiltIn), std::end(kBuiltIn), [&](const char* b) { return plugin_path(b) == path; }))
      continue;  // checked by BackendPropertiesOf
    SCOPED_TRACE(path);
    const auto l = load(path);
    if (!l->b) {
      std::printf("[ SKIPPED  ] %s: %s\n", path.c_str(), l->unavailable.c_str());
      continue;
    }
    check_backend(*l);
    ++checked;
  }
  if (named)
    EXPECT_GT(checked, 0) << "no backend of NUMREF_PROPERTY_BACKENDS could run";
  else if (checked == 0)
    GTEST_SKIP() << "no backend beyond the built-in ones in " << NUMREF_BACKEND_DIR;
}

// The properties must catch real defects: the broken backend's NaN-sign and tie defects.
TEST(BackendProperties, CatchTheBrokenBackend) {
  for (const char* defect : {"nansign", "tie464"}) {
    SCOPED_TRACE(defect);
    const auto l = load(NUMREF_BROKEN_SO, defect);
    ASSERT_NE(l->b, nullptr);
    const BackendProperties bp(*l);
    bool any_failed = false;
    for (const auto& pr : bp.pairs()) {
      if (std::string(pr.from->name) != "f32" || std::string(pr.to->name) != "f8e4m3fn") continue;
      any_failed |= !check_pair(bp, pr);
    }
    EXPECT_TRUE(any_failed) << "no property caught ?" << defect;
  }
}

}  // namespace
}  // namespace numref
