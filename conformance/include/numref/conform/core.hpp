// numref conformance — op families, suites and cases.            spec §33 (runner semantics)
//
// The runner knows nothing about any particular operation. An *op family* (cast, and in
// later phases block scales, quantize, GAM, MoR) is one file in conformance/src/ops/ that
// implements the two interfaces below and registers itself (see registry.hpp):
//
//   Family  — its name, how to parse its parameter text, which suites a level generates,
//             which golden-vector files it writes and how it reads them back;
//   Params  — one suite's parameters (formats, policy, ...): the reference's expected
//             results, comparison and classification of a mismatch, and the marshalling
//             of a batch to a backend (C ABI entry point and pipe-protocol lines).
//
// A case is a fixed number of 32-bit input words and output words (Shape). A batch of n
// cases is stored column by column: word w of case i is at [w * n + i], so that a
// column (all x, all r, all results) is a contiguous array that can be handed to a C
// entry point without copying. A family whose case is a whole tensor (hundreds of words:
// the elements, the random stream, the codes and scales) says Shape::case_major instead:
// case i then occupies the words [i * words, (i + 1) * words), a tensor after another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "numref/backend.h"

namespace numref::conform {

// §33.1 The words of one case.
struct Shape {
  int in = 0;   // input words (cast: x, r)
  int out = 0;  // output words (cast: y, flags)
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

// How results are compared (§33.4).
struct CompareOptions {
  bool flags = true;     // the backend reports flags: compare them
  bool any_nan = false;  // --any-nan: any NaN result matches any expected NaN
  bool counts = false;   // the backend reports the §19.5 counts of tensor ops: compare them
};

// The verdict on one case (§33.4).
enum class Outcome : std::uint8_t {
  pass,          // bit-identical (flags included when compared)
  pass_any_nan,  // differs only in which NaN, accepted because of --any-nan
  fail,          // a mismatch (maybe a known departure: the runner decides, §33.5)
};
struct Finding {
  Outcome outcome = Outcome::pass;
  std::string cls;  // classification of a mismatch, e.g. "nan/sign", "overflow/saturation", "tie"
};

// A mismatch rendered by the family as a whole (tensor families: the first differing
// element or block, and how many differ), instead of render_inputs / render_output.
struct MismatchText {
  std::string inputs, got, expected;
  std::string detail;  // e.g. "3 of 128 codes, 1 of 4 scales differ" ("" = none)
};

class Family;

// §33.2 The parameters of one suite.
class Params {
 public:
  virtual ~Params() = default;
  virtual const Family& family() const = 0;
  // Canonical parameter text (family specific; cast: "<from> <to> <profile> <policy>").
  // Params parsed from text() compare equal; the text keys caches and transports.
  virtual const std::string& text() const = 0;
  // Short human label: "f32->f8e4m3fn cuda_satfinite round=rtz".
  virtual std::string label() const = 0;
  // The profile the policy derives from (grouping of reports, departures).
  virtual const std::string& profile() const = 0;
  // The formats the suite concerns, for departure matching: "f32 f8e4m3fn".
  virtual std::string formats() const = 0;
  // The words --ops selectors are matched against, in order (§33.1): the formats, then any
  // further family words (tensor families: the scale rule). Format words compare as
  // formats (aliases allowed), other words literally.
  virtual std::string selector_text() const { return formats(); }
  // Spec clauses exercised, e.g. "§11 §6.1".
  virtual std::string clause() const = 0;
  virtual Shape shape() const = 0;
  // Whether the optional result words of this family are the §19.5 counts (capability
  // NUMREF_CAP_COUNTS, pipe `counts=yes`) rather than the §9 flags (NUMREF_CAP_FLAGS).
  virtual bool uses_counts() const { return false; }

  // ---- reference ------------------------------------------------------------------
  // The expected output words of n cases (column-major in / out), computed by the
  // reference. Thread-safe.
  virtual void expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const = 0;
  // Compares one case. `flags_word_valid` etc. are family matters; the options say
  // whether flags are compared and whether --any-nan is in force.
  virtual Finding compare(CaseView in, CaseView expected, CaseView got, const CompareOptions& o) const = 0;
  // One-line rendering of a case's inputs and of an output, in hex and decoded:
  // "x=43e88000 (465)" and "7f (NaN) flags=-o-x".
  virtual std::string render_inputs(CaseView in) const = 0;
  virtual std::string render_output(CaseView out, bool with_flags) const = 0;
  // Optional: the whole mismatch at once (tensor families). The default renders the inputs
  // and both outputs separately.
  virtual MismatchText render_mismatch(CaseView in, CaseView expected, CaseView got, const CompareOptions& o) const {
    return {render_inputs(in), render_output(got, o.flags), render_output(expected, o.flags), {}};
  }

  // ---- C ABI (§31) ---------------------------------------------------------------
  // Whether the backend implements this suite (calls the family's *_supported entry).
  virtual bool plugin_supported(const numref_backend& b) const = 0;
  // Runs n cases through the backend; returns false and sets `error` on a backend
  // error (negative return, wrong count, missing entry point).
  // `want_flags`: the backend declared NUMREF_CAP_FLAGS (cast) or NUMREF_CAP_COUNTS (tensor
  // families: the §19.5 counts) — the family knows which capability it reads.
  virtual bool plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                           bool want_flags, std::string& error) const = 0;

  // ---- pipe protocol (§32) -------------------------------------------------------------
  // The request line after the command word: "<n> " is prepended by the runner.
  virtual std::string pipe_params() const = 0;
  virtual void pipe_case(CaseView in, std::string& line) const = 0;
  // Parses one result line into output words of case i of `out` (column-major, n).
  // Returns an empty string on success, else the problem.
  virtual std::string pipe_result(std::string_view line, bool with_flags, std::uint32_t* out, std::size_t n,
                                  std::size_t i) const = 0;
};
using ParamsPtr = std::shared_ptr<const Params>;

// A stream of generated cases with random access (§33.3): case j's inputs depend only
// on (seed, params text, j), so shards and workers can produce any range.
class CaseSource {
 public:
  virtual ~CaseSource() = default;
  virtual std::uint64_t size() const = 0;
  // Fills the input words of cases [first, first + n) column-major into in (n cases).
  virtual void fill(std::uint64_t first, std::size_t n, std::uint32_t* in) const = 0;
};

struct GeneratedSuite {
  ParamsPtr params;
  std::shared_ptr<const CaseSource> cases;
};

// What a run asks a family to generate (§33.3).
enum class Level : std::uint8_t { l0, l1, l2, exhaustive };
struct PlanRequest {
  Level level = Level::l0;
  std::uint64_t seed = 1;
  std::vector<std::string> profiles;   // profiles to check
  std::vector<std::string> selectors;  // family-specific filters ("" = everything), e.g. "f32:f8e4m3fn"
};

// A case read from a golden-vector file.
struct VectorCase {
  ParamsPtr params;
  std::vector<std::uint32_t> in, expected;  // one case, word by word
  std::string note;                         // the line's comment, if any
};

// A parsed vector-file header (§30.2): ordered key -> value lines.
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

class Family {
 public:
  virtual ~Family() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view clause() const = 0;
  // Params from their canonical text; throws std::invalid_argument naming the problem.
  virtual ParamsPtr parse_params(std::string_view text) const = 0;
  // The generated suites of a level (§33.3).
  virtual void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const = 0;
  // The golden-vector files of this family (§30.4), in a fixed order.
  virtual void generate_vectors(std::vector<VectorFileText>& out) const = 0;
  // A reader for a vector file whose header names this family; `profiles` are those
  // being checked (empty = all). Throws VectorError on a bad header.
  virtual std::unique_ptr<VectorFileReader> open_vectors(const VectorHeader& h,
                                                         const std::vector<std::string>& profiles) const = 0;
};

// A malformed vector file or manifest (§30); the message names the file and line.
struct VectorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- registry ----------------------------------------------------------------------
// Every conformance/src/ops/op_<name>.cpp defines
//     void numref_conform_register_op_<name>(numref::conform::Registry&);
// and CMake generates the call list from the file names, so adding a family is adding a
// file (no static-initialisation tricks that a static library would drop).
// Families are static objects; the registry refers to them.
class Registry {
 public:
  void add(const Family& f) { families_.push_back(&f); }
  const Family* find(std::string_view name) const;
  const std::vector<const Family*>& all() const { return families_; }

 private:
  std::vector<const Family*> families_;
};
const Registry& registry();

}  // namespace numref::conform
