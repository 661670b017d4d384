// numref — MoR statistics: histograms, fallback percentages, moments.   spec §28
#include "numref/stats.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "numref/convert.hpp"

namespace numref {

namespace {
using u128 = unsigned __int128;
}

// ---- §28.1 / §28.2 histograms ----------------------------------------------------------------

std::optional<std::size_t> histogram_bin(const ErrorSum& s, const HistogramSpec& h) {
  if (h.width.num == 0 || h.bins == 0) throw std::invalid_argument("histogram: zero bin width or no bins");
  if (!s.finite()) return std::nullopt;
  if (s.n == 0) return 0;
  // mean / w = S · den / (num · n · 2^149)
  BigUInt a = s.sum.value();
  a.mul_small(h.width.den);
  BigUInt d(h.width.num);
  d.mul_small(s.n);
  d <<= ExactSum::kScale;
  BigUInt q, r;
  BigUInt::divmod(a, d, q, r);
  if (q.bit_length() > 63 || q.low64() >= h.bins) return h.bins;
  return static_cast<std::size_t>(q.low64());
}

ErrorHistogram::ErrorHistogram(HistogramSpec h) : h_(h) {
  if (h_.width.num == 0 || h_.bins == 0) throw std::invalid_argument("histogram: zero bin width or no bins");
}

void ErrorHistogram::add(const std::string& name, const ErrorSum& s, bool fell_back,
                         std::optional<std::uint64_t> step) {
  std::optional<std::uint64_t> window;
  if (h_.reset_every) {
    if (!step)
      throw std::invalid_argument("histogram: '" + name + "' has no step, and the histogram resets every " +
                                  std::to_string(h_.reset_every) + " steps");
    window = *step / h_.reset_every;
  }
  HistogramRow* row = nullptr;
  for (auto& r : rows_)
    if (r.name == name && r.window == window) row = &r;
  if (!row) {
    rows_.push_back(HistogramRow{name, window, std::vector<std::uint64_t>(h_.bins + 1, 0), 0, 0, 0});
    row = &rows_.back();
  }
  ++row->observations;
  if (fell_back) ++row->fallbacks;
  if (const auto bin = histogram_bin(s, h_))
    ++row->counts[*bin];
  else
    ++row->nonfinite;
}

std::uint64_t ErrorHistogram::observations() const {
  std::uint64_t t = 0;
  for (const auto& r : rows_) t += r.observations;
  return t;
}

std::uint64_t ErrorHistogram::fallbacks() const {
  std::uint64_t t = 0;
  for (const auto& r : rows_) t += r.fallbacks;
  return t;
}

namespace {
// The decimal digits of v.
std::string decimal_text(u128 v) {
  std::string t;
  do {
    t.insert(t.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v);
  return t;
}

// i · w in percent as an exact decimal when it is one (w = num/den: 100 i num / den), else "p/q".
std::string percent_of(std::uint64_t i, const Threshold& w) {
  const u128 p = static_cast<u128>(i) * w.num * 100;
  u128 q = w.den;
  // strip the factors 2 and 5 of q; anything left means no finite decimal
  int twos = 0, fives = 0;
  while (q % 2 == 0) q /= 2, ++twos;
  while (q % 5 == 0) q /= 5, ++fives;
  if (p % q != 0) return decimal_text(p) + "/" + std::to_string(w.den) + "%";  // not a finite decimal
  const int digits = std::max(twos, fives);
  u128 scaled = p / q;  // p / (q 2^twos 5^fives) · 10^digits = scaled · 2^(digits − twos) 5^(digits − fives)
  for (int k = twos; k < digits; ++k) scaled *= 2;
  for (int k = fives; k < digits; ++k) scaled *= 5;
  std::string s = decimal_text(scaled);
  if (digits > 0) {
    if (s.size() <= static_cast<std::size_t>(digits)) s.insert(0, static_cast<std::size_t>(digits) + 1 - s.size(), '0');
    s.insert(s.size() - static_cast<std::size_t>(digits), 1, '.');
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + "%";
}
}  // namespace

std::string ErrorHistogram::bin_label(std::size_t i) const {
  std::string s(i >= h_.bins ? ">=" : "[");
  s += percent_of(std::min(i, h_.bins), h_.width);
  if (i < h_.bins) {
    s += ',';
    s += percent_of(i + 1, h_.width);
    s += ')';
  }
  return s;
}

std::string ErrorHistogram::row_label(const HistogramRow& r) const {
  if (!r.window) return r.name;
  const u128 a = static_cast<u128>(*r.window) * h_.reset_every, b = a + h_.reset_every;
  return r.name + " steps [" + decimal_text(a) + "," + decimal_text(b) + ")";
}

std::string percent_string(std::uint64_t p, std::uint64_t q, int decimals) {
  if (q == 0) throw std::invalid_argument("percent_string: zero denominator");
  if (decimals < 0 || decimals > 6) throw std::invalid_argument("percent_string: 0..6 decimals");
  u128 scale = 100;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const u128 num = static_cast<u128>(p) * scale;  // < 2^64 · 10^8 < 2^91
  u128 v = num / q;
  const u128 r = num % q;
  if (2 * r > q || (2 * r == q && (v & 1))) ++v;  // nearest, ties to even
  std::string s = decimal_text(v);
  if (decimals > 0) {
    if (s.size() <= static_cast<std::size_t>(decimals))
      s.insert(0, static_cast<std::size_t>(decimals) + 1 - s.size(), '0');
    s.insert(s.size() - static_cast<std::size_t>(decimals), 1, '.');
  }
  return s;
}

// ---- §28.4 moments ---------------------------------------------------------------------------

namespace {

// Exact fixed-point sum of k^p for k = |x| · 2^149 (x a binary32 value, k = sig · 2^pos with
// sig < 2^24, pos <= 253): a term sig^p · 2^(p · pos) is below 2^(24 p + 253 p) <= 2^1108 for
// p = 4, and 2^40 terms stay below 2^1148 < 2^1152 = 18 limbs.
struct PowerAcc {
  static constexpr int kLimbs = 18;
  std::array<std::uint64_t, kLimbs> limb{};
  void add(u128 v, int pos) {  // v < 2^96
    const int w = pos >> 6, b = pos & 63;
    const std::uint64_t v0 = static_cast<std::uint64_t>(v), v1 = static_cast<std::uint64_t>(v >> 64);
    const std::uint64_t words[3] = {v0 << b, (v1 << b) | (b ? v0 >> (64 - b) : 0), b ? v1 >> (64 - b) : 0};
    std::uint64_t carry = 0;
    for (int i = 0; (i < 3 || carry) && w + i < kLimbs; ++i) {
      const u128 s = static_cast<u128>(limb[w + i]) + (i < 3 ? words[i] : 0) + carry;
      limb[w + i] = static_cast<std::uint64_t>(s);
      carry = static_cast<std::uint64_t>(s >> 64);
    }
  }
  BigUInt value() const { return BigUInt::from_limbs(limb); }
};

BigUInt big(std::uint64_t v) { return BigUInt(v); }

}  // namespace

Moments tensor_moments(const TensorView& x) {
  const Format& f = x.format();
  const std::uint32_t mask = f.mag_mask();
  const std::uint32_t special = f.first_special_magnitude();  // §2.2 NaN / Inf from here up
  const Converter widen(f, format(FormatId::f32), Policy{});
  PowerAcc pos[4], neg[2];  // Σ k^p for p = 1..4; odd powers split by sign
  Moments m;
  for (std::size_t i = 0; i < x.rows(); ++i)
    for (std::size_t j = 0; j < x.cols(); ++j) {
      const std::uint32_t c = x.code(i, j);
      if ((c & mask) >= special) {
        ++m.nonfinite;
        continue;
      }
      ++m.n;
      const std::uint32_t b = widen(c).bits;  // exact (§12.1)
      const std::uint32_t field = (b >> 23) & 0xFFu, frac = b & 0x7FFFFFu;
      if (field == 0 && frac == 0) continue;
      const u128 sig = field ? (frac | 0x800000u) : frac;
      const int p = field ? static_cast<int>(field) - 1 : 0;  // k = sig · 2^p
      const bool negative = (b >> 31) != 0;
      const u128 s2 = sig * sig, s3 = s2 * sig, s4 = s3 * sig;
      (negative ? neg[0] : pos[0]).add(sig, p);
      pos[1].add(s2, 2 * p);
      (negative ? neg[1] : pos[2]).add(s3, 3 * p);
      pos[3].add(s4, 4 * p);
    }
  if (m.n == 0) return m;
  const BigInt K1 = BigInt(false, pos[0].value()) - BigInt(false, neg[0].value());
  const BigInt K2(false, pos[1].value());
  const BigInt K3 = BigInt(false, pos[2].value()) - BigInt(false, neg[1].value());
  const BigInt K4(false, pos[3].value());
  const BigInt n(false, big(m.n));
  const BigInt two(false, big(2)), three(false, big(3)), four(false, big(4)), six(false, big(6));
  // mean = K1 / n · 2^-149
  m.mean = rn32_ratio(K1.neg, K1.mag, -149, big(m.n));
  // A2 = n K2 − K1² >= 0;  m2 = A2 / n² · 2^-298
  const BigInt A2 = n * K2 - K1 * K1;
  m.variance = rn32_ratio(false, A2.mag, -298, big(m.n) * big(m.n));
  if (A2.mag.is_zero()) return m;
  // A3 = n² K3 − 3 n K1 K2 + 2 K1³;  skewness = A3 / A2^(3/2) = sign(A3) sqrt(A3² / A2³)
  const BigInt A3 = n * n * K3 - three * n * K1 * K2 + two * K1 * K1 * K1;
  m.skewness = rn32_sqrt_ratio(A3.neg, A3.mag * A3.mag, 0, A2.mag * A2.mag * A2.mag);
  // A4 = n³ K4 − 4 n² K1 K3 + 6 n K1² K2 − 3 K1⁴;  kurtosis = A4 / A2²
  const BigInt A4 = n * n * n * K4 - four * n * n * K1 * K3 + six * n * K1 * K1 * K2 - three * K1 * K1 * K1 * K1;
  m.kurtosis = rn32_ratio(A4.neg, A4.mag, 0, A2.mag * A2.mag);
  return m;
}

}  // namespace numref
