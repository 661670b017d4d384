// numref backend "cpu-fast" — GaussWS on the CPU with the kernels' arithmetic.     spec §30
#include "fast_gaussws.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "numref/gaussws.hpp"
#include "numref_arith/gaussws.cuh"
#include "numref_arith/gaussws_plan.hpp"

namespace numref::cpu_fast {
namespace {

namespace gw = numref_cuda::gaussws;
using F32T = numref_cuda::FloatTraits<FormatId::f32>;
using BF16T = numref_cuda::FloatTraits<FormatId::bf16>;

// The reference's value of one tile, for a tile whose value the kernels' bounds leave undecided.
struct TileFallback {
  const GausswsOp& op;
  const void* w;
  const std::uint32_t* bt;
  const void* g;
  template <class W, class G>
  std::uint32_t grad(std::size_t i0, std::size_t j0, std::size_t h, std::size_t wd, std::size_t tile,
                     const std::vector<std::int8_t>& r_tile) const {
    std::vector<std::uint32_t> wt(h * wd), gt(h * wd);
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t j = 0; j < wd; ++j) {
        const std::size_t k = (i0 + i) * op.cols + j0 + j;
        wt[i * wd + j] = gw::load<W>(w, k);
        gt[i * wd + j] = gw::load<G>(g, k);
      }
    const std::uint32_t b[1] = {bt[tile]};
    return numref::gaussws::grad_bt(op.w, {h, wd}, wt, b, r_tile, op.g, gt)[0];
  }
};

template <class W, class G, bool SumF32>
void run(const GausswsOp& op, const void* w, const std::uint32_t* bt, const std::uint16_t* u, const void* g,
         std::uint32_t* r_packed, std::uint32_t* scale, std::uint32_t* w_hat, std::uint32_t* grad) {
  const numref_cuda::SpecialCodes<BF16T> sp = gw::bf16_codes();
  const std::size_t m = op.rows, n = op.cols;
  const std::size_t tr = (m + 31) / 32, tc = (n + 31) / 32;
  std::fill(r_packed, r_packed + (m * n + 7) / 8, 0u);
  std::uint32_t last_bt = 0, last_e = 0;
  bool have_e = false;
  std::vector<std::int8_t> rt(32 * 32);  // the tile's R, row-major within the tile
  for (std::size_t I = 0; I < tr; ++I) {
    const std::size_t i0 = I * 32, h = std::min<std::size_t>(32, m - i0);
    for (std::size_t J = 0; J < tc; ++J) {
      const std::size_t j0 = J * 32, wd = std::min<std::size_t>(32, n - j0), tile = I * tc + J;
      // §30.2 / §30.3 R of the tile
      if (op.key) {
        const std::uint64_t key =
            gw::block_key(op.seed, op.layer, op.step, static_cast<std::uint32_t>(I), static_cast<std::uint32_t>(J));
        for (std::size_t i = 0; i < h; ++i)
          for (std::size_t q = 0; q * 4 < wd; ++q) {
            const std::uint64_t z = gw::lane_word(key, static_cast<std::uint32_t>(i * 8 + q));
            for (std::size_t t = 0; t < 4 && q * 4 + t < wd; ++t)
              rt[i * wd + q * 4 + t] =
                  static_cast<std::int8_t>(gw::noise(static_cast<std::uint32_t>(z >> (16 * t)) & 0xFFFFu));
          }
      } else {
        for (std::size_t i = 0; i < h; ++i) {
          const std::uint16_t* ur = u + (i0 + i) * n + j0;
          for (std::size_t j = 0; j < wd; ++j) rt[i * wd + j] = static_cast<std::int8_t>(gw::noise(ur[j]));
        }
      }
      // §30.4 amax (integer max of the magnitude codes; >= Inf: poisoned)
      std::uint32_t amax = 0;
      for (std::size_t i = 0; i < h; ++i) {
        const std::size_t k0 = (i0 + i) * n + j0;
        for (std::size_t j = 0; j < wd; ++j) amax = std::max(amax, gw::amax_key<W>(gw::load<W>(w, k0 + j)));
      }
      if (!have_e || bt[tile] != last_bt) {
        const gw::Rounded e = gw::exp2_one_minus(bt[tile]);
        last_e = e.decided ? e.code : numref::gaussws::exp2_one_minus(bt[tile]);
        last_bt = bt[tile];
        have_e = true;
      }
      const std::uint32_t s = amax >= numref_cuda::kF32Inf ? gw::kNaN32 : gw::block_scale(amax, last_e);
      scale[tile] = s;
      // §30.5 / §30.6 / §30.9 forward, and §30.7 the exact terms
      std::uint64_t digits[2][numref_cuda::kSumDigits] = {};
      auto sink = [&](int neg, int d, std::uint32_t v) { digits[neg][d] += v; };
      gw::LaneTerms terms;
      for (std::size_t i = 0; i < h; ++i) {
        const std::size_t k0 = (i0 + i) * n + j0;
        const std::int8_t* rr = rt.data() + i * wd;
        for (std::size_t j = 0; j < wd; ++j) {
          const std::size_t k = k0 + j;
          const int r = rr[j];
          w_hat[k] = s == gw::kNaN32 ? gw::kBf16NaN : gw::forward_element<W, SumF32>(gw::load<W>(w, k), r, s, sp);
          r_packed[k / 8] |= gw::nibble(r) << (4 * (k % 8));
          gw::add_term(terms, gw::widen<G>(gw::load<G>(g, k)), r, sink);
        }
      }
      gw::flush_terms(terms, sink);
      const gw::Rounded d = gw::grad_finish(digits, terms.nonfinite, s);
      if (d.decided) {
        grad[tile] = d.code;
      } else {
        const TileFallback fb{op, w, bt, g};
        grad[tile] = fb.grad<W, G>(i0, j0, h, wd, tile, std::vector<std::int8_t>(rt.begin(), rt.begin() + h * wd));
      }
    }
  }
}

}  // namespace

void gaussws(const GausswsOp& op, const void* w, const std::uint32_t* bt, const std::uint16_t* u, const void* g,
             std::uint32_t* r_packed, std::uint32_t* scale, std::uint32_t* w_hat, std::uint32_t* grad) {
  if (op.rows == 0 || op.cols == 0) throw std::invalid_argument("gaussws: empty matrix");
  const auto fmt_ok = [](FormatId f) { return f == FormatId::f32 || f == FormatId::bf16; };
  if (!fmt_ok(op.w) || !fmt_ok(op.g)) throw std::invalid_argument("gaussws: w and g must be f32 or bf16");
  if (!op.key && u == nullptr) throw std::invalid_argument("gaussws: noise=bits needs u");
  gw::check_bt(bt, ((op.rows + 31) / 32) * ((op.cols + 31) / 32));
  auto with_g = [&]<class W, bool S>() {
    if (op.g == FormatId::bf16)
      run<W, BF16T, S>(op, w, bt, u, g, r_packed, scale, w_hat, grad);
    else
      run<W, F32T, S>(op, w, bt, u, g, r_packed, scale, w_hat, grad);
  };
  auto with_sum = [&]<class W>() {
    if (op.sum_f32)
      with_g.template operator()<W, true>();
    else
      with_g.template operator()<W, false>();
  };
  if (op.w == FormatId::bf16)
    with_sum.template operator()<BF16T>();
  else
    with_sum.template operator()<F32T>();
}

}  // namespace numref::cpu_fast
