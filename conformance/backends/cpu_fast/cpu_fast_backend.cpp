// numref backend "cpu-fast": the C ABI around FastCast.                  spec §31
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <new>
#include <string>

#include "fast_cast.hpp"
#include "numref/backend.h"
#include "numref/conform/abi.hpp"

namespace {

using numref::cpu_fast::FastCast;

struct Instance {
  numref_backend b{};
  std::string error;
  // Conversions in use, most recent first (16-bit lookup tables are 320 KiB each).
  std::list<std::pair<std::string, std::unique_ptr<FastCast>>> cache;
};

std::string key_of(std::uint32_t from, std::uint32_t to, const numref_policy& p) {
  std::string k(reinterpret_cast<const char*>(&p), offsetof(numref_policy, reserved));
  k.push_back(static_cast<char>(from));
  k.push_back(static_cast<char>(to));
  return k;
}

const char* last_error(void* ctx) {
  auto* in = static_cast<Instance*>(ctx);
  return in->error.empty() ? nullptr : in->error.c_str();
}
void close_instance(void* ctx) { delete static_cast<Instance*>(ctx); }

// Every pair and policy that the spec defines (§4.3 validity checked here).
bool valid(std::uint32_t from, std::uint32_t to, const numref_policy* p, std::string& why) {
  const numref::Format* f = numref::conform::format_from_c(from);
  const numref::Format* t = numref::conform::format_from_c(to);
  if (!f || !t || !p) {
    why = "bad format id";
    return false;
  }
  const auto pol = numref::conform::from_c_policy(*p);
  if (!pol) {
    why = "policy field out of range";
    return false;
  }
  const bool sr = p->round == NUMREF_ROUND_SR ||
                  (t->man_bits == 0 && !t->is_integer() && p->e8m0_round == NUMREF_E8M0_FOLLOW && p->round == NUMREF_ROUND_SR);
  if (sr && (p->sr_bits < 1 || p->sr_bits > 32)) {
    why = "round=sr needs sr_bits in 1..32";
    return false;
  }
  if (sr && p->sr_variant == NUMREF_SR_ADD && t->is_integer()) {
    why = "sr_variant=add is defined for floating-point targets only";
    return false;
  }
  return true;
}

int cast_supported(void*, std::uint32_t from, std::uint32_t to, const numref_policy* p) {
  std::string why;
  return valid(from, to, p, why) ? 1 : 0;
}

std::int64_t cast(void* ctx, std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                  const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) {
  auto* inst = static_cast<Instance*>(ctx);
  if (!valid(from, to, p, inst->error)) return -1;
  const std::string key = key_of(from, to, *p);
  auto it = inst->cache.begin();
  while (it != inst->cache.end() && it->first != key) ++it;
  if (it == inst->cache.end()) {
    try {
      inst->cache.emplace_front(key, std::make_unique<FastCast>(*numref::conform::format_from_c(from),
                                                                *numref::conform::format_from_c(to),
                                                                *numref::conform::from_c_policy(*p)));
    } catch (const std::exception& e) {
      inst->error = e.what();
      return -1;
    }
    if (inst->cache.size() > 32) inst->cache.pop_back();
  } else if (it != inst->cache.begin()) {
    inst->cache.splice(inst->cache.begin(), inst->cache, it);
  }
  const FastCast& fc = *inst->cache.front().second;
  // §2.4 inputs with bits above the source width, and r >= 2^k, are errors.
  const std::uint32_t smask = fc.plan().s_mask;
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad |= in[i] & ~smask;
  if (bad) {
    inst->error = "an input code has bits above the source format's width";
    return -1;
  }
  if (fc.plan().mode == numref::Round::sr) {
    if (!r) {
      inst->error = "round=sr needs the r array";
      return -1;
    }
    const int k = fc.plan().k;
    if (k < 32) {
      std::uint32_t rb = 0;
      for (std::size_t i = 0; i < n; ++i) rb |= r[i] >> k;
      if (rb) {
        inst->error = "an r value has more than k = " + std::to_string(k) + " bits";
        return -1;
      }
    }
  }
  fc.run(in, r, out, flags, n);
  return static_cast<std::int64_t>(n);
}

}  // namespace

extern "C" NUMREF_BACKEND_EXPORT std::uint32_t numref_backend_abi_version(void) { return NUMREF_BACKEND_ABI_VERSION; }

extern "C" NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err,
                                                                           std::size_t err_size) {
  if (args && *args) {
    std::snprintf(err, err_size, "cpu-fast takes no arguments (got '%s')", args);
    return nullptr;
  }
  auto* inst = new (std::nothrow) Instance;
  if (!inst) return nullptr;
  numref_backend& b = inst->b;
  b.abi_version = NUMREF_BACKEND_ABI_VERSION;
  b.struct_size = sizeof(numref_backend);
  b.name = "cpu-fast";
  b.version = "0.1";
  b.description = "optimized CPU casts: branch-free f32 lanes, lookup tables for <=16-bit sources";
  b.ops = "cast";
  b.profiles = "ocp cuda_satfinite cuda_nosat ml_dtypes";
  b.caps = NUMREF_CAP_FLAGS;
  b.ctx = inst;
  b.last_error = last_error;
  b.close = close_instance;
  b.cast_supported = cast_supported;
  b.cast = cast;
  return &inst->b;
}
