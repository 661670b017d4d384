// numref conformance — small shared helpers: hex text, hashing, the case RNG, rendering.
//                                                             spec §31.3, §34.3
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numref/format.hpp"
#include "numref/splitmix64.hpp"

namespace numref::conform {

// §1.2 Hex digits of a code of f: 2 for <= 8 bits, 4 for 16, 8 for 32.
int code_digits(const Format& f);
// Lowercase hex with exactly `digits` digits (value must fit).
std::string hex(std::uint64_t v, int digits);
void append_hex(std::string& s, std::uint64_t v, int digits);
// Parses lowercase or uppercase hex without prefix, at most 16 digits. nullopt when
// empty, too long or not hex.
std::optional<std::uint64_t> parse_hex(std::string_view s);

// Splits on runs of spaces / tabs.
std::vector<std::string_view> split_ws(std::string_view s);
// "RxC" with 1 to 7 decimal digits each: the shape of a tensor; nullopt otherwise.
std::optional<std::pair<std::size_t, std::size_t>> parse_rxc(std::string_view s);
std::string_view trim(std::string_view s);

// §34.3 The case RNG: 64-bit FNV-1a of a text, and the SplitMix64 finaliser and step
// (numref/splitmix64.hpp) as a counter-based generator: word(seed, key, j, lane) depends
// only on its arguments, so any range of cases can be produced independently (shards,
// workers, resumption) and the stream is identical on every platform.
std::uint64_t fnv1a64(std::string_view s);
inline std::uint64_t mix64(std::uint64_t x) { return splitmix64_mix(x); }
struct CaseRng {
  std::uint64_t state;
  CaseRng(std::uint64_t seed, std::uint64_t key, std::uint64_t index)
      : state(splitmix64_mix(seed ^ splitmix64_mix(key ^ splitmix64_mix(index + kSplitMix64Gamma)))) {}
  std::uint64_t next() { return splitmix64_next(state); }
  // Uniform in [0, n) for n >= 1 (multiply-shift; the tiny bias is irrelevant here).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

// §34.4 A code rendered for humans: "448", "-0", "0x1.cp+8", "NaN", "-NaN(7f)", "+Inf".
// Finite values print their exact decimal expansion when it has at most 24 characters,
// else the C99 hex-float.
std::string render_value(std::uint32_t code, const Format& f);

// "-o-x" (§9.1).
std::string flags_text(std::uint32_t flags);

// Human-readable durations and rates for progress lines: "1:23", "12.3M".
std::string fmt_duration(double seconds);
std::string fmt_count(double n);

// JSON / XML string escaping for reports.
std::string json_escape(std::string_view s);
std::string json_quote(std::string_view s);  // "\"" + json_escape(s) + "\""
std::string xml_escape(std::string_view s);

}  // namespace numref::conform
