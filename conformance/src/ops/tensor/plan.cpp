// numref conformance — the suites of a level for the tensor families.     spec §34.8
//
// Dimensions: the 68 (rule, element) combinations (11 rules x 6 element formats, and the
// two int8 rules with int8), 11 partitions (tensor, rows, cols, 1x32, 32x1, 1x16, 16x1,
// 32x32, 4x8, 3x5, 1x128), 5 main sources (f32, bf16, f16, f8e4m3fn, f8e5m2; f6e3m2fn and
// f4e2m1fn now and then), transposed views, the amax NaN / Inf policies, GAM groups, the
// element-policy variants (rounding modes, stochastic rounding, overflow, NaN knobs, DAZ,
// FTZ), the rn32 / fused application, divide / reciprocal dequantization, and the
// fake-quant output formats. Level 0 takes each (rule, element) once with the other
// dimensions rotating; level 1 crosses (rule, element) with every partition and adds the
// variants; level 2 has more cases per suite; exhaustive adds the 2^32 f32 amax sweep of the
// scale rules. Shapes are derived from a fixed hash of the suite (not the seed): ragged
// edges, exact multiples and single blocks all occur. The first checked profile gets the
// full set; the others a rotating subset (the profile changes only the element policy).
#include <algorithm>
#include <set>
#include <stdexcept>

#include "tensor.hpp"

namespace numref::conform::tensor {

namespace {

struct Combo {
  ScaleRule rule;
  const Format* elem;
};

// §19.1 The element formats: every signed format of at most 8 bits with a zero (the table
// order), the int8 rules with int8 only.
const std::vector<Combo>& combos() {
  static const std::vector<Combo> v = [] {
    std::vector<Combo> out;
    for (int r = 0; r < kScaleRuleCount; ++r) {
      const auto rule = static_cast<ScaleRule>(r);
      if (is_int8(rule)) {
        out.push_back({rule, &format(FormatId::int8)});
        continue;
      }
      for (const Format& e : kFormats)
        if (e.bits <= 8 && e.is_signed && e.has_zero && !e.is_p3109()) out.push_back({rule, &e});  // §2.5.7
    }
    return out;
  }();
  return v;
}

const std::vector<Partition>& partitions() {
  static const std::vector<Partition> v = {
      Partition::tensor(),      Partition::per_row(),     Partition::per_col(),     Partition::blocks(1, 32),
      Partition::blocks(32, 1), Partition::blocks(1, 16), Partition::blocks(16, 1), Partition::blocks(32, 32),
      Partition::blocks(4, 8),  Partition::blocks(3, 5),  Partition::blocks(1, 128)};
  return v;
}

// §12.1 The source of the i-th suite: the wide tensor sources (f32, bf16, f16) three times in
// four, every narrow tensor source in turn the fourth time (table order).
const Format* source(std::size_t i) {
  static const auto lists = [] {
    std::pair<std::vector<const Format*>, std::vector<const Format*>> wn;
    for (const Format& f : kFormats)
      if (check_source_format(f).empty()) (f.bits > 8 ? wn.first : wn.second).push_back(&f);
    return wn;
  }();
  const auto& [wide, narrow] = lists;
  if (i % 4 == 3) return narrow[(i / 4) % narrow.size()];
  return wide[(i - i / 4) % wide.size()];
}

AmaxPolicy amax_policy(std::size_t i) {
  switch (i % 8) {
    case 5: return {AmaxNan::ignore, AmaxInf::propagate};
    case 6: return {AmaxNan::propagate, AmaxInf::ignore};
    case 7: return {AmaxNan::ignore, AmaxInf::ignore};
    default: return {};
  }
}

// A shape for partition p from a fixed hash: each dimension a single block, an exact
// multiple of the block, or ragged; at most 4096 elements.
void pick_shape(const Partition& p, std::uint64_t h, std::size_t& rows, std::size_t& cols) {
  CaseRng rng(0x5eed, h, 0);
  auto dim = [&](std::size_t b) -> std::size_t {
    if (b == 0) return 1 + static_cast<std::size_t>(rng.below(rng.below(4) == 0 ? 200 : 40));
    if (b == 1) return 1 + static_cast<std::size_t>(rng.below(48));
    switch (rng.below(4)) {
      case 0: return b;
      case 1: return b * (1 + static_cast<std::size_t>(rng.below(3)));
      default: return b * static_cast<std::size_t>(rng.below(3)) + 1 + static_cast<std::size_t>(rng.below(b - 1));
    }
  };
  rows = dim(p.block_rows);
  cols = dim(p.block_cols);
  while (rows * cols > 4096) {
    if (rows >= cols)
      rows = (rows + 1) / 2;
    else
      cols = (cols + 1) / 2;
  }
}

// A GAM group partition compatible with blocks p (§12.4): the tensor, or k blocks along
// each dimension.
Partition gam_group(const Partition& p, std::size_t i) {
  switch (i % 3) {
    case 1: return Partition{p.block_rows ? p.block_rows * 2 : 0, p.block_cols ? p.block_cols * 3 : 0};
    case 2: return Partition{p.block_rows ? p.block_rows * 3 : 0, 0};
    default: return Partition::tensor();
  }
}

class Planner {
 public:
  Planner(Kind k, const PlanRequest& req, std::vector<GeneratedSuite>& out) : k_(k), req_(req), out_(out) {
    // --ops <family>:SRC:ELEM:RULE
    check_selectors(
        kind_name(k), req.selectors, 2, 3,
        [](std::size_t, std::string_view w) { return parse_scale_rule(w).has_value(); }, "scale rule");
  }

  std::uint64_t per_suite() const {
    switch (req_.level) {
      case Level::l0: return 3;
      case Level::l1: return 8;
      default: return 128;
    }
  }

  // Adds one suite unless invalid (a knob the combination rejects) or not selected.
  void add(TensorParams::Spec s, std::uint64_t count, std::uint64_t shape_key) {
    s.kind = k_;
    pick_shape(s.partition, shape_key, s.rows, s.cols);
    TensorParamsPtr p;
    try {
      p = std::make_shared<const TensorParams>(s);
    } catch (const std::invalid_argument&) {
      return;  // e.g. fused with sr_variant=add: not a suite
    }
    if (!selected(*p) || !seen_.insert(p->text()).second) return;
    out_.push_back({p, cases(p, count, req_.seed)});
  }

  void add_sweep(TensorParams::Spec s, std::uint64_t total) {
    s.kind = k_;
    s.rows = 1;
    s.cols = 256;
    s.partition = Partition::blocks(1, 1);
    s.amax = AmaxPolicy{};
    const auto p = std::make_shared<const TensorParams>(s);
    if (!selected(*p) || !seen_.insert(p->text()).second) return;
    out_.push_back({p, sweep_cases(p, total)});
  }

  // The base spec of combination c under profile prof, the other dimensions rotating with i.
  TensorParams::Spec base(const Combo& c, const std::string& prof, std::size_t i, const Partition& part) const {
    TensorParams::Spec s;
    s.kind = k_;
    s.rule = c.rule;
    s.elem = c.elem;
    s.src = source(i);
    s.partition = part;
    s.transpose = i % 6 == 5;
    s.amax = amax_policy(i);
    s.group = gam_group(part, i);
    s.apply = rule_info(c.rule).apply;
    s.dequant = DequantOp::divide;
    static const FormatId outs[] = {FormatId::bf16, FormatId::f16, FormatId::f32};
    s.out = &format(outs[i % 3]);
    s.profile = prof;
    s.policy = tensor_base(prof, c.rule);
    return s;
  }

  void run() {
    const auto& C = combos();
    const auto& P = partitions();
    const std::uint64_t n = per_suite();
    const bool has_profile = k_ != Kind::scale;
    std::vector<std::string> profs = has_profile ? req_.profiles : std::vector<std::string>{"ocp"};
    if (profs.empty()) profs.push_back("ocp");
    // §10.4 profiles with a quantization recipe: their own rule and recipe (scale: without the
    // profile, whose element policy it does not use)
    for (std::size_t pi = 0; pi < req_.profiles.size(); ++pi)
      if (kit::profile_by_name(req_.profiles[pi]).recipe) recipe_suites(req_.profiles[pi], pi);
    std::erase_if(profs, [](const std::string& p) { return kit::profile_by_name(p).recipe != nullptr; });
    for (std::size_t pi = 0; pi < profs.size(); ++pi) {
      const std::string& prof = profs[pi];
      const bool first = pi == 0;
      for (std::size_t ci = 0; ci < C.size(); ++ci) {
        const Combo& c = C[ci];
        if (first) {
          if (req_.level == Level::l0) {
            add(base(c, prof, ci, P[ci % P.size()]), n, key(ci, ci % P.size(), 0));
          } else {
            for (std::size_t q = 0; q < P.size(); ++q) add(base(c, prof, ci + q, P[q]), n, key(ci, q, 0));
          }
          variants(c, ci, prof, n);
        } else if (req_.level != Level::l0 || ci % 6 == pi % 6 || is_int8(c.rule)) {
          // other profiles: level 0 one element format per rule, above every combination
          add(base(c, prof, ci + pi, P[(ci + pi) % P.size()]), n, key(ci, (ci + pi) % P.size(), 100 + pi));
        }
      }
    }
    if (k_ == Kind::scale) sweeps();
  }

 private:
  std::uint64_t key(std::size_t ci, std::size_t q, std::size_t v) const {
    return fnv1a64(std::string(kind_name(k_)) + "/" + std::to_string(ci) + "/" + std::to_string(q) + "/" +
                   std::to_string(v));
  }

  // §10.4 The suites of a recipe profile: its rule with every element format the reference
  // accepts for it, its own partition (every partition above level 0), the recipe's knobs and
  // amax policy, the profile's element policy; the sources, views and outputs rotate.
  void recipe_suites(const std::string& prof, std::size_t pi) {
    const Recipe& r = *kit::profile_by_name(prof).recipe;
    const auto rule = parse_scale_rule(r.rule);
    if (!rule) throw std::logic_error("profile " + prof + ": unknown rule " + std::string(r.rule));
    const Partition own = kit::partition(r.partition, "profile " + prof + " partition");
    std::vector<Partition> parts{own};
    if (req_.level != Level::l0)
      for (const Partition& q : partitions())
        if (!(q == own)) parts.push_back(q);
    const auto& C = combos();
    for (std::size_t ci = 0; ci < C.size(); ++ci) {
      if (C[ci].rule != *rule || !r.takes(*C[ci].elem)) continue;  // §10.4 the recipe's element formats
      for (std::size_t q = 0; q < parts.size(); ++q) {
        TensorParams::Spec s = base(C[ci], k_ == Kind::scale ? std::string("ocp") : prof, ci + q, parts[q]);
        s.recipe = recipe_base(prof);
        s.amax = AmaxPolicy{r.amax_nan_ignore ? AmaxNan::ignore : AmaxNan::propagate, AmaxInf::propagate};
        add(s, per_suite(), key(ci, q, 200 + pi));
      }
    }
  }

  // Element-policy and option variants for the first profile.
  void variants(const Combo& c, std::size_t ci, const std::string& prof, std::uint64_t n) {
    const auto& P = partitions();
    const bool l0 = req_.level == Level::l0;
    const bool elem_pick = c.elem->id == FormatId::f8e4m3fn || c.elem->id == FormatId::f4e2m1fn ||
                           c.elem->id == FormatId::int8 || (!l0 && c.elem->id == FormatId::f8e5m2);
    if (!elem_pick) return;
    std::size_t v = 1;
    auto one = [&](const std::string& settings, auto&& tweak) {
      const std::size_t q = (ci + v * 5) % P.size();
      TensorParams::Spec s = base(c, prof, ci + v, P[q]);
      if (!settings.empty() && apply_policy_settings(s.policy, settings)) return;
      tweak(s);
      add(s, n, key(ci, q, v));
      ++v;
    };
    auto none = [](TensorParams::Spec&) {};
    const bool int8_rule = is_int8(c.rule);
    const bool quant = k_ == Kind::quantize || k_ == Kind::fake_quant;
    if (quant) {
      if (l0) {
        // level 0: a few representative variants per rule (stochastic rounding with both
        // variants, the other application, int8 rounding options, no saturation)
        const std::size_t r = static_cast<std::size_t>(c.rule);
        if (r % 2 == 0) one("round=sr sr_bits=8 sr_variant=fraction", none);
        if (r % 2 == 1 && !int8_rule) one("round=sr sr_bits=8 sr_variant=add", none);
        if (r % 3 == 0)
          one("", [&](TensorParams::Spec& s) { s.apply = int8_rule ? ScaleApply::rn32 : ScaleApply::fused; });
        if (int8_rule) {
          one("round=rna", none);
          one("round=rup", none);  // the ceiling of [MD] Eq. 1
        }
        if (c.rule == ScaleRule::mx_floor) one("overflow=nonsat", none);
        return;
      }
      for (const char* m : {"round=rtz", "round=rup", "round=rdn", "round=rna"}) one(m, none);
      for (int k : {1, 3, 8, 16, 32}) {
        one("round=sr sr_bits=" + std::to_string(k) + " sr_variant=fraction", none);
        if (!int8_rule) one("round=sr sr_bits=" + std::to_string(k) + " sr_variant=add", none);
      }
      one("", [&](TensorParams::Spec& s) { s.apply = int8_rule ? ScaleApply::rn32 : ScaleApply::fused; });
      one("round=sr sr_bits=8",
          [&](TensorParams::Spec& s) { s.apply = int8_rule ? ScaleApply::rn32 : ScaleApply::fused; });
      if (!int8_rule) {
        one("overflow=nonsat", none);
        for (const char* k : {"nan=sign", "nan=canonical", "nan=ones", "nan_to_finite=negzero", "nan_to_finite=max",
                              "daz=1", "ftz=1", "inf_sat=keep"})
          one(k, none);
      }
    }
    if (k_ == Kind::dequantize || k_ == Kind::fake_quant) {
      if (dequant_is_multiplier(c.rule)) one("", [](TensorParams::Spec& s) { s.dequant = DequantOp::reciprocal; });
    }
    if (k_ == Kind::fake_quant && !l0) {
      for (FormatId o : {FormatId::bf16, FormatId::f16, FormatId::f32})
        one("", [&](TensorParams::Spec& s) { s.out = &format(o); });
    }
    if (!l0 && (k_ == Kind::scale || quant))
      for (std::size_t a = 5; a < 8; ++a) one("", [&](TensorParams::Spec& s) { s.amax = amax_policy(a); });
  }

  // §13–§18 every source code of the narrow sources (every level), of bf16 and f16 (level
  // 1 and above) and every f32 code (exhaustive) as the amax of a 1 x 1 block.
  void sweeps() {
    const auto& C = combos();
    for (std::size_t ci = 0; ci < C.size(); ++ci) {
      const Combo& c = C[ci];
      TensorParams::Spec s = base(c, "ocp", ci, Partition::blocks(1, 1));
      s.group = Partition::tensor();
      s.transpose = false;
      for (FormatId f : {FormatId::f8e4m3fn, FormatId::f8e5m2}) {
        s.src = &format(f);
        add_sweep(s, 256);
      }
      if (req_.level == Level::l0) continue;
      for (FormatId f : {FormatId::bf16, FormatId::f16}) {
        // NVFP4 with bf16 amaxes above ~2^119 makes the reference's §18.4 decode factor
        // overflow and numref::nvfp4_decode_factor throw: f16 only (reported).
        if (scale_kind(c.rule) == ScaleKind::nvfp4 && f == FormatId::bf16) continue;
        s.src = &format(f);
        add_sweep(s, 65536);
      }
      const bool f32_sweep = c.elem->id == FormatId::f8e4m3fn || (is_int8(c.rule) && c.elem->id == FormatId::int8);
      if (req_.level == Level::exhaustive && f32_sweep && !needs_tensor_state(c.rule)) {
        s.src = &format(FormatId::f32);
        add_sweep(s, std::uint64_t{1} << 32);
      }
    }
  }

  bool selected(const TensorParams& p) const { return selector_match(p, req_.selectors); }

  Kind k_;
  const PlanRequest& req_;
  std::vector<GeneratedSuite>& out_;
  std::set<std::string> seen_;
};

}  // namespace

void plan(Kind k, const PlanRequest& req, std::vector<GeneratedSuite>& out) {
  std::vector<GeneratedSuite> mine;
  Planner(k, req, mine).run();
  out.insert(out.end(), mine.begin(), mine.end());
}

}  // namespace numref::conform::tensor
