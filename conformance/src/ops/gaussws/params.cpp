// numref conformance — GaussWS suites: parameters, schema, reference results and C ABI
// marshalling.                                   spec §30, §31.9, §32.8, §33.8, §34.10
#include <algorithm>
#include <stdexcept>

#include "gaussws.hpp"
#include "numref/conform/abi.hpp"

namespace numref::conform::gaussws {

namespace gw = numref::gaussws;

std::string_view noise_name(Noise n) { return n == Noise::bits ? "bits" : "key"; }
std::string_view sum_name(gw::Sum s) { return s == gw::Sum::exact ? "exact" : "f32"; }

// ---- the key column (6 words: seed, layer, step as (low, high) pairs) -----------------------

gw::NoiseKey get_key(const std::uint32_t* w) {
  auto w64 = [&](int k) { return std::uint64_t{w[2 * k]} | (std::uint64_t{w[2 * k + 1]} << 32); };
  return {w64(0), w64(1), w64(2)};
}

void put_key(const gw::NoiseKey& k, std::uint32_t* w) {
  const std::uint64_t v[3] = {k.seed, k.layer, k.step};
  for (int i = 0; i < 3; ++i) {
    w[2 * i] = static_cast<std::uint32_t>(v[i]);
    w[2 * i + 1] = static_cast<std::uint32_t>(v[i] >> 32);
  }
}

namespace {

// A packed R word as its 8 noise values, element 8k first: "[0 1 -1 0 0 0 2 0]".
std::string packed_text(std::uint32_t word) {
  std::string t = "[";
  for (int k = 0; k < 8; ++k) {
    const std::uint32_t nib = (word >> (4 * k)) & 0xFu;
    const std::uint32_t mag = nib & 7u;
    if (k) t += ' ';
    t += mag > 2 ? "bad" : ((nib & 8u) && mag ? "-" : "") + std::to_string(mag);
  }
  return t + "]";
}

const Format& checked_float(std::string_view key, const std::string& v) {
  if (v == "f32") return format(FormatId::f32);
  if (v == "bf16") return format(FormatId::bf16);
  throw std::invalid_argument(std::string(key) + "='" + v + "', expected f32 or bf16 (§30.1)");
}

}  // namespace

// ---- parameters ---------------------------------------------------------------------------------

std::string spec_text(const GausswsParams::Spec& s) {
  std::string t;
  kit::put(t, "w", s.w->name);
  kit::put(t, "g", s.g->name);
  kit::put(t, "shape", std::to_string(s.rows) + "x" + std::to_string(s.cols));
  kit::put(t, "noise", noise_name(s.noise));
  kit::put(t, "sum", sum_name(s.sum));
  return t;
}

GausswsParamsPtr parse(std::string_view text) {
  GausswsParams::Spec s;
  kit::KeyValues kv(kName, text, false);
  s.w = &checked_float("w", *kv.take("w", true, true));
  if (auto v = kv.take("g")) s.g = &checked_float("g", *v);
  std::tie(s.rows, s.cols) = kit::shape(*kv.take("shape", true, true));
  if (auto v = kv.take("noise")) {
    if (*v == "bits")
      s.noise = Noise::bits;
    else if (*v == "key")
      s.noise = Noise::key;
    else
      throw std::invalid_argument("noise='" + *v + "', expected bits or key");
  }
  if (auto v = kv.take("sum")) {
    if (*v == "exact")
      s.sum = gw::Sum::exact;
    else if (*v == "f32")
      s.sum = gw::Sum::f32;
    else
      throw std::invalid_argument("sum='" + *v + "', expected exact or f32");
  }
  kv.finish();
  return std::make_shared<const GausswsParams>(s);
}

namespace {
BlockGrid checked_grid(const GausswsParams::Spec& s) {
  kit::View{s.rows, s.cols, false}.check();
  return BlockGrid(s.rows, s.cols, Partition::blocks(gw::kBlock, gw::kBlock));
}
}  // namespace

GausswsParams::GausswsParams(const Spec& s) : Params(gaussws::family()), s_(s), grid_(checked_grid(s)) {
  if (s_.w->id != FormatId::f32 && s_.w->id != FormatId::bf16) throw std::invalid_argument("w: f32 or bf16 (§30.1)");
  if (s_.g->id != FormatId::f32 && s_.g->id != FormatId::bf16) throw std::invalid_argument("g: f32 or bf16 (§30.7)");
  Identity id;
  id.text = spec_text(s_);
  id.profile = "ocp";
  id.any_profile = true;  // §30.5 fixes the cast (the ocp wide policy): every checked profile applies
  id.formats = std::string(s_.w->name) + " bf16";
  // §34.10 --ops gaussws:W:bf16:NOISE:SUM
  id.selector = id.formats + " " + std::string(noise_name(s_.noise)) + " " + std::string(sum_name(s_.sum));
  id.label = std::string(s_.w->name) + " " + std::to_string(s_.rows) + "x" + std::to_string(s_.cols) +
             " g=" + std::string(s_.g->name) + " noise=" + std::string(noise_name(s_.noise)) +
             " sum=" + std::string(sum_name(s_.sum));
  id.clause = "§30";
  set_identity(std::move(id));
  build_schema();

  // §32.8 the C description
  numref_gaussws_op& c = cop_;
  c.struct_size = sizeof(numref_gaussws_op);
  c.w_format = c_format(*s_.w);
  c.g_format = c_format(*s_.g);
  c.out_format = NUMREF_FMT_BF16;
  c.rows = static_cast<std::uint32_t>(s_.rows);
  c.cols = static_cast<std::uint32_t>(s_.cols);
  c.block_rows = static_cast<std::uint32_t>(gw::kBlock);
  c.block_cols = static_cast<std::uint32_t>(gw::kBlock);
  c.n_blocks = static_cast<std::uint32_t>(grid_.count());
  c.noise = s_.noise == Noise::bits ? NUMREF_GAUSSWS_NOISE_BITS : NUMREF_GAUSSWS_NOISE_KEY;
  c.sum = s_.sum == gw::Sum::exact ? NUMREF_GAUSSWS_SUM_EXACT : NUMREF_GAUSSWS_SUM_F32;
  c.text = text().c_str();
}

// §31.9 / §33.8 the columns of a case, in vector-file order.
void GausswsParams::build_schema() {
  Schema& S = schema_;
  kit::tensor_case(S, s_.rows, s_.cols);
  const Format& f32 = format(FormatId::f32);
  const std::size_t gr = grid_.grid_rows(), gc = grid_.grid_cols(), n = s_.rows * s_.cols;
  S.add(kit::codes("w", Role::in, *s_.w, s_.rows, s_.cols, Place::view));
  S.add(kit::named(kit::codes("bt", Role::in, f32, gr, gc, Place::blocks), "bt", "bitwidths"));
  if (s_.noise == Noise::bits)
    S.add(kit::words("u", Role::in, 4, 0xFFFF, s_.rows, s_.cols, Place::view));
  else
    S.add(kit::words("key", Role::in, 8, 0xFFFFFFFFu, 1, 6, Place::list));
  S.add(kit::codes("g", Role::in, *s_.g, s_.rows, s_.cols, Place::view));
  Column r = kit::words("r", Role::out, 8, 0xFFFFFFFFu, 1, (n + 7) / 8, Place::list);
  r.cls = "noise";
  r.what = "packed noise words";
  r.decode = packed_text;
  S.add(r);
  S.add(kit::named(kit::codes("scale", Role::out, f32, gr, gc, Place::blocks), "scale", "scales"));
  S.add(kit::named(kit::codes("y", Role::out, format(FormatId::bf16), s_.rows, s_.cols, Place::view), "output",
                   "values"));
  S.add(kit::named(kit::codes("grad", Role::out, f32, gr, gc, Place::blocks), "grad", "gradients"));

  GausswsLayout& L = L_;
  L.n = n;
  L.nb = grid_.count();
  L.nr = (n + 7) / 8;
  static constexpr kit::ColumnAt<GausswsLayout> kAt[] = {
      {&GausswsLayout::w, "w", false},        {&GausswsLayout::bt, "bt", false}, {&GausswsLayout::u, "u", false},
      {&GausswsLayout::key, "key", false},    {&GausswsLayout::g, "g", false},   {&GausswsLayout::r, "r", true},
      {&GausswsLayout::scale, "scale", true}, {&GausswsLayout::y, "y", true},    {&GausswsLayout::grad, "grad", true}};
  kit::fill_layout(L, S, kAt);
  L.in = S.in;
  L.out = S.out;
}

// ---- reference ------------------------------------------------------------------------------------

std::vector<std::int8_t> GausswsParams::noise_of(const std::uint32_t* in) const {
  if (s_.noise == Noise::key) return gw::noise(matrix(), get_key(in + L_.key));
  std::vector<std::uint16_t> u(L_.n);
  for (std::size_t k = 0; k < L_.n; ++k) u[k] = static_cast<std::uint16_t>(in[static_cast<std::size_t>(L_.u) + k]);
  return gw::noise_from_words(u);
}

void GausswsParams::reference(const std::uint32_t* in, std::uint32_t* out) const {
  const std::vector<std::int8_t> r = noise_of(in);
  const std::span<const std::uint32_t> w(in + L_.w, L_.n), bt(in + L_.bt, L_.nb), g(in + L_.g, L_.n);
  gw::ForwardSpec fs;
  fs.w_format = s_.w->id;
  fs.sum = s_.sum;
  const gw::Forward f = gw::forward(fs, matrix(), w, bt, r);
  const std::vector<std::uint32_t> packed = gw::pack(r);
  const std::vector<std::uint32_t> grad = gw::grad_bt(s_.w->id, matrix(), w, bt, r, s_.g->id, g);
  std::copy(packed.begin(), packed.end(), out + L_.r);
  std::copy(f.scale.begin(), f.scale.end(), out + L_.scale);
  std::copy(f.w_hat.begin(), f.w_hat.end(), out + L_.y);
  std::copy(grad.begin(), grad.end(), out + L_.grad);
}

void GausswsParams::expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const {
  for (std::size_t i = 0; i < n; ++i)
    reference(in + i * static_cast<std::size_t>(L_.in), out + i * static_cast<std::size_t>(L_.out));
}

// §31.9 the comment of a case line: the noise counts and the poisoned blocks.
std::string GausswsParams::case_note(const std::uint32_t*, const std::uint32_t* out) const {
  const std::vector<std::int8_t> r = gw::unpack(std::span<const std::uint32_t>(out + L_.r, L_.nr), L_.n);
  std::size_t nz = 0, two = 0, poisoned = 0;
  for (const auto v : r) {
    nz += v != 0;
    two += v == 2 || v == -2;
  }
  for (std::size_t b = 0; b < L_.nb; ++b) poisoned += out[static_cast<std::size_t>(L_.scale) + b] == gw::kNaN32;
  return std::to_string(nz) + " of " + std::to_string(L_.n) + " noisy (" + std::to_string(two) + " |R|=2), " +
         std::to_string(poisoned) + " of " + std::to_string(L_.nb) + " blocks NaN/Inf";
}

// ---- C ABI (§32.8) ----------------------------------------------------------------------------

bool GausswsParams::plugin_supported(const numref_backend& b) const {
  return NUMREF_HAS_ENTRY(b, gaussws_supported) && NUMREF_HAS_ENTRY(b, gaussws) &&
         b.gaussws_supported(b.ctx, &cop_) == 1;
}

bool GausswsParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                                bool, std::string& error) const {
  if (!NUMREF_HAS_ENTRY(b, gaussws)) {
    error = "the backend has no gaussws entry point";
    return false;
  }
  std::vector<unsigned char> wbuf, gbuf;
  std::vector<std::uint16_t> u(s_.noise == Noise::bits ? L_.n : 0);
  kit::CaseOutputs o(schema());  // §34.6 guarded output buffers
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* ci = in + i * static_cast<std::size_t>(L_.in);
    std::uint32_t* co = out + i * static_cast<std::size_t>(L_.out);
    kit::pack(*s_.w, ci + L_.w, L_.n, wbuf);
    kit::pack(*s_.g, ci + L_.g, L_.n, gbuf);
    std::uint64_t key[3] = {0, 0, 0};
    if (s_.noise == Noise::bits) {
      for (std::size_t k = 0; k < L_.n; ++k) u[k] = static_cast<std::uint16_t>(ci[static_cast<std::size_t>(L_.u) + k]);
    } else {
      const gw::NoiseKey k = get_key(ci + L_.key);
      key[0] = k.seed;
      key[1] = k.layer;
      key[2] = k.step;
    }
    o.reset();
    const std::int64_t got = b.gaussws(
        b.ctx, &cop_, wbuf.data(), ci + L_.bt, s_.noise == Noise::bits ? u.data() : nullptr,
        s_.noise == Noise::key ? key : nullptr, gbuf.data(), o.at(L_.r), o.at(L_.scale), o.at(L_.y), o.at(L_.grad));
    if (!o.finish("gaussws", co, error)) return false;
    if (!kit::check_call(b, "gaussws", got, L_.n, "elements (one matrix)", error)) return false;
  }
  return true;
}

}  // namespace numref::conform::gaussws
