// numref CUDA kernels — the MMA model run on the CPU (host emulation of mma.cu; the walk:
// host_walk.hpp).                                                           spec §36 – §38, §A.4
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "host_walk.hpp"
#include "numref_arith/mma.cuh"
#include "numref_arith/mma_plan.hpp"
#include "numref_cuda/host_run.hpp"

namespace numref_cuda::host {

void mma(const numref::MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const std::uint32_t* a,
         const std::uint32_t* b, const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb,
         std::uint32_t* d, std::uint8_t* flags, const Walk& walk) {
  if (s.model().algo != numref::MmaAlgo::fdpa)
    throw std::invalid_argument(
        "mma: the kernels compute the fdpa models (§38); the ideal result (§37) is the reference's");
  const mma::Plan pl = mma::plan(s);
  const std::size_t nb = s.block ? k / static_cast<std::size_t>(s.block) : 0;
  // the decode kernels: A row-major, B and its scales transposed (one column of D contiguous)
  std::vector<mma::Dec> A(m * k), Bt(n * k), SA(m * nb), SBt(n * nb);
  for (std::size_t i = 0; i < m * k; ++i) A[i] = mma::decode(a[i], pl.a);
  for (std::size_t i = 0; i < k * n; ++i) Bt[(i % n) * k + i / n] = mma::decode(b[i], pl.b);
  for (std::size_t i = 0; i < m * nb; ++i) SA[i] = mma::decode(sa[i], pl.s);
  for (std::size_t i = 0; i < nb * n; ++i) SBt[(i % n) * nb + i / n] = mma::decode(sb[i], pl.s);
  // the mma kernel: one unit per element of D
  walk_units(static_cast<std::uint64_t>(m * n), walk, [&](std::uint32_t, std::uint64_t e) {
    const std::size_t i = static_cast<std::size_t>(e / n), j = static_cast<std::size_t>(e % n);
    std::uint32_t acc = c[e];
    std::uint8_t fl = 0;
    for (std::size_t k0 = 0; k0 < k; k0 += pl.fused) {
      const std::size_t k1 = k0 + pl.fused < k ? k0 + pl.fused : k;
      const mma::Out r = mma::step(A.data() + i * k, Bt.data() + j * k, nb ? SA.data() + i * nb : nullptr,
                                   nb ? SBt.data() + j * nb : nullptr, static_cast<int>(k0), static_cast<int>(k1),
                                   mma::decode(acc, pl.c), pl.k);
      acc = r.bits;
      fl |= r.flags;
    }
    d[e] = acc;
    if (flags) flags[e] = fl;
  });
}

}  // namespace numref_cuda::host
