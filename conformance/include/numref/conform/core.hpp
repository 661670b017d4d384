// numref conformance — op families, their case schemas, suites and cases.   spec §34 (runner semantics)
//
// The runner knows nothing about any particular operation. An *op family* (cast, the tensor
// families, MoR, ...) lives in one folder conformance/src/ops/<family>/ and gives:
//
//   a schema  — the columns of one case (Schema below): name, role (input, output, optional
//               output), the format or width of its values, its grid. From the schema alone
//               the runner derives the word layout, the pipe-protocol lines (§33), the case
//               lines of the vector files (§31), the comparison of a result (§34.4) and the
//               rendering of a mismatch;
//   a reference call — Params::expected();
//   a generator — Family::plan() (and the golden-vector files it writes).
//
// Everything else (how a suite's canonical text reads, how a mismatch is classified, the
// C ABI entry point it calls) is a small override. docs/contributing.md lists the files a new
// family touches.
//
// Words. A case is a fixed number of 32-bit input words and output words. A batch of n cases
// is stored column-major (word w of case i at [w * n + i], so that a column of single values —
// all x, all r, all results — is a contiguous array handed to a C entry point without
// copying) or, for families whose case is a whole tensor (Schema::case_major), case after
// case: case i occupies the words [i * words, (i + 1) * words).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numref/backend.h"
#include "numref/format.hpp"

namespace numref {
class BlockGrid;
}

namespace numref::conform {

// §34.1 The words of one case.
struct Shape {
  int in = 0;               // input words
  int out = 0;              // output words
  bool case_major = false;  // layout of a batch: false column-major, true case after case
};

// A read-only view of case i of a batch of n cases. `words` is 0 for the column-major
// layout (word w at [w * n + i]), else the words per case of a case-major batch (word w at
// [i * words + w]).
struct CaseView {
  const std::uint32_t* base = nullptr;
  std::size_t n = 0;
  std::size_t i = 0;
  std::size_t words = 0;
  std::uint32_t operator[](int w) const {
    return words ? base[i * words + static_cast<std::size_t>(w)] : base[static_cast<std::size_t>(w) * n + i];
  }
  // The case's words as one contiguous array (case-major layouts only).
  const std::uint32_t* data() const { return base + i * words; }
};
// The view of case i of a batch laid out as `s` says, `per_case` words per case.
inline CaseView case_view(const std::uint32_t* base, std::size_t n, std::size_t i, const Shape& s, int per_case) {
  return CaseView{base, n, i, s.case_major ? static_cast<std::size_t>(per_case) : 0};
}
// A single case held contiguously (vector cases, tests).
inline CaseView single_case(const std::uint32_t* words, std::size_t count) { return CaseView{words, 1, 0, count}; }

// ---- §34.1 the case schema ------------------------------------------------------------------

// A column's part in a case.
enum class Role : std::uint8_t {
  in,   // an input the runner sends
  out,  // a result every backend returns
  opt,  // a result only backends with Column::cap return (§9 flags, §19.5 counts); otherwise
        // the runner fills it with kNotReported and does not compare it
};
// How a column's values are written on pipe lines (§33) and in vector files (§31.3).
enum class Notation : std::uint8_t {
  hex,      // hex digits: exactly Column::digits in vector files; 1 to 8 accepted on pipe lines
  decimal,  // decimal numbers (the §19.5 counts)
  sum,      // an exact error sum (§22.3): 9 values of 16 hex digits separated by ':', 18 words
};
// What value k of a column is, for reports ("where" a mismatch is).
enum class Place : std::uint8_t {
  whole,   // a value of the whole case (cast result, tensor amax, decision)
  view,    // element k of the rows x cols view, row-major
  memory,  // word k of the source tensor in memory order (a transposed view's x)
  blocks,  // block k of the partition, block-row-major (§12.2)
  groups,  // GAM group k (§12.4)
  list,    // item k of a short list (two group mantissas)
};

inline constexpr std::uint32_t kNotReported = 0xFFFFFFFFu;  // an optional result not reported
inline constexpr int kSumWords = 18;  // §32.7 an error sum: 5 limbs and 4 counts as (low, high) pairs

struct Column {
  std::string name;  // vector-file and pipe name: "x", "r", "y", "flags", "codes", "scales", ...
  Role role = Role::in;
  Notation notation = Notation::hex;
  const Format* format = nullptr;     // values are codes of this format: decoded in reports
  int digits = 8;                     // hex digits of a value in vector files
  int pipe_digits = 0;                // hex digits written on pipe lines (0: `digits`)
  std::uint64_t limit = 0xFFFFFFFFu;  // largest value a vector file may hold
  std::uint32_t mask = 0;             // != 0: valid values have no bit outside it (the §9 flags)
  std::size_t rows = 1, cols = 1;     // the grid of values ('/' between rows in vector files)
  Place place = Place::whole;
  std::uint32_t cap = 0;                           // Role::opt: the NUMREF_CAP_* of backends that report it
  bool any_nan = false;                            // --any-nan: one NaN code matches another here
  std::string cls;                                 // class of a mismatch here (default: name)
  std::string what;                                // plural noun in reports ("codes"; default: name)
  std::string (*decode)(std::uint32_t) = nullptr;  // human text of a value without a format
  // set by Schema::add
  int at = 0;     // first word among the case's input words (Role::in) or output words
  int width = 1;  // words per value (sum: kSumWords)

  std::size_t count() const { return rows * cols; }
  std::size_t words() const { return count() * static_cast<std::size_t>(width); }
  bool output() const { return role != Role::in; }
};

struct Schema {
  bool case_major = true;          // batch layout (see above)
  bool shape_prefix = false;       // vector case lines start with the tensor shape RxC (§31.6)
  std::size_t rows = 0, cols = 0;  // that shape
  std::vector<Column> columns;
  int in = 0, out = 0;  // words per case
  // Appends a column (inputs and outputs may interleave; each side is laid out in order).
  Column& add(Column c);
  const Column* find(std::string_view name, bool output) const;
  std::uint32_t optional_caps() const;  // the caps of the Role::opt columns
  std::string names() const;            // "shape x r codes ..." as in a vector header (§31.2)
};

// ---- comparison (§34.4) ---------------------------------------------------------------------

struct CompareOptions {
  std::uint32_t caps = NUMREF_CAP_FLAGS | NUMREF_CAP_COUNTS;  // optional results the backend reports
  bool any_nan = false;                                       // --any-nan: any NaN result matches any expected NaN
};

enum class Outcome : std::uint8_t {
  pass,          // bit-identical (optional results included when compared)
  pass_any_nan,  // differs only in which NaN, accepted because of --any-nan
  fail,          // a mismatch (maybe a known departure: the runner decides, §34.5)
};
struct Finding {
  Outcome outcome = Outcome::pass;
  std::string cls;  // classification of a mismatch, e.g. "nan/sign", "overflow/saturation", "tie"
};

// A mismatch rendered for the report.
struct MismatchText {
  std::string inputs, got, expected;
  std::string detail;  // "3 of 128 codes, 1 of 4 scales differ" ("" = none)
};

class Params;

// The differing values of one output column.
struct ColumnDiff {
  const Column* column = nullptr;
  std::size_t first = 0;  // the first differing value
  std::size_t count = 0;  // how many differ
};
// A failing case: its words and every differing output column, in schema order.
struct CaseDiff {
  const Params& p;
  CaseView in, exp, got;
  CompareOptions options;
  std::vector<ColumnDiff> columns;
  const ColumnDiff* find(std::string_view name) const;
  // Value k of column c (width-1 columns) in the inputs, or in a result view v.
  std::uint32_t input(const Column& c, std::size_t k) const { return in[c.at + static_cast<int>(k)]; }
  static std::uint32_t value(CaseView v, const Column& c, std::size_t k) { return v[c.at + static_cast<int>(k)]; }
};

// ---- the suite parameters of a family ------------------------------------------------------------

class Family;

// §34.2 One suite: its identity (canonical text, label, profile, formats, clauses), its schema and
// its family's reference call, classification and C ABI marshalling.
class Params {
 public:
  virtual ~Params() = default;
  const Family& family() const { return *family_; }
  // Canonical parameter text (cast: "<from> <to> <profile> <policy>"; tensor families:
  // key=value words). Params parsed from text() compare equal; it keys caches and transports.
  const std::string& text() const { return text_; }
  // Short human label: "f32->f8e4m3fn cuda_satfinite round=rtz".
  const std::string& label() const { return label_; }
  // The profile the suite derives from (report grouping, departures), "-" when none.
  const std::string& profile() const { return profile_; }
  // True when the suite's results do not depend on the profiles being checked (the MoR policy
  // is fixed, §26.1): its vector cases apply whatever profiles a run checks.
  bool any_profile() const { return any_profile_; }
  // The formats the suite concerns, for departure matching: "f32 f8e4m3fn".
  const std::string& formats() const { return formats_; }
  // The words --ops selectors match (§34.1): the formats, then further family words.
  const std::string& selector_text() const { return selector_; }
  // Spec clauses exercised, e.g. "§11 §6.1".
  const std::string& clause() const { return clause_; }
  const Schema& schema() const { return schema_; }
  Shape shape() const { return {schema_.in, schema_.out, schema_.case_major}; }
  // §32.2 The earliest C ABI minor version that knows everything this suite passes to a backend
  // (op family, knob values, rule, recipe, profile): a backend of an earlier minor version is
  // never offered it (§34.3). Default: the family's.
  virtual std::uint32_t abi_minor() const;

  // ---- the family's part ------------------------------------------------------------------
  // The expected output words of n cases (layout of shape()), computed by the reference.
  // Thread-safe.
  virtual void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const = 0;
  // The class of a failing case (§34.4). Default: "<family>/<class of the first differing column>"
  // (an error sum adds the part that differs: "/n", "/zeros", ...).
  virtual std::string classify(const CaseDiff& d) const;
  // The report text of a failing case. Default: generic_render().
  virtual MismatchText render(const CaseDiff& d) const;
  // The comment of a vector-file case line (§31.3), "" for none.
  virtual std::string case_note(const std::uint32_t* in, const std::uint32_t* out) const;
  // The block grid of Place::blocks columns and the group grid of Place::groups (nullptr: none).
  virtual const BlockGrid* blocks() const { return nullptr; }
  virtual const BlockGrid* groups() const { return nullptr; }
  // The view element (i, j) of memory word k of a Place::memory column.
  virtual std::pair<std::size_t, std::size_t> memory_to_view(std::size_t k) const;

  // ---- C ABI (§32) ----------------------------------------------------------------------
  // Whether the backend implements this suite (the family's *_supported entry).
  virtual bool plugin_supported(const numref_backend& b) const = 0;
  // Runs n cases through the backend; returns false and sets `error` on a backend error.
  // `optional`: the backend reports the optional results (Schema::optional_caps()).
  virtual bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                           bool optional, std::string& error) const = 0;

  // ---- pipe protocol (§33) ----------------------------------------------------------------
  // The <params> of `supports` and `run` lines. Default: text().
  virtual std::string pipe_params() const { return text_; }

 protected:
  explicit Params(const Family& f) : family_(&f) {}
  struct Identity {
    std::string text, label, profile, formats, selector, clause;
    bool any_profile = false;
  };
  void set_identity(Identity id);  // selector defaults to formats
  // The generic rendering: inputs at the first difference, its got/expected values and the
  // count of differing values per column.
  MismatchText generic_render(const CaseDiff& d) const;
  Schema schema_;

 private:
  const Family* family_;
  std::string text_, label_, profile_, formats_, selector_, clause_;
  bool any_profile_ = false;
};
using ParamsPtr = std::shared_ptr<const Params>;

// ---- generic case handling, derived from the schema -------------------------------------------

// §34.4 Compares one case. The runner calls it for cases whose output words are not identical.
Finding compare(const Params& p, CaseView in, CaseView expected, CaseView got, const CompareOptions& o);
// The report text of a mismatch (after compare() failed).
MismatchText render_mismatch(const Params& p, CaseView in, CaseView expected, CaseView got, const CompareOptions& o);
// The output columns in which got differs from expected (optional results only where both
// sides report them), in schema order; and where value k of a column is ("element (i, j) in
// block b (rows …, cols …)", "group g", "tensor").
std::vector<ColumnDiff> diff_columns(const Params& p, CaseView expected, CaseView got, const CompareOptions& o);
std::string value_place(const Params& p, const Column& c, std::size_t k);
// §33 A pipe case line (the input columns) and the parsing of a result line into case i of out.
// Returns "" or the problem.
void pipe_case(const Params& p, CaseView in, std::string& line);
std::string pipe_result(const Params& p, std::string_view line, bool optional, std::uint32_t* out, std::size_t n,
                        std::size_t i);
// The result line a backend writes for the results `out` of one case (pipe_result's inverse).
std::string pipe_result_line(const Params& p, CaseView out, bool optional);
// §31.3 A vector-file case line (without the comment) and its parsing: `fields` are the line's
// fields after the shape (when the schema has one). Throws VectorError.
std::string vector_case_line(const Params& p, const std::uint32_t* in, const std::uint32_t* out);
void read_vector_case(const Params& p, const std::vector<std::string_view>& fields, std::uint32_t* in,
                      std::uint32_t* out);
// The values of column c (its words) as vector-file text (§31.3: ',' between the values of a
// row, '/' between rows) and back (returns "" or the problem). Divergence files use them.
std::string column_text(const Column& c, const std::uint32_t* words);
std::string parse_column_text(const Column& c, std::string_view text, std::uint32_t* words);
// Value k of column c of a case as "<hex> (<decoded>)" (a sum: its exact value and counts), and
// the same for a value given as its words.
std::string render_column_value(const Column& c, CaseView v, std::size_t k);
std::string render_value_words(const Column& c, const std::uint32_t* words);

// ---- generated cases --------------------------------------------------------------------------

// A stream of generated cases with random access (§34.3): case j's inputs depend only
// on (seed, params text, j), so shards and workers can produce any range.
class CaseSource {
 public:
  virtual ~CaseSource() = default;
  virtual std::uint64_t size() const = 0;
  // Fills the input words of cases [first, first + n) into in (n cases, the params' layout).
  virtual void fill(std::uint64_t first, std::size_t n, std::uint32_t* in) const = 0;
};
// The common source of case-major families: case j from fn(seed, j, words of the case).
template <class P, class Fn>
class IndexedCases final : public CaseSource {
 public:
  IndexedCases(std::shared_ptr<const P> p, std::uint64_t count, std::uint64_t seed, Fn fn)
      : p_(std::move(p)), count_(count), seed_(seed), fn_(std::move(fn)) {}
  std::uint64_t size() const override { return count_; }
  void fill(std::uint64_t first, std::size_t n, std::uint32_t* in) const override {
    const std::size_t words = static_cast<std::size_t>(p_->shape().in);
    for (std::size_t j = 0; j < n; ++j) fn_(*p_, seed_, first + j, in + j * words);
  }

 private:
  std::shared_ptr<const P> p_;
  std::uint64_t count_, seed_;
  Fn fn_;
};

struct GeneratedSuite {
  ParamsPtr params;
  std::shared_ptr<const CaseSource> cases;
};

// What a run asks a family to generate (§34.3).
enum class Level : std::uint8_t { l0, l1, l2, exhaustive };
struct PlanRequest {
  Level level = Level::l0;
  std::uint64_t seed = 1;
  std::vector<std::string> profiles;   // profiles to check
  std::vector<std::string> selectors;  // family-specific filters ("" = everything), e.g. "f32:f8e4m3fn"
};
// §34.1 Whether p is selected by any of the --ops selectors "A[:B[:C]]" over its selector_text()
// words ("*" = any; format words compare as formats, other words literally). Empty = all.
bool selector_match(const Params& p, const std::vector<std::string>& selectors);
// The same over selector words given as text ("f32 f8e4m3fn"), before a Params exists.
bool selector_match(std::string_view words, const std::vector<std::string>& selectors);
// Checks the selectors of a family at plan time: word k (0-based) must be a format when
// k < formats, else accepted by word_ok (nullptr: anything; `word_name` names it in the message).
// Throws std::invalid_argument.
void check_selectors(std::string_view family, const std::vector<std::string>& selectors, std::size_t formats,
                     std::size_t max_words, bool (*word_ok)(std::size_t k, std::string_view w) = nullptr,
                     std::string_view word_name = "word");

// ---- golden vectors ------------------------------------------------------------------------

// A case read from a golden-vector file.
struct VectorCase {
  ParamsPtr params;
  std::vector<std::uint32_t> in, expected;  // one case, word by word
  std::string note;                         // the line's comment, if any
};

// A parsed vector-file header (§31.2): ordered key -> value lines.
struct VectorHeader {
  std::string path;  // for messages
  std::vector<std::pair<std::string, std::string>> fields;
  const std::string* find(std::string_view key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return &v;
    return nullptr;
  }
  const std::string& get(std::string_view key) const;  // throws VectorError when missing
};

// Interprets the case lines of one vector file of a family.
class VectorFileReader {
 public:
  virtual ~VectorFileReader() = default;
  // Parses the fields of one case line (comment removed) into cases. A divergence file
  // line yields one case per profile in `profiles` that it has an answer for; other
  // files yield one case, or none when the file's profile is not being checked.
  // Throws VectorError on a malformed line.
  virtual void read(const std::vector<std::string_view>& fields, std::string_view note,
                    std::vector<VectorCase>& out) = 0;
};

// One generated vector file: path relative to the vectors directory, and its bytes.
struct VectorFileText {
  std::string path;
  std::string text;
};

// §31.2 The header keys every vector file has (op, clause, generator, seed, coverage, columns,
// count, kind): not a family's parameters.
bool is_file_key(std::string_view key);

// The cases of one regular vector file: every case (params, its input words).
struct VectorFileCases {
  std::vector<std::pair<ParamsPtr, std::vector<std::uint32_t>>> cases;
  std::string coverage;
  std::uint64_t seed = 0;  // 0: no random cases
};

// ---- families ---------------------------------------------------------------------------------

class Family {
 public:
  virtual ~Family() = default;
  std::string_view name() const { return name_; }
  std::string_view clause() const { return clause_; }
  // §32.2 The C ABI minor version that introduced the family (Annex C.1).
  std::uint32_t abi_minor() const { return abi_minor_; }
  // Params from their canonical text; throws std::invalid_argument naming the problem.
  virtual ParamsPtr parse_params(std::string_view text) const = 0;
  // The generated suites of a level (§34.3).
  virtual void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const = 0;
  // The golden-vector files of this family (§31.4), in a fixed order.
  virtual void generate_vectors(std::vector<VectorFileText>& out) const = 0;

  // ---- regular vector files (§31.2): the family's header lines and back --------------------
  // The header lines of a file of suite p between "op" and "clause" (in order). Lines marked
  // `checked` must read back exactly (the reader compares them with the parsed suite's).
  struct HeaderLine {
    std::string key, value;
    bool checked = true;
  };
  virtual std::vector<HeaderLine> header(const Params& p) const = 0;
  // The suite of a case of a regular file with header h (shape rows x cols when the schema has
  // a shape prefix, else 0 x 0). Throws std::invalid_argument.
  virtual ParamsPtr params_from_header(const VectorHeader& h, std::size_t rows, std::size_t cols) const = 0;
  // A reader for a file whose header has `kind` (divergence files, §B). Default: none.
  virtual std::unique_ptr<VectorFileReader> open_special(const VectorHeader& h, const std::string& kind,
                                                         const std::vector<std::string>& profiles) const;

  // A reader for a vector file whose header names this family; `profiles` are those being
  // checked (empty = all). Throws VectorError on a bad header.
  std::unique_ptr<VectorFileReader> open_vectors(const VectorHeader& h, const std::vector<std::string>& profiles) const;
  // The text of a regular vector file (§31.2): header, case lines (expected results from the
  // reference), count.
  std::string vector_file(const VectorFileCases& f) const;

 protected:
  Family(std::string_view name, std::string_view clause, std::uint32_t abi_minor)
      : name_(name), clause_(clause), abi_minor_(abi_minor) {}

 private:
  std::string_view name_, clause_;
  std::uint32_t abi_minor_;
};

// A malformed vector file or manifest (§31); the message names the file and line.
struct VectorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- registry ----------------------------------------------------------------------
// Every folder conformance/src/ops/<dir>/ has a family.cpp defining
//     void numref_conform_register_<dir>(numref::conform::Registry&);
// and CMake generates the call list from the folder names, so adding a family is adding a
// folder (no static-initialisation tricks that a static library would drop).
// Families are static objects; the registry refers to them.
class Registry {
 public:
  void add(const Family& f) { families_.push_back(&f); }
  const Family* find(std::string_view name) const;
  const std::vector<const Family*>& all() const { return families_; }
  void sort();

 private:
  std::vector<const Family*> families_;
};
const Registry& registry();

}  // namespace numref::conform
