// numref — policy names, descriptions and the named profiles.     spec §9, §10
#include "numref/policy.hpp"

#include <array>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace numref {

std::string flags_to_string(std::uint8_t flags) {
  // §9: fixed-position letters in SoftFloat order: v(invalid) o(overflow) u(underflow) x(inexact)
  std::string s = "----";
  if (flags & kInvalid) s[0] = 'v';
  if (flags & kOverflow) s[1] = 'o';
  if (flags & kUnderflow) s[2] = 'u';
  if (flags & kInexact) s[3] = 'x';
  return s;
}

namespace {

template <class E, std::size_t N>
struct Names {
  std::array<std::pair<E, std::string_view>, N> items;
  std::string_view name(E e) const {
    for (auto& [v, n] : items)
      if (v == e) return n;
    return "?";
  }
  std::optional<E> parse(std::string_view s) const {
    for (auto& [v, n] : items)
      if (n == s) return v;
    return std::nullopt;
  }
};

constexpr Names<Round, 6> kRound{{{{Round::rne, "rne"},
                                   {Round::rtz, "rtz"},
                                   {Round::rup, "rup"},
                                   {Round::rdn, "rdn"},
                                   {Round::rna, "rna"},
                                   {Round::sr, "sr"}}}};
constexpr Names<SrVariant, 2> kSrVariant{{{{SrVariant::fraction, "fraction"}, {SrVariant::add, "add"}}}};
constexpr Names<Overflow, 2> kOverflowN{{{{Overflow::saturate, "saturate"}, {Overflow::nonsat, "nonsat"}}}};
constexpr Names<InfSat, 2> kInfSat{{{{InfSat::max, "max"}, {InfSat::keep, "keep"}}}};
constexpr Names<NanOut, 4> kNanOut{{{{NanOut::sign, "sign"},
                                     {NanOut::canonical, "canonical"},
                                     {NanOut::ones, "ones"},
                                     {NanOut::payload, "payload"}}}};
constexpr Names<NanToFinite, 3> kNanToFinite{
    {{{NanToFinite::zero, "zero"}, {NanToFinite::negzero, "negzero"}, {NanToFinite::max, "max"}}}};
constexpr Names<E8m0Round, 5> kE8m0Round{{{{E8m0Round::follow, "follow"},
                                           {E8m0Round::floor, "floor"},
                                           {E8m0Round::ceil, "ceil"},
                                           {E8m0Round::even, "even"},
                                           {E8m0Round::tiesup, "tiesup"}}}};
constexpr Names<ZeroToNoZero, 2> kZero{{{{ZeroToNoZero::nan, "nan"}, {ZeroToNoZero::min, "min"}}}};
constexpr Names<Negative, 2> kNegative{{{{Negative::nan, "nan"}, {Negative::abs, "abs"}}}};
constexpr Names<Tininess, 2> kTininess{{{{Tininess::after, "after"}, {Tininess::before, "before"}}}};
constexpr Names<IntRange, 2> kIntRange{{{{IntRange::full, "full"}, {IntRange::symmetric, "symmetric"}}}};

// ---- §10 profiles -------------------------------------------------------------------

Policy make_ocp() { return Policy{}; }

Policy cuda_narrow(Overflow o) {
  Policy p;
  p.round = Round::rne;
  p.overflow = o;
  p.inf_sat = InfSat::max;          // __NV_SATFINITE: +-Inf -> +-max finite
  p.nan = NanOut::ones;            // NaN -> 0x7F for E4M3 and E5M2, sign dropped
  p.nan_to_finite = NanToFinite::max;  // __nv_cvt_float_to_fp4/fp6: NaN -> +max
  p.e8m0_round = E8m0Round::floor;     // cudaRoundZero (cudaRoundPosInf = ceil)
  p.zero_to_nozero = ZeroToNoZero::min;  // 0 -> 0x00
  p.negative = Negative::abs;          // the sign bit is ignored
  return p;
}
Policy cuda_wide() {
  Policy p;
  p.overflow = Overflow::nonsat;  // __float2bfloat16_rn / __float2half_rn: IEEE, overflow -> Inf
  p.nan = NanOut::ones;       // NaN -> 0x7FFF
  return p;
}
Policy mld_narrow() {
  Policy p;
  p.overflow = Overflow::nonsat;
  p.inf_sat = InfSat::keep;  // Inf stays NaN (E4M3) / Inf (E5M2)
  p.nan = NanOut::sign;
  p.nan_to_finite = NanToFinite::negzero;  // observed: float4_e2m1fn(nan) == 0x8
  p.e8m0_round = E8m0Round::tiesup;
  p.zero_to_nozero = ZeroToNoZero::nan;
  p.negative = Negative::nan;
  return p;
}
Policy mld_wide() {
  Policy p;
  p.overflow = Overflow::nonsat;
  p.nan = NanOut::sign;  // Eigen bfloat16: 0x7FC0 / 0xFFC0
  return p;
}

const std::array<Profile, kProfileCount>& profiles() {
  static const std::array<Profile, kProfileCount> table = {{
      {ProfileId::ocp, "ocp",
       "OCP OFP8 v1.0 / MX v1.0 with IEEE 754-2019 defaults: RNE, non-saturating, NaN payload kept",
       make_ocp(), make_ocp()},
      {ProfileId::ieee, "ieee", "IEEE 754-2019 conversion semantics for every target (same as ocp today)",
       make_ocp(), make_ocp()},
      {ProfileId::cuda_satfinite, "cuda_satfinite",
       "CUDA cuda_fp8.h host path with __NV_SATFINITE; __float2bfloat16_rn / __float2half_rn for wide targets",
       cuda_narrow(Overflow::saturate), cuda_wide()},
      {ProfileId::cuda_nosat, "cuda_nosat",
       "CUDA cuda_fp8.h host path with __NV_NOSAT; __float2bfloat16_rn / __float2half_rn for wide targets",
       cuda_narrow(Overflow::nonsat), cuda_wide()},
      {ProfileId::ml_dtypes, "ml_dtypes", "NumPy ml_dtypes 0.5/0.6 astype() casts", mld_narrow(), mld_wide()},
  }};
  return table;
}

}  // namespace

const Profile& profile(ProfileId id) { return profiles()[static_cast<std::size_t>(id)]; }
const Profile* all_profiles() { return profiles().data(); }
std::optional<ProfileId> find_profile(std::string_view name) {
  for (const auto& p : profiles())
    if (p.name == name) return p.id;
  return std::nullopt;
}

std::string_view to_string(Round r) { return kRound.name(r); }
std::string_view to_string(SrVariant v) { return kSrVariant.name(v); }
std::string_view to_string(Overflow o) { return kOverflowN.name(o); }
std::string_view to_string(InfSat v) { return kInfSat.name(v); }
std::string_view to_string(NanOut v) { return kNanOut.name(v); }
std::string_view to_string(NanToFinite v) { return kNanToFinite.name(v); }
std::string_view to_string(E8m0Round v) { return kE8m0Round.name(v); }
std::string_view to_string(ZeroToNoZero v) { return kZero.name(v); }
std::string_view to_string(Negative v) { return kNegative.name(v); }
std::string_view to_string(Tininess v) { return kTininess.name(v); }
std::string_view to_string(IntRange v) { return kIntRange.name(v); }
std::optional<Round> parse_round(std::string_view s) { return kRound.parse(s); }
std::optional<SrVariant> parse_sr_variant(std::string_view s) { return kSrVariant.parse(s); }
std::optional<Overflow> parse_overflow(std::string_view s) { return kOverflowN.parse(s); }
std::optional<InfSat> parse_inf_sat(std::string_view s) { return kInfSat.parse(s); }
std::optional<NanOut> parse_nan_out(std::string_view s) { return kNanOut.parse(s); }
std::optional<NanToFinite> parse_nan_to_finite(std::string_view s) { return kNanToFinite.parse(s); }
std::optional<E8m0Round> parse_e8m0_round(std::string_view s) { return kE8m0Round.parse(s); }
std::optional<ZeroToNoZero> parse_zero_to_nozero(std::string_view s) { return kZero.parse(s); }
std::optional<Negative> parse_negative(std::string_view s) { return kNegative.parse(s); }
std::optional<Tininess> parse_tininess(std::string_view s) { return kTininess.parse(s); }
std::optional<IntRange> parse_int_range(std::string_view s) { return kIntRange.parse(s); }

std::string describe(const Policy& p) {
  std::ostringstream o;
  o << "round=" << to_string(p.round);
  if (p.round == Round::sr) o << " sr_bits=" << p.sr_bits << " sr_variant=" << to_string(p.sr_variant);
  o << " overflow=" << to_string(p.overflow) << " inf_sat=" << to_string(p.inf_sat)
    << " nan=" << to_string(p.nan) << " nan_to_finite=" << to_string(p.nan_to_finite)
    << " e8m0_round=" << to_string(p.e8m0_round) << " zero_to_nozero=" << to_string(p.zero_to_nozero)
    << " negative=" << to_string(p.negative) << " daz=" << (p.daz ? 1 : 0) << " ftz=" << (p.ftz ? 1 : 0)
    << " tininess=" << to_string(p.tininess) << " int_range=" << to_string(p.int_range);
  return o.str();
}

std::optional<std::string> apply_policy_settings(Policy& base, std::string_view settings) {
  Policy p = base;
  std::size_t i = 0;
  while (i < settings.size()) {
    while (i < settings.size() && settings[i] == ' ') ++i;
    if (i >= settings.size()) break;
    std::size_t j = settings.find(' ', i);
    if (j == std::string_view::npos) j = settings.size();
    const std::string_view kv = settings.substr(i, j - i);
    i = j;
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) return "policy setting '" + std::string(kv) + "' is not key=value";
    const std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    auto bad = [&] { return "bad value '" + std::string(v) + "' for policy key '" + std::string(k) + "'"; };
    auto set = [&](auto parsed, auto& field) -> bool {
      if (!parsed) return false;
      field = *parsed;
      return true;
    };
    bool ok = true;
    if (k == "round") ok = set(parse_round(v), p.round);
    else if (k == "sr_variant") ok = set(parse_sr_variant(v), p.sr_variant);
    else if (k == "overflow") ok = set(parse_overflow(v), p.overflow);
    else if (k == "inf_sat") ok = set(parse_inf_sat(v), p.inf_sat);
    else if (k == "nan") ok = set(parse_nan_out(v), p.nan);
    else if (k == "nan_to_finite") ok = set(parse_nan_to_finite(v), p.nan_to_finite);
    else if (k == "e8m0_round") ok = set(parse_e8m0_round(v), p.e8m0_round);
    else if (k == "zero_to_nozero") ok = set(parse_zero_to_nozero(v), p.zero_to_nozero);
    else if (k == "negative") ok = set(parse_negative(v), p.negative);
    else if (k == "tininess") ok = set(parse_tininess(v), p.tininess);
    else if (k == "int_range") ok = set(parse_int_range(v), p.int_range);
    else if (k == "daz" || k == "ftz") {
      if (v != "0" && v != "1") return bad();
      (k == "daz" ? p.daz : p.ftz) = (v == "1");
    } else if (k == "sr_bits") {
      int n = 0;
      if (v.empty() || v.size() > 2) return bad();
      for (char c : v) {
        if (c < '0' || c > '9') return bad();
        n = n * 10 + (c - '0');
      }
      p.sr_bits = n;
    } else {
      return "unknown policy key '" + std::string(k) + "'";
    }
    if (!ok) return bad();
  }
  base = p;
  return std::nullopt;
}

}  // namespace numref
