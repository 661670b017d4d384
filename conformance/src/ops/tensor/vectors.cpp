// numref conformance — golden vectors of the tensor families and their divergence set.
//                                                                          spec §31.6, §B.4
//
// A tensor file fixes every parameter but the shape in its header (one key per line, the
// keys of the parameter text); each case line is
//   <R>x<C> <column> <column> ...
// with every tensor column a grid: hex codes, ',' between the columns of a row, '/'
// between rows (x in memory order: C x R when transposed; per-element columns R x C;
// amax / scales over the block grid; group mantissas over the group grid, 6 digits; the
// NVFP4 tensor amax one value); the §19.5 counts as four decimals s,f,n,i.
#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "numref/conform/vectors.hpp"
#include "tensor.hpp"

namespace numref::conform::tensor {

namespace {

constexpr std::uint64_t kVectorSeed = 1;

// Cases 0..per-1 of the generator for each suite (two per small tensor).
std::string file_text(const std::vector<TensorParamsPtr>& ps, const std::string& coverage, std::uint64_t seed) {
  VectorFileCases f;
  f.coverage = coverage;
  f.seed = seed;
  for (const auto& p : ps) {
    const std::uint64_t per = p->spec().rows * p->spec().cols <= 64 ? 2 : 1;
    for (std::uint64_t j = 0; j < per; ++j) {
      std::vector<std::uint32_t> in(static_cast<std::size_t>(p->layout().in));
      generate_case(*p, seed, j, in.data());
      f.cases.emplace_back(p, std::move(in));
    }
  }
  return family(ps.front()->kind()).vector_file(f);
}

// The shapes of a file: small, ragged against the partition, one transposed-friendly.
std::vector<std::pair<std::size_t, std::size_t>> file_shapes(const Partition& part) {
  auto d = [](std::size_t b, std::size_t whole) { return b == 0 ? whole : b; };
  const std::size_t br = part.block_rows, bc = part.block_cols;
  std::vector<std::pair<std::size_t, std::size_t>> v;
  v.emplace_back(d(br, 2) == 1 ? 2 : d(br, 3), d(bc, 8) == 1 ? 5 : d(bc, 8));    // whole blocks
  v.emplace_back(br <= 1 ? 3 : br + br / 2 + 1, bc <= 1 ? 7 : bc + bc / 2 + 1);  // ragged
  v.emplace_back(1, bc <= 1 ? 16 : std::min<std::size_t>(bc * 2 + 3, 64));       // one row
  for (auto& s : v)
    while (s.first * s.second > 1024) s.first = (s.first + 1) / 2;
  return v;
}

TensorParamsPtr make(TensorParams::Spec s) { return std::make_shared<const TensorParams>(s); }

// ---- the divergence set (§B.4) -----------------------------------------------------------------

struct Variant {
  const char* name;
  const char* settings;  // key=value parameter words
  const char* who;       // which rule / library gives this answer
};

const std::vector<Variant>& quantize_variants() {
  static const std::vector<Variant> v = {
      {"mx-floor", "rule=mx-floor", "OCP MX v1.0 §6.3 (X = 2^(floor(log2 amax) - emax_elem)); spec §16.2"},
      {"mx-rceil", "rule=mx-rceil", "smallest X with amax / X <= q_max, exact quotient; spec §16.5"},
      {"mx-rceil-f32", "rule=mx-rceil-f32",
       "RCEIL as cuBLAS / TransformerEngine compute it (binary32 descale, E8M0 round-up); spec §16.6"},
      {"mx-even", "rule=mx-even", "torchao's EVEN mode (amax rounded to the element precision first); spec §16.4"},
      {"mx-ceil", "rule=mx-ceil", "X = 2^(ceil(log2 amax) - emax_elem); spec §16.3"},
      {"amax", "rule=amax",
       "S = RN32(q_max / amax), x * S (TransformerEngine's fminf(q_max / amax, FLT_MAX)); spec §14.1"},
      {"amax-dequant", "rule=amax-dequant",
       "D = RN32(amax / q_max), x / D (the scale kept as amax / q_max); spec §14.3"},
      {"pow2", "rule=pow2", "2^E(S) from the bits of S (TransformerEngine's power-of-two scales); spec §15"},
  };
  return v;
}

const std::vector<Variant>& fake_quant_variants() {
  static const std::vector<Variant> v = {
      {"amax", "rule=amax dequant=divide", "S = RN32(q_max / amax); dequantize v / S; spec §14.1, §19.3"},
      {"amax.reciprocal", "rule=amax dequant=reciprocal", "the same S; dequantize v * RN32(1 / S); spec §19.3"},
      {"amax-recip", "rule=amax-recip dequant=divide",
       "stored R = RN32(1 / S) (TransformerEngine's scale_inv); v * R; spec §14.2"},
      {"amax-dequant", "rule=amax-dequant dequant=divide", "D = RN32(amax / q_max): x / D, v * D; spec §14.3"},
      {"pow2", "rule=pow2 dequant=divide", "P = 2^E(S): x * P, v / P (exact); spec §15"},
  };
  return v;
}

struct Entry {
  FormatId src, elem;
  std::size_t rows, cols;
  const char* partition;
  std::vector<std::uint32_t> x;  // codes of src, row-major
  const char* note;
};

// Each entry is a small tensor on which the variants disagree (or the degenerate blocks
// every rule must define); the answers are the reference's, the notes state the facts.
const std::vector<Entry>& quantize_entries() {
  using F = FormatId;
  // clang-format off
  static const std::vector<Entry> e = {
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x43F00000, 0x3F800000, 0xC0600000, 0x3DCCCCCD},
       "amax 480 in E4M3: FLOOR X = 1 clips 480 to 448; RCEIL / CEIL X = 2 store 240; EVEN X = 1 (480 < 496)"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x43E00000, 0x3F800000, 0xC0600000, 0x3DCCCCCD},
       "amax 448 = q_max: FLOOR / RCEIL / EVEN X = 1, CEIL X = 2 (a binade of range unused)"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x43F80000, 0x3F800000, 0xC0600000, 0x3DCCCCCD},
       "amax 496 = 1.9375 * 2^8: EVEN rounds it to 2^9 first (X = 2), FLOOR keeps X = 1 and clips"},
      {F::f32, F::f4e2m1fn, 1, 4, "tensor", {0x40D00000, 0x3F800000, 0xC0200000, 0x3E800000},
       "FP4 amax 6.5: FLOOR X = 1 clips to 6; RCEIL X = 2 stores 3.25 -> 3"},
      {F::f32, F::int8, 1, 4, "tensor", {0x42FE0001, 0x3F800000, 0xC2000000, 0x40400000},
       "int8 amax 127.00001: the exact RCEIL needs X = 2; RN32(amax * RN32(1 / 127)) rounds to exactly 1, so the "
       "binary32 RCEIL of cuBLAS / TransformerEngine keeps X = 1 (the element conversion absorbs the excess)"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x43F25BA7, 0x3FE9B3CE, 0xBFE9B3CE, 0x3F800000},
       "448 / amax against amax / 448: x * RN32(448 / 484.716) and x / RN32(484.716 / 448) round 1.8258 to different E4M3 codes"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x00000000, 0x80000000, 0x00000000, 0x00000000},
       "all-zero block: E8M0 scale 00 (exponent -inf clamped, as the OCP reference code); FP32 scale 1.0 (TransformerEngine)"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x3F800000, 0x7FC00000, 0x40000000, 0xC0400000},
       "a NaN in the block: numref poisons it (scale NaN / E8M0 FF, every code NaN); TransformerEngine maps a NaN amax to scale 1.0"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x3F800000, 0xFF800000, 0x40000000, 0xC0400000},
       "a -Inf in the block: amax +Inf poisons it (amax_inf=propagate); TransformerEngine maps it to scale 1.0"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x00000400, 0x80000001, 0x00000000, 0x00000010},
       "subnormal amax: E8M0 clamps to 00; q_max / amax overflows binary32 and S is clamped DOWN to FLT_MAX"},
      {F::f32, F::f8e4m3fn, 1, 40, "block:1x32",
       {0x43F00000, 0x3F800000, 0xC0600000, 0x3DCCCCCD, 0x41200000, 0xC1A00000, 0x3F000000, 0x40400000,
        0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000,
        0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000,
        0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000,
        0x3B800000, 0xBB000000, 0x3A800000, 0x00000000, 0x3C000000, 0xBC400000, 0x3B400000, 0x3A000000},
       "MX 1x32 with a ragged second block of 8 small values: one E8M0 scale per block"},
  };
  // clang-format on
  return e;
}

const std::vector<Entry>& fake_quant_entries() {
  using F = FormatId;
  // clang-format off
  static const std::vector<Entry> e = {
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x43F00000, 0x3F800000, 0xC0600000, 0x3DCCCCCD},
       "amax 480: S = RN32(448 / 480); the round trips differ in the last bits by convention"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x43800000, 0x3EA49249, 0xBEB6DB6E, 0x3F000000},
       "amax 256: S = 1.75; the code 0.5625 dequantizes to 0.5625 / 1.75 = 3ea49249 but 0.5625 * RN32(1 / 1.75) = 3ea4924a"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x00000000, 0x80000000, 0x00000000, 0x00000000},
       "all-zero tensor: every convention returns the zeros (S = 1.0)"},
      {F::f32, F::f8e4m3fn, 1, 4, "tensor", {0x3F800000, 0x7FC00000, 0x40000000, 0xC0400000},
       "a NaN poisons the block: every dequantized value is the canonical NaN"},
  };
  // clang-format on
  return e;
}

std::string divergence_file(Kind k) {
  const auto& vars = k == Kind::quantize ? quantize_variants() : fake_quant_variants();
  const auto& ents = k == Kind::quantize ? quantize_entries() : fake_quant_entries();
  const std::string prof = "ocp";
  VectorWriter w;
  w.field("op", kind_name(k));
  w.field("kind", "divergence");
  std::string names;
  for (const auto& v : vars) names += std::string(names.empty() ? "" : " ") + v.name;
  w.field("variants", names);
  for (const auto& v : vars) w.field(std::string("variant.") + v.name, std::string(v.settings) + " | " + v.who);
  w.field("profile", prof);
  w.field("policy", describe(tensor_base(prof, ScaleRule::amax)));
  if (k == Kind::fake_quant) w.field("out", "f32");
  w.field("clause", k == Kind::quantize ? "§B.4 §13.3 §14 §15 §16 §19.2" : "§B.4 §14 §15 §19.3 §19.6");
  w.provenance();
  w.field("seed", "none (no random cases)");
  w.field("coverage", "small tensors on which scale conventions disagree; one answer per variant");
  w.field("columns", "src elem shape partition x " + names);
  w.begin();
  for (const auto& en : ents) {
    if (en.x.size() != en.rows * en.cols) throw std::logic_error("divergence entry with a wrong number of values");
    std::string line = std::string(format(en.src).name) + " " + std::string(format(en.elem).name) + " " +
                       std::to_string(en.rows) + "x" + std::to_string(en.cols) + " " + en.partition + " ";
    line += column_text(kit::codes("x", Role::in, format(en.src), en.rows, en.cols, Place::view), en.x.data());
    std::string summary;
    for (const auto& v : vars) {
      const std::string text = "src=" + std::string(format(en.src).name) +
                               " elem=" + std::string(format(en.elem).name) + " shape=" + std::to_string(en.rows) +
                               "x" + std::to_string(en.cols) + " partition=" + en.partition + " " + v.settings +
                               (k == Kind::fake_quant ? " out=f32" : "") + " profile=" + prof;
      TensorParamsPtr p;
      try {
        p = parse(k, text);
      } catch (const std::invalid_argument&) {
        line += " -";
        continue;
      }
      const Layout& L = p->layout();
      std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in)), out(static_cast<std::size_t>(L.out));
      std::copy(en.x.begin(), en.x.end(), in.begin() + L.x);
      p->reference(in.data(), out.data());
      line += ' ';
      const BlockGrid& g = p->grid();
      auto answer = [&](const char* column) {
        const Column& c = *p->schema().find(column, true);
        return column_text(c, out.data() + c.at);
      };
      if (k == Kind::quantize) {
        line += answer("scales") + ":" + answer("codes");
        summary += std::string(" ") + v.name + "=";
        if (g.count() == 1)
          summary += "scale " + render_value(out[static_cast<std::size_t>(L.scales)], p->scale_fmt()) + ", ";
        summary += "x0 -> " + render_value(out[static_cast<std::size_t>(L.codes)], format(en.elem));
      } else {
        line += answer("y");
        summary +=
            std::string(" ") + v.name + "=" + render_value(out[static_cast<std::size_t>(L.y)], format(FormatId::f32));
      }
    }
    line += "  # ";
    line += en.note;
    line += ";" + summary;
    w.line(line);
  }
  return w.finish();
}

// ---- readers ------------------------------------------------------------------------------------

bool wanted(const std::vector<std::string>& profiles, const std::string& p) {
  return profiles.empty() || std::find(profiles.begin(), profiles.end(), p) != profiles.end();
}

class DivergenceReader final : public VectorFileReader {
 public:
  DivergenceReader(Kind k, const VectorHeader& h, const std::vector<std::string>& profiles) : k_(k) {
    if (k != Kind::quantize && k != Kind::fake_quant)
      throw VectorError(h.path + ": " + std::string(kind_name(k)) + " has no divergence files");
    profile_ = h.get("profile");
    if (!find_profile(profile_)) throw VectorError(h.path + ": unknown profile '" + profile_ + "'");
    const std::string want = describe(tensor_base(profile_, ScaleRule::amax));
    if (h.get("policy") != want)
      throw VectorError(h.path + ": policy differs from the tensor policy of profile " + profile_ +
                        " as this numref defines it; regenerate the vectors");
    if (k == Kind::fake_quant && h.get("out") != "f32")
      throw VectorError(h.path + ": a fake-quant divergence file has out f32");
    std::string cols = "src elem shape partition x";
    for (auto v : split_ws(h.get("variants"))) {
      const std::string* spec = h.find("variant." + std::string(v));
      if (!spec) throw VectorError(h.path + ": no 'variant." + std::string(v) + "' line");
      const auto bar = spec->find('|');
      const std::string settings(trim(std::string_view(*spec).substr(0, bar)));
      if (bar == std::string::npos || settings.empty())
        throw VectorError(h.path + ": variant." + std::string(v) + " is not '<settings> | <who>'");
      variants_.emplace_back(std::string(v), settings);
      cols += " " + std::string(v);
    }
    if (h.get("columns") != cols)
      throw VectorError(h.path + ": columns '" + h.get("columns") + "', expected '" + cols + "'");
    use_ = wanted(profiles, profile_);
  }

  void read(const std::vector<std::string_view>& f, std::string_view note, std::vector<VectorCase>& out) override {
    if (f.size() != variants_.size() + 5)
      throw VectorError("expected " + std::to_string(variants_.size() + 5) + " fields, got " +
                        std::to_string(f.size()));
    if (!parse_rxc(f[2])) throw VectorError("shape '" + std::string(f[2].substr(0, 20)) + "' is not RxC");
    for (std::size_t i = 0; i < variants_.size(); ++i) {
      const std::string_view a = f[5 + i];
      const std::string text = "src=" + std::string(f[0]) + " elem=" + std::string(f[1]) +
                               " shape=" + std::string(f[2]) + " partition=" + std::string(f[3]) + " " +
                               variants_[i].second + (k_ == Kind::fake_quant ? " out=f32" : "") +
                               " profile=" + profile_;
      TensorParamsPtr p;
      try {
        p = parse(k_, text);
      } catch (const std::invalid_argument& e) {
        if (a == "-") continue;  // not applicable to this combination
        throw VectorError("variant " + variants_[i].first + ": " + e.what());
      }
      if (a == "-") throw VectorError("variant " + variants_[i].first + " applies here but has no answer");
      const Layout& L = p->layout();
      std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in)), ex(static_cast<std::size_t>(L.out));
      auto read = [&](const char* column, bool output, std::string_view value) {
        const Column& c = *p->schema().find(column, output);
        return parse_column_text(c, value, (output ? ex.data() : in.data()) + c.at);
      };
      std::string err = read("x", false, f[4]);
      if (!err.empty()) throw VectorError("x: " + err);
      if (k_ == Kind::quantize) {
        const auto colon = a.find(':');
        if (colon == std::string_view::npos)
          throw VectorError("answer '" + std::string(a.substr(0, 40)) + "' is not <scales>:<codes>");
        err = read("scales", true, a.substr(0, colon));
        if (err.empty()) err = read("codes", true, a.substr(colon + 1));
        if (L.gm >= 0 || L.tamax >= 0)
          throw VectorError("variant " + variants_[i].first + ": gam / nvfp4 have no divergence answers");
      } else {
        err = read("y", true, a);
      }
      if (!err.empty()) throw VectorError("variant " + variants_[i].first + ": " + err);
      for (int c = 0; c < 4; ++c) ex[static_cast<std::size_t>(L.counts + c)] = kNotReported;  // not in the file
      if (use_) out.push_back({p, std::move(in), std::move(ex), std::string(note)});
    }
  }

 private:
  Kind k_;
  std::string profile_;
  std::vector<std::pair<std::string, std::string>> variants_;
  bool use_ = true;
};

// One file `name`.vec (':' written '_') of `base` at every shape of file_shapes().
void add_file(std::string name, const TensorParams::Spec& base, const std::string& cov,
              std::vector<VectorFileText>& out) {
  std::vector<TensorParamsPtr> ps;
  for (const auto& [r, c] : file_shapes(base.partition)) {
    TensorParams::Spec t = base;
    t.rows = r;
    t.cols = c;
    ps.push_back(make(t));
  }
  for (char& ch : name)
    if (ch == ':') ch = '_';
  out.push_back({name + ".vec", file_text(ps, cov, kVectorSeed)});
}

// §10.4 The recipe profiles' files (issue 12 evidence): per profile with a quantization recipe,
// binary32 tensors into f8e4m3fn (f4e2m1fn for a recipe without E4M3 elements, NVFP4's), and
// f4e2m1fn where the recipe sets elem_nan, which only FP4 /
// FP6 elements show; bf16 tensors where it sets scale_round=source) with the recipe's rule, own partition, knobs and amax policy and the
// profile's element policy, as the conformance plan builds its recipe suites (plan.cpp); the
// generated tensors hold all-zero, NaN and Inf blocks, subnormal amax and amax near the
// element max. Scale files carry the recipe under the ocp element policy (no elements).
void recipe_files(Kind k, std::vector<VectorFileText>& out) {
  if (k == Kind::dequantize) return;  // §19.3 dequantize reads only the stored metadata
  const std::string fam(kind_name(k));
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& pr = all_profiles()[i];
    if (!pr.recipe) continue;
    const auto rule = parse_scale_rule(pr.recipe->rule);
    if (!rule)
      throw std::logic_error("profile " + std::string(pr.name) + ": unknown rule " + std::string(pr.recipe->rule));
    // source, element: f8e4m3fn, or f4e2m1fn alone for a recipe that takes no E4M3 elements (NVFP4)
    const FormatId first = pr.recipe->takes(format(FormatId::f8e4m3fn)) ? FormatId::f8e4m3fn : FormatId::f4e2m1fn;
    std::vector<std::pair<FormatId, FormatId>> files{{FormatId::f32, first}};
    if (pr.recipe->knobs.find("elem_nan=") != std::string_view::npos && first != FormatId::f4e2m1fn)
      files.push_back({FormatId::f32, FormatId::f4e2m1fn});
    // §14.5 a scale rounded to the source format shows with a bf16 source
    if (pr.recipe->knobs.find("scale_round=source") != std::string_view::npos)
      files.push_back({FormatId::bf16, FormatId::f8e4m3fn});
    for (const auto& [src, e] : files) {
      TensorParams::Spec s;
      s.kind = k;
      s.rule = *rule;
      s.elem = &format(e);
      s.src = &format(src);
      s.partition = kit::partition(pr.recipe->partition, "profile " + std::string(pr.name) + " partition");
      s.apply = rule_info(*rule).apply;
      s.profile = k == Kind::scale ? "ocp" : std::string(pr.name);
      s.policy = tensor_base(s.profile, *rule);
      s.recipe = recipe_base(std::string(pr.name));
      s.amax = AmaxPolicy{pr.recipe->amax_nan_ignore ? AmaxNan::ignore : AmaxNan::propagate, AmaxInf::propagate};
      add_file(fam + "/recipe/" + std::string(pr.name) + "-" + std::string(format(src).name) + "-" +
                   std::string(format(e).name) + "-" + to_string(s.partition),
               s,
               "the recipe of profile " + std::string(pr.name) +
                   " (§10.4, §19.8; source: " + std::string(pr.recipe->source) +
                   "): generated tensors (seed 1): zeros, subnormals, NaN / Inf blocks",
               out);
    }
  }
}

// The files of one family.
void family_files(Kind k, std::vector<VectorFileText>& out) {
  struct FileSpec {
    ScaleRule rule;
    FormatId elem;
    Partition part;
  };
  const std::vector<FileSpec> specs = {
      {ScaleRule::amax, FormatId::f8e4m3fn, Partition::tensor()},
      {ScaleRule::amax, FormatId::f8e5m2, Partition::per_row()},
      {ScaleRule::amax_recip, FormatId::f8e4m3fn, Partition::per_col()},
      {ScaleRule::amax_dequant, FormatId::f8e4m3fn, Partition::blocks(1, 16)},
      {ScaleRule::pow2, FormatId::f8e4m3fn, Partition::blocks(4, 4)},
      {ScaleRule::mx_floor, FormatId::f8e4m3fn, Partition::blocks(1, 32)},
      {ScaleRule::mx_floor, FormatId::f4e2m1fn, Partition::blocks(32, 1)},
      {ScaleRule::mx_ceil, FormatId::f8e5m2, Partition::blocks(1, 32)},
      {ScaleRule::mx_even, FormatId::f6e2m3fn, Partition::blocks(1, 32)},
      {ScaleRule::mx_rceil, FormatId::f8e4m3fn, Partition::blocks(1, 32)},
      {ScaleRule::mx_rceil_f32, FormatId::f6e3m2fn, Partition::blocks(1, 32)},
      {ScaleRule::gam, FormatId::f8e4m3fn, Partition::blocks(4, 4)},
      {ScaleRule::nvfp4, FormatId::f4e2m1fn, Partition::blocks(1, 16)},
      {ScaleRule::int8, FormatId::int8, Partition::per_row()},
      {ScaleRule::int8_127_5, FormatId::int8, Partition::blocks(1, 16)},
      {ScaleRule::pow2_recip, FormatId::f8e4m3fn, Partition::blocks(4, 4)},
  };
  const std::string fam(kind_name(k));
  for (const auto& fs : specs) {
    TensorParams::Spec s;
    s.kind = k;
    s.rule = fs.rule;
    s.elem = &format(fs.elem);
    s.partition = fs.part;
    s.src = &format(fs.elem == FormatId::f8e5m2 ? FormatId::bf16 : FormatId::f32);
    s.group = has_group_mantissa(fs.rule) ? Partition::blocks(8, 0) : Partition::tensor();
    s.apply = is_int8(fs.rule) ? ScaleApply::fused : ScaleApply::rn32;
    s.profile = "ocp";
    s.policy = tensor_base("ocp", fs.rule);
    auto file = [&](const TensorParams::Spec& base, const std::string& suffix, const std::string& cov) {
      const std::string formats = k == Kind::dequantize
                                      ? std::string(base.elem->name)
                                      : std::string(base.src->name) + "-" + std::string(base.elem->name);
      add_file(fam + "/" + formats + "-" + std::string(to_string(base.rule)) + "-" + to_string(base.partition) + suffix,
               base, cov, out);
    };
    file(s, "", "generated tensors (seed 1, cases 0..2): structured blocks, zeros, subnormals, NaN / Inf");
    if (k == Kind::scale) continue;
    // variants: stochastic rounding with explicit r, int8 rounding, fused, reciprocal
    if (k == Kind::quantize || k == Kind::fake_quant) {
      if (fs.rule == ScaleRule::mx_floor || fs.rule == ScaleRule::amax || is_int8(fs.rule)) {
        TensorParams::Spec t = s;
        (void)apply_policy_settings(t.policy, "round=sr sr_bits=8 sr_variant=fraction");
        file(t, "-sr8", "generated tensors with explicit random values r (stochastic rounding, §5, §19.2)");
      }
      if (is_int8(fs.rule) && k == Kind::quantize) {
        for (const char* m : {"rna", "rup"}) {
          TensorParams::Spec t = s;
          (void)apply_policy_settings(t.policy, std::string("round=") + m);
          file(t, std::string("-") + m,
               std::string("int8 rounding ") + m + (std::string(m) == "rup" ? " (the ceiling of [MD] Eq. 1)" : ""));
        }
      }
      if (fs.rule == ScaleRule::amax && fs.elem == FormatId::f8e4m3fn) {
        TensorParams::Spec t = s;
        t.apply = ScaleApply::fused;
        file(t, "-fused", "the fused application (one rounding of the exact x * S, §19.2)");
      }
    }
    if ((k == Kind::dequantize || k == Kind::fake_quant) && fs.rule == ScaleRule::amax &&
        fs.elem == FormatId::f8e4m3fn) {
      TensorParams::Spec t = s;
      t.dequant = DequantOp::reciprocal;
      file(t, "-reciprocal", "dequantize by v * RN32(1 / S) (§19.3)");
    }
  }
  recipe_files(k, out);
  if (k == Kind::quantize || k == Kind::fake_quant) out.push_back({"divergence/" + fam + ".vec", divergence_file(k)});
}

}  // namespace

void generate_vectors(Kind k, std::vector<VectorFileText>& out) { family_files(k, out); }

std::unique_ptr<VectorFileReader> open_divergence(Kind k, const VectorHeader& h,
                                                  const std::vector<std::string>& profiles) {
  return std::make_unique<DivergenceReader>(k, h, profiles);
}

}  // namespace numref::conform::tensor
