// numref conformance — MoR suites: parameters, schema, reference results and C ABI
// marshalling.                                      spec §21–§27, §31.7, §32.7, §33.7, §34.9
#include <algorithm>
#include <stdexcept>

#include "mor.hpp"
#include "numref/conform/abi.hpp"

namespace numref::conform::mor {

std::string_view kind_name(Kind k) { return k == Kind::tensor ? "mor" : "mor-sub"; }

namespace {

std::string reason_name(std::uint32_t r) {
  if (r > static_cast<std::uint32_t>(Reason::not_evaluated)) return "not a reason";
  return std::string(to_string(static_cast<Reason>(r)));
}
std::string type_name(std::uint32_t t) {
  if (t > static_cast<std::uint32_t>(BlockType::bf16)) return "not a block type";
  return std::string(to_string(static_cast<BlockType>(t)));
}
std::string_view recipe_name(SubtensorRecipe r) { return r == SubtensorRecipe::three_way ? "three-way" : "two-way"; }

}  // namespace

// ---- error sums (§22.3, §32.7) --------------------------------------------------------------------

void put_sum(const numref_error_sum& s, std::uint32_t* w) {
  const std::uint64_t v[9] = {s.limb[0], s.limb[1],         s.limb[2],         s.limb[3], s.limb[4],
                              s.n,       s.nonfinite_input, s.nonfinite_quant, s.zeros};
  for (int k = 0; k < 9; ++k) {
    w[2 * k] = static_cast<std::uint32_t>(v[k]);
    w[2 * k + 1] = static_cast<std::uint32_t>(v[k] >> 32);
  }
}

numref_error_sum get_sum(const std::uint32_t* w) {
  auto w64 = [&](int k) { return std::uint64_t{w[2 * k]} | (std::uint64_t{w[2 * k + 1]} << 32); };
  numref_error_sum s{};
  for (int k = 0; k < 5; ++k) s.limb[k] = w64(k);
  s.n = w64(5);
  s.nonfinite_input = w64(6);
  s.nonfinite_quant = w64(7);
  s.zeros = w64(8);
  return s;
}

// ---- parameters ---------------------------------------------------------------------------------

std::string spec_text(const MorParams::Spec& s) {
  std::string t;
  kit::put(t, "src", s.src->name);
  kit::put(t, "shape", std::to_string(s.rows) + "x" + std::to_string(s.cols));
  kit::put(t, "transpose", s.transpose ? "1" : "0");
  if (s.kind == Kind::tensor) {
    kit::put(t, "scaling", to_string(s.part));
    kit::put(t, "threshold", s.threshold.to_string());
  } else {
    kit::put(t, "blocks", to_string(s.part));
    kit::put(t, "recipe", recipe_name(s.recipe));
  }
  return t;
}

MorParamsPtr parse(Kind k, std::string_view text) {
  MorParams::Spec s;
  s.kind = k;
  kit::KeyValues kv(kind_name(k), text, false);
  {
    const std::string v = *kv.take("src", true, true);
    const auto id = find_format(v);
    if (!id) throw std::invalid_argument("src: unknown format '" + v + "'");
    s.src = &format(*id);
  }
  std::tie(s.rows, s.cols) = kit::shape(*kv.take("shape", true, true));
  if (auto v = kv.take("transpose")) s.transpose = kit::flag_value("transpose", *v);
  if (k == Kind::tensor) {  // the other kind's keys are unknown here (finish())
    s.part = kit::partition(*kv.take("scaling", true, true), "scaling");
    if (auto v = kv.take("threshold")) {
      const std::string err = Threshold::parse(*v, s.threshold);
      if (!err.empty()) throw std::invalid_argument("threshold: " + err);
    }
  } else {
    s.part = kit::partition(*kv.take("blocks", true, true), "blocks");
    if (auto v = kv.take("recipe")) {
      if (*v == "three-way")
        s.recipe = SubtensorRecipe::three_way;
      else if (*v == "two-way")
        s.recipe = SubtensorRecipe::two_way;
      else
        throw std::invalid_argument("recipe='" + *v + "', expected three-way or two-way");
    }
  }
  kv.finish();
  return std::make_shared<const MorParams>(s);
}

namespace {
BlockGrid checked_grid(const MorParams::Spec& s) {
  kit::View{s.rows, s.cols, s.transpose}.check();
  return BlockGrid(s.rows, s.cols, s.part);
}
}  // namespace

MorParams::MorParams(const Spec& s)
    : Params(mor::family(s.kind)), s_(s), view_{s.rows, s.cols, s.transpose}, grid_(checked_grid(s)) {
  if (s_.src->id != FormatId::bf16 && s_.src->id != FormatId::f16 && s_.src->id != FormatId::f32)
    throw std::invalid_argument("src: MoR takes bf16, f16 or f32 tensors (§21.1), got " + std::string(s_.src->name));
  if (s_.kind == Kind::sub)
    s_.threshold = Threshold{};
  else
    s_.recipe = SubtensorRecipe::three_way;
  const bool tensor = s_.kind == Kind::tensor;

  Identity id;
  id.text = spec_text(s_);
  id.profile = "ocp";
  id.any_profile = true;  // §26.1 / §27.1 fix the policy: every checked profile applies
  id.formats = std::string(s_.src->name) + " bf16";
  // §34.9 --ops mor:SRC:bf16:WORD — WORD is the partition without "block:" (tensor, rows, cols,
  // 128x128: a selector word cannot hold ':') for mor, the recipe for mor-sub.
  std::string part = to_string(s_.part);
  if (part.rfind("block:", 0) == 0) part = part.substr(6);
  id.selector = id.formats + " " + (tensor ? part : std::string(recipe_name(s_.recipe)));
  id.label = std::string(s_.src->name) + " " + view_.text() + (s_.transpose ? "^T" : "");
  if (tensor)
    id.label += " scaling=" + to_string(s_.part) + " threshold=" + s_.threshold.to_string();
  else
    id.label += " blocks=" + to_string(s_.part) + " " + std::string(recipe_name(s_.recipe));
  id.clause = tensor ? "§21 §22 §23 §25 §26 §17" : "§21 §22 §24 §25 §27 §17";
  set_identity(std::move(id));
  build_schema();

  // §32.7 the C description
  numref_mor_op& c = cop_;
  c.struct_size = sizeof(numref_mor_op);
  c.kind = tensor                                    ? NUMREF_MOR_TENSOR
           : s_.recipe == SubtensorRecipe::three_way ? NUMREF_MOR_THREE_WAY
                                                     : NUMREF_MOR_TWO_WAY;
  c.source = c_format(*s_.src);
  kit::put_view(c, view_, grid_);
  c.out_format = NUMREF_FMT_BF16;
  c.threshold_num = s_.threshold.num;
  c.threshold_den = s_.threshold.den;
  const QuantizeSpec q = mor_quantize_spec(format(FormatId::f8e4m3fn), s_.part);
  c.policy = to_c_policy(q.policy, format(FormatId::f8e4m3fn), policy_text_);
  c.wide = to_c_policy(q.wide, format(FormatId::bf16), wide_text_);
  c.text = text().c_str();
}

// §31.7 / §33.7 the columns of a case, in vector-file order.
void MorParams::build_schema() {
  Schema& S = schema_;
  kit::tensor_case(S, s_.rows, s_.cols);
  const Format& e8m0 = format(FormatId::f8e8m0fnu);
  auto word = [](std::string name, std::string cls, std::string what, int digits, std::uint64_t limit,
                 std::string (*decode)(std::uint32_t), std::size_t rows = 1, std::size_t cols = 1,
                 Place place = Place::whole) {
    Column c = kit::named(kit::words(std::move(name), Role::out, digits, limit, rows, cols, place), std::move(cls),
                          std::move(what));
    c.decode = decode;
    return c;
  };
  auto sum = [&](std::string name, std::string cls, std::string what, Place place) {
    Column c =
        word(std::move(name), std::move(cls), std::move(what), 16, ~0ull, nullptr,
             place == Place::blocks ? grid_.grid_rows() : 1, place == Place::blocks ? grid_.grid_cols() : 1, place);
    c.notation = Notation::sum;
    return c;
  };
  auto scales = [&](std::string name, std::string cls, std::string what) {
    return kit::named(kit::scales(std::move(name), Role::out, e8m0, grid_), std::move(cls), std::move(what));
  };
  const std::size_t gr = grid_.grid_rows(), gc = grid_.grid_cols();
  S.add(kit::codes("x", Role::in, *s_.src, view_.mem_rows(), view_.mem_cols(), Place::memory));
  if (s_.kind == Kind::tensor) {
    S.add(word("decision", "decision", "decisions", 2, 2, type_name));
    S.add(word("reason", "reason", "reasons", 2, 10, reason_name));
    Column mean = kit::codes("mean", Role::out, format(FormatId::f32), 1, 1, Place::whole);
    mean.what = "means";
    S.add(mean);
    S.add(word("gm", "group-mantissa", "group mantissas", 6, 0x7FFFFF, nullptr));
    S.add(sum("sum", "error-sum", "error sums", Place::whole));
    S.add(scales("scales", "scale", "scales"));
  } else {
    S.add(word("type", "type", "block types", 2, 2, type_name, gr, gc, Place::blocks));
    S.add(word("eq3", "eq3", "Eq. 3 reasons", 2, 10, reason_name, gr, gc, Place::blocks));
    S.add(word("eq4", "eq4", "Eq. 4 reasons", 2, 10, reason_name, gr, gc, Place::blocks));
    S.add(sum("sum4", "e4m3-sum", "E4M3 error sums", Place::blocks));
    S.add(sum("sum5", "e5m2-sum", "E5M2 error sums", Place::blocks));
    S.add(scales("scales4", "e4m3-scale", "E4M3 scales"));
    S.add(scales("scales5", "e5m2-scale", "E5M2 scales"));
    S.add(word("gm", "group-mantissa", "group mantissas", 6, 0x7FFFFF, nullptr, 1, 2, Place::list));
    S.add(kit::named(kit::codes("y", Role::out, format(FormatId::bf16), s_.rows, s_.cols, Place::view), "output",
                     "values"));
  }
  // the word offsets of the columns
  MorLayout& L = L_;
  L.n = s_.rows * s_.cols;
  L.nb = grid_.count();
  // clang-format off
  static constexpr kit::ColumnAt<MorLayout> kAt[] = {
      {&MorLayout::x, "x", false}, {&MorLayout::decision, "decision", true}, {&MorLayout::reason, "reason", true},
      {&MorLayout::mean, "mean", true}, {&MorLayout::sum, "sum", true}, {&MorLayout::scales, "scales", true},
      {&MorLayout::type, "type", true}, {&MorLayout::eq3, "eq3", true}, {&MorLayout::eq4, "eq4", true},
      {&MorLayout::sum4, "sum4", true}, {&MorLayout::sum5, "sum5", true}, {&MorLayout::scales4, "scales4", true},
      {&MorLayout::scales5, "scales5", true}, {&MorLayout::y, "y", true}};
  // clang-format on
  kit::fill_layout(L, S, kAt);
  L.in = S.in;
  (s_.kind == Kind::tensor ? L.gm : L.gm2) = S.find("gm", true)->at;
  L.out = S.out;
}

// ---- reference ------------------------------------------------------------------------------------

void MorParams::reference(const std::uint32_t* in, std::uint32_t* out) const {
  std::vector<unsigned char> buf;
  kit::pack(*s_.src, in + L_.x, L_.n, buf);
  const TensorView view(*s_.src, buf.data(), s_.rows, s_.cols, static_cast<std::ptrdiff_t>(cop_.row_stride),
                        static_cast<std::ptrdiff_t>(cop_.col_stride));
  numref_error_sum cs{};
  if (s_.kind == Kind::tensor) {
    TensorMorSpec spec;
    spec.scaling = s_.part;
    spec.threshold = s_.threshold;
    numref_mor_result res{};
    to_c_tensor_mor(tensor_mor(view, spec), res, out + L_.scales);
    out[L_.decision] = res.decision;
    out[L_.reason] = res.reason;
    out[L_.mean] = res.mean;
    out[L_.gm] = res.group_mantissa;
    put_sum(res.error, out + L_.sum);
    return;
  }
  SubtensorMorSpec spec;
  spec.recipe = s_.recipe;
  spec.blocks = s_.part;
  const SubtensorMorResult r = subtensor_mor(view, spec);
  for (std::size_t b = 0; b < L_.nb; ++b) {
    out[static_cast<std::size_t>(L_.type) + b] = static_cast<std::uint32_t>(r.type[b]);
    out[static_cast<std::size_t>(L_.eq3) + b] = static_cast<std::uint32_t>(r.eq3[b].reason);
    out[static_cast<std::size_t>(L_.eq4) + b] = static_cast<std::uint32_t>(r.eq4[b].reason);
    to_c_error_sum(r.e4m3_sum[b], cs);
    put_sum(cs, out + L_.sum4 + b * kSumWords);
    to_c_error_sum(r.e5m2_sum[b], cs);
    put_sum(cs, out + L_.sum5 + b * kSumWords);
    out[static_cast<std::size_t>(L_.scales4) + b] = r.e4m3_scales.scales[b];
    out[static_cast<std::size_t>(L_.scales5) + b] = r.e5m2_scales.scales[b];
  }
  out[L_.gm2] = r.e4m3_scales.group_mantissa.empty() ? 0u : r.e4m3_scales.group_mantissa[0];
  out[L_.gm2 + 1] = r.e5m2_scales.group_mantissa.empty() ? 0u : r.e5m2_scales.group_mantissa[0];
  std::copy(r.fake.begin(), r.fake.end(), out + L_.y);
}

void MorParams::expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const {
  for (std::size_t i = 0; i < n; ++i)
    reference(in + i * static_cast<std::size_t>(L_.in), out + i * static_cast<std::size_t>(L_.out));
}

// §31.7 the comment of a case line: what the case decides, decoded.
std::string MorParams::case_note(const std::uint32_t*, const std::uint32_t* out) const {
  if (s_.kind == Kind::tensor)
    return std::string(out[L_.decision] == NUMREF_BLOCK_F8E4M3FN ? "f8e4m3fn" : "bf16") + " (" +
           reason_name(out[L_.reason]) + "), mean " + render_value(out[L_.mean], format(FormatId::f32));
  std::size_t count[3] = {0, 0, 0};
  for (std::size_t b = 0; b < L_.nb; ++b)
    ++count[std::min<std::uint32_t>(out[static_cast<std::size_t>(L_.type) + b], 2)];
  return std::to_string(count[0]) + " f8e4m3fn, " + std::to_string(count[1]) + " f8e5m2, " + std::to_string(count[2]) +
         " bf16 blocks";
}

// ---- C ABI (§32.7) ----------------------------------------------------------------------------

bool MorParams::plugin_supported(const numref_backend& b) const {
  if (!NUMREF_HAS_ENTRY(b, mor_supported)) return false;
  const bool tensor = s_.kind == Kind::tensor;
  const bool entry = tensor ? NUMREF_HAS_ENTRY(b, mor) : NUMREF_HAS_ENTRY(b, mor_sub);
  return entry && b.mor_supported(b.ctx, tensor ? NUMREF_TENSOR_MOR : NUMREF_TENSOR_MOR_SUB, &cop_) == 1;
}

bool MorParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out, bool,
                            std::string& error) const {
  const bool tensor = s_.kind == Kind::tensor;
  if (!(tensor ? NUMREF_HAS_ENTRY(b, mor) : NUMREF_HAS_ENTRY(b, mor_sub))) {
    error = "the backend has no " + std::string(kind_name(s_.kind)) + " entry point";
    return false;
  }
  std::vector<unsigned char> xbuf;
  const std::size_t nb = L_.nb;
  // §34.6 every output buffer is guarded (kit::Guarded): the backend never writes the case words
  const std::size_t nsub = tensor ? 0 : nb;
  kit::Guarded<numref_mor_result> res("result", tensor ? 1 : 0);
  kit::Guarded<std::uint8_t> type("type", nsub), eq3("eq3", nsub), eq4("eq4", nsub);
  kit::Guarded<numref_error_sum> s4("sum4", nsub), s5("sum5", nsub);
  kit::CaseOutputs o(schema());
  const char* entry = tensor ? "mor" : "mor_sub";
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* ci = in + i * static_cast<std::size_t>(L_.in);
    std::uint32_t* co = out + i * static_cast<std::size_t>(L_.out);
    kit::pack(*s_.src, ci + L_.x, L_.n, xbuf);
    std::int64_t got;
    o.reset();
    if (tensor) {
      res.reset();
      got = b.mor(b.ctx, &cop_, xbuf.data(), res.data(), o.at(L_.scales));
      if (!res.check(entry, error) || !o.finish(entry, co, error)) return false;
      const numref_mor_result& r = res[0];
      co[L_.decision] = r.decision;
      co[L_.reason] = r.reason;
      co[L_.mean] = r.mean;
      co[L_.gm] = r.group_mantissa;
      put_sum(r.error, co + L_.sum);
    } else {
      for (auto* g : {&type, &eq3, &eq4}) g->reset();
      s4.reset();
      s5.reset();
      got = b.mor_sub(b.ctx, &cop_, xbuf.data(), type.data(), eq3.data(), eq4.data(), s4.data(), s5.data(),
                      o.at(L_.scales4), o.at(L_.scales5), o.at(L_.gm2), o.at(L_.y));
      if (!type.check(entry, error) || !eq3.check(entry, error) || !eq4.check(entry, error) ||
          !s4.check(entry, error) || !s5.check(entry, error) || !o.finish(entry, co, error))
        return false;
      for (std::size_t k = 0; k < nb; ++k) {
        co[static_cast<std::size_t>(L_.type) + k] = type[k];
        co[static_cast<std::size_t>(L_.eq3) + k] = eq3[k];
        co[static_cast<std::size_t>(L_.eq4) + k] = eq4[k];
        put_sum(s4[k], co + L_.sum4 + k * kSumWords);
        put_sum(s5[k], co + L_.sum5 + k * kSumWords);
      }
    }
    if (!kit::check_call(b, entry, got, L_.n, "elements (one tensor)", error)) return false;
  }
  return true;
}

}  // namespace numref::conform::mor
