// numref CUDA kernels — host API: validation and dispatch.                         spec §A.3
#include "numref_cuda/api.hpp"

#include <string>

#include "cast_hw.cuh"
#include "launch.hpp"
#include "numref_arith/format_list.hpp"
#include "numref_cuda/policy_map.hpp"
#include "numref_cuda/support.hpp"

namespace numref_cuda {
namespace {

thread_local std::string g_why;

cudaError_t invalid(std::string reason) {
  g_why = std::move(reason);
  return cudaErrorInvalidValue;
}

bool rounds(numref::FormatId from, numref::FormatId to) {
  return numref::format(from).man_bits > numref::format(to).man_bits;
}

void throw_on(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  if (e == cudaErrorInvalidValue && !g_why.empty()) throw std::invalid_argument(std::string(what) + ": " + g_why);
  throw CudaError(e, std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

namespace kernels {
cudaError_t invalid_argument(std::string reason) { return invalid(std::move(reason)); }
void clear_why() { g_why.clear(); }
}  // namespace kernels

CudaError::CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}

const std::string& why() { return g_why; }

std::string cast_support(numref::FormatId from, numref::FormatId to, const CastPolicy& p, const RandomSource& rnd) {
  return cast_support(from, to, p, rnd.values != nullptr || rnd.use_philox);  // support.cpp
}

namespace {
// §A.3 Stream positions offset .. offset + n - 1 must stay below 2^64.
std::string philox_range(const PhiloxStream& s, std::size_t n) {
  if (n > 0 && s.offset > ~std::uint64_t{0} - (static_cast<std::uint64_t>(n) - 1u))
    return "Philox stream: offset + n exceeds 2^64 stream positions (§A.3)";
  return {};
}
}  // namespace

cudaError_t try_cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n,
                     const CastPolicy& p, const RandomSource& rnd, cudaStream_t stream,
                     std::uint32_t* device_status) noexcept {
  g_why.clear();
  try {
    if (const std::string err = cast_support(from, to, p, rnd); !err.empty()) return invalid(err);
    if (n == 0) return cudaSuccess;
    if (in == nullptr || out == nullptr) return invalid("null device pointer");
    if (p.mode == Mode::sr && rnd.use_philox)
      if (const std::string err = philox_range(rnd.philox, n); !err.empty()) return invalid(err);
    kernels::RandomArgs ra;
    std::uint32_t* own_status = nullptr;
    const bool checks_values = p.mode == Mode::sr && rounds(from, to) && rnd.values != nullptr;
    if (p.mode == Mode::sr) {
      ra.values = rnd.use_philox ? nullptr : rnd.values;
      ra.philox = rnd.philox;
      ra.k = p.sr_bits;
      if (checks_values) {
        if (device_status == nullptr) {
          cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&own_status), sizeof(std::uint32_t), stream);
          if (e != cudaSuccess) return e;
          e = cudaMemsetAsync(own_status, 0, sizeof(std::uint32_t), stream);
          if (e != cudaSuccess) return e;
          ra.status = own_status;
        } else {
          ra.status = device_status;
        }
      }
    }
    cudaError_t e = is_narrow_cast(from, to) ? kernels::launch_narrow(from, to, in, out, n, p, ra, stream)
                                             : kernels::launch_wide(from, to, in, out, n, p, ra, stream);
    if (own_status != nullptr) {
      std::uint32_t status = 0;
      if (e == cudaSuccess) e = cudaMemcpyAsync(&status, own_status, sizeof status, cudaMemcpyDeviceToHost, stream);
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
      const cudaError_t f = cudaFreeAsync(own_status, stream);
      if (e == cudaSuccess) e = f;
      if (e == cudaSuccess && (status & 1u) != 0u) return invalid(cast_random_error(p.sr_bits));
    }
    return e;
  } catch (const std::exception& ex) {
    return invalid(ex.what());
  }
}

void cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n, const CastPolicy& p,
          const RandomSource& rnd, cudaStream_t stream, std::uint32_t* device_status) {
  throw_on(try_cast(in, from, out, to, n, p, rnd, stream, device_status), "numref_cuda::cast");
}

void cast(const void* in, numref::FormatId from, void* out, numref::FormatId to, std::size_t n, const numref::Policy& p,
          const RandomSource& rnd, cudaStream_t stream) {
  const CastPolicy cp = cast_policy(p, numref::format(from), numref::format(to));  // throws for unsupported knobs
  cast(in, from, out, to, n, cp, rnd, stream, nullptr);
}

cudaError_t try_cast_to_e8m0(const void* in, numref::FormatId from, std::uint8_t* out, std::size_t n,
                             const E8m0Policy& p, cudaStream_t stream) noexcept {
  g_why.clear();
  if (!has_role(from, kWide))
    return invalid("no CUDA f8e8m0fnu kernel for source " + std::string(numref::format(from).name) + " (" +
                   role_names(kWide) + ")");
  if (n == 0) return cudaSuccess;
  if (in == nullptr || out == nullptr) return invalid("null device pointer");
  return kernels::launch_e8m0(from, in, out, n, p, stream);
}

void cast_to_e8m0(const void* in, numref::FormatId from, std::uint8_t* out, std::size_t n, const E8m0Policy& p,
                  cudaStream_t stream) {
  throw_on(try_cast_to_e8m0(in, from, out, n, p, stream), "numref_cuda::cast_to_e8m0");
}

cudaError_t try_philox_bits(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k,
                            cudaStream_t stream) noexcept {
  g_why.clear();
  if (k < 1 || k > 32) return invalid("philox_bits: k must be in 1..32, got " + std::to_string(k));
  if (const std::string err = philox_range(s, n); !err.empty()) return invalid(err);
  if (n == 0) return cudaSuccess;
  if (out == nullptr) return invalid("null device pointer");
  return kernels::launch_philox(out, n, s, k, stream);
}

void philox_bits(std::uint32_t* out, std::size_t n, const PhiloxStream& s, int k, cudaStream_t stream) {
  throw_on(try_philox_bits(out, n, s, k, stream), "numref_cuda::philox_bits");
}

Path cast_path(numref::FormatId from, numref::FormatId to, const CastPolicy& p, int cc) {
  bool hw_f8 = false;  // §A.5 the target has a cvt instruction (cast_hw.cuh)
  visit_format<kNarrow>(to, [&]<numref::FormatId D>() { hw_f8 = kernels::HwF8<D>::available; });
  if (is_narrow_cast(from, to) && hw_f8 && hardware_f8_path(p) && cc >= 89) return Path::hardware;
  if (from == numref::FormatId::f32 && to == numref::FormatId::bf16 && hardware_bf16_path(p) && cc >= 80)
    return Path::hardware;
  return Path::portable;
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device / no driver" error
    return 0;
  }
  return n;
}

}  // namespace numref_cuda
