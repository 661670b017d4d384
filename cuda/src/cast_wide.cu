// numref CUDA kernels — f32 -> bf16, and 8-bit floats -> f32 / bf16 decode (format_list.hpp's
// is_wide_cast pairs).                                                            spec §A.3
//
// f32 -> bf16: rne without saturation (the wide policy of every profile) uses
// cvt.rn.bf16x2.f32 on sm_80+ (§A.5); rtz and SR are portable (rna/rup/rdn: no kernel).
// The decodes are exact (every code is a value of the wider format): one portable kernel
// serves every policy (only the NaN knob changes a result). The kernels per pair: launch_cast
// (cast_ops.cuh).
#include "cast_ops.cuh"
#include "launch.hpp"
#include "numref_arith/format_list.hpp"

namespace numref_cuda::kernels {

cudaError_t launch_wide(numref::FormatId from, numref::FormatId to, const void* in, void* out, std::size_t n,
                        const CastPolicy& p, const RandomArgs& rnd, cudaStream_t stream) {
  cudaError_t e = cudaErrorInvalidValue;
  visit_format<kWide | kNarrow>(from, [&]<numref::FormatId SF>() {
    visit_format<kWide>(to, [&]<numref::FormatId DF>() {
      if constexpr (is_wide_cast(SF, DF)) e = launch_cast<SF, DF>(in, out, n, p, rnd, stream);
    });
  });
  return e;
}

}  // namespace numref_cuda::kernels
