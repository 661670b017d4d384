// numref conformance — cast golden vectors and the divergence set.      spec §31.4, §B
#include <algorithm>
#include <map>
#include <set>

#include "cast.hpp"
#include "numref/conform/vectors.hpp"
#include "numref/value.hpp"

namespace numref::conform::cast {

namespace {

constexpr std::uint64_t kVectorSeed = 1;  // seed of the few random cases in edge files
constexpr int kVectorRandom = 64;
constexpr std::size_t kSrCodes = 160;  // source codes per SR vector file (16/32-bit sources)

std::vector<const Format*> formats_where(bool small) {
  std::vector<const Format*> v;
  for (const auto& f : kFormats)
    if ((f.bits <= 8) == small) v.push_back(&f);
  return v;
}

// One regular cast vector file: every case (x[, r]) of `xs` under params p.
std::string cast_file(const std::shared_ptr<const CastParams>& p,
                      const std::vector<std::pair<std::uint32_t, std::uint32_t>>& xs, const std::string& coverage,
                      std::uint64_t seed) {
  VectorFileCases f;
  f.coverage = coverage;
  f.seed = seed;
  for (const auto& [x, r] : xs)
    f.cases.emplace_back(p, p->sr() ? std::vector<std::uint32_t>{x, r} : std::vector<std::uint32_t>{x});
  return family().vector_file(f);
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> all_codes(const Format& f) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> v;
  for (std::uint32_t c = 0; c <= f.mask(); ++c) v.emplace_back(c, 0u);
  return v;
}

// Compact edges plus kVectorRandom seeded random codes (§34.3's random_code).
std::vector<std::pair<std::uint32_t, std::uint32_t>> edge_cases(const CastParams& p) {
  std::vector<std::uint32_t> e = edge_codes(p.from(), p.to(), true);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> v;
  for (auto x : e) v.emplace_back(x, 0u);
  const std::uint64_t key = fnv1a64(std::string(p.from().name) + "->" + std::string(p.to().name));
  for (int j = 0; j < kVectorRandom; ++j) {
    CaseRng rng(kVectorSeed, key, static_cast<std::uint64_t>(j));
    v.emplace_back(random_code(p.from(), p.to(), e, rng), 0u);
  }
  return v;
}

std::string path_token(std::string s) {
  for (char& c : s) {
    if (c == '=')
      c = '-';
    else if (c == ' ')
      c = '_';
  }
  return s;
}

// ---- the divergence set (§B) -------------------------------------------------------------

struct Divergence {
  FormatId from, to;
  std::uint32_t x;
  const char* via;  // intermediate format for a double-rounding case, or nullptr
  const char* note;
};

// Each entry is a case on which well-known implementations disagree; the file gives the
// answer of every profile (computed by the reference) and, for double rounding, the
// answer obtained through the intermediate type. The notes state the fact; the values
// are the generator's.
const std::vector<Divergence>& divergences() {
  using F = FormatId;
  static const std::vector<Divergence> d = {
      // E4M3 overflow around 448 / 464 / 480 (§6.1)
      {F::f32, F::f8e4m3fn, 0x43E00000, nullptr, "448: the largest finite E4M3"},
      {F::f32, F::f8e4m3fn, 0x43E80000, nullptr, "464: tie between 448 and 480 (not representable), RNE keeps 448"},
      {F::f32, F::f8e4m3fn, 0x43E80001, nullptr, "464.00003: just past the tie: overflow (NaN unless saturating)"},
      {F::f32, F::f8e4m3fn, 0x43E88000, nullptr, "465: overflow: 448 saturating, NaN 0x7f otherwise"},
      {F::f32, F::f8e4m3fn, 0x43F00000, nullptr, "480: overflow"},
      {F::f32, F::f8e4m3fn, 0xC3E88000, nullptr, "-465: overflow keeps the sign: 0xfe saturating, NaN 0xff otherwise"},
      {F::f32, F::f8e4m3fn, 0x7F7FFFFF, nullptr, "largest f32: overflow"},
      {F::f32, F::f8e4m3fn, 0x7F800000, nullptr, "+Inf: 448 under __NV_SATFINITE, NaN elsewhere (ml_dtypes keeps NaN)"},
      {F::f32, F::f8e4m3fn, 0xFF800000, nullptr, "-Inf"},
      {F::f32, F::f8e4m3fn, 0x7FC00000, nullptr, "quiet NaN"},
      {F::f32, F::f8e4m3fn, 0xFFC00000, nullptr,
       "negative NaN: CUDA drops the sign (0x7f), OCP / ml_dtypes keep it (0xff)"},
      {F::f32, F::f8e4m3fn, 0x7F800001, nullptr, "signaling NaN: invalid"},
      {F::f32, F::f8e4m3fn, 0x80000000, nullptr, "-0 stays -0"},
      {F::f32, F::f8e4m3fn, 0x3A800000, nullptr, "2^-10: half the smallest subnormal, tie to +0"},
      {F::f32, F::f8e4m3fn, 0x3A800001, nullptr, "just above 2^-10: the smallest subnormal"},
      // bf16 and f16 sources
      {F::bf16, F::f8e4m3fn, 0x43E8, nullptr, "bf16 464: tie, 448"},
      {F::bf16, F::f8e4m3fn, 0x43E9, nullptr, "bf16 466: overflow"},
      {F::bf16, F::f8e4m3fn, 0xFFC1, nullptr, "bf16 negative NaN"},
      {F::f16, F::f8e4m3fn, 0x5F40, nullptr, "f16 464: tie, 448"},
      {F::f16, F::f8e4m3fn, 0x5F41, nullptr, "f16 464.25: overflow"},
      {F::f16, F::f8e4m3fn, 0x7C00, nullptr, "f16 +Inf"},
      // E5M2 (§6.1): Inf exists
      {F::f32, F::f8e5m2, 0x47600000, nullptr, "57344: the largest finite E5M2"},
      {F::f32, F::f8e5m2, 0x476FFFFF, nullptr, "just below the tie 61440: 57344"},
      {F::f32, F::f8e5m2, 0x47700000, nullptr, "61440: tie between 57344 and 65536 rounds to even = 65536: overflow"},
      {F::f32, F::f8e5m2, 0x7F800000, nullptr, "+Inf: Inf, or 57344 saturating"},
      {F::f32, F::f8e5m2, 0x7FC00000, nullptr, "quiet NaN: payload truncated (0x7e), CUDA 0x7f"},
      {F::f32, F::f8e5m2, 0xFFC00000, nullptr, "negative NaN"},
      // wide targets: NaN sign and payload (§6.3)
      {F::f32, F::bf16, 0xFFC00000, nullptr, "negative NaN to bf16: CUDA 0x7fff, others keep the sign"},
      {F::f32, F::bf16, 0x7F800001, nullptr, "signaling NaN to bf16: payload truncated to 0, quieted"},
      {F::f32, F::bf16, 0x7F7FFFFF, nullptr, "largest f32 to bf16: rounds to Inf (IEEE, no saturation)"},
      {F::f32, F::f16, 0x7F800001, nullptr, "signaling NaN to f16"},
      {F::f32, F::f16, 0x477FF000, nullptr, "65520: tie between 65504 and 65536: Inf"},
      {F::bf16, F::f32, 0xFFC1, nullptr, "bf16 NaN with payload to f32: kept, 0x7fffffff, or canonical with sign"},
      {F::f16, F::f32, 0xFE01, nullptr, "f16 negative NaN with payload to f32"},
      {F::f8e4m3fn, F::f16, 0xFF, nullptr, "E4M3 negative NaN to f16"},
      {F::f8e5m2, F::f16, 0xFD, nullptr, "E5M2 negative signaling NaN to f16"},
      // E8M0 (§7)
      {F::f32, F::f8e8m0fnu, 0x3FC00000, nullptr, "1.5: tie between 1 (code 7f) and 2 (80): even code 80; floor 7f"},
      {F::f32, F::f8e8m0fnu, 0x40400000, nullptr, "3: tie between 2 (80) and 4 (81): even 80, ties-up 81"},
      {F::f32, F::f8e8m0fnu, 0x3FE00000, nullptr, "1.75: nearest 2, floor 1"},
      {F::f32, F::f8e8m0fnu, 0x00000000, nullptr, "+0: NaN (no zero), CUDA 0x00 = 2^-127"},
      {F::f32, F::f8e8m0fnu, 0x80000000, nullptr, "-0: a zero, not a negative"},
      {F::f32, F::f8e8m0fnu, 0xBF800000, nullptr, "-1: NaN, CUDA ignores the sign"},
      {F::f32, F::f8e8m0fnu, 0x00400000, nullptr, "f32 subnormal 2^-127: exactly code 00"},
      {F::f32, F::f8e8m0fnu, 0x00200000, nullptr, "f32 subnormal 2^-128: below the range, 00"},
      {F::f32, F::f8e8m0fnu, 0x00600000, nullptr, "1.5 * 2^-127: tie between 00 and 01"},
      {F::f32, F::f8e8m0fnu, 0x7F400000, nullptr, "1.5 * 2^127: tie between fe and 2^128 (overflow)"},
      {F::f32, F::f8e8m0fnu, 0x7F7FFFFF, nullptr, "largest f32: nearest is 2^128 (overflow), floor fe"},
      {F::f32, F::f8e8m0fnu, 0x7F800000, nullptr, "+Inf: fe saturating, NaN otherwise"},
      {F::f32, F::f8e8m0fnu, 0xFFC00000, nullptr, "NaN"},
      {F::bf16, F::f8e8m0fnu, 0x3FC0, nullptr, "bf16 1.5"},
      {F::bf16, F::f8e8m0fnu, 0x0000, nullptr, "bf16 +0"},
      // MX FP6 / FP4: no NaN, no Inf (§6.4, §6.2)
      {F::f32, F::f4e2m1fn, 0x7FC00000, nullptr, "NaN into FP4: +0, CUDA +6 (0x7), ml_dtypes -0 (0x8)"},
      {F::f32, F::f4e2m1fn, 0x7F800000, nullptr, "+Inf into FP4: 6"},
      {F::f32, F::f4e2m1fn, 0x40A00000, nullptr, "5: tie between 4 and 6: even code (4)"},
      {F::f32, F::f6e3m2fn, 0xFFC00000, nullptr, "negative NaN into FP6 E3M2"},
      {F::f32, F::f6e2m3fn, 0x41000000, nullptr, "8 into FP6 E2M3: saturates to 7.5"},
      {F::f32, F::int8, 0x7FC00000, nullptr, "NaN into int8: 0, CUDA-style +max 127"},
      {F::f32, F::int8, 0x42FF0000, nullptr, "127.5: tie rounds to 128: saturates to 127"},
      // double rounding through an intermediate type (§11)
      {F::f32, F::f8e4m3fn, 0x3F97FFF8, "bf16", "1.1875 - 2^-20: direct 1.125; via bf16 the tie 1.1875 -> 1.25"},
      {F::f32, F::f8e4m3fn, 0x3F880008, "bf16", "1.0625 + 2^-20: direct 1.125; via bf16 the tie 1.0625 -> 1"},
      {F::f32, F::f8e4m3fn, 0x3F97FE00, "f16", "1.1875 - 2^-14: direct 1.125; via f16 1.25"},
      {F::f32, F::f8e4m3fn, 0x43E80001, "bf16", "464.00003: direct overflow; via bf16 the tie 464 -> 448"},
      {F::f32, F::f8e5m2, 0x3FAFFE00, "f16", "1.375 - 2^-14: direct 1.25; via f16 the tie 1.375 -> 1.5"},
      {F::f32, F::f8e8m0fnu, 0x3FBFFFF8, "bf16", "1.5 - 2^-20: nearest 1; via bf16 (RNE) the tie 1.5 -> 2"},
  };
  return d;
}

std::string divergence_file() {
  const auto& profs = divergence_profiles();
  VectorWriter w;
  w.field("op", "cast");
  w.field("kind", "divergence");
  std::string pl;
  for (const auto& p : profs) {
    if (!pl.empty()) pl += " ";
    pl += p;
  }
  w.field("profiles", pl);
  for (const auto& p : profs) {
    const Profile& pr = profile(*find_profile(p));
    w.field("policy." + p + ".narrow", describe(pr.narrow));
    w.field("policy." + p + ".wide", describe(pr.wide));
    if (!pr.rules.empty()) w.field("rules." + p, describe_rules(pr));  // §10.2
  }
  w.field("clause", "§B §6 §7 §11");
  w.provenance();
  w.field("seed", "none (no random cases)");
  w.field("coverage", "cases where well-known implementations disagree; one answer per profile");
  w.field("columns", "from to x " + pl + " via");
  w.begin();
  for (const auto& d : divergences()) {
    const Format& from = format(d.from);
    const Format& to = format(d.to);
    std::string line = std::string(from.name) + " " + std::string(to.name) + " " + hex(d.x, code_digits(from));
    std::string summary;
    for (const auto& p : profs) {
      const Profile& pr = profile(*find_profile(p));
      const Result r = convert(d.x, from, to, pr.for_cast(from, to));
      line += ' ';
      append_hex(line, r.bits, code_digits(to));
      line += '/';
      append_hex(line, r.flags, 2);
      summary += ' ';
      summary += p;
      summary += '=';
      summary += render_value(r.bits, to);
    }
    if (d.via) {
      const Format& mid = format(*find_format(d.via));
      const Policy& pw = profile(ProfileId::ocp).for_target(mid);
      const Result m = convert(d.x, from, mid, pw);
      const Result r = convert(m.bits, mid, to, profile(ProfileId::ocp).for_target(to));
      line += ' ';
      line += mid.name;
      line += ':';
      append_hex(line, r.bits, code_digits(to));
      summary += " via-";
      summary += mid.name;
      summary += '=';
      summary += render_value(r.bits, to);
    } else {
      line += " -";
    }
    // The comment: the operand's exact value (unless the note starts with it), the fact,
    // and every answer as a value.
    const std::string xv = render_value(d.x, from);
    const std::string note = d.note;
    line += "  # ";
    if (note.rfind(xv + ":", 0) != 0) line += xv + ": ";
    line += note + ";" + summary;
    w.line(line);
  }
  return w.finish();
}

// ---- readers ------------------------------------------------------------------------------

std::uint32_t hex_field(std::string_view s, int digits, std::uint64_t limit, const char* what) {
  const auto v = parse_hex(s);
  if (!v || static_cast<int>(s.size()) != digits)
    throw VectorError(std::string(what) + " '" + std::string(s) + "' is not " + std::to_string(digits) + " hex digits");
  if (*v > limit) throw VectorError(std::string(what) + " '" + std::string(s) + "' is out of range");
  return static_cast<std::uint32_t>(*v);
}

bool wanted(const std::vector<std::string>& profiles, const std::string& p) {
  return profiles.empty() || std::find(profiles.begin(), profiles.end(), p) != profiles.end();
}

class DivergenceReader final : public VectorFileReader {
 public:
  DivergenceReader(const VectorHeader& h, const std::vector<std::string>& profiles) {
    for (auto p : split_ws(h.get("profiles"))) {
      const auto id = find_profile(p);
      if (!id) throw VectorError(h.path + ": unknown profile '" + std::string(p) + "'");
      const Profile& pr = profile(*id);
      for (const char* side : {"narrow", "wide"}) {
        const std::string key = "policy." + std::string(p) + "." + side;
        const std::string want = describe(std::string_view(side) == "narrow" ? pr.narrow : pr.wide);
        if (h.get(key) != want)
          throw VectorError(h.path + ": " + key + " differs from profile " + std::string(p) +
                            " as this numref defines it; regenerate the vectors");
      }
      if (!pr.rules.empty() && h.get("rules." + std::string(p)) != describe_rules(pr))
        throw VectorError(h.path + ": rules." + std::string(p) + " differs from profile " + std::string(p) +
                          " as this numref defines it; regenerate the vectors");
      profs_.emplace_back(p);
      use_.push_back(wanted(profiles, std::string(p)));
    }
    std::string cols = "from to x";
    for (const auto& p : profs_) cols += " " + p;
    cols += " via";
    if (h.get("columns") != cols)
      throw VectorError(h.path + ": columns '" + h.get("columns") + "', expected '" + cols + "'");
  }
  void read(const std::vector<std::string_view>& f, std::string_view note, std::vector<VectorCase>& out) override {
    if (f.size() != profs_.size() + 4)
      throw VectorError("expected " + std::to_string(profs_.size() + 4) + " fields, got " + std::to_string(f.size()));
    const auto from = find_format(f[0]);
    const auto to = find_format(f[1]);
    if (!from || !to) throw VectorError("unknown format in '" + std::string(f[0]) + " " + std::string(f[1]) + "'");
    const Format& F = format(*from);
    const Format& T = format(*to);
    if (f[0] != F.name || f[1] != T.name) throw VectorError("formats must use canonical names");
    const std::uint32_t x = hex_field(f[2], code_digits(F), F.mask(), "x");
    for (std::size_t i = 0; i < profs_.size(); ++i) {
      const std::string_view a = f[3 + i];
      const auto slash = a.find('/');
      if (slash == std::string_view::npos) throw VectorError("answer '" + std::string(a) + "' is not <code>/<flags>");
      const std::uint32_t y = hex_field(a.substr(0, slash), code_digits(T), T.mask(), "result");
      const std::uint32_t fl = hex_field(a.substr(slash + 1), 2, kFlagMask, "flags");
      if (fl & ~kFlagMask) throw VectorError("flags in '" + std::string(a) + "' are not a combination of 01 02 04 10");
      if (!use_[i]) continue;
      out.push_back({params(F, T, profs_[i]), {x}, {y, fl}, std::string(note)});
    }
    const std::string_view via = f.back();
    if (via != "-") {
      const auto c = via.find(':');
      if (c == std::string_view::npos || !find_format(via.substr(0, c)))
        throw VectorError("via '" + std::string(via) + "' is not '-' or <format>:<code>");
      (void)hex_field(via.substr(c + 1), code_digits(T), T.mask(), "via result");
    }
  }

 private:
  std::shared_ptr<const CastParams> params(const Format& F, const Format& T, const std::string& p) {
    const std::string key = std::string(F.name) + " " + std::string(T.name) + " " + p;
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, make(F, T, p, profile(*find_profile(p)).for_cast(F, T))).first;
    return it->second;
  }
  std::vector<std::string> profs_;
  std::vector<bool> use_;
  std::map<std::string, std::shared_ptr<const CastParams>> cache_;
};

}  // namespace

std::unique_ptr<VectorFileReader> open_divergence(const VectorHeader& h, const std::vector<std::string>& profiles) {
  return std::make_unique<DivergenceReader>(h, profiles);
}

void generate_vectors(std::vector<VectorFileText>& out) {
  const auto& profs = checked_profiles();
  const auto small = formats_where(true);
  const auto wide = formats_where(false);
  auto base_of = [](const std::string& prof, const Format& from, const Format& to) {
    return profile(*find_profile(prof)).for_cast(from, to);
  };

  // (a) every code of every <= 8-bit source, into every format, under every profile.
  for (const auto& prof : profs)
    for (const Format* from : small)
      for (const auto& to : kFormats) {
        if (!generated_pair(*from, to, profile(*find_profile(prof)), Level::l1)) continue;  // §31.4 / §34.3
        const auto p = make(*from, to, prof, base_of(prof, *from, to));
        out.push_back({"cast/" + prof + "/" + std::string(from->name) + "-" + std::string(to.name) + ".vec",
                       cast_file(p, all_codes(*from), "every " + std::string(from->name) + " code", 0)});
      }
  // (b) the directed rounding modes under ocp where they change anything.
  for (Round m : {Round::rtz, Round::rup, Round::rdn, Round::rna})
    for (const Format* from : small)
      for (const auto& to : kFormats) {
        if (!generated_pair(*from, to, profile(ProfileId::ocp), Level::l1)) continue;  // §31.4 / §34.3
        Policy pm = base_of("ocp", *from, to);
        pm.round = m;
        pm.e8m0_round = E8m0Round::follow;
        const auto p = make(*from, to, "ocp", pm);
        const auto b = make(*from, to, "ocp", base_of("ocp", *from, to));
        bool differs = false;
        for (std::uint32_t c = 0; c <= from->mask() && !differs; ++c)
          differs = !(p->reference(c, 0) == b->reference(c, 0));
        if (!differs) continue;
        out.push_back({"cast/ocp-" + std::string(to_string(m)) + "/" + std::string(from->name) + "-" +
                           std::string(to.name) + ".vec",
                       cast_file(p, all_codes(*from), "every " + std::string(from->name) + " code", 0)});
      }
  // (c) 16- and 32-bit sources: the compact edge set plus a few seeded random codes.
  for (const auto& prof : profs)
    for (const Format* from : wide)
      for (const auto& to : kFormats) {
        if (!generated_pair(*from, to, profile(*find_profile(prof)), Level::l1)) continue;  // §31.4 / §34.3
        const auto p = make(*from, to, prof, base_of(prof, *from, to));
        out.push_back({"cast/" + prof + "/" + std::string(from->name) + "-" + std::string(to.name) + ".vec",
                       cast_file(p, edge_cases(*p),
                                 "compact edges (specials, target extremes, ties near 1) + " +
                                     std::to_string(kVectorRandom) + " random codes",
                                 kVectorSeed)});
      }
  // (d) stochastic rounding with explicit r (§5).
  struct Pair {
    FormatId from, to;
  };
  const Pair sr_pairs[] = {{FormatId::f32, FormatId::bf16},          {FormatId::f32, FormatId::f8e4m3fn},
                           {FormatId::f32, FormatId::f8e5m2},        {FormatId::f32, FormatId::f4e2m1fn},
                           {FormatId::f32, FormatId::int8},          {FormatId::bf16, FormatId::f8e4m3fn},
                           {FormatId::f16, FormatId::f8e5m2},        {FormatId::f8e5m2, FormatId::f4e2m1fn},
                           {FormatId::f32, FormatId::f8e8m0fnu},     {FormatId::f32, FormatId::p3109_k8p3se},
                           {FormatId::bf16, FormatId::p3109_k8p4uf}, {FormatId::p3109_k8p4se, FormatId::p3109_k8p3sf}};
  struct SrSet {
    int k;
    SrVariant v;
    const char* prof;
  };
  const SrSet sr_sets[] = {{2, SrVariant::fraction, "ocp"},
                           {16, SrVariant::fraction, "ocp"},
                           {16, SrVariant::add, "ocp"},
                           {16, SrVariant::fraction, "cuda_satfinite"}};
  for (const auto& pr : sr_pairs)
    for (const auto& s : sr_sets) {
      const Format& from = format(pr.from);
      const Format& to = format(pr.to);
      if (std::string_view(s.prof) != "ocp" && pr.to != FormatId::f8e4m3fn) continue;
      Policy pm = base_of(s.prof, from, to);
      pm.round = Round::sr;
      pm.sr_bits = s.k;
      pm.sr_variant = s.v;
      pm.e8m0_round = E8m0Round::follow;
      if (!validate(pm, to).empty()) continue;
      const auto p = make(from, to, s.prof, pm);
      std::vector<std::uint32_t> xs;
      if (from.bits <= 8) {
        for (std::uint32_t c = 0; c <= from.mask(); ++c) xs.push_back(c);
      } else {
        // The compact edges, thinned to at most kSrCodes evenly spaced codes.
        const auto e = edge_codes(from, to, true);
        const std::size_t step = (e.size() + kSrCodes - 1) / kSrCodes;
        for (std::size_t i = 0; i < e.size(); i += step) xs.push_back(e[i]);
      }
      std::vector<std::pair<std::uint32_t, std::uint32_t>> cases;
      for (auto x : xs)
        for (auto r : sr_edge_r(*p, x)) cases.emplace_back(x, r);
      std::sort(cases.begin(), cases.end());
      cases.erase(std::unique(cases.begin(), cases.end()), cases.end());
      out.push_back({"cast/sr/" + std::string(s.prof) + "/" + std::string(from.name) + "-" + std::string(to.name) +
                         "-k" + std::to_string(s.k) + "-" + std::string(to_string(s.v)) + ".vec",
                     cast_file(p, cases,
                               "every source code, or 160 of the compact edges; r in {0, 2^k-1, the flip threshold 2^k "
                               "- f_k and one below}",
                               0)});
    }
  // (e) E8M0 rules (§7): every rounding choice, zero / negative handling.
  for (FormatId src : {FormatId::f32, FormatId::bf16}) {
    const Format& from = format(src);
    const Format& to = format(FormatId::f8e8m0fnu);
    for (const char* set : {"e8m0_round=floor", "e8m0_round=ceil", "e8m0_round=even", "e8m0_round=tiesup",
                            "e8m0_round=floor zero_to_nozero=min negative=abs", "e8m0_round=tiesup e8m0_low=grid",
                            "e8m0_round=even e8m0_low=grid", "e8m0_round=ceil e8m0_low=grid"}) {
      Policy pm = base_of("ocp", from, to);
      (void)apply_policy_settings(pm, set);
      const auto p = make(from, to, "ocp", pm);
      out.push_back(
          {"cast/e8m0/" + std::string(from.name) + "-" + std::string(to.name) + "-" + path_token(set) + ".vec",
           cast_file(p, edge_cases(*p), "compact edges + random codes", kVectorSeed)});
    }
  }
  // (f) single knobs (§6, §8, §9) on representative pairs.
  const Pair knob_pairs[] = {{FormatId::f32, FormatId::f8e4m3fn},
                             {FormatId::bf16, FormatId::f8e5m2},
                             {FormatId::f32, FormatId::bf16},
                             {FormatId::f16, FormatId::f4e2m1fn},
                             {FormatId::f32, FormatId::int8}};
  for (const auto& pr : knob_pairs)
    for (const char* set : {"daz=1", "ftz=1", "tininess=before", "ftz=1 tininess=before", "nan=sign", "nan=canonical",
                            "nan=ones", "overflow=saturate", "overflow=saturate inf_sat=keep", "nan_to_finite=negzero",
                            "nan_to_finite=max", "int_range=symmetric", "nan=ones_sign", "nan=raw",
                            "nan_to_finite=signzero", "nan_to_finite=flipzero", "nan=raw_plus"}) {
      const Format& from = format(pr.from);
      const Format& to = format(pr.to);
      Policy pm = base_of("ocp", from, to);
      (void)apply_policy_settings(pm, set);
      if (equivalent(pm, base_of("ocp", from, to), from, to)) continue;
      const auto p = make(from, to, "ocp", pm);
      out.push_back(
          {"cast/knobs/" + std::string(from.name) + "-" + std::string(to.name) + "-" + path_token(set) + ".vec",
           cast_file(p, edge_cases(*p), "compact edges + random codes", kVectorSeed)});
    }
  // (g) the divergence set (§B).
  out.push_back({"divergence/cast.vec", divergence_file()});
}

}  // namespace numref::conform::cast
