// numref CUDA kernels — the quantize kernels of shard 1 of the element formats.   spec §A.7
#include "quantize_shard.cuh"

namespace numref_cuda::kernels {
template cudaError_t quantize_shard<1>(const QuantizePlan&, const void*, const RandomSource&, const QuantizeOutputs&,
                                       cudaStream_t, bool&);
}  // namespace numref_cuda::kernels
