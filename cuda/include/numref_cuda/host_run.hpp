// numref CUDA kernels — the kernels' work, run on the CPU.                        spec §A.4, §A.7
//
// Each function here performs a kernel pipeline of api.hpp with the SAME per-unit code
// (tiling.cuh: amax_unit, quantize_unit, mor_error_unit, ...; scale.cuh: block_factors) on host
// memory: the units are walked by `threads` simulated threads (thread t takes units t, t + T,
// t + 2T, ... — the grid-stride loop), the threads are visited forward, backward or in a seeded
// random order, and each thread's contributions are merged into the block arrays exactly as the
// kernels' atomics merge them (integer max / min / add). The tests compare every result with
// the reference and check that every walk gives the same bits. What this cannot show (warp
// shuffles, atomics, the device instruction path, memory code) is listed in §A.4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "numref/mor.hpp"
#include "numref/format.hpp"
#include "numref/mma.hpp"
#include "numref_arith/cast.cuh"
#include "numref_arith/gaussws.cuh"
#include "numref_cuda/quantize_plan.hpp"

namespace numref_cuda::host {

// §A.4 How the emulation walks the units.
struct Walk {
  enum class Order : std::uint8_t { forward, reverse, shuffled };
  std::uint32_t threads = 256;  // simulated threads of the grid-stride loop
  Order order = Order::forward;
  std::uint64_t seed = 1;  // for Order::shuffled
};

// §A.3 The cast kernels of api.hpp's try_cast: n codes (one per 32-bit word, element order)
// converted from -> to by the kernel cast_kernels.hpp's with_cast_kernel selects for p (the
// portable per-element function convert_as of cast.cuh; the §A.5 hardware path is not
// emulated: its lanes equal the portable ones, §A.4 item 3). The units are the element-wise
// kernel's 16-byte chunks (V = 16 / the narrower side's bytes per code). `r`: the explicit random
// values of stochastic rounding (element order). Throws std::invalid_argument with
// cast_support()'s message for what no kernel implements; returns false when a random value has
// more than k bits (the device call fails with cast_random_error(), the output is not valid).
bool cast(const std::uint32_t* in, numref::FormatId from, std::uint32_t* out, numref::FormatId to, std::size_t n,
          const CastPolicy& p, const std::uint32_t* r, const Walk& w = {});

// §13 – §18 pass 1 and the scale step: per block (block-row-major) the amax, the stored scale and
// the factors; per group the GAM mantissa; the NVFP4 tensor amax.
struct ScaleOut {
  std::vector<std::uint32_t> amax, scales, group_mantissa;
  std::uint32_t tensor_amax = 0;
  std::vector<BlockFactors> factors;
};
ScaleOut scale(const QuantizePlan& p, const void* x, const Walk& w = {});

// §19 quantize (codes), fake-quant (`fake`: codes of p.out, element order) or both.
struct QuantizeOut {
  std::vector<std::uint8_t> codes;
  std::vector<std::uint32_t> fake;
  ScaleOut scale;
  Counts counts;
  bool random_ok = true;  // false: an explicit random value had more than k bits (§4.3)
};
// `row_blocks` runs the one-pass row-block path (§A.7 item 3; requires p.row_blocks): the
// simulated threads walk the blocks instead of the units.
QuantizeOut quantize(const QuantizePlan& p, const void* x, const ElementRandom& rnd, bool want_codes, bool want_fake,
                     const Walk& w = {}, bool row_blocks = false);

// §19.3 dequantize from the metadata alone (codes in element order, scales per block, group
// mantissas per group, NVFP4 tensor amax).
std::vector<std::uint32_t> dequantize(const QuantizePlan& p, const std::uint8_t* codes, const std::uint32_t* scales,
                                      const std::uint32_t* group_mantissa, std::uint32_t tensor_amax,
                                      const Walk& w = {});

// §26 tensor-level MoR (sources f32 / bf16, E4M3 elements, output bf16).
struct TensorMorOut {
  Verdict verdict;
  bool quantized = false;
  ErrorSumValue error{};
  std::uint32_t mean = 0;
  ScaleOut scale;
  std::vector<std::uint8_t> codes;  // the E4M3 codes (written by the error pass)
};
TensorMorOut tensor_mor(const numref::TensorView& x, const numref::TensorMorSpec& spec, const Walk& w = {});

// §27 sub-tensor MoR (sources f32 / bf16, output bf16).
struct SubtensorMorOut {
  std::vector<std::uint8_t> type;
  std::vector<Verdict> eq3, eq4;
  std::vector<ErrorSumValue> e4m3_sum, e5m2_sum;
  std::vector<std::uint32_t> fake;
  ScaleOut e4m3_scale, e5m2_scale;
};
SubtensorMorOut subtensor_mor(const numref::TensorView& x, const numref::SubtensorMorSpec& spec, const Walk& w = {});

// §A.8 The MoR plans (shared with the device API): the quantization of one type over the
// scaling / selection partition, checked for what the MoR kernels implement (E4M3 / E5M2
// elements, output bf16).
QuantizePlan plan_tensor_mor(const numref::TensorView& x, const numref::TensorMorSpec& spec);
void plan_subtensor_mor(const numref::TensorView& x, const numref::SubtensorMorSpec& spec, QuantizePlan& e4m3,
                        QuantizePlan& e5m2);

}  // namespace numref_cuda::host

namespace numref_cuda::host {

// §30, §A.13 GaussWS, forward and backward, as the kernels of cuda/src/gaussws.cu compute it: one
// simulated CUDA block per 32 x 32 tile (the grid-stride loop over tiles is walked by `threads`
// simulated blocks in the walk's order), its 256 lanes (gaussws.cuh's lane layout) forward or, for
// the reverse walk, backward, their amax and exact-sum contributions merged by integer max / add
// as the kernels' shared-memory atomics merge them. w and g: codes of wf / gf (f32 or bf16);
// bt: one binary32 per tile; u: one 16-bit word per element unless p.key. Throws
// std::invalid_argument for a non-finite b_t (naming the block) and for a value the kernels' bounds
// cannot decide (gaussws_plan.hpp's messages).
struct GausswsOut {
  std::vector<std::uint32_t> r_packed, scale, grad;  // §30.9 packed R, §30.4 s, §30.7 dL/db_t
  std::vector<std::uint16_t> w_hat;                  // §30.5 bf16 codes
};
GausswsOut gaussws(const gaussws::Problem& p, numref::FormatId wf, const void* w, const std::uint32_t* bt,
                   const std::uint16_t* u, numref::FormatId gf, const void* g, const Walk& walk = {});

// §36 – §38, §A.4 try_mma's kernels on the CPU: the operands decoded, then one simulated thread
// per element of D in the walk's order (the grid-stride loop over the m · n elements), each running
// its steps with mma.cuh's step(). Arguments as try_mma (host arrays). Throws std::invalid_argument
// for the ideal model.
void mma(const numref::MmaSpec& s, std::size_t m, std::size_t n, std::size_t k, const std::uint32_t* a,
         const std::uint32_t* b, const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb,
         std::uint32_t* d, std::uint8_t* flags, const Walk& walk = {});

}  // namespace numref_cuda::host
