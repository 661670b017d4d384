// numref oracle — the mma dot product by value.              spec §37, §38
#include "numref/oracle/rational_mma.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace numref::oracle::rat {

namespace {

struct Operand {
  Value::Kind kind = Value::finite;
  bool sign = false;
  Rational v = 0;  // signed value
  int e = 0;       // §38.2 alignment exponent: max(floor(log2 |v|), emin); unset for zero
};

Operand read(std::uint32_t code, FormatId id, std::uint32_t ignore) {
  const Format& f = format(id);
  const Value d = decode(code & ~ignore, f);
  Operand o;
  o.kind = d.kind;
  o.sign = d.sign;
  if (d.kind == Value::finite) {
    o.v = d.v;
    if (d.v != 0) o.e = std::max(floor_log2(d.v < 0 ? Rational(-d.v) : d.v), f.has_subnormals ? 1 - f.bias : -f.bias);
  }
  return o;
}

Rational trunc_div(const Rational& v, const Rational& unit) {  // trunc(v / unit) · unit
  const Rational q = v / unit;
  const BigInt n = boost::multiprecision::numerator(q) / boost::multiprecision::denominator(q);  // toward zero
  return Rational(n) * unit;
}

struct Special {
  bool nan = false, pinf = false, ninf = false;
  void product(const Operand& x, const Operand& y) {
    if (x.kind == Value::nan || y.kind == Value::nan)
      nan = true;
    else if (x.kind == Value::inf || y.kind == Value::inf) {
      const bool zero = (x.kind == Value::finite && x.v == 0) || (y.kind == Value::finite && y.v == 0);
      if (zero)
        nan = true;
      else
        (x.sign != y.sign ? ninf : pinf) = true;
    }
  }
  void add(const Operand& x) {
    if (x.kind == Value::nan) nan = true;
    if (x.kind == Value::inf) (x.sign ? ninf : pinf) = true;
  }
  std::optional<std::uint32_t> result(const Format& f, MmaNan rule) const {
    const std::uint32_t top = 1u << (f.bits - 1);
    if (nan || (pinf && ninf)) return rule == MmaNan::ones ? top - 1 : f.canonical_nan;
    if (pinf || ninf) return (ninf ? top : 0u) | (((1u << f.exp_bits) - 1u) << f.man_bits);
    return std::nullopt;
  }
};

// The final rounding of a step (§38.5) or of the ideal sum (§37).
std::uint32_t finish(const Rational& V, bool zero_neg, const Format& f, MmaRound mode) {
  Policy p;
  if (mode == MmaRound::rne) return round(V, zero_neg, f, Round::rne, Round::rne, p, 0).code;
  // rz / rz13: truncate the magnitude to 23 / 13 fraction bits in the binary32 range, then
  // a magnitude of 2^128 or more is Inf.
  if (V == 0) return zero_neg ? 0x80000000u : 0u;
  const bool neg = V < 0;
  const Rational a = neg ? Rational(-V) : V;
  const int bits = mode == MmaRound::rz ? 23 : 13;
  const int q = std::max(floor_log2(a), -126) - bits;
  const Rational t = trunc_div(a, pow2(q));
  if (t >= pow2(128)) return (neg ? 0x80000000u : 0u) | 0x7F800000u;
  return encode(neg ? Rational(-t) : t, neg, f);
}

Rational floor_div(const Rational& v, const Rational& unit) {  // floor(v / unit) · unit
  const Rational q = v / unit;
  BigInt n = boost::multiprecision::numerator(q) / boost::multiprecision::denominator(q);  // toward zero
  if (Rational(n) > q) n -= 1;                                                             // toward −∞
  return Rational(n) * unit;
}

// §38.7 / §38.8 one two-level step by value.
std::uint32_t two_level_step(const MmaKnobs& k, const MmaOperands& in, std::size_t k0, std::size_t k1,
                             const std::uint32_t* a, const std::uint32_t* b, std::uint32_t c, bool gtr) {
  const Format& fc = format(in.c);
  const int F = k.align, F2 = k.align2;
  Special sp;
  struct Prod {
    Rational v;
    int e;
    bool parity;
  };
  std::vector<Prod> ps;
  for (std::size_t i = k0; i < k1; ++i) {
    const Operand x = read(a[i], in.a, in.ignore_a), y = read(b[i], in.b, in.ignore_b);
    sp.product(x, y);
    if (x.kind != Value::finite || y.kind != Value::finite || x.v == 0 || y.v == 0) continue;
    const Rational p = x.v * y.v;
    const int e = x.e + y.e;
    const Rational s = (p < 0 ? Rational(-p) : p) / pow2(e);
    if (!gtr && (s >= 2 ? e + 1 : e) >= 128) {  // §38.7 a product beyond binary32 is an infinity
      (p < 0 ? sp.ninf : sp.pinf) = true;
      continue;
    }
    ps.push_back({p, e, ((i - k0) % 2) == 1});
  }
  Operand co = read(c, in.c, 0);
  const auto level1 = [&](int parity, bool& any, int& E) {
    any = false;
    for (const Prod& q : ps)
      if (parity < 0 || static_cast<int>(q.parity) == parity) {
        E = any ? std::max(E, q.e) : q.e;
        any = true;
      }
    Rational T = 0;
    if (any)
      for (const Prod& q : ps)
        if (parity < 0 || static_cast<int>(q.parity) == parity) T += trunc_div(q.v, pow2(E - F));
    return T;
  };
  if (gtr && co.kind != Value::finite) {  // §38.8 a NaN / Inf C (alignment exponent −1) below the products
    bool any = false;
    int E = 0;
    (void)level1(-1, any, E);
    if (any && E > F) co = Operand{};
  }
  sp.add(co);
  if (const auto r = sp.result(fc, k.nan)) return *r;
  bool any = false;
  int Ed = 0;
  Rational Vd = 0;
  if (!gtr) {
    Vd = level1(-1, any, Ed);
  } else {
    bool ae = false, ao = false;
    int Ee = 0, Eo = 0;
    const Rational Te = level1(0, ae, Ee), To = level1(1, ao, Eo);
    any = ae || ao;
    if (any) {
      Ed = !ae ? Eo : !ao ? Ee : std::max(Ee, Eo);
      Vd = floor_div(Te, pow2(Ed - F)) + floor_div(To, pow2(Ed - F));
    }
  }
  const int emin = fc.has_subnormals ? 1 - fc.bias : -fc.bias;
  const int ec = co.v != 0 ? co.e : emin;
  const int emax = any ? std::max(Ed, ec) : ec;
  Rational V = any ? floor_div(Vd, pow2(emax - F2 - 1)) : Rational(0);
  if (co.v != 0 && !(gtr && ec < emax - F - 1)) V += floor_div(co.v, pow2(emax - F));
  if (V == 0) return 0u;
  const Rational mag = V < 0 ? Rational(-V) : V;
  const int EV = std::max(floor_log2(mag), emin);
  const Rational V2 = floor_div(V, pow2(EV - F2));
  if (V2 == 0) return 0u;
  Policy p;
  const std::uint32_t code = round(V2, V2 < 0, fc, Round::rne, Round::rne, p, 0).code;
  return k.zero == MmaZero::plus && (code & ((1u << (fc.bits - 1)) - 1u)) == 0 ? 0u : code;
}

}  // namespace

std::uint32_t mma_dot(const MmaKnobs& k, std::size_t fused, const MmaOperands& in, std::size_t K,
                      const std::uint32_t* a, const std::uint32_t* b, std::uint32_t c, const std::uint32_t* sa,
                      const std::uint32_t* sb) {
  const Format& fc = format(in.c);
  const bool f16 = in.c == FormatId::f16;
  const auto scale_of = [&](const std::uint32_t* s, std::size_t i) {
    return read(s[i / in.block], in.scale, in.ignore_scale);
  };
  if (k.algo == MmaAlgo::ideal) {
    Special sp;
    Rational sum = 0;
    bool all_neg_zero = true;
    for (std::size_t i = 0; i < K; ++i) {
      const Operand x = read(a[i], in.a, in.ignore_a), y = read(b[i], in.b, in.ignore_b);
      sp.product(x, y);
      Rational p = x.v * y.v;
      bool neg = x.sign != y.sign;
      if (in.block) {
        const Operand s = scale_of(sa, i), t = scale_of(sb, i);
        if (s.kind == Value::nan || t.kind == Value::nan) sp.nan = true;
        p *= s.v * t.v;
      }
      if (p != 0 || !neg) all_neg_zero = false;
      sum += p;
    }
    const Operand co = read(c, in.c, 0);
    sp.add(co);
    if (const auto r = sp.result(fc, MmaNan::canonical)) return *r;
    if (co.v != 0 || !co.sign) all_neg_zero = false;
    sum += co.v;
    return finish(sum, sum == 0 && all_neg_zero, fc, MmaRound::rne);
  }
  if (k.algo == MmaAlgo::fma || k.algo == MmaAlgo::efdpa) {
    // §38.9 / §38.10 each step's exact products plus the accumulator, rounded once (L = 1: the FMA chain)
    const std::size_t L = k.algo == MmaAlgo::fma ? 1 : fused;
    for (std::size_t k0 = 0; k0 < K; k0 += L) {
      const Operand co = read(c, in.c, 0);
      Special sp;
      Rational V = co.v;
      bool every_zero = co.v == 0, every_neg = co.sign;
      for (std::size_t i = k0; i < std::min(K, k0 + L); ++i) {
        const Operand x = read(a[i], in.a, in.ignore_a), y = read(b[i], in.b, in.ignore_b);
        sp.product(x, y);
        Rational p = x.v * y.v;
        bool pneg = x.sign != y.sign;
        if (in.block && k.scale == MmaScale::product) {
          const Operand s = scale_of(sa, i), t = scale_of(sb, i);
          if (s.kind == Value::nan || t.kind == Value::nan) sp.nan = true;
          p *= s.v * t.v;
          pneg = pneg != (s.sign != t.sign);
        }
        every_zero = every_zero && p == 0;
        every_neg = every_neg && pneg;
        V += p;
      }
      sp.add(co);
      if (const auto r = sp.result(fc, k.nan)) {
        c = *r;
        continue;
      }
      // IEEE 754 §6.3: an exact zero is −0 only when every addend is a zero of negative sign
      const bool zero_neg = k.zero == MmaZero::ieee && every_zero && every_neg;
      c = finish(V, zero_neg, fc, MmaRound::rne);
      if (k.zero == MmaZero::plus && (c & ((1u << (fc.bits - 1)) - 1u)) == 0) c = 0;
    }
    return c;
  }
  if (k.algo == MmaAlgo::ftz) {  // §38.11 binary32 arithmetic by value, every result below 2^-126 a signed zero
    const Format& f32 = format(FormatId::f32);
    const Rational tiny = pow2(-126);
    const auto flush = [&](const Operand& x) {
      Operand y = x;
      if (x.kind == Value::finite && (x.v < 0 ? Rational(-x.v) : x.v) < tiny) y.v = 0;
      return y;
    };
    const auto as_operand = [&](const Rational& V, bool zero_neg) {  // RN32(V), flushed
      return flush(read(finish(V, zero_neg, f32, MmaRound::rne), FormatId::f32, 0));
    };
    const auto add = [&](const Operand& x, const Operand& y) {
      Special sp;
      sp.add(x);
      sp.add(y);
      if (const auto r = sp.result(f32, k.nan)) return read(*r, FormatId::f32, 0);
      if (x.v == 0 && y.v == 0) return as_operand(0, x.sign && y.sign);
      return as_operand(x.v + y.v, false);
    };
    const auto input = [&](std::uint32_t code, FormatId id, std::uint32_t ignore) {
      Operand x = read(code, id, ignore);
      const Format& fx = format(id);
      const Rational min_normal = pow2(fx.has_subnormals ? 1 - fx.bias : -fx.bias);
      if (x.kind == Value::finite && (x.v < 0 ? Rational(-x.v) : x.v) < min_normal) x = Operand{};  // +0
      return x;
    };
    Operand acc = input(c, in.c, 0);
    for (std::size_t k0 = 0; k0 < K; k0 += fused) {
      std::vector<Operand> level;
      for (std::size_t i = k0; i < std::min(K, k0 + fused); ++i) {
        const Operand x = input(a[i], in.a, in.ignore_a), y = input(b[i], in.b, in.ignore_b);
        Special sp;
        sp.product(x, y);
        if (const auto r = sp.result(f32, k.nan))
          level.push_back(read(*r, FormatId::f32, 0));
        else if (x.v == 0 || y.v == 0)
          level.push_back(read(x.sign != y.sign ? 0x80000000u : 0u, FormatId::f32, 0));
        else
          level.push_back(as_operand(x.v * y.v, false));
      }
      while (level.size() > 1) {
        std::vector<Operand> next;
        for (std::size_t j = 0; j < level.size(); j += 2)
          next.push_back(j + 1 < level.size() ? add(level[j], level[j + 1]) : level[j]);
        level = next;
      }
      acc = add(acc, level[0]);
    }
    // the accumulator's code: its value re-encoded (a NaN is the knob's NaN, an Inf its sign's)
    Special sp;
    sp.add(acc);
    if (const auto r = sp.result(f32, k.nan)) return *r;
    return acc.v == 0 ? (acc.sign ? 0x80000000u : 0u) : encode(acc.v, acc.v < 0, f32);
  }
  if (k.algo == MmaAlgo::tr_fdpa || k.algo == MmaAlgo::gtr_fdpa) {
    for (std::size_t k0 = 0; k0 < K; k0 += fused)
      c = two_level_step(k, in, k0, std::min(K, k0 + fused), a, b, c, k.algo == MmaAlgo::gtr_fdpa);
    return c;
  }
  const int e_zero = f16 ? k.e_zero_f16 : k.e_zero;
  const MmaRound mode = f16 ? MmaRound::rne : k.round;
  for (std::size_t k0 = 0; k0 < K; k0 += fused) {
    const std::size_t k1 = std::min(K, k0 + fused);
    Special sp;
    std::vector<std::pair<Rational, int>> terms;  // value, alignment exponent
    if (k.scale == MmaScale::group) {
      for (std::size_t g0 = k0; g0 < k1; g0 += static_cast<std::size_t>(k.group)) {
        Rational P = 0;
        bool all_zero = true;
        for (std::size_t i = g0; i < std::min(k1, g0 + static_cast<std::size_t>(k.group)); ++i) {
          const Operand x = read(a[i], in.a, in.ignore_a), y = read(b[i], in.b, in.ignore_b);
          sp.product(x, y);
          if (x.kind != Value::finite || y.kind != Value::finite) continue;
          if (x.v != 0 && y.v != 0) all_zero = false;
          P += x.v * y.v;
        }
        const Operand s = scale_of(sa, g0), t = scale_of(sb, g0);
        if (s.kind == Value::nan || t.kind == Value::nan) sp.nan = true;
        const bool zero = all_zero || s.v == 0 || t.v == 0;
        terms.emplace_back(zero ? Rational(0) : P * s.v * t.v, zero ? e_zero : s.e + t.e);
      }
    } else {
      for (std::size_t i = k0; i < k1; ++i) {
        const Operand x = read(a[i], in.a, in.ignore_a), y = read(b[i], in.b, in.ignore_b);
        sp.product(x, y);
        Rational p = x.v * y.v;
        int e = x.e + y.e;
        if (k.scale == MmaScale::product) {
          const Operand s = scale_of(sa, i), t = scale_of(sb, i);
          if (s.kind == Value::nan || t.kind == Value::nan) sp.nan = true;
          p *= s.v * t.v;
          e += s.e + t.e;
        }
        terms.emplace_back(p, p == 0 ? e_zero : e);
      }
    }
    const Operand co = read(c, in.c, 0);
    sp.add(co);
    if (const auto r = sp.result(fc, k.nan)) {
      c = *r;
      continue;  // a NaN or Inf C stays special in every later step (NaN stays NaN; Inf as §38.5)
    }
    terms.emplace_back(co.v, co.v == 0 ? e_zero : co.e);
    int emax = terms[0].second;
    for (const auto& t : terms) emax = std::max(emax, t.second);
    const Rational unit = pow2(emax - k.align);
    Rational T = 0;
    for (const auto& t : terms) T += trunc_div(t.first, unit);
    if (k.zero != MmaZero::plus)
      throw std::invalid_argument("rational oracle: fdpa steps with zero=ieee are not modelled");
    c = finish(T, false, fc, mode);
    if ((c & ((1u << (fc.bits - 1)) - 1u)) == 0) c = 0;  // zero=plus
  }
  return c;
}

std::uint32_t add_rn(std::uint32_t x, std::uint32_t y, const Format& f) {
  const Value a = decode(x, f), b = decode(y, f);
  const std::uint32_t top = 1u << (f.bits - 1), inf = ((1u << f.exp_bits) - 1u) << f.man_bits;
  if (a.kind == Value::nan || b.kind == Value::nan) return f.canonical_nan;
  if (a.kind == Value::inf && b.kind == Value::inf && a.sign != b.sign) return f.canonical_nan;
  if (a.kind == Value::inf) return (a.sign ? top : 0u) | inf;
  if (b.kind == Value::inf) return (b.sign ? top : 0u) | inf;
  const Rational v = a.v + b.v;
  const bool neg_zero = v == 0 && a.sign && b.sign;
  Policy p;
  return round(v, neg_zero, f, Round::rne, Round::rne, p, 0).code;
}

std::uint32_t scaled_add_rn32(std::uint32_t r, std::uint32_t a, std::uint32_t b, std::uint32_t q) {
  const Format& f = format(FormatId::f32);
  // a product of two codes, exact (kind, sign, value)
  struct P {
    Value::Kind kind;
    bool sign;
    Rational v;
  };
  const auto mul = [&](std::uint32_t x, std::uint32_t y) {
    const Value u = decode(x, f), w = decode(y, f);
    const bool sign = u.sign != w.sign;
    if (u.kind == Value::nan || w.kind == Value::nan) return P{Value::nan, false, 0};
    if (u.kind == Value::inf || w.kind == Value::inf) {
      const bool zero = (u.kind == Value::finite && u.v == 0) || (w.kind == Value::finite && w.v == 0);
      return zero ? P{Value::nan, false, 0} : P{Value::inf, sign, 0};
    }
    return P{Value::finite, sign, u.v * w.v};
  };
  const P s = mul(a, b);
  std::uint32_t scale;
  if (s.kind == Value::nan)
    scale = f.canonical_nan;
  else if (s.kind == Value::inf)
    scale = (s.sign ? 0x80000000u : 0u) | 0x7F800000u;
  else
    scale = rn32(s.v, s.sign);
  const P p = mul(scale, q);
  const Value rv = decode(r, f);
  if (p.kind == Value::nan || rv.kind == Value::nan) return f.canonical_nan;
  if (p.kind == Value::inf && rv.kind == Value::inf && p.sign != rv.sign) return f.canonical_nan;
  if (p.kind == Value::inf) return (p.sign ? 0x80000000u : 0u) | 0x7F800000u;
  if (rv.kind == Value::inf) return (rv.sign ? 0x80000000u : 0u) | 0x7F800000u;
  const Rational v = rv.v + p.v;
  return rn32(v, v == 0 && p.sign && rv.sign);
}

}  // namespace numref::oracle::rat
