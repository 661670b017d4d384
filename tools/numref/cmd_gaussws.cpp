// numref gaussws — Gaussian weight sampling (spec §30): noise, forward (Eq. 3), the b_t
// gradient (Eq. 4), Eq. 11, the packed R; --noise-table prints the exact distribution (Eq. 10).
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/conform/output.hpp"
#include "numref/exact.hpp"
#include "numref/gaussws.hpp"
#include "numref/npy.hpp"

namespace numref::cli::cmd_gaussws {
namespace {

namespace gw = numref::gaussws;

constexpr const char* kUsage =
    "usage: numref gaussws --noise-table\n"
    "       numref gaussws --w W.npy [--input-format bf16] (--bt X | --bt-file BT.npy | --bi-file BI.npy\n"
    "                      [--b-init 6] [--b-target 4]) (--seed S [--layer L] [--step T] | --bits U.npy)\n"
    "                      [--sum exact|f32] [--out W_HAT.npy] [--out-r R.npy] [--exact-out V.txt]\n"
    "                      [--grad G.npy --out-grad DBT.npy]";

constexpr const char* kOptions =
    "Gaussian weight sampling (spec §30; docs/gaussws.md):\n"
    "  --noise-table        print the exact distribution of R over the 2^16 words (Eq. 10)\n"
    "  --w W.npy            the weights: <f4, or <u2 bf16 patterns with --input-format bf16; the\n"
    "                       last axis is n, the others are flattened into m\n"
    "  --bt X               b_t of every 32 x 32 block (a finite binary32 number)\n"
    "  --bt-file BT.npy     b_t per block (<f4, ceil(m/32) * ceil(n/32) values)\n"
    "  --bi-file BI.npy     b_i per block; b_t by Eq. 11 from --b-init (6) and --b-target (4)\n"
    "  --seed S             the counter-based generator's key (§30.3): seed, --layer L, --step T,\n"
    "                       each an unsigned 64-bit integer 0 .. 2^64 - 1 (layer, step default 0)\n"
    "  --bits U.npy         the 16 random bits of each element instead (<u2, w's element count)\n"
    "  --sum exact|f32      one rounding of w + R*s to bf16 (default), or binary32 then bf16\n"
    "  --out W_HAT.npy      w_hat as <u2 bf16 patterns, shape (m, n)\n"
    "  --out-r R.npy        R packed, 8 sign-magnitude nibbles per <u4 word (§30.9)\n"
    "  --exact-out V.txt    the exact w + R*s per element, one C99 hex float per line\n"
    "  --grad G.npy --out-grad DBT.npy   dL/dw_hat (<f4, or <u2 bf16 with --input-format bf16)\n"
    "                       in, dL/db_t per block out (<f4, shape (ceil(m/32), ceil(n/32)))\n";

// A .npy file of 32-bit floats (<f4) or 16-bit words (<u2) with `count` elements.
std::vector<std::uint32_t> read_words(const std::string& path, npy::Dtype want, std::size_t count, const char* what) {
  const std::vector<std::uint8_t> bytes = npy::read_file(path);
  npy::Array a;
  try {
    a = npy::parse(bytes);
  } catch (const npy::NpyError& e) {
    throw UsageError(path + ": " + e.what());
  }
  if (a.dtype != want)
    throw UsageError(path + ": " + what + " must have dtype " + std::string(npy::descr_of(want)) + ", not " +
                     std::string(npy::descr_of(a.dtype)));
  if (a.count() != count)
    throw UsageError(path + ": " + what + " needs " + std::to_string(count) + " elements, the file has " +
                     std::to_string(a.count()));
  std::vector<std::uint32_t> out(count);
  const std::uint8_t* p = bytes.data() + a.data_offset;
  for (std::size_t i = 0; i < count; ++i) {
    if (want == npy::Dtype::f4)
      std::memcpy(&out[i], p + 4 * i, 4);
    else {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = h;
    }
  }
  return out;
}

std::uint32_t parse_f32(const std::string& s, const char* what) {
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(s.c_str(), &end);  // decimal text to the nearest binary32 (no arithmetic)
  if (end == s.c_str() || *end != '\0' || errno == ERANGE)
    throw UsageError(std::string(what) + ": '" + s + "' is not a binary32 number");
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  if (!f32_is_finite(b)) throw UsageError(std::string(what) + ": must be finite");
  return b;
}

int noise_table() {
  const std::vector<std::uint32_t> c = gw::noise_counts();
  std::printf("R   probability (exact, over the 2^16 words of §30.2)\n");
  std::uint64_t total = 0;
  for (int r = -2; r <= 2; ++r) {
    const std::uint32_t n = c[static_cast<std::size_t>(r + 2)];
    total += n;
    const std::uint64_t g = std::gcd(std::uint64_t{n}, std::uint64_t{65536});
    std::printf("%+d  %u/65536 = %llu/%llu\n", r, n, static_cast<unsigned long long>(n / g),
                static_cast<unsigned long long>(65536 / g));
  }
  std::printf("sum %llu/65536 = 1\n", static_cast<unsigned long long>(total));
  return total == 65536 ? 0 : 1;
}

std::vector<std::uint8_t> raw_u16(const std::vector<std::uint32_t>& v) {
  std::vector<std::uint8_t> out(v.size() * 2);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto h = static_cast<std::uint16_t>(v[i]);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}
std::vector<std::uint8_t> raw_u32(const std::vector<std::uint32_t>& v) {
  std::vector<std::uint8_t> out(v.size() * 4);
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// ---- parse -----------------------------------------------------------------------------------

struct Options {
  std::string w;  // --w
  std::optional<std::string> input_format, bt_text, bt_file, bi_file, seed, layer, step, bits;
  std::string b_init, b_target, sum;
  std::optional<std::string> out_w, out_r, exact_out, grad, out_grad;
};

Options parse_options(Args& a) {
  Options o;
  const auto wpath = a.opt("w");
  o.input_format = a.opt("input-format");
  o.bt_text = a.opt("bt");
  o.bt_file = a.opt("bt-file");
  o.bi_file = a.opt("bi-file");
  o.b_init = a.opt_or("b-init", "6");
  o.b_target = a.opt_or("b-target", "4");
  o.seed = a.opt("seed");
  o.layer = a.opt("layer");
  o.step = a.opt("step");
  o.bits = a.opt("bits");
  o.sum = a.opt_or("sum", "exact");
  o.out_w = a.opt("out");
  o.out_r = a.opt("out-r");
  o.exact_out = a.opt("exact-out");
  o.grad = a.opt("grad");
  o.out_grad = a.opt("out-grad");
  a.finish();
  if (!wpath) throw UsageError(std::string("--w is required\n") + kUsage);
  o.w = *wpath;
  if ((o.bt_text ? 1 : 0) + (o.bt_file ? 1 : 0) + (o.bi_file ? 1 : 0) != 1)
    throw UsageError("give exactly one of --bt, --bt-file, --bi-file");
  if ((o.seed ? 1 : 0) + (o.bits ? 1 : 0) != 1) throw UsageError("give exactly one of --seed, --bits");
  if (o.bits && (o.layer || o.step))
    throw UsageError("--layer and --step select generator bits; they do not apply to --bits");
  if (o.sum != "exact" && o.sum != "f32") throw UsageError("--sum: '" + o.sum + "' is not one of exact, f32");
  if (o.grad.has_value() != o.out_grad.has_value()) throw UsageError("--grad and --out-grad go together");
  if (!o.out_w && !o.out_r && !o.exact_out && !o.out_grad)
    throw UsageError("nothing to do: give --out, --out-r, --exact-out or --out-grad");
  return o;
}

// §35.1 No output names an input or another output.
void check_outputs(const Options& o) {
  std::vector<std::string> inputs{o.w};
  for (const auto* p : {&o.bt_file, &o.bi_file, &o.bits, &o.grad})
    if (*p) inputs.push_back(**p);
  std::vector<std::string> outputs;
  for (const auto& [name, p] : {std::pair{"--out", &o.out_w}, std::pair{"--out-r", &o.out_r},
                                std::pair{"--exact-out", &o.exact_out}, std::pair{"--out-grad", &o.out_grad}}) {
    if (!*p) continue;
    conform::refuse_output_that_is_input(name, **p, inputs);
    for (const auto& out : outputs)
      if (conform::same_file(out, **p)) throw UsageError(std::string(name) + " " + **p + " is named as two outputs");
    outputs.push_back(**p);
  }
}

// ---- the inputs --------------------------------------------------------------------------------

// The codes of a tensor read as f32 (32-bit) or bf16 (16-bit) words, element order.
std::vector<std::uint32_t> tensor_codes(const NpyTensor& t) {
  std::vector<std::uint32_t> c(t.rows * t.cols);
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (t.format->bits == 32)
      std::memcpy(&c[i], t.bytes.data() + t.offset + 4 * i, 4);
    else {
      std::uint16_t h;
      std::memcpy(&h, t.bytes.data() + t.offset + 2 * i, 2);
      c[i] = h;
    }
  }
  return c;
}

// §30.3 b_t per 32 x 32 block: --bt (every block), --bt-file, or from --bi-file's b_i (Eq. 11).
std::vector<std::uint32_t> block_bitwidths(const Options& o, const gw::Shape& shape) {
  std::vector<std::uint32_t> bt;
  if (o.bt_text) {
    bt.assign(shape.blocks(), parse_f32(*o.bt_text, "--bt"));
  } else if (o.bt_file) {
    bt = read_words(*o.bt_file, npy::Dtype::f4, shape.blocks(), "b_t (one per 32 x 32 block)");
  } else {
    const std::vector<std::uint32_t> bi =
        read_words(*o.bi_file, npy::Dtype::f4, shape.blocks(), "b_i (one per 32 x 32 block)");
    const std::uint32_t hi = parse_f32(o.b_init, "--b-init"), lo = parse_f32(o.b_target, "--b-target");
    bt.resize(bi.size());
    for (std::size_t b = 0; b < bi.size(); ++b) {
      if (!f32_is_finite(bi[b]))
        throw UsageError(*o.bi_file + ": b_i of block " + std::to_string(b) + " is not finite");
      bt[b] = gw::bitwidth(bi[b], hi, lo);
    }
  }
  for (std::size_t b = 0; b < bt.size(); ++b)
    if (!f32_is_finite(bt[b]))
      throw UsageError((o.bt_file ? *o.bt_file : std::string("--bt")) + ": b_t of block " + std::to_string(b) +
                       " is not finite");
  return bt;
}

// §30.2 R per element: from the generator (--seed, --layer, --step) or from --bits' words.
std::vector<std::int8_t> element_noise(const Options& o, const gw::Shape& shape) {
  if (o.seed) {
    gw::NoiseKey k;
    // §30.3 seed, layer and step are unsigned 64-bit integers: every value, exactly
    k.seed = parse_u64(*o.seed, "--seed");
    if (o.layer) k.layer = parse_u64(*o.layer, "--layer");
    if (o.step) k.step = parse_u64(*o.step, "--step");
    return gw::noise(shape, k);
  }
  const std::vector<std::uint32_t> u =
      read_words(*o.bits, npy::Dtype::u2, shape.size(), "the 16-bit words (one per element)");
  std::vector<std::int8_t> r(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) r[i] = static_cast<std::int8_t>(gw::noise_from_bits(u[i]));
  return r;
}

// ---- compute -----------------------------------------------------------------------------------

struct Result {
  gw::Shape shape;
  std::vector<std::int8_t> r;
  gw::Forward f;
  std::vector<std::uint32_t> dbt;  // --grad: dL/db_t per block
};

Result compute(const Options& o) {
  const Format* named = o.input_format ? &format_arg(*o.input_format, "--input-format") : nullptr;
  const NpyTensor w = read_npy_tensor(o.w, named);
  if (w.format->id != FormatId::f32 && w.format->id != FormatId::bf16)
    throw UsageError(o.w + ": w must be f32 (<f4) or bf16 (<u2 with --input-format bf16), not " +
                     std::string(w.format->name));
  Result res{gw::Shape{w.rows, w.cols}, {}, {}, {}};
  const std::vector<std::uint32_t> wc = tensor_codes(w);
  const std::vector<std::uint32_t> bt = block_bitwidths(o, res.shape);
  res.r = element_noise(o, res.shape);
  gw::ForwardSpec spec;
  spec.w_format = w.format->id;
  spec.sum = o.sum == "f32" ? gw::Sum::f32 : gw::Sum::exact;
  try {
    res.f = gw::forward(spec, res.shape, wc, bt, res.r, o.exact_out.has_value());
    if (o.grad) {
      // §30.7 g is binary32 (<f4) or bf16 (<u2 patterns) whatever w's format: --input-format names w's
      const NpyTensor g = read_npy_tensor(*o.grad, nullptr, &format(FormatId::bf16));
      if (g.rows * g.cols != res.shape.size() || (g.format->id != FormatId::f32 && g.format->id != FormatId::bf16))
        throw UsageError(*o.grad + ": dL/dw_hat must be f32 or bf16 with w's " + std::to_string(res.shape.size()) +
                         " elements");
      res.dbt = gw::grad_bt(w.format->id, res.shape, wc, bt, res.r, g.format->id, tensor_codes(g));
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(o.w + ": " + e.what());
  }
  return res;
}

// ---- render ------------------------------------------------------------------------------------

// The files asked for, committed together (§35.1), and the summary line.
void write_outputs(const Options& o, const Result& res) {
  const gw::Shape& shape = res.shape;
  conform::OutputSet set;
  const std::vector<std::size_t> mshape{shape.m, shape.n}, bshape{shape.block_rows(), shape.block_cols()};
  auto put = [&](const std::string& path, const std::vector<std::uint8_t>& bytes) {
    set.add(path).write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  };
  if (o.out_w) put(*o.out_w, npy::encode(npy::Dtype::u2, mshape, raw_u16(res.f.w_hat)));
  if (o.out_r) {
    const std::vector<std::uint32_t> p = gw::pack(res.r);
    const std::vector<std::size_t> pshape{p.size()};
    put(*o.out_r, npy::encode(npy::Dtype::u4, pshape, raw_u32(p)));
  }
  if (o.exact_out) {
    // §30.6 a poisoned block has no exact value ("nan"); §30.5 with s = +Inf and R != 0 the value
    // w + R * s is infinite ("inf" / "-inf", the sign of R); elsewhere v as a C99 hex float
    std::string text;
    for (std::size_t k = 0; k < res.f.exact.size(); ++k) {
      const std::uint32_t s = res.f.scale[shape.block_of(k / shape.n, k % shape.n)];
      if (s == gw::kNaN32)
        text += "nan";
      else if (s == kF32Inf && res.r[k] != 0)
        text += res.r[k] < 0 ? "-inf" : "inf";
      else
        text += res.f.exact[k].hex();
      text += '\n';
    }
    set.add(*o.exact_out).write(text);
  }
  if (o.out_grad) put(*o.out_grad, npy::encode(npy::Dtype::f4, bshape, raw_u32(res.dbt)));
  set.commit_all();
  std::printf("gaussws: %zu x %zu, %s%s%s%s%s\n", shape.m, shape.n, count(shape.blocks(), "block").c_str(),
              o.out_w ? ", w_hat" : "", o.out_r ? ", packed R" : "", o.exact_out ? ", exact values" : "",
              o.out_grad ? ", dL/db_t" : "");
}

int run(Args& a) {
  if (a.flag("help")) {
    std::printf("%s\n\n%s", kUsage, kOptions);
    return 0;
  }
  if (a.flag("noise-table")) {
    a.finish();
    const int rc = noise_table();
    conform::check_stdout();
    return rc;
  }
  const Options o = parse_options(a);
  check_outputs(o);
  write_outputs(o, compute(o));
  conform::check_stdout();
  return 0;
}

NUMREF_VERB("gaussws", "Gaussian weight sampling (spec §30): noise, w_hat in bf16, packed R, dL/db_t", run);

}  // namespace
}  // namespace numref::cli::cmd_gaussws
