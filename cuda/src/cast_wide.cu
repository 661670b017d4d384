// numref CUDA kernels — f32 -> bf16, and f8 -> f32 / bf16 decode.                  spec §35.3
//
// f32 -> bf16: rne without saturation (the wide policy of every profile) uses
// cvt.rn.bf16x2.f32 on sm_80+ (§35.5); rtz and SR are portable (rna/rup/rdn: no kernel).
// f8 -> f32 / bf16 is exact (every code is a value of the wider format): one portable kernel
// serves every policy (only the NaN knob changes a result).
#include "cast_ops.cuh"
#include "launch.hpp"

namespace numref_cuda::kernels {
namespace {

template <numref::FormatId SF, numref::FormatId DF>
cudaError_t launch_pair(const void* in, void* out, std::size_t n, const CastPolicy& p, const RandomArgs& rnd,
                        cudaStream_t stream) {
  using S = FloatTraits<SF>;
  using D = FloatTraits<DF>;
  const SpecialCodes<D> sp = make_special_codes<D>(p);
  const int k = p.sr_bits;
  if constexpr (S::man > D::man) {
    switch (p.mode) {
      case Mode::rne:
        if (!p.saturate)
          return launch_elementwise(in, out, n, CastOp<S, D, Mode::rne, SrVariant::fraction, true>{sp, k, {}},
                                    nullptr, stream);
        return launch_elementwise(in, out, n, CastOp<S, D, Mode::rne>{sp, k, {}}, nullptr, stream);
      case Mode::rtz: return launch_elementwise(in, out, n, CastOp<S, D, Mode::rtz>{sp, k, {}}, nullptr, stream);
      case Mode::sr:
        if (p.sr_variant == SrVariant::add)
          return launch_elementwise(in, out, n, CastOp<S, D, Mode::sr, SrVariant::add>{sp, k, rnd}, rnd.values,
                                    stream);
        return launch_elementwise(in, out, n, CastOp<S, D, Mode::sr>{sp, k, rnd}, rnd.values, stream);
      default: break;  // rna, rup, rdn: per-element functions only (api.cu refuses them)
    }
    return cudaErrorInvalidValue;
  } else {
    // Widening (decode): exact whatever the mode (rtz is as good as any), so one kernel.
    (void)rnd;
    return launch_elementwise(in, out, n, CastOp<S, D, Mode::rtz>{sp, k, {}}, nullptr, stream);
  }
}

}  // namespace

cudaError_t launch_wide(numref::FormatId from, numref::FormatId to, const void* in, void* out, std::size_t n,
                        const CastPolicy& p, const RandomArgs& rnd, cudaStream_t stream) {
  using F = numref::FormatId;
  if (from == F::f32 && to == F::bf16) return launch_pair<F::f32, F::bf16>(in, out, n, p, rnd, stream);
  if (from == F::f8e4m3fn && to == F::f32) return launch_pair<F::f8e4m3fn, F::f32>(in, out, n, p, rnd, stream);
  if (from == F::f8e5m2 && to == F::f32) return launch_pair<F::f8e5m2, F::f32>(in, out, n, p, rnd, stream);
  if (from == F::f8e4m3fn && to == F::bf16) return launch_pair<F::f8e4m3fn, F::bf16>(in, out, n, p, rnd, stream);
  if (from == F::f8e5m2 && to == F::bf16) return launch_pair<F::f8e5m2, F::bf16>(in, out, n, p, rnd, stream);
  return cudaErrorInvalidValue;
}

}  // namespace numref_cuda::kernels
