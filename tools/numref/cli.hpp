// numref CLI — verb registry and shared argument helpers.
//
// A verb is a function `int run(Args&)` registered once with NUMREF_VERB(name, summary, fn)
// in its own cmd_<name>.cpp, whose code lives in namespace numref::cli::cmd_<name> (an
// anonymous namespace inside it): the unity build (NUMREF_UNITY_BUILD) compiles several verbs
// in one translation unit, so their file-local names must not meet. Exit status: 0 success, 1 the operation found a
// failure (e.g. conformance mismatches), 2 usage or input error (message on stderr).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace numref::cli {

// A usage / input error: main() prints "numref <verb>: <message>" and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parsed command line of one verb: options `--key value`, `--key=value`, flags
// `--flag`, and positional arguments. Options are declared by the verb as it reads
// them; finish() rejects anything left unread (an unknown option is an error).
class Args {
 public:
  Args(std::string verb, std::vector<std::string> argv);
  const std::string& verb() const { return verb_; }
  // Value of --name, or nullopt. Throws UsageError if given without a value or more than
  // once (only multi() options are repeatable).
  std::optional<std::string> opt(std::string_view name);
  std::string opt_or(std::string_view name, std::string_view def);
  // All values of a repeatable option, plus positional values following it
  // (for `--input a.npy b.npy ...`).
  std::vector<std::string> multi(std::string_view name);
  bool flag(std::string_view name);  // --name present (no value); given twice is a UsageError
  std::vector<std::string> positional();
  void finish();  // throws UsageError naming the first unknown/unused argument

 private:
  struct Item {
    std::string key;  // empty for positional
    std::optional<std::string> value;
    bool used = false;
  };
  std::string verb_;
  std::vector<Item> items_;
};

// Parses hex with or without 0x; throws UsageError("<what>: ...") when malformed or
// wider than max_bits.
std::uint64_t parse_hex(std::string_view s, int max_bits, std::string_view what);
// Parses a decimal integer in [lo, hi]; throws UsageError naming `what`.
long long parse_int(std::string_view s, long long lo, long long hi, std::string_view what);
// Parses an unsigned decimal integer in 0 .. 2^64 - 1 exactly (integer arithmetic only, every
// value kept: 2^53 + 1 stays 2^53 + 1); throws UsageError naming `what` and that range.
std::uint64_t parse_u64(std::string_view s, std::string_view what);

// "1 problem", "2 problems": n and the noun, plural (noun + "s") unless n is 1.
inline std::string count(unsigned long long n, std::string_view noun) {
  std::string s = std::to_string(n);
  s += ' ';
  s += noun;
  if (n != 1) s += 's';
  return s;
}

// `s` on one line: newline, carriage return and tab as \n \r \t, other control characters
// as \xHH. main() passes every error message through it, so that user text quoted in a
// message (a file name, a format, a hex value) can never split it over several lines.
std::string one_line(std::string_view s);

using VerbFn = std::function<int(Args&)>;
struct Verb {
  std::string name;
  std::string summary;
  VerbFn fn;
};
std::map<std::string, Verb>& registry();
struct Registrar {
  Registrar(std::string name, std::string summary, VerbFn fn);
};

}  // namespace numref::cli

#define NUMREF_CLI_CAT2(a, b) a##b
#define NUMREF_CLI_CAT(a, b) NUMREF_CLI_CAT2(a, b)
#define NUMREF_VERB(name, summary, fn) \
  static ::numref::cli::Registrar NUMREF_CLI_CAT(numref_verb_, __COUNTER__)(name, summary, fn)
