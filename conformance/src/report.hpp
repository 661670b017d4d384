// numref conformance — report data and writers (text, JSON, JUnit XML).     spec §34.4, §34.7
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "numref/conform/backend.hpp"
#include "numref/conform/runner.hpp"

namespace numref::conform {

struct SuiteStats {
  std::string op, profile, label, params, source;  // source: "generated" or the vector file
  std::uint64_t cases = 0, passed = 0, failed = 0, skipped = 0, departures = 0, any_nan = 0;
  std::uint64_t shown = 0;  // mismatch lines printed
};

struct Mismatch {
  std::string op, label, params, where, inputs, got, expected, cls, departure;  // departure: "" or the reason
  std::string detail;  // tensor families: how many elements / blocks differ ("" = none)
  bool is_departure = false;
  std::string fields;  // §34.4 the structured JSON members of the case (mismatch_fields), "" = none
  // --dump-failures: the failing tensor case's parameters and input words (one case, in order)
  ParamsPtr dump_params;
  std::vector<std::uint32_t> dump_in;
};

// §34.4 The structured JSON members of a failing case: "location" (vector file and line, or
// the generated case's index), "inputs" (each single-value input column: hex code and exact
// value; a tensor input: format and shape) and "results" (each compared output column of a
// scalar case, each differing column of a tensor case: where, how many values differ, got
// and expected as hex, exact decimal value, flags as text). A case that crashed the backend
// (§34.6, `crash` = what happened) has no results but "crash".
std::string mismatch_fields(const Params& p, CaseView in, CaseView expected, CaseView got, const CompareOptions& o,
                            const std::string& file, std::uint64_t line_or_index, const std::string& crash = {});

struct BackendReport {
  std::string display;  // as given to --backend
  BackendInfo info;
  bool opened = false;
  std::vector<std::string> profiles, ops, notes;
  std::vector<SuiteStats> suites;
  std::map<std::string, std::size_t> suite_index;
  std::vector<Mismatch> mismatches;      // a JUnit report: the mismatches it lists (memory-bounded)
  std::uint64_t mismatches_dropped = 0;  // a JUnit report: mismatches beyond the memory bound
  std::shared_ptr<std::FILE> spool;      // a JSON report: every mismatch, one JSON object a line
  std::uint64_t spooled = 0;
  std::map<std::string, std::uint64_t> departure_classes;  // known departures per "<op> <class>"
  std::map<std::string, std::uint64_t> skip_reasons;       // §34.3 skipped cases per reason
  std::string unavailable;  // §32.6 the reason the backend cannot run here ("" = it ran): SKIPPED
  std::string error;        // backend / input failure that stopped the run
  int error_exit = 0;
  bool interrupted = false;
  double seconds = 0;
  std::string vectors;  // description of the golden-vector stage
  std::size_t suite(const std::string& op, const std::string& profile, const std::string& label,
                    const std::string& params, const std::string& source);
  std::uint64_t total(std::uint64_t SuiteStats::*field) const;
  std::uint64_t compared() const;  // cases compared: every outcome but skipped
  // §34.7 why a backend that ran compared no case
  std::string nothing_compared_reason(const RunConfig& cfg) const;
};

// §34.4 The identity of a run: the numref and spec versions and the parameters that decide
// which cases run and how they are judged. `id` hashes them WITHOUT the shard, so the N
// shards of one run share it; `numref report merge` (§34.11) refuses reports whose identities
// differ. The vector directory is recorded but not hashed (shards may mount it elsewhere):
// the vectors are identified by their MANIFEST's sha256.
struct RunIdentity {
  std::string numref_version, spec_version;
  std::string vectors_dir;      // "" = no golden vectors
  std::string manifest_sha256;  // sha256 of DIR/MANIFEST; "" = no golden vectors
  std::string id;               // the first 16 hex digits of the sha256 of the parameters
  std::uint64_t merged = 0;     // a merged report: how many shard reports it combines (0 = one run)
};
// The parameters of a run in a fixed order, as (name, canonical text) pairs: numref, spec,
// backend, profiles, ops, level, seed, vectors (the MANIFEST sha256 or "none"), any_nan, strict.
std::vector<std::pair<std::string, std::string>> run_parameters(const RunConfig& cfg, const RunIdentity& id);
// Fills versions, vector directory, MANIFEST sha256 and id.
RunIdentity run_identity(const RunConfig& cfg, const std::string& vectors_dir);
std::string run_id_of(const RunConfig& cfg, const RunIdentity& id);

struct RunReport {
  RunConfig cfg;
  RunIdentity id;
  std::vector<BackendReport> backends;
  std::string nothing_compared;  // §34.7 the run compared no case: why ("" = it did)
  bool interrupted = false;      // SIGINT / SIGTERM
  int exit_status = 0;           // §34.7, recorded in the JSON report
};

// Text pieces (streamed while running).
// §34.4 the first line of a text report: run id, numref and spec version, the vectors' MANIFEST
void text_run(std::FILE* f, const RunIdentity& id);
void text_header(std::FILE* f, const RunConfig& cfg, const RunIdentity& id, const BackendReport& b);
void text_mismatch(std::FILE* f, const Mismatch& m);
void text_summary(std::FILE* f, const RunConfig& cfg, const BackendReport& b);
void text_total(std::FILE* f, const RunReport& r);

// Write the whole document to f (JSON: the spooled mismatches are copied in).
void json_report(const RunReport& r, std::FILE* f);
void junit_report(const RunReport& r, std::FILE* f);
std::string mismatch_json(const Mismatch& m);  // one element of a backend's "mismatches"
// A JUnit report keeps at most this many bytes of mismatch text in memory (§34.3 memory bound).
inline constexpr std::size_t kJunitMismatchBytes = std::size_t{64} << 20;

std::string level_name(Level l);

}  // namespace numref::conform
