// numref conversions — the named conversions: every wide source to every target of at most 8
// bits under a profile's pair policy, with its result for each class of input.      spec §11.2
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/convert.hpp"
#include "numref/exact.hpp"
#include "numref/value.hpp"

namespace numref::cli::cmd_conversions {
namespace {

// The sources of a named conversion: the formats a training step quantizes from.
constexpr FormatId kSources[] = {FormatId::f32, FormatId::bf16, FormatId::f16};

// The instruction whose definition in the PTX ISA gives a line's result on every input that is
// not a NaN (the ISA leaves open which NaN a NaN input gives, §A.5). A bf16 operand reaches the
// f32 instruction widened exactly (a 16-bit shift).
struct Instruction {
  ProfileId profile;
  FormatId from, to;
  const char* text;
};
// clang-format off
constexpr Instruction kInstructions[] = {
    {ProfileId::cuda_satfinite, FormatId::f32,  FormatId::f8e4m3fn, "cvt.rn.satfinite.e4m3x2.f32"},
    {ProfileId::cuda_satfinite, FormatId::bf16, FormatId::f8e4m3fn, "cvt.rn.satfinite.e4m3x2.f32 (bf16 widened)"},
    {ProfileId::cuda_satfinite, FormatId::f16,  FormatId::f8e4m3fn, "cvt.rn.satfinite.e4m3x2.f16x2"},
    {ProfileId::cuda_satfinite, FormatId::f32,  FormatId::f8e5m2,   "cvt.rn.satfinite.e5m2x2.f32"},
    {ProfileId::cuda_satfinite, FormatId::bf16, FormatId::f8e5m2,   "cvt.rn.satfinite.e5m2x2.f32 (bf16 widened)"},
    {ProfileId::cuda_satfinite, FormatId::f16,  FormatId::f8e5m2,   "cvt.rn.satfinite.e5m2x2.f16x2"},
    {ProfileId::cuda_satfinite, FormatId::f32,  FormatId::f6e2m3fn, "cvt.rn.satfinite.e2m3x2.f32"},
    {ProfileId::cuda_satfinite, FormatId::f32,  FormatId::f6e3m2fn, "cvt.rn.satfinite.e3m2x2.f32"},
    {ProfileId::cuda_satfinite, FormatId::f32,  FormatId::f4e2m1fn, "cvt.rn.satfinite.e2m1x2.f32"},
};
// clang-format on

const char* instruction(ProfileId p, FormatId from, FormatId to) {
  for (const Instruction& i : kInstructions)
    if (i.profile == p && i.from == from && i.to == to) return i.text;
  return nullptr;
}

// A code with its exact value: "7e = 448", "7f = NaN", "7c = +Inf".
std::string code_text(std::uint32_t code, const Format& f, std::size_t max_chars) {
  const Decoded d = decode(code, f);
  std::string v;
  if (d.cls == Class::nan)
    v = "NaN";
  else if (d.cls == Class::inf)
    v = d.sign ? "-Inf" : "+Inf";
  else
    v = compact_value(d, max_chars);
  return hex_code(code, f) + " = " + v;
}

// The inputs of one (source, target) pair, as source codes (nullopt: the source has no such
// value). The classes are those of §11.2: the canonical NaN, ±Inf, the target's largest finite
// value, the tie between it and the next value of the target's grid, the smallest source value
// above that tie, the target's smallest positive value and half of it.
struct Inputs {
  std::optional<std::uint32_t> nan, pinf, ninf, max, tie, above, min, half_min;
};

std::optional<std::uint32_t> exact_in(const Exact& v, const Format& src) {
  return encode_exact(v.sign, v.sig, v.exp, src);
}

Inputs inputs(const Format& src, const Format& dst) {
  Inputs in;
  if (src.has_nan()) in.nan = src.canonical_nan;
  if (src.has_inf()) {
    in.pinf = encode_inf(false, src);
    in.ninf = encode_inf(true, src);
  }
  const Decoded m = decode(encode_max_finite(false, dst), dst);
  const Exact max{false, m.sig, m.exp, false};
  in.max = exact_in(max, src);
  // half the step above the largest value: 2^(E(max) - frac - 1); 1/2 for an integer target
  const int half_exp = dst.is_integer() ? -1 : ilog2(max) - dst.man_bits - 1;
  const int q = std::min(m.exp, half_exp);
  const Exact tie{false, (m.sig << (m.exp - q)) + (std::uint64_t{1} << (half_exp - q)), q, false};
  in.tie = exact_in(tie, src);
  Policy up;
  up.round = Round::rup;
  const Result r = round_finite(tie, src, up);
  if (src.is_finite_code(r.bits)) {
    const std::uint32_t above = (r.flags & kInexact) ? r.bits : r.bits + 1;  // next code up
    if (src.is_finite_code(above)) in.above = above;
  }
  const Decoded mp = decode(encode_min_positive(dst), dst);
  in.min = exact_in(Exact{false, mp.sig, mp.exp, false}, src);
  in.half_min = exact_in(Exact{false, mp.sig, mp.exp - 1, false}, src);
  return in;
}

std::vector<std::optional<std::uint32_t>> columns(const Inputs& in) {
  return {in.nan, in.pinf, in.ninf, in.max, in.tie, in.above, in.min, in.half_min};
}

const std::vector<std::string> kClassHeader = {"NaN",        "+Inf",          "-Inf",         "max finite",
                                               "tie at max", "above the tie", "min positive", "half of it"};

// The targets of a named conversion: every format of at most 8 bits but the IEEE P3109
// members (their conversions are the §2.5 family's, one per member).
std::vector<const Format*> targets() {
  std::vector<const Format*> out;
  for (const Format& f : kFormats)
    if (f.bits <= 8 && !f.is_p3109()) out.push_back(&f);
  return out;
}

std::vector<const Profile*> selected_profiles(Args& a) {
  std::vector<const Profile*> out;
  const std::vector<std::string> names = a.multi("profile");
  std::set<std::string> seen;
  for (const std::string& n : names) {
    if (n.empty()) throw UsageError("--profile: empty value");
    if (!seen.insert(n).second) throw UsageError("--profile " + n + " given twice");
    const auto id = find_profile(n);
    if (!id) throw UsageError("--profile: unknown profile '" + n + "' (profiles: " + profile_names() + ")");
    if (profile(*id).recipe) throw UsageError("--profile " + n + ": a recipe profile names a quantization, not a cast");
    out.push_back(&profile(*id));
  }
  if (out.empty())
    for (int i = 0; i < kProfileCount; ++i)
      if (!all_profiles()[i].recipe) out.push_back(&all_profiles()[i]);
  return out;
}

int run_conversions(Args& a) {
  if (a.flag("help")) {
    std::printf(
        "usage: numref conversions [--profile NAME]... [--inputs] [--markdown]\n\n"
        "Prints the named conversions (spec §11.2): for every profile without a quantization\n"
        "recipe (or each --profile), every source f32, bf16, f16 and every target of at most 8\n"
        "bits but the IEEE P3109 members, the result of the pair policy (§10.2) for each class\n"
        "of input: the canonical NaN, +Inf, -Inf, the target's max finite value, the tie between\n"
        "it and the next step of the target's grid, the smallest source value above that tie,\n"
        "the target's smallest positive value and half of it; and the PTX instruction that\n"
        "computes the line where one exists.\n"
        "  --inputs    the source codes of each class instead, one line per (source, target)\n"
        "  --markdown  a Markdown table\n");
    return 0;
  }
  const bool show_inputs = a.flag("inputs");
  const bool md = a.flag("markdown");
  const std::vector<const Profile*> profiles = selected_profiles(a);
  a.finish();
  const std::string none = md ? "—" : "-";
  const std::string arrow = md ? "→" : "->";
  std::vector<std::vector<std::string>> rows;
  for (const Format* dst : targets()) {
    for (const FormatId sid : kSources) {
      const Format& src = format(sid);
      const Inputs in = inputs(src, *dst);
      const std::string name = std::string(src.name) + arrow + std::string(dst->name);
      if (show_inputs) {
        std::vector<std::string> row = {name};
        for (const auto& c : columns(in)) row.push_back(c ? code_text(*c, src, 24) : none);
        rows.push_back(row);
        continue;
      }
      for (const Profile* pr : profiles) {
        const Policy pol = pr->for_cast(src, *dst);
        const char* ins = instruction(pr->id, sid, dst->id);
        std::vector<std::string> row = {name, std::string(pr->name), ins ? std::string(ins) : none};
        for (const auto& c : columns(in))
          row.push_back(c ? code_text(convert(*c, src, *dst, pol).bits, *dst, 12) : none);
        rows.push_back(row);
      }
    }
  }
  std::vector<std::string> header = {"conversion"};
  if (!show_inputs) header.insert(header.end(), {"profile", "instruction"});
  header.insert(header.end(), kClassHeader.begin(), kClassHeader.end());
  print_table(header, rows, md);
  return 0;
}

}  // namespace

NUMREF_VERB("conversions", "the named conversions: each source to each 8/6/4-bit target per profile (§11.2)",
            run_conversions);

}  // namespace numref::cli::cmd_conversions
