// numref — the dot product inside an MMA instruction.     spec §36 – §39
//
// §38 in integers. A finite non-zero operand is sig · 2^exp (value.hpp, §3.1) and its
// alignment exponent is e = exp + man_bits (= E(v) for a normal, emin for a subnormal). A
// product term is (sig_a·sig_b, exp_a + exp_b) with e = e_a + e_b; a step aligns every term to
// u = E_max − F and keeps trunc(sig · 2^(exp − u)) — an integer of at most F + 8 bits — so the
// step's sum is exact in 64 bits and the one rounding at the end is the core's (§4).
#include "numref/mma.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "numref/bignum.hpp"
#include "numref/exact.hpp"
#include "numref/round.hpp"
#include "numref/value.hpp"

namespace numref {

// ---- §36.2 operand types ----------------------------------------------------------------------
namespace {
// clang-format off
constexpr MmaTypeInfo kTypes[] = {
    {MmaType::f32, "f32", FormatId::f32, 0},
    {MmaType::tf32, "tf32", FormatId::f32, 0x1FFFu},
    {MmaType::f16, "f16", FormatId::f16, 0},
    {MmaType::bf16, "bf16", FormatId::bf16, 0},
    {MmaType::f8e4m3fn, "f8e4m3fn", FormatId::f8e4m3fn, 0},
    {MmaType::f8e5m2, "f8e5m2", FormatId::f8e5m2, 0},
    {MmaType::f6e3m2fn, "f6e3m2fn", FormatId::f6e3m2fn, 0},
    {MmaType::f6e2m3fn, "f6e2m3fn", FormatId::f6e2m3fn, 0},
    {MmaType::f4e2m1fn, "f4e2m1fn", FormatId::f4e2m1fn, 0},
    {MmaType::f8e8m0fnu, "f8e8m0fnu", FormatId::f8e8m0fnu, 0},
    {MmaType::ue4m3, "ue4m3", FormatId::f8e4m3fn, 0x80u},
    {MmaType::f8e4m3fnuz, "f8e4m3fnuz", FormatId::f8e4m3fnuz, 0},
    {MmaType::f8e5m2fnuz, "f8e5m2fnuz", FormatId::f8e5m2fnuz, 0},
};
// clang-format on
}  // namespace

std::span<const MmaTypeInfo> mma_types() { return kTypes; }
const MmaTypeInfo& mma_type(MmaType t) {
  for (const MmaTypeInfo& i : kTypes)
    if (i.id == t) return i;
  throw std::logic_error("mma_type: unknown type");
}
std::optional<MmaType> find_mma_type(std::string_view name) {
  for (const MmaTypeInfo& i : kTypes)
    if (i.name == name) return i.id;
  return std::nullopt;
}

bool mma_list_has(std::string_view list, std::string_view word) {
  while (!list.empty()) {
    const std::size_t sp = list.find(' ');
    if (list.substr(0, sp) == word) return true;
    if (sp == std::string_view::npos) break;
    list.remove_prefix(sp + 1);
  }
  return false;
}

std::string describe(const MmaKnobs& k) {
  std::string s;
  for_each_knob_row(kMmaKnobs, [&](const auto& row) {
    if (!s.empty()) s += ' ';
    s += std::string(row.key) + '=';
    const auto v = k.*row.member;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, int>)
      s += std::to_string(v);
    else
      s += std::string(row.words[static_cast<std::size_t>(v)]);
  });
  return s;
}

std::string apply_model_text(MmaKnobs& out, std::string_view text) {
  MmaKnobs k = out;
  std::vector<std::string> seen;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size()) break;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != ',') ++j;
    const std::string item(text.substr(i, j - i));
    i = j;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) return "'" + item + "' is not key=value";
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    for (const std::string& s : seen)
      if (s == key) return "knob '" + key + "' is given twice";
    seen.push_back(key);
    std::string err;
    bool found = false;
    for_each_knob_row(kMmaKnobs, [&](const auto& row) {
      if (row.key != key) return;
      found = true;
      using T = std::remove_cvref_t<decltype(k.*row.member)>;
      if constexpr (std::is_same_v<T, int>) {
        long long v = 0;
        std::size_t n = 0;
        const bool neg = !value.empty() && value[0] == '-';
        for (std::size_t c = neg ? 1 : 0; c < value.size(); ++c, ++n) {
          if (value[c] < '0' || value[c] > '9' || v > 1000000) {
            n = 0;
            break;
          }
          v = v * 10 + (value[c] - '0');
        }
        if (n == 0)
          err = key + "=" + value + " is not a decimal integer";
        else
          k.*row.member = static_cast<int>(neg ? -v : v);
      } else {
        const auto v = row.parse_word(value);
        if (!v)
          err = key + "=" + value + " is not one of " + row.words_text();
        else
          k.*row.member = *v;
      }
    });
    if (!err.empty()) return err;
    if (!found) {
      std::string keys;
      for_each_knob_row(kMmaKnobs, [&](const auto& row) {
        if (!keys.empty()) keys += ' ';
        keys.append(row.key);
      });
      return "unknown knob '" + key + "' (one of: " + keys + ")";
    }
  }
  if (k.algo != MmaAlgo::ideal && (k.align < 0 || k.align > 48 || k.align2 < 0 || k.align2 > 48))
    return "align and align2 must be in [0, 48], not " + std::to_string(k.align) + " and " + std::to_string(k.align2);
  if (k.algo != MmaAlgo::ideal && (k.fused_bytes < 1 || k.fused_bytes > 4096))
    return "fused_bytes must be in [1, 4096], not " + std::to_string(k.fused_bytes);
  if ((k.algo == MmaAlgo::fma || k.algo == MmaAlgo::efdpa) && k.scale == MmaScale::group)
    return "algo=" + std::string(mma_words::algo[static_cast<int>(k.algo)]) +
           " takes scale=none or scale=product, not scale=group (§38.9, §38.10)";
  if (k.algo == MmaAlgo::ftz && k.scale != MmaScale::none) return "algo=ftz takes scale=none only (§38.11)";
  if (k.scale == MmaScale::group && (k.group < 1 || k.group > 64))
    return "group must be in [1, 64], not " + std::to_string(k.group);
  out = k;
  return "";
}

// ---- §39 instruction profiles -------------------------------------------------------------------
namespace {
constexpr std::string_view kAll = "f32 tf32 f16 bf16 f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn";
constexpr std::string_view kF16 = "f16 bf16";
constexpr std::string_view kF8 = "f8e4m3fn f8e5m2";
constexpr std::string_view kF8F6F4 = "f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn";
constexpr std::string_view kMmaSim =
    "MMA-Sim (Xie et al., 2025, arXiv 2511.10909), mmasim 2.1.1, validated bitwise against the GPUs it names";

// The T-FDPA knobs of an architecture generation: align F, fused bytes, e_zero for f32 / f16.
constexpr MmaKnobs fdpa(int align, int fused_bytes, int e_zero, int e_zero_f16, MmaRound r = MmaRound::rz,
                        MmaScale scale = MmaScale::none, int group = 0) {
  MmaKnobs k;
  k.algo = MmaAlgo::fdpa;
  k.align = align;
  k.fused_bytes = fused_bytes;
  k.e_zero = e_zero;
  k.e_zero_f16 = e_zero_f16;
  k.round = r;
  k.scale = scale;
  k.group = group;
  k.nan = MmaNan::ones;
  k.zero = MmaZero::plus;
  return k;
}
constexpr MmaKnobs kVolta = fdpa(23, 8, -131, -19);
constexpr MmaKnobs kAmpere = fdpa(24, 16, -132, -20);
constexpr MmaKnobs kAdaF8 = fdpa(13, 16, -132, -20, MmaRound::rz13);
constexpr MmaKnobs kHopper = fdpa(25, 32, -133, -21);
constexpr MmaKnobs kHopperF8 = fdpa(13, 32, -133, -21, MmaRound::rz13);
constexpr MmaKnobs kMxF8 = fdpa(25, 32, -133, -21, MmaRound::rz, MmaScale::product);
constexpr MmaKnobs kMxF4 = fdpa(35, 32, -139, -21, MmaRound::rz, MmaScale::group, 16);

constexpr MmaKnobs ideal_knobs() { return MmaKnobs{}; }
// AMD CDNA3 (MMA-Sim's TR-FDPA / GTR-FDPA): F = 24, F2 = 31, 16 bytes per step, rne.
constexpr MmaKnobs two_level(MmaAlgo algo) {
  MmaKnobs k = fdpa(24, 16, 0, 0, MmaRound::rne);
  k.algo = algo;
  k.align2 = 31;
  k.zero = MmaZero::rounded;
  return k;
}
constexpr MmaKnobs kCdna3 = two_level(MmaAlgo::tr_fdpa);
// AMD's models without alignment, all rne with the canonical NaN (MMA-Sim's NaN bits are its host
// CPU's, §39.2 note); L = 2 · fused_bytes / h (§38.1):
// - CDNA1 / CDNA2 / CDNA3 f32 (MMA-Sim's FMA chain, §38.9): fused_bytes 4 (L = 1), IEEE signed zeros;
// - CDNA1 f16 / bf16 (its E-FDPA, §38.10): L products and C summed exactly per step, an exact zero +0;
// - CDNA2 f16 / bf16 (its FTZ multiply-add, §38.11): binary32 arithmetic with subnormals flushed.
constexpr MmaKnobs amd_rne(MmaAlgo algo, int fused_bytes, MmaZero zero) {
  MmaKnobs k;
  k.algo = algo;
  k.fused_bytes = fused_bytes;
  k.round = MmaRound::rne;
  k.nan = MmaNan::canonical;
  k.zero = zero;
  return k;
}
constexpr MmaKnobs kFmaChain = amd_rne(MmaAlgo::fma, 4, MmaZero::ieee);
constexpr MmaKnobs exact_fdpa(int fused_bytes) { return amd_rne(MmaAlgo::efdpa, fused_bytes, MmaZero::rounded); }
constexpr MmaKnobs ftz_mul_add(int fused_bytes) { return amd_rne(MmaAlgo::ftz, fused_bytes, MmaZero::ieee); }
constexpr MmaKnobs kCdna3F8 = two_level(MmaAlgo::gtr_fdpa);

// clang-format off
constexpr MmaProfile kProfiles[] = {
    {"ideal", "any: the exact A·B + C rounded once (§37)", kAll, "f32 f16", "f8e8m0fnu ue4m3", "16 32", ideal_knobs(),
     "§37: no hardware; the default"},
    {"sm70_mma_f16", "mma.sync.aligned.m8n8k4 f16 (sm_70; also m8n8k4 on sm_75)", "f16", "f32 f16", "", "", kVolta, kMmaSim},
    {"sm75_mma_f16", "mma.sync.aligned.m16n8k8 f16 (sm_75)", "f16", "f32 f16", "", "", kAmpere, kMmaSim},
    {"sm80_mma_f16", "mma.sync.aligned m16n8k8 / m16n8k16 f16, bf16 (sm_80, sm_86, sm_89)", kF16, "f32 f16", "", "",
     kAmpere, kMmaSim},
    {"sm80_mma_tf32", "mma.sync.aligned m16n8k4 / m16n8k8 tf32 (sm_80, sm_86, sm_89)", "tf32", "f32", "", "", kAmpere,
     kMmaSim},
    {"sm89_mma_f8", "mma.sync.aligned m16n8k16 / m16n8k32 e4m3, e5m2 (sm_89)", kF8, "f32 f16", "", "", kAdaF8, kMmaSim},
    {"sm90_mma_f16", "mma.sync.aligned m16n8k8 / m16n8k16 f16, bf16 (sm_90)", kF16, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm90_mma_tf32", "mma.sync.aligned m16n8k4 / m16n8k8 tf32 (sm_90)", "tf32", "f32", "", "", kHopper, kMmaSim},
    {"sm90_wgmma_f16", "wgmma.mma_async m64nNk16 f16, bf16 (sm_90a)", kF16, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm90_wgmma_tf32", "wgmma.mma_async m64nNk8 tf32 (sm_90a)", "tf32", "f32", "", "", kHopper, kMmaSim},
    {"sm90_wgmma_f8", "wgmma.mma_async m64nNk32 e4m3, e5m2 (sm_90a)", kF8, "f32 f16", "", "", kHopperF8, kMmaSim},
    {"sm100_mma_f16", "mma.sync.aligned m16n8k8 / m16n8k16 f16, bf16 (sm_100)", kF16, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm100_mma_tf32", "mma.sync.aligned m16n8k4 / m16n8k8 tf32 (sm_100)", "tf32", "f32", "", "", kHopper, kMmaSim},
    {"sm100_tcgen05_f16", "tcgen05.mma kind::f16 (sm_100a)", kF16, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm100_tcgen05_tf32", "tcgen05.mma kind::tf32 (sm_100a)", "tf32", "f32", "", "", kHopper, kMmaSim},
    {"sm100_tcgen05_f8f6f4", "tcgen05.mma kind::f8f6f4 (sm_100a)", kF8F6F4, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm100_tcgen05_mxf8f6f4", "tcgen05.mma.block_scale kind::mxf8f6f4 block32 ue8m0 (sm_100a)", kF8F6F4, "f32",
     "f8e8m0fnu", "32", kMxF8, kMmaSim},
    {"sm100_tcgen05_mxf4", "tcgen05.mma.block_scale kind::mxf4 block32 ue8m0 (sm_100a)", "f4e2m1fn", "f32", "f8e8m0fnu",
     "32", kMxF4, kMmaSim},
    {"sm100_tcgen05_mxf4nvf4", "tcgen05.mma.block_scale kind::mxf4nvf4 block16 ue8m0 / ue4m3, block32 ue8m0 (sm_100a)",
     "f4e2m1fn", "f32", "f8e8m0fnu ue4m3", "16 32", kMxF4, kMmaSim},
    {"sm120_mma_f16", "mma.sync.aligned m16n8k8 / m16n8k16 f16, bf16 (sm_120)", kF16, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm120_mma_tf32", "mma.sync.aligned m16n8k4 / m16n8k8 tf32 (sm_120)", "tf32", "f32", "", "", kHopper, kMmaSim},
    {"sm120_mma_f8", "mma.sync.aligned m16n8k16 / m16n8k32 e4m3, e5m2 (sm_120)", kF8, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm120_mma_f8f6f4", "mma.sync.aligned m16n8k32 kind::f8f6f4 (sm_120a)", kF8F6F4, "f32 f16", "", "", kHopper, kMmaSim},
    {"sm120_mma_mxf8f6f4", "mma.sync.aligned.block_scale m16n8k32 kind::mxf8f6f4 block32 ue8m0 (sm_120a)", kF8F6F4,
     "f32", "f8e8m0fnu", "32", kMxF8, kMmaSim},
    {"sm120_mma_mxf4", "mma.sync.aligned.block_scale m16n8k64 kind::mxf4 block32 ue8m0 (sm_120a)", "f4e2m1fn", "f32",
     "f8e8m0fnu", "32", kMxF4, kMmaSim},
    {"sm120_mma_mxf4nvf4",
     "mma.sync.aligned.block_scale m16n8k64 kind::mxf4nvf4 block16 ue8m0 / ue4m3, block32 ue8m0 (sm_120a)", "f4e2m1fn",
     "f32", "f8e8m0fnu ue4m3", "16 32", kMxF4, kMmaSim},
    {"cdna1_mfma_f32", "v_mfma_f32_32x32x1f32, _32x32x2f32, _16x16x1f32, _16x16x4f32, _4x4x1f32 (CDNA1, gfx908)", "f32",
     "f32", "", "", kFmaChain, kMmaSim},
    {"cdna2_mfma_f32", "v_mfma_f32_32x32x1f32, _32x32x2f32, _16x16x1f32, _16x16x4f32, _4x4x1f32 (CDNA2, gfx90a)", "f32",
     "f32", "", "", kFmaChain, kMmaSim},
    {"cdna3_mfma_f32", "v_mfma_f32_32x32x1_2b_f32, _16x16x1_4b_f32, _4x4x1_16b_f32, _32x32x2_f32, _16x16x4_f32 (CDNA3, gfx942)",
     "f32", "f32", "", "", kFmaChain, kMmaSim},
    {"cdna1_mfma_f16", "v_mfma_f32_32x32x8f16, _32x32x4f16, _16x16x16f16, _16x16x4f16, _4x4x4f16 (CDNA1, gfx908)",
     "f16", "f32", "", "", exact_fdpa(8), kMmaSim},
    {"cdna1_mfma_bf16", "v_mfma_f32_32x32x4bf16, _32x32x2bf16, _16x16x8bf16, _16x16x2bf16, _4x4x2bf16 (CDNA1, gfx908)",
     "bf16", "f32", "", "", exact_fdpa(4), kMmaSim},
    {"cdna2_mfma_f16",
     "v_mfma_f32_32x32x8f16, _32x32x4f16, _16x16x16f16, _16x16x4f16, _4x4x4f16; v_mfma_f32_*bf16_1k (CDNA2, gfx90a)",
     kF16, "f32", "", "", ftz_mul_add(8), kMmaSim},
    {"cdna2_mfma_bf16", "v_mfma_f32_32x32x4bf16, _32x32x2bf16, _16x16x8bf16, _16x16x2bf16, _4x4x2bf16 (CDNA2, gfx90a)",
     "bf16", "f32", "", "", ftz_mul_add(4), kMmaSim},
    {"cdna3_mfma_f16", "v_mfma_f32_*_f16, v_mfma_f32_*_bf16 (CDNA3, gfx942)", kF16, "f32", "", "", kCdna3, kMmaSim},
    {"cdna3_mfma_xf32", "v_mfma_f32_*_xf32 (CDNA3, gfx942)", "tf32", "f32", "", "", kCdna3, kMmaSim},
    {"cdna3_mfma_f8", "v_mfma_f32_*_fp8_fp8 / _bf8 (CDNA3, gfx942)", "f8e4m3fnuz f8e5m2fnuz", "f32", "", "", kCdna3F8,
     kMmaSim},
};
// clang-format on
}  // namespace

std::span<const MmaProfile> mma_profiles() { return kProfiles; }
const MmaProfile* find_mma_profile(std::string_view name) {
  for (const MmaProfile& p : kProfiles)
    if (p.name == name) return &p;
  return nullptr;
}

// ---- §36.3 validation ---------------------------------------------------------------------------
namespace {
bool is_narrow(MmaType t) {  // an 8-bit-or-narrower element type (A and B may differ, §36.3)
  return format(mma_type(t).format).bits <= 8;
}
}  // namespace

// Half-bytes one element occupies in the instruction's operand (§38.1).
int mma_nibbles(const MmaSpec& s) {
  const int bits = format(mma_type(s.a).format).bits;
  if (s.a == MmaType::tf32) return 8;
  if (bits > 8) return bits / 4;
  return s.model().scale == MmaScale::group ? 1 : 2;  // fp4 packed two per byte in mxf4 / mxf4nvf4
}

std::size_t mma_fused(const MmaSpec& s) {
  const MmaKnobs& k = s.model();
  if (k.algo == MmaAlgo::ideal) return 0;
  if (k.algo == MmaAlgo::fma) return 1;  // §38.9 one product per step
  return static_cast<std::size_t>(k.fused_bytes * 2 / mma_nibbles(s));
}

void validate(const MmaSpec& s, std::size_t K) {
  if (s.profile == nullptr) throw std::invalid_argument("mma: no profile");
  const MmaProfile& p = *s.profile;
  const std::string pn(p.name);
  const auto name = [](MmaType t) { return std::string(mma_type(t).name); };
  for (const MmaType t : {s.a, s.b})
    if (!mma_list_has(p.types, mma_type(t).name))
      throw std::invalid_argument("mma: profile " + pn + " does not take operand type " + name(t) + " (it takes " +
                                  std::string(p.types) + ")");
  if (s.a != s.b && !(is_narrow(s.a) && is_narrow(s.b)))
    throw std::invalid_argument("mma: A is " + name(s.a) + " and B is " + name(s.b) +
                                ": only 8-bit and narrower operand types may differ");
  if (!mma_list_has(p.accumulators, mma_type(s.c).name))
    throw std::invalid_argument("mma: profile " + pn + " does not accumulate in " + name(s.c) + " (it takes " +
                                std::string(p.accumulators) + ")");
  if (s.c == MmaType::f16 && (s.a == MmaType::bf16 || s.a == MmaType::tf32 || s.a == MmaType::f32))
    throw std::invalid_argument("mma: a binary16 accumulator takes f16 or 8-bit and narrower operands, not " +
                                name(s.a));
  if (K == 0) throw std::invalid_argument("mma: K must be at least 1");
  const MmaKnobs& k = s.model();
  if (k.algo == MmaAlgo::ftz && s.c != MmaType::f32)
    throw std::invalid_argument("mma: algo=ftz accumulates in f32 only, not " + name(s.c) + " (§38.11)");
  const bool scaled = k.scale != MmaScale::none;
  if (s.block == 0) {
    if (scaled) throw std::invalid_argument("mma: profile " + pn + " needs block scales (--block)");
    return;
  }
  if (!mma_list_has(p.blocks, std::to_string(s.block)))
    throw std::invalid_argument(
        "mma: profile " + pn + " takes no block size " + std::to_string(s.block) +
        (p.blocks.empty() ? " (it has no block scales)" : " (it takes " + std::string(p.blocks) + ")"));
  if (!mma_list_has(p.scale_types, mma_type(s.scale).name))
    throw std::invalid_argument("mma: profile " + pn + " takes no scale type " + name(s.scale) + " (it takes " +
                                std::string(p.scale_types) + ")");
  if (s.scale == MmaType::ue4m3 && s.block != 16)
    throw std::invalid_argument("mma: ue4m3 scales come with block 16, not " + std::to_string(s.block));
  if (K % static_cast<std::size_t>(s.block) != 0)
    throw std::invalid_argument("mma: K = " + std::to_string(K) + " is not a multiple of the block " +
                                std::to_string(s.block));
  if (k.scale == MmaScale::group && (k.group <= 0 || s.block % k.group != 0))
    throw std::invalid_argument("mma: the group of " + std::to_string(k.group) +
                                " products does not divide the block " + std::to_string(s.block));
}

// ---- §37 / §38 evaluation -----------------------------------------------------------------------
namespace {

// §38.2 An operand: class, sign, sig · 2^exp, and its alignment exponent e.
struct Operand {
  bool nan = false, inf = false, neg = false;
  bool sub = false;  // a subnormal of its format (§38.11 flushes it)
  std::uint64_t sig = 0;
  int exp = 0, e = 0;
};
Operand operand(std::uint32_t code, MmaType t) {
  const MmaTypeInfo& ti = mma_type(t);
  const Format& f = format(ti.format);
  const Decoded d = decode(code & ~ti.ignore_mask, f);
  Operand o;
  o.neg = d.sign;
  switch (d.cls) {
    case Class::nan: o.nan = true; break;
    case Class::inf: o.inf = true; break;
    case Class::zero: break;
    case Class::subnormal: o.sub = true; [[fallthrough]];
    case Class::normal:
      o.sig = d.sig;
      o.exp = d.exp;
      o.e = d.exp + f.man_bits;
      break;
  }
  return o;
}

// The special outcome of a set of addends (§38.5 / §37): NaN operands, Inf × 0, +Inf and −Inf.
struct Specials {
  bool nan = false, invalid = false, pos_inf = false, neg_inf = false;
  void product(const Operand& x, const Operand& y) {
    if (x.nan || y.nan) {
      nan = true;
      return;
    }
    if (x.inf || y.inf) {
      if ((!x.inf && x.sig == 0) || (!y.inf && y.sig == 0)) {
        invalid = true;
        return;
      }
      (x.neg != y.neg ? neg_inf : pos_inf) = true;
    }
  }
  void addend(const Operand& x) {
    if (x.nan) nan = true;
    if (x.inf) (x.neg ? neg_inf : pos_inf) = true;
  }
  bool any() const { return nan || invalid || pos_inf || neg_inf; }
};

const Format& acc_format(MmaType c) { return format(mma_type(c).format); }

MmaResult special_result(const Specials& sp, MmaType c, MmaNan nan_rule) {
  const Format& f = acc_format(c);
  if (sp.nan || sp.invalid || (sp.pos_inf && sp.neg_inf)) {
    const std::uint32_t code = nan_rule == MmaNan::ones ? f.mag_mask() : f.canonical_nan;
    const bool inv = sp.invalid || (!sp.nan && sp.pos_inf && sp.neg_inf);
    return {code, static_cast<std::uint8_t>(inv ? kInvalid : 0)};
  }
  return {encode_inf(sp.neg_inf, f), 0};
}

// A term of a step: value ±sig · 2^exp, alignment exponent e.
struct Term {
  bool neg;
  std::uint64_t sig;
  int exp, e;
};

// §38.5 The step's result T · 2^u rounded once into the accumulator type.
MmaResult round_step(bool neg, std::uint64_t T, int u, bool inexact, bool all_neg_zero, MmaType c, const MmaKnobs& k) {
  const Format& f = acc_format(c);
  const bool f16 = c == MmaType::f16;
  std::uint8_t flags = inexact ? kInexact : 0;
  const bool plus = k.zero == MmaZero::plus;
  if (T == 0) return {plus || !all_neg_zero ? 0u : encode_zero(true, f), flags};  // §38.5
  const MmaRound mode = f16 ? MmaRound::rne : k.round;
  Policy p;  // IEEE 754: overflow to ±Inf, gradual underflow
  p.round = mode == MmaRound::rne ? Round::rne : Round::rtz;
  const Result r = round_finite(Exact{neg, T, u, false}, f, p);
  std::uint32_t bits = r.bits;
  flags |= r.flags;
  if (mode != MmaRound::rne && (r.flags & kOverflow)) bits = encode_inf(neg, f);  // §38.5 rz overflow
  if (mode == MmaRound::rz13 && (bits & 0x7F800000u) != 0x7F800000u) {
    // §36.4 the final rounding's own flags: inexact when it drops a bit, underflow when it is
    // also tiny (below 2^-126: toward zero never rounds up to it)
    const bool round_inexact = (r.flags & kInexact) != 0 || (bits & 0x3FFu) != 0;
    bits &= ~0x3FFu;  // truncation composes: RZ to 23 then to 13 fraction bits is RZ to 13
    if (round_inexact) flags |= kInexact | ((bits & 0x7F800000u) == 0 ? kUnderflow : 0);
  }
  if (plus && (bits & f.mag_mask()) == 0) bits = 0;  // zero=plus: a result that rounds to zero is +0 too
  return {bits, flags};
}

// §38.2 One step: the terms aligned to u = max e − F, truncated, summed exactly, rounded once.
MmaResult fdpa_step(std::span<const Term> terms, MmaType c, const MmaKnobs& k) {
  int emax = terms[0].e;
  for (const Term& t : terms) emax = std::max(emax, t.e);
  const int u = emax - k.align;
  __int128 sum = 0;
  bool inexact = false, all_neg_zero = true;
  for (const Term& t : terms) {
    if (t.sig != 0 || !t.neg) all_neg_zero = false;
    if (t.sig == 0) continue;
    const int sh = t.exp - u;
    std::uint64_t v;
    if (sh >= 0) {
      if (sh > 62 || (t.sig >> (63 - sh)) != 0) throw std::logic_error("mma: aligned term exceeds 63 bits");
      v = t.sig << sh;
    } else if (-sh >= 64) {
      v = 0;
      inexact = true;
    } else {
      v = t.sig >> -sh;
      if ((v << -sh) != t.sig) inexact = true;
    }
    sum += t.neg ? -static_cast<__int128>(v) : static_cast<__int128>(v);
  }
  const bool neg = sum < 0;
  const unsigned __int128 mag = neg ? static_cast<unsigned __int128>(-sum) : static_cast<unsigned __int128>(sum);
  if (mag >> 64) throw std::logic_error("mma: step sum exceeds 64 bits");
  return round_step(neg, static_cast<std::uint64_t>(mag), u, inexact, all_neg_zero, c, k);
}

// The operands of one dot product, decoded once: a[k], b[k] for k < K, and the scales of
// block k / block (sa, sb; empty without scales).
struct Inputs {
  const MmaSpec& s;
  const Operand *a, *b, *sa, *sb;
  const Operand& A(std::size_t i) const { return a[i]; }
  const Operand& B(std::size_t i) const { return b[i]; }
  const Operand& SA(std::size_t i) const { return sa[i / static_cast<std::size_t>(s.block)]; }
  const Operand& SB(std::size_t i) const { return sb[i / static_cast<std::size_t>(s.block)]; }
  bool scaled() const { return s.block > 0; }
};

Term c_term(const Operand& c, int e_zero) { return Term{c.neg, c.sig, c.exp, c.sig == 0 ? e_zero : c.e}; }

// §38.1 – §38.3 a step over products [k0, k1) with scale=none or scale=product.
MmaResult step_products(const Inputs& in, std::size_t k0, std::size_t k1, std::uint32_t c, const MmaKnobs& k,
                        std::vector<Term>& terms) {
  const bool f16 = in.s.c == MmaType::f16;
  const int e_zero = f16 ? k.e_zero_f16 : k.e_zero;
  Specials sp;
  terms.clear();
  for (std::size_t i = k0; i < k1; ++i) {
    const Operand &x = in.A(i), &y = in.B(i);
    sp.product(x, y);
    Term t{x.neg != y.neg, x.sig * y.sig, x.exp + y.exp, x.e + y.e};
    if (k.scale == MmaScale::product) {
      const Operand &p = in.SA(i), &q = in.SB(i);
      if (p.nan || q.nan) sp.nan = true;
      t.sig *= p.sig * q.sig;
      t.exp += p.exp + q.exp;
      t.e += p.e + q.e;
    }
    if (t.sig == 0) t.e = e_zero;
    terms.push_back(t);
  }
  const Operand co = operand(c, in.s.c);
  sp.addend(co);
  if (sp.any()) return special_result(sp, in.s.c, k.nan);
  terms.push_back(c_term(co, e_zero));
  return fdpa_step(terms, in.s.c, k);
}

// §38.4 a step with scale=group: products summed exactly per group of G, then scaled.
MmaResult step_groups(const Inputs& in, std::size_t k0, std::size_t k1, std::uint32_t c, const MmaKnobs& k,
                      std::vector<Term>& terms) {
  const Format& fa = format(mma_type(in.s.a).format);
  const Format& fb = format(mma_type(in.s.b).format);
  const int u0 = fa.qmin() + fb.qmin();  // every product is an integer multiple of 2^u0
  const std::size_t G = static_cast<std::size_t>(k.group);
  Specials sp;
  terms.clear();
  for (std::size_t g0 = k0; g0 < k1; g0 += G) {
    std::int64_t P = 0;
    bool all_zero = true;
    for (std::size_t i = g0; i < std::min(g0 + G, k1); ++i) {
      const Operand &x = in.A(i), &y = in.B(i);
      sp.product(x, y);
      if (x.nan || y.nan || x.inf || y.inf) continue;
      const std::uint64_t n = x.sig * y.sig;
      if (n == 0) continue;
      all_zero = false;
      const std::int64_t v = static_cast<std::int64_t>(n << (x.exp + y.exp - u0));
      P += (x.neg != y.neg) ? -v : v;
    }
    const Operand &p = in.SA(g0), &q = in.SB(g0);
    if (p.nan || q.nan) sp.nan = true;
    const std::uint64_t ss = p.sig * q.sig;
    const std::uint64_t mag = static_cast<std::uint64_t>(P < 0 ? -P : P);
    Term t{P < 0, mag * ss, u0 + p.exp + q.exp, p.e + q.e};
    if (all_zero || ss == 0) {
      t.sig = 0;
      t.e = k.e_zero;
    }
    terms.push_back(t);
  }
  const Operand co = operand(c, in.s.c);
  sp.addend(co);
  if (sp.any()) return special_result(sp, in.s.c, k.nan);
  terms.push_back(c_term(co, k.e_zero));
  return fdpa_step(terms, in.s.c, k);
}

// floor(v / 2^s) for s >= 0 (toward −∞: an arithmetic shift), v · 2^-s for s < 0; `dropped` is set
// when a non-zero bit is discarded.
__int128 floor_shift(__int128 v, int s, bool& dropped) {
  if (s <= 0) {
    if (-s > 60) throw std::logic_error("mma: two-level shift exceeds 60 bits");
    return v * (static_cast<__int128>(1) << -s);
  }
  if (s >= 120) {
    if (v != 0) dropped = true;
    return v < 0 ? -1 : 0;
  }
  const __int128 q = v >> s;  // arithmetic: toward −∞
  if ((q << s) != v) dropped = true;
  return q;
}

// §38.7 / §38.8 One step of the two-level models (MMA-Sim's TR-FDPA and GTR-FDPA).
MmaResult step_two_level(const Inputs& in, std::size_t k0, std::size_t k1, std::uint32_t c, const MmaKnobs& k,
                         bool gtr) {
  const int F = k.align, F2 = k.align2;
  Specials sp;
  struct Level1 {  // the truncated sum of a set of products: T · 2^(E − F)
    bool any = false;
    int E = 0;
    __int128 T = 0;
  };
  bool dropped = false;
  // a set of products (all, or the even / odd positions of the step): E = max e, terms truncated
  const auto level1 = [&](int parity) {
    Level1 r;
    for (std::size_t i = k0; i < k1; ++i) {
      if (parity >= 0 && static_cast<int>((i - k0) % 2) != parity) continue;
      const Operand &x = in.A(i), &y = in.B(i);
      if (x.nan || y.nan || x.inf || y.inf || x.sig == 0 || y.sig == 0) continue;
      const int e = x.e + y.e;
      r.E = r.any ? std::max(r.E, e) : e;
      r.any = true;
    }
    if (!r.any) return r;
    for (std::size_t i = k0; i < k1; ++i) {
      if (parity >= 0 && static_cast<int>((i - k0) % 2) != parity) continue;
      const Operand &x = in.A(i), &y = in.B(i);
      if (x.nan || y.nan || x.inf || y.inf || x.sig == 0 || y.sig == 0) continue;
      const std::uint64_t n = x.sig * y.sig;
      const int sh = (x.exp + y.exp) - (r.E - F);
      std::uint64_t v;
      if (sh >= 0) {
        v = n << sh;
      } else if (-sh >= 64) {
        v = 0;
        dropped = true;
      } else {
        v = n >> -sh;
        if ((v << -sh) != n) dropped = true;
      }
      r.T += (x.neg != y.neg) ? -static_cast<__int128>(v) : static_cast<__int128>(v);
    }
    return r;
  };
  // specials (§38.5 as §37), and §38.7's overflow: a product whose significand product s and
  // exponent e give (|s| >= 2 ? e + 1 : e) >= 128 is an infinity of its sign
  for (std::size_t i = k0; i < k1; ++i) {
    const Operand &x = in.A(i), &y = in.B(i);
    sp.product(x, y);
    if (x.nan || y.nan || x.inf || y.inf || x.sig == 0 || y.sig == 0 || gtr) continue;
    const std::uint64_t n = x.sig * y.sig;
    const int e = x.e + y.e, xs = x.exp + y.exp;
    const int two = e - xs + 1;  // |s| >= 2  <=>  n >= 2^two
    const bool ge2 = two <= 0 || (two < 64 && n >= (std::uint64_t{1} << two));
    if ((ge2 ? e + 1 : e) >= 128) (x.neg != y.neg ? sp.neg_inf : sp.pos_inf) = true;
  }
  Operand co = operand(c, in.s.c);
  if (gtr && (co.nan || co.inf)) {
    // §38.8 a NaN or infinite C has the alignment exponent −1; like any C it is dropped when it
    // lies more than F + 1 binades below the products (e_max > F): the step then sums the products
    const bool saved = dropped;
    const Level1 all = level1(-1);
    dropped = saved;  // the look-ahead discards nothing
    if (all.any && all.E > F) co = Operand{};
  }
  sp.addend(co);
  if (sp.any()) return special_result(sp, in.s.c, k.nan);

  Level1 d;
  if (!gtr) {
    d = level1(-1);
  } else {  // §38.8 two halves, each floored to F bits below their larger exponent
    const Level1 ev = level1(0), od = level1(1);
    if (ev.any || od.any) {
      d.any = true;
      d.E = !ev.any ? od.E : !od.any ? ev.E : std::max(ev.E, od.E);
      d.T =
          (ev.any ? floor_shift(ev.T, d.E - ev.E, dropped) : 0) + (od.any ? floor_shift(od.T, d.E - od.E, dropped) : 0);
    }
  }
  const Format& f = acc_format(in.s.c);
  const int e_c = co.sig ? co.e : f.emin();  // a zero C takes part with the binary32 emin
  const int e_max = d.any ? std::max(d.E, e_c) : e_c;
  const int unit = e_max - F2 - 1;  // the sum's unit 2^(e_max − F2 − 1)
  const __int128 Sd = d.any ? floor_shift(d.T, unit - (d.E - F), dropped) : 0;
  __int128 Sc = 0;
  if (co.sig != 0 && !(gtr && e_c < e_max - F - 1)) {
    const __int128 cs = co.neg ? -static_cast<__int128>(co.sig) : static_cast<__int128>(co.sig);
    Sc = floor_shift(cs, (e_max - F) - co.exp, dropped) * (static_cast<__int128>(1) << (F2 + 1 - F));
  } else if (co.sig != 0) {
    dropped = true;  // §38.8 a C far below the products is dropped
  }
  const __int128 W = Sd + Sc;
  std::uint8_t flags = dropped ? kInexact : 0;
  if (W == 0) return {0u, flags};  // an exact zero sum is +0 (zero=rounded, zero=plus)
  // normalised with the binary32 emin, floored to F2 fraction bits, then rounded to nearest
  const bool neg = W < 0;
  const unsigned __int128 mag = neg ? static_cast<unsigned __int128>(-W) : static_cast<unsigned __int128>(W);
  int bl = 0;
  for (unsigned __int128 t = mag; t; t >>= 1) ++bl;
  const int EV = std::max(unit + bl - 1, f.emin());
  const __int128 W2 = floor_shift(W, (EV - F2) - unit, dropped);
  flags = dropped ? kInexact : 0;
  if (W2 == 0) return {0u, flags};
  const bool neg2 = W2 < 0;
  const unsigned __int128 m2 = neg2 ? static_cast<unsigned __int128>(-W2) : static_cast<unsigned __int128>(W2);
  if (m2 >> 63) throw std::logic_error("mma: two-level sum exceeds 63 bits");
  const Result r = round_finite(Exact{neg2, static_cast<std::uint64_t>(m2), EV - F2, false}, f, Policy{});
  std::uint32_t bits = r.bits;
  if ((bits & f.mag_mask()) == 0 && k.zero == MmaZero::plus) bits = 0;  // zero=rounded keeps the sign
  return {bits, static_cast<std::uint8_t>(flags | r.flags)};
}

// A signed dyadic addend ±sig · 2^exp.
struct Addend {
  bool neg;
  std::uint64_t sig;
  int exp;
};

// §37, §40 The exact sum of the addends rounded once into f by §4.2 (rne, overflow to ±Inf). An
// exact zero sum is +0 (the callers decide the signed zeros of all-zero addends before).
MmaResult rne_sum(std::span<const Addend> add, const Format& f) {
  int xmin = 0, xmax = 0;
  bool any = false;
  for (const Addend& t : add)
    if (t.sig != 0) {
      xmin = any ? std::min(xmin, t.exp) : t.exp;
      xmax = any ? std::max(xmax, t.exp + detail::bit_length(t.sig)) : t.exp + detail::bit_length(t.sig);
      any = true;
    }
  if (!any) return {0u, 0};
  // In 128 bits when every addend fits below bit 120 after alignment (the usual case: products of
  // 8- and 16-bit operands and a nearby c), else in BigUInts: the same value.
  if (xmax - xmin + detail::bit_length(add.size()) < 126) {
    __int128 acc = 0;
    for (const Addend& t : add)
      if (t.sig != 0) {
        const __int128 v = static_cast<__int128>(static_cast<unsigned __int128>(t.sig) << (t.exp - xmin));
        acc += t.neg ? -v : v;
      }
    if (acc == 0) return {0u, 0};
    const bool negative = acc < 0;
    unsigned __int128 m = negative ? static_cast<unsigned __int128>(-acc) : static_cast<unsigned __int128>(acc);
    // to 64 significant bits and a sticky bit for the rounding core (§4.4)
    int shift = 0;
    while ((m >> 64) != 0) {
      m = (m >> 1) | (m & 1);  // keep a dropped 1 as the sticky lowest bit
      ++shift;
    }
    const Result r = round_finite(Exact{negative, static_cast<std::uint64_t>(m), xmin + shift, false}, f, Policy{});
    return {r.bits, r.flags};
  }
  BigUInt pos, neg;
  for (const Addend& t : add)
    if (t.sig != 0) (t.neg ? neg : pos) += BigUInt(t.sig) << (t.exp - xmin);
  if (pos == neg) return {0u, 0};
  const bool negative = pos < neg;
  const Result r = round_finite(ratio_exact(negative, negative ? neg - pos : pos - neg, xmin, BigUInt(1)), f, Policy{});
  return {r.bits, r.flags};
}

// §37 The ideal result: the exact c + Σ products (with scales), rounded once (rne).
MmaResult ideal(const Inputs& in, std::size_t K, std::uint32_t c) {
  Specials sp;
  std::vector<Addend> add;
  add.reserve(K + 1);
  bool all_neg_zero = true;
  for (std::size_t i = 0; i < K; ++i) {
    const Operand &x = in.A(i), &y = in.B(i);
    sp.product(x, y);
    Addend t{x.neg != y.neg, x.sig * y.sig, x.exp + y.exp};
    if (in.scaled()) {
      const Operand &p = in.SA(i), &q = in.SB(i);
      if (p.nan || q.nan) sp.nan = true;
      t.neg = t.neg != (p.neg != q.neg);
      t.sig *= p.sig * q.sig;
      t.exp += p.exp + q.exp;
    }
    if (t.sig != 0 || !t.neg) all_neg_zero = false;
    add.push_back(t);
  }
  const Operand co = operand(c, in.s.c);
  sp.addend(co);
  if (sp.any()) return special_result(sp, in.s.c, MmaNan::canonical);
  if (co.sig != 0 || !co.neg) all_neg_zero = false;
  add.push_back(Addend{co.neg, co.sig, co.exp});
  if (all_neg_zero) return {encode_zero(true, acc_format(in.s.c)), 0};
  return rne_sum(add, acc_format(in.s.c));  // an exact zero sum of non-zero addends is +0 under rne
}

// §38.9 / §38.10 Exact steps: d = c; for each step of L products in order d = RN(Σ products + d)
// (the products exact, with their block scales under scale=product, the sum rounded once by
// §4.2 into C's format). L = 1 is the FMA chain (§38.9). Specials per step as IEEE 754 with the
// NaN of the knob `nan`, signed zeros by the knob `zero` applied to each step.
MmaResult exact_steps(const Inputs& in, std::size_t K, std::uint32_t c, const MmaKnobs& k, std::size_t L) {
  const Format& f = acc_format(in.s.c);
  std::uint8_t flags = 0;
  std::vector<Addend> add;
  for (std::size_t k0 = 0; k0 < K; k0 += L) {
    const std::size_t k1 = std::min(K, k0 + L);
    const Operand co = operand(c, in.s.c);
    Specials sp;
    add.clear();
    bool all_zero = co.sig == 0, all_neg = co.neg;
    for (std::size_t i = k0; i < k1; ++i) {
      const Operand &x = in.A(i), &y = in.B(i);
      sp.product(x, y);
      Addend p{x.neg != y.neg, x.sig * y.sig, x.exp + y.exp};
      if (k.scale == MmaScale::product && in.scaled()) {
        const Operand &sa = in.SA(i), &sb = in.SB(i);
        if (sa.nan || sb.nan) sp.nan = true;
        p.neg = p.neg != (sa.neg != sb.neg);
        p.sig *= sa.sig * sb.sig;
        p.exp += sa.exp + sb.exp;
      }
      all_zero = all_zero && p.sig == 0;
      all_neg = all_neg && p.neg;
      add.push_back(p);
    }
    sp.addend(co);
    if (sp.any()) {
      const MmaResult r = special_result(sp, in.s.c, k.nan);
      c = r.bits;
      flags |= r.flags;
      continue;
    }
    if (all_zero) {  // IEEE 754 §6.3 (zero=ieee): −0 only when every addend is −0
      c = (k.zero == MmaZero::ieee && all_neg) ? encode_zero(true, f) : 0u;
      continue;
    }
    add.push_back(Addend{co.neg, co.sig, co.exp});
    const MmaResult r = rne_sum(add, f);  // an exact zero sum of non-zero addends is +0 (rne)
    c = r.bits;
    if (k.zero == MmaZero::plus && (c & f.mag_mask()) == 0) c = 0;  // zero=plus
    flags |= r.flags;
  }
  return {c, flags};
}

// §38.11 flush: a binary32 code of magnitude below 2^-126 becomes the zero of its sign.
std::uint32_t flush32(std::uint32_t x) { return (x & 0x7F800000u) == 0 ? (x & 0x80000000u) : x; }

// §38.11 an operand of magnitude below its format's smallest normal (a zero or a subnormal) is +0.
Operand flushed_operand(const Operand& x) { return (!x.nan && !x.inf && (x.sig == 0 || x.sub)) ? Operand{} : x; }

// §38.11 IEEE 754 binary32 addition (rne, overflow to ±Inf) of two binary32 codes, the NaN by the
// knob `nan`, the result flushed.
std::uint32_t ftz_add(std::uint32_t x, std::uint32_t y, MmaNan nan, std::uint8_t& flags) {
  const Operand a = operand(x, MmaType::f32), b = operand(y, MmaType::f32);
  Specials sp;
  sp.addend(a);
  sp.addend(b);
  if (sp.any()) {
    const MmaResult r = special_result(sp, MmaType::f32, nan);
    flags |= r.flags;
    return r.bits;
  }
  if (a.sig == 0 && b.sig == 0) return a.neg && b.neg ? 0x80000000u : 0u;  // −0 + −0 = −0, else +0
  const Addend add[] = {{a.neg, a.sig, a.exp}, {b.neg, b.sig, b.exp}};
  const MmaResult r = rne_sum(add, acc_format(MmaType::f32));  // an exact zero sum is +0
  flags |= r.flags;
  return flush32(r.bits);
}

// §38.11 The flush-to-zero multiply-add: per step, the binary32 products of the flushed operands,
// flushed, added in a balanced tree of binary32 additions, then added to the accumulator.
MmaResult ftz_steps(const Inputs& in, std::size_t K, std::uint32_t c, const MmaKnobs& k, std::size_t L) {
  std::uint8_t flags = 0;
  if ((c & 0x7F800000u) == 0) c = 0u;  // C below 2^-126 (a zero or a subnormal) is +0
  std::vector<std::uint32_t> level;
  for (std::size_t k0 = 0; k0 < K; k0 += L) {
    const std::size_t k1 = std::min(K, k0 + L);
    level.clear();
    for (std::size_t i = k0; i < k1; ++i) {
      const Operand x = flushed_operand(in.A(i)), y = flushed_operand(in.B(i));
      Specials sp;
      sp.product(x, y);
      if (sp.any()) {
        const MmaResult r = special_result(sp, MmaType::f32, k.nan);
        flags |= r.flags;
        level.push_back(r.bits);
        continue;
      }
      const bool neg = x.neg != y.neg;
      if (x.sig == 0 || y.sig == 0) {
        level.push_back(neg ? 0x80000000u : 0u);  // a zero product has the sign of the exclusive or
        continue;
      }
      const Addend p[] = {{neg, x.sig * y.sig, x.exp + y.exp}};
      const MmaResult r = rne_sum(p, acc_format(MmaType::f32));
      flags |= r.flags;
      level.push_back(flush32(r.bits));
    }
    while (level.size() > 1) {  // adjacent pairs, an unpaired last one carried to the next round
      std::size_t n = 0;
      for (std::size_t j = 0; j < level.size(); j += 2)
        level[n++] = j + 1 < level.size() ? ftz_add(level[j], level[j + 1], k.nan, flags) : level[j];
      level.resize(n);
    }
    c = ftz_add(c, level[0], k.nan, flags);
  }
  return {c, flags};
}

}  // namespace

namespace {
// One dot product from decoded operands (§38.1 steps, or §37).
MmaResult dot(const Inputs& in, std::size_t K, std::uint32_t c, std::vector<Term>& terms) {
  const MmaSpec& s = in.s;
  const MmaKnobs& k = s.model();
  if (k.algo == MmaAlgo::ideal) return ideal(in, K, c);
  const std::size_t L = mma_fused(s);
  if (L == 0) throw std::invalid_argument("mma: the model fuses no products (fused_bytes)");
  if (k.algo == MmaAlgo::fma || k.algo == MmaAlgo::efdpa) return exact_steps(in, K, c, k, L);
  if (k.algo == MmaAlgo::ftz) return ftz_steps(in, K, c, k, L);
  std::uint8_t flags = 0;
  for (std::size_t k0 = 0; k0 < K; k0 += L) {
    const std::size_t k1 = std::min(K, k0 + L);
    const MmaResult r = k.algo == MmaAlgo::tr_fdpa || k.algo == MmaAlgo::gtr_fdpa
                            ? step_two_level(in, k0, k1, c, k, k.algo == MmaAlgo::gtr_fdpa)
                        : k.scale == MmaScale::group ? step_groups(in, k0, k1, c, k, terms)
                                                     : step_products(in, k0, k1, c, k, terms);
    c = r.bits;
    flags |= r.flags;
  }
  return {c, flags};
}

std::vector<Operand> decode_all(const std::uint32_t* p, std::size_t n, std::size_t stride, MmaType t) {
  std::vector<Operand> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = operand(p[i * stride], t);
  return out;
}
}  // namespace

MmaResult mma_dot(const MmaSpec& s, std::size_t K, const std::uint32_t* a, std::size_t as, const std::uint32_t* b,
                  std::size_t bs, std::uint32_t c, const std::uint32_t* sa, std::size_t sas, const std::uint32_t* sb,
                  std::size_t sbs) {
  const std::vector<Operand> A = decode_all(a, K, as, s.a), B = decode_all(b, K, bs, s.b);
  const std::size_t nb = s.block ? (K + static_cast<std::size_t>(s.block) - 1) / static_cast<std::size_t>(s.block) : 0;
  const std::vector<Operand> SA = nb ? decode_all(sa, nb, sas, s.scale) : std::vector<Operand>{};
  const std::vector<Operand> SB = nb ? decode_all(sb, nb, sbs, s.scale) : std::vector<Operand>{};
  std::vector<Term> terms;
  return dot(Inputs{s, A.data(), B.data(), SA.data(), SB.data()}, K, c, terms);
}

namespace {
// §36.1 / §36.3 The shapes checked and the operands decoded once: A's rows and B's columns, each
// contiguous along K, with their scales; at(i, j) is the dot product of row i and column j.
struct MatrixOperands {
  const MmaSpec& s;
  std::size_t K = 0, nb = 0;
  std::vector<Operand> A, Bt, SA, SBt;
  MatrixOperands(const MmaSpec& spec, std::size_t M, std::size_t N, std::size_t K_, std::span<const std::uint32_t> a,
                 std::span<const std::uint32_t> b, std::span<const std::uint32_t> c, std::span<const std::uint32_t> d,
                 std::span<const std::uint32_t> scale_a, std::span<const std::uint32_t> scale_b,
                 std::span<const std::uint8_t> flags)
      : s(spec), K(K_), nb(spec.block ? K_ / static_cast<std::size_t>(spec.block) : 0) {
    if (a.size() != M * K || b.size() != K * N || c.size() != M * N || d.size() != M * N)
      throw std::invalid_argument("mma: the shapes of A, B, C and D do not match M, N, K");
    if (s.block && (scale_a.size() != M * nb || scale_b.size() != nb * N))
      throw std::invalid_argument("mma: the block scales do not have M × K/block and K/block × N elements");
    if (!flags.empty() && flags.size() != M * N) throw std::invalid_argument("mma: flags must have M × N elements");
    A = decode_all(a.data(), M * K, 1, s.a);
    SA = nb ? decode_all(scale_a.data(), M * nb, 1, s.scale) : std::vector<Operand>{};
    Bt.resize(N * K);
    SBt.resize(N * nb);
    for (std::size_t j = 0; j < N; ++j) {
      for (std::size_t k = 0; k < K; ++k) Bt[j * K + k] = operand(b[k * N + j], s.b);
      for (std::size_t k = 0; k < nb; ++k) SBt[j * nb + k] = operand(scale_b[k * N + j], s.scale);
    }
  }
  // The inputs of element (i, j) from element k0 of K on (k0 a multiple of the block).
  Inputs at(std::size_t i, std::size_t j, std::size_t k0 = 0) const {
    const std::size_t kb = s.block ? k0 / static_cast<std::size_t>(s.block) : 0;
    return Inputs{s, A.data() + i * K + k0, Bt.data() + j * K + k0, nb ? SA.data() + i * nb + kb : nullptr,
                  nb ? SBt.data() + j * nb + kb : nullptr};
  }
};
}  // namespace

void mma(const MmaSpec& s, std::size_t M, std::size_t N, std::size_t K, std::span<const std::uint32_t> A,
         std::span<const std::uint32_t> B, std::span<const std::uint32_t> C, std::span<std::uint32_t> D,
         std::span<const std::uint32_t> scale_a, std::span<const std::uint32_t> scale_b,
         std::span<std::uint8_t> flags) {
  validate(s, K);
  const MatrixOperands dec(s, M, N, K, A, B, C, D, scale_a, scale_b, flags);
  std::vector<Term> terms;
  terms.reserve(mma_fused(s) + 1);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      const MmaResult r = dot(dec.at(i, j), K, C[i * N + j], terms);
      D[i * N + j] = r.bits;
      if (!flags.empty()) flags[i * N + j] = r.flags;
    }
}

// ---- §40 the GEMM level ------------------------------------------------------------------------

void validate(const MmaSpec& s, const GemmOptions& g, std::size_t K) {
  validate(s, K);
  const std::size_t blk = s.block ? static_cast<std::size_t>(s.block) : 1;
  if (g.split_k == 0) throw std::invalid_argument("mma: split_k must be at least 1");
  if (g.split_k > 1) {
    if (K % g.split_k != 0 || (K / g.split_k) % blk != 0)
      throw std::invalid_argument("mma: split_k = " + std::to_string(g.split_k) +
                                  " does not cut K = " + std::to_string(K) + " into equal slices of whole blocks");
  }
  if (!g.promote_sa.empty() || !g.promote_sb.empty()) {
    if (g.promote == 0) throw std::invalid_argument("mma: promotion scales need promote");
    if (g.split_k != 1) throw std::invalid_argument("mma: promotion scales take no split_k");
    if (K % g.promote != 0)
      throw std::invalid_argument("mma: with promotion scales K = " + std::to_string(K) +
                                  " must be a multiple of promote = " + std::to_string(g.promote));
  }
  if (g.promote != 0) {
    const std::size_t step = std::max<std::size_t>(mma_fused(s), 1);
    if (s.c != MmaType::f32) throw std::invalid_argument("mma: promotion accumulates in binary32: C must be f32");
    if (g.promote % step != 0 || g.promote % blk != 0)
      throw std::invalid_argument("mma: promote = " + std::to_string(g.promote) +
                                  " is not a multiple of the model's step (" + std::to_string(step) +
                                  " products) and of the block");
  }
}

namespace {
// §40.1 / §40.2 the binary32 (or binary16) sum RN(x + y) of two accumulator codes.
MmaResult add_acc(std::uint32_t x, std::uint32_t y, MmaType c) {
  const Format& f = acc_format(c);
  const Operand a = operand(x, c), b = operand(y, c);
  Specials sp;
  sp.addend(a);
  sp.addend(b);
  if (sp.any()) return special_result(sp, c, MmaNan::canonical);
  if (a.sig == 0 && b.sig == 0) return {(a.neg && b.neg) ? encode_zero(true, f) : 0u, 0};
  const Addend add[] = {{a.neg, a.sig, a.exp}, {b.neg, b.sig, b.exp}};
  return rne_sum(add, f);
}

// §40.5 RN32(r + RN32(a · b) · q) for binary32 codes: the scale product rounded, then one fused
// multiply-add (IEEE 754 fusedMultiplyAdd: the product exact, the sum rounded once).
MmaResult scaled_add(std::uint32_t r, std::uint32_t a, std::uint32_t b, std::uint32_t q) {
  const Format& f = format(FormatId::f32);
  const Operand oa = operand(a, MmaType::f32), ob = operand(b, MmaType::f32);
  Specials s1;
  s1.product(oa, ob);
  std::uint32_t scale;
  std::uint8_t flags = 0;
  if (s1.any()) {
    const MmaResult sr = special_result(s1, MmaType::f32, MmaNan::canonical);
    scale = sr.bits;
    flags |= sr.flags;
  } else if (oa.sig == 0 || ob.sig == 0) {
    scale = (oa.neg != ob.neg) ? 0x80000000u : 0u;
  } else {
    const Result p = round_finite(Exact{oa.neg != ob.neg, oa.sig * ob.sig, oa.exp + ob.exp, false}, f, Policy{});
    scale = p.bits;
    flags |= p.flags;
  }
  const Operand os = operand(scale, MmaType::f32), oq = operand(q, MmaType::f32), orr = operand(r, MmaType::f32);
  Specials sp;
  sp.product(os, oq);
  sp.addend(orr);
  if (sp.any()) {
    const MmaResult sr = special_result(sp, MmaType::f32, MmaNan::canonical);
    return {sr.bits, static_cast<std::uint8_t>(flags | sr.flags)};
  }
  const bool pneg = os.neg != oq.neg;
  const std::uint64_t psig = os.sig * oq.sig;  // 24 x 24 bits
  if (psig == 0 && orr.sig == 0)               // IEEE 754 §6.3: −0 only when both addends are −0
    return {(pneg && orr.neg) ? 0x80000000u : 0u, flags};
  const Addend add[] = {{pneg, psig, os.exp + oq.exp}, {orr.neg, orr.sig, orr.exp}};
  const MmaResult res = rne_sum(add, f);
  return {res.bits, static_cast<std::uint8_t>(flags | res.flags)};
}
}  // namespace

void gemm(const MmaSpec& s, const GemmOptions& g, std::size_t M, std::size_t N, std::size_t K,
          std::span<const std::uint32_t> A, std::span<const std::uint32_t> B, std::span<const std::uint32_t> C,
          std::span<std::uint32_t> D, std::span<const std::uint32_t> scale_a, std::span<const std::uint32_t> scale_b,
          std::span<std::uint8_t> flags) {
  validate(s, g, K);
  if (g.split_k == 1 && g.promote == 0) {  // neither: the instruction chain of §38.1 over all of K
    mma(s, M, N, K, A, B, C, D, scale_a, scale_b, flags);
    return;
  }
  const MatrixOperands dec(s, M, N, K, A, B, C, D, scale_a, scale_b, flags);
  const std::size_t slice = K / g.split_k;
  const std::size_t chunk = g.promote ? g.promote : slice;
  const bool scaled = !g.promote_sa.empty();
  const std::size_t nc = g.promote ? K / g.promote : 0;
  if (scaled && (g.promote_sa.size() != M * nc || g.promote_sb.size() != nc * N))
    throw std::invalid_argument("mma: the promotion scales do not have M × K/promote and K/promote × N elements");
  std::vector<Term> terms;
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      std::uint8_t fl = 0;
      std::uint32_t total = C[i * N + j];
      for (std::size_t s0 = 0; s0 < K; s0 += slice) {
        // §40.2 a slice's partial sum P, computed from +0: by the model over the whole slice, or
        // (§40.1) as the binary32 sum of its promoted chunks, each computed by the model from +0
        std::uint32_t part = 0;
        for (std::size_t k0 = s0; k0 < s0 + slice; k0 += chunk) {
          const std::size_t len = std::min(chunk, s0 + slice - k0);
          MmaResult r = dot(dec.at(i, j, k0), len, 0u, terms);
          fl |= r.flags;
          if (scaled) {  // §40.5
            const std::size_t t = k0 / g.promote;
            r = scaled_add(part, g.promote_sa[i * nc + t], g.promote_sb[t * N + j], r.bits);
            fl |= r.flags;
          } else if (g.promote) {
            r = add_acc(part, r.bits, s.c);
            fl |= r.flags;
          }
          part = r.bits;
        }
        const MmaResult r = add_acc(total, part, s.c);  // §40.2 in slice order, starting from c
        fl |= r.flags;
        total = r.bits;
      }
      D[i * N + j] = total;
      if (!flags.empty()) flags[i * N + j] = fl;
    }
}

}  // namespace numref
