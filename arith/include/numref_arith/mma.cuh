// numref CUDA kernels — the MMA dot-product model (§38), host and device.        spec §36 – §38
//
// The fused truncated dot-product-add steps of §38 as __host__ __device__ functions in integers
// (§1.3, §A.1), shared by cpu-fast (conformance/backends/cpu_fast/fast_mma.cpp) and the kernels
// that will check a GPU's mma / wgmma / tcgen05 results against the same arithmetic:
//
//   decode(code, fmt)        §36.2 / §38.2 an operand as sig · 2^x (sig signed) with its
//                            alignment exponent e = max(E, emin); Inf and NaN classified
//   step(...)                §38.1 – §38.5 one step: specials, E = max e, every term truncated
//                            toward zero to a multiple of 2^(E − F), the exact 64-bit sum, one
//                            rounding to the accumulator (cast.cuh's round_code), the §36.4 flags
//
// A term's aligned value has at most F + 2 + (scale bits) bits (F <= 35 in every profile, §39),
// so one step's sum of at most 65 terms stays far inside 63 bits.
#pragma once

#include <cstdint>

#include "numref/mma.hpp"  // the knob enums (MmaRound, MmaScale)
#include "numref/policy.hpp"
#include "numref_arith/cast.cuh"
#include "numref_arith/config.cuh"
#include "numref_arith/format_traits.cuh"
#include "numref_arith/intmath.cuh"

namespace numref_cuda::mma {

// §36.2 How an operand type's codes are read: the format's fields and the ignored bits.
struct DecFmt {
  int bits = 8, man = 3, bias = 7, emin = -6;
  bool is_signed = true, ieee = false, fn = false, e8m0 = false;
  std::uint32_t ignore = 0;
};

// An operand: value = sig · 2^x (sig carries the sign), alignment exponent e; cls 0 finite,
// 1 infinite (sig = ±1), 2 NaN.
struct Dec {
  std::int64_t sig = 0;
  int x = 0, e = 0;
  std::uint8_t cls = 0;
  bool neg = false;  // the sign bit (a zero's too)
};

NUMREF_HD NUMREF_FORCEINLINE Dec decode(std::uint32_t code, const DecFmt& f) {
  const std::uint32_t mask = f.bits >= 32 ? 0xFFFFFFFFu : ((1u << f.bits) - 1u);
  code &= mask & ~f.ignore;
  Dec d;
  if (f.e8m0) {  // §2.1 f8e8m0fnu: 2^(code − 127), FF NaN
    if (code == 0xFFu) {
      d.cls = 2;
      return d;
    }
    d.sig = 1;
    d.x = d.e = static_cast<int>(code) - 127;
    return d;
  }
  const std::uint32_t sbit = f.is_signed ? (1u << (f.bits - 1)) : 0u;
  const bool neg = (code & sbit) != 0u;
  d.neg = neg;
  const std::uint32_t mag = code & (mask & ~sbit);
  const std::uint32_t ef = mag >> f.man, fr = mag & ((1u << f.man) - 1u);
  const std::uint32_t ones = (mask & ~sbit) >> f.man;
  if ((f.ieee && ef == ones) || (f.fn && mag == (mask & ~sbit))) {
    d.cls = (f.ieee && fr == 0u) ? 1 : 2;
    d.sig = neg ? -1 : 1;
    return d;
  }
  const std::int64_t s = ef == 0u ? static_cast<std::int64_t>(fr) : static_cast<std::int64_t>(fr | (1u << f.man));
  d.sig = neg ? -s : s;
  d.e = ef == 0u ? f.emin : static_cast<int>(ef) - f.bias;
  d.x = d.e - f.man;
  return d;
}

// The knobs of one step (§38.6) for one accumulator type, as the kernels read them.
struct Knobs {
  int align = 25;                                 // F
  int e_zero = -133;                              // for this accumulator
  numref::MmaRound round = numref::MmaRound::rz;  // binary32 accumulator (binary16: rne)
  numref::MmaScale scale = numref::MmaScale::none;
  int group = 0;          // G for scale=group
  int block = 0;          // scale block along K (0: none)
  int u0 = 0;             // scale=group: products are integer multiples of 2^u0 (qmin_a + qmin_b)
  bool nan_ones = true;   // nan=ones (else canonical)
  bool zero_plus = true;  // zero=plus (else ieee)
  bool f16 = false;       // binary16 accumulator (else binary32)
};

struct Out {
  std::uint32_t bits;
  std::uint8_t flags;
};

namespace detail {

template <class D, numref::Round M>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t round_code(bool neg, std::uint32_t sig, int exp) {
  return ::numref_cuda::detail::round_code<D, M>(neg, sig, exp, 0, 0u);
}
// Whether sig · 2^exp (sig != 0) is a value of D's grid (overflow aside).
template <class D>
NUMREF_HD NUMREF_FORCEINLINE bool exact_in(std::uint32_t sig, int exp) {
  const int E = exp + bitlen32(sig) - 1;
  const int q = (E - D::man) > D::qmin ? (E - D::man) : D::qmin;
  const int d = q - exp;
  return d <= 0 || (d < 32 && (sig & ((1u << d) - 1u)) == 0u);
}
// §9.2 For V = sig · 2^exp in the binade just below 2^emin: whether rounding to nearest (ties
// to even) to D's precision with an unbounded exponent gives 2^emin, i.e. V >= 2^emin − 2^(emin − man − 2).
template <class D>
NUMREF_HD NUMREF_FORCEINLINE bool rounds_up_to_binade(std::uint32_t sig, int exp) {
  const int t = D::emin - D::man - 2;
  const std::uint64_t R = (std::uint64_t{1} << (D::man + 2)) - 1u;  // the threshold in units of 2^t
  if (exp >= t) return (static_cast<std::uint64_t>(sig) << (exp - t)) >= R;
  const int s = t - exp;
  return s < 40 && static_cast<std::uint64_t>(sig) >= (R << s);
}

// |v| >> n truncated toward zero, and whether a non-zero bit was dropped.
NUMREF_HD NUMREF_FORCEINLINE std::int64_t trunc_shift(std::int64_t v, int n, bool& dropped) {
  if (n <= 0) return v << (-n);  // callers keep -n below the 63-bit budget (§38 header)
  const std::uint64_t m = static_cast<std::uint64_t>(v < 0 ? -v : v);
  const std::uint64_t q = n >= 64 ? 0u : (m >> n);
  if ((n >= 64 ? m : (m & ((std::uint64_t{1} << n) - 1u))) != 0u) dropped = true;
  return v < 0 ? -static_cast<std::int64_t>(q) : static_cast<std::int64_t>(q);
}

// §38.5 T · 2^u rounded into the accumulator; flags as §36.4.
NUMREF_HD inline Out finish(std::int64_t T, int u, bool inexact, bool all_neg_zero, const Knobs& k) {
  std::uint8_t flags = inexact ? numref::kInexact : 0;
  if (T == 0) return {(!k.zero_plus && all_neg_zero) ? (k.f16 ? 0x8000u : 0x80000000u) : 0u, flags};
  const bool neg = T < 0;
  std::uint64_t m = static_cast<std::uint64_t>(neg ? -T : T);
  // 32 significant bits and a sticky bit below them: the rounding position of a 24- or 11-bit
  // result lies far above bit 0, so the sticky bit decides exactly as the dropped bits would
  int exp = u;
  const int L = bitlen64(m);
  if (L > 32) {
    const int s = L - 32;
    const bool sticky = (m & ((std::uint64_t{1} << s) - 1u)) != 0u;
    m = (m >> s) | (sticky ? 1u : 0u);
    exp += s;
  }
  const std::uint32_t sig = static_cast<std::uint32_t>(m);
  const int E = exp + bitlen32(sig) - 1;  // floor(log2 |V|) (the sticky bit never changes it)
  std::uint32_t code;
  bool rinexact;
  if (k.f16) {
    using D = FloatTraits<numref::FormatId::f16>;
    code = round_code<D, numref::Round::rne>(neg, sig, exp);
    rinexact = !exact_in<D>(sig, exp);
    // §9.2 tininess after rounding: RNE to 11 bits with an unbounded exponent below 2^-14
    const bool tiny = E < -15 || (E == -15 && !rounds_up_to_binade<D>(sig, exp));
    if (code > D::max_finite) {
      flags |= numref::kOverflow | numref::kInexact;
      return {(neg ? D::sign_bit : 0u) | D::inf_mag, flags};
    }
    if (rinexact) flags |= numref::kInexact | (tiny ? numref::kUnderflow : 0);
    if (code == 0u) return {k.zero_plus ? 0u : (neg ? D::sign_bit : 0u), flags};
    return {code | (neg ? D::sign_bit : 0u), flags};
  }
  using D = FloatTraits<numref::FormatId::f32>;
  const bool rne = k.round == numref::MmaRound::rne;
  code = rne ? round_code<D, numref::Round::rne>(neg, sig, exp) : round_code<D, numref::Round::rtz>(neg, sig, exp);
  rinexact = !exact_in<D>(sig, exp);
  if (code > D::max_finite) {  // rne: IEEE overflow; rz / rz13: a magnitude of 2^128 or more (§38.5)
    flags |= numref::kOverflow | numref::kInexact;
    return {(neg ? D::sign_bit : 0u) | D::inf_mag, flags};
  }
  if (k.round == numref::MmaRound::rz13 && (code & 0x3FFu) != 0u) {
    rinexact = true;
    code &= ~0x3FFu;  // RZ to 23 then to 13 fraction bits is RZ to 13 (truncation composes)
  }
  const bool tiny = rne ? (E < -127 || (E == -127 && !rounds_up_to_binade<D>(sig, exp))) : E < -126;
  if (rinexact) flags |= numref::kInexact | (tiny ? numref::kUnderflow : 0);
  if (code == 0u) return {k.zero_plus ? 0u : (neg ? D::sign_bit : 0u), flags};
  return {code | (neg ? D::sign_bit : 0u), flags};
}

}  // namespace detail

// §38.1 – §38.5 One step over products [k0, k1) of a (row) and b (column), scales sa / sb per
// block (indexed k / block), accumulator code c. Returns the step's result and flags.
NUMREF_HD inline Out step(const Dec* a, const Dec* b, const Dec* sa, const Dec* sb, int k0, int k1, const Dec& c,
                          const Knobs& k) {
  bool nan = false, invalid = false, pinf = false, ninf = false;
  // specials (§38.5, decided before any alignment)
  for (int i = k0; i < k1; ++i) {
    const Dec &x = a[i], &y = b[i];
    if (x.cls == 2 || y.cls == 2) {
      nan = true;
      continue;
    }
    if (x.cls == 1 || y.cls == 1) {
      if ((x.cls == 0 && x.sig == 0) || (y.cls == 0 && y.sig == 0)) {
        invalid = true;
        continue;
      }
      ((x.sig < 0) != (y.sig < 0) ? ninf : pinf) = true;
    }
    if (k.block && (sa[i / k.block].cls == 2 || sb[i / k.block].cls == 2)) nan = true;
  }
  if (c.cls == 2) nan = true;
  if (c.cls == 1) (c.sig < 0 ? ninf : pinf) = true;
  if (nan || invalid || (pinf && ninf)) {
    const std::uint32_t code = k.f16 ? (k.nan_ones ? 0x7FFFu : 0x7E00u) : (k.nan_ones ? 0x7FFFFFFFu : 0x7FC00000u);
    const bool inv = invalid || (!nan && pinf && ninf);
    return {code, static_cast<std::uint8_t>(inv ? numref::kInvalid : 0)};
  }
  if (pinf || ninf) return {k.f16 ? (ninf ? 0xFC00u : 0x7C00u) : (ninf ? 0xFF800000u : 0x7F800000u), 0};

  // the terms: value sig · 2^x, alignment exponent e (a zero term: e_zero)
  constexpr int kMaxGroups = 8;
  std::int64_t gsig[kMaxGroups];
  int gx[kMaxGroups], ge[kMaxGroups];
  int ng = 0;
  bool all_neg_zero = true;
  int E = c.sig == 0 ? k.e_zero : c.e;
  if (c.sig != 0 || !c.neg) all_neg_zero = false;
  if (k.scale == numref::MmaScale::group) {
    for (int g0 = k0; g0 < k1; g0 += k.group) {
      std::int64_t P = 0;
      bool zero = true;
      const int g1 = g0 + k.group < k1 ? g0 + k.group : k1;
      for (int i = g0; i < g1; ++i) {
        const std::int64_t n = a[i].sig * b[i].sig;
        if (n == 0) continue;
        zero = false;
        P += n << (a[i].x + b[i].x - k.u0);
      }
      const Dec &p = sa[g0 / k.block], &q = sb[g0 / k.block];
      const std::int64_t ss = p.sig * q.sig;
      const bool zt = zero || ss == 0;
      gsig[ng] = zt ? 0 : P * ss;
      gx[ng] = k.u0 + p.x + q.x;
      ge[ng] = zt ? k.e_zero : p.e + q.e;
      if (ge[ng] > E) E = ge[ng];
      all_neg_zero = false;  // a group term is never a signed zero
      ++ng;
    }
  } else {
    for (int i = k0; i < k1; ++i) {
      std::int64_t n = a[i].sig * b[i].sig;
      int e = a[i].e + b[i].e;
      if (k.scale == numref::MmaScale::product) {
        n *= sa[i / k.block].sig * sb[i / k.block].sig;
        e += sa[i / k.block].e + sb[i / k.block].e;
      }
      if (n != 0 || a[i].neg == b[i].neg) all_neg_zero = false;
      const int te = n == 0 ? k.e_zero : e;  // a zero term's exponent is e_zero (§38.2)
      if (te > E) E = te;
    }
  }
  const int u = E - k.align;
  bool dropped = false;
  std::int64_t T = c.sig == 0 ? 0 : detail::trunc_shift(c.sig, u - c.x, dropped);
  if (k.scale == numref::MmaScale::group) {
    for (int g = 0; g < ng; ++g)
      if (gsig[g] != 0) T += detail::trunc_shift(gsig[g], u - gx[g], dropped);
  } else {
    for (int i = k0; i < k1; ++i) {
      std::int64_t n = a[i].sig * b[i].sig;
      if (n == 0) continue;
      int x = a[i].x + b[i].x;
      if (k.scale == numref::MmaScale::product) {
        n *= sa[i / k.block].sig * sb[i / k.block].sig;
        x += sa[i / k.block].x + sb[i / k.block].x;
      }
      T += detail::trunc_shift(n, u - x, dropped);
    }
  }
  return detail::finish(T, u, dropped, all_neg_zero, k);
}

}  // namespace numref_cuda::mma
