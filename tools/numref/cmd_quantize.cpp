// numref quantize — quantize a .npy tensor and write codes, scales and a summary.
//   spec §12 (tensors, partitions), §13 – §18, §20 (scale rules), §19 (quantize, layout, .npy)
//
// Reads a NumPy .npy tensor (float32, float16, or 16-bit bit patterns named by
// --input-format), quantizes it with cpu-fast's FastQuant where it takes the operation (else
// numref::quantize(); the same results), and writes PREFIX.codes.npy,
// PREFIX.scales.npy (+ group mantissas for gam, the tensor amax for nvfp4, and optionally
// the dequantized / fake-quant tensors) and a text or JSON summary with per-block scales
// (hex and exact value) and the counts of saturated / flushed / NaN / Inf elements.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "fast_quant.hpp"
#include "numref/npy.hpp"
#include "numref/quantize.hpp"
#include "numref/splitmix64.hpp"
#include "parallel.hpp"

namespace numref::cli::cmd_quantize {
namespace {

const ScaleRule kDefaultRule = QuantizeSpec{}.rule;  // numref::quantize_spec's default

// The rule names of numref::kScaleRules for --help: "amax (default) | amax-recip | ...", wrapped.
std::string rule_list_help() {
  std::string out, line;
  for (const ScaleRuleInfo& r : kScaleRules) {
    std::string item(r.name);
    if (r.rule == kDefaultRule) item += " (default)";
    if (!line.empty() && line.size() + 3 + item.size() > 72) {
      out += line;
      out += " |\n";
      out.append(23, ' ');
      line.clear();
    }
    if (!line.empty()) line += " | ";
    line += item;
  }
  return out + line;
}

constexpr const char* kHelp =
    "usage: numref quantize --input X.npy --format ELEM [options]\n"
    "       numref quantize --rules [--markdown]   the scale rules (§19.6), one row per rule\n"
    "\n"
    "Quantizes a tensor (spec §19): per block of the partition, the scale of --scale, then every\n"
    "element converted to ELEM under the element policy. Output layout (§19.4): codes one byte per\n"
    "element in row-major order of the (possibly transposed) tensor, scales block-row-major.\n"
    "\n"
    "input:\n"
    "  --input X.npy        C-order little-endian .npy: <f4 (f32), <f2 (f16), or 16-bit patterns\n"
    "                       (<u2, or <V2 as NumPy saves ml_dtypes bfloat16) or 8-bit patterns (|u1, or\n"
    "                       |V1 / <f1 as NumPy saves ml_dtypes float8 / float6 / float4) with --input-format\n"
    "  --input-format F     bf16 | f16 | f32 | an 8-bit float (needed for <u2 / <V2 / |u1 / |V1 / <f1)\n"
    "  --transpose          quantize the transpose (a view; codes come out in its row-major order)\n"
    "                       1-D arrays are 1 x n; arrays of rank >= 3 are (product of leading dims) x last\n"
    "quantization:\n"
    "  --format ELEM        element format: f8e4m3fn, f8e5m2, f6e3m2fn, f6e2m3fn, f4e2m1fn, int8\n"
    "  --partition P        tensor (default) | rows | cols | channel:rows | channel:cols | block:RxC\n"
    "  --scale RULE         @RULES@\n"
    "  --group P            GAM groups (default tensor; whole multiples of the blocks)\n"
    "  --amax-nan V         propagate (default: NaN poisons its block) | ignore\n"
    "  --amax-inf V         propagate (default: Inf poisons its block) | ignore\n"
    "  --q-max V            q_max (§14.4): a binary32 value >= 4 (decimal or hex-float, exact);\n"
    "                       default the element format's largest finite value (int8-127.5: 127.5)\n"
    "  --recipe \"k=v ...\"   recipe knobs (§19.8): @RECIPE@\n"
    "  --apply A            rn32 (RN32(x*s) then convert; default) | fused (one rounding; default for int8)\n"
    "  --dequant D          divide (default) | reciprocal (multiply by RN32(1/s))\n"
    "profiles with a quantization recipe (§10.4): --profile @RPROFILES@\n"
    "                       set the rule, partition and recipe knobs too; --partition and --q-max\n"
    "                       override, a --scale or --recipe setting that differs is refused\n"
    "element policy (default without --profile/--policy/--overflow: ocp narrow, overflow=saturate):\n"
    "  --profile P, --policy \"k=v ...\", --round M, --sr-bits K, --sr-variant V, --overflow O, ...\n"
    "                       (the options of numref cast; the profile's wide policy converts NaN\n"
    "                       codes back to f32 and produces the fake-quant output)\n"
    "  --random R.npy       stochastic rounding: one <u4 value per element (element order)\n"
    "  --seed S             stochastic rounding: values from splitmix64(S), low K bits, element order\n"
    "  --threads N          threads sharing the blocks' amaxes, scales and codes (default: every\n"
    "                       core; 1: one thread); the results are the same for every N\n"
    "output:\n"
    "  --out PREFIX         write PREFIX.codes.npy (|u1), PREFIX.scales.npy (<f4 / |u1 by rule),\n"
    "                       PREFIX.group_mantissa.npy (<u4, gam), PREFIX.tensor_amax.npy (<f4, nvfp4)\n"
    "  --dequant-out        also PREFIX.dequant.npy (<f4, the dequantized tensor)\n"
    "  --fake-quant F       also PREFIX.fakequant.npy: dequantized then converted to F (bf16 as <u2)\n"
    "  --json               JSON summary on stdout (default: text)\n"
    "  --max-blocks N       list at most N blocks in the summary (default 64; all counts are totals)\n";

using Input = NpyTensor;

Input read_input(const std::string& path, const std::optional<std::string>& fmt_name) {
  return read_npy_tensor(path, fmt_name ? &format_arg(*fmt_name, "--input-format") : nullptr);
}

// §2.4 / §1.2 "hex" and exact value of a code.
std::string json_code(std::uint32_t code, const Format& f) {
  return "{\"hex\": \"" + hex_code(code, f) + "\", \"value\": \"" + compact_value(decode(code, f), 40) + "\"}";
}

std::string counts_json(const QuantizeStats& s) {
  return "\"saturated\": " + std::to_string(s.saturated) + ", \"flushed\": " + std::to_string(s.flushed) +
         ", \"nan\": " + std::to_string(s.nan) + ", \"inf\": " + std::to_string(s.inf);
}

// ---- parse: the options ---------------------------------------------------------------------

// The verb's options, read and checked before any file is opened.
struct Options {
  std::string input_path;
  std::optional<std::string> input_format, random_path, seed, out_prefix;
  std::string profile;          // --profile (default ocp)
  bool recipe_profile = false;  // §10.4 the profile has a quantization recipe
  const Format* elem = nullptr;
  QuantizeSpec spec;
  bool transpose = false, dequant_out = false, json = false;
  const Format* fake = nullptr;  // --fake-quant
  std::size_t max_blocks = 64;
  unsigned threads = 1;  // --threads (default: every core)
};

int print_help() {
  std::string help = kHelp;
  help.replace(help.find("@RULES@"), 7, rule_list_help());
  std::string knobs, rprofiles;
  std::apply([&](const auto&... k) { ((knobs += (knobs.empty() ? "" : ", ") + std::string(k.key)), ...); },
             kRecipeKnobs);
  for (int i = 0; i < kProfileCount; ++i)
    if (all_profiles()[i].recipe) rprofiles += (rprofiles.empty() ? "" : " | ") + std::string(all_profiles()[i].name);
  help.replace(help.find("@RECIPE@"), 8, knobs);
  help.replace(help.find("@RPROFILES@"), 11, rprofiles);
  std::fputs(help.c_str(), stdout);
  return 0;
}

// §19.6 --rules: the scale-rule table, one row per rule in table order.
int print_rules(Args& a) {
  const bool md = a.flag("markdown");
  a.finish();
  const char* none = md ? "—" : "-";
  std::vector<std::vector<std::string>> rows;
  for (const ScaleRuleInfo& r : kScaleRules) {
    const char* output = r.tensor_output == TensorOutput::group_mantissa ? "group mantissa (§17.1)"
                         : r.tensor_output == TensorOutput::tensor_amax  ? "tensor amax (§18.1)"
                                                                         : none;
    rows.push_back({std::string(r.name), std::to_string(r.abi_id), std::string(r.clause),
                    std::string(format(r.scale_format).name), output,
                    r.q_max == RuleQmax::element_max_half ? "element max + 1/2" : "element max",
                    r.int_range ? std::string(to_string(*r.int_range)) : std::string(none),
                    std::string(to_string(r.apply)), r.dequant_multiplier ? "yes" : "no"});
  }
  print_table({"rule", "C id", "clause", "stored scale", "tensor output", "default q_max", "int_range", "apply",
               "stored scale multiplies at quantize"},
              rows, md);
  return 0;
}

// §14.4 --q-max: a finite binary32 value, exact.
Exact parse_qmax(const std::string& qm) {
  std::uint32_t code = 0;
  bool inexact = false;
  const std::string err = value_code(qm, format(FormatId::f32), code, &inexact);
  if (!err.empty()) throw UsageError("--q-max: " + err);
  if (inexact) throw UsageError("--q-max: " + qm + " is not a binary32 value (q_max must be exact, §14.4)");
  if (!f32_is_finite(code)) throw UsageError("--q-max: " + qm + " is not finite");
  return exact_f32(code);
}

// §10.4 / §19.8 The rule, partitions, recipe knobs and amax policies (a profile with a recipe
// supplies them; numref::quantize_spec, shared with Python's numref.quantize), then the element
// policy (§19.1: ocp narrow with overflow=saturate unless a profile, a policy line or an
// overflow knob is given; a recipe profile's narrow policy, knobs on top) and the wide policy.
QuantizeSpec parse_spec(Args& a, const Format& elem, const std::string& pname) {
  QuantizeOptions qo;
  qo.profile = pname;
  using Field = std::optional<std::string> QuantizeOptions::*;
  for (const auto& [name, field] : {std::pair<const char*, Field>{"partition", &QuantizeOptions::partition},
                                    {"group", &QuantizeOptions::group},
                                    {"scale", &QuantizeOptions::scale},
                                    {"recipe", &QuantizeOptions::recipe},
                                    {"amax-nan", &QuantizeOptions::amax_nan},
                                    {"amax-inf", &QuantizeOptions::amax_inf},
                                    {"apply", &QuantizeOptions::apply},
                                    {"dequant", &QuantizeOptions::dequant}})
    qo.*field = a.opt(name);
  if (const auto qm = a.opt("q-max")) qo.q_max = parse_qmax(*qm);
  QuantizeSpec spec;
  try {
    spec = quantize_spec(elem, qo, [](std::string_view key) {
      std::string s = "--" + std::string(key);
      for (char& c : s)
        if (c == '_') c = '-';
      return s;
    });
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool custom = a.opt("profile").has_value() || a.opt("policy").has_value() || a.opt("overflow").has_value();
  spec.policy = policy_from_args(a, elem);
  if (!custom) spec.policy.overflow = Overflow::saturate;
  spec.wide = profile(*find_profile(pname)).wide;
  return spec;
}

Options parse_options(Args& a) {
  Options o;
  const auto input_path = a.opt("input");
  if (!input_path) throw UsageError("--input X.npy is required (see numref quantize --help)");
  o.input_path = *input_path;
  const auto fmt_name = a.opt("format");
  if (!fmt_name) throw UsageError("--format ELEM is required (the element format, e.g. f8e4m3fn)");
  o.elem = &format_arg(*fmt_name, "--format");
  o.profile = a.opt_or("profile", "ocp");
  o.spec = parse_spec(a, *o.elem, o.profile);
  const auto pid = find_profile(o.profile);
  o.recipe_profile = pid && profile(*pid).recipe;
  o.transpose = a.flag("transpose");
  o.input_format = a.opt("input-format");
  o.random_path = a.opt("random");
  o.seed = a.opt("seed");
  o.out_prefix = a.opt("out");
  o.dequant_out = a.flag("dequant-out");
  const auto fake_name = a.opt("fake-quant");
  o.json = a.flag("json");
  o.max_blocks = static_cast<std::size_t>(parse_int(a.opt_or("max-blocks", "64"), 0, 1LL << 40, "--max-blocks"));
  o.threads = threads_from_args(a).value_or(cpu_fast::default_threads());
  a.finish();
  if ((o.dequant_out || fake_name) && !o.out_prefix) throw UsageError("--dequant-out / --fake-quant need --out PREFIX");
  o.fake = fake_name ? &format_arg(*fake_name, "--fake-quant") : nullptr;
  if (o.fake && o.fake->bits != 16 && o.fake->bits != 32)
    throw UsageError("--fake-quant: the output format must be a 16- or 32-bit format (bf16, f16, f32)");
  return o;
}

// §35.1 Every output is checked (not an input, not named twice, its directory exists) before
// any work; all appear together after the last one was written. The rule's row says which
// tensor-level outputs it has (§17.1 group mantissas, §18.1 tensor amax).
struct OutputFiles {
  explicit OutputFiles(const Options& o) : outputs(inputs_of(o)) {
    if (!o.out_prefix) return;
    const std::string& p = *o.out_prefix;
    codes = &outputs.add("--out", p + ".codes.npy");
    scales = &outputs.add("--out", p + ".scales.npy");
    if (has_group_mantissa(o.spec.rule)) group_mantissa = &outputs.add("--out", p + ".group_mantissa.npy");
    if (has_tensor_amax(o.spec.rule)) tensor_amax = &outputs.add("--out", p + ".tensor_amax.npy");
    if (o.dequant_out) dequant = &outputs.add("--dequant-out", p + ".dequant.npy");
    if (o.fake) fake = &outputs.add("--fake-quant", p + ".fakequant.npy");
  }
  static std::vector<std::string> inputs_of(const Options& o) {
    std::vector<std::string> inputs = {o.input_path};
    if (o.random_path) inputs.push_back(*o.random_path);
    return inputs;
  }
  Outputs outputs;
  conform::OutputFile *codes = nullptr, *scales = nullptr, *group_mantissa = nullptr, *tensor_amax = nullptr,
                      *dequant = nullptr, *fake = nullptr;
};

// ---- compute ----------------------------------------------------------------------------------

// §19.2 / §4.3 The random values of --random R.npy: <u4, one per element, each below 2^k.
std::vector<std::uint32_t> read_random(const std::string& path, std::size_t n, int k) {
  std::vector<std::uint8_t> rb;
  const npy::Array ra = read_npy(path, rb);
  if (ra.dtype != npy::Dtype::u4) throw UsageError(path + ": random values must be <u4 (uint32)");
  if (ra.count() != n)
    throw UsageError(path + ": " + std::to_string(ra.count()) + " random values for " + std::to_string(n) +
                     " elements");
  std::vector<std::uint32_t> random(n);
  std::memcpy(random.data(), rb.data() + ra.data_offset, n * 4);
  for (std::size_t i = 0; i < n; ++i)
    if (k < 32 && (random[i] >> k) != 0)
      throw UsageError(path + ": value " + std::to_string(random[i]) + " at element " + std::to_string(i) +
                       " does not fit in k = " + std::to_string(k) + " bits (§4.3)");
  return random;
}

// §19.2 Random bits for stochastic rounding, in element order (empty without it): --random's
// file, or the low k bits of splitmix64(--seed) per element.
std::vector<std::uint32_t> random_values(const Options& o, std::size_t n) {
  const bool sr = effective_round(*o.elem, o.spec.policy) == Round::sr;
  if (o.random_path && o.seed) throw UsageError("give either --random or --seed, not both");
  if ((o.random_path || o.seed) && !sr)
    throw UsageError("--random / --seed apply only to stochastic rounding (--round sr)");
  if (!sr) return {};
  if (!o.random_path && !o.seed) throw UsageError("stochastic rounding needs --random R.npy or --seed S");
  const int k = o.spec.policy.sr_bits;
  if (!o.seed) return read_random(*o.random_path, n, k);
  std::uint64_t s = static_cast<std::uint64_t>(parse_int(*o.seed, 0, 1LL << 53, "--seed"));
  std::vector<std::uint32_t> random(n);
  for (auto& r : random) {
    const std::uint64_t z = splitmix64_next(s);
    r = static_cast<std::uint32_t>(k == 32 ? z & 0xFFFFFFFFu : z & ((1ull << k) - 1));
  }
  return random;
}

// The quantized tensor and what the summary reports of it.
struct Quantized {
  std::vector<std::uint8_t> codes;
  QuantizeResult r;
};

// numref::quantize() on `threads` threads: the blocks are shared by ranges (amaxes, scales, then
// the codes by Quantizer::quantize_all over each range); the same result for every thread count.
// A tensor of fewer than 2^20 elements, or a single block, takes one thread.
constexpr std::size_t kThreadGrain = std::size_t{1} << 19;  // elements per range at least
Quantized quantize_input(const TensorView& x, const QuantizeSpec& spec_in, std::span<const std::uint32_t> random,
                         unsigned threads) {
  Quantized q;
  q.codes.resize(x.size());
  try {
    QuantizeSpec spec = spec_in;
    if (spec.source == nullptr) spec.source = &x.format();  // §14.5, as quantize() sets it
    Quantizer qz(spec, x.rows(), x.cols());
    const std::size_t n = qz.grid().count();
    const std::size_t per_block = std::max<std::size_t>(1, x.size() / n);
    const std::size_t grain = (kThreadGrain + per_block - 1) / per_block;  // in blocks
    QuantizeResult& res = q.r;
    res.block_amax.resize(n);
    cpu_fast::parallel_ranges(n, threads, grain, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t b = lo; b < hi; ++b) res.block_amax[b] = qz.amax(x, b);
    });
    qz.prepare(res.block_amax);
    std::vector<BlockScale> scales(n);
    cpu_fast::parallel_ranges(n, threads, grain, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t b = lo; b < hi; ++b) scales[b] = qz.block_scale(b, res.block_amax[b]);
    });
    res.block_stats.assign(n, QuantizeStats{});
    cpu_fast::parallel_ranges(n, threads, grain, [&](std::size_t lo, std::size_t hi) {
      const std::vector<QuantizeStats> st = qz.quantize_all(x, scales, q.codes, random, lo, hi);
      std::copy(st.begin() + static_cast<std::ptrdiff_t>(lo), st.begin() + static_cast<std::ptrdiff_t>(hi),
                res.block_stats.begin() + static_cast<std::ptrdiff_t>(lo));
    });
    for (const QuantizeStats& st : res.block_stats) res.total += st;
    res.meta = qz.meta(scales);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return q;
}

// cpu-fast's block quantizer (conformance/backends/cpu_fast/fast_quant.hpp, held equal to the
// reference by the conformance suite and the equality tests), as numref.quantize takes it: where
// FastQuant takes the operation and computes its §19.5 counts (not the fused application), the
// block amaxes and scales, the codes (on `threads` threads: the same result for every count) and
// the counts; nullopt: the reference path (quantize_input).
std::optional<Quantized> quantize_fast(const TensorView& x, const QuantizeSpec& spec_in,
                                       std::span<const std::uint32_t> random, unsigned threads) {
  QuantizeSpec spec = spec_in;
  if (spec.source == nullptr) spec.source = &x.format();  // §14.5, as quantize() sets it
  std::optional<Quantizer> qz;
  try {
    qz.emplace(spec, x.rows(), x.cols());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const cpu_fast::QuantOp op = cpu_fast::quant_op_of(x, spec, *qz);
  if (op.fused || !cpu_fast::FastQuant::unsupported(op).empty()) return std::nullopt;
  const cpu_fast::FastQuant fq(op);
  const std::size_t nb = fq.blocks();
  const std::uint32_t* r = random.empty() ? nullptr : random.data();
  std::vector<std::uint32_t> amax(nb), scales(nb), gm(fq.groups());
  std::vector<std::uint64_t> counts(4 * nb);
  std::uint32_t tensor_amax = 0;
  Quantized q;
  q.codes.resize(x.size());
  fq.scale(x.data(), amax.data(), scales.data(), gm.data(), threads, &tensor_amax);
  fq.quantize(x.data(), r, q.codes.data(), scales.data(), gm.data(), threads, nullptr, &tensor_amax);
  if (!fq.counts(x.data(), r, amax.data(), q.codes.data(), counts.data())) return std::nullopt;
  QuantizeResult& res = q.r;
  res.block_amax.resize(nb);
  res.block_stats.resize(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    res.block_amax[b] = Amax{amax[b]};
    res.block_stats[b] = QuantizeStats{counts[4 * b], counts[4 * b + 1], counts[4 * b + 2], counts[4 * b + 3]};
    res.total += res.block_stats[b];
  }
  // the metadata as Quantizer::meta() gives it (§17.1 / §18.1 the rule's tensor-level output only)
  res.meta = ScaleMeta{.rule = spec.rule,
                       .element = spec.element,
                       .rows = x.rows(),
                       .cols = x.cols(),
                       .partition = spec.partition,
                       .group = scale_groups(spec),
                       .q_max = qz->q_max(),
                       .dequant = spec.dequant,
                       .recipe = spec.recipe,
                       .wide = spec.wide,
                       .scales = std::move(scales),
                       .group_mantissa = has_group_mantissa(spec.rule) ? std::move(gm) : std::vector<std::uint32_t>{},
                       .tensor_amax = has_tensor_amax(spec.rule) ? tensor_amax : 0u};
  return q;
}

// §17 The block scale (1.m_g) * 2^e_b of a GAM block as a binary32 code; nullopt for a block of
// another kind or a poisoned block (E8M0 NaN).
std::optional<std::uint32_t> gam_block_scale(const ScaleMeta& m, const BlockRange& br, std::size_t b) {
  if (scale_kind(m.rule) != ScaleKind::gam || block_poisoned(m, b)) return std::nullopt;
  const std::uint32_t m_g = m.group_mantissa[BlockGrid(m.rows, m.cols, m.group).block_of(br.r0, br.c0)];
  return gam_block_scale_f32(m.scales[b], m_g);
}

// ---- render: the files ---------------------------------------------------------------------

// §19.4 The .npy files of --out, committed together (§35.1); returns their paths in order.
std::vector<std::string> write_files(OutputFiles& f, const Options& o, const Input& in, const TensorView& x,
                                     const Quantized& q, std::span<const std::uint32_t> random) {
  if (!o.out_prefix) return {};
  const std::size_t n = x.size();
  const ScaleMeta& m = q.r.meta;
  const std::vector<std::size_t> shape = o.transpose ? std::vector<std::size_t>{x.rows(), x.cols()} : in.shape;
  write_npy(*f.codes, npy::Dtype::u1, shape, q.codes.data(), q.codes.size());
  const BlockGrid grid(x.rows(), x.cols(), o.spec.partition);
  const std::vector<std::size_t> gshape = {grid.grid_rows(), grid.grid_cols()};
  if (scale_format(o.spec.rule).bits == 32) {
    write_npy(*f.scales, npy::Dtype::f4, gshape, m.scales.data(), m.scales.size() * 4);
  } else {
    std::vector<std::uint8_t> s8(m.scales.begin(), m.scales.end());
    write_npy(*f.scales, npy::Dtype::u1, gshape, s8.data(), s8.size());
  }
  if (f.group_mantissa) {
    const BlockGrid gg(x.rows(), x.cols(), m.group);
    write_npy(*f.group_mantissa, npy::Dtype::u4, {gg.grid_rows(), gg.grid_cols()}, m.group_mantissa.data(),
              m.group_mantissa.size() * 4);
  }
  if (f.tensor_amax) write_npy(*f.tensor_amax, npy::Dtype::f4, {1}, &m.tensor_amax, 4);
  if (f.dequant) {
    std::vector<std::uint32_t> dq(n);
    dequantize(q.codes, m, dq);
    write_npy(*f.dequant, npy::Dtype::f4, shape, dq.data(), n * 4);
  }
  if (f.fake) {
    std::vector<std::uint32_t> fq(n);
    fake_quantize(x, o.spec, *o.fake, fq, random);
    if (o.fake->bits == 32) {
      write_npy(*f.fake, npy::Dtype::f4, shape, fq.data(), n * 4);
    } else {
      std::vector<std::uint16_t> h(fq.begin(), fq.end());
      write_npy(*f.fake, o.fake->id == FormatId::f16 ? npy::Dtype::f2 : npy::Dtype::u2, shape, h.data(), n * 2);
    }
  }
  f.outputs.commit_all();
  std::vector<std::string> files;
  for (const conform::OutputFile* of : {f.codes, f.scales, f.group_mantissa, f.tensor_amax, f.dequant, f.fake})
    if (of) files.push_back(of->path());
  return files;
}

// ---- render: the summary -------------------------------------------------------------------

// What the summary shows: the options, the input, the result, the files written.
struct Summary {
  const Options& o;
  const Input& in;
  const TensorView& x;
  const QuantizeResult& r;
  const std::vector<std::string>& files;
  BlockGrid grid;
  const Format& sfmt;
  std::size_t listed;  // blocks listed (--max-blocks)
};

// The JSON header: input, element, rule, partitions, policies, grid and counts.
std::string json_header(const Summary& s) {
  const QuantizeSpec& spec = s.o.spec;
  const BlockGrid& grid = s.grid;
  std::string o = "{\n";
  o += "  \"input\": {\"path\": " + json_string(s.o.input_path) + ", \"format\": \"" + std::string(s.in.format->name) +
       "\", \"rows\": " + std::to_string(s.x.rows()) + ", \"cols\": " + std::to_string(s.x.cols()) +
       ", \"transposed\": " + (s.o.transpose ? "true" : "false") + "},\n";
  o += "  \"element\": \"" + std::string(s.o.elem->name) + "\",\n";
  o += "  \"scale\": \"" + std::string(to_string(spec.rule)) + "\", \"scale_format\": \"" + std::string(s.sfmt.name) +
       "\",\n";
  o += "  \"partition\": \"" + to_string(spec.partition) + "\", \"group\": \"" + to_string(s.r.meta.group) + "\",\n";
  o += std::string("  \"amax_nan\": \"") + (spec.amax.nan == AmaxNan::ignore ? "ignore" : "propagate") +
       "\", \"amax_inf\": \"" + (spec.amax.inf == AmaxInf::ignore ? "ignore" : "propagate") + "\", \"apply\": \"" +
       std::string(to_string(spec.apply ? *spec.apply : rule_info(spec.rule).apply)) + "\", \"dequant\": \"" +
       std::string(to_string(spec.dequant)) + "\",\n";
  o += "  \"profile\": \"" + s.o.profile + "\", \"recipe\": \"" + describe(spec.recipe) + "\",\n";
  o += "  \"policy\": \"" + describe(spec.policy) + "\",\n";
  o += "  \"wide_policy\": \"" + describe(spec.wide) + "\",\n";
  o += "  \"grid\": {\"rows\": " + std::to_string(grid.grid_rows()) +
       ", \"cols\": " + std::to_string(grid.grid_cols()) + ", \"block_rows\": " + std::to_string(grid.block_rows()) +
       ", \"block_cols\": " + std::to_string(grid.block_cols()) + ", \"blocks\": " + std::to_string(grid.count()) +
       "},\n";
  o += "  \"counts\": {\"elements\": " + std::to_string(s.x.size()) + ", " + counts_json(s.r.total) + "},\n";
  return o;
}

// §17.1 / §18.1 The rule's tensor-level output as JSON fields (the first group mantissas, as
// many as blocks are listed; the tensor amax).
std::string json_tensor_output(const Summary& s) {
  const ScaleMeta& m = s.r.meta;
  std::string o;
  if (has_group_mantissa(m.rule)) {
    o += "  \"group_mantissa\": [";
    for (std::size_t i = 0; i < m.group_mantissa.size() && i < std::max<std::size_t>(s.listed, 1); ++i) {
      char b[16];
      std::snprintf(b, sizeof b, "\"%06x\"", m.group_mantissa[i]);
      o += (i ? ", " : "") + std::string(b);
    }
    o += "],\n";
  }
  if (has_tensor_amax(m.rule)) o += "  \"tensor_amax\": " + json_code(m.tensor_amax, format(FormatId::f32)) + ",\n";
  return o;
}

void print_json(const Summary& s) {
  const Format& f32 = format(FormatId::f32);
  const QuantizeResult& r = s.r;
  std::string o = json_header(s) + json_tensor_output(s);
  o += "  \"blocks_listed\": " + std::to_string(s.listed) + ",\n  \"blocks\": [";
  for (std::size_t b = 0; b < s.listed; ++b) {
    const BlockRange br = s.grid.range(b);
    o += std::string(b ? ",\n" : "\n") + "    {\"index\": " + std::to_string(b) + ", \"rows\": [" +
         std::to_string(br.r0) + ", " + std::to_string(br.r1) + "], \"cols\": [" + std::to_string(br.c0) + ", " +
         std::to_string(br.c1) + "], \"amax\": " + json_code(r.block_amax[b].f32, f32) +
         ", \"scale\": " + json_code(r.meta.scales[b], s.sfmt);
    if (const auto g = gam_block_scale(r.meta, br, b)) o += ", \"block_scale\": " + json_code(*g, f32);
    o += ", " + counts_json(r.block_stats[b]) + "}";
  }
  o += s.listed ? "\n  ],\n" : "],\n";
  o += "  \"files\": [";
  for (std::size_t i = 0; i < s.files.size(); ++i) o += (i ? ", " : "") + json_string(s.files[i]);
  o += "]\n}\n";
  std::fputs(o.c_str(), stdout);
}

void print_text(const Summary& s) {
  const Format& f32 = format(FormatId::f32);
  const QuantizeSpec& spec = s.o.spec;
  const QuantizeResult& r = s.r;
  std::printf("input      %s: %s, %zu x %zu%s\n", s.o.input_path.c_str(), std::string(s.in.format->name).c_str(),
              s.x.rows(), s.x.cols(), s.o.transpose ? " (transposed)" : "");
  std::printf("quantize   %s, scale %s (%s), partition %s, %zu x %zu blocks\n", std::string(s.o.elem->name).c_str(),
              std::string(to_string(spec.rule)).c_str(), std::string(s.sfmt.name).c_str(),
              to_string(spec.partition).c_str(), s.grid.grid_rows(), s.grid.grid_cols());
  if (s.o.recipe_profile || !(spec.recipe == RecipeKnobs{}))
    std::printf("recipe     %s\n", describe(spec.recipe).c_str());
  std::printf("policy     %s\n", describe(spec.policy).c_str());
  std::printf("counts     %s: %llu saturated, %llu flushed, %llu NaN, %llu Inf\n", count(s.x.size(), "element").c_str(),
              static_cast<unsigned long long>(r.total.saturated), static_cast<unsigned long long>(r.total.flushed),
              static_cast<unsigned long long>(r.total.nan), static_cast<unsigned long long>(r.total.inf));
  if (has_group_mantissa(spec.rule))
    std::printf("group mantissa %06x (first group)\n", r.meta.group_mantissa.empty() ? 0u : r.meta.group_mantissa[0]);
  if (has_tensor_amax(spec.rule))
    std::printf("tensor amax %s = %s\n", hex_code(r.meta.tensor_amax, f32).c_str(),
                compact_value(decode(r.meta.tensor_amax, f32), 40).c_str());
  for (std::size_t b = 0; b < s.listed; ++b) {
    const BlockRange br = s.grid.range(b);
    std::string gam_scale;
    if (const auto g = gam_block_scale(r.meta, br, b))
      gam_scale = " -> block scale " + hex_code(*g, f32) + " = " + compact_value(decode(*g, f32), 40);
    std::printf("block %zu rows [%zu,%zu) cols [%zu,%zu): amax %s scale %s = %s%s\n", b, br.r0, br.r1, br.c0, br.c1,
                hex_code(r.block_amax[b].f32, f32).c_str(), hex_code(r.meta.scales[b], s.sfmt).c_str(),
                compact_value(decode(r.meta.scales[b], s.sfmt), 40).c_str(), gam_scale.c_str());
  }
  if (s.listed < s.grid.count())
    std::printf("(%zu more blocks; --max-blocks N lists more)\n", s.grid.count() - s.listed);
  for (const auto& f : s.files) std::printf("wrote      %s\n", f.c_str());
}

// ---- the verb -------------------------------------------------------------------------------

int run_quantize(Args& a) {
  if (a.flag("help")) return print_help();
  if (a.flag("rules")) return print_rules(a);
  const Options o = parse_options(a);
  OutputFiles out(o);
  const Input in = read_input(o.input_path, o.input_format);
  const TensorView base(*in.format, in.bytes.data() + in.offset, in.rows, in.cols);
  const TensorView x = o.transpose ? base.transposed() : base;
  const std::vector<std::uint32_t> random = random_values(o, x.size());
  std::optional<Quantized> fast = quantize_fast(x, o.spec, random, o.threads);
  const Quantized q = fast ? std::move(*fast) : quantize_input(x, o.spec, random, o.threads);
  const std::vector<std::string> files = write_files(out, o, in, x, q, random);
  const BlockGrid grid(x.rows(), x.cols(), o.spec.partition);
  const Summary s{o, in, x, q.r, files, grid, scale_format(o.spec.rule), std::min(o.max_blocks, grid.count())};
  if (o.json)
    print_json(s);
  else
    print_text(s);
  return 0;
}

}  // namespace

NUMREF_VERB("quantize", "quantize a .npy tensor: codes, scales and a summary", run_quantize);

}  // namespace numref::cli::cmd_quantize
