// numref — command-line entry point: dispatches to the registered verbs (cli.hpp).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli.hpp"
#include "numref/conform/output.hpp"
#include "numref/version.hpp"

namespace numref::cli {

Args::Args(std::string verb, std::vector<std::string> argv) : verb_(std::move(verb)) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      const auto eq = a.find('=');
      if (eq != std::string::npos) {
        items_.push_back({a.substr(2, eq - 2), a.substr(eq + 1)});
      } else {
        // value = next argument unless it is itself an option
        if (i + 1 < argv.size() && !(argv[i + 1].size() > 2 && argv[i + 1].rfind("--", 0) == 0)) {
          items_.push_back({a.substr(2), argv[i + 1]});
          ++i;
        } else {
          items_.push_back({a.substr(2), std::nullopt});
        }
      }
    } else {
      items_.push_back({"", a});
    }
  }
}

namespace {
// An option given an empty value (`--out ""`, `--case=`) is refused, never read as "not given"
// or as a path: every verb's options go through opt() or multi().
void refuse_empty(std::string_view name, const std::string& value) {
  if (value.empty())
    throw UsageError("option --" + std::string(name) + " has an empty value; give a value or leave the option out");
}
}  // namespace

std::optional<std::string> Args::opt(std::string_view name) {
  std::optional<std::string> v;
  for (auto& it : items_) {
    if (it.key != name) continue;
    it.used = true;
    if (!it.value) throw UsageError("option --" + std::string(name) + " needs a value");
    refuse_empty(name, *it.value);
    if (v)
      throw UsageError("option --" + std::string(name) + " given twice ('" + *v + "' and '" + *it.value +
                       "'); give it once");
    v = it.value;
  }
  return v;
}

std::string Args::opt_or(std::string_view name, std::string_view def) {
  auto v = opt(name);
  return v ? *v : std::string(def);
}

std::vector<std::string> Args::multi(std::string_view name) {
  std::vector<std::string> out;
  bool after = false;
  for (auto& it : items_) {
    if (it.key == name) {
      it.used = true;
      if (it.value) {
        refuse_empty(name, *it.value);
        out.push_back(*it.value);
      }
      after = true;
    } else if (after && it.key.empty() && !it.used) {
      it.used = true;
      refuse_empty(name, *it.value);
      out.push_back(*it.value);
    } else {
      after = false;
    }
  }
  return out;
}

bool Args::flag(std::string_view name) {
  bool seen = false;
  for (std::size_t i = 0; i < items_.size(); ++i) {
    auto& it = items_[i];
    if (it.key != name) continue;
    if (seen) throw UsageError("option --" + std::string(name) + " given twice; give it once");
    it.used = true;
    seen = true;
    if (it.value) {
      // "--flag positional": the parser took the next word as the value; give it back.
      items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(i) + 1, Item{"", it.value, false});
      it.value.reset();
    }
  }
  return seen;
}

std::vector<std::string> Args::positional() {
  std::vector<std::string> out;
  for (auto& it : items_)
    if (it.key.empty() && !it.used) {
      it.used = true;
      out.push_back(*it.value);
    }
  return out;
}

void Args::finish() {
  for (auto& it : items_) {
    if (it.used) continue;
    if (it.key.empty()) throw UsageError("unexpected argument '" + *it.value + "'");
    throw UsageError("unknown option --" + it.key);
  }
}

std::uint64_t parse_hex(std::string_view s, int max_bits, std::string_view what) {
  std::string_view h = s;
  if (h.size() >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h.remove_prefix(2);
  if (h.empty()) throw UsageError(std::string(what) + ": empty hex value '" + std::string(s) + "'");
  std::uint64_t v = 0;
  int digits = 0;
  for (char c : h) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      throw UsageError(std::string(what) + ": malformed hex '" + std::string(s) + "'");
    if (v == 0 && d == 0) continue;  // leading zeros do not count
    if (++digits > 16) throw UsageError(std::string(what) + ": hex value '" + std::string(s) + "' is too wide");
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  if (max_bits < 64 && (v >> max_bits) != 0)
    throw UsageError(std::string(what) + ": hex value '" + std::string(s) + "' is wider than " +
                     std::to_string(max_bits) + " bits");
  return v;
}

long long parse_int(std::string_view s, long long lo, long long hi, std::string_view what) {
  if (s.empty()) throw UsageError(std::string(what) + ": empty number");
  long long v = 0;
  bool neg = false;
  std::size_t i = 0;
  if (s[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i >= s.size()) throw UsageError(std::string(what) + ": malformed number '" + std::string(s) + "'");
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') throw UsageError(std::string(what) + ": malformed number '" + std::string(s) + "'");
    v = v * 10 + (s[i] - '0');
    if (v > (1LL << 53)) throw UsageError(std::string(what) + ": number '" + std::string(s) + "' out of range");
  }
  if (neg) v = -v;
  if (v < lo || v > hi)
    throw UsageError(std::string(what) + ": " + std::to_string(v) + " is outside " + std::to_string(lo) + ".." +
                     std::to_string(hi));
  return v;
}

std::uint64_t parse_u64(std::string_view s, std::string_view what) {
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  const std::string range = " (an unsigned 64-bit integer: 0 .. 18446744073709551615 = 2^64 - 1)";
  if (s.empty()) throw UsageError(std::string(what) + ": empty number" + range);
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') throw UsageError(std::string(what) + ": malformed number '" + std::string(s) + "'" + range);
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (kMax - d) / 10) throw UsageError(std::string(what) + ": " + std::string(s) + " is outside" + range);
    v = v * 10 + d;
  }
  return v;
}

std::string one_line(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string o;
  o.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      o += "\\n";
    else if (c == '\r')
      o += "\\r";
    else if (c == '\t')
      o += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      o += "\\x";
      o += kHex[c >> 4];
      o += kHex[c & 15];
    } else {
      o += ch;
    }
  }
  return o;
}

std::map<std::string, Verb>& registry() {
  static std::map<std::string, Verb> r;
  return r;
}

Registrar::Registrar(std::string name, std::string summary, VerbFn fn) {
  registry()[name] = Verb{name, std::move(summary), std::move(fn)};
}

}  // namespace numref::cli

namespace {
// §35.2 Standard output goes through a glibc cookie stream (fopencookie) over file descriptor 1
// that records the errno of a failed write (conform::note_stdout_error): stdio keeps only an
// error flag, and a write that fails inside printf long before the final flush would otherwise
// be reported without its reason ("No space left on device").
ssize_t stdout_write(void*, const char* buf, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(STDOUT_FILENO, buf + done, n - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      numref::conform::note_stdout_error(errno);
      return -1;
    }
    done += static_cast<std::size_t>(w);
  }
  return static_cast<ssize_t>(n);
}

void record_stdout_errors() {
  static constexpr cookie_io_functions_t kIo{nullptr, stdout_write, nullptr, nullptr};
  std::FILE* f = ::fopencookie(nullptr, "w", kIo);
  if (!f) return;  // keep the plain stdout (its failures are still reported, maybe without a reason)
  // the buffering stdio would choose for descriptor 1: by line on a terminal, else in blocks
  std::setvbuf(f, nullptr, ::isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  std::fflush(stdout);
  stdout = f;  // glibc: stdout is an ordinary variable that a program may set
}

void usage(std::FILE* out) {
  std::fprintf(out, "usage: numref <verb> [options]\n\nverbs:\n");
  for (const auto& [name, v] : numref::cli::registry())
    std::fprintf(out, "  %-10s %s\n", name.c_str(), v.summary.c_str());
  std::fprintf(out,
               "\nnumref <verb> --help shows the options of a verb; numref --version the version;\n"
               "docs/ has the full manual.\n");
}
}  // namespace

int main(int argc, char** argv) {
  using numref::cli::one_line;
  std::ios::sync_with_stdio(false);
  record_stdout_errors();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string verb = argv[1];
  const bool version = verb == "--version" || verb == "version";
  if (verb == "--help" || verb == "-h" || verb == "help" || version) {
    if (version)
      std::printf("numref %s (spec %s)\n", numref::kVersion, numref::kSpecVersion);
    else
      usage(stdout);
    try {
      numref::conform::check_stdout();
    } catch (const numref::conform::OutputError& e) {
      std::fprintf(stderr, "numref: %s\n", one_line(e.what()).c_str());
      return 2;
    }
    return 0;
  }
  auto& reg = numref::cli::registry();
  auto it = reg.find(verb);
  if (it == reg.end()) {
    std::fprintf(stderr, "numref: unknown verb '%s' (numref --help lists the verbs)\n", one_line(verb).c_str());
    return 2;
  }
  // Every message is one line (§35, house rule): user text inside it is escaped by one_line().
  auto error = [&](const char* prefix, const char* what) {
    std::fprintf(stderr, "numref %s: %s%s\n", verb.c_str(), prefix, one_line(what).c_str());
    return 2;
  };
  try {
    numref::cli::Args args(verb, std::vector<std::string>(argv + 2, argv + argc));
    const int rc = it->second.fn(args);
    // §35.2 A verb that wrote to a full disk, /dev/full or a closed pipe did not succeed:
    // checked here once, after every verb.
    std::cout.flush();
    if (!std::cout) throw numref::conform::OutputError("standard output: write failed");
    numref::conform::check_stdout();
    return rc;
  } catch (const numref::cli::UsageError& e) {
    return error("", e.what());
  } catch (const numref::conform::OutputError& e) {
    return error("", e.what());
  } catch (const std::exception& e) {
    return error("error: ", e.what());
  }
}
