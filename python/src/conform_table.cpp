// numref._core: a C ABI backend table whose entry points call Python, run by the conformance
// runner in this process — numref.conform.check for the tensor, MoR, GaussWS and mma families
// gets exactly what a C plugin gets: the generated suites, the golden vectors, the recipe
// profiles, the runner's comparison and mismatch text.                 spec §32, §34.1, §34.13
//
// Every entry point hands the Python side (numref/conform.py, _Dispatch) the family's name, the
// operation as a dict (the op struct's numbers and its canonical parameter text) and the
// family's buffers as NumPy arrays that VIEW the runner's memory for the duration of the call:
// inputs read-only (the tensor view with its strides), outputs writable. The Python side fills
// the outputs and returns None, or returns the text of its error (the kernel's exception is kept
// there and raised again after the run).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "conform_table.hpp"
#include "numref/backend.h"
#include "numref/conform/runner.hpp"
#include "numref/format.hpp"
#include "numref/mor.hpp"

namespace nb = nanobind;

namespace {

struct PyTable {
  numref_backend t{};
  nb::object supported, dispatch;  // supported(family, op) -> bool; dispatch(family, op, ins, outs) -> None | str
  std::string name, ops, profiles, error;
};

PyTable& of(void* ctx) { return *static_cast<PyTable*>(ctx); }

std::string fmt_name(std::uint32_t id) {
  if (id >= static_cast<std::uint32_t>(numref::kFormatCount)) return "format#" + std::to_string(id);
  return std::string(numref::format(static_cast<numref::FormatId>(id)).name);
}
// Bytes of one code of x in a tensor / MoR op (§32.4: 1, 2 or 4 by the format's width).
std::size_t code_bytes(std::uint32_t id) {
  if (id >= static_cast<std::uint32_t>(numref::kFormatCount)) return 4;
  const int bits = numref::format(static_cast<numref::FormatId>(id)).bits;
  return bits <= 8 ? 1 : bits <= 16 ? 2 : 4;
}

// A NumPy array over memory the runner owns (no owner: valid during the call).
template <class T>
nb::object view(T* p, std::vector<std::size_t> shape, std::vector<std::int64_t> strides = {}) {
  using Arr = nb::ndarray<nb::numpy, T>;
  return Arr(p, shape.size(), shape.data(), nb::handle(), strides.empty() ? nullptr : strides.data())
      .cast(nb::rv_policy::reference);  // a view, never a copy: outputs are written through it
}

// x as a rows x cols view of codes 1, 2 or 4 bytes wide, with the op's strides (in elements).
nb::object tensor_view(const void* x, std::uint32_t fmt, std::uint32_t rows, std::uint32_t cols, std::int64_t rs,
                       std::int64_t cs) {
  const std::vector<std::size_t> shape{rows, cols};
  const std::vector<std::int64_t> st{rs, cs};
  switch (code_bytes(fmt)) {
    case 1: return view(static_cast<const std::uint8_t*>(x), shape, st);
    case 2: return view(static_cast<const std::uint16_t*>(x), shape, st);
    default: return view(static_cast<const std::uint32_t*>(x), shape, st);
  }
}

// Calls the Python side; -1 with the error text when it reports one (or raises).
int64_t call(PyTable& t, const char* family, nb::dict op, nb::dict ins, nb::dict outs, int64_t n) {
  try {
    nb::object r = t.dispatch(family, op, ins, outs);
    if (!r.is_none()) {
      t.error = nb::cast<std::string>(nb::str(r));
      return -1;
    }
    return n;
  } catch (const std::exception& e) {
    t.error = e.what();
    return -1;
  }
}
int ask(PyTable& t, const char* family, nb::dict op) {
  try {
    return nb::cast<bool>(t.supported(family, op)) ? 1 : 0;
  } catch (const std::exception& e) {
    t.error = e.what();
    return 0;
  }
}

// ---- the tensor families (§32.4) --------------------------------------------------------------

const char* const kTensorFamily[] = {"scale", "quantize", "dequantize", "fake-quant", "mor", "mor-sub"};

nb::dict tensor_dict(const numref_tensor_op& o) {
  nb::dict d;
  d["text"] = o.text ? o.text : "";
  d["source"] = fmt_name(o.source);
  d["element"] = fmt_name(o.element);
  d["rows"] = o.rows, d["cols"] = o.cols;
  d["row_stride"] = o.row_stride, d["col_stride"] = o.col_stride;
  d["block_rows"] = o.block_rows, d["block_cols"] = o.block_cols, d["n_blocks"] = o.n_blocks;
  d["group_rows"] = o.group_rows, d["group_cols"] = o.group_cols, d["n_groups"] = o.n_groups;
  d["q_max_code"] = o.q_max;
  d["out_format"] = o.out_format < static_cast<std::uint32_t>(numref::kFormatCount) ? fmt_name(o.out_format) : "";
  d["policy"] = o.policy.text ? o.policy.text : "";
  d["wide_policy"] = o.wide.text ? o.wide.text : "";
  d["recipe"] = o.recipe.text ? o.recipe.text : "";
  return d;
}
int tensor_supported(void* ctx, std::uint32_t family, const numref_tensor_op* op) {
  nb::gil_scoped_acquire g;
  if (family > NUMREF_TENSOR_FAKE_QUANT) return 0;
  return ask(of(ctx), kTensorFamily[family], tensor_dict(*op));
}
nb::object x_of(const numref_tensor_op* op, const void* x) {
  return tensor_view(x, op->source, op->rows, op->cols, op->row_stride, op->col_stride);
}
std::size_t elements(const numref_tensor_op* op) { return std::size_t{op->rows} * op->cols; }
void block_outputs(nb::dict& outs, const numref_tensor_op* op, uint32_t* scales, uint32_t* gm, uint32_t* tamax) {
  outs["scales"] = view(scales, {op->n_blocks});
  if (gm) outs["group_mantissa"] = view(gm, {op->n_groups});
  if (tamax) outs["tensor_amax"] = view(tamax, {1});
}

int64_t scale(void* ctx, const numref_tensor_op* op, const void* x, uint32_t* amax, uint32_t* scales, uint32_t* gm,
              uint32_t* tamax) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  ins["x"] = x_of(op, x);
  outs["amax"] = view(amax, {op->n_blocks});
  block_outputs(outs, op, scales, gm, tamax);
  return call(of(ctx), "scale", tensor_dict(*op), ins, outs, static_cast<int64_t>(elements(op)));
}
int64_t quantize(void* ctx, const numref_tensor_op* op, const void* x, const uint32_t* r, uint8_t* codes,
                 uint32_t* scales, uint32_t* gm, uint32_t* tamax, uint64_t* counts) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  ins["x"] = x_of(op, x);
  if (r) ins["r"] = view(r, {op->rows, op->cols});
  outs["codes"] = view(codes, {op->rows, op->cols});
  block_outputs(outs, op, scales, gm, tamax);
  if (counts) outs["counts"] = view(counts, {4});
  return call(of(ctx), "quantize", tensor_dict(*op), ins, outs, static_cast<int64_t>(elements(op)));
}
int64_t dequantize(void* ctx, const numref_tensor_op* op, const uint8_t* codes, const uint32_t* scales,
                   const uint32_t* gm, const uint32_t* tamax, uint32_t* out) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  ins["codes"] = view(codes, {op->rows, op->cols});
  ins["scales"] = view(scales, {op->n_blocks});
  if (gm) ins["group_mantissa"] = view(gm, {op->n_groups});
  if (tamax) ins["tensor_amax"] = view(tamax, {1});
  outs["values"] = view(out, {op->rows, op->cols});
  return call(of(ctx), "dequantize", tensor_dict(*op), ins, outs, static_cast<int64_t>(elements(op)));
}
int64_t fake_quant(void* ctx, const numref_tensor_op* op, const void* x, const uint32_t* r, uint32_t* out,
                   uint64_t* counts) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  ins["x"] = x_of(op, x);
  if (r) ins["r"] = view(r, {op->rows, op->cols});
  outs["values"] = view(out, {op->rows, op->cols});
  if (counts) outs["counts"] = view(counts, {4});
  return call(of(ctx), "fake-quant", tensor_dict(*op), ins, outs, static_cast<int64_t>(elements(op)));
}

// ---- MoR (§32.5) ---------------------------------------------------------------------------------

constexpr std::size_t kSumWords = sizeof(numref_error_sum) / sizeof(std::uint64_t);  // 5 limbs + 4 counts
static_assert(sizeof(numref_error_sum) == kSumWords * sizeof(std::uint64_t), "numref_error_sum: words only");

nb::dict mor_dict(const numref_mor_op& o) {
  nb::dict d;
  d["text"] = o.text ? o.text : "";
  d["kind"] = o.kind == NUMREF_MOR_TENSOR ? "tensor" : o.kind == NUMREF_MOR_THREE_WAY ? "three-way" : "two-way";
  d["source"] = fmt_name(o.source);
  d["rows"] = o.rows, d["cols"] = o.cols;
  d["row_stride"] = o.row_stride, d["col_stride"] = o.col_stride;
  d["block_rows"] = o.block_rows, d["block_cols"] = o.block_cols, d["n_blocks"] = o.n_blocks;
  d["out_format"] = fmt_name(o.out_format);
  d["threshold"] = nb::make_tuple(o.threshold_num, o.threshold_den);
  d["policy"] = o.policy.text ? o.policy.text : "";
  return d;
}
int mor_supported(void* ctx, std::uint32_t family, const numref_mor_op* op) {
  nb::gil_scoped_acquire g;
  if (family != NUMREF_TENSOR_MOR && family != NUMREF_TENSOR_MOR_SUB) return 0;
  return ask(of(ctx), kTensorFamily[family], mor_dict(*op));
}
nb::object sums(numref_error_sum* s, std::size_t n) {
  return view(reinterpret_cast<std::uint64_t*>(s), {n, kSumWords});
}
int64_t mor(void* ctx, const numref_mor_op* op, const void* x, numref_mor_result* res, uint32_t* scales) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  ins["x"] = tensor_view(x, op->source, op->rows, op->cols, op->row_stride, op->col_stride);
  outs["decision"] = view(&res->decision, {1});
  outs["reason"] = view(&res->reason, {1});
  outs["mean"] = view(&res->mean, {1});
  outs["group_mantissa"] = view(&res->group_mantissa, {1});
  outs["error_sum"] = view(reinterpret_cast<std::uint64_t*>(&res->error), {kSumWords});
  outs["scales"] = view(scales, {op->n_blocks});
  return call(of(ctx), "mor", mor_dict(*op), ins, outs, static_cast<int64_t>(std::size_t{op->rows} * op->cols));
}
int64_t mor_sub(void* ctx, const numref_mor_op* op, const void* x, uint8_t* type, uint8_t* eq3, uint8_t* eq4,
                numref_error_sum* e4m3_sum, numref_error_sum* e5m2_sum, uint32_t* e4m3_scales, uint32_t* e5m2_scales,
                uint32_t* gm, uint32_t* out) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  const std::size_t nb_ = op->n_blocks;
  ins["x"] = tensor_view(x, op->source, op->rows, op->cols, op->row_stride, op->col_stride);
  outs["type"] = view(type, {nb_});
  outs["eq3"] = view(eq3, {nb_});
  outs["eq4"] = view(eq4, {nb_});
  outs["e4m3_sum"] = sums(e4m3_sum, nb_);
  outs["e5m2_sum"] = sums(e5m2_sum, nb_);
  outs["e4m3_scales"] = view(e4m3_scales, {nb_});
  outs["e5m2_scales"] = view(e5m2_scales, {nb_});
  outs["group_mantissa"] = view(gm, {2});
  outs["values"] = view(out, {op->rows, op->cols});
  return call(of(ctx), "mor-sub", mor_dict(*op), ins, outs, static_cast<int64_t>(std::size_t{op->rows} * op->cols));
}

// ---- GaussWS (§32.8) -------------------------------------------------------------------------------

nb::dict gaussws_dict(const numref_gaussws_op& o) {
  nb::dict d;
  d["text"] = o.text ? o.text : "";
  d["w_format"] = fmt_name(o.w_format), d["g_format"] = fmt_name(o.g_format), d["out_format"] = fmt_name(o.out_format);
  d["rows"] = o.rows, d["cols"] = o.cols;
  d["block_rows"] = o.block_rows, d["block_cols"] = o.block_cols, d["n_blocks"] = o.n_blocks;
  d["noise"] = o.noise == NUMREF_GAUSSWS_NOISE_BITS ? "bits" : "key";
  d["sum"] = o.sum == NUMREF_GAUSSWS_SUM_EXACT ? "exact" : "f32";
  return d;
}
int gaussws_supported(void* ctx, const numref_gaussws_op* op) {
  nb::gil_scoped_acquire g;
  return ask(of(ctx), "gaussws", gaussws_dict(*op));
}
int64_t gaussws(void* ctx, const numref_gaussws_op* op, const void* w, const uint32_t* bt, const uint16_t* u,
                const uint64_t* key, const void* gr, uint32_t* r_packed, uint32_t* scale, uint32_t* w_hat,
                uint32_t* grad) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  const std::int64_t cols = op->cols;
  ins["w"] = tensor_view(w, op->w_format, op->rows, op->cols, cols, 1);
  ins["bt"] = view(bt, {op->n_blocks});
  if (u) ins["u"] = view(u, {op->rows, op->cols});
  if (key) ins["key"] = view(key, {3});
  ins["g"] = tensor_view(gr, op->g_format, op->rows, op->cols, cols, 1);
  const std::size_t n = std::size_t{op->rows} * op->cols;
  outs["r_packed"] = view(r_packed, {(n + 7) / 8});
  outs["scale"] = view(scale, {op->n_blocks});
  outs["w_hat"] = view(w_hat, {op->rows, op->cols});
  outs["grad"] = view(grad, {op->n_blocks});
  return call(of(ctx), "gaussws", gaussws_dict(*op), ins, outs, static_cast<int64_t>(n));
}

// ---- mma (§32.9) ------------------------------------------------------------------------------------

nb::dict mma_dict(const numref_mma_op& o) {
  nb::dict d;
  d["text"] = o.text ? o.text : "";
  d["profile"] = o.profile ? o.profile : "";
  d["a_format"] = fmt_name(o.a_format), d["b_format"] = fmt_name(o.b_format), d["c_format"] = fmt_name(o.c_format);
  d["a_ignore"] = o.a_ignore, d["b_ignore"] = o.b_ignore;
  d["m"] = o.m, d["n"] = o.n, d["k"] = o.k, d["block"] = o.block;
  d["scale_format"] = o.block ? fmt_name(o.scale_format) : "";
  d["scale_ignore"] = o.scale_ignore;
  return d;
}
int mma_supported(void* ctx, const numref_mma_op* op) {
  nb::gil_scoped_acquire g;
  return ask(of(ctx), "mma", mma_dict(*op));
}
int64_t mma(void* ctx, const numref_mma_op* op, const uint32_t* a, const uint32_t* b, const uint32_t* c,
            const uint32_t* sa, const uint32_t* sb, uint32_t* d, uint8_t* flags) {
  nb::gil_scoped_acquire g;
  nb::dict ins, outs;
  ins["a"] = view(a, {op->m, op->k});
  ins["b"] = view(b, {op->k, op->n});
  ins["c"] = view(c, {op->m, op->n});
  if (op->block) {
    ins["sa"] = view(sa, {op->m, op->k / op->block});
    ins["sb"] = view(sb, {op->k / op->block, op->n});
  }
  outs["d"] = view(d, {op->m, op->n});
  if (flags) outs["flags"] = view(flags, {op->m, op->n});
  return call(of(ctx), "mma", mma_dict(*op), ins, outs, static_cast<int64_t>(std::size_t{op->m} * op->n));
}

const char* last_error(void* ctx) { return of(ctx).error.c_str(); }

numref::conform::Level level_of(const std::string& s) {
  using numref::conform::Level;
  if (s == "l0") return Level::l0;
  if (s == "l1") return Level::l1;
  if (s == "l2") return Level::l2;
  if (s == "exhaustive") return Level::exhaustive;
  throw nb::value_error(("level: expected l0, l1, l2 or exhaustive, got '" + s + "'").c_str());
}

// Runs the conformance runner over the Python callables. Returns (exit status, the text report).
nb::tuple conform_run(nb::object supported, nb::object dispatch, const std::string& name, const std::string& ops,
                      const std::vector<std::string>& select, const std::vector<std::string>& profiles,
                      const std::string& level, std::uint64_t seed, const std::string& vectors,
                      std::uint64_t max_errors, bool counts, bool flags, const std::string& json_out) {
  PyTable t;
  t.supported = std::move(supported);
  t.dispatch = std::move(dispatch);
  t.name = name;
  t.ops = ops;
  for (const auto& p : profiles) t.profiles += (t.profiles.empty() ? "" : " ") + p;
  numref_backend& b = t.t;
  b.abi_version = NUMREF_BACKEND_ABI_VERSION;
  b.struct_size = sizeof(numref_backend);
  b.abi_minor = NUMREF_BACKEND_ABI_MINOR;
  b.name = t.name.c_str();
  b.version = "python";
  b.description = "a Python kernel (numref.conform.check)";
  b.ops = t.ops.c_str();
  b.profiles = t.profiles.c_str();
  b.caps = NUMREF_CAP_RECIPE | (counts ? NUMREF_CAP_COUNTS : 0u) | (flags ? NUMREF_CAP_FLAGS : 0u);
  b.ctx = &t;
  b.last_error = last_error;
  b.tensor_supported = tensor_supported;
  b.scale = scale;
  b.quantize = quantize;
  b.dequantize = dequantize;
  b.fake_quant = fake_quant;
  b.mor_supported = mor_supported;
  b.mor = mor;
  b.mor_sub = mor_sub;
  b.gaussws_supported = gaussws_supported;
  b.gaussws = gaussws;
  b.mma_supported = mma_supported;
  b.mma = mma;

  numref::conform::RunConfig cfg;
  cfg.backend = name;
  cfg.table = &b;
  cfg.ops = select;
  cfg.profiles = profiles;
  cfg.level = level_of(level);
  cfg.seed = seed;
  cfg.vectors_dir = vectors;
  cfg.max_errors = max_errors;
  cfg.jobs = 1;
  cfg.isolate = false;
  cfg.progress = 0;
  cfg.report = numref::conform::ReportFormat::json;
  cfg.out = json_out;

  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* text = open_memstream(&buf, &len);
  if (!text) throw std::runtime_error("open_memstream failed");
  int status = 0;
  std::string err;
  {
    nb::gil_scoped_release r;  // the runner's worker calls back into Python, taking the GIL per call
    try {
      status = numref::conform::run_conform(cfg, text);
    } catch (const std::invalid_argument& e) {
      err = e.what();
    }
  }
  std::fclose(text);
  std::string report(buf ? buf : "", len);
  std::free(buf);
  if (!err.empty()) throw nb::value_error(err.c_str());
  return nb::make_tuple(status, report);
}

}  // namespace

void bind_conform_table(nb::module_& m) {
  using namespace nb::literals;
  m.def(
      "mor_reasons",
      [] {
        std::vector<std::string> v;
        for (int i = 0; i <= static_cast<int>(numref::Reason::not_evaluated); ++i)
          v.emplace_back(numref::to_string(static_cast<numref::Reason>(i)));
        return v;
      },
      "The §25.3 reasons in the order of their C ABI numbers (NUMREF_REASON_*).");
  m.def(
      "mor_block_types",
      [] {
        std::vector<std::string> v;
        for (int i = 0; i <= static_cast<int>(numref::BlockType::bf16); ++i)
          v.emplace_back(numref::to_string(static_cast<numref::BlockType>(i)));
        return v;
      },
      "The §27.4 block types in the order of their C ABI numbers (NUMREF_BLOCK_*).");
  m.def("conform_run", &conform_run, "supported"_a, "dispatch"_a, "name"_a, "ops"_a, "select"_a, "profiles"_a,
        "level"_a, "seed"_a, "vectors"_a, "max_errors"_a, "counts"_a, "flags"_a, "json_out"_a,
        "Runs the conformance runner (spec §34) over a backend table whose entry points call Python "
        "(numref.conform.check). Returns (exit status, text report); the JSON report goes to json_out.");
}
