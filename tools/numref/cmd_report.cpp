// numref report — work with conformance reports: merge the shard reports of one run.
//                                                                         spec §34.11
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cli.hpp"
#include "numref/conform/merge.hpp"

namespace numref::cli::cmd_report {
namespace {

constexpr const char* kUsage = R"(usage: numref report merge [--out FILE] [--report text|json|junit] REPORT...

merge  combines the JSON reports (numref conform --report json) of the shards of one run
       (--shard I/N, 0 <= I < N) into one verdict (spec §34.11): the counts summed, the
       mismatches concatenated in shard order, the exit status that one unsharded run would
       have (§34.7: 0 pass, 1 mismatches, 2 nothing compared, 3 a backend failed in a shard,
       130 a shard was interrupted). Refused, exit 2, naming the file: a report that is not a
       numref conform JSON report, a shard of another run (its run id or a parameter differs:
       numref or spec version, backend, profiles, ops, level, seed, vectors MANIFEST, any-nan,
       strict; the parameter is named), a shard given twice, or a run with a shard missing.

  --report FORMAT  text (default), json or junit: the merged report
  --out FILE       write the merged report there (json / junit: the text report then goes
                   to standard output); never one of the REPORT files
)";

int run(Args& a) {
  if (a.flag("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  auto pos = a.positional();
  if (pos.empty()) throw UsageError("expected 'merge' (numref report --help)");
  if (pos[0] != "merge") throw UsageError("unknown action '" + pos[0] + "' (expected merge)");
  conform::MergeOptions o;
  const std::string rep = a.opt_or("report", "text");
  if (rep == "text")
    o.report = conform::ReportFormat::text;
  else if (rep == "json")
    o.report = conform::ReportFormat::json;
  else if (rep == "junit")
    o.report = conform::ReportFormat::junit;
  else
    throw UsageError("--report: '" + rep + "' is not text, json or junit");
  o.out = a.opt_or("out", "");
  a.finish();
  pos.erase(pos.begin());
  if (pos.empty()) throw UsageError("merge: no REPORT given");
  try {
    return conform::merge_reports(pos, o, stdout);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

NUMREF_VERB("report", "merge the JSON reports of the shards of one conform run into one verdict (§34.11)", run);

}  // namespace
}  // namespace numref::cli::cmd_report
