// numref oracle — GaussWS (spec §37): Boost rationals for every exact step, MPFR for exp2 and
// ln 2, the oracle's own rational rounding (rat::round) for every rounding.
#include "numref/oracle/rational_gaussws.hpp"

#include <mpfr.h>

#include <algorithm>
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

bool finite(std::uint32_t code, FormatId f) {
  const Value v = read_code(code, format(f));
  return v.kind != Kind::nan && v.kind != Kind::inf;
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

// RN32 of the real f(x) computed by MPFR at increasing precision until roundable.
template <class F>
std::uint32_t rn32_of(F f) {
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

Forward forward(FormatId wf, std::size_t m, std::size_t n, std::span<const std::uint32_t> w,
                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId out, bool sum_f32) {
  const std::size_t br = (m + kB - 1) / kB, bc = (n + kB - 1) / kB;
  Forward f;
  f.w_hat.resize(m * n);
  f.scale.resize(br * bc);
  const Format& of = format(out);
  for (std::size_t I = 0; I < br; ++I) {
    for (std::size_t J = 0; J < bc; ++J) {
      Rational amax = 0;
      bool bad = false;
      for (std::size_t i = I * kB; i < std::min(m, I * kB + kB); ++i)
        for (std::size_t j = J * kB; j < std::min(n, J * kB + kB); ++j) {
          const std::uint32_t c = w[i * n + j];
          if (!finite(c, wf)) bad = true;
          else {
            const Rational av = abs(value(c, wf));
            if (av > amax) amax = av;
          }
        }
      const std::size_t b = I * bc + J;
      if (bad) {
        f.scale[b] = 0x7FC00000u;
        for (std::size_t i = I * kB; i < std::min(m, I * kB + kB); ++i)
          for (std::size_t j = J * kB; j < std::min(n, J * kB + kB); ++j) f.w_hat[i * n + j] = of.canonical_nan;
        continue;
      }
      const std::uint32_t s = scale(rn(amax, FormatId::f32), bt[b]);
      f.scale[b] = s;
      for (std::size_t i = I * kB; i < std::min(m, I * kB + kB); ++i)
        for (std::size_t j = J * kB; j < std::min(n, J * kB + kB); ++j) {
          const std::size_t k = i * n + j;
          const Rational wv = value(w[k], wf);
          const bool wneg = (w[k] >> (format(wf).bits - 1)) & 1u;
          const int R = r[k];
          std::uint32_t res;
          if (R == 0 || s == 0) {
            res = rat::round(wv, wneg, of, Round::rne, Round::rne, Policy{}, 0).code;
          } else if (s == 0x7F800000u) {
            res = rn(R > 0 ? rat::pow2(1000) : -rat::pow2(1000), out);
          } else {
            Rational v = wv + R * value(s, FormatId::f32);
            if (v == 0) {
              res = 0;
            } else {
              if (sum_f32) {
                const std::uint32_t v32 = rn(v, FormatId::f32);
                if (!finite(v32, FormatId::f32)) v = (v32 >> 31) ? -rat::pow2(1000) : rat::pow2(1000);
                else v = value(v32, FormatId::f32);
              }
              res = rn(v, out);
            }
          }
          f.w_hat[k] = res;
        }
    }
  }
  return f;
}

std::vector<std::uint32_t> grad(FormatId wf, std::size_t m, std::size_t n, std::span<const std::uint32_t> w,
                                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId gf,
                                std::span<const std::uint32_t> g) {
  const Forward fw = forward(wf, m, n, w, bt, r, FormatId::bf16, false);
  const std::size_t br = (m + kB - 1) / kB, bc = (n + kB - 1) / kB;
  std::vector<std::uint32_t> out(br * bc);
  for (std::size_t I = 0; I < br; ++I)
    for (std::size_t J = 0; J < bc; ++J) {
      const std::size_t b = I * bc + J;
      Rational t = 0;
      bool bad = fw.scale[b] == 0x7FC00000u;
      for (std::size_t i = I * kB; i < std::min(m, I * kB + kB); ++i)
        for (std::size_t j = J * kB; j < std::min(n, J * kB + kB); ++j) {
          const std::size_t k = i * n + j;
          if (!finite(g[k], gf)) bad = true;
          else t += r[k] * value(g[k], gf);
        }
      const std::uint32_t s = fw.scale[b];
      if (bad) out[b] = 0x7FC00000u;
      else if (t == 0 || s == 0) out[b] = 0;
      else if (s == 0x7F800000u) out[b] = t > 0 ? 0xFF800000u : 0x7F800000u;
      else {
        const Rational prod = -t * value(s, FormatId::f32);
        out[b] = rn32_of([&](mpfr_t y, mpfr_prec_t p) {
          mpfr_t a, l;
          mpfr_init2(a, 2048);
          mpfr_init2(l, p + 8);
          to_mpfr(a, prod);
          mpfr_const_log2(l, MPFR_RNDN);
          mpfr_mul(y, a, l, MPFR_RNDN);
          mpfr_clear(a);
          mpfr_clear(l);
        });
      }
    }
  return out;
}

}  // namespace numref::oracle::gw
