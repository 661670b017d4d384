// numref conformance — shared helpers (see util.hpp).            spec §31.3, §34.3
#include "numref/conform/util.hpp"

#include <cstdio>
#include <string>

#include "numref/policy.hpp"
#include "numref/value.hpp"

namespace numref::conform {

int code_digits(const Format& f) { return f.bits <= 8 ? 2 : f.bits <= 16 ? 4 : 8; }

void append_hex(std::string& s, std::uint64_t v, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const std::size_t at = s.size();
  s.append(static_cast<std::size_t>(digits), '0');
  for (std::size_t i = s.size(); i-- > at; v >>= 4) s[i] = kDigits[v & 15u];
}

std::string hex(std::uint64_t v, int digits) {
  std::string s;
  append_hex(s, v, digits);
  return s;
}

std::optional<std::uint64_t> parse_hex(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = static_cast<unsigned>(c - 'A' + 10);
    else
      return std::nullopt;
    v = (v << 4) | d;
  }
  return v;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<std::pair<std::size_t, std::size_t>> parse_rxc(std::string_view s) {
  const auto x = s.find('x');
  auto num = [](std::string_view d) -> std::optional<std::size_t> {
    if (d.empty() || d.size() > 7 || d.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    return static_cast<std::size_t>(std::stoul(std::string(d)));
  };
  if (x == std::string_view::npos) return std::nullopt;
  const auto r = num(s.substr(0, x)), c = num(s.substr(x + 1));
  if (!r || !c) return std::nullopt;
  return std::make_pair(*r, *c);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// FNV-1a, 64-bit: offset basis 14695981039346656037, prime 1099511628211.
std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string render_value(std::uint32_t code, const Format& f) {
  const Decoded d = decode(code, f);
  switch (d.cls) {
    case Class::nan: {
      std::string s = d.sign ? "-NaN" : "NaN";
      if (f.specials == Specials::ieee) {
        const bool quiet = ((d.sig >> (f.man_bits - 1)) & 1u) != 0;
        s += quiet ? "(q" : "(s";
        s += ", payload " + hex(d.sig, (f.man_bits + 3) / 4) + ")";
      }
      return s;
    }
    case Class::inf: return d.sign ? "-Inf" : "+Inf";
    default: break;
  }
  std::string dec = exact_decimal(d);
  if (dec.size() <= 24) return dec;
  return exact_hexfloat(d);
}

std::string flags_text(std::uint32_t flags) { return flags_to_string(static_cast<std::uint8_t>(flags)); }

std::string fmt_duration(double s) {
  if (!(s >= 0) || s > 1e7) return "--:--";
  const long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

std::string fmt_count(double n) {
  char buf[32];
  if (n >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2fG", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  else if (n >= 1e4)
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

namespace {
// One escaping loop for both notations: `put` appends the escape of c and returns true, or
// returns false to keep c as it is.
template <class Put>
std::string escape(std::string_view s, Put put) {
  std::string o;
  o.reserve(s.size() + 8);
  for (unsigned char c : s)
    if (!put(o, c)) o += static_cast<char>(c);
  return o;
}
}  // namespace

std::string json_escape(std::string_view s) {
  return escape(s, [](std::string& o, unsigned char c) {
    switch (c) {
      case '"': o += "\\\""; return true;
      case '\\': o += "\\\\"; return true;
      case '\n': o += "\\n"; return true;
      case '\r': o += "\\r"; return true;
      case '\t': o += "\\t"; return true;
      default:
        if (c >= 0x20) return false;
        o += "\\u00";
        append_hex(o, c, 2);
        return true;
    }
  });
}

std::string json_quote(std::string_view s) {
  std::string o(1, '"');
  o += json_escape(s);
  o += '"';
  return o;
}

std::string xml_escape(std::string_view s) {
  return escape(s, [](std::string& o, unsigned char c) {
    switch (c) {
      case '&': o += "&amp;"; return true;
      case '<': o += "&lt;"; return true;
      case '>': o += "&gt;"; return true;
      case '"': o += "&quot;"; return true;
      case '\'': o += "&apos;"; return true;
      default:
        if (c >= 0x20 || c == '\n' || c == '\t') return false;
        o += '?';  // not representable in XML 1.0
        return true;
    }
  });
}

}  // namespace numref::conform
