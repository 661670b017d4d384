// numref backend "reference": the reference itself behind the C ABI.   spec §32, §11
//
// It must pass everything: it is the runner's own expected-result function reached
// through the plugin machinery (dlopen, isolation, marshalling), so a failure here is a
// bug in the runner or the ABI layer, not in the reference. The tensor families rebuild
// the reference's QuantizeSpec from the C description alone (§32.5).
//
// A class for numref/conform/plugin.hpp: reference_backend.cpp exports it; the runner's
// deliberately broken test backend (conformance/tests/broken_backend.cpp) derives from it and
// damages what its argument says, through the *_as / tensor_mor_of steps below.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/convert.hpp"
#include "numref/gaussws.hpp"
#include "numref/mma.hpp"
#include "numref/mor.hpp"
#include "numref/quantize.hpp"

namespace numref::conform {

class ReferenceBackend {
 public:
  static constexpr const char* name = "reference";
  static constexpr const char* version = "numref 0.1";
  static constexpr const char* description =
      "the numref reference (exact integer arithmetic), every format, policy, profile and tensor operation";
  static constexpr const char* profiles = "ocp ieee cuda_satfinite cuda_nosat ml_dtypes";
  static constexpr std::uint32_t caps = NUMREF_CAP_FLAGS | NUMREF_CAP_COUNTS | NUMREF_CAP_RECIPE;

  // ---- cast (§11) -----------------------------------------------------------------------------

  // §32.4 Every conversion the reference defines: any pair, any valid policy.
  static bool cast_supported(std::uint32_t from, std::uint32_t to, const numref_policy* p) {
    const Format* f = format_from_c(from);
    const Format* t = format_from_c(to);
    if (!f || !t || !p) return false;
    const auto pol = from_c_policy(*p);
    return pol && validate(*pol, *t).empty();
  }

  static std::int64_t cast(std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                           const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) {
    const Format* f = format_from_c(from);
    const Format* t = format_from_c(to);
    const auto pol = p ? from_c_policy(*p) : std::nullopt;
    if (!f || !t || !pol) throw std::invalid_argument("bad format id or policy");
    const Converter conv(*f, *t, *pol);
    const bool sr = effective_round(*t, *pol) == Round::sr;
    if (sr && !r) throw std::invalid_argument("round=sr needs the r array");
    for (std::size_t i = 0; i < n; ++i) {
      if (in[i] & ~f->mask())  // §2.4: bits above the width are an error at the ABI
        throw std::invalid_argument("input " + std::to_string(in[i]) + " has bits above the " +
                                    std::to_string(f->bits) + "-bit width");
      const Result res = conv(in[i], sr ? r[i] : 0u);
      out[i] = res.bits;
      if (flags) flags[i] = res.flags;
    }
    return static_cast<std::int64_t>(n);
  }

  // ---- tensor families (§12–§20): the reference's quantize() behind the C description ---------

  // §32.5 The operation as the reference's spec; throws std::invalid_argument.
  static TensorOpSpec spec_of(std::uint32_t family, const numref_tensor_op* op) {
    if (!op) throw std::invalid_argument("no operation");
    return tensor_spec_from_c(family, *op);
  }

  static bool tensor_supported(std::uint32_t family, const numref_tensor_op* op) {
    if (!op || family > NUMREF_TENSOR_FAKE_QUANT) return false;
    (void)spec_of(family, op);  // throws (plugin.hpp: answered 0) for what the reference rejects
    return true;
  }

  static std::int64_t scale(const numref_tensor_op* op, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                            std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) {
    return scale_as(spec_of(NUMREF_TENSOR_SCALE, op), x, amax, scales, group_mantissa, tensor_amax);
  }
  static std::int64_t quantize(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                               std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax,
                               std::uint64_t* counts) {
    return quantize_as(spec_of(NUMREF_TENSOR_QUANTIZE, op), x, r, codes, scales, group_mantissa, tensor_amax, counts);
  }
  static std::int64_t dequantize(const numref_tensor_op* op, const std::uint8_t* codes, const std::uint32_t* scales,
                                 const std::uint32_t* group_mantissa, const std::uint32_t* tensor_amax,
                                 std::uint32_t* out) {
    return dequantize_as(spec_of(NUMREF_TENSOR_DEQUANTIZE, op), *op, codes, scales, group_mantissa, tensor_amax, out);
  }
  static std::int64_t fake_quant(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint32_t* out,
                                 std::uint64_t* counts) {
    return fake_quant_as(spec_of(NUMREF_TENSOR_FAKE_QUANT, op), x, r, out, counts);
  }

  // The same four on a given spec t (the test backends hand in a damaged one).
  static TensorView view_of(const TensorOpSpec& t, const void* x) { return {*t.src, x, t.rows, t.cols, t.rs, t.cs}; }

  static std::int64_t scale_as(const TensorOpSpec& t, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                               std::uint32_t* group_mantissa, std::uint32_t* tensor_amax) {
    const TensorView v = view_of(t, x);
    Quantizer qz(t.spec, t.rows, t.cols);
    const std::size_t nb = qz.grid().count();
    std::vector<Amax> a(nb);
    for (std::size_t b = 0; b < nb; ++b) a[b] = qz.amax(v, b);
    qz.prepare(a);
    for (std::size_t b = 0; b < nb; ++b) {
      amax[b] = a[b].f32;
      scales[b] = qz.block_scale(b, a[b]).stored;
    }
    if (group_mantissa)
      for (std::size_t g = 0; g < qz.groups().size(); ++g) group_mantissa[g] = qz.groups()[g].m_g;
    if (tensor_amax) *tensor_amax = qz.tensor_amax().f32;
    return elements(t);
  }

  static std::int64_t quantize_as(const TensorOpSpec& t, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                                  std::uint32_t* scales, std::uint32_t* group_mantissa, std::uint32_t* tensor_amax,
                                  std::uint64_t* counts) {
    const QuantizeResult res =
        numref::quantize(view_of(t, x), t.spec, std::span<std::uint8_t>(codes, t.rows * t.cols), random_of(t, r));
    std::copy(res.meta.scales.begin(), res.meta.scales.end(), scales);
    if (group_mantissa) std::copy(res.meta.group_mantissa.begin(), res.meta.group_mantissa.end(), group_mantissa);
    if (tensor_amax) *tensor_amax = res.meta.tensor_amax;
    put_counts(res.total, counts);
    return elements(t);
  }

  // §19.3 The metadata alone (op: n_blocks, n_groups) -> binary32 values.
  static std::int64_t dequantize_as(const TensorOpSpec& t, const numref_tensor_op& op, const std::uint8_t* codes,
                                    const std::uint32_t* scales, const std::uint32_t* group_mantissa,
                                    const std::uint32_t* tensor_amax, std::uint32_t* out) {
    ScaleMeta m;
    m.rule = t.spec.rule;
    m.element = t.spec.element;
    m.rows = t.rows;
    m.cols = t.cols;
    m.partition = t.spec.partition;
    m.group = t.spec.group;
    m.q_max = *t.spec.q_max;
    m.dequant = t.spec.dequant;
    m.wide = t.spec.wide;
    m.scales.assign(scales, scales + op.n_blocks);
    check_tensor_inputs(m.rule, group_mantissa, tensor_amax);  // §17.1 / §18.1 the row's tensor-level inputs
    if (has_group_mantissa(m.rule)) m.group_mantissa.assign(group_mantissa, group_mantissa + op.n_groups);
    if (has_tensor_amax(m.rule)) m.tensor_amax = *tensor_amax;
    numref::dequantize(std::span<const std::uint8_t>(codes, t.rows * t.cols), m,
                       std::span<std::uint32_t>(out, t.rows * t.cols));
    return elements(t);
  }

  static std::int64_t fake_quant_as(const TensorOpSpec& t, const void* x, const std::uint32_t* r, std::uint32_t* out,
                                    std::uint64_t* counts) {
    put_counts(
        fake_quantize(view_of(t, x), t.spec, *t.out, std::span<std::uint32_t>(out, t.rows * t.cols), random_of(t, r)),
        counts);
    return elements(t);
  }

  // ---- MoR families (1.2; §26, §27): tensor_mor / subtensor_mor behind the C description --------

  struct MorOp {
    const Format* src;
    std::size_t rows, cols;
    std::ptrdiff_t rs, cs;
    Partition part;
    TensorView view(const void* x) const { return {*src, x, rows, cols, rs, cs}; }
  };

  // §32.7 Validates the description: a source the reference reads (bf16 / f16 / f32, or fewer:
  // `sources`), a bf16 output, the §26.1 element policy (ocp, saturating) and a reduced
  // threshold with den >= 1 (mor). Throws std::invalid_argument.
  static MorOp mor_op(std::uint32_t family, const numref_mor_op* desc, std::initializer_list<FormatId> sources,
                      const char* bad_source) {
    if (!desc) throw std::invalid_argument("null argument");
    const numref_mor_op& op = *desc;
    if (op.struct_size < sizeof(numref_mor_op)) throw std::invalid_argument("numref_mor_op too small");
    const bool tensor = family == NUMREF_TENSOR_MOR;
    if (tensor ? op.kind != NUMREF_MOR_TENSOR : (op.kind != NUMREF_MOR_THREE_WAY && op.kind != NUMREF_MOR_TWO_WAY))
      throw std::invalid_argument("MoR kind does not match the family");
    const Format* src = format_from_c(op.source);
    if (!src || std::find(sources.begin(), sources.end(), src->id) == sources.end())
      throw std::invalid_argument(bad_source);
    if (op.out_format != NUMREF_FMT_BF16) throw std::invalid_argument("MoR output must be bf16");
    if (tensor && op.threshold_den == 0) throw std::invalid_argument("threshold denominator 0");
    const auto pol = from_c_policy(op.policy);
    const QuantizeSpec q = mor_quantize_spec(format(FormatId::f8e4m3fn));
    if (!pol || !(*pol == q.policy)) throw std::invalid_argument("MoR element policy must be the §26.1 policy");
    if (op.rows == 0 || op.cols == 0 || op.block_rows == 0 || op.block_cols == 0)
      throw std::invalid_argument("empty shape");
    return {src,
            op.rows,
            op.cols,
            static_cast<std::ptrdiff_t>(op.row_stride),
            static_cast<std::ptrdiff_t>(op.col_stride),
            Partition::blocks(op.block_rows, op.block_cols)};
  }
  static MorOp mor_op(std::uint32_t family, const numref_mor_op* op) {
    return mor_op(family, op, {FormatId::bf16, FormatId::f16, FormatId::f32}, "MoR source must be bf16, f16 or f32");
  }

  static bool mor_supported(std::uint32_t family, const numref_mor_op* op) {
    if (!op || (family != NUMREF_TENSOR_MOR && family != NUMREF_TENSOR_MOR_SUB)) return false;
    (void)mor_op(family, op);  // throws (answered 0) for what the reference rejects
    return true;
  }

  // §26.1, §27.1 The specs of a validated description.
  static TensorMorSpec tensor_mor_spec(const numref_mor_op& op, const MorOp& m) {
    TensorMorSpec spec;
    spec.scaling = m.part;
    spec.threshold = Threshold{op.threshold_num, op.threshold_den};
    return spec;
  }
  static SubtensorMorSpec subtensor_mor_spec(const numref_mor_op& op, const MorOp& m) {
    SubtensorMorSpec spec;
    spec.recipe = op.kind == NUMREF_MOR_THREE_WAY ? SubtensorRecipe::three_way : SubtensorRecipe::two_way;
    spec.blocks = m.part;
    return spec;
  }

  // §26 The reference's tensor-level result for the description.
  static TensorMorResult tensor_mor_of(const numref_mor_op& op, const void* x) {
    const MorOp m = mor_op(NUMREF_TENSOR_MOR, &op);
    return tensor_mor(m.view(x), tensor_mor_spec(op, m));
  }

  static std::int64_t mor(const numref_mor_op* op, const void* x, numref_mor_result* res, std::uint32_t* scales) {
    if (!op || !res || !scales) throw std::invalid_argument("null argument");
    to_c_tensor_mor(tensor_mor_of(*op, x), *res, scales);
    return static_cast<std::int64_t>(op->rows) * op->cols;
  }

  static std::int64_t mor_sub(const numref_mor_op* op, const void* x, std::uint8_t* type, std::uint8_t* eq3,
                              std::uint8_t* eq4, numref_error_sum* e4m3_sum, numref_error_sum* e5m2_sum,
                              std::uint32_t* e4m3_scales, std::uint32_t* e5m2_scales, std::uint32_t* group_mantissa,
                              std::uint32_t* out) {
    const MorOp m = mor_op(NUMREF_TENSOR_MOR_SUB, op);
    const SubtensorMorResult r = subtensor_mor(m.view(x), subtensor_mor_spec(*op, m));
    to_c_subtensor_mor(r, type, eq3, eq4, e4m3_sum, e5m2_sum, e4m3_scales, e5m2_scales, group_mantissa, out);
    return static_cast<std::int64_t>(m.rows * m.cols);
  }

  // ---- GaussWS (1.3; §30): forward / grad_bt behind the C description -------------------------

  // §32.8 Validates the description: f32 / bf16 w and g, bf16 output, 32 x 32 blocks and their
  // count, a known noise source and sum. Throws std::invalid_argument.
  static numref::gaussws::Shape gaussws_shape(const numref_gaussws_op* op) {
    if (!op) throw std::invalid_argument("null argument");
    if (op->struct_size < sizeof(numref_gaussws_op)) throw std::invalid_argument("numref_gaussws_op too small");
    const auto float_id = [](std::uint32_t f) { return f == NUMREF_FMT_F32 || f == NUMREF_FMT_BF16; };
    if (!float_id(op->w_format) || !float_id(op->g_format))
      throw std::invalid_argument("GaussWS w and g must be f32 or bf16");
    if (op->out_format != NUMREF_FMT_BF16) throw std::invalid_argument("GaussWS output must be bf16");
    if (op->noise > NUMREF_GAUSSWS_NOISE_KEY || op->sum > NUMREF_GAUSSWS_SUM_F32)
      throw std::invalid_argument("unknown GaussWS noise source or sum");
    const numref::gaussws::Shape sh{op->rows, op->cols};
    if (sh.m == 0 || sh.n == 0) throw std::invalid_argument("empty shape");
    if (op->block_rows != numref::gaussws::kBlock || op->block_cols != numref::gaussws::kBlock ||
        op->n_blocks != sh.blocks())
      throw std::invalid_argument("GaussWS blocks must be 32 x 32 (§30.1)");
    return sh;
  }

  static bool gaussws_supported(const numref_gaussws_op* op) {
    (void)gaussws_shape(op);  // throws (answered 0) for what the reference rejects
    return true;
  }

  static std::int64_t gaussws(const numref_gaussws_op* op, const void* w, const std::uint32_t* bt,
                              const std::uint16_t* u, const std::uint64_t* key, const void* g, std::uint32_t* r_packed,
                              std::uint32_t* scale, std::uint32_t* w_hat, std::uint32_t* grad) {
    namespace gw = numref::gaussws;
    const gw::Shape sh = gaussws_shape(op);
    if (!w || !bt || !g || !r_packed || !scale || !w_hat || !grad) throw std::invalid_argument("null argument");
    const bool bits = op->noise == NUMREF_GAUSSWS_NOISE_BITS;
    if (bits ? !u : !key) throw std::invalid_argument(bits ? "noise=bits needs u" : "noise=key needs key");
    const std::size_t n = sh.size();
    const std::vector<std::int8_t> r =
        bits ? gw::noise_from_words({u, n}) : gw::noise(sh, gw::NoiseKey{key[0], key[1], key[2]});
    const FormatId wf = format_from_c(op->w_format)->id, gf = format_from_c(op->g_format)->id;
    const std::vector<std::uint32_t> wc = codes_of(wf, w, n), gc = codes_of(gf, g, n);
    gw::ForwardSpec fs;
    fs.w_format = wf;
    fs.sum = op->sum == NUMREF_GAUSSWS_SUM_F32 ? gw::Sum::f32 : gw::Sum::exact;
    const std::span<const std::uint32_t> bts(bt, sh.blocks());
    const gw::Forward f = gw::forward(fs, sh, wc, bts, r);
    const std::vector<std::uint32_t> packed = gw::pack(r);
    const std::vector<std::uint32_t> gr = gw::grad_bt(wf, sh, wc, bts, r, gf, gc);
    std::copy(packed.begin(), packed.end(), r_packed);
    std::copy(f.scale.begin(), f.scale.end(), scale);
    std::copy(f.w_hat.begin(), f.w_hat.end(), w_hat);
    std::copy(gr.begin(), gr.end(), grad);
    return static_cast<std::int64_t>(n);
  }

  // n codes of a 2- or 4-byte format as 32-bit words.
  static std::vector<std::uint32_t> codes_of(FormatId f, const void* x, std::size_t n) {
    std::vector<std::uint32_t> c(n);
    if (f == FormatId::bf16) {
      const auto* p = static_cast<const std::uint16_t*>(x);
      std::copy(p, p + n, c.begin());
    } else {
      const auto* p = static_cast<const std::uint32_t*>(x);
      std::copy(p, p + n, c.begin());
    }
    return c;
  }

  // ---- mma (§36 – §38, §32.9): the reference's mma() on the C description --------------------

  static bool mma_supported(const numref_mma_op* op) {
    if (!op) return false;
    validate(mma_spec_from_c(*op), op->k);  // throws (answered 0) for what the reference rejects
    return true;
  }

  static std::int64_t mma(const numref_mma_op* op, const std::uint32_t* a, const std::uint32_t* b,
                          const std::uint32_t* c, const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d,
                          std::uint8_t* flags) {
    if (!op) throw std::invalid_argument("no operation");
    const MmaSpec s = mma_spec_from_c(*op);
    const std::size_t M = op->m, N = op->n, K = op->k, nb = s.block ? K / static_cast<std::size_t>(s.block) : 0;
    if (s.block && (!sa || !sb)) throw std::invalid_argument("block scales without sa / sb");
    numref::mma(s, M, N, K, {a, M * K}, {b, K * N}, {c, M * N}, {d, M * N},
                nb ? std::span<const std::uint32_t>(sa, M * nb) : std::span<const std::uint32_t>{},
                nb ? std::span<const std::uint32_t>(sb, nb * N) : std::span<const std::uint32_t>{},
                flags ? std::span<std::uint8_t>(flags, M * N) : std::span<std::uint8_t>{});
    return static_cast<std::int64_t>(M * N);
  }

 private:
  static std::int64_t elements(const TensorOpSpec& t) { return static_cast<std::int64_t>(t.rows * t.cols); }

  static std::span<const std::uint32_t> random_of(const TensorOpSpec& t, const std::uint32_t* r) {
    if (t.spec.policy.round != Round::sr) return {};
    if (!r) throw std::invalid_argument("round=sr needs the r array");
    return {r, t.rows * t.cols};
  }

  // §19.5 saturated, flushed, nan, inf (counts is NULL unless the runner compares them).
  static void put_counts(const QuantizeStats& s, std::uint64_t* counts) {
    if (!counts) return;
    counts[0] = s.saturated;
    counts[1] = s.flushed;
    counts[2] = s.nan;
    counts[3] = s.inf;
  }
};

}  // namespace numref::conform
