// numref backend "cpu-fast" — block scaling and quantization engine (fast_quant.hpp).
//                                                                       spec §12–§20
#include "fast_quant.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

namespace numref::cpu_fast {

namespace {

constexpr std::uint32_t kNaN = 0x7FC00000u, kInf = 0x7F800000u, kOne = 0x3F800000u;
constexpr std::size_t kChunk = 2048;  // elements converted per FastCast call

inline float as_float(std::uint32_t u) { return std::bit_cast<float>(u); }
inline std::uint32_t as_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// E(v) and the 24-bit normalised significand of a positive finite non-zero binary32.
inline void normalise(std::uint32_t a, int& e, std::uint32_t& sig) {
  if (a >= 0x00800000u) {
    e = static_cast<int>(a >> 23) - 127;
    sig = (a & 0x7FFFFFu) | 0x800000u;
  } else {
    const int p = 31 - __builtin_clz(a);  // 0..22
    e = p - 149;
    sig = a << (23 - p);
  }
}

// §14.1 S = RN32(q_max / amax) clamped to FLT_MAX; 1.0 for a zero amax.
inline std::uint32_t amax_scale(std::uint32_t a, float q) {
  if (a == 0) return kOne;
  const float s = q / as_float(a);  // one correctly rounded binary32 division
  return s > std::numeric_limits<float>::max() ? 0x7F7FFFFFu : as_bits(s);
}

// §14.3 D = RN32(amax / q_max), at least 2^-149; 1.0 for a zero amax.
inline std::uint32_t dequant_scale(std::uint32_t a, float q) {
  if (a == 0) return kOne;
  const std::uint32_t d = as_bits(as_float(a) / q);
  return d == 0 ? 1u : d;
}

// 2^k as a binary32 (k in [-149, 127]).
inline float pow2f(int k) {
  if (k >= -126) return as_float(static_cast<std::uint32_t>(k + 127) << 23);
  return as_float(1u << (k + 149));
}

// ---- vectorisable row-segment kernels ----------------------------------------------------------

// y = RN32(x * f) or RN32(x / f); NaN lanes keep their (quieted) payload: the element is
// "widened to binary32 with its sign and payload" (§19.2) and converted by the policy.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NUMREF_QCLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NUMREF_QCLONES
#endif

NUMREF_QCLONES void scale_mul(const std::uint32_t* __restrict u, std::size_t n, float f, std::uint32_t* __restrict y) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t a = u[k] & 0x7FFFFFFFu;
    const std::uint32_t p = as_bits(as_float(u[k]) * f);
    y[k] = a > kInf ? (u[k] | 0x00400000u) : p;
  }
}

NUMREF_QCLONES void scale_div(const std::uint32_t* __restrict u, std::size_t n, float f, std::uint32_t* __restrict y) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t a = u[k] & 0x7FFFFFFFu;
    const std::uint32_t p = as_bits(as_float(u[k]) / f);
    y[k] = a > kInf ? (u[k] | 0x00400000u) : p;
  }
}

// Block maximum of |x| over a row segment, NaN / Inf masked out as the policies say.
NUMREF_QCLONES std::uint32_t seg_max(const std::uint32_t* __restrict u, std::size_t n, std::uint32_t nan_mask,
                                     std::uint32_t inf_mask) {
  std::uint32_t m = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::uint32_t a = u[k] & 0x7FFFFFFFu;
    const std::uint32_t drop =
        (static_cast<std::uint32_t>(a > kInf) & nan_mask) | (static_cast<std::uint32_t>(a == kInf) & inf_mask);
    a &= drop - 1u;  // drop ? 0 : a
    m = std::max(m, a);
  }
  return m;
}

// The exact integer rounding of q (a binary64 that is the exact value or within 2^-44 of
// it, away from every boundary; see fast_quant.hpp) by mode, clamped to [lo, hi].
template <Round MODE>
NUMREF_QCLONES void int_round(const double* __restrict q, std::size_t n, double lo, double hi,
                              std::uint8_t* __restrict out) {
  for (std::size_t k = 0; k < n; ++k) {
    const double v = q[k];
    const double t = std::trunc(v);
    const double fr = v - t;  // exact
    const double af = std::fabs(fr);
    const double away = std::copysign(1.0, v);
    double r = t;
    if constexpr (MODE == Round::rne) {
      const bool odd = std::fmod(t, 2.0) != 0.0;
      r = (af > 0.5 || (af == 0.5 && odd)) ? t + away : t;
    } else if constexpr (MODE == Round::rna) {
      r = af >= 0.5 ? t + away : t;
    } else if constexpr (MODE == Round::rup) {
      r = fr > 0.0 ? t + 1.0 : t;
    } else if constexpr (MODE == Round::rdn) {
      r = fr < 0.0 ? t - 1.0 : t;
    }
    r = std::min(std::max(r, lo), hi);
    out[k] = static_cast<std::uint8_t>(static_cast<std::int8_t>(static_cast<int>(r)));
  }
}

using IntRoundFn = void (*)(const double*, std::size_t, double, double, std::uint8_t*);
IntRoundFn int_round_fn(Round m) {
  switch (m) {
    case Round::rne: return int_round<Round::rne>;
    case Round::rna: return int_round<Round::rna>;
    case Round::rup: return int_round<Round::rup>;
    case Round::rdn: return int_round<Round::rdn>;
    default: return int_round<Round::rtz>;
  }
}

// §19.2 the table of a source's codes widened to binary32 (exact for numbers; a NaN keeps
// its sign and payload, quieted), built once per source format and shared.
std::shared_ptr<const std::vector<std::uint32_t>> widen_table(const Format& src) {
  static std::mutex mu;
  static std::map<FormatId, std::shared_ptr<const std::vector<std::uint32_t>>> tables;
  const std::lock_guard<std::mutex> lock(mu);
  auto& t = tables[src.id];
  if (!t) {
    const FastCast w(src, format(FormatId::f32), Policy{});
    std::vector<std::uint32_t> codes(std::size_t{1} << src.bits), out(codes.size());
    for (std::uint32_t c = 0; c < codes.size(); ++c) codes[c] = c;
    w.run(codes.data(), nullptr, out.data(), nullptr, codes.size());
    t = std::make_shared<const std::vector<std::uint32_t>>(std::move(out));
  }
  return t;
}

}  // namespace

std::string FastQuant::unsupported(const QuantOp& op) {
  if (!op.src || !op.elem || !op.out) return "bad format";
  // §19.8 the library recipes (§10.4 profiles) are the reference's: declined, by name
  if (const std::string r = recipe_changes(RecipeKnobs{}, op.recipe); !r.empty())
    return "cpu-fast does not implement the recipe knobs " + r + " (spec §19.8)";
  switch (scale_kind(op.rule)) {  // the kinds of numref::kScaleRules this engine computes
    case ScaleKind::fp32_quotient:
    case ScaleKind::fp32_recip:
    case ScaleKind::fp32_dequant:
    case ScaleKind::pow2:
    case ScaleKind::pow2_recip:
    case ScaleKind::mx:
    case ScaleKind::gam: break;
    case ScaleKind::nvfp4:
      return "cpu-fast does not implement the nvfp4 scale kind (rule " + std::string(to_string(op.rule)) + ")";
  }
  if (op.src->bits > 32 || op.src->is_integer() || !op.src->is_signed) return "unsupported source";
  if (op.elem->bits > 8 || !op.elem->is_signed || !op.elem->has_zero) return "unsupported element";
  if (op.rows == 0 || op.cols == 0 || op.br == 0 || op.bc == 0 || op.gr == 0 || op.gc == 0) return "empty shape";
  const Round mode = effective_round(*op.elem, op.policy);
  if (op.fused) {
    if (!op.elem->is_integer()) return "cpu-fast applies fused scaling to integer elements only";
    if (mode == Round::sr) return "cpu-fast does not implement fused stochastic rounding";
    if (op.policy.daz) return "daz with fused";
  }
  const std::uint32_t q = op.q_max;
  if (q < 0x40800000u || q >= 0x7F800000u) return "q_max out of range";
  return {};
}

FastQuant::FastQuant(const QuantOp& op)
    : op_(op), to_elem_(format(FormatId::f32), *op.elem, op.policy), qmax_(as_float(op.q_max)) {
  nbr_ = (op.rows + op.br - 1) / op.br;
  nbc_ = (op.cols + op.bc - 1) / op.bc;
  ngr_ = (op.rows + op.gr - 1) / op.gr;
  ngc_ = (op.cols + op.gc - 1) / op.gc;
  const Format& f32 = format(FormatId::f32);
  if (op.src->bits <= 16) widen_lut_ = widen_table(*op.src);
  const FastCast e(*op.elem, f32, op.wide);
  std::vector<std::uint32_t> codes(std::size_t{1} << op.elem->bits);
  for (std::uint32_t c = 0; c < codes.size(); ++c) codes[c] = c;
  elem_f32_.resize(codes.size());
  e.run(codes.data(), nullptr, elem_f32_.data(), nullptr, codes.size());
  if (op.out->bits > 8) to_out_.emplace(f32, *op.out, op.wide);
  normalise(op.q_max, emax_, qsig_);
  inv_qmax_ = 1.0f / qmax_;
}

// The tensor as binary32 codes in element order (dense f32 input is used in place).
const std::uint32_t* FastQuant::widen(const void* x, std::vector<std::uint32_t>& buf) const {
  const std::size_t R = op_.rows, C = op_.cols;
  const bool dense = op_.rs == static_cast<std::ptrdiff_t>(C) && op_.cs == 1;
  if (op_.src->bits == 32 && dense) return static_cast<const std::uint32_t*>(x);
  buf.resize(R * C);
  const std::size_t bytes = op_.src->bits <= 8 ? 1 : (op_.src->bits <= 16 ? 2 : 4);
  const auto* p = static_cast<const unsigned char*>(x);
  const std::uint32_t mask = op_.src->bits >= 32 ? 0xFFFFFFFFu : (1u << op_.src->bits) - 1u;
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t j = 0; j < C; ++j) {
      const std::ptrdiff_t off = static_cast<std::ptrdiff_t>(i) * op_.rs + static_cast<std::ptrdiff_t>(j) * op_.cs;
      std::uint32_t c = 0;
      std::memcpy(&c, p + off * static_cast<std::ptrdiff_t>(bytes), bytes);
      buf[i * C + j] = widen_lut_ ? (*widen_lut_)[c & mask] : c;
    }
  return buf.data();
}

// §13 the amax of every block: an integer maximum of the magnitude bits, which orders NaN
// above +Inf above every finite value; a NaN maximum is reported as the canonical NaN.
void FastQuant::amaxes(const std::uint32_t* f, std::uint32_t* amax) const {
  const std::uint32_t nan_mask = op_.nan_ignore ? 1u : 0u, inf_mask = op_.inf_ignore ? 1u : 0u;
  std::fill(amax, amax + blocks(), 0u);
  for (std::size_t i = 0; i < op_.rows; ++i) {
    const std::size_t I = i / op_.br;
    const std::uint32_t* row = f + i * op_.cols;
    for (std::size_t J = 0; J < nbc_; ++J) {
      const std::size_t c0 = J * op_.bc, c1 = std::min(c0 + op_.bc, op_.cols);
      std::uint32_t& m = amax[I * nbc_ + J];
      m = std::max(m, seg_max(row + c0, c1 - c0, nan_mask, inf_mask));
    }
  }
  for (std::size_t b = 0; b < blocks(); ++b)
    if (amax[b] > kInf) amax[b] = kNaN;
}

// §14–§17, §20.1 the stored scale and the quantize factor of every block.
void FastQuant::scales_of(const std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm,
                          std::vector<BlockFactor>& fac) const {
  const std::size_t nb = blocks();
  fac.assign(nb, BlockFactor{});
  const ScaleKind kind = scale_kind(op_.rule);
  // GAM: the group mantissas first (§17.1)
  std::vector<std::uint32_t> gmant, gamax;
  if (kind == ScaleKind::gam) {
    gamax.assign(groups(), 0u);
    for (std::size_t I = 0; I < nbr_; ++I)
      for (std::size_t J = 0; J < nbc_; ++J) {
        const std::size_t g = (I * op_.br / op_.gr) * ngc_ + (J * op_.bc / op_.gc);
        gamax[g] = std::max(gamax[g], amax[I * nbc_ + J]);
      }
    gmant.resize(groups());
    for (std::size_t g = 0; g < groups(); ++g) {
      gmant[g] = gamax[g] >= kInf ? 0u : (amax_scale(gamax[g], qmax_) & 0x7FFFFFu);
      if (gm) gm[g] = gmant[g];
    }
  }
  for (std::size_t b = 0; b < nb; ++b) {
    const std::uint32_t a = amax[b];
    BlockFactor& F = fac[b];
    if (a >= kInf && kind != ScaleKind::gam) {  // §13.2 a NaN / Inf block: the NaN of the scale format (§19.4)
      scales[b] = scale_format(op_.rule).id == FormatId::f32 ? kNaN : 0xFFu;
      F.poisoned = true;
      continue;
    }
    switch (kind) {
      case ScaleKind::fp32_quotient:
      case ScaleKind::fp32_recip:
      case ScaleKind::pow2:
      case ScaleKind::pow2_recip: {
        std::uint32_t s = amax_scale(a, qmax_);
        const bool p2 = kind == ScaleKind::pow2 || kind == ScaleKind::pow2_recip;
        if (p2) s = s >= 0x00800000u ? (s & 0xFF800000u) : (s ? 1u << (31 - __builtin_clz(s)) : 0u);
        F.f = as_float(s);
        scales[b] = kind == ScaleKind::pow2 || kind == ScaleKind::fp32_quotient ? s : as_bits(1.0f / F.f);
        break;
      }
      case ScaleKind::fp32_dequant: {
        scales[b] = dequant_scale(a, qmax_);
        F.f = as_float(scales[b]);
        F.divide = true;
        break;
      }
      case ScaleKind::gam:
      case ScaleKind::nvfp4: break;  // gam below, once the group mantissas are known; nvfp4 refused
      case ScaleKind::mx: {          // §16 MX: an E8M0 exponent from the bits of amax
        if (a == 0) {
          scales[b] = 0x00u;
          F.f = pow2f(127);
          break;
        }
        int E;
        std::uint32_t sig;
        normalise(a, E, sig);
        int e = 0;
        switch (rule_info(op_.rule).mx) {
          case MxExponent::floor: e = E - emax_; break;
          case MxExponent::ceil: e = E + (sig != 0x800000u ? 1 : 0) - emax_; break;
          case MxExponent::even: {
            const int p = op_.elem->precision();
            const std::uint32_t thr = p >= 24 ? 0xFFFFFFFFu : (1u << 24) - (1u << (23 - p));
            e = E + (sig >= thr ? 1 : 0) - emax_;
            break;
          }
          case MxExponent::rceil: e = E - emax_ + (sig > qsig_ ? 1 : 0); break;
          case MxExponent::rceil_f32: {  // E8M0 round-up of RN32(amax * RN32(1 / q_max))
            const std::uint32_t d = as_bits(as_float(a) * inv_qmax_);
            if (d == 0) {
              e = -127;
              break;
            }
            int Ed;
            std::uint32_t sd;
            normalise(d, Ed, sd);
            e = Ed + (sd != 0x800000u ? 1 : 0);
            break;
          }
          case MxExponent::none: break;  // not a row of kind mx (kScaleRules is checked)
        }
        e = std::clamp(e, -127, 127);
        scales[b] = static_cast<std::uint32_t>(e + 127);
        F.f = pow2f(-e);  // x / 2^e = x * 2^-e exactly
        break;
      }
    }
  }
  if (kind == ScaleKind::gam) {
    for (std::size_t I = 0; I < nbr_; ++I)
      for (std::size_t J = 0; J < nbc_; ++J) {
        const std::size_t b = I * nbc_ + J;
        const std::size_t g = (I * op_.br / op_.gr) * ngc_ + (J * op_.bc / op_.gc);
        BlockFactor& F = fac[b];
        if (gamax[g] >= kInf || amax[b] >= kInf) {  // §17.1 a poisoned group
          scales[b] = 0xFFu;
          F.poisoned = true;
          continue;
        }
        const std::uint32_t sb = amax_scale(amax[b], qmax_);  // §17.2
        const int Eb = static_cast<int>(sb >> 23) - 127;      // s_b is normal (§17.3)
        const int e = std::clamp(gmant[g] <= (sb & 0x7FFFFFu) ? Eb : Eb - 1, -127, 127);
        scales[b] = static_cast<std::uint32_t>(e + 127);
        F.f = as_float((scales[b] << 23) | gmant[g]);  // G_b = (1.m_g) 2^e_b, a normal binary32
      }
  }
}

// §19.2 the element codes: RN32(x op f) converted by the policy (rn32), or the exact
// product / quotient rounded once to an integer (fused, integer elements).
void FastQuant::codes_of(const std::uint32_t* f, const std::uint32_t* r, const std::vector<BlockFactor>& fac,
                         std::uint8_t* codes) const {
  const std::size_t C = op_.cols;
  std::uint32_t y[kChunk], o[kChunk];
  std::uint32_t nan_code;
  to_elem_.run(&kNaN, nullptr, &nan_code, nullptr, 1);
  if (op_.fused) {
    const Round mode = effective_round(*op_.elem, op_.policy);
    const IntRoundFn rnd = int_round_fn(mode);
    const bool sym = op_.policy.int_range == IntRange::symmetric;
    const double lo = sym ? -127.0 : -128.0, hi = 127.0;
    double q[kChunk];
    for (std::size_t i = 0; i < op_.rows; ++i) {
      const std::size_t I = i / op_.br;
      for (std::size_t J = 0; J < nbc_; ++J) {
        const BlockFactor& F = fac[I * nbc_ + J];
        const std::size_t c0 = J * op_.bc, c1 = std::min(c0 + op_.bc, C);
        const std::uint32_t* u = f + i * C;
        std::uint8_t* out = codes + i * C;
        if (F.poisoned) {
          std::fill(out + c0, out + c1, static_cast<std::uint8_t>(nan_code));
          continue;
        }
        const double fd = F.f;
        for (std::size_t j0 = c0; j0 < c1; j0 += kChunk) {
          const std::size_t m = std::min(kChunk, c1 - j0);
          std::uint32_t special = 0;
          for (std::size_t k = 0; k < m; ++k) {
            const double xv = as_float(u[j0 + k]);
            q[k] = F.divide ? xv / fd : xv * fd;
            special |= static_cast<std::uint32_t>((u[j0 + k] & 0x7FFFFFFFu) >= kInf);
          }
          rnd(q, m, lo, hi, out + j0);
          if (special)  // NaN / Inf elements: converted as themselves by the policy (§19.2)
            for (std::size_t k = 0; k < m; ++k) {
              const std::uint32_t v = u[j0 + k];
              if ((v & 0x7FFFFFFFu) < kInf) continue;
              const std::uint32_t w = (v & 0x7FFFFFFFu) > kInf ? (v | 0x00400000u) : v;
              std::uint32_t c;
              to_elem_.run(&w, nullptr, &c, nullptr, 1);
              out[j0 + k] = static_cast<std::uint8_t>(c);
            }
        }
      }
    }
    return;
  }
  // rn32: fill a chunk in element order, convert it with the element lanes, narrow.
  std::size_t fill = 0, base = 0;
  auto flush = [&] {
    to_elem_.run(y, r ? r + base : nullptr, o, nullptr, fill);
    for (std::size_t k = 0; k < fill; ++k) codes[base + k] = static_cast<std::uint8_t>(o[k]);
    base += fill;
    fill = 0;
  };
  for (std::size_t i = 0; i < op_.rows; ++i) {
    const std::size_t I = i / op_.br;
    const std::uint32_t* u = f + i * C;
    for (std::size_t J = 0; J < nbc_; ++J) {
      const BlockFactor& F = fac[I * nbc_ + J];
      std::size_t c0 = J * op_.bc;
      const std::size_t c1 = std::min(c0 + op_.bc, C);
      while (c0 < c1) {
        const std::size_t m = std::min(c1 - c0, kChunk - fill);
        if (F.poisoned)
          std::fill(y + fill, y + fill + m, kNaN);  // §13.3 the canonical NaN, converted
        else if (F.divide)
          scale_div(u + c0, m, F.f, y + fill);
        else
          scale_mul(u + c0, m, F.f, y + fill);
        fill += m;
        c0 += m;
        if (fill == kChunk) flush();
      }
    }
  }
  if (fill) flush();
}

void FastQuant::scale(const void* x, std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm) const {
  std::vector<std::uint32_t> buf;
  const std::uint32_t* f = widen(x, buf);
  amaxes(f, amax);
  std::vector<BlockFactor> fac;
  scales_of(amax, scales, gm, fac);
}

void FastQuant::quantize(const void* x, const std::uint32_t* r, std::uint8_t* codes, std::uint32_t* scales,
                         std::uint32_t* gm) const {
  std::vector<std::uint32_t> buf, amax(blocks());
  const std::uint32_t* f = widen(x, buf);
  amaxes(f, amax.data());
  std::vector<BlockFactor> fac;
  std::vector<std::uint32_t> gmb(groups());
  scales_of(amax.data(), scales, gm ? gm : gmb.data(), fac);
  codes_of(f, r, fac, codes);
}

bool FastQuant::dequantize(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm,
                           std::uint32_t* out, std::string& err) const {
  const std::size_t C = op_.cols;
  const ScaleKind kind = scale_kind(op_.rule);
  for (std::size_t I = 0; I < nbr_; ++I)
    for (std::size_t J = 0; J < nbc_; ++J) {
      const std::size_t b = I * nbc_ + J;
      const std::uint32_t s = scales[b];
      // §19.3 the dequantize factor from the stored metadata alone: the scale's value, by which
      // a multiplying scale (the row's dequant_multiplier) divides
      bool poisoned, divide = dequant_is_multiplier(op_.rule);
      float fv = 1.0f;
      if (kind == ScaleKind::mx || kind == ScaleKind::gam) {
        poisoned = s == 0xFFu;
        if (!poisoned && kind == ScaleKind::gam) {
          if (s == 0) {
            err = "GAM block code 00 is not a binary32 block scale (§17.3)";
            return false;
          }
          const std::size_t g = (I * op_.br / op_.gr) * ngc_ + (J * op_.bc / op_.gc);
          fv = as_float((s << 23) | (gm[g] & 0x7FFFFFu));
        } else if (!poisoned) {
          fv = pow2f(static_cast<int>(s) - 127);
        }
      } else {
        poisoned = (s & 0x7FFFFFFFu) >= kInf;
        fv = as_float(s);
      }
      if (divide && op_.reciprocal) {  // v * RN32(1 / S)
        fv = 1.0f / fv;
        divide = false;
      }
      const std::size_t r0 = I * op_.br, r1 = std::min(r0 + op_.br, op_.rows);
      const std::size_t c0 = J * op_.bc, c1 = std::min(c0 + op_.bc, C);
      for (std::size_t i = r0; i < r1; ++i) {
        std::uint32_t* y = out + i * C;
        const std::uint8_t* cd = codes + i * C;
        if (poisoned) {
          std::fill(y + c0, y + c1, kNaN);
          continue;
        }
        const std::uint32_t* lut = elem_f32_.data();
        const std::uint32_t mask = static_cast<std::uint32_t>(elem_f32_.size() - 1);
        for (std::size_t j = c0; j < c1; ++j) {
          const std::uint32_t v = lut[cd[j] & mask];
          const std::uint32_t p = divide ? as_bits(as_float(v) / fv) : as_bits(as_float(v) * fv);
          y[j] = (v & 0x7FFFFFFFu) > kInf ? v : p;
        }
      }
    }
  return true;
}

void FastQuant::fake_quant(const void* x, const std::uint32_t* r, std::uint32_t* out) const {
  const std::size_t n = op_.rows * op_.cols;
  std::vector<std::uint8_t> codes(n);
  std::vector<std::uint32_t> scales(blocks()), gm(groups()), d(n);
  quantize(x, r, codes.data(), scales.data(), gm.data());
  std::string err;
  (void)dequantize(codes.data(), scales.data(), gm.data(), d.data(), err);  // quantize never makes GAM code 00
  to_out_->run(d.data(), nullptr, out, nullptr, n);
}

}  // namespace numref::cpu_fast
