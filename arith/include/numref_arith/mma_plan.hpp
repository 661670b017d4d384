// numref CUDA kernels — the host-side plan of an MMA operation (§36 – §38): the operand readers
// and the step knobs that mma.cuh's functions take. Host only (it reads the reference's tables).
//                                                                        spec §36.2, §38.1, §38.6
#pragma once

#include <cstddef>

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

}  // namespace numref_cuda::mma
