// numref backends "cuda" and "cuda-emu" — THE contract of the CUDA kernels at the C ABI: which
// operations they accept and, for the others, the message of the refusal.   spec §A.9, §A.11
//
// Both plugins derive from KernelContract: their cast_supported / tensor_supported /
// mor_supported entries ARE these functions, and their operations begin with the same
// cast_refusal / tensor_plan / mor_plan (which throw std::invalid_argument with the refusal's
// message), so the device backend and its host emulation refuse exactly the same cases with the
// same words. Host-only C++ (no CUDA headers); test_cuda_emu_contract.cpp compares the two
// plugins' decisions over every suite the runner plans.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "numref/backend.h"
#include "numref/conform/abi.hpp"
#include "numref/mor.hpp"
#include "numref/quantize.hpp"
#include "numref_arith/gaussws.cuh"
#include "numref_arith/gaussws_plan.hpp"
#include "numref_cuda/host_run.hpp"
#include "numref_cuda/policy_map.hpp"
#include "numref_cuda/quantize_plan.hpp"
#include "numref_cuda/support.hpp"
#include "reference/reference_backend.hpp"

namespace numref_cuda::contract {

using numref::FormatId;

// ---- cast (§11, §A.2, §A.3) ------------------------------------------------------------------

// A cast the kernels implement: the formats and the kernel policy.
struct CastPlan {
  const numref::Format* from = nullptr;
  const numref::Format* to = nullptr;
  numref::Policy policy;
  CastPolicy kernel;
  bool sr = false;  // the policy rounds stochastically (the call needs r)
};
// §A.2 The plan of a cast from -> to under p (C ids); throws std::invalid_argument with the refusal.
inline CastPlan cast_plan(std::uint32_t from, std::uint32_t to, const numref_policy* p) {
  CastPlan c;
  c.from = numref::conform::format_from_c(from);
  c.to = numref::conform::format_from_c(to);
  const auto pol = p ? numref::conform::from_c_policy(*p) : std::nullopt;
  if (!c.from || !c.to || !pol) throw std::invalid_argument("bad format id or policy");
  c.policy = *pol;
  c.kernel = cast_policy(*pol, *c.from, *c.to);  // throws for a §4.3-invalid policy and unimplemented knobs
  c.sr = numref::effective_round(*c.to, *pol) == numref::Round::sr;
  // the runner hands r to every SR call: the random source is present
  if (const std::string err = cast_support(c.from->id, c.to->id, c.kernel, true); !err.empty())
    throw std::invalid_argument(err);
  return c;
}

// ---- tensor families (§12–§20, §A.7) ------------------------------------------------------------

struct TensorPlan {
  numref::conform::TensorOpSpec t;
  QuantizePlan p;
};
// §A.7 The plan of a tensor operation of `family`; throws std::invalid_argument with the refusal.
inline TensorPlan tensor_plan(std::uint32_t family, const numref_tensor_op* op) {
  if (!op) throw std::invalid_argument("no operation");
  if (family > NUMREF_TENSOR_FAKE_QUANT) throw std::invalid_argument("unknown tensor family");
  TensorPlan tp{numref::conform::tensor_spec_from_c(family, *op), {}};
  const auto& t = tp.t;
  if (family == NUMREF_TENSOR_DEQUANTIZE) {  // no source: the codes are dense, element order
    tp.p = plan_quantize(t.spec, FormatId::f32, t.rows, t.cols, static_cast<std::ptrdiff_t>(t.cols), 1);
  } else {
    tp.p = plan_quantize(t.spec, t.src->id, t.rows, t.cols, t.rs, t.cs,
                         family == NUMREF_TENSOR_FAKE_QUANT ? t.out->id : FormatId::bf16);
  }
  // §19.2: the scale family has no element policy to honour; stochastic rounding would need r
  if (family == NUMREF_TENSOR_SCALE && tp.p.sr_bits != 0) tp.p.sr_bits = 0, tp.p.elem.mode = Mode::rne;
  return tp;
}

// ---- MoR (§26, §27, §A.8) -----------------------------------------------------------------------

using MorOp = numref::conform::ReferenceBackend::MorOp;
struct MorPlan {
  MorOp m;
  numref::TensorMorSpec tensor;        // family NUMREF_TENSOR_MOR
  numref::SubtensorMorSpec subtensor;  // family NUMREF_TENSOR_MOR_SUB
};
// §A.8 The description the kernels implement: the reference backend's (§32.7) with the kernels'
// sources (format_list.hpp kSource: f32, bf16, f16, the reference's list), planned by host_run.hpp's plan_tensor_mor / plan_subtensor_mor (shape checks
// only: the data is not read). Throws std::invalid_argument with the refusal.
inline MorPlan mor_plan(std::uint32_t family, const numref_mor_op* op) {
  using RB = numref::conform::ReferenceBackend;
  if (family != NUMREF_TENSOR_MOR && family != NUMREF_TENSOR_MOR_SUB) throw std::invalid_argument("unknown MoR family");
  MorPlan mp{RB::mor_op(family, op), {}, {}};
  static const std::uint32_t dummy[1] = {0};
  const numref::TensorView v = mp.m.view(dummy);
  if (family == NUMREF_TENSOR_MOR) {
    mp.tensor = RB::tensor_mor_spec(*op, mp.m);
    (void)host::plan_tensor_mor(v, mp.tensor);
  } else {
    mp.subtensor = RB::subtensor_mor_spec(*op, mp.m);
    QuantizePlan a, b;
    host::plan_subtensor_mor(v, mp.subtensor, a, b);
  }
  return mp;
}

// ---- GaussWS (§30, §A.13) -----------------------------------------------------------------------

struct GausswsPlan {
  gaussws::Problem p;
  FormatId w = FormatId::f32, g = FormatId::f32;
};
// §A.13 The kernels implement every GaussWS operation the reference accepts (§32.8: f32 / bf16 w
// and g, bf16 output, 32 x 32 blocks, either noise source and sum); the description is validated by
// the reference backend's own check. Throws std::invalid_argument with the refusal.
inline GausswsPlan gaussws_plan(const numref_gaussws_op* op) {
  const numref::gaussws::Shape sh = numref::conform::ReferenceBackend::gaussws_shape(op);
  GausswsPlan g{gaussws::make_problem(sh.m, sh.n), numref::conform::format_from_c(op->w_format)->id,
                numref::conform::format_from_c(op->g_format)->id};
  g.p.key = op->noise == NUMREF_GAUSSWS_NOISE_KEY;
  g.p.sum_f32 = op->sum == NUMREF_GAUSSWS_SUM_F32;
  return g;
}
// The plan of one call: the description, the arrays present, b_t finite (§30.1, naming the block).
inline GausswsPlan gaussws_call_plan(const numref_gaussws_op* op, const void* w, const std::uint32_t* bt,
                                     const std::uint16_t* u, const std::uint64_t* key, const void* g,
                                     const void* r_packed, const void* scale, const void* w_hat, const void* grad) {
  GausswsPlan gp = gaussws_plan(op);
  if (!w || !bt || !g || !r_packed || !scale || !w_hat || !grad) throw std::invalid_argument("null argument");
  if (gp.p.key ? !key : !u) throw std::invalid_argument(gp.p.key ? "noise=key needs key" : "noise=bits needs u");
  if (gp.p.key) gp.p.seed = key[0], gp.p.layer = key[1], gp.p.step = key[2];
  gaussws::check_bt(bt, gp.p.tiles());
  return gp;
}

// ---- MMA (§36 – §38) ---------------------------------------------------------------------------

// §A.12 The kernels compute every fdpa model (§38) the reference accepts; the ideal result (§37)
// is the reference's. Throws std::invalid_argument with the refusal.
inline numref::MmaSpec mma_plan(const numref_mma_op* op) {
  if (!op) throw std::invalid_argument("no operation");
  const numref::MmaSpec s = numref::conform::mma_spec_from_c(*op);
  numref::validate(s, op->k);
  if (s.model().algo != numref::MmaAlgo::fdpa)
    throw std::invalid_argument(
        "mma: the kernels compute the fdpa models (§38); the ideal result (§37) is the reference's");
  return s;
}

// The refusal of a case as text ("" when the kernels implement it).
template <class F>
std::string refusal(F&& plan) {
  try {
    (void)plan();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}
inline std::string cast_refusal(std::uint32_t from, std::uint32_t to, const numref_policy* p) {
  return refusal([&] { return cast_plan(from, to, p); });
}
inline std::string tensor_refusal(std::uint32_t family, const numref_tensor_op* op) {
  return refusal([&] { return tensor_plan(family, op); });
}
inline std::string mor_refusal(std::uint32_t family, const numref_mor_op* op) {
  return refusal([&] { return mor_plan(family, op); });
}
inline std::string gaussws_refusal(const numref_gaussws_op* op) {
  return refusal([&] { return gaussws_plan(op); });
}
inline std::string mma_refusal(const numref_mma_op* op) {
  return refusal([&] { return mma_plan(op); });
}

// The *_supported entries of both plugins (numref/conform/plugin.hpp).
struct KernelContract {
  static constexpr const char* profiles = "ocp cuda_satfinite cuda_nosat ml_dtypes";
  // NUMREF_CAP_RECIPE: the plugins read op->recipe (tensor_spec_from_c) and refuse every recipe
  // knob by name (plan_quantize, spec §A.12 item 8) rather than being skipped unasked.
  static constexpr std::uint32_t caps = NUMREF_CAP_COUNTS | NUMREF_CAP_RECIPE;
  static bool cast_supported(std::uint32_t from, std::uint32_t to, const numref_policy* p) {
    return cast_refusal(from, to, p).empty();
  }
  static bool tensor_supported(std::uint32_t family, const numref_tensor_op* op) {
    return tensor_refusal(family, op).empty();
  }
  static bool mor_supported(std::uint32_t family, const numref_mor_op* op) { return mor_refusal(family, op).empty(); }
  static bool gaussws_supported(const numref_gaussws_op* op) { return gaussws_refusal(op).empty(); }
  static bool mma_supported(const numref_mma_op* op) { return mma_refusal(op).empty(); }
};

// ---- shared marshalling ----------------------------------------------------------------------------

// §32.7 A kernel error sum as the C ABI's limbs and counts.
inline void put_sum(const ErrorSumValue& s, numref_error_sum& c) {
  for (int k = 0; k < 5; ++k) c.limb[k] = s.s[k];
  c.n = s.n;
  c.nonfinite_input = s.nonfinite_input;
  c.nonfinite_quant = s.nonfinite_quant;
  c.zeros = s.zeros;
}

}  // namespace numref_cuda::contract
