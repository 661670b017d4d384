// numref conformance — golden vectors exported for testbenches (export.hpp).   spec §31.8
#include "numref/conform/export.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "numref/conform/util.hpp"
#include "numref/conform/vectors.hpp"
#include "vector_file.hpp"

#ifndef NUMREF_VERSION
#error "NUMREF_VERSION (the project's version) must be defined by the build (conformance/CMakeLists.txt)"
#endif

namespace numref::conform {

std::string_view numref_version() { return NUMREF_VERSION; }

namespace {

constexpr std::string_view kExportVersion = "numref vectors export 1";

// Hex digits of one value of column c in a memh word: a hex code keeps its vector-file digits,
// a decimal count becomes 8 hex digits, an error sum its 9 values of 16 digits (§31.7) joined.
int memh_digits(const Column& c) {
  switch (c.notation) {
    case Notation::hex: return c.digits;
    case Notation::decimal: return 8;
    case Notation::sum: return kSumWords / 2 * 16;
  }
  return c.digits;
}

void append_memh_value(std::string& s, const Column& c, const std::uint32_t* v) {
  if (c.notation != Notation::sum) {
    append_hex(s, *v, memh_digits(c));
    return;
  }
  for (int q = 0; q < kSumWords / 2; ++q)
    append_hex(s, std::uint64_t{v[2 * q]} | (std::uint64_t{v[2 * q + 1]} << 32), 16);
}

// The words of column c of a record (inputs or expected results).
const std::uint32_t* column_words(const ExportRecord& r, const Column& c) {
  return (c.output() ? r.expected.data() : r.in.data()) + c.at;
}

std::string_view role_word(const Column& c) { return c.output() ? "expected" : "input"; }

// Whether the record holds column c: an optional result (§34.1 Role::opt, the §9.1 flags or the
// §19.5 counts) that its vector file does not record is kNotReported (a divergence file, §B.4,
// records no counts); it is neither compared nor written as a value.
bool recorded(const Column& c, const std::uint32_t* w) {
  return c.role != Role::opt || !std::all_of(w, w + c.words(), [](std::uint32_t v) { return v == kNotReported; });
}

// What a value of column c is, for the layout comments.
std::string column_meaning(const Column& c) {
  if (c.notation == Notation::sum)
    return "exact error sum (§22.3): limbs 0-4 of S, n, nonfinite_input, nonfinite_quant, zeros, 64 bits each";
  if (c.notation == Notation::decimal) return "count (decimal in vector files, hex here)";
  if (c.format) return std::string(c.format->name) + " code";
  if (c.cap == NUMREF_CAP_FLAGS) return "§9.1 flags: 01 inexact, 02 underflow, 04 overflow, 10 invalid";
  if (!c.what.empty()) return c.what;
  return "value";
}

// The suites of a set, in order of first appearance, and each record's suite index.
struct Suites {
  std::vector<const Params*> list;
  std::vector<std::size_t> of_record;
  explicit Suites(const ExportSet& set) {
    std::map<std::string, std::size_t> index;
    for (const auto& r : set.records) {
      const auto [it, fresh] = index.emplace(r.params->text(), list.size());
      if (fresh) list.push_back(r.params.get());
      of_record.push_back(it->second);
    }
  }
};

std::string shape_text(const Schema& s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

// The header every format writes, as comment lines after `prefix` ("// " or "# ").
std::string header_comment(const ExportSet& set, const Suites& suites, std::string_view prefix, std::string_view fmt,
                           std::string_view what) {
  std::string h;
  auto line = [&](const std::string& s) {
    h += prefix;
    h += s;
    h += '\n';
  };
  line(std::string(kExportVersion) + ": " + std::string(fmt) + ", " + std::string(what));
  line("numref spec " + std::string(numref_version()) + " (numref " + std::string(numref_version()) +
       "); this layout: spec §31.8; the cases and their header: spec §31");
  for (const auto& src : set.sources) {
    line("source " + src.path);
    for (const auto& [k, v] : src.header) line("  " + k + " " + v);
  }
  for (std::size_t i = 0; i < suites.list.size(); ++i) {
    const Params& p = *suites.list[i];
    line("suite " + std::to_string(i) + ": " + p.label() + "; clause " + p.clause() + "; parameters " + p.text());
  }
  line("records " + std::to_string(set.records.size()));
  return h;
}

// §31.8 memh: one fixed-width word per record.
std::string memh_text(const ExportSet& set, const Suites& suites) {
  // The layout: (name, role, digits) of every value, most significant first.
  auto layout_of = [](const Params& p) {
    std::string s;
    for (const auto& c : p.schema().columns)
      s += c.name + ":" + std::string(role_word(c)) + ":" + std::to_string(c.count()) + "x" +
           std::to_string(memh_digits(c)) + " ";
    return s;
  };
  const Params& p0 = *suites.list.front();
  const std::string layout = layout_of(p0);
  for (std::size_t i = 1; i < suites.list.size(); ++i)
    if (layout_of(*suites.list[i]) != layout)
      throw ExportError("memh needs one record layout, but suite '" + suites.list[i]->label() + "' has columns " +
                        layout_of(*suites.list[i]) + "and suite '" + p0.label() + "' " + layout +
                        "(export them separately, or use --to csv or json)");
  int total = 0;
  for (const auto& c : p0.schema().columns) total += memh_digits(c) * static_cast<int>(c.count());
  std::string s = header_comment(set, suites, "// ", "memh", "one record per line for Verilog $readmemh");
  s += "// record: " + std::to_string(total * 4) + " bits as " + std::to_string(total) +
       " hex digits, most significant field first:\n";
  int hi = total * 4 - 1;
  const bool shaped = p0.schema().shape_prefix;
  if (shaped)
    s += "//   (tensor shape " + shape_text(p0.schema()) + "; values in the order of the vector file, spec §31.6)\n";
  for (const auto& c : p0.schema().columns) {
    const int bits = memh_digits(c) * 4;
    for (std::size_t k = 0; k < c.count(); ++k) {
      const std::string name = c.count() == 1 ? c.name : c.name + "[" + std::to_string(k) + "]";
      s += "//   [" + std::to_string(hi) + ":" + std::to_string(hi - bits + 1) + "] " + name + " " +
           std::string(role_word(c)) + ", " + column_meaning(c) + "\n";
      hi -= bits;
    }
  }
  s += "// SystemVerilog: logic [" + std::to_string(total * 4 - 1) +
       ":0] vec [0:" + std::to_string(set.records.size() - 1) + "]; initial $readmemh(\"<this file>\", vec);\n";
  for (std::size_t i = 0; i < set.records.size(); ++i) {
    const ExportRecord& r = set.records[i];
    for (const auto& c : r.params->schema().columns) {
      const std::uint32_t* w = column_words(r, c);
      for (std::size_t k = 0; k < c.count(); ++k) append_memh_value(s, c, w + k * static_cast<std::size_t>(c.width));
    }
    std::string note;
    if (suites.list.size() > 1) note = "suite " + std::to_string(suites.of_record[i]);
    if (!r.note.empty()) note += (note.empty() ? "" : ": ") + r.note;
    if (!note.empty()) s += "  // " + note;
    s += '\n';
  }
  return s;
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(std::string_view v) {
  if (v.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(v);
  std::string o(1, '"');
  for (char ch : v) {
    if (ch == '"') o += '"';
    o += ch;
  }
  o += '"';
  return o;
}

std::string csv_text(const ExportSet& set, const Suites& suites) {
  auto names_of = [](const Params& p) {
    return std::string(p.schema().shape_prefix ? "shape " : "") + p.schema().names();
  };
  const std::string names = names_of(*suites.list.front());
  for (const Params* p : suites.list)
    if (names_of(*p) != names)
      throw ExportError("csv needs one set of columns, but suite '" + p->label() + "' has '" + names_of(*p) +
                        "' and suite '" + suites.list.front()->label() + "' '" + names +
                        "' (export them separately, or use --to json)");
  std::string s = header_comment(set, suites, "# ", "csv", "one record per row after the column names");
  s += "# columns: suite (the suite's canonical parameters, spec §34.2)";
  for (const auto& c : suites.list.front()->schema().columns)
    s += ", " + c.name + " (" + std::string(role_word(c)) + ", " + column_meaning(c) + ")";
  s += ", note; values as in the vector files (§31.3, grids §31.6)\n";
  s += "suite";
  if (suites.list.front()->schema().shape_prefix) s += ",shape";
  for (const auto& c : suites.list.front()->schema().columns) s += "," + c.name;
  s += ",note\n";
  for (const auto& r : set.records) {
    s += csv_field(r.params->text());
    if (r.params->schema().shape_prefix) s += "," + shape_text(r.params->schema());
    for (const auto& c : r.params->schema().columns) {
      const std::uint32_t* w = column_words(r, c);
      s += "," + (recorded(c, w) ? csv_field(column_text(c, w)) : std::string());  // not recorded: empty
    }
    s += "," + csv_field(r.note) + "\n";
  }
  return s;
}

std::string json_text(const ExportSet& set, const Suites& suites) {
  std::string s = "{\"export\": " + json_quote(kExportVersion) +
                  ", \"numref_version\": " + json_quote(numref_version()) +
                  ", \"spec_version\": " + json_quote(numref_version()) + ", \"clause\": \"§31.8\",\n\"sources\": [";
  for (std::size_t i = 0; i < set.sources.size(); ++i) {
    s += i ? ",\n  " : "\n  ";
    s += "{\"path\": " + json_quote(set.sources[i].path) + ", \"header\": {";
    bool first = true;
    for (const auto& [k, v] : set.sources[i].header) {
      s += (first ? "" : ", ") + json_quote(k) + ": " + json_quote(v);
      first = false;
    }
    s += "}}";
  }
  s += "],\n\"suites\": [";
  for (std::size_t i = 0; i < suites.list.size(); ++i) {
    const Params& p = *suites.list[i];
    s += i ? ",\n  " : "\n  ";
    s += "{\"params\": " + json_quote(p.text()) + ", \"label\": " + json_quote(p.label()) +
         ", \"family\": " + json_quote(p.family().name()) + ", \"profile\": " + json_quote(p.profile()) +
         ", \"clause\": " + json_quote(p.clause()) + ", \"columns\": [";
    bool first = true;
    for (const auto& c : p.schema().columns) {
      s += (first ? "" : ", ") + std::string("{\"name\": ") + json_quote(c.name) +
           ", \"role\": " + json_quote(role_word(c)) + ", \"meaning\": " + json_quote(column_meaning(c)) +
           ", \"rows\": " + std::to_string(c.rows) + ", \"cols\": " + std::to_string(c.cols) + "}";
      first = false;
    }
    s += "]}";
  }
  s += "],\n\"records\": [";
  for (std::size_t i = 0; i < set.records.size(); ++i) {
    const ExportRecord& r = set.records[i];
    s += i ? ",\n  " : "\n  ";
    s += "{\"suite\": " + std::to_string(suites.of_record[i]) + ", \"source\": " + std::to_string(r.source) +
         ", \"line\": " + std::to_string(r.line);
    if (r.params->schema().shape_prefix) s += ", \"shape\": " + json_quote(shape_text(r.params->schema()));
    for (const bool out : {false, true}) {
      s += out ? ", \"expected\": {" : ", \"input\": {";
      bool first = true;
      for (const auto& c : r.params->schema().columns) {
        if (c.output() != out) continue;
        const std::uint32_t* w = column_words(r, c);
        s +=
            (first ? "" : ", ") + json_quote(c.name) + ": " + (recorded(c, w) ? json_quote(column_text(c, w)) : "null");
        first = false;
      }
      s += "}";
    }
    if (!r.note.empty()) s += ", \"note\": " + json_quote(r.note);
    s += "}";
  }
  s += "]}\n";
  return s;
}

}  // namespace

std::optional<ExportFormat> parse_export_format(std::string_view name) {
  for (ExportFormat f : {ExportFormat::memh, ExportFormat::csv, ExportFormat::json})
    if (to_string(f) == name) return f;
  return std::nullopt;
}

std::string_view to_string(ExportFormat f) {
  switch (f) {
    case ExportFormat::memh: return "memh";
    case ExportFormat::csv: return "csv";
    case ExportFormat::json: return "json";
  }
  return "?";
}

void read_export_source(std::istream& in, const std::string& name, ExportSet& set) {
  try {
    VectorReader r(in, name);
    // a VectorError (an unknown op, a bad header) becomes an ExportError below
    const auto reader = open_case_reader(vector_family(r, name), r, name, {});
    const std::size_t source = set.sources.size();
    set.sources.push_back({name, r.header().fields});
    std::vector<std::string_view> fields;
    std::string_view note;
    std::vector<VectorCase> cases;
    std::vector<std::uint32_t> ref;
    while (r.next(fields, note)) {
      cases.clear();
      try {
        reader->read(fields, note, cases);
      } catch (const std::exception& e) {
        throw ExportError(r.where() + ": " + e.what());
      }
      for (auto& vc : cases) {
        // The file's expected values must be the reference's (checked, never trusted).
        const Params& p = *vc.params;
        // An optional result the file does not record is not compared, as the runner does not
        // compare it (§31.8, §34.1).
        ref.assign(static_cast<std::size_t>(p.schema().out), 0);
        p.expected(1, vc.in.data(), ref.data());
        if (ref != vc.expected) {
          for (const auto& c : p.schema().columns)
            if (c.output() && recorded(c, vc.expected.data() + c.at) &&
                !std::equal(ref.begin() + c.at, ref.begin() + c.at + static_cast<std::ptrdiff_t>(c.words()),
                            vc.expected.begin() + c.at))
              throw ExportError(r.where() + ": " + p.label() + ": the file's " + c.name + " " +
                                column_text(c, vc.expected.data() + c.at) + " differs from the reference's " +
                                column_text(c, ref.data() + c.at) +
                                " (a stale or edited file: regenerate it with `numref vectors generate`)");
        }
        set.records.push_back(
            {std::move(vc.params), std::move(vc.in), std::move(vc.expected), std::move(vc.note), source, r.line()});
      }
    }
  } catch (const VectorError& e) {
    throw ExportError(e.what());
  }
}

std::string export_text(const ExportSet& set, ExportFormat format) {
  if (set.records.empty()) throw ExportError("no cases to export");
  const Suites suites(set);
  switch (format) {
    case ExportFormat::memh: return memh_text(set, suites);
    case ExportFormat::csv: return csv_text(set, suites);
    case ExportFormat::json: return json_text(set, suites);
  }
  throw std::logic_error("unknown export format");
}

}  // namespace numref::conform
