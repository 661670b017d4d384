// numref CUDA kernels — GaussWS: the host-side checks and the messages of the failures shared by
// the device API (cuda/src/gaussws.cu), the host grid walk (host_run.cpp) and both plugins.
//                                                                            spec §30.1, §A.13
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "numref_arith/gaussws.cuh"

namespace numref_cuda::gaussws {

// Bits of the kernels' status word (OR-ed by the device, read by the host).
inline constexpr std::uint32_t kStatusBtNonFinite = 1u;    // §30.1 a NaN or ±Inf b_t
inline constexpr std::uint32_t kStatusExp2Undecided = 2u;  // §A.13 e's bounds straddle a boundary
inline constexpr std::uint32_t kStatusGradUndecided = 4u;  // §A.13 dL/db_t's bounds straddle a boundary

// The message of a non-zero status word ("" for 0).
inline std::string status_error(std::uint32_t status) {
  if (status & kStatusBtNonFinite) return "gaussws: a b_t is not finite (§30.1)";
  if (status & kStatusExp2Undecided)
    return "gaussws: RN32(2^(1 - b_t)) not decided by the kernels' 127-bit bounds (§A.13); use the reference";
  if (status & kStatusGradUndecided)
    return "gaussws: RN32(-ln2 s T) not decided by the kernels' 256-bit bounds of ln 2 (§A.13); use the reference";
  return {};
}

// §30.1 Throws std::invalid_argument naming the first block whose b_t (binary32 code) is NaN or ±Inf.
inline void check_bt(const std::uint32_t* bt, std::uint64_t n_blocks) {
  for (std::uint64_t b = 0; b < n_blocks; ++b)
    if (!f32_finite(bt[b]))
      throw std::invalid_argument("gaussws: b_t of block " + std::to_string(b) + " is not finite");
}

}  // namespace numref_cuda::gaussws
