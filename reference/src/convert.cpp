// numref — conversion between any two formats.                  spec §11
#include "numref/convert.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "names.hpp"
#include "round_core.hpp"

namespace numref {

std::optional<FormatId> find_format(std::string_view name) {
  if (name.empty()) return std::nullopt;
  for (const auto& f : kFormats) {
    if (f.name == name) return f.id;
    // §2.3 the aliases of the row, separated by single spaces
    for (std::string_view rest = f.aliases; !rest.empty();) {
      const std::size_t end = std::min(rest.find(' '), rest.size());
      if (rest.substr(0, end) == name) return f.id;
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
  }
  return std::nullopt;
}

std::string format_names(std::string_view sep) { return detail::join_names(kFormats, sep); }

std::string validate(const Policy& p, const Format& to) {
  const Round mode = effective_round(to, p);
  if (mode == Round::sr || p.round == Round::sr) {
    if (p.sr_bits < 1 || p.sr_bits > 32)
      return "stochastic rounding needs sr_bits (k) in 1..32, got " + std::to_string(p.sr_bits);
    if (p.sr_variant == SrVariant::add && to.is_integer())
      return "sr_variant=add is defined for floating-point targets only";
  }
  return {};
}

namespace {

// §6.3 / §6.4 NaN operand.
Result nan_result(const Decoded& d, const Format& from, const Format& to, const Policy& p) {
  std::uint8_t flags = 0;
  // A signaling NaN (IEEE sources only: quiet bit = top fraction bit clear) signals invalid.
  if (from.specials == Specials::ieee && from.man_bits > 0 && ((d.sig >> (from.man_bits - 1)) & 1u) == 0)
    flags |= kInvalid;
  if (!to.has_nan()) {
    flags |= kInvalid;
    switch (p.nan_to_finite) {
      case NanToFinite::zero: return {0u, flags};
      case NanToFinite::negzero: return {to.is_integer() ? 0u : to.sign_bit(), flags};
      case NanToFinite::max: return {encode_max_finite(false, to), flags};
      case NanToFinite::signzero: return {to.is_integer() || !d.sign ? 0u : to.sign_bit(), flags};
      case NanToFinite::flipzero: return {to.is_integer() || d.sign ? 0u : to.sign_bit(), flags};
    }
  }
  // §6.3 a target with one NaN (fnuz 80, P3109 §2.5) gets it from every option (`ones` and
  // `all_ones` would name numbers or an Inf: fnuz 7F / FF, signed P3109 7F = +Inf or max).
  // payload / raw / raw_plus into an ieee target read the operand's fraction; every other option (and
  // every target with one NaN per sign or one NaN) is core_impl::nan_rule_code.
  if ((p.nan == NanOut::payload || p.nan == NanOut::raw || p.nan == NanOut::raw_plus) &&
      to.specials == Specials::ieee) {
    const std::uint32_t sgn = d.sign && p.nan != NanOut::raw_plus ? to.sign_bit() : 0u;  // raw_plus: positive
    std::uint64_t pl = d.sig;                                                            // source fraction field
    pl = from.man_bits >= to.man_bits ? (pl >> (from.man_bits - to.man_bits)) : (pl << (to.man_bits - from.man_bits));
    if (p.nan == NanOut::payload)
      pl |= std::uint64_t{1} << (to.man_bits - 1);  // quiet (§6.3 payload)
    else if ((pl & to.man_mask()) == 0)
      pl = 1;  // §6.3 raw / raw_plus: still a NaN, not Inf
    return {sgn | to.first_special_magnitude() | static_cast<std::uint32_t>(pl & to.man_mask()),
            flags};  // Inf | payload
  }
  return {core_impl::nan_rule_code(d.sign, to, p), flags};
}

// §6.2 Infinite operand.
Result inf_result(bool sign, const Format& to, const Policy& p) {
  if (to.is_integer()) {
    const auto mx = detail::max_magnitude(to, sign, p.int_range == IntRange::symmetric);
    return {detail::encode_grid(sign, mx.n, mx.q, to), kInvalid};
  }
  if (sign && !to.is_signed) {  // §7.3: abs and inf_abs convert -Inf as +Inf
    if (p.negative == Negative::nan) return {to.canonical_nan, kInvalid};
    sign = false;
  }
  if (p.overflow == Overflow::saturate && p.inf_sat == InfSat::max)
    return {encode_max_finite(sign, to), static_cast<std::uint8_t>(kOverflow | kInexact)};
  if (to.has_inf()) return {encode_inf(sign, to), 0};
  if (to.has_nan()) return {core_impl::inf_slot_nan(sign, to, p), kInvalid};  // §6.2 rule 5, §6.7
  return {encode_max_finite(sign, to), kInvalid};
}

// §5.2 Stochastic rounding, "add to the source bit pattern" variant.
Result sr_add_source(const Decoded& d, std::uint32_t bits, const Format& from, const detail::Target& t, const Policy& p,
                     std::uint64_t r) {
  const Format& to = *t.f;
  const int k = p.sr_bits;
  if ((r >> k) != 0)
    throw std::invalid_argument("stochastic rounding: r = " + std::to_string(r) +
                                " has more than k = " + std::to_string(k) + " bits");
  const Exact exact{d.sign, d.sig, d.exp, false};
  std::uint64_t mag = bits & from.mag_mask();
  const int dbits = from.man_bits - to.man_bits;
  if (dbits > 0) mag += k <= dbits ? (r << (dbits - k)) : (r >> (k - dbits));
  // Decode the sum as a finite pattern whose exponent field may run past the top (§5.2).
  const std::uint64_t ef = mag >> from.man_bits;
  const std::uint64_t mf = mag & from.man_mask();
  Exact sum{d.sign, 0, 0, false};
  if (from.has_subnormals && ef == 0) {
    sum.sig = mf;
    sum.exp = from.qmin();
  } else {
    sum.sig = (std::uint64_t{1} << from.man_bits) | mf;
    sum.exp = static_cast<int>(ef) - from.bias - from.man_bits;
  }
  Result res = detail::round_core(sum, t, p, Round::rtz, Round::sr, 0);
  if (res.flags & kInvalid) return res;  // §9.3 a NaN from a number (§7.4 e8m0_low=nan): invalid alone
  // inexact iff the delivered value differs from the operand
  const Result direct = detail::round_core(exact, t, p, Round::rtz, Round::rtz, 0);
  const bool exact_same = !(direct.flags & kInexact) && direct.bits == res.bits;
  if (exact_same)
    res.flags &= static_cast<std::uint8_t>(~(kInexact | kUnderflow));
  else
    res.flags |= kInexact;
  return res;
}

}  // namespace

Converter::Converter(const Format& from, const Format& to, const Policy& p, bool binade)
    : from_(&from), to_(&to), p_(p), t_(detail::make_target(to, p)), from_special_(from.first_special_magnitude()) {
  const std::string err = validate(p, to);
  if (!err.empty()) throw std::invalid_argument(err);
  // §11.1 The binade path (see detail::BinadePath): both binary floating-point formats,
  // signed, with subnormals, the target narrower in precision; not §5.2 (it rounds twice).
  const bool floats = !from.is_integer() && !to.is_integer() && from.is_signed && to.is_signed && from.has_subnormals &&
                      to.has_subnormals;
  const bool sr_add = t_.mode == Round::sr && p.sr_variant == SrVariant::add;
  if (binade && floats && !sr_add && from.man_bits > to.man_bits && t_.max_e[0] == t_.max_e[1]) {
    detail::BinadePath& b = bp_;
    b.mode = t_.mode;
    b.k = t_.mode == Round::sr ? p.sr_bits : 0;  // f_k is read by sr only (§5.1)
    b.d = from.man_bits - to.man_bits;
    b.man_in = from.man_bits;
    b.sign_in = from.sign_bit();
    b.sign_out = to.sign_bit();
    b.mag_mask = from.mag_mask();
    b.rebias = static_cast<std::int64_t>(from.bias - to.bias) * (std::int64_t{1} << from.man_bits);
    b.max_code = encode_max_finite(false, to);
    // value exponent E = ef − bias_in; normal in the target for emin <= E <= max_e
    b.ef_lo = std::max(1, to.emin() + from.bias);
    b.ef_hi = std::min(static_cast<int>(from.exp_all_ones()) - 1,
                       t_.max_e[0] + from.bias);  // never the all-ones field (specials)
    b.ef_tiny = to.qmin() - 2 + from.bias;        // E <= qmin − 2: |x| < 2^(qmin−1)
    b.constants = t_.mode != Round::sr;
    if (b.constants) {
      for (int s = 0; s < 2; ++s) {
        // Any value >= 2^(max_e+1) overflows alike (§6.1), any |x| < 2^(qmin−1) underflows alike (§4, §8.2).
        b.ovf[s] = detail::round_core(Exact{s == 1, 1, t_.max_e[0] + 1, false}, t_, p, t_.mode, t_.mode, 0);
        b.tiny[s] = detail::round_core(Exact{s == 1, 1, to.qmin() - 2, false}, t_, p, t_.mode, t_.mode, 0);
      }
    }
    b.on = b.ef_lo <= b.ef_hi;
  }
}

Result Converter::operator()(std::uint32_t bits, std::uint64_t r) const {
  const Format& from = *from_;
  const Format& to = *to_;
  const Policy& p = p_;
  // §4.3: r is validated for every operand class (zero, NaN and Inf included).
  if (t_.mode == Round::sr && (r >> p.sr_bits) != 0) core_impl::fail_r_too_wide(r, p.sr_bits);
  // §11.1 The binade path.
  if (bp_.on) {
    const detail::BinadePath& b = bp_;
    const std::uint32_t mag = bits & b.mag_mask;
    const int ef = static_cast<int>(mag >> b.man_in);
    const bool neg = (bits & b.sign_in) != 0;
    if (ef >= b.ef_lo && ef <= b.ef_hi) {
      const auto t = static_cast<std::uint64_t>(static_cast<std::int64_t>(mag) - b.rebias);
      const std::uint64_t low = t & ((std::uint64_t{1} << b.d) - 1u);
      const std::uint64_t half = std::uint64_t{1} << (b.d - 1);
      std::uint64_t q = t >> b.d;
      // §4.2 / §5.1: q is the code of N (its last bit the parity), low the d dropped bits.
      q += round_increment(b.mode, neg, low, half, false, (q & 1u) != 0, b.k > 0 ? fraction_bits(low, b.d, b.k) : 0u, r,
                           b.k)
               ? 1u
               : 0u;
      if (q <= b.max_code)
        return {static_cast<std::uint32_t>(q) | (neg ? b.sign_out : 0u),
                low != 0 ? static_cast<std::uint8_t>(kInexact) : std::uint8_t{0}};
      // rounded past max finite: the generic core applies the overflow policy
    } else if (b.constants && ef > b.ef_hi && ef < static_cast<int>(from.exp_all_ones())) {
      return b.ovf[neg ? 1 : 0];
    } else if (b.constants && ef >= 1 && ef <= b.ef_tiny) {
      return b.tiny[neg ? 1 : 0];
    }
  }
  // Fast path (§3.1 normal operands of floating-point sources): read the fields directly.
  if (!from.is_integer()) {
    const std::uint32_t mag = bits & from.mag_mask();
    const std::uint32_t ef = mag >> from.man_bits;
    if (ef != 0 && mag < from_special_ && !(t_.mode == Round::sr && p.sr_variant == SrVariant::add)) {
      const Exact x{(bits & from.sign_bit()) != 0, (std::uint64_t{1} << from.man_bits) | (mag & from.man_mask()),
                    static_cast<int>(ef) - from.bias - from.man_bits, false};
      return core_impl::round_core_inline(x, t_, p, t_.mode, t_.mode, r);
    }
  }
  const Decoded d = decode(bits, from);
  switch (d.cls) {
    case Class::nan: return nan_result(d, from, to, p);
    case Class::inf: return inf_result(d.sign, to, p);
    case Class::zero: return detail::round_core(Exact{d.sign, 0, 0, false}, t_, p, t_.mode, t_.mode, r);
    case Class::subnormal:
      if (p.daz) return detail::round_core(Exact{d.sign, 0, 0, false}, t_, p, t_.mode, t_.mode, r);  // §8.1
      break;
    case Class::normal: break;
  }
  if (t_.mode == Round::sr && p.sr_variant == SrVariant::add && !from.is_integer())
    return sr_add_source(d, bits, from, t_, p, r);
  return detail::round_core(Exact{d.sign, d.sig, d.exp, false}, t_, p, t_.mode, t_.mode, r);
}

Result convert(std::uint32_t bits, const Format& from, const Format& to, const Policy& p, std::uint64_t r) {
  return Converter(from, to, p, false)(bits, r);
}

}  // namespace numref
