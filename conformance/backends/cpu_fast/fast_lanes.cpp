// numref backend "cpu-fast" — byte-output lanes (see fast_lanes.hpp).     spec §4.1, §6, §9, §11
#include "fast_lanes.hpp"
#include "lane_fn.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace numref::cpu_fast {

namespace {

// The constants of the lane function (see lane()); nullopt-like `ok = false` when the overflow
// or Inf results are not one magnitude with the operand's sign (never so today; checked).
ByteLanes::Consts make_consts(const Plan& pl, const Format& from, bool& ok) {
  ByteLanes::Consts c{};
  c.m = pl.m;
  c.d0 = pl.s_m - pl.m;
  c.dk = pl.qmin + pl.s_bias + pl.s_m;
  c.ek = pl.emin + pl.s_bias;
  c.maxc = pl.max_code;
  c.sign_bit = pl.sign_bit;
  c.one_m = 1u << pl.m;
  const bool after = pl.p.tininess == Tininess::after;
  c.tiny_rb = after ? (1u << (c.d0 - 1)) - 1u : 0u;
  c.tiny_odd = after ? 1u : 0u;
  // The results for overflow (§6.1) and Inf operands (§6.2) are the scalar path's own: the
  // source's largest finite value overflows every target here (checked), and +-Inf.
  const std::uint32_t sign = from.sign_bit(), maxf = from.max_finite, inf = maxf + 1u;
  const Out op = convert_scalar(pl, maxf, 0), on = convert_scalar(pl, sign | maxf, 0);
  const Out ip = convert_scalar(pl, inf, 0), in = convert_scalar(pl, sign | inf, 0);
  // The lane ORs the operand's sign into these codes: right when the negative result is the
  // positive one with the sign bit set, including a positive result that has it already (§6.7
  // inf_nan=nan under nan=all_ones: FF for both signs).
  ok = (op.flags & kOverflow) && on.code == (op.code | pl.sign_bit) && on.flags == op.flags &&
       in.code == (ip.code | pl.sign_bit) && in.flags == ip.flags;
  c.ovf_mag = op.code;
  c.ovf_fl = op.flags;
  c.inf_mag = ip.code;
  c.inf_fl = ip.flags;
  return c;
}

// The three source layouts the lane function is written for (IEEE-style specials).
enum class Layout { none, f32, bf16, f16 };
Layout layout_of(const Format& f) {
  if (f.specials != Specials::ieee || !f.has_subnormals || !f.is_signed) return Layout::none;
  if (f.bits == 32 && f.exp_bits == 8 && f.man_bits == 23) return Layout::f32;
  if (f.bits == 16 && f.exp_bits == 8 && f.man_bits == 7) return Layout::bf16;
  if (f.bits == 16 && f.exp_bits == 5 && f.man_bits == 10) return Layout::f16;
  return Layout::none;
}

// Blocks of kBlock: the lanes (vectorised, on 16-bit words: twice the lanes of 32-bit ones),
// then the block's NaN operands by the scalar path. f32 sources are squeezed to 16 bits first:
// the upper half (sign, exponent, 7 fraction bits) with a sticky bit OR-ed into its lowest bit
// when the lower half is not zero. That is f32 rounded to odd at 8 significant bits, and RNE of
// it at the target's quantum is RNE of the f32 value, with the same inexactness and tininess,
// because the target keeps at least 4 bits fewer wherever it rounds (its at most 1 + 3 bits in
// the normal range, fewer below; f32 subnormals round to zero either way); Inf stays Inf and a
// NaN stays a NaN (a payload in the lower half sets the sticky bit). The lanes see a bf16 code.
template <class In, int SM, int SE, bool FLAGS>
[[gnu::always_inline]] inline void lanes_impl(const Plan& pl, const ByteLanes::Consts& c, const In* in,
                                              std::uint8_t* out, std::uint8_t* flags, std::size_t n) {
  using W = std::uint16_t;
  constexpr W kMag = 0x7FFF;
  constexpr W kInf = static_cast<W>(((1u << SE) - 1u) << SM);
  constexpr std::size_t kBlock = 2048;
  for (std::size_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::size_t m = std::min(kBlock, n - i0);
    const In* x = in + i0;
    std::uint8_t* y = out + i0;
    std::uint8_t* fy = FLAGS ? flags + i0 : nullptr;
    // The lanes write 16-bit results to L1 scratch, narrowed by a second loop: written straight
    // to bytes, GCC narrows the selects to 8 bits and spends more on packing their masks.
    alignas(64) W rw[kBlock], fw[FLAGS ? kBlock : 1];
    W amax = 0;  // a magnitude above Inf's: a NaN in the block
    for (std::size_t j = 0; j < m; ++j) {
      W w;
      if constexpr (sizeof(In) == 4)
        w = lane_fn::squeeze_f32(x[j]);
      else
        w = x[j];
      W f = 0;
      rw[j] = lane_fn::lane<W, SM, SE, FLAGS>(w, c, f);
      if constexpr (FLAGS) fw[j] = f;
      amax = std::max(amax, static_cast<W>(w & kMag));
    }
    for (std::size_t j = 0; j < m; ++j) y[j] = static_cast<std::uint8_t>(rw[j]);
    if constexpr (FLAGS)
      for (std::size_t j = 0; j < m; ++j) fy[j] = static_cast<std::uint8_t>(fw[j]);
    if (amax > kInf) {
      constexpr In kSrcMag = static_cast<In>(~In{0} >> 1);
      constexpr In kSrcInf = static_cast<In>(sizeof(In) == 4 ? 0x7F800000u : kInf);
      for (std::size_t j = 0; j < m; ++j) {
        if ((x[j] & kSrcMag) <= kSrcInf) continue;
        const Out o = convert_scalar(pl, x[j], 0);  // §6.3, §6.4
        y[j] = static_cast<std::uint8_t>(o.code);
        if constexpr (FLAGS) fy[j] = o.flags;
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NUMREF_BYTE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NUMREF_BYTE_CLONES
#endif

#define NUMREF_BYTE_LANES(NAME, IN, SM, SE, FLAGS)                                                          \
  NUMREF_BYTE_CLONES void NAME(const Plan& pl, const ByteLanes::Consts& c, const IN* in, std::uint8_t* out, \
                               std::uint8_t* flags, std::size_t n) {                                        \
    lanes_impl<IN, SM, SE, FLAGS>(pl, c, in, out, flags, n);                                                \
  }
NUMREF_BYTE_LANES(f32_f, std::uint32_t, 7, 8, true)  // squeezed to bf16 codes
NUMREF_BYTE_LANES(f32_n, std::uint32_t, 7, 8, false)
NUMREF_BYTE_LANES(bf16_f, std::uint16_t, 7, 8, true)
NUMREF_BYTE_LANES(bf16_n, std::uint16_t, 7, 8, false)
NUMREF_BYTE_LANES(f16_f, std::uint16_t, 10, 5, true)
NUMREF_BYTE_LANES(f16_n, std::uint16_t, 10, 5, false)

}  // namespace

const char* byte_lanes_unsupported(const Format& from, const Format& to, const Policy& p) {
  if (const char* why = declined(from, to, p)) return why;
  if (layout_of(from) == Layout::none) return "byte lanes: the source is not f32, bf16 or f16";
  if (to.is_integer() || to.bits > 8 || to.man_bits < 1 || !to.has_zero || !to.has_subnormals || !to.is_signed)
    return "byte lanes: the target is not a signed <= 8-bit float with zero, subnormals and a mantissa";
  const Plan pl = make_plan(from, to, p);
  if (pl.mode != Round::rne) return "byte lanes: the rounding is not rne";
  if (p.daz || p.ftz) return "byte lanes: daz / ftz";
  if (pl.emin < pl.s_emin) return "byte lanes: the target's normal range reaches the source's subnormals";
  bool ok = false;
  make_consts(pl, from, ok);
  if (!ok) return "byte lanes: the overflow or Inf results are not sign-symmetric";
  return nullptr;
}

ByteLanes::ByteLanes(const Format& from, const Format& to, const Policy& p) : pl_(make_plan(from, to, p)), c_{} {
  if (const char* why = byte_lanes_unsupported(from, to, p)) throw std::invalid_argument(why);
  const Layout l = layout_of(from);
  src_ = l == Layout::f32 ? Src::f32 : l == Layout::bf16 ? Src::bf16 : Src::f16;
  // the lanes' constants for the layout they see (f32 sources: squeezed to bf16 codes)
  const Format& lf = src_ == Src::f32 ? format(FormatId::bf16) : from;
  bool ok = false;
  c_ = make_consts(make_plan(lf, to, p), lf, ok);
}

void ByteLanes::run(const std::uint32_t* in, std::uint8_t* out, std::uint8_t* flags, std::size_t n) const {
  if (src_ != Src::f32) throw std::logic_error("byte lanes: uint32 codes for a 16-bit source");
  (flags ? f32_f : f32_n)(pl_, c_, in, out, flags, n);
}

void ByteLanes::run(const std::uint16_t* in, std::uint8_t* out, std::uint8_t* flags, std::size_t n) const {
  if (src_ == Src::f32) throw std::logic_error("byte lanes: uint16 codes for an f32 source");
  if (src_ == Src::bf16)
    (flags ? bf16_f : bf16_n)(pl_, c_, in, out, flags, n);
  else
    (flags ? f16_f : f16_n)(pl_, c_, in, out, flags, n);
}

}  // namespace numref::cpu_fast
