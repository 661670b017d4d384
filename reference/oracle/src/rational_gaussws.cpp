// numref oracle — GaussWS (spec §30): Boost rationals for every exact step, MPFR for exp2 and
// ln 2, the oracle's own rational rounding (rat::round) for every rounding.
#include "numref/oracle/rational_gaussws.hpp"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "numref/oracle/oracle_convert.hpp"
#include "numref/oracle/rational_round.hpp"
#include "numref/policy.hpp"

namespace numref::oracle::gw {

using rat::BigInt;
using rat::Rational;

namespace {

constexpr std::size_t kB = 32;

std::uint32_t rn(const Rational& v, FormatId f) {
  Policy p;  // rne, nonsat: IEEE
  const Format& fmt = format(f);
  if (fmt.specials == Specials::finite) p.overflow = Overflow::saturate;
  return rat::round(v, false, fmt, Round::rne, Round::rne, p, 0).code;
}

// mpfr <-> dyadic rational
void to_mpfr(mpfr_t out, const Rational& v) {
  const BigInt num = boost::multiprecision::numerator(v), den = boost::multiprecision::denominator(v);
  const std::string s = num.str();
  mpfr_set_str(out, s.c_str(), 10, MPFR_RNDN);  // exact: the caller sized the precision
  const long k = static_cast<long>(boost::multiprecision::msb(den));
  if (den != (BigInt(1) << k)) throw std::logic_error("gw oracle: not dyadic");
  mpfr_div_2ui(out, out, static_cast<unsigned long>(k), MPFR_RNDN);
}

Rational from_mpfr(const mpfr_t x) {
  mpz_t z;
  mpz_init(z);
  const mpfr_exp_t e = mpfr_get_z_2exp(z, x);
  char* str = mpz_get_str(nullptr, 10, z);
  Rational r{BigInt(std::string(str))};
  void (*freefunc)(void*, size_t);
  mp_get_memory_functions(nullptr, nullptr, &freefunc);
  freefunc(str, std::char_traits<char>::length(str) + 1);
  mpz_clear(z);
  return e >= 0 ? r * rat::pow2(static_cast<int>(e)) : r / rat::pow2(static_cast<int>(-e));
}

// MPFR keeps per-thread caches of the constants mpfr_exp2 and mpfr_const_log2 compute (log 2).
// A thread that used them frees them when it ends, so a multi-threaded test leaves nothing
// behind (LeakSanitizer would otherwise report the cache of every worker thread).
struct MpfrThreadCaches {
  ~MpfrThreadCaches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
};
thread_local MpfrThreadCaches t_mpfr_caches;

// RN32 of the real f(x) computed by MPFR at increasing precision until roundable.
template <class F>
std::uint32_t rn32_of(F f) {
  (void)&t_mpfr_caches;  // constructs this thread's guard (its destructor frees the caches)
  for (mpfr_prec_t p = 128; p <= 65536; p *= 2) {
    mpfr_t y;
    mpfr_init2(y, p);
    f(y, p);
    const bool ok = mpfr_zero_p(y) || mpfr_can_round(y, p - 4, MPFR_RNDN, MPFR_RNDZ, 25);
    Rational v = ok ? from_mpfr(y) : Rational(0);
    mpfr_clear(y);
    if (ok) return rn(v, FormatId::f32);
  }
  throw std::logic_error("gw oracle: not roundable");
}

Rational value(std::uint32_t code, FormatId f) { return rational_value(code, format(f)); }

}  // namespace

int noise(std::uint32_t u) {
  int bit[16];
  for (int i = 0; i < 16; ++i) bit[i] = static_cast<int>((u >> i) & 1u);
  int all8 = 1;
  for (int i = 2; i <= 9; ++i) all8 &= bit[i];
  const int two = (bit[0] | bit[1]) & all8;
  const int one = (bit[10] | bit[11]) & (bit[12] | bit[13]) & bit[14];
  const int mag = two ? 2 : one;
  return bit[15] ? -mag : mag;
}

std::uint32_t exp2_one_minus(std::uint32_t bt) {
  const Rational x = Rational(1) - value(bt, FormatId::f32);
  if (x >= 128) return 0x7F800000u;
  if (x <= -150) return 0u;
  if (denominator(x) == 1) return rn(rat::pow2(static_cast<int>(numerator(x))), FormatId::f32);
  return rn32_of([&](mpfr_t y, mpfr_prec_t) {
    mpfr_t xx;
    mpfr_init2(xx, 512);
    to_mpfr(xx, x);
    mpfr_exp2(y, xx, MPFR_RNDN);
    mpfr_clear(xx);
  });
}

std::uint32_t scale(std::uint32_t amax, std::uint32_t bt) {
  const std::uint32_t e = exp2_one_minus(bt);
  if ((amax & 0x7FFFFFFFu) == 0) return 0u;
  if (e == 0x7F800000u) return e;
  return rn(value(amax, FormatId::f32) * value(e, FormatId::f32), FormatId::f32);
}

std::uint32_t bitwidth(std::uint32_t bi, std::uint32_t binit, std::uint32_t btarget) {
  const Rational t = value(btarget, FormatId::f32);
  return rn(t + value(bi, FormatId::f32) * (value(binit, FormatId::f32) - t), FormatId::f32);
}

namespace {

// An f32 or bf16 code into an MPFR variable (exact: the code is widened to binary32 bits and
// read as a float container; no host arithmetic).
void set_code(mpfr_t x, std::uint32_t code, FormatId f) {
  const std::uint32_t b = f == FormatId::bf16 ? (code & 0xFFFFu) << 16 : code;
  mpfr_set_flt(x, std::bit_cast<float>(b), MPFR_RNDN);
}

// The scale of every block (kNaN for a block holding NaN / Inf).
std::vector<std::uint32_t> scales(FormatId wf, std::size_t m, std::size_t n, std::span<const std::uint32_t> w,
                                  std::span<const std::uint32_t> bt) {
  const std::size_t br = (m + kB - 1) / kB, bc = (n + kB - 1) / kB;
  std::vector<std::uint32_t> out(br * bc);
  for (std::size_t I = 0; I < br; ++I)
    for (std::size_t J = 0; J < bc; ++J) {
      mpfr_t amax, x;
      mpfr_inits2(64, amax, x, static_cast<mpfr_ptr>(nullptr));
      mpfr_set_zero(amax, 1);
      bool bad = false;
      for (std::size_t i = I * kB; i < std::min(m, I * kB + kB); ++i)
        for (std::size_t j = J * kB; j < std::min(n, J * kB + kB); ++j) {
          set_code(x, w[i * n + j], wf);
          if (!mpfr_number_p(x))
            bad = true;
          else if (mpfr_cmpabs(x, amax) > 0)
            mpfr_abs(amax, x, MPFR_RNDN);
        }
      const std::uint32_t amax_code = std::bit_cast<std::uint32_t>(mpfr_get_flt(amax, MPFR_RNDN));  // exact
      mpfr_clears(amax, x, static_cast<mpfr_ptr>(nullptr));
      out[I * bc + J] = bad ? 0x7FC00000u : scale(amax_code, bt[I * bc + J]);
    }
  return out;
}

// RNE of an MPFR value (exact, any precision) to f32 or bf16 by MPFR's own rounding with the
// format's exponent range (subnormals via mpfr_subnormalize); overflow to ±Inf.
std::uint32_t round_mpfr(const mpfr_t v, FormatId out) {
  const int prec = out == FormatId::bf16 ? 8 : 24;
  const mpfr_exp_t emin_old = mpfr_get_emin(), emax_old = mpfr_get_emax();
  mpfr_set_emin(-148);  // binary32 and bf16: the smallest subnormal quantum 2^-149 = 0.1 * 2^-148
  mpfr_set_emax(128);
  if (out == FormatId::bf16) mpfr_set_emin(-132);  // bf16 subnormal quantum 2^-133
  mpfr_t y;
  mpfr_init2(y, prec);
  int t = mpfr_set(y, v, MPFR_RNDN);
  t = mpfr_check_range(y, t, MPFR_RNDN);
  mpfr_subnormalize(y, t, MPFR_RNDN);
  const float f = mpfr_get_flt(y, MPFR_RNDN);  // exact: y is on the grid of the format
  mpfr_clear(y);
  mpfr_set_emin(emin_old);
  mpfr_set_emax(emax_old);
  const std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  return out == FormatId::bf16 ? b >> 16 : b;
}

}  // namespace

Forward forward(FormatId wf, std::size_t m, std::size_t n, std::span<const std::uint32_t> w,
                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId out, bool sum_f32) {
  const std::size_t bc = (n + kB - 1) / kB;
  Forward f;
  f.w_hat.resize(m * n);
  f.scale = scales(wf, m, n, w, bt);
  const Format& of = format(out);
  const bool fast = out == FormatId::bf16 || out == FormatId::f32;
  mpfr_t x, d, v;
  mpfr_inits2(1024, x, d, v, static_cast<mpfr_ptr>(nullptr));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = i * n + j;
      const std::uint32_t s = f.scale[(i / kB) * bc + j / kB];
      const int R = r[k];
      std::uint32_t res;
      if (s == 0x7FC00000u) {
        res = of.canonical_nan;
      } else if ((R == 0 || s == 0) && fast) {
        set_code(x, w[k], wf);  // the sign of a zero w is kept (no noise)
        res = round_mpfr(x, out);
      } else if (R == 0 || s == 0) {
        const bool wneg = (w[k] >> (format(wf).bits - 1)) & 1u;
        res = rat::round(value(w[k], wf), wneg, of, Round::rne, Round::rne, Policy{}, 0).code;
      } else if (s == 0x7F800000u) {
        res = rn(R > 0 ? rat::pow2(1000) : -rat::pow2(1000), out);
      } else if (fast) {
        set_code(x, w[k], wf);
        set_code(d, s, FormatId::f32);
        mpfr_mul_si(d, d, R, MPFR_RNDN);  // exact
        mpfr_add(v, x, d, MPFR_RNDN);     // exact in 1024 bits
        if (mpfr_zero_p(v)) {
          res = 0;
        } else {
          if (sum_f32) {
            const std::uint32_t v32 = round_mpfr(v, FormatId::f32);
            set_code(v, v32, FormatId::f32);  // ±Inf stays ±Inf
          }
          res = round_mpfr(v, out);
        }
      } else {
        Rational vv = value(w[k], wf) + R * value(s, FormatId::f32);
        if (sum_f32) throw std::invalid_argument("gw oracle: sum=f32 only for f32 / bf16 outputs");
        res = vv == 0 ? 0u : rn(vv, out);
      }
      f.w_hat[k] = res;
    }
  mpfr_clears(x, d, v, static_cast<mpfr_ptr>(nullptr));
  return f;
}

std::vector<std::uint32_t> grad(FormatId wf, std::size_t m, std::size_t n, std::span<const std::uint32_t> w,
                                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId gf,
                                std::span<const std::uint32_t> g) {
  const std::vector<std::uint32_t> sc = scales(wf, m, n, w, bt);
  const std::size_t br = (m + kB - 1) / kB, bc = (n + kB - 1) / kB;
  std::vector<std::uint32_t> out(br * bc);
  mpfr_t t, x;
  mpfr_init2(t, 2048);
  mpfr_init2(x, 64);
  for (std::size_t I = 0; I < br; ++I)
    for (std::size_t J = 0; J < bc; ++J) {
      const std::size_t b = I * bc + J;
      mpfr_set_zero(t, 1);
      bool bad = sc[b] == 0x7FC00000u;
      for (std::size_t i = I * kB; i < std::min(m, I * kB + kB); ++i)
        for (std::size_t j = J * kB; j < std::min(n, J * kB + kB); ++j) {
          const std::size_t k = i * n + j;
          set_code(x, g[k], gf);
          if (!mpfr_number_p(x)) {
            bad = true;
            continue;
          }
          mpfr_mul_si(x, x, r[k], MPFR_RNDN);  // exact in 64 bits
          mpfr_add(t, t, x, MPFR_RNDN);        // exact in 2048 bits
        }
      const std::uint32_t s = sc[b];
      if (bad)
        out[b] = 0x7FC00000u;
      else if (mpfr_zero_p(t) || s == 0)
        out[b] = 0;
      else if (s == 0x7F800000u)
        out[b] = mpfr_sgn(t) > 0 ? 0xFF800000u : 0x7F800000u;
      else {
        mpfr_t a;
        mpfr_init2(a, 2048);
        set_code(x, s, FormatId::f32);
        mpfr_mul(a, t, x, MPFR_RNDN);  // exact
        mpfr_neg(a, a, MPFR_RNDN);
        out[b] = rn32_of([&](mpfr_t y, mpfr_prec_t p) {
          mpfr_t l;
          mpfr_init2(l, p + 8);
          mpfr_const_log2(l, MPFR_RNDN);
          mpfr_mul(y, a, l, MPFR_RNDN);
          mpfr_clear(l);
        });
        mpfr_clear(a);
      }
    }
  mpfr_clear(t);
  mpfr_clear(x);
  return out;
}

}  // namespace numref::oracle::gw
