// numref CUDA kernels — the rounding casts f32 / bf16 -> 8-bit floats (format_list.hpp's
// is_narrow_cast pairs: kWide -> kNarrow).                                        spec §A.3
//
// Profiles (§A.2): rne + saturate (the cuda_satfinite narrow policy, whatever its NaN/Inf
// knobs) runs the hardware instruction on sm_89+ where the target has one (§A.5, cast_hw.cuh)
// and the portable path elsewhere; every other policy the mapping accepts (cuda_nosat, ocp,
// ml_dtypes, SR, ...) runs the portable path. The kernels per pair: launch_cast (cast_ops.cuh).
#include "cast_ops.cuh"
#include "launch.hpp"
#include "numref_arith/format_list.hpp"

namespace numref_cuda::kernels {

cudaError_t launch_narrow(numref::FormatId from, numref::FormatId to, const void* in, void* out, std::size_t n,
                          const CastPolicy& p, const RandomArgs& rnd, cudaStream_t stream) {
  cudaError_t e = cudaErrorInvalidValue;
  visit_format<kWide>(from, [&]<numref::FormatId SF>() {
    visit_format<kNarrow>(to, [&]<numref::FormatId DF>() { e = launch_cast<SF, DF>(in, out, n, p, rnd, stream); });
  });
  return e;
}

}  // namespace numref_cuda::kernels
