// numref CUDA kernels — the host-side plan of an MMA operation (§36 – §38): the operand readers
// and the step knobs that mma.cuh's functions take. Host only (it reads the reference's tables).
//                                                                        spec §36.2, §38.1, §38.6
#pragma once

#include <cstddef>
#include <vector>

#include "numref/format.hpp"
#include "numref/mma.hpp"
#include "numref_arith/mma.cuh"

namespace numref_cuda::mma {

// §36.2 How the codes of an operand type are read.
inline DecFmt dec_fmt(numref::MmaType t) {
  const numref::MmaTypeInfo& ti = numref::mma_type(t);
  const numref::Format& f = numref::format(ti.format);
  DecFmt d;
  d.bits = f.bits;
  d.man = f.man_bits;
  d.bias = f.bias;
  d.emin = f.emin();
  d.is_signed = f.is_signed;
  d.ieee = f.specials == numref::Specials::ieee;
  d.fn = f.specials == numref::Specials::fn;
  d.e8m0 = f.id == numref::FormatId::f8e8m0fnu;
  d.ignore = ti.ignore_mask;
  return d;
}

// Everything a kernel needs to evaluate a valid fdpa spec (§38): readers, knobs, the step L.
struct Plan {
  DecFmt a, b, c, s;
  Knobs k;
  std::size_t fused = 0;  // L (§38.1)
};
inline Plan plan(const numref::MmaSpec& s) {
  const numref::MmaKnobs& kn = s.model();
  Plan p;
  p.a = dec_fmt(s.a);
  p.b = dec_fmt(s.b);
  p.c = dec_fmt(s.c);
  p.s = dec_fmt(s.scale);
  p.k.f16 = s.c == numref::MmaType::f16;
  p.k.align = kn.align;
  p.k.e_zero = p.k.f16 ? kn.e_zero_f16 : kn.e_zero;
  p.k.round = kn.round;
  p.k.scale = kn.scale;
  p.k.group = kn.group;
  p.k.block = s.block;
  p.k.u0 = numref::format(numref::mma_type(s.a).format).qmin() + numref::format(numref::mma_type(s.b).format).qmin();
  p.k.nan_ones = kn.nan == numref::MmaNan::ones;
  p.k.zero_plus = kn.zero == numref::MmaZero::plus;
  p.fused = numref::mma_fused(s);
  return p;
}

// The operands of one D = A·B + C in host memory, decoded once: A's rows, B's columns (transposed)
// and the scales of each; codes one per 32-bit word, row-major, scales sa (m x k/block) and sb
// (k/block x n).
struct HostOperands {
  std::size_t k = 0, nb = 0;
  std::vector<Dec> A, Bt, SA, SBt;
  HostOperands(const Plan& p, std::size_t m, std::size_t n, std::size_t k_, const std::uint32_t* a,
               const std::uint32_t* b, const std::uint32_t* sa, const std::uint32_t* sb)
      : k(k_),
        nb(p.k.block ? k_ / static_cast<std::size_t>(p.k.block) : 0),
        A(m * k_),
        Bt(n * k_),
        SA(m * nb),
        SBt(n * nb) {
    for (std::size_t i = 0; i < m * k; ++i) A[i] = decode(a[i], p.a);
    for (std::size_t i = 0; i < k * n; ++i) Bt[(i % n) * k + i / n] = decode(b[i], p.b);
    for (std::size_t i = 0; i < m * nb; ++i) SA[i] = decode(sa[i], p.s);
    for (std::size_t i = 0; i < nb * n; ++i) SBt[(i % n) * nb + i / n] = decode(sb[i], p.s);
  }
};

// §38.1 Element (i, j) of D: its steps chained from the accumulator code c.
inline Out element(const Plan& p, const HostOperands& o, std::size_t i, std::size_t j, std::uint32_t c) {
  std::uint8_t fl = 0;
  for (std::size_t k0 = 0; k0 < o.k; k0 += p.fused) {
    const std::size_t k1 = k0 + p.fused < o.k ? k0 + p.fused : o.k;
    const Out r =
        step(o.A.data() + i * o.k, o.Bt.data() + j * o.k, o.nb ? o.SA.data() + i * o.nb : nullptr,
             o.nb ? o.SBt.data() + j * o.nb : nullptr, static_cast<int>(k0), static_cast<int>(k1), decode(c, p.c), p.k);
    c = r.bits;
    fl |= r.flags;
  }
  return {c, fl};
}

}  // namespace numref_cuda::mma
