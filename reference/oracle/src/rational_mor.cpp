// numref oracle — MoR metrics, selections and statistics with exact rationals.  spec §21 – §29
#include "numref/oracle/rational_mor.hpp"

#include <stdexcept>

namespace numref::oracle::rm {

namespace {

const Format& F32() { return format(FormatId::f32); }
Rational abs_of(const Rational& v) { return v < 0 ? Rational(-v) : v; }
bool code_is_inf(std::uint32_t c) { return (c & 0x7FFFFFFFu) == 0x7F800000u; }
Rational f32v(std::uint32_t c) { return rat::decode(c, F32()).v; }

struct Grid {
  std::size_t rows, cols, br, bc, nbr, nbc;
  Grid(std::size_t r, std::size_t c, std::size_t want_r, std::size_t want_c) : rows(r), cols(c) {
    br = (want_r == 0 || want_r > r) ? r : want_r;
    bc = (want_c == 0 || want_c > c) ? c : want_c;
    nbr = (r + br - 1) / br;
    nbc = (c + bc - 1) / bc;
  }
  std::size_t count() const { return nbr * nbc; }
  std::size_t block_of(std::size_t idx) const { return ((idx / cols) / br) * nbc + (idx % cols) / bc; }
};

}  // namespace

Errors errors(const rq::Spec& s, std::span<const std::uint32_t> x) {
  Errors out;
  out.quant = rq::quantize(s, x, {});
  out.fake = out.quant.fake;
  const Format& src = format(s.source);
  const Format& ff = format(s.fake_format);
  const Grid g(s.rows, s.cols, s.block_rows, s.block_cols);
  out.block.assign(g.count(), Sum{});
  out.kind.assign(x.size(), Kind::zero);
  out.e.assign(x.size(), 0);
  for (std::size_t idx = 0; idx < x.size(); ++idx) {
    Sum& blk = out.block[g.block_of(idx)];
    const rat::Value v = rat::decode(x[idx], src);
    if (v.kind != rat::Value::finite) {
      out.kind[idx] = Kind::nonfinite_input;
      ++blk.nonfinite_input;
      continue;
    }
    if (v.v == 0) {
      ++blk.zeros;
      continue;
    }
    const rat::Value q = rat::decode(out.fake[idx], ff);
    if (q.kind != rat::Value::finite) {
      out.kind[idx] = Kind::nonfinite_quant;
      ++blk.nonfinite_quant;
      continue;
    }
    // §21.2 d = RN32(|x − q|), e = RN32(d / |x|)
    const std::uint32_t d = rat::rn32(abs_of(v.v - q.v));
    std::uint32_t e = 0x7F800000u;
    if (!code_is_inf(d)) e = rat::rn32(f32v(d) / abs_of(v.v));
    if (code_is_inf(e)) {
      out.kind[idx] = Kind::nonfinite_quant;
      ++blk.nonfinite_quant;
      continue;
    }
    out.kind[idx] = Kind::counted;
    out.e[idx] = e;
    blk.sum += f32v(e);
    ++blk.n;
  }
  for (const Sum& b : out.block) out.total.add(b);
  return out;
}

std::uint32_t mean_rn32(const Sum& s) {
  if (!s.finite()) return 0x7FC00000u;
  if (s.n == 0) return 0;
  return rat::rn32(s.sum / Rational(s.n));
}

bool mean_below(const Sum& s, const Rational& t) {
  if (!s.finite()) return false;
  if (s.n == 0) return Rational(0) < t;
  return s.sum / Rational(s.n) < t;
}

std::optional<std::size_t> bin(const Sum& s, const Rational& w, std::size_t bins) {
  if (!s.finite()) return std::nullopt;
  if (s.n == 0) return 0;
  const Rational mean = s.sum / Rational(s.n);
  for (std::size_t i = 0; i < bins; ++i)  // the first i with mean < (i + 1) w
    if (mean < Rational(i + 1) * w) return i;
  return bins;
}

TensorDecision tensor_mor(const rq::Spec& s, std::span<const std::uint32_t> x, const Rational& threshold) {
  const Errors e = errors(s, x);
  TensorDecision d;
  d.total = e.total;
  d.mean = mean_rn32(e.total);
  d.quantized = mean_below(e.total, threshold);
  return d;
}

Subtensor subtensor_mor(const rq::Spec& e4, const rq::Spec& e5, bool three_way, std::span<const std::uint32_t> x) {
  const Errors E4 = errors(e4, x), E5 = errors(e5, x);
  const Format& src = format(e4.source);
  const Format& out_f = format(e4.fake_format);
  const Format& t5 = format(e5.element);
  const Grid g(e4.rows, e4.cols, e4.block_rows, e4.block_cols);
  Subtensor r;
  r.type.assign(g.count(), 2);
  r.sum4 = E4.block;
  r.sum5 = E5.block;
  // Eq. 4 operands: max and min of the non-zero magnitudes per block
  std::vector<Rational> mx(g.count(), Rational(0)), mn(g.count(), Rational(0));
  std::vector<bool> any(g.count(), false);
  for (std::size_t idx = 0; idx < x.size(); ++idx) {
    const rat::Value v = rat::decode(x[idx], src);
    if (v.kind != rat::Value::finite || v.v == 0) continue;
    const std::size_t b = g.block_of(idx);
    const Rational a = abs_of(v.v);
    if (!any[b] || a > mx[b]) mx[b] = a;
    if (!any[b] || a < mn[b]) mn[b] = a;
    any[b] = true;
  }
  const Rational t5_max = rat::max_finite(t5, false, false), t5_min_normal = rat::pow2(t5.emin());
  for (std::size_t b = 0; b < g.count(); ++b) {
    const Sum &a = E4.block[b], &c = E5.block[b];
    if (a.nonfinite_input) continue;  // every quantized type is skipped: kept
    // E4M3 (§25.2 rules, then Eq. 3)
    if (!a.nonfinite_quant) {
      if (a.n == 0 || a.sum == 0 || (!c.nonfinite_quant && a.sum < c.sum)) {
        r.type[b] = 0;
        continue;
      }
    }
    if (!three_way) continue;
    // E5M2 (§25.2 rules, then Eq. 4)
    if (c.nonfinite_quant) continue;
    if (c.n == 0 || mx[b] * t5_min_normal < t5_max * mn[b]) r.type[b] = 1;
  }
  r.out.assign(x.size(), 0);
  for (std::size_t idx = 0; idx < x.size(); ++idx) {
    const int t = r.type[g.block_of(idx)];
    if (t == 0)
      r.out[idx] = E4.fake[idx];
    else if (t == 1)
      r.out[idx] = E5.fake[idx];
    else
      r.out[idx] = rat::convert(x[idx], src, out_f, Policy{}, 0).code;
  }
  return r;
}

std::uint32_t rn32_sqrt(const Rational& r, bool negative) {
  if (r < 0) throw std::invalid_argument("oracle rn32_sqrt: negative operand");
  const std::uint32_t sign = negative ? 0x80000000u : 0u;
  if (r == 0) return sign;
  // the largest finite code c with value(c)^2 <= r (or 0 if none)
  std::uint32_t lo = 0, hi = 0x7F7FFFFFu;
  if (f32v(hi) * f32v(hi) <= r) {
    lo = hi;
  } else {
    while (hi - lo > 1) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (f32v(mid) * f32v(mid) <= r)
        lo = mid;
      else
        hi = mid;
    }
  }
  // nearest of lo and its successor (2^128 past the largest finite: the IEEE overflow point)
  const Rational a = f32v(lo), b = lo == 0x7F7FFFFFu ? rat::pow2(128) : f32v(lo + 1);
  const Rational m = (a + b) / 2;
  std::uint32_t c;
  if (r < m * m)
    c = lo;
  else if (r > m * m)
    c = lo + 1;
  else
    c = (lo & 1u) ? lo + 1 : lo;  // tie: the even code
  return sign | c;
}

Moments moments(FormatId source, std::span<const std::uint32_t> x) {
  const Format& src = format(source);
  std::vector<Rational> v;
  Moments m;
  for (std::uint32_t c : x) {
    const rat::Value d = rat::decode(c, src);
    if (d.kind != rat::Value::finite) {
      ++m.nonfinite;
      continue;
    }
    v.push_back(d.v);
  }
  m.n = v.size();
  if (m.n == 0) return m;
  Rational mu = 0;
  for (const Rational& a : v) mu += a;
  mu /= Rational(m.n);
  Rational c2 = 0, c3 = 0, c4 = 0;
  for (const Rational& a : v) {
    const Rational d = a - mu, d2 = d * d;
    c2 += d2;
    c3 += d2 * d;
    c4 += d2 * d2;
  }
  const Rational n(m.n);
  const Rational m2 = c2 / n, m3 = c3 / n, m4 = c4 / n;
  m.mean = rat::rn32(mu);
  m.variance = rat::rn32(m2);
  if (m2 == 0) return m;
  m.skewness = rn32_sqrt(m3 * m3 / (m2 * m2 * m2), m3 < 0);
  m.kurtosis = rat::rn32(m4 / (m2 * m2));
  return m;
}

std::vector<std::uint32_t> backward_error(const rq::Spec& lq, std::span<const std::uint32_t> l, const rq::Spec& rq_,
                                          std::span<const std::uint32_t> r) {
  if (lq.cols != rq_.rows) throw std::invalid_argument("oracle backward_error: shapes");
  const rq::Out a = rq::quantize(lq, l, {}), b = rq::quantize(rq_, r, {});
  const std::size_t M = lq.rows, K = lq.cols, N = rq_.cols;
  auto val = [](std::uint32_t c, FormatId f) { return rat::decode(c, format(f)).v; };
  std::vector<std::uint32_t> out(M * N, 0);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      Rational num = 0, den = 0;
      for (std::size_t k = 0; k < K; ++k) {
        const Rational x = val(l[i * K + k], lq.source), y = val(r[k * N + j], rq_.source);
        num += x * y - f32v(a.dequant[i * K + k]) * f32v(b.dequant[k * N + j]);
        den += abs_of(x) * abs_of(y);
      }
      out[i * N + j] = den == 0 ? 0u : rat::rn32(abs_of(num) / den);
    }
  return out;
}

std::vector<std::uint32_t> backward_error_of(std::span<const std::uint32_t> l, FormatId lf,
                                             std::span<const std::uint32_t> r, FormatId rf, std::size_t M,
                                             std::size_t K, std::size_t N, std::span<const std::uint32_t> d) {
  auto val = [](std::uint32_t c, FormatId f) { return rat::decode(c, format(f)).v; };
  std::vector<std::uint32_t> out(M * N, 0);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      Rational num = -f32v(d[i * N + j]), den = 0;
      for (std::size_t k = 0; k < K; ++k) {
        const Rational x = val(l[i * K + k], lf), y = val(r[k * N + j], rf);
        num += x * y;
        den += abs_of(x) * abs_of(y);
      }
      out[i * N + j] = den == 0 ? 0u : rat::rn32(abs_of(num) / den);
    }
  return out;
}

}  // namespace numref::oracle::rm
