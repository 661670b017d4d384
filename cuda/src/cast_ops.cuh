// numref CUDA kernels — the per-launch operators of the cast kernels.             spec §A.3
//
// An operator binds the per-element function convert_as<S, D, M, V> of cast.cuh to a
// kernel: it converts one chunk of V codes. The rounding mode (and the SR variant) is a
// template argument, so each kernel is straight-line code; the policy's special-value codes
// (NaN, Inf, overflow) come precomputed in SpecialCodes<D> (make_special_codes, once per launch).
// HW = true asks for the hardware instruction where the architecture has one (§A.5): only
// launched for policies whose arithmetic the instruction implements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cast_hw.cuh"
#include "elementwise.cuh"
#include "launch.hpp"
#include "numref_arith/cast.cuh"
#include "numref_arith/cast_kernels.hpp"
#include "numref_arith/format_traits.cuh"
#include "numref_cuda/policy_map.hpp"

namespace numref_cuda::kernels {

// Source S widened exactly to f32 bits (S is f32, or bf16: the top half of an f32).
template <class S>
__device__ __forceinline__ std::uint32_t as_f32_bits(std::uint32_t x) {
  static_assert(S::exp_bits == 8 && S::bias == 127 && (S::bits == 32 || S::bits == 16),
                "the hardware path reads f32, or bf16 widened by a shift");
  return x << (32 - S::bits);
}

template <class S, class D, Mode M, SrVariant SV = SrVariant::fraction, bool HW = false>
struct CastOp {
  static constexpr int in_bytes = S::bits / 8;
  static constexpr int out_bytes = D::bits / 8;
  static constexpr bool uses_random = M == Mode::sr;
  SpecialCodes<D> sp;
  int k = 0;
  RandomArgs rnd;

  template <int V>
  __device__ __forceinline__ void chunk(const std::uint32_t (&x)[V], std::uint32_t (&y)[V], std::size_t i0,
                                        bool& bad) const {
    constexpr bool f8_hw = HW && kHardwareF8 && D::bits == 8 && HwF8<D::id>::available;
    constexpr bool bf16_hw = HW && kHardwareBf16 && D::id == numref::FormatId::bf16 && S::id == numref::FormatId::f32;
    if constexpr (M == Mode::sr) {
      std::uint32_t r[V];
      rnd.fetch<V>(i0, r, bad);
#pragma unroll
      for (int t = 0; t < V; ++t) y[t] = convert_as<S, D, M, SV>(x[t], sp, k, r[t]);
    } else if constexpr ((f8_hw || bf16_hw) && V % 2 == 0) {
      static_assert(M == Mode::rne, "the hardware instructions round to nearest even");
#pragma unroll
      for (int t = 0; t < V; t += 2) {
        const std::uint32_t a = as_f32_bits<S>(x[t]), b = as_f32_bits<S>(x[t + 1]);
        std::uint32_t lo, hi;
        if constexpr (f8_hw) {
          const std::uint32_t d = hw_cvt_f8x2<D::id>(a, b);
          lo = d & 0xFFu;
          hi = d >> 8;
        } else {
          const std::uint32_t d = hw_cvt_bf16x2(a, b);
          lo = d & 0xFFFFu;
          hi = d >> 16;
        }
        // §A.5 NaN lanes (and ±Inf lanes the policy keeps special) take the portable code.
        y[t] = hardware_lane<S, D, f8_hw>(x[t], lo, sp);
        y[t + 1] = hardware_lane<S, D, f8_hw>(x[t + 1], hi, sp);
      }
    } else {
#pragma unroll
      for (int t = 0; t < V; ++t) y[t] = convert_as<S, D, M>(x[t], sp, 0, 0u);
    }
  }
};

template <class S>
struct E8m0Op {
  static constexpr int in_bytes = S::bits / 8;
  static constexpr int out_bytes = 1;
  static constexpr bool uses_random = false;
  E8m0Policy p;
  RandomArgs rnd;  // unused

  template <int V>
  __device__ __forceinline__ void chunk(const std::uint32_t (&x)[V], std::uint32_t (&y)[V], std::size_t, bool&) const {
#pragma unroll
    for (int t = 0; t < V; ++t) y[t] = to_e8m0<S>(x[t], p);
  }
};

// §A.3 The cast S -> D under p (a pair of format_list.hpp's is_narrow_cast / is_wide_cast): the
// kernel of cast_kernels.hpp's with_cast_kernel (the one list of the kernels, shared with the host
// emulation), one straight-line kernel per mode; the rne kernel on the hardware path (§A.5) for
// the policies whose arithmetic the instruction implements (policy_map.hpp: saturating for the
// 8-bit cvt, non-saturating for the bf16 one). Widening casts (decode) are exact: one kernel.
template <numref::FormatId SF, numref::FormatId DF>
cudaError_t launch_cast(const void* in, void* out, std::size_t n, const CastPolicy& p, const RandomArgs& rnd,
                        cudaStream_t stream) {
  using S = FloatTraits<SF>;
  using D = FloatTraits<DF>;
  const SpecialCodes<D> sp = make_special_codes<D>(p);
  const int k = p.sr_bits;
  cudaError_t e = cudaErrorInvalidValue;  // no kernel rounds with p.mode (api.cu refuses it first)
  with_cast_kernel<S, D>(p, [&]<Mode M, SrVariant SV>() {
    if constexpr (M == Mode::sr) {
      e = launch_elementwise(in, out, n, CastOp<S, D, M, SV>{sp, k, rnd}, rnd.values, stream);
    } else if constexpr (M == Mode::rne && S::man > D::man) {
      if (D::bits == 8 ? hardware_f8_path(p) : hardware_bf16_path(p))
        e = launch_elementwise(in, out, n, CastOp<S, D, M, SV, true>{sp, k, {}}, nullptr, stream);
      else
        e = launch_elementwise(in, out, n, CastOp<S, D, M>{sp, k, {}}, nullptr, stream);
    } else {
      e = launch_elementwise(in, out, n, CastOp<S, D, M>{sp, k, {}}, nullptr, stream);
    }
  });
  return e;
}

}  // namespace numref_cuda::kernels
