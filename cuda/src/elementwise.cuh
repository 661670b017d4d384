// numref CUDA kernels — the element-wise streaming kernel every cast is built on.   spec §A.3
//
// One launch converts n elements in[i] -> out[i] (and, for stochastic rounding, reads the
// random value of element i, §A.3). Memory is walked in 16-byte vectors: with V elements
// per vector chunk (16 bytes on the narrower side: V = 16 for f32 -> f8, 8 for f32 -> bf16,
// 16 for f8 -> f32), a thread loads V inputs with 16-byte loads, converts them, and stores V
// outputs with 16-byte stores, then moves on by the grid's size (grid-stride loop).
//
// Alignment and tails: the host picks `head` < V, the first element at which every stream
// (input, output, explicit random values) is 16-byte aligned; elements [0, head) and the
// tail after the last whole chunk are converted one by one (also grid-stride). When no such
// head exists (the streams' misalignments disagree), every element is converted one by one.
// The element order, and hence the random value of each element, never depends on the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numref_arith/cast.cuh"
#include "numref_arith/philox.cuh"
#include "numref_arith/plan.hpp"

namespace numref_cuda::kernels {

// §A.3 Where a stochastic-rounding launch gets r_i.
struct RandomArgs {
  const std::uint32_t* values = nullptr;  // explicit: one value per element (element order)
  PhiloxStream philox;                    // used when values == nullptr
  int k = 0;                              // bits per value
  std::uint32_t* status = nullptr;        // bit 0 set when an explicit value has r >= 2^k (§4.3)

  // The random values of elements i0 .. i0 + V - 1. Explicit values are loaded with 16-byte
  // loads when V is a multiple of 4 (the host aligned them); Philox words are shared: one
  // block gives 4 consecutive elements of the stream.
  template <int V>
  __device__ __forceinline__ void fetch(std::size_t i0, std::uint32_t (&r)[V], bool& bad) const {
    if (values != nullptr) {
      if constexpr (V % 4 == 0) {
#pragma unroll
        for (int w = 0; w < V / 4; ++w) {
          const uint4 v = reinterpret_cast<const uint4*>(values + i0)[w];
          r[4 * w + 0] = v.x;
          r[4 * w + 1] = v.y;
          r[4 * w + 2] = v.z;
          r[4 * w + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int t = 0; t < V; ++t) r[t] = values[i0 + t];
      }
#pragma unroll
      for (int t = 0; t < V; ++t) bad |= !sr_value_valid(r[t], k);
      return;
    }
    philox.values<V>(i0, k, r);
  }
};

// Storage word of a code of `bytes` bytes.
template <int Bytes>
struct Storage;
template <>
struct Storage<1> {
  using type = std::uint8_t;
};
template <>
struct Storage<2> {
  using type = std::uint16_t;
};
template <>
struct Storage<4> {
  using type = std::uint32_t;
};

// §A.3 The element-wise kernel. Op provides
//   static constexpr int in_bytes, out_bytes;             storage sizes of a code
//   template <int V> __device__ void chunk(const std::uint32_t (&x)[V], std::uint32_t (&y)[V],
//                                          std::size_t i0, bool& bad) const;
// (x: input codes of elements i0 .. i0+V-1, y: output codes; `bad` is set when a random
// value is invalid). V is the vector width; scalar elements use chunk<1>.
template <class Op>
struct VectorWidth {
  static constexpr int narrow = Op::in_bytes < Op::out_bytes ? Op::in_bytes : Op::out_bytes;
  static constexpr int value = 16 / narrow;
};

template <class Op>
__global__ void __launch_bounds__(256) elementwise_kernel(const void* __restrict__ in_ptr, void* __restrict__ out_ptr,
                                                          std::size_t n, std::size_t head, std::size_t nvec, Op op) {
  using In = typename Storage<Op::in_bytes>::type;
  using Out = typename Storage<Op::out_bytes>::type;
  constexpr int V = VectorWidth<Op>::value;
  const In* __restrict__ in = static_cast<const In*>(in_ptr);
  Out* __restrict__ out = static_cast<Out*>(out_ptr);
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  bool bad = false;

  // Vector body: chunk c covers elements head + c*V .. head + c*V + V - 1, all 16-byte aligned.
  for (std::size_t c = tid; c < nvec; c += stride) {
    const std::size_t i0 = chunk_first(c, head, V);
    std::uint32_t x[V], y[V];
    constexpr int in_vecs = V * Op::in_bytes / 16;
#pragma unroll
    for (int w = 0; w < in_vecs; ++w) {
      const uint4 v = reinterpret_cast<const uint4*>(in + i0)[w];
      In e[16 / Op::in_bytes];
      memcpy(e, &v, 16);
#pragma unroll
      for (int t = 0; t < 16 / Op::in_bytes; ++t) x[w * (16 / Op::in_bytes) + t] = e[t];
    }
    op.template chunk<V>(x, y, i0, bad);
    constexpr int out_vecs = V * Op::out_bytes / 16;
#pragma unroll
    for (int w = 0; w < out_vecs; ++w) {
      Out e[16 / Op::out_bytes];
#pragma unroll
      for (int t = 0; t < 16 / Op::out_bytes; ++t) e[t] = static_cast<Out>(y[w * (16 / Op::out_bytes) + t]);
      uint4 v;
      memcpy(&v, e, 16);
      reinterpret_cast<uint4*>(out + i0)[w] = v;
    }
  }

  // Scalar head [0, head) and tail [head + nvec*V, n).
  const Plan pl{head, nvec};
  const std::size_t tail_start = pl.tail_start(V);
  const std::size_t scalars = pl.scalars(n, V);
  for (std::size_t t = tid; t < scalars; t += stride) {
    const std::size_t i = scalar_index(t, head, tail_start);
    std::uint32_t x[1] = {in[i]}, y[1];
    op.template chunk<1>(x, y, i, bad);
    out[i] = static_cast<Out>(y[0]);
  }

  if constexpr (Op::uses_random) {
    if (bad && op.rnd.status != nullptr) atomicOr(op.rnd.status, 1u);
  }
}

}  // namespace numref_cuda::kernels
