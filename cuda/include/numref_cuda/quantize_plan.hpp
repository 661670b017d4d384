// numref CUDA kernels — from a numref::QuantizeSpec to the constants of the block kernels.
//                                                                                     spec §A.7
//
// Host-only (plain C++, no CUDA headers): used by the device API (api.hpp), by the
// host emulation of the kernels (host_run.hpp), by the conformance plugin and by the tests. It
// validates once: the reference's own checks (numref::Quantizer: element format, q_max, groups,
// fused + add / daz, ...), then what the kernels implement, each refusal an std::invalid_argument
// that names the setting:
//   sources: format_list.hpp's kSource rows (f32, bf16, f16: 16-byte chunks of 4 or 8 codes);
//   elements: its kElement rows (f8e4m3fn, f8e5m2, f6e3m2fn, f6e2m3fn, f4e2m1fn, int8);
//   every scale kind of numref::kScaleRules (§14–§20); every rounding mode (rne, rna, rtz, rup, rdn, sr fraction / add);
//   every NaN / Inf / overflow knob; not daz=1 or ftz=1 (element or wide policy);
//   fake-quant outputs bf16, f16, f32; rows and cols below 2^31, at most 2^38 elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "numref/format.hpp"
#include "numref/quantize.hpp"
#include "numref_arith/tiling.cuh"

namespace numref_cuda {

// §A.7 Rows of a unit (at most): 16 rows of one 16-byte chunk per thread.
inline constexpr std::uint32_t kUnitRows = 16;
// §22.2 / §A.8 The largest tensor the device accumulators are proved for.
inline constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 38;

struct QuantizePlan {
  numref::QuantizeSpec spec;  // as resolved by the reference's Quantizer (q_max, apply)
  numref::FormatId source = numref::FormatId::f32;
  numref::FormatId element = numref::FormatId::f8e4m3fn;
  numref::FormatId out = numref::FormatId::bf16;  // fake-quant output (§19.6)
  Geometry geom;                                  // vec is set per launch (set_vector_loads)
  ScaleParams scale;
  AmaxPolicy amax;
  CastPolicy elem;         // element conversion (int8: mode, k, nan_to_finite)
  bool fused = false;      // §19.2 application
  bool symmetric = false;  // §20.2 int8 range
  CastPolicy wide_d;       // element code -> f32 under the wide policy (§19.3)
  CastPolicy wide_out;     // f32 -> out under the wide policy (§19.6)
  int sr_bits = 0;         // k when the element policy rounds stochastically, else 0
  std::uint32_t n_blocks = 0, n_groups = 1;
  std::uint32_t chunk = 0;
  // §A.7 item 3 The one-pass row-block path applies: one row per block, at most 256 columns per
  // block, and a rule whose scale needs only the block's amax (not gam, not nvfp4).
  bool row_blocks = false;  // V: elements per 16-byte chunk of the source
};

// §A.7 The plan of a quantization of a rows × cols view of `source` (strides in elements).
// Throws std::invalid_argument naming the problem (see above).
QuantizePlan plan_quantize(const numref::QuantizeSpec& spec, numref::FormatId source, std::size_t rows,
                           std::size_t cols, std::ptrdiff_t row_stride, std::ptrdiff_t col_stride,
                           numref::FormatId out = numref::FormatId::bf16);

// §A.7 Whether 16-byte vector loads are valid for the view at `data`: dense rows (column stride
// 1), 16-byte aligned base and row pitch.
bool vector_loads_ok(const QuantizePlan& p, const void* data);

// §A.7 The geometry of a view and partition (with the group partition for GAM), V elements per
// chunk; used by the plans and by the MoR entry points.
Geometry make_geometry(std::size_t rows, std::size_t cols, std::ptrdiff_t rs, std::ptrdiff_t cs,
                       const numref::Partition& blocks, const numref::Partition& groups, std::uint32_t V);

// §A.7 Text of the plan for messages: "bf16 -> f8e4m3fn gam block:128x128 (4 blocks)".
std::string describe(const QuantizePlan& p);

}  // namespace numref_cuda
