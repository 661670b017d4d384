// numref CUDA kernels — the quantize kernels of shard 2 of the element formats.   spec §A.7
#include "quantize_shard.cuh"

namespace numref_cuda::kernels {
template cudaError_t quantize_shard<2>(const QuantizePlan&, const void*, const RandomSource&, const QuantizeOutputs&,
                                       cudaStream_t, bool&);
}  // namespace numref_cuda::kernels
