// numref CUDA kernels — f32 / bf16 -> f8e4m3fn / f8e5m2 casts.                    spec §35.3
//
// Profiles (§35.2): rne + saturate (the cuda_satfinite narrow policy, whatever its NaN/Inf
// knobs) runs the hardware instruction on sm_89+ (§35.5) and the portable path elsewhere;
// every other policy the mapping accepts (cuda_nosat, ocp, ml_dtypes, SR, ...) runs the
// portable path. One kernel per rounding mode offered (rne, rtz, sr fraction, sr add), each
// straight-line code; rna/rup/rdn exist in the per-element functions only (no profile uses
// them, and every kernel costs compile time on every architecture).
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
  switch (p.mode) {
    case Mode::rne:
      if (p.saturate)
        return launch_elementwise(in, out, n, CastOp<S, D, Mode::rne, SrVariant::fraction, true>{sp, k, {}},
                                  nullptr, stream);
      return launch_elementwise(in, out, n, CastOp<S, D, Mode::rne>{sp, k, {}}, nullptr, stream);
    case Mode::rtz: return launch_elementwise(in, out, n, CastOp<S, D, Mode::rtz>{sp, k, {}}, nullptr, stream);
    case Mode::sr:
      if (p.sr_variant == SrVariant::add)
        return launch_elementwise(in, out, n, CastOp<S, D, Mode::sr, SrVariant::add>{sp, k, rnd}, rnd.values, stream);
      return launch_elementwise(in, out, n, CastOp<S, D, Mode::sr>{sp, k, rnd}, rnd.values, stream);
    default: break;  // rna, rup, rdn: per-element functions only (api.cu refuses them)
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_narrow(numref::FormatId from, numref::FormatId to, const void* in, void* out, std::size_t n,
                          const CastPolicy& p, const RandomArgs& rnd, cudaStream_t stream) {
  using F = numref::FormatId;
  if (from == F::f32 && to == F::f8e4m3fn) return launch_pair<F::f32, F::f8e4m3fn>(in, out, n, p, rnd, stream);
  if (from == F::f32 && to == F::f8e5m2) return launch_pair<F::f32, F::f8e5m2>(in, out, n, p, rnd, stream);
  if (from == F::bf16 && to == F::f8e4m3fn) return launch_pair<F::bf16, F::f8e4m3fn>(in, out, n, p, rnd, stream);
  if (from == F::bf16 && to == F::f8e5m2) return launch_pair<F::bf16, F::f8e5m2>(in, out, n, p, rnd, stream);
  return cudaErrorInvalidValue;
}

}  // namespace numref_cuda::kernels
