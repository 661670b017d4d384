// numref mor — Mixture-of-Representations decisions and metrics for .npy tensors.
//   spec §21 – §28 (metrics §21 – §24, framework §25, tensor-level §26, sub-tensor §27,
//   statistics §28), §12.5 (partition text), §19.7 (.npy)
//
// One input: the decision and the exact metric (text, or JSON with every value as hex, hex
// float and exact decimal). Several inputs (or a directory of .npy files): one line per input,
// the fallback percentage and the relative-error histogram (0.5 % bins, MoR §4.1.3); --svg
// draws the histogram heatmap (tensor × bin) as a standalone SVG file.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/mor.hpp"
#include "numref/npy.hpp"
#include "numref/stats.hpp"
#include "parallel.hpp"

namespace numref::cli::cmd_mor {
namespace {

constexpr const char* kHelp =
    "usage: numref mor --input X.npy [Y.npy ... | DIR] [options]\n"
    "\n"
    "Mixture of Representations (spec §25 – §27). The recipe `tensor` (default) decides per tensor\n"
    "between f8e4m3fn and bf16: E4M3 is accepted iff the mean relative error of its fake-quant over\n"
    "the non-zero elements is below the threshold (MoR Eq. 1 – 2, decided exactly, §23). The recipes\n"
    "`subtensor3` / `subtensor2` decide per block between [f8e4m3fn, f8e5m2, bf16] / [f8e4m3fn, bf16]\n"
    "(MoR Eq. 3 – 4, §27). Scales: GAM with one group over the tensor (§17), each format its own.\n"
    "\n"
    "input:\n"
    "  --input X.npy ...    one or more .npy files, or a directory (its *.npy files, sorted by name):\n"
    "                       <f4 (f32), <f2 (f16), or bit patterns (<u2, <V2, |u1, |V1, <f1) with --input-format;\n"
    "                       1-D arrays are 1 x n, rank >= 3 is (product of leading dims) x last\n"
    "  --input-format F     bf16 | f16 | f32 | an 8-bit float (for <u2 / <V2 / |u1 / |V1 / <f1 files)\n"
    "  --transpose          evaluate the transpose (the second GEMM operand with channel:cols)\n"
    "selection:\n"
    "  --recipe R           tensor (default) | subtensor3 | subtensor2\n"
    "  --partition P        tensor: the E4M3 scaling partition, block:128x128 (default), block:64x64,\n"
    "                       tensor, channel:rows (first GEMM operand), channel:cols (second), rows, cols;\n"
    "                       subtensor: the block partition (default block:128x128)\n"
    "  --threshold T        tensor recipe: 0.045 (default), 4.5%, 9/200 — read exactly as a rational\n"
    "  --scale RULE         gam (default) | amax | pow2 | mx-floor | ... (MoR's ablations; §14 – §17)\n"
    "  --fake F             the format of Q(x): bf16 (default, MoR Figure 4) | f16 | f32\n"
    "  --threads N          threads sharing the error sums by ranges of block rows (default: every\n"
    "                       core; 1: one thread); the results are the same for every N\n"
    "output:\n"
    "  --json               JSON on stdout (default: text)\n"
    "  --stats              also the tensor moments: mean, variance, skewness, kurtosis (§28.4)\n"
    "  --svg FILE           several inputs, tensor recipe: the histogram heatmap as SVG\n"
    "  --reset-every N      one histogram per tensor per N training steps (MoR §4.1.3 resets every\n"
    "                       6000); each input is then named STEM@stepS.npy or STEM@S.npy (step S)\n"
    "  --out PREFIX         subtensor, one input: PREFIX.types.npy (|u1 per block: 0 f8e4m3fn,\n"
    "                       1 f8e5m2, 2 bf16) and PREFIX.fakequant.npy (the output tensor)\n"
    "  --max-blocks N       list at most N blocks (default 64)\n"
    "Several inputs named STEM@anything.npy count as observations of the tensor STEM (one heatmap\n"
    "row, normalized over its observations); other files are one row each.\n";

struct Input : NpyTensor {
  std::string path, name;
  std::optional<std::uint64_t> step;  // §28.2 S of STEM@stepS / STEM@S, if the name carries one
};

// §28.2 A file STEM@TAIL.npy is an observation of the tensor STEM; a TAIL "stepS" or "S" (decimal)
// gives its training step S. Any other file is the tensor named by its stem.
struct Observation {
  std::string name;
  std::optional<std::uint64_t> step;
};
Observation observation_of(const std::string& path) {
  Observation ob{std::filesystem::path(path).stem().string(), std::nullopt};
  if (const auto at = ob.name.find('@'); at != std::string::npos && at > 0) {
    std::string tail = ob.name.substr(at + 1);
    if (tail.rfind("step", 0) == 0) tail.erase(0, 4);
    if (!tail.empty() && tail.size() <= 19 && tail.find_first_not_of("0123456789") == std::string::npos)
      ob.step = std::stoull(tail);
    ob.name.resize(at);
  }
  return ob;
}

Input read_input(const std::string& path, const Format* named) {
  Input in;
  static_cast<NpyTensor&>(in) = read_npy_tensor(path, named);
  in.path = path;
  Observation ob = observation_of(path);
  in.name = std::move(ob.name);
  in.step = ob.step;
  return in;
}

std::vector<std::string> expand_inputs(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    std::error_code ec;
    if (std::filesystem::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::directory_iterator(a, ec))
        if (e.is_regular_file() && e.path().extension() == ".npy") found.push_back(e.path().string());
      if (ec) throw UsageError(a + ": cannot list the directory: " + ec.message());
      if (found.empty()) throw UsageError(a + ": the directory holds no .npy file");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(a);
    }
  }
  return files;
}

// ---- rendering -------------------------------------------------------------------------------

const Format& F32() { return format(FormatId::f32); }

// A binary32 code as {"hex", "hexfloat", "value"} (exact decimal).
std::string json_f32(std::uint32_t code) {
  const Decoded d = decode(code, F32());
  return "{\"hex\": \"" + hex_code(code, F32()) + "\", \"hexfloat\": \"" + exact_hexfloat(d) + "\", \"value\": \"" +
         exact_decimal(d) + "\"}";
}
std::string text_f32(std::uint32_t code) {
  const Decoded d = decode(code, F32());
  return hex_code(code, F32()) + " = " + exact_hexfloat(d) + " = " + exact_decimal(d);
}

std::string json_sum(const ErrorSum& s) {
  return "{\"sum\": {\"hexfloat\": \"" + s.sum.hexfloat() + "\", \"value\": \"" + s.sum.decimal() +
         "\"}, \"n\": " + std::to_string(s.n) + ", \"zeros\": " + std::to_string(s.zeros) +
         ", \"nonfinite_input\": " + std::to_string(s.nonfinite_input) +
         ", \"nonfinite_quant\": " + std::to_string(s.nonfinite_quant) + "}";
}

std::string opt_f32_json(const std::optional<std::uint32_t>& v) { return v ? json_f32(*v) : "null"; }
std::string opt_f32_text(const std::optional<std::uint32_t>& v, const char* why) {
  return v ? hex_code(*v, F32()) + " = " + compact_value(decode(*v, F32()), 24) : std::string(why);
}

std::string moments_json(const Moments& m) {
  return "{\"n\": " + std::to_string(m.n) + ", \"nonfinite\": " + std::to_string(m.nonfinite) +
         ", \"mean\": " + opt_f32_json(m.mean) + ", \"variance\": " + opt_f32_json(m.variance) +
         ", \"skewness\": " + opt_f32_json(m.skewness) + ", \"kurtosis\": " + opt_f32_json(m.kurtosis) + "}";
}
void print_moments(const Moments& m) {
  std::printf("moments    n %llu (%llu NaN/Inf excluded): mean %s, variance %s, skewness %s, kurtosis %s\n",
              static_cast<unsigned long long>(m.n), static_cast<unsigned long long>(m.nonfinite),
              opt_f32_text(m.mean, "-").c_str(), opt_f32_text(m.variance, "-").c_str(),
              opt_f32_text(m.skewness, "undefined").c_str(), opt_f32_text(m.kurtosis, "undefined").c_str());
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

// §28.2 The heatmap: one row per tensor, one cell per bin; the cell's shade is the count
// normalized over the row's binned observations (integer arithmetic, 0..255); a vertical line
// marks the threshold.
std::string heatmap_svg(const ErrorHistogram& h, const Threshold& t) {
  const std::size_t nb = h.spec().bins + 1, nr = h.rows().size();
  const std::size_t label_w = 220, cell_w = 44, cell_h = 18, top = 40, left = label_w + 10;
  const std::size_t width = left + nb * cell_w + 20, height = top + nr * cell_h + 30;
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
       std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) + "\">\n";
  o += "<title>MoR relative-error histogram (numref mor)</title>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
       "\" fill=\"white\"/>\n";
  o += "<g font-family=\"monospace\" font-size=\"10\">\n";
  for (std::size_t b = 0; b < nb; ++b)
    o += "<text x=\"" + std::to_string(left + b * cell_w + cell_w / 2) + "\" y=\"" + std::to_string(top - 8) +
         "\" text-anchor=\"middle\" font-size=\"8\">" + xml_escape(h.bin_label(b)) + "</text>\n";
  for (std::size_t r = 0; r < nr; ++r) {
    const HistogramRow& row = h.rows()[r];
    const std::size_t y = top + r * cell_h;
    std::uint64_t binned = 0;
    for (std::uint64_t c : row.counts) binned += c;
    std::string label = h.row_label(row);
    if (row.nonfinite) label += " (" + std::to_string(row.nonfinite) + " non-finite)";
    o += "<text x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(y + cell_h - 5) +
         "\" text-anchor=\"end\">" + xml_escape(label) + "</text>\n";
    for (std::size_t b = 0; b < nb; ++b) {
      const std::uint64_t c = row.counts[b];
      const std::uint64_t shade = binned ? (255 * c + binned / 2) / binned : 0;  // 0..255
      const std::uint64_t rr = 255 - shade, gg = 255 - (shade * 3) / 4, bb = 255 - shade / 4;
      o += "<rect class=\"cell\" x=\"" + std::to_string(left + b * cell_w) + "\" y=\"" + std::to_string(y) +
           "\" width=\"" + std::to_string(cell_w) + "\" height=\"" + std::to_string(cell_h) + "\" fill=\"rgb(" +
           std::to_string(rr) + "," + std::to_string(gg) + "," + std::to_string(bb) + ")\" stroke=\"#ccc\"><title>" +
           xml_escape(h.row_label(row) + " " + h.bin_label(b) + ": " + std::to_string(c) + " of " +
                      std::to_string(row.observations)) +
           "</title></rect>\n";
    }
  }
  // the threshold line at t / w bins from the left (clamped to the last bin)
  const Threshold& w = h.spec().width;
  const unsigned __int128 num = static_cast<unsigned __int128>(t.num) * w.den * cell_w;
  const unsigned __int128 den = static_cast<unsigned __int128>(t.den) * w.num;
  std::size_t tx = static_cast<std::size_t>(std::min<unsigned __int128>(num / den, nb * cell_w));
  tx += left;
  o += "<line class=\"threshold\" x1=\"" + std::to_string(tx) + "\" y1=\"" + std::to_string(top - 4) + "\" x2=\"" +
       std::to_string(tx) + "\" y2=\"" + std::to_string(top + nr * cell_h + 4) +
       "\" stroke=\"blue\" stroke-width=\"2\"/>\n";
  o += "<text x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(top + nr * cell_h + 20) + "\">threshold " +
       xml_escape(t.to_string()) + ", " + std::to_string(h.fallbacks()) + " of " + std::to_string(h.observations()) +
       " fall back</text>\n";
  o += "</g>\n</svg>\n";
  return o;
}

// ---- the verb --------------------------------------------------------------------------------

struct Options {
  std::string recipe = "tensor";
  Partition partition = Partition::blocks(128, 128);
  std::string partition_text = "block:128x128";
  Threshold threshold;
  std::string threshold_text = "0.045";
  ScaleRule rule = ScaleRule::gam;
  const Format* fake = &format(FormatId::bf16);
  bool transpose = false, json = false, stats = false;
  std::size_t max_blocks = 64;
  std::uint64_t reset_every = 0;  // §28.2 histogram windows (0: none)
  unsigned threads = 1;           // --threads (default: every core)
  std::vector<std::string> input_args;
  std::optional<std::string> input_format, svg, out_prefix;
};

std::string codes_summary(const std::vector<std::uint32_t>& scales, const Format& sf, std::size_t max) {
  std::string s;
  for (std::size_t i = 0; i < scales.size() && i < max; ++i) {
    if (i) s += ' ';
    s += hex_code(scales[i], sf);
  }
  if (scales.size() > max) s += " ... (" + std::to_string(scales.size() - max) + " more)";
  return s;
}

struct TensorOutcome {
  Input in;
  TensorMorResult r;
  std::optional<Moments> m;
};

// One tensor's decision as a JSON object; `extra` (complete "key": value pairs) goes first.
std::string tensor_json(const TensorOutcome& t, const Options& o, std::size_t indent, const std::string& extra = {}) {
  const std::string pad(indent, ' ');
  const TensorMorResult& r = t.r;
  const Format& sf = scale_format(o.rule);
  const auto bin = histogram_bin(r.error);
  std::string s = "{\n";
  if (!extra.empty()) s += pad + "  " + extra + ",\n";
  s += pad + "  \"input\": {\"path\": " + json_string(t.in.path) + ", \"name\": " + json_string(t.in.name) +
       ", \"format\": \"" + std::string(t.in.format->name) +
       "\", \"rows\": " + std::to_string(o.transpose ? t.in.cols : t.in.rows) +
       ", \"cols\": " + std::to_string(o.transpose ? t.in.rows : t.in.cols) +
       ", \"transposed\": " + (o.transpose ? "true" : "false") + "},\n";
  s += pad + "  \"decision\": \"" + std::string(r.quantized ? "f8e4m3fn" : o.fake->name) +
       "\", \"quantized\": " + (r.quantized ? "true" : "false") + ", \"reason\": \"" +
       std::string(to_string(r.verdict.reason)) + "\",\n";
  s += pad + "  \"metric\": {\"mean\": " + (f32_is_finite(r.mean) ? json_f32(r.mean) : std::string("null")) +
       ", \"error\": " + json_sum(r.error) + "},\n";
  s += pad + "  \"bin\": " + (bin ? std::to_string(*bin) : std::string("null")) + ",\n";
  s += pad + "  \"scales\": {\"rule\": \"" + std::string(to_string(o.rule)) + "\", \"format\": \"" +
       std::string(sf.name) + "\", \"blocks\": " + std::to_string(r.scales.scales.size());
  if (!r.scales.group_mantissa.empty()) {
    char b[16];
    std::snprintf(b, sizeof b, "%06x", r.scales.group_mantissa[0]);
    s += ", \"group_mantissa\": \"" + std::string(b) + "\"";
  }
  s += ", \"codes\": [";
  for (std::size_t i = 0; i < r.scales.scales.size() && i < o.max_blocks; ++i)
    s += (i ? ", \"" : "\"") + hex_code(r.scales.scales[i], sf) + "\"";
  s += "]}";
  if (t.m) s += ",\n" + pad + "  \"moments\": " + moments_json(*t.m);
  s += "\n" + pad + "}";
  return s;
}

// ---- parse -----------------------------------------------------------------------------------

Options parse_options(Args& a) {
  Options o;
  o.transpose = a.flag("transpose");
  o.json = a.flag("json");
  o.stats = a.flag("stats");
  if (const auto r = a.opt("reset-every"))
    o.reset_every = static_cast<std::uint64_t>(parse_int(*r, 1, 1LL << 62, "--reset-every"));
  o.input_args = a.multi("input");
  if (o.input_args.empty()) throw UsageError("--input X.npy is required (see numref mor --help)");
  o.input_format = a.opt("input-format");
  o.recipe = a.opt_or("recipe", "tensor");
  if (o.recipe != "tensor" && o.recipe != "subtensor3" && o.recipe != "subtensor2")
    throw UsageError("--recipe: unknown recipe '" + o.recipe + "' (known: tensor, subtensor3, subtensor2)");
  if (const auto p = a.opt("partition")) {
    if (const std::string err = parse_partition(*p, o.partition); !err.empty()) throw UsageError("--partition: " + err);
    o.partition_text = *p;
  }
  if (const auto th = a.opt("threshold")) {
    if (o.recipe != "tensor") throw UsageError("--threshold applies to the tensor recipe only");
    if (const std::string err = Threshold::parse(*th, o.threshold); !err.empty())
      throw UsageError("--threshold: " + err);
    o.threshold_text = *th;
  }
  const std::string rule_name = a.opt_or("scale", "gam");
  const auto rule = parse_scale_rule(rule_name);
  if (!rule || !is_fp8_mor_rule(*rule))
    throw UsageError("--scale: '" + rule_name + "' is not a scale rule for FP8 MoR (use " + fp8_mor_rule_names() + ")");
  o.rule = *rule;
  o.fake = &format_arg(a.opt_or("fake", "bf16"), "--fake");
  if (o.fake->bits < 16 || o.fake->is_integer())
    throw UsageError("--fake: the format of Q(x) must be bf16, f16 or f32");
  o.svg = a.opt("svg");
  o.out_prefix = a.opt("out");
  o.max_blocks = static_cast<std::size_t>(parse_int(a.opt_or("max-blocks", "64"), 0, 1LL << 40, "--max-blocks"));
  o.threads = threads_from_args(a).value_or(cpu_fast::default_threads());
  a.finish();
  return o;
}

// --threads N: the error sums by ranges of block rows on N threads (none for one).
RangeRunner runner(const Options& o) {
  return o.threads > 1 ? RangeRunner(cpu_fast::range_runner(o.threads)) : RangeRunner{};
}

// The input files (a directory's *.npy files expanded) and whether there are several.
struct Inputs {
  const Format* named = nullptr;  // --input-format
  std::vector<std::string> files;
  bool several = false;
};

Inputs resolve_inputs(const Options& o) {
  Inputs in;
  in.named = o.input_format ? &format_arg(*o.input_format, "--input-format") : nullptr;
  in.files = expand_inputs(o.input_args);
  in.several = in.files.size() > 1 || std::filesystem::is_directory(o.input_args[0]);
  if (o.reset_every && (o.recipe != "tensor" || !in.several))
    throw UsageError("--reset-every windows the histogram of several inputs under the tensor recipe");
  if (o.svg && (o.recipe != "tensor" || !in.several))
    throw UsageError("--svg draws the histogram of several inputs under the tensor recipe");
  if (o.out_prefix && (o.recipe == "tensor" || in.several))
    throw UsageError("--out writes the type map and the output tensor of one input under a subtensor recipe");
  return in;
}

// §35.1 The outputs are checked against the inputs (and each other) before any work.
struct MorFiles {
  MorFiles(const Options& o, const Inputs& in) : outputs(in.files) {
    if (o.svg) svg = &outputs.add("--svg", *o.svg);
    if (o.out_prefix) types = &outputs.add("--out", *o.out_prefix + ".types.npy");
    if (o.out_prefix) fake = &outputs.add("--out", *o.out_prefix + ".fakequant.npy");
  }
  Outputs outputs;
  conform::OutputFile *svg = nullptr, *types = nullptr, *fake = nullptr;
};

TensorView view_of(const Input& in, bool transpose) {
  const TensorView base(*in.format, in.bytes.data() + in.offset, in.rows, in.cols);
  return transpose ? base.transposed() : base;
}

// ---- §27 sub-tensor MoR ------------------------------------------------------------------------

// One input's sub-tensor decisions and what the report shows of them.
struct SubtensorOutcome {
  const Input& in;
  const TensorView& x;
  SubtensorMorResult r;
  BlockGrid grid;
  std::optional<Moments> mom;
  std::vector<std::string> written;  // the --out files
};

SubtensorMorSpec subtensor_spec(const Options& o) {
  SubtensorMorSpec spec;
  spec.recipe = o.recipe == "subtensor3" ? SubtensorRecipe::three_way : SubtensorRecipe::two_way;
  spec.blocks = o.partition;
  spec.e4m3.rule = spec.e5m2.rule = o.rule;
  spec.fake = o.fake;
  return spec;
}

// --out: PREFIX.types.npy (the block types) and PREFIX.fakequant.npy, committed together.
std::vector<std::string> write_subtensor_files(MorFiles& f, const Options& o, const SubtensorOutcome& t) {
  const SubtensorMorResult& r = t.r;
  std::vector<std::uint8_t> t8(r.type.size());
  for (std::size_t b = 0; b < t8.size(); ++b) t8[b] = static_cast<std::uint8_t>(r.type[b]);
  const std::vector<std::size_t> gshape = {t.grid.grid_rows(), t.grid.grid_cols()};
  write_npy(*f.types, npy::Dtype::u1, gshape, t8.data(), t8.size());
  const std::vector<std::size_t> shape = {t.x.rows(), t.x.cols()};
  std::vector<std::uint8_t> raw;
  npy::Dtype dt;
  if (o.fake->bits == 32) {
    raw.resize(r.fake.size() * 4);
    std::memcpy(raw.data(), r.fake.data(), raw.size());
    dt = npy::Dtype::f4;
  } else {
    std::vector<std::uint16_t> h(r.fake.begin(), r.fake.end());
    raw.resize(h.size() * 2);
    std::memcpy(raw.data(), h.data(), raw.size());
    dt = o.fake->id == FormatId::f16 ? npy::Dtype::f2 : npy::Dtype::u2;
  }
  write_npy(*f.fake, dt, shape, raw.data(), raw.size());
  f.outputs.commit_all();  // --out takes one input: both files appear together
  return {f.types->path(), f.fake->path()};
}

std::string subtensor_json(const Options& o, const SubtensorMorSpec& spec, const SubtensorOutcome& t) {
  const SubtensorMorResult& r = t.r;
  const BlockGrid& grid = t.grid;
  std::string s = "{\n  \"input\": {\"path\": " + json_string(t.in.path) + ", \"format\": \"" +
                  std::string(t.in.format->name) + "\", \"rows\": " + std::to_string(t.x.rows()) +
                  ", \"cols\": " + std::to_string(t.x.cols()) +
                  ", \"transposed\": " + (o.transpose ? "true" : "false") + "},\n";
  s += "  \"recipe\": \"" + o.recipe + "\", \"partition\": \"" + to_string(spec.blocks) + "\", \"scale\": \"" +
       std::string(to_string(o.rule)) + "\",\n";
  s += "  \"grid\": {\"rows\": " + std::to_string(grid.grid_rows()) +
       ", \"cols\": " + std::to_string(grid.grid_cols()) + "},\n";
  s += "  \"counts\": {";
  for (int k = 0; k < 3; ++k)
    s += std::string(k ? ", " : "") + "\"" + std::string(to_string(static_cast<BlockType>(k))) +
         "\": {\"blocks\": " + std::to_string(r.blocks_of[static_cast<std::size_t>(k)]) +
         ", \"elements\": " + std::to_string(r.elements_of[static_cast<std::size_t>(k)]) + "}";
  s += "},\n  \"blocks\": [";
  const std::size_t listed = std::min(o.max_blocks, r.type.size());
  for (std::size_t b = 0; b < listed; ++b) {
    const BlockRange br = grid.range(b);
    s += std::string(b ? ",\n" : "\n") + "    {\"index\": " + std::to_string(b) + ", \"rows\": [" +
         std::to_string(br.r0) + ", " + std::to_string(br.r1) + "], \"cols\": [" + std::to_string(br.c0) + ", " +
         std::to_string(br.c1) + "], \"type\": \"" + std::string(to_string(r.type[b])) + "\", \"eq3\": \"" +
         std::string(to_string(r.eq3[b].reason)) + "\", \"eq4\": \"" + std::string(to_string(r.eq4[b].reason)) +
         "\", \"e4m3\": " + json_sum(r.e4m3_sum[b]) + ", \"e5m2\": " + json_sum(r.e5m2_sum[b]) + "}";
  }
  s += listed ? "\n  ],\n" : "],\n";
  s += "  \"blocks_listed\": " + std::to_string(listed);
  if (t.mom) s += ",\n  \"moments\": " + moments_json(*t.mom);
  s += ",\n  \"files\": [";
  for (std::size_t i = 0; i < t.written.size(); ++i) s += (i ? ", " : "") + json_string(t.written[i]);
  s += "]\n}";
  return s;
}

// The block types as a map of letters (grids of at most 64 x 64 blocks).
void print_type_map(const SubtensorOutcome& t) {
  static constexpr const char* kLetter[] = {"4", "5", "B"};
  const BlockGrid& grid = t.grid;
  if (grid.grid_cols() > 64 || grid.grid_rows() > 64) return;
  std::printf("type map   (4 = f8e4m3fn, 5 = f8e5m2, B = bf16)\n");
  for (std::size_t I = 0; I < grid.grid_rows(); ++I) {
    std::string line = "          ";
    for (std::size_t J = 0; J < grid.grid_cols(); ++J)
      line += std::string(" ") + kLetter[static_cast<int>(t.r.type[I * grid.grid_cols() + J])];
    std::printf("%s\n", line.c_str());
  }
}

void print_subtensor_text(const Options& o, const SubtensorMorSpec& spec, const SubtensorOutcome& t) {
  const SubtensorMorResult& r = t.r;
  const BlockGrid& grid = t.grid;
  std::printf("input      %s: %s, %zu x %zu%s\n", t.in.path.c_str(), std::string(t.in.format->name).c_str(), t.x.rows(),
              t.x.cols(), o.transpose ? " (transposed)" : "");
  std::printf("recipe     sub-tensor MoR, %s [%s], blocks %s (%zu x %zu), scale %s, Q in %s\n",
              spec.recipe == SubtensorRecipe::three_way ? "three-way" : "two-way",
              spec.recipe == SubtensorRecipe::three_way ? "f8e4m3fn, f8e5m2, bf16" : "f8e4m3fn, bf16",
              to_string(spec.blocks).c_str(), grid.grid_rows(), grid.grid_cols(),
              std::string(to_string(o.rule)).c_str(), std::string(o.fake->name).c_str());
  std::printf("blocks     f8e4m3fn %llu (%llu elements), f8e5m2 %llu (%llu), bf16 %llu (%llu)\n",
              static_cast<unsigned long long>(r.blocks_of[0]), static_cast<unsigned long long>(r.elements_of[0]),
              static_cast<unsigned long long>(r.blocks_of[1]), static_cast<unsigned long long>(r.elements_of[1]),
              static_cast<unsigned long long>(r.blocks_of[2]), static_cast<unsigned long long>(r.elements_of[2]));
  print_type_map(t);
  const std::size_t listed = std::min(o.max_blocks, r.type.size());
  for (std::size_t b = 0; b < listed; ++b) {
    const BlockRange br = grid.range(b);
    std::printf(
        "block %zu rows [%zu,%zu) cols [%zu,%zu): %s (Eq. 3 %s, Eq. 4 %s); error sums E4M3 %s, E5M2 %s over %llu\n", b,
        br.r0, br.r1, br.c0, br.c1, std::string(to_string(r.type[b])).c_str(),
        std::string(to_string(r.eq3[b].reason)).c_str(), std::string(to_string(r.eq4[b].reason)).c_str(),
        r.e4m3_sum[b].sum.hexfloat().c_str(), r.e5m2_sum[b].sum.hexfloat().c_str(),
        static_cast<unsigned long long>(r.e4m3_sum[b].n));
  }
  if (listed < r.type.size()) std::printf("(%zu more blocks; --max-blocks N lists more)\n", r.type.size() - listed);
  if (t.mom) print_moments(*t.mom);
  for (const auto& f : t.written) std::printf("wrote      %s\n", f.c_str());
}

// Every input in turn: its decisions, the --out files, its report (text as it goes; JSON at the end).
int run_subtensor(const Options& o, const Inputs& ins, MorFiles& files) {
  const SubtensorMorSpec spec = subtensor_spec(o);
  std::string json_all = "[";
  for (std::size_t fi = 0; fi < ins.files.size(); ++fi) {
    const Input in = read_input(ins.files[fi], ins.named);
    const TensorView x = view_of(in, o.transpose);
    SubtensorMorResult r;
    try {
      r = subtensor_mor(x, spec, runner(o));
    } catch (const std::invalid_argument& e) {
      throw UsageError(in.path + ": " + e.what());
    }
    SubtensorOutcome t{in, x, std::move(r), BlockGrid(x.rows(), x.cols(), spec.blocks), std::nullopt, {}};
    if (o.stats) t.mom = tensor_moments(x);
    if (o.out_prefix) t.written = write_subtensor_files(files, o, t);
    if (o.json)
      json_all += (fi ? ",\n" : "\n") + subtensor_json(o, spec, t);
    else
      print_subtensor_text(o, spec, t);
  }
  if (o.json) {
    if (ins.several)
      std::printf("%s\n]\n", json_all.c_str());
    else
      std::printf("%s\n", json_all.substr(2).c_str());
  }
  return 0;
}

// ---- §26 tensor-level MoR ----------------------------------------------------------------------

// Every input's decision, added to the histogram `hist` (§28).
std::vector<TensorOutcome> evaluate_tensors(const Options& o, const Inputs& ins, ErrorHistogram& hist) {
  TensorMorSpec spec;
  spec.scaling = o.partition;
  spec.threshold = o.threshold;
  spec.quant.rule = o.rule;
  spec.fake = o.fake;
  if (o.reset_every)  // every input must name its step, checked before any work
    for (const std::string& f : ins.files) {
      if (!observation_of(f).step)
        throw UsageError(f + ": --reset-every needs the training step in the file name (STEM@stepS.npy or STEM@S.npy)");
    }
  std::vector<TensorOutcome> outs;
  for (const std::string& f : ins.files) {
    TensorOutcome t;
    t.in = read_input(f, ins.named);
    const TensorView x = view_of(t.in, o.transpose);
    try {
      t.r = tensor_mor(x, spec, runner(o));
    } catch (const std::invalid_argument& e) {
      throw UsageError(t.in.path + ": " + e.what());
    }
    if (o.stats) t.m = tensor_moments(x);
    hist.add(t.in.name, t.r.error, !t.r.quantized, t.in.step);
    if (ins.several) {  // keep only what the summary needs
      t.in.bytes.clear();
      t.in.bytes.shrink_to_fit();
    }
    outs.push_back(std::move(t));
  }
  return outs;
}

std::string recipe_line(const Options& o) {
  return "tensor-level MoR [f8e4m3fn, " + std::string(o.fake->name) + "], E4M3 scaled with " +
         std::string(to_string(o.rule)) + " per " + to_string(o.partition) + ", threshold " + o.threshold.to_string() +
         " (" + o.threshold_text + "), Q in " + std::string(o.fake->name);
}

// "\"threshold\": {\"num\": N, \"den\": D, \"text\": T}" of the JSON reports.
std::string threshold_json(const Options& o) {
  return "\"threshold\": {\"num\": " + std::to_string(o.threshold.num) +
         ", \"den\": " + std::to_string(o.threshold.den) + ", \"text\": " + json_string(o.threshold_text) + "}";
}

void print_one_text(const Options& o, const TensorOutcome& t, const ErrorHistogram& hist) {
  const TensorMorResult& r = t.r;
  const Format& sf = scale_format(o.rule);
  const TensorView x = view_of(t.in, o.transpose);
  const auto bin = histogram_bin(r.error);
  std::printf("input      %s: %s, %zu x %zu%s\n", t.in.path.c_str(), std::string(t.in.format->name).c_str(), x.rows(),
              x.cols(), o.transpose ? " (transposed)" : "");
  std::printf("recipe     %s\n", recipe_line(o).c_str());
  std::printf("elements   %zu: %llu non-zero, %llu zero, %llu NaN/Inf, %llu with non-finite Q(x)\n", x.size(),
              static_cast<unsigned long long>(r.error.n), static_cast<unsigned long long>(r.error.zeros),
              static_cast<unsigned long long>(r.error.nonfinite_input),
              static_cast<unsigned long long>(r.error.nonfinite_quant));
  std::printf("error sum  %s = %s (exact)\n", r.error.sum.hexfloat().c_str(), r.error.sum.decimal().c_str());
  if (f32_is_finite(r.mean))
    std::printf("mean       %s (RN32 of the exact mean)\n", text_f32(r.mean).c_str());
  else
    std::printf("mean       undefined (non-finite elements)\n");
  std::printf("decision   %s (%s)\n", r.quantized ? "f8e4m3fn" : std::string(o.fake->name).c_str(),
              std::string(to_string(r.verdict.reason)).c_str());
  if (bin) std::printf("bin        %s\n", hist.bin_label(*bin).c_str());
  std::string gm;
  if (!r.scales.group_mantissa.empty()) {
    char b[32];
    std::snprintf(b, sizeof b, "group mantissa %06x, ", r.scales.group_mantissa[0]);
    gm = b;
  }
  std::printf("scales     %s%zu blocks (%s): %s\n", gm.c_str(), r.scales.scales.size(), std::string(sf.name).c_str(),
              codes_summary(r.scales.scales, sf, o.max_blocks).c_str());
  if (t.m) print_moments(*t.m);
}

// The histogram as JSON: bin labels and one row per tensor (and window).
std::string histogram_json(const ErrorHistogram& hist, std::uint64_t reset_every) {
  std::string s = "  \"histogram\": {\"bins\": [";
  for (std::size_t b = 0; b <= hist.spec().bins; ++b) s += (b ? ", " : "") + json_string(hist.bin_label(b));
  s += "], \"rows\": [";
  for (std::size_t i = 0; i < hist.rows().size(); ++i) {
    const HistogramRow& row = hist.rows()[i];
    s += std::string(i ? ",\n" : "\n") + "    {\"name\": " + json_string(row.name) +
         (row.window ? ", \"steps\": [" + std::to_string(*row.window * reset_every) + ", " +
                           std::to_string((*row.window + 1) * reset_every) + "]"
                     : std::string()) +
         ", \"observations\": " + std::to_string(row.observations) +
         ", \"fallbacks\": " + std::to_string(row.fallbacks) + ", \"nonfinite\": " + std::to_string(row.nonfinite) +
         ", \"counts\": [";
    for (std::size_t b = 0; b < row.counts.size(); ++b) s += (b ? ", " : "") + std::to_string(row.counts[b]);
    s += "]}";
  }
  s += "\n  ]}\n";
  return s;
}

void print_several_json(const Options& o, const std::vector<TensorOutcome>& outs, const ErrorHistogram& hist) {
  const std::uint64_t total = hist.observations(), fb = hist.fallbacks();
  std::string s =
      "{\n  \"recipe\": \"tensor\", \"partition\": \"" + to_string(o.partition) + "\", " + threshold_json(o) + ",\n";
  s += "  \"tensors\": [";
  for (std::size_t i = 0; i < outs.size(); ++i) s += std::string(i ? ",\n    " : "\n    ") + tensor_json(outs[i], o, 4);
  s += "\n  ],\n";
  s += "  \"fallback\": {\"count\": " + std::to_string(fb) + ", \"total\": " + std::to_string(total) +
       ", \"percent\": \"" + percent_string(fb, total) + "\"},\n";
  s += histogram_json(hist, o.reset_every) + "}\n";
  std::fputs(s.c_str(), stdout);
}

void print_several_text(const Options& o, const std::vector<TensorOutcome>& outs, const ErrorHistogram& hist) {
  const std::uint64_t total = hist.observations(), fb = hist.fallbacks();
  std::printf("recipe     %s\n", recipe_line(o).c_str());
  std::vector<std::vector<std::string>> rows;
  for (const TensorOutcome& t : outs) {
    const auto bin = histogram_bin(t.r.error);
    rows.push_back({t.in.path,
                    std::to_string(o.transpose ? t.in.cols : t.in.rows) + "x" +
                        std::to_string(o.transpose ? t.in.rows : t.in.cols),
                    t.r.quantized ? "f8e4m3fn" : std::string(o.fake->name), std::string(to_string(t.r.verdict.reason)),
                    f32_is_finite(t.r.mean) ? hex_code(t.r.mean, F32()) : "-",
                    f32_is_finite(t.r.mean) ? compact_value(decode(t.r.mean, F32()), 14) : "-",
                    bin ? hist.bin_label(*bin) : "-"});
  }
  print_table({"input", "shape", "decision", "reason", "mean", "value", "bin"}, rows, false);
  std::printf("\nfallback   %llu of %s (%s %%)\n\n", static_cast<unsigned long long>(fb),
              count(total, "tensor").c_str(), percent_string(fb, total).c_str());
  std::vector<std::string> header = {"tensor", "obs"};
  for (std::size_t b = 0; b <= hist.spec().bins; ++b) header.push_back(hist.bin_label(b));
  header.push_back("n/a");
  std::vector<std::vector<std::string>> hrows;
  for (const HistogramRow& row : hist.rows()) {
    std::vector<std::string> cells = {hist.row_label(row), std::to_string(row.observations)};
    for (std::uint64_t c : row.counts) cells.push_back(std::to_string(c));
    cells.push_back(std::to_string(row.nonfinite));
    hrows.push_back(cells);
  }
  print_table(header, hrows, false);
}

// One input: its decision; several: one line each, the fallback percentage and the histogram
// (§28), and the --svg heatmap.
int run_tensor(const Options& o, const Inputs& ins, MorFiles& files) {
  HistogramSpec hspec;
  hspec.reset_every = o.reset_every;
  ErrorHistogram hist(hspec);
  const std::vector<TensorOutcome> outs = evaluate_tensors(o, ins, hist);
  if (!ins.several) {
    if (o.json) {
      const std::string extra = "\"recipe\": \"tensor\", \"partition\": \"" + to_string(o.partition) + "\", " +
                                threshold_json(o) + ", \"fake\": \"" + std::string(o.fake->name) + "\"";
      std::fputs((tensor_json(outs[0], o, 0, extra) + "\n").c_str(), stdout);
    } else {
      print_one_text(o, outs[0], hist);
    }
    return 0;
  }
  if (o.json)
    print_several_json(o, outs, hist);
  else
    print_several_text(o, outs, hist);
  if (o.svg) {
    files.svg->write(heatmap_svg(hist, o.threshold));
    files.outputs.commit_all();
    if (!o.json) std::printf("\nwrote      %s\n", o.svg->c_str());
  }
  return 0;
}

int run_mor(Args& a) {
  if (a.flag("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  const Options o = parse_options(a);
  const Inputs ins = resolve_inputs(o);
  MorFiles files(o, ins);
  return o.recipe == "tensor" ? run_tensor(o, ins, files) : run_subtensor(o, ins, files);
}

}  // namespace

NUMREF_VERB("mor", "Mixture-of-Representations decisions, exact relative-error metrics, histograms", run_mor);

}  // namespace numref::cli::cmd_mor
