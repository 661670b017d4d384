// numref CUDA kernels — the MMA model run on the CPU (host emulation of mma.cu; the walk:
// host_walk.hpp).                                                           spec §36 – §38, §A.4
#include <cstdint>
#include <stdexcept>

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
  const mma::HostOperands ops(pl, m, n, k, a, b, sa, sb);  // the decode kernels
  // the mma kernel: one unit per element of D
  walk_units(static_cast<std::uint64_t>(m * n), walk, [&](std::uint32_t, std::uint64_t e) {
    const mma::Out r = mma::element(pl, ops, static_cast<std::size_t>(e / n), static_cast<std::size_t>(e % n), c[e]);
    d[e] = r.bits;
    if (flags) flags[e] = r.flags;
  });
}

}  // namespace numref_cuda::host
