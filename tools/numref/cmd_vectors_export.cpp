// numref vectors export — golden vectors as memh ($readmemh), CSV or JSON.   spec §31.8
// Reached from cmd_vectors.cpp (`numref vectors export ...`); the logic is conform/export.hpp.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "numref/conform/export.hpp"
#include "numref/conform/output.hpp"

namespace numref::cli::cmd_vectors_export {

namespace {

constexpr const char* kUsage = R"(usage: numref vectors export --to memh|csv|json [--out FILE] VECTOR_FILE...

Writes the cases of golden-vector files (any op: cast, the tensor families, MoR; spec §31)
one record per case — the input values, the expected results and flags — behind a header
comment with the spec version, each file's header (op, clause, the exact policy) and the
record layout (spec §31.8). Pick the cases by picking the files: vectors/<op>/<profile>/
<from>-<to>.vec (docs/vectors.md lists them).

  --to memh   one fixed-width hex word per line, `//` comments: Verilog's $readmemh reads
              the file unchanged. Every case must have the same layout (one file of
              casts, or tensors of one shape).
  --to csv    `#` comment lines, a row of column names, one row per case.
  --to json   one JSON object: versions, sources, suites, records.
  --out FILE  write FILE (through a temporary file, renamed when complete); default:
              standard output.

The expected results are checked against the reference before anything is written; a
file that differs (stale or edited) is refused. Exit status 0 when written, 2 on a usage
error, an unreadable or malformed file, or an export the format cannot hold.
)";

}  // namespace

int run_vectors_export(Args& a) {
  if (a.flag("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const auto to = a.opt("to");
  const auto out = a.opt("out");
  std::vector<std::string> files = a.positional();
  a.finish();
  if (!files.empty() && files.front() == "export") files.erase(files.begin());
  if (!to) throw UsageError("export: --to memh|csv|json is required (numref vectors export --help)");
  const auto format = conform::parse_export_format(*to);
  if (!format) throw UsageError("export: --to '" + *to + "': unknown format (expected memh, csv or json)");
  if (files.empty()) throw UsageError("export: no VECTOR_FILE given (e.g. vectors/cast/ocp/f32-f8e4m3fn.vec)");
  if (out && out->empty()) throw UsageError("export: --out needs a file name");
  try {
    if (out) conform::refuse_output_that_is_input("--out", *out, files);
    // §35.1: a bad target is refused before any work.
    std::unique_ptr<conform::OutputFile> file = out ? std::make_unique<conform::OutputFile>(*out) : nullptr;
    conform::ExportSet set;
    for (const auto& path : files) {
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec))
        throw UsageError("export: " + path + " is a directory, not a vector file");
      std::ifstream in(path, std::ios::binary);
      if (!in) throw UsageError("export: cannot read " + path);
      conform::read_export_source(in, path, set);
    }
    const std::string text = conform::export_text(set, *format);
    if (file) {
      file->write(text);
      file->commit();
      std::fprintf(stderr, "numref vectors export: %s from %s written to %s (%s)\n",
                   count(set.records.size(), "record").c_str(), count(set.sources.size(), "file").c_str(), out->c_str(),
                   std::string(conform::to_string(*format)).c_str());
    } else {
      std::fwrite(text.data(), 1, text.size(), stdout);
      conform::check_stdout();
    }
  } catch (const conform::ExportError& e) {
    throw UsageError(std::string("export: ") + e.what());
  } catch (const conform::OutputError& e) {
    throw UsageError(std::string("export: ") + e.what());
  }
  return 0;
}

}  // namespace numref::cli::cmd_vectors_export
