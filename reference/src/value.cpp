// numref — exact decode / encode of code points.              spec §3
#include "numref/value.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace numref {

std::string_view to_string(Class c) {
  switch (c) {
    case Class::zero: return "zero";
    case Class::subnormal: return "subnormal";
    case Class::normal: return "normal";
    case Class::inf: return "inf";
    case Class::nan: return "nan";
  }
  return "?";
}

// §3.1 Decoding. The rules read only the descriptor fields:
//  * integers: two's complement; |v| = sig, exp = 0.
//  * NaN / Inf according to the Specials family (§2.2).
//  * exponent field 0 with has_subnormals: zero or subnormal, |v| = fraction * 2^(emin - m).
//  * otherwise normal: |v| = (2^m + fraction) * 2^(field - bias - m).
Decoded decode(std::uint32_t code, const Format& f) {
  code &= f.mask();
  Decoded d{};
  if (f.is_integer()) {
    d.sign = (code & f.sign_bit()) != 0;
    d.sig = d.sign ? (std::uint64_t{1} << f.bits) - code : code;  // |code - 2^bits| for a negative code
    d.exp = 0;
    d.cls = d.sig == 0 ? Class::zero : Class::normal;
    d.exp_field = 0;
    d.man_field = code & f.mag_mask();
    return d;
  }
  d.sign = (code & f.sign_bit()) != 0;
  const std::uint32_t mag = code & f.mag_mask();
  d.exp_field = mag >> f.man_bits;
  d.man_field = mag & f.man_mask();
  if (f.is_nan_code(code)) {  // §2.2 (fnuz: the sign bit alone, decoded with sign 1, payload 0)
    d.cls = Class::nan;
    d.sig = d.man_field;
    if (f.is_p3109()) {  // §3.1 / §2.5: no sign, no payload (80, FF: +NaN)
      d.sign = false;
      d.sig = 0;
    }
    d.exp = 0;
    return d;
  }
  if (f.is_inf_magnitude(mag)) {
    d.cls = Class::inf;
    d.sig = 0;
    d.exp = 0;
    return d;
  }
  if (f.has_subnormals && d.exp_field == 0) {
    d.sig = d.man_field;
    d.exp = f.qmin();
    d.cls = d.sig == 0 ? Class::zero : Class::subnormal;
    return d;
  }
  d.sig = (std::uint64_t{1} << f.man_bits) | d.man_field;
  d.exp = static_cast<int>(d.exp_field) - f.bias - f.man_bits;
  d.cls = Class::normal;
  return d;
}

namespace detail {

Magnitude max_magnitude(const Format& f, bool negative, bool int_symmetric) {
  if (f.is_integer()) {
    const std::uint64_t pos = f.max_finite;
    return {negative && !int_symmetric ? pos + 1 : pos, 0};
  }
  const std::uint32_t ef = f.max_finite >> f.man_bits;
  const std::uint32_t mf = f.max_finite & f.man_mask();
  if (f.has_subnormals && ef == 0) return {mf, f.qmin()};
  return {(std::uint64_t{1} << f.man_bits) | mf, static_cast<int>(ef) - f.bias - f.man_bits};
}

}  // namespace detail

std::optional<std::uint32_t> encode_exact(bool sign, std::uint64_t sig, int exp, const Format& f) {
  if (sig == 0) {
    if (!f.has_zero) return std::nullopt;
    if (f.is_integer()) return 0u;
    if (sign && !f.is_signed) return std::nullopt;
    return sign && f.has_negative_zero() ? f.sign_bit() : 0u;  // fnuz: −0 is the zero 00 (§3.3)
  }
  if (sign && !f.is_signed) return std::nullopt;
  // Strip trailing zeros so that the grid test below is exact.
  const int tz = __builtin_ctzll(sig);
  sig >>= tz;
  exp += tz;
  const int e = exp + detail::bit_length(sig) - 1;
  int q;
  if (f.is_integer()) {
    q = 0;
  } else {
    q = e - f.man_bits;
    if (f.has_subnormals && q < f.qmin()) q = f.qmin();
    if (!f.has_subnormals && e < f.emin()) return std::nullopt;
  }
  if (exp < q) return std::nullopt;  // needs more fraction bits than the format has
  const auto mx = detail::max_magnitude(f, sign, false);
  const int em = mx.q + detail::bit_length(mx.n) - 1;
  if (e > em) return std::nullopt;           // beyond the largest finite binade
  const std::uint64_t n = sig << (exp - q);  // < 2^(precision) here: no overflow
  // compare n*2^q with mx.n*2^mx.q
  if (e == em) {
    const int d = q - mx.q;  // small: both within one binade
    const bool bigger = d >= 0 ? (n << d) > mx.n : n > (mx.n << -d);
    if (bigger) return std::nullopt;
  }
  return detail::encode_grid(sign, n, q, f);
}

std::uint32_t encode_zero(bool sign, const Format& f) {
  if (!f.has_zero) throw std::invalid_argument(std::string(f.name) + " has no zero");
  return sign && f.has_negative_zero() ? f.sign_bit() : 0u;  // §6.6 fnuz has no −0
}

std::uint32_t encode_inf(bool sign, const Format& f) {
  if (!f.has_inf()) throw std::invalid_argument(std::string(f.name) + " has no infinity");
  return f.first_special_magnitude() | (sign ? f.sign_bit() : 0u);  // §2.2 the Inf magnitude
}

std::uint32_t encode_max_finite(bool sign, const Format& f) {
  if (f.is_integer()) return sign ? (f.sign_bit() & f.mask()) : f.max_finite;
  // §2.5 / §6.1 a format whose largest finite value is 0 (p3109_k2p1se, p3109_k2p2se) and has no
  // −0 code: −max is that zero, +0 (the sign bit alone is the NaN).
  if (sign && f.max_finite == 0 && !f.has_negative_zero()) return f.max_finite;
  return f.max_finite | (sign ? f.sign_bit() : 0u);
}

std::uint32_t encode_min_positive(const Format& f) {
  if (f.is_integer()) return 1u;
  if (f.has_subnormals) return 1u;  // smallest subnormal
  return 0u;                        // exponent field 0 is the lowest normal binade (E8M0: 2^-127)
}

// ---- exact decimal / hex-float rendering (§3.4) ---------------------------------

namespace {

// Little-endian base-1e9 big natural number, just enough for exact decimal output.
struct BigDec {
  std::vector<std::uint32_t> limbs{0};
  void mul_small(std::uint32_t m) {
    std::uint64_t carry = 0;
    for (auto& l : limbs) {
      const std::uint64_t v = static_cast<std::uint64_t>(l) * m + carry;
      l = static_cast<std::uint32_t>(v % 1000000000u);
      carry = v / 1000000000u;
    }
    while (carry) {
      limbs.push_back(static_cast<std::uint32_t>(carry % 1000000000u));
      carry /= 1000000000u;
    }
  }
  static BigDec from_u64(std::uint64_t v) {
    BigDec b;
    b.limbs.clear();
    do {
      b.limbs.push_back(static_cast<std::uint32_t>(v % 1000000000u));
      v /= 1000000000u;
    } while (v);
    return b;
  }
  std::string str() const {
    std::string s = std::to_string(limbs.back());
    char buf[16];
    for (std::size_t i = limbs.size() - 1; i-- > 0;) {
      std::snprintf(buf, sizeof buf, "%09u", limbs[i]);
      s += buf;
    }
    return s;
  }
};

// §3.4 The text of NaN, ±Inf and ±0 (`zero` without its sign); nullptr for a number.
const char* special_text(const Decoded& d, const char* zero, const char* neg_zero) {
  if (d.cls == Class::nan) return d.sign ? "-nan" : "nan";
  if (d.cls == Class::inf) return d.sign ? "-inf" : "inf";
  if (d.cls == Class::zero) return d.sign ? neg_zero : zero;
  return nullptr;
}

}  // namespace

std::string exact_decimal(const Decoded& d) {
  if (const char* s = special_text(d, "0", "-0")) return s;
  std::string sign = d.sign ? "-" : "";
  std::uint64_t sig = d.sig;
  int exp = d.exp;
  const int tz = __builtin_ctzll(sig);
  sig >>= tz;
  exp += tz;
  BigDec b = BigDec::from_u64(sig);
  if (exp >= 0) {
    for (int i = 0; i < exp; ++i) b.mul_small(2);
    return sign + b.str();
  }
  // sig / 2^n = sig * 5^n / 10^n
  const int n = -exp;
  for (int i = 0; i < n; ++i) b.mul_small(5);
  const std::string digits = b.str();
  const std::size_t nn = static_cast<std::size_t>(n);
  std::string out = sign;
  if (digits.size() <= nn) {
    out.append("0.");
    out.append(nn - digits.size(), '0');
    out.append(digits);
  } else {
    out.append(digits, 0, digits.size() - nn);
    out.push_back('.');
    out.append(digits, digits.size() - nn, nn);
  }
  return out;
}

std::string exact_hexfloat(const Decoded& d) {
  if (const char* s = special_text(d, "0x0p+0", "-0x0p+0")) return s;
  // normalise to 1.xxx * 2^e with the fraction in whole hex digits
  std::uint64_t sig = d.sig;
  const int bl = detail::bit_length(sig);
  int e = d.exp + bl - 1;
  std::uint64_t frac = sig & ((bl - 1) >= 64 ? ~0ull : ((std::uint64_t{1} << (bl - 1)) - 1));
  int fbits = bl - 1;
  const int pad = (4 - fbits % 4) % 4;
  frac <<= pad;
  fbits += pad;
  std::string out = d.sign ? "-0x1" : "0x1";
  if (fbits > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*llx", fbits / 4, static_cast<unsigned long long>(frac));
    std::string h = buf;
    while (!h.empty() && h.back() == '0') h.pop_back();
    if (!h.empty()) {
      out.push_back('.');
      out.append(h);
    }
  }
  out.push_back('p');
  if (e >= 0) out.push_back('+');
  out.append(std::to_string(e));
  return out;
}

}  // namespace numref
