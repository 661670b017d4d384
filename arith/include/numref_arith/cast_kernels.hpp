// numref CUDA kernels — THE list of the cast kernels that exist, per (source, target, mode).
//                                                                                     spec §A.2, §A.3
//
// Host-only C++ (no CUDA headers): the device launcher (cuda/src/cast_ops.cuh launch_cast), its
// validation (cast_support, support.cpp) and the host emulation (host_run.cpp, the cuda-emu
// backend) all read this one dispatch, so that the emulation runs exactly the instantiations the
// device has and refuses exactly what the device refuses.
#pragma once

#include "numref_arith/cast.cuh"

namespace numref_cuda {

// §A.3 Calls fn.template operator()<M, SV>() with the compile-time mode (and SR variant) of the
// kernel that converts S -> D under p, and returns true; false when no kernel rounds with p.mode.
// Rounding casts (S has more fraction bits than D): one straight-line kernel per mode — every
// mode of §4.2 / §5 (rne, rna, rtz, rup, rdn, sr fraction, sr add). Widening casts (decode) are
// exact whatever the mode: one kernel (instantiated as rtz).
template <class S, class D, class Fn>
bool with_cast_kernel(const CastPolicy& p, Fn&& fn) {
  if constexpr (S::man > D::man) {
    switch (p.mode) {
      case Mode::rne: fn.template operator()<Mode::rne, SrVariant::fraction>(); return true;
      case Mode::rna: fn.template operator()<Mode::rna, SrVariant::fraction>(); return true;
      case Mode::rtz: fn.template operator()<Mode::rtz, SrVariant::fraction>(); return true;
      case Mode::rup: fn.template operator()<Mode::rup, SrVariant::fraction>(); return true;
      case Mode::rdn: fn.template operator()<Mode::rdn, SrVariant::fraction>(); return true;
      case Mode::sr:
        if (p.sr_variant == SrVariant::add)
          fn.template operator()<Mode::sr, SrVariant::add>();
        else
          fn.template operator()<Mode::sr, SrVariant::fraction>();
        return true;
    }
    return false;
  } else {
    fn.template operator()<Mode::rtz, SrVariant::fraction>();
    return true;
  }
}

}  // namespace numref_cuda
