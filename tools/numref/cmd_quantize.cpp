// numref quantize — quantize a .npy tensor and write codes, scales and a summary.
//   spec §12 (tensors, partitions), §13 – §18, §20 (scale rules), §19 (quantize, layout, .npy)
//
// Reads a NumPy .npy tensor (float32, float16, or 16-bit bit patterns named by
// --input-format), quantizes it with numref::quantize(), and writes PREFIX.codes.npy,
// PREFIX.scales.npy (+ group mantissas for gam, the tensor amax for nvfp4, and optionally
// the dequantized / fake-quant tensors) and a text or JSON summary with per-block scales
// (hex and exact value) and the counts of saturated / flushed / NaN / Inf elements.
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/npy.hpp"
#include "numref/quantize.hpp"
#include "numref/splitmix64.hpp"

namespace numref::cli {
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
    "profiles with a quantization recipe (§10.5): --profile @RPROFILES@\n"
    "                       set the rule, partition and recipe knobs too; --partition and --q-max\n"
    "                       override, a --scale or --recipe setting that differs is refused\n"
    "element policy (default without --profile/--policy/--overflow: ocp narrow, overflow=saturate):\n"
    "  --profile P, --policy \"k=v ...\", --round M, --sr-bits K, --sr-variant V, --overflow O, ...\n"
    "                       (the options of numref cast; the profile's wide policy converts NaN\n"
    "                       codes back to f32 and produces the fake-quant output)\n"
    "  --random R.npy       stochastic rounding: one <u4 value per element (element order)\n"
    "  --seed S             stochastic rounding: values from splitmix64(S), low K bits, element order\n"
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

int run_quantize(Args& a) {
  if (a.flag("help")) {
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
  const auto input_path = a.opt("input");
  if (!input_path) throw UsageError("--input X.npy is required (see numref quantize --help)");
  const auto fmt_name = a.opt("format");
  if (!fmt_name) throw UsageError("--format ELEM is required (the element format, e.g. f8e4m3fn)");
  const Format& elem = format_arg(*fmt_name, "--format");
  // §10.5 / §19.8 a profile with a recipe supplies the rule, partition, recipe knobs and amax
  // policies (numref::quantize_spec, shared with Python's numref.quantize)
  const std::string pname = a.opt_or("profile", "ocp");
  QuantizeOptions qo;
  qo.profile = pname;
  qo.partition = a.opt("partition");
  qo.group = a.opt("group");
  qo.scale = a.opt("scale");
  qo.recipe = a.opt("recipe");
  qo.amax_nan = a.opt("amax-nan");
  qo.amax_inf = a.opt("amax-inf");
  qo.apply = a.opt("apply");
  qo.dequant = a.opt("dequant");
  if (const auto qm = a.opt("q-max")) {
    std::uint32_t code = 0;
    bool inexact = false;
    const std::string err = value_code(*qm, format(FormatId::f32), code, &inexact);
    if (!err.empty()) throw UsageError("--q-max: " + err);
    if (inexact) throw UsageError("--q-max: " + *qm + " is not a binary32 value (q_max must be exact, §14.4)");
    if (!f32_is_finite(code)) throw UsageError("--q-max: " + *qm + " is not finite");
    qo.q_max = exact_f32(code);
  }
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
  const auto pid = find_profile(pname);
  const bool rprof = pid && profile(*pid).recipe;  // §10.5 the profile has a quantization recipe
  // §19.1 element policy: the default is ocp narrow with overflow=saturate unless the user
  // chose a profile, a policy line or an overflow knob.
  const bool custom = a.opt("profile").has_value() || a.opt("policy").has_value() || a.opt("overflow").has_value();
  spec.policy = policy_from_args(a, elem);  // a recipe profile: its narrow policy (for_target), knobs on top
  if (!custom) spec.policy.overflow = Overflow::saturate;
  spec.wide = profile(*find_profile(pname)).wide;
  const bool transpose = a.flag("transpose");
  const auto input_format = a.opt("input-format");
  const auto random_path = a.opt("random");
  const auto seed = a.opt("seed");
  const auto out_prefix = a.opt("out");
  const bool dequant_out = a.flag("dequant-out");
  const auto fake_name = a.opt("fake-quant");
  const bool json = a.flag("json");
  const std::size_t max_blocks =
      static_cast<std::size_t>(parse_int(a.opt_or("max-blocks", "64"), 0, 1LL << 40, "--max-blocks"));
  a.finish();
  if ((dequant_out || fake_name) && !out_prefix) throw UsageError("--dequant-out / --fake-quant need --out PREFIX");
  const Format* fake_fmt = fake_name ? &format_arg(*fake_name, "--fake-quant") : nullptr;
  if (fake_fmt && fake_fmt->bits != 16 && fake_fmt->bits != 32)
    throw UsageError("--fake-quant: the output format must be a 16- or 32-bit format (bf16, f16, f32)");

  // §36.1 Every output is checked (not an input, not named twice, its directory exists) before
  // any work; all appear together after the last one was written.
  std::vector<std::string> inputs = {*input_path};
  if (random_path) inputs.push_back(*random_path);
  Outputs outputs(inputs);
  conform::OutputFile *codes_out = nullptr, *scales_out = nullptr, *gm_out = nullptr, *amax_out = nullptr,
                      *dequant_file = nullptr, *fake_out = nullptr;
  if (out_prefix) {
    codes_out = &outputs.add("--out", *out_prefix + ".codes.npy");
    scales_out = &outputs.add("--out", *out_prefix + ".scales.npy");
    if (spec.rule == ScaleRule::gam) gm_out = &outputs.add("--out", *out_prefix + ".group_mantissa.npy");
    if (spec.rule == ScaleRule::nvfp4) amax_out = &outputs.add("--out", *out_prefix + ".tensor_amax.npy");
    if (dequant_out) dequant_file = &outputs.add("--dequant-out", *out_prefix + ".dequant.npy");
    if (fake_fmt) fake_out = &outputs.add("--fake-quant", *out_prefix + ".fakequant.npy");
  }

  const Input in = read_input(*input_path, input_format);
  const TensorView base(*in.format, in.bytes.data() + in.offset, in.rows, in.cols);
  const TensorView x = transpose ? base.transposed() : base;
  const std::size_t n = x.size();

  // §19.2 random bits for stochastic rounding, in element order
  std::vector<std::uint32_t> random;
  const bool sr = effective_round(elem, spec.policy) == Round::sr;
  if (random_path && seed) throw UsageError("give either --random or --seed, not both");
  if ((random_path || seed) && !sr) throw UsageError("--random / --seed apply only to stochastic rounding (--round sr)");
  if (sr) {
    if (!random_path && !seed) throw UsageError("stochastic rounding needs --random R.npy or --seed S");
    const int k = spec.policy.sr_bits;
    if (seed) {
      std::uint64_t s = static_cast<std::uint64_t>(parse_int(*seed, 0, 1LL << 53, "--seed"));
      random.resize(n);
      for (auto& r : random) {
        const std::uint64_t z = splitmix64_next(s);
        r = static_cast<std::uint32_t>(k == 32 ? z & 0xFFFFFFFFu : z & ((1ull << k) - 1));
      }
    } else {
      std::vector<std::uint8_t> rb;
      npy::Array ra;
      try {
        rb = npy::read_file(*random_path);  // errors name the path
        ra = npy::parse(rb);
      } catch (const npy::NpyError& e) {
        throw UsageError(e.what());
      }
      if (ra.dtype != npy::Dtype::u4) throw UsageError(*random_path + ": random values must be <u4 (uint32)");
      if (ra.count() != n)
        throw UsageError(*random_path + ": " + std::to_string(ra.count()) + " random values for " + std::to_string(n) +
                         " elements");
      random.resize(n);
      std::memcpy(random.data(), rb.data() + ra.data_offset, n * 4);
      for (std::size_t i = 0; i < n; ++i)
        if (k < 32 && (random[i] >> k) != 0)
          throw UsageError(*random_path + ": value " + std::to_string(random[i]) + " at element " + std::to_string(i) +
                           " does not fit in k = " + std::to_string(k) + " bits (§4.3)");
    }
  }

  std::vector<std::uint8_t> codes(n);
  QuantizeResult r;
  try {
    r = quantize(x, spec, codes, random);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const BlockGrid grid(x.rows(), x.cols(), spec.partition);
  const Format& sfmt = scale_format(spec.rule);

  // files (§19.4), committed together (§36.1)
  std::vector<std::string> files;
  if (out_prefix) {
    std::vector<std::size_t> shape = transpose ? std::vector<std::size_t>{x.rows(), x.cols()} : in.shape;
    write_npy(*codes_out, npy::Dtype::u1, shape, codes.data(), codes.size());
    const std::vector<std::size_t> gshape = {grid.grid_rows(), grid.grid_cols()};
    if (sfmt.bits == 32) {
      write_npy(*scales_out, npy::Dtype::f4, gshape, r.meta.scales.data(), r.meta.scales.size() * 4);
    } else {
      std::vector<std::uint8_t> s8(r.meta.scales.begin(), r.meta.scales.end());
      write_npy(*scales_out, npy::Dtype::u1, gshape, s8.data(), s8.size());
    }
    if (gm_out) {
      const BlockGrid gg(x.rows(), x.cols(), spec.group);
      write_npy(*gm_out, npy::Dtype::u4, {gg.grid_rows(), gg.grid_cols()}, r.meta.group_mantissa.data(),
                r.meta.group_mantissa.size() * 4);
    }
    if (amax_out) write_npy(*amax_out, npy::Dtype::f4, {1}, &r.meta.tensor_amax, 4);
    if (dequant_file) {
      std::vector<std::uint32_t> dq(n);
      dequantize(codes, r.meta, dq);
      write_npy(*dequant_file, npy::Dtype::f4, shape, dq.data(), n * 4);
    }
    if (fake_out) {
      std::vector<std::uint32_t> fq(n);
      fake_quantize(x, spec, *fake_fmt, fq, random);
      if (fake_fmt->bits == 32) {
        write_npy(*fake_out, npy::Dtype::f4, shape, fq.data(), n * 4);
      } else {
        std::vector<std::uint16_t> h(fq.begin(), fq.end());
        write_npy(*fake_out, fake_fmt->id == FormatId::f16 ? npy::Dtype::f2 : npy::Dtype::u2, shape, h.data(), n * 2);
      }
    }
    outputs.commit_all();
    for (const conform::OutputFile* f : {codes_out, scales_out, gm_out, amax_out, dequant_file, fake_out})
      if (f) files.push_back(f->path());
  }

  const std::size_t listed = std::min(max_blocks, grid.count());
  const Format& f32 = format(FormatId::f32);
  if (json) {
    std::string o = "{\n";
    o += "  \"input\": {\"path\": " + json_string(*input_path) + ", \"format\": \"" + std::string(in.format->name) +
         "\", \"rows\": " + std::to_string(x.rows()) + ", \"cols\": " + std::to_string(x.cols()) +
         ", \"transposed\": " + (transpose ? "true" : "false") + "},\n";
    o += "  \"element\": \"" + std::string(elem.name) + "\",\n";
    o += "  \"scale\": \"" + std::string(to_string(spec.rule)) + "\", \"scale_format\": \"" + std::string(sfmt.name) + "\",\n";
    o += "  \"partition\": \"" + to_string(spec.partition) + "\", \"group\": \"" +
         (spec.rule == ScaleRule::gam ? to_string(spec.group) : std::string("tensor")) + "\",\n";
    o += std::string("  \"amax_nan\": \"") + (spec.amax.nan == AmaxNan::ignore ? "ignore" : "propagate") +
         "\", \"amax_inf\": \"" + (spec.amax.inf == AmaxInf::ignore ? "ignore" : "propagate") + "\", \"apply\": \"" +
         std::string(to_string(spec.apply ? *spec.apply : (is_int8(spec.rule) ? ScaleApply::fused : ScaleApply::rn32))) +
         "\", \"dequant\": \"" + std::string(to_string(spec.dequant)) + "\",\n";
    o += "  \"profile\": \"" + pname + "\", \"recipe\": \"" + describe(spec.recipe) + "\",\n";
    o += "  \"policy\": \"" + describe(spec.policy) + "\",\n";
    o += "  \"wide_policy\": \"" + describe(spec.wide) + "\",\n";
    o += "  \"grid\": {\"rows\": " + std::to_string(grid.grid_rows()) + ", \"cols\": " + std::to_string(grid.grid_cols()) +
         ", \"block_rows\": " + std::to_string(grid.block_rows()) + ", \"block_cols\": " + std::to_string(grid.block_cols()) +
         ", \"blocks\": " + std::to_string(grid.count()) + "},\n";
    o += "  \"counts\": {\"elements\": " + std::to_string(n) + ", " + counts_json(r.total) + "},\n";
    if (spec.rule == ScaleRule::gam) {
      o += "  \"group_mantissa\": [";
      for (std::size_t i = 0; i < r.meta.group_mantissa.size() && i < std::max<std::size_t>(listed, 1); ++i) {
        char b[16];
        std::snprintf(b, sizeof b, "\"%06x\"", r.meta.group_mantissa[i]);
        o += (i ? ", " : "") + std::string(b);
      }
      o += "],\n";
    }
    if (spec.rule == ScaleRule::nvfp4) o += "  \"tensor_amax\": " + json_code(r.meta.tensor_amax, f32) + ",\n";
    o += "  \"blocks_listed\": " + std::to_string(listed) + ",\n  \"blocks\": [";
    for (std::size_t b = 0; b < listed; ++b) {
      const BlockRange br = grid.range(b);
      o += std::string(b ? ",\n" : "\n") + "    {\"index\": " + std::to_string(b) + ", \"rows\": [" + std::to_string(br.r0) +
           ", " + std::to_string(br.r1) + "], \"cols\": [" + std::to_string(br.c0) + ", " + std::to_string(br.c1) +
           "], \"amax\": " + json_code(r.block_amax[b].f32, f32) + ", \"scale\": " + json_code(r.meta.scales[b], sfmt);
      if (spec.rule == ScaleRule::gam && r.meta.scales[b] != 0xFFu) {
        const std::uint32_t m_g = r.meta.group_mantissa[BlockGrid(x.rows(), x.cols(), spec.group).block_of(br.r0, br.c0)];
        o += ", \"block_scale\": " + json_code(gam_block_scale_f32(r.meta.scales[b], m_g), f32);
      }
      o += ", " + counts_json(r.block_stats[b]) + "}";
    }
    o += listed ? "\n  ],\n" : "],\n";
    o += "  \"files\": [";
    for (std::size_t i = 0; i < files.size(); ++i) o += (i ? ", " : "") + json_string(files[i]);
    o += "]\n}\n";
    std::fputs(o.c_str(), stdout);
  } else {
    std::printf("input      %s: %s, %zu x %zu%s\n", input_path->c_str(), std::string(in.format->name).c_str(), x.rows(),
                x.cols(), transpose ? " (transposed)" : "");
    std::printf("quantize   %s, scale %s (%s), partition %s, %zu x %zu blocks\n", std::string(elem.name).c_str(),
                std::string(to_string(spec.rule)).c_str(), std::string(sfmt.name).c_str(),
                to_string(spec.partition).c_str(), grid.grid_rows(), grid.grid_cols());
    if (rprof || !(spec.recipe == RecipeKnobs{})) std::printf("recipe     %s\n", describe(spec.recipe).c_str());
    std::printf("policy     %s\n", describe(spec.policy).c_str());
    std::printf("counts     %zu elements: %llu saturated, %llu flushed, %llu NaN, %llu Inf\n", n,
                static_cast<unsigned long long>(r.total.saturated), static_cast<unsigned long long>(r.total.flushed),
                static_cast<unsigned long long>(r.total.nan), static_cast<unsigned long long>(r.total.inf));
    if (spec.rule == ScaleRule::gam)
      std::printf("group mantissa %06x (first group)\n", r.meta.group_mantissa.empty() ? 0u : r.meta.group_mantissa[0]);
    if (spec.rule == ScaleRule::nvfp4)
      std::printf("tensor amax %s = %s\n", hex_code(r.meta.tensor_amax, f32).c_str(),
                  compact_value(decode(r.meta.tensor_amax, f32), 40).c_str());
    for (std::size_t b = 0; b < listed; ++b) {
      const BlockRange br = grid.range(b);
      std::string gam_scale;
      if (spec.rule == ScaleRule::gam && r.meta.scales[b] != 0xFFu) {
        const std::uint32_t m_g = r.meta.group_mantissa[BlockGrid(x.rows(), x.cols(), spec.group).block_of(br.r0, br.c0)];
        const std::uint32_t g = gam_block_scale_f32(r.meta.scales[b], m_g);
        gam_scale = " -> block scale " + hex_code(g, f32) + " = " + compact_value(decode(g, f32), 40);
      }
      std::printf("block %zu rows [%zu,%zu) cols [%zu,%zu): amax %s scale %s = %s%s\n", b, br.r0, br.r1, br.c0, br.c1,
                  hex_code(r.block_amax[b].f32, f32).c_str(), hex_code(r.meta.scales[b], sfmt).c_str(),
                  compact_value(decode(r.meta.scales[b], sfmt), 40).c_str(), gam_scale.c_str());
    }
    if (listed < grid.count()) std::printf("(%zu more blocks; --max-blocks N lists more)\n", grid.count() - listed);
    for (const auto& f : files) std::printf("wrote      %s\n", f.c_str());
  }
  return 0;
}

}  // namespace

NUMREF_VERB("quantize", "quantize a .npy tensor: codes, scales and a summary", run_quantize);

}  // namespace numref::cli
