// numref profiles — the named profiles, read from the profile table.     spec §10, §10.4, §32.3
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/policy.hpp"

namespace numref::cli::cmd_profiles {
namespace {

// The word of a knob's value in a policy ("nan=ones" gives "ones"; sr_bits its number).
template <class Row>
std::string knob_value(const Row& row, const Policy& p) {
  const auto v = p.*row.member;
  if (row.words.empty()) return std::to_string(static_cast<int>(v));
  const auto i = static_cast<std::size_t>(v);
  return i < row.words.size() ? std::string(row.words[i]) : std::string("?");
}

// §10.1 every profile's narrow and wide policy, one column per knob of the knob table (the
// knobs that apply only to round=sr show their value only where the policy rounds with sr).
void print_policies(bool md) {
  const std::string none = md ? "—" : "-";
  std::vector<std::string> header = {"profile", "targets"};
  for_each_policy_knob([&](const auto& row) { header.emplace_back(row.key); });
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& pr = all_profiles()[i];
    for (const bool narrow : {true, false}) {
      const Policy& p = narrow ? pr.narrow : pr.wide;
      std::vector<std::string> row = {std::string(pr.name), narrow ? "narrow (≤ 8 bits)" : "wide"};
      if (!md) row[1] = narrow ? "narrow" : "wide";
      for_each_policy_knob(
          [&](const auto& k) { row.push_back(k.sr_only && p.round != Round::sr ? none : knob_value(k, p)); });
      rows.push_back(row);
    }
  }
  print_table(header, rows, md);
}

// §10.2 every pair rule of every profile, in rule order.
void print_rules(bool md) {
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& pr = all_profiles()[i];
    int n = 0;
    for (const ProfileRule& r : pr.rules)
      rows.push_back({std::string(pr.name), std::to_string(++n), std::string(r.from), std::string(r.to),
                      std::string(r.settings), std::string(r.why)});
  }
  print_table({"profile", "rule", "sources", "targets", "settings", "library behaviour"}, rows, md);
}

int run_profiles(Args& a) {
  if (a.flag("help")) {
    std::printf(
        "usage: numref profiles [--recipes | --policies | --rules] [--names | --markdown]\n\n"
        "Prints the named profiles (spec §10) in table order: the C ABI number (NUMREF_PROFILE_*,\n"
        "§32.3), the name, the quantization recipe (§10.4: scale rule and default partition; - for\n"
        "none), the number of (source, target) pair rules (§10.2) and the summary.\n"
        "  --recipes   only the profiles with a quantization recipe, with its recipe knobs (§19.8),\n"
        "              amax NaN policy (§13.2), element formats and the library function it follows\n"
        "  --policies  every profile's narrow and wide policy (§10.1), one column per knob (§10.3)\n"
        "  --rules     every (source, target) pair rule of every profile (§10.2), in rule order\n"
        "  --names     the names alone, one per line\n"
        "  --markdown  a Markdown table\n");
    return 0;
  }
  const bool recipes = a.flag("recipes");
  const bool names = a.flag("names");
  const bool policies = a.flag("policies");
  const bool rules = a.flag("rules");
  const bool md = a.flag("markdown");
  a.finish();
  if (names && md) throw UsageError("--names and --markdown exclude each other");
  if (int{recipes} + int{policies} + int{rules} > 1)
    throw UsageError("--recipes, --policies and --rules exclude each other");
  if (names && (policies || rules)) throw UsageError("--names lists profiles: it excludes --policies and --rules");
  if (policies) {
    print_policies(md);
    return 0;
  }
  if (rules) {
    print_rules(md);
    return 0;
  }
  const char* none = md ? "—" : "-";
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& p = all_profiles()[i];
    if (recipes && !p.recipe) continue;
    if (names) {
      std::printf("%s\n", std::string(p.name).c_str());
      continue;
    }
    const std::string id = std::to_string(static_cast<int>(p.id));
    if (recipes) {
      const Recipe& r = *p.recipe;
      rows.push_back({id, std::string(p.name), std::string(r.rule), std::string(r.partition),
                      r.knobs.empty() ? none : std::string(r.knobs), r.amax_nan_ignore ? "ignore" : "propagate",
                      std::string(r.elements), std::string(r.source)});
    } else {
      rows.push_back({id, std::string(p.name),
                      p.recipe ? std::string(p.recipe->rule) + " " + std::string(p.recipe->partition) : none,
                      std::to_string(p.rules.size()), std::string(p.summary)});
    }
  }
  if (names) return 0;
  if (recipes)
    print_table({"id", "name", "rule", "partition", "recipe knobs", "amax_nan", "elements", "source"}, rows, md);
  else
    print_table({"id", "name", "recipe", "rules", "summary"}, rows, md);
  return 0;
}

}  // namespace

NUMREF_VERB("profiles", "the named profiles (policies, rules, quantization recipes)", run_profiles);

}  // namespace numref::cli::cmd_profiles
