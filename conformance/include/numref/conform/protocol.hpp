// numref conformance — the pipe protocol, runner side (parsing of what a backend
// program writes).                                                         spec §33
#pragma once

#include <cstdint>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numref/conform/backend.hpp"
#include "numref/conform/core.hpp"

namespace numref::conform {

inline constexpr int kPipeProtocolVersion = 1;
inline constexpr std::string_view kPipeMagic = "numref-pipe";

// A malformed line from a pipe backend.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// §33.2 The greeting "numref-pipe 1 name=N [version=V] ops=a,b profiles=p,q flags=yes|no
// [counts=yes|no]".
struct PipeHello {
  std::string name, version;
  std::vector<std::string> ops, profiles;
  bool flags = false;
  bool counts = false;  // optional key counts=yes|no: reports the §19.5 counts of tensor ops
  // optional key abi=1.N (1.8): the C ABI minor version whose knob values the backend knows
  std::optional<std::uint32_t> abi_minor;
};
PipeHello parse_pipe_hello(std::string_view line);  // throws ProtocolError

// §33.2 The lines after the greeting, up to "ready": "departure <entry>" lines.
// Returns true on "ready", false after a departure line; throws ProtocolError.
bool parse_pipe_preamble(std::string_view line, std::vector<Departure>& departures);

// §33.3 The answer to "supports ...": "yes" or "no"; "error <message>" throws BackendError.
bool parse_pipe_supports(std::string_view line);

// §33.4 The reply to a batch of n cases: n result lines then "end"; "error <message>"
// at any point ends the batch with a BackendError. feed() returns true once "end" has
// been accepted; wrong counts and malformed lines throw ProtocolError / BackendError.
class PipeBatchParser {
 public:
  PipeBatchParser(const Params& p, std::size_t n, bool optional, std::uint32_t* out);
  bool feed(std::string_view line);
  std::size_t received() const { return got_; }

 private:
  const Params& p_;
  std::size_t n_, got_ = 0;
  bool flags_;
  std::uint32_t* out_;
};

}  // namespace numref::conform
