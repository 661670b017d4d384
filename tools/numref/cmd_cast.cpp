// numref cast — stream conversions from stdin to stdout.        spec §11 (via §1.2, §2.4, §4.3, §9.1)
//
// Input: one case per line, the source code in hex (with or without 0x; §2.4: bits above
// the source width are an error), followed for stochastic rounding by r in hex
// (0 <= r < 2^k, §4.3). Empty lines and lines whose first non-blank character is '#'
// are skipped. Output: one line per case, "<result hex> <flags>", e.g. "7e -o-x", the
// result with exactly 2/4/8 digits by target width (§1.2) and the flags in the fixed
// `voux` form of §9.1. The first bad line stops the run with one error line on stderr
// naming the line number and exit status 2; every result before it has been written.
//
// Speed: input and output go through 1 MiB buffers with read(2)/write(2); hex is parsed
// and formatted by hand; one numref::Converter is built for the run, and for sources of
// at most 16 bits without stochastic rounding every possible output line is computed
// once with that Converter into a table indexed by the source code.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/convert.hpp"
#include "numref/npy.hpp"
#include "parallel.hpp"

namespace numref::cli::cmd_cast {
namespace {

constexpr std::size_t kInBuf = std::size_t{1} << 20;
constexpr std::size_t kOutBuf = std::size_t{1} << 20;
constexpr std::size_t kThreadGrain = std::size_t{1} << 16;  // --threads: ranges of at least 64 Ki codes
constexpr std::size_t kMaxLineOut = 16;                     // 8 hex digits + ' ' + 4 flags + '\n' = 14

// Character classes for the hand-written scanner.
struct CharTables {
  std::array<signed char, 256> hex{};
  std::array<bool, 256> blank{};
  CharTables() {
    hex.fill(-1);
    for (int c = '0'; c <= '9'; ++c) hex[static_cast<std::size_t>(c)] = static_cast<signed char>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) hex[static_cast<std::size_t>(c)] = static_cast<signed char>(c - 'a' + 10);
    for (int c = 'A'; c <= 'F'; ++c) hex[static_cast<std::size_t>(c)] = static_cast<signed char>(c - 'A' + 10);
    for (char c : {' ', '\t', '\r', '\v', '\f'}) blank[static_cast<unsigned char>(c)] = true;
  }
};
const CharTables kChars;

inline bool is_blank(char c) { return kChars.blank[static_cast<unsigned char>(c)]; }

// A token as it can be quoted in an error message: its first 40 bytes, control characters and
// NUL escaped as one_line() writes them (\x1b, \x00; docs/cli.md), so the message stays one
// line and is never cut at a NUL.
std::string quote(const char* b, const char* e) {
  std::string s = one_line(std::string_view(b, static_cast<std::size_t>(std::min<std::ptrdiff_t>(e - b, 40))));
  if (e - b > 40) s += "...";
  return "'" + s + "'";
}

// stdout through one buffer and write(2).
class Output {
 public:
  Output() : buf_(kOutBuf) {}
  char* reserve() {
    if (n_ + kMaxLineOut > buf_.size()) flush();
    return buf_.data() + n_;
  }
  void commit(std::size_t k) { n_ += k; }
  void flush() {
    std::size_t done = 0;
    while (done < n_) {
      const ssize_t w = ::write(1, buf_.data() + done, n_ - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw conform::OutputError(std::string("standard output: write failed: ") + std::strerror(errno));  // §35.2
      }
      done += static_cast<std::size_t>(w);
    }
    n_ = 0;
  }

 private:
  std::vector<char> buf_;
  std::size_t n_ = 0;
};

class Caster {
 public:
  Caster(const Format& from, const Format& to, const Policy& p)
      : from_(from), conv_(from, to, p), need_r_(effective_round(to, p) == Round::sr), k_(p.sr_bits) {
    digits_ = static_cast<std::size_t>(hex_digits(to));
    for (unsigned f = 0; f < 256; ++f)
      std::memcpy(flags_[f].data(), flags_to_string(static_cast<std::uint8_t>(f)).data(), 4);
    // §11 The lookup table: every output line of a <= 16-bit source, computed by the
    // same Converter that answers the other cases.
    if (from.bits <= 16 && !need_r_) {
      lut_.resize(std::size_t{1} << from.bits);
      for (std::uint32_t c = 0; c < lut_.size(); ++c) {
        Line& l = lut_[c];
        l.len = static_cast<std::uint8_t>(format_line(conv_(c), l.text));
      }
    }
  }

  // One input line [b, e) (without its '\n'), physical line number `lineno`.
  inline void line(const char* b, const char* e, long long lineno) {
    const char* p = b;
    while (p < e && is_blank(*p)) ++p;
    if (p == e || *p == '#') return;
    const char* t = p;
    while (p < e && !is_blank(*p)) ++p;
    std::uint32_t code;
    if (const std::string_view tok(t, static_cast<std::size_t>(p - t)); looks_like_value(tok)) {
      if (const std::string err = value_code(tok, from_, code); !err.empty()) fail(lineno, err);  // §11: a value
    } else {
      code = static_cast<std::uint32_t>(parse_hex_token(t, p, from_.bits, lineno, true));
    }
    std::uint64_t r = 0;
    while (p < e && is_blank(*p)) ++p;
    if (need_r_) {
      if (p == e)
        fail(lineno, "missing r: stochastic rounding needs the random value r in hex after the source code (§5)");
      t = p;
      while (p < e && !is_blank(*p)) ++p;
      r = parse_hex_token(t, p, 32, lineno, false);
      if (k_ < 32 && (r >> k_) != 0)
        fail(lineno, "r " + quote(t, p) + " does not fit in k = " + std::to_string(k_) + " bits (need r < 2^" +
                         std::to_string(k_) + ", §4.3)");
      while (p < e && is_blank(*p)) ++p;
    }
    if (p != e) {
      const char* x = p;
      while (p < e && !is_blank(*p)) ++p;
      fail(lineno, "unexpected extra token " + quote(x, p) +
                       (need_r_ ? " (expected: source code, r)" : " (expected one source code per line)"));
    }
    emit(code, r);
  }

  // The result of one source code (deterministic rounding; any thread may call it).
  Result convert(std::uint32_t code) const { return conv_(code); }
  // One computed result: its output line, or with collect() its code and flags.
  void emit_result(const Result& res) {
    if (collect_) {
      collect_->push_back(res.bits);
      for (int b = 0; b < 8; ++b) flag_count_[static_cast<std::size_t>(b)] += (res.flags >> b) & 1u;
      return;
    }
    out_.commit(format_line(res, out_.reserve()));
  }

  // One case: its output line, or with collect() its result code and flags.
  inline void emit(std::uint32_t code, std::uint64_t r) {
    if (collect_) {
      const Result res = conv_(code, r);
      collect_->push_back(res.bits);
      for (int b = 0; b < 8; ++b) flag_count_[static_cast<std::size_t>(b)] += (res.flags >> b) & 1u;
      return;
    }
    char* o = out_.reserve();
    if (!lut_.empty()) {
      const Line& l = lut_[code];
      std::memcpy(o, l.text, sizeof l.text);
      out_.commit(l.len);
    } else {
      out_.commit(format_line(conv_(code, r), o));
    }
  }

  Output& out() { return out_; }
  // Results go to `codes` (and the flag counts) instead of standard output.
  void collect(std::vector<std::uint32_t>* codes) { collect_ = codes; }
  // How many results raised the flag of bit `b` (§9: SoftFloat's bit values).
  std::uint64_t flag_count(int b) const { return flag_count_[static_cast<std::size_t>(b)]; }
  bool needs_r() const { return need_r_; }

  [[noreturn]] void fail(long long lineno, const std::string& what) {
    out_.flush();  // every result before the bad line is delivered
    throw UsageError("line " + std::to_string(lineno) + ": " + what);
  }

 private:
  struct Line {
    char text[15];
    std::uint8_t len;
  };

  // §1.2 / §9.1 "<hex> <voux>\n" into o (room for kMaxLineOut bytes); returns its length.
  std::size_t format_line(const Result& res, char* o) const {
    static constexpr char kHex[] = "0123456789abcdef";
    std::uint32_t v = res.bits;
    for (std::size_t i = digits_; i-- > 0; v >>= 4) o[i] = kHex[v & 15u];
    o[digits_] = ' ';
    std::memcpy(o + digits_ + 1, flags_[res.flags].data(), 4);
    o[digits_ + 5] = '\n';
    return digits_ + 6;
  }

  // Hex with optional 0x/0X; leading zeros are free, the value must fit in `bits` (§2.4).
  std::uint64_t parse_hex_token(const char* b, const char* e, int bits, long long lineno, bool source) {
    const char* what = source ? "source code" : "r";
    const char* q = b;
    if (e - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) q += 2;
    if (q == e) fail(lineno, std::string("malformed hex ") + quote(b, e) + " for the " + what + " (no digits)");
    std::uint64_t v = 0;
    int significant = 0;
    for (; q < e; ++q) {
      const int d = kChars.hex[static_cast<unsigned char>(*q)];
      if (d < 0) fail(lineno, std::string("malformed hex ") + quote(b, e) + " for the " + what);
      if (v == 0 && d == 0) continue;
      if (++significant > 9) break;  // certainly wider than 32 bits; reported below
      v = (v << 4) | static_cast<std::uint64_t>(d);
    }
    if (significant > 9 || (v >> bits) != 0) {
      for (; q < e; ++q)  // a malformed character further on is the better message
        if (kChars.hex[static_cast<unsigned char>(*q)] < 0)
          fail(lineno, std::string("malformed hex ") + quote(b, e) + " for the " + what);
      if (source)
        fail(lineno, "hex " + quote(b, e) + " is wider than the " + std::to_string(bits) + " bits of " +
                         std::string(from_.name) + " (§2.4)");
      fail(lineno,
           std::string("hex ") + quote(b, e) + " for the " + what + " is wider than " + std::to_string(bits) + " bits");
    }
    return v;
  }

  const Format& from_;
  Converter conv_;
  bool need_r_;
  int k_;
  std::size_t digits_;
  std::array<std::array<char, 4>, 256> flags_{};
  std::vector<Line> lut_;
  Output out_;
  std::vector<std::uint32_t>* collect_ = nullptr;
  std::array<std::uint64_t, 8> flag_count_{};
};

// §19.7 The .npy dtypes that hold codes of `f` (the first is the one written): f32 as <f4 (or <u4
// bit patterns), f16 as <f2 (or <u2 / V2), bf16 as <u2 (or V2), int8 as |i1 only, the other
// formats of at most 8 bits as |u1 (or |V1, as NumPy saves ml_dtypes' arrays of them; f8e5m2 also
// <f1, ml_dtypes' float8_e5m2), one code in the low bits of each byte (§2.4). A dtype that is
// itself a different number type is refused: |u1 is uint8, not int8 (200 would be read as -56);
// <f1 is ml_dtypes' float8_e5m2, not another 8-bit float.
std::vector<npy::Dtype> npy_dtypes(const Format& f) {
  if (f.id == FormatId::f32) return {npy::Dtype::f4, npy::Dtype::u4};
  if (f.id == FormatId::f16) return {npy::Dtype::f2, npy::Dtype::u2, npy::Dtype::v2};
  if (f.bits == 16) return {npy::Dtype::u2, npy::Dtype::v2};
  if (f.id == FormatId::int8) return {npy::Dtype::i1};
  if (f.id == FormatId::f8e5m2) return {npy::Dtype::u1, npy::Dtype::v1, npy::Dtype::f1};
  return {npy::Dtype::u1, npy::Dtype::v1};
}

// What a .npy dtype holds, for a message: "uint8", "float8_e5m2 (ml_dtypes)", ...
std::string dtype_meaning(npy::Dtype d) {
  switch (d) {
    case npy::Dtype::f4: return "float32";
    case npy::Dtype::f2: return "float16";
    case npy::Dtype::u4: return "uint32";
    case npy::Dtype::u2: return "uint16";
    case npy::Dtype::u1: return "uint8";
    case npy::Dtype::i1: return "int8";
    case npy::Dtype::f1: return "ml_dtypes float8_e5m2";
    case npy::Dtype::v2:
    case npy::Dtype::v1: return "raw bytes";
  }
  return "?";
}

std::string dtype_list(const Format& f) {
  std::string s;
  for (const npy::Dtype d : npy_dtypes(f)) s += (s.empty() ? "" : " or ") + std::string(npy::descr_of(d));
  return s;
}

// The codes of a .npy file of `from` codes, in C order; its shape in `shape`.
std::vector<std::uint32_t> read_npy_codes(const std::string& path, const Format& from,
                                          std::vector<std::size_t>& shape) {
  std::vector<std::uint8_t> bytes;
  const npy::Array a = read_npy(path, bytes);
  const auto ok = npy_dtypes(from);
  if (std::find(ok.begin(), ok.end(), a.dtype) == ok.end())
    throw UsageError("--input " + path + ": dtype '" + std::string(npy::descr_of(a.dtype)) + "' (" +
                     dtype_meaning(a.dtype) + ") does not hold " + std::string(from.name) +
                     " codes (--from; expected " + dtype_list(from) + ")");
  const std::size_t isz = npy::itemsize(a.dtype);
  std::vector<std::uint32_t> codes(a.count());
  const std::uint8_t* d = bytes.data() + a.data_offset;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    std::uint32_t c = 0;
    for (std::size_t k = 0; k < isz; ++k) c |= std::uint32_t{d[i * isz + k]} << (8 * k);  // little-endian (§19.7)
    if (c & ~from.mask())
      throw UsageError("--input " + path + ": element " + std::to_string(i) + " = 0x" +
                       hex_code(c, format(FormatId::int8)) + " has bits above the " + std::to_string(from.bits) +
                       "-bit width of " + std::string(from.name) + " (§2.4)");
    codes[i] = c;
  }
  shape = a.shape;
  return codes;
}

void write_npy_codes(conform::OutputFile& out, const Format& to, const std::vector<std::size_t>& shape,
                     const std::vector<std::uint32_t>& codes) {
  const npy::Dtype d = npy_dtypes(to).front();
  const std::size_t isz = npy::itemsize(d);
  std::vector<std::uint8_t> raw(codes.size() * isz);
  for (std::size_t i = 0; i < codes.size(); ++i)
    for (std::size_t k = 0; k < isz; ++k) raw[i * isz + k] = static_cast<std::uint8_t>(codes[i] >> (8 * k));
  write_npy(out, d, shape, raw.data(), raw.size());
}

constexpr const char* kUsage =
    "usage: numref cast --from FORMAT --to FORMAT [policy options] < cases\n"
    "\n"
    "Reads one case per line from stdin: the source code in hex (with or without 0x),\n"
    "followed for --round sr by the random value r in hex (0 <= r < 2^k). Blank lines and\n"
    "lines starting with '#' are skipped. Writes one line per case: the result code in hex\n"
    "(2, 4 or 8 digits by target width) and the flags v(invalid) o(overflow) u(underflow)\n"
    "x(inexact), e.g. '7e -o-x'. The first bad line stops the run (exit 2, message names\n"
    "the line). Formats: %s.\n"
    "\n"
    "A source may also be written as a value: a decimal (3.14, -2.5e-3, +12), a hex-float\n"
    "(-0x1.8p-3), inf or nan; it is rounded exactly to the --from format (nearest, ties to\n"
    "even), then cast. A token of hex digits alone (12, 1e5) is a code.\n"
    "\n"
    "  --input F.npy        read the codes from a .npy file (C order) instead of stdin\n"
    "  --threads N          threads sharing a .npy input's conversion (default: every core;\n"
    "                       1: one thread); the results are the same for every N\n"
    "  --output G.npy       write the result codes as a .npy file (the input's shape; 1-D for\n"
    "                       stdin) and a summary of the flags to stdout, instead of result lines\n"
    "                       dtypes: f32 <f4, f16 <f2, bf16 <u2, int8 |i1, others |u1 (read: also\n"
    "                       |V1, as NumPy saves ml_dtypes float8 / float6 / float4 arrays, and <f1\n"
    "                       for f8e5m2; a |u1 file is not int8, a <f1 file no other format)\n"
    "\n"
    "policy options (applied in this order: profile, --policy, single knobs):\n";

void read_lines(Caster& caster);

int run_cast(Args& a) {
  if (a.flag("help")) {
    std::printf(kUsage, format_names(", ").c_str());
    std::fputs(std::string(policy_options_help()).c_str(), stdout);
    return 0;
  }
  const auto from_name = a.opt("from");
  const auto to_name = a.opt("to");
  if (!from_name) throw UsageError("--from FORMAT is required (known: " + format_names(", ") + ")");
  if (!to_name) throw UsageError("--to FORMAT is required (known: " + format_names(", ") + ")");
  const Format& from = format_arg(*from_name, "--from");
  const Format& to = format_arg(*to_name, "--to");
  const Policy p = policy_from_args(a, to, &from);
  const auto input = a.opt("input");
  const auto output = a.opt("output");
  const auto threads = threads_from_args(a);
  a.finish();
  if (threads && !input) throw UsageError("--threads applies to a .npy input (--input F.npy); stdin is read in order");

  // §35.1 the output is checked before any work; it is never the input
  Outputs outputs(input ? std::vector<std::string>{*input} : std::vector<std::string>{});
  conform::OutputFile* out_file = output ? &outputs.add("--output", *output) : nullptr;
  Caster caster(from, to, p);
  if (input && caster.needs_r())
    throw UsageError("--input: stochastic rounding reads r from the lines of stdin; not with a .npy input");
  if (output && caster.needs_r())
    throw UsageError("--output: stochastic rounding reads r from the lines of stdin; not with a .npy output");
  std::vector<std::uint32_t> results;
  if (out_file) caster.collect(&results);
  std::vector<std::size_t> shape;
  if (input) {
    // the codes converted on --threads threads by element ranges, then emitted in order
    const std::vector<std::uint32_t> codes = read_npy_codes(*input, from, shape);
    std::vector<Result> res(codes.size());
    cpu_fast::parallel_ranges(codes.size(), threads.value_or(cpu_fast::default_threads()), kThreadGrain,
                              [&](std::size_t lo, std::size_t hi) {
                                for (std::size_t i = lo; i < hi; ++i) res[i] = caster.convert(codes[i]);
                              });
    if (out_file) results.reserve(res.size());
    for (const Result& r : res) caster.emit_result(r);
  } else {
    read_lines(caster);
    shape = {results.size()};
  }
  if (!out_file) {
    caster.out().flush();
    return 0;
  }
  write_npy_codes(*out_file, to, shape, results);
  outputs.commit_all();
  std::printf(
      "wrote %s: %s; flags: %llu invalid, %llu overflow, %llu underflow, %llu inexact\n", out_file->path().c_str(),
      count(results.size(), std::string(to.name) + " code").c_str(),
      static_cast<unsigned long long>(caster.flag_count(4)), static_cast<unsigned long long>(caster.flag_count(2)),
      static_cast<unsigned long long>(caster.flag_count(1)), static_cast<unsigned long long>(caster.flag_count(0)));
  return 0;
}

// Every line of stdin through the caster (§11 line form).
void read_lines(Caster& caster) {
  std::vector<char> in(kInBuf);
  std::size_t have = 0;
  long long lineno = 0;
  for (;;) {
    const ssize_t n = ::read(0, in.data() + have, kInBuf - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      caster.out().flush();
      throw std::runtime_error(std::string("reading stdin failed: ") + std::strerror(errno));
    }
    have += static_cast<std::size_t>(n);
    const char* s = in.data();
    const char* const end = s + have;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(s, '\n', static_cast<std::size_t>(end - s)));
      if (!nl) break;
      caster.line(s, nl, ++lineno);
      s = nl + 1;
    }
    const std::size_t rest = static_cast<std::size_t>(end - s);
    if (n == 0) {  // end of input; a last line without '\n' still counts
      if (rest) caster.line(s, end, ++lineno);
      break;
    }
    if (rest == kInBuf) caster.fail(lineno + 1, "line longer than 1 MiB");
    std::memmove(in.data(), s, rest);
    have = rest;
  }
}

}  // namespace

NUMREF_VERB("cast", "convert codes read from stdin (one per line) under a policy or profile", run_cast);

}  // namespace numref::cli::cmd_cast
