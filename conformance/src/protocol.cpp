// numref conformance — pipe protocol parsing and known departures.       spec §33, §34.5
#include "numref/conform/protocol.hpp"

#include <algorithm>

#include "numref/conform/util.hpp"

namespace numref::conform {

namespace {
std::vector<std::string> comma_list(std::string_view v) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= v.size()) {
    const std::size_t j = std::min(v.find(',', i), v.size());
    const std::string_view item = trim(v.substr(i, j - i));
    if (!item.empty()) out.emplace_back(item);
    i = j + 1;
  }
  return out;
}

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
}
}  // namespace

// ---- departures (§34.5) ------------------------------------------------------------------

bool Departure::matches(std::string_view op_, std::string_view formats, std::string_view profile_,
                        std::string_view cls_) const {
  if (op_ != op) return false;
  if (formats != from + " " + to) return false;
  if (profile != "*" && profile_ != profile) return false;
  // "nan" covers "nan/sign" and "nan/payload"; an exact class matches itself.
  return cls_ == cls || (cls_.size() > cls.size() && cls_.substr(0, cls.size()) == cls && cls_[cls.size()] == '/');
}

Departure parse_departure(std::string_view text) {
  const auto bar = text.find('|');
  if (bar == std::string_view::npos)
    throw std::invalid_argument("departure '" + std::string(text) + "' has no '| explanation'");
  const auto f = split_ws(text.substr(0, bar));
  if (f.size() != 5)
    throw std::invalid_argument("departure '" + std::string(text) +
                                "' must be '<op> <from> <to> <profile|*> <class> | <explanation>'");
  Departure d{std::string(f[0]), std::string(f[1]), std::string(f[2]),
              std::string(f[3]), std::string(f[4]), std::string(trim(text.substr(bar + 1)))};
  if (d.why.empty()) throw std::invalid_argument("departure '" + std::string(text) + "' has an empty explanation");
  if (!printable(text)) throw std::invalid_argument("departure text has control characters");
  return d;
}

std::vector<Departure> parse_departures(std::string_view text) {
  std::vector<Departure> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t j = std::min(text.find('\n', i), text.size());
    const std::string_view line = trim(text.substr(i, j - i));
    if (!line.empty()) out.push_back(parse_departure(line));
    i = j + 1;
  }
  return out;
}

// ---- greeting (§33.2) ---------------------------------------------------------------------

namespace {
// "1.N" with the runner's major version and N a decimal number of at most 4 digits: N.
std::uint32_t parse_abi_version(std::string_view v) {
  const std::string major = std::to_string(NUMREF_BACKEND_ABI_VERSION) + ".";
  const std::string_view n = v.substr(std::min(v.size(), major.size()));
  const bool digits =
      !n.empty() && n.size() <= 4 && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (v.substr(0, major.size()) != major || !digits)
    throw ProtocolError("greeting abi='" + std::string(v) + "', expected " + major +
                        "N (the backend ABI version it was "
                        "written for, e.g. abi=" +
                        major + std::to_string(NUMREF_BACKEND_ABI_MINOR) + ")");
  return static_cast<std::uint32_t>(std::stoul(std::string(n)));
}
}  // namespace

PipeHello parse_pipe_hello(std::string_view line) {
  const auto f = split_ws(line);
  if (f.size() < 2 || f[0] != kPipeMagic)
    throw ProtocolError("expected the greeting 'numref-pipe 1 name=... ops=... profiles=... flags=yes|no', got '" +
                        std::string(line.substr(0, 200)) + "'");
  if (f[1] != std::to_string(kPipeProtocolVersion))
    throw ProtocolError("the backend speaks pipe protocol version '" + std::string(f[1]) + "', this runner speaks " +
                        std::to_string(kPipeProtocolVersion));
  PipeHello h;
  bool have_name = false, have_flags = false;
  for (std::size_t i = 2; i < f.size(); ++i) {
    const auto eq = f[i].find('=');
    if (eq == std::string_view::npos) throw ProtocolError("greeting item '" + std::string(f[i]) + "' is not key=value");
    const std::string_view k = f[i].substr(0, eq), v = f[i].substr(eq + 1);
    if (!printable(v)) throw ProtocolError("greeting value has control characters");
    if (k == "name") {
      h.name = std::string(v);
      have_name = !v.empty();
    } else if (k == "version") {
      h.version = std::string(v);
    } else if (k == "ops") {
      h.ops = comma_list(v);
    } else if (k == "profiles") {
      h.profiles = comma_list(v);
    } else if (k == "flags") {
      if (v != "yes" && v != "no") throw ProtocolError("greeting flags='" + std::string(v) + "', expected yes or no");
      h.flags = v == "yes";
      have_flags = true;
    } else if (k == "counts") {
      if (v != "yes" && v != "no") throw ProtocolError("greeting counts='" + std::string(v) + "', expected yes or no");
      h.counts = v == "yes";
    } else if (k == "abi") {
      h.abi_minor = parse_abi_version(v);
    } else {
      throw ProtocolError("unknown greeting key '" + std::string(k) + "'");
    }
  }
  if (!have_name) throw ProtocolError("the greeting has no name=...");
  if (!have_flags) throw ProtocolError("the greeting has no flags=yes|no");
  if (h.ops.empty()) throw ProtocolError("the greeting has no ops=...");
  return h;
}

bool parse_pipe_preamble(std::string_view line, std::vector<Departure>& departures) {
  line = trim(line);
  if (line == "ready") return true;
  if (line.substr(0, 10) == "departure ") {
    try {
      departures.push_back(parse_departure(line.substr(10)));
    } catch (const std::invalid_argument& e) {
      throw ProtocolError(e.what());
    }
    return false;
  }
  throw ProtocolError("expected 'departure ...' or 'ready' after the greeting, got '" +
                      std::string(line.substr(0, 200)) + "'");
}

bool parse_pipe_supports(std::string_view line) {
  line = trim(line);
  if (line == "yes") return true;
  if (line == "no") return false;
  if (line.substr(0, 6) == "error ") throw BackendError(BackendError::Kind::error, std::string(line.substr(6, 500)));
  throw ProtocolError("expected 'yes' or 'no', got '" + std::string(line.substr(0, 200)) + "'");
}

// ---- batch replies (§33.4) ---------------------------------------------------------------

PipeBatchParser::PipeBatchParser(const Params& p, std::size_t n, bool flags, std::uint32_t* out)
    : p_(p), n_(n), flags_(flags), out_(out) {}

bool PipeBatchParser::feed(std::string_view line) {
  line = trim(line);
  if (line.substr(0, 6) == "error " || line == "error")
    throw BackendError(BackendError::Kind::error,
                       "the backend reported: " + std::string(line.size() > 6 ? line.substr(6, 500) : "(no message)"));
  if (line == "end") {
    if (got_ != n_)
      throw BackendError(BackendError::Kind::count, "the backend returned " + std::to_string(got_) +
                                                        " results for a batch of " + std::to_string(n_));
    return true;
  }
  if (got_ == n_)
    throw BackendError(BackendError::Kind::count, "the backend returned more than " + std::to_string(n_) +
                                                      " results for a batch of " + std::to_string(n_) +
                                                      " (or no 'end' line)");
  const std::string err = pipe_result(p_, line, flags_, out_, n_, got_);
  if (!err.empty())
    throw ProtocolError("result " + std::to_string(got_ + 1) + " of " + std::to_string(n_) + ": " + err);
  ++got_;
  return false;
}

}  // namespace numref::conform
