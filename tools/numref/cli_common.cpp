// numref CLI — shared helpers (see cli_common.hpp).          spec §1.2, §2.3, §10
#include "cli_common.hpp"

#include <algorithm>
#include <cstdio>

#include "numref/convert.hpp"
#include "numref/npy.hpp"
#include "numref/tensor.hpp"

namespace numref::cli {

std::string known_formats() {
  std::string s;
  for (const auto& f : kFormats) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

const Format& format_arg(std::string_view name, std::string_view what) {
  const auto id = find_format(name);
  if (!id)
    throw UsageError(std::string(what) + ": unknown format '" + std::string(name) + "' (known: " +
                     known_formats() + ")");
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

namespace {

// "a|b|c": every name of an enum, read from numref's own to_string (which answers "?"
// past the last enumerator), so the CLI never keeps a second copy of the names.
template <class E>
std::string enum_names() {
  std::string s;
  for (int i = 0; i < 64; ++i) {
    const std::string_view n = to_string(static_cast<E>(i));
    if (n == "?") break;
    if (!s.empty()) s += '|';
    s += n;
  }
  return s;
}

template <class E>
bool enum_opt(Args& a, std::string_view option, std::optional<E> (*parse)(std::string_view), E& field) {
  const auto v = a.opt(option);
  if (!v) return false;
  const auto e = parse(*v);
  if (!e)
    throw UsageError("--" + std::string(option) + ": unknown value '" + *v + "' (expected " + enum_names<E>() +
                     ")");
  field = *e;
  return true;
}

bool bool_opt(Args& a, std::string_view option, bool& field) {
  const auto v = a.opt(option);
  if (!v) return false;
  if (*v != "0" && *v != "1") throw UsageError("--" + std::string(option) + ": expected 0 or 1, got '" + *v + "'");
  field = *v == "1";
  return true;
}

std::string profile_names() {
  std::string s;
  for (int i = 0; i < kProfileCount; ++i) {
    if (!s.empty()) s += ", ";
    s += all_profiles()[i].name;
  }
  return s;
}

}  // namespace

Policy policy_from_args(Args& a, const Format& to) {
  // §10.1 base policy from the profile, narrow or wide by the target's width.
  const std::string pname = a.opt_or("profile", "ocp");
  const auto pid = find_profile(pname);
  if (!pid) throw UsageError("--profile: unknown profile '" + pname + "' (known: " + profile_names() + ")");
  Policy p = profile(*pid).for_target(to);

  // §10.2 textual settings on top.
  if (const auto s = a.opt("policy")) {
    if (const auto err = apply_policy_settings(p, *s)) throw UsageError("--policy: " + *err);
  }

  // Single-knob options, most specific last.
  const bool round_given = enum_opt(a, "round", parse_round, p.round);
  const bool variant_given = enum_opt(a, "sr-variant", parse_sr_variant, p.sr_variant);
  enum_opt(a, "overflow", parse_overflow, p.overflow);
  enum_opt(a, "inf-sat", parse_inf_sat, p.inf_sat);
  enum_opt(a, "nan", parse_nan_out, p.nan);
  enum_opt(a, "nan-to-finite", parse_nan_to_finite, p.nan_to_finite);
  const bool e8_given = enum_opt(a, "e8m0-round", parse_e8m0_round, p.e8m0_round);
  if (round_given && !e8_given) p.e8m0_round = E8m0Round::follow;  // §7.1 "follow"
  enum_opt(a, "zero-to-nozero", parse_zero_to_nozero, p.zero_to_nozero);
  enum_opt(a, "negative", parse_negative, p.negative);
  enum_opt(a, "tininess", parse_tininess, p.tininess);
  enum_opt(a, "int-range", parse_int_range, p.int_range);
  bool_opt(a, "daz", p.daz);
  bool_opt(a, "ftz", p.ftz);
  bool bits_given = false;
  if (const auto k = a.opt("sr-bits")) {
    p.sr_bits = static_cast<int>(parse_int(*k, 1, 32, "--sr-bits"));  // §4.3
    bits_given = true;
  }

  if (p.round == Round::sr && p.sr_bits == 0)
    throw UsageError("stochastic rounding (round=sr) needs --sr-bits K with K in 1..32 (§4.3)");
  if (p.round != Round::sr && (bits_given || variant_given))
    throw UsageError(std::string(bits_given ? "--sr-bits" : "--sr-variant") +
                     " applies only to stochastic rounding (--round sr)");
  if (const std::string err = validate(p, to); !err.empty()) throw UsageError("policy: " + err);
  return p;
}

std::string_view policy_options_help() {
  return "  --profile P          base policy: ocp (default), ieee, cuda_satfinite, cuda_nosat, ml_dtypes (§10)\n"
         "  --policy \"k=v ...\"   settings in the describe() form of §10.2, applied on the profile\n"
         "  --round M            rne|rtz|rup|rdn|rna|sr (§4.2, §5); also sets e8m0_round=follow\n"
         "  --sr-bits K          random bits for round=sr, 1..32 (§4.3)\n"
         "  --sr-variant V       fraction (default, §5.1) | add (§5.2)\n"
         "  --overflow O         saturate|nonsat (§6.1)\n"
         "  --inf-sat V          max|keep (§6.2)\n"
         "  --nan N              payload|sign|canonical|ones (§6.3)\n"
         "  --nan-to-finite V    zero|negzero|max (§6.4)\n"
         "  --e8m0-round R       follow|floor|ceil|even|tiesup (§7.1)\n"
         "  --zero-to-nozero V   nan|min (§7.2)\n"
         "  --negative V         nan|abs (§7.3)\n"
         "  --daz 0|1, --ftz 0|1 input / output subnormals to zero (§8)\n"
         "  --tininess V         after|before (§9.2)\n"
         "  --int-range V        full|symmetric (§6.5)\n";
}

NpyTensor read_npy_tensor(const std::string& path, const Format* named) {
  NpyTensor in;
  in.bytes = npy::read_file(path);
  npy::Array a;
  try {
    a = npy::parse(in.bytes);
  } catch (const npy::NpyError& e) {
    throw UsageError(path + ": " + e.what());
  }
  switch (a.dtype) {
    case npy::Dtype::f4: in.format = &format(FormatId::f32); break;
    case npy::Dtype::f2: in.format = &format(FormatId::f16); break;
    case npy::Dtype::u2:
    case npy::Dtype::v2:
    case npy::Dtype::u1:
      if (!named)
        throw UsageError(path + ": dtype '" + std::string(npy::descr_of(a.dtype)) +
                         "' holds bit patterns; name their format with --input-format (e.g. bf16)");
      in.format = named;
      break;
    default:
      throw UsageError(path + ": dtype '" + std::string(npy::descr_of(a.dtype)) +
                       "' is not a supported tensor (use <f4, <f2, or 16-bit patterns with --input-format)");
  }
  if (named && named != in.format)
    throw UsageError(path + ": --input-format " + std::string(named->name) + " does not match the file's dtype '" +
                     std::string(npy::descr_of(a.dtype)) + "'");
  if (storage_bytes(*in.format) != npy::itemsize(a.dtype))
    throw UsageError(path + ": " + std::string(in.format->name) + " codes take " + std::to_string(storage_bytes(*in.format)) +
                     " bytes but the file's items have " + std::to_string(npy::itemsize(a.dtype)));
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

}  // namespace numref::cli
