// numref conformance — tensor suites: comparison, classification and rendering of a
// mismatch (the first differing element or block, and how many differ).   spec §34.8
#include <algorithm>
#include <cstring>
#include <optional>

#include "numref/convert.hpp"
#include "tensor.hpp"

namespace numref::conform::tensor {

namespace {

using kit::cmp_magnitude;
using kit::exact_of;

// The §34.4-style class of an element conversion of the exact (or binary32) value v into
// `elem` under `pol`: tie, overflow/saturation, subnormal or rounding.
std::string value_class(const Exact& v, const Format& elem, const Policy& pol, std::uint32_t ec, std::uint32_t gc,
                        bool sr) {
  const Decoded de = decode(ec, elem), dg = decode(gc, elem);
  const Round mode = effective_round(elem, pol);
  if (!sr && (mode == Round::rne || mode == Round::rna) && v.sig != 0 && kit::is_tie(v, elem, pol)) return "tie";
  const Decoded dmax = decode(elem.max_finite, elem);
  const bool beyond = !elem.is_integer() && cmp_magnitude(v, exact_of(dmax)) > 0;
  auto at_max = [&](std::uint32_t c, const Decoded& d) {
    if (d.cls == Class::nan || d.cls == Class::inf) return true;
    if (elem.is_integer()) return d.sig >= elem.max_finite;
    return (c & elem.mag_mask()) == elem.max_finite;
  };
  if (beyond || at_max(ec, de) || at_max(gc, dg)) return "overflow/saturation";
  if (sr) return "sr";
  if (!elem.is_integer()) {
    const Exact minnormal{false, 1, elem.emin(), false};
    if (cmp_magnitude(v, minnormal) < 0 || de.cls == Class::subnormal || dg.cls == Class::subnormal) return "subnormal";
  }
  return "rounding";
}

std::string scale_value(std::uint32_t code, const Format& f) {
  if (f.man_bits == 0 && !f.is_integer()) {  // E8M0: 2^(c - 127)
    if (code == f.canonical_nan) return "NaN";
    return "2^" + std::to_string(static_cast<int>(code) - 127);
  }
  return render_value(code, f);
}

std::string code_text(std::uint32_t code, const Format& f) {
  if (code & ~f.mask()) return hex(code, 8) + " (not a " + std::string(f.name) + " code)";
  return hex(code, code_digits(f)) + " (" + render_value(code, f) + ")";
}

// ---- the state of one case, rebuilt from its inputs --------------------------------------------

struct CaseCtx {
  const TensorParams& p;
  std::vector<unsigned char> buf;
  std::optional<TensorView> view;
  std::optional<Quantizer> qz;
  std::vector<Amax> amax;
  std::vector<BlockScale> bs;
  ScaleMeta meta;  // dequantize

  CaseCtx(const TensorParams& tp, const std::uint32_t* in) : p(tp) {
    const Layout& L = p.layout();
    const auto& s = p.spec();
    if (p.kind() == Kind::dequantize) {
      meta = p.dequant_meta(in);
      return;
    }
    kit::pack(*s.src, in + L.x, L.n, buf);
    view.emplace(*s.src, buf.data(), s.rows, s.cols, static_cast<std::ptrdiff_t>(p.c_op().row_stride),
                 static_cast<std::ptrdiff_t>(p.c_op().col_stride));
    qz.emplace(p.quantize_spec(), s.rows, s.cols);
    amax.resize(L.nb);
    for (std::size_t k = 0; k < L.nb; ++k) amax[k] = qz->amax(*view, k);
    qz->prepare(amax);
    bs.resize(L.nb);
    for (std::size_t k = 0; k < L.nb; ++k) bs[k] = qz->block_scale(k, amax[k]);
  }

  // NaN / Inf present in block b of the view.
  std::pair<bool, bool> specials(std::size_t b) const {
    bool nan = false, inf = false;
    const Format& f = *p.spec().src;
    const BlockRange r = p.grid().range(b);
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) {
        const Decoded d = decode(view->code(i, j), f);
        nan |= d.cls == Class::nan;
        inf |= d.cls == Class::inf;
      }
    return {nan, inf};
  }
};

// The first index where two word ranges differ, and how many do.
struct Diff {
  std::size_t first = 0, count = 0;
};
Diff diff(CaseView e, CaseView g, int at, std::size_t n) {
  Diff d;
  if (at < 0) return d;
  for (std::size_t k = 0; k < n; ++k)
    if (e[at + static_cast<int>(k)] != g[at + static_cast<int>(k)]) {
      if (d.count == 0) d.first = k;
      ++d.count;
    }
  return d;
}

bool is_nan_code(std::uint32_t c, const Format& f) { return (c & ~f.mask()) == 0 && decode(c, f).cls == Class::nan; }

}  // namespace

// ---- classification ---------------------------------------------------------------------------

namespace {

// RN32(v · RN32(1 / S)): v multiplied by a binary32 reciprocal instead of divided (§19.3, §14);
// none when 1 / S overflows binary32 (S below 2^-128), as no such reciprocal exists.
std::optional<std::uint32_t> times_recip32(const Exact& v, const Exact& S) {
  const std::uint32_t r = rn32(exact_div(exact_pow2(0), S));
  if (!f32_is_finite(r)) return std::nullopt;
  return rn32(exact_mul(v, exact_f32(r)));
}

// §13 an amax mismatch of block b.
std::string classify_amax(const CaseCtx& c, std::size_t b, std::uint32_t ea, std::uint32_t ga) {
  const auto [nan, inf] = c.specials(b);
  if (nan && (f32_is_nan(ea) || f32_is_nan(ga))) return "amax/nan-policy";
  if (inf && (f32_is_inf(ea) || f32_is_inf(ga) || f32_is_nan(ga))) return "amax/inf-policy";
  if (ga & 0x80000000u) return "amax/sign";
  if (ea != 0 && ea < 0x00800000u) return "amax/subnormal";
  return "amax/value";
}

// The stored scale of block b's amax under another rule r2 (a rule without tensor-level state),
// with r2's own q_max (§14.4; an int8 rule's with int8 elements).
std::uint32_t rule_code(const CaseCtx& c, std::size_t b, ScaleRule r2) {
  const Amax a = c.amax[b];
  const Exact q = rule_info(r2).int_range ? rule_qmax(r2, format(FormatId::int8)) : c.p.q_max();
  switch (scale_kind(r2)) {
    case ScaleKind::fp32_quotient: return fp32_amax_scale(a, q);
    case ScaleKind::fp32_recip:
      return a.poisoned() ? kF32NaN : rn32(exact_div(exact_pow2(0), exact_f32(fp32_amax_scale(a, q))));
    case ScaleKind::fp32_dequant: return fp32_dequant_scale(a, q);
    case ScaleKind::pow2: return pow2_floor(fp32_amax_scale(a, q));
    case ScaleKind::pow2_recip:
      return a.poisoned() ? kF32NaN : rn32(exact_div(exact_pow2(0), exact_f32(pow2_floor(fp32_amax_scale(a, q)))));
    case ScaleKind::mx: return mx_scale_code(r2, a, q, c.p.spec().elem->precision());
    case ScaleKind::gam:
    case ScaleKind::nvfp4: break;
  }
  return kF32NaN;
}

// The other rules that give block b's scale, in the order of their use in libraries.
std::vector<ScaleRule> rules_giving(const CaseCtx& c, std::size_t b, std::uint32_t gs) {
  std::vector<ScaleRule> out;
  const ScaleRule rule = c.p.spec().rule;
  if (needs_tensor_state(rule)) return out;
  for (ScaleRule r2 : rules_by_library_use())
    if (r2 != rule && !needs_tensor_state(r2) && &scale_format(r2) == &c.p.scale_fmt() && rule_code(c, b, r2) == gs)
      out.push_back(r2);
  return out;
}

// §14–§18, §20.1 a stored-scale mismatch (first at block b): which rule or slip gives the
// answer. A rule is named only when it explains every differing block of the case.
std::string classify_scale(const CaseCtx& c, std::size_t b, CaseView e, CaseView g) {
  const TensorParams& p = c.p;
  const Layout& L = p.layout();
  const std::uint32_t es = e[L.scales + static_cast<int>(b)], gs = g[L.scales + static_cast<int>(b)];
  const Format& sf = p.scale_fmt();
  if (gs & ~sf.mask()) return "scale/width";
  const Amax a = c.amax[b];
  const auto [nan, inf] = c.specials(b);
  const bool got_nan = decode(gs, sf).cls == Class::nan || (sf.bits == 32 && !f32_is_finite(gs));
  if (c.bs[b].poisoned || got_nan) {
    if (nan) return "scale/nan-block";
    if (inf) return "scale/inf-block";
    return "scale/nan";
  }
  if (a.is_zero()) return "scale/zero-block";
  std::vector<ScaleRule> cand = rules_giving(c, b, gs);
  for (std::size_t k = b + 1; k < L.nb && !cand.empty(); ++k) {
    const int w = L.scales + static_cast<int>(k);
    if (e[w] == g[w] || c.bs[k].poisoned || c.amax[k].is_zero()) continue;
    std::erase_if(cand, [&](ScaleRule r2) { return rule_code(c, k, r2) != g[w]; });
  }
  if (!cand.empty()) return "scale/rule=" + std::string(to_string(cand.front()));
  if (sf.bits == 32) {
    const Exact av = exact_f32(a.f32);
    const Exact& q = p.q_max();
    if (gs == kF32Inf) return "scale/clamp";
    // q_max * RN32(1 / amax): a reciprocal multiplied instead of a quotient
    if (gs == times_recip32(q, av)) return "scale/reciprocal";
    if (gs == rn32(exact_div(av, q)) || gs == rn32(exact_div(q, av))) return "scale/inverted";
    if (a.f32 < 0x00800000u) return "scale/subnormal";
  }
  if (sf.bits == 8 && sf.man_bits == 0 && (es == 0 || gs == 0 || es == 0xFE || gs == 0xFE)) return "scale/clamp";
  if (a.f32 < 0x00800000u) return "scale/subnormal";
  return "scale/rounding";
}

// §19.2 an element-code mismatch at element index k (scales equal).
std::string classify_code(const CaseCtx& c, std::size_t k, std::uint32_t r, std::uint32_t ec, std::uint32_t gc) {
  const TensorParams& p = c.p;
  const auto& s = p.spec();
  const Format& elem = *s.elem;
  if (gc & ~elem.mask()) return "code/width";
  const std::size_t i = k / s.cols, j = k % s.cols;
  const std::size_t b = p.grid().block_of(i, j);
  const BlockScale& bs = c.bs[b];
  if (bs.poisoned) return "nan-block";
  const Decoded de = decode(ec, elem), dg = decode(gc, elem);
  if (de.cls == Class::nan && dg.cls == Class::nan) return de.sign != dg.sign ? "nan/sign" : "nan/payload";
  const std::uint32_t xc = c.view->code(i, j);
  const Decoded dx = decode(xc, *s.src);
  if (dx.cls == Class::nan) return "nan/operand";
  if (dx.cls == Class::inf)
    return (ec & elem.mag_mask()) == elem.max_finite || (gc & elem.mag_mask()) == elem.max_finite ? "inf/saturation"
                                                                                                  : "inf";
  if (dx.cls == Class::zero) return de.cls == Class::zero && dg.cls == Class::zero ? "zero/sign" : "zero";
  if (de.cls == Class::zero && dg.cls == Class::zero) return "zero/sign";
  const Exact x = exact_of(dx);
  const Exact prod = bs.quant.divide ? exact_div(x, bs.quant.value) : exact_mul(x, bs.quant.value);
  const std::uint32_t y32 = rn32(prod);
  const Converter to_elem(format(FormatId::f32), elem, s.policy);
  // the other application of the factor (§19.2)
  if (s.apply == ScaleApply::rn32) {
    const bool fused_ok = !(p.sr() && s.policy.sr_variant == SrVariant::add) && !s.policy.daz;
    if (fused_ok && Rounder(elem, s.policy)(prod, r).bits == gc) return "apply/fused";
  } else if (to_elem(y32, r).bits == gc) {
    return "apply/rn32";
  }
  // an unrounded FP32 amax factor (q_max / amax kept exact, or in double precision)
  const ScaleKind sk = scale_kind(s.rule);
  const bool fp32_amax = sk == ScaleKind::fp32_quotient || sk == ScaleKind::fp32_recip || sk == ScaleKind::fp32_dequant;
  if (fp32_amax && !is_int8(s.rule)) {
    const Amax a = c.amax[b];
    if (!a.is_zero()) {
      const Exact exact_prod = exact_div(exact_mul(x, p.q_max()), exact_f32(a.f32));
      const std::uint32_t alt =
          s.apply == ScaleApply::rn32 ? to_elem(rn32(exact_prod), r).bits : Rounder(elem, s.policy)(exact_prod, r).bits;
      if (alt == gc) return "scale/unrounded-factor";
    }
  }
  if (sk == ScaleKind::fp32_dequant) {  // x * RN32(1 / D) instead of x / D
    const std::uint32_t rd = rn32(exact_div(exact_pow2(0), bs.quant.value));
    if (f32_is_finite(rd)) {  // 1 / D overflows binary32 for a D below 2^-128: no such reciprocal
      const Exact alt_prod = exact_mul(x, exact_f32(rd));
      const std::uint32_t alt =
          s.apply == ScaleApply::rn32 ? to_elem(rn32(alt_prod), r).bits : Rounder(elem, s.policy)(alt_prod, r).bits;
      if (alt == gc) return "apply/reciprocal";
    }
  }
  const Exact v = s.apply == ScaleApply::rn32 ? (f32_is_finite(y32) ? exact_f32(y32) : prod) : prod;
  return value_class(v, elem, s.policy, ec, gc, p.sr());
}

// §19.3 a dequantized-value mismatch at element k: code c of block b.
std::string classify_dequant_value(const CaseCtx& c, std::size_t b, std::uint32_t code, std::uint32_t ey,
                                   std::uint32_t gy, const Factor& d, bool poisoned) {
  const TensorParams& p = c.p;
  const Format& elem = *p.spec().elem;
  if (poisoned) return "nan-block";
  const Decoded dc = decode(code, elem);
  if (f32_is_nan(ey) && f32_is_nan(gy)) return (ey >> 31) != (gy >> 31) ? "nan/sign" : "nan/payload";
  if (dc.cls == Class::nan) return "nan/code";
  if (dc.cls == Class::inf) return "inf";
  if (dc.cls == Class::zero) return "zero/sign";
  const Exact v = exact_of(dc);
  // the other dequantize operation (§19.3): v / S against v * RN32(1 / S)
  const ScaleRule rule = p.spec().rule;
  if (dequant_is_multiplier(rule)) {
    ScaleMeta m = c.meta;
    m.dequant = DequantOp::divide;
    const Exact S = dequant_factor(m, b).value;
    const std::optional<std::uint32_t> alt = d.divide ? times_recip32(v, S) : rn32(exact_div(v, S));
    if (alt == gy) return d.divide ? "dequant/reciprocal" : "dequant/divide";
  }
  const std::uint32_t y = ey;
  if (f32_is_finite(y) && (y & 0x7F800000u) == 0) return "subnormal";
  if (!f32_is_finite(y) || !f32_is_finite(gy)) return "overflow/saturation";
  return "rounding";
}

}  // namespace

std::string TensorParams::classify(const CaseDiff& d) const {
  const Layout& L = layout_;
  const CaseView in = d.in, e = d.exp, g = d.got;
  // the first difference, in the order block metadata -> elements -> counts
  const CaseCtx c(*this, in.data());
  if (const ColumnDiff* a = d.find("amax"))
    return classify_amax(c, a->first, e[L.amax + static_cast<int>(a->first)], g[L.amax + static_cast<int>(a->first)]);
  if (d.find("tamax")) return "scale/tensor-amax";
  if (d.find("gm")) return "scale/group-mantissa";
  if (const ColumnDiff* sd = d.find("scales")) return classify_scale(c, sd->first, e, g);
  if (const ColumnDiff* cd = d.find("codes")) {
    const int w = L.codes + static_cast<int>(cd->first);
    const std::uint32_t r = L.r >= 0 ? in[L.r + static_cast<int>(cd->first)] : 0u;
    return classify_code(c, cd->first, r, e[w], g[w]);
  }
  if (const ColumnDiff* yd = d.find("y")) {
    {
      const std::size_t k = yd->first;
      const int w = L.y + static_cast<int>(k);
      if (s_.kind == Kind::dequantize) {
        const std::size_t b = grid_.block_of(k / s_.cols, k % s_.cols);
        const bool poisoned = block_poisoned(c.meta, b);
        const Factor f = poisoned ? Factor{} : dequant_factor(c.meta, b);
        return classify_dequant_value(c, b, in[L.codes_in + static_cast<int>(k)], e[w], g[w], f, poisoned);
      }
      // fake-quant: find what the value corresponds to
      const std::size_t i = k / s_.cols, j = k % s_.cols;
      const std::size_t b = grid_.block_of(i, j);
      const Format& of = *s_.out;
      if (g[w] & ~of.mask()) return "code/width";
      if (c.bs[b].poisoned) return "nan-block";
      const Decoded dx = decode(c.view->code(i, j), *s_.src);
      if (is_nan_code(e[w], of) && is_nan_code(g[w], of))
        return decode(e[w], of).sign != decode(g[w], of).sign ? "nan/sign" : "nan/payload";
      if (dx.cls == Class::nan) return "nan/operand";
      if (dx.cls == Class::inf) return "inf";
      // the expected code and the chain behind it
      std::vector<std::uint8_t> codes(L.n);
      const std::span<const std::uint32_t> random =
          sr_ ? std::span<const std::uint32_t>(in.data() + L.r, L.n) : std::span<const std::uint32_t>();
      (void)c.qz->quantize_block(*c.view, b, c.bs[b], codes, random);
      const std::uint32_t code = codes[k];
      const Converter code_f32(*s_.elem, format(FormatId::f32), c.qz->spec().wide);
      const Converter to_out(format(FormatId::f32), of, c.qz->spec().wide);
      const Decoded dc = decode(code, *s_.elem);
      if (dc.cls != Class::nan && dc.cls != Class::inf && dc.cls != Class::zero) {
        const Exact v = exact_of(dc);
        const Factor& dq = c.bs[b].dequant;
        const bool multiplier = dequant_is_multiplier(s_.rule);
        if (multiplier) {  // the other §19.3 operation: v / S against v * RN32(1 / S)
          const BlockRange br = grid_.range(b);
          const Exact S = scale_kind(s_.rule) == ScaleKind::gam
                              ? gam_block_scale(c.bs[b].stored, c.qz->groups()[ggrid_.block_of(br.r0, br.c0)].m_g)
                              : exact_f32(c.bs[b].stored);
          const std::optional<std::uint32_t> alt = dq.divide ? times_recip32(v, S) : rn32(exact_div(v, S));
          if (alt && to_out(*alt).bits == g[w]) return dq.divide ? "dequant/reciprocal" : "dequant/divide";
        }
        const std::uint32_t d32 = rn32(dq.divide ? exact_div(v, dq.value) : exact_mul(v, dq.value));
        Policy tr = c.qz->spec().wide;
        tr.round = Round::rtz;
        if (Converter(format(FormatId::f32), of, tr)(d32).bits == g[w]) return "output/truncation";
        // a neighbouring element code: the quantization differs
        for (std::uint32_t nb : {code + 1, code - 1}) {
          if (nb & ~s_.elem->mask()) continue;
          const Decoded dn = decode(nb, *s_.elem);
          if (dn.cls == Class::nan || dn.cls == Class::inf) continue;
          const Exact vn = exact_of(dn);
          const std::uint32_t dn32 = dn.cls == Class::zero
                                         ? (dn.sign ? 0x80000000u : 0u)
                                         : rn32(dq.divide ? exact_div(vn, dq.value) : exact_mul(vn, dq.value));
          if (to_out(dn32).bits == g[w]) {
            const std::uint32_t r = L.r >= 0 ? in[L.r + static_cast<int>(k)] : 0u;
            return "quantize/" + classify_code(c, k, r, code, nb);
          }
        }
      }
      return "rounding";
    }
  }
  return "counts";
}

// ---- rendering ----------------------------------------------------------------------------------

std::string TensorParams::counts_text(CaseView out) const {
  const Layout& L = layout_;
  if (L.counts < 0 || out[L.counts] == kNotReported) return {};
  return "counts " + std::to_string(out[L.counts]) + "," + std::to_string(out[L.counts + 1]) + "," +
         std::to_string(out[L.counts + 2]) + "," + std::to_string(out[L.counts + 3]);
}

MismatchText TensorParams::render(const CaseDiff& dd) const {
  const Layout& L = layout_;
  const CaseView in = dd.in, e = dd.exp, g = dd.got;
  const bool counts_compared = (dd.options.caps & NUMREF_CAP_COUNTS) != 0;
  MismatchText t;
  const CaseCtx c(*this, in.data());
  const Format& sf = scale_fmt();
  const Format& f32 = format(FormatId::f32);
  std::string shape = std::to_string(s_.rows) + "x" + std::to_string(s_.cols) + (s_.transpose ? "^T" : "");
  // how many differ
  std::vector<std::string> parts;
  auto count = [&](int at, std::size_t n, const char* what) {
    const Diff d = diff(e, g, at, n);
    if (d.count) parts.push_back(std::to_string(d.count) + " of " + std::to_string(n) + " " + what);
    return d;
  };
  const Diff da = count(L.amax, L.nb, "amaxes");
  const Diff ds = count(L.scales, L.nb, "scales");
  const Diff dg = count(L.gm, L.ng, "group mantissas");
  const Diff dt = count(L.tamax, 1, "tensor amaxes");
  const Diff dc = count(L.codes, L.n, "codes");
  const Diff dy = count(L.y, L.n, "values");
  bool counts_differ = false;
  if (L.counts >= 0 && counts_compared && g[L.counts] != kNotReported && e[L.counts] != kNotReported)
    for (int k = 0; k < 4; ++k) counts_differ |= e[L.counts + k] != g[L.counts + k];
  if (counts_differ) parts.push_back("the counts");
  for (const auto& p : parts) t.detail += (t.detail.empty() ? "" : ", ") + p;
  if (!t.detail.empty()) t.detail += " differ";

  auto block_text = [&](std::size_t b) {
    const BlockRange r = grid_.range(b);
    std::string s = shape + " block " + std::to_string(b) + " (rows " + std::to_string(r.r0) + ".." +
                    std::to_string(r.r1 - 1) + ", cols " + std::to_string(r.c0) + ".." + std::to_string(r.c1 - 1) + ")";
    if (s_.kind != Kind::dequantize) {
      s += " amax=" + hex(c.amax[b].f32, 8) + " (" + render_value(c.amax[b].f32, f32) + ")";
      const auto [nan, inf] = c.specials(b);
      if (nan)
        s += " [NaN in block]";
      else if (inf)
        s += " [Inf in block]";
    } else {
      s += " scale=" + hex(c.meta.scales[b], code_digits(sf)) + " (" + scale_value(c.meta.scales[b], sf) + ")";
      if (has_group_mantissa(s_.rule)) {
        const BlockRange rr = grid_.range(b);
        s += " m_g=" + hex(c.meta.group_mantissa[ggrid_.block_of(rr.r0, rr.c0)], 6);
      }
      if (has_tensor_amax(s_.rule)) s += " t_amax=" + hex(c.meta.tensor_amax, 8);
    }
    return s;
  };
  auto scale_words = [&](CaseView v, std::size_t b) {
    return "scale " + hex(v[L.scales + static_cast<int>(b)], code_digits(sf)) + " (" +
           scale_value(v[L.scales + static_cast<int>(b)], sf) + ")";
  };
  auto element_text = [&](std::size_t k) {
    const std::size_t i = k / s_.cols, j = k % s_.cols;
    std::string s =
        block_text(grid_.block_of(i, j)) + "; element (" + std::to_string(i) + "," + std::to_string(j) + ")";
    if (s_.kind == Kind::dequantize) {
      const std::uint32_t code = in[L.codes_in + static_cast<int>(k)];
      s += " code=" + code_text(code, *s_.elem);
    } else {
      const std::uint32_t x = c.view->code(i, j);
      s += " x=" + code_text(x, *s_.src);
      if (L.r >= 0) s += " r=" + hex(in[L.r + static_cast<int>(k)], (s_.policy.sr_bits + 3) / 4);
    }
    return s;
  };
  if (da.count) {
    const std::size_t b = da.first;
    t.inputs = block_text(b);
    t.got = "amax " + code_text(g[L.amax + static_cast<int>(b)], f32);
    t.expected = "amax " + code_text(e[L.amax + static_cast<int>(b)], f32);
  } else if (dt.count) {
    t.inputs = shape;
    t.got = "tensor amax " + code_text(g[L.tamax], f32);
    t.expected = "tensor amax " + code_text(e[L.tamax], f32);
  } else if (dg.count) {
    t.inputs = shape + " group " + std::to_string(dg.first);
    t.got = "group mantissa " + hex(g[L.gm + static_cast<int>(dg.first)], 6);
    t.expected = "group mantissa " + hex(e[L.gm + static_cast<int>(dg.first)], 6);
  } else if (ds.count) {
    const std::size_t b = ds.first;
    t.inputs = block_text(b);
    t.got = scale_words(g, b);
    t.expected = scale_words(e, b);
    if (L.codes >= 0) {  // the first element of the block whose code differs, as context
      const BlockRange r = grid_.range(b);
      for (std::size_t i = r.r0; i < r.r1; ++i)
        for (std::size_t j = r.c0; j < r.c1; ++j) {
          const int w = L.codes + static_cast<int>(i * s_.cols + j);
          if (e[w] != g[w]) {
            t.inputs += "; element (" + std::to_string(i) + "," + std::to_string(j) +
                        ") x=" + code_text(c.view->code(i, j), *s_.src);
            t.got += " code " + code_text(g[w], *s_.elem);
            t.expected += " code " + code_text(e[w], *s_.elem);
            i = r.r1 - 1;
            break;
          }
        }
    }
  } else if (dc.count) {
    const std::size_t k = dc.first;
    t.inputs = element_text(k);
    const std::size_t b = grid_.block_of(k / s_.cols, k % s_.cols);
    t.got = scale_words(g, b) + " code " + code_text(g[L.codes + static_cast<int>(k)], *s_.elem);
    t.expected = scale_words(e, b) + " code " + code_text(e[L.codes + static_cast<int>(k)], *s_.elem);
  } else if (dy.count) {
    const std::size_t k = dy.first;
    t.inputs = element_text(k);
    const Format& of = s_.kind == Kind::fake_quant ? *s_.out : f32;
    t.got = code_text(g[L.y + static_cast<int>(k)], of);
    t.expected = code_text(e[L.y + static_cast<int>(k)], of);
  } else {
    t.inputs = shape;
    t.got = counts_text(g);
    t.expected = counts_text(e);
  }
  if (counts_differ && (da.count || ds.count || dc.count || dy.count)) {
    t.got += "; " + counts_text(g);
    t.expected += "; " + counts_text(e);
  }
  return t;
}

}  // namespace numref::conform::tensor
