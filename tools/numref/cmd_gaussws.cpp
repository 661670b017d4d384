// numref gaussws — Gaussian weight sampling (spec §37): noise, forward (Eq. 3), the b_t
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

namespace numref::cli {
namespace {

namespace gw = numref::gaussws;

constexpr const char* kUsage =
    "usage: numref gaussws --noise-table\n"
    "       numref gaussws --w W.npy [--input-format bf16] (--bt X | --bt-file BT.npy | --bi-file BI.npy\n"
    "                      [--b-init 6] [--b-target 4]) (--seed S [--layer L] [--step T] | --bits U.npy)\n"
    "                      [--sum exact|f32] [--out W_HAT.npy] [--out-r R.npy] [--exact-out V.txt]\n"
    "                      [--grad G.npy --out-grad DBT.npy]";

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
    if (want == npy::Dtype::f4) std::memcpy(&out[i], p + 4 * i, 4);
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
  std::printf("R   probability (exact, over the 2^16 words of §37.2)\n");
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

int run(Args& a) {
  if (a.flag("noise-table")) {
    a.finish();
    const int rc = noise_table();
    conform::check_stdout();
    return rc;
  }
  const auto wpath = a.opt("w");
  const auto fmt_name = a.opt("input-format");
  const auto bt_text = a.opt("bt");
  const auto bt_file = a.opt("bt-file");
  const auto bi_file = a.opt("bi-file");
  const std::string b_init = a.opt_or("b-init", "6"), b_target = a.opt_or("b-target", "4");
  const auto seed = a.opt("seed");
  const auto layer = a.opt("layer");
  const auto step = a.opt("step");
  const auto bits = a.opt("bits");
  const std::string sum = a.opt_or("sum", "exact");
  const auto out_w = a.opt("out");
  const auto out_r = a.opt("out-r");
  const auto exact_out = a.opt("exact-out");
  const auto grad = a.opt("grad");
  const auto out_grad = a.opt("out-grad");
  a.finish();
  if (!wpath) throw UsageError(std::string("--w is required\n") + kUsage);
  if ((bt_text ? 1 : 0) + (bt_file ? 1 : 0) + (bi_file ? 1 : 0) != 1)
    throw UsageError("give exactly one of --bt, --bt-file, --bi-file");
  if ((seed ? 1 : 0) + (bits ? 1 : 0) != 1) throw UsageError("give exactly one of --seed, --bits");
  if (bits && (layer || step)) throw UsageError("--layer and --step select generator bits; they do not apply to --bits");
  if (sum != "exact" && sum != "f32") throw UsageError("--sum: '" + sum + "' is not one of exact, f32");
  if (grad.has_value() != out_grad.has_value()) throw UsageError("--grad and --out-grad go together");
  if (!out_w && !out_r && !exact_out && !out_grad) throw UsageError("nothing to do: give --out, --out-r, --exact-out or --out-grad");

  std::vector<std::string> inputs{*wpath};
  for (const auto* p : {&bt_file, &bi_file, &bits, &grad})
    if (*p) inputs.push_back(**p);
  std::vector<std::string> outputs;
  for (const auto& [name, p] : {std::pair{"--out", &out_w}, std::pair{"--out-r", &out_r},
                                std::pair{"--exact-out", &exact_out}, std::pair{"--out-grad", &out_grad}}) {
    if (!*p) continue;
    conform::refuse_output_that_is_input(name, **p, inputs);
    for (const auto& o : outputs)
      if (conform::same_file(o, **p)) throw UsageError(std::string(name) + " " + **p + " is named as two outputs");
    outputs.push_back(**p);
  }

  const Format* named = fmt_name ? &format_arg(*fmt_name, "--input-format") : nullptr;
  const NpyTensor w = read_npy_tensor(*wpath, named);
  if (w.format->id != FormatId::f32 && w.format->id != FormatId::bf16)
    throw UsageError(*wpath + ": w must be f32 (<f4) or bf16 (<u2 with --input-format bf16), not " + std::string(w.format->name));
  const gw::Shape shape{w.rows, w.cols};
  std::vector<std::uint32_t> wc(shape.size());
  for (std::size_t i = 0; i < wc.size(); ++i) {
    if (w.format->bits == 32) std::memcpy(&wc[i], w.bytes.data() + w.offset + 4 * i, 4);
    else {
      std::uint16_t h;
      std::memcpy(&h, w.bytes.data() + w.offset + 2 * i, 2);
      wc[i] = h;
    }
  }

  std::vector<std::uint32_t> bt;
  if (bt_text) {
    bt.assign(shape.blocks(), parse_f32(*bt_text, "--bt"));
  } else if (bt_file) {
    bt = read_words(*bt_file, npy::Dtype::f4, shape.blocks(), "b_t (one per 32 x 32 block)");
  } else {
    const std::vector<std::uint32_t> bi = read_words(*bi_file, npy::Dtype::f4, shape.blocks(), "b_i (one per 32 x 32 block)");
    const std::uint32_t hi = parse_f32(b_init, "--b-init"), lo = parse_f32(b_target, "--b-target");
    bt.resize(bi.size());
    for (std::size_t b = 0; b < bi.size(); ++b) {
      if (!f32_is_finite(bi[b])) throw UsageError(*bi_file + ": b_i of block " + std::to_string(b) + " is not finite");
      bt[b] = gw::bitwidth(bi[b], hi, lo);
    }
  }
  for (std::size_t b = 0; b < bt.size(); ++b)
    if (!f32_is_finite(bt[b])) throw UsageError((bt_file ? *bt_file : std::string("--bt")) + ": b_t of block " + std::to_string(b) + " is not finite");

  std::vector<std::int8_t> r;
  if (seed) {
    gw::NoiseKey k;
    k.seed = static_cast<std::uint64_t>(parse_int(*seed, 0, (1LL << 62), "--seed"));
    if (layer) k.layer = static_cast<std::uint64_t>(parse_int(*layer, 0, (1LL << 62), "--layer"));
    if (step) k.step = static_cast<std::uint64_t>(parse_int(*step, 0, (1LL << 62), "--step"));
    r = gw::noise(shape, k);
  } else {
    const std::vector<std::uint32_t> u = read_words(*bits, npy::Dtype::u2, shape.size(), "the 16-bit words (one per element)");
    r.resize(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) r[i] = static_cast<std::int8_t>(gw::noise_from_bits(u[i]));
  }

  gw::ForwardSpec spec;
  spec.w_format = w.format->id;
  spec.sum = sum == "f32" ? gw::Sum::f32 : gw::Sum::exact;
  gw::Forward f;
  std::vector<std::uint32_t> dbt;
  try {
    f = gw::forward(spec, shape, wc, bt, r, exact_out.has_value());
    if (grad) {
      const NpyTensor g = read_npy_tensor(*grad, named);
      if (g.rows * g.cols != shape.size() || (g.format->id != FormatId::f32 && g.format->id != FormatId::bf16))
        throw UsageError(*grad + ": dL/dw_hat must be f32 or bf16 with w's " + std::to_string(shape.size()) + " elements");
      std::vector<std::uint32_t> gc(shape.size());
      for (std::size_t i = 0; i < gc.size(); ++i) {
        if (g.format->bits == 32) std::memcpy(&gc[i], g.bytes.data() + g.offset + 4 * i, 4);
        else {
          std::uint16_t h;
          std::memcpy(&h, g.bytes.data() + g.offset + 2 * i, 2);
          gc[i] = h;
        }
      }
      dbt = gw::grad_bt(w.format->id, shape, wc, bt, r, g.format->id, gc);
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(*wpath + ": " + e.what());
  }

  conform::OutputSet set;
  const std::vector<std::size_t> mshape{shape.m, shape.n}, bshape{shape.block_rows(), shape.block_cols()};
  auto put = [&](const std::string& path, const std::vector<std::uint8_t>& bytes) {
    set.add(path).write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  };
  if (out_w) put(*out_w, npy::encode(npy::Dtype::u2, mshape, raw_u16(f.w_hat)));
  if (out_r) {
    const std::vector<std::uint32_t> p = gw::pack(r);
    const std::vector<std::size_t> pshape{p.size()};
    put(*out_r, npy::encode(npy::Dtype::u4, pshape, raw_u32(p)));
  }
  if (exact_out) {
    std::string text;
    for (std::size_t k = 0; k < f.exact.size(); ++k)  // §37.6: a poisoned block has no exact value
      text += (f.scale[shape.block_of(k / shape.n, k % shape.n)] == gw::kNaN32 ? std::string("nan") : f.exact[k].hex()) + "\n";
    set.add(*exact_out).write(text);
  }
  if (out_grad) put(*out_grad, npy::encode(npy::Dtype::f4, bshape, raw_u32(dbt)));
  set.commit_all();
  std::printf("gaussws: %zu x %zu, %zu blocks%s%s%s%s\n", shape.m, shape.n, shape.blocks(), out_w ? ", w_hat" : "",
              out_r ? ", packed R" : "", exact_out ? ", exact values" : "", out_grad ? ", dL/db_t" : "");
  conform::check_stdout();
  return 0;
}

NUMREF_VERB("gaussws", "Gaussian weight sampling (spec §37): noise, w_hat in bf16, packed R, dL/db_t", run);

}  // namespace
}  // namespace numref::cli
