// numref conformance — the `cast` op family (internal).   spec §11 (conversion), §34, §B
//
// A cast suite is (from, to, profile, policy). Its cases are one input code x (and the
// random bits r when round=sr); its outputs are the result code y and the flags. One suite
// (CastParams, make(), cases()) is public: numref/conform/cast.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "numref/conform/cast.hpp"
#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/convert.hpp"

namespace numref::conform::cast {

inline constexpr std::uint32_t kFlagMask = kInexact | kUnderflow | kOverflow | kInvalid;

const Family& family();

// Parses "<from> <to> <profile> <policy>"; throws std::invalid_argument.
std::shared_ptr<const CastParams> parse(std::string_view text);

// §34.3 The pairs the cast family generates under a profile at a level: every pair of formats,
// except that a P3109 row (§2.5) is paired only with the 16- and 32-bit floating-point formats (f32,
// bf16, f16; both directions) and with the P3109 rows of its own width K, and only under the profile
// ocp (or its synonym ieee): the library profiles model no P3109 library. At levels 0 and 1 an extra
// member (Format::is_p3109_extra, the 128 beyond gfloat's binary8 set) pairs with f32 only, both
// directions; level 2 and exhaustive add its bf16, f16 and same-K pairs. §31.4: the golden vector
// files hold the pairs of level 1.
bool generated_pair(const Format& from, const Format& to, const Profile& profile, Level level);
// §34.3 The level whose variants and cases a pair's suites take at `level`: level 0 for a pair with an
// extra P3109 member at level 1 (its f32 pairs keep the level-1 run within its bound), else `level`.
Level pair_level(const Format& from, const Format& to, Level level);

// ---- policy variants (§34.3) ----------------------------------------------------------
struct Variant {
  std::string name;  // "" for the profile itself, else the overriding knobs
  Policy policy;
};
// The policy variants of `level` for profile policy `base` and a conversion from -> to,
// without duplicates (variants equivalent to an earlier one for this target are dropped).
std::vector<Variant> variants(Level level, const Policy& base, const Format& from, const Format& to);
// Two policies give identical results for every conversion from -> to (only the knobs
// that matter for the pair are compared). Used to drop duplicate variants.
bool equivalent(const Policy& a, const Policy& b, const Format& from, const Format& to);

// ---- case generation (§34.3) ----------------------------------------------------------
// The interesting source codes of a pair: source specials, and the source codes next to
// every boundary point of the target (each target value and each midpoint between
// neighbours, the overflow threshold, half the smallest subnormal). Sorted, unique.
// `compact`: a small set (target extremes and the region around 1) for vector files.
std::vector<std::uint32_t> edge_codes(const Format& from, const Format& to, bool compact);
// The SR r values worth testing with x: 0, 2^k-1 and the two either side of the
// threshold 2^k - f_k where the result flips (§5.1).
struct RValues {
  std::uint32_t v[4];
  std::uint32_t n = 0;
  const std::uint32_t* begin() const { return v; }
  const std::uint32_t* end() const { return v + n; }
  std::uint32_t size() const { return n; }
  std::uint32_t operator[](std::uint32_t i) const { return v[i]; }
};
RValues sr_edge_r(const CastParams& p, std::uint32_t x);

// One random source code (TestFloat-like: uniform bits, near a boundary from `edges`,
// an exponent in the target's range with a patterned significand, specials).
std::uint32_t random_code(const Format& from, const Format& to, const std::vector<std::uint32_t>& edges, CaseRng& rng);

// ---- vectors (§31, §B) --------------------------------------------------------------
void generate_vectors(std::vector<VectorFileText>& out);
std::unique_ptr<VectorFileReader> open_divergence(const VectorHeader& h, const std::vector<std::string>& profiles);

// The profiles a conformance run checks by default, in order (ieee is a synonym of ocp).
const std::vector<std::string>& checked_profiles();
// The profiles of the divergence file (§B.1): checked_profiles() and gfloat, gfloat_sat.
const std::vector<std::string>& divergence_profiles();

}  // namespace numref::conform::cast
