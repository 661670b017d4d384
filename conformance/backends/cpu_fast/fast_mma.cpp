// numref backend "cpu-fast" — the MMA dot-product model (§38) over whole matrices.     spec §36 – §38
#include "fast_mma.hpp"

#include <stdexcept>
#include <vector>

#include "numref_arith/mma.cuh"
#include "numref_arith/mma_plan.hpp"

namespace numref::cpu_fast {

namespace am = numref_cuda::mma;

bool mma_supported(const MmaSpec& s) { return s.model().algo == MmaAlgo::fdpa; }

void mma(const MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const std::uint32_t* a, const std::uint32_t* b,
         const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d,
         std::uint8_t* flags) {
  if (!mma_supported(s)) throw std::invalid_argument("cpu-fast: the ideal model is the reference's");
  const am::Plan pl = am::plan(s);
  const std::size_t L = pl.fused;
  const std::size_t nb = s.block ? k / static_cast<std::size_t>(s.block) : 0;
  const am::DecFmt &fa = pl.a, &fb = pl.b, &fc = pl.c, &fs = pl.s;
  const am::Knobs& K = pl.k;
  // decoded once: A's rows, B's columns (transposed), the scales per row / column
  std::vector<am::Dec> A(m * k), Bt(n * k), SA(m * nb), SBt(n * nb);
  for (std::size_t i = 0; i < m * k; ++i) A[i] = am::decode(a[i], fa);
  for (std::size_t kk = 0; kk < k; ++kk)
    for (std::size_t j = 0; j < n; ++j) Bt[j * k + kk] = am::decode(b[kk * n + j], fb);
  for (std::size_t i = 0; i < m * nb; ++i) SA[i] = am::decode(sa[i], fs);
  for (std::size_t kk = 0; kk < nb; ++kk)
    for (std::size_t j = 0; j < n; ++j) SBt[j * nb + kk] = am::decode(sb[kk * n + j], fs);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::uint32_t acc = c[i * n + j];
      std::uint8_t fl = 0;
      for (std::size_t k0 = 0; k0 < k; k0 += L) {
        const std::size_t k1 = k0 + L < k ? k0 + L : k;
        const am::Out r = am::step(A.data() + i * k, Bt.data() + j * k, nb ? SA.data() + i * nb : nullptr,
                                   nb ? SBt.data() + j * nb : nullptr, static_cast<int>(k0), static_cast<int>(k1),
                                   am::decode(acc, fc), K);
        acc = r.bits;
        fl |= r.flags;
      }
      d[i * n + j] = acc;
      if (flags) flags[i * n + j] = fl;
    }
}

}  // namespace numref::cpu_fast
