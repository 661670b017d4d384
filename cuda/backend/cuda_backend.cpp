// numref backend "cuda": the CUDA kernels of cuda/src behind the conformance C ABI 1.2.
//                                                                     spec §32, §A.4, §A.7, §A.8
//
// Every entry point copies its inputs to the device, runs the real kernels (numref_cuda::cast,
// try_quantize, try_dequantize, try_tensor_mor, try_subtensor_mor, try_gaussws_forward /
// try_gaussws_backward) and copies the results
// back; nothing is computed on the host except the final MoR decision from the device's exact
// counters (the same __host__ __device__ function the kernels' tests check). What the kernels do
// not implement is answered 0 by the *_supported entries (the runner then skips the case).
// numref_backend_open returns NULL with "unavailable: no CUDA device (...)" when
// cudaGetDeviceCount fails or reports 0, so a machine without a GPU reports SKIPPED.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/conform/plugin.hpp"
#include "numref/mor.hpp"
#include "numref/quantize.hpp"
#include "numref_cuda/api.hpp"
#include "numref_cuda/host_run.hpp"
#include "numref_cuda/policy_map.hpp"
#include "reference/reference_backend.hpp"
#include "contract.hpp"

namespace {

using numref::FormatId;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e) +
                             (numref_cuda::why().empty() ? "" : " (" + numref_cuda::why() + ")"));
}

// A device buffer.
struct Dev {
  void* p = nullptr;
  explicit Dev(std::size_t bytes) { check(cudaMalloc(&p, bytes == 0 ? 16 : bytes), "cudaMalloc"); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};
void h2d(void* d, const void* h, std::size_t n) {
  check(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), "copy to device");
}
void d2h(void* h, const void* d, std::size_t n) {
  check(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost), "copy from device");
}

// The bytes a strided view touches, copied to the device; `base` is the device address of element
// (0, 0) (the view's own strides stay valid).
struct DeviceView {
  std::unique_ptr<Dev> buf;
  const void* base = nullptr;
  DeviceView(const void* x, std::size_t bytes, std::size_t rows, std::size_t cols, std::int64_t rs, std::int64_t cs) {
    const std::int64_t a = static_cast<std::int64_t>(rows - 1) * rs, b = static_cast<std::int64_t>(cols - 1) * cs;
    const std::int64_t lo = std::min<std::int64_t>(0, a) + std::min<std::int64_t>(0, b);
    const std::int64_t hi = std::max<std::int64_t>(0, a) + std::max<std::int64_t>(0, b) + 1;
    const auto n = static_cast<std::size_t>(hi - lo) * bytes;
    buf = std::make_unique<Dev>(n);
    const auto* src = static_cast<const unsigned char*>(x) + lo * static_cast<std::int64_t>(bytes);
    h2d(buf->p, src, n);
    base = buf->as<unsigned char>() - lo * static_cast<std::int64_t>(bytes);
  }
};

// ---- tensor families (§12–§20, §A.7) ----------------------------------------------------------

using numref_cuda::contract::TensorPlan;

// Runs the quantize pipeline on the device; the pointers given receive the results.
void run_quantize(const TensorPlan& tp, const void* x, const std::uint32_t* r, std::uint8_t* codes, std::uint32_t* amax,
                  std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax, std::uint64_t* counts,
                  std::uint32_t* fake) {
  const auto& t = tp.t;
  const auto& p = tp.p;
  const std::size_t n = t.rows * t.cols;
  const DeviceView dx(x, numref::storage_bytes(*t.src), t.rows, t.cols, t.rs, t.cs);
  Dev dcodes(n), damax(p.n_blocks * 4), dscales(p.n_blocks * 4), dgm(p.n_groups * 4), dta(4), dcounts(32), dfake(n * 4);
  check(cudaMemset(dcounts.p, 0, 32), "cudaMemset");
  std::unique_ptr<Dev> dr;
  numref_cuda::RandomSource rnd;
  if (p.sr_bits != 0) {
    if (r == nullptr) throw std::invalid_argument("round=sr needs the r array");
    dr = std::make_unique<Dev>(n * 4);
    h2d(dr->p, r, n * 4);
    rnd = numref_cuda::RandomSource::explicit_values(dr->as<std::uint32_t>());
  }
  numref_cuda::QuantizeOutputs o;
  o.codes = codes ? dcodes.as<std::uint8_t>() : nullptr;
  o.amax = damax.as<std::uint32_t>();
  o.scales = dscales.as<std::uint32_t>();
  o.group_mantissa = dgm.as<std::uint32_t>();
  o.tensor_amax = dta.as<std::uint32_t>();
  o.fake = fake ? dfake.p : nullptr;
  o.counts = dcounts.as<unsigned long long>();
  check(numref_cuda::try_quantize(p, dx.base, rnd, o), "quantize kernels");
  check(cudaDeviceSynchronize(), "quantize kernels");
  if (codes) d2h(codes, dcodes.p, n);
  if (amax) d2h(amax, damax.p, p.n_blocks * 4);
  if (scales) d2h(scales, dscales.p, p.n_blocks * 4);
  if (gm && numref::has_group_mantissa(t.spec.rule)) d2h(gm, dgm.p, p.n_groups * 4);
  if (tamax && numref::has_tensor_amax(t.spec.rule)) d2h(tamax, dta.p, 4);
  if (counts) d2h(counts, dcounts.p, 32);
  if (fake) {
    if (p.out == FormatId::f32) {
      d2h(fake, dfake.p, n * 4);
    } else {
      std::vector<std::uint16_t> h(n);
      d2h(h.data(), dfake.p, n * 2);
      std::copy(h.begin(), h.end(), fake);
    }
  }
}

using numref_cuda::contract::put_sum;

// The plugin (numref/conform/plugin.hpp): errors are exceptions, answered -1 with the message.
// The *_supported entries and every refusal are contract.hpp's (shared with cuda-emu, §A.11).
class CudaBackend : public numref_cuda::contract::KernelContract {
 public:
  static constexpr const char* name = "cuda";
  static constexpr const char* version = numref::conform::ReferenceBackend::version;  // numref's own
  static constexpr const char* description =
      "the numref CUDA kernels (cuda/src): casts, block quantization, GAM, INT8, fake-quant, MoR, GaussWS";

  // §A.4 without a usable device: "unavailable: ...", reported by the runner as SKIPPED, never as a pass.
  CudaBackend() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
      throw numref::conform::Unavailable(std::string("no CUDA device (cudaGetDeviceCount: ") +
                                         (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")");
  }

  // ---- cast (§11, §A.2) -------------------------------------------------------------------

  static std::int64_t cast(std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                           const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) {
    const numref_cuda::contract::CastPlan c = numref_cuda::contract::cast_plan(from, to, p);  // throws the refusal
    if (flags != nullptr) throw std::invalid_argument("the cuda backend reports no flags");
    const numref::Format* f = c.from;
    const numref::Format* t = c.to;
    if (n == 0) return 0;
    const std::size_t bi = numref::storage_bytes(*f), bo = numref::storage_bytes(*t);
    std::vector<unsigned char> packed(n * bi);
    for (std::size_t i = 0; i < n; ++i) {
      if ((in[i] & ~f->mask()) != 0u) throw std::invalid_argument("input has bits above the format's width");
      std::memcpy(&packed[i * bi], &in[i], bi);  // little-endian low bytes
    }
    Dev din(n * bi), dout(n * bo);
    h2d(din.p, packed.data(), n * bi);
    const bool sr = c.sr;
    std::unique_ptr<Dev> dr;
    numref_cuda::RandomSource rnd;
    if (sr) {
      if (r == nullptr) throw std::invalid_argument("round=sr needs the r array");
      dr = std::make_unique<Dev>(n * 4);
      h2d(dr->p, r, n * 4);
      rnd = numref_cuda::RandomSource::explicit_values(dr->as<std::uint32_t>());
    }
    check(numref_cuda::try_cast(din.p, f->id, dout.p, t->id, n, c.kernel, rnd), "cast kernel");
    check(cudaDeviceSynchronize(), "cast kernel");
    std::vector<unsigned char> o(n * bo);
    d2h(o.data(), dout.p, n * bo);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t v = 0;
      std::memcpy(&v, &o[i * bo], bo);
      out[i] = v;
    }
    return static_cast<std::int64_t>(n);
  }

  // ---- tensor families (§12–§20, §A.7) ------------------------------------------------------

  static std::int64_t scale(const numref_tensor_op* op, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                            std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) {
    if (!op) throw std::invalid_argument("no operation");
    const TensorPlan tp = numref_cuda::contract::tensor_plan(NUMREF_TENSOR_SCALE, op);
    run_quantize(tp, x, nullptr, nullptr, amax, scales, group_mantissa, tensor_amax, nullptr, nullptr);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  }

  static std::int64_t quantize(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                               std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax,
                               std::uint64_t* counts) {
    if (!op || !codes) throw std::invalid_argument("null argument");
    const TensorPlan tp = numref_cuda::contract::tensor_plan(NUMREF_TENSOR_QUANTIZE, op);
    run_quantize(tp, x, r, codes, nullptr, scales, group_mantissa, tensor_amax, counts, nullptr);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  }

  static std::int64_t dequantize(const numref_tensor_op* op, const std::uint8_t* codes, const std::uint32_t* scales,
                                 const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax,
                                 std::uint32_t* out) {
    if (!op || !codes || !scales || !out) throw std::invalid_argument("null argument");
    const TensorPlan tp = numref_cuda::contract::tensor_plan(NUMREF_TENSOR_DEQUANTIZE, op);
    const auto& p = tp.p;
    const std::size_t n = static_cast<std::size_t>(op->rows) * op->cols;
    Dev dc(n), ds(p.n_blocks * 4), dg(p.n_groups * 4), dout(n * 4);
    h2d(dc.p, codes, n);
    h2d(ds.p, scales, p.n_blocks * 4);
    const numref::ScaleRule rule = tp.t.spec.rule;
    numref::check_tensor_inputs(rule, group_mantissa, tensor_amax);  // §17.1 / §18.1 the row's tensor-level inputs
    const bool gm = numref::has_group_mantissa(rule);
    if (gm) h2d(dg.p, group_mantissa, p.n_groups * 4);
    const std::uint32_t ta = numref::has_tensor_amax(rule) ? *tensor_amax : 0u;
    check(numref_cuda::try_dequantize(p, dc.as<std::uint8_t>(), ds.as<std::uint32_t>(),
                                      gm ? dg.as<std::uint32_t>() : nullptr, ta, dout.as<std::uint32_t>()),
          "dequantize kernel");
    check(cudaDeviceSynchronize(), "dequantize kernel");
    d2h(out, dout.p, n * 4);
    return static_cast<std::int64_t>(n);
  }

  static std::int64_t fake_quant(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint32_t* out,
                                 std::uint64_t* counts) {
    if (!op || !out) throw std::invalid_argument("null argument");
    const TensorPlan tp = numref_cuda::contract::tensor_plan(NUMREF_TENSOR_FAKE_QUANT, op);
    run_quantize(tp, x, r, nullptr, nullptr, nullptr, nullptr, nullptr, counts, out);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  }

  // ---- MoR (§26, §27, §A.8) -----------------------------------------------------------------

  static std::int64_t mor(const numref_mor_op* op, const void* x, numref_mor_result* res, std::uint32_t* scales) {
    if (!op || !res || !scales) throw std::invalid_argument("null argument");
    const auto mp = numref_cuda::contract::mor_plan(NUMREF_TENSOR_MOR, op);  // throws the refusal
    const auto& m = mp.m;
    const DeviceView dx(x, numref::storage_bytes(*m.src), m.rows, m.cols, m.rs, m.cs);
    const numref::TensorView v = m.view(dx.base);  // over device memory
    const numref::TensorMorSpec& spec = mp.tensor;
    Dev ds(static_cast<std::size_t>(op->n_blocks) * 4), dg(4);
    numref_cuda::TensorMorDecision d;
    check(numref_cuda::try_tensor_mor(v, spec, d, nullptr, ds.as<std::uint32_t>(), dg.as<std::uint32_t>()),
          "MoR kernels");
    res->decision = d.quantized ? NUMREF_BLOCK_F8E4M3FN : NUMREF_BLOCK_KEPT;
    res->reason = static_cast<std::uint32_t>(d.verdict.reason);
    res->mean = d.mean;
    d2h(&res->group_mantissa, dg.p, 4);
    put_sum(d.error, res->error);
    d2h(scales, ds.p, static_cast<std::size_t>(op->n_blocks) * 4);
    return static_cast<std::int64_t>(m.rows * m.cols);
  }

  static std::int64_t mor_sub(const numref_mor_op* op, const void* x, std::uint8_t* type, std::uint8_t* eq3,
                              std::uint8_t* eq4, numref_error_sum* e4m3_sum, numref_error_sum* e5m2_sum,
                              std::uint32_t* e4m3_scales, std::uint32_t* e5m2_scales, std::uint32_t* group_mantissa,
                              std::uint32_t* out) {
    const auto mp = numref_cuda::contract::mor_plan(NUMREF_TENSOR_MOR_SUB, op);  // throws the refusal
    const auto& m = mp.m;
    const DeviceView dx(x, numref::storage_bytes(*m.src), m.rows, m.cols, m.rs, m.cs);
    const numref::TensorView v = m.view(dx.base);
    const numref::SubtensorMorSpec& spec = mp.subtensor;
    const std::size_t n = m.rows * m.cols;
    Dev dout(n * 2);
    numref_cuda::SubtensorMorDecision d;
    check(numref_cuda::try_subtensor_mor(v, spec, d, dout.as<std::uint16_t>()), "MoR kernels");
    for (std::size_t b = 0; b < d.type.size(); ++b) {
      type[b] = d.type[b];
      eq3[b] = static_cast<std::uint8_t>(d.eq3[b].reason);
      eq4[b] = static_cast<std::uint8_t>(d.eq4[b].reason);
      put_sum(d.e4m3_sum[b], e4m3_sum[b]);
      put_sum(d.e5m2_sum[b], e5m2_sum[b]);
      e4m3_scales[b] = d.e4m3_scales[b];
      e5m2_scales[b] = d.e5m2_scales[b];
    }
    group_mantissa[0] = d.group_mantissa[0];
    group_mantissa[1] = d.group_mantissa[1];
    std::vector<std::uint16_t> h(n);
    d2h(h.data(), dout.p, n * 2);
    std::copy(h.begin(), h.end(), out);
    return static_cast<std::int64_t>(n);
  }

  // ---- GaussWS (§30, §A.13): the forward kernel, then the backward kernel on its scales -------
  static std::int64_t gaussws(const numref_gaussws_op* op, const void* w, const std::uint32_t* bt,
                              const std::uint16_t* u, const std::uint64_t* key, const void* g, std::uint32_t* r_packed,
                              std::uint32_t* scale, std::uint32_t* w_hat, std::uint32_t* grad) {
    const auto gp = numref_cuda::contract::gaussws_call_plan(op, w, bt, u, key, g, r_packed, scale, w_hat, grad);
    const std::size_t n = gp.p.size(), nb = gp.p.tiles(), nr = (n + 7) / 8;
    const std::size_t wb = numref::storage_bytes(numref::format(gp.w)),
                      gb = numref::storage_bytes(numref::format(gp.g));
    Dev dw(n * wb), dg(n * gb), dbt(nb * 4), du(gp.p.key ? 0 : n * 2), dr(nr * 4), ds(nb * 4), dy(n * 2), dgr(nb * 4);
    h2d(dw.p, w, n * wb);
    h2d(dg.p, g, n * gb);
    h2d(dbt.p, bt, nb * 4);
    if (!gp.p.key) h2d(du.p, u, n * 2);
    const std::uint16_t* du_p = gp.p.key ? nullptr : du.as<std::uint16_t>();
    check(numref_cuda::try_gaussws_forward(gp.p, gp.w, dw.p, dbt.as<std::uint32_t>(), du_p, dy.as<std::uint16_t>(),
                                           ds.as<std::uint32_t>(), dr.as<std::uint32_t>()),
          "GaussWS forward kernel");
    check(numref_cuda::try_gaussws_backward(gp.p, ds.as<std::uint32_t>(), du_p, gp.g, dg.p, dgr.as<std::uint32_t>()),
          "GaussWS backward kernel");
    std::vector<std::uint16_t> h(n);
    d2h(h.data(), dy.p, n * 2);
    std::copy(h.begin(), h.end(), w_hat);
    d2h(r_packed, dr.p, nr * 4);
    d2h(scale, ds.p, nb * 4);
    d2h(grad, dgr.p, nb * 4);
    return static_cast<std::int64_t>(n);
  }

  // ---- MMA (§36 – §38): the model's kernels (mma.cu) ------------------------------------------
  static std::int64_t mma(const numref_mma_op* op, const std::uint32_t* a, const std::uint32_t* b,
                          const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d,
                          std::uint8_t* flags) {
    const numref::MmaSpec s = numref_cuda::contract::mma_plan(op);
    if (!a || !b || !c || !d || (s.block && (!sa || !sb))) throw std::invalid_argument("null argument");
    const std::size_t m = op->m, n = op->n, k = op->k, nb = s.block ? k / static_cast<std::size_t>(s.block) : 0;
    Dev da(m * k * 4), db(k * n * 4), dc(m * n * 4), dsa(m * nb * 4), dsb(nb * n * 4), dd(m * n * 4), df(m * n);
    h2d(da.p, a, m * k * 4);
    h2d(db.p, b, k * n * 4);
    h2d(dc.p, c, m * n * 4);
    if (nb) {
      h2d(dsa.p, sa, m * nb * 4);
      h2d(dsb.p, sb, nb * n * 4);
    }
    check(numref_cuda::try_mma(s, m, n, k, da.as<std::uint32_t>(), db.as<std::uint32_t>(), dc.as<std::uint32_t>(),
                               nb ? dsa.as<std::uint32_t>() : nullptr, nb ? dsb.as<std::uint32_t>() : nullptr,
                               dd.as<std::uint32_t>(), flags ? df.as<std::uint8_t>() : nullptr),
          "mma kernel");
    d2h(d, dd.p, m * n * 4);
    if (flags) d2h(flags, df.p, m * n);
    return static_cast<std::int64_t>(m * n);
  }
};

}  // namespace

NUMREF_BACKEND(CudaBackend)
