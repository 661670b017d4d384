// numref CUDA kernels — policy mapping (host).                                spec §35.2
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
  if (p.daz) unsupported(from, to, "daz=1 is not implemented by the CUDA kernels (§35.2)");
}

}  // namespace

CastPolicy cast_policy(const numref::Policy& p, const numref::Format& from, const numref::Format& to) {
  check_common(p, from, to);
  if (to.is_integer() || !to.is_signed || !to.has_zero || !to.has_subnormals)
    unsupported(from, to, "the target must be a signed floating-point format with a zero (f8e8m0fnu: e8m0_policy)");
  if (p.ftz) unsupported(from, to, "ftz=1 is not implemented by the CUDA kernels (§35.2)");
  CastPolicy c;
  switch (numref::effective_round(to, p)) {
    case numref::Round::rne: c.mode = Mode::rne; break;
    case numref::Round::rna: c.mode = Mode::rna; break;
    case numref::Round::rtz: c.mode = Mode::rtz; break;
    case numref::Round::rup: c.mode = Mode::rup; break;
    case numref::Round::rdn: c.mode = Mode::rdn; break;
    case numref::Round::sr:
      c.mode = Mode::sr;
      c.sr_bits = static_cast<std::uint8_t>(p.sr_bits);
      c.sr_variant = p.sr_variant == numref::SrVariant::add ? SrVariant::add : SrVariant::fraction;
      break;
  }
  c.saturate = p.overflow == numref::Overflow::saturate;
  c.inf_to_max = p.inf_sat == numref::InfSat::max;
  switch (p.nan) {
    case numref::NanOut::payload: c.nan = NanOut::payload; break;
    case numref::NanOut::sign: c.nan = NanOut::sign; break;
    case numref::NanOut::canonical: c.nan = NanOut::canonical; break;
    case numref::NanOut::ones: c.nan = NanOut::ones; break;
  }
  switch (p.nan_to_finite) {
    case numref::NanToFinite::zero: c.nan_to_finite = NanToFinite::zero; break;
    case numref::NanToFinite::negzero: c.nan_to_finite = NanToFinite::negzero; break;
    case numref::NanToFinite::max: c.nan_to_finite = NanToFinite::max; break;
  }
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
    case numref::Round::sr: unsupported(from, to, "stochastic rounding into f8e8m0fnu is not implemented (§35.2)");
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
const char* name(Mode m) {
  switch (m) {
    case Mode::rne: return "rne";
    case Mode::rna: return "rna";
    case Mode::rtz: return "rtz";
    case Mode::rup: return "rup";
    case Mode::rdn: return "rdn";
    case Mode::sr: return "sr";
  }
  return "?";
}
const char* name(NanOut n) {
  switch (n) {
    case NanOut::payload: return "payload";
    case NanOut::sign: return "sign";
    case NanOut::canonical: return "canonical";
    case NanOut::ones: return "ones";
  }
  return "?";
}
const char* name(NanToFinite n) {
  switch (n) {
    case NanToFinite::zero: return "zero";
    case NanToFinite::negzero: return "negzero";
    case NanToFinite::max: return "max";
  }
  return "?";
}
const char* name(E8m0Mode m) {
  switch (m) {
    case E8m0Mode::floor: return "floor";
    case E8m0Mode::ceil: return "ceil";
    case E8m0Mode::even: return "even";
    case E8m0Mode::tiesup: return "tiesup";
  }
  return "?";
}
}  // namespace

std::string describe(const CastPolicy& p) {
  std::string s = std::string("round=") + name(p.mode);
  if (p.mode == Mode::sr)
    s += " sr_bits=" + std::to_string(p.sr_bits) + " sr_variant=" + (p.sr_variant == SrVariant::add ? "add" : "fraction");
  s += std::string(" overflow=") + (p.saturate ? "saturate" : "nonsat");
  s += std::string(" inf_sat=") + (p.inf_to_max ? "max" : "keep");
  s += std::string(" nan=") + name(p.nan) + " nan_to_finite=" + name(p.nan_to_finite);
  return s;
}

std::string describe(const E8m0Policy& p) {
  return std::string("e8m0_round=") + name(p.mode) + " overflow=" + (p.saturate ? "saturate" : "nonsat") +
         " inf_sat=" + (p.inf_to_max ? "max" : "keep") + " zero_to_nozero=" + (p.zero_to_min ? "min" : "nan") +
         " negative=" + (p.negative_abs ? "abs" : "nan");
}

}  // namespace numref_cuda
