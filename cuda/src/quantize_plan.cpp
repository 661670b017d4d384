// numref CUDA kernels — quantization plans (host).                                spec §A.7
#include "numref_cuda/quantize_plan.hpp"

#include <stdexcept>
#include <string>

#include "numref/convert.hpp"
#include "numref/round.hpp"
#include "numref/scale.hpp"
#include "numref_arith/format_list.hpp"
#include "numref_cuda/policy_map.hpp"

namespace numref_cuda {
namespace {

[[noreturn]] void unsupported(const std::string& what) { throw std::invalid_argument("CUDA quantize: " + what); }

std::uint32_t effective(std::size_t extent, std::size_t dim) {
  return static_cast<std::uint32_t>(extent == 0 || extent > dim ? dim : extent);
}

// The binary32 code of a positive dyadic q_max (§14.4: at most 24 significant bits, in range).
std::uint32_t f32_code_of(const numref::Exact& q) {
  const std::uint32_t c = numref::rn32(q);
  if (numref::compare_abs(numref::exact_f32(c), q) != 0) unsupported("q_max is not a binary32 value");
  return c;
}

// §19.6 The scale kinds the block kernels compute (scale.cuh): a rule is planned by its row's
// kind, so a rule of a kind not listed here is refused, never computed as another.
bool kernel_kind(numref::ScaleKind k) {
  switch (k) {
    case numref::ScaleKind::fp32_quotient:
    case numref::ScaleKind::fp32_recip:
    case numref::ScaleKind::fp32_dequant:
    case numref::ScaleKind::pow2:
    case numref::ScaleKind::pow2_recip:
    case numref::ScaleKind::mx:
    case numref::ScaleKind::gam:
    case numref::ScaleKind::nvfp4: return true;
  }
  return false;
}

}  // namespace

Geometry make_geometry(std::size_t rows, std::size_t cols, std::ptrdiff_t rs, std::ptrdiff_t cs,
                       const numref::Partition& blocks, const numref::Partition& groups, std::uint32_t V) {
  if (rows == 0 || cols == 0) unsupported("empty tensor");
  if (rows >= (std::size_t{1} << 31) || cols >= (std::size_t{1} << 31))
    unsupported("rows and cols must be below 2^31 (got " + std::to_string(rows) + " x " + std::to_string(cols) + ")");
  if (static_cast<std::uint64_t>(rows) * cols > kMaxElements)
    unsupported("at most 2^38 elements (§A.8), got " + std::to_string(static_cast<std::uint64_t>(rows) * cols));
  Geometry g;
  g.rows = static_cast<std::uint32_t>(rows);
  g.cols = static_cast<std::uint32_t>(cols);
  g.rs = rs;
  g.cs = cs;
  g.br = effective(blocks.block_rows, rows);
  g.bc = effective(blocks.block_cols, cols);
  g.nbr = (g.rows + g.br - 1) / g.br;
  g.nbc = (g.cols + g.bc - 1) / g.bc;
  g.div_br = FastDiv(g.br);
  g.div_bc = FastDiv(g.bc);
  // §12.4 groups in blocks: the whole extent, or a whole multiple of the block extent.
  const std::uint32_t gr = effective(groups.block_rows, rows), gc = effective(groups.block_cols, cols);
  g.gbr = gr >= g.rows ? g.nbr : gr / g.br;
  g.gbc = gc >= g.cols ? g.nbc : gc / g.bc;
  if (g.gbr == 0 || g.gbc == 0) unsupported("groups smaller than blocks");
  g.ngc = (g.nbc + g.gbc - 1) / g.gbc;
  g.div_gbr = FastDiv(g.gbr);
  g.div_gbc = FastDiv(g.gbc);
  // A unit never crosses a block row: tr divides b_r, unless there is one block row.
  if (g.nbr == 1) {
    g.tr = g.rows < kUnitRows ? g.rows : kUnitRows;
  } else {
    g.tr = 1;
    for (std::uint32_t t = kUnitRows; t >= 1; --t)
      if (g.br % t == 0) {
        g.tr = t;
        break;
      }
  }
  g.n_chunks = (g.cols + V - 1) / V;
  g.n_rgroups = (g.rows + g.tr - 1) / g.tr;
  g.div_chunks = FastDiv(g.n_chunks);
  g.n_units = static_cast<std::uint64_t>(g.n_chunks) * g.n_rgroups;
  g.one_block_chunks = g.nbc == 1 || g.bc % V == 0;
  g.vec = false;
  return g;
}

QuantizePlan plan_quantize(const numref::QuantizeSpec& spec, numref::FormatId source, std::size_t rows,
                           std::size_t cols, std::ptrdiff_t row_stride, std::ptrdiff_t col_stride,
                           numref::FormatId out) {
  using F = numref::FormatId;
  if (!has_role(source, kSource))  // format_list.hpp
    unsupported("no CUDA kernel reads " + std::string(numref::format(source).name) +
                " tensors (sources: " + role_names(kSource) + ")");
  if (spec.element == nullptr) unsupported("no element format");
  // The reference's validation first (element, q_max, policies, fused, groups, shape).
  const numref::Quantizer ref(spec, rows, cols);
  const numref::Format& elem = *spec.element;
  if (!has_role(elem.id, kElement))
    unsupported("no CUDA kernel for " + std::string(elem.name) + " elements (" + role_names(kElement) + ")");
  if (out != F::bf16 && out != F::f16 && out != F::f32)
    unsupported("the fake-quant output must be bf16, f16 or f32, not " + std::string(numref::format(out).name));

  QuantizePlan p;
  p.spec = ref.spec();
  p.spec.apply = ref.apply();
  p.spec.q_max = ref.q_max();
  p.source = source;
  p.element = elem.id;
  p.out = out;
  p.chunk = 16u / static_cast<std::uint32_t>(numref::storage_bytes(numref::format(source)));
  const numref::ScaleRuleInfo& rule = numref::rule_info(spec.rule);
  if (!kernel_kind(rule.kind)) unsupported("no CUDA kernel for the scale kind of rule " + std::string(rule.name));
  if (!(spec.recipe == numref::RecipeKnobs{}))
    unsupported("recipe knobs are not implemented by the CUDA kernels (§A.12 item 8): " +
                numref::describe(spec.recipe));
  const bool gam = rule.kind == ScaleKind::gam;
  p.geom = make_geometry(rows, cols, row_stride, col_stride, spec.partition,
                         gam ? spec.group : numref::Partition::tensor(), p.chunk);
  p.n_blocks = p.geom.nbr * p.geom.nbc;
  p.n_groups = gam ? ((p.geom.nbr + p.geom.gbr - 1) / p.geom.gbr) * p.geom.ngc : 1u;

  // §14.4 / §16.1 scale constants
  ScaleParams& s = p.scale;
  s.kind = rule.kind;
  s.mx = rule.mx;
  s.q_max = f32_code_of(ref.q_max());
  const F32Split qs = f32_split(s.q_max);
  s.emax_elem = qs.e;
  s.q_max_sig = qs.sig;
  s.elem_precision = elem.precision();
  s.dequant_reciprocal = spec.dequant == numref::DequantOp::reciprocal;
  s.inv_q = f32_div(kF32One, s.q_max);
  s.nvfp4_c = f32_mul(0x43E00000u /* 448 */, s.q_max);
  s.nvfp4_inv_c = f32_div(kF32One, s.nvfp4_c);

  p.amax.ignore_nan = spec.amax.nan == numref::AmaxNan::ignore;
  p.amax.ignore_inf = spec.amax.inf == numref::AmaxInf::ignore;

  // §19.1 the element policy (resolved by the Quantizer: the int8 rules fix int_range)
  const numref::Policy& ep = p.spec.policy;
  p.fused = ref.apply() == numref::ScaleApply::fused;
  if (elem.is_integer()) {
    if (ep.daz) unsupported("daz=1 is not implemented by the CUDA kernels (§A.2)");
    if (ep.ftz) unsupported("ftz=1 is not implemented by the CUDA kernels (§A.2)");
    p.elem.mode = numref::effective_round(elem, ep);
    p.elem.sr_bits = static_cast<std::uint8_t>(p.elem.mode == Mode::sr ? ep.sr_bits : 0);
    p.elem.nan_to_finite = ep.nan_to_finite;
    p.symmetric = ep.int_range == numref::IntRange::symmetric;
  } else {
    p.elem = cast_policy(ep, numref::format(F::f32), elem);  // throws for daz / ftz
  }
  p.sr_bits = p.elem.mode == Mode::sr ? p.elem.sr_bits : 0;
  // §19.3 / §19.6 the wide policy (NaN codes -> f32; f32 -> the fake-quant output)
  if (!elem.is_integer()) p.wide_d = cast_policy(p.spec.wide, elem, numref::format(F::f32));
  p.wide_out = cast_policy(p.spec.wide, numref::format(F::f32), numref::format(out));

  p.row_blocks = p.geom.br == 1 && p.geom.bc <= 256 && !numref::needs_tensor_state(s.kind);
  return p;
}

bool vector_loads_ok(const QuantizePlan& p, const void* data) {
  const auto bytes = static_cast<std::int64_t>(numref::storage_bytes(numref::format(p.source)));
  const auto addr = reinterpret_cast<std::uintptr_t>(data);
  return p.geom.cs == 1 && addr % 16u == 0 && (p.geom.rs * bytes) % 16 == 0;
}

std::string describe(const QuantizePlan& p) {
  return std::string(numref::format(p.source).name) + " -> " + std::string(numref::format(p.element).name) + " " +
         std::string(numref::to_string(p.spec.rule)) + " " + numref::to_string(p.spec.partition) + " (" +
         std::to_string(p.n_blocks) + " blocks" + (p.row_blocks ? ", one pass)" : ")");
}

}  // namespace numref_cuda
