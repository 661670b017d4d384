// numref conformance — backends as the runner sees them: C ABI plugins (in process or
// isolated in a child process) and pipe-protocol programs.        spec §32, §33, §34.6
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "numref/conform/core.hpp"

namespace numref::conform {

// §34.5 A known departure a backend declares: mismatches of `op` from -> to under
// `profile` ("*" = any) whose classification starts with `cls` are reported as such.
struct Departure {
  std::string op, from, to, profile, cls, why;
  bool matches(std::string_view op_, std::string_view formats, std::string_view profile_, std::string_view cls_) const;
};
// Parses "<op> <from> <to> <profile|*> <class> | <explanation>"; throws std::invalid_argument.
Departure parse_departure(std::string_view text);
// A newline-separated list (blank lines ignored).
std::vector<Departure> parse_departures(std::string_view text);

struct BackendInfo {
  std::string name, version, description;
  std::string kind;      // "plugin" or "pipe"
  std::string location;  // library path or command
  std::vector<std::string> ops, profiles;
  bool flags = false;   // reports exception flags (§9)
  bool counts = false;  // reports the §19.5 counts of tensor operations
  // §32.2 / §33.2 the C ABI minor version the backend knows: declared (a plugin's abi_minor, a
  // pipe greeting's abi=1.N), else the earliest its layout, capabilities and op families prove.
  // Suites that need a later one are declined for it (§34.3).
  std::uint32_t abi_minor = 0;
  std::vector<Departure> departures;
  // The NUMREF_CAP_* of what the backend reports, and whether it reports every optional result
  // of suite p (its schema's Role::opt columns).
  std::uint32_t caps() const { return (flags ? NUMREF_CAP_FLAGS : 0u) | (counts ? NUMREF_CAP_COUNTS : 0u); }
  bool reports(const Params& p) const {
    const std::uint32_t want = p.schema().optional_caps();
    return want != 0 && (caps() & want) == want;
  }
};

// §32.2 The earliest C ABI minor version a set of op families proves (cast 1.0, the tensor
// families 1.1, mor 1.2, gaussws 1.3; unknown names prove nothing).
std::uint32_t abi_minor_of_ops(const std::vector<std::string>& ops);

// §34.6 A failure of the backend itself (not a mismatch): exit status 3. Kind::unavailable
// (§32.6) is not a failure: numref_backend_open answered "unavailable: <reason>" (the
// message is the reason); the runner reports the backend SKIPPED.
struct BackendError : std::runtime_error {
  // interrupted: a stop was requested (SIGINT / SIGTERM) and the backend process was killed;
  // the batch did not run (not a failure of the backend, §34.6).
  enum class Kind { load, abi, crash, timeout, count, protocol, error, unavailable, interrupted };
  Kind kind;
  BackendError(Kind k, const std::string& m) : std::runtime_error(m), kind(k) {}
};

// §34.6 A case that crashed an isolated backend, found by bisecting the call it crashed in:
// `index` in the batch given to run(), `what` e.g. "crash: SIGSEGV". Its output words are
// unspecified; the runner reports the case as failed with this text.
struct CaseFault {
  std::size_t index = 0;
  std::string what;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const BackendInfo& info() const = 0;
  // Whether the backend implements the suite. Throws BackendError.
  virtual bool supported(const Params& p) = 0;
  // Runs n cases: in and out are column-major (Params::shape()). Throws BackendError.
  virtual void run(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out) = 0;
  // The cases of the last run() that crashed the backend (isolated plugins only; sorted by index).
  virtual const std::vector<CaseFault>& faults() const {
    static const std::vector<CaseFault> none;
    return none;
  }
  // The largest batch this backend accepts for a shape (shared-memory size etc.).
  virtual std::size_t max_batch(Shape s) const {
    (void)s;
    return std::size_t{1} << 20;
  }
};

// How to reach a backend (§34.1 --backend): a built-in name, a path to a .so, or
// "pipe:COMMAND". A .so path may carry arguments after '?': "libx.so?device=1".
struct BackendSpec {
  enum class Kind { plugin, pipe } kind = Kind::plugin;
  std::string target;   // resolved library path, or the command
  std::string args;     // plugin arguments
  std::string display;  // as given
};
struct OpenOptions {
  bool isolate = true;      // plugins run in a child process (crash and hang safe)
  double timeout_s = 60.0;  // §34.6 silence allowed (no progress), isolated plugins and pipes
};

// §34.6 Stopping a run (SIGINT / SIGTERM). request_stop() is async-signal-safe (the runner's
// signal handler calls it): the first request kills the process group of every backend process
// at once (isolated plugins and pipes), and the threads waiting on them throw
// BackendError::Kind::interrupted; a second request ends the process at once with exit status
// 130 (§34.7), for a backend that cannot be killed (an in-process plugin, --no-isolate).
void request_stop() noexcept;
bool stop_requested() noexcept;
void clear_stop() noexcept;  // at the start of a run

// The directory that holds the built-in backend plugins: $NUMREF_BACKEND_DIR, else
// <directory of the running executable>/backends, else the build tree's.
std::string backend_dir();
// The directory of the running executable (/proc/self/exe), "" when unknown: numref finds its
// plugins and golden vectors relative to it, in the build and in the install layout.
std::string exe_dir();
// §32.6 The prefix of an open error that means "cannot run on this machine".
inline constexpr std::string_view kUnavailablePrefix = "unavailable: ";

// Names of the built-in backends found in backend_dir() (reference, cpu-fast, nv-host).
std::vector<std::string> builtin_backends();
// Resolves a --backend argument; throws std::invalid_argument naming what was not found.
BackendSpec resolve_backend(const std::string& arg);
// Opens one instance. Throws BackendError (load, abi, crash, timeout, protocol).
std::unique_ptr<Backend> open_backend(const BackendSpec& spec, const OpenOptions& opt);

// The plugin loaded in this process, for the child side of isolation and for tests.
std::unique_ptr<Backend> open_plugin_in_process(const std::string& path, const std::string& args);
// A backend table made in this process (the Python package's check() makes one over Python
// callables): the checks of a loaded plugin's table, then the same calls. The table must outlive
// the Backend; its close() is called when the Backend is destroyed. `location` names it.
std::unique_ptr<Backend> open_table_in_process(const numref_backend* table, const std::string& location);

}  // namespace numref::conform
