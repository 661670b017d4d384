// numref — arbitrary-precision integers for the exact metrics.      spec §22, §23, §28, §29
#include "numref/bignum.hpp"

#include <algorithm>
#include <stdexcept>

#include "numref/exact.hpp"

namespace numref {

namespace {
using u128 = unsigned __int128;
int bl64(std::uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }
}  // namespace

BigUInt BigUInt::from_limbs(std::span<const std::uint64_t> limbs) {
  BigUInt r;
  r.l_.assign(limbs.begin(), limbs.end());
  r.trim();
  return r;
}

void BigUInt::trim() {
  while (!l_.empty() && l_.back() == 0) l_.pop_back();
}

int BigUInt::bit_length() const {
  if (l_.empty()) return 0;
  return static_cast<int>(64 * (l_.size() - 1)) + bl64(l_.back());
}

bool BigUInt::bit(int i) const {
  if (i < 0) return false;
  const std::size_t w = static_cast<std::size_t>(i) / 64;
  return w < l_.size() && ((l_[w] >> (i % 64)) & 1u) != 0;
}

bool BigUInt::any_bit_below(int n) const {
  if (n <= 0) return false;
  const std::size_t full = static_cast<std::size_t>(n) / 64;
  for (std::size_t w = 0; w < full && w < l_.size(); ++w)
    if (l_[w]) return true;
  const int rest = n % 64;
  if (rest && full < l_.size()) return (l_[full] & ((std::uint64_t{1} << rest) - 1)) != 0;
  return false;
}

int BigUInt::compare(const BigUInt& o) const {
  if (l_.size() != o.l_.size()) return l_.size() < o.l_.size() ? -1 : 1;
  for (std::size_t i = l_.size(); i-- > 0;)
    if (l_[i] != o.l_[i]) return l_[i] < o.l_[i] ? -1 : 1;
  return 0;
}

BigUInt& BigUInt::operator+=(const BigUInt& o) {
  if (o.l_.size() > l_.size()) l_.resize(o.l_.size(), 0);
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < l_.size(); ++i) {
    const u128 s = static_cast<u128>(l_[i]) + (i < o.l_.size() ? o.l_[i] : 0) + carry;
    l_[i] = static_cast<std::uint64_t>(s);
    carry = static_cast<std::uint64_t>(s >> 64);
    if (carry == 0 && i >= o.l_.size()) break;
  }
  if (carry) l_.push_back(carry);
  return *this;
}

BigUInt& BigUInt::operator-=(const BigUInt& o) {
  if (compare(o) < 0) throw std::logic_error("BigUInt: subtraction would be negative");
  std::uint64_t borrow = 0;
  for (std::size_t i = 0; i < l_.size(); ++i) {
    const std::uint64_t b = (i < o.l_.size() ? o.l_[i] : 0);
    const u128 sub = static_cast<u128>(b) + borrow;
    const std::uint64_t before = l_[i];
    l_[i] = before - static_cast<std::uint64_t>(sub);
    borrow = (static_cast<u128>(before) < sub) ? 1 : 0;
    if (borrow == 0 && i >= o.l_.size()) break;
  }
  trim();
  return *this;
}

BigUInt& BigUInt::operator<<=(int n) {
  if (n < 0) return *this >>= -n;
  if (l_.empty() || n == 0) return *this;
  const std::size_t w = static_cast<std::size_t>(n) / 64;
  const int b = n % 64;
  std::vector<std::uint64_t> r(l_.size() + w + 1, 0);
  for (std::size_t i = 0; i < l_.size(); ++i) {
    r[i + w] |= l_[i] << b;
    if (b) r[i + w + 1] |= l_[i] >> (64 - b);
  }
  l_ = std::move(r);
  trim();
  return *this;
}

BigUInt& BigUInt::operator>>=(int n) {
  if (n < 0) return *this <<= -n;
  if (l_.empty() || n == 0) return *this;
  const std::size_t w = static_cast<std::size_t>(n) / 64;
  if (w >= l_.size()) {
    l_.clear();
    return *this;
  }
  const int b = n % 64;
  std::vector<std::uint64_t> r(l_.size() - w, 0);
  for (std::size_t i = 0; i < r.size(); ++i) {
    r[i] = l_[i + w] >> b;
    if (b && i + w + 1 < l_.size()) r[i] |= l_[i + w + 1] << (64 - b);
  }
  l_ = std::move(r);
  trim();
  return *this;
}

BigUInt& BigUInt::mul_small(std::uint64_t m) {
  if (m == 0) {
    l_.clear();
    return *this;
  }
  std::uint64_t carry = 0;
  for (auto& limb : l_) {
    const u128 p = static_cast<u128>(limb) * m + carry;
    limb = static_cast<std::uint64_t>(p);
    carry = static_cast<std::uint64_t>(p >> 64);
  }
  if (carry) l_.push_back(carry);
  return *this;
}

BigUInt operator*(const BigUInt& a, const BigUInt& b) {
  if (a.is_zero() || b.is_zero()) return BigUInt{};
  std::vector<std::uint64_t> r(a.l_.size() + b.l_.size(), 0);
  for (std::size_t i = 0; i < a.l_.size(); ++i) {
    std::uint64_t carry = 0;
    for (std::size_t j = 0; j < b.l_.size(); ++j) {
      const u128 p = static_cast<u128>(a.l_[i]) * b.l_[j] + r[i + j] + carry;
      r[i + j] = static_cast<std::uint64_t>(p);
      carry = static_cast<std::uint64_t>(p >> 64);
    }
    std::size_t k = i + b.l_.size();
    while (carry) {
      const u128 s = static_cast<u128>(r[k]) + carry;
      r[k] = static_cast<std::uint64_t>(s);
      carry = static_cast<std::uint64_t>(s >> 64);
      ++k;
    }
  }
  return BigUInt::from_limbs(r);
}

void BigUInt::divmod(const BigUInt& a, const BigUInt& b, BigUInt& q, BigUInt& r) {
  if (b.is_zero()) throw std::invalid_argument("BigUInt: division by zero");
  if (a.compare(b) < 0) {
    r = a;
    q = BigUInt{};
    return;
  }
  if (b.l_.size() == 1) {  // one-limb divisor: schoolbook with 128-bit steps
    const std::uint64_t d = b.l_[0];
    std::vector<std::uint64_t> qq(a.l_.size(), 0);
    u128 rem = 0;
    for (std::size_t i = a.l_.size(); i-- > 0;) {
      const u128 cur = (rem << 64) | a.l_[i];
      qq[i] = static_cast<std::uint64_t>(cur / d);
      rem = cur % d;
    }
    q = from_limbs(qq);
    r = BigUInt(static_cast<std::uint64_t>(rem));
    return;
  }
  // Restoring binary long division, one quotient bit per step from the top.
  const int shift = a.bit_length() - b.bit_length();
  BigUInt rem = a, d = b << shift;
  std::vector<std::uint64_t> qq(static_cast<std::size_t>(shift) / 64 + 1, 0);
  for (int i = shift; i >= 0; --i) {
    if (rem.compare(d) >= 0) {
      rem -= d;
      qq[static_cast<std::size_t>(i) / 64] |= std::uint64_t{1} << (i % 64);
    }
    d >>= 1;
  }
  q = from_limbs(qq);
  r = std::move(rem);
}

BigUInt BigUInt::isqrt() const {
  if (is_zero()) return BigUInt{};
  // Newton from above: x0 = 2^ceil(bits/2) >= sqrt(a); x <- (x + a/x) / 2 decreases
  // strictly until it reaches floor(sqrt(a)).
  BigUInt x = BigUInt(1) << ((bit_length() + 1) / 2);
  for (;;) {
    BigUInt q, r;
    divmod(*this, x, q, r);
    BigUInt y = (x + q) >> 1;
    if (y.compare(x) >= 0) return x;
    x = std::move(y);
  }
}

std::string BigUInt::to_decimal() const {
  if (is_zero()) return "0";
  std::string out;
  BigUInt v = *this;
  constexpr std::uint64_t kChunk = 10000000000000000000ull;  // 10^19
  while (!v.is_zero()) {
    BigUInt q, r;
    divmod(v, BigUInt(kChunk), q, r);
    std::uint64_t part = r.low64();
    std::string digits;
    for (int i = 0; i < 19; ++i) {
      digits.push_back(static_cast<char>('0' + part % 10));
      part /= 10;
    }
    out += digits;
    v = std::move(q);
  }
  while (out.size() > 1 && out.back() == '0') out.pop_back();
  std::reverse(out.begin(), out.end());
  return out;
}

BigInt operator+(const BigInt& a, const BigInt& b) {
  if (a.neg == b.neg) return BigInt(a.neg, a.mag + b.mag);
  const int c = a.mag.compare(b.mag);
  if (c == 0) return BigInt{};
  if (c > 0) return BigInt(a.neg, a.mag - b.mag);
  return BigInt(b.neg, b.mag - a.mag);
}

namespace {

// §4.4 The operand of the rounding core for (-1)^neg * (m + eps) * 2^e, where m is a positive
// integer of any width and `sticky` says eps > 0 (eps < 1). The integer is cut to its top 64
// bits, the rest folded into the sticky bit: with 64 >= 32 + 2 significant bits the sticky part
// lies below every quantum of a format of at most 32 bits it can be rounded at (including
// subnormal results), so the core's single rounding is the correctly rounded value of the exact
// operand.
Exact wide_exact(bool neg, const BigUInt& m, int e, bool sticky) {
  const int bl = m.bit_length();
  std::uint64_t sig;
  if (bl <= 64) {
    sig = m.low64();
  } else {
    const int drop = bl - 64;
    sticky = sticky || m.any_bit_below(drop);
    sig = (m >> drop).low64();
    e += drop;
  }
  return Exact{neg, sig, e, sticky};
}

std::uint32_t round_wide(bool neg, const BigUInt& m, int e, bool sticky) {
  if (m.is_zero()) return neg ? 0x80000000u : 0u;  // callers pass sticky = false with m = 0
  return rn32(wide_exact(neg, m, e, sticky));
}

}  // namespace

Exact ratio_exact(bool neg, const BigUInt& num, int exp2, const BigUInt& den) {
  if (den.is_zero()) throw std::invalid_argument("ratio_exact: zero denominator");
  if (num.is_zero()) return Exact{neg, 0, 0, false};
  // Scale so that the quotient has at least 65 bits: num * 2^s >= 2^(bl(num)-1+s) and
  // den < 2^bl(den), so the quotient is >= 2^(bl(num)-1+s-bl(den)) = 2^64 for s below.
  const int s = std::max(0, 65 + den.bit_length() - num.bit_length());
  BigUInt q, r;
  BigUInt::divmod(num << s, den, q, r);
  return wide_exact(neg, q, exp2 - s, !r.is_zero());
}

std::uint32_t rn32_ratio(bool neg, const BigUInt& num, int exp2, const BigUInt& den) {
  if (den.is_zero()) throw std::invalid_argument("rn32_ratio: zero denominator");
  if (num.is_zero()) return neg ? 0x80000000u : 0u;
  return rn32(ratio_exact(neg, num, exp2, den));
}

std::uint32_t rn32_sqrt_ratio(bool neg, const BigUInt& num, int exp2, const BigUInt& den) {
  if (den.is_zero()) throw std::invalid_argument("rn32_sqrt_ratio: zero denominator");
  if (num.is_zero()) return neg ? 0x80000000u : 0u;
  BigUInt n = num;
  int e = exp2;
  if (e % 2 != 0) {  // make the exponent even: sqrt(n 2^e) = sqrt(2n 2^(e-1))
    n <<= 1;
    e -= 1;
  }
  // T = floor(n 2^(2s) / den) with at least 130 bits, so that floor(sqrt(T)) has >= 65.
  const int s = std::max(0, (131 + den.bit_length() - n.bit_length() + 1) / 2);
  BigUInt t, r;
  BigUInt::divmod(n << (2 * s), den, t, r);
  // floor(sqrt(floor(y))) = floor(sqrt(y)); sqrt(y) exceeds the root iff y > root^2,
  // i.e. T > root^2 or a non-zero remainder.
  const BigUInt root = t.isqrt();
  const bool sticky = !r.is_zero() || (root * root).compare(t) != 0;
  return round_wide(neg, root, e / 2 - s, sticky);
}

std::string dyadic_decimal(const BigUInt& num, int exp2) {
  if (num.is_zero()) return "0";
  if (exp2 >= 0) return (num << exp2).to_decimal();
  // num / 2^k = num * 5^k / 10^k
  const int k = -exp2;
  BigUInt v = num;
  for (int i = 0; i < k; ++i) v.mul_small(5);
  std::string d = v.to_decimal();
  if (d.size() <= static_cast<std::size_t>(k)) d.insert(0, static_cast<std::size_t>(k) + 1 - d.size(), '0');
  std::string out =
      d.substr(0, d.size() - static_cast<std::size_t>(k)) + "." + d.substr(d.size() - static_cast<std::size_t>(k));
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out;
}

std::string dyadic_hexfloat(const BigUInt& num, int exp2) {
  if (num.is_zero()) return "0x0p+0";
  const int bl = num.bit_length();
  const int e = exp2 + bl - 1;
  // fraction bits below the leading one, padded to whole hex digits
  int fbits = bl - 1;
  const int pad = (4 - fbits % 4) % 4;
  BigUInt frac = num;
  if (fbits > 0) {
    BigUInt lead = BigUInt(1) << fbits;
    frac -= lead;
  } else {
    frac = BigUInt{};
  }
  frac <<= pad;
  fbits += pad;
  std::string h;
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = fbits / 4 - 1; i >= 0; --i) {
    unsigned v = 0;
    for (int b = 3; b >= 0; --b) v = (v << 1) | (frac.bit(4 * i + b) ? 1u : 0u);
    h.push_back(kDigits[v]);
  }
  while (!h.empty() && h.back() == '0') h.pop_back();
  std::string out = "0x1";
  if (!h.empty()) out += "." + h;
  out += "p";
  if (e >= 0) out += "+";
  out += std::to_string(e);
  return out;
}

}  // namespace numref
