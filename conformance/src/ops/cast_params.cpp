// numref conformance — cast suites: parameters, reference results, comparison and
// classification of mismatches, C ABI and pipe marshalling.     spec §11, §31, §32, §33.4
#include <algorithm>
#include <stdexcept>

#include "cast.hpp"
#include "numref/conform/abi.hpp"
#include "numref/conform/util.hpp"
#include "numref/value.hpp"

namespace numref::conform::cast {

const std::vector<std::string>& checked_profiles() {
  // §10.1: ieee is a synonym of ocp, so a run checks the four distinct profiles.
  static const std::vector<std::string> v = {"ocp", "cuda_satfinite", "cuda_nosat", "ml_dtypes"};
  return v;
}

namespace {

const Profile& profile_by_name(std::string_view name) {
  const auto id = find_profile(name);
  if (!id) throw std::invalid_argument("unknown profile '" + std::string(name) + "'");
  return numref::profile(*id);
}

// The knobs of describe() as (key, value) pairs, in order.
std::vector<std::pair<std::string, std::string>> knobs(const Policy& p) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string d = describe(p);
  for (auto tok : split_ws(d)) {
    const auto eq = tok.find('=');
    out.emplace_back(std::string(tok.substr(0, eq)), std::string(tok.substr(eq + 1)));
  }
  return out;
}

}  // namespace

CastParams::CastParams(const Format& from, const Format& to, std::string profile, const Policy& p)
    : from_(&from), to_(&to), profile_(std::move(profile)), policy_(p), conv_(from, to, p) {
  policy_text_.clear();
  cpol_ = to_c_policy(policy_, to, policy_text_);
  text_ = std::string(from.name) + " " + std::string(to.name) + " " + profile_ + " " + policy_text_;
}

const Family& CastParams::family() const { return cast::family(); }

std::string CastParams::overrides() const {
  const Policy& base = profile_by_name(profile_).for_target(*to_);
  const auto a = knobs(base), b = knobs(policy_);
  std::string s;
  for (const auto& kv : b) {
    const auto it = std::find_if(a.begin(), a.end(), [&](const auto& x) { return x.first == kv.first; });
    if (it == a.end() || it->second != kv.second) {
      if (!s.empty()) s += ' ';
      s += kv.first + "=" + kv.second;
    }
  }
  return s;
}

std::string CastParams::label() const {
  std::string s = std::string(from_->name) + "->" + std::string(to_->name) + " " + profile_;
  const std::string o = overrides();
  if (!o.empty()) s += " " + o;
  return s;
}

std::string CastParams::clause() const {
  // §11 always; the clauses of the rules this suite exercises in addition.
  std::string c = "§11";
  const Round mode = effective_round(*to_, policy_);
  if (mode == Round::sr) c += " §5";
  else c += " §4";
  if (to_->has_nan() || to_->has_inf() || to_->specials == Specials::finite) c += " §6";
  if (to_->is_integer()) c += " §6.5";
  if (!to_->has_zero || !to_->is_signed) c += " §7";
  if (policy_.daz || policy_.ftz) c += " §8";
  return c;
}

std::shared_ptr<const CastParams> make(const Format& from, const Format& to, std::string_view profile,
                                       const Policy& p) {
  (void)profile_by_name(profile);
  const std::string err = validate(p, to);
  if (!err.empty()) throw std::invalid_argument(err);
  return std::make_shared<const CastParams>(from, to, std::string(profile), p);
}

std::shared_ptr<const CastParams> parse(std::string_view text) {
  const auto f = split_ws(text);
  if (f.size() < 3) throw std::invalid_argument("cast parameters need '<from> <to> <profile> [policy]', got '" +
                                                std::string(text) + "'");
  const auto from = find_format(f[0]);
  if (!from) throw std::invalid_argument("unknown format '" + std::string(f[0]) + "'");
  const auto to = find_format(f[1]);
  if (!to) throw std::invalid_argument("unknown format '" + std::string(f[1]) + "'");
  const Profile& prof = profile_by_name(f[2]);
  Policy p = prof.for_target(format(*to));
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
  const std::uint32_t* r = in + n;
  std::uint32_t* y = out;
  std::uint32_t* fl = out + n;
  for (std::size_t i = 0; i < n; ++i) {
    const Result res = conv_(x[i], sr() ? r[i] : 0u);
    y[i] = res.bits;
    fl[i] = res.flags;
  }
}

// ---- exact helpers for classification -----------------------------------------------

namespace {

using u128 = unsigned __int128;

struct Dy {  // |v| = sig * 2^exp (sig == 0: zero)
  std::uint64_t sig = 0;
  int exp = 0;
};

int bitlen(std::uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

Dy dyadic(const Decoded& d) { return {d.sig, d.exp}; }

// Compares |a| with |b|: -1, 0, 1.
int cmp(Dy a, Dy b) {
  if (a.sig == 0 || b.sig == 0) return (a.sig != 0) - (b.sig != 0);
  const int ta = a.exp + bitlen(a.sig), tb = b.exp + bitlen(b.sig);
  if (ta != tb) return ta < tb ? -1 : 1;
  // same top bit position: the exponents differ by less than 64
  u128 x = a.sig, y = b.sig;
  if (a.exp > b.exp) x <<= (a.exp - b.exp);
  else y <<= (b.exp - a.exp);
  return x < y ? -1 : x > y ? 1 : 0;
}

// 2|x| == |a| + |b| exactly (x a midpoint of a and b). Exponent gaps beyond 100 bits
// cannot hold a midpoint of two neighbours of a <= 32-bit format.
bool is_midpoint(Dy x, Dy a, Dy b) {
  int lo = x.exp + 1;
  if (a.sig) lo = std::min(lo, a.exp);
  if (b.sig) lo = std::min(lo, b.exp);
  auto scaled = [&](Dy v, int extra) -> std::optional<u128> {
    if (!v.sig) return u128{0};
    const int sh = v.exp + extra - lo;
    if (sh < 0 || sh + bitlen(v.sig) > 126) return std::nullopt;
    return u128{v.sig} << sh;
  };
  const auto x2 = scaled(x, 1), as = scaled(a, 0), bs = scaled(b, 0);
  if (!x2 || !as || !bs) return false;
  return *x2 == *as + *bs;
}

bool is_nan(std::uint32_t code, const Format& f) { return decode(code, f).cls == Class::nan; }

}  // namespace

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
  // precision strictly between the source's and the target's (§11).
  if (!sr()) {
    for (const Format& mid : kFormats) {
      if (&mid == &from || &mid == &to || mid.is_integer() || !mid.has_inf()) continue;
      if (!(mid.precision() < from.precision() && mid.precision() > to.precision())) continue;
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
  if (mode == Round::rne || mode == Round::rna) {
    Policy pt = policy_;
    pt.round = Round::rtz;
    pt.e8m0_round = E8m0Round::floor;
    pt.overflow = Overflow::saturate;
    pt.ftz = false;
    const Result lo = convert(x, from, to, pt);
    const Decoded dl = decode(lo.bits, to);
    Dy a = dyadic(dl), b;
    if (to.is_integer()) {
      b = {a.sig + 1, 0};
    } else if ((lo.bits & to.mag_mask()) == to.max_finite) {
      b = {dl.sig + 1, dl.exp};
    } else {
      const Decoded dn = decode((lo.bits & to.mag_mask()) + 1, to);
      b = dyadic(dn);
    }
    if (dl.cls != Class::nan && is_midpoint(dyadic(dx), a, b)) return "tie";
  }
  // Overflow region: |x| beyond the largest finite value, or Inf/NaN on either side.
  const Decoded dmax = decode(to.max_finite, to);
  const bool beyond = !to.is_integer() && cmp(dyadic(dx), dyadic(dmax)) > 0;
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
    const Dy minnormal = to.has_subnormals ? dyadic(dminn) : Dy{1, to.emin()};
    if (dx.cls == Class::subnormal || cmp(dyadic(dx), minnormal) < 0 || de.cls == Class::subnormal ||
        dg.cls == Class::subnormal)
      return "subnormal";
  }
  (void)r;
  return "rounding";
}

Finding CastParams::compare(CaseView in, CaseView e, CaseView g, const CompareOptions& o) const {
  const std::uint32_t ey = e[0], gy = g[0];
  const bool flags = o.flags && g[1] != kNoFlags && e[1] != kNoFlags;
  if (ey == gy && (!flags || e[1] == g[1])) return {Outcome::pass, {}};
  if (ey != gy && o.any_nan && (gy & ~to_->mask()) == 0 && is_nan(ey, *to_) && is_nan(gy, *to_))
    return {Outcome::pass_any_nan, "any-nan"};
  const Result exp{ey, static_cast<std::uint8_t>(e[1])};
  const Result got{gy, static_cast<std::uint8_t>(g[1] == kNoFlags ? 0 : g[1])};
  return {Outcome::fail, classify(in[0], in[1], exp, got)};
}

std::string CastParams::render_inputs(CaseView in) const {
  std::string s = "x=" + hex(in[0], code_digits(*from_)) + " (" + render_value(in[0], *from_) + ")";
  if (sr()) s += " r=" + hex(in[1], (policy_.sr_bits + 3) / 4);
  return s;
}

std::string CastParams::render_output(CaseView out, bool with_flags) const {
  std::string s;
  if (out[0] & ~to_->mask()) {
    s = hex(out[0], 8) + " (not a " + std::string(to_->name) + " code)";
  } else {
    s = hex(out[0], code_digits(*to_)) + " (" + render_value(out[0], *to_) + ")";
  }
  if (with_flags && out[1] != kNoFlags) s += " " + flags_text(out[1]);
  return s;
}

// ---- C ABI ------------------------------------------------------------------------------

bool CastParams::plugin_supported(const numref_backend& b) const {
  if (b.struct_size < offsetof(numref_backend, cast) + sizeof(b.cast) || !b.cast || !b.cast_supported) return false;
  return b.cast_supported(b.ctx, c_format(*from_), c_format(*to_), &cpol_) == 1;
}

bool CastParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                             bool want_flags, std::string& error) const {
  if (b.struct_size < offsetof(numref_backend, cast) + sizeof(b.cast) || !b.cast) {
    error = "the backend has no cast entry point";
    return false;
  }
  std::vector<std::uint8_t> fl(want_flags ? n : 0);
  const std::int64_t got = b.cast(b.ctx, c_format(*from_), c_format(*to_), &cpol_, n, in, sr() ? in + n : nullptr,
                                  out, want_flags ? fl.data() : nullptr);
  if (got < 0) {
    const char* m = b.last_error ? b.last_error(b.ctx) : nullptr;
    error = "cast returned " + std::to_string(got) + (m ? std::string(": ") + m : std::string());
    return false;
  }
  if (static_cast<std::uint64_t>(got) != n) {
    error = "cast returned " + std::to_string(got) + " results for a batch of " + std::to_string(n);
    return false;
  }
  std::uint32_t* of = out + n;
  for (std::size_t i = 0; i < n; ++i) of[i] = want_flags ? fl[i] : kNoFlags;
  return true;
}

// ---- pipe protocol (§32) -----------------------------------------------------------------

std::string CastParams::pipe_params() const {
  const std::int32_t prof = cpol_.profile;
  std::string pname = "none";
  if (prof != NUMREF_PROFILE_NONE) pname = std::string(numref::profile(static_cast<ProfileId>(prof)).name);
  return std::string(from_->name) + " " + std::string(to_->name) + " " + pname + " " + policy_text_;
}

void CastParams::pipe_case(CaseView in, std::string& line) const {
  line.clear();
  append_hex(line, in[0], code_digits(*from_));
  if (sr()) {
    line += ' ';
    append_hex(line, in[1], 8);
  }
}

std::string CastParams::pipe_result(std::string_view line, bool with_flags, std::uint32_t* out, std::size_t n,
                                    std::size_t i) const {
  const auto f = split_ws(line);
  const std::size_t want = with_flags ? 2 : 1;
  if (f.size() != want)
    return "expected " + std::to_string(want) + (want == 1 ? " hex field (result)" : " hex fields (result flags)") +
           ", got '" + std::string(line) + "'";
  const auto y = parse_hex(f[0]);
  if (!y || *y > 0xFFFFFFFFull) return "result '" + std::string(f[0]) + "' is not a hex code";
  out[i] = static_cast<std::uint32_t>(*y);
  if (with_flags) {
    const auto fl = parse_hex(f[1]);
    if (!fl || (*fl & ~static_cast<std::uint64_t>(kFlagMask)))
      return "flags '" + std::string(f[1]) + "' are not a combination of 01 02 04 10";
    out[n + i] = static_cast<std::uint32_t>(*fl);
  } else {
    out[n + i] = kNoFlags;
  }
  return {};
}

// ---- variants (§33.3) --------------------------------------------------------------------

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
  if (!to.is_signed && from.is_signed && a.negative != b.negative) return false;
  if (from.has_subnormals && !from.is_integer() && a.daz != b.daz) return false;
  if (to.has_subnormals && to.has_zero && !to.is_integer() && a.ftz != b.ftz) return false;
  if (!to.is_integer() && a.tininess != b.tininess) return false;
  if (to.is_integer() && a.int_range != b.int_range) return false;
  return true;
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
  for (auto n : {"nan=payload", "nan=sign", "nan=canonical", "nan=ones"}) knob(n);
  for (auto n : {"nan_to_finite=zero", "nan_to_finite=negzero", "nan_to_finite=max"}) knob(n);
  for (auto e : {"e8m0_round=floor", "e8m0_round=ceil", "e8m0_round=even", "e8m0_round=tiesup"}) knob(e);
  knob(base.zero_to_nozero == ZeroToNoZero::nan ? "zero_to_nozero=min" : "zero_to_nozero=nan");
  knob(base.negative == Negative::nan ? "negative=abs" : "negative=nan");
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
