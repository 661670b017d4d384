// numref conformance — the mma generated cases and the suites of a level.          spec §34.12
//
// A case is one D = A·B + C, produced from (seed, the suite's parameter text, the case index)
// alone (§34.3). Each case draws one kind for its operands, as the MMA-Sim comparison does
// (tools/tests/mma_peer.py): random codes of the whole format (NaN / Inf included), values of a
// few binades around 1, cancelling pairs along K, subnormals only, exponents spread over the
// whole format, sparse NaN / Inf, zero blocks, extreme block scales; C is drawn likewise
// (zero, a random code, values near the binary32 / binary16 maximum).
// Suites: level 0 one operand pair per profile and accumulator with K = 2 L + 1 (L the step;
// rounded up to the block), level 1 every operand pair, accumulator, block and scale type the
// profile takes with K = 1 (a block), L and 2 L + 1 (§38.1: partial steps), level 2 the same
// with 64 cases per suite.
#include <set>
#include <stdexcept>

#include "mma.hpp"

namespace numref::conform::mma {

namespace {

enum Kind : std::uint64_t {
  kRandom,
  kNormal,
  kCancel,
  kSubnormal,
  kSpread,
  kSpecials,
  kZeroBlocks,
  kExtremeScales,
  kKinds
};

class Gen {
 public:
  Gen(const MmaParams& p, std::uint64_t seed, std::uint64_t index)
      : p_(p), rng_(seed, fnv1a64(p.text()), index), kind_(rng_.below(kKinds)) {}

  void fill(std::uint32_t* in) {
    const MmaLayout& L = p_.layout();
    const auto& s = p_.spec();
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t k = 0; k < s.k; ++k) in[static_cast<std::size_t>(L.a) + i * s.k + k] = element(s.a);
    for (std::size_t k = 0; k < s.k; ++k)
      for (std::size_t j = 0; j < s.n; ++j) in[static_cast<std::size_t>(L.b) + k * s.n + j] = element(s.b);
    if (kind_ == kCancel) {  // b[k + K/2] = b[k] and a[i][k + K/2] = -a[i][k]: the products cancel
      const std::size_t h = s.k / 2;
      const std::uint32_t sign = fmt(s.a).sign_bit();
      for (std::size_t k = 0; k < h; ++k) {
        for (std::size_t j = 0; j < s.n; ++j)
          in[static_cast<std::size_t>(L.b) + (k + h) * s.n + j] = in[static_cast<std::size_t>(L.b) + k * s.n + j];
        for (std::size_t i = 0; i < s.m; ++i)
          in[static_cast<std::size_t>(L.a) + i * s.k + k + h] = in[static_cast<std::size_t>(L.a) + i * s.k + k] ^ sign;
      }
    }
    if (kind_ == kZeroBlocks && s.block) {
      const std::size_t blk = static_cast<std::size_t>(s.block);
      for (std::size_t i = 0; i < s.m; ++i)
        for (std::size_t k0 = 0; k0 < s.k; k0 += blk)
          if (rng_.below(2))
            for (std::size_t k = k0; k < k0 + blk; ++k) in[static_cast<std::size_t>(L.a) + i * s.k + k] = 0;
    }
    for (std::size_t k = 0; k < s.m * s.n; ++k) in[static_cast<std::size_t>(L.c) + k] = accumulator(s.c);
    if (s.block) {
      const std::size_t nb = s.k / static_cast<std::size_t>(s.block);
      for (std::size_t k = 0; k < s.m * nb; ++k) in[static_cast<std::size_t>(L.sa) + k] = scale(s.scale);
      for (std::size_t k = 0; k < nb * s.n; ++k) in[static_cast<std::size_t>(L.sb) + k] = scale(s.scale);
    }
  }

 private:
  static const Format& fmt(MmaType t) { return format(mma_type(t).format); }

  // A finite code with exponent field in [lo, hi] (clamped to the finite range), random fraction and sign.
  std::uint32_t finite(const Format& f, std::uint32_t lo, std::uint32_t hi) {
    const std::uint32_t field = lo + static_cast<std::uint32_t>(rng_.below(hi - lo + 1));
    std::uint32_t c = (field << f.man_bits) | (static_cast<std::uint32_t>(rng_.next()) & f.man_mask());
    if (!f.is_finite_code(c)) c = f.max_finite;
    return c | (rng_.below(2) ? f.sign_bit() : 0u);
  }
  std::uint32_t special(const Format& f) {
    if (f.has_inf() && rng_.below(2)) return encode_inf(rng_.below(2) != 0, f);
    if (f.has_nan()) return f.canonical_nan | (rng_.below(2) ? f.sign_bit() : 0u);
    return f.max_finite;
  }

  std::uint32_t element(MmaType t) {
    const Format& f = fmt(t);
    const std::uint32_t bias = static_cast<std::uint32_t>(f.bias), top = f.exp_all_ones();
    switch (kind_) {
      case kRandom: return static_cast<std::uint32_t>(rng_.next()) & f.mask();
      case kSubnormal:
        return (static_cast<std::uint32_t>(rng_.next()) & f.man_mask()) | (rng_.below(2) ? f.sign_bit() : 0u);
      case kSpread: return finite(f, 0, top);
      case kSpecials:
        if (rng_.below(40) == 0) return special(f);
        [[fallthrough]];
      default:  // a few binades around 1, some zeros
        if (rng_.below(12) == 0) return rng_.below(2) ? f.sign_bit() : 0u;
        return finite(f, bias > 3 ? bias - 3 : 1, std::min(bias + 3, top));
    }
  }

  std::uint32_t accumulator(MmaType t) {
    const Format& f = fmt(t);
    const std::uint64_t k = rng_.below(10);
    if (k < 3) return 0;
    if (k == 3) return static_cast<std::uint32_t>(rng_.next()) & f.mask();
    if (k == 4) return f.max_finite | (rng_.below(2) ? f.sign_bit() : 0u);  // overflow under rz (§38.5)
    if (k == 5 && kind_ == kSpecials) return special(f);
    return finite(f, static_cast<std::uint32_t>(f.bias) - 4, static_cast<std::uint32_t>(f.bias) + 4);
  }

  std::uint32_t scale(MmaType t) {
    if (t == MmaType::f8e8m0fnu) {
      if (kind_ == kExtremeScales) {
        static const std::uint32_t ext[] = {0x00, 0x01, 0x7F, 0xFD, 0xFE, 0xFF};
        return ext[rng_.below(std::size(ext))];
      }
      if (kind_ == kRandom) return static_cast<std::uint32_t>(rng_.next()) & 0xFFu;
      return 127u - 6u + static_cast<std::uint32_t>(rng_.below(13));
    }
    // ue4m3: an f8e4m3fn code whose sign is ignored (§36.2)
    if (kind_ == kExtremeScales) {
      static const std::uint32_t ext[] = {0x00, 0x01, 0x07, 0x08, 0x7E, 0x7F, 0x80, 0xB8};
      return ext[rng_.below(std::size(ext))];
    }
    if (kind_ == kRandom) return static_cast<std::uint32_t>(rng_.next()) & 0xFFu;
    return 0x38u - 12u + static_cast<std::uint32_t>(rng_.below(25));
  }

  const MmaParams& p_;
  CaseRng rng_;
  std::uint64_t kind_;
};

}  // namespace

void generate_case(const MmaParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in) {
  Gen(p, seed, index).fill(in);
}

void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) {
  // --ops mma:PROFILE:A:B:C
  check_selectors(
      kName, req.selectors, 0, 4,
      [](std::size_t k, std::string_view w) {
        return k == 0 ? find_mma_profile(w) != nullptr : find_mma_type(w).has_value();
      },
      "mma profile (word 1) or operand type");
  const bool l0 = req.level == Level::l0;
  const std::uint64_t n = l0 ? 3 : req.level == Level::l1 ? 8 : 64;
  std::set<std::string> seen;
  for (const MmaProfile& prof : mma_profiles()) {
    std::vector<MmaType> types, accs, scales;
    for (const MmaTypeInfo& t : mma_types()) {
      if (mma_list_has(prof.types, t.name)) types.push_back(t.id);
      if (mma_list_has(prof.accumulators, t.name)) accs.push_back(t.id);
      if (mma_list_has(prof.scale_types, t.name)) scales.push_back(t.id);
    }
    std::vector<int> blocks = {0};
    if (prof.knobs.scale != MmaScale::none) blocks = {16, 32};
    std::size_t combo = 0;
    for (const MmaType a : types)
      for (const MmaType b : types)
        for (const MmaType c : accs)
          for (const int block : blocks)
            for (const MmaType st : block ? scales : std::vector<MmaType>{MmaType::f8e8m0fnu}) {
              MmaSpec ms;
              ms.profile = &prof;
              ms.a = a;
              ms.b = b;
              ms.c = c;
              ms.block = block;
              ms.scale = st;
              const std::size_t unit = block ? static_cast<std::size_t>(block) : 1;
              const std::size_t L = prof.knobs.algo == MmaAlgo::ideal ? 16 : mma_fused(ms);
              try {
                validate(ms, unit * 4);
              } catch (const std::invalid_argument&) {
                continue;  // a combination the instruction does not take
              }
              if (l0 && combo++ % 7 != 0) continue;  // level 0: a rotating sample of the combinations
              std::vector<std::size_t> ks = {2 * L + 1};
              if (!l0) ks = {1, L, 2 * L + 1};
              for (std::size_t K : ks) {
                K = (K + unit - 1) / unit * unit;
                MmaParams::Spec s;
                s.profile = &prof;
                s.a = a;
                s.b = b;
                s.c = c;
                s.m = l0 ? 2 : 4;
                s.n = l0 ? 3 : 4;
                s.k = K;
                s.block = block;
                s.scale = st;
                const auto p = std::make_shared<const MmaParams>(s);
                if (!selector_match(*p, req.selectors) || !seen.insert(p->text()).second) continue;
                out.push_back({p, std::make_shared<IndexedCases<MmaParams, decltype(&generate_case)>>(p, n, req.seed,
                                                                                                      &generate_case)});
              }
            }
  }
}

}  // namespace numref::conform::mma
