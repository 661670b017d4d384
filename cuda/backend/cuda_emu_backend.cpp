// numref backend "cuda-emu": the CUDA kernels' own __host__ __device__ arithmetic, run on the CPU
// by the host grid walk (host_run.hpp), behind the conformance C ABI 1.2.   spec §32, §A.11
//
// Every entry point does what the `cuda` backend (cuda_backend.cpp) does, with the device replaced
// by numref_cuda::host: the cast kernels' per-element functions (cast.cuh, the kernel of
// cast_kernels.hpp's with_cast_kernel), the quantize / dequantize / fake-quant pipelines
// (tiling.cuh, scale.cuh, quantize.cuh) and the MoR passes (exact_sum.cuh, mor.cuh), each walked
// by `threads` simulated threads of the grid-stride loop in the given order, their contributions
// merged as the kernels' atomics merge them; GaussWS (gaussws.cuh) one simulated CUDA block per tile. What the kernels accept and how they refuse is
// contract.hpp's, shared with the `cuda` backend. Built by the host compiler whether or not nvcc
// exists, so `--backend all` checks the CUDA arithmetic on every machine.
//
// Arguments (--backend 'cuda-emu?order=shuffled&seed=7&threads=33'): key=value pairs joined by '&':
//   order=forward|reverse|shuffled  the order in which the simulated threads run (forward)
//   seed=N                          the seed of the shuffled order (1)
//   threads=N                       simulated threads, 1..2^20 (256)
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "contract.hpp"
#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/conform/plugin.hpp"
#include "numref_cuda/host_run.hpp"
#include "numref_cuda/support.hpp"
#include "reference/reference_backend.hpp"

namespace {

namespace ct = numref_cuda::contract;
using numref::FormatId;
using numref_cuda::host::Walk;

std::uint64_t parse_number(std::string_view key, std::string_view v, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < lo || n > hi)
    throw std::invalid_argument("cuda-emu: " + std::string(key) + " must be an integer in " + std::to_string(lo) +
                                ".." + std::to_string(hi) + " (got '" + std::string(v) + "')");
  return n;
}

// §A.11 The walk from the backend arguments.
Walk parse_walk(std::string_view args) {
  Walk w;
  bool seen[3] = {false, false, false};
  while (!args.empty()) {
    const std::size_t amp = args.find('&');
    const std::string_view item = args.substr(0, amp);
    args = amp == std::string_view::npos ? std::string_view() : args.substr(amp + 1);
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq), value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    const int k = key == "order" ? 0 : key == "seed" ? 1 : key == "threads" ? 2 : -1;
    if (k < 0 || eq == std::string_view::npos)
      throw std::invalid_argument("cuda-emu: unknown argument '" + std::string(item) +
                                  "' (order=forward|reverse|shuffled, seed=N, threads=N, joined by '&')");
    if (seen[k]) throw std::invalid_argument("cuda-emu: argument '" + std::string(key) + "' given twice");
    seen[k] = true;
    if (k == 0) {
      if (value == "forward")
        w.order = Walk::Order::forward;
      else if (value == "reverse")
        w.order = Walk::Order::reverse;
      else if (value == "shuffled")
        w.order = Walk::Order::shuffled;
      else
        throw std::invalid_argument("cuda-emu: order must be forward, reverse or shuffled (got '" + std::string(value) +
                                    "')");
    } else if (k == 1) {
      w.seed = parse_number(key, value, 0, ~std::uint64_t{0});
    } else {
      w.threads = static_cast<std::uint32_t>(parse_number(key, value, 1, std::uint64_t{1} << 20));
    }
  }
  return w;
}

numref_cuda::ElementRandom element_random(const numref_cuda::QuantizePlan& p, const std::uint32_t* r) {
  numref_cuda::ElementRandom rnd;
  if (p.sr_bits != 0) {
    if (r == nullptr) throw std::invalid_argument("round=sr needs the r array");
    rnd.values = r;
    rnd.k = p.sr_bits;
  }
  return rnd;
}

void put_counts(const numref_cuda::Counts& c, std::uint64_t* counts) {  // the order of QuantizeOutputs::counts
  if (counts == nullptr) return;
  counts[0] = c.saturated, counts[1] = c.flushed, counts[2] = c.nan, counts[3] = c.inf;
}

// The plugin (numref/conform/plugin.hpp): errors are exceptions, answered -1 with the message.
class CudaEmuBackend : public ct::KernelContract {
 public:
  static constexpr const char* name = "cuda-emu";
  static constexpr const char* version = numref::conform::ReferenceBackend::version;  // numref's own
  static constexpr const char* description =
      "the numref CUDA kernels' __host__ __device__ arithmetic on the CPU by the host grid walk "
      "(?order=forward|reverse|shuffled&seed=N&threads=N): casts, block quantization, GAM, INT8, fake-quant, MoR, "
      "GaussWS";

  explicit CudaEmuBackend(std::string_view args) : walk_(parse_walk(args)) {}

  // ---- cast (§11, §A.2, §A.3) --------------------------------------------------------------

  std::int64_t cast(std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                    const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) const {
    const ct::CastPlan c = ct::cast_plan(from, to, p);  // throws the refusal
    if (flags != nullptr) throw std::invalid_argument("the cuda-emu backend reports no flags");
    for (std::size_t i = 0; i < n; ++i)
      if ((in[i] & ~c.from->mask()) != 0u) throw std::invalid_argument("input has bits above the format's width");
    if (c.sr && r == nullptr) throw std::invalid_argument("round=sr needs the r array");
    if (!numref_cuda::host::cast(in, c.from->id, out, c.to->id, n, c.kernel, c.sr ? r : nullptr, walk_))
      throw std::invalid_argument(numref_cuda::cast_random_error(c.kernel.sr_bits));
    return static_cast<std::int64_t>(n);
  }

  // ---- tensor families (§12–§20, §A.7) ------------------------------------------------------

  std::int64_t scale(const numref_tensor_op* op, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                     std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) const {
    const ct::TensorPlan tp = ct::tensor_plan(NUMREF_TENSOR_SCALE, op);
    const numref_cuda::host::ScaleOut s = numref_cuda::host::scale(tp.p, x, walk_);
    put_scale(tp, s, amax, scales, group_mantissa, tensor_amax);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  }

  std::int64_t quantize(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                        std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax,
                        std::uint64_t* counts) const {
    const ct::TensorPlan tp = ct::tensor_plan(NUMREF_TENSOR_QUANTIZE, op);
    if (!codes) throw std::invalid_argument("null argument");
    const auto q = run(tp, x, r, true, false);
    std::copy(q.codes.begin(), q.codes.end(), codes);
    put_scale(tp, q.scale, nullptr, scales, group_mantissa, tensor_amax);
    put_counts(q.counts, counts);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  }

  std::int64_t dequantize(const numref_tensor_op* op, const std::uint8_t* codes, const std::uint32_t* scales,
                          const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax,
                          std::uint32_t* out) const {
    const ct::TensorPlan tp = ct::tensor_plan(NUMREF_TENSOR_DEQUANTIZE, op);
    if (!codes || !scales || !out) throw std::invalid_argument("null argument");
    const numref::ScaleRule rule = tp.t.spec.rule;
    numref::check_tensor_inputs(rule, group_mantissa, tensor_amax);  // §17.1 / §18.1 the row's tensor-level inputs
    const std::uint32_t* gm = numref::has_group_mantissa(rule) ? group_mantissa : nullptr;
    const std::uint32_t ta = numref::has_tensor_amax(rule) ? *tensor_amax : 0u;
    const auto v = numref_cuda::host::dequantize(tp.p, codes, scales, gm, ta, walk_);
    std::copy(v.begin(), v.end(), out);
    return static_cast<std::int64_t>(v.size());
  }

  std::int64_t fake_quant(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint32_t* out,
                          std::uint64_t* counts) const {
    const ct::TensorPlan tp = ct::tensor_plan(NUMREF_TENSOR_FAKE_QUANT, op);
    if (!out) throw std::invalid_argument("null argument");
    const auto q = run(tp, x, r, false, true);
    std::copy(q.fake.begin(), q.fake.end(), out);
    put_counts(q.counts, counts);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  }

  // ---- MoR (§26, §27, §A.8) -----------------------------------------------------------------

  std::int64_t mor(const numref_mor_op* op, const void* x, numref_mor_result* res, std::uint32_t* scales) const {
    const ct::MorPlan mp = ct::mor_plan(NUMREF_TENSOR_MOR, op);  // throws the refusal
    if (!res || !scales) throw std::invalid_argument("null argument");
    const auto d = numref_cuda::host::tensor_mor(mp.m.view(x), mp.tensor, walk_);
    res->decision = d.quantized ? NUMREF_BLOCK_F8E4M3FN : NUMREF_BLOCK_KEPT;
    res->reason = static_cast<std::uint32_t>(d.verdict.reason);
    res->mean = d.mean;
    res->group_mantissa = d.scale.group_mantissa.empty() ? 0u : d.scale.group_mantissa[0];
    ct::put_sum(d.error, res->error);
    std::copy(d.scale.scales.begin(), d.scale.scales.end(), scales);
    return static_cast<std::int64_t>(mp.m.rows * mp.m.cols);
  }

  std::int64_t mor_sub(const numref_mor_op* op, const void* x, std::uint8_t* type, std::uint8_t* eq3, std::uint8_t* eq4,
                       numref_error_sum* e4m3_sum, numref_error_sum* e5m2_sum, std::uint32_t* e4m3_scales,
                       std::uint32_t* e5m2_scales, std::uint32_t* group_mantissa, std::uint32_t* out) const {
    const ct::MorPlan mp = ct::mor_plan(NUMREF_TENSOR_MOR_SUB, op);  // throws the refusal
    const auto d = numref_cuda::host::subtensor_mor(mp.m.view(x), mp.subtensor, walk_);
    for (std::size_t b = 0; b < d.type.size(); ++b) {
      type[b] = d.type[b];
      eq3[b] = static_cast<std::uint8_t>(d.eq3[b].reason);
      eq4[b] = static_cast<std::uint8_t>(d.eq4[b].reason);
      ct::put_sum(d.e4m3_sum[b], e4m3_sum[b]);
      ct::put_sum(d.e5m2_sum[b], e5m2_sum[b]);
      e4m3_scales[b] = d.e4m3_scale.scales[b];
      e5m2_scales[b] = d.e5m2_scale.scales[b];
    }
    group_mantissa[0] = d.e4m3_scale.group_mantissa.empty() ? 0u : d.e4m3_scale.group_mantissa[0];
    group_mantissa[1] = d.e5m2_scale.group_mantissa.empty() ? 0u : d.e5m2_scale.group_mantissa[0];
    std::copy(d.fake.begin(), d.fake.end(), out);
    return static_cast<std::int64_t>(d.fake.size());
  }

  // ---- GaussWS (§30, §A.13) -----------------------------------------------------------------

  std::int64_t mma(const numref_mma_op* op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                   const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d, std::uint8_t* flags) const {
    const numref::MmaSpec s = ct::mma_plan(op);
    if (!a || !b || !c || !d || (s.block && (!sa || !sb))) throw std::invalid_argument("null argument");
    numref_cuda::host::mma(s, op->m, op->n, op->k, a, b, c, sa, sb, d, flags, walk_);
    return static_cast<std::int64_t>(std::size_t{op->m} * op->n);
  }

  std::int64_t gaussws(const numref_gaussws_op* op, const void* w, const std::uint32_t* bt, const std::uint16_t* u,
                       const std::uint64_t* key, const void* g, std::uint32_t* r_packed, std::uint32_t* scale,
                       std::uint32_t* w_hat, std::uint32_t* grad) const {
    const ct::GausswsPlan gp = ct::gaussws_call_plan(op, w, bt, u, key, g, r_packed, scale, w_hat, grad);
    const auto o = numref_cuda::host::gaussws(gp.p, gp.w, w, bt, gp.p.key ? nullptr : u, gp.g, g, walk_);
    std::copy(o.r_packed.begin(), o.r_packed.end(), r_packed);
    std::copy(o.scale.begin(), o.scale.end(), scale);
    std::copy(o.w_hat.begin(), o.w_hat.end(), w_hat);
    std::copy(o.grad.begin(), o.grad.end(), grad);
    return static_cast<std::int64_t>(gp.p.size());
  }

 private:
  Walk walk_;

  numref_cuda::host::QuantizeOut run(const ct::TensorPlan& tp, const void* x, const std::uint32_t* r, bool codes,
                                     bool fake) const {
    auto q = numref_cuda::host::quantize(tp.p, x, element_random(tp.p, r), codes, fake, walk_);
    if (!q.random_ok) throw std::invalid_argument(numref_cuda::quantize_random_error(tp.p.sr_bits));
    return q;
  }

  static void put_scale(const ct::TensorPlan& tp, const numref_cuda::host::ScaleOut& s, std::uint32_t* amax,
                        std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) {
    if (amax) std::copy(s.amax.begin(), s.amax.end(), amax);
    if (scales) std::copy(s.scales.begin(), s.scales.end(), scales);
    if (group_mantissa && numref::has_group_mantissa(tp.t.spec.rule))
      std::copy(s.group_mantissa.begin(), s.group_mantissa.end(), group_mantissa);
    if (tensor_amax && numref::has_tensor_amax(tp.t.spec.rule)) *tensor_amax = s.tensor_amax;
  }
};

}  // namespace

NUMREF_BACKEND(CudaEmuBackend)
