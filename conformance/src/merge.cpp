// numref conformance — `numref report merge`: shard reports of one run into one verdict.
//                                                                        spec §34.11, §34.7
//
// Each shard's JSON report is parsed into the report structures the runner fills (report.hpp),
// so the merged report is written by the same writers as a single run's: text, JSON, JUnit.
#include "numref/conform/merge.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "numref/conform/output.hpp"
#include "numref/conform/util.hpp"
#include "report.hpp"

namespace numref::conform {

namespace {

// ---- a small JSON reader (the subset a report uses: every JSON value) ----------------------------

// An object's members are JsonMember (declared before, defined after Json): a std::vector of an
// incomplete type is allowed (C++17), a std::pair of one is not, and clang with libstdc++ 12
// rejects std::vector<std::pair<std::string, Json>> inside Json (the documented fuzz build).
struct JsonMember;
struct Json {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  bool b = false;
  std::string s;  // a string's text, or a number as written
  std::vector<Json> a;
  std::vector<JsonMember> o;

  const Json* get(std::string_view key) const;
};
struct JsonMember {
  std::string key;
  Json value;
};

const Json* Json::get(std::string_view key) const {
  for (const auto& m : o)
    if (m.key == key) return &m.value;
  return nullptr;
}

class JsonReader {
 public:
  explicit JsonReader(std::string_view t) : t_(t) {}
  Json document() {
    Json v = value(0);
    ws();
    if (i_ != t_.size()) fail("text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("not valid JSON at byte " + std::to_string(i_) + ": " + what);
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= t_.size()) fail("unterminated string");
      const char c = t_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) fail("unterminated string");
      const char e = t_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          const auto h = i_ + 4 <= t_.size() ? parse_hex(t_.substr(i_, 4)) : std::nullopt;
          if (!h) fail("bad \\u escape");
          i_ += 4;
          utf8(out, static_cast<unsigned>(*h));  // reports escape control characters only
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  Json value(int depth) {
    if (depth > 64) fail("nested too deeply");
    ws();
    Json v;
    if (i_ >= t_.size()) fail("unexpected end");
    const char c = t_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Json::Kind::object;
      if (eat('}')) return v;
      do {
        ws();
        std::string k = string();
        expect(':');
        v.o.push_back(JsonMember{std::move(k), value(depth + 1)});
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.kind = Json::Kind::array;
      if (eat(']')) return v;
      do v.a.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::Kind::string;
      v.s = string();
    } else if (word("true") || word("false")) {
      v.kind = Json::Kind::boolean;
      v.b = t_[i_ - 1] == 'e' && t_[i_ - 2] == 'u';
    } else if (word("null")) {
      v.kind = Json::Kind::null;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const std::size_t s0 = i_;
      while (i_ < t_.size() && std::strchr("+-0123456789.eE", t_[i_])) ++i_;
      v.kind = Json::Kind::number;
      v.s = std::string(t_.substr(s0, i_ - s0));
    } else {
      fail("unexpected character");
    }
    return v;
  }
  std::string_view t_;
  std::size_t i_ = 0;
};

// Writes v back as JSON (numbers as they were written).
void dump(const Json& v, std::string& out) {
  switch (v.kind) {
    case Json::Kind::null: out += "null"; return;
    case Json::Kind::boolean: out += v.b ? "true" : "false"; return;
    case Json::Kind::number: out += v.s; return;
    case Json::Kind::string: out += "\"" + json_escape(v.s) + "\""; return;
    case Json::Kind::array:
      out += '[';
      for (std::size_t i = 0; i < v.a.size(); ++i) {
        if (i) out += ", ";
        dump(v.a[i], out);
      }
      out += ']';
      return;
    case Json::Kind::object:
      out += '{';
      for (std::size_t i = 0; i < v.o.size(); ++i) {
        if (i) out += ", ";
        out += "\"" + json_escape(v.o[i].key) + "\": ";
        dump(v.o[i].value, out);
      }
      out += '}';
      return;
  }
}

// ---- one shard report --------------------------------------------------------------------------

struct Shard {
  std::string file;
  RunReport rep;
};

constexpr std::size_t kMaxReportBytes = std::size_t{1} << 30;  // 1 GiB: a larger file is no shard report
constexpr std::uint64_t kMaxShards = std::uint64_t{1} << 20;   // numref conform --shard I/N: N <= 2^20
constexpr std::uint64_t kMaxSuiteCount = std::uint64_t{1} << 40;

// Field readers: a missing or mistyped member is a malformed report.
struct Fields {
  const std::string& file;
  [[noreturn]] void bad(const std::string& what) const {
    throw std::invalid_argument(file + ": not a numref conform JSON report: " + what);
  }
  const Json& at(const Json& o, std::string_view k, Json::Kind kind) const {
    const Json* v = o.kind == Json::Kind::object ? o.get(k) : nullptr;
    if (!v || v->kind != kind) bad("member \"" + std::string(k) + "\" missing or of the wrong type");
    return *v;
  }
  // Strings come back with their control characters escaped (\n, \t, \x1b, ...): a shard's text
  // is printed on lines of the merged report, and a line break in it must not make a line.
  std::string str(const Json& o, std::string_view k) const { return printable(at(o, k, Json::Kind::string).s); }
  std::string str_or_null(const Json& o, std::string_view k) const {
    const Json* v = o.get(k);
    return v && v->kind == Json::Kind::string ? printable(v->s) : std::string();
  }
  static std::string printable(const std::string& s) {
    std::string o;
    for (const char ch : s) {
      const auto u = static_cast<unsigned char>(ch);
      if (u >= 0x20 && u != 0x7f) {
        o += ch;
        continue;
      }
      switch (ch) {
        case '\n': o += "\\n"; break;
        case '\r': o += "\\r"; break;
        case '\t': o += "\\t"; break;
        default: {
          const char* hex = "0123456789abcdef";
          o += "\\x";
          o += hex[u >> 4];
          o += hex[u & 15];
        }
      }
    }
    return o;
  }
  // A count no larger than `max` (the runner's own bound on what it can write).
  std::uint64_t num(const Json& o, std::string_view k, std::uint64_t max, const std::string& why) const {
    const std::uint64_t v = num(o, k);
    if (v > max) bad("\"" + std::string(k) + "\" " + std::to_string(v) + " is out of range: at most " + why);
    return v;
  }
  bool boolean(const Json& o, std::string_view k) const { return at(o, k, Json::Kind::boolean).b; }
  std::uint64_t num(const Json& o, std::string_view k) const {
    const std::string& t = at(o, k, Json::Kind::number).s;
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
      bad("\"" + std::string(k) + "\" " + printable(t.substr(0, 40)) + " is not a count");
    try {
      return std::stoull(t);
    } catch (const std::exception&) {
      bad("\"" + std::string(k) + "\" is out of range");
    }
  }
  std::vector<std::string> strings(const Json& o, std::string_view k) const {
    std::vector<std::string> v;
    for (const Json& e : at(o, k, Json::Kind::array).a) {
      if (e.kind != Json::Kind::string) bad("\"" + std::string(k) + "\" holds a non-string");
      v.push_back(printable(e.s));
    }
    return v;
  }
};

Level parse_level(const Fields& f, const std::string& s) {
  if (s == "0") return Level::l0;
  if (s == "1") return Level::l1;
  if (s == "2") return Level::l2;
  if (s == "exhaustive") return Level::exhaustive;
  f.bad("unknown level '" + s + "'");
}

// A mismatch object of a report back into a Mismatch; `fields` keeps the structured members
// (location, inputs, crash, results) as written, so mismatch_json() reproduces the object.
Mismatch read_mismatch(const Fields& f, const Json& m) {
  Mismatch x;
  x.op = f.str(m, "op");
  x.label = f.str(m, "label");
  x.params = f.str(m, "params");
  x.cls = f.str(m, "class");
  const Json* dep = m.get("known_departure");
  x.is_departure = dep && dep->kind == Json::Kind::string;
  if (x.is_departure) x.departure = dep->s;
  x.where = f.str(m, "where");
  const Json& t = f.at(m, "text", Json::Kind::object);
  x.inputs = f.str(t, "inputs");
  x.got = f.str(t, "got");
  x.expected = f.str(t, "expected");
  x.detail = f.str(t, "detail");
  for (const char* k : {"location", "inputs", "crash", "results"})
    if (const Json* v = m.get(k)) {
      if (!x.fields.empty()) x.fields += ", ";
      x.fields += "\"" + std::string(k) + "\": ";
      dump(*v, x.fields);
    }
  return x;
}

// The source of a mismatch's suite: "generated" or the vector file of "<file>:<line>".
std::string source_of(const Mismatch& m) {
  if (m.where.rfind("generated", 0) == 0) return "generated";
  return m.where.substr(0, m.where.rfind(':'));
}

Shard read_shard(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw std::invalid_argument(file + ": is a directory, not a report");
  if (!in) throw std::invalid_argument(file + ": cannot be read: " + std::strerror(errno));
  const Fields f{file};
  // Read in chunks, at most kMaxReportBytes: an endless input (/dev/zero, a pipe) is refused,
  // not read until memory runs out; one that does not begin as a JSON object is refused at once.
  std::string text;
  std::vector<char> chunk(std::size_t{1} << 16);
  bool opened = false;
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxReportBytes)
      throw std::invalid_argument(file + ": is larger than " + std::to_string(kMaxReportBytes >> 20) +
                                  " MiB: not a shard report (numref conform --report json) this merge reads");
    if (!opened) {
      const std::size_t at = text.find_first_not_of(" \t\r\n");
      if (at == std::string::npos) continue;
      if (text[at] != '{' && text[at] != '<')
        f.bad("not valid JSON at byte " + std::to_string(at) + ": a report is a JSON object (it begins with '{')");
      opened = true;
    }
  }
  if (in.bad()) throw std::invalid_argument(file + ": cannot be read: " + std::strerror(errno));
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '<')
    throw std::invalid_argument(file +
                                ": a JUnit XML report; merge reads the JSON reports of the shards "
                                "(numref conform --report json), and writes JUnit with --report junit");
  Json doc;
  try {
    doc = JsonReader(text).document();
  } catch (const std::invalid_argument& e) {
    f.bad(e.what());
  }
  if (doc.kind != Json::Kind::object || !doc.get("numref_conform_report")) f.bad("no \"numref_conform_report\" member");
  const Json* run = doc.get("run");
  if (!run)
    throw std::invalid_argument(file + ": has no run identity (\"run\"): written by a numref older than spec §34.11");
  Shard s;
  s.file = file;
  RunReport& r = s.rep;
  RunConfig& c = r.cfg;
  c.backend = f.str(*run, "backend");
  c.profiles = f.strings(*run, "profiles");
  c.ops = f.strings(*run, "ops");
  c.level = parse_level(f, f.str(*run, "level"));
  c.seed = f.num(*run, "seed");
  c.any_nan = f.boolean(*run, "any_nan");
  c.strict = f.boolean(*run, "strict");
  c.max_errors = f.num(f.at(doc, "config", Json::Kind::object), "max_errors");
  const Json& sh = f.at(*run, "shard", Json::Kind::object);
  r.id.merged = f.num(sh, "merged");
  if (r.id.merged) throw std::invalid_argument(file + ": a merged report; merge the shard reports themselves");
  // §34.3 as numref conform --shard I/N takes them: 1 <= N <= 2^20, 0 <= I < N
  c.shard_count =
      f.num(sh, "count", kMaxShards, std::to_string(kMaxShards) + " (numref conform --shard I/N: N <= 2^20)");
  if (c.shard_count == 0) f.bad("\"count\" 0 is out of range: a run has at least 1 shard");
  c.shard_index =
      f.num(sh, "index", c.shard_count - 1,
            std::to_string(c.shard_count - 1) + " (shard I/N: 0 <= I < N = " + std::to_string(c.shard_count) + ")");
  r.id.id = f.str(*run, "id");
  r.id.numref_version = f.str(*run, "numref_version");
  r.id.spec_version = f.str(*run, "spec_version");
  r.id.vectors_dir = f.str_or_null(*run, "vectors");
  r.id.manifest_sha256 = f.str_or_null(*run, "manifest_sha256");
  // §34.7 the statuses a run exits with; anything else is not a report of numref conform
  const std::uint64_t status = f.num(doc, "exit_status");
  if (status != kExitPass && status != kExitMismatch && status != kExitUsage && status != kExitBackend &&
      status != kExitUnavailable && status != kExitInterrupted)
    f.bad("\"exit_status\" " + std::to_string(status) +
          " is not an exit status of numref conform (0, 1, 2, 3, 77 or 130, spec §34.7)");
  r.exit_status = static_cast<int>(status);
  r.interrupted = r.exit_status == kExitInterrupted;
  r.nothing_compared = f.str_or_null(doc, "nothing_compared");
  for (const Json& jb : f.at(doc, "backends", Json::Kind::array).a) {
    BackendReport b;
    b.display = f.str(jb, "backend");
    b.info.name = f.str(jb, "name");
    b.info.version = f.str(jb, "version");
    b.info.kind = f.str(jb, "kind");
    b.info.location = f.str(jb, "location");
    b.info.description = f.str_or_null(jb, "description");
    b.info.flags = f.boolean(jb, "flags_compared");
    b.info.counts = f.boolean(jb, "counts_compared");
    b.opened = f.boolean(jb, "opened");
    b.profiles = f.strings(jb, "profiles");
    b.ops = f.strings(jb, "ops");
    if (b.opened) b.info.ops = b.ops;  // rows of the summary: the ops it ran (§34.4)
    b.vectors = f.str(jb, "vectors");
    try {
      b.seconds = std::stod(f.at(jb, "seconds", Json::Kind::number).s);
    } catch (const std::logic_error&) {
      f.bad("\"seconds\" is not a number");
    }
    b.error = f.str_or_null(jb, "error");
    b.interrupted = f.boolean(jb, "interrupted");
    b.unavailable = f.str_or_null(jb, "unavailable");
    b.notes = f.strings(jb, "notes");
    for (const Json& d : f.at(jb, "departures_declared", Json::Kind::array).a)
      b.info.departures.push_back(
          {f.str(d, "op"), f.str(d, "from"), f.str(d, "to"), f.str(d, "profile"), f.str(d, "class"), f.str(d, "why")});
    for (const Json& js : f.at(jb, "suites", Json::Kind::array).a) {
      SuiteStats& st = b.suites[b.suite(f.str(js, "op"), f.str(js, "profile"), f.str(js, "label"), f.str(js, "params"),
                                        f.str(js, "source"))];
      // bounded so that the sums over at most 2^20 shards cannot wrap
      const std::string why = "2^40 per suite of a shard";
      st.cases += f.num(js, "cases", kMaxSuiteCount, why);
      st.passed += f.num(js, "passed", kMaxSuiteCount, why);
      st.failed += f.num(js, "failed", kMaxSuiteCount, why);
      st.departures += f.num(js, "departures", kMaxSuiteCount, why);
      st.skipped += f.num(js, "skipped", kMaxSuiteCount, why);
      st.any_nan += f.num(js, "any_nan", kMaxSuiteCount, why);
    }
    for (const Json& jm : f.at(jb, "mismatches", Json::Kind::array).a) b.mismatches.push_back(read_mismatch(f, jm));
    r.backends.push_back(std::move(b));
  }
  if (r.backends.empty()) f.bad("no backend");
  // §34.7 a run one of whose backends stopped (an error, an interrupt) exits 2, 3 or 130: a
  // report that says otherwise would merge into an INCOMPLETE verdict with status 0 or 1
  for (const BackendReport& b : r.backends)
    if ((!b.error.empty() || b.interrupted) && r.exit_status != kExitUsage && r.exit_status != kExitBackend &&
        r.exit_status != kExitInterrupted)
      f.bad("exit_status " + std::to_string(r.exit_status) + " but backend " + b.display + " stopped (" +
            (b.error.empty() ? std::string("interrupted") : b.error) + "): a stopped run exits 2, 3 or 130 (§34.7)");
  return s;
}

std::string shard_name(std::uint64_t i, std::uint64_t n) { return std::to_string(i) + "/" + std::to_string(n); }

// §34.11 every report is a shard of the first one's run: same parameters (the differing one is
// named), same run id, same shard count, same backends.
void check_same_run(const Shard& first, const Shard& s) {
  const auto a = run_parameters(first.rep.cfg, first.rep.id), b = run_parameters(s.rep.cfg, s.rep.id);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].second != b[i].second)
      throw std::invalid_argument(s.file + ": a shard of another run: " + a[i].first + " is '" + b[i].second + "', " +
                                  first.file + " has '" + a[i].second + "'");
  if (s.rep.id.id != first.rep.id.id)
    throw std::invalid_argument(s.file + ": a shard of another run: run id " + s.rep.id.id + ", " + first.file +
                                " has " + first.rep.id.id);
  if (s.rep.cfg.shard_count != first.rep.cfg.shard_count)
    throw std::invalid_argument(s.file + ": shard " + shard_name(s.rep.cfg.shard_index, s.rep.cfg.shard_count) +
                                " of a run cut in " + std::to_string(s.rep.cfg.shard_count) + ", " + first.file +
                                " in " + std::to_string(first.rep.cfg.shard_count));
  bool same = s.rep.backends.size() == first.rep.backends.size();
  for (std::size_t i = 0; same && i < s.rep.backends.size(); ++i)
    same = s.rep.backends[i].display == first.rep.backends[i].display;
  if (!same) throw std::invalid_argument(s.file + ": its backends differ from those of " + first.file);
}

// Adds shard backend `from` into the merged backend `to`.
void add_backend(BackendReport& to, BackendReport&& from, const std::string& shard) {
  if (!to.opened && from.opened) {
    to.info = from.info;
    to.opened = true;
    to.profiles = from.profiles;
    to.ops = from.ops;
    to.vectors = from.vectors;
  }
  if (to.unavailable.empty()) to.unavailable = from.unavailable;
  if (to.error.empty() && !from.error.empty()) to.error = "shard " + shard + ": " + from.error;
  to.interrupted |= from.interrupted;
  to.seconds += from.seconds;
  for (auto& n : from.notes)
    if (std::find(to.notes.begin(), to.notes.end(), n) == to.notes.end()) to.notes.push_back(std::move(n));
  for (const SuiteStats& s : from.suites) {
    SuiteStats& t = to.suites[to.suite(s.op, s.profile, s.label, s.params, s.source)];
    t.cases += s.cases;
    t.passed += s.passed;
    t.failed += s.failed;
    t.skipped += s.skipped;
    t.departures += s.departures;
    t.any_nan += s.any_nan;
  }
  for (auto& m : from.mismatches) {
    if (m.is_departure) ++to.departure_classes[m.op + " " + m.cls];
    to.mismatches.push_back(std::move(m));
  }
}

// §34.7 the status of the merged run, as a single run's: the largest of 2, 3 and 130 that a
// shard stopped with (a shard that only compared nothing does not count: the run as a whole
// decides that), else 1 for a mismatch, else 2 if nothing was compared, else 77 if a shard
// had an unavailable backend under --require-backend, else 0.
int merged_status(RunReport& r, const std::vector<Shard>& shards) {
  int worst = 0;
  bool unavailable = false;
  for (const Shard& s : shards) {
    const int e = s.rep.exit_status;
    const bool stopped = std::any_of(s.rep.backends.begin(), s.rep.backends.end(),
                                     [](const BackendReport& b) { return !b.error.empty() || b.interrupted; });
    if ((e == kExitUsage && stopped) || e == kExitBackend || e == kExitInterrupted) worst = std::max(worst, e);
    if (e == kExitUnavailable) unavailable = true;
  }
  std::uint64_t failed = 0, compared = 0;
  const BackendReport* ran = nullptr;
  for (const BackendReport& b : r.backends) {
    failed += b.total(&SuiteStats::failed) + (r.cfg.strict ? b.total(&SuiteStats::departures) : 0);
    if (b.opened) {
      compared += b.compared();
      if (!ran) ran = &b;
    }
  }
  r.nothing_compared.clear();
  // an INCOMPLETE merge (a backend stopped) never passes (read_shard refuses such a shard's
  // status 0 or 1 already): a backend failure
  for (const BackendReport& b : r.backends)
    if ((!b.error.empty() || b.interrupted) && worst == 0) worst = kExitBackend;
  if (worst) return worst;
  if (failed) return kExitMismatch;
  if (ran && compared == 0) {
    r.nothing_compared = r.backends.size() > 1 ? "no backend compared a case" : ran->nothing_compared_reason(r.cfg);
    return kExitUsage;
  }
  return unavailable ? kExitUnavailable : kExitPass;
}

// The text report of the merged run: per backend its header, the mismatch lines (at most
// max_errors per suite, as the shards' runs printed them), its summary; then the total line.
void merged_text(std::FILE* f, RunReport& r) {
  const RunConfig& cfg = r.cfg;
  text_run(f, r.id);
  for (BackendReport& b : r.backends) {
    if (!b.unavailable.empty()) {
      std::fprintf(f, "== backend %s\nSKIPPED %s: unavailable: %s\n", b.display.c_str(), b.display.c_str(),
                   b.unavailable.c_str());
      continue;
    }
    if (b.opened) text_header(f, cfg, r.id, b);
    if (!b.error.empty()) std::fprintf(f, "ERROR %s\n", b.error.c_str());
    for (const Mismatch& m : b.mismatches) {
      SuiteStats& s = b.suites[b.suite(m.op, "", m.label, m.params, source_of(m))];
      if (m.is_departure && !cfg.strict) continue;
      if (cfg.max_errors == 0 || s.shown < cfg.max_errors) {
        ++s.shown;
        text_mismatch(f, m);
      }
    }
    text_summary(f, cfg, b);
  }
  if (r.backends.size() > 1) std::fprintf(f, "== all backends\n");
  text_total(f, r);
}

}  // namespace

int merge_reports(const std::vector<std::string>& files, const MergeOptions& opt, std::FILE* text_out) {
  if (files.empty()) throw std::invalid_argument("no report given (numref report merge REPORT...)");
  std::optional<OutputFile> out;
  try {
    if (!opt.out.empty()) {
      refuse_output_that_is_input("--out", opt.out, files);
      out.emplace(opt.out);
    }
  } catch (const OutputError& e) {
    const std::string w = e.what();
    throw std::invalid_argument(w.rfind("--out", 0) == 0 ? w : "--out " + w);
  }
  std::vector<Shard> shards;
  for (const auto& f : files) shards.push_back(read_shard(f));
  // §34.11 one run, each shard once, none missing
  const std::uint64_t n = shards.front().rep.cfg.shard_count;
  std::map<std::uint64_t, std::size_t> by_index;  // shard index -> shards[k]
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const Shard& s = shards[k];
    check_same_run(shards.front(), s);
    const auto [it, fresh] = by_index.emplace(s.rep.cfg.shard_index, k);
    if (!fresh)
      throw std::invalid_argument("shard " + shard_name(s.rep.cfg.shard_index, n) +
                                  " given twice: " + shards[it->second].file + " and " + s.file);
  }
  if (by_index.size() != n) {
    std::string missing;
    std::uint64_t k = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      if (!by_index.count(i) && k++ < 16) missing += (missing.empty() ? "" : ", ") + shard_name(i, n);
    if (k > 16) missing += ", ... (" + std::to_string(k) + " in all)";
    throw std::invalid_argument("missing shard" + std::string(k > 1 ? "s " : " ") + missing + " of run " +
                                shards.front().rep.id.id + ": a merge without every shard is no verdict");
  }
  // the merged run: the shards in index order
  RunReport r;
  r.cfg = shards.front().rep.cfg;
  r.cfg.shard_index = 0;
  r.id = shards.front().rep.id;
  r.id.merged = n;
  r.backends.resize(shards.front().rep.backends.size());
  for (const auto& [i, k] : by_index) {
    Shard& s = shards[k];
    for (std::size_t bi = 0; bi < r.backends.size(); ++bi) {
      r.backends[bi].display = s.rep.backends[bi].display;
      add_backend(r.backends[bi], std::move(s.rep.backends[bi]), shard_name(i, n));
    }
    r.interrupted |= s.rep.interrupted;
  }
  int status = merged_status(r, shards);
  r.exit_status = status;

  std::FILE* text = text_out;
  if (opt.report == ReportFormat::text && out) text = out->file();
  const bool want_text = opt.report == ReportFormat::text || out;
  try {
    if (want_text) merged_text(text, r);
    if (opt.report != ReportFormat::text) {
      std::FILE* f = out ? out->file() : stdout;
      if (opt.report == ReportFormat::json) {
        for (BackendReport& b : r.backends) {  // json_report copies the mismatches from a spool
          b.spool.reset(std::tmpfile(), [](std::FILE* p) {
            if (p) std::fclose(p);
          });
          if (!b.spool) throw OutputError(std::string("cannot create a temporary file: ") + std::strerror(errno));
          for (const Mismatch& m : b.mismatches) {
            const std::string line = mismatch_json(m) + "\n";
            std::fwrite(line.data(), 1, line.size(), b.spool.get());
          }
          if (std::ferror(b.spool.get())) throw OutputError("the temporary file of the mismatches: write failed");
        }
        json_report(r, f);
      } else {
        junit_report(r, f);
      }
    }
    if (out) out->commit();
  } catch (const OutputError& e) {
    throw std::invalid_argument(std::string(out ? "--out " : "") + e.what());
  }
  return status;
}

}  // namespace numref::conform
