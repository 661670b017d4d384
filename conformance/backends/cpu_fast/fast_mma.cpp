// numref backend "cpu-fast" — the MMA dot-product model (§38) over whole matrices.     spec §36 – §38
#include "fast_mma.hpp"

#include <stdexcept>

#include "numref_arith/mma.cuh"
#include "numref_arith/mma_plan.hpp"

namespace numref::cpu_fast {

namespace am = numref_cuda::mma;

bool mma_supported(const MmaSpec& s) { return s.model().algo == MmaAlgo::fdpa; }

void mma(const MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const std::uint32_t* a, const std::uint32_t* b,
         const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d,
         std::uint8_t* flags) {
  if (!mma_supported(s)) throw std::invalid_argument("cpu-fast: it computes the fdpa models (§38) only");
  const am::Plan pl = am::plan(s);
  const am::HostOperands ops(pl, m, n, k, a, b, sa, sb);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const am::Out r = am::element(pl, ops, i, j, c[i * n + j]);
      d[i * n + j] = r.bits;
      if (flags) flags[i * n + j] = r.flags;
    }
}

}  // namespace numref::cpu_fast
