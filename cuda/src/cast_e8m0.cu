// numref CUDA kernels — f32 / bf16 -> f8e8m0fnu (the MX scale format), from every kWide
// format of format_list.hpp.                                                       spec §A.3
//
// Portable on every architecture (profile cuda_satfinite: floor, saturate, 0 -> 00, |x|;
// every other E8m0Policy as well). sm_100's cvt.rz/rp.satfinite.ue8m0x2 is not used: the
// phase-2 MX kernels compute their scales from amax bits with this same function.
#include "cast_ops.cuh"
#include "launch.hpp"
#include "numref_arith/format_list.hpp"

namespace numref_cuda::kernels {

cudaError_t launch_e8m0(numref::FormatId from, const void* in, void* out, std::size_t n, const E8m0Policy& p,
                        cudaStream_t stream) {
  cudaError_t e = cudaErrorInvalidValue;
  visit_format<kWide>(from, [&]<numref::FormatId SF>() {
    e = launch_elementwise(in, out, n, E8m0Op<FloatTraits<SF>>{p, {}}, nullptr, stream);
  });
  return e;
}

}  // namespace numref_cuda::kernels
