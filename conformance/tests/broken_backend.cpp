// A deliberately broken backend for the runner's tests (not installed with the built-in
// backends). It is the reference, damaged as its argument says:        spec §34.4, §34.6
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
// and for the mma family (§36 – §38):
//   ?mmaalign  every fdpa model aligned with 25 fraction bits and rounded toward zero to binary32
//              (Blackwell's arithmetic for Hopper's FP8 instructions)          -> "value"
//   ?v18       a backend built against ABI 1.8 (struct_size ends before mma_supported): the mma
//              family is skipped, never offered (§32.2)
//   ?v19       a backend built against ABI 1.9 (abi_minor 9): the mma suites of algo=fma (1.10)
//              are skipped, never offered (Annex C.1)
//   ?v110      a backend built against ABI 1.10 (abi_minor 10): the mma suites of algo=efdpa and
//              algo=ftz (1.11) are skipped, never offered (Annex C.1)
//   ?v111      a backend built against ABI 1.11 (abi_minor 11): the profiles deepgemm_f32 and
//              microxcaling_floor and the recipe knobs divisor / elem_exp (1.12) are never offered
// Built a second time with NUMREF_TEST_ABI=99 to test the ABI-version refusal.
//
// The class derives from the reference backend (reference/reference_backend.hpp): what it does
// not redefine (the *_supported queries, mor-sub) is the reference's; what it redefines calls
// the reference and then damages the result or the spec. numref/conform/plugin.hpp exports it.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "numref/conform/plugin.hpp"
#include "reference/reference_backend.hpp"

#ifndef NUMREF_TEST_ABI
#define NUMREF_TEST_ABI NUMREF_BACKEND_ABI_VERSION
#endif

namespace {

using numref::conform::ReferenceBackend;
using numref::conform::TensorOpSpec;

class BrokenBackend : public ReferenceBackend {
 public:
  static constexpr const char* name = "broken";
  static constexpr const char* version = "test";
  static constexpr const char* description =
      "the reference, deliberately damaged (conformance/tests/broken_backend.cpp)";
  static constexpr const char* profiles = "ocp";
  static constexpr std::uint32_t caps = NUMREF_CAP_FLAGS | NUMREF_CAP_COUNTS;

  explicit BrokenBackend(std::string_view args) : mode_(args) {
    static constexpr std::string_view kModes[] = {"",       "tie464", "nansign", "noinexact", "count",     "crash",
                                                  "hang",   "error",  "mxfloor", "nanblock",  "double448", "recip",
                                                  "counts", "v10",    "morle",   "morsum",    "v11",       "mmaalign",
                                                  "v18",    "v19",    "v110",    "v111"};
    if (std::find(std::begin(kModes), std::end(kModes), mode_) == std::end(kModes))
      throw std::invalid_argument("unknown mode '" + mode_ + "'");
  }

  // ?v10 / ?v11: the table of an older ABI minor (backend.h: struct_size says which entries exist);
  // the badabi build also says ABI 99 in the struct.
  void adjust_table(numref_backend& b) const {
    b.abi_version = NUMREF_TEST_ABI;
    if (mode_ == "v18") {  // ABI 1.8: the table ends before mma_supported and says so
      b.struct_size = static_cast<std::uint32_t>(offsetof(numref_backend, mma_supported));
      b.abi_minor = 8;
    }
    if (mode_ == "v19") b.abi_minor = 9;    // ABI 1.9: the whole table, without algo=fma
    if (mode_ == "v110") b.abi_minor = 10;  // ABI 1.10: without algo=efdpa and algo=ftz
    if (mode_ == "v111") b.abi_minor = 11;  // ABI 1.11: without divisor, elem_exp and their profiles
    if (mode_ == "v11") b.struct_size = static_cast<std::uint32_t>(offsetof(numref_backend, mor_supported));  // ABI 1.1
    if (mode_ == "v10")
      b.struct_size = static_cast<std::uint32_t>(offsetof(numref_backend, tensor_supported));  // ABI 1.0
  }

  std::int64_t cast(std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
                    const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) const {
    const bool trigger = from == NUMREF_FMT_F32 && to == NUMREF_FMT_F8E5M2;
    if (trigger && mode_ == "crash") std::raise(SIGSEGV);
    if (trigger && mode_ == "hang")
      for (;;) pause();
    if (trigger && mode_ == "error") throw std::runtime_error("deliberate error for the test");
    const std::int64_t got = ReferenceBackend::cast(from, to, p, n, in, r, out, flags);
    const numref::Format& t = *numref::conform::format_from_c(to);
    for (std::size_t i = 0; i < n; ++i) {
      if (mode_ == "tie464" && from == NUMREF_FMT_F32 && to == NUMREF_FMT_F8E4M3FN && in[i] == 0x43E80000u)
        out[i] = 0x7F;
      if (mode_ == "nansign" && t.is_signed && numref::decode(out[i], t).cls == numref::Class::nan)
        out[i] &= ~t.sign_bit();
      if (mode_ == "noinexact" && flags) flags[i] &= static_cast<std::uint8_t>(~numref::kInexact);
    }
    if (mode_ == "count" && n > 1) return got - 1;
    return got;
  }

  // ---- mma (§38): a model with other knobs ---------------------------------------------------
  std::int64_t mma(const numref_mma_op* op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                   const std::uint32_t* sa, const std::uint32_t* sb, std::uint32_t* d, std::uint8_t* flags) const {
    numref_mma_op o = *op;
    if (mode_ == "mmaalign" && o.algo == NUMREF_MMA_ALGO_FDPA) {
      o.align = 25;
      o.round = NUMREF_MMA_ROUND_RZ;
    }
    return ReferenceBackend::mma(&o, a, b, c, sa, sb, d, flags);
  }

  // ---- tensor families: the reference on a damaged spec ---------------------------------------

  std::int64_t scale(const numref_tensor_op* op, const void* x, std::uint32_t* amax, std::uint32_t* scales,
                     std::uint32_t* gm, std::uint32_t* tamax) const {
    return scale_as(damaged(NUMREF_TENSOR_SCALE, op), x, amax, scales, gm, tamax);
  }

  std::int64_t quantize(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint8_t* codes,
                        std::uint32_t* scales, std::uint32_t* gm, std::uint32_t* tamax, std::uint64_t* counts) const {
    const TensorOpSpec t = damaged(NUMREF_TENSOR_QUANTIZE, op);
    const std::int64_t got = quantize_as(t, x, r, codes, scales, gm, tamax, counts);
    if (mode_ == "double448" && t.spec.rule == numref::ScaleRule::amax && t.spec.apply == numref::ScaleApply::rn32 &&
        op->policy.round != NUMREF_ROUND_SR)
      double_codes(t, view_of(t, x), codes);
    count_one_more(counts);
    return got;
  }

  std::int64_t dequantize(const numref_tensor_op* op, const std::uint8_t* codes, const std::uint32_t* scales,
                          const std::uint32_t* gm, const std::uint32_t* tamax, std::uint32_t* out) const {
    return dequantize_as(damaged(NUMREF_TENSOR_DEQUANTIZE, op), *op, codes, scales, gm, tamax, out);
  }

  std::int64_t fake_quant(const numref_tensor_op* op, const void* x, const std::uint32_t* r, std::uint32_t* out,
                          std::uint64_t* counts) const {
    const std::int64_t got = fake_quant_as(damaged(NUMREF_TENSOR_FAKE_QUANT, op), x, r, out, counts);
    count_one_more(counts);
    return got;
  }

  // ---- MoR (§26): the reference's result, damaged --------------------------------------------

  std::int64_t mor(const numref_mor_op* op, const void* x, numref_mor_result* res, std::uint32_t* scales) const {
    numref::TensorMorResult r = tensor_mor_of(*op, x);
    if (mode_ == "morsum") {
      // the last element's contribution goes missing: recompute with it set to +0 and
      // forget the zero that adds
      const std::size_t bytes = numref::storage_bytes(*numref::conform::format_from_c(op->source));
      const std::size_t span = ((op->rows - 1) * static_cast<std::size_t>(op->row_stride) +
                                (op->cols - 1) * static_cast<std::size_t>(op->col_stride) + 1) *
                               bytes;
      std::vector<unsigned char> copy(static_cast<const unsigned char*>(x),
                                      static_cast<const unsigned char*>(x) + span);
      const std::size_t last = span - bytes;  // (rows-1, cols-1) is the highest address for positive strides
      const bool was_zero = std::all_of(copy.begin() + static_cast<std::ptrdiff_t>(last), copy.end(),
                                        [&](unsigned char c) { return c == 0; });
      std::fill(copy.begin() + static_cast<std::ptrdiff_t>(last), copy.end(), 0);
      r.error = tensor_mor_of(*op, copy.data()).error;
      if (!was_zero) --r.error.zeros;
    }
    if (mode_ == "morle" && r.verdict.reason == numref::Reason::threshold && r.error.finite()) {
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
  }

 private:
  std::string mode_;

  TensorOpSpec damaged(std::uint32_t family, const numref_tensor_op* op) const {
    TensorOpSpec t = spec_of(family, op);
    if (mode_ == "mxfloor" && t.spec.rule == numref::ScaleRule::mx_floor) t.spec.rule = numref::ScaleRule::mx_rceil;
    if (mode_ == "nanblock") t.spec.amax.nan = numref::AmaxNan::ignore;
    if (mode_ == "recip") t.spec.dequant = numref::DequantOp::reciprocal;
    return t;
  }

  void count_one_more(std::uint64_t* counts) const {
    if (counts && mode_ == "counts") ++counts[0];
  }

  // ?double448: codes of the amax rule from x * (q_max / amax) computed in binary64.
  static void double_codes(const TensorOpSpec& t, const numref::TensorView& v, std::uint8_t* codes) {
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
};

}  // namespace

// numref_backend_open from the header; numref_backend_abi_version by hand, because the badabi
// build (NUMREF_TEST_ABI=99) must lie about it and plugin.hpp's NUMREF_BACKEND always tells the truth.
NUMREF_BACKEND_OPEN(BrokenBackend)
extern "C" NUMREF_BACKEND_EXPORT std::uint32_t numref_backend_abi_version(void) { return NUMREF_TEST_ABI; }
