// numref conformance — generated tensor cases.                              spec §34.8
//
// A case is one tensor of the suite's shape, produced from (seed, the suite's parameter
// text, the case index) alone (§34.3), so shards and workers produce any range. Per case
// a style is drawn: a quarter of the cases contain no NaN / Inf at all; one in 32 is
// uniform random bits (every code, specials included), one in 32 all zeros. Otherwise
// every block of the suite's partition gets its own kind:
//   zero block; structured + one NaN; structured + one ±Inf; subnormals only; structured.
// A structured block first places its amax A (random sign, random position): an exponent
// in [-40, 40] (within the source's range; sometimes its smallest normal or its top
// binade) and a significand at the places where scale rules disagree — 1 (a power of two),
// 2 - ulp, q_max's significand and its neighbours, the §16.4 EVEN threshold 2 - 2^-p and
// its neighbour, or random. The other elements: ±0, neighbours of A, subnormals, tiny
// values (flushed after scaling), magnitudes a few binades below A, and *tie-targeted*
// values: the source code nearest to (a midpoint or a value of the element grid) / f, f
// the block's quantize factor, and its neighbours — where double rounding, the rn32 /
// fused difference and tie handling show.
// Random values for stochastic rounding: 0, 2^k - 1 or uniform k-bit values.
// Dequantize inputs: uniform element codes (zeros more often) and per-block metadata —
// stored scales computed from a random amax by the rule, NaN / Inf (poisoned) scales,
// random binary32 scales, E8M0 codes 00..FF, GAM codes 01..FF with random 23-bit group
// mantissas, NVFP4 E4M3 codes 00..7F with a random tensor amax.
#include <algorithm>

#include "numref/convert.hpp"
#include "tensor.hpp"

namespace numref::conform::tensor {

namespace {

// Largest exponent field of a finite normal of f (top binade).
std::uint32_t top_field(const Format& f) { return f.max_finite >> f.man_bits; }

std::uint32_t make_code(const Format& f, bool neg, std::uint32_t field, std::uint32_t mant) {
  std::uint32_t c = (field << f.man_bits) | (mant & f.man_mask());
  if (c > f.max_finite) c = f.max_finite;
  return c | (neg ? f.sign_bit() : 0u);
}

// The fraction bits (at the source's width) of the significand of q_max: q_max's
// significand as a source mantissa, truncated.
std::uint32_t qmax_mant(const Exact& q, const Format& src) {
  const int top = 63 - __builtin_clzll(q.sig);  // q = 1.f * 2^(top + exp)
  std::uint64_t frac = q.sig - (std::uint64_t{1} << top);
  const int m = src.man_bits;
  if (top > m)
    frac >>= (top - m);
  else
    frac <<= (m - top);
  return static_cast<std::uint32_t>(frac);
}

class Gen {
 public:
  Gen(const TensorParams& p, std::uint64_t seed, std::uint64_t index)
      : p_(p), s_(p.spec()), src_(*s_.src), rng_(seed, fnv1a64(p.text()), index), src_round_(src_, Policy{}) {}

  void view(std::vector<std::uint32_t>& v) {
    const Layout& L = p_.layout();
    v.assign(L.n, 0);
    const std::uint64_t style = rng_.below(32);
    if (style == 0 && scale_kind(s_.rule) != ScaleKind::nvfp4) {
      for (auto& c : v) c = static_cast<std::uint32_t>(rng_.next()) & src_.mask();
      return;
    }
    if (style == 1) {
      for (auto& c : v) c = rng_.below(2) ? src_.sign_bit() : 0u;
      return;
    }
    specials_ok_ = style % 4 != 2;
    qz_.emplace(p_.quantize_spec(), s_.rows, s_.cols);
    const BlockGrid& g = p_.grid();
    for (std::size_t b = 0; b < g.count(); ++b) block(g.range(b), b, v);
  }

  void randoms(std::uint32_t* r, std::size_t n) {
    const int k = s_.policy.sr_bits;
    const std::uint64_t mask = k >= 32 ? 0xFFFFFFFFull : (std::uint64_t{1} << k) - 1;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t t = rng_.below(8);
      r[i] = static_cast<std::uint32_t>(t == 0 ? 0 : t == 1 ? mask : (rng_.next() & mask));
    }
  }

  void dequant_inputs(std::uint32_t* in) {
    const Layout& L = p_.layout();
    const Format& e = *s_.elem;
    for (std::size_t k = 0; k < L.n; ++k) {
      const std::uint64_t t = rng_.below(8);
      in[static_cast<std::size_t>(L.codes_in) + k] =
          t == 0 ? (rng_.below(2) ? e.sign_bit() : 0u) : static_cast<std::uint32_t>(rng_.next()) & e.mask();
    }
    const Format& sf = p_.scale_fmt();
    for (std::size_t b = 0; b < L.nb; ++b) in[static_cast<std::size_t>(L.scales_in) + b] = stored_scale(sf);
    if (L.gm_in >= 0)
      for (std::size_t g = 0; g < L.ng; ++g)
        in[static_cast<std::size_t>(L.gm_in) + g] = static_cast<std::uint32_t>(rng_.next()) & 0x7FFFFFu;
    if (L.tamax_in >= 0) {
      const std::uint64_t t = rng_.below(32);
      in[L.tamax_in] = t == 0 ? kF32NaN : t == 1 ? 0u : random_f32();
    }
  }

 private:
  // A positive binary32 amax: exponent in [-40, 40], sometimes subnormal.
  std::uint32_t random_f32() {
    if (rng_.below(16) == 0) return 1u + static_cast<std::uint32_t>(rng_.below(0x7FFFFF));
    const std::uint32_t field = 127u - 40u + static_cast<std::uint32_t>(rng_.below(81));
    return (field << 23) | (static_cast<std::uint32_t>(rng_.next()) & 0x7FFFFFu);
  }

  std::uint32_t stored_scale(const Format& sf) {
    const ScaleKind kind = scale_kind(s_.rule);
    if (kind == ScaleKind::gam) return rng_.below(16) == 0 ? 0xFFu : 1u + static_cast<std::uint32_t>(rng_.below(254));
    if (kind == ScaleKind::nvfp4) return rng_.below(16) == 0 ? 0x7Fu : static_cast<std::uint32_t>(rng_.below(0x7F));
    if (kind == ScaleKind::mx) return rng_.below(16) == 0 ? 0xFFu : static_cast<std::uint32_t>(rng_.below(255));
    (void)sf;
    const std::uint64_t t = rng_.below(16);
    if (t == 0) return kF32NaN;
    if (t == 1) return kF32Inf;
    if (t == 2) return kF32One;
    if (t == 3) return 1u + static_cast<std::uint32_t>(rng_.below(0x7F7FFFFF));
    const Amax a{random_f32()};
    switch (kind) {
      case ScaleKind::fp32_quotient: return fp32_amax_scale(a, p_.q_max());
      case ScaleKind::fp32_recip: return rn32(exact_div(exact_pow2(0), exact_f32(fp32_amax_scale(a, p_.q_max()))));
      case ScaleKind::pow2: return pow2_floor(fp32_amax_scale(a, p_.q_max()));
      case ScaleKind::pow2_recip:
        return rn32(exact_div(exact_pow2(0), exact_f32(pow2_floor(fp32_amax_scale(a, p_.q_max())))));
      default: return fp32_dequant_scale(a, p_.q_max());
    }
  }

  std::uint32_t field_lo() const {
    if (!src_.has_subnormals) return 0;
    return static_cast<std::uint32_t>(std::max(1, src_.bias - 40));
  }
  std::uint32_t field_hi() const {
    return std::min<std::uint32_t>(top_field(src_), static_cast<std::uint32_t>(src_.bias + 40));
  }
  // The largest exponent field of an amax. NVFP4: below 2^118, because the reference's
  // §18.4 decode factor RN32(d_b * t_amax) overflows binary32 above about 2^119 and
  // numref::nvfp4_decode_factor then throws (reported; the generator stays below).
  std::uint32_t field_top() const {
    if (scale_kind(s_.rule) != ScaleKind::nvfp4) return top_field(src_);
    return std::min<std::uint32_t>(top_field(src_), static_cast<std::uint32_t>(src_.bias + 117));
  }

  std::uint32_t pick_field() {
    const std::uint64_t t = rng_.below(16);
    const std::uint32_t lo = field_lo(), hi = std::max(field_lo(), field_hi());
    if (t == 0) return field_top();
    if (t == 1) return std::max<std::uint32_t>(lo, 1u);
    return lo + static_cast<std::uint32_t>(rng_.below(hi - lo + 1));
  }

  std::uint32_t pick_mant() {
    const int m = src_.man_bits;
    const std::uint32_t mmax = src_.man_mask();
    const std::uint32_t qm = qmax_mant(p_.q_max(), src_);
    const int prec = s_.elem->precision();
    const std::uint32_t even = m >= prec ? (std::uint32_t{1} << m) - (std::uint32_t{1} << (m - prec)) : mmax;
    switch (rng_.below(12)) {
      case 0: return 0;
      case 1: return mmax;
      case 2: return std::min(1u, mmax);
      case 3: return qm;
      case 4: return qm < mmax ? qm + 1 : qm;
      case 5: return qm > 0 ? qm - 1 : qm;
      case 6: return even;
      case 7: return even > 0 ? even - 1 : even;
      default: return static_cast<std::uint32_t>(rng_.next()) & mmax;
    }
  }

  // A point of the element grid: a value, a midpoint between neighbours (the one above the
  // largest finite value included), as a positive dyadic value.
  Exact elem_point() {
    const Format& e = *s_.elem;
    const std::uint32_t top = e.max_finite;
    const std::uint32_t c = static_cast<std::uint32_t>(rng_.below(top + 1));
    const Decoded a = decode(c, e);
    Exact va{false, a.sig, a.exp, false};
    if (rng_.below(4) == 0) return va;
    Exact vb;
    if (e.is_integer())
      vb = Exact{false, a.sig + 1, 0, false};
    else if (c == top)
      vb = Exact{false, a.sig + 1, a.exp, false};
    else {
      const Decoded b = decode(c + 1, e);
      vb = Exact{false, b.sig, b.exp, false};
    }
    if (va.sig == 0) return Exact{false, vb.sig, vb.exp - 1, false};
    const int lo = std::min(va.exp, vb.exp);
    const std::uint64_t sum = (va.sig << (va.exp - lo)) + (vb.sig << (vb.exp - lo));
    return Exact{false, sum, lo - 1, false};
  }

  void block(const BlockRange& r, std::size_t b, std::vector<std::uint32_t>& v) {
    const std::size_t cols = s_.cols;
    auto at = [&](std::size_t k) -> std::uint32_t& {  // k-th element of the block
      const std::size_t i = r.r0 + k / r.cols(), j = r.c0 + k % r.cols();
      return v[i * cols + j];
    };
    const std::size_t n = r.size();
    const std::uint64_t kind = rng_.below(100);
    if (kind < 3) {
      for (std::size_t k = 0; k < n; ++k) at(k) = rng_.below(2) ? src_.sign_bit() : 0u;
      return;
    }
    if (kind < 6 && src_.has_subnormals && src_.man_bits > 0) {
      for (std::size_t k = 0; k < n; ++k)
        at(k) = make_code(src_, rng_.below(2) != 0, 0, 1u + static_cast<std::uint32_t>(rng_.below(src_.man_mask())));
      return;
    }
    // the amax element
    const std::uint32_t fa = pick_field();
    const std::uint32_t ma = pick_mant();
    const std::uint32_t amag = make_code(src_, false, fa, ma);
    const std::size_t pa = static_cast<std::size_t>(rng_.below(n));
    // the block's nominal quantize factor (targets for ties)
    std::optional<Factor> f;
    const Decoded da = decode(amag, src_);
    if (da.cls == Class::normal || da.cls == Class::subnormal) {
      const Amax am{rn32(Exact{false, da.sig, da.exp, false})};
      if (needs_tensor_state(s_.rule)) {
        const std::uint32_t S = fp32_amax_scale(am, p_.q_max());
        f = Factor{false, exact_f32(S)};
      } else {
        f = qz_->block_scale(b, am).quant;
      }
    }
    for (std::size_t k = 0; k < n; ++k) {
      const bool neg = rng_.below(2) != 0;
      if (k == pa) {
        at(k) = amag | (neg ? src_.sign_bit() : 0u);
        continue;
      }
      const std::uint64_t t = rng_.below(100);
      std::uint32_t c;
      if (t < 6) {
        c = 0;
      } else if (t < 16 && f) {
        c = targeted(*f, amag);
      } else if (t < 20) {
        c = amag > 0 ? amag - static_cast<std::uint32_t>(rng_.below(2)) : 0u;
      } else if (t < 24 && src_.has_subnormals && src_.man_bits > 0) {
        c = make_code(src_, false, 0, 1u + static_cast<std::uint32_t>(rng_.below(src_.man_mask())));
      } else if (t < 28) {
        const std::uint32_t d = 10u + static_cast<std::uint32_t>(rng_.below(31));
        c = fa > d + 1 ? make_code(src_, false, fa - d, static_cast<std::uint32_t>(rng_.next())) : 0u;
      } else {
        const std::uint32_t d = static_cast<std::uint32_t>(rng_.below(4) + rng_.below(4) * rng_.below(3));
        const std::uint32_t fe = fa > d ? fa - d : (src_.has_subnormals ? 0u : fa);
        c = make_code(src_, false, fe, static_cast<std::uint32_t>(rng_.next()));
        if (c > amag) c = amag;
      }
      at(k) = (c & src_.mag_mask()) | (neg ? src_.sign_bit() : 0u);
    }
    // one special per poisoned block
    if (specials_ok_ && kind < 9 && src_.has_nan()) {
      const std::uint32_t nanc = src_.specials == Specials::ieee
                                     ? (src_.exp_all_ones() << src_.man_bits) | (1u << (src_.man_bits - 1)) |
                                           (static_cast<std::uint32_t>(rng_.next()) & (src_.man_mask() >> 1))
                                     : src_.mag_mask();
      at(static_cast<std::size_t>(rng_.below(n))) = nanc | (rng_.below(2) ? src_.sign_bit() : 0u);
    } else if (specials_ok_ && kind < 12 && src_.has_inf()) {
      at(static_cast<std::size_t>(rng_.below(n))) =
          (src_.exp_all_ones() << src_.man_bits) | (rng_.below(2) ? src_.sign_bit() : 0u);
    }
  }

  // The source code nearest to an element-grid point divided by the factor, +-1 code.
  std::uint32_t targeted(const Factor& f, std::uint32_t amag) {
    const Exact t = elem_point();
    if (t.sig == 0) return 0;
    const Exact x = f.divide ? exact_mul(t, f.value) : exact_div(t, f.value);
    const Result res = src_round_(x);
    std::uint32_t c = res.bits & src_.mag_mask();
    const Decoded d = decode(c, src_);
    if (d.cls == Class::nan || d.cls == Class::inf) return amag;
    const std::uint64_t delta = rng_.below(4);
    if (delta == 1 && c < src_.max_finite) ++c;
    if (delta == 2 && c > 0) --c;
    return c;
  }

  const TensorParams& p_;
  const TensorParams::Spec& s_;
  const Format& src_;
  CaseRng rng_;
  Rounder src_round_;
  std::optional<Quantizer> qz_;
  bool specials_ok_ = true;
};

class SweepSource final : public CaseSource {
 public:
  SweepSource(TensorParamsPtr p, std::uint64_t total) : p_(std::move(p)), total_(total) {}
  std::uint64_t size() const override {
    const std::uint64_t n = p_->layout().n;
    return (total_ + n - 1) / n;
  }
  void fill(std::uint64_t first, std::size_t n, std::uint32_t* in) const override {
    const Layout& L = p_->layout();
    for (std::size_t j = 0; j < n; ++j) {
      std::uint32_t* w = in + j * static_cast<std::size_t>(L.in);
      for (std::size_t k = 0; k < L.n; ++k) {
        const std::uint64_t code = (first + j) * L.n + k;
        w[static_cast<std::size_t>(L.x) + k] = static_cast<std::uint32_t>(code < total_ ? code : 0u);
      }
    }
  }

 private:
  TensorParamsPtr p_;
  std::uint64_t total_;
};

}  // namespace

void generate_case(const TensorParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in) {
  const Layout& L = p.layout();
  Gen g(p, seed, index);
  if (p.kind() == Kind::dequantize) {
    g.dequant_inputs(in);
    return;
  }
  std::vector<std::uint32_t> v;
  g.view(v);
  for (std::size_t k = 0; k < L.n; ++k) in[static_cast<std::size_t>(L.x) + k] = v[p.view().view_index_of_memory(k)];
  if (L.r >= 0) g.randoms(in + L.r, L.n);
}

std::shared_ptr<const CaseSource> cases(const TensorParamsPtr& p, std::uint64_t count, std::uint64_t seed) {
  return std::make_shared<IndexedCases<TensorParams, decltype(&generate_case)>>(p, count, seed, &generate_case);
}

std::shared_ptr<const CaseSource> sweep_cases(const TensorParamsPtr& p, std::uint64_t total) {
  return std::make_shared<SweepSource>(p, total);
}

}  // namespace numref::conform::tensor
