// numref CUDA kernels — policy mapping (host).                                spec §A.2
#include "numref_cuda/policy_map.hpp"

#include <stdexcept>
#include <string>

#include "numref/convert.hpp"
#include "numref/round.hpp"

namespace numref_cuda {
namespace {

[[noreturn]] void unsupported(const numref::Format& from, const numref::Format& to, const std::string& what) {
  throw std::invalid_argument("CUDA cast " + std::string(from.name) + " -> " + std::string(to.name) + ": " + what);
}

void check_common(const numref::Policy& p, const numref::Format& from, const numref::Format& to) {
  const std::string err = numref::validate(p, to);  // §4.3
  if (!err.empty()) unsupported(from, to, err);
  if (from.is_integer() || !from.is_signed || !from.has_zero || from.bits > 32 || from.man_bits > 23)
    unsupported(from, to, "the kernels read signed floating-point sources with a zero (f32, bf16, f16, f8, FP6, FP4)");
  if (p.daz) unsupported(from, to, "daz=1 is not implemented by the CUDA kernels (§A.2)");
  // §A.2: the NaN rules of the torch / xla / ml_dtypes pair rules (§6.3, §6.4) and the
  // e8m0_low=grid bottom binade (§7.4) are refused by name, not approximated. The kernels'
  // nan_code (cast.cuh) implements sign, canonical, ones and payload; every other value is refused.
  if (p.nan != numref::NanOut::sign && p.nan != numref::NanOut::canonical && p.nan != numref::NanOut::ones &&
      p.nan != numref::NanOut::payload)
    unsupported(from, to,
                "nan=" + std::string(numref::to_string(p.nan)) + " is not implemented by the CUDA kernels (§A.2)");
  if (p.nan_to_finite == numref::NanToFinite::signzero || p.nan_to_finite == numref::NanToFinite::flipzero)
    unsupported(from, to,
                "nan_to_finite=" + std::string(numref::to_string(p.nan_to_finite)) +
                    " is not implemented by the CUDA kernels (§A.2)");
  if (p.e8m0_low != numref::E8m0Low::linear && to.id == numref::FormatId::f8e8m0fnu)
    unsupported(
        from, to,
        "e8m0_low=" + std::string(numref::to_string(p.e8m0_low)) + " is not implemented by the CUDA kernels (§A.2)");
  // §A.2: gfloat's rules (§7.3 negative=inf_abs, §6.7 inf_nan=nan) are refused by name where they
  // can change a result: -Inf into the unsigned E8M0, the NaN standing for Inf in a format without Inf.
  if (p.negative == numref::Negative::inf_abs && !to.is_signed)
    unsupported(from, to, "negative=inf_abs is not implemented by the CUDA kernels (§A.2)");
  if (p.inf_nan == numref::InfNan::nan && !to.has_inf() && to.has_nan())
    unsupported(from, to, "inf_nan=nan is not implemented by the CUDA kernels (§A.2)");
}

}  // namespace

CastPolicy cast_policy(const numref::Policy& p, const numref::Format& from, const numref::Format& to) {
  check_common(p, from, to);
  if (to.is_integer() || !to.is_signed || !to.has_zero || !to.has_subnormals)
    unsupported(from, to, "the target must be a signed floating-point format with a zero (f8e8m0fnu: e8m0_policy)");
  if (p.ftz) unsupported(from, to, "ftz=1 is not implemented by the CUDA kernels (§A.2)");
  CastPolicy c;
  c.mode = numref::effective_round(to, p);
  if (c.mode == Mode::sr) {
    c.sr_bits = static_cast<std::uint8_t>(p.sr_bits);
    c.sr_variant = p.sr_variant;
  }
  c.saturate = p.overflow == numref::Overflow::saturate;
  c.inf_to_max = p.inf_sat == numref::InfSat::max;
  c.nan = p.nan;
  c.nan_to_finite = p.nan_to_finite;
  return c;
}

E8m0Policy e8m0_policy(const numref::Policy& p, const numref::Format& from) {
  const numref::Format& to = numref::format(numref::FormatId::f8e8m0fnu);
  check_common(p, from, to);
  // ftz: "targets without a zero ignore FTZ" (§8.2), so it is accepted here.
  E8m0Policy e;
  switch (numref::effective_round(to, p)) {  // §7.1 (follow resolved by the reference's rule)
    case numref::Round::rtz:
    case numref::Round::rdn: e.mode = E8m0Mode::floor; break;  // operands are positive here (§7.3)
    case numref::Round::rup: e.mode = E8m0Mode::ceil; break;
    case numref::Round::rne: e.mode = E8m0Mode::even; break;
    case numref::Round::rna: e.mode = E8m0Mode::tiesup; break;
    case numref::Round::sr: unsupported(from, to, "stochastic rounding into f8e8m0fnu is not implemented (§A.2)");
  }
  e.saturate = p.overflow == numref::Overflow::saturate;
  e.inf_to_max = p.inf_sat == numref::InfSat::max;
  e.zero_to_min = p.zero_to_nozero == numref::ZeroToNoZero::min;
  e.negative_abs = p.negative == numref::Negative::abs;
  return e;
}

bool hardware_f8_path(const CastPolicy& p) { return p.mode == Mode::rne && p.saturate; }
bool hardware_bf16_path(const CastPolicy& p) { return p.mode == Mode::rne && !p.saturate; }

namespace {
// §10.3 "key=word ..." of knob values, in the canonical text of numref's knob table.
template <class... E>
std::string settings(E... v) {
  std::string s;
  ((s += s.empty() ? "" : " ", s += numref::knob_setting(v)), ...);
  return s;
}
numref::Overflow overflow(bool saturate) { return saturate ? numref::Overflow::saturate : numref::Overflow::nonsat; }
numref::InfSat inf_sat(bool to_max) { return to_max ? numref::InfSat::max : numref::InfSat::keep; }
}  // namespace

std::string describe(const CastPolicy& p) {
  if (p.mode == Mode::sr)
    return settings(p.mode, static_cast<int>(p.sr_bits), p.sr_variant, overflow(p.saturate), inf_sat(p.inf_to_max),
                    p.nan, p.nan_to_finite);
  return settings(p.mode, overflow(p.saturate), inf_sat(p.inf_to_max), p.nan, p.nan_to_finite);
}

std::string describe(const E8m0Policy& p) {
  return settings(p.mode, overflow(p.saturate), inf_sat(p.inf_to_max),
                  p.zero_to_min ? numref::ZeroToNoZero::min : numref::ZeroToNoZero::nan,
                  p.negative_abs ? numref::Negative::abs : numref::Negative::nan);
}

}  // namespace numref_cuda
