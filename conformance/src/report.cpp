// numref conformance — reports: text lines and tables, JSON, JUnit XML.     spec §34.4, §34.7
#include "report.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "numref/conform/util.hpp"
#include "numref/conform/vectors.hpp"
#include "numref/value.hpp"
#include "numref/version.hpp"

namespace numref::conform {

std::string level_name(Level l) {
  switch (l) {
    case Level::l0: return "0";
    case Level::l1: return "1";
    case Level::l2: return "2";
    case Level::exhaustive: return "exhaustive";
  }
  return "?";
}

std::size_t BackendReport::suite(const std::string& op, const std::string& profile, const std::string& label,
                                 const std::string& params, const std::string& source) {
  const std::string key = source + "\n" + params;
  auto it = suite_index.find(key);
  if (it != suite_index.end()) return it->second;
  suites.push_back({op, profile, label, params, source});
  suite_index.emplace(key, suites.size() - 1);
  return suites.size() - 1;
}

std::uint64_t BackendReport::total(std::uint64_t SuiteStats::*field) const {
  std::uint64_t t = 0;
  for (const auto& s : suites) t += s.*field;
  return t;
}

std::uint64_t BackendReport::compared() const {
  return total(&SuiteStats::passed) + total(&SuiteStats::failed) + total(&SuiteStats::departures) +
         total(&SuiteStats::any_nan);
}

std::string BackendReport::nothing_compared_reason(const RunConfig& cfg) const {
  std::string missing;
  std::size_t n_missing = 0;
  for (const auto& op : ops)
    if (std::find(info.ops.begin(), info.ops.end(), op) == info.ops.end()) {
      missing += (missing.empty() ? "" : ", ") + op;
      ++n_missing;
    }
  if (!ops.empty() && n_missing == ops.size())
    return "the backend implements none of the selected operations (" + missing + ")";
  if (total(&SuiteStats::skipped))
    return "the backend supports none of the " + std::to_string(suites.size()) + " selected suites";
  return "the selection has no case" + std::string(cfg.shard_count > 1 ? " in this shard" : "");
}

namespace {
std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}
}  // namespace

// ---- the run's identity (§34.4) -----------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> run_parameters(const RunConfig& cfg, const RunIdentity& id) {
  return {{"numref", id.numref_version},
          {"spec", id.spec_version},
          {"backend", cfg.backend},
          {"profiles", join(cfg.profiles, ",")},
          {"ops", join(cfg.ops, ",")},
          {"level", level_name(cfg.level)},
          {"seed", std::to_string(cfg.seed)},
          {"vectors", id.manifest_sha256.empty() ? "none" : "MANIFEST sha256 " + id.manifest_sha256},
          {"any_nan", cfg.any_nan ? "true" : "false"},
          {"strict", cfg.strict ? "true" : "false"}};
}

std::string run_id_of(const RunConfig& cfg, const RunIdentity& id) {
  std::string text;
  for (const auto& [k, v] : run_parameters(cfg, id)) text += k + "=" + v + "\n";
  return Sha256::hex(text).substr(0, 16);
}

RunIdentity run_identity(const RunConfig& cfg, const std::string& vectors_dir) {
  RunIdentity id;
  id.numref_version = kVersion;
  id.spec_version = kSpecVersion;
  if (!vectors_dir.empty()) {
    id.vectors_dir = std::filesystem::absolute(vectors_dir).lexically_normal().string();
    std::ifstream f(std::filesystem::path(vectors_dir) / "MANIFEST", std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    // an unreadable MANIFEST stops the vector stage with its own error (§31.5)
    id.manifest_sha256 = f ? Sha256::hex(ss.str()) : std::string("unreadable");
  }
  id.id = run_id_of(cfg, id);
  return id;
}

namespace {
std::string shard_text(const RunConfig& cfg, const RunIdentity& id) {
  if (id.merged) return "merged from " + std::to_string(id.merged) + " shards of " + std::to_string(cfg.shard_count);
  return std::to_string(cfg.shard_index) + "/" + std::to_string(cfg.shard_count);
}

constexpr const char* kInterruptedWhy = "interrupted by a signal; the counts cover the cases run so far";

// §34.4 / §34.7 The word that starts the final line of a backend that did not check all it was
// asked to ("" = it did), and why.
std::string backend_verdict(const RunConfig& cfg, const BackendReport& b, std::string& why) {
  if (!b.error.empty()) {
    why = "stopped by an error: " + b.error;
    return "INCOMPLETE: ";
  }
  if (b.interrupted) {
    why = kInterruptedWhy;
    return "INTERRUPTED: ";
  }
  if (b.opened && b.compared() == 0) {
    why = b.nothing_compared_reason(cfg);
    return "NOTHING COMPARED: ";
  }
  return {};
}

// "P passed, F failed, S skipped" over the backends, then " (why)" when there is a reason.
void counts_line(std::FILE* f, const RunConfig& cfg, const std::vector<const BackendReport*>& bs,
                 const std::string& why) {
  std::uint64_t p = 0, fl = 0, s = 0;
  for (const BackendReport* b : bs) {
    p += b->total(&SuiteStats::passed) + b->total(&SuiteStats::any_nan);
    fl += b->total(&SuiteStats::failed) + (cfg.strict ? b->total(&SuiteStats::departures) : 0);
    s += b->total(&SuiteStats::skipped);
  }
  std::fprintf(f, "%llu passed, %llu failed, %llu skipped%s%s%s\n", static_cast<unsigned long long>(p),
               static_cast<unsigned long long>(fl), static_cast<unsigned long long>(s), why.empty() ? "" : " (",
               why.c_str(), why.empty() ? "" : ")");
  std::fflush(f);
}
}  // namespace

void text_run(std::FILE* f, const RunIdentity& id) {
  std::fprintf(f, "== run %s | numref %s | spec %s | vectors %s\n", id.id.c_str(), id.numref_version.c_str(),
               id.spec_version.c_str(),
               id.manifest_sha256.empty() ? "none" : ("MANIFEST sha256 " + id.manifest_sha256).c_str());
  std::fflush(f);
}

void text_header(std::FILE* f, const RunConfig& cfg, const RunIdentity& id, const BackendReport& b) {
  const BackendInfo& i = b.info;
  std::fprintf(f, "== numref conform: backend %s%s%s [%s%s] %s\n", i.name.c_str(), i.version.empty() ? "" : " ",
               i.version.c_str(), i.kind.c_str(),
               i.kind == "plugin" ? (cfg.isolate ? ", isolated" : ", in process") : "", i.location.c_str());
  // The backend's own description: with --verbose (and always in the JSON report); a passing run
  // stays short (§34.5).
  if (cfg.verbose && !i.description.empty()) std::fprintf(f, "   %s\n", i.description.c_str());
  std::fprintf(f, "   ops %s | profiles %s | level %s | seed %llu | shard %s\n", join(b.ops).c_str(),
               join(b.profiles).c_str(), level_name(cfg.level).c_str(), static_cast<unsigned long long>(cfg.seed),
               shard_text(cfg, id).c_str());
  // One line for what is compared (§34.4); a passing run stays short (§34.5).
  const bool tensor = std::any_of(i.ops.begin(), i.ops.end(),
                                  [](const std::string& o) { return o == "quantize" || o == "fake-quant"; });
  std::fprintf(f, "   flags: %s%s%s\n", i.flags ? "compared" : "NOT compared (the backend does not report flags)",
               tensor ? " | counts of tensor ops (§19.5): " : "",
               tensor ? (i.counts ? "compared" : "NOT compared (the backend does not report them)") : "");
  if (cfg.any_nan)
    std::fprintf(f, "   --any-nan: any NaN result matches any expected NaN (sign and payload not compared)\n");
  if (!i.departures.empty()) {
    std::fprintf(f, "   known departures declared by the backend (%s):\n",
                 cfg.strict ? "counted as failures: --strict" : "reported, not counted as failures");
    for (const auto& d : i.departures)
      std::fprintf(f, "     %s %s->%s %s [%s]: %s\n", d.op.c_str(), d.from.c_str(), d.to.c_str(), d.profile.c_str(),
                   d.cls.c_str(), d.why.c_str());
  }
  for (const auto& n : b.notes) std::fprintf(f, "   note: %s\n", n.c_str());  // the vectors: in the summary
  std::fflush(f);
}

void text_mismatch(std::FILE* f, const Mismatch& m) {
  // Known departures are explained once, in the header; the line only marks them.
  std::fprintf(f, "%s %s %s | %s | got %s | expected %s | %s | %s%s%s\n", m.is_departure ? "DEPARTURE" : "FAIL",
               m.op.c_str(), m.label.c_str(), m.inputs.c_str(), m.got.c_str(), m.expected.c_str(), m.cls.c_str(),
               m.where.c_str(), m.detail.empty() ? "" : " | ", m.detail.c_str());
  std::fflush(f);
}

void text_summary(std::FILE* f, const RunConfig& cfg, const BackendReport& b) {
  struct Row {
    std::string op, profile;
    std::uint64_t cases = 0, passed = 0, failed = 0, departures = 0, skipped = 0, any_nan = 0;
  };
  // §34.4 one row per op (its profiles together; --verbose: per op and profile); ops the
  // backend does not implement have no row (a header note names them)
  std::vector<Row> rows;
  std::map<std::string, std::vector<std::string>> op_profiles;
  for (const auto& s : b.suites) {
    if (b.opened && std::find(b.info.ops.begin(), b.info.ops.end(), s.op) == b.info.ops.end()) continue;
    auto& ps = op_profiles[s.op];
    if (std::find(ps.begin(), ps.end(), s.profile) == ps.end()) ps.push_back(s.profile);
    const std::string profile = cfg.verbose ? s.profile : "";
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.op == s.op && r.profile == profile; });
    if (it == rows.end()) {
      rows.push_back({s.op, profile});
      it = rows.end() - 1;
    }
    it->cases += s.cases;
    it->passed += s.passed;
    it->failed += s.failed;
    it->departures += s.departures;
    it->skipped += s.skipped;
    it->any_nan += s.any_nan;
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& c) {
    const auto pa = std::find(b.profiles.begin(), b.profiles.end(), a.profile) - b.profiles.begin();
    const auto pc = std::find(b.profiles.begin(), b.profiles.end(), c.profile) - b.profiles.begin();
    return a.op != c.op ? a.op < c.op : pa < pc;
  });
  for (auto& r : rows)
    if (!cfg.verbose) {
      const auto& ps = op_profiles[r.op];
      r.profile = ps.size() == 1 ? ps.front() : std::to_string(ps.size()) + " profiles";
    }
  std::fprintf(f, "-- %s summary (%.1f s)\n", b.info.name.empty() ? b.display.c_str() : b.info.name.c_str(), b.seconds);
  std::fprintf(f, "%-10s %-16s %14s %14s %10s %10s %14s %10s\n", "op", "profile", "cases", "passed", "failed",
               "departures", "skipped", "any-nan");
  for (const auto& r : rows)
    std::fprintf(f, "%-10s %-16s %14llu %14llu %10llu %10llu %14llu %10llu\n", r.op.c_str(), r.profile.c_str(),
                 static_cast<unsigned long long>(r.cases), static_cast<unsigned long long>(r.passed),
                 static_cast<unsigned long long>(r.failed), static_cast<unsigned long long>(r.departures),
                 static_cast<unsigned long long>(r.skipped), static_cast<unsigned long long>(r.any_nan));
  if (cfg.verbose) {
    std::fprintf(f, "-- suites\n");
    for (const auto& s : b.suites)
      std::fprintf(f, "%-10s %-60s %-10s %12llu passed %8llu failed %8llu skipped  %s\n", s.op.c_str(), s.label.c_str(),
                   s.source == "generated" ? "generated" : "vectors", static_cast<unsigned long long>(s.passed),
                   static_cast<unsigned long long>(s.failed), static_cast<unsigned long long>(s.skipped),
                   s.source == "generated" ? "" : s.source.c_str());
  }
  std::size_t hidden_suites = 0;
  const bool deps_listed = cfg.show_departures || cfg.strict;
  for (const auto& s : b.suites) {
    const std::uint64_t bad = s.failed + (deps_listed ? s.departures : 0);
    if (bad > s.shown) {
      if (hidden_suites++ < 20)
        std::fprintf(f, "   %llu more mismatches not shown (--max-errors %llu) in %s %s (%s)\n",
                     static_cast<unsigned long long>(bad - s.shown), static_cast<unsigned long long>(cfg.max_errors),
                     s.op.c_str(), s.label.c_str(), s.source.c_str());
    }
  }
  if (hidden_suites > 20) std::fprintf(f, "   ... and %zu more suites with hidden mismatches\n", hidden_suites - 20);
  const auto dep = b.total(&SuiteStats::departures);
  if (dep) {
    // §34.5 counted per class; the lines only with --show-departures (or --strict)
    std::string per;
    for (const auto& [k, v] : b.departure_classes) per += (per.empty() ? "" : ", ") + k + " " + std::to_string(v);
    std::fprintf(f, "   %llu known departures (%s%s): %s\n", static_cast<unsigned long long>(dep),
                 cfg.strict ? "counted as failed: --strict" : "not counted as failed; --strict counts them",
                 deps_listed ? "" : ", --show-departures lists them", per.c_str());
  }
  // §34.3 why cases were skipped: per reason, with the count per op family, on one line
  if (!b.skip_reasons.empty()) {
    std::map<std::string, std::pair<std::uint64_t, std::string>> by;  // reason -> (total, "op n, ...")
    for (const auto& [key, n] : b.skip_reasons) {
      const std::size_t colon = key.rfind(": ");
      auto& [total, ops] = by[colon == std::string::npos ? key : key.substr(0, colon)];
      total += n;
      if (colon != std::string::npos)
        ops += (ops.empty() ? "" : ", ") + key.substr(colon + 2) + " " + std::to_string(n);
    }
    std::string line;
    for (const auto& [why, t] : by)
      line += (line.empty() ? "" : "; ") + std::to_string(t.first) + " " + why +
              (t.second.empty() ? "" : " (" + t.second + ")");
    std::fprintf(f, "   skipped: %s\n", line.c_str());
  }
  const auto an = b.total(&SuiteStats::any_nan);
  if (cfg.any_nan) std::fprintf(f, "   %llu NaN results accepted by --any-nan\n", static_cast<unsigned long long>(an));
  if (!b.error.empty()) std::fprintf(f, "   STOPPED: %s\n", b.error.c_str());
  if (b.interrupted) std::fprintf(f, "   INTERRUPTED: the report covers the cases run so far\n");
  std::fprintf(f, "   golden vectors: %s\n", b.vectors.c_str());
  std::string why;
  const std::string verdict = b.unavailable.empty() ? backend_verdict(cfg, b, why) : std::string();
  std::fprintf(f, "%s: %s", b.info.name.empty() ? b.display.c_str() : b.info.name.c_str(), verdict.c_str());
  counts_line(f, cfg, {&b}, why);
}

void text_total(std::FILE* f, const RunReport& r) {
  std::vector<const BackendReport*> all;
  std::string verdict, why;
  for (const auto& b : r.backends) {
    all.push_back(&b);
    std::string w;
    const std::string v = b.unavailable.empty() ? backend_verdict(r.cfg, b, w) : std::string();
    if (verdict.empty() && (v == "INCOMPLETE: " || v == "INTERRUPTED: ")) {
      verdict = v;
      why = r.backends.size() > 1 ? (b.info.name.empty() ? b.display : b.info.name) + ": " + w : w;
    }
  }
  if (verdict.empty() && r.interrupted) {
    verdict = "INTERRUPTED: ";
    why = kInterruptedWhy;
  }
  if (verdict.empty() && !r.nothing_compared.empty()) {
    verdict = "NOTHING COMPARED: ";
    why = r.nothing_compared;
  }
  std::fputs(verdict.c_str(), f);
  counts_line(f, r.cfg, all, why);
}

// ---- JSON -------------------------------------------------------------------------------------

namespace {
std::string u(std::uint64_t v) { return std::to_string(v); }

// One value of column c (its words): {"hex": ..., "value": exact decimal / NaN / Inf} for
// codes of a format, {"hex": ..., "flags": "-o-x"} for the §9 flags, {"value": ...} for counts
// and exact sums, {"hex": ...} otherwise.
std::string value_json(const Column& c, const std::uint32_t* w) {
  if (c.notation == Notation::sum) return "{\"value\": " + json_quote(render_value_words(c, w)) + "}";
  if (c.notation == Notation::decimal) return "{\"value\": " + json_quote(std::to_string(*w)) + "}";
  if (c.role == Role::opt && *w == kNotReported) return "null";
  if (c.format) {
    if (*w & ~c.format->mask())
      return "{\"hex\": " + json_quote(hex(*w, 8)) +
             ", \"value\": null, \"note\": " + json_quote("not a " + std::string(c.format->name) + " code") + "}";
    const Decoded d = decode(*w, *c.format);
    const bool finite = d.cls != Class::nan && d.cls != Class::inf;
    return "{\"hex\": " + json_quote(hex(*w, c.digits)) +
           ", \"value\": " + json_quote(finite ? exact_decimal(d) : render_value(*w, *c.format)) + "}";
  }
  if (c.mask && c.decode)
    return "{\"hex\": " + json_quote(hex(*w, c.digits)) + ", \"flags\": " + json_quote(c.decode(*w)) + "}";
  if (c.decode) return "{\"hex\": " + json_quote(hex(*w, c.digits)) + ", \"text\": " + json_quote(c.decode(*w)) + "}";
  return "{\"hex\": " + json_quote(hex(*w, c.digits)) + "}";
}
std::string value_json(const Column& c, CaseView v, std::size_t k) {
  std::uint32_t words[kSumWords];
  for (int w = 0; w < c.width; ++w) words[w] = v[c.at + static_cast<int>(k) * c.width + w];
  return value_json(c, words);
}
}  // namespace

std::string mismatch_fields(const Params& p, CaseView in, CaseView e, CaseView g, const CompareOptions& o,
                            const std::string& file, std::uint64_t line_or_index, const std::string& crash) {
  std::string s = "\"location\": ";
  s += file == "generated" ? "{\"generated\": " + u(line_or_index) + "}"
                           : "{\"file\": " + json_quote(file) + ", \"line\": " + u(line_or_index) + "}";
  bool single = true;  // every column holds one value (cast): every result is listed
  for (const Column& c : p.schema().columns) single &= c.count() == 1;
  s += ", \"inputs\": {";
  bool first = true;
  for (const Column& c : p.schema().columns) {
    if (c.output()) continue;
    s += (first ? "" : ", ") + json_quote(c.name) + ": ";
    first = false;
    if (c.count() == 1)
      s += value_json(c, in, 0);
    else
      s += "{\"format\": " + (c.format ? json_quote(c.format->name) : std::string("null")) +
           ", \"shape\": " + json_quote(std::to_string(c.rows) + "x" + std::to_string(c.cols)) + "}";
  }
  if (!crash.empty()) return s + "}, \"crash\": " + json_quote(crash) + ", \"results\": []";
  s += "}, \"results\": [";
  first = true;
  auto result = [&](const Column& c, std::size_t k, std::size_t differ) {
    s += (first ? "" : ", ") + std::string("{\"column\": ") + json_quote(c.name);
    first = false;
    if (!single)
      s += ", \"index\": " + u(k) + ", \"place\": " + json_quote(value_place(p, c, k)) + ", \"differ\": " + u(differ) +
           ", \"of\": " + u(c.count());
    s += ", \"got\": " + value_json(c, g, k) + ", \"expected\": " + value_json(c, e, k) + "}";
  };
  if (single) {
    for (const Column& c : p.schema().columns)
      if (c.output() && (c.role != Role::opt || (o.caps & c.cap))) result(c, 0, 0);
  } else {
    for (const ColumnDiff& cd : diff_columns(p, e, g, o)) result(*cd.column, cd.first, cd.count);
  }
  return s + "]";
}

std::string mismatch_json(const Mismatch& m) {
  return "{\"op\": " + json_quote(m.op) + ", \"label\": " + json_quote(m.label) +
         ", \"params\": " + json_quote(m.params) + ", \"class\": " + json_quote(m.cls) +
         ", \"known_departure\": " + (m.is_departure ? json_quote(m.departure) : std::string("null")) +
         (m.fields.empty() ? std::string() : ", " + m.fields) + ", \"where\": " + json_quote(m.where) +
         ", \"text\": {\"inputs\": " + json_quote(m.inputs) + ", \"got\": " + json_quote(m.got) +
         ", \"expected\": " + json_quote(m.expected) + ", \"detail\": " + json_quote(m.detail) + "}}";
}

void json_report(const RunReport& r, std::FILE* out) {
  std::ostringstream o;
  auto flush = [&] {
    const std::string t = o.str();
    std::fwrite(t.data(), 1, t.size(), out);
    o.str({});
  };
  const RunConfig& c = r.cfg;
  o << "{\n  \"numref_conform_report\": 1,\n";
  // §34.4 the run's identity: what `numref report merge` checks (§34.11)
  const RunIdentity& id = r.id;
  auto list = [&](const std::vector<std::string>& v) {
    std::string t = "[";
    for (std::size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + json_quote(v[i]);
    return t + "]";
  };
  o << "  \"run\": {\"id\": " << json_quote(id.id) << ", \"numref_version\": " << json_quote(id.numref_version)
    << ", \"spec_version\": " << json_quote(id.spec_version) << ",\n    \"backend\": " << json_quote(c.backend)
    << ", \"profiles\": " << list(c.profiles) << ", \"ops\": " << list(c.ops)
    << ", \"level\": " << json_quote(level_name(c.level)) << ", \"seed\": " << c.seed
    << ",\n    \"vectors\": " << (id.vectors_dir.empty() ? std::string("null") : json_quote(id.vectors_dir))
    << ", \"manifest_sha256\": " << (id.manifest_sha256.empty() ? std::string("null") : json_quote(id.manifest_sha256))
    << ", \"any_nan\": " << (c.any_nan ? "true" : "false") << ", \"strict\": " << (c.strict ? "true" : "false")
    << ",\n    \"shard\": {\"index\": " << (id.merged ? std::string("null") : u(c.shard_index))
    << ", \"count\": " << c.shard_count << ", \"merged\": " << id.merged << "}},\n";
  o << "  \"config\": {\"backend\": " << json_quote(c.backend) << ", \"level\": " << json_quote(level_name(c.level))
    << ", \"seed\": " << c.seed << ", \"shard\": " << json_quote(shard_text(c, id))
    << ", \"any_nan\": " << (c.any_nan ? "true" : "false") << ", \"strict\": " << (c.strict ? "true" : "false")
    << ", \"max_errors\": " << c.max_errors << "},\n";
  o << "  \"backends\": [";
  std::uint64_t P = 0, F = 0, S = 0, D = 0, A = 0;
  bool complete = true;
  for (std::size_t bi = 0; bi < r.backends.size(); ++bi) {
    const BackendReport& b = r.backends[bi];
    const auto p = b.total(&SuiteStats::passed), f = b.total(&SuiteStats::failed), s = b.total(&SuiteStats::skipped),
               d = b.total(&SuiteStats::departures), a = b.total(&SuiteStats::any_nan);
    P += p + a;
    F += f + (c.strict ? d : 0);
    S += s;
    D += d;
    A += a;
    if (!b.error.empty() || b.interrupted) complete = false;
    o << (bi ? ",\n" : "\n") << "    {\"backend\": " << json_quote(b.display)
      << ", \"name\": " << json_quote(b.info.name) << ", \"version\": " << json_quote(b.info.version)
      << ", \"kind\": " << json_quote(b.info.kind) << ", \"location\": " << json_quote(b.info.location)
      << ", \"description\": " << json_quote(b.info.description) << ", \"opened\": " << (b.opened ? "true" : "false")
      << ",\n     \"flags_compared\": " << (b.info.flags ? "true" : "false")
      << ", \"counts_compared\": " << (b.info.counts ? "true" : "false") << ", \"profiles\": [";
    for (std::size_t i = 0; i < b.profiles.size(); ++i) o << (i ? ", " : "") << json_quote(b.profiles[i]);
    o << "], \"ops\": [";
    for (std::size_t i = 0; i < b.ops.size(); ++i) o << (i ? ", " : "") << json_quote(b.ops[i]);
    o << "], \"vectors\": " << json_quote(b.vectors) << ", \"seconds\": " << b.seconds
      << ",\n     \"error\": " << (b.error.empty() ? std::string("null") : json_quote(b.error))
      << ", \"interrupted\": " << (b.interrupted ? "true" : "false")
      << ", \"unavailable\": " << (b.unavailable.empty() ? std::string("null") : json_quote(b.unavailable))
      << ",\n     \"notes\": [";
    for (std::size_t i = 0; i < b.notes.size(); ++i) o << (i ? ", " : "") << json_quote(b.notes[i]);
    o << "],\n     \"departures_declared\": [";
    for (std::size_t i = 0; i < b.info.departures.size(); ++i) {
      const auto& dd = b.info.departures[i];
      o << (i ? ", " : "") << "{\"op\": " << json_quote(dd.op) << ", \"from\": " << json_quote(dd.from)
        << ", \"to\": " << json_quote(dd.to) << ", \"profile\": " << json_quote(dd.profile)
        << ", \"class\": " << json_quote(dd.cls) << ", \"why\": " << json_quote(dd.why) << "}";
    }
    o << "],\n     \"summary\": {\"passed\": " << u(p + a) << ", \"failed\": " << u(f + (c.strict ? d : 0))
      << ", \"skipped\": " << u(s) << ", \"departures\": " << u(d) << ", \"any_nan\": " << u(a) << "},\n";
    o << "     \"suites\": [";
    for (std::size_t i = 0; i < b.suites.size(); ++i) {
      const auto& st = b.suites[i];
      o << (i ? ",\n       " : "\n       ") << "{\"op\": " << json_quote(st.op)
        << ", \"profile\": " << json_quote(st.profile) << ", \"label\": " << json_quote(st.label)
        << ", \"params\": " << json_quote(st.params) << ", \"source\": " << json_quote(st.source)
        << ", \"cases\": " << st.cases << ", \"passed\": " << st.passed << ", \"failed\": " << st.failed
        << ", \"departures\": " << st.departures << ", \"skipped\": " << st.skipped << ", \"any_nan\": " << st.any_nan
        << "}";
    }
    // every mismatch (no --max-errors cap), copied from the spool: one JSON object a line
    o << "],\n     \"mismatches\": [";
    flush();
    if (b.spool) {
      std::FILE* sp = b.spool.get();
      std::rewind(sp);
      char buf[1 << 16];
      bool first = true, line_start = true;
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, sp)) > 0)
        for (std::size_t i = 0; i < n; ++i) {
          if (line_start) std::fputs(first ? "\n       " : ",\n       ", out), first = false;
          line_start = buf[i] == '\n';
          if (!line_start) std::fputc(buf[i], out);
        }
    }
    o << "]}";
  }
  if (r.interrupted) complete = false;
  o << "\n  ],\n  \"complete\": " << (complete ? "true" : "false") << ",\n  \"exit_status\": " << r.exit_status
    << ",\n  \"nothing_compared\": "
    << (r.nothing_compared.empty() ? std::string("null") : json_quote(r.nothing_compared))
    << ",\n  \"summary\": {\"passed\": " << P << ", \"failed\": " << F << ", \"skipped\": " << S
    << ", \"departures\": " << D << ", \"any_nan\": " << A << "}\n}\n";
  flush();
}

// ---- JUnit XML ---------------------------------------------------------------------------------

// §34.4 the run's identity as JUnit properties, repeated in every testsuite (where CI tools read them).
std::string junit_properties(const RunReport& r) {
  std::string p = "    <properties>\n";
  auto prop = [&](const std::string& k, const std::string& v) {
    p += "      <property name=\"" + xml_escape(k) + "\" value=\"" + xml_escape(v) + "\"/>\n";
  };
  prop("run_id", r.id.id);
  for (const auto& [k, v] : run_parameters(r.cfg, r.id)) prop(k, v);
  prop("vectors_dir", r.id.vectors_dir);
  prop("shard", shard_text(r.cfg, r.id));
  return p + "    </properties>\n";
}

void junit_report(const RunReport& r, std::FILE* out) {
  const std::string props = junit_properties(r);
  std::ostringstream body;
  std::uint64_t tests = 0, failures = 0, skipped = 0, errors = 0;
  for (const auto& b : r.backends) {
    const std::string bname = b.info.name.empty() ? b.display : b.info.name;
    std::map<std::string, std::vector<const SuiteStats*>> groups;  // "<op> <profile>"
    std::vector<std::string> order;
    for (const auto& s : b.suites) {
      const std::string g = s.op + " " + s.profile;
      if (!groups.count(g)) order.push_back(g);
      groups[g].push_back(&s);
    }
    if (!b.unavailable.empty()) {  // §32.6 skipped, with the reason
      ++tests;
      ++skipped;
      body << "  <testsuite name=\"" << xml_escape(bname + " backend")
           << "\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\">\n"
           << props << "    <testcase classname=\"" << xml_escape(bname)
           << "\" name=\"backend\">\n      <skipped message=\"" << xml_escape("unavailable: " + b.unavailable)
           << "\"/>\n    </testcase>\n  </testsuite>\n";
    }
    std::string err = b.error, type = "backend";
    if (err.empty() && b.interrupted) err = kInterruptedWhy, type = "interrupted";
    if (err.empty() && r.backends.size() == 1 && !r.nothing_compared.empty())
      err = "nothing compared: " + r.nothing_compared, type = "nothing-compared";
    if (!err.empty()) {
      ++tests;
      ++errors;
      body << "  <testsuite name=\"" << xml_escape(bname + " backend")
           << "\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
           << props << "    <testcase classname=\"" << xml_escape(bname)
           << "\" name=\"backend\">\n      <error message=\"" << xml_escape(err) << "\" type=\"" << type
           << "\"/>\n    </testcase>\n  </testsuite>\n";
    }
    for (const auto& g : order) {
      const auto& ss = groups[g];
      std::uint64_t t = 0, fl = 0, sk = 0;
      for (const auto* s : ss) {
        ++t;
        if (s->failed || (r.cfg.strict && s->departures))
          ++fl;
        else if (s->cases == s->skipped)
          ++sk;
      }
      tests += t;
      failures += fl;
      skipped += sk;
      body << "  <testsuite name=\"" << xml_escape(bname + " " + g) << "\" tests=\"" << t << "\" failures=\"" << fl
           << "\" errors=\"0\" skipped=\"" << sk << "\">\n"
           << props;
      for (const auto* s : ss) {
        body << "    <testcase classname=\"" << xml_escape(bname + "." + s->op + "." + s->profile) << "\" name=\""
             << xml_escape(s->label + (s->source == "generated" ? " (generated)" : " (" + s->source + ")")) << "\">";
        if (s->failed || (r.cfg.strict && s->departures)) {
          body << "\n      <failure message=\"" << s->failed << " of " << s->cases
               << " cases mismatch\" type=\"mismatch\">";
          for (const auto& m : b.mismatches)
            if (m.params == s->params && m.where.rfind(s->source, 0) == 0 && (!m.is_departure || r.cfg.strict))
              body << xml_escape(m.inputs + " | got " + m.got + " | expected " + m.expected + " | " + m.cls + " | " +
                                 m.where + (m.detail.empty() ? std::string() : " | " + m.detail))
                   << "\n";
          if (b.mismatches_dropped)
            body << xml_escape("(" + std::to_string(b.mismatches_dropped) +
                               " mismatches of this backend are not listed "
                               "here: more than a JUnit file keeps; --report json lists every one)")
                 << "\n";
          body << "</failure>\n    ";
        } else if (s->cases == s->skipped && s->cases > 0) {
          body << "\n      <skipped message=\"not supported by the backend\"/>\n    ";
        } else if (s->departures) {
          body << "\n      <system-out>" << s->departures << " known departures</system-out>\n    ";
        }
        body << "</testcase>\n";
      }
      body << "  </testsuite>\n";
    }
  }
  if (r.backends.size() != 1 && (r.interrupted || !r.nothing_compared.empty())) {
    // the run as a whole: interrupted between backends, or no backend compared a case
    const std::string err = r.interrupted ? kInterruptedWhy : "nothing compared: " + r.nothing_compared;
    ++tests;
    ++errors;
    body << "  <testsuite name=\"run\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
         << props << "    <testcase classname=\"numref conform\" name=\"run\">\n      <error message=\""
         << xml_escape(err) << "\" type=\"" << (r.interrupted ? "interrupted" : "nothing-compared")
         << "\"/>\n    </testcase>\n  </testsuite>\n";
  }
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"numref conform\" tests=\"" << tests
    << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\">\n"
    << body.str() << "</testsuites>\n";
  const std::string t = o.str();
  std::fwrite(t.data(), 1, t.size(), out);
}

}  // namespace numref::conform
