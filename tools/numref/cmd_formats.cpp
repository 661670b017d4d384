// numref formats — the descriptor table with its derived columns.     spec §2.1, §3.2, §3.3
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/value.hpp"

namespace numref::cli::cmd_formats {
namespace {

// "7e = 448": a code and its exact value (§3.4; hex-float when the decimal is long).
std::string code_and_value(std::uint32_t code, const Format& f) {
  return hex_code(code, f) + " = " + compact_value(decode(code, f));
}

int run_formats(Args& a) {
  if (a.flag("help")) {
    std::printf(
        "usage: numref formats [--markdown]\n\n"
        "Prints the format descriptor table (spec §2.1) with the derived columns emin (§3.2),\n"
        "max finite, min positive and canonical NaN (§3.3). Values are exact: decimal when\n"
        "it has at most 12 characters, otherwise the C99 hex-float.\n");
    return 0;
  }
  const bool md = a.flag("markdown");
  a.finish();
  const char* none = md ? "—" : "-";
  const std::vector<std::string> header = {"name",       "bits",         "exp",          "frac",       "bias",
                                           "signed",     "specials",     "zero",         "subnormals", "emin",
                                           "max finite", "min positive", "canonical NaN"};
  std::vector<std::vector<std::string>> rows;
  for (const Format& f : kFormats) {
    const bool integer = f.is_integer();
    rows.push_back({
        std::string(f.name),
        std::to_string(f.bits),
        integer ? none : std::to_string(f.exp_bits),
        std::to_string(f.man_bits),
        integer ? none : std::to_string(f.bias),
        integer ? "two's complement" : (f.is_signed ? "yes" : "no"),
        std::string(specials_name(f.specials)),
        f.has_zero ? "yes" : "no",
        integer ? none : (f.has_subnormals ? "yes" : "no"),
        integer ? none : std::to_string(f.emin()),
        code_and_value(encode_max_finite(false, f), f),
        // §2.5 p3109_k2p1se / _k2p2se have no positive finite value (01 is +Inf)
        f.is_finite_code(encode_min_positive(f)) ? code_and_value(encode_min_positive(f), f) : none,
        f.has_nan() ? hex_code(f.canonical_nan, f) : none,
    });
  }
  print_table(header, rows, md);
  // int8's most negative code has no positive counterpart (§3.3).
  for (const Format& f : kFormats)
    if (f.is_integer())
      std::printf("%s%s: most negative code %s\n", md ? "\n" : "", std::string(f.name).c_str(),
                  code_and_value(encode_max_finite(true, f), f).c_str());
  return 0;
}

}  // namespace

NUMREF_VERB("formats", "table of the supported formats and their parameters", run_formats);

}  // namespace numref::cli::cmd_formats
