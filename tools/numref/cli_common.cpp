// numref CLI — shared helpers (see cli_common.hpp).          spec §1.2, §2.3, §10
#include "cli_common.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <span>
#include <type_traits>

#include "numref/bignum.hpp"
#include "numref/convert.hpp"
#include "numref/npy.hpp"
#include "numref/round.hpp"
#include "numref/tensor.hpp"
#include "parallel.hpp"  // conformance/backends/cpu_fast: the threads of --threads

namespace numref::cli {

const Format& format_arg(std::string_view name, std::string_view what) {
  const auto id = find_format(name);
  if (!id)
    throw UsageError(std::string(what) + ": unknown format '" + std::string(name) + "' (known: " + format_names(", ") +
                     ")");
  return format(*id);
}

int hex_digits(const Format& f) { return f.bits <= 8 ? 2 : f.bits <= 16 ? 4 : 8; }

std::string hex_code(std::uint32_t code, const Format& f) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(static_cast<std::size_t>(hex_digits(f)), '0');
  for (std::size_t i = s.size(); i-- > 0; code >>= 4) s[i] = kDigits[code & 15u];
  return s;
}

std::string binary_field(std::uint32_t v, int width) {
  std::string s;
  for (int i = width - 1; i >= 0; --i) s.push_back(((v >> i) & 1u) ? '1' : '0');
  return s;
}

std::string compact_value(const Decoded& d, std::size_t max_chars) {
  std::string dec = exact_decimal(d);
  if (dec.size() <= max_chars) return dec;
  return exact_hexfloat(d);
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 bool markdown) {
  std::string out;
  if (markdown) {
    auto line = [&](const std::vector<std::string>& cells) {
      out += '|';
      for (const auto& c : cells) out += ' ' + c + " |";
      out += '\n';
    };
    line(header);
    out += '|';
    for (std::size_t i = 0; i < header.size(); ++i) out += "---|";
    out += '\n';
    for (const auto& r : rows) line(r);
  } else {
    // Width in characters: count UTF-8 lead bytes only (values are ASCII, but be safe).
    auto width = [](const std::string& s) {
      std::size_t w = 0;
      for (unsigned char c : s) w += (c & 0xC0) != 0x80;
      return w;
    };
    std::vector<std::size_t> w(header.size(), 0);
    for (std::size_t i = 0; i < header.size(); ++i) w[i] = width(header[i]);
    for (const auto& r : rows)
      for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
    auto line = [&](const std::vector<std::string>& cells) {
      std::string l;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i) l += "  ";
        l += cells[i];
        if (i + 1 < cells.size()) l.append(w[i] - width(cells[i]), ' ');
      }
      out += l + '\n';
    };
    line(header);
    std::vector<std::string> dashes;
    for (std::size_t x : w) dashes.emplace_back(x, '-');
    line(dashes);
    for (const auto& r : rows) line(r);
  }
  std::fputs(out.c_str(), stdout);
}

bool looks_like_value(std::string_view tok) {
  if (tok.empty()) return false;
  if (tok[0] == '+' || tok[0] == '-') return true;
  std::string low;
  for (char c : tok) low.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  return low.find_first_of(".p+-") != std::string::npos || low == "inf" || low == "infinity" || low == "nan";
}

namespace {
// §11 A decimal or hex-float numeral as written: its digits as the integer M (leading zeros
// dropped, the significant digits counted), the number of digits after the point, the exponent
// (e for a decimal, p for a hex-float).
struct Numeral {
  bool hex = false;
  BigUInt m;
  long long sig_digits = 0, frac = 0, e = 0;
};

// digits [. digits] [e|p [sign] digits] of `rest` (lower case, sign removed); false: malformed.
bool parse_numeral(const std::string& rest, Numeral& n) {
  n.hex = rest.size() > 2 && rest[0] == '0' && rest[1] == 'x';
  const std::uint64_t base = n.hex ? 16 : 10;
  std::size_t j = n.hex ? 2 : 0;
  long long any = 0;
  bool dot = false;
  for (; j < rest.size(); ++j) {
    const char c = rest[j];
    int d = -1;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (n.hex && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    if (d < 0) {
      if (c == '.' && !dot) {
        dot = true;
        continue;
      }
      break;
    }
    ++any;
    if (dot) ++n.frac;
    if (d == 0 && n.m.is_zero()) continue;
    n.m.mul_small(base);
    n.m += BigUInt(static_cast<std::uint64_t>(d));
    ++n.sig_digits;
  }
  if (any == 0) return false;
  if (j == rest.size()) return !n.hex;  // C99: a hex-float needs its binary exponent ('p')
  if (rest[j] != (n.hex ? 'p' : 'e')) return false;
  ++j;
  bool eneg = false;
  if (j < rest.size() && (rest[j] == '+' || rest[j] == '-')) eneg = rest[j++] == '-';
  if (j == rest.size()) return false;
  for (; j < rest.size(); ++j) {
    if (rest[j] < '0' || rest[j] > '9') return false;
    n.e = std::min<long long>(n.e * 10 + (rest[j] - '0'), 1000000000LL);  // beyond any format either way
  }
  if (eneg) n.e = -n.e;
  return true;
}

// The exact magnitude num * 2^exp2 / den of a numeral. Magnitudes far outside every format (above
// 10^40 > 2^128, below 10^-50 < 2^-150) are replaced by 2^1000 and 2^-1000, which round (to
// nearest) exactly as they do: overflow, or zero with underflow.
struct Magnitude {
  BigUInt num, den;
  int exp2 = 0;
};
Magnitude numeral_magnitude(const Numeral& n) {
  Magnitude v{n.m, BigUInt(1), 0};
  if (n.m.is_zero()) return v;
  if (n.hex) {
    const long long top = static_cast<long long>(n.m.bit_length()) + n.e - 4 * n.frac;  // value < 2^top
    if (top - 1 >= 200)
      v.num = BigUInt(1), v.exp2 = 1000;
    else if (top <= -200)
      v.num = BigUInt(1), v.exp2 = -1000;
    else
      v.exp2 = static_cast<int>(n.e - 4 * n.frac);
    return v;
  }
  const long long e10 = n.e - n.frac, top = n.sig_digits + e10;  // value < 10^top
  if (top - 1 >= 40) {
    v.num = BigUInt(1), v.exp2 = 1000;
  } else if (top <= -50) {
    v.num = BigUInt(1), v.exp2 = -1000;
  } else {
    BigUInt p10(1);
    for (long long k = 0; k < (e10 < 0 ? -e10 : e10); ++k) p10.mul_small(10);
    if (e10 >= 0)
      v.num = n.m * p10;
    else
      v.den = p10;
  }
  return v;
}
}  // namespace

std::string value_code(std::string_view tok, const Format& f, std::uint32_t& code, bool* inexact) {
  // The value as quoted in a message: escaped (a NUL must not cut the message, docs/cli.md).
  const std::string shown = one_line(tok.substr(0, 40)) + (tok.size() > 40 ? "..." : "");
  if (tok.size() > 1000) return "value '" + shown + "' is longer than 1000 characters";
  std::size_t i = 0;
  bool neg = false;
  if (i < tok.size() && (tok[i] == '+' || tok[i] == '-')) neg = tok[i++] == '-';
  std::string rest;
  for (char c : tok.substr(i)) rest.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  if (neg && !f.is_signed) return "value '" + shown + "': " + std::string(f.name) + " has no negative values";
  if (rest == "inf" || rest == "infinity") {
    if (!f.has_inf()) return "value '" + shown + "': " + std::string(f.name) + " has no infinity";
    code = f.first_special_magnitude() | (neg ? f.sign_bit() : 0u);
    return "";
  }
  if (rest == "nan") {
    if (!f.has_nan()) return "value '" + shown + "': " + std::string(f.name) + " has no NaN";
    code = f.canonical_nan | (neg ? f.sign_bit() : 0u);  // §2.2 the canonical NaN, with the sign asked for
    return "";
  }
  Numeral n;
  if (!parse_numeral(rest, n))
    return "malformed value '" + shown +
           "' (a decimal such as 3.14 or -2.5e-3, a hex-float such as -0x1.8p-3, inf or nan)";
  const Magnitude v = numeral_magnitude(n);
  Policy p = profile(ProfileId::ocp).for_target(f);
  p.round = Round::rne;
  p.e8m0_round = E8m0Round::even;
  const Result r = round_finite(ratio_exact(neg, v.num, v.exp2, v.den), f, p);
  if (r.flags & kOverflow)
    return "value '" + shown + "' is beyond the largest finite value of " + std::string(f.name) + " (§6.1)";
  if (r.flags & kInvalid)
    return "value '" + shown + "' has no code in " + std::string(f.name) + (f.has_zero ? "" : " (it has no zero)");
  code = r.bits;
  if (inexact) *inexact = (r.flags & kInexact) != 0;
  return "";
}

namespace {

// §10.3 The option of a knob: its key with '-' for '_' ("nan_to_finite" -> --nan-to-finite).
std::string option_of(std::string_view key) {
  std::string o(key);
  std::replace(o.begin(), o.end(), '_', '-');
  return o;
}

constexpr std::string_view kDefaultProfile = "ocp";

}  // namespace

Policy policy_from_args(Args& a, const Format& to, const Format* from) {
  // §10.1 base policy from the profile, narrow or wide by the target's width.
  const std::string pname = a.opt_or("profile", kDefaultProfile);
  const auto pid = find_profile(pname);
  if (!pid) throw UsageError("--profile: unknown profile '" + pname + "' (known: " + profile_names() + ")");
  Policy p = from ? profile(*pid).for_cast(*from, to) : profile(*pid).for_target(to);

  // §10.3 textual settings on top.
  if (const auto s = a.opt("policy")) {
    if (const auto err = apply_policy_settings(p, *s)) throw UsageError("--policy: " + *err);
  }

  // Single-knob options (one per row of numref's knob table), most specific last.
  bool round_given = false, e8_given = false, bits_given = false, variant_given = false;
  for_each_policy_knob([&](const auto& k) {
    using T = std::remove_cvref_t<decltype(p.*k.member)>;
    const std::string option = "--" + option_of(k.key);
    const auto v = a.opt(option.substr(2));
    if (!v) return;
    if constexpr (std::is_same_v<T, int>) {                          // sr_bits
      p.*k.member = static_cast<int>(parse_int(*v, 1, 32, option));  // §4.3
      bits_given = true;
    } else {
      const auto e = k.parse_word(*v);
      if (!e) {
        if constexpr (std::is_same_v<T, bool>)
          throw UsageError(option + ": expected 0 or 1, got '" + *v + "'");
        else
          throw UsageError(option + ": unknown value '" + *v + "' (expected " + k.words_text() + ")");
      }
      p.*k.member = *e;
      round_given |= std::is_same_v<T, Round>;
      e8_given |= std::is_same_v<T, E8m0Round>;
      variant_given |= std::is_same_v<T, SrVariant>;
    }
  });
  if (round_given && !e8_given) p.e8m0_round = E8m0Round::follow;  // §7.1 "follow"

  if (p.round == Round::sr && p.sr_bits == 0)
    throw UsageError("stochastic rounding (round=sr) needs --sr-bits K with K in 1..32 (§4.3)");
  if (p.round != Round::sr && (bits_given || variant_given))
    throw UsageError(std::string(bits_given ? "--sr-bits" : "--sr-variant") +
                     " applies only to stochastic rounding (--round sr)");
  if (const std::string err = validate(p, to); !err.empty()) throw UsageError("policy: " + err);
  return p;
}

std::string_view policy_options_help() {
  static const std::string help = [] {
    auto line = [](std::string opt, const std::string& text) {
      opt.resize(std::max<std::size_t>(opt.size() + 1, 21), ' ');
      return "  " + opt + text + "\n";
    };
    std::string h =
        line("--profile P", "base policy: " + profile_names() + " (default " + std::string(kDefaultProfile) + "; §10)");
    h += line("--policy \"k=v ...\"", "settings in the describe() form of §10.3, applied on the profile");
    for_each_policy_knob([&](const auto& k) {
      using T = std::remove_cvref_t<decltype(Policy{}.*k.member)>;
      const std::string opt = "--" + option_of(k.key);
      const std::string clause = " (" + std::string(k.clause) + ")";
      if constexpr (std::is_same_v<T, int>)
        h += line(opt + " K", "random bits for round=sr, 1..32" + clause);
      else if constexpr (std::is_same_v<T, Round>)
        h += line(opt + " V", k.words_text() + clause + "; also sets e8m0_round=follow");
      else
        h += line(opt + " V", k.words_text() + clause);
    });
    return h;
  }();
  return help;
}

npy::Array read_npy(const std::string& path, std::vector<std::uint8_t>& bytes) {
  try {
    bytes = npy::read_file(path);  // errors name the path
    return npy::parse(bytes);
  } catch (const npy::NpyError& e) {
    throw UsageError(e.what());
  }
}

NpyTensor read_npy_tensor(const std::string& path, const Format* named, const Format* patterns) {
  NpyTensor in;
  const npy::Array a = read_npy(path, in.bytes);
  switch (a.dtype) {
    case npy::Dtype::f4: in.format = &format(FormatId::f32); break;
    case npy::Dtype::f2: in.format = &format(FormatId::f16); break;
    case npy::Dtype::u2:
    case npy::Dtype::v2:
    case npy::Dtype::u1:
    case npy::Dtype::v1:  // how NumPy saves ml_dtypes' 8-, 6- and 4-bit floats
    case npy::Dtype::f1:  // ml_dtypes 0.6 float8_e5m2
      if (!named) named = patterns;
      if (!named)
        throw UsageError(path + ": dtype '" + std::string(npy::descr_of(a.dtype)) +
                         "' holds bit patterns; name their format with --input-format (e.g. " +
                         (npy::itemsize(a.dtype) == 1 ? "f8e4m3fn" : "bf16") + ")");
      in.format = named;
      break;
    default:
      throw UsageError(path + ": dtype '" + std::string(npy::descr_of(a.dtype)) +
                       "' is not a supported tensor (use <f4, <f2, or 16-bit patterns with --input-format)");
  }
  if (named && named != in.format)
    throw UsageError(path + ": --input-format " + std::string(named->name) + " does not match the file's dtype '" +
                     std::string(npy::descr_of(a.dtype)) + "'");
  // §19.7 <f1 is ml_dtypes' float8_e5m2, a number type of its own: not bit patterns of another format
  if (a.dtype == npy::Dtype::f1 && in.format->id != FormatId::f8e5m2)
    throw UsageError(path + ": dtype '<f1' (ml_dtypes float8_e5m2) does not hold " + std::string(in.format->name) +
                     " codes (--input-format; expected |u1 or |V1)");
  if (storage_bytes(*in.format) != npy::itemsize(a.dtype))
    throw UsageError(path + ": " + std::string(in.format->name) + " codes take " +
                     std::to_string(storage_bytes(*in.format)) + " bytes but the file's items have " +
                     std::to_string(npy::itemsize(a.dtype)));
  if (const std::string err = check_source_format(*in.format); !err.empty()) throw UsageError(path + ": " + err);
  if (a.shape.empty()) throw UsageError(path + ": a 0-d array is not a tensor (save it with shape (1,))");
  for (std::size_t d : a.shape)
    if (d == 0) throw UsageError(path + ": empty tensor (a dimension of size 0)");
  if (in.format->bits < 8) {  // §2.4 sub-byte codes: bits above the width are an error at the CLI
    const std::uint8_t* d = in.bytes.data() + a.data_offset;
    for (std::size_t i = 0; i < a.count(); ++i)
      if (d[i] & ~in.format->mask())
        throw UsageError(path + ": element " + std::to_string(i) + " = 0x" + hex_code(d[i], format(FormatId::int8)) +
                         " has bits above the " + std::to_string(in.format->bits) + "-bit width of " +
                         std::string(in.format->name) + " (§2.4)");
  }
  in.shape = a.shape;
  in.cols = a.shape.back();
  in.rows = a.count() / in.cols;
  in.offset = a.data_offset;
  return in;
}

void write_npy(conform::OutputFile& out, npy::Dtype d, const std::vector<std::size_t>& shape, const void* data,
               std::size_t n_bytes) {
  const auto* b = static_cast<const std::uint8_t*>(data);
  const auto bytes = npy::encode(d, shape, std::span<const std::uint8_t>(b, n_bytes));
  out.write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

conform::OutputFile& Outputs::add(std::string_view option, const std::string& path) {
  conform::refuse_output_that_is_input(option, path, inputs_);
  return set_.add(path);
}

std::optional<unsigned> threads_from_args(Args& a) {
  const auto v = a.opt("threads");
  if (!v) return std::nullopt;
  bool ok = !v->empty() && v->size() <= 4;
  for (const char c : *v) ok = ok && c >= '0' && c <= '9';
  const long long t = ok ? std::stoll(*v) : 0;
  if (!ok || t < 1 || t > 4096)
    throw UsageError(
        "--threads: expected a number of threads in 1..4096 (1: one thread; without --threads: every "
        "core), got '" +
        *v + "'");
  return static_cast<unsigned>(t);
}

}  // namespace numref::cli
