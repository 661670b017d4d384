// numref explain — the fields, class and exact value of one code.   spec §2, §3.1, §3.4
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/value.hpp"

namespace numref::cli::cmd_explain {
namespace {

void row(const char* key, const std::string& value) { std::printf("%-20s %s\n", key, value.c_str()); }

std::string layout(const Format& f) {
  if (f.is_integer()) return std::to_string(f.bits) + " bits, two's complement integer";
  std::string s = std::to_string(f.bits) + " bits = ";
  s += f.is_signed ? "1 sign + " : "no sign + ";
  s += std::to_string(f.exp_bits) + " exponent + " + std::to_string(f.man_bits) + " fraction, bias " +
       std::to_string(f.bias);
  return s;
}

// §3.1 / §3.4 One code, fully explained.
void explain(const Format& f, std::uint32_t code) {
  const Decoded d = decode(code, f);
  row("format", std::string(f.name) + ": " + layout(f));
  row("code", hex_code(code, f));
  if (f.is_signed)
    row("sign", d.sign ? "1 (-)" : "0 (+)");
  else
    row("sign", "(none: unsigned format)");
  if (f.is_integer()) {
    row("low bits", binary_field(d.man_field, f.man_bits) + " (low " + std::to_string(f.man_bits) +
                        " bits of the two's complement code)");
  } else {
    row("exponent field", binary_field(d.exp_field, f.exp_bits) + " (" + std::to_string(d.exp_field) + ")");
    row("fraction field", f.man_bits == 0 ? std::string("(none: 0 bits)") : binary_field(d.man_field, f.man_bits));
  }
  std::string cls(to_string(d.cls));
  if (d.cls == Class::nan && f.specials == Specials::ieee)
    cls += ((d.sig >> (f.man_bits - 1)) & 1u) ? " (quiet; payload = fraction field)"
                                              : " (signaling; payload = fraction field)";
  row("class", cls);
  row("value", exact_decimal(d));
  row("hex-float", exact_hexfloat(d));
  const bool finite_nonzero = d.cls == Class::normal || d.cls == Class::subnormal;
  if (finite_nonzero && !f.is_integer()) {
    // §3.1: normal: E = field - bias; subnormal: the exponent of the lowest binade, emin.
    const int e = d.cls == Class::normal ? static_cast<int>(d.exp_field) - f.bias : f.emin();
    row("unbiased exponent", std::to_string(e) + (d.cls == Class::normal ? " (field " + std::to_string(d.exp_field) +
                                                                               " - bias " + std::to_string(f.bias) + ")"
                                                                         : " (subnormal: emin = 1 - bias)"));
  }
  if (finite_nonzero || d.cls == Class::zero) {
    row("integer significand",
        std::to_string(d.sig) + " (|value| = " + std::to_string(d.sig) + " * 2^" + std::to_string(d.exp) + ")");
  }
}

constexpr const char* kUsage =
    "usage: numref explain FORMAT HEX [HEX ...]\n"
    "\n"
    "Prints the sign, exponent and fraction fields, the class, the exact value in decimal and\n"
    "as a C99 hex-float, and for finite values the unbiased exponent and the integer\n"
    "significand of each code (hex with or without 0x; it must fit in the format's width).\n"
    "Formats: %s.\n";

int run_explain(Args& a) {
  if (a.flag("help")) {
    std::printf(kUsage, format_names(", ").c_str());
    return 0;
  }
  const auto pos = a.positional();
  a.finish();
  if (pos.size() < 2) throw UsageError("expected FORMAT HEX (e.g. numref explain f8e4m3fn 7e)");
  const Format& f = format_arg(pos[0], "FORMAT");
  std::vector<std::uint32_t> codes;  // parse all first: an error prints nothing else
  for (std::size_t i = 1; i < pos.size(); ++i)
    codes.push_back(static_cast<std::uint32_t>(parse_hex(pos[i], f.bits, "code for " + std::string(f.name))));
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (i) std::printf("\n");
    explain(f, codes[i]);
  }
  return 0;
}

}  // namespace

NUMREF_VERB("explain", "fields, class and exact value of codes of a format", run_explain);

}  // namespace numref::cli::cmd_explain
