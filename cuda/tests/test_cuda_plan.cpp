// numref CUDA tests — the vector/tail split of an element-wise launch.          spec §A.3
//
// For every combination of input/output/random-array misalignment, length and vector width
// the kernels use, the plan must (a) start chunks where every stream is 16-byte aligned,
// (b) convert every element exactly once through chunk_first() / scalar_index() (the index
// maps the kernel uses), (c) take the vector path whenever an aligned start exists.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "numref_arith/plan.hpp"

namespace {

struct Case {
  int V, in_bytes, out_bytes;
};

TEST(CudaPlan, EveryElementOnceAlignedChunks) {
  const Case cases[] = {{16, 4, 1}, {16, 2, 1}, {8, 4, 2}, {16, 1, 4}, {16, 1, 2}};
  for (const Case& c : cases)
    for (std::uintptr_t in_mis = 0; in_mis < 16; in_mis += static_cast<std::uintptr_t>(c.in_bytes))
      for (std::uintptr_t out_mis = 0; out_mis < 16; out_mis += static_cast<std::uintptr_t>(c.out_bytes))
        for (std::uintptr_t rnd_mis : {std::uintptr_t{0}, std::uintptr_t{4}, std::uintptr_t{8}, std::uintptr_t{16}})
          for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{15}, std::size_t{16},
                                std::size_t{17}, std::size_t{33}, std::size_t{100}, std::size_t{1027}}) {
            const std::uintptr_t in = 0x10000 + in_mis, out = 0x20000 + out_mis;
            const std::uintptr_t rnd = rnd_mis == 16 ? 0 : 0x30000 + rnd_mis;  // 16: no random stream
            const numref_cuda::Plan p =
                numref_cuda::plan_vectors(n, c.V, {{in, c.in_bytes}, {out, c.out_bytes}, {rnd, 4}});
            ASSERT_LE(p.head, n);
            std::vector<int> seen(n, 0);
            for (std::size_t ch = 0; ch < p.nvec; ++ch) {
              const std::size_t i0 = numref_cuda::chunk_first(ch, p.head, c.V);
              ASSERT_EQ((in + i0 * c.in_bytes) % 16, 0u);
              ASSERT_EQ((out + i0 * c.out_bytes) % 16, 0u);
              if (rnd != 0) {
                ASSERT_EQ((rnd + i0 * 4) % 16, 0u);
              }
              for (int t = 0; t < c.V; ++t) ++seen.at(i0 + static_cast<std::size_t>(t));
            }
            const std::size_t tail = p.tail_start(c.V);
            for (std::size_t t = 0; t < p.scalars(n, c.V); ++t) ++seen.at(numref_cuda::scalar_index(t, p.head, tail));
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "element " << i;
            // (c) an aligned start exists below V iff the stream phases agree; then it is used.
            bool exists = false;
            for (std::uintptr_t h = 0; h < static_cast<std::uintptr_t>(c.V) && h <= n; ++h)
              exists = exists || ((in + h * c.in_bytes) % 16 == 0 && (out + h * c.out_bytes) % 16 == 0 &&
                                  (rnd == 0 || (rnd + h * 4) % 16 == 0));
            if (exists) {
              ASSERT_EQ(p.nvec, (n - p.head) / static_cast<std::size_t>(c.V));
            } else {
              ASSERT_EQ(p.head, n);
            }
          }
}

}  // namespace
