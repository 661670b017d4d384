// A deliberately broken backend for the runner's tests (not installed with the built-in
// backends). It is the reference, damaged as its argument says:        spec §33.4, §33.6
//   ?tie464    f32 -> f8e4m3fn: 464 (the tie 448|480, expected 7e) gives 7f   -> class "tie"
//   ?nansign   NaN results lose their sign                                    -> "nan/sign"
//   ?noinexact the inexact flag is never raised                               -> "flags"
//   ?count     every batch of more than one case returns one result too few   -> exit 3
//   ?crash     SIGSEGV at the first f32 -> f8e5m2 batch                       -> exit 3
//   ?hang      sleeps forever at the first f32 -> f8e5m2 batch                -> exit 3
//   ?error     returns an error at the first f32 -> f8e5m2 batch              -> exit 3
// and for the tensor families (§12–§20):
//   ?mxfloor   MX FLOOR implemented as RCEIL (TransformerEngine's rule)       -> "scale/rule=mx-rceil"
//   ?nanblock  a NaN does not poison its block (amax_nan=ignore always)       -> "scale/nan-block"
//   ?double448 rule amax: x * (q_max / amax) in binary64, rounded to binary32
//              once at the end (the binary32 S is not used)                   -> "scale/unrounded-factor"
//   ?recip     dequantize multiplies by RN32(1 / S) instead of dividing       -> "dequant/reciprocal"
//   ?counts    reports one saturated element too many                        -> "counts"
//   ?v10       a backend built against ABI 1.0 (struct_size ends after cast): the
//              tensor families are skipped-unsupported
// and for the MoR families (§26, §27):
//   ?morle     Eq. 2 decided as mean <= threshold (a tensor whose exact mean equals the
//              threshold is accepted)                                     -> "mor/decision"
//   ?morsum    the tensor-level error sum drops the last element (row-major of the view)
//                                                                         -> "mor/error-sum"
//   ?v11       a backend built against ABI 1.1 (struct_size ends before mor_supported): the
//              MoR families are skipped-unsupported
// Built a second time with NUMREF_TEST_ABI=99 to test the ABI-version refusal.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/convert.hpp"
#include "numref/mor.hpp"
#include "numref/quantize.hpp"
#include <cmath>

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

// ---- tensor families: the reference behind the C description, damaged by mode --------------

int tensor_supported(void*, std::uint32_t family, const numref_tensor_op* op) {
  try {
    (void)numref::conform::tensor_spec_from_c(family, *op);
    return 1;
  } catch (const std::exception&) {
    return 0;
  }
}

numref::conform::TensorOpSpec damaged(std::uint32_t family, const numref_tensor_op& op, const std::string& mode) {
  auto t = numref::conform::tensor_spec_from_c(family, op);
  if (mode == "mxfloor" && t.spec.rule == numref::ScaleRule::mx_floor) t.spec.rule = numref::ScaleRule::mx_rceil;
  if (mode == "nanblock") t.spec.amax.nan = numref::AmaxNan::ignore;
  if (mode == "recip") t.spec.dequant = numref::DequantOp::reciprocal;
  return t;
}

// ?double448: codes of the amax rule from x * (q_max / amax) computed in binary64.
void double_codes(const numref::conform::TensorOpSpec& t, const numref::TensorView& v, std::uint8_t* codes) {
  using namespace numref;
  Quantizer qz(t.spec, t.rows, t.cols);
  const Converter to_elem(format(FormatId::f32), *t.spec.element, qz.spec().policy);
  const double q = [&] {
    const Exact e = qz.q_max();
    return static_cast<double>(e.sig) * std::ldexp(1.0, e.exp);
  }();
  for (std::size_t b = 0; b < qz.grid().count(); ++b) {
    const Amax a = qz.amax(v, b);
    if (a.poisoned() || a.is_zero()) continue;
    float af;
    std::memcpy(&af, &a.f32, 4);
    const double s = q / static_cast<double>(af);
    const BlockRange r = qz.grid().range(b);
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) {
        const Decoded d = decode(v.code(i, j), v.format());
        if (d.cls != Class::normal && d.cls != Class::subnormal) continue;
        const double x = (d.sign ? -1.0 : 1.0) * static_cast<double>(d.sig) * std::ldexp(1.0, d.exp);
        const float y = static_cast<float>(x * s);
        std::uint32_t yb;
        std::memcpy(&yb, &y, 4);
        codes[i * t.cols + j] = static_cast<std::uint8_t>(to_elem(yb).bits);
      }
  }
}

template <typename Fn>
std::int64_t tensor_call(void* ctx, std::uint32_t family, const numref_tensor_op* op, Fn fn) {
  auto* inst = static_cast<Instance*>(ctx);
  try {
    fn(damaged(family, *op, inst->mode), inst->mode);
  } catch (const std::exception& e) {
    inst->error = e.what();
    return -1;
  }
  return static_cast<std::int64_t>(op->rows) * static_cast<std::int64_t>(op->cols);
}

std::span<const std::uint32_t> randoms(const numref_tensor_op* op, const std::uint32_t* r) {
  if (op->policy.round != NUMREF_ROUND_SR) return {};
  return {r, static_cast<std::size_t>(op->rows) * op->cols};
}

std::int64_t scale(void* ctx, const numref_tensor_op* op, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                   std::uint32_t* gm, std::uint32_t* tamax) {
  return tensor_call(ctx, NUMREF_TENSOR_SCALE, op, [&](const numref::conform::TensorOpSpec& t, const std::string&) {
    const numref::TensorView v(*t.src, x, t.rows, t.cols, t.rs, t.cs);
    numref::Quantizer qz(t.spec, t.rows, t.cols);
    std::vector<numref::Amax> a(qz.grid().count());
    for (std::size_t b = 0; b < a.size(); ++b) a[b] = qz.amax(v, b);
    qz.prepare(a);
    for (std::size_t b = 0; b < a.size(); ++b) {
      amax[b] = a[b].f32;
      scales[b] = qz.block_scale(b, a[b]).stored;
    }
    if (gm)
      for (std::size_t g = 0; g < qz.groups().size(); ++g) gm[g] = qz.groups()[g].m_g;
    if (tamax) *tamax = qz.tensor_amax().f32;
  });
}

std::int64_t quantize(void* ctx, const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                      std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax, std::uint64_t* counts) {
  return tensor_call(ctx, NUMREF_TENSOR_QUANTIZE, op, [&](const numref::conform::TensorOpSpec& t, const std::string& mode) {
    const numref::TensorView v(*t.src, x, t.rows, t.cols, t.rs, t.cs);
    const auto res = numref::quantize(v, t.spec, std::span<std::uint8_t>(codes, t.rows * t.cols), randoms(op, r));
    std::copy(res.meta.scales.begin(), res.meta.scales.end(), scales);
    if (gm) std::copy(res.meta.group_mantissa.begin(), res.meta.group_mantissa.end(), gm);
    if (tamax) *tamax = res.meta.tensor_amax;
    if (mode == "double448" && t.spec.rule == numref::ScaleRule::amax && t.spec.apply == numref::ScaleApply::rn32 &&
        op->policy.round != NUMREF_ROUND_SR)
      double_codes(t, v, codes);
    if (counts) {
      counts[0] = res.total.saturated + (mode == "counts" ? 1 : 0);
      counts[1] = res.total.flushed;
      counts[2] = res.total.nan;
      counts[3] = res.total.inf;
    }
  });
}

std::int64_t dequantize(void* ctx, const numref_tensor_op* op, const std::uint8_t* codes, const std::uint32_t* scales,
                        const std::uint32_t* gm, const std::uint32_t* tamax, std::uint32_t* out) {
  return tensor_call(ctx, NUMREF_TENSOR_DEQUANTIZE, op, [&](const numref::conform::TensorOpSpec& t, const std::string&) {
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
    if (gm) m.group_mantissa.assign(gm, gm + op->n_groups);
    if (tamax) m.tensor_amax = *tamax;
    numref::dequantize(std::span<const std::uint8_t>(codes, t.rows * t.cols), m, std::span<std::uint32_t>(out, t.rows * t.cols));
  });
}

std::int64_t fake_quant(void* ctx, const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint32_t* out,
                        std::uint64_t* counts) {
  return tensor_call(ctx, NUMREF_TENSOR_FAKE_QUANT, op, [&](const numref::conform::TensorOpSpec& t, const std::string& mode) {
    const numref::TensorView v(*t.src, x, t.rows, t.cols, t.rs, t.cs);
    const auto st = numref::fake_quantize(v, t.spec, *t.out, std::span<std::uint32_t>(out, t.rows * t.cols), randoms(op, r));
    if (counts) {
      counts[0] = st.saturated + (mode == "counts" ? 1 : 0);
      counts[1] = st.flushed;
      counts[2] = st.nan;
      counts[3] = st.inf;
    }
  });
}

// ---- MoR (§26, §27): the reference, damaged by mode ---------------------------------------------

int mor_supported(void*, std::uint32_t family, const numref_mor_op* op) {
  if (!op || !format_from_c(op->source)) return 0;
  return family == NUMREF_TENSOR_MOR || family == NUMREF_TENSOR_MOR_SUB ? 1 : 0;
}

std::int64_t mor(void* ctx, const numref_mor_op* op, const void* x, numref_mor_result* res, std::uint32_t* scales) {
  auto* inst = static_cast<Instance*>(ctx);
  try {
    const numref::Format& src = *format_from_c(op->source);
    const numref::TensorView v(src, x, op->rows, op->cols, static_cast<std::ptrdiff_t>(op->row_stride),
                               static_cast<std::ptrdiff_t>(op->col_stride));
    numref::TensorMorSpec spec;
    spec.scaling = numref::Partition::blocks(op->block_rows, op->block_cols);
    spec.threshold = numref::Threshold{op->threshold_num, op->threshold_den};
    numref::TensorMorResult r = numref::tensor_mor(v, spec);
    if (inst->mode == "morsum") {
      // the last element's contribution goes missing: recompute with it set to +0 and
      // forget the zero that adds
      const std::size_t bytes = numref::storage_bytes(src);
      const std::size_t span = ((op->rows - 1) * static_cast<std::size_t>(op->row_stride) +
                                (op->cols - 1) * static_cast<std::size_t>(op->col_stride) + 1) * bytes;
      std::vector<unsigned char> copy(static_cast<const unsigned char*>(x), static_cast<const unsigned char*>(x) + span);
      const std::size_t last = span - bytes;  // (rows-1, cols-1) is the highest address for positive strides
      const bool was_zero = std::all_of(copy.begin() + static_cast<std::ptrdiff_t>(last), copy.end(),
                                        [&](unsigned char c) { return c == 0; });
      std::fill(copy.begin() + static_cast<std::ptrdiff_t>(last), copy.end(), 0);
      const numref::TensorView w(src, copy.data(), op->rows, op->cols, static_cast<std::ptrdiff_t>(op->row_stride),
                                 static_cast<std::ptrdiff_t>(op->col_stride));
      numref::TensorMorResult d = numref::tensor_mor(w, spec);
      r.error = d.error;
      if (!was_zero) --r.error.zeros;
    }
    if (inst->mode == "morle" && r.verdict.reason == numref::Reason::threshold && r.error.finite()) {
      // mean == threshold exactly: S * den == num * n * 2^149 (§23.2) -> accepted by <=
      const numref::BigUInt lhs = r.error.sum.value() * numref::BigUInt(op->threshold_den);
      const numref::BigUInt rhs = (numref::BigUInt(op->threshold_num) * numref::BigUInt(r.error.n)) << 149;
      if (lhs == rhs) {
        r.quantized = true;
        r.verdict = {true, numref::Reason::accepted};
      }
    }
    numref::conform::to_c_tensor_mor(r, *res, scales);
    return static_cast<std::int64_t>(op->rows) * op->cols;
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
    const numref::TensorView v(*format_from_c(op->source), x, op->rows, op->cols,
                               static_cast<std::ptrdiff_t>(op->row_stride), static_cast<std::ptrdiff_t>(op->col_stride));
    numref::SubtensorMorSpec spec;
    spec.recipe = op->kind == NUMREF_MOR_TWO_WAY ? numref::SubtensorRecipe::two_way : numref::SubtensorRecipe::three_way;
    spec.blocks = numref::Partition::blocks(op->block_rows, op->block_cols);
    const numref::SubtensorMorResult r = numref::subtensor_mor(v, spec);
    numref::conform::to_c_subtensor_mor(r, type, eq3, eq4, e4m3_sum, e5m2_sum, e4m3_scales, e5m2_scales, group_mantissa, out);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  } catch (const std::exception& e) {
    inst->error = e.what();
    return -1;
  }
}

}  // namespace

extern "C" NUMREF_BACKEND_EXPORT std::uint32_t numref_backend_abi_version(void) { return NUMREF_TEST_ABI; }

extern "C" NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err,
                                                                           std::size_t err_size) {
  const std::string mode = args ? args : "";
  static const char* const kModes[] = {"",        "tie464",   "nansign",   "noinexact", "count",  "crash", "hang",
                                       "error",   "mxfloor",  "nanblock",  "double448", "recip",  "counts", "v10",
                                       "morle",   "morsum",   "v11"};
  if (std::find_if(std::begin(kModes), std::end(kModes), [&](const char* m) { return mode == m; }) == std::end(kModes)) {
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
  b.ops = "cast scale quantize dequantize fake-quant mor mor-sub";
  b.profiles = "ocp";
  b.caps = NUMREF_CAP_FLAGS | NUMREF_CAP_COUNTS;
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
  if (mode == "v11") b.struct_size = static_cast<std::uint32_t>(offsetof(numref_backend, mor_supported));  // ABI 1.1
  if (mode == "v10") b.struct_size = static_cast<std::uint32_t>(offsetof(numref_backend, tensor_supported));  // ABI 1.0
  return &inst->b;
}
