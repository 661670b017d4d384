// numref CUDA kernels — host API.                                                  spec §A.3
//
// All pointers are device pointers; arrays hold codes in element order (§12.1), one code of
// 1, 2 or 4 bytes per element (f32: 4, bf16: 2, 8-bit formats: 1). Launches are
// asynchronous on `stream` unless a function says otherwise.
//
// Two spellings of every call: try_*() returns a cudaError_t (cudaErrorInvalidValue for an
// argument the kernels do not accept; why() gives the reason for the last such error of the
// calling thread), and the plain name throws (std::invalid_argument for bad arguments,
// numref_cuda::CudaError for a CUDA failure).
//
// Kernels and the profile each implements (§A.2, docs/cuda.md); the rounding modes with a
// kernel are rne, rtz and sr (fraction and add variants), with every NaN/Inf/overflow knob:
//   f32, bf16 -> f8e4m3fn, f8e5m2   rne+saturate (cuda_satfinite) uses the sm_89+
//                                   cvt.rn.satfinite instructions; all else portable
//   f32 -> bf16                     rne+nonsat (the wide policy of every profile) uses
//                                   cvt.rn.bf16x2.f32 on sm_80+; all else portable
//   f8e4m3fn, f8e5m2 -> f32, bf16   exact decode; the NaN knob is the only one that matters
//   f32, bf16 -> f8e8m0fnu          every E8m0Policy (cuda_satfinite: floor, saturate, ...)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref_arith/cast.cuh"
#include "numref_arith/philox.cuh"
#include "numref_cuda/quantize_plan.hpp"
#include "numref_cuda/support.hpp"
#include "numref/mma.hpp"
#include "numref/mor.hpp"

namespace numref_cuda {

namespace gaussws {
struct Problem;  // numref_arith/gaussws.cuh (the GaussWS API's callers include it)
}  // namespace gaussws

// §A.3 A CUDA runtime failure (the throwing API).
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what);
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// §A.3 The random values of a stochastic-rounding cast: none, an explicit device array
// (one uint32 per element, each < 2^k; a larger value is an error, never masked), or a
// Philox stream (philox.cuh) whose values are r_i < 2^k by construction.
struct RandomSource {
  const std::uint32_t* values = nullptr;
  bool use_philox = false;
  PhiloxStream philox;

  static RandomSource none() { return {}; }
  static RandomSource explicit_values(const std::uint32_t* device_values) { return {device_values, false, {}}; }
  static RandomSource philox_stream(std::uint64_t seed, std::uint64_t subsequence = 0, std::uint64_t offset = 0) {
    return {nullptr, true, PhiloxStream{seed, subsequence, offset}};
  }
};

// §A.3 Why the last try_* call of this thread returned cudaErrorInvalidValue ("" otherwise).
const std::string& why();

// §A.2 Whether the kernels implement from -> to under p: "" if so, else the reason (support.hpp).
std::string cast_support(numref::FormatId from, numref::FormatId to, const CastPolicy& p, const RandomSource& rnd);

// §A.3 Convert n codes. For stochastic rounding with explicit values, `device_status`
// (optional, a device word the caller zeroes first) gets bit 0 OR-ed in if any value was
// >= 2^k (the output is then not valid); without it the call checks the values itself and
// synchronizes `stream` to do so (cudaErrorInvalidValue, why() says which k).
cudaError_t try_cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n,
                     const CastPolicy& p, const RandomSource& rnd = {}, cudaStream_t stream = nullptr,
                     std::uint32_t* device_status = nullptr) noexcept;
void cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n, const CastPolicy& p,
          const RandomSource& rnd = {}, cudaStream_t stream = nullptr, std::uint32_t* device_status = nullptr);

// §A.2 The same with a numref::Policy, mapped by cast_policy() (policy_map.hpp), which rejects
// the knobs the kernels do not implement.
void cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n, const numref::Policy& p,
          const RandomSource& rnd = {}, cudaStream_t stream = nullptr);

// §A.3 f32 / bf16 -> f8e8m0fnu.
cudaError_t try_cast_to_e8m0(const void* in, numref::FormatId from, std::uint8_t* out, std::size_t n,
                             const E8m0Policy& p, cudaStream_t stream = nullptr) noexcept;
void cast_to_e8m0(const void* in, numref::FormatId from, std::uint8_t* out, std::size_t n, const E8m0Policy& p,
                  cudaStream_t stream = nullptr);

// §A.3 Export r_0 .. r_{n-1} of a Philox stream with k bits (1..32).
cudaError_t try_philox_bits(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k,
                            cudaStream_t stream = nullptr) noexcept;
void philox_bits(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k, cudaStream_t stream = nullptr);

// §A.5 Which path a cast runs on a device of compute capability `cc` (e.g. 89, 90).
enum class Path : std::uint8_t { portable, hardware };
Path cast_path(numref::FormatId from, numref::FormatId to, const CastPolicy& p, int cc);

// §A.4 Device presence: the number of CUDA devices, 0 when there is none or no driver.
int device_count() noexcept;

// ---- phase 2: block quantization and MoR (§A.7, §A.8) --------------------------------------
//
// A QuantizePlan (quantize_plan.hpp: plan_quantize) fixes the spec, the source format and the
// view; the kernels produce the reference's layout (§19.4): codes one byte per element in
// element order, scales one code per block block-row-major, GAM mantissas per group, the NVFP4
// tensor amax. Pipeline: amax (atomicMax on the integer amax keys, §13.4) -> group / tensor
// amax -> block factors (scale.cuh) -> quantize (tiling.cuh), every pass a grid-stride loop.

// §19.4 / §19.5 Device outputs of a quantization; a null pointer is not written.
struct QuantizeOutputs {
  std::uint8_t* codes = nullptr;            // rows·cols element codes
  std::uint32_t* scales = nullptr;          // n_blocks stored scale codes
  std::uint32_t* amax = nullptr;            // n_blocks binary32 amax codes
  std::uint32_t* group_mantissa = nullptr;  // GAM: n_groups mantissas
  std::uint32_t* tensor_amax = nullptr;     // NVFP4: 1 word
  void* fake = nullptr;                     // §19.6 rows·cols codes of plan.out (2 or 4 bytes)
  unsigned long long* counts = nullptr;     // 4 words, ADDED to: saturated, flushed, nan, inf
};
// §19, §A.7 Quantize (and/or fake-quantize) the view at `x` (device memory). Stochastic
// rounding takes its values from `rnd` (explicit: one per element, element order; an invalid
// value makes the call fail after synchronizing `stream`).
cudaError_t try_quantize(const QuantizePlan& p, const void* x, const RandomSource& rnd, const QuantizeOutputs& out,
                         cudaStream_t stream = nullptr) noexcept;
// §19.3 Dequantize codes (element order) from the metadata alone into binary32 codes.
cudaError_t try_dequantize(const QuantizePlan& p, const std::uint8_t* codes, const std::uint32_t* scales,
                           const std::uint32_t* group_mantissa, std::uint32_t tensor_amax, std::uint32_t* out,
                           cudaStream_t stream = nullptr) noexcept;

// §26, §A.8 Tensor-level MoR of the view `x` (numref::TensorView over DEVICE memory: its
// shape, strides and format are used, its data is never read on the host). Fused kernels: amax,
// GAM scales, then one pass that quantizes, dequantizes to bf16, forms each relative error and
// adds it to the exact carry-save sum (§22); the decision is made on the host from the final
// counters (synchronizes `stream`). `codes`, `scales`, `group_mantissa` (device, optional)
// receive the E4M3 codes and GAM scales.
struct TensorMorDecision {
  bool quantized = false;
  Verdict verdict;
  ErrorSumValue error{};
  std::uint32_t mean = 0;
};
cudaError_t try_tensor_mor(const numref::TensorView& x, const numref::TensorMorSpec& spec, TensorMorDecision& result,
                           std::uint8_t* codes = nullptr, std::uint32_t* scales = nullptr,
                           std::uint32_t* group_mantissa = nullptr, cudaStream_t stream = nullptr) noexcept;
// §27, §A.8 Sub-tensor MoR: per selection block the type (0 E4M3, 1 E5M2, 2 bf16 kept), both
// verdicts and both exact error sums (host vectors), and the bf16 output tensor `out` (device,
// element order). Synchronizes `stream`.
struct SubtensorMorDecision {
  std::vector<std::uint8_t> type;
  std::vector<Verdict> eq3, eq4;
  std::vector<ErrorSumValue> e4m3_sum, e5m2_sum;
  std::vector<std::uint32_t> e4m3_scales, e5m2_scales;  // E8M0 codes per block (§19.4)
  std::uint32_t group_mantissa[2] = {0, 0};             // E4M3, E5M2 GAM group mantissas (§17.1)
};
cudaError_t try_subtensor_mor(const numref::TensorView& x, const numref::SubtensorMorSpec& spec,
                              SubtensorMorDecision& result, std::uint16_t* out, cudaStream_t stream = nullptr) noexcept;

// ---- GaussWS (§30, §A.13) ---------------------------------------------------------------------
//
// One operation over dense row-major device arrays (gaussws::make_problem(rows, cols), then the
// noise source and sum). One CUDA block per 32 x 32 tile; gaussws.cuh computes every value.
// `device_status` (optional, a device word the caller zeroes): gaussws_plan.hpp's status bits are
// OR-ed in (a non-finite b_t, a value the kernels' bounds do not decide; the outputs are then not
// valid); without it the call checks them itself, synchronizing `stream` (cudaErrorInvalidValue,
// why() says which).
// §30.4 – §30.6, §30.9 forward: w (codes of wf, f32 or bf16), bt (one binary32 per tile), u (one
// 16-bit word per element, read unless p.key) -> w_hat (bf16 codes), scale (s per tile; 0x7FC00000
// for a block holding a NaN or Inf), r_packed (optional: ceil(n / 8) words, zeroed by the call).
cudaError_t try_gaussws_forward(const gaussws::Problem& p, numref::FormatId wf, const void* w, const std::uint32_t* bt,
                                const std::uint16_t* u, std::uint16_t* w_hat, std::uint32_t* scale,
                                std::uint32_t* r_packed = nullptr, cudaStream_t stream = nullptr,
                                std::uint32_t* device_status = nullptr) noexcept;
// §30.7 backward: the forward's scale, the same noise source, g (dL/dw_hat, codes of gf) -> grad
// (dL/db_t per tile, binary32 codes).
cudaError_t try_gaussws_backward(const gaussws::Problem& p, const std::uint32_t* scale, const std::uint16_t* u,
                                 numref::FormatId gf, const void* g, std::uint32_t* grad, cudaStream_t stream = nullptr,
                                 std::uint32_t* device_status = nullptr) noexcept;

// §36 – §38 D = A·B + C by a fused truncated dot-product-add model (algo=fdpa), over dense
// row-major device arrays of codes, one per 32-bit word: a (m x k), b (k x n), c (m x n), and with
// s.block the scales sa (m x k/block) and sb (k/block x n) (else nullptr); d (m x n) and, when not
// nullptr, flags (m x n, the §36.4 flags). The operands are decoded once into device buffers, then
// one thread per element of D runs its steps (numref_arith/mma.cuh). The ideal model (§37) is
// refused (cudaErrorInvalidValue, why()).
cudaError_t try_mma(const numref::MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const std::uint32_t* a,
                    const std::uint32_t* b, const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb,
                    std::uint32_t* d, std::uint8_t* flags, cudaStream_t stream = nullptr) noexcept;

// The tensor cores' own FP8 instruction (not a model of it): D = A·B + C by chained
// mma.sync.aligned.m16n8k32.row.col.f32.<a>.<b>.f32 (PTX ISA; sm_89 and later), one warp per
// 16 x 8 tile of D, K in steps of 32 through the f32 accumulator. a: m x k and b: k x n codes of
// f8e4m3fn or f8e5m2, one byte each, row-major; c, d: m x n binary32 codes. m a multiple of 16,
// n of 8, k of 32; a device of compute capability below 8.9, another format, or a shape that
// does not tile: cudaErrorInvalidValue (why()). The result is the hardware's: the device test
// (tests/device_mma_sync.cpp) compares it with the profile of the device's architecture (§39).
cudaError_t try_mma_sync_f8(numref::FormatId a_fmt, numref::FormatId b_fmt, std::size_t m, std::size_t n, std::size_t k,
                            const std::uint8_t* a, const std::uint8_t* b, const std::uint32_t* c, std::uint32_t* d,
                            cudaStream_t stream = nullptr) noexcept;

}  // namespace numref_cuda
