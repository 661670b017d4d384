// numref backend "reference": the reference itself behind the C ABI.   spec §31, §11
//
// It must pass everything: it is the runner's own expected-result function reached
// through the plugin machinery (dlopen, isolation, marshalling), so a failure here is a
// bug in the runner or the ABI layer, not in the reference.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/convert.hpp"

namespace {

using numref::conform::format_from_c;
using numref::conform::from_c_policy;

struct Instance {
  numref_backend b{};
  std::string error;
};

const char* last_error(void* ctx) {
  auto* in = static_cast<Instance*>(ctx);
  return in->error.empty() ? nullptr : in->error.c_str();
}

void close_instance(void* ctx) { delete static_cast<Instance*>(ctx); }

// §31.4 Every conversion the reference defines: any pair, any valid policy.
int cast_supported(void*, std::uint32_t from, std::uint32_t to, const numref_policy* p) {
  const numref::Format* f = format_from_c(from);
  const numref::Format* t = format_from_c(to);
  if (!f || !t || !p) return 0;
  const auto pol = from_c_policy(*p);
  if (!pol) return 0;
  return numref::validate(*pol, *t).empty() ? 1 : 0;
}

std::int64_t cast(void* ctx, std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                  const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) {
  auto* inst = static_cast<Instance*>(ctx);
  const numref::Format* f = format_from_c(from);
  const numref::Format* t = format_from_c(to);
  const auto pol = p ? from_c_policy(*p) : std::nullopt;
  if (!f || !t || !pol) {
    inst->error = "bad format id or policy";
    return -1;
  }
  try {
    const numref::Converter conv(*f, *t, *pol);
    const bool sr = numref::effective_round(*t, *pol) == numref::Round::sr;
    if (sr && !r) {
      inst->error = "round=sr needs the r array";
      return -1;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (in[i] & ~f->mask()) {  // §2.4: bits above the width are an error at the ABI
        inst->error = "input " + std::to_string(in[i]) + " has bits above the " + std::to_string(f->bits) + "-bit width";
        return -1;
      }
      const numref::Result res = conv(in[i], sr ? r[i] : 0u);
      out[i] = res.bits;
      if (flags) flags[i] = res.flags;
    }
  } catch (const std::exception& e) {
    inst->error = e.what();
    return -1;
  }
  return static_cast<std::int64_t>(n);
}

}  // namespace

extern "C" NUMREF_BACKEND_EXPORT std::uint32_t numref_backend_abi_version(void) { return NUMREF_BACKEND_ABI_VERSION; }

extern "C" NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err,
                                                                           std::size_t err_size) {
  if (args && *args) {
    std::snprintf(err, err_size, "the reference backend takes no arguments (got '%s')", args);
    return nullptr;
  }
  auto* inst = new (std::nothrow) Instance;
  if (!inst) return nullptr;
  numref_backend& b = inst->b;
  b.abi_version = NUMREF_BACKEND_ABI_VERSION;
  b.struct_size = sizeof(numref_backend);
  b.name = "reference";
  b.version = "numref 0.1";
  b.description = "the numref reference (exact integer arithmetic), every format, policy and profile";
  b.ops = "cast";
  b.profiles = "ocp ieee cuda_satfinite cuda_nosat ml_dtypes";
  b.caps = NUMREF_CAP_FLAGS;
  b.departures = nullptr;
  b.ctx = inst;
  b.last_error = last_error;
  b.close = close_instance;
  b.cast_supported = cast_supported;
  b.cast = cast;
  return &inst->b;
}
