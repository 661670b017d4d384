// numref CUDA kernels — host API.                                                  spec §35.3
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
// Kernels and the profile each implements (§35.2, docs/cuda.md); the rounding modes with a
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

#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref_cuda/cast.cuh"
#include "numref_cuda/philox.cuh"

namespace numref_cuda {

// §35.3 A CUDA runtime failure (the throwing API).
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what);
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// §35.3 The random values of a stochastic-rounding cast: none, an explicit device array
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

// §35.3 Why the last try_* call of this thread returned cudaErrorInvalidValue ("" otherwise).
const std::string& why();

// §35.2 Whether the kernels implement from -> to under p: "" if so, else the reason.
std::string cast_support(numref::FormatId from, numref::FormatId to, const CastPolicy& p,
                         const RandomSource& rnd);

// §35.3 Convert n codes. For stochastic rounding with explicit values, `device_status`
// (optional, a device word the caller zeroes first) gets bit 0 OR-ed in if any value was
// >= 2^k (the output is then not valid); without it the call checks the values itself and
// synchronizes `stream` to do so (cudaErrorInvalidValue, why() says which k).
cudaError_t try_cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n,
                     const CastPolicy& p, const RandomSource& rnd = {}, cudaStream_t stream = nullptr,
                     std::uint32_t* device_status = nullptr) noexcept;
void cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n, const CastPolicy& p,
          const RandomSource& rnd = {}, cudaStream_t stream = nullptr, std::uint32_t* device_status = nullptr);

// §35.2 The same with a numref::Policy, mapped by cast_policy() (policy_map.hpp), which rejects
// the knobs the kernels do not implement.
void cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n,
          const numref::Policy& p, const RandomSource& rnd = {}, cudaStream_t stream = nullptr);

// §35.3 f32 / bf16 -> f8e8m0fnu.
cudaError_t try_cast_to_e8m0(const void* in, numref::FormatId from, std::uint8_t* out, std::size_t n,
                             const E8m0Policy& p, cudaStream_t stream = nullptr) noexcept;
void cast_to_e8m0(const void* in, numref::FormatId from, std::uint8_t* out, std::size_t n, const E8m0Policy& p,
                  cudaStream_t stream = nullptr);

// §35.3 Export r_0 .. r_{n-1} of a Philox stream with k bits (1..32).
cudaError_t try_philox_bits(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k,
                            cudaStream_t stream = nullptr) noexcept;
void philox_bits(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k, cudaStream_t stream = nullptr);

// §35.5 Which path a cast runs on a device of compute capability `cc` (e.g. 89, 90).
enum class Path : std::uint8_t { portable, hardware };
Path cast_path(numref::FormatId from, numref::FormatId to, const CastPolicy& p, int cc);

// §35.4 Device presence: the number of CUDA devices, 0 when there is none or no driver.
int device_count() noexcept;

}  // namespace numref_cuda
