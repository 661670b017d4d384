// The cast op family (spec §34.3 case generation, §34.4 classification) and the C ABI
// policy mapping (§32.3). Expected values are hand-derived from the spec, shown inline.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ops/cast/cast.hpp"
#include "numref/conform/abi.hpp"
#include "numref/conform/protocol.hpp"

using namespace numref;
using namespace numref::conform;

namespace {
std::shared_ptr<const cast::CastParams> params(FormatId from, FormatId to, const char* prof, const char* extra = "") {
  Policy p = profile(*find_profile(prof)).for_target(format(to));
  EXPECT_FALSE(apply_policy_settings(p, extra).has_value());
  return cast::make(format(from), format(to), prof, p);
}
std::string cls(const cast::CastParams& p, std::uint32_t x, std::uint32_t got, std::uint8_t got_flags = 0xFF) {
  const Result e = p.reference(x, 0);
  return p.classify(x, 0, e, Result{got, got_flags == 0xFF ? e.flags : got_flags});
}
}  // namespace

// §32.3 the C format ids are the §2.1 table order: f32, bf16, f16, f8e4m3fn, f8e5m2,
// f8e8m0fnu, f6e3m2fn, f6e2m3fn, f4e2m1fn, int8.
TEST(Abi, FormatIdsFollowTheSpecTable) {
  const char* names[] = {"f32",       "bf16",     "f16",      "f8e4m3fn", "f8e5m2",
                         "f8e8m0fnu", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn", "int8"};
  const std::uint32_t ids[] = {NUMREF_FMT_F32,      NUMREF_FMT_BF16,      NUMREF_FMT_F16,      NUMREF_FMT_F8E4M3FN,
                               NUMREF_FMT_F8E5M2,   NUMREF_FMT_F8E8M0FNU, NUMREF_FMT_F6E3M2FN, NUMREF_FMT_F6E2M3FN,
                               NUMREF_FMT_F4E2M1FN, NUMREF_FMT_INT8};
  for (int i = 0; i < 10; ++i) {
    ASSERT_NE(format_from_c(ids[i]), nullptr);
    EXPECT_EQ(format_from_c(ids[i])->name, names[i]);
    EXPECT_EQ(c_format(*format_from_c(ids[i])), ids[i]);
  }
  EXPECT_EQ(format_from_c(NUMREF_FMT_COUNT), nullptr);
}

// §32.3 every profile policy (and variants with every knob changed) survives C and back,
// and the C struct names the profile exactly when the policy is the profile's.
TEST(Abi, PolicyRoundTrip) {
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& pr = all_profiles()[i];
    for (const Format& to : kFormats) {
      const Policy& base = pr.for_target(to);
      for (const char* extra : {"", "round=sr sr_bits=7 sr_variant=add", "round=rdn daz=1 ftz=1 tininess=before",
                                "nan=canonical nan_to_finite=negzero e8m0_round=ceil zero_to_nozero=min negative=abs",
                                "overflow=saturate inf_sat=keep int_range=symmetric"}) {
        Policy p = base;
        ASSERT_FALSE(apply_policy_settings(p, extra).has_value());
        std::string text;
        const numref_policy c = to_c_policy(p, to, text);
        const auto back = from_c_policy(c);
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(*back, p) << pr.name << " " << extra;
        EXPECT_EQ(std::string(c.text), describe(p));
        if (std::string(extra).empty()) {
          EXPECT_NE(c.profile, NUMREF_PROFILE_NONE);
        }
      }
    }
  }
  numref_policy bad{};
  bad.round = 9;
  EXPECT_FALSE(from_c_policy(bad).has_value());
}

// §34.4 classifications, each with the hand-derived expected result.
TEST(CastClassify, Classes) {
  // 465 -> f8e4m3fn under cuda_satfinite saturates to 448 = 7e (§6.1); 7f is the NaN.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "cuda_satfinite"), 0x43E88000, 0x7F), "overflow/saturation");
  // 464 is the tie 448 | 480 -> 448 = 7e (§4.2); 7f (NaN) is a tie mistake.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "ocp"), 0x43E80000, 0x7F), "tie");
  // 1 + 2^-8 (3f808000) is the tie 1 | 1 + 2^-7 in bf16 -> 3f80 (even); 3f81 is a tie mistake.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::bf16, "ocp"), 0x3F808000, 0x3F81), "tie");
  // -NaN ffc00000 -> f8e4m3fn keeps its sign under ocp: ff; 7f drops it.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "ocp"), 0xFFC00000, 0x7F), "nan/sign");
  // NaN 7fc00001 -> bf16 payload (§6.3): fraction >> 16 = 0x40 with quiet bit: 7fc0; 7fc1 has another payload.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::bf16, "ocp"), 0x7FC00001, 0x7FC1), "nan/payload");
  // +Inf -> f8e4m3fn under cuda_satfinite is 448 (7e); NaN 7f is an Inf-saturation mistake.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "cuda_satfinite"), 0x7F800000, 0x7F), "inf/saturation");
  // -0 stays -0 = 80 (§6.6); 00 loses the sign.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "ocp"), 0x80000000, 0x00), "zero/sign");
  // -1 -> f8e8m0fnu under ocp is the NaN ff (§7.3); cuda's abs gives 7f.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e8m0fnu, "ocp"), 0xBF800000, 0x7F), "negative");
  // 1.1875 - 2^-20 (3f97fff8) -> f8e4m3fn: direct 1.125 = 39; through bf16 the tie 1.1875
  // rounds to even 1.25 = 3a (§11 double rounding).
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "ocp"), 0x3F97FFF8, 0x3A), "double-rounding/via-bf16");
  // 2^-8 (3b800000) -> f8e4m3fn is the subnormal 02 (2 * 2^-9); 03 is wrong in the subnormal range.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "ocp"), 0x3B800000, 0x03), "subnormal");
  // 1.0 -> 3f800000 -> bf16 3f80 exact; flags 01 instead of 00 is a flag mistake.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::bf16, "ocp"), 0x3F800000, 0x3F80, 0x01), "flags");
  // a code with bits above 8 is not an f8e4m3fn code (§2.4)
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "ocp"), 0x3F800000, 0x138), "code/width");
  // 1.5 (3fc00000) -> f8e4m3fn is exact 3c; 3d is an ordinary rounding mistake.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e4m3fn, "ocp"), 0x3FC00000, 0x3D), "rounding");
  // §34.4 the intermediate holds every target value; a finite-only one counts. 2.51f (4020a3d7)
  // -> f4e2m1fn: direct 3 = 5 (3 is nearer than 2). bf16 2.5078125 and f16 2.509765625 still
  // round to 3; f8e4m3fn (precision 4, max 448 >= 6, quantum 2^-9 <= 2^-1) first rounds to
  // 2.5, the tie 2 | 3 -> even 2 = 4: through f8e4m3fn, the first such format of the table.
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f4e2m1fn, "ocp"), 0x4020A3D7, 0x4), "double-rounding/via-f8e4m3fn");
  // A format too coarse at the bottom is no intermediate: 2^-30 (30800000) -> f8e8m0fnu is
  // exact 61 (bias 127). f16 (precision 11, but quantum 2^-24 > 2^-127) flushes it to 0, and
  // 0 -> f8e8m0fnu is the NaN ff: ff is not named double rounding via f16 but, a NaN result
  // for a finite operand, overflow/saturation. (f16 fails both halves of the rule: its top
  // 65504 is also below 2^127.)
  EXPECT_EQ(cls(*params(FormatId::f32, FormatId::f8e8m0fnu, "ocp"), 0x30800000, 0xFF), "overflow/saturation");
}

TEST(CastClassify, CompareHonoursAnyNanAndMissingFlags) {
  auto p = params(FormatId::f32, FormatId::f8e4m3fn, "ocp");
  const std::uint32_t in[2] = {0xFFC00000, 0}, exp[2] = {0xFF, 0}, got[2] = {0x7F, 0};
  CompareOptions o;
  EXPECT_EQ(compare(*p, {in, 1, 0}, {exp, 1, 0}, {got, 1, 0}, o).outcome, Outcome::fail);
  o.any_nan = true;
  EXPECT_EQ(compare(*p, {in, 1, 0}, {exp, 1, 0}, {got, 1, 0}, o).outcome, Outcome::pass_any_nan);
  // no flags from the backend (kNotReported): codes alone decide
  const std::uint32_t exp2[2] = {0x7E, 0x01}, got2[2] = {0x7E, kNotReported};
  o.any_nan = false;
  EXPECT_EQ(compare(*p, {in, 1, 0}, {exp2, 1, 0}, {got2, 1, 0}, o).outcome, Outcome::pass);
}

// §34.3 edge codes: for f32 -> f8e4m3fn they contain the tie 464 and its neighbours, the
// overflow region, half the smallest subnormal (2^-10 = 3a800000) and the specials.
TEST(CastCases, EdgeCodesCoverTheBoundaries) {
  const auto e = cast::edge_codes(format(FormatId::f32), format(FormatId::f8e4m3fn), false);
  const std::set<std::uint32_t> s(e.begin(), e.end());
  for (std::uint32_t c :
       {0x43E80000u, 0x43E7FFFFu, 0x43E80001u, 0xC3E80000u, 0x43E00000u, 0x3A800000u, 0x3A800001u, 0x3A7FFFFFu,
        0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u, 0x00000000u, 0x80000000u, 0x00000001u, 0x7F7FFFFFu})
    EXPECT_TRUE(s.count(c)) << std::hex << c;
  EXPECT_TRUE(std::is_sorted(e.begin(), e.end()));
}

// §5.1: the r values chosen around the flip threshold really flip the result.
TEST(CastCases, SrThresholdValuesFlip) {
  auto p = params(FormatId::f32, FormatId::f8e4m3fn, "ocp", "round=sr sr_bits=8");
  // x = 1 + 2^-4 + 2^-6 = 1.078125 = 3f8a0000. The E4M3 ulp at 1 is 2^-3, so the discarded
  // fraction is f = 0.078125 / 0.125 = 0.625, f_8 = 160, and the result rounds up iff
  // 160 + r >= 256, i.e. r >= 96.
  const std::uint32_t x = 0x3F8A0000;
  const auto r = cast::sr_edge_r(*p, x);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2], 96u);
  EXPECT_EQ(r[3], 95u);
  EXPECT_EQ(p->reference(x, 96).bits, 0x39u);  // 1.125
  EXPECT_EQ(p->reference(x, 95).bits, 0x38u);  // 1.0
}

// §34.3 generated cases depend only on (seed, params, index): any range is reproducible.
TEST(CastCases, RandomAccessAndSeeds) {
  auto p = params(FormatId::f32, FormatId::f8e5m2, "ml_dtypes", "round=sr sr_bits=16");
  auto src = cast::cases(p, Level::l1, 7);
  const std::size_t n = 3000;
  std::vector<std::uint32_t> a(2 * n), b(2 * 100);
  src->fill(0, n, a.data());
  src->fill(1234, 100, b.data());
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(b[i], a[1234 + i]);
    EXPECT_EQ(b[100 + i], a[n + 1234 + i]);
  }
  auto other = cast::cases(p, Level::l1, 8);
  std::vector<std::uint32_t> c(2 * n);
  other->fill(0, n, c.data());
  EXPECT_NE(a, c);  // the random tail differs with the seed
  EXPECT_GT(src->size(), 65536u);
}

TEST(CastVariants, Level0AndEquivalence) {
  // level 0: the profile, 4 directed / nearest-away modes, SR k=8 in both variants (§34.3)
  const Policy& ocp = profile(ProfileId::ocp).for_target(format(FormatId::f8e4m3fn));
  EXPECT_EQ(cast::variants(Level::l0, ocp, format(FormatId::f32), format(FormatId::f8e4m3fn)).size(), 7u);
  // knobs that cannot matter for f32 -> bf16 are not distinct variants
  Policy a = profile(ProfileId::ocp).wide, b = a;
  b.e8m0_round = E8m0Round::ceil;
  b.int_range = IntRange::symmetric;
  b.nan_to_finite = NanToFinite::max;
  EXPECT_TRUE(cast::equivalent(a, b, format(FormatId::f32), format(FormatId::bf16)));
  b.nan = NanOut::ones;
  EXPECT_FALSE(cast::equivalent(a, b, format(FormatId::f32), format(FormatId::bf16)));
}

// §34.3 the cast pairs of the P3109 rows: with f32 / bf16 / f16 both ways and with the P3109 rows of
// the same width, under ocp (and ieee) only; every other pair is generated as before.
TEST(CastPairs, P3109RowsPairWithWideFormatsAndTheirWidth) {
  const Profile& ocp = profile(ProfileId::ocp);
  const Profile& ml = profile(ProfileId::ml_dtypes);
  const Format& se = format(FormatId::p3109_k8p3se);
  const Format& uf = format(FormatId::p3109_k8p4uf);
  for (Level l : {Level::l0, Level::l1, Level::l2, Level::exhaustive}) {
    for (FormatId w : {FormatId::f32, FormatId::bf16, FormatId::f16}) {
      EXPECT_TRUE(cast::generated_pair(format(w), se, ocp, l));
      EXPECT_TRUE(cast::generated_pair(uf, format(w), profile(ProfileId::ieee), l));
      EXPECT_FALSE(cast::generated_pair(format(w), se, ml, l));
    }
    EXPECT_TRUE(cast::generated_pair(se, uf, ocp, l));
    EXPECT_TRUE(cast::generated_pair(se, se, ocp, l));
    for (FormatId n : {FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f8e8m0fnu, FormatId::f4e2m1fn, FormatId::int8,
                       FormatId::f8e4m3fnuz}) {
      EXPECT_FALSE(cast::generated_pair(format(n), se, ocp, l)) << format(n).name;
      EXPECT_FALSE(cast::generated_pair(uf, format(n), ocp, l)) << format(n).name;
      EXPECT_TRUE(cast::generated_pair(format(n), format(FormatId::f32), ml, l)) << format(n).name;
    }
    EXPECT_TRUE(cast::generated_pair(format(FormatId::f8e4m3fn), format(FormatId::f8e5m2), ml, l));
  }
}

// §34.3 the extra P3109 members (all but gfloat's 12 binary8 ones): with f32 both ways at every
// level; with bf16 / f16 and with the members of their own width K only at level 2 and exhaustive;
// never across widths. §31.4 their golden vectors are the level-1 pairs: f32 -> member, member -> f32.
TEST(CastPairs, ExtraP3109MembersPairWithF32AndFromLevel2WithTheRest) {
  const Profile& ocp = profile(ProfileId::ocp);
  const Format& k8p2se = format(FormatId::p3109_k8p2se);  // extra, width 8
  const Format& k8p3se = format(FormatId::p3109_k8p3se);  // binary8
  const Format& k4p2uf = format(FormatId::p3109_k4p2uf);  // extra, width 4
  const Format& k4p4se = format(FormatId::p3109_k4p4se);  // extra, width 4
  const Format& f32 = format(FormatId::f32);
  EXPECT_TRUE(k8p2se.is_p3109_extra() && k4p2uf.is_p3109_extra() && k4p4se.is_p3109_extra());
  EXPECT_FALSE(k8p3se.is_p3109_extra() || f32.is_p3109_extra());
  for (Level l : {Level::l0, Level::l1, Level::l2, Level::exhaustive}) {
    const bool wide_level = l == Level::l2 || l == Level::exhaustive;
    EXPECT_TRUE(cast::generated_pair(f32, k4p2uf, ocp, l));
    EXPECT_TRUE(cast::generated_pair(k4p2uf, f32, profile(ProfileId::ieee), l));
    EXPECT_FALSE(cast::generated_pair(f32, k4p2uf, profile(ProfileId::ml_dtypes), l));
    for (FormatId w : {FormatId::bf16, FormatId::f16}) {
      EXPECT_EQ(cast::generated_pair(format(w), k4p2uf, ocp, l), wide_level);
      EXPECT_EQ(cast::generated_pair(k8p2se, format(w), ocp, l), wide_level);
      EXPECT_TRUE(cast::generated_pair(format(w), k8p3se, ocp, l));  // the binary8 members as before
    }
    EXPECT_EQ(cast::generated_pair(k8p2se, k8p3se, ocp, l), wide_level);
    EXPECT_EQ(cast::generated_pair(k8p3se, k8p2se, ocp, l), wide_level);
    EXPECT_EQ(cast::generated_pair(k4p2uf, k4p4se, ocp, l), wide_level);
    EXPECT_EQ(cast::generated_pair(k4p2uf, k4p2uf, ocp, l), wide_level);
    EXPECT_TRUE(cast::generated_pair(k8p3se, format(FormatId::p3109_k8p4uf), ocp, l));
    EXPECT_FALSE(cast::generated_pair(k4p2uf, k8p2se, ocp, l));
    EXPECT_FALSE(cast::generated_pair(format(FormatId::f4e2m1fn), k4p2uf, ocp, l));
    EXPECT_FALSE(cast::generated_pair(k4p2uf, format(FormatId::int8), ocp, l));
    // their suites at level 1 take level 0's variants and cases; every other pair keeps its level
    const Level low = l == Level::l1 ? Level::l0 : l;
    EXPECT_EQ(cast::pair_level(f32, k4p2uf, l), low);
    EXPECT_EQ(cast::pair_level(k8p2se, f32, l), low);
    EXPECT_EQ(cast::pair_level(f32, k8p3se, l), l);
    EXPECT_EQ(cast::pair_level(f32, format(FormatId::f8e4m3fn), l), l);
  }
}

// §34.5 departure entries and matching.
TEST(Departures, ParseAndMatch) {
  const auto d = parse_departures("cast bf16 f32 * nan | keeps the payload\n\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].matches("cast", "bf16 f32", "cuda_nosat", "nan/sign"));
  EXPECT_TRUE(d[0].matches("cast", "bf16 f32", "ocp", "nan"));
  EXPECT_FALSE(d[0].matches("cast", "bf16 f32", "ocp", "nanx"));
  EXPECT_FALSE(d[0].matches("cast", "f16 f32", "ocp", "nan/sign"));
  EXPECT_THROW(parse_departure("cast bf16 f32 nan | x"), std::invalid_argument);
  EXPECT_THROW(parse_departure("cast bf16 f32 * nan"), std::invalid_argument);
}

// §33 the runner's parsing of what a pipe backend writes.
TEST(PipeProtocol, Parsing) {
  // §33.2 the greeting: keys in any order; name, ops and flags required; another version or an
  // unknown key refused; then `departure` lines, then `ready`
  const PipeHello h = parse_pipe_hello("numref-pipe 1 name=x version=2 ops=cast,quantize profiles=ocp flags=yes");
  EXPECT_EQ(h.name, "x");
  EXPECT_EQ(h.ops.size(), 2u);
  EXPECT_TRUE(h.flags);
  EXPECT_THROW(parse_pipe_hello("numref-pipe 2 name=x ops=cast flags=no"), ProtocolError);
  EXPECT_THROW(parse_pipe_hello("numref-pipe 1 ops=cast flags=no"), ProtocolError);
  EXPECT_THROW(parse_pipe_hello("numref-pipe 1 name=x ops=cast flags=maybe"), ProtocolError);
  EXPECT_THROW(parse_pipe_hello("numref-pipe 1 name=x ops=cast flags=no color=red"), ProtocolError);
  EXPECT_EQ(parse_pipe_hello("numref-pipe 1 flags=no ops=cast name=y").name, "y");
  // §33.2 abi=1.N (optional): the minor version the backend was written for; absent, the runner
  // takes what its op families prove (§32.2: cast 1.0, quantize 1.1, mor 1.2, gaussws 1.3)
  EXPECT_FALSE(h.abi_minor.has_value());
  EXPECT_EQ(parse_pipe_hello("numref-pipe 1 name=x ops=cast flags=no abi=1.6").abi_minor, 6u);
  EXPECT_EQ(parse_pipe_hello("numref-pipe 1 name=x ops=cast flags=no abi=1.12").abi_minor, 12u);
  for (const char* bad : {"abi=2.6", "abi=1.", "abi=1.x", "abi=16", "abi=1.-1", "abi=1.00001", "abi="})
    EXPECT_THROW(parse_pipe_hello(std::string("numref-pipe 1 name=x ops=cast flags=no ") + bad), ProtocolError) << bad;
  EXPECT_EQ(abi_minor_of_ops({"cast"}), 0u);
  EXPECT_EQ(abi_minor_of_ops({"cast", "quantize"}), 1u);
  EXPECT_EQ(abi_minor_of_ops({"mor-sub", "cast"}), 2u);
  EXPECT_EQ(abi_minor_of_ops({"gaussws"}), 3u);
  EXPECT_EQ(abi_minor_of_ops({"no-such-op"}), 0u);
  std::vector<Departure> deps;
  EXPECT_FALSE(parse_pipe_preamble("departure cast f32 bf16 * nan | because", deps));
  EXPECT_TRUE(parse_pipe_preamble("ready", deps));
  EXPECT_THROW(parse_pipe_preamble("hello", deps), ProtocolError);
  // §33.3 the support query is answered `yes` or `no`
  EXPECT_TRUE(parse_pipe_supports("yes"));
  EXPECT_FALSE(parse_pipe_supports("no"));
  EXPECT_THROW(parse_pipe_supports("error out of memory"), BackendError);

  // §33.4 a batch: n result lines `<y> <ff>` (flags=yes), then `end`; fewer or more results
  // than n before `end`, a malformed result or `error <message>` stop the run
  auto p = params(FormatId::f32, FormatId::f8e4m3fn, "ocp");
  std::vector<std::uint32_t> out(4);
  PipeBatchParser bp(*p, 2, true, out.data());
  EXPECT_FALSE(bp.feed("7e 01"));
  EXPECT_THROW(bp.feed("7e 08"), ProtocolError);  // 08 is not a flag (§9.1)
  EXPECT_FALSE(bp.feed("7f 05"));
  EXPECT_TRUE(bp.feed("end"));
  EXPECT_EQ(out[0], 0x7Eu);
  EXPECT_EQ(out[1], 0x7Fu);
  EXPECT_EQ(out[3], 0x05u);
  PipeBatchParser short_(*p, 2, false, out.data());
  EXPECT_FALSE(short_.feed("7e"));
  EXPECT_THROW(short_.feed("end"), BackendError);  // 1 result for a batch of 2
  PipeBatchParser more(*p, 1, false, out.data());
  EXPECT_FALSE(more.feed("7e"));
  EXPECT_THROW(more.feed("7e"), BackendError);  // §33.4 a second result for a batch of 1
  PipeBatchParser bad(*p, 1, false, out.data());
  EXPECT_THROW(bad.feed("zz"), ProtocolError);
  PipeBatchParser err(*p, 1, false, out.data());
  EXPECT_THROW(err.feed("error the device is busy"), BackendError);
}
