// numref conformance — `numref report merge`: the JSON reports of the shards of one run,
// combined into one verdict.                                                  spec §34.11
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "numref/conform/runner.hpp"

namespace numref::conform {

struct MergeOptions {
  ReportFormat report = ReportFormat::text;  // what the merged report is written as
  std::string out;                           // "" = standard output
};

// §34.11 Reads the shard reports (`numref conform --report json` files), checks that they are
// the shards of one run (same run id and parameters, same shard count, every shard 0..N-1
// exactly once), sums the counts, concatenates the mismatches, and writes the merged report
// (text to `text`, or JSON / JUnit to opt.out or standard output, the text then to `text`).
// Returns the exit status of the merged run (§34.7). Throws std::invalid_argument, one line
// naming the file and the problem, for a report that cannot be read, shards of different runs,
// a duplicated or missing shard, or an output that cannot be written or is an input (exit 2).
int merge_reports(const std::vector<std::string>& files, const MergeOptions& opt, std::FILE* text);

}  // namespace numref::conform
