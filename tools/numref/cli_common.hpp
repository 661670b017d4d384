// numref CLI — helpers shared by the verbs: format and profile look-up, code rendering,
// and the Policy built from command-line options.
//   spec §1.2 (code notation), §2.3 (names), §2.4 (sub-byte storage), §10 (profiles)
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "numref/conform/output.hpp"
#include "numref/conform/util.hpp"
#include "numref/format.hpp"
#include "numref/npy.hpp"
#include "numref/policy.hpp"
#include "numref/value.hpp"

namespace numref::cli {

// §2.3 The format named `name` (canonical name or alias). Throws UsageError
// "<what>: unknown format 'x' (known: f32, bf16, ...)".
const Format& format_arg(std::string_view name, std::string_view what);

// §1.2 Number of hex digits of a code of `f`: 2 for <= 8 bits, 4 for 16, 8 for 32.
int hex_digits(const Format& f);
// §1.2 The code in lowercase hex with exactly hex_digits(f) digits, no 0x.
std::string hex_code(std::uint32_t code, const Format& f);
// The field `v` of width `width` in binary, most significant bit first ("" for width 0).
std::string binary_field(std::uint32_t v, int width);

// §3.4 A compact exact rendering of a finite value for tables: the exact decimal
// expansion when it has at most `max_chars` characters, else the C99 hex-float.
std::string compact_value(const Decoded& d, std::size_t max_chars = 12);

// A JSON string: `s` quoted, escaped as the conformance reports escape it.
// (Appended, not "\"" + ...: GCC 12 warns falsely on operator+(const char*, string&&), bug 105651.)
inline std::string json_string(std::string_view s) {
  std::string o(1, '"');
  o += conform::json_escape(s);
  o += '"';
  return o;
}

// §11 A source value written as a number rather than a code (numref cast): a decimal
// (`3.14`, `-2.5e-3`, `+12`), a C99 hex-float (`-0x1.8p-3`), `inf` / `infinity` / `nan` with an
// optional sign, any case. looks_like_value() tells such a token from a hex code: it has a sign,
// a '.', a 'p' exponent or a signed exponent, or is inf / nan (a bare `12` or `1e5` stays a hex code).
bool looks_like_value(std::string_view tok);
// The code of `f` for the value `tok`: the exact rational value rounded once to `f` by the
// rounding core (§4; round to nearest, ties to even, §7.1 "even" for f8e8m0fnu), never through
// host floating point. Returns an error text ("" on success): malformed, a value beyond the
// largest finite value of `f` (§6.1 overflow), one `f` cannot hold (negative for an unsigned
// format, zero in f8e8m0fnu, Inf or NaN where `f` has none). `inexact`, if given, tells
// whether the value was rounded.
std::string value_code(std::string_view tok, const Format& f, std::uint32_t& code, bool* inexact = nullptr);

// A table on stdout: aligned plain-text columns (two spaces apart, header underlined
// with dashes) or, with `markdown`, a GitHub-flavoured Markdown pipe table.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 bool markdown);

// §10 / §10.3 The conversion policy selected by the options of `numref cast` (and any
// verb that converts): --profile P (default ocp) gives the base Policy for the target
// (narrow or wide, §10.1); --policy "key=value ..." (§10.3 text form) is applied on top;
// then the single-knob options, each overriding the previous layers: one per row of numref's
// knob table (policy.hpp kPolicyKnobs), named by its key with '-' for '_' and taking its words
// (--round rne|..., --sr-bits K, --sr-variant fraction|add, --nan sign|..., --daz 0|1, ...).
// An explicit --round also sets e8m0_round=follow unless --e8m0-round is given (so
// `--round rtz` means rtz for an f8e8m0fnu target too, §7.1).
// Errors (UsageError): unknown profile or value (naming the option and listing the
// accepted values), --round sr without --sr-bits, --sr-bits / --sr-variant without
// round=sr, and any policy validate() rejects for `to` (§4.3).
// With `from` (a cast), the profile's (source, target) rules apply too (§10.2).
Policy policy_from_args(Args& a, const Format& to, const Format* from = nullptr);
// --threads N (issue 32): how many threads share the work of a .npy input; nullopt when absent
// (the verb then uses every core, cpu_fast::default_threads()). 0, a negative, empty, malformed
// or repeated value is a UsageError.
std::optional<unsigned> threads_from_args(Args& a);
// The usage lines for the options policy_from_args() reads (generated from the knob table).
std::string_view policy_options_help();

// The tensor verbs read and write .npy data ('<' little-endian dtypes) in place.
static_assert(std::endian::native == std::endian::little, "the .npy reader and writer assume a little-endian host");

// §19.7 A .npy file read (into `bytes`) and parsed; a file that cannot be read or is malformed
// is a UsageError naming it.
npy::Array read_npy(const std::string& path, std::vector<std::uint8_t>& bytes);

// §19.7 / §12.1 A .npy file read as a tensor for the tensor verbs (quantize, mor):
// <f4 (f32), <f2 (f16), or bit patterns (<u2, V2, |u1) whose format `named` gives
// (--input-format). The rows are the product of all leading dimensions, the columns the
// last one. Every problem is a UsageError naming the file: malformed .npy, unsupported
// dtype, a format that does not match the dtype or is not a source format (§12.1),
// 0-d or empty arrays, sub-byte codes with bits above the width (§2.4).
struct NpyTensor {
  std::vector<std::uint8_t> bytes;  // the whole file
  const Format* format = nullptr;
  std::size_t rows = 0, cols = 0;
  std::size_t offset = 0;  // of the data in `bytes`
  std::vector<std::size_t> shape;
};
// `patterns`, when given and `named` is not, is the format of a file of bit patterns (a tensor
// whose own format does not follow --input-format, such as gaussws' dL/dw_hat).
NpyTensor read_npy_tensor(const std::string& path, const Format* named, const Format* patterns = nullptr);

// §19.7 / §35 The .npy file of `n_bytes` bytes at `data` (dtype d, C order) written to an output
// of a command (an OutputFile of its OutputSet; committed with the others).
void write_npy(conform::OutputFile& out, npy::Dtype d, const std::vector<std::size_t>& shape, const void* data,
               std::size_t n_bytes);

// §35.1 The outputs of one command, checked before any work: each is refused when it names one
// of `inputs` (the message names `option`) or another output, or its directory is missing.
// Their files are written through the set and appear together at commit_all().
class Outputs {
 public:
  explicit Outputs(std::vector<std::string> inputs) : inputs_(std::move(inputs)) {}
  conform::OutputFile& add(std::string_view option, const std::string& path);
  void commit_all() { set_.commit_all(); }

 private:
  std::vector<std::string> inputs_;
  conform::OutputSet set_;
};

}  // namespace numref::cli
