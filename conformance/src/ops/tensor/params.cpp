// numref conformance — tensor suites: parameters, schema, reference results and C ABI
// marshalling.                                                spec §12–§20, §32.5, §34.8
#include <algorithm>
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
bool uses_recipe(Kind k) { return k != Kind::dequantize; }  // §19.8 the knobs act on amax, scale, codes

ScaleApply default_apply(ScaleRule r) { return rule_info(r).apply; }  // §19.2

const char* amax_word(bool ignore) { return ignore ? "ignore" : "propagate"; }
bool parse_amax_word(const std::string& key, const std::string& v) {
  if (v != "propagate" && v != "ignore") throw std::invalid_argument(key + "='" + v + "'");
  return v == "ignore";
}

}  // namespace

bool has_policy(Kind k) { return k == Kind::quantize || k == Kind::fake_quant; }

Policy tensor_base(const std::string& profile, ScaleRule rule) {
  const Profile& pr = kit::profile_by_name(profile);
  Policy p = pr.narrow;
  p.overflow = Overflow::saturate;                                 // §19.1
  if (const auto r = rule_info(rule).int_range) p.int_range = *r;  // §20.2
  return p;
}

RecipeKnobs recipe_base(const std::string& profile) {
  RecipeKnobs k;
  const Profile& pr = kit::profile_by_name(profile);
  if (pr.recipe)
    if (const auto err = apply_recipe_settings(k, pr.recipe->knobs))
      throw std::logic_error("profile " + profile + ": " + *err);
  return k;
}

namespace {
// §19.8 The recipe knobs are part of the text when they are not numref's rules or when the
// profile has a recipe (so that a case that sets a recipe profile's knobs back is written out).
bool prints_recipe(const TensorParams::Spec& s) {
  return uses_recipe(s.kind) && (!(s.recipe == RecipeKnobs{}) || kit::profile_by_name(s.profile).recipe);
}
std::string qmax_text(const Exact& q) { return "0x" + hex(rn32(q), 8); }
}  // namespace

std::string spec_text(const TensorParams::Spec& s) {
  std::string t;
  if (uses_src(s.kind)) kit::put(t, "src", s.src->name);
  kit::put(t, "elem", s.elem->name);
  kit::put(t, "shape", std::to_string(s.rows) + "x" + std::to_string(s.cols));
  kit::put(t, "partition", to_string(s.partition));
  if (uses_src(s.kind)) kit::put(t, "transpose", s.transpose ? "1" : "0");
  kit::put(t, "rule", to_string(s.rule));
  if (has_group_mantissa(s.rule)) kit::put(t, "group", to_string(s.group));
  if (uses_amax(s.kind)) {
    kit::put(t, "amax_nan", amax_word(s.amax.nan == AmaxNan::ignore));
    kit::put(t, "amax_inf", amax_word(s.amax.inf == AmaxInf::ignore));
  }
  if (s.q_max) kit::put(t, "q_max", qmax_text(*s.q_max));
  if (prints_recipe(s)) {
    t += ' ';
    t += describe(s.recipe);
  }
  if (uses_apply(s.kind)) kit::put(t, "apply", to_string(s.apply));
  if (uses_dequant(s.kind)) kit::put(t, "dequant", to_string(s.dequant));
  if (uses_out(s.kind)) kit::put(t, "out", s.out->name);
  if (uses_profile(s.kind)) kit::put(t, "profile", s.profile);
  if (has_policy(s.kind)) {
    t += ' ';
    t += describe(s.policy);
  }
  return t;
}

TensorParamsPtr parse(Kind k, std::string_view text) {
  TensorParams::Spec s;
  s.kind = k;
  kit::KeyValues kv(kind_name(k), text, has_policy(k));
  auto fmt = [&](const std::string& name, const char* what) -> const Format* {
    const auto id = find_format(name);
    if (!id) throw std::invalid_argument(std::string(what) + ": unknown format '" + name + "'");
    return &format(*id);
  };
  if (auto v = kv.take("src", uses_src(k), true)) s.src = fmt(*v, "src");
  s.elem = fmt(*kv.take("elem", true, true), "elem");
  std::tie(s.rows, s.cols) = kit::shape(*kv.take("shape", true, true));
  s.partition = kit::partition(*kv.take("partition", true, true), "partition");
  if (auto v = kv.take("transpose", uses_src(k))) s.transpose = kit::flag_value("transpose", *v);
  {
    const std::string v = *kv.take("rule", true, true);
    const auto r = parse_scale_rule(v);
    if (!r) throw std::invalid_argument("unknown scale rule '" + v + "'");
    s.rule = *r;
  }
  if (auto v = kv.take("group", has_group_mantissa(s.rule))) s.group = kit::partition(*v, "group");
  if (auto v = kv.take("amax_nan", uses_amax(k)))
    s.amax.nan = parse_amax_word("amax_nan", *v) ? AmaxNan::ignore : AmaxNan::propagate;
  if (auto v = kv.take("amax_inf", uses_amax(k)))
    s.amax.inf = parse_amax_word("amax_inf", *v) ? AmaxInf::ignore : AmaxInf::propagate;
  s.apply = default_apply(s.rule);
  if (auto v = kv.take("apply", uses_apply(k))) {
    const auto a = parse_scale_apply(*v);
    if (!a) throw std::invalid_argument("apply='" + *v + "', expected rn32 or fused");
    s.apply = *a;
  }
  if (auto v = kv.take("dequant", uses_dequant(k))) {
    const auto d = parse_dequant_op(*v);
    if (!d) throw std::invalid_argument("dequant='" + *v + "', expected divide or reciprocal");
    s.dequant = *d;
  }
  if (auto v = kv.take("out", uses_out(k))) s.out = fmt(*v, "out");
  if (auto v = kv.take("profile", uses_profile(k), true)) s.profile = *v;
  if (auto v = kv.take("q_max")) {  // §14.4 an explicit q_max: the binary32 code in hex
    const auto code =
        v->size() == 10 && v->starts_with("0x") ? parse_hex(std::string_view(*v).substr(2)) : std::nullopt;
    if (!code || !f32_is_finite(static_cast<std::uint32_t>(*code)))
      throw std::invalid_argument("q_max='" + *v + "' is not the hex code of a finite binary32 value (0x43E00000)");
    s.q_max = exact_f32(static_cast<std::uint32_t>(*code));
  }
  {  // §19.8 recipe knobs on top of the profile's recipe
    std::string settings;
    std::apply(
        [&](const auto&... row) {
          (
              [&] {
                if (auto v = kv.take(row.key, uses_recipe(k)))
                  settings += (settings.empty() ? "" : " ") + std::string(row.key) + "=" + *v;
              }(),
              ...);
        },
        kRecipeKnobs);
    s.recipe = uses_profile(k) ? recipe_base(s.profile) : RecipeKnobs{};
    if (auto err = apply_recipe_settings(s.recipe, settings)) throw std::invalid_argument(*err);
  }
  kv.finish();
  s.policy = tensor_base(s.profile, s.rule);
  if (auto err = apply_policy_settings(s.policy, kv.policy())) throw std::invalid_argument(*err);
  return std::make_shared<const TensorParams>(s);
}

// ---- TensorParams -------------------------------------------------------------------------------

namespace {
BlockGrid checked_grid(const TensorParams::Spec& s, const Partition& p) {
  kit::View{s.rows, s.cols, s.transpose}.check();
  return BlockGrid(s.rows, s.cols, p);
}
}  // namespace

TensorParams::TensorParams(const Spec& s)
    : Params(tensor::family(s.kind)),
      s_(s),
      view_{s.rows, s.cols, s.transpose},
      grid_(checked_grid(s, s.partition)),
      ggrid_(checked_grid(s, has_group_mantissa(s.rule) ? s.group : Partition::tensor())),
      qmax_{false, 0, 0, false} {
  if (!has_group_mantissa(s_.rule)) s_.group = Partition::tensor();
  if (uses_src(s_.kind)) {
    const std::string err = check_source_format(*s_.src);
    if (!err.empty()) throw std::invalid_argument("src: " + err);
  } else {
    s_.src = s_.elem;
    s_.transpose = false;
    view_.transpose = false;
    s_.amax = AmaxPolicy{};
  }
  if (uses_out(s_.kind) && s_.out->bits <= 8)
    throw std::invalid_argument("out: the fake-quant output must be bf16, f16 or f32, got " +
                                std::string(s_.out->name));
  if (!uses_out(s_.kind)) s_.out = &format(FormatId::bf16);
  if (!uses_dequant(s_.kind)) s_.dequant = DequantOp::divide;
  if (!uses_apply(s_.kind)) s_.apply = default_apply(s_.rule);
  if (!uses_profile(s_.kind)) s_.profile = "ocp";
  if (!has_policy(s_.kind)) s_.policy = tensor_base(s_.profile, s_.rule);
  if (!uses_recipe(s_.kind)) s_.recipe = RecipeKnobs{};
  if (s_.q_max && rn32(*s_.q_max) == rn32(rule_qmax(s_.rule, *s_.elem)))
    s_.q_max.reset();  // §14.4 the rule's own q_max is not written (one text per case)
  wide_ = kit::profile_by_name(s_.profile).wide;
  // The reference validates everything else (element format, rule, q_max, policy, fused
  // with sr_variant=add or daz, group compatibility) and names the problem.
  const Quantizer qz(quantize_spec(), s_.rows, s_.cols);
  qmax_ = qz.q_max();
  sr_ = has_policy(s_.kind) && qz.uses_random();
  s_.policy = qz.spec().policy;  // resolved (§20.2)

  Identity id;
  id.text = spec_text(s_);
  id.profile = uses_profile(s_.kind) ? s_.profile : std::string("-");
  id.formats = s_.kind == Kind::dequantize ? std::string(s_.elem->name) + " f32"
                                           : std::string(s_.src->name) + " " + std::string(s_.elem->name);
  id.selector = id.formats + " " + std::string(to_string(s_.rule));
  // label
  std::string& l = id.label;
  l = s_.kind == Kind::dequantize ? std::string(s_.elem->name) + "->f32"
                                  : std::string(s_.src->name) + "->" + std::string(s_.elem->name);
  if (s_.kind == Kind::fake_quant) l += "->" + std::string(s_.out->name);
  l += " " + view_.text() + (s_.transpose ? "^T" : "");
  l += " " + to_string(s_.partition) + " " + std::string(to_string(s_.rule));
  if (has_group_mantissa(s_.rule)) l += " group=" + to_string(s_.group);
  if (uses_profile(s_.kind)) l += " " + s_.profile;
  if (uses_amax(s_.kind)) {
    if (s_.amax.nan == AmaxNan::ignore) l += " amax_nan=ignore";
    if (s_.amax.inf == AmaxInf::ignore) l += " amax_inf=ignore";
  }
  if (uses_apply(s_.kind) && s_.apply != default_apply(s_.rule)) l += " apply=" + std::string(to_string(s_.apply));
  if (uses_dequant(s_.kind) && s_.dequant != DequantOp::divide) l += " dequant=" + std::string(to_string(s_.dequant));
  if (s_.q_max) l += " q_max=" + render_value(rn32(*s_.q_max), format(FormatId::f32));
  const std::string rchg = recipe_changes(uses_profile(s_.kind) ? recipe_base(s_.profile) : RecipeKnobs{}, s_.recipe);
  if (!rchg.empty()) l += " " + rchg;
  const std::string o = overrides();
  if (!o.empty()) l += " " + o;
  // clauses
  std::string& c = id.clause;
  c = "§12 §13";
  // the section of the rule's clause (§14.1 -> §14), after the one it builds on: the §14 FP32
  // scale (pow2, gam) or the §14.3 dequant scale (the int8 rules)
  const ScaleKind sk = scale_kind(s_.rule);
  if (sk == ScaleKind::pow2 || sk == ScaleKind::pow2_recip || sk == ScaleKind::gam)
    c += " §14";
  else if (rule_info(s_.rule).int_range)
    c += " §14.3";
  const std::string_view rc = rule_info(s_.rule).clause;
  c += " " + std::string(rc.substr(0, rc.find('.')));
  switch (s_.kind) {
    case Kind::scale: break;
    case Kind::quantize: c += " §19.2 §19.4 §19.5 §11"; break;
    case Kind::dequantize: c += " §19.3"; break;
    case Kind::fake_quant: c += " §19.2 §19.3 §19.6 §11"; break;
  }
  if (s_.q_max) c += " §14.4";
  if (!(s_.recipe == RecipeKnobs{})) c += " §19.8";
  if (sr_) c += " §5";
  set_identity(std::move(id));
  build_schema();

  // §32.5 the C description
  numref_tensor_op& co = cop_;
  co.struct_size = sizeof(numref_tensor_op);
  co.source = c_format(*s_.src);
  co.element = c_format(*s_.elem);
  co.rule = c_rule(s_.rule);
  kit::put_view(co, view_, grid_);
  co.group_rows = static_cast<std::uint32_t>(ggrid_.block_rows());
  co.group_cols = static_cast<std::uint32_t>(ggrid_.block_cols());
  co.n_groups = static_cast<std::uint32_t>(ggrid_.count());
  co.q_max = rn32(qmax_);
  co.apply = s_.apply == ScaleApply::fused ? NUMREF_APPLY_FUSED : NUMREF_APPLY_RN32;
  co.dequant = s_.dequant == DequantOp::reciprocal ? NUMREF_DEQUANT_RECIPROCAL : NUMREF_DEQUANT_DIVIDE;
  co.amax_nan = s_.amax.nan == AmaxNan::ignore ? NUMREF_AMAX_IGNORE : NUMREF_AMAX_PROPAGATE;
  co.amax_inf = s_.amax.inf == AmaxInf::ignore ? NUMREF_AMAX_IGNORE : NUMREF_AMAX_PROPAGATE;
  co.out_format = c_format(*s_.out);
  co.policy = to_c_policy(s_.policy, *s_.elem, policy_text_);
  co.wide = to_c_policy(wide_, format(FormatId::f32), wide_text_);
  co.text = text().c_str();
  // §13.8 nan_scale=all_ones_tensor acts with the `tensor` partition only, which the effective
  // block extents of the C op do not tell from one block of another partition: the C recipe
  // carries it resolved (canonical for every other partition)
  RecipeKnobs crk = s_.recipe;
  if (!(s_.partition == Partition::tensor())) crk.nan_scale = NanScale::canonical;
  co.recipe = to_c_recipe(crk, recipe_text_);
}

// §31.6 / §33.6 the columns of a case, in vector-file order.
void TensorParams::build_schema() {
  Schema& S = schema_;
  kit::tensor_case(S, s_.rows, s_.cols);
  const std::size_t R = s_.rows, C = s_.cols;
  const bool gam = scale_kind(s_.rule) == ScaleKind::gam, nv = scale_kind(s_.rule) == ScaleKind::nvfp4;
  const Format& f32 = format(FormatId::f32);
  auto group_mantissas = [&](Role role) {
    // §17.1 23 bits
    return kit::named(kit::words("gm", role, 6, 0x7FFFFF, ggrid_.grid_rows(), ggrid_.grid_cols(), Place::groups),
                      "scale/group-mantissa", "group mantissas");
  };
  auto tensor_amax = [&](Role role) {
    Column c = kit::codes("tamax", role, f32, 1, 1, Place::whole);
    c.what = "tensor amaxes";
    return c;
  };
  if (s_.kind == Kind::dequantize) {
    Column codes = kit::codes("codes", Role::in, *s_.elem, R, C, Place::view);
    S.add(codes);
    S.add(kit::scales("scales", Role::in, scale_fmt(), grid_));
    if (gam) S.add(group_mantissas(Role::in));
    if (nv) S.add(tensor_amax(Role::in));
  } else {
    S.add(kit::codes("x", Role::in, *s_.src, view_.mem_rows(), view_.mem_cols(), Place::memory));
    if (sr_) S.add(kit::sr_random(s_.policy.sr_bits, R, C, Place::view));  // §33.6
  }
  if (s_.kind == Kind::scale) {
    Column a = kit::codes("amax", Role::out, f32, grid_.grid_rows(), grid_.grid_cols(), Place::blocks);
    a.what = "amaxes";
    S.add(a);
  }
  if (s_.kind == Kind::quantize) {
    Column c = kit::codes("codes", Role::out, *s_.elem, R, C, Place::view);
    c.any_nan = true;
    S.add(c);
  }
  if (s_.kind == Kind::scale || s_.kind == Kind::quantize) {
    S.add(kit::scales("scales", Role::out, scale_fmt(), grid_));
    if (gam) S.add(group_mantissas(Role::out));
    if (nv) S.add(tensor_amax(Role::out));
  }
  if (s_.kind == Kind::dequantize || s_.kind == Kind::fake_quant) {
    Column y = kit::codes("y", Role::out, s_.kind == Kind::fake_quant ? *s_.out : f32, R, C, Place::view);
    y.any_nan = true;
    y.what = "values";
    S.add(y);
  }
  if (s_.kind == Kind::quantize || s_.kind == Kind::fake_quant) {
    Column c;  // §19.5 saturated, flushed, nan, inf
    c.name = "counts";
    c.role = Role::opt;
    c.cap = NUMREF_CAP_COUNTS;
    c.notation = Notation::decimal;
    c.cols = 4;
    S.add(c);
  }
  // the word offsets of the columns
  Layout& L = layout_;
  L.n = R * C;
  L.nb = grid_.count();
  L.ng = ggrid_.count();
  // clang-format off
  static constexpr kit::ColumnAt<Layout> kAt[] = {
      {&Layout::x, "x", false}, {&Layout::r, "r", false}, {&Layout::codes_in, "codes", false},
      {&Layout::scales_in, "scales", false}, {&Layout::gm_in, "gm", false}, {&Layout::tamax_in, "tamax", false},
      {&Layout::amax, "amax", true}, {&Layout::codes, "codes", true}, {&Layout::scales, "scales", true},
      {&Layout::gm, "gm", true}, {&Layout::tamax, "tamax", true}, {&Layout::y, "y", true},
      {&Layout::counts, "counts", true}};
  // clang-format on
  kit::fill_layout(L, S, kAt);
  L.in = S.in;
  L.out = S.out;
}

QuantizeSpec TensorParams::quantize_spec() const {
  QuantizeSpec q;
  q.element = s_.elem;
  q.partition = s_.partition;
  q.group = scale_kind(s_.rule) == ScaleKind::gam ? s_.group : Partition::tensor();
  q.rule = s_.rule;
  q.amax = s_.amax;
  q.policy = s_.policy;
  q.wide = kit::profile_by_name(s_.profile).wide;
  q.apply = s_.apply;
  q.dequant = s_.dequant;
  q.q_max = s_.q_max;
  q.recipe = s_.recipe;
  q.source = s_.src;  // §14.5 scale_round=source
  return q;
}

std::string TensorParams::overrides() const {
  if (!has_policy(s_.kind)) return {};
  return kit::policy_overrides(tensor_base(s_.profile, s_.rule), s_.policy);
}

ScaleMeta TensorParams::dequant_meta(const std::uint32_t* in) const {
  const Layout& L = layout_;
  ScaleMeta m;
  m.rule = s_.rule;
  m.element = s_.elem;
  m.rows = s_.rows;
  m.cols = s_.cols;
  m.partition = s_.partition;
  m.group = scale_kind(s_.rule) == ScaleKind::gam ? s_.group : Partition::tensor();
  m.q_max = qmax_;
  m.dequant = s_.dequant;
  m.wide = kit::profile_by_name(s_.profile).wide;
  m.scales.assign(in + L.scales_in, in + L.scales_in + static_cast<std::ptrdiff_t>(L.nb));
  if (L.gm_in >= 0) m.group_mantissa.assign(in + L.gm_in, in + L.gm_in + static_cast<std::ptrdiff_t>(L.ng));
  if (L.tamax_in >= 0) m.tensor_amax = in[L.tamax_in];
  return m;
}

// ---- reference --------------------------------------------------------------------------------

void TensorParams::reference(const std::uint32_t* in, std::uint32_t* out) const {
  const Layout& L = layout_;
  const QuantizeSpec spec = quantize_spec();
  if (s_.kind == Kind::dequantize) {
    const ScaleMeta m = dequant_meta(in);
    std::vector<std::uint8_t> codes(L.n);
    for (std::size_t k = 0; k < L.n; ++k)
      codes[k] = static_cast<std::uint8_t>(in[static_cast<std::size_t>(L.codes_in) + k]);
    dequantize(codes, m, std::span<std::uint32_t>(out + L.y, L.n));
    return;
  }
  std::vector<unsigned char> buf;
  kit::pack(*s_.src, in + L.x, L.n, buf);
  const TensorView view(*s_.src, buf.data(), s_.rows, s_.cols, static_cast<std::ptrdiff_t>(cop_.row_stride),
                        static_cast<std::ptrdiff_t>(cop_.col_stride));
  const std::span<const std::uint32_t> random =
      sr_ ? std::span<const std::uint32_t>(in + L.r, L.n) : std::span<const std::uint32_t>();
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

// ---- C ABI (§32.5) ----------------------------------------------------------------------------

namespace {
// The family's entry point and NUMREF_TENSOR_* id.
bool tensor_entry(const numref_backend& b, Kind k, std::uint32_t* fam = nullptr) {
  static constexpr std::uint32_t kIds[] = {NUMREF_TENSOR_SCALE, NUMREF_TENSOR_QUANTIZE, NUMREF_TENSOR_DEQUANTIZE,
                                           NUMREF_TENSOR_FAKE_QUANT};
  if (fam) *fam = kIds[static_cast<int>(k)];
  switch (k) {
    case Kind::scale: return NUMREF_HAS_ENTRY(b, scale);
    case Kind::quantize: return NUMREF_HAS_ENTRY(b, quantize);
    case Kind::dequantize: return NUMREF_HAS_ENTRY(b, dequantize);
    case Kind::fake_quant: return NUMREF_HAS_ENTRY(b, fake_quant);
  }
  return false;
}
}  // namespace

// §32.2 the element policy, the rule, the recipe and the profile this suite passes
std::uint32_t TensorParams::abi_minor() const {
  return std::max({family().abi_minor(), conform::abi_minor(s_.policy), conform::abi_minor(s_.rule, s_.recipe),
                   abi_minor_of_profile(cop_.policy.profile)});
}

bool TensorParams::plugin_supported(const numref_backend& b) const {
  std::uint32_t fam = 0;
  if (!NUMREF_HAS_ENTRY(b, tensor_supported) || !tensor_entry(b, s_.kind, &fam)) return false;
  // §32.5 a backend that does not read op->recipe (no NUMREF_CAP_RECIPE, every 1.3 backend) is
  // not asked for a recipe: it would answer for numref's rules
  if (!(s_.recipe == RecipeKnobs{}) && !(b.caps & NUMREF_CAP_RECIPE)) return false;
  return b.tensor_supported(b.ctx, fam, &cop_) == 1;
}

bool TensorParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                               bool optional, std::string& error) const {
  if (!tensor_entry(b, s_.kind)) {
    error = "the backend has no " + std::string(kind_name(s_.kind)) + " entry point";
    return false;
  }
  const Layout& L = layout_;
  std::vector<unsigned char> xbuf;
  // §34.6 every output buffer is guarded (kit::Guarded): the backend never writes the case words
  std::vector<std::uint8_t> codes_in(L.codes_in >= 0 ? L.n : 0);
  kit::Guarded<std::uint8_t> codes("codes", s_.kind == Kind::quantize ? L.n : 0);
  kit::Guarded<std::uint64_t> counts("counts", 4);
  kit::CaseOutputs o(schema());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* ci = in + i * static_cast<std::size_t>(L.in);
    std::uint32_t* co = out + i * static_cast<std::size_t>(L.out);
    std::int64_t got = -1;
    const char* entry = "";
    if (L.x >= 0) kit::pack(*s_.src, ci + L.x, L.n, xbuf);
    const std::uint32_t* r = L.r >= 0 ? ci + L.r : nullptr;
    std::uint64_t* cnt = optional ? counts.data() : nullptr;
    counts.reset();
    codes.reset();
    o.reset();
    switch (s_.kind) {
      case Kind::scale:
        entry = "scale";
        got = b.scale(b.ctx, &cop_, xbuf.data(), o.at(L.amax), o.at(L.scales), L.gm >= 0 ? o.at(L.gm) : nullptr,
                      L.tamax >= 0 ? o.at(L.tamax) : nullptr);
        break;
      case Kind::quantize:
        entry = "quantize";
        got = b.quantize(b.ctx, &cop_, xbuf.data(), r, codes.data(), o.at(L.scales), L.gm >= 0 ? o.at(L.gm) : nullptr,
                         L.tamax >= 0 ? o.at(L.tamax) : nullptr, cnt);
        break;
      case Kind::dequantize:
        entry = "dequantize";
        for (std::size_t k = 0; k < L.n; ++k)
          codes_in[k] = static_cast<std::uint8_t>(ci[static_cast<std::size_t>(L.codes_in) + k]);
        got = b.dequantize(b.ctx, &cop_, codes_in.data(), ci + L.scales_in, L.gm_in >= 0 ? ci + L.gm_in : nullptr,
                           L.tamax_in >= 0 ? ci + L.tamax_in : nullptr, o.at(L.y));
        break;
      case Kind::fake_quant:
        entry = "fake_quant";
        got = b.fake_quant(b.ctx, &cop_, xbuf.data(), r, o.at(L.y), cnt);
        break;
    }
    if (!codes.check(entry, error) || !counts.check(entry, error) || !o.finish(entry, co, error)) return false;
    if (!kit::check_call(b, entry, got, L.n, "elements (one tensor)", error)) return false;
    if (s_.kind == Kind::quantize)
      for (std::size_t k = 0; k < L.n; ++k) co[static_cast<std::size_t>(L.codes) + k] = codes[k];
    if (L.counts >= 0)
      for (int k = 0; k < 4; ++k)
        co[L.counts + k] =
            optional ? static_cast<std::uint32_t>(std::min<std::uint64_t>(counts[k], 0xFFFFFFFEu)) : kNotReported;
  }
  return true;
}

}  // namespace numref::conform::tensor
