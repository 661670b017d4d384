// numref conformance — everything the runner derives from a family's case schema: the word
// layout, pipe lines, vector case lines, comparison and the rendering of a mismatch.
//                                                                 spec §31.3, §33, §34.1, §34.4
#include <algorithm>
#include <map>
#include <span>

#include "numref/bignum.hpp"
#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/conform/vectors.hpp"
#include "numref/metrics.hpp"
#include "numref/partition.hpp"
#include "numref/value.hpp"

namespace numref::conform {

// ---- the schema -------------------------------------------------------------------------------

Column& Schema::add(Column c) {
  c.width = c.notation == Notation::sum ? kSumWords : 1;
  int& words = c.output() ? out : in;
  c.at = words;
  words += static_cast<int>(c.words());
  columns.push_back(std::move(c));
  return columns.back();
}

const Column* Schema::find(std::string_view name, bool output) const {
  for (const Column& c : columns)
    if (c.name == name && c.output() == output) return &c;
  return nullptr;
}

std::uint32_t Schema::optional_caps() const {
  std::uint32_t caps = 0;
  for (const Column& c : columns)
    if (c.role == Role::opt) caps |= c.cap;
  return caps;
}

std::string Schema::names() const {
  std::string s = shape_prefix ? "shape" : "";
  for (const Column& c : columns) s += (s.empty() ? "" : " ") + c.name;
  return s;
}

const ColumnDiff* CaseDiff::find(std::string_view name) const {
  for (const ColumnDiff& d : columns)
    if (d.column->name == name) return &d;
  return nullptr;
}

namespace {

// Word w of case i of a batch of n cases laid out as the schema says.
std::size_t word_index(const Schema& s, int per_case, std::size_t n, std::size_t i, int w) {
  return s.case_major ? i * static_cast<std::size_t>(per_case) + static_cast<std::size_t>(w)
                      : static_cast<std::size_t>(w) * n + i;
}

std::uint64_t word64(const std::uint32_t* w) { return std::uint64_t{w[0]} | (std::uint64_t{w[1]} << 32); }

// §32.7 an exact error sum (18 words) as text.
std::string sum_text(const std::uint32_t* w) {
  std::uint64_t limbs[5];
  for (int k = 0; k < 5; ++k) limbs[k] = word64(w + 2 * k);
  const BigUInt v = BigUInt::from_limbs(std::span<const std::uint64_t>(limbs, 5));
  return "S=" + dyadic_hexfloat(v, -ExactSum::kScale) + " n=" + std::to_string(word64(w + 10)) +
         " nonfinite_input=" + std::to_string(word64(w + 12)) + " nonfinite_quant=" + std::to_string(word64(w + 14)) +
         " zeros=" + std::to_string(word64(w + 16));
}

// ---- column text (§31.3 vector files, §33 pipe lines) ----------------------------------------

enum class Style { vector, pipe };

void append_values(std::string& s, const Column& c, const std::uint32_t* w, Style st) {
  const int digits = st == Style::pipe && c.pipe_digits ? c.pipe_digits : c.digits;
  for (std::size_t k = 0; k < c.count(); ++k) {
    if (k) s += (st == Style::vector && k % c.cols == 0) ? '/' : ',';
    const std::uint32_t* v = w + k * static_cast<std::size_t>(c.width);
    switch (c.notation) {
      case Notation::hex: append_hex(s, *v, digits); break;
      case Notation::decimal: s += std::to_string(*v); break;
      case Notation::sum:
        for (int q = 0; q < kSumWords / 2; ++q) {
          if (q) s += ':';
          append_hex(s, word64(v + 2 * q), 16);
        }
        break;
    }
  }
}

std::string mask_words(std::uint32_t mask) {
  std::string s;
  for (int b = 0; b < 32; ++b)
    if (mask >> b & 1u) s += (s.empty() ? "" : " ") + hex(std::uint64_t{1} << b, 2);
  return s;
}

// One value token into w (width words). Returns "" or the problem.
std::string parse_value(const Column& c, std::string_view tok, std::uint32_t* w, Style st) {
  const std::string t(tok.substr(0, 40));
  if (c.notation == Notation::decimal) {
    if (tok.empty() || tok.size() > 9 || tok.find_first_not_of("0123456789") != std::string_view::npos)
      return "value '" + t + "' is not a decimal number";
    *w = static_cast<std::uint32_t>(std::stoul(std::string(tok)));
    return {};
  }
  if (c.notation == Notation::sum) {
    std::size_t q = 0, pos = 0;
    while (true) {
      const std::size_t e = std::min(tok.find(':', pos), tok.size());
      const std::string_view part = tok.substr(pos, e - pos);
      if (q >= kSumWords / 2 || part.size() != 16) return "error sum '" + t + "' is not 9 values of 16 hex digits";
      const auto v = parse_hex(part);
      if (!v) return "error sum value '" + std::string(part) + "' is not hex";
      w[2 * q] = static_cast<std::uint32_t>(*v);
      w[2 * q + 1] = static_cast<std::uint32_t>(*v >> 32);
      ++q;
      if (e >= tok.size()) break;
      pos = e + 1;
    }
    if (q != kSumWords / 2) return "error sum '" + t + "' is not 9 values of 16 hex digits";
    return {};
  }
  const bool exact = st == Style::vector;
  if (exact ? static_cast<int>(tok.size()) != c.digits : (tok.empty() || tok.size() > 8))
    return "value '" + t + "' is not " + (exact ? std::to_string(c.digits) : std::string("1 to 8")) + " hex digits";
  const auto v = parse_hex(tok);
  if (!v) return "value '" + t + "' is not hex";
  if (exact && *v > c.limit) return "value '" + t + "' is out of range";
  if (c.mask && (*v & ~static_cast<std::uint64_t>(c.mask)))
    return "value '" + t + "' is not a combination of " + mask_words(c.mask);
  *w = static_cast<std::uint32_t>(*v);
  return {};
}

// A grid of values: ',' between the values of a row, '/' between rows (vector files; a pipe
// line is flat, ',' only). Returns "" or the problem.
std::string parse_values(const Column& c, std::string_view text, std::uint32_t* w, Style st) {
  const std::size_t total = c.count();
  std::size_t k = 0, row = 0, col = 0, pos = 0;
  while (true) {
    std::size_t e = pos;
    while (e < text.size() && text[e] != ',' && text[e] != '/') ++e;
    if (k >= total) return "more than " + std::to_string(total) + " values";
    const std::string err = parse_value(c, text.substr(pos, e - pos), w + k * static_cast<std::size_t>(c.width), st);
    if (!err.empty()) return err;
    ++k;
    ++col;
    if (e >= text.size()) break;
    if (text[e] == '/') {
      if (st == Style::pipe) return "'/' in a flat list";
      if (col != c.cols)
        return "row " + std::to_string(row) + " has " + std::to_string(col) + " values, expected " +
               std::to_string(c.cols);
      ++row;
      col = 0;
    } else if (st == Style::vector && c.rows > 1 && col == c.cols) {
      return "row " + std::to_string(row) + " has more than " + std::to_string(c.cols) +
             " values (rows are separated by '/')";
    }
    pos = e + 1;
  }
  if (k != total)
    return std::to_string(k) + " values, expected " + std::to_string(total) + " (" + std::to_string(c.rows) + "x" +
           std::to_string(c.cols) + ")";
  return {};
}

// Copies the words of one column between a case-major case and case i of a batch.
void put_column(const Params& p, const Column& c, const std::uint32_t* from, std::uint32_t* out, std::size_t n,
                std::size_t i) {
  const Schema& s = p.schema();
  for (std::size_t w = 0; w < c.words(); ++w) out[word_index(s, s.out, n, i, c.at + static_cast<int>(w))] = from[w];
}

bool is_nan_code(std::uint32_t code, const Format& f) {
  return (code & ~f.mask()) == 0 && decode(code, f).cls == Class::nan;
}

}  // namespace

std::string column_text(const Column& c, const std::uint32_t* words) {
  std::string s;
  append_values(s, c, words, Style::vector);
  return s;
}

std::string parse_column_text(const Column& c, std::string_view text, std::uint32_t* words) {
  return parse_values(c, text, words, Style::vector);
}

// ---- pipe protocol (§33) ------------------------------------------------------------------------

void pipe_case(const Params& p, CaseView in, std::string& line) {
  line.clear();
  std::vector<std::uint32_t> w;
  for (const Column& c : p.schema().columns) {
    if (c.output()) continue;
    w.resize(c.words());
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = in[c.at + static_cast<int>(k)];
    if (!line.empty()) line += ' ';
    append_values(line, c, w.data(), Style::pipe);
  }
}

std::string pipe_result(const Params& p, std::string_view line, bool optional, std::uint32_t* out, std::size_t n,
                        std::size_t i) {
  const Schema& s = p.schema();
  const auto f = split_ws(line);
  auto wanted = [optional](const Column& c) { return c.role == Role::out || (c.role == Role::opt && optional); };
  std::size_t want = 0;
  for (const Column& c : s.columns) want += wanted(c) ? 1 : 0;
  if (f.size() != want) {
    std::string names;
    for (const Column& c : s.columns)
      if (wanted(c)) names += (names.empty() ? "<" : " <") + c.name + ">";
    return "expected " + std::to_string(want) + " fields (" + names + "), got " + std::to_string(f.size()) + " in '" +
           std::string(line.substr(0, 60)) + "'";
  }
  std::vector<std::uint32_t> w;
  std::size_t k = 0;
  for (const Column& c : s.columns) {
    if (!c.output()) continue;
    w.assign(c.words(), kNotReported);
    if (wanted(c)) {
      const std::string err = parse_values(c, f[k++], w.data(), Style::pipe);
      if (!err.empty()) return c.name + ": " + err;
    }
    put_column(p, c, w.data(), out, n, i);
  }
  return {};
}

std::string pipe_result_line(const Params& p, CaseView out, bool optional) {
  std::string line;
  std::vector<std::uint32_t> w;
  for (const Column& c : p.schema().columns) {
    if (c.role == Role::in || (c.role == Role::opt && !optional)) continue;
    w.resize(c.words());
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = out[c.at + static_cast<int>(k)];
    if (!line.empty()) line += ' ';
    append_values(line, c, w.data(), Style::pipe);
  }
  return line;
}

// ---- vector case lines (§31.3) --------------------------------------------------------------------

std::string vector_case_line(const Params& p, const std::uint32_t* in, const std::uint32_t* out) {
  std::string s;
  for (const Column& c : p.schema().columns) {
    if (!s.empty()) s += ' ';
    append_values(s, c, (c.output() ? out : in) + c.at, Style::vector);
  }
  return s;
}

void read_vector_case(const Params& p, const std::vector<std::string_view>& fields, std::uint32_t* in,
                      std::uint32_t* out) {
  const Schema& s = p.schema();
  if (fields.size() != s.columns.size())
    throw VectorError("expected " + std::to_string(s.columns.size() + (s.shape_prefix ? 1 : 0)) + " fields (" +
                      s.names() + "), got " + std::to_string(fields.size() + (s.shape_prefix ? 1 : 0)));
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const Column& c = s.columns[k];
    const std::string err = parse_values(c, fields[k], (c.output() ? out : in) + c.at, Style::vector);
    if (!err.empty()) throw VectorError("column " + c.name + ": " + err);
  }
}

// ---- comparison (§34.4) -------------------------------------------------------------------------

// The differing output columns of a case (optional results only where both sides report them).
std::vector<ColumnDiff> diff_columns(const Params& p, CaseView e, CaseView g, const CompareOptions& o) {
  std::vector<ColumnDiff> out;
  for (const Column& c : p.schema().columns) {
    if (!c.output() || (c.role == Role::opt && !(o.caps & c.cap))) continue;
    ColumnDiff cd{&c, 0, 0};
    for (std::size_t k = 0; k < c.count(); ++k) {
      bool differs = false;
      for (int w = 0; w < c.width; ++w) {
        const int at = c.at + static_cast<int>(k) * c.width + w;
        if (c.role == Role::opt && (e[at] == kNotReported || g[at] == kNotReported)) continue;
        differs |= e[at] != g[at];
      }
      if (differs && cd.count++ == 0) cd.first = k;
    }
    if (cd.count) out.push_back(cd);
  }
  return out;
}

Finding compare(const Params& p, CaseView in, CaseView e, CaseView g, const CompareOptions& o) {
  CaseDiff d{p, in, e, g, o, diff_columns(p, e, g, o)};
  if (d.columns.empty()) return {Outcome::pass, {}};
  if (o.any_nan) {
    // --any-nan: every difference is one NaN code for another, in columns where that is allowed
    bool only_nan = true;
    for (const ColumnDiff& cd : d.columns) {
      const Column& c = *cd.column;
      if (!c.any_nan || !c.format) {
        only_nan = false;
        break;
      }
      for (std::size_t k = 0; k < c.count() && only_nan; ++k) {
        const std::uint32_t ev = CaseDiff::value(e, c, k), gv = CaseDiff::value(g, c, k);
        only_nan = ev == gv || (is_nan_code(ev, *c.format) && is_nan_code(gv, *c.format));
      }
    }
    if (only_nan) return {Outcome::pass_any_nan, "any-nan"};
  }
  return {Outcome::fail, p.classify(d)};
}

MismatchText render_mismatch(const Params& p, CaseView in, CaseView e, CaseView g, const CompareOptions& o) {
  return p.render(CaseDiff{p, in, e, g, o, diff_columns(p, e, g, o)});
}

// ---- the defaults of Params ---------------------------------------------------------------------

void Params::set_identity(Identity id) {
  text_ = std::move(id.text);
  label_ = std::move(id.label);
  profile_ = std::move(id.profile);
  formats_ = std::move(id.formats);
  selector_ = id.selector.empty() ? formats_ : std::move(id.selector);
  clause_ = std::move(id.clause);
  any_profile_ = id.any_profile;
}

std::string Params::classify(const CaseDiff& d) const {
  if (d.columns.empty()) return std::string(family().name()) + "/none";
  const ColumnDiff& cd = d.columns.front();
  const Column& c = *cd.column;
  std::string cls = std::string(family().name()) + "/" + (c.cls.empty() ? c.name : c.cls);
  if (c.notation == Notation::sum) {
    // which part of the first differing sum: the limbs, or one of the counts
    const int at = c.at + static_cast<int>(cd.first) * kSumWords;
    bool limbs_equal = true;
    for (int w = 0; w < 10; ++w) limbs_equal &= d.exp[at + w] == d.got[at + w];
    static const char* const kParts[] = {"n", "nonfinite_input", "nonfinite_quant", "zeros"};
    if (limbs_equal)
      for (int q = 0; q < 4; ++q)
        if (d.exp[at + 10 + 2 * q] != d.got[at + 10 + 2 * q] || d.exp[at + 11 + 2 * q] != d.got[at + 11 + 2 * q])
          return cls + "/" + kParts[q];
  }
  return cls;
}

MismatchText Params::render(const CaseDiff& d) const { return generic_render(d); }

std::string Params::case_note(const std::uint32_t*, const std::uint32_t*) const { return {}; }

std::uint32_t Params::abi_minor() const { return family().abi_minor(); }

std::pair<std::size_t, std::size_t> Params::memory_to_view(std::size_t k) const { return {0, k}; }

std::string render_column_value(const Column& c, CaseView v, std::size_t k) {
  std::uint32_t words[kSumWords];
  for (int w = 0; w < c.width; ++w) words[w] = v[c.at + static_cast<int>(k) * c.width + w];
  return render_value_words(c, words);
}

std::string render_value_words(const Column& c, const std::uint32_t* v) {
  if (c.notation == Notation::sum) return sum_text(v);
  if (c.notation == Notation::decimal) return std::to_string(*v);
  if (c.format && (*v & ~c.format->mask())) return hex(*v, 8) + " (not a " + std::string(c.format->name) + " code)";
  if (c.decode) return hex(*v, c.digits) + " (" + c.decode(*v) + ")";
  if (c.format) return hex(*v, c.digits) + " (" + render_value(*v, *c.format) + ")";
  return hex(*v, c.digits);
}

namespace {

std::string block_text(const BlockGrid& g, std::size_t b) {
  const BlockRange r = g.range(b);
  return "block " + std::to_string(b) + " (rows " + std::to_string(r.r0) + "-" + std::to_string(r.r1 - 1) + ", cols " +
         std::to_string(r.c0) + "-" + std::to_string(r.c1 - 1) + ")";
}

}  // namespace

// Where value k of column c is.
std::string value_place(const Params& p, const Column& c, std::size_t k) {
  auto element = [&](std::size_t i, std::size_t j) {
    std::string s = "element (" + std::to_string(i) + ", " + std::to_string(j) + ")";
    if (const BlockGrid* g = p.blocks()) s += " in " + block_text(*g, g->block_of(i, j));
    return s;
  };
  switch (c.place) {
    case Place::whole: return "tensor";
    case Place::view: return element(k / c.cols, k % c.cols);
    case Place::memory: {
      const auto [i, j] = p.memory_to_view(k);
      return element(i, j);
    }
    case Place::blocks: return p.blocks() ? block_text(*p.blocks(), k) : "block " + std::to_string(k);
    case Place::groups: return "group " + std::to_string(k);
    case Place::list: return "value " + std::to_string(k);
  }
  return {};
}

namespace {

// Input column c summarised: a single value, or its format, grid and special values.
std::string input_text(const Column& c, CaseView in) {
  if (c.count() == 1) return c.name + "=" + render_column_value(c, in, 0);
  if (!c.format) return {};
  std::size_t nan = 0, inf = 0, zero = 0;
  for (std::size_t k = 0; k < c.count(); ++k) {
    const Decoded dd = decode(in[c.at + static_cast<int>(k)], *c.format);
    nan += dd.cls == Class::nan;
    inf += dd.cls == Class::inf;
    zero += dd.cls == Class::zero;
  }
  return c.name + "=" + std::string(c.format->name) + "[" + std::to_string(c.rows) + "x" + std::to_string(c.cols) +
         "] (" + std::to_string(zero) + " zeros, " + std::to_string(nan) + " NaN, " + std::to_string(inf) + " Inf)";
}

}  // namespace

MismatchText Params::generic_render(const CaseDiff& d) const {
  MismatchText t;
  bool single = true;  // every column holds one value (a scalar operation: cast)
  for (const Column& c : schema_.columns) single &= c.count() == 1;
  for (const Column& c : schema_.columns) {
    if (c.output()) continue;
    const std::string s = input_text(c, d.in);
    if (!s.empty()) t.inputs += (t.inputs.empty() ? "" : " ") + s;
  }
  if (single) {
    // every reported result, the coded ones with their value, the others decoded (flags)
    auto results = [&](CaseView v) {
      std::string s;
      for (const Column& c : schema_.columns) {
        if (!c.output() || (c.role == Role::opt && (!(d.options.caps & c.cap) || v[c.at] == kNotReported))) continue;
        const std::string r = c.format || !c.decode ? render_column_value(c, v, 0) : c.decode(v[c.at]);
        s += (s.empty() ? "" : " ") + r;
      }
      return s;
    };
    t.got = results(d.got);
    t.expected = results(d.exp);
    return t;
  }
  if (d.columns.empty()) return t;
  const ColumnDiff& first = d.columns.front();
  const Column& c = *first.column;
  t.inputs += " | " + (c.cls.empty() ? c.name : c.cls) + " of " + value_place(*this, c, first.first);
  t.got = render_column_value(c, d.got, first.first);
  t.expected = render_column_value(c, d.exp, first.first);
  for (const ColumnDiff& cd : d.columns)
    t.detail += (t.detail.empty() ? "" : ", ") + std::to_string(cd.count) + " of " +
                std::to_string(cd.column->count()) + " " +
                (cd.column->what.empty() ? cd.column->name : cd.column->what);
  if (!t.detail.empty()) t.detail += " differ";
  return t;
}

// ---- selectors (§34.1) ----------------------------------------------------------------------------

namespace {
std::vector<std::string> selector_words(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(':', i), s.size());
    parts.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}
}  // namespace

bool selector_match(const Params& p, const std::vector<std::string>& sel) {
  return selector_match(p.selector_text(), sel);
}

bool selector_match(std::string_view text, const std::vector<std::string>& sel) {
  if (sel.empty()) return true;
  const auto words = split_ws(text);
  for (const auto& s : sel) {
    if (s.empty()) return true;
    const auto parts = selector_words(s);
    bool ok = true;
    for (std::size_t k = 0; k < parts.size() && ok; ++k) {
      if (parts[k] == "*") continue;
      if (k >= words.size()) {
        ok = false;
        break;
      }
      const auto a = find_format(parts[k]);
      const auto b = find_format(words[k]);
      ok = (a && b) ? *a == *b : parts[k] == words[k];
    }
    if (ok) return true;
  }
  return false;
}

void check_selectors(std::string_view family, const std::vector<std::string>& selectors, std::size_t formats,
                     std::size_t max_words, bool (*word_ok)(std::size_t k, std::string_view w),
                     std::string_view word_name) {
  for (const auto& s : selectors) {
    if (s.empty()) continue;
    const auto parts = selector_words(s);
    const std::string what = "--ops " + std::string(family) + ":" + s + ": ";
    if (parts.size() > max_words)
      throw std::invalid_argument(what + "at most " + std::to_string(max_words) + " words separated by ':'");
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (parts[k] == "*") continue;
      if (k < formats && !find_format(parts[k]))
        throw std::invalid_argument(what + "unknown format '" + parts[k] + "'");
      if (k >= formats && word_ok && !word_ok(k, parts[k]))
        throw std::invalid_argument(what + "unknown " + std::string(word_name) + " '" + parts[k] + "'");
    }
  }
}

// ---- regular vector files (§31.2) ----------------------------------------------------------------

std::unique_ptr<VectorFileReader> Family::open_special(const VectorHeader& h, const std::string& kind,
                                                       const std::vector<std::string>&) const {
  throw VectorError(h.path + ": unknown " + std::string(name()) + " file kind '" + kind + "'");
}

bool is_file_key(std::string_view key) {
  for (std::string_view k : {"op", "clause", "generator", "spec", "seed", "coverage", "columns", "count", "kind"})
    if (key == k) return true;
  return false;
}

namespace {

bool wanted(const Params& p, const std::vector<std::string>& profiles) {
  return p.any_profile() || p.profile() == "-" || profiles.empty() ||
         std::find(profiles.begin(), profiles.end(), p.profile()) != profiles.end();
}

class RegularReader final : public VectorFileReader {
 public:
  RegularReader(const Family& f, const VectorHeader& h, const std::vector<std::string>& profiles)
      : f_(f), h_(h), profiles_(profiles) {
    const ParamsPtr p0 = params(1, 1);  // validates the header with a 1 x 1 shape
    shape_ = p0->schema().shape_prefix;
    std::vector<std::string> known;
    for (const auto& l : f.header(*p0)) {
      known.push_back(l.key);
      if (!l.checked) continue;
      const std::string* v = h.find(l.key);
      if (!v || *v != l.value)
        throw VectorError(h.path + ": header line '" + l.key + "' is not the canonical '" + l.value +
                          "' of these parameters (regenerate the vectors)");
    }
    for (const auto& [k, v] : h.fields)
      if (!is_file_key(k) && std::find(known.begin(), known.end(), k) == known.end())
        throw VectorError(h.path + ": unexpected header key '" + k + "' for a " + std::string(f.name()) + " file");
    if (h.get("columns") != p0->schema().names())
      throw VectorError(h.path + ": columns '" + h.get("columns") + "', expected '" + p0->schema().names() + "'");
    if (!shape_) fixed_ = p0;
  }

  void read(const std::vector<std::string_view>& f, std::string_view note, std::vector<VectorCase>& out) override {
    ParamsPtr p = fixed_;
    std::vector<std::string_view> rest = f;
    if (shape_) {
      if (f.empty()) throw VectorError("empty case line");
      const auto rc = parse_rxc(f[0]);
      if (!rc) throw VectorError("shape '" + std::string(f[0].substr(0, 20)) + "' is not RxC");
      p = params(rc->first, rc->second);
      rest.erase(rest.begin());
    }
    std::vector<std::uint32_t> in(static_cast<std::size_t>(p->schema().in)),
        ex(static_cast<std::size_t>(p->schema().out));
    read_vector_case(*p, rest, in.data(), ex.data());
    if (wanted(*p, profiles_)) out.push_back({p, std::move(in), std::move(ex), std::string(note)});
  }

 private:
  ParamsPtr params(std::size_t rows, std::size_t cols) {
    const auto key = std::make_pair(rows, cols);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    ParamsPtr p;
    try {
      p = f_.params_from_header(h_, rows, cols);
    } catch (const std::invalid_argument& e) {
      throw VectorError(h_.path + ": bad " + std::string(f_.name()) + " parameters: " + e.what());
    }
    if (cache_.size() > 64) cache_.clear();
    cache_.emplace(key, p);
    return p;
  }
  const Family& f_;
  VectorHeader h_;
  std::vector<std::string> profiles_;
  bool shape_ = false;
  ParamsPtr fixed_;
  std::map<std::pair<std::size_t, std::size_t>, ParamsPtr> cache_;
};

}  // namespace

std::unique_ptr<VectorFileReader> Family::open_vectors(const VectorHeader& h,
                                                       const std::vector<std::string>& profiles) const {
  if (const std::string* kind = h.find("kind")) return open_special(h, *kind, profiles);
  return std::make_unique<RegularReader>(*this, h, profiles);
}

std::string Family::vector_file(const VectorFileCases& f) const {
  if (f.cases.empty()) throw std::logic_error("a vector file without cases");
  const Params& p0 = *f.cases.front().first;
  VectorWriter w;
  w.field("op", name());
  for (const auto& l : header(p0)) w.field(l.key, l.value);
  w.field("clause", p0.clause());
  w.provenance();
  w.field("seed", f.seed == 0 ? "none (no random cases)" : std::to_string(f.seed));
  w.field("coverage", f.coverage);
  w.field("columns", p0.schema().names());
  w.begin();
  std::vector<std::uint32_t> out;
  for (const auto& [p, in] : f.cases) {
    out.assign(static_cast<std::size_t>(p->schema().out), 0);
    p->expected(1, in.data(), out.data());
    std::string line;
    if (p->schema().shape_prefix)
      line = std::to_string(p->schema().rows) + "x" + std::to_string(p->schema().cols) + " ";
    line += vector_case_line(*p, in.data(), out.data());
    const std::string note = p->case_note(in.data(), out.data());
    if (!note.empty()) line += "  # " + note;
    w.line(line);
  }
  return w.finish();
}

}  // namespace numref::conform
