// numref backend "reference": the reference itself behind the C ABI.   spec §31, §11
//
// It must pass everything: it is the runner's own expected-result function reached
// through the plugin machinery (dlopen, isolation, marshalling), so a failure here is a
// bug in the runner or the ABI layer, not in the reference. The tensor families rebuild
// the reference's QuantizeSpec from the C description alone (§31.5).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/convert.hpp"
#include "numref/quantize.hpp"
#include "numref/mor.hpp"

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

// ---- tensor families (§12–§20): the reference's quantize() behind the C description ----------

using TensorOp = numref::conform::TensorOpSpec;
TensorOp tensor_op(std::uint32_t family, const numref_tensor_op& op) { return numref::conform::tensor_spec_from_c(family, op); }

int tensor_supported(void*, std::uint32_t family, const numref_tensor_op* op) {
  if (!op || family > NUMREF_TENSOR_FAKE_QUANT) return 0;
  try {
    (void)tensor_op(family, *op);
    return 1;
  } catch (const std::exception&) {
    return 0;
  }
}

// Runs fn(op, view) with the error handling of every tensor entry point.
template <typename Fn>
std::int64_t tensor_call(void* ctx, std::uint32_t family, const numref_tensor_op* op, const void* x, Fn fn) {
  auto* inst = static_cast<Instance*>(ctx);
  try {
    if (!op) throw std::invalid_argument("no operation");
    const TensorOp t = tensor_op(family, *op);
    if (family == NUMREF_TENSOR_DEQUANTIZE) {
      fn(t, static_cast<const numref::TensorView*>(nullptr));
    } else {
      const numref::TensorView v(*t.src, x, t.rows, t.cols, t.rs, t.cs);
      fn(t, &v);
    }
  } catch (const std::exception& e) {
    inst->error = e.what();
    return -1;
  }
  return static_cast<std::int64_t>(op->rows) * static_cast<std::int64_t>(op->cols);
}

std::span<const std::uint32_t> random_of(const TensorOp& t, const numref_tensor_op& op, const std::uint32_t* r) {
  if (op.policy.round != NUMREF_ROUND_SR) return {};
  if (!r) throw std::invalid_argument("round=sr needs the r array");
  return {r, t.rows * t.cols};
}

void put_counts(const numref::QuantizeStats& s, std::uint64_t* counts) {
  if (!counts) return;
  counts[0] = s.saturated;
  counts[1] = s.flushed;
  counts[2] = s.nan;
  counts[3] = s.inf;
}

std::int64_t scale(void* ctx, const numref_tensor_op* op, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                   std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) {
  return tensor_call(ctx, NUMREF_TENSOR_SCALE, op, x, [&](const TensorOp& t, const numref::TensorView* v) {
    numref::Quantizer qz(t.spec, t.rows, t.cols);
    const std::size_t nb = qz.grid().count();
    std::vector<numref::Amax> a(nb);
    for (std::size_t b = 0; b < nb; ++b) a[b] = qz.amax(*v, b);
    qz.prepare(a);
    for (std::size_t b = 0; b < nb; ++b) {
      amax[b] = a[b].f32;
      scales[b] = qz.block_scale(b, a[b]).stored;
    }
    if (group_mantissa)
      for (std::size_t g = 0; g < qz.groups().size(); ++g) group_mantissa[g] = qz.groups()[g].m_g;
    if (tensor_amax) *tensor_amax = qz.tensor_amax().f32;
  });
}

std::int64_t quantize(void* ctx, const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                      std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax,
                      std::uint64_t* counts) {
  return tensor_call(ctx, NUMREF_TENSOR_QUANTIZE, op, x, [&](const TensorOp& t, const numref::TensorView* v) {
    const numref::QuantizeResult res =
        numref::quantize(*v, t.spec, std::span<std::uint8_t>(codes, t.rows * t.cols), random_of(t, *op, r));
    std::copy(res.meta.scales.begin(), res.meta.scales.end(), scales);
    if (group_mantissa) std::copy(res.meta.group_mantissa.begin(), res.meta.group_mantissa.end(), group_mantissa);
    if (tensor_amax) *tensor_amax = res.meta.tensor_amax;
    put_counts(res.total, counts);
  });
}

std::int64_t dequantize(void* ctx, const numref_tensor_op* op, const std::uint8_t* codes, const std::uint32_t* scales,
                        const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax, std::uint32_t* out) {
  return tensor_call(ctx, NUMREF_TENSOR_DEQUANTIZE, op, nullptr, [&](const TensorOp& t, const numref::TensorView*) {
    numref::ScaleMeta m;
    m.rule = t.spec.rule;
    m.element = t.spec.element;
    m.rows = t.rows;
    m.cols = t.cols;
    m.partition = t.spec.partition;
    m.group = t.spec.group;
    m.q_max = *t.spec.q_max;
    m.dequant = t.spec.dequant;
    m.wide = t.spec.wide;
    m.scales.assign(scales, scales + op->n_blocks);
    if (m.rule == numref::ScaleRule::gam) {
      if (!group_mantissa) throw std::invalid_argument("gam needs the group mantissas");
      m.group_mantissa.assign(group_mantissa, group_mantissa + op->n_groups);
    }
    if (m.rule == numref::ScaleRule::nvfp4) {
      if (!tensor_amax) throw std::invalid_argument("nvfp4 needs the tensor amax");
      m.tensor_amax = *tensor_amax;
    }
    numref::dequantize(std::span<const std::uint8_t>(codes, t.rows * t.cols), m, std::span<std::uint32_t>(out, t.rows * t.cols));
  });
}

std::int64_t fake_quant(void* ctx, const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint32_t* out,
                        std::uint64_t* counts) {
  return tensor_call(ctx, NUMREF_TENSOR_FAKE_QUANT, op, x, [&](const TensorOp& t, const numref::TensorView* v) {
    const numref::QuantizeStats st = numref::fake_quantize(*v, t.spec, *t.out, std::span<std::uint32_t>(out, t.rows * t.cols),
                                                           random_of(t, *op, r));
    put_counts(st, counts);
  });
}

// ---- MoR families (1.2; §26, §27): numref::tensor_mor / subtensor_mor behind the C description ----

struct MorOp {
  const numref::Format* src;
  std::size_t rows, cols;
  std::ptrdiff_t rs, cs;
  numref::Partition part;
};

// §31.7 Validates the description: a bf16 / f16 / f32 source, a bf16 output, the §26.1 element
// policy (ocp, saturating) and a reduced threshold with den >= 1 (mor). Throws std::invalid_argument.
MorOp mor_op(std::uint32_t family, const numref_mor_op& op) {
  if (op.struct_size < sizeof(numref_mor_op)) throw std::invalid_argument("numref_mor_op too small");
  const bool tensor = family == NUMREF_TENSOR_MOR;
  if (tensor ? op.kind != NUMREF_MOR_TENSOR : (op.kind != NUMREF_MOR_THREE_WAY && op.kind != NUMREF_MOR_TWO_WAY))
    throw std::invalid_argument("MoR kind does not match the family");
  const numref::Format* src = numref::conform::format_from_c(op.source);
  if (!src || (src->id != numref::FormatId::bf16 && src->id != numref::FormatId::f16 && src->id != numref::FormatId::f32))
    throw std::invalid_argument("MoR source must be bf16, f16 or f32");
  if (op.out_format != NUMREF_FMT_BF16) throw std::invalid_argument("MoR output must be bf16");
  if (tensor && op.threshold_den == 0) throw std::invalid_argument("threshold denominator 0");
  const auto pol = numref::conform::from_c_policy(op.policy);
  const numref::QuantizeSpec q = numref::mor_quantize_spec(numref::format(numref::FormatId::f8e4m3fn));
  if (!pol || !(*pol == q.policy)) throw std::invalid_argument("MoR element policy must be the §26.1 policy");
  if (op.rows == 0 || op.cols == 0 || op.block_rows == 0 || op.block_cols == 0) throw std::invalid_argument("empty shape");
  return {src, op.rows, op.cols, static_cast<std::ptrdiff_t>(op.row_stride), static_cast<std::ptrdiff_t>(op.col_stride),
          numref::Partition::blocks(op.block_rows, op.block_cols)};
}

int mor_supported(void*, std::uint32_t family, const numref_mor_op* op) {
  if (!op || (family != NUMREF_TENSOR_MOR && family != NUMREF_TENSOR_MOR_SUB)) return 0;
  try {
    (void)mor_op(family, *op);
    return 1;
  } catch (const std::exception&) {
    return 0;
  }
}

std::int64_t mor(void* ctx, const numref_mor_op* op, const void* x, numref_mor_result* res, std::uint32_t* scales) {
  auto* inst = static_cast<Instance*>(ctx);
  try {
    if (!op || !res || !scales) throw std::invalid_argument("null argument");
    const MorOp m = mor_op(NUMREF_TENSOR_MOR, *op);
    const numref::TensorView v(*m.src, x, m.rows, m.cols, m.rs, m.cs);
    numref::TensorMorSpec spec;
    spec.scaling = m.part;
    spec.threshold = numref::Threshold{op->threshold_num, op->threshold_den};
    const numref::TensorMorResult r = numref::tensor_mor(v, spec);
    numref::conform::to_c_tensor_mor(r, *res, scales);
    return static_cast<std::int64_t>(m.rows * m.cols);
  } catch (const std::exception& e) {
    inst->error = e.what();
    return -1;
  }
}

std::int64_t mor_sub(void* ctx, const numref_mor_op* op, const void* x, std::uint8_t* type, std::uint8_t* eq3,
                     std::uint8_t* eq4, numref_error_sum* e4m3_sum, numref_error_sum* e5m2_sum, std::uint32_t* e4m3_scales,
                     std::uint32_t* e5m2_scales, std::uint32_t* group_mantissa, std::uint32_t* out) {
  auto* inst = static_cast<Instance*>(ctx);
  try {
    if (!op) throw std::invalid_argument("null argument");
    const MorOp m = mor_op(NUMREF_TENSOR_MOR_SUB, *op);
    const numref::TensorView v(*m.src, x, m.rows, m.cols, m.rs, m.cs);
    numref::SubtensorMorSpec spec;
    spec.recipe = op->kind == NUMREF_MOR_THREE_WAY ? numref::SubtensorRecipe::three_way : numref::SubtensorRecipe::two_way;
    spec.blocks = m.part;
    const numref::SubtensorMorResult r = numref::subtensor_mor(v, spec);
    numref::conform::to_c_subtensor_mor(r, type, eq3, eq4, e4m3_sum, e5m2_sum, e4m3_scales, e5m2_scales, group_mantissa, out);
    return static_cast<std::int64_t>(m.rows * m.cols);
  } catch (const std::exception& e) {
    inst->error = e.what();
    return -1;
  }
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
  b.description = "the numref reference (exact integer arithmetic), every format, policy, profile and tensor operation";
  b.ops = "cast scale quantize dequantize fake-quant mor mor-sub";
  b.profiles = "ocp ieee cuda_satfinite cuda_nosat ml_dtypes";
  b.caps = NUMREF_CAP_FLAGS | NUMREF_CAP_COUNTS;
  b.departures = nullptr;
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
  b.mor_supported = mor_supported;
  b.mor = mor;
  b.mor_sub = mor_sub;
  return &inst->b;
}
