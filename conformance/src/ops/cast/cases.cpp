// numref conformance — generated cast cases (TestFloat-style).          spec §34.3
//
// Every cast suite enumerates
//   1. an explicit list of source codes: every code of a source of at most 16 bits (at
//      level 1 and above; all <= 8-bit sources at every level), else the *edge codes*:
//      source specials and the source codes next to every boundary point of the target
//      (values, midpoints = ties, the overflow threshold, half the smallest subnormal);
//   2. for 32-bit sources (and 16-bit ones at level 0) a seeded random tail: uniform
//      bits, codes near target boundaries, exponents in the target's range with
//      TestFloat-like significand patterns (runs of ones / zeros, single bits), specials;
//   3. with round=sr, several r per source code: 0, 2^k - 1, and the two values either
//      side of the threshold 2^k - f_k where the result flips (§5.1), plus random ones.
// Case j depends only on (seed, params text, j): shards and workers produce any range.
#include <algorithm>
#include <bit>
#include <mutex>
#include <map>

#include "cast.hpp"
#include "numref/conform/util.hpp"
#include "numref/round.hpp"
#include "numref/value.hpp"

namespace numref::conform::cast {

namespace {

// Largest magnitude code of a source (integers: 127; the -128 code is added apart).
std::uint32_t mag_max(const Format& f) { return f.is_integer() ? f.max_finite : f.mag_mask(); }

std::uint32_t with_sign(std::uint32_t mag, bool neg, const Format& f) {
  if (!neg) return mag;
  if (f.is_integer()) return (~mag + 1u) & f.mask();
  return mag | f.sign_bit();
}

// The largest source code (non-negative) whose value is <= v (v = sig * 2^exp >= 0).
std::uint32_t floor_code(std::uint64_t sig, int exp, const Format& src) {
  Policy p;
  p.round = Round::rtz;
  p.overflow = Overflow::saturate;
  p.zero_to_nozero = ZeroToNoZero::min;
  return round_finite(Exact{false, sig, exp, false}, src, p).bits;
}

// Positive magnitude codes of the target whose neighbourhood is interesting.
std::vector<std::uint32_t> target_codes(const Format& to, bool compact) {
  std::vector<std::uint32_t> c;
  const std::uint32_t top = to.max_finite;
  if (to.is_integer()) {
    if (!compact)
      for (std::uint32_t v = 0; v <= top; ++v) c.push_back(v);
    else
      c = {0, 1, 2, 3, top / 2, top / 2 + 1, top - 2, top - 1, top};
    return c;
  }
  if (to.bits <= 8 && !compact) {
    for (std::uint32_t v = 0; v <= top; ++v) c.push_back(v);
    return c;
  }
  const std::uint32_t fmax = top >> to.man_bits;  // exponent field of max finite
  const std::uint32_t mmax = to.man_mask();
  std::vector<std::uint32_t> fields, mans;
  const std::uint32_t one = static_cast<std::uint32_t>(to.bias);
  for (std::uint32_t f : {0u, 1u, 2u, one - 2, one - 1, one, one + 1, one + 2, fmax - 2, fmax - 1, fmax})
    if (f <= fmax) fields.push_back(f);
  if (!compact && to.bits > 8)
    for (std::uint32_t f = 0; f <= fmax; ++f) fields.push_back(f);
  if (compact)
    mans = {0, 1, mmax};
  else
    mans = {0, 1, 2, mmax / 2, mmax / 2 + 1, mmax - 1, mmax};
  if (to.bits <= 8) {  // compact narrow target: every code of the chosen binades
    mans.clear();
    for (std::uint32_t m = 0; m <= mmax; ++m) mans.push_back(m);
  }
  for (auto f : fields)
    for (auto m : mans) {
      if (m > mmax) continue;
      const std::uint32_t code = (f << to.man_bits) | m;
      if (code <= top) c.push_back(code);
    }
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

void source_specials(const Format& f, std::vector<std::uint32_t>& out) {
  auto both = [&](std::uint32_t mag) {
    if (mag > mag_max(f)) return;
    out.push_back(mag);
    if (f.is_signed) out.push_back(with_sign(mag, true, f));
  };
  if (f.is_integer()) {
    for (std::uint32_t v : {0u, 1u, 2u, f.max_finite - 1, f.max_finite}) both(v);
    out.push_back(f.sign_bit());  // the most negative integer
    return;
  }
  const std::uint32_t m = static_cast<std::uint32_t>(f.man_bits);
  const std::uint32_t minnorm = 1u << m;
  for (std::uint32_t v : {0u, 1u, 2u, 3u}) both(v);
  if (m > 0) {
    both(minnorm - 1);
    both(minnorm - 2);
  }
  both(minnorm);
  both(minnorm + 1);
  both(static_cast<std::uint32_t>(f.bias) << m);  // 1.0
  both(f.max_finite - 1);
  both(f.max_finite);
  both(f.max_finite + 1);  // Inf, the NaN slot, or nothing
  if (f.specials == Specials::ieee) {
    const std::uint32_t inf = f.exp_all_ones() << m;
    both(inf);
    both(inf | 1u);                                 // signaling NaN, smallest payload
    both(inf | (1u << (m - 1)));                    // canonical quiet NaN
    both(inf | (1u << (m - 1)) | 1u);               // quiet NaN with payload
    both(f.mag_mask());                             // all ones
    if (m > 1) both(inf | ((1u << (m - 1)) - 1u));  // signaling NaN, largest payload
  } else if (f.specials == Specials::fn) {
    both(f.mag_mask());
  }
}

}  // namespace

std::vector<std::uint32_t> edge_codes(const Format& from, const Format& to, bool compact) {
  std::vector<std::uint32_t> out;
  source_specials(from, out);
  const int reach = compact ? 1 : 2;
  auto near = [&](std::uint64_t sig, int exp) {
    const std::uint32_t s = floor_code(sig, exp, from) & (from.is_integer() ? 0xFFFFFFFFu : from.mag_mask());
    for (int d = -reach; d <= reach; ++d) {
      const std::int64_t m = static_cast<std::int64_t>(s) + d;
      if (m < 0 || m > static_cast<std::int64_t>(mag_max(from))) continue;
      const auto mag = static_cast<std::uint32_t>(m);
      out.push_back(mag);
      if (from.is_signed && !(compact && d != 0)) out.push_back(with_sign(mag, true, from));
    }
  };
  for (std::uint32_t c : target_codes(to, compact)) {
    const Decoded a = decode(c, to);
    near(a.sig, a.exp);  // the target value itself
    // The neighbour above (virtual past max finite: one more unit in the last place).
    std::uint64_t bs;
    int be;
    if (c == to.max_finite) {
      bs = a.sig + 1;
      be = a.exp;
    } else {
      const Decoded b = decode(c + 1, to);
      bs = b.sig;
      be = b.exp;
    }
    // midpoint (a + b) / 2 as sig * 2^exp
    int e = std::min(a.exp, be);
    if (a.sig == 0) e = be;
    const unsigned __int128 sa = a.sig == 0 ? 0 : (static_cast<unsigned __int128>(a.sig) << (a.exp - e));
    const unsigned __int128 sb = static_cast<unsigned __int128>(bs) << (be - e);
    unsigned __int128 sum = sa + sb;  // midpoint = sum * 2^(e-1)
    int me = e - 1;
    while (sum > 0 && (sum & 1) == 0) {
      sum >>= 1;
      ++me;
    }
    if (sum >> 63) continue;  // cannot happen for <= 32-bit targets
    near(static_cast<std::uint64_t>(sum), me);
  }
  // Half the smallest positive target value (a §11.2 input class): the midpoint above covers it
  // where the target has a zero; a target without one (f8e8m0fnu) needs it here.
  if (!to.has_zero) {
    const Decoded m = decode(encode_min_positive(to), to);
    near(m.sig, m.exp - 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

RValues sr_edge_r(const CastParams& p, std::uint32_t x) {
  const int k = p.sr_bits();
  const std::uint64_t top = (std::uint64_t{1} << k) - 1;
  RValues r;
  r.v[r.n++] = 0u;
  r.v[r.n++] = static_cast<std::uint32_t>(top);
  // f_k of §5.1 at the target quantum (approximate for variant add, exact for fraction):
  // it only chooses which r are interesting; expected results come from the reference.
  const Format& f = p.from();
  std::uint64_t sig = 0;
  int exp = 0;
  if (f.is_integer()) {
    const std::uint32_t c = x & f.mask();
    sig = (c & f.sign_bit()) ? ((~c + 1u) & f.mask()) : c;
  } else {
    const std::uint32_t mag = x & f.mag_mask();
    const std::uint32_t ef = mag >> f.man_bits, mf = mag & f.man_mask();
    const bool special = !f.is_finite_code(x);  // §2.2 (fnuz: 80 too)
    if (!special) {
      if (f.has_subnormals && ef == 0) {
        sig = mf;
        exp = f.qmin();
      } else {
        sig = (std::uint64_t{1} << f.man_bits) | mf;
        exp = static_cast<int>(ef) - f.bias - f.man_bits;
      }
    }
  }
  if (sig != 0) {
    const Format& to = p.to();
    const int e = exp + (static_cast<int>(std::bit_width(sig)) - 1);  // sig != 0
    int q = to.is_integer() ? 0 : e - to.man_bits;
    if (!to.is_integer() && to.has_subnormals && q < to.qmin()) q = to.qmin();
    const int shift = q - exp;
    if (shift > 0) {
      const std::uint64_t rem = shift >= 64 ? sig : (sig & ((std::uint64_t{1} << shift) - 1));
      std::uint64_t fk;
      if (shift >= k)
        fk = (shift - k) >= 64 ? 0 : rem >> (shift - k);
      else
        fk = rem << (k - shift);
      if (fk > 0) {
        const std::uint64_t thr = (std::uint64_t{1} << k) - fk;  // smallest r that rounds up
        r.v[r.n++] = static_cast<std::uint32_t>(thr);
        r.v[r.n++] = static_cast<std::uint32_t>(thr - 1);
      }
    }
  }
  if (r.n < 4) {
    r.v[r.n++] = static_cast<std::uint32_t>((top + 1) / 2);
    r.v[r.n++] = static_cast<std::uint32_t>(top / 2);
  }
  return r;
}

std::uint32_t random_code(const Format& f, const Format& to, const std::vector<std::uint32_t>& edges, CaseRng& rng) {
  const std::uint32_t kind = static_cast<std::uint32_t>(rng.below(16));
  if (kind < 4 || f.is_integer()) return static_cast<std::uint32_t>(rng.next()) & f.mask();
  const bool neg = f.is_signed && rng.below(2) == 1;
  if (kind < 10 && !edges.empty()) {  // near a target boundary
    const std::uint32_t e = edges[rng.below(edges.size())] & f.mag_mask();
    const std::int64_t m = static_cast<std::int64_t>(e) + static_cast<std::int64_t>(rng.below(9)) - 4;
    const auto mag = static_cast<std::uint32_t>(std::clamp<std::int64_t>(m, 0, f.mag_mask()));
    return with_sign(mag, neg, f);
  }
  const std::uint32_t m = static_cast<std::uint32_t>(f.man_bits);
  const std::uint32_t fmax = f.exp_all_ones();
  std::uint32_t field;
  if (kind < 14) {
    // An exponent in the target's range (2 binades of margin on both sides).
    // A target whose largest finite value is zero (P3109 K2P1 extended: 0, Inf, NaN, §2.5)
    // has no binade: its window is the one around qmin. (__builtin_clzll(0) is undefined.)
    const Decoded top = decode(to.max_finite, to);
    const int emax_to = to.is_integer() ? 7
                        : top.sig == 0  ? to.qmin()
                                        : top.exp + (static_cast<int>(std::bit_width(top.sig)) - 1);
    const int lo = (to.is_integer() ? -2 : to.qmin() - 2) + f.bias;
    const int hi = emax_to + 2 + f.bias;
    const int a = std::clamp(lo, 0, static_cast<int>(fmax)), b = std::clamp(hi, 0, static_cast<int>(fmax));
    field = static_cast<std::uint32_t>(a + static_cast<int>(rng.below(static_cast<std::uint64_t>(b - a + 1))));
  } else if (kind == 14) {
    field = 0;  // subnormal or zero
  } else {
    field = fmax;  // Inf / NaN / the top binade
  }
  // TestFloat-like significand patterns: random, a run of ones, a run of zeros, one bit.
  std::uint32_t man = 0;
  if (m > 0) {
    const std::uint32_t mm = f.man_mask();
    switch (rng.below(4)) {
      case 0: man = static_cast<std::uint32_t>(rng.next()) & mm; break;
      case 1: man = mm >> rng.below(m + 1); break;                                            // low run of ones
      case 2: man = (mm << rng.below(m + 1)) & mm; break;                                     // high run of ones
      default: man = (1u << rng.below(m)) | static_cast<std::uint32_t>(rng.below(2)); break;  // one bit (+ lsb)
    }
  }
  const std::uint32_t mag = ((field << m) | man) & f.mag_mask();
  return with_sign(mag, neg, f);
}

namespace {

class CastCases final : public CaseSource {
 public:
  CastCases(std::shared_ptr<const CastParams> p, Level level, std::uint64_t seed)
      : p_(std::move(p)), seed_(seed), key_(fnv1a64(p_->text())) {
    const Format& from = p_->from();
    const Format& to = p_->to();
    const bool small = from.bits <= 8;
    const bool mid = from.bits <= 16 && !small;
    if ((from.bits >= 32 && level == Level::exhaustive) || small || (mid && level != Level::l0)) {
      all_ = std::uint64_t{1} << from.bits;  // every code, x = case index (not materialised)
    } else {
      edges_ = edges(from, to);
      switch (level) {
        case Level::l0: random_ = 2048; break;
        case Level::l1: random_ = 65536; break;
        default: random_ = std::uint64_t{1} << 22; break;
      }
    }
    if (p_->sr()) {
      const int k = p_->sr_bits();
      // r values per source code: fewer where there are many source codes.
      const bool wide = from.bits > 8;
      switch (level) {
        case Level::l0: rper_ = 4; break;
        case Level::l1: rper_ = wide ? 2 : 6; break;
        case Level::l2: rper_ = wide ? 8 : 16; break;
        case Level::exhaustive: rper_ = k <= 8 ? (1u << k) : 16; break;
      }
      if (from.bits >= 32) rper_ = 1;  // the 2^32 sweep: one r per x
      every_r_ = level == Level::exhaustive && k <= 8 && from.bits < 32;
    }
  }

  std::uint64_t listed() const { return (all_ ? all_ : static_cast<std::uint64_t>(edges_->size())) * rper_; }
  std::uint64_t size() const override { return listed() + random_; }

  void fill(std::uint64_t first, std::size_t n, std::uint32_t* in) const override {
    std::uint32_t* xs = in;
    const bool sr = p_->sr();
    std::uint32_t* rs = sr ? in + n : nullptr;  // the r column exists with round=sr only
    const std::uint64_t lst = listed();
    if (!sr && all_ && first + n <= lst) {  // the common exhaustive case
      for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<std::uint32_t>(first + i);
      return;
    }
    const std::uint64_t rmask = sr ? ((std::uint64_t{1} << p_->sr_bits()) - 1) : 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t j = first + i;
      std::uint32_t x, r = 0;
      if (j < lst) {
        const std::uint64_t xi = j / rper_;
        x = all_ ? static_cast<std::uint32_t>(xi) : (*edges_)[xi];
        if (sr) {
          const std::uint32_t ri = static_cast<std::uint32_t>(j % rper_);
          if (every_r_) {
            r = ri;
          } else if (rper_ == 1) {
            r = random_r(j, x);
          } else {
            const auto er = sr_edge_r(*p_, x);
            r = ri < er.size() ? er[ri] : static_cast<std::uint32_t>(CaseRng(seed_, key_, j).next() & rmask);
          }
        }
      } else {
        CaseRng rng(seed_, key_, j);
        x = random_code(p_->from(), p_->to(), *edges_, rng);
        if (sr) r = random_r(j, x);
      }
      xs[i] = x;
      if (rs) rs[i] = r;
    }
  }

 private:
  // Edge codes of a pair are the same for every policy: computed once per pair, shared.
  static std::shared_ptr<const std::vector<std::uint32_t>> edges(const Format& from, const Format& to) {
    static std::mutex mu;
    static std::map<std::pair<int, int>, std::shared_ptr<const std::vector<std::uint32_t>>> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto key = std::make_pair(static_cast<int>(from.id), static_cast<int>(to.id));
    auto it = cache.find(key);
    if (it == cache.end())
      it = cache.emplace(key, std::make_shared<const std::vector<std::uint32_t>>(edge_codes(from, to, false))).first;
    return it->second;
  }

  std::uint32_t random_r(std::uint64_t j, std::uint32_t x) const {
    CaseRng rng(seed_ ^ 0x5EEDull, key_, j);
    const std::uint64_t rmask = (std::uint64_t{1} << p_->sr_bits()) - 1;
    if (rng.below(2) == 0) return static_cast<std::uint32_t>(rng.next() & rmask);
    const auto er = sr_edge_r(*p_, x);
    return er[static_cast<std::uint32_t>(rng.below(er.size()))];
  }

  std::shared_ptr<const CastParams> p_;
  std::uint64_t seed_, key_;
  std::uint64_t all_ = 0;
  std::shared_ptr<const std::vector<std::uint32_t>> edges_;
  std::uint64_t random_ = 0;
  std::uint32_t rper_ = 1;
  bool every_r_ = false;
};

}  // namespace

std::shared_ptr<const CaseSource> cases(const std::shared_ptr<const CastParams>& p, Level level, std::uint64_t seed) {
  return std::make_shared<const CastCases>(p, level, seed);
}

}  // namespace numref::conform::cast
