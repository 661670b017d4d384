// numref backend "cpu-fast" — conversion engine (see fast_cast.hpp).     spec §3–§11
#include "fast_cast.hpp"

#include <algorithm>
#include <climits>

#include "fast_lanes.hpp"

namespace numref::cpu_fast {

namespace {

constexpr std::uint8_t NX = kInexact, UF = kUnderflow, OF = kOverflow, NV = kInvalid;

inline int bitlen64(std::uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

}  // namespace

// ---- plan -----------------------------------------------------------------------------------

Plan make_plan(const Format& from, const Format& to, const Policy& p) {
  Plan pl{};
  pl.s_m = from.man_bits;
  pl.s_bias = from.bias;
  pl.s_sub = from.has_subnormals;
  pl.s_int = from.is_integer();
  pl.s_signed = from.is_signed;
  pl.s_ieee = from.specials == Specials::ieee;
  pl.s_fn = from.specials == Specials::fn;
  pl.s_emin = from.has_subnormals ? 1 - from.bias : -from.bias;
  pl.s_qmin = pl.s_emin - from.man_bits;
  pl.s_mask = from.bits >= 32 ? 0xFFFFFFFFu : (1u << from.bits) - 1u;
  pl.s_sign = from.is_signed ? 1u << (from.bits - 1) : 0u;
  pl.s_mag = pl.s_mask & ~pl.s_sign;
  pl.s_man = (1u << from.man_bits) - 1u;
  pl.s_expones = (1u << from.exp_bits) - 1u;

  pl.m = to.man_bits;
  pl.bias = to.bias;
  pl.sub = to.has_subnormals;
  pl.integer = to.is_integer();
  pl.is_signed = to.is_signed;
  pl.has_zero = to.has_zero;
  pl.has_inf = to.specials == Specials::ieee;
  pl.has_nan = to.specials == Specials::ieee || to.specials == Specials::fn;
  pl.finite = to.specials == Specials::finite;
  pl.emin = to.has_subnormals ? 1 - to.bias : -to.bias;
  pl.qmin = pl.emin - to.man_bits;
  const std::uint32_t mask = to.bits >= 32 ? 0xFFFFFFFFu : (1u << to.bits) - 1u;
  pl.sign_bit = to.is_signed ? 1u << (to.bits - 1) : 0u;
  pl.mag_mask = mask & ~pl.sign_bit;
  pl.man_mask = (1u << to.man_bits) - 1u;
  pl.max_code = to.max_finite;
  pl.canonical_nan = to.canonical_nan;
  pl.inf_code = pl.has_inf ? ((1u << to.exp_bits) - 1u) << to.man_bits : 0u;
  pl.off = to.has_subnormals ? 0u : (1u << to.man_bits);
  pl.min_code = (to.is_integer() || to.has_subnormals) ? 1u : 0u;
  if (pl.integer) {
    // §6.5 the largest magnitude per sign: 127, and 128 (full) or 127 (symmetric) below zero.
    pl.maxn[0] = to.max_finite;
    pl.maxn[1] = p.int_range == IntRange::symmetric ? to.max_finite : to.max_finite + 1;
    for (int s = 0; s < 2; ++s) pl.emax[s] = bitlen64(pl.maxn[s]) - 1;
  } else {
    // max finite = (2^m + frac) * 2^(field - bias - m), or a subnormal max (never in the table)
    const std::uint32_t ef = to.max_finite >> to.man_bits;
    pl.emax[0] = pl.emax[1] = static_cast<int>(ef) - to.bias;
  }
  // §7.1 the effective rounding mode
  pl.mode = p.round;
  if (!to.is_integer() && to.man_bits == 0) {
    switch (p.e8m0_round) {
      case E8m0Round::follow: break;
      case E8m0Round::floor: pl.mode = Round::rtz; break;
      case E8m0Round::ceil: pl.mode = Round::rup; break;
      case E8m0Round::even: pl.mode = Round::rne; break;
      case E8m0Round::tiesup: pl.mode = Round::rna; break;
    }
  }
  pl.k = pl.mode == Round::sr ? p.sr_bits : 0;
  pl.sr_add = pl.mode == Round::sr && p.sr_variant == SrVariant::add && !pl.s_int;
  pl.p = p;
  pl.exact_e = pl.emin <= -126;
  return pl;
}

// ---- scalar path ----------------------------------------------------------------------------

namespace {

Out zero_out(const Plan& pl, bool sign) {  // §6.6, §7.2
  if (pl.has_zero) return {(sign && pl.is_signed && !pl.integer) ? pl.sign_bit : 0u, 0};
  if (pl.p.zero_to_nozero == ZeroToNoZero::nan) return {pl.canonical_nan, NV};
  return {pl.min_code, NX};
}

std::uint32_t max_out(const Plan& pl, bool sign) {
  if (pl.integer) {  // two's complement of -maxn
    const std::uint32_t v = pl.maxn[sign ? 1 : 0];
    return sign ? (~v + 1u) & (pl.sign_bit | pl.mag_mask) : v;
  }
  return pl.max_code | (sign ? pl.sign_bit : 0u);
}

Out nan_out(const Plan& pl, bool sign, std::uint32_t payload);

// §6.7 The NaN standing for an infinity of sign `sign` in a format with NaN but no Inf: the
// infinity slot's NaN with the sign, or (inf_nan=nan) the code §6.3 gives a NaN of that sign
// (such a target has no payload bits; cpu-fast declines the formats with one NaN).
std::uint32_t inf_nan_code(const Plan& pl, bool sign) {
  if (pl.p.inf_nan == InfNan::nan) return nan_out(pl, sign, 0u).code;
  return pl.canonical_nan | (sign ? pl.sign_bit : 0u);
}

Out overflow_out(const Plan& pl, bool sign, Round dir) {  // §6.1, §6.5
  if (pl.integer) return {max_out(pl, sign), NV};
  if (pl.finite || pl.p.overflow == Overflow::saturate) return {max_out(pl, sign), static_cast<std::uint8_t>(OF | NX)};
  bool inf = true;
  if (dir == Round::rtz)
    inf = false;
  else if (dir == Round::rup)
    inf = !sign;
  else if (dir == Round::rdn)
    inf = sign;
  if (!inf) return {max_out(pl, sign), static_cast<std::uint8_t>(OF | NX)};
  const std::uint32_t s = sign ? pl.sign_bit : 0u;
  if (pl.has_inf) return {pl.inf_code | s, static_cast<std::uint8_t>(OF | NX)};
  return {inf_nan_code(pl, sign), static_cast<std::uint8_t>(OF | NX)};
}

bool round_up(Round mode, bool sign, std::uint64_t n, std::uint64_t rem, std::uint64_t half, bool odd, std::uint64_t fk,
              std::uint32_t r, int k) {
  switch (mode) {
    case Round::rne: return rem > half || (rem != 0 && rem == half && odd);
    case Round::rna: return rem != 0 && rem >= half;
    case Round::rtz: return false;
    case Round::rup: return rem != 0 && !sign;
    case Round::rdn: return rem != 0 && sign;
    case Round::sr: return fk + r >= (std::uint64_t{1} << k);
  }
  (void)n;
  return false;
}

// Splits sig * 2^q at quantum 2^qt: n = floor, rem / half as integers scaled by 2^d (d
// clamped so that everything stays exact in 64 bits), fk = the fraction truncated to k bits.
struct Split {
  std::uint64_t n, rem, half, fk;
};
Split split(std::uint64_t sig, int q, int qt, int k) {
  Split s{0, 0, 0, 0};
  const int d = qt - q;
  if (d <= 0) {
    s.n = sig << (-d);
    return s;
  }
  if (d < 63) {
    s.n = sig >> d;
    s.rem = sig & ((std::uint64_t{1} << d) - 1);
    s.half = std::uint64_t{1} << (d - 1);
  } else {  // sig < 2^62 here: everything is discarded, below half
    s.n = 0;
    s.rem = sig;
    s.half = std::uint64_t{1} << 62;
  }
  if (k > 0 && s.rem != 0) {
    // fk = floor(rem * 2^k / 2^d)
    if (d >= k)
      s.fk = (d - k) >= 64 ? 0 : (s.rem >> (d - k));
    else
      s.fk = s.rem << (k - d);
  }
  return s;
}

// §4–§9 Rounds (-1)^sign * sig * 2^q (sig > 0) into the target.
Out round_value(const Plan& pl, bool sign, std::uint64_t sig, int q, Round mode, Round ovf, std::uint32_t r) {
  if (sign && !pl.is_signed) {  // §7.3 (inf_abs: a finite negative gives NaN)
    if (pl.p.negative != Negative::abs) return {pl.canonical_nan, NV};
    sign = false;
  }
  const int si = sign ? 1 : 0;
  const int E = q + bitlen64(sig) - 1;
  if (E > pl.emax[si]) return overflow_out(pl, sign, ovf);
  const int k = mode == Round::sr ? pl.k : 0;
  int qt;
  if (pl.integer)
    qt = 0;
  else if (pl.sub)
    qt = std::max(E - pl.m, pl.qmin);
  else
    qt = E - pl.m;
  const Split s = split(sig, q, qt, k);
  const bool inexact = s.rem != 0;
  // the truncated code (floating targets): its parity is the tie-to-even rule of §4.2
  const std::int64_t ct = pl.integer ? static_cast<std::int64_t>(s.n)
                                     : (static_cast<std::int64_t>(qt - pl.qmin) << pl.m) +
                                           static_cast<std::int64_t>(s.n) - static_cast<std::int64_t>(pl.off);
  const bool up = round_up(mode, sign, s.n, s.rem, s.half, (ct & 1) != 0, s.fk, r, k);
  const std::uint64_t n = s.n + (up ? 1u : 0u);
  std::uint8_t flags = inexact ? NX : 0;
  if (pl.integer) {
    if (n > pl.maxn[si]) return {max_out(pl, sign), NV};
    const std::uint32_t v = static_cast<std::uint32_t>(n);
    return {sign ? (~v + 1u) & (pl.sign_bit | pl.mag_mask) : v, flags};
  }
  if (n == 0) {  // rounded to zero: tiny and inexact
    Out z = zero_out(pl, sign);
    z.flags |= static_cast<std::uint8_t>(flags | (inexact ? UF : 0));
    return z;
  }
  const std::int64_t code = ct + (up ? 1 : 0);
  if (code > static_cast<std::int64_t>(pl.max_code)) return overflow_out(pl, sign, ovf);
  if (E < pl.emin) {
    bool tiny;
    if (pl.p.tininess == Tininess::before || mode == Round::sr || E < pl.emin - 1) {
      tiny = true;
    } else {
      // rounded with the target's precision and an unbounded exponent range (§9.2)
      const int qu = E - pl.m;
      const Split su = split(sig, q, qu, 0);
      const bool oddu = pl.m > 0 ? (su.n & 1) != 0 : (ct & 1) != 0;
      const std::uint64_t nu = su.n + (round_up(mode, sign, su.n, su.rem, su.half, oddu, 0, 0, 0) ? 1u : 0u);
      tiny = bitlen64(nu) <= pl.m + 1;
    }
    if (!pl.sub && code < 0) {  // §7.4 below the minimum: 00, or the NaN (e8m0_low=nan)
      if (pl.p.e8m0_low == E8m0Low::nan && pl.has_nan) return {pl.canonical_nan, NV};
      return {pl.min_code, static_cast<std::uint8_t>(NX | UF)};
    }
    if (tiny && pl.p.ftz && pl.has_zero) {  // §8.2
      Out z = zero_out(pl, sign);
      z.flags |= NX | UF;
      return z;
    }
    if (tiny && inexact) flags |= UF;
  }
  return {static_cast<std::uint32_t>(code) | (sign ? pl.sign_bit : 0u), flags};
}

Out nan_out(const Plan& pl, bool sign, std::uint32_t payload) {  // §6.3, §6.4
  std::uint8_t flags = 0;
  if (pl.s_ieee && pl.s_m > 0 && ((payload >> (pl.s_m - 1)) & 1u) == 0) flags |= NV;  // signaling
  if (!pl.has_nan) {
    flags |= NV;
    switch (pl.p.nan_to_finite) {
      case NanToFinite::zero: return {0u, flags};
      case NanToFinite::negzero: return {pl.integer ? 0u : pl.sign_bit, flags};
      case NanToFinite::max: return {max_out(pl, false), flags};
      case NanToFinite::signzero: return {pl.integer || !sign ? 0u : pl.sign_bit, flags};
      case NanToFinite::flipzero: return {pl.integer || sign ? 0u : pl.sign_bit, flags};
    }
  }
  const std::uint32_t s = sign && pl.p.nan != NanOut::raw_plus ? pl.sign_bit : 0u;  // raw_plus: positive
  switch (pl.p.nan) {
    case NanOut::sign: return {pl.canonical_nan | s, flags};
    case NanOut::canonical: return {pl.canonical_nan, flags};
    case NanOut::ones: return {pl.mag_mask, flags};
    case NanOut::ones_sign: return {s | pl.mag_mask, flags};
    case NanOut::all_ones: return {pl.sign_bit | pl.mag_mask, flags};
    case NanOut::payload:
    case NanOut::raw:
    case NanOut::raw_plus:
      if (!pl.has_inf) return {pl.canonical_nan | s, flags};
      {
        std::uint32_t f = pl.s_m >= pl.m ? payload >> (pl.s_m - pl.m) : payload << (pl.m - pl.s_m);
        if (pl.p.nan == NanOut::payload) f |= 1u << (pl.m - 1);
        f &= pl.man_mask;
        if (f == 0) f = 1;  // raw: never the Inf pattern (payload has the quiet bit, so f != 0)
        return {s | pl.inf_code | f, flags};
      }
  }
  return {pl.canonical_nan, flags};
}

Out inf_out(const Plan& pl, bool sign) {  // §6.2
  if (pl.integer) return {max_out(pl, sign), NV};
  if (sign && !pl.is_signed) {
    if (pl.p.negative == Negative::nan) return {pl.canonical_nan, NV};
    sign = false;
  }
  if (pl.p.overflow == Overflow::saturate && pl.p.inf_sat == InfSat::max)
    return {max_out(pl, sign), static_cast<std::uint8_t>(OF | NX)};
  if (pl.has_inf) return {pl.inf_code | (sign ? pl.sign_bit : 0u), 0};
  if (pl.has_nan) return {inf_nan_code(pl, sign), NV};  // §6.2 rule 5, §6.7
  return {max_out(pl, sign), NV};
}

}  // namespace

Out convert_scalar(const Plan& pl, std::uint32_t bits, std::uint32_t r) {
  bits &= pl.s_mask;
  // §3.1 decode
  bool sign;
  std::uint64_t sig;
  int q;
  std::uint32_t mag;
  if (pl.s_int) {
    sign = (bits & pl.s_sign) != 0;
    mag = sign ? ((~bits + 1u) & pl.s_mask) : bits;
    if (mag == 0) return zero_out(pl, false);
    sig = mag;
    q = 0;
  } else {
    sign = (bits & pl.s_sign) != 0;
    mag = bits & pl.s_mag;
    const std::uint32_t ef = mag >> pl.s_m;
    const std::uint32_t mf = mag & pl.s_man;
    if ((pl.s_ieee && ef == pl.s_expones && mf != 0) || (pl.s_fn && mag == pl.s_mag)) return nan_out(pl, sign, mf);
    if (pl.s_ieee && ef == pl.s_expones) return inf_out(pl, sign);
    if (pl.s_sub && ef == 0) {
      if (mf == 0 || pl.p.daz) return zero_out(pl, sign);  // §6.6, §8.1
      sig = mf;
      q = pl.s_qmin;
    } else {
      sig = (std::uint64_t{1} << pl.s_m) | mf;
      q = static_cast<int>(ef) - pl.s_bias - pl.s_m;
    }
  }
  if (pl.mode == Round::sr && (static_cast<std::uint64_t>(r) >> pl.k) != 0)
    return {0xFFFFFFFFu, 0xFF};  // rejected earlier
  if (!pl.sr_add) return round_value(pl, sign, sig, q, pl.mode, pl.mode, r);
  // §5.2 SR "add to the source bit pattern": r aligned below the target's normal ulp,
  // added to the magnitude bits, the sum read as a finite pattern and truncated.
  std::uint64_t sum = mag;
  const int dbits = pl.s_m - pl.m;
  if (dbits > 0) sum += pl.k <= dbits ? (static_cast<std::uint64_t>(r) << (dbits - pl.k)) : (r >> (pl.k - dbits));
  const std::uint64_t ef = sum >> pl.s_m;
  const std::uint64_t mf = sum & pl.s_man;
  std::uint64_t ssig;
  int sq;
  if (pl.s_sub && ef == 0) {
    ssig = mf;
    sq = pl.s_qmin;
  } else {
    ssig = (std::uint64_t{1} << pl.s_m) | mf;
    sq = static_cast<int>(ef) - pl.s_bias - pl.s_m;
  }
  Out res = ssig == 0 ? zero_out(pl, sign) : round_value(pl, sign, ssig, sq, Round::rtz, Round::sr, 0);
  if (res.flags & NV) return res;  // §9.3 a NaN from a number (§7.4 e8m0_low=nan): invalid alone
  const Out direct = round_value(pl, sign, sig, q, Round::rtz, Round::rtz, 0);
  if (!(direct.flags & NX) && direct.code == res.code)
    res.flags &= static_cast<std::uint8_t>(~(NX | UF));
  else
    res.flags |= NX;
  return res;
}

// ---- lane path: f32 source, floating-point target, deterministic rounding ---------------------

namespace {

struct LaneConst {
  std::int32_t m, qmin, qfloor, off, maxc, emin;
  std::uint32_t sign_bit, ovf_pos, ovf_neg;
  std::uint32_t below_code, below_fl;  // §7.4 a code below 00 (f8e8m0fnu): 00 and ux, or FF and v
  std::uint32_t before, ftz;           // 0 or 1
  bool zero_ok;
  // Inf operands (§6.2): result and flags per sign; NaN operands (§6.3, §6.4): the code
  // without sign (nan_base), whether the operand's sign is kept (nan_sign), the payload
  // form (ieee targets, nan=payload: sign | all-ones exponent | fraction >> shift | quiet)
  std::uint32_t inf_pos, inf_neg, inf_fl_pos, inf_fl_neg;
  std::uint32_t nan_base, nan_sign, nan_payload, nan_shift, nan_quiet, nan_man, nan_fl;
};

// One lane: the result code and flags of f32 `u`. Written without branches and with
// explicit select masks (GCC if-converts and vectorises it; a chain of ternaries on one
// variable would not). Lanes the form does not model (NaN, Inf, and per plan: zeros,
// f32 subnormals, negatives) are redone by the scalar path, see lanes_impl.
inline std::uint32_t sel(std::uint32_t cond01, std::uint32_t a, std::uint32_t b) {  // cond ? a : b
  const std::uint32_t m = 0u - cond01;
  return (a & m) | (b & ~m);
}

template <Round MODE>
[[gnu::always_inline]] inline std::uint32_t round_up_lane(std::uint32_t rem, std::uint32_t half, std::uint32_t odd,
                                                          std::uint32_t s) {
  const std::uint32_t nz = static_cast<std::uint32_t>(rem != 0);
  if constexpr (MODE == Round::rne)
    return static_cast<std::uint32_t>(rem > half) | (static_cast<std::uint32_t>(rem == half) & nz & odd);
  else if constexpr (MODE == Round::rna)
    return static_cast<std::uint32_t>(rem >= half) & nz;
  else if constexpr (MODE == Round::rtz)
    return 0u;
  else if constexpr (MODE == Round::rup)
    return nz & (s ^ 1u);
  else
    return nz & s;
}

template <Round MODE, bool FLAGS, bool TINY>
[[gnu::always_inline]] inline std::uint32_t lane(std::uint32_t u, const LaneConst& c, std::uint8_t& fl) {
  const std::uint32_t s = u >> 31;
  const std::uint32_t a = u & 0x7FFFFFFFu;
  const std::int32_t ef = static_cast<std::int32_t>(a >> 23);
  const std::uint32_t normal = static_cast<std::uint32_t>(ef != 0);
  const std::uint32_t sig = (a & 0x7FFFFFu) | (normal << 23);
  const std::int32_t qx = std::max(ef, 1) - 150;
  const std::int32_t E = ef - 127;
  const std::int32_t qt = std::max(E - c.m, c.qfloor);
  const std::int32_t d = std::min(qt - qx, 25);
  const std::uint32_t n = sig >> d;
  const std::uint32_t rem = sig & ((1u << d) - 1u);
  const std::uint32_t half = (1u << d) >> 1;
  const std::int32_t ct = ((qt - c.qmin) << c.m) + static_cast<std::int32_t>(n) - c.off;
  const std::uint32_t up = round_up_lane<MODE>(rem, half, static_cast<std::uint32_t>(ct) & 1u, s);
  const std::int32_t code = ct + static_cast<std::int32_t>(up);
  const std::uint32_t ovf = static_cast<std::uint32_t>(code > c.maxc);
  const std::uint32_t below = static_cast<std::uint32_t>(code < 0);
  const std::uint32_t sgn = c.sign_bit & (0u - s);
  const std::uint32_t inexact = static_cast<std::uint32_t>(rem != 0);
  // Tininess (§9.2). After rounding: at E = emin - 1, whether rounding with an unbounded
  // exponent range (quantum 2^(E - m), du >= 1 there) carries to 2^emin.
  // (Only computed when flags or FTZ need it: TINY.)
  std::uint32_t tiny = 0, flush = 0;
  if constexpr (TINY) {
    const std::int32_t du = std::max(std::min(E - c.m - qx, 25), 0);
    const std::uint32_t nu = sig >> du;
    const std::uint32_t remu = sig & ((1u << du) - 1u);
    const std::uint32_t halfu = (1u << du) >> 1;
    const std::uint32_t carry = ((nu + round_up_lane<MODE>(remu, halfu, nu & 1u, s)) >> (c.m + 1)) != 0;
    const std::uint32_t t_after =
        static_cast<std::uint32_t>(E < c.emin - 1) | (static_cast<std::uint32_t>(E == c.emin - 1) & (carry ^ 1u));
    tiny = sel(c.before, static_cast<std::uint32_t>(E < c.emin), t_after);
    flush = c.ftz & tiny & static_cast<std::uint32_t>(sig != 0);
  }
  std::uint32_t res = static_cast<std::uint32_t>(code) | sgn;
  res = sel(flush, sgn, res);
  res = sel(below, c.below_code, res);
  res = sel(ovf, sel(s, c.ovf_neg, c.ovf_pos), res);
  // Inf and NaN operands.
  const std::uint32_t is_inf = static_cast<std::uint32_t>(a == 0x7F800000u);
  const std::uint32_t is_nan = static_cast<std::uint32_t>(a > 0x7F800000u);
  const std::uint32_t frac = a & 0x7FFFFFu;
  const std::uint32_t nan_pl = sgn | c.nan_base | (((frac >> c.nan_shift) | c.nan_quiet) & c.nan_man);
  const std::uint32_t nan_code = sel(c.nan_payload, nan_pl, c.nan_base ^ (sgn & c.nan_sign));  // flipzero: ^
  res = sel(is_inf, sel(s, c.inf_neg, c.inf_pos), res);
  res = sel(is_nan, nan_code, res);
  if (FLAGS) {
    std::uint32_t f = inexact * NX | (tiny & inexact) * UF;
    f = sel(flush, NX | UF, f);
    f = sel(below, c.below_fl, f);
    f = sel(ovf, OF | NX, f);
    f = sel(is_inf, sel(s, c.inf_fl_neg, c.inf_fl_pos), f);
    const std::uint32_t signaling = static_cast<std::uint32_t>((frac & 0x400000u) == 0);
    f = sel(is_nan, c.nan_fl | signaling * NV, f);
    fl = static_cast<std::uint8_t>(f);
  }
  return res;
}

template <Round MODE, bool FLAGS, bool TINY>
[[gnu::always_inline]] inline void lanes_impl(const Plan& pl, const LaneConst& c, const std::uint32_t* in,
                                              std::uint32_t* out, std::uint8_t* flags, std::size_t n) {
  constexpr std::size_t B = 512;
  const std::uint32_t zero_bad = c.zero_ok ? 0u : 1u;
  const std::uint32_t sub_bad = (pl.p.daz || pl.exact_e) ? 1u : 0u;
  const std::uint32_t neg_bad = pl.is_signed ? 0u : 1u;
  std::uint8_t fbuf[B];
  for (std::size_t i0 = 0; i0 < n; i0 += B) {
    const std::size_t m = std::min(B, n - i0);
    std::uint32_t special = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint32_t u = in[i0 + j];
      const std::uint32_t a = u & 0x7FFFFFFFu;
      special |= (static_cast<std::uint32_t>(a == 0) & zero_bad) |
                 (static_cast<std::uint32_t>((a >> 23) == 0) & sub_bad) | ((u >> 31) & neg_bad);
      out[i0 + j] = lane<MODE, FLAGS, TINY>(u, c, fbuf[j]);
    }
    if (FLAGS)
      for (std::size_t j = 0; j < m; ++j) flags[i0 + j] = fbuf[j];
    if (special) {
      for (std::size_t j = 0; j < m; ++j) {
        const std::uint32_t u = in[i0 + j];
        const std::uint32_t a = u & 0x7FFFFFFFu;
        const bool sp = (a == 0 && zero_bad) || ((a >> 23) == 0 && sub_bad) || ((u >> 31) & neg_bad);
        if (!sp) continue;
        const Out o = convert_scalar(pl, u, 0);
        out[i0 + j] = o.code;
        if (FLAGS) flags[i0 + j] = o.flags;
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NUMREF_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NUMREF_CLONES
#endif

#define NUMREF_LANES(NAME, MODE, FLAGS, TINY)                                                              \
  NUMREF_CLONES void NAME(const Plan& pl, const LaneConst& c, const std::uint32_t* in, std::uint32_t* out, \
                          std::uint8_t* flags, std::size_t n) {                                            \
    lanes_impl<MODE, FLAGS, TINY>(pl, c, in, out, flags, n);                                               \
  }
// f: with flags; t: no flags, tininess for FTZ; n: neither.
NUMREF_LANES(lanes_rne_f, Round::rne, true, true)
NUMREF_LANES(lanes_rne_t, Round::rne, false, true)
NUMREF_LANES(lanes_rne_n, Round::rne, false, false)
NUMREF_LANES(lanes_rna_f, Round::rna, true, true)
NUMREF_LANES(lanes_rna_t, Round::rna, false, true)
NUMREF_LANES(lanes_rna_n, Round::rna, false, false)
NUMREF_LANES(lanes_rtz_f, Round::rtz, true, true)
NUMREF_LANES(lanes_rtz_t, Round::rtz, false, true)
NUMREF_LANES(lanes_rtz_n, Round::rtz, false, false)
NUMREF_LANES(lanes_rup_f, Round::rup, true, true)
NUMREF_LANES(lanes_rup_t, Round::rup, false, true)
NUMREF_LANES(lanes_rup_n, Round::rup, false, false)
NUMREF_LANES(lanes_rdn_f, Round::rdn, true, true)
NUMREF_LANES(lanes_rdn_t, Round::rdn, false, true)
NUMREF_LANES(lanes_rdn_n, Round::rdn, false, false)

LaneConst lane_const(const Plan& pl) {
  LaneConst c{};
  c.m = pl.m;
  c.qmin = pl.qmin;
  c.qfloor = pl.sub ? pl.qmin : INT_MIN / 4;
  c.off = static_cast<std::int32_t>(pl.off);
  c.maxc = static_cast<std::int32_t>(pl.max_code);
  c.emin = pl.emin;
  c.sign_bit = pl.sign_bit;
  c.ovf_pos = overflow_out(pl, false, pl.mode).code;
  c.ovf_neg = overflow_out(pl, true, pl.mode).code;
  const bool below_nan = pl.p.e8m0_low == E8m0Low::nan && pl.has_nan;  // §7.4
  c.below_code = below_nan ? pl.canonical_nan : 0u;
  c.below_fl = below_nan ? NV : static_cast<std::uint32_t>(NX | UF);
  c.before = pl.p.tininess == Tininess::before ? 1u : 0u;
  c.ftz = pl.p.ftz && pl.has_zero ? 1u : 0u;
  c.zero_ok = pl.has_zero;
  const Out ip = inf_out(pl, false), in = inf_out(pl, true);
  c.inf_pos = ip.code;
  c.inf_neg = in.code;
  c.inf_fl_pos = ip.flags;
  c.inf_fl_neg = in.flags;
  // NaN: nan_out of a quiet, positive NaN with zero payload gives the sign-free code;
  // whether the sign is kept, and the payload form, follow the policy (§6.3).
  c.nan_base = nan_out(pl, false, 1u << 22).code;
  c.nan_fl = nan_out(pl, false, 1u << 22).flags;
  const bool keeps_sign =
      pl.has_nan ? (pl.p.nan == NanOut::sign || pl.p.nan == NanOut::payload || pl.p.nan == NanOut::ones_sign)
                 : (!pl.integer &&
                    (pl.p.nan_to_finite == NanToFinite::signzero || pl.p.nan_to_finite == NanToFinite::flipzero));
  c.nan_sign = keeps_sign ? pl.sign_bit : 0u;
  c.nan_payload = (pl.has_nan && pl.has_inf && pl.p.nan == NanOut::payload) ? 1u : 0u;
  c.nan_shift = static_cast<std::uint32_t>(23 - pl.m);
  c.nan_quiet = pl.m > 0 ? 1u << (pl.m - 1) : 0u;
  c.nan_man = pl.man_mask;
  if (c.nan_payload) c.nan_base = pl.inf_code;
  return c;
}

}  // namespace

// ---- the batched entry ----------------------------------------------------------------------

const char* declined(const Format& from, const Format& to, const Policy& p) {
  if (p.e8m0_low == E8m0Low::grid && to.man_bits == 0 && !to.is_integer() && !to.has_zero)
    return "cpu-fast does not implement e8m0_low=grid";
  if ((p.nan == NanOut::raw || p.nan == NanOut::raw_plus) && from.bits == 32)
    return "cpu-fast does not implement nan=raw / raw_plus from 32-bit sources";
  if (from.specials == Specials::fnuz || to.specials == Specials::fnuz)
    return "cpu-fast does not implement the fnuz formats (spec §2.2)";
  if (from.is_p3109() || to.is_p3109()) return "cpu-fast does not implement the P3109 formats (spec §2.5)";
  return nullptr;
}

FastCast::FastCast(const Format& from, const Format& to, const Policy& p) : pl_(make_plan(from, to, p)) {
  if (!byte_lanes_unsupported(from, to, p)) bytes_ = std::make_shared<const ByteLanes>(from, to, p);
  const bool det = pl_.mode != Round::sr;
  if (det && from.bits <= 16) {
    path_ = Path::lut;
    const std::size_t n = std::size_t{1} << from.bits;
    const bool narrow = to.bits <= 8;
    (narrow ? lut_code8_.resize(n) : lut_code_.resize(n));
    lut_flags_.resize(n);
    for (std::size_t c = 0; c < n; ++c) {
      const Out o = convert_scalar(pl_, static_cast<std::uint32_t>(c), 0);
      if (narrow)
        lut_code8_[c] = static_cast<std::uint8_t>(o.code);
      else
        lut_code_[c] = o.code;
      lut_flags_[c] = o.flags;
    }
  } else if (det && from.bits == 32 && from.exp_bits == 8 && from.man_bits == 23 && !to.is_integer()) {
    path_ = Path::lanes;  // the lane form is written for the binary32 layout
  } else {
    path_ = Path::scalar;
  }
}

const char* FastCast::path() const {
  switch (path_) {
    case Path::lut: return "lut";
    case Path::lanes: return "lanes";
    case Path::scalar: return "scalar";
  }
  return "?";
}

void FastCast::run(const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags,
                   std::size_t n) const {
  switch (path_) {
    case Path::lut: {
      const std::uint32_t mask = static_cast<std::uint32_t>(lut_flags_.size() - 1);
      // Independent table loads, unrolled so that several are in flight.
      if (!lut_code8_.empty()) {
        const std::uint8_t* t = lut_code8_.data();
        if (flags) {
          const std::uint8_t* tf = lut_flags_.data();
#pragma GCC unroll 8
          for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t x = in[i] & mask;
            out[i] = t[x];
            flags[i] = tf[x];
          }
        } else {
#pragma GCC unroll 8
          for (std::size_t i = 0; i < n; ++i) out[i] = t[in[i] & mask];
        }
      } else {
        const std::uint32_t* t = lut_code_.data();
#pragma GCC unroll 8
        for (std::size_t i = 0; i < n; ++i) out[i] = t[in[i] & mask];
        if (flags) {
          const std::uint8_t* tf = lut_flags_.data();
#pragma GCC unroll 8
          for (std::size_t i = 0; i < n; ++i) flags[i] = tf[in[i] & mask];
        }
      }
      return;
    }
    case Path::lanes: {
      if (bytes_) {  // f32 into a narrow float: the byte lanes (fast_lanes.hpp), widened
        std::uint8_t b[1024];
        for (std::size_t i = 0; i < n; i += sizeof b) {
          const std::size_t m = std::min(sizeof b, n - i);
          bytes_->run(in + i, b, flags ? flags + i : nullptr, m);
          for (std::size_t j = 0; j < m; ++j) out[i + j] = b[j];
        }
        return;
      }
      const LaneConst c = lane_const(pl_);
      const int v = flags ? 0 : (c.ftz ? 1 : 2);
      using Fn =
          void (*)(const Plan&, const LaneConst&, const std::uint32_t*, std::uint32_t*, std::uint8_t*, std::size_t);
      static constexpr Fn kRne[3] = {lanes_rne_f, lanes_rne_t, lanes_rne_n};
      static constexpr Fn kRna[3] = {lanes_rna_f, lanes_rna_t, lanes_rna_n};
      static constexpr Fn kRtz[3] = {lanes_rtz_f, lanes_rtz_t, lanes_rtz_n};
      static constexpr Fn kRup[3] = {lanes_rup_f, lanes_rup_t, lanes_rup_n};
      static constexpr Fn kRdn[3] = {lanes_rdn_f, lanes_rdn_t, lanes_rdn_n};
      switch (pl_.mode) {
        case Round::rne: kRne[v](pl_, c, in, out, flags, n); return;
        case Round::rna: kRna[v](pl_, c, in, out, flags, n); return;
        case Round::rtz: kRtz[v](pl_, c, in, out, flags, n); return;
        case Round::rup: kRup[v](pl_, c, in, out, flags, n); return;
        case Round::rdn: kRdn[v](pl_, c, in, out, flags, n); return;
        case Round::sr: break;
      }
      break;
    }
    case Path::scalar: break;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Out o = convert_scalar(pl_, in[i], r ? r[i] : 0u);
    out[i] = o.code;
    if (flags) flags[i] = o.flags;
  }
}

}  // namespace numref::cpu_fast
