// numref CUDA kernels — the quantize kernels, compiled in shards.                  spec §A.7
//
// The quantize / fake-quant kernels are one instantiation per (source, element) pair of
// format_list.hpp, each for five architectures: too much for one translation unit. They are
// compiled in kQuantizeShards translation units, quantize_shard<K>.cu, the element formats (the
// kElement rows of kKernelFormats, in order) dealt round-robin, so that the build compiles them in
// parallel; try_quantize (quantize.cu) calls the shard of the plan's element. A new element row
// needs no edit here; a new shard is one more quantize_shard<K>.cu and kQuantizeShards + 1.
#pragma once

#include <cuda_runtime.h>

#include "numref/format.hpp"
#include "numref_arith/format_list.hpp"
#include "numref_cuda/api.hpp"

namespace numref_cuda::kernels {

inline constexpr int kQuantizeShards = 3;

// The shard of element format `id`: its position among the kElement rows, modulo
// kQuantizeShards; -1 when the kernels have no such element.
constexpr int quantize_shard_of(numref::FormatId id) {
  int i = 0;
  for (const KernelFormat& k : kKernelFormats) {
    if ((k.roles & kElement) == 0u) continue;
    if (k.id == id) return i % kQuantizeShards;
    ++i;
  }
  return -1;
}

// §A.7 The quantize kernels of p (p.element in shard K) for p.source and p.element, or `found`
// false when the kernels read no such source or have no such element. Defined in
// quantize_shard.cuh, instantiated by quantize_shard<K>.cu only (a TU that sees the definition
// and names quantize_shard<K> would compile that shard's kernels again).
template <int K>
cudaError_t quantize_shard(const QuantizePlan& p, const void* x, const RandomSource& rnd, const QuantizeOutputs& out,
                           cudaStream_t stream, bool& found);

}  // namespace numref_cuda::kernels
