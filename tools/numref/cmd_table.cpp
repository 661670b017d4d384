// numref table — every code point of a format of at most 8 bits.    spec §2.2, §3.1, §3.4
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/value.hpp"

namespace numref::cli::cmd_table {
namespace {

int run_table(Args& a) {
  if (a.flag("help")) {
    std::printf(
        "usage: numref table FORMAT [--markdown]\n\n"
        "Lists every code of a format of at most 8 bits (spec §3.1) with its sign, exponent and\n"
        "fraction fields, class, exact decimal value and C99 hex-float (§3.4).\n"
        "Formats: %s.\n",
        format_names(", ").c_str());
    return 0;
  }
  const bool md = a.flag("markdown");
  const auto pos = a.positional();
  a.finish();
  if (pos.size() != 1) throw UsageError("expected exactly one FORMAT (e.g. numref table f8e4m3fn)");
  const Format& f = format_arg(pos[0], "FORMAT");
  if (f.bits > 8)
    throw UsageError(std::string(f.name) + " has " + std::to_string(f.bits) +
                     " bits; table lists formats of at most 8 bits (use numref explain for single codes)");
  const char* none = md ? "—" : "-";
  std::vector<std::string> header = {"code", "sign"};
  if (f.is_integer()) {
    header.push_back("low bits");
  } else {
    header.push_back("exponent");
    header.push_back("fraction");
  }
  for (const char* h : {"class", "value", "hex-float"}) header.push_back(h);
  std::vector<std::vector<std::string>> rows;
  for (std::uint32_t c = 0; c <= f.mask(); ++c) {
    const Decoded d = decode(c, f);
    std::vector<std::string> r = {hex_code(c, f), f.is_signed ? (d.sign ? "1" : "0") : std::string(none)};
    if (f.is_integer()) {
      r.push_back(binary_field(d.man_field, f.man_bits));
    } else {
      r.push_back(binary_field(d.exp_field, f.exp_bits));
      r.push_back(f.man_bits ? binary_field(d.man_field, f.man_bits) : std::string(none));
    }
    r.push_back(std::string(to_string(d.cls)));
    r.push_back(exact_decimal(d));
    r.push_back(exact_hexfloat(d));
    rows.push_back(std::move(r));
  }
  print_table(header, rows, md);
  return 0;
}

}  // namespace

NUMREF_VERB("table", "every code point of a format of at most 8 bits", run_table);

}  // namespace numref::cli::cmd_table
