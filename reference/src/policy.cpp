// numref — policy names, descriptions and the named profiles.     spec §9, §10
#include "numref/policy.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>

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

std::string_view to_string(Round v) { return knob_word(v); }
std::string_view to_string(SrVariant v) { return knob_word(v); }
std::string_view to_string(Overflow v) { return knob_word(v); }
std::string_view to_string(InfSat v) { return knob_word(v); }
std::string_view to_string(NanOut v) { return knob_word(v); }
std::string_view to_string(NanToFinite v) { return knob_word(v); }
std::string_view to_string(E8m0Round v) { return knob_word(v); }
std::string_view to_string(ZeroToNoZero v) { return knob_word(v); }
std::string_view to_string(Negative v) { return knob_word(v); }
std::string_view to_string(Tininess v) { return knob_word(v); }
std::string_view to_string(IntRange v) { return knob_word(v); }
std::optional<Round> parse_round(std::string_view s) { return parse_knob_word<Round>(s); }
std::optional<SrVariant> parse_sr_variant(std::string_view s) { return parse_knob_word<SrVariant>(s); }
std::optional<Overflow> parse_overflow(std::string_view s) { return parse_knob_word<Overflow>(s); }
std::optional<InfSat> parse_inf_sat(std::string_view s) { return parse_knob_word<InfSat>(s); }
std::optional<NanOut> parse_nan_out(std::string_view s) { return parse_knob_word<NanOut>(s); }
std::optional<NanToFinite> parse_nan_to_finite(std::string_view s) { return parse_knob_word<NanToFinite>(s); }
std::optional<E8m0Round> parse_e8m0_round(std::string_view s) { return parse_knob_word<E8m0Round>(s); }
std::optional<ZeroToNoZero> parse_zero_to_nozero(std::string_view s) { return parse_knob_word<ZeroToNoZero>(s); }
std::optional<Negative> parse_negative(std::string_view s) { return parse_knob_word<Negative>(s); }
std::optional<Tininess> parse_tininess(std::string_view s) { return parse_knob_word<Tininess>(s); }
std::optional<IntRange> parse_int_range(std::string_view s) { return parse_knob_word<IntRange>(s); }

namespace {

// §10.2 The text of one knob's value ("?" for a value past the last word).
template <class T>
std::string knob_text(const PolicyKnob<T>& k, const Policy& p) {
  const T v = p.*k.member;
  if constexpr (std::is_same_v<T, int>) return std::to_string(v);  // sr_bits
  const auto i = static_cast<std::size_t>(v);
  return std::string(i < k.words.size() ? k.words[i] : "?");
}

// §10.2 Sets one knob from its text; false for a bad value. A number (sr_bits) is one or two
// decimal digits (validate() checks the range).
template <class T>
bool set_knob(const PolicyKnob<T>& k, std::string_view v, Policy& p) {
  if constexpr (std::is_same_v<T, int>) {  // sr_bits
    if (v.empty() || v.size() > 2) return false;
    int n = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + (c - '0');
    }
    p.*k.member = n;
    return true;
  }
  for (std::size_t i = 0; i < k.words.size(); ++i)
    if (k.words[i] == v) {
      p.*k.member = static_cast<T>(i);
      return true;
    }
  return false;
}

}  // namespace

std::string describe(const Policy& p) {
  std::string s;
  for_each_policy_knob([&](const auto& k) {
    if (k.sr_only && p.round != Round::sr) return;
    if (!s.empty()) s += ' ';
    s += std::string(k.key) + "=" + knob_text(k, p);
  });
  return s;
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
    bool known = false, ok = false;
    for_each_policy_knob([&](const auto& knob) {
      if (knob.key != k) return;
      known = true;
      ok = set_knob(knob, v, p);
    });
    if (!known) return "unknown policy key '" + std::string(k) + "'";
    if (!ok) return "bad value '" + std::string(v) + "' for policy key '" + std::string(k) + "'";
  }
  base = p;
  return std::nullopt;
}

}  // namespace numref
