// numref — policy names and descriptions, the profiles' accessors (the table: numref/profiles.hpp).   spec §9, §10
#include "numref/policy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
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

// §10.2 Is `name` one of the space-separated names of `list` ("*" matches every format)?
bool names_format(std::string_view list, const Format& f) {
  while (!list.empty()) {
    const std::size_t end = std::min(list.find(' '), list.size());
    const std::string_view n = list.substr(0, end);
    if (n == "*" || n == f.name) return true;
    list.remove_prefix(std::min(end + 1, list.size()));
  }
  return false;
}

}  // namespace

bool Recipe::takes(const Format& element) const { return names_format(elements, element); }  // §10.4

bool ProfileRule::matches(const Format& f, const Format& t) const {
  return names_format(from, f) && names_format(to, t);
}

Policy Profile::for_cast(const Format& from, const Format& to) const {
  Policy p = for_target(to);
  for (const ProfileRule& r : rules)
    if (r.matches(from, to))
      if (const auto err = apply_policy_settings(p, r.settings))
        throw std::logic_error("profile " + std::string(name) + ": rule '" + std::string(r.settings) + "': " + *err);
  return p;
}

const Profile& profile(ProfileId id) { return profile_table::kProfiles[static_cast<std::size_t>(id)]; }
const Profile* all_profiles() { return profile_table::kProfiles; }

std::string profile_names() {
  std::string s;
  for (int i = 0; i < kProfileCount; ++i) {
    if (!s.empty()) s += ", ";
    s += all_profiles()[i].name;
  }
  return s;
}
std::optional<ProfileId> find_profile(std::string_view name) {
  for (const auto& p : profile_table::kProfiles)
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
std::string_view to_string(E8m0Low v) { return knob_word(v); }
std::string_view to_string(InfNan v) { return knob_word(v); }
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
std::optional<E8m0Low> parse_e8m0_low(std::string_view s) { return parse_knob_word<E8m0Low>(s); }
std::optional<InfNan> parse_inf_nan(std::string_view s) { return parse_knob_word<InfNan>(s); }

namespace {

// ---- §10.3 / §19.8 the text form of a knob struct, written once for both tables -----------

// The text of one knob's value ("?" for a value past the last word).
template <class S, class T>
std::string knob_text(const KnobRow<S, T>& k, const S& s) {
  const T v = s.*k.member;
  if constexpr (std::is_same_v<T, int>) return std::to_string(v);  // sr_bits
  const auto i = static_cast<std::size_t>(v);
  return std::string(i < k.words.size() ? k.words[i] : "?");
}

// Sets one knob from its text; false for a bad value. A number (sr_bits) is one or two decimal
// digits (validate() checks the range).
template <class S, class T>
bool set_knob(const KnobRow<S, T>& k, std::string_view v, S& s) {
  if constexpr (std::is_same_v<T, int>) {  // sr_bits
    if (v.empty() || v.size() > 2) return false;
    int n = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + (c - '0');
    }
    s.*k.member = n;
    return true;
  }
  for (std::size_t i = 0; i < k.words.size(); ++i)
    if (k.words[i] == v) {
      s.*k.member = static_cast<T>(i);
      return true;
    }
  return false;
}

// "key=word key=word ...": the rows of `table` that keep(row) accepts, in table order.
template <class S, class Table, class Keep>
std::string knobs_text(const S& s, const Table& table, Keep&& keep) {
  std::string out;
  for_each_knob_row(table, [&](const auto& row) {
    if (!keep(row)) return;
    if (!out.empty()) out += ' ';
    out += row.key;
    out += '=';
    out += knob_text(row, s);
  });
  return out;
}

// Splits "key=word key=word" and calls set(key, word) for each: set returns 0 (applied),
// 1 (unknown key) or 2 (bad word). Returns an error naming the setting, or nullopt. A key given
// twice is an error naming it (§10.3), never "the last one wins".
template <class Set>
std::optional<std::string> for_each_setting(std::string_view settings, std::string_view what, Set&& set) {
  std::vector<std::string_view> seen;
  std::size_t i = 0;
  while (i < settings.size()) {
    while (i < settings.size() && settings[i] == ' ') ++i;
    if (i >= settings.size()) break;
    std::size_t j = settings.find(' ', i);
    if (j == std::string_view::npos) j = settings.size();
    const std::string_view kv = settings.substr(i, j - i);
    i = j;
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) return std::string(what) + " setting '" + std::string(kv) + "' is not key=value";
    const std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), k) != seen.end())
      return std::string(what) + " key '" + std::string(k) + "' given twice; give each key once";
    seen.push_back(k);
    const int r = set(k, v);
    if (r == 1) return "unknown " + std::string(what) + " key '" + std::string(k) + "'";
    if (r == 2) return "bad value '" + std::string(v) + "' for " + std::string(what) + " key '" + std::string(k) + "'";
  }
  return std::nullopt;
}

// Applies "key=word ..." settings of the rows of `table` on top of `base` (all or nothing).
template <class S, class Table>
std::optional<std::string> apply_settings(S& base, std::string_view settings, std::string_view what,
                                          const Table& table) {
  S s = base;
  const auto err = for_each_setting(settings, what, [&](std::string_view key, std::string_view v) {
    int r = 1;
    for_each_knob_row(table, [&](const auto& row) {
      if (row.key == key) r = set_knob(row, v, s) ? 0 : 2;
    });
    return r;
  });
  if (err) return err;
  base = s;
  return std::nullopt;
}

}  // namespace

// §10.3 sr_bits and sr_variant are written only with round=sr.
std::string describe(const Policy& p) {
  return knobs_text(p, kPolicyKnobs, [&](const auto& row) { return !row.sr_only || p.round == Round::sr; });
}
std::optional<std::string> apply_policy_settings(Policy& base, std::string_view settings) {
  return apply_settings(base, settings, "policy", kPolicyKnobs);
}

// §19.8
std::string describe(const RecipeKnobs& k) {
  return knobs_text(k, kRecipeKnobs, [](const auto&) { return true; });
}
std::string recipe_changes(const RecipeKnobs& base, const RecipeKnobs& k) {
  return knobs_text(k, kRecipeKnobs, [&](const auto& row) { return base.*row.member != k.*row.member; });
}
std::optional<std::string> apply_recipe_settings(RecipeKnobs& base, std::string_view settings) {
  return apply_settings(base, settings, "recipe", kRecipeKnobs);
}

std::string describe_rules(const Profile& pr) {
  std::string s;
  for (const ProfileRule& r : pr.rules) {
    if (!s.empty()) s += "; ";
    s += std::string(r.from) + " > " + std::string(r.to) + ": " + std::string(r.settings);
  }
  return s;
}

}  // namespace numref
