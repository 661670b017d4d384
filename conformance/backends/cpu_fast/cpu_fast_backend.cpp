// numref backend "cpu-fast": the C ABI around FastCast, FastQuant and GaussWS.       spec §32
#include <list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "fast_cast.hpp"
#include "fast_gaussws.hpp"
#include "fast_mma.hpp"
#include "fast_quant.hpp"
#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/conform/plugin.hpp"
#include "reference/reference_backend.hpp"

namespace {

using numref::cpu_fast::FastCast;
using numref::cpu_fast::FastQuant;
using numref::cpu_fast::QuantOp;

std::string key_of(std::uint32_t from, std::uint32_t to, const numref_policy& p) {
  std::string k(reinterpret_cast<const char*>(&p), offsetof(numref_policy, profile));
  k.push_back(static_cast<char>(from));
  k.push_back(static_cast<char>(to));
  return k;
}

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
  const bool sr = p->round == NUMREF_ROUND_SR || (t->man_bits == 0 && !t->is_integer() &&
                                                  p->e8m0_round == NUMREF_E8M0_FOLLOW && p->round == NUMREF_ROUND_SR);
  if (sr && (p->sr_bits < 1 || p->sr_bits > 32)) {
    why = "round=sr needs sr_bits in 1..32";
    return false;
  }
  if (sr && p->sr_variant == NUMREF_SR_ADD && t->is_integer()) {
    why = "sr_variant=add is defined for floating-point targets only";
    return false;
  }
  if (const char* d = numref::cpu_fast::declined(*f, *t, *pol)) {
    why = d;
    return false;
  }
  return true;
}

// ---- tensor families (§12–§20) ----------------------------------------------------------------

std::optional<QuantOp> quant_op(std::uint32_t family, const numref_tensor_op* t, std::string& why) {
  using namespace numref;
  if (!t || t->struct_size < sizeof(numref_tensor_op)) {
    why = "numref_tensor_op from an older runner";
    return std::nullopt;
  }
  QuantOp q;
  q.src =
      conform::format_from_c(family == NUMREF_TENSOR_DEQUANTIZE ? NUMREF_FMT_F32 : t->source);  // unused by dequantize
  q.elem = conform::format_from_c(t->element);
  q.out = conform::format_from_c(family == NUMREF_TENSOR_FAKE_QUANT ? t->out_format : NUMREF_FMT_F32);
  if (q.elem && q.elem->has_single_nan()) {
    why = "cpu-fast does not implement the fnuz or P3109 formats (spec §2.2, §2.5)";
    return std::nullopt;
  }
  const auto rule = conform::rule_from_c(t->rule);
  const auto pol = conform::from_c_policy(t->policy);
  const auto wide = conform::from_c_policy(t->wide);
  const auto recipe = conform::from_c_recipe(t->recipe);
  if (!q.src || !q.elem || !q.out || !rule || !pol || !wide || !recipe) {
    why = "bad format, rule, policy or recipe";
    return std::nullopt;
  }
  q.recipe = *recipe;
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
  // §13.8 the runner sends nan_scale=all_ones_tensor with the tensor partition only (one block)
  q.tensor_partition = t->n_blocks == 1;
  why = FastQuant::unsupported(q);
  if (!why.empty()) return std::nullopt;
  return q;
}

std::int64_t elements(const numref_tensor_op* t) {
  return static_cast<std::int64_t>(t->rows) * static_cast<std::int64_t>(t->cols);
}

// §2.4 with round=sr, r holds k-bit values (0 <= r[i] < 2^k); throws otherwise.
void check_random(const numref_tensor_op* t, const std::uint32_t* r) {
  if (t->policy.round != NUMREF_ROUND_SR) return;
  if (!r) throw std::invalid_argument("round=sr needs the r array");
  if (t->policy.sr_bits < 32) {
    std::uint32_t bad = 0;
    for (std::int64_t i = 0; i < elements(t); ++i) bad |= r[i] >> t->policy.sr_bits;
    if (bad) throw std::invalid_argument("an r value has more than k bits");
  }
}

class CpuFast {
 public:
  static constexpr const char* name = "cpu-fast";
  static constexpr const char* version = "0.1";
  static constexpr const char* description =
      "optimized CPU casts (branch-free f32 lanes, lookup tables for <=16-bit sources) and block quantization "
      "(integer amax, bit-arithmetic E8M0 / GAM scales, vectorised scale-and-convert), GaussWS (the CUDA kernels' "
      "integer arithmetic, tile by tile)";
  static constexpr const char* profiles = "ocp cuda_satfinite cuda_nosat ml_dtypes";
  static constexpr std::uint32_t caps = NUMREF_CAP_FLAGS | NUMREF_CAP_RECIPE;  // recipes: declined by name

  static bool cast_supported(std::uint32_t from, std::uint32_t to, const numref_policy* p) {
    std::string why;
    return valid(from, to, p, why);
  }

  std::int64_t cast(std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                    const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) {
    std::string why;
    if (!valid(from, to, p, why)) throw std::invalid_argument(why);
    const std::string key = key_of(from, to, *p);
    auto it = cache_.begin();
    while (it != cache_.end() && it->first != key) ++it;
    if (it == cache_.end()) {
      cache_.emplace_front(
          key, std::make_unique<FastCast>(*numref::conform::format_from_c(from), *numref::conform::format_from_c(to),
                                          *numref::conform::from_c_policy(*p)));
      if (cache_.size() > 32) cache_.pop_back();
    } else if (it != cache_.begin()) {
      cache_.splice(cache_.begin(), cache_, it);
    }
    const FastCast& fc = *cache_.front().second;
    // §2.4 inputs with bits above the source width, and r >= 2^k, are errors.
    const std::uint32_t smask = fc.plan().s_mask;
    std::uint32_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad |= in[i] & ~smask;
    if (bad) throw std::invalid_argument("an input code has bits above the source format's width");
    if (fc.plan().mode == numref::Round::sr) {
      if (!r) throw std::invalid_argument("round=sr needs the r array");
      const int k = fc.plan().k;
      if (k < 32) {
        std::uint32_t rb = 0;
        for (std::size_t i = 0; i < n; ++i) rb |= r[i] >> k;
        if (rb) throw std::invalid_argument("an r value has more than k = " + std::to_string(k) + " bits");
      }
    }
    fc.run(in, r, out, flags, n);
    return static_cast<std::int64_t>(n);
  }

  static bool tensor_supported(std::uint32_t family, const numref_tensor_op* t) {
    std::string why;
    return family <= NUMREF_TENSOR_FAKE_QUANT && quant_op(family, t, why);
  }

  std::int64_t scale(const numref_tensor_op* t, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                     std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) {
    engine(NUMREF_TENSOR_SCALE, t).scale(x, amax, scales, group_mantissa, 1, tensor_amax);
    return elements(t);
  }

  std::int64_t quantize(const numref_tensor_op* t, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                        std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax,
                        std::uint64_t*) {  // counts: NUMREF_CAP_COUNTS is not declared
    const FastQuant& q = engine(NUMREF_TENSOR_QUANTIZE, t);
    check_random(t, r);
    q.quantize(x, r, codes, scales, group_mantissa, 1, nullptr, tensor_amax);
    return elements(t);
  }

  std::int64_t dequantize(const numref_tensor_op* t, const std::uint8_t* codes, const std::uint32_t* scales,
                          const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax, std::uint32_t* out) {
    std::string why;
    if (!engine(NUMREF_TENSOR_DEQUANTIZE, t)
             .dequantize(codes, scales, group_mantissa, out, why, 1, tensor_amax ? *tensor_amax : 0u))
      throw std::invalid_argument(why);
    return elements(t);
  }

  std::int64_t fake_quant(const numref_tensor_op* t, const void* x, const std::uint32_t* r, std::uint32_t* out,
                          std::uint64_t*) {
    const FastQuant& q = engine(NUMREF_TENSOR_FAKE_QUANT, t);
    check_random(t, r);
    q.fake_quant(x, r, out);
    return elements(t);
  }

  // ---- GaussWS (§30) -------------------------------------------------------------------------
  // Every description the reference accepts (its own check, §32.8).
  static bool gaussws_supported(const numref_gaussws_op* op) {
    (void)numref::conform::ReferenceBackend::gaussws_shape(op);  // throws (answered 0) for what it rejects
    return true;
  }

  std::int64_t gaussws(const numref_gaussws_op* op, const void* w, const std::uint32_t* bt, const std::uint16_t* u,
                       const std::uint64_t* key, const void* g, std::uint32_t* r_packed, std::uint32_t* scale,
                       std::uint32_t* w_hat, std::uint32_t* grad) {
    const numref::gaussws::Shape sh = numref::conform::ReferenceBackend::gaussws_shape(op);
    if (!w || !bt || !g || !r_packed || !scale || !w_hat || !grad) throw std::invalid_argument("null argument");
    numref::cpu_fast::GausswsOp g_op;
    g_op.rows = sh.m;
    g_op.cols = sh.n;
    g_op.w = numref::conform::format_from_c(op->w_format)->id;
    g_op.g = numref::conform::format_from_c(op->g_format)->id;
    g_op.key = op->noise == NUMREF_GAUSSWS_NOISE_KEY;
    g_op.sum_f32 = op->sum == NUMREF_GAUSSWS_SUM_F32;
    if (g_op.key ? !key : !u) throw std::invalid_argument(g_op.key ? "noise=key needs key" : "noise=bits needs u");
    if (g_op.key) g_op.seed = key[0], g_op.layer = key[1], g_op.step = key[2];
    numref::cpu_fast::gaussws(g_op, w, bt, u, g, r_packed, scale, w_hat, grad);
    return static_cast<std::int64_t>(sh.size());
  }

  // ---- MMA (§36 – §38): the fdpa models; the ideal is the reference's -----------------------------
  static bool mma_supported(const numref_mma_op* op) {
    if (!op) return false;
    const numref::MmaSpec s = numref::conform::mma_spec_from_c(*op);
    numref::validate(s, op->k);  // throws (answered 0) for what the reference rejects
    return numref::cpu_fast::mma_supported(s);
  }

  static std::int64_t mma(const numref_mma_op* op, const std::uint32_t* a, const std::uint32_t* b,
                          const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d,
                          std::uint8_t* flags) {
    if (!op || !a || !b || !c || !d) throw std::invalid_argument("null argument");
    const numref::MmaSpec s = numref::conform::mma_spec_from_c(*op);
    numref::validate(s, op->k);
    if (s.block && (!sa || !sb)) throw std::invalid_argument("block scales without sa / sb");
    numref::cpu_fast::mma(s, op->m, op->n, op->k, a, b, c, sa, sb, d, flags);
    return static_cast<std::int64_t>(std::size_t{op->m} * op->n);
  }

 private:
  // Conversions in use, most recent first (16-bit lookup tables are 320 KiB each).
  std::list<std::pair<std::string, std::unique_ptr<FastCast>>> cache_;
  // Tensor operations in use, most recent first, by their parameter text.
  std::list<std::pair<std::string, std::unique_ptr<FastQuant>>> qcache_;

  const FastQuant& engine(std::uint32_t family, const numref_tensor_op* t) {
    std::string key = std::to_string(family) + " " + (t && t->text ? t->text : "");
    auto it = qcache_.begin();
    while (it != qcache_.end() && it->first != key) ++it;
    if (it != qcache_.end()) {
      if (it != qcache_.begin()) qcache_.splice(qcache_.begin(), qcache_, it);
      return *qcache_.front().second;
    }
    std::string why;
    const auto q = quant_op(family, t, why);
    if (!q) throw std::invalid_argument(why);
    qcache_.emplace_front(std::move(key), std::make_unique<FastQuant>(*q));
    if (qcache_.size() > 16) qcache_.pop_back();
    return *qcache_.front().second;
  }
};

}  // namespace

NUMREF_BACKEND(CpuFast)
