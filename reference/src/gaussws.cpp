// numref — Gaussian weight sampling (GaussWS).                            spec §30
#include "numref/gaussws.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "numref/exact.hpp"
#include "numref/metrics.hpp"
#include "numref/policy.hpp"
#include "numref/splitmix64.hpp"

namespace numref::gaussws {

// ---- §30.3 generator --------------------------------------------------------------------
std::uint64_t block_key(const NoiseKey& k, std::uint32_t block_row, std::uint32_t block_col) {
  std::uint64_t h = splitmix64_mix(k.seed);
  h = splitmix64_mix(h ^ k.layer);
  h = splitmix64_mix(h ^ k.step);
  return splitmix64_mix(h ^ ((std::uint64_t{block_row} << 32) | block_col));
}

std::uint32_t noise_word(std::uint64_t bk, std::uint32_t e) {
  const std::uint64_t z = splitmix64_mix(bk + (std::uint64_t{e / 4} + 1) * kSplitMix64Gamma);
  return static_cast<std::uint32_t>((z >> (16 * (e % 4))) & 0xFFFFu);
}

std::vector<std::int8_t> noise(Shape s, const NoiseKey& k) {
  std::vector<std::int8_t> r(s.size());
  for (std::size_t bi = 0; bi < s.block_rows(); ++bi) {
    for (std::size_t bj = 0; bj < s.block_cols(); ++bj) {
      const std::uint64_t bk = block_key(k, static_cast<std::uint32_t>(bi), static_cast<std::uint32_t>(bj));
      for (std::size_t i = bi * kBlock; i < std::min(s.m, (bi + 1) * kBlock); ++i) {
        for (std::size_t j = bj * kBlock; j < std::min(s.n, (bj + 1) * kBlock); ++j) {
          const auto e = static_cast<std::uint32_t>((i % kBlock) * kBlock + j % kBlock);
          r[i * s.n + j] = static_cast<std::int8_t>(noise_from_bits(noise_word(bk, e)));
        }
      }
    }
  }
  return r;
}

std::vector<std::int8_t> noise_from_words(std::span<const std::uint16_t> u) {
  std::vector<std::int8_t> r(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) r[i] = static_cast<std::int8_t>(noise_from_bits(u[i]));
  return r;
}

std::vector<std::uint32_t> noise_counts() {
  std::vector<std::uint32_t> c(5, 0);
  for (std::uint32_t u = 0; u < 65536; ++u) ++c[static_cast<std::size_t>(noise_from_bits(u) + 2)];
  return c;
}

// ---- §30.9 packing -----------------------------------------------------------------------
std::vector<std::uint32_t> pack(std::span<const std::int8_t> r) {
  std::vector<std::uint32_t> w((r.size() + 7) / 8, 0);
  for (std::size_t k = 0; k < r.size(); ++k) {
    const int v = r[k];
    if (v < -2 || v > 2) throw std::invalid_argument("gaussws: noise value out of -2..2");
    const std::uint32_t nib = v < 0 ? (0x8u | static_cast<std::uint32_t>(-v)) : static_cast<std::uint32_t>(v);
    w[k / 8] |= nib << (4 * (k % 8));
  }
  return w;
}

std::vector<std::int8_t> unpack(std::span<const std::uint32_t> words, std::size_t count) {
  if (words.size() < (count + 7) / 8) throw std::invalid_argument("gaussws: packed R has too few words");
  std::vector<std::int8_t> r(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t nib = (words[k / 8] >> (4 * (k % 8))) & 0xFu;
    const int mag = static_cast<int>(nib & 7u);
    if (mag > 2)
      throw std::invalid_argument("gaussws: packed R element " + std::to_string(k) + " has magnitude " +
                                  std::to_string(mag));
    r[k] = static_cast<std::int8_t>((nib & 8u) ? -mag : mag);
  }
  return r;
}

// ---- §30.4 exp2 by interval bounds --------------------------------------------------------
namespace {

// Fixed-point bounds with W fraction bits of c_k = 2^(2^-k), k = 1..P (iterated square roots).
struct Pow2Table {
  int w = 0;
  std::vector<BigUInt> lo, hi;  // index k-1
};

BigUInt ceil_sqrt(const BigUInt& a) {
  BigUInt r = a.isqrt();
  if ((r * r).compare(a) != 0) r += BigUInt(1);
  return r;
}

const Pow2Table& pow2_table(int p) {
  static std::mutex mu;
  static std::map<int, Pow2Table> tables;
  std::lock_guard<std::mutex> lock(mu);
  auto it = tables.find(p);
  if (it != tables.end()) return it->second;
  Pow2Table t;
  t.w = p + 16;
  BigUInt lo = BigUInt(2) << t.w, hi = lo;
  for (int k = 1; k <= p; ++k) {
    lo = (lo << t.w).isqrt();   // floor(sqrt(lo * 2^W)) <= 2^(2^-k) * 2^W
    hi = ceil_sqrt(hi << t.w);  // ceil(sqrt(hi * 2^W))  >= 2^(2^-k) * 2^W
    t.lo.push_back(lo);
    t.hi.push_back(hi);
  }
  return tables.emplace(p, std::move(t)).first->second;
}

// Bounds of 2^ln 2 with W fraction bits: ln 2 = sum_{k>=1} 1 / (k 2^k).
struct Ln2 {
  BigUInt lo, hi;
  int w;
};
const Ln2& ln2_bounds(int w) {
  static std::mutex mu;
  static std::map<int, Ln2> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(w);
  if (it != cache.end()) return it->second;
  BigUInt sum;
  for (int k = 1; k <= w; ++k) {  // floor(2^(W-k) / k), each at most one unit low
    BigUInt q, r;
    BigUInt::divmod(BigUInt(1) << (w - k), BigUInt(static_cast<std::uint64_t>(k)), q, r);
    sum += q;
  }
  // Truncation: < w units; tail sum_{k>w} 1/(k 2^k) < 2^-w: one unit.
  Ln2 l{sum, sum + BigUInt(static_cast<std::uint64_t>(w) + 1), w};
  return cache.emplace(w, std::move(l)).first->second;
}

// The code's exact value as a signed integer numerator over 2^k (k >= 0 minimal).
struct Fixed {
  bool neg;
  BigUInt num;
  int k;
};

}  // namespace

std::uint32_t exp2_one_minus(std::uint32_t bt) {
  if (!f32_is_finite(bt)) throw std::invalid_argument("gaussws: b_t is not finite");
  const Exact b = exact_f32(bt);
  // x = 1 - b_t = X / 2^K exactly.
  const int k = b.exp < 0 ? -b.exp : 0;
  BigUInt bmag = BigUInt(b.sig) << (b.exp < 0 ? 0 : b.exp);
  const BigUInt one = BigUInt(1) << k;
  BigInt x = BigInt(false, one) - BigInt(b.sign, bmag);
  // Range: x >= 128 overflows; x <= -150 rounds to +0 (2^-150 is the tie below 2^-149, even 0).
  const BigUInt lim_hi = BigUInt(128) << k, lim_lo = BigUInt(150) << k;
  if (!x.neg && x.mag.compare(lim_hi) >= 0) return kF32Inf;
  if (x.neg && x.mag.compare(lim_lo) >= 0) return 0u;
  // n = floor(x), F = x - n (0 <= F < 2^K).
  BigUInt ip = x.mag >> k;
  BigUInt frac = x.mag - (ip << k);
  int n = static_cast<int>(ip.low64());
  if (x.neg) {
    n = -n;
    if (!frac.is_zero()) {
      n -= 1;
      frac = one - frac;
    }
  }
  if (frac.is_zero()) return rn32(exact_pow2(n));
  for (int p = 64; p <= 8192; p *= 2) {
    const Pow2Table& t = pow2_table(p);
    BigUInt flo = k <= p ? frac << (p - k) : frac >> (k - p);
    const bool truncated = k > p && frac.any_bit_below(k - p);
    BigUInt fhi = truncated ? flo + BigUInt(1) : flo;
    BigUInt lo = BigUInt(1) << t.w, hi = lo;
    for (int i = 1; i <= p; ++i) {
      if (flo.bit(p - i)) lo = (lo * t.lo[static_cast<std::size_t>(i - 1)]) >> t.w;
    }
    if (fhi.bit_length() > p) {
      hi = BigUInt(2) << t.w;  // fhi = 2^p: 2^1
    } else {
      for (int i = 1; i <= p; ++i) {
        if (fhi.bit(p - i)) {
          BigUInt prod = hi * t.hi[static_cast<std::size_t>(i - 1)];
          const bool rem = prod.any_bit_below(t.w);
          hi = (prod >> t.w) + BigUInt(rem ? 1 : 0);
        }
      }
    }
    const std::uint32_t a = rn32_ratio(false, lo, n - t.w, BigUInt(1));
    const std::uint32_t c = rn32_ratio(false, hi, n - t.w, BigUInt(1));
    if (a == c) return a;
  }
  throw std::logic_error("gaussws: exp2 did not converge");  // unreachable: 2^x is irrational
}

std::uint32_t block_scale(std::uint32_t amax, std::uint32_t bt) {
  const std::uint32_t e = exp2_one_minus(bt);
  if ((amax & 0x7FFFFFFFu) == 0) return 0u;
  if (e == kF32Inf) return kF32Inf;
  return rn32_mul(exact_f32(amax), exact_f32(e));
}

std::uint32_t bitwidth(std::uint32_t bi, std::uint32_t binit, std::uint32_t btarget) {
  if (!f32_is_finite(bi) || !f32_is_finite(binit) || !f32_is_finite(btarget))
    throw std::invalid_argument("gaussws: b_i, b_init and b_target must be finite");
  // Every operand is an integer multiple of 2^-149; the product of b_i and the difference is
  // a multiple of 2^-298. Work in units of 2^-298.
  auto as_int = [](std::uint32_t code, int scale) {
    const Exact v = exact_f32(code);
    return BigInt(v.sign, BigUInt(v.sig) << (v.exp + scale));
  };
  const BigInt diff = as_int(binit, 149) - as_int(btarget, 149);
  const BigInt v = as_int(btarget, 298) + as_int(bi, 149) * diff;
  if (v.mag.is_zero()) return 0u;
  return rn32_ratio(v.neg, v.mag, -298, BigUInt(1));
}

// ---- §30.5 forward ------------------------------------------------------------------------
std::string Dyadic::hex() const {
  const std::string h = dyadic_hexfloat(mag, exp);
  return (neg && !mag.is_zero()) ? "-" + h : h;
}

namespace {

const Format& checked_float(FormatId id, const char* what) {
  if (id != FormatId::f32 && id != FormatId::bf16)
    throw std::invalid_argument(std::string("gaussws: ") + what + " must be f32 or bf16");
  return format(id);
}

// The f32 code of a code of `f` (f32 or bf16: exact widening).
std::uint32_t to_f32(std::uint32_t code, FormatId f) { return f == FormatId::bf16 ? (code & 0xFFFFu) << 16 : code; }

// v = w + d as a rounding-core operand (64-bit significand and a sticky bit), for non-zero
// dyadic w and d of at most 26 significant bits each.
Exact sum_operand(const Exact& w, const Exact& d) {
  const int tw = ilog2(w), td = ilog2(d);
  const Exact& big = tw >= td ? w : d;
  const Exact& small = tw >= td ? d : w;
  const int tbsig = 63 - __builtin_clzll(big.sig);
  const int shift = 61 - tbsig;  // top bit of big's significand at bit 61
  const std::uint64_t bs = big.sig << shift;
  const int e = big.exp - shift;
  // small aligned to exponent e
  const int sh = small.exp - e;
  std::uint64_t ss;
  bool lost = false;
  if (sh >= 0) {
    ss = small.sig << sh;  // small's top bit <= big's: fits below bit 62
  } else if (-sh >= 64) {
    ss = 0;
    lost = true;
  } else {
    ss = small.sig >> (-sh);
    lost = (small.sig & ((std::uint64_t{1} << (-sh)) - 1)) != 0;
  }
  if (big.sign == small.sign) return Exact{big.sign, bs + ss, e, lost};
  // Opposite signs. Bits were lost only when |small| < 2^(61 - 38) * 2^e < |big|:
  // bs - (ss + delta) = (bs - ss - 1) + (1 - delta), 0 < 1 - delta < 1.
  if (lost) return Exact{big.sign, bs - ss - 1, e, true};
  if (bs >= ss) return Exact{big.sign, bs - ss, e, false};  // zero when equal (the caller's case)
  return Exact{small.sign, ss - bs, e, false};              // same top bit, |small| > |big|
}

Dyadic exact_sum(const Exact& w, const Exact& d) {
  const int e = std::min(w.exp, d.exp);
  const BigUInt a = BigUInt(w.sig) << (w.exp - e), b = BigUInt(d.sig) << (d.exp - e);
  const BigInt s = BigInt(w.sign, a) + BigInt(d.sign, b);
  return Dyadic{s.neg, s.mag, e};
}

}  // namespace

Forward forward(const ForwardSpec& spec, Shape shape, std::span<const std::uint32_t> w,
                std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, bool want_exact) {
  checked_float(spec.w_format, "w");
  const Format& out = format(spec.out);
  if (shape.m == 0 || shape.n == 0) throw std::invalid_argument("gaussws: empty matrix");
  if (w.size() != shape.size()) throw std::invalid_argument("gaussws: w has the wrong number of elements");
  if (r.size() != shape.size()) throw std::invalid_argument("gaussws: R has the wrong number of elements");
  if (bt.size() != shape.blocks()) throw std::invalid_argument("gaussws: b_t needs one value per 32 x 32 block");
  Policy pol;  // §30.5 rne, overflow to Inf (nonsat), gradual underflow
  if (out.canonical_nan == 0 && out.specials != Specials::ieee) pol.overflow = Overflow::saturate;
  const Rounder round_out(out, pol);
  const std::uint32_t out_nan = out.canonical_nan;
  Forward f;
  f.w_hat.assign(shape.size(), 0);
  f.scale.assign(shape.blocks(), 0);
  if (want_exact) f.exact.assign(shape.size(), Dyadic{});
  const std::size_t bc = shape.block_cols();
  for (std::size_t b = 0; b < shape.blocks(); ++b) {
    if (!f32_is_finite(bt[b]))
      throw std::invalid_argument("gaussws: b_t of block " + std::to_string(b) + " is not finite");
    const std::size_t i0 = (b / bc) * kBlock, j0 = (b % bc) * kBlock;
    const std::size_t i1 = std::min(shape.m, i0 + kBlock), j1 = std::min(shape.n, j0 + kBlock);
    std::uint32_t amax = 0;
    bool poisoned = false;
    for (std::size_t i = i0; i < i1; ++i) {
      for (std::size_t j = j0; j < j1; ++j) {
        const std::uint32_t c = to_f32(w[i * shape.n + j], spec.w_format) & 0x7FFFFFFFu;
        if (c >= kF32Inf)
          poisoned = true;
        else if (c > amax)
          amax = c;  // non-negative binary32 codes order like their values
      }
    }
    if (poisoned) {
      f.scale[b] = kNaN32;
      for (std::size_t i = i0; i < i1; ++i)
        for (std::size_t j = j0; j < j1; ++j) f.w_hat[i * shape.n + j] = out_nan;
      continue;
    }
    const std::uint32_t s = block_scale(amax, bt[b]);
    f.scale[b] = s;
    const Exact sx = s == kF32Inf ? Exact{} : exact_f32(s);
    for (std::size_t i = i0; i < i1; ++i) {
      for (std::size_t j = j0; j < j1; ++j) {
        const std::size_t k = i * shape.n + j;
        const int rv = r[k];
        if (rv < -2 || rv > 2) throw std::invalid_argument("gaussws: noise value out of -2..2");
        const Exact wx = exact_f32(to_f32(w[k], spec.w_format));
        if (rv == 0 || s == 0) {  // no noise: w itself, cast
          f.w_hat[k] = round_out(wx).bits;
          if (want_exact) f.exact[k] = Dyadic{wx.sign, BigUInt(wx.sig), wx.exp};
          continue;
        }
        if (s == kF32Inf) {
          f.w_hat[k] = round_out(Exact{rv < 0, 1, 1024, false}).bits;  // far past every format: ±Inf / saturation
          continue;
        }
        const Exact d{rv < 0, sx.sig * static_cast<std::uint64_t>(rv < 0 ? -rv : rv), sx.exp, false};
        if (want_exact) f.exact[k] = wx.sig == 0 ? Dyadic{d.sign, BigUInt(d.sig), d.exp} : exact_sum(wx, d);
        Exact v = wx.sig == 0 ? d : sum_operand(wx, d);
        if (v.sig == 0 && !v.sticky) {
          f.w_hat[k] = 0;  // exact zero sum: +0
          continue;
        }
        if (spec.sum == Sum::f32) {
          const std::uint32_t v32 = rn32(v);
          if (!f32_is_finite(v32)) {
            f.w_hat[k] = round_out(Exact{(v32 >> 31) != 0, 1, 1024, false}).bits;
            continue;
          }
          v = exact_f32(v32);
        }
        f.w_hat[k] = round_out(v).bits;
      }
    }
  }
  return f;
}

// ---- §30.7 backward -----------------------------------------------------------------------
std::vector<std::uint32_t> grad_bt(FormatId w_format, Shape shape, std::span<const std::uint32_t> w,
                                   std::span<const std::uint32_t> bt, std::span<const std::int8_t> r, FormatId g_format,
                                   std::span<const std::uint32_t> g) {
  checked_float(g_format, "dL/dw_hat");
  if (g.size() != shape.size()) throw std::invalid_argument("gaussws: dL/dw_hat has the wrong number of elements");
  ForwardSpec fs;
  fs.w_format = w_format;
  // The scales of the forward pass (the cast target is irrelevant here).
  const Forward fw = forward(fs, shape, w, bt, r, false);
  std::vector<std::uint32_t> out(shape.blocks(), 0);
  const std::size_t bc = shape.block_cols();
  for (std::size_t b = 0; b < shape.blocks(); ++b) {
    const std::size_t i0 = (b / bc) * kBlock, j0 = (b % bc) * kBlock;
    const std::size_t i1 = std::min(shape.m, i0 + kBlock), j1 = std::min(shape.n, j0 + kBlock);
    ExactSum pos, neg;  // §22.1 exact, order-independent
    bool nonfinite = false;
    for (std::size_t i = i0; i < i1; ++i) {
      for (std::size_t j = j0; j < j1; ++j) {
        const std::size_t k = i * shape.n + j;
        const std::uint32_t c = to_f32(g[k], g_format);
        if (!f32_is_finite(c)) {
          nonfinite = true;
          continue;
        }
        const int rv = r[k];
        if (rv == 0 || (c & 0x7FFFFFFFu) == 0) continue;
        const bool negative = ((c >> 31) != 0) != (rv < 0);
        (negative ? neg : pos).add_multiple(c & 0x7FFFFFFFu, static_cast<std::uint64_t>(rv < 0 ? -rv : rv));
      }
    }
    const std::uint32_t s = fw.scale[b];
    if (nonfinite || s == kNaN32) {
      out[b] = kNaN32;
      continue;
    }
    const BigInt t = BigInt(false, pos.value()) - BigInt(false, neg.value());  // T * 2^149
    if (t.mag.is_zero() || s == 0) {
      out[b] = 0;
      continue;
    }
    const bool res_neg = !t.neg;  // -ln2 * s * T, s > 0
    if (s == kF32Inf) {
      out[b] = res_neg ? 0xFF800000u : kF32Inf;
      continue;
    }
    const Exact sx = exact_f32(s);
    const BigUInt d = t.mag * BigUInt(sx.sig);
    const int de = sx.exp - ExactSum::kScale;
    std::uint32_t res = 0;
    bool done = false;
    for (int wbits = 64; wbits <= 8192 && !done; wbits *= 2) {
      const Ln2& l = ln2_bounds(wbits);
      const std::uint32_t a = rn32_ratio(res_neg, l.lo * d, de - wbits, BigUInt(1));
      const std::uint32_t c = rn32_ratio(res_neg, l.hi * d, de - wbits, BigUInt(1));
      if (a == c) {
        res = a;
        done = true;
      }
    }
    if (!done) throw std::logic_error("gaussws: ln 2 product did not converge");  // irrational: unreachable
    out[b] = res;
  }
  return out;
}

}  // namespace numref::gaussws
