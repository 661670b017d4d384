// numref abi — what each minor version of the C ABI defined: every op family, knob value, scale
// rule and profile with its C value and the minor version that introduced it.   spec §32.2, §32.3
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/conform/abi.hpp"
#include "numref/conform/core.hpp"
#include "numref/policy.hpp"
#include "numref/scale.hpp"

namespace numref::cli::cmd_abi {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// One row per word of every row of a knob table: kind, key=word, C value, minor version.
template <class Table>
void knob_rows(const Table& table, const char* kind, bool offset, Rows& rows) {
  for_each_knob_row(table, [&](const auto& k) {
    for (std::size_t i = 0; i < k.words.size(); ++i)
      rows.push_back({kind, std::string(k.key) + "=" + std::string(k.words[i]),
                      std::to_string((offset ? k.c_first : 0) + i), "1." + std::to_string(k.since_minor(i))});
  });
}

int run_abi(Args& a) {
  if (a.flag("help")) {
    std::printf(
        "usage: numref abi [--markdown]\n\n"
        "Prints what each minor version of the backend C ABI defined (spec §32.2, §32.3): every op\n"
        "family, policy knob value, recipe knob value, scale rule and profile with its C value and\n"
        "the minor version that introduced it. A backend that declares minor version N is offered\n"
        "only suites whose every value is of N or earlier (§34.3). This runner speaks %u.%u.\n"
        "  --markdown  a Markdown table\n",
        NUMREF_BACKEND_ABI_VERSION, NUMREF_BACKEND_ABI_MINOR);
    return 0;
  }
  const bool md = a.flag("markdown");
  a.finish();
  Rows rows;
  for (const conform::Family* f : conform::registry().all())
    rows.push_back({"op family", std::string(f->name()), md ? "—" : "-", "1." + std::to_string(f->abi_minor())});
  knob_rows(kPolicyKnobs, "policy knob", true, rows);
  knob_rows(kRecipeKnobs, "recipe knob", false, rows);
  knob_rows(kMmaKnobs, "mma knob", false, rows);  // §32.9 NUMREF_MMA_* values
  for (const ScaleRuleInfo& r : kScaleRules)
    rows.push_back({"scale rule", std::string(r.name), std::to_string(r.abi_id), "1." + std::to_string(r.abi_minor)});
  rows.push_back({"scale rule", "mx-floor with scale_exp=log2f", md ? "—" : "-",
                  "1." + std::to_string(conform::kMxFloorLog2fMinor)});
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& p = all_profiles()[i];
    rows.push_back({"profile", std::string(p.name), std::to_string(i), "1." + std::to_string(p.abi_minor)});
  }
  print_table({"kind", "name", "C value", "since"}, rows, md);
  return 0;
}

}  // namespace

NUMREF_VERB("abi", "what each minor version of the backend C ABI defined (§32.2)", run_abi);

}  // namespace numref::cli::cmd_abi
