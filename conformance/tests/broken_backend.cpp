// A deliberately broken backend for the runner's tests (not installed with the built-in
// backends). It is the reference, damaged as its argument says:        spec §33.4, §33.6
//   ?tie464    f32 -> f8e4m3fn: 464 (the tie 448|480, expected 7e) gives 7f   -> class "tie"
//   ?nansign   NaN results lose their sign                                    -> "nan/sign"
//   ?noinexact the inexact flag is never raised                               -> "flags"
//   ?count     every batch of more than one case returns one result too few   -> exit 3
//   ?crash     SIGSEGV at the first f32 -> f8e5m2 batch                       -> exit 3
//   ?hang      sleeps forever at the first f32 -> f8e5m2 batch                -> exit 3
//   ?error     returns an error at the first f32 -> f8e5m2 batch              -> exit 3
// Built a second time with NUMREF_TEST_ABI=99 to test the ABI-version refusal.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/convert.hpp"

#ifndef NUMREF_TEST_ABI
#define NUMREF_TEST_ABI NUMREF_BACKEND_ABI_VERSION
#endif

namespace {

using numref::conform::format_from_c;
using numref::conform::from_c_policy;

struct Instance {
  numref_backend b{};
  std::string mode, error;
};

const char* last_error(void* ctx) { return static_cast<Instance*>(ctx)->error.c_str(); }
void close_instance(void* ctx) { delete static_cast<Instance*>(ctx); }

int cast_supported(void*, std::uint32_t from, std::uint32_t to, const numref_policy* p) {
  const numref::Format* t = format_from_c(to);
  if (!format_from_c(from) || !t || !p) return 0;
  const auto pol = from_c_policy(*p);
  return pol && numref::validate(*pol, *t).empty() ? 1 : 0;
}

std::int64_t cast(void* ctx, std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                  const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) {
  auto* inst = static_cast<Instance*>(ctx);
  const numref::Format& f = *format_from_c(from);
  const numref::Format& t = *format_from_c(to);
  const bool trigger = from == NUMREF_FMT_F32 && to == NUMREF_FMT_F8E5M2;
  if (trigger && inst->mode == "crash") std::raise(SIGSEGV);
  if (trigger && inst->mode == "hang")
    for (;;) pause();
  if (trigger && inst->mode == "error") {
    inst->error = "deliberate error for the test";
    return -1;
  }
  const numref::Converter conv(f, t, *from_c_policy(*p));
  const bool sr = numref::effective_round(t, *from_c_policy(*p)) == numref::Round::sr;
  for (std::size_t i = 0; i < n; ++i) {
    numref::Result res = conv(in[i], sr ? r[i] : 0u);
    if (inst->mode == "tie464" && from == NUMREF_FMT_F32 && to == NUMREF_FMT_F8E4M3FN && in[i] == 0x43E80000u)
      res.bits = 0x7F;
    if (inst->mode == "nansign" && t.is_signed && numref::decode(res.bits, t).cls == numref::Class::nan)
      res.bits &= ~t.sign_bit();
    if (inst->mode == "noinexact") res.flags &= static_cast<std::uint8_t>(~numref::kInexact);
    out[i] = res.bits;
    if (flags) flags[i] = res.flags;
  }
  if (inst->mode == "count" && n > 1) return static_cast<std::int64_t>(n - 1);
  return static_cast<std::int64_t>(n);
}

}  // namespace

extern "C" NUMREF_BACKEND_EXPORT std::uint32_t numref_backend_abi_version(void) { return NUMREF_TEST_ABI; }

extern "C" NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err,
                                                                           std::size_t err_size) {
  const std::string mode = args ? args : "";
  if (!mode.empty() && mode != "tie464" && mode != "nansign" && mode != "noinexact" && mode != "count" &&
      mode != "crash" && mode != "hang" && mode != "error") {
    std::snprintf(err, err_size, "unknown mode '%s'", mode.c_str());
    return nullptr;
  }
  auto* inst = new (std::nothrow) Instance;
  if (!inst) return nullptr;
  inst->mode = mode;
  numref_backend& b = inst->b;
  b.abi_version = NUMREF_TEST_ABI;
  b.struct_size = sizeof(numref_backend);
  b.name = "broken";
  b.version = "test";
  b.description = "the reference, deliberately damaged (conformance/tests/broken_backend.cpp)";
  b.ops = "cast";
  b.profiles = "ocp";
  b.caps = NUMREF_CAP_FLAGS;
  b.ctx = inst;
  b.last_error = last_error;
  b.close = close_instance;
  b.cast_supported = cast_supported;
  b.cast = cast;
  return &inst->b;
}
