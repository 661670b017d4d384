// numref CUDA kernels — how an element-wise launch splits n elements.             spec §A.3
//
// A launch converts elements [0, n) in three parts: a scalar head [0, head), nvec vector
// chunks of V elements starting at `head` (every stream 16-byte aligned there), and a
// scalar tail [head + nvec*V, n). plan_vectors() chooses head; chunk_first() and
// scalar_index() are the index maps the kernel uses, so the host tests can check that
// every element is converted exactly once for any pointer alignment and length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "numref_arith/config.cuh"

namespace numref_cuda {

struct Plan {
  std::size_t head = 0;  // scalar elements before the first chunk
  std::size_t nvec = 0;  // whole chunks of V elements
  NUMREF_HD std::size_t tail_start(int V) const { return head + nvec * static_cast<std::size_t>(V); }
  // Number of scalar elements (head and tail).
  NUMREF_HD std::size_t scalars(std::size_t n, int V) const { return head + (n - tail_start(V)); }
};

// §A.3 The first element index h < V at which every stream (address, bytes per element) is
// 16-byte aligned, with the whole chunks that follow; no chunks when there is no such h (the
// streams' misalignments disagree): then all n elements are scalar. A null address is not a
// stream.
inline Plan plan_vectors(std::size_t n, int V, std::initializer_list<std::pair<std::uintptr_t, int>> streams) {
  for (std::size_t h = 0; h < static_cast<std::size_t>(V) && h <= n; ++h) {
    bool ok = true;
    for (const auto& [addr, bytes] : streams)
      if (addr != 0u && (addr + h * static_cast<std::size_t>(bytes)) % 16u != 0u) ok = false;
    if (ok) return {h, (n - h) / static_cast<std::size_t>(V)};
  }
  return {n, 0};
}

// §A.3 Element index of the first element of chunk c.
NUMREF_HD inline std::size_t chunk_first(std::size_t c, std::size_t head, int V) {
  return head + c * static_cast<std::size_t>(V);
}
// §A.3 Element index of scalar work item t (t < head: the head; else the tail).
NUMREF_HD inline std::size_t scalar_index(std::size_t t, std::size_t head, std::size_t tail_start) {
  return t < head ? t : tail_start + (t - head);
}

}  // namespace numref_cuda
