// numref conformance — cast suites: parameters, reference results, comparison and
// classification of mismatches, C ABI and pipe marshalling.     spec §11, §32, §33, §34.4
#include <algorithm>
#include <stdexcept>

#include "../kit.hpp"
#include "cast.hpp"
#include "numref/conform/abi.hpp"
#include "numref/conform/util.hpp"
#include "numref/value.hpp"

namespace numref::conform::cast {

const std::vector<std::string>& checked_profiles() {
  // §10.1: ieee is a synonym of ocp, so a run checks the four distinct profiles.
  static const std::vector<std::string> v = {"ocp",   "cuda_satfinite", "cuda_nosat", "ml_dtypes",
                                             "torch", "torch_default",  "xla"};
  return v;
}

const std::vector<std::string>& divergence_profiles() {
  // §B.1 the checked profiles plus gfloat's two (their answers differ on ±Inf, E8M0 underflow
  // and negative E8M0 operands: §6.7, §7.3, §7.4)
  static const std::vector<std::string> v = [] {
    std::vector<std::string> p = checked_profiles();
    p.insert(p.end(), {"gfloat", "gfloat_sat"});
    return p;
  }();
  return v;
}

namespace {

std::string flags_decoded(std::uint32_t f) { return flags_text(f); }

// The knobs of p that differ from the profile's policy for the cast (§10.2).
std::string overrides_of(const Format& from, const Format& to, const std::string& profile, const Policy& p) {
  return kit::policy_overrides(kit::profile_by_name(profile).for_cast(from, to), p);
}

}  // namespace

CastParams::CastParams(const Format& from, const Format& to, std::string profile, const Policy& p)
    : Params(cast::family()), from_(&from), to_(&to), policy_(p), conv_(from, to, p) {
  sr_ = effective_round(to, p) == Round::sr;
  cpol_ = to_c_policy(policy_, to, policy_text_, &from);
  Identity id;
  id.text = std::string(from.name) + " " + std::string(to.name) + " " + profile + " " + policy_text_;
  id.profile = std::move(profile);
  id.formats = std::string(from.name) + " " + std::string(to.name);
  const std::string o = overrides_of(from, to, id.profile, p);
  id.label = std::string(from.name) + "->" + std::string(to.name) + " " + id.profile + (o.empty() ? "" : " " + o);
  // §11 always; the clauses of the rules this suite exercises in addition.
  id.clause = "§11";
  id.clause += sr_ ? " §5" : " §4";
  if (to.has_nan() || to.has_inf() || to.specials == Specials::finite) id.clause += " §6";
  if (to.is_integer()) id.clause += " §6.5";
  if (!to.has_zero || !to.is_signed) id.clause += " §7";
  if (p.daz || p.ftz) id.clause += " §8";
  if (from.is_p3109() || to.is_p3109()) id.clause += " §2.5";  // the family's encoding and rules
  set_identity(std::move(id));

  schema_.case_major = false;
  schema_.add(kit::codes("x", Role::in, from, 1, 1, Place::whole));
  if (sr_) schema_.add(kit::sr_random(p.sr_bits, 1, 1, Place::whole));  // §33.4
  Column y = kit::codes("y", Role::out, to, 1, 1, Place::whole);
  y.any_nan = true;
  schema_.add(y);
  Column fl;
  fl.name = "flags";
  fl.role = Role::opt;
  fl.cap = NUMREF_CAP_FLAGS;
  fl.digits = 2;
  fl.limit = 0xFF;
  fl.mask = kFlagMask;
  fl.decode = flags_decoded;
  schema_.add(fl);
}

std::string CastParams::overrides() const { return overrides_of(*from_, *to_, profile(), policy_); }

std::shared_ptr<const CastParams> make(const Format& from, const Format& to, std::string_view profile,
                                       const Policy& p) {
  (void)kit::profile_by_name(profile);
  const std::string err = validate(p, to);
  if (!err.empty()) throw std::invalid_argument(err);
  return std::make_shared<const CastParams>(from, to, std::string(profile), p);
}

std::shared_ptr<const CastParams> parse(std::string_view text) {
  const auto f = split_ws(text);
  if (f.size() < 3)
    throw std::invalid_argument("cast parameters need '<from> <to> <profile> [policy]', got '" + std::string(text) +
                                "'");
  const auto from = find_format(f[0]);
  if (!from) throw std::invalid_argument("unknown format '" + std::string(f[0]) + "'");
  const auto to = find_format(f[1]);
  if (!to) throw std::invalid_argument("unknown format '" + std::string(f[1]) + "'");
  const Profile& prof = kit::profile_by_name(f[2]);
  Policy p = prof.for_cast(format(*from), format(*to));
  std::string settings;
  for (std::size_t i = 3; i < f.size(); ++i) {
    if (!settings.empty()) settings += ' ';
    settings += f[i];
  }
  if (auto err = apply_policy_settings(p, settings)) throw std::invalid_argument(*err);
  return make(format(*from), format(*to), prof.name, p);
}

// ---- reference ----------------------------------------------------------------------

void CastParams::expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const {
  const std::uint32_t* x = in;
  const std::uint32_t* r = sr_ ? in + n : nullptr;
  std::uint32_t* y = out;
  std::uint32_t* fl = out + n;
  for (std::size_t i = 0; i < n; ++i) {
    const Result res = conv_(x[i], r ? r[i] : 0u);
    y[i] = res.bits;
    fl[i] = res.flags;
  }
}

std::string CastParams::classify(std::uint32_t x, std::uint32_t r, Result exp, Result got) const {
  const Format& from = *from_;
  const Format& to = *to_;
  if (got.bits & ~to.mask()) return "code/width";  // bits above the format's width (§2.4)
  if (got.bits == exp.bits) return "flags";
  const Decoded dx = decode(x, from);
  const Decoded de = decode(exp.bits, to);
  const Decoded dg = decode(got.bits, to);
  if (de.cls == Class::nan && dg.cls == Class::nan) return de.sign != dg.sign ? "nan/sign" : "nan/payload";
  if (dx.cls == Class::nan) return "nan/operand";
  if (dx.cls == Class::inf) {
    const std::uint32_t mx = to.max_finite;
    const bool sat = (exp.bits & to.mag_mask()) == mx || (got.bits & to.mag_mask()) == mx;
    return sat ? "inf/saturation" : "inf";
  }
  const bool x_zero = dx.cls == Class::zero || (dx.cls == Class::subnormal && policy_.daz);
  if (x_zero) {
    if (de.cls == Class::zero && dg.cls == Class::zero) return "zero/sign";
    return dx.cls == Class::zero ? "zero" : "subnormal/daz";
  }
  if (dx.sign && !to.is_signed) return "negative";
  // Double rounding: the result equals a conversion through an intermediate format of
  // precision strictly between the source's and the target's that holds every value of the
  // target (its quantum no coarser, its largest finite value no smaller) (§11, §34.4). A
  // narrower-range format is no intermediate: 464 -> f8e4m3fn through a format whose top is
  // below 448 would overflow first, and a NaN result would be misnamed double rounding.
  if (!sr()) {
    const Exact to_max = kit::exact_of(decode(to.max_finite, to));
    for (const Format& mid : kFormats) {
      if (&mid == &from || &mid == &to || mid.is_integer()) continue;
      if (!(mid.precision() < from.precision() && mid.precision() > to.precision())) continue;
      if (mid.qmin() > to.qmin() || (to.is_signed && !mid.is_signed)) continue;
      if (kit::cmp_magnitude(kit::exact_of(decode(mid.max_finite, mid)), to_max) < 0) continue;
      Policy pm = policy_;
      pm.round = Round::rne;
      pm.e8m0_round = E8m0Round::follow;
      const Result m = convert(x, from, mid, pm);
      const Result via = convert(m.bits, mid, to, policy_);
      if (via.bits == got.bits) return "double-rounding/via-" + std::string(mid.name);
    }
  }
  // A tie: x is exactly the midpoint of its two neighbours in the target (checked before
  // overflow: 464 -> f8e4m3fn is the tie between 448 and the first value past the top).
  const Round mode = effective_round(to, policy_);
  if ((mode == Round::rne || mode == Round::rna) && kit::is_tie(kit::exact_of(dx), to, policy_)) return "tie";
  // Overflow region: |x| beyond the largest finite value, or Inf/NaN on either side.
  const Decoded dmax = decode(to.max_finite, to);
  const bool beyond = !to.is_integer() && kit::cmp_magnitude(kit::exact_of(dx), kit::exact_of(dmax)) > 0;
  const auto special = [](Class c) { return c == Class::nan || c == Class::inf; };
  if (beyond || special(de.cls) || special(dg.cls)) return "overflow/saturation";
  if (to.is_integer()) {
    // §6.5: a result at either end of the integer range (|v| >= the largest positive).
    const bool at_end = (exp.flags & kInvalid) || de.sig >= to.max_finite || dg.sig >= to.max_finite;
    if (at_end) return "overflow/saturation";
  }
  if (sr()) return "sr";
  // Subnormal operand or a result below the target's smallest normal.
  if (!to.is_integer()) {
    const Decoded dminn = decode(static_cast<std::uint32_t>(1u) << to.man_bits, to);
    const Exact minnormal = to.has_subnormals ? kit::exact_of(dminn) : Exact{false, 1, to.emin(), false};
    if (dx.cls == Class::subnormal || kit::cmp_magnitude(kit::exact_of(dx), minnormal) < 0 ||
        de.cls == Class::subnormal || dg.cls == Class::subnormal)
      return "subnormal";
  }
  (void)r;
  return "rounding";
}

std::string CastParams::classify(const CaseDiff& d) const {
  auto result = [](CaseView v) {  // output words: y, flags
    return Result{v[0], static_cast<std::uint8_t>(v[1] == kNotReported ? 0 : v[1])};
  };
  return classify(d.in[0], sr_ ? d.in[1] : 0u, result(d.exp), result(d.got));
}

// ---- C ABI (§32.4) -------------------------------------------------------------------------

bool CastParams::plugin_supported(const numref_backend& b) const {
  if (!NUMREF_HAS_ENTRY(b, cast) || !NUMREF_HAS_ENTRY(b, cast_supported)) return false;
  return b.cast_supported(b.ctx, c_format(*from_), c_format(*to_), &cpol_) == 1;
}

bool CastParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                             bool optional, std::string& error) const {
  if (!NUMREF_HAS_ENTRY(b, cast)) {
    error = "the backend has no cast entry point";
    return false;
  }
  // §34.6 the backend writes into guarded buffers, never into the case words: an overrun of
  // `out` would land in the flags words, which the runner then overwrites
  kit::Guarded<std::uint32_t> res("out", n);
  kit::Guarded<std::uint8_t> fl("flags", optional ? n : 0);
  const std::int64_t got = b.cast(b.ctx, c_format(*from_), c_format(*to_), &cpol_, n, in, sr_ ? in + n : nullptr,
                                  res.data(), optional ? fl.data() : nullptr);
  if (!res.check("cast", error) || !fl.check("cast", error)) return false;
  if (!kit::check_call(b, "cast", got, n, "", error)) return false;
  std::copy(res.data(), res.data() + n, out);
  std::uint32_t* of = out + n;
  for (std::size_t i = 0; i < n; ++i) of[i] = optional ? fl[i] : kNotReported;
  return true;
}

// §32.2 the knob values and the profile this suite passes (cast is 1.0's family)
std::uint32_t CastParams::abi_minor() const {
  return std::max({family().abi_minor(), conform::abi_minor(policy_), abi_minor_of_profile(cpol_.profile)});
}

// ---- pipe protocol (§33.3) ---------------------------------------------------------------------

std::string CastParams::pipe_params() const {
  const std::int32_t prof = cpol_.profile;
  std::string pname = "none";
  if (prof != NUMREF_PROFILE_NONE) pname = std::string(numref::profile(static_cast<ProfileId>(prof)).name);
  return std::string(from_->name) + " " + std::string(to_->name) + " " + pname + " " + policy_text_;
}

// ---- variants (§34.3) --------------------------------------------------------------------

bool equivalent(const Policy& a, const Policy& b, const Format& from, const Format& to) {
  // Only knobs that can change a result or a flag of from -> to are compared (§6–§9).
  const Round ra = effective_round(to, a), rb = effective_round(to, b);
  if (ra != rb) return false;
  if (ra == Round::sr && (a.sr_bits != b.sr_bits || a.sr_variant != b.sr_variant)) return false;
  // overflow: the result of a finite overflow where the target has Inf/NaN (§6.1), and the
  // flags of an infinite operand into a format without (§6.2 rules 3 and 6).
  const bool has_special_out = !to.is_integer() && to.specials != Specials::finite;
  const bool inf_in = from.has_inf() && !to.is_integer();
  if ((has_special_out || inf_in) && a.overflow != b.overflow) return false;
  if (inf_in && (a.overflow == Overflow::saturate || b.overflow == Overflow::saturate) && a.inf_sat != b.inf_sat)
    return false;
  const bool nan_in = from.has_nan();
  if (nan_in && to.has_nan() && a.nan != b.nan) return false;
  if (nan_in && !to.has_nan() && a.nan_to_finite != b.nan_to_finite) return false;
  if (!to.has_zero && a.zero_to_nozero != b.zero_to_nozero) return false;
  if (!to.has_zero && to.man_bits == 0 && !to.is_integer() && a.e8m0_low != b.e8m0_low) return false;  // §7.4
  if (!to.is_signed && from.is_signed && a.negative != b.negative) {
    // §7.3 nan and inf_abs differ only for a -Inf operand
    const bool nan_like = a.negative != Negative::abs && b.negative != Negative::abs;
    if (!nan_like || from.has_inf()) return false;
  }
  // §6.7 the NaN standing for Inf in a format with NaN but no Inf (one NaN: the same either way);
  // under inf_nan=nan it is nan='s, so nan matters there even without NaN operands.
  const bool inf_slot = !to.is_integer() && to.has_nan() && !to.has_inf() && !to.has_single_nan();
  if (inf_slot && a.inf_nan != b.inf_nan) return false;
  if (inf_slot && a.inf_nan == InfNan::nan && a.nan != b.nan) return false;
  if (from.has_subnormals && !from.is_integer() && a.daz != b.daz) return false;
  if (to.has_subnormals && to.has_zero && !to.is_integer() && a.ftz != b.ftz) return false;
  if (!to.is_integer() && a.tininess != b.tininess) return false;
  if (to.is_integer() && a.int_range != b.int_range) return false;
  return true;
}

bool generated_pair(const Format& from, const Format& to, const Profile& profile, Level level) {
  if (!from.is_p3109() && !to.is_p3109()) return true;
  if (profile.id != ProfileId::ocp && profile.id != ProfileId::ieee) return false;
  // levels 0 and 1: an extra member pairs with f32 only (both directions)
  const bool narrow = (level == Level::l0 || level == Level::l1) && (from.is_p3109_extra() || to.is_p3109_extra());
  if (from.is_p3109() && to.is_p3109()) return from.bits == to.bits && !narrow;
  const Format& other = from.is_p3109() ? to : from;
  if (narrow) return other.id == FormatId::f32;
  return !other.is_integer() && other.bits >= 16;
}

Level pair_level(const Format& from, const Format& to, Level level) {
  return level == Level::l1 && (from.is_p3109_extra() || to.is_p3109_extra()) ? Level::l0 : level;
}

std::vector<Variant> variants(Level level, const Policy& base, const Format& from, const Format& to) {
  std::vector<Variant> out;
  auto add = [&](std::string name, Policy p) {
    if (!validate(p, to).empty()) return;
    for (const auto& v : out)
      if (equivalent(v.policy, p, from, to)) return;
    out.push_back({std::move(name), p});
  };
  add("", base);
  for (Round m : {Round::rtz, Round::rup, Round::rdn, Round::rna}) {
    Policy p = base;
    p.round = m;
    p.e8m0_round = E8m0Round::follow;
    add("round=" + std::string(to_string(m)), p);
  }
  auto sr = [&](int k, SrVariant v) {
    Policy p = base;
    p.round = Round::sr;
    p.sr_bits = k;
    p.sr_variant = v;
    p.e8m0_round = E8m0Round::follow;
    if (v == SrVariant::add && to.is_integer()) return;
    add("round=sr sr_bits=" + std::to_string(k) + " sr_variant=" + std::string(to_string(v)), p);
  };
  // exhaustive: 2^32 sweeps of 32-bit sources under the profile's own policy only; every
  // code of smaller sources under the level-1 variants.
  if (level == Level::exhaustive && from.bits > 16) {
    out.resize(1);
    return out;
  }
  sr(8, SrVariant::fraction);
  sr(8, SrVariant::add);
  if (level == Level::l0) return out;  // level 1, 2 and exhaustive (small sources) go on
  for (int k : {1, 3, 16, 32}) {
    sr(k, SrVariant::fraction);
    sr(k, SrVariant::add);
  }
  auto knob = [&](std::string_view settings) {
    Policy p = base;
    if (apply_policy_settings(p, settings)) return;  // cannot fail for the literals below
    add(std::string(settings), p);
  };
  knob(base.overflow == Overflow::saturate ? "overflow=nonsat" : "overflow=saturate");
  knob("overflow=saturate inf_sat=keep");
  knob("overflow=saturate inf_sat=max");
  // every value of §6.3 nan= and §6.4 nan_to_finite=, read from the knob table (payload first, as
  // before the values were read; add() drops the repeat)
  knob("nan=payload");
  for (std::string_view w : knob_words::nan) knob("nan=" + std::string(w));
  for (std::string_view w : knob_words::nan_to_finite) knob("nan_to_finite=" + std::string(w));
  knob(base.e8m0_low == E8m0Low::linear ? "e8m0_low=grid" : "e8m0_low=linear");
  knob("e8m0_low=nan");  // §7.4 (gfloat)
  for (auto e : {"e8m0_round=floor", "e8m0_round=ceil", "e8m0_round=even", "e8m0_round=tiesup"}) knob(e);
  knob(base.zero_to_nozero == ZeroToNoZero::nan ? "zero_to_nozero=min" : "zero_to_nozero=nan");
  knob(base.negative == Negative::nan ? "negative=abs" : "negative=nan");
  knob("overflow=saturate inf_sat=max negative=inf_abs");                            // §7.3: -Inf -> FE (gfloat_sat)
  knob(base.inf_nan == InfNan::slot ? "inf_nan=nan nan=all_ones" : "inf_nan=slot");  // §6.7 (gfloat)
  knob("inf_nan=nan nan=canonical");
  knob("inf_nan=nan");  // under nan=ones (cuda_*): -overflow / -Inf into f8e4m3fn 7F, not the slot's FF
  knob("daz=1");
  knob("ftz=1");
  knob(base.tininess == Tininess::after ? "tininess=before" : "tininess=after");
  knob(base.tininess == Tininess::after ? "ftz=1 tininess=before" : "ftz=1 tininess=after");
  knob("daz=1 ftz=1");
  knob(base.int_range == IntRange::full ? "int_range=symmetric" : "int_range=full");
  if (level == Level::l2) {
    for (Round m : {Round::rtz, Round::rup, Round::rdn, Round::rna}) {
      const std::string r = "round=" + std::string(to_string(m)) + " e8m0_round=follow";
      knob(r + (base.overflow == Overflow::saturate ? " overflow=nonsat" : " overflow=saturate"));
      knob(r + " ftz=1");
      knob(r + " daz=1");
      knob(r + " ftz=1 tininess=before");
    }
    for (int k : {2, 8, 24}) {
      Policy p = base;
      p.round = Round::sr;
      p.sr_bits = k;
      p.e8m0_round = E8m0Round::follow;
      p.overflow = base.overflow == Overflow::saturate ? Overflow::nonsat : Overflow::saturate;
      add("round=sr sr_bits=" + std::to_string(k) + " overflow=" + std::string(to_string(p.overflow)), p);
      p.overflow = base.overflow;
      p.ftz = true;
      add("round=sr sr_bits=" + std::to_string(k) + " ftz=1", p);
    }
  }
  return out;
}

}  // namespace numref::conform::cast
