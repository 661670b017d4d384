// numref — format descriptor table.                         spec §2 (Formats)
//
// This header is the ONLY place where a number format is described. Every other
// piece of numref (reference core, MPFR oracle, CLI, conformance, CUDA kernels)
// reads a format's parameters from kFormats and never branches on its identity.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace numref {

// §2.2 Encoding family: how the special values (if any) are encoded.
enum class Specials : std::uint8_t {
  ieee,     // IEEE 754: exponent field all ones = Inf (fraction 0) or NaN (fraction != 0)
  fn,       // "finite + NaN": no Inf; NaN only at the all-ones magnitude (S.1111.111 in OCP
            // E4M3; 0xFF in the unsigned OCP E8M0, whose magnitude is the whole code)
  finite,   // no Inf, no NaN (OCP MX FP6 / FP4)
  fnuz,     // "finite, NaN, unsigned zero" (AMD MI300 / Graphcore FP8): no Inf, no -0; the one
            // NaN is the negative-zero pattern, the sign bit alone (0x80)
  integer,  // two's complement integer, no special values
  // §2.5 IEEE P3109 (interim report; gfloat format_info_p3109): one NaN (signed: the sign bit
  // alone, 80; unsigned: all ones, FF), no -0, subnormals. Extended domain (p3109e): +Inf is
  // the largest magnitude below the NaN (signed 7F / -Inf FF; unsigned FE); finite (p3109f):
  // no Inf, that code is a number.
  p3109e,
  p3109f,
};

// §2.2 The name of an encoding family: the `specials` column of `numref formats` and of
// Python's numref.formats().
constexpr std::string_view specials_name(Specials s) {
  switch (s) {
    case Specials::ieee: return "ieee";
    case Specials::fn: return "fn";
    case Specials::finite: return "finite";
    case Specials::fnuz: return "fnuz";
    case Specials::p3109e: return "p3109e";
    case Specials::p3109f: return "p3109f";
    case Specials::integer: return "integer";
  }
  return "?";
}

// §2.5 The IEEE P3109 members in the table, as (K, P, signedness, domain): K bits, precision P
// (implicit bit included), s(igned) / u(nsigned), e(xtended: ±Inf) / f(inite). Each row of kFormats
// (and its FormatId, its name p3109_k<K>p<P><s|u><e|f> and its alias binary<K>p<P><s|u><e|f>)
// is generated from one entry; conformance/include/numref/backend.h pins the C ids.
// Two lists, in this order (FormatIds and C ids are never renumbered, §32.3):
//   NUMREF_P3109_BINARY8_MEMBERS  the 12 members of gfloat's p3109_binary8_formats (the first
//                                 P3109 rows; §31.4 / §34.3 give them the full pair set at level 1);
//   NUMREF_P3109_MORE_MEMBERS     every other member gfloat's format_info_p3109 accepts for
//                                 K = 2..8 (1 <= P <= K), 128 rows, ordered by K, then P, then
//                                 s before u, then e before f.
// clang-format off
#define NUMREF_P3109_BINARY8_MEMBERS(X)                                                          \
  X(8, 1, s, e) X(8, 1, u, e) X(8, 3, s, e) X(8, 3, s, f) X(8, 3, u, e) X(8, 3, u, f) X(8, 4, s, e) \
  X(8, 4, s, f) X(8, 4, u, e) X(8, 4, u, f) X(8, 7, s, f) X(8, 8, u, f)
#define NUMREF_P3109_MORE_MEMBERS(X)                                                                \
  X(2, 1, s, e) X(2, 1, s, f) X(2, 1, u, e) X(2, 1, u, f) X(2, 2, s, e) X(2, 2, s, f) X(2, 2, u, e) \
  X(2, 2, u, f) X(3, 1, s, e) X(3, 1, s, f) X(3, 1, u, e) X(3, 1, u, f) X(3, 2, s, e) X(3, 2, s, f) \
  X(3, 2, u, e) X(3, 2, u, f) X(3, 3, s, e) X(3, 3, s, f) X(3, 3, u, e) X(3, 3, u, f) X(4, 1, s, e) \
  X(4, 1, s, f) X(4, 1, u, e) X(4, 1, u, f) X(4, 2, s, e) X(4, 2, s, f) X(4, 2, u, e) X(4, 2, u, f) \
  X(4, 3, s, e) X(4, 3, s, f) X(4, 3, u, e) X(4, 3, u, f) X(4, 4, s, e) X(4, 4, s, f) X(4, 4, u, e) \
  X(4, 4, u, f) X(5, 1, s, e) X(5, 1, s, f) X(5, 1, u, e) X(5, 1, u, f) X(5, 2, s, e) X(5, 2, s, f) \
  X(5, 2, u, e) X(5, 2, u, f) X(5, 3, s, e) X(5, 3, s, f) X(5, 3, u, e) X(5, 3, u, f) X(5, 4, s, e) \
  X(5, 4, s, f) X(5, 4, u, e) X(5, 4, u, f) X(5, 5, s, e) X(5, 5, s, f) X(5, 5, u, e) X(5, 5, u, f) \
  X(6, 1, s, e) X(6, 1, s, f) X(6, 1, u, e) X(6, 1, u, f) X(6, 2, s, e) X(6, 2, s, f) X(6, 2, u, e) \
  X(6, 2, u, f) X(6, 3, s, e) X(6, 3, s, f) X(6, 3, u, e) X(6, 3, u, f) X(6, 4, s, e) X(6, 4, s, f) \
  X(6, 4, u, e) X(6, 4, u, f) X(6, 5, s, e) X(6, 5, s, f) X(6, 5, u, e) X(6, 5, u, f) X(6, 6, s, e) \
  X(6, 6, s, f) X(6, 6, u, e) X(6, 6, u, f) X(7, 1, s, e) X(7, 1, s, f) X(7, 1, u, e) X(7, 1, u, f) \
  X(7, 2, s, e) X(7, 2, s, f) X(7, 2, u, e) X(7, 2, u, f) X(7, 3, s, e) X(7, 3, s, f) X(7, 3, u, e) \
  X(7, 3, u, f) X(7, 4, s, e) X(7, 4, s, f) X(7, 4, u, e) X(7, 4, u, f) X(7, 5, s, e) X(7, 5, s, f) \
  X(7, 5, u, e) X(7, 5, u, f) X(7, 6, s, e) X(7, 6, s, f) X(7, 6, u, e) X(7, 6, u, f) X(7, 7, s, e) \
  X(7, 7, s, f) X(7, 7, u, e) X(7, 7, u, f) X(8, 1, s, f) X(8, 1, u, f) X(8, 2, s, e) X(8, 2, s, f) \
  X(8, 2, u, e) X(8, 2, u, f) X(8, 5, s, e) X(8, 5, s, f) X(8, 5, u, e) X(8, 5, u, f) X(8, 6, s, e) \
  X(8, 6, s, f) X(8, 6, u, e) X(8, 6, u, f) X(8, 7, s, e) X(8, 7, u, e) X(8, 7, u, f) X(8, 8, s, e) \
  X(8, 8, s, f) X(8, 8, u, e)
// clang-format on
#define NUMREF_P3109_MEMBERS(X) NUMREF_P3109_BINARY8_MEMBERS(X) NUMREF_P3109_MORE_MEMBERS(X)

enum class FormatId : std::uint8_t {
  f32,
  bf16,
  f16,
  f8e4m3fn,
  f8e5m2,
  f8e8m0fnu,
  f6e3m2fn,
  f6e2m3fn,
  f4e2m1fn,
  int8,
  f8e4m3fnuz,
  f8e5m2fnuz,
  f8e4m3b11fnuz,
  f8e4m3,
  f8e3m4,
#define NUMREF_P3109_ENUMERATOR(K, P, S, D) p3109_k##K##p##P##S##D,
  NUMREF_P3109_MEMBERS(NUMREF_P3109_ENUMERATOR)
#undef NUMREF_P3109_ENUMERATOR
};

// §2.5 The FormatIds of NUMREF_P3109_BINARY8_MEMBERS (gfloat's p3109_binary8_formats).
#define NUMREF_P3109_BINARY8_ID(K, P, S, D) FormatId::p3109_k##K##p##P##S##D,
inline constexpr FormatId kP3109Binary8[] = {NUMREF_P3109_BINARY8_MEMBERS(NUMREF_P3109_BINARY8_ID)};
#undef NUMREF_P3109_BINARY8_ID

// §2.1 One row per format. Bias and the largest finite code are STATED (as in the
// defining document), not derived; tests/test_format.cpp checks them against the
// values derived from the field widths so that a typo cannot go unnoticed. Every other
// fact of a format (its aliases, §2.3; its special magnitudes, §2.2; emin, qmin, masks)
// is a column here or a constexpr member function below: nothing outside this header
// derives one by hand.
struct Format {
  FormatId id;
  std::string_view name;        // LLVM/MLIR spelling
  int bits;                     // storage width in bits
  int exp_bits;                 // exponent field width (0 for integers)
  int man_bits;                 // trailing significand (fraction) field width; magnitude bits for integers
  int bias;                     // exponent bias (0 for integers)
  bool is_signed;               // has a sign bit (two's complement for integers)
  Specials specials;            // encoding of Inf / NaN
  bool has_zero;                // a zero exists (f8e8m0fnu has none)
  bool has_subnormals;          // exponent field 0 encodes subnormals (else: a normal binade)
  std::uint32_t max_finite;     // code of the largest finite positive value
  std::uint32_t canonical_nan;  // code of the canonical (positive, quiet) NaN; 0 when none
  std::string_view source;      // defining document
  std::string_view aliases;     // §2.3 other accepted names, separated by single spaces ("" = none)

  // ---- derived quantities (pure functions of the stated fields) -------------
  constexpr std::uint32_t mask() const { return bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1u); }
  constexpr std::uint32_t sign_bit() const { return is_signed ? (1u << (bits - 1)) : 0u; }
  constexpr std::uint32_t mag_mask() const { return mask() & ~sign_bit(); }
  constexpr std::uint32_t man_mask() const { return (1u << man_bits) - 1u; }
  constexpr std::uint32_t exp_all_ones() const { return (1u << exp_bits) - 1u; }
  constexpr bool is_integer() const { return specials == Specials::integer; }
  constexpr bool has_inf() const { return specials == Specials::ieee || specials == Specials::p3109e; }
  constexpr bool is_p3109() const { return specials == Specials::p3109e || specials == Specials::p3109f; }
  // §2.5 A P3109 row of NUMREF_P3109_MORE_MEMBERS (every member but gfloat's 12 binary8 ones): the
  // rows whose level-1 cast pairs (§34.3), golden vectors (§31.4) and default-suite sweeps are
  // bounded by the rules of those clauses.
  constexpr bool is_p3109_extra() const {
    if (!is_p3109()) return false;
    for (FormatId b : kP3109Binary8)
      if (b == id) return false;
    return true;
  }
  // §2.2 / §2.5 One NaN code for both signs (fnuz, P3109): every NaN rule delivers canonical_nan.
  constexpr bool has_single_nan() const { return specials == Specials::fnuz || is_p3109(); }
  constexpr bool has_nan() const { return specials == Specials::ieee || specials == Specials::fn || has_single_nan(); }
  // §2.2 A −0 code exists: signed floating-point formats with a zero, except fnuz and P3109
  // (whose negative-zero pattern is the NaN).
  constexpr bool has_negative_zero() const { return is_signed && has_zero && !is_integer() && !has_single_nan(); }
  // Unbiased exponent of the smallest normal binade (§3.2): 1 - bias when field 0
  // is the subnormal binade, -bias when field 0 is itself a normal binade.
  constexpr int emin() const { return has_subnormals ? 1 - bias : -bias; }
  // Quantum exponent of the subnormal binade (= emin - man_bits).
  constexpr int qmin() const { return emin() - man_bits; }
  // Precision in bits (implicit bit included).
  constexpr int precision() const { return man_bits + 1; }
  // §2.2 The smallest magnitude code (code & mag_mask()) that is NaN or Inf: the all-ones
  // exponent field for ieee, the all-ones magnitude for fn; mag_mask() + 1 (no magnitude
  // reaches it) for finite and integer formats. Finite magnitudes are exactly those below it.
  constexpr std::uint32_t first_special_magnitude() const {
    switch (specials) {
      case Specials::ieee: return exp_all_ones() << man_bits;
      case Specials::fn: return mag_mask();
      // §2.5 signed: every magnitude is a number (the NaN is 80) but the Inf; unsigned: the NaN
      // is the all-ones magnitude and the Inf (extended) the one below it.
      case Specials::p3109e: return is_signed ? mag_mask() : mag_mask() - 1u;
      case Specials::p3109f: return is_signed ? mag_mask() + 1u : mag_mask();
      default: return mag_mask() + 1u;
    }
  }
  // §2.2 Classes of a magnitude code: finite (number, zero included), Inf (ieee: the first
  // special magnitude itself), NaN (every other special magnitude).
  constexpr bool is_finite_magnitude(std::uint32_t mag) const { return mag < first_special_magnitude(); }
  constexpr bool is_inf_magnitude(std::uint32_t mag) const { return has_inf() && mag == first_special_magnitude(); }
  constexpr bool is_nan_magnitude(std::uint32_t mag) const {
    return !is_finite_magnitude(mag) && !is_inf_magnitude(mag);
  }
  // §2.2 Classes of a whole code. They differ from the magnitude's only in the signed formats with
  // one NaN (fnuz, signed P3109), whose NaN is the sign bit with magnitude 0.
  constexpr bool is_nan_code(std::uint32_t code) const {
    code &= mask();
    return has_single_nan() && is_signed ? code == sign_bit() : is_nan_magnitude(code & mag_mask());
  }
  constexpr bool is_finite_code(std::uint32_t code) const {
    return !is_nan_code(code) && is_finite_magnitude(code & mag_mask());
  }
  // §6.1 / §6.2 / §6.3 The NaN a rule delivers "with the sign of x": the canonical NaN with the
  // sign bit where the format has a NaN of each sign (ieee, signed fn); fnuz and P3109 have one.
  constexpr std::uint32_t nan_code(bool sign) const {
    return has_single_nan() ? canonical_nan : (canonical_nan | (sign ? sign_bit() : 0u));
  }
};

// §2.5 The row of the P3109 member (K, P, signedness, domain), as format_info_p3109 defines it:
// fraction P - 1 bits, exponent K - (P - 1) - s bits; bias 2^(K-P-1) (rounded down: 0 when P = K)
// signed, 2^(K-P) unsigned; the NaN 2^(K-1) signed, 2^K - 1 unsigned; max finite the largest
// magnitude below the NaN, less one for the Inf of the extended domain.
constexpr Format p3109_format(FormatId id, std::string_view name, std::string_view alias, int k, int p, bool is_signed,
                              bool extended) {
  const int s = is_signed ? 1 : 0;
  const int bias = is_signed ? (k - p - 1 >= 0 ? 1 << (k - p - 1) : 0) : 1 << (k - p);
  const std::uint32_t top_mag = (1u << (k - s)) - 1u;  // all magnitude bits set
  const std::uint32_t max_finite = top_mag - (is_signed ? 0u : 1u) - (extended ? 1u : 0u);
  const std::uint32_t nan = is_signed ? 1u << (k - 1) : (1u << k) - 1u;
  // clang-format off
  return {id, name, k, k - (p - 1) - s, p - 1, bias, is_signed, extended ? Specials::p3109e : Specials::p3109f,
          true, true, max_finite, nan, "IEEE P3109 interim report (gfloat format_info_p3109)", alias};
  // clang-format on
}

// §2.1 The descriptor table. Sources:
//   IEEE 754-2019 (binary32, binary16); bfloat16 (Google TPU / Intel BF16 spec);
//   OCP 8-bit Floating Point Specification (OFP8) rev 1.0 (E4M3, E5M2);
//   OCP Microscaling Formats (MX) Specification v1.0 (E8M0, FP6 E3M2/E2M3, FP4 E2M1);
//   the FNUZ FP8 of AMD CDNA3 (MI300) and Graphcore (torch / ml_dtypes float8_e4m3fnuz,
//   float8_e5m2fnuz), XLA's F8E4M3B11FNUZ, and the IEEE-like float8_e4m3 / float8_e3m4 of
//   ml_dtypes (exponent field all ones = Inf / NaN, as in IEEE 754 binary formats).
// clang-format off
inline constexpr auto kFormats = std::to_array<Format>({
    // id                 name         bits e  m   bias signed specials           zero  subn  max_finite   canonical_nan source / aliases
    {FormatId::f32,       "f32",       32,  8, 23, 127, true,  Specials::ieee,    true, true, 0x7F7FFFFFu, 0x7FC00000u, "IEEE 754-2019 binary32", "fp32 float32"},
    {FormatId::bf16,      "bf16",      16,  8,  7, 127, true,  Specials::ieee,    true, true, 0x7F7Fu,     0x7FC0u,     "bfloat16 (truncated binary32)", "bfloat16"},
    {FormatId::f16,       "f16",       16,  5, 10,  15, true,  Specials::ieee,    true, true, 0x7BFFu,     0x7E00u,     "IEEE 754-2019 binary16", "fp16 float16"},
    {FormatId::f8e4m3fn,  "f8e4m3fn",   8,  4,  3,   7, true,  Specials::fn,      true, true, 0x7Eu,       0x7Fu,       "OCP OFP8 v1.0 E4M3", "e4m3 float8_e4m3fn"},
    {FormatId::f8e5m2,    "f8e5m2",     8,  5,  2,  15, true,  Specials::ieee,    true, true, 0x7Bu,       0x7Eu,       "OCP OFP8 v1.0 E5M2", "e5m2 float8_e5m2"},
    {FormatId::f8e8m0fnu, "f8e8m0fnu",  8,  8,  0, 127, false, Specials::fn,      false, false, 0xFEu,     0xFFu,       "OCP MX v1.0 E8M0 scale", "e8m0 float8_e8m0fnu"},
    {FormatId::f6e3m2fn,  "f6e3m2fn",   6,  3,  2,   3, true,  Specials::finite,  true, true, 0x1Fu,       0x00u,       "OCP MX v1.0 FP6 E3M2", "e3m2"},
    {FormatId::f6e2m3fn,  "f6e2m3fn",   6,  2,  3,   1, true,  Specials::finite,  true, true, 0x1Fu,       0x00u,       "OCP MX v1.0 FP6 E2M3", "e2m3"},
    {FormatId::f4e2m1fn,  "f4e2m1fn",   4,  2,  1,   1, true,  Specials::finite,  true, true, 0x7u,        0x00u,       "OCP MX v1.0 FP4 E2M1", "e2m1"},
    {FormatId::int8,      "int8",       8,  0,  7,   0, true,  Specials::integer, true, false, 0x7Fu,      0x00u,       "two's complement 8-bit integer", ""},
    {FormatId::f8e4m3fnuz,    "f8e4m3fnuz",    8, 4, 3,  8, true, Specials::fnuz, true, true, 0x7Fu, 0x80u, "AMD CDNA3 / Graphcore FP8 E4M3 (bias 8)", "e4m3fnuz float8_e4m3fnuz"},
    {FormatId::f8e5m2fnuz,    "f8e5m2fnuz",    8, 5, 2, 16, true, Specials::fnuz, true, true, 0x7Fu, 0x80u, "AMD CDNA3 / Graphcore FP8 E5M2 (bias 16)", "e5m2fnuz float8_e5m2fnuz"},
    {FormatId::f8e4m3b11fnuz, "f8e4m3b11fnuz", 8, 4, 3, 11, true, Specials::fnuz, true, true, 0x7Fu, 0x80u, "XLA F8E4M3B11FNUZ (bias 11)", "e4m3b11fnuz float8_e4m3b11fnuz"},
    {FormatId::f8e4m3,        "f8e4m3",        8, 4, 3,  7, true, Specials::ieee, true, true, 0x77u, 0x7Cu, "IEEE-like E4M3 (ml_dtypes float8_e4m3)", "float8_e4m3"},
    {FormatId::f8e3m4,        "f8e3m4",        8, 3, 4,  3, true, Specials::ieee, true, true, 0x6Fu, 0x78u, "IEEE-like E3M4 (ml_dtypes float8_e3m4)", "e3m4 float8_e3m4"},
#define NUMREF_P3109_ROW(K, P, S, D)                                                                       \
  p3109_format(FormatId::p3109_k##K##p##P##S##D, "p3109_k" #K "p" #P #S #D, "binary" #K "p" #P #S #D, K, P, \
               std::string_view(#S) == "s", std::string_view(#D) == "e"),
    NUMREF_P3109_MEMBERS(NUMREF_P3109_ROW)
#undef NUMREF_P3109_ROW
});
// clang-format on
inline constexpr int kFormatCount = static_cast<int>(kFormats.size());

namespace detail {
constexpr bool formats_in_enum_order() {
  for (int i = 0; i < kFormatCount; ++i)
    if (static_cast<int>(kFormats[static_cast<std::size_t>(i)].id) != i) return false;
  return true;
}
}  // namespace detail
static_assert(detail::formats_in_enum_order(), "kFormats: one row per FormatId, in enum order");

constexpr const Format& format(FormatId id) { return kFormats[static_cast<std::size_t>(id)]; }

// Looks a format up by its LLVM/MLIR name or one of the aliases of its row (§2.3).
// Returns nullopt for an unknown name.
std::optional<FormatId> find_format(std::string_view name);
// Every format name in table order, joined by `sep` ("f32, bf16, f16, ..."): help and errors.
std::string format_names(std::string_view sep);

}  // namespace numref
