// numref conformance — the GaussWS generated cases and the suites of a level.      spec §34.10
//
// A case is one matrix, produced from (seed, the suite's parameter text, the case index) alone
// (§34.3). Every 32 x 32 block (ragged at the edges, §30.1) draws its own b_t and its own kind
// of weights:
//   b_t: an integer 1..12 (half the blocks), a fractional value in [1, 12] (k + j/2^d, and
//        irrational-looking values with 23 random fraction bits), or rarely an extreme one
//        (0.5, 0, -3, 24, 40, 130, 200: s underflows to a subnormal or 0; -126, -130: s
//        overflows to +Inf, §30.4);
//   w:   a zero block (±0), values over 1 to 30 binades, bf16-representable values (f32 w),
//        subnormals, values near the top of binary32 (w + R s overflows bf16), one NaN or ±Inf
//        among finite values (a poisoned block, §30.6);
//   u:   16 uniform random bits, or with |R| = 2 forced on a quarter of the elements (the
//        natural rate is 3/1024, §30.2);
//   key: a random seed, a small layer and a random step (§30.3);
//   g:   values over 1 to 20 binades, ±1 only (T may cancel to 0), all zero, or one NaN / ±Inf.
// Suites: w and g in f32 and bf16, noise bits and key, sum exact and f32, shapes from 1 x 1 to
// 96 x 80 with ragged edges (at most 8192 elements: a result line stays under the 65 536
// characters of §33.1).
#include <set>
#include <stdexcept>

#include "gaussws.hpp"

namespace numref::conform::gaussws {

namespace {

class Gen {
 public:
  Gen(const GausswsParams& p, std::uint64_t seed, std::uint64_t index) : p_(p), rng_(seed, fnv1a64(p.text()), index) {}

  void fill(std::uint32_t* in) {
    const GausswsLayout& L = p_.layout();
    const auto& s = p_.spec();
    const BlockGrid& grid = p_.grid();
    for (std::size_t b = 0; b < grid.count(); ++b) {
      in[static_cast<std::size_t>(L.bt) + b] = bitwidth();
      const BlockRange r = grid.range(b);
      weights(r, in + L.w, *s.w);
      grads(r, in + L.g, *s.g);
      if (s.noise == Noise::bits) words(r, in + L.u);
    }
    if (s.noise == Noise::key) {
      numref::gaussws::NoiseKey k;
      k.seed = rng_.next();
      k.layer = rng_.below(64);
      k.step = rng_.below(4) == 0 ? rng_.next() : rng_.below(100000);
      put_key(k, in + L.key);
    }
  }

 private:
  // A binary32 code of value (1 + f) 2^e (f from 23 random bits), subnormal or clamped to the
  // largest finite value at the ends; a bf16 code keeps the high half (still finite).
  std::uint32_t value(int e, const Format& f) {
    int field = e + 127;
    std::uint32_t mant = static_cast<std::uint32_t>(rng_.next()) & 0x7FFFFFu;
    if (field > 254) field = 254;
    if (field < 1) {
      const int sh = 1 - field;
      mant = sh > 23 ? 1u : ((mant | 0x800000u) >> sh);
      field = 0;
    }
    std::uint32_t c = (static_cast<std::uint32_t>(field) << 23) | mant | (rng_.below(2) ? 0x80000000u : 0u);
    return f.id == FormatId::bf16 ? c >> 16 : c;
  }

  std::uint32_t special(const Format& f) {
    const std::uint32_t c = rng_.below(2) ? 0x7FC00000u : 0x7F800000u;
    const std::uint32_t s = c | (rng_.below(2) ? 0x80000000u : 0u);
    return f.id == FormatId::bf16 ? s >> 16 : s;
  }

  std::uint32_t bitwidth() {
    const std::uint64_t k = rng_.below(16);
    if (k < 8) return f32_of_int(1 + static_cast<int>(rng_.below(12)));  // integer 1..12
    if (k < 11) {                                                        // k + j / 2^d
      const int d = 1 + static_cast<int>(rng_.below(4));
      const std::uint64_t num = (std::uint64_t{1} << d) + rng_.below(std::uint64_t{11} << d);
      return f32_of_ratio(num, d);
    }
    if (k < 14) {  // a random binary32 value of [1, 12): binade 2^e (e = 0..3), 23 random fraction bits
      const int e = static_cast<int>(rng_.below(4));  // [8, 12) = fractions below 0.5 in binade 2^3
      const std::uint64_t frac = rng_.below(std::uint64_t{1} << (e == 3 ? 22 : 23));
      return f32_of_ratio((std::uint64_t{1} << 23) + frac, 23 - e);
    }
    // clang-format off
    static const std::uint32_t extreme[] = {0x3F000000u /* 0.5 */, 0u /* 0 */,  0xC0400000u /* -3 */,
                                            0x41C00000u /* 24 */,  0x42200000u /* 40 */, 0x43020000u /* 130 */,
                                            0x43480000u /* 200 */, 0xC2FC0000u /* -126 */, 0xC3020000u /* -130 */};
    // clang-format on
    return extreme[rng_.below(std::size(extreme))];
  }
  // The binary32 code of num / 2^d (0 < num < 2^24, exact).
  static std::uint32_t f32_of_ratio(std::uint64_t num, int d) {
    if (num == 0 || num >> 24) throw std::logic_error("gaussws cases: f32_of_ratio needs 0 < num < 2^24");
    const int e = 63 - __builtin_clzll(num);  // num in [2^e, 2^(e+1))
    const std::uint32_t mant = static_cast<std::uint32_t>((num << (23 - e)) & 0x7FFFFFu);
    return (static_cast<std::uint32_t>(e - d + 127) << 23) | mant;
  }
  static std::uint32_t f32_of_int(int v) { return f32_of_ratio(static_cast<std::uint64_t>(v), 0); }

  template <class F>
  void each(const BlockRange& r, F f) {
    const std::size_t C = p_.spec().cols;
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) f(i * C + j);
  }
  std::size_t pick(const BlockRange& r) {
    const std::size_t k = static_cast<std::size_t>(rng_.below(r.rows() * r.cols()));
    return (r.r0 + k / r.cols()) * p_.spec().cols + r.c0 + k % r.cols();
  }

  void weights(const BlockRange& r, std::uint32_t* w, const Format& f) {
    const std::uint64_t kind = rng_.below(10);
    const std::uint32_t sign = f.id == FormatId::bf16 ? 0x8000u : 0x80000000u;
    if (kind == 0) {  // zero block
      each(r, [&](std::size_t k) { w[k] = rng_.below(2) ? sign : 0u; });
      return;
    }
    int top = static_cast<int>(rng_.below(40)) - 20, span = 1 + static_cast<int>(rng_.below(30));
    if (kind == 1) top = -126 - static_cast<int>(rng_.below(20));  // subnormals
    if (kind == 2) top = 127, span = 2;                            // near the top: w + R s overflows
    const bool short_sig = kind == 3 && f.id == FormatId::f32;     // bf16-representable binary32
    each(r, [&](std::size_t k) {
      std::uint32_t c = value(top - static_cast<int>(rng_.below(static_cast<std::uint64_t>(span) + 1)), f);
      if (short_sig) c &= 0xFFFF0000u;
      if (rng_.below(16) == 0) c &= sign;  // sprinkled zeros
      w[k] = c;
    });
    if (rng_.below(8) == 0) w[pick(r)] = special(f);  // a poisoned block (§30.6)
  }

  void grads(const BlockRange& r, std::uint32_t* g, const Format& f) {
    const std::uint64_t kind = rng_.below(8);
    const std::uint32_t one = f.id == FormatId::bf16 ? 0x3F80u : 0x3F800000u;
    const std::uint32_t sign = f.id == FormatId::bf16 ? 0x8000u : 0x80000000u;
    if (kind == 0) {
      each(r, [&](std::size_t k) { g[k] = rng_.below(2) ? sign : 0u; });
    } else if (kind == 1) {  // ±1: T is an integer and may cancel to 0
      each(r, [&](std::size_t k) { g[k] = one | (rng_.below(2) ? sign : 0u); });
    } else {
      const int top = static_cast<int>(rng_.below(60)) - 40, span = 1 + static_cast<int>(rng_.below(20));
      each(r, [&](std::size_t k) {
        g[k] = value(top - static_cast<int>(rng_.below(static_cast<std::uint64_t>(span) + 1)), f);
      });
    }
    if (rng_.below(12) == 0) g[pick(r)] = special(f);  // a NaN / Inf gradient (§30.7)
  }

  void words(const BlockRange& r, std::uint32_t* u) {
    const bool forced = rng_.below(4) == 0;
    each(r, [&](std::size_t k) {
      std::uint32_t v = static_cast<std::uint32_t>(rng_.next()) & 0xFFFFu;
      if (forced && rng_.below(4) == 0) v |= 0x3FDu;  // (u0 | u1) & u2..u9: |R| = 2 (§30.2)
      u[k] = v;
    });
  }

  const GausswsParams& p_;
  CaseRng rng_;
};

struct Dims {
  std::size_t rows, cols;
};

}  // namespace

void generate_case(const GausswsParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in) {
  Gen(p, seed, index).fill(in);
}

std::shared_ptr<const CaseSource> cases(const GausswsParamsPtr& p, std::uint64_t count, std::uint64_t seed) {
  return std::make_shared<IndexedCases<GausswsParams, decltype(&generate_case)>>(p, count, seed, &generate_case);
}

void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) {
  // --ops gaussws:W:bf16:NOISE:SUM
  check_selectors(
      kName, req.selectors, 2, 4,
      [](std::size_t k, std::string_view w) {
        return k == 2 ? (w == "bits" || w == "key") : (w == "exact" || w == "f32");
      },
      "noise (bits, key) or sum (exact, f32)");
  const bool l0 = req.level == Level::l0;
  const std::uint64_t n = l0 ? 3 : req.level == Level::l1 ? 8 : 64;
  std::vector<Dims> dims = {{1, 1}, {1, 100}, {33, 17}, {40, 70}, {64, 64}, {70, 45}};
  if (!l0) {
    dims.push_back({96, 80});
    dims.push_back({31, 33});
    dims.push_back({128, 32});
    dims.push_back({5, 200});
    dims.push_back({65, 97});
  }
  std::set<std::string> seen;
  auto add = [&](const GausswsParams::Spec& s) {
    const auto p = std::make_shared<const GausswsParams>(s);
    if (!selector_match(*p, req.selectors) || !seen.insert(p->text()).second) return;
    out.push_back({p, cases(p, n, req.seed)});
  };
  const Format* fmts[] = {&format(FormatId::f32), &format(FormatId::bf16)};
  std::size_t i = 0;
  for (const Dims& d : dims) {
    // level 0: one (w, g, noise, sum) combination per shape, rotating; level 1 and up: every
    // (w, noise) pair with g and sum rotating
    const std::size_t combos = l0 ? 1 : 4;
    for (std::size_t c = 0; c < combos; ++c, ++i) {
      GausswsParams::Spec s;
      s.rows = d.rows;
      s.cols = d.cols;
      s.w = fmts[(l0 ? i : c) % 2];
      s.noise = ((l0 ? i / 2 : c / 2) % 2) ? Noise::key : Noise::bits;
      s.g = fmts[(i / 3) % 2];
      s.sum = i % 3 == 2 ? numref::gaussws::Sum::f32 : numref::gaussws::Sum::exact;
      add(s);
    }
  }
}

}  // namespace numref::conform::gaussws
