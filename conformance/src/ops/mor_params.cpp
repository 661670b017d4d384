// numref conformance — MoR suites: parameters, reference results, comparison field by field,
// C ABI and pipe marshalling, case text.                 spec §21–§27, §30.7, §31.7, §32.7, §33.9
#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "mor.hpp"
#include "numref/conform/abi.hpp"

namespace numref::conform::mor {

std::string_view kind_name(Kind k) { return k == Kind::tensor ? "mor" : "mor-sub"; }

namespace {

std::uint32_t lo32(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi32(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
std::uint64_t w64(const std::uint32_t* w) { return std::uint64_t{w[0]} | (std::uint64_t{w[1]} << 32); }

// Partition text: numref's to_string / parse_partition (§12.5).
Partition parse_part(std::string_view text, const char* what) {
  Partition p;
  const std::string err = parse_partition(std::string(text), p);
  if (!err.empty()) throw std::invalid_argument(std::string(what) + ": " + err);
  return p;
}

std::string_view reason_name(std::uint32_t r) {
  if (r > static_cast<std::uint32_t>(Reason::not_evaluated)) return "not a reason";
  return to_string(static_cast<Reason>(r));
}
std::string_view recipe_name(SubtensorRecipe r) { return r == SubtensorRecipe::three_way ? "three-way" : "two-way"; }
std::string_view type_name(std::uint32_t t) {
  if (t > 2) return "not a block type";
  return to_string(static_cast<BlockType>(t));
}

// The x words of a case in the source's storage width.
void pack(const Format& f, const std::uint32_t* w, std::size_t n, std::vector<unsigned char>& buf) {
  const std::size_t b = storage_bytes(f);
  buf.assign(n * b, 0);
  for (std::size_t k = 0; k < n; ++k) std::memcpy(&buf[k * b], &w[k], b);  // little-endian: the low bytes
}

}  // namespace

// ---- error sums (§22.3, §31.7) --------------------------------------------------------------------

void put_sum(const ErrorSum& s, std::uint32_t* w) {
  numref_error_sum c{};
  for (int k = 0; k < 5; ++k) c.limb[k] = s.sum.limbs()[static_cast<std::size_t>(k)];
  c.n = s.n;
  c.nonfinite_input = s.nonfinite_input;
  c.nonfinite_quant = s.nonfinite_quant;
  c.zeros = s.zeros;
  put_sum(c, w);
}

void put_sum(const numref_error_sum& s, std::uint32_t* w) {
  const std::uint64_t v[9] = {s.limb[0], s.limb[1], s.limb[2], s.limb[3], s.limb[4],
                              s.n,       s.nonfinite_input, s.nonfinite_quant, s.zeros};
  for (int k = 0; k < 9; ++k) {
    w[2 * k] = lo32(v[k]);
    w[2 * k + 1] = hi32(v[k]);
  }
}

numref_error_sum get_sum(const std::uint32_t* w) {
  numref_error_sum s{};
  for (int k = 0; k < 5; ++k) s.limb[k] = w64(w + 2 * k);
  s.n = w64(w + 10);
  s.nonfinite_input = w64(w + 12);
  s.nonfinite_quant = w64(w + 14);
  s.zeros = w64(w + 16);
  return s;
}

std::string sum_text(const std::uint32_t* w) {
  const numref_error_sum s = get_sum(w);
  const BigUInt v = BigUInt::from_limbs(std::span<const std::uint64_t>(s.limb, 5));
  return "S=" + dyadic_hexfloat(v, -ExactSum::kScale) + " n=" + std::to_string(s.n) + " nonfinite_input=" +
         std::to_string(s.nonfinite_input) + " nonfinite_quant=" + std::to_string(s.nonfinite_quant) +
         " zeros=" + std::to_string(s.zeros);
}

// ---- parameters ---------------------------------------------------------------------------------

std::string spec_text(const MorParams::Spec& s) {
  std::string t = "src=" + std::string(s.src->name) + " shape=" + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                  " transpose=" + (s.transpose ? "1" : "0");
  if (s.kind == Kind::tensor) {
    t += " scaling=" + to_string(s.part) + " threshold=" + s.threshold.to_string();
  } else {
    t += " blocks=" + to_string(s.part) + " recipe=" + std::string(recipe_name(s.recipe));
  }
  return t;
}

MorParamsPtr parse(Kind k, std::string_view text) {
  MorParams::Spec s;
  s.kind = k;
  std::map<std::string, std::string, std::less<>> kv;
  const std::string fam(kind_name(k));
  for (auto w : split_ws(text)) {
    const auto eq = w.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == w.size())
      throw std::invalid_argument(fam + " parameter '" + std::string(w) + "' is not key=value");
    if (!kv.emplace(std::string(w.substr(0, eq)), std::string(w.substr(eq + 1))).second)
      throw std::invalid_argument(fam + " parameter '" + std::string(w.substr(0, eq)) + "' given twice");
  }
  auto take = [&](const char* key, bool required) -> std::optional<std::string> {
    auto it = kv.find(key);
    if (it == kv.end()) {
      if (required) throw std::invalid_argument(fam + " parameters need " + key + "=...");
      return std::nullopt;
    }
    std::string v = it->second;
    kv.erase(it);
    return v;
  };
  {
    const std::string v = *take("src", true);
    const auto id = find_format(v);
    if (!id) throw std::invalid_argument("src: unknown format '" + v + "'");
    s.src = &format(*id);
  }
  {
    const std::string v = *take("shape", true);
    const auto x = v.find('x');
    auto num = [&](const std::string& d) -> std::size_t {
      if (d.empty() || d.size() > 7 || d.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("shape '" + v + "' is not RxC");
      return std::stoul(d);
    };
    if (x == std::string::npos) throw std::invalid_argument("shape '" + v + "' is not RxC");
    s.rows = num(v.substr(0, x));
    s.cols = num(v.substr(x + 1));
  }
  if (auto v = take("transpose", false)) {
    if (*v != "0" && *v != "1") throw std::invalid_argument("transpose='" + *v + "', expected 0 or 1");
    s.transpose = *v == "1";
  }
  if (k == Kind::tensor) {
    s.part = parse_part(*take("scaling", true), "scaling");
    if (auto v = take("threshold", false)) {
      const std::string err = Threshold::parse(*v, s.threshold);
      if (!err.empty()) throw std::invalid_argument("threshold: " + err);
    }
  } else {
    s.part = parse_part(*take("blocks", true), "blocks");
    if (auto v = take("recipe", false)) {
      if (*v == "three-way") s.recipe = SubtensorRecipe::three_way;
      else if (*v == "two-way") s.recipe = SubtensorRecipe::two_way;
      else throw std::invalid_argument("recipe='" + *v + "', expected three-way or two-way");
    }
  }
  if (!kv.empty()) throw std::invalid_argument("unknown " + fam + " parameter '" + kv.begin()->first + "'");
  return std::make_shared<const MorParams>(s);
}

namespace {
BlockGrid checked_grid(const MorParams::Spec& s) {
  if (s.rows == 0 || s.cols == 0)
    throw std::invalid_argument("empty tensor shape " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
  if (s.rows * s.cols > (std::size_t{1} << 16))
    throw std::invalid_argument("tensor shape " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                                " exceeds the suite limit of 65536 elements");
  return BlockGrid(s.rows, s.cols, s.part);
}
}  // namespace

MorParams::MorParams(const Spec& s) : s_(s), grid_(checked_grid(s)) {
  if (s_.src->id != FormatId::bf16 && s_.src->id != FormatId::f16 && s_.src->id != FormatId::f32)
    throw std::invalid_argument("src: MoR takes bf16, f16 or f32 tensors (§21.1), got " + std::string(s_.src->name));
  if (s_.kind == Kind::sub) s_.threshold = Threshold{};
  else s_.recipe = SubtensorRecipe::three_way;
  text_ = spec_text(s_);
  MorLayout& L = L_;
  L.n = s_.rows * s_.cols;
  L.nb = grid_.count();
  int at = 0;
  auto put = [&](int& field, std::size_t words) {
    field = at;
    at += static_cast<int>(words);
  };
  put(L.x, L.n);
  L.in = at;
  at = 0;
  if (s_.kind == Kind::tensor) {
    put(L.decision, 1);
    put(L.reason, 1);
    put(L.mean, 1);
    put(L.gm, 1);
    put(L.sum, kSumWords);
    put(L.scales, L.nb);
  } else {
    put(L.type, L.nb);
    put(L.eq3, L.nb);
    put(L.eq4, L.nb);
    put(L.sum4, L.nb * kSumWords);
    put(L.sum5, L.nb * kSumWords);
    put(L.scales4, L.nb);
    put(L.scales5, L.nb);
    put(L.gm2, 2);
    put(L.y, L.n);
  }
  L.out = at;
  // §31.7 the C description
  numref_mor_op& c = cop_;
  c.struct_size = sizeof(numref_mor_op);
  c.kind = s_.kind == Kind::tensor ? NUMREF_MOR_TENSOR
           : s_.recipe == SubtensorRecipe::three_way ? NUMREF_MOR_THREE_WAY
                                                     : NUMREF_MOR_TWO_WAY;
  c.source = c_format(*s_.src);
  c.rows = static_cast<std::uint32_t>(s_.rows);
  c.cols = static_cast<std::uint32_t>(s_.cols);
  c.row_stride = s_.transpose ? 1 : static_cast<std::int64_t>(s_.cols);
  c.col_stride = s_.transpose ? static_cast<std::int64_t>(s_.rows) : 1;
  c.block_rows = static_cast<std::uint32_t>(grid_.block_rows());
  c.block_cols = static_cast<std::uint32_t>(grid_.block_cols());
  c.n_blocks = static_cast<std::uint32_t>(grid_.count());
  c.out_format = NUMREF_FMT_BF16;
  c.threshold_num = s_.threshold.num;
  c.threshold_den = s_.threshold.den;
  const QuantizeSpec q = mor_quantize_spec(format(FormatId::f8e4m3fn), s_.part);
  c.policy = to_c_policy(q.policy, format(FormatId::f8e4m3fn), policy_text_);
  c.wide = to_c_policy(q.wide, format(FormatId::bf16), wide_text_);
  c.text = text_.c_str();
}

const Family& MorParams::family() const { return mor::family(s_.kind); }

// §33.9 --ops mor:SRC:bf16:WORD — WORD is the partition without "block:" (tensor, rows, cols,
// 128x128: a selector word cannot hold ':') for mor, the recipe for mor-sub.
std::string MorParams::selector_text() const {
  std::string part = to_string(s_.part);
  if (part.rfind("block:", 0) == 0) part = part.substr(6);
  return formats() + " " + (s_.kind == Kind::tensor ? part : std::string(recipe_name(s_.recipe)));
}

std::string MorParams::label() const {
  std::string s = std::string(s_.src->name) + " " + std::to_string(s_.rows) + "x" + std::to_string(s_.cols) +
                  (s_.transpose ? "^T" : "");
  if (s_.kind == Kind::tensor) s += " scaling=" + to_string(s_.part) + " threshold=" + s_.threshold.to_string();
  else s += " blocks=" + to_string(s_.part) + " " + std::string(recipe_name(s_.recipe));
  return s;
}

std::string MorParams::clause() const {
  return s_.kind == Kind::tensor ? "§21 §22 §23 §25 §26 §17" : "§21 §22 §24 §25 §27 §17";
}

std::size_t MorParams::view_index_of_mem(std::size_t k) const {
  if (!s_.transpose) return k;
  const std::size_t j = k / s_.rows, i = k % s_.rows;
  return i * s_.cols + j;
}

// ---- reference ------------------------------------------------------------------------------------

void MorParams::reference(const std::uint32_t* in, std::uint32_t* out) const {
  std::vector<unsigned char> buf;
  pack(*s_.src, in + L_.x, L_.n, buf);
  const TensorView view(*s_.src, buf.data(), s_.rows, s_.cols, static_cast<std::ptrdiff_t>(cop_.row_stride),
                        static_cast<std::ptrdiff_t>(cop_.col_stride));
  if (s_.kind == Kind::tensor) {
    TensorMorSpec spec;
    spec.scaling = s_.part;
    spec.threshold = s_.threshold;
    const TensorMorResult r = tensor_mor(view, spec);
    out[L_.decision] = r.quantized ? NUMREF_BLOCK_F8E4M3FN : NUMREF_BLOCK_KEPT;
    out[L_.reason] = static_cast<std::uint32_t>(r.verdict.reason);
    out[L_.mean] = r.mean;
    out[L_.gm] = r.scales.group_mantissa.empty() ? 0u : r.scales.group_mantissa[0];
    put_sum(r.error, out + L_.sum);
    std::copy(r.scales.scales.begin(), r.scales.scales.end(), out + L_.scales);
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
    put_sum(r.e4m3_sum[b], out + L_.sum4 + b * kSumWords);
    put_sum(r.e5m2_sum[b], out + L_.sum5 + b * kSumWords);
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

// ---- comparison (§33.9): field by field; the first differing field names the class -----------------

namespace {

struct Diff {
  std::string cls;       // "mor/decision", "mor-sub/type", ...
  std::string where;     // "block 3 (rows 0-63, cols 64-127)", "element (2, 5)", ""
  std::string got, exp;  // rendered
  std::size_t count = 0; // differing fields in total
};

std::string block_where(const BlockGrid& g, std::size_t b) {
  const BlockRange r = g.range(b);
  return "block " + std::to_string(b) + " (rows " + std::to_string(r.r0) + "-" + std::to_string(r.r1 - 1) + ", cols " +
         std::to_string(r.c0) + "-" + std::to_string(r.c1 - 1) + ")";
}

std::string scale_text(std::uint32_t c) {
  if (c == 0xFF) return hex(c, 2) + " (NaN)";
  return hex(c, 2) + " (2^" + std::to_string(static_cast<int>(c) - 127) + ")";
}

Diff diff(const MorParams& p, const std::uint32_t* e, const std::uint32_t* g) {
  const MorLayout& L = p.layout();
  const std::string fam(kind_name(p.spec().kind));
  Diff d;
  auto note = [&](const std::string& cls, const std::string& where, const std::string& got, const std::string& exp) {
    if (d.count++ == 0) {
      d.cls = fam + "/" + cls;
      d.where = where;
      d.got = got;
      d.exp = exp;
    }
  };
  auto sums = [&](int at, std::size_t count, const std::string& name) {
    for (std::size_t b = 0; b < count; ++b) {
      const std::uint32_t* se = e + at + b * kSumWords;
      const std::uint32_t* sg = g + at + b * kSumWords;
      if (std::equal(se, se + kSumWords, sg)) continue;
      // which part of the sum: the limbs, or one of the counts
      std::string part = "error-sum";
      if (std::equal(se, se + 10, sg)) {
        static const char* const kParts[] = {"n", "nonfinite_input", "nonfinite_quant", "zeros"};
        for (int k = 0; k < 4; ++k)
          if (w64(se + 10 + 2 * k) != w64(sg + 10 + 2 * k)) {
            part = std::string("error-sum/") + kParts[k];
            break;
          }
      }
      note(name + (part == "error-sum" ? "" : part.substr(9)), count > 1 ? block_where(p.grid(), b) : "tensor",
           sum_text(sg), sum_text(se));
    }
  };
  if (p.spec().kind == Kind::tensor) {
    auto dec = [](std::uint32_t v) { return hex(v, 2) + " (" + std::string(type_name(v)) + ")"; };
    auto rea = [](std::uint32_t v) { return hex(v, 2) + " (" + std::string(reason_name(v)) + ")"; };
    if (e[L.decision] != g[L.decision]) note("decision", "tensor", dec(g[L.decision]), dec(e[L.decision]));
    if (e[L.reason] != g[L.reason]) note("reason", "tensor", rea(g[L.reason]), rea(e[L.reason]));
    if (e[L.mean] != g[L.mean])
      note("mean", "tensor", hex(g[L.mean], 8) + " (" + render_value(g[L.mean], format(FormatId::f32)) + ")",
           hex(e[L.mean], 8) + " (" + render_value(e[L.mean], format(FormatId::f32)) + ")");
    sums(L.sum, 1, "error-sum");
    if (e[L.gm] != g[L.gm]) note("group-mantissa", "tensor", hex(g[L.gm], 6), hex(e[L.gm], 6));
    for (std::size_t b = 0; b < L.nb; ++b) {
      const std::size_t k = static_cast<std::size_t>(L.scales) + b;
      if (e[k] != g[k]) note("scale", block_where(p.grid(), b), scale_text(g[k]), scale_text(e[k]));
    }
    return d;
  }
  auto typ = [](std::uint32_t v) { return hex(v, 2) + " (" + std::string(type_name(v)) + ")"; };
  auto rea = [](std::uint32_t v) { return hex(v, 2) + " (" + std::string(reason_name(v)) + ")"; };
  for (std::size_t b = 0; b < L.nb; ++b) {
    const std::size_t t = static_cast<std::size_t>(L.type) + b;
    if (e[t] != g[t]) note("type", block_where(p.grid(), b), typ(g[t]), typ(e[t]));
  }
  for (std::size_t b = 0; b < L.nb; ++b) {
    const std::size_t t = static_cast<std::size_t>(L.eq3) + b;
    if (e[t] != g[t]) note("eq3", block_where(p.grid(), b), rea(g[t]), rea(e[t]));
  }
  for (std::size_t b = 0; b < L.nb; ++b) {
    const std::size_t t = static_cast<std::size_t>(L.eq4) + b;
    if (e[t] != g[t]) note("eq4", block_where(p.grid(), b), rea(g[t]), rea(e[t]));
  }
  sums(L.sum4, L.nb, "e4m3-sum");
  sums(L.sum5, L.nb, "e5m2-sum");
  for (std::size_t b = 0; b < L.nb; ++b) {
    const std::size_t k = static_cast<std::size_t>(L.scales4) + b;
    if (e[k] != g[k]) note("e4m3-scale", block_where(p.grid(), b), scale_text(g[k]), scale_text(e[k]));
  }
  for (std::size_t b = 0; b < L.nb; ++b) {
    const std::size_t k = static_cast<std::size_t>(L.scales5) + b;
    if (e[k] != g[k]) note("e5m2-scale", block_where(p.grid(), b), scale_text(g[k]), scale_text(e[k]));
  }
  for (int k = 0; k < 2; ++k)
    if (e[L.gm2 + k] != g[L.gm2 + k])
      note(k == 0 ? "e4m3-group-mantissa" : "e5m2-group-mantissa", "tensor", hex(g[L.gm2 + k], 6), hex(e[L.gm2 + k], 6));
  const Format& bf = format(FormatId::bf16);
  for (std::size_t i = 0; i < L.n; ++i) {
    const std::size_t k = static_cast<std::size_t>(L.y) + i;
    if (e[k] != g[k]) {
      const std::size_t r = i / p.spec().cols, c = i % p.spec().cols;
      const std::string gt = (g[k] & ~bf.mask()) ? hex(g[k], 8) + " (not a bf16 code)" : hex(g[k], 4) + " (" + render_value(g[k], bf) + ")";
      note("output", "element (" + std::to_string(r) + ", " + std::to_string(c) + ") in " +
                         block_where(p.grid(), p.grid().block_of(r, c)),
           gt, hex(e[k], 4) + " (" + render_value(e[k], bf) + ")");
    }
  }
  return d;
}

}  // namespace

Finding MorParams::compare(CaseView in, CaseView expected, CaseView got, const CompareOptions& o) const {
  (void)in;
  (void)o;
  const Diff d = diff(*this, expected.data(), got.data());
  if (d.count == 0) return {Outcome::pass, {}};
  return {Outcome::fail, d.cls};
}

std::string MorParams::render_inputs(CaseView in) const {
  // x: the shape, and the number of NaN / Inf / zero elements (the tensor itself is in the
  // vector file, or regenerated from the seed and the case number).
  const std::uint32_t* x = in.data() + L_.x;
  std::size_t nan = 0, inf = 0, zero = 0;
  for (std::size_t k = 0; k < L_.n; ++k) {
    const Decoded dd = decode(x[k], *s_.src);
    nan += dd.cls == Class::nan;
    inf += dd.cls == Class::inf;
    zero += dd.cls == Class::zero;
  }
  return "x=" + std::string(s_.src->name) + "[" + std::to_string(s_.rows) + "x" + std::to_string(s_.cols) + "] (" +
         std::to_string(zero) + " zeros, " + std::to_string(nan) + " NaN, " + std::to_string(inf) + " Inf)";
}

std::string MorParams::render_output(CaseView out, bool with_counts) const {
  (void)with_counts;
  std::string s;
  for (const auto& c : columns(*this))
    if (!c.input) s += (s.empty() ? "" : " ") + c.name + "=" + render_column(c, out.data() + c.at, false).substr(0, 80);
  return s;
}

MismatchText MorParams::render_mismatch(CaseView in, CaseView expected, CaseView got, const CompareOptions& o) const {
  (void)o;
  const Diff d = diff(*this, expected.data(), got.data());
  MismatchText t;
  t.inputs = render_inputs(in) + " | " + d.cls.substr(d.cls.find('/') + 1) + " of " + d.where;
  t.got = d.got;
  t.expected = d.exp;
  t.detail = d.count == 1 ? std::string("1 field differs") : std::to_string(d.count) + " fields differ";
  return t;
}

// ---- C ABI (§31.7) ----------------------------------------------------------------------------

namespace {
template <typename Fn>
bool has_entry(const numref_backend& b, std::size_t offset, Fn fn) {
  return b.struct_size >= offset + sizeof(fn) && fn != nullptr;
}
}  // namespace

bool MorParams::plugin_supported(const numref_backend& b) const {
  if (!has_entry(b, offsetof(numref_backend, mor_supported), b.mor_supported)) return false;
  const bool entry = s_.kind == Kind::tensor ? has_entry(b, offsetof(numref_backend, mor), b.mor)
                                             : has_entry(b, offsetof(numref_backend, mor_sub), b.mor_sub);
  return entry &&
         b.mor_supported(b.ctx, s_.kind == Kind::tensor ? NUMREF_TENSOR_MOR : NUMREF_TENSOR_MOR_SUB, &cop_) == 1;
}

bool MorParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                            bool want_counts, std::string& error) const {
  (void)want_counts;
  const bool present = s_.kind == Kind::tensor ? has_entry(b, offsetof(numref_backend, mor), b.mor)
                                               : has_entry(b, offsetof(numref_backend, mor_sub), b.mor_sub);
  if (!present) {
    error = "the backend has no " + std::string(kind_name(s_.kind)) + " entry point";
    return false;
  }
  std::vector<unsigned char> xbuf;
  const std::size_t nb = L_.nb;
  std::vector<std::uint8_t> type(nb), eq3(nb), eq4(nb);
  std::vector<numref_error_sum> s4(nb), s5(nb);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* ci = in + i * static_cast<std::size_t>(L_.in);
    std::uint32_t* co = out + i * static_cast<std::size_t>(L_.out);
    pack(*s_.src, ci + L_.x, L_.n, xbuf);
    std::int64_t got;
    const char* entry;
    if (s_.kind == Kind::tensor) {
      entry = "mor";
      numref_mor_result r{};
      got = b.mor(b.ctx, &cop_, xbuf.data(), &r, co + L_.scales);
      co[L_.decision] = r.decision;
      co[L_.reason] = r.reason;
      co[L_.mean] = r.mean;
      co[L_.gm] = r.group_mantissa;
      put_sum(r.error, co + L_.sum);
    } else {
      entry = "mor_sub";
      std::fill(type.begin(), type.end(), 0);
      std::fill(eq3.begin(), eq3.end(), 0);
      std::fill(eq4.begin(), eq4.end(), 0);
      std::fill(s4.begin(), s4.end(), numref_error_sum{});
      std::fill(s5.begin(), s5.end(), numref_error_sum{});
      got = b.mor_sub(b.ctx, &cop_, xbuf.data(), type.data(), eq3.data(), eq4.data(), s4.data(), s5.data(),
                      co + L_.scales4, co + L_.scales5, co + L_.gm2, co + L_.y);
      for (std::size_t k = 0; k < nb; ++k) {
        co[static_cast<std::size_t>(L_.type) + k] = type[k];
        co[static_cast<std::size_t>(L_.eq3) + k] = eq3[k];
        co[static_cast<std::size_t>(L_.eq4) + k] = eq4[k];
        put_sum(s4[k], co + L_.sum4 + k * kSumWords);
        put_sum(s5[k], co + L_.sum5 + k * kSumWords);
      }
    }
    if (got < 0) {
      const char* m = b.last_error ? b.last_error(b.ctx) : nullptr;
      error = std::string(entry) + " returned " + std::to_string(got) + (m ? std::string(": ") + m : std::string());
      return false;
    }
    if (static_cast<std::uint64_t>(got) != L_.n) {
      error = std::string(entry) + " returned " + std::to_string(got) + " for a tensor of " + std::to_string(L_.n) +
              " elements";
      return false;
    }
  }
  return true;
}

// ---- case text (§30.7, §32.7) --------------------------------------------------------------------

std::vector<MorColumn> columns(const MorParams& p) {
  const MorLayout& L = p.layout();
  const auto& s = p.spec();
  const BlockGrid& g = p.grid();
  const std::size_t gr = g.grid_rows(), gc = g.grid_cols();
  const std::size_t mr = s.transpose ? s.cols : s.rows, mc = s.transpose ? s.rows : s.cols;
  std::vector<MorColumn> c;
  c.push_back({"x", L.x, true, mr, mc, code_digits(*s.src), s.src->mask()});
  if (s.kind == Kind::tensor) {
    c.push_back({"decision", L.decision, false, 1, 1, 2, 2});
    c.push_back({"reason", L.reason, false, 1, 1, 2, 10});
    c.push_back({"mean", L.mean, false, 1, 1, 8, 0xFFFFFFFFull});
    c.push_back({"gm", L.gm, false, 1, 1, 6, 0x7FFFFF});
    c.push_back({"sum", L.sum, false, 1, 1, 16, ~0ull, true});
    c.push_back({"scales", L.scales, false, gr, gc, 2, 0xFF});
  } else {
    c.push_back({"type", L.type, false, gr, gc, 2, 2});
    c.push_back({"eq3", L.eq3, false, gr, gc, 2, 10});
    c.push_back({"eq4", L.eq4, false, gr, gc, 2, 10});
    c.push_back({"sum4", L.sum4, false, gr, gc, 16, ~0ull, true});
    c.push_back({"sum5", L.sum5, false, gr, gc, 16, ~0ull, true});
    c.push_back({"scales4", L.scales4, false, gr, gc, 2, 0xFF});
    c.push_back({"scales5", L.scales5, false, gr, gc, 2, 0xFF});
    c.push_back({"gm", L.gm2, false, 1, 2, 6, 0x7FFFFF});
    c.push_back({"y", L.y, false, s.rows, s.cols, 4, 0xFFFF});
  }
  return c;
}

std::string render_column(const MorColumn& c, const std::uint32_t* w, bool strict) {
  std::string s;
  const std::size_t total = c.rows * c.cols;
  for (std::size_t k = 0; k < total; ++k) {
    if (k) s += (strict && k % c.cols == 0) ? '/' : ',';
    if (c.sum) {
      const std::uint32_t* sw = w + k * kSumWords;
      for (int q = 0; q < 9; ++q) {
        if (q) s += ':';
        append_hex(s, w64(sw + 2 * q), 16);
      }
    } else {
      append_hex(s, w[k], c.digits);
    }
  }
  return s;
}

std::string parse_column(const MorColumn& c, std::string_view text, std::uint32_t* w, bool strict) {
  const std::size_t total = c.rows * c.cols;
  std::size_t k = 0, pos = 0, col = 0;
  while (true) {
    std::size_t e = pos;
    while (e < text.size() && text[e] != ',' && text[e] != '/') ++e;
    const std::string_view tok = text.substr(pos, e - pos);
    if (k >= total) return "more than " + std::to_string(total) + " values";
    if (c.sum) {
      std::size_t q = 0, p2 = 0;
      std::uint64_t v[9];
      while (true) {
        std::size_t e2 = p2;
        while (e2 < tok.size() && tok[e2] != ':') ++e2;
        const std::string_view part = tok.substr(p2, e2 - p2);
        if (q >= 9 || part.size() != 16) return "error sum '" + std::string(tok.substr(0, 40)) + "' is not 9 values of 16 hex digits";
        const auto pv = parse_hex(part);
        if (!pv) return "error sum value '" + std::string(part) + "' is not hex";
        v[q++] = *pv;
        if (e2 >= tok.size()) break;
        p2 = e2 + 1;
      }
      if (q != 9) return "error sum '" + std::string(tok.substr(0, 40)) + "' is not 9 values of 16 hex digits";
      for (int j = 0; j < 9; ++j) {
        w[k * kSumWords + 2 * static_cast<std::size_t>(j)] = lo32(v[j]);
        w[k * kSumWords + 2 * static_cast<std::size_t>(j) + 1] = hi32(v[j]);
      }
    } else {
      if (strict ? static_cast<int>(tok.size()) != c.digits : (tok.empty() || tok.size() > 8))
        return "value '" + std::string(tok.substr(0, 20)) + "' is not " + std::to_string(c.digits) + " hex digits";
      const auto v = parse_hex(tok);
      if (!v) return "value '" + std::string(tok.substr(0, 20)) + "' is not hex";
      if (*v > c.limit) return "value '" + std::string(tok) + "' is out of range";
      w[k] = static_cast<std::uint32_t>(*v);
    }
    ++k;
    ++col;
    if (e >= text.size()) break;
    if (text[e] == '/') {
      if (!strict) return "'/' in a flat list";
      if (col != c.cols) return "a row has " + std::to_string(col) + " values, expected " + std::to_string(c.cols);
      col = 0;
    } else if (strict && col == c.cols) {
      return "a row has more than " + std::to_string(c.cols) + " values (rows are separated by '/')";
    }
    pos = e + 1;
  }
  if (k != total) return std::to_string(k) + " values, expected " + std::to_string(total);
  return {};
}

// ---- pipe protocol (§32.7) -------------------------------------------------------------------------

void MorParams::pipe_case(CaseView in, std::string& line) const {
  line = render_column(columns(*this)[0], in.data() + L_.x, false);
}

std::string MorParams::pipe_result(std::string_view line, bool with_counts, std::uint32_t* out, std::size_t n,
                                   std::size_t i) const {
  (void)with_counts;
  (void)n;
  std::uint32_t* o = out + i * static_cast<std::size_t>(L_.out);
  const auto f = split_ws(line);
  const auto cs = columns(*this);
  if (f.size() != cs.size() - 1) {
    std::string names;
    for (std::size_t k = 1; k < cs.size(); ++k) names += (k > 1 ? " <" : "<") + cs[k].name + ">";
    return "expected " + std::to_string(cs.size() - 1) + " fields (" + names + "), got " + std::to_string(f.size());
  }
  for (std::size_t k = 1; k < cs.size(); ++k) {
    const std::string err = parse_column(cs[k], f[k - 1], o + cs[k].at, false);
    if (!err.empty()) return cs[k].name + ": " + err;
  }
  return {};
}

}  // namespace numref::conform::mor
