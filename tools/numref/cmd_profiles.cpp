// numref profiles — the named profiles, read from the profile table.     spec §10, §10.4, §32.3
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/policy.hpp"

namespace numref::cli {
namespace {

int run_profiles(Args& a) {
  if (a.flag("help")) {
    std::printf(
        "usage: numref profiles [--recipes] [--names] [--markdown]\n\n"
        "Prints the named profiles (spec §10) in table order: the C ABI number (NUMREF_PROFILE_*,\n"
        "§32.3), the name, the quantization recipe (§10.4: scale rule and default partition; - for\n"
        "none), the number of (source, target) pair rules (§10.2) and the summary.\n"
        "  --recipes   only the profiles with a quantization recipe, with its recipe knobs (§19.8),\n"
        "              amax NaN policy (§13.2), element formats and the library function it follows\n"
        "  --names     the names alone, one per line\n"
        "  --markdown  a Markdown table\n");
    return 0;
  }
  const bool recipes = a.flag("recipes");
  const bool names = a.flag("names");
  const bool md = a.flag("markdown");
  a.finish();
  if (names && md) throw UsageError("--names and --markdown exclude each other");
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
                      r.elements.empty() ? "every" : std::string(r.elements), std::string(r.source)});
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

}  // namespace numref::cli
