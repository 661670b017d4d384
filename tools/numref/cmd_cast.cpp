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

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/convert.hpp"

namespace numref::cli {
namespace {

constexpr std::size_t kInBuf = std::size_t{1} << 20;
constexpr std::size_t kOutBuf = std::size_t{1} << 20;
constexpr std::size_t kMaxLineOut = 16;  // 8 hex digits + ' ' + 4 flags + '\n' = 14

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

// A token as it can be quoted in an error message (bounded length, printable).
std::string quote(const char* b, const char* e) {
  std::string s;
  for (const char* p = b; p < e && s.size() < 40; ++p)
    s.push_back(static_cast<unsigned char>(*p) >= 0x20 && static_cast<unsigned char>(*p) < 0x7f ? *p : '?');
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
        throw std::runtime_error(std::string("writing to stdout failed: ") + std::strerror(errno));
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
    for (unsigned f = 0; f < 256; ++f) std::memcpy(flags_[f].data(), flags_to_string(static_cast<std::uint8_t>(f)).data(), 4);
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
    const std::uint32_t code = static_cast<std::uint32_t>(parse_hex_token(t, p, from_.bits, lineno, true));
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
      fail(lineno, std::string("hex ") + quote(b, e) + " for the " + what + " is wider than " +
                       std::to_string(bits) + " bits");
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
};

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
    "policy options (applied in this order: profile, --policy, single knobs):\n";

int run_cast(Args& a) {
  if (a.flag("help")) {
    std::printf(kUsage, known_formats().c_str());
    std::fputs(std::string(policy_options_help()).c_str(), stdout);
    return 0;
  }
  const auto from_name = a.opt("from");
  const auto to_name = a.opt("to");
  if (!from_name) throw UsageError("--from FORMAT is required (known: " + known_formats() + ")");
  if (!to_name) throw UsageError("--to FORMAT is required (known: " + known_formats() + ")");
  const Format& from = format_arg(*from_name, "--from");
  const Format& to = format_arg(*to_name, "--to");
  const Policy p = policy_from_args(a, to, &from);
  a.finish();

  Caster caster(from, to, p);
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
  caster.out().flush();
  return 0;
}

}  // namespace

NUMREF_VERB("cast", "convert codes read from stdin (one per line) under a policy or profile", run_cast);

}  // namespace numref::cli
