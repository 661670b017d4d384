// numref conformance — tensor suites: parameters, reference results, C ABI and pipe
// marshalling, tensor text.                                  spec §12–§20, §31.5, §32.6
#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "numref/conform/abi.hpp"
#include "numref/convert.hpp"
#include "tensor.hpp"

namespace numref::conform::tensor {

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::scale: return "scale";
    case Kind::quantize: return "quantize";
    case Kind::dequantize: return "dequantize";
    case Kind::fake_quant: return "fake-quant";
  }
  return "?";
}

namespace {

bool uses_src(Kind k) { return k != Kind::dequantize; }
bool uses_amax(Kind k) { return k != Kind::dequantize; }
bool uses_apply(Kind k) { return k == Kind::quantize || k == Kind::fake_quant; }
bool uses_dequant(Kind k) { return k == Kind::dequantize || k == Kind::fake_quant; }
bool uses_out(Kind k) { return k == Kind::fake_quant; }
bool uses_profile(Kind k) { return k != Kind::scale; }
bool uses_policy(Kind k) { return k == Kind::quantize || k == Kind::fake_quant; }

const Profile& profile_by_name(std::string_view name) {
  const auto id = find_profile(name);
  if (!id) throw std::invalid_argument("unknown profile '" + std::string(name) + "'");
  return numref::profile(*id);
}

// §12.5 text of a partition; a 0 ("whole extent") inside a block shape is written "all"
// (numref's to_string does the same, and parse_part reads it back).
std::string part_text(const Partition& p) { return to_string(p); }

Partition parse_part(std::string_view text, const char* what) {
  std::string t(text);
  // block:allxC / block:Rxall: the whole extent along one dimension
  if (t.rfind("block:", 0) == 0) {
    const std::string dims = t.substr(6);
    const auto x = dims.find('x');
    if (x != std::string::npos && (dims.substr(0, x) == "all" || dims.substr(x + 1) == "all")) {
      Partition p;
      for (int k = 0; k < 2; ++k) {
        const std::string d = k == 0 ? dims.substr(0, x) : dims.substr(x + 1);
        std::size_t v = 0;
        if (d != "all") {
          Partition tmp;
          const std::string err = parse_partition("block:" + d + "x1", tmp);
          if (!err.empty()) throw std::invalid_argument(std::string(what) + ": " + err);
          v = tmp.block_rows;
        }
        (k == 0 ? p.block_rows : p.block_cols) = v;
      }
      return p;
    }
  }
  Partition p;
  const std::string err = parse_partition(t, p);
  if (!err.empty()) throw std::invalid_argument(std::string(what) + ": " + err);
  return p;
}

std::vector<std::pair<std::string, std::string>> knobs(const Policy& p) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string d = describe(p);
  for (auto tok : split_ws(d)) {
    const auto eq = tok.find('=');
    out.emplace_back(std::string(tok.substr(0, eq)), std::string(tok.substr(eq + 1)));
  }
  return out;
}

}  // namespace

Policy tensor_base(const std::string& profile, ScaleRule rule) {
  Policy p = profile_by_name(profile).narrow;
  p.overflow = Overflow::saturate;  // §19.1
  if (rule == ScaleRule::int8) p.int_range = IntRange::symmetric;  // §20.2
  if (rule == ScaleRule::int8_127_5) p.int_range = IntRange::full;
  return p;
}

std::string spec_text(const TensorParams::Spec& s) {
  std::string t;
  auto kv = [&](std::string_view k, std::string_view v) {
    if (!t.empty()) t += ' ';
    t += k;
    t += '=';
    t += v;
  };
  if (uses_src(s.kind)) kv("src", s.src->name);
  kv("elem", s.elem->name);
  kv("shape", std::to_string(s.rows) + "x" + std::to_string(s.cols));
  kv("partition", part_text(s.partition));
  if (uses_src(s.kind)) kv("transpose", s.transpose ? "1" : "0");
  kv("rule", to_string(s.rule));
  if (s.rule == ScaleRule::gam) kv("group", part_text(s.group));
  if (uses_amax(s.kind)) {
    kv("amax_nan", s.amax.nan == AmaxNan::propagate ? "propagate" : "ignore");
    kv("amax_inf", s.amax.inf == AmaxInf::propagate ? "propagate" : "ignore");
  }
  if (uses_apply(s.kind)) kv("apply", to_string(s.apply));
  if (uses_dequant(s.kind)) kv("dequant", to_string(s.dequant));
  if (uses_out(s.kind)) kv("out", s.out->name);
  if (uses_profile(s.kind)) kv("profile", s.profile);
  if (uses_policy(s.kind)) {
    t += ' ';
    t += describe(s.policy);
  }
  return t;
}

TensorParamsPtr parse(Kind k, std::string_view text) {
  TensorParams::Spec s;
  s.kind = k;
  std::map<std::string, std::string, std::less<>> kv;
  std::string policy_settings;
  static const char* const kPolicyKeys[] = {"round", "sr_bits", "sr_variant", "overflow", "inf_sat",
                                            "nan", "nan_to_finite", "e8m0_round", "zero_to_nozero", "negative",
                                            "daz", "ftz", "tininess", "int_range"};
  for (auto w : split_ws(text)) {
    const auto eq = w.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == w.size())
      throw std::invalid_argument(std::string(kind_name(k)) + " parameter '" + std::string(w) + "' is not key=value");
    const std::string key(w.substr(0, eq));
    if (std::find(std::begin(kPolicyKeys), std::end(kPolicyKeys), key) != std::end(kPolicyKeys)) {
      if (!uses_policy(k))
        throw std::invalid_argument(std::string(kind_name(k)) + " has no element policy: '" + std::string(w) + "'");
      if (!policy_settings.empty()) policy_settings += ' ';
      policy_settings += w;
      continue;
    }
    if (!kv.emplace(key, std::string(w.substr(eq + 1))).second)
      throw std::invalid_argument(std::string(kind_name(k)) + " parameter '" + key + "' given twice");
  }
  auto take = [&](const char* key, bool used, bool required) -> std::optional<std::string> {
    auto it = kv.find(key);
    if (it == kv.end()) {
      if (used && required)
        throw std::invalid_argument(std::string(kind_name(k)) + " parameters need " + key + "=...");
      return std::nullopt;
    }
    if (!used) throw std::invalid_argument(std::string(kind_name(k)) + " does not take " + key + "=");
    std::string v = it->second;
    kv.erase(it);
    return v;
  };
  auto fmt = [&](const std::string& name, const char* what) -> const Format* {
    const auto id = find_format(name);
    if (!id) throw std::invalid_argument(std::string(what) + ": unknown format '" + name + "'");
    return &format(*id);
  };
  if (auto v = take("src", uses_src(k), true)) s.src = fmt(*v, "src");
  if (auto v = take("elem", true, true)) s.elem = fmt(*v, "elem");
  if (auto v = take("shape", true, true)) {
    const auto x = v->find('x');
    auto num = [&](const std::string& d) -> std::size_t {
      if (d.empty() || d.size() > 7 || d.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("shape '" + *v + "' is not RxC");
      return std::stoul(d);
    };
    if (x == std::string::npos) throw std::invalid_argument("shape '" + *v + "' is not RxC");
    s.rows = num(v->substr(0, x));
    s.cols = num(v->substr(x + 1));
  }
  if (auto v = take("partition", true, true)) s.partition = parse_part(*v, "partition");
  if (auto v = take("transpose", uses_src(k), false)) {
    if (*v != "0" && *v != "1") throw std::invalid_argument("transpose='" + *v + "', expected 0 or 1");
    s.transpose = *v == "1";
  }
  if (auto v = take("rule", true, true)) {
    const auto r = parse_scale_rule(*v);
    if (!r) throw std::invalid_argument("unknown scale rule '" + *v + "'");
    s.rule = *r;
  }
  if (auto v = take("group", s.rule == ScaleRule::gam, false)) s.group = parse_part(*v, "group");
  if (auto v = take("amax_nan", uses_amax(k), false)) {
    if (*v != "propagate" && *v != "ignore") throw std::invalid_argument("amax_nan='" + *v + "'");
    s.amax.nan = *v == "ignore" ? AmaxNan::ignore : AmaxNan::propagate;
  }
  if (auto v = take("amax_inf", uses_amax(k), false)) {
    if (*v != "propagate" && *v != "ignore") throw std::invalid_argument("amax_inf='" + *v + "'");
    s.amax.inf = *v == "ignore" ? AmaxInf::ignore : AmaxInf::propagate;
  }
  s.apply = is_int8(s.rule) ? ScaleApply::fused : ScaleApply::rn32;  // §19.2 defaults
  if (auto v = take("apply", uses_apply(k), false)) {
    const auto a = parse_scale_apply(*v);
    if (!a) throw std::invalid_argument("apply='" + *v + "', expected rn32 or fused");
    s.apply = *a;
  }
  if (auto v = take("dequant", uses_dequant(k), false)) {
    const auto d = parse_dequant_op(*v);
    if (!d) throw std::invalid_argument("dequant='" + *v + "', expected divide or reciprocal");
    s.dequant = *d;
  }
  if (auto v = take("out", uses_out(k), false)) s.out = fmt(*v, "out");
  if (auto v = take("profile", uses_profile(k), true)) s.profile = *v;
  if (!kv.empty()) throw std::invalid_argument("unknown " + std::string(kind_name(k)) + " parameter '" + kv.begin()->first + "'");
  (void)profile_by_name(s.profile);
  s.policy = tensor_base(s.profile, s.rule);
  if (auto err = apply_policy_settings(s.policy, policy_settings)) throw std::invalid_argument(*err);
  return std::make_shared<const TensorParams>(s);
}

// ---- TensorParams -------------------------------------------------------------------------------

namespace {
BlockGrid checked_grid(const TensorParams::Spec& s, const Partition& p) {
  if (s.rows == 0 || s.cols == 0)
    throw std::invalid_argument("empty tensor shape " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
  if (s.rows * s.cols > kMaxElements)
    throw std::invalid_argument("tensor shape " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                                " exceeds the suite limit of " + std::to_string(kMaxElements) + " elements");
  return BlockGrid(s.rows, s.cols, p);
}
}  // namespace

TensorParams::TensorParams(const Spec& s)
    : s_(s),
      grid_(checked_grid(s, s.partition)),
      ggrid_(checked_grid(s, s.rule == ScaleRule::gam ? s.group : Partition::tensor())),
      qmax_{false, 0, 0, false} {
  if (s_.rule != ScaleRule::gam) s_.group = Partition::tensor();
  if (uses_src(s_.kind)) {
    const std::string err = check_source_format(*s_.src);
    if (!err.empty()) throw std::invalid_argument("src: " + err);
  } else {
    s_.src = s_.elem;
    s_.transpose = false;
    s_.amax = AmaxPolicy{};
  }
  if (uses_out(s_.kind) && s_.out->bits <= 8)
    throw std::invalid_argument("out: the fake-quant output must be bf16, f16 or f32, got " + std::string(s_.out->name));
  if (!uses_out(s_.kind)) s_.out = &format(FormatId::bf16);
  if (!uses_dequant(s_.kind)) s_.dequant = DequantOp::divide;
  if (!uses_apply(s_.kind)) s_.apply = is_int8(s_.rule) ? ScaleApply::fused : ScaleApply::rn32;
  if (!uses_profile(s_.kind)) s_.profile = "ocp";
  if (!uses_policy(s_.kind)) s_.policy = tensor_base(s_.profile, s_.rule);
  profile_ = uses_profile(s_.kind) ? s_.profile : std::string("-");
  wide_ = profile_by_name(s_.profile).wide;
  // The reference validates everything else (element format, rule, q_max, policy, fused
  // with sr_variant=add or daz, group compatibility) and names the problem.
  const Quantizer qz(quantize_spec(), s_.rows, s_.cols);
  qmax_ = qz.q_max();
  sr_ = uses_policy(s_.kind) && qz.uses_random();
  s_.policy = qz.spec().policy;  // resolved (§20.2)
  text_ = spec_text(s_);

  Layout& L = layout_;
  L.n = s_.rows * s_.cols;
  L.nb = grid_.count();
  L.ng = ggrid_.count();
  const bool gam = s_.rule == ScaleRule::gam, nv = s_.rule == ScaleRule::nvfp4;
  int at = 0;
  auto put = [&](int& field, std::size_t words) {
    field = at;
    at += static_cast<int>(words);
  };
  if (s_.kind == Kind::dequantize) {
    put(L.codes_in, L.n);
    put(L.scales_in, L.nb);
    if (gam) put(L.gm_in, L.ng);
    if (nv) put(L.tamax_in, 1);
  } else {
    put(L.x, L.n);
    if (sr_) put(L.r, L.n);
  }
  L.in = at;
  at = 0;
  switch (s_.kind) {
    case Kind::scale:
      put(L.amax, L.nb);
      put(L.scales, L.nb);
      if (gam) put(L.gm, L.ng);
      if (nv) put(L.tamax, 1);
      break;
    case Kind::quantize:
      put(L.codes, L.n);
      put(L.scales, L.nb);
      if (gam) put(L.gm, L.ng);
      if (nv) put(L.tamax, 1);
      put(L.counts, 4);
      break;
    case Kind::dequantize: put(L.y, L.n); break;
    case Kind::fake_quant:
      put(L.y, L.n);
      put(L.counts, 4);
      break;
  }
  L.out = at;

  // §31.5 the C description
  numref_tensor_op& c = cop_;
  c.struct_size = sizeof(numref_tensor_op);
  c.source = c_format(*s_.src);
  c.element = c_format(*s_.elem);
  c.rule = c_rule(s_.rule);
  c.rows = static_cast<std::uint32_t>(s_.rows);
  c.cols = static_cast<std::uint32_t>(s_.cols);
  c.row_stride = s_.transpose ? 1 : static_cast<std::int64_t>(s_.cols);
  c.col_stride = s_.transpose ? static_cast<std::int64_t>(s_.rows) : 1;
  c.block_rows = static_cast<std::uint32_t>(grid_.block_rows());
  c.block_cols = static_cast<std::uint32_t>(grid_.block_cols());
  c.n_blocks = static_cast<std::uint32_t>(grid_.count());
  c.group_rows = static_cast<std::uint32_t>(ggrid_.block_rows());
  c.group_cols = static_cast<std::uint32_t>(ggrid_.block_cols());
  c.n_groups = static_cast<std::uint32_t>(ggrid_.count());
  c.q_max = rn32(qmax_);
  c.apply = s_.apply == ScaleApply::fused ? NUMREF_APPLY_FUSED : NUMREF_APPLY_RN32;
  c.dequant = s_.dequant == DequantOp::reciprocal ? NUMREF_DEQUANT_RECIPROCAL : NUMREF_DEQUANT_DIVIDE;
  c.amax_nan = s_.amax.nan == AmaxNan::ignore ? NUMREF_AMAX_IGNORE : NUMREF_AMAX_PROPAGATE;
  c.amax_inf = s_.amax.inf == AmaxInf::ignore ? NUMREF_AMAX_IGNORE : NUMREF_AMAX_PROPAGATE;
  c.out_format = c_format(*s_.out);
  c.policy = to_c_policy(s_.policy, *s_.elem, policy_text_);
  c.wide = to_c_policy(wide_, format(FormatId::f32), wide_text_);
  c.text = text_.c_str();
}

QuantizeSpec TensorParams::quantize_spec() const {
  QuantizeSpec q;
  q.element = s_.elem;
  q.partition = s_.partition;
  q.group = s_.rule == ScaleRule::gam ? s_.group : Partition::tensor();
  q.rule = s_.rule;
  q.amax = s_.amax;
  q.policy = s_.policy;
  q.wide = profile_by_name(s_.profile).wide;
  q.apply = s_.apply;
  q.dequant = s_.dequant;
  return q;
}

std::size_t TensorParams::view_index_of_mem(std::size_t k) const {
  if (!s_.transpose) return k;
  // memory is cols x rows: position k = j * rows + i holds view element (i, j)
  const std::size_t j = k / s_.rows, i = k % s_.rows;
  return i * s_.cols + j;
}

const Family& TensorParams::family() const { return tensor::family(s_.kind); }

std::string TensorParams::formats() const {
  if (s_.kind == Kind::dequantize) return std::string(s_.elem->name) + " f32";
  return std::string(s_.src->name) + " " + std::string(s_.elem->name);
}

std::string TensorParams::selector_text() const { return formats() + " " + std::string(to_string(s_.rule)); }

std::string TensorParams::overrides() const {
  if (!uses_policy(s_.kind)) return {};
  const auto a = knobs(tensor_base(s_.profile, s_.rule)), b = knobs(s_.policy);
  std::string s;
  for (const auto& kv : b) {
    const auto it = std::find_if(a.begin(), a.end(), [&](const auto& x) { return x.first == kv.first; });
    if (it == a.end() || it->second != kv.second) {
      if (!s.empty()) s += ' ';
      s += kv.first + "=" + kv.second;
    }
  }
  return s;
}

std::string TensorParams::label() const {
  std::string s = s_.kind == Kind::dequantize ? std::string(s_.elem->name) + "->f32"
                                              : std::string(s_.src->name) + "->" + std::string(s_.elem->name);
  if (s_.kind == Kind::fake_quant) s += "->" + std::string(s_.out->name);
  s += " " + std::to_string(s_.rows) + "x" + std::to_string(s_.cols) + (s_.transpose ? "^T" : "");
  s += " " + part_text(s_.partition) + " " + std::string(to_string(s_.rule));
  if (s_.rule == ScaleRule::gam) s += " group=" + part_text(s_.group);
  if (uses_profile(s_.kind)) s += " " + s_.profile;
  if (uses_amax(s_.kind)) {
    if (s_.amax.nan == AmaxNan::ignore) s += " amax_nan=ignore";
    if (s_.amax.inf == AmaxInf::ignore) s += " amax_inf=ignore";
  }
  if (uses_apply(s_.kind) && s_.apply != (is_int8(s_.rule) ? ScaleApply::fused : ScaleApply::rn32))
    s += " apply=" + std::string(to_string(s_.apply));
  if (uses_dequant(s_.kind) && s_.dequant != DequantOp::divide) s += " dequant=" + std::string(to_string(s_.dequant));
  const std::string o = overrides();
  if (!o.empty()) s += " " + o;
  return s;
}

std::string TensorParams::clause() const {
  std::string c = "§12 §13";
  switch (s_.rule) {
    case ScaleRule::amax:
    case ScaleRule::amax_recip:
    case ScaleRule::amax_dequant: c += " §14"; break;
    case ScaleRule::pow2: c += " §14 §15"; break;
    case ScaleRule::gam: c += " §14 §17"; break;
    case ScaleRule::nvfp4: c += " §18"; break;
    case ScaleRule::int8:
    case ScaleRule::int8_127_5: c += " §14.3 §20"; break;
    default: c += " §16"; break;
  }
  switch (s_.kind) {
    case Kind::scale: break;
    case Kind::quantize: c += " §19.2 §19.4 §19.5 §11"; break;
    case Kind::dequantize: c += " §19.3"; break;
    case Kind::fake_quant: c += " §19.2 §19.3 §19.6 §11"; break;
  }
  if (sr_) c += " §5";
  return c;
}

// ---- reference --------------------------------------------------------------------------------

namespace {
// The x words of a case in the source's storage width (the layout a TensorView reads).
void pack(const Format& f, const std::uint32_t* w, std::size_t n, std::vector<unsigned char>& buf) {
  const std::size_t b = storage_bytes(f);
  buf.resize(n * b);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t v = w[k];
    if (b == 1) buf[k] = static_cast<unsigned char>(v);
    else if (b == 2) {
      const std::uint16_t h = static_cast<std::uint16_t>(v);
      std::memcpy(&buf[2 * k], &h, 2);
    } else {
      std::memcpy(&buf[4 * k], &v, 4);
    }
  }
}
}  // namespace

void TensorParams::reference(const std::uint32_t* in, std::uint32_t* out) const {
  const Layout& L = layout_;
  const QuantizeSpec spec = quantize_spec();
  if (s_.kind == Kind::dequantize) {
    ScaleMeta m;
    m.rule = s_.rule;
    m.element = s_.elem;
    m.rows = s_.rows;
    m.cols = s_.cols;
    m.partition = s_.partition;
    m.group = s_.rule == ScaleRule::gam ? s_.group : Partition::tensor();
    m.q_max = qmax_;
    m.dequant = s_.dequant;
    m.wide = spec.wide;
    m.scales.assign(in + L.scales_in, in + L.scales_in + static_cast<std::ptrdiff_t>(L.nb));
    if (L.gm_in >= 0) m.group_mantissa.assign(in + L.gm_in, in + L.gm_in + static_cast<std::ptrdiff_t>(L.ng));
    if (L.tamax_in >= 0) m.tensor_amax = in[L.tamax_in];
    std::vector<std::uint8_t> codes(L.n);
    for (std::size_t k = 0; k < L.n; ++k) codes[k] = static_cast<std::uint8_t>(in[static_cast<std::size_t>(L.codes_in) + k]);
    dequantize(codes, m, std::span<std::uint32_t>(out + L.y, L.n));
    return;
  }
  std::vector<unsigned char> buf;
  pack(*s_.src, in + L.x, L.n, buf);
  const TensorView view(*s_.src, buf.data(), s_.rows, s_.cols, static_cast<std::ptrdiff_t>(cop_.row_stride),
                        static_cast<std::ptrdiff_t>(cop_.col_stride));
  const std::span<const std::uint32_t> random = sr_ ? std::span<const std::uint32_t>(in + L.r, L.n)
                                                   : std::span<const std::uint32_t>();
  auto put_counts = [&](const QuantizeStats& st) {
    out[L.counts + 0] = static_cast<std::uint32_t>(st.saturated);
    out[L.counts + 1] = static_cast<std::uint32_t>(st.flushed);
    out[L.counts + 2] = static_cast<std::uint32_t>(st.nan);
    out[L.counts + 3] = static_cast<std::uint32_t>(st.inf);
  };
  switch (s_.kind) {
    case Kind::scale: {
      Quantizer qz(spec, s_.rows, s_.cols);
      std::vector<Amax> a(L.nb);
      for (std::size_t b = 0; b < L.nb; ++b) a[b] = qz.amax(view, b);
      qz.prepare(a);
      for (std::size_t b = 0; b < L.nb; ++b) {
        out[static_cast<std::size_t>(L.amax) + b] = a[b].f32;
        out[static_cast<std::size_t>(L.scales) + b] = qz.block_scale(b, a[b]).stored;
      }
      if (L.gm >= 0)
        for (std::size_t g = 0; g < L.ng; ++g) out[static_cast<std::size_t>(L.gm) + g] = qz.groups()[g].m_g;
      if (L.tamax >= 0) out[L.tamax] = qz.tensor_amax().f32;
      return;
    }
    case Kind::quantize: {
      std::vector<std::uint8_t> codes(L.n);
      const QuantizeResult res = quantize(view, spec, codes, random);
      for (std::size_t k = 0; k < L.n; ++k) out[static_cast<std::size_t>(L.codes) + k] = codes[k];
      std::copy(res.meta.scales.begin(), res.meta.scales.end(), out + L.scales);
      if (L.gm >= 0) std::copy(res.meta.group_mantissa.begin(), res.meta.group_mantissa.end(), out + L.gm);
      if (L.tamax >= 0) out[L.tamax] = res.meta.tensor_amax;
      put_counts(res.total);
      return;
    }
    case Kind::fake_quant: {
      const QuantizeStats st = fake_quantize(view, spec, *s_.out, std::span<std::uint32_t>(out + L.y, L.n), random);
      put_counts(st);
      return;
    }
    case Kind::dequantize: break;
  }
}

void TensorParams::expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const {
  for (std::size_t i = 0; i < n; ++i)
    reference(in + i * static_cast<std::size_t>(layout_.in), out + i * static_cast<std::size_t>(layout_.out));
}

// ---- C ABI (§31.5) ----------------------------------------------------------------------------

namespace {
template <typename Fn>
bool has_entry(const numref_backend& b, std::size_t offset, Fn fn) {
  return b.struct_size >= offset + sizeof(fn) && fn != nullptr;
}
}  // namespace

bool TensorParams::plugin_supported(const numref_backend& b) const {
  if (!has_entry(b, offsetof(numref_backend, tensor_supported), b.tensor_supported)) return false;
  bool entry = false;
  std::uint32_t fam = 0;
  switch (s_.kind) {
    case Kind::scale: entry = has_entry(b, offsetof(numref_backend, scale), b.scale); fam = NUMREF_TENSOR_SCALE; break;
    case Kind::quantize:
      entry = has_entry(b, offsetof(numref_backend, quantize), b.quantize);
      fam = NUMREF_TENSOR_QUANTIZE;
      break;
    case Kind::dequantize:
      entry = has_entry(b, offsetof(numref_backend, dequantize), b.dequantize);
      fam = NUMREF_TENSOR_DEQUANTIZE;
      break;
    case Kind::fake_quant:
      entry = has_entry(b, offsetof(numref_backend, fake_quant), b.fake_quant);
      fam = NUMREF_TENSOR_FAKE_QUANT;
      break;
  }
  return entry && b.tensor_supported(b.ctx, fam, &cop_) == 1;
}

bool TensorParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                               bool want_counts, std::string& error) const {
  bool present = false;
  switch (s_.kind) {
    case Kind::scale: present = has_entry(b, offsetof(numref_backend, scale), b.scale); break;
    case Kind::quantize: present = has_entry(b, offsetof(numref_backend, quantize), b.quantize); break;
    case Kind::dequantize: present = has_entry(b, offsetof(numref_backend, dequantize), b.dequantize); break;
    case Kind::fake_quant: present = has_entry(b, offsetof(numref_backend, fake_quant), b.fake_quant); break;
  }
  if (!present) {
    error = "the backend has no " + std::string(kind_name(s_.kind)) + " entry point";
    return false;
  }
  const Layout& L = layout_;
  std::vector<unsigned char> xbuf;
  std::vector<std::uint8_t> codes(L.n);
  std::uint64_t counts[4];
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* ci = in + i * static_cast<std::size_t>(L.in);
    std::uint32_t* co = out + i * static_cast<std::size_t>(L.out);
    std::int64_t got = -1;
    const char* entry = "";
    if (L.x >= 0) pack(*s_.src, ci + L.x, L.n, xbuf);
    const std::uint32_t* r = L.r >= 0 ? ci + L.r : nullptr;
    std::uint64_t* cnt = want_counts ? counts : nullptr;
    std::fill(std::begin(counts), std::end(counts), 0);
    std::fill(codes.begin(), codes.end(), 0);
    switch (s_.kind) {
      case Kind::scale:
        entry = "scale";
        got = b.scale(b.ctx, &cop_, xbuf.data(), co + L.amax, co + L.scales, L.gm >= 0 ? co + L.gm : nullptr,
                      L.tamax >= 0 ? co + L.tamax : nullptr);
        break;
      case Kind::quantize:
        entry = "quantize";
        got = b.quantize(b.ctx, &cop_, xbuf.data(), r, codes.data(), co + L.scales, L.gm >= 0 ? co + L.gm : nullptr,
                         L.tamax >= 0 ? co + L.tamax : nullptr, cnt);
        for (std::size_t k = 0; k < L.n; ++k) co[static_cast<std::size_t>(L.codes) + k] = codes[k];
        break;
      case Kind::dequantize:
        entry = "dequantize";
        for (std::size_t k = 0; k < L.n; ++k) codes[k] = static_cast<std::uint8_t>(ci[static_cast<std::size_t>(L.codes_in) + k]);
        got = b.dequantize(b.ctx, &cop_, codes.data(), ci + L.scales_in, L.gm_in >= 0 ? ci + L.gm_in : nullptr,
                           L.tamax_in >= 0 ? ci + L.tamax_in : nullptr, co + L.y);
        break;
      case Kind::fake_quant:
        entry = "fake_quant";
        got = b.fake_quant(b.ctx, &cop_, xbuf.data(), r, co + L.y, cnt);
        break;
    }
    if (got < 0) {
      const char* m = b.last_error ? b.last_error(b.ctx) : nullptr;
      error = std::string(entry) + " returned " + std::to_string(got) + (m ? std::string(": ") + m : std::string());
      return false;
    }
    if (static_cast<std::uint64_t>(got) != L.n) {
      error = std::string(entry) + " returned " + std::to_string(got) + " results for a batch of " + std::to_string(L.n) +
              " elements (one tensor)";
      return false;
    }
    if (L.counts >= 0)
      for (int k = 0; k < 4; ++k)
        co[L.counts + k] = want_counts ? static_cast<std::uint32_t>(std::min<std::uint64_t>(counts[k], 0xFFFFFFFEu)) : kNoCounts;
  }
  return true;
}

// ---- tensor text ----------------------------------------------------------------------------------

void append_grid(std::string& s, const std::uint32_t* w, std::size_t rows, std::size_t cols, int digits) {
  for (std::size_t i = 0; i < rows; ++i) {
    if (i) s += '/';
    for (std::size_t j = 0; j < cols; ++j) {
      if (j) s += ',';
      append_hex(s, w[i * cols + j], digits);
    }
  }
}

std::string parse_grid(std::string_view text, std::size_t rows, std::size_t cols, int digits, std::uint64_t limit,
                       bool strict, std::uint32_t* out) {
  std::size_t k = 0, row = 0, col = 0, pos = 0;
  const std::size_t total = rows * cols;
  while (true) {
    std::size_t e = pos;
    while (e < text.size() && text[e] != ',' && text[e] != '/') ++e;
    const std::string_view tok = text.substr(pos, e - pos);
    if (k >= total) return "more than " + std::to_string(total) + " values";
    if (digits > 0 ? static_cast<int>(tok.size()) != digits : (tok.empty() || tok.size() > 8))
      return "value '" + std::string(tok.substr(0, 20)) + "' is not " +
             (digits > 0 ? std::to_string(digits) + " hex digits" : std::string("hex"));
    const auto v = parse_hex(tok);
    if (!v) return "value '" + std::string(tok.substr(0, 20)) + "' is not hex";
    if (*v > limit) return "value '" + std::string(tok) + "' is out of range";
    out[k++] = static_cast<std::uint32_t>(*v);
    ++col;
    if (e >= text.size()) break;
    if (text[e] == '/') {
      if (!strict) return "'/' in a flat list";
      if (col != cols) return "row " + std::to_string(row) + " has " + std::to_string(col) + " values, expected " + std::to_string(cols);
      ++row;
      col = 0;
    } else if (strict && col == cols) {
      return "row " + std::to_string(row) + " has more than " + std::to_string(cols) + " values (rows are separated by '/')";
    }
    pos = e + 1;
  }
  if (k != total) return std::to_string(k) + " values, expected " + std::to_string(total) + " (" + std::to_string(rows) + "x" + std::to_string(cols) + ")";
  return {};
}

void append_counts(std::string& s, const std::uint32_t* c) {
  for (int k = 0; k < 4; ++k) {
    if (k) s += ',';
    s += std::to_string(c[k]);
  }
}

std::string parse_counts(std::string_view text, std::uint32_t* out) {
  std::size_t pos = 0;
  for (int k = 0; k < 4; ++k) {
    std::size_t e = pos;
    while (e < text.size() && text[e] != ',') ++e;
    const std::string_view tok = text.substr(pos, e - pos);
    if (tok.empty() || tok.size() > 9 || tok.find_first_not_of("0123456789") != std::string_view::npos)
      return "counts '" + std::string(text.substr(0, 40)) + "' are not four decimal numbers s,f,n,i";
    out[k] = static_cast<std::uint32_t>(std::stoul(std::string(tok)));
    if ((k < 3) != (e < text.size())) return "counts '" + std::string(text.substr(0, 40)) + "' are not four decimal numbers s,f,n,i";
    pos = e + 1;
  }
  return {};
}

// ---- pipe protocol (§32.6) ----------------------------------------------------------------------

void TensorParams::pipe_case(CaseView in, std::string& line) const {
  line.clear();
  const Layout& L = layout_;
  const std::uint32_t* w = in.data();
  if (s_.kind == Kind::dequantize) {
    append_grid(line, w + L.codes_in, 1, L.n, code_digits(*s_.elem));
    line += ' ';
    append_grid(line, w + L.scales_in, 1, L.nb, code_digits(scale_fmt()));
    if (L.gm_in >= 0) {
      line += ' ';
      append_grid(line, w + L.gm_in, 1, L.ng, 6);
    }
    if (L.tamax_in >= 0) {
      line += ' ';
      append_hex(line, w[L.tamax_in], 8);
    }
    return;
  }
  append_grid(line, w + L.x, 1, L.n, code_digits(*s_.src));
  if (L.r >= 0) {
    line += ' ';
    append_grid(line, w + L.r, 1, L.n, 8);
  }
}

std::string TensorParams::pipe_result(std::string_view line, bool with_counts, std::uint32_t* out, std::size_t n,
                                      std::size_t i) const {
  (void)n;
  const Layout& L = layout_;
  std::uint32_t* o = out + i * static_cast<std::size_t>(L.out);
  const auto f = split_ws(line);
  struct Field {
    const char* name;
    int at;
    std::size_t count;
  };
  std::vector<Field> want;
  switch (s_.kind) {
    case Kind::scale:
      want = {{"amax", L.amax, L.nb}, {"scales", L.scales, L.nb}};
      break;
    case Kind::quantize: want = {{"codes", L.codes, L.n}, {"scales", L.scales, L.nb}}; break;
    case Kind::dequantize:
    case Kind::fake_quant: want = {{"values", L.y, L.n}}; break;
  }
  if (L.gm >= 0) want.push_back({"group mantissas", L.gm, L.ng});
  if (L.tamax >= 0) want.push_back({"tensor amax", L.tamax, 1});
  const bool counts = L.counts >= 0 && with_counts;
  const std::size_t nf = want.size() + (counts ? 1 : 0);
  if (f.size() != nf) {
    std::string names;
    for (const auto& w : want) names += std::string(names.empty() ? "" : " ") + "<" + w.name + ">";
    if (counts) names += " <s,f,n,i>";
    return "expected " + std::to_string(nf) + " fields (" + names + "), got " + std::to_string(f.size());
  }
  for (std::size_t k = 0; k < want.size(); ++k) {
    const std::string err = parse_grid(f[k], 1, want[k].count, 0, 0xFFFFFFFFull, false, o + want[k].at);
    if (!err.empty()) return std::string(want[k].name) + ": " + err;
  }
  if (L.counts >= 0) {
    if (counts) {
      const std::string err = parse_counts(f.back(), o + L.counts);
      if (!err.empty()) return err;
    } else {
      for (int k = 0; k < 4; ++k) o[L.counts + k] = kNoCounts;
    }
  }
  return {};
}

}  // namespace numref::conform::tensor
