// numref conformance — golden vectors exported for testbenches: memh ($readmemh), CSV, JSON.
//                                                                       spec §31.8
//
// `numref vectors export` reads golden-vector files (§31) of any op family and writes their
// cases one record per case — the input values, the expected values (results and §9 flags) —
// behind a header that names the spec version, the source files' headers (op, clause, the exact
// policy) and the layout of a record. The record layout comes from the family's case schema
// (core.hpp): nothing here knows a particular family.
//
//   memh  one fixed-width hex word per record and line, `//` comments: what Verilog's
//         $readmemh reads unchanged. Every record of one export must have the same layout.
//   csv   a `#` comment header, a column-name row, one row per record (RFC 4180 quoting).
//   json  one object: versions, sources (their header lines), suites, records.
//
// The expected values are those of the files, checked against the reference before anything is
// written: a file whose results differ from the reference's (stale, edited) is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numref/conform/core.hpp"

namespace numref::conform {

// The version of numref (and of its spec, docs/spec.md "Spec version"): PROJECT_VERSION.
std::string_view numref_version();

enum class ExportFormat : std::uint8_t { memh, csv, json };
// "memh" | "csv" | "json"; nullopt otherwise.
std::optional<ExportFormat> parse_export_format(std::string_view name);
std::string_view to_string(ExportFormat f);

// Input the export cannot write (a malformed vector file, a result that differs from the
// reference, a memh export mixing record layouts); what() names the file and line.
struct ExportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One vector file read for export.
struct ExportSource {
  std::string path;
  std::vector<std::pair<std::string, std::string>> header;  // its header lines, in order
};
// One case: its suite, its input and expected words (one case, case-major), the line's comment.
struct ExportRecord {
  ParamsPtr params;
  std::vector<std::uint32_t> in, expected;
  std::string note;
  std::size_t source = 0;  // index into ExportSet::sources
  int line = 0;            // line of the vector file
};
struct ExportSet {
  std::vector<ExportSource> sources;
  std::vector<ExportRecord> records;
};

// Reads every case of the vector file `in` (named `name` in messages) into `set`, every profile
// of a divergence file included, and checks each expected result against the reference
// (Params::expected). Throws ExportError naming the file and line.
void read_export_source(std::istream& in, const std::string& name, ExportSet& set);

// §31.8 The text of the export. Throws ExportError when the format cannot hold the set (memh
// with two record layouts, CSV with two column sets, no records).
std::string export_text(const ExportSet& set, ExportFormat format);

}  // namespace numref::conform
