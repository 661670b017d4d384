// numref backend "cpu-fast": the C ABI around FastCast.                  spec §31
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "fast_cast.hpp"
#include "fast_quant.hpp"
#include "numref/backend.h"
#include "numref/conform/abi.hpp"

namespace {

using numref::cpu_fast::FastCast;
using numref::cpu_fast::FastQuant;
using numref::cpu_fast::QuantOp;

struct Instance {
  numref_backend b{};
  std::string error;
  // Conversions in use, most recent first (16-bit lookup tables are 320 KiB each).
  std::list<std::pair<std::string, std::unique_ptr<FastCast>>> cache;
  // Tensor operations in use, most recent first, by their parameter text.
  std::list<std::pair<std::string, std::unique_ptr<FastQuant>>> qcache;
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

// ---- tensor families (§12–§20) ----------------------------------------------------------------

std::optional<QuantOp> quant_op(std::uint32_t family, const numref_tensor_op* t, std::string& why) {
  using namespace numref;
  if (!t || t->struct_size < sizeof(numref_tensor_op)) {
    why = "numref_tensor_op from an older runner";
    return std::nullopt;
  }
  QuantOp q;
  q.src = conform::format_from_c(family == NUMREF_TENSOR_DEQUANTIZE ? NUMREF_FMT_F32 : t->source);  // unused by dequantize
  q.elem = conform::format_from_c(t->element);
  q.out = conform::format_from_c(family == NUMREF_TENSOR_FAKE_QUANT ? t->out_format : NUMREF_FMT_F32);
  const auto rule = conform::rule_from_c(t->rule);
  const auto pol = conform::from_c_policy(t->policy);
  const auto wide = conform::from_c_policy(t->wide);
  if (!q.src || !q.elem || !q.out || !rule || !pol || !wide) {
    why = "bad format, rule or policy";
    return std::nullopt;
  }
  q.rule = *rule;
  q.rows = t->rows;
  q.cols = t->cols;
  q.rs = static_cast<std::ptrdiff_t>(t->row_stride);
  q.cs = static_cast<std::ptrdiff_t>(t->col_stride);
  q.br = t->block_rows;
  q.bc = t->block_cols;
  q.gr = t->group_rows;
  q.gc = t->group_cols;
  q.nan_ignore = t->amax_nan == NUMREF_AMAX_IGNORE;
  q.inf_ignore = t->amax_inf == NUMREF_AMAX_IGNORE;
  q.fused = t->apply == NUMREF_APPLY_FUSED && family != NUMREF_TENSOR_DEQUANTIZE && family != NUMREF_TENSOR_SCALE;
  q.reciprocal = t->dequant == NUMREF_DEQUANT_RECIPROCAL;
  q.policy = *pol;
  q.wide = *wide;
  q.q_max = t->q_max;
  why = FastQuant::unsupported(q);
  if (!why.empty()) return std::nullopt;
  return q;
}

int tensor_supported(void*, std::uint32_t family, const numref_tensor_op* t) {
  std::string why;
  return family <= NUMREF_TENSOR_FAKE_QUANT && quant_op(family, t, why) ? 1 : 0;
}

const FastQuant* engine(Instance* inst, std::uint32_t family, const numref_tensor_op* t) {
  std::string key = std::to_string(family) + " " + (t && t->text ? t->text : "");
  auto it = inst->qcache.begin();
  while (it != inst->qcache.end() && it->first != key) ++it;
  if (it != inst->qcache.end()) {
    if (it != inst->qcache.begin()) inst->qcache.splice(inst->qcache.begin(), inst->qcache, it);
    return inst->qcache.front().second.get();
  }
  const auto q = quant_op(family, t, inst->error);
  if (!q) return nullptr;
  try {
    inst->qcache.emplace_front(std::move(key), std::make_unique<FastQuant>(*q));
  } catch (const std::exception& e) {
    inst->error = e.what();
    return nullptr;
  }
  if (inst->qcache.size() > 16) inst->qcache.pop_back();
  return inst->qcache.front().second.get();
}

std::int64_t elements(const numref_tensor_op* t) {
  return static_cast<std::int64_t>(t->rows) * static_cast<std::int64_t>(t->cols);
}

bool random_ok(Instance* inst, const numref_tensor_op* t, const std::uint32_t* r) {
  if (t->policy.round != NUMREF_ROUND_SR) return true;
  if (!r) {
    inst->error = "round=sr needs the r array";
    return false;
  }
  if (t->policy.sr_bits < 32) {
    std::uint32_t bad = 0;
    for (std::int64_t i = 0; i < elements(t); ++i) bad |= r[i] >> t->policy.sr_bits;
    if (bad) {
      inst->error = "an r value has more than k bits";
      return false;
    }
  }
  return true;
}

std::int64_t scale(void* ctx, const numref_tensor_op* t, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                   std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) {
  auto* inst = static_cast<Instance*>(ctx);
  (void)tensor_amax;
  const FastQuant* q = engine(inst, NUMREF_TENSOR_SCALE, t);
  if (!q) return -1;
  q->scale(x, amax, scales, group_mantissa);
  return elements(t);
}

std::int64_t quantize(void* ctx, const numref_tensor_op* t, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                      std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax,
                      std::uint64_t* counts) {
  auto* inst = static_cast<Instance*>(ctx);
  (void)tensor_amax;
  (void)counts;  // NUMREF_CAP_COUNTS is not declared
  const FastQuant* q = engine(inst, NUMREF_TENSOR_QUANTIZE, t);
  if (!q || !random_ok(inst, t, r)) return -1;
  q->quantize(x, r, codes, scales, group_mantissa);
  return elements(t);
}

std::int64_t dequantize(void* ctx, const numref_tensor_op* t, const std::uint8_t* codes, const std::uint32_t* scales,
                        const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax, std::uint32_t* out) {
  auto* inst = static_cast<Instance*>(ctx);
  (void)tensor_amax;
  const FastQuant* q = engine(inst, NUMREF_TENSOR_DEQUANTIZE, t);
  if (!q) return -1;
  if (!q->dequantize(codes, scales, group_mantissa, out, inst->error)) return -1;
  return elements(t);
}

std::int64_t fake_quant(void* ctx, const numref_tensor_op* t, const void* x, const std::uint32_t* r, std::uint32_t* out,
                        std::uint64_t* counts) {
  auto* inst = static_cast<Instance*>(ctx);
  (void)counts;
  const FastQuant* q = engine(inst, NUMREF_TENSOR_FAKE_QUANT, t);
  if (!q || !random_ok(inst, t, r)) return -1;
  q->fake_quant(x, r, out);
  return elements(t);
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
  b.description =
      "optimized CPU casts (branch-free f32 lanes, lookup tables for <=16-bit sources) and block quantization "
      "(integer amax, bit-arithmetic E8M0 / GAM scales, vectorised scale-and-convert)";
  b.ops = "cast scale quantize dequantize fake-quant";
  b.profiles = "ocp cuda_satfinite cuda_nosat ml_dtypes";
  b.caps = NUMREF_CAP_FLAGS;
  b.ctx = inst;
  b.last_error = last_error;
  b.close = close_instance;
  b.cast_supported = cast_supported;
  b.cast = cast;
  b.tensor_supported = tensor_supported;
  b.scale = scale;
  b.quantize = quantize;
  b.dequantize = dequantize;
  b.fake_quant = fake_quant;
  return &inst->b;
}
