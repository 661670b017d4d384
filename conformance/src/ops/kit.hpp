// numref conformance — what op families share: parameter text, tensor views of a case, C ABI
// calls. Internal to conformance/src/ops.                               spec §32, §34.1, §34.8
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numref/conform/core.hpp"
#include "numref/conform/util.hpp"
#include "numref/exact.hpp"
#include "numref/partition.hpp"
#include "numref/policy.hpp"
#include "numref/tensor.hpp"
#include "numref/value.hpp"

namespace numref::conform::kit {

// ---- parameter text (§34.1) -------------------------------------------------------------------

// A profile by name; throws std::invalid_argument "unknown profile '...'".
const Profile& profile_by_name(std::string_view name);
// The knob settings of `p` that differ from `base`, in describe() order: "round=rtz daz=1".
std::string policy_overrides(const Policy& base, const Policy& p);
// A §12.5 partition; throws std::invalid_argument "<what>: <problem>".
Partition partition(std::string_view text, std::string_view what);
// A tensor shape "RxC"; throws std::invalid_argument.
std::pair<std::size_t, std::size_t> shape(std::string_view text);

// The key=value words of a family's canonical text (tensor and MoR families). Policy knobs
// (describe() keys, §10.3) are collected apart when `policy_keys`, else they are unknown keys.
class KeyValues {
 public:
  KeyValues(std::string_view family, std::string_view text, bool policy_keys);
  // The value of `key` and removes it. A key that is absent: nullopt, or an error when
  // `required`; a key given although `used` is false: an error.
  std::optional<std::string> take(std::string_view key, bool used = true, bool required = false);
  // The collected policy words ("round=rtz daz=1").
  const std::string& policy() const { return policy_; }
  // Throws for any key not taken.
  void finish() const;

 private:
  std::string family_;
  std::map<std::string, std::string, std::less<>> kv_;
  std::string policy_;
};
// "1" / "0"; throws for anything else.
bool flag_value(const std::string& key, const std::string& v);

// Appends " key=value" (no leading space on an empty string).
void put(std::string& text, std::string_view key, std::string_view value);

// §31.7, §31.9 The header of a vector file of a family whose canonical text is key=value words
// with a shape (MoR, GaussWS): every key but shape, then the informative `policy` line.
std::vector<Family::HeaderLine> header_lines(const Params& p, std::string policy);
// The canonical text of such a file's suite for a case of shape rows x cols: the header's
// keys but the file keys (§31.2) and `policy`.
std::string text_from_header(const VectorHeader& h, std::size_t rows, std::size_t cols);

// ---- a tensor case (tensor and MoR families) -------------------------------------------------

// The largest tensor a suite may have (elements): keeps a case well inside a batch.
inline constexpr std::size_t kMaxElements = std::size_t{1} << 16;

// A rows x cols view of a source tensor stored row-major, or its transpose stored row-major
// (a cols x rows buffer, §12.1).
struct View {
  std::size_t rows = 1, cols = 1;
  bool transpose = false;
  // Throws std::invalid_argument for an empty shape or one over kMaxElements.
  void check() const;
  std::size_t size() const { return rows * cols; }
  std::size_t mem_rows() const { return transpose ? cols : rows; }
  std::size_t mem_cols() const { return transpose ? rows : cols; }
  std::int64_t row_stride() const { return transpose ? 1 : static_cast<std::int64_t>(cols); }
  std::int64_t col_stride() const { return transpose ? static_cast<std::int64_t>(rows) : 1; }
  // The view element (i, j) of memory word k.
  std::pair<std::size_t, std::size_t> of_memory(std::size_t k) const;
  std::size_t view_index_of_memory(std::size_t k) const {
    const auto [i, j] = of_memory(k);
    return i * cols + j;
  }
  std::string text() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};
// §32.5 / §32.7 The view and partition fields of a C operation (numref_tensor_op, numref_mor_op).
template <class Op>
void put_view(Op& c, const View& v, const BlockGrid& g) {
  c.rows = static_cast<std::uint32_t>(v.rows);
  c.cols = static_cast<std::uint32_t>(v.cols);
  c.row_stride = v.row_stride();
  c.col_stride = v.col_stride();
  c.block_rows = static_cast<std::uint32_t>(g.block_rows());
  c.block_cols = static_cast<std::uint32_t>(g.block_cols());
  c.n_blocks = static_cast<std::uint32_t>(g.count());
}
// The word offset of each named column (-1 when absent) into the members of a layout struct.
template <class L>
struct ColumnAt {
  int L::*member;
  const char* name;
  bool output;
};
template <class L, std::size_t N>
void fill_layout(L& layout, const Schema& s, const ColumnAt<L> (&cols)[N]) {
  for (const auto& c : cols) {
    const Column* col = s.find(c.name, c.output);
    layout.*(c.member) = col ? col->at : -1;
  }
}

// The source codes of a case (32-bit words) in the format's storage width, as a TensorView reads them.
void pack(const Format& f, const std::uint32_t* words, std::size_t n, std::vector<unsigned char>& buf);

// ---- exact comparisons for the classification of mismatches (§34.4) --------------------------

// |a| vs |b| for exact values (sticky bits ignored): -1, 0, 1.
int cmp_magnitude(const Exact& a, const Exact& b);
// The exact value of a finite code (sign kept).
Exact exact_of(const Decoded& d);
// |v| (finite, non-zero, not sticky) is exactly the midpoint of its two neighbours in `to`,
// the largest finite value's upper neighbour being one quantum past it: a tie of the round-to-
// nearest modes (464 -> f8e4m3fn is the tie between 448 and 480).
bool is_tie(const Exact& v, const Format& to, const Policy& p);

// ---- columns ---------------------------------------------------------------------------------

// §31.6, §31.7, §31.9 The schema of a tensor case (tensor, MoR, GaussWS): case-major, its
// vector-file lines start with the shape rows x cols.
void tensor_case(Schema& s, std::size_t rows, std::size_t cols);
// A column of words that are no format's codes: `digits` hex digits, at most `limit`.
Column words(std::string name, Role role, int digits, std::uint64_t limit, std::size_t rows, std::size_t cols,
             Place place);
// A column of codes of format f (digits, limit, decoding from the format).
Column codes(std::string name, Role role, const Format& f, std::size_t rows, std::size_t cols, Place place);
// Column c with the class of its mismatches (§34.4) and the plural noun of its values.
Column named(Column c, std::string cls, std::string what);
// §5 The input column "r": the random words of stochastic rounding with k random bits each,
// (k + 3) / 4 hex digits in vector files, 8 on pipe lines (§33.4, §33.6).
Column sr_random(int k, std::size_t rows, std::size_t cols, Place place);
// A column of E8M0 / binary32 / E4M3 scale codes of format f over the block grid g.
Column scales(std::string name, Role role, const Format& f, const BlockGrid& g);
// "2^k" / "NaN" of an E8M0 scale code (§16).
std::string e8m0_text(std::uint32_t code);

// ---- C ABI (§32) -----------------------------------------------------------------------------

// The entry point at `offset` exists in the backend's struct (struct_size reaches it, not NULL).
template <typename Fn>
bool has_entry(const numref_backend& b, std::size_t offset, Fn fn) {
  return b.struct_size >= offset + sizeof(fn) && fn != nullptr;
}
#define NUMREF_HAS_ENTRY(b, field) ::numref::conform::kit::has_entry((b), offsetof(numref_backend, field), (b).field)
// The result of one entry-point call: a negative value (with the backend's last_error) or a
// count other than `want` sets `error` and returns false. `unit` names what was counted.
bool check_call(const numref_backend& b, std::string_view entry, std::int64_t got, std::uint64_t want,
                std::string_view unit, std::string& error);

// ---- §34.6 output overruns ------------------------------------------------------------------
// The runner never lets a backend call write into the case words directly: each output buffer
// it passes is one of these, n values of T followed by a guard zone of 2n + 64 values of canary
// bytes (0xA5), checked after the call. A call that changed the guard zone wrote past the end:
// a failure of the backend (§34.6) naming the entry, the buffer and how many values past the end
// it wrote (up to the furthest changed value). An overrun past the guard zone is not caught.
inline constexpr unsigned char kCanaryByte = 0xA5;
std::string overrun_text(std::string_view entry, std::string_view buffer, std::size_t past, std::size_t n,
                         std::size_t value_size);

template <typename T>
class Guarded {
 public:
  Guarded(std::string name, std::size_t n) : name_(std::move(name)), n_(n), v_(3 * n + 64) { reset(); }
  // The n values zero, the guard zone canaries (before each call).
  void reset() {
    std::fill(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(n_), T{});
    std::memset(static_cast<void*>(v_.data() + n_), kCanaryByte, (v_.size() - n_) * sizeof(T));
  }
  T* data() { return v_.data(); }
  const T* data() const { return v_.data(); }
  std::size_t size() const { return n_; }
  const T& operator[](std::size_t i) const { return v_[i]; }
  // How many values past the end the call wrote (0: none).
  std::size_t overrun() const {
    const auto* b = reinterpret_cast<const unsigned char*>(v_.data());
    for (std::size_t k = v_.size() * sizeof(T); k-- > n_ * sizeof(T);)
      if (b[k] != kCanaryByte) return k / sizeof(T) - n_ + 1;
    return 0;
  }
  // False with `error` set when the call wrote past the end.
  bool check(std::string_view entry, std::string& error) const {
    const std::size_t past = overrun();
    if (past) error = overrun_text(entry, name_, past, n_, sizeof(T));
    return past == 0;
  }

 private:
  std::string name_;
  std::size_t n_;
  std::vector<T> v_;
};

// The word outputs of one case of a tensor-shaped family, each output column of the schema a
// Guarded buffer: at(offset) is the buffer of the column at that word offset of the case
// (Layout), finish() checks every buffer handed out and copies them into the case's words.
class CaseOutputs {
 public:
  explicit CaseOutputs(const Schema& s);
  void reset();  // before each call
  std::uint32_t* at(int offset);
  bool finish(std::string_view entry, std::uint32_t* case_out, std::string& error);

 private:
  struct Slot {
    int at;
    Guarded<std::uint32_t> buf;
    bool used = false;
  };
  std::vector<Slot> slots_;
};

}  // namespace numref::conform::kit
