// numref mma — D = A·B + C under an instruction profile (spec §36 – §39): .npy in and out,
// the §9 flags per element; --profiles prints the profile table.
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_common.hpp"
#include "numref/conform/output.hpp"
#include "numref/convert.hpp"
#include "numref/profiles.hpp"
#include "numref/quantize.hpp"
#include "numref/metrics.hpp"
#include "numref/mma.hpp"
#include "numref/npy.hpp"
#include "numref/tensor.hpp"

namespace numref::cli::cmd_mma {
namespace {

constexpr const char* kUsage =
    "usage: numref mma --profile P --a A.npy --b B.npy [--c C.npy] --out D.npy [--flags F.npy]\n"
    "                  [--a-type T] [--b-type T] [--c-type f32|f16]\n"
    "                  [--block 16|32 --scale-type f8e8m0fnu|ue4m3 --scale-a SA.npy --scale-b SB.npy]\n"
    "                  [--model \"key=value ...\"] [--promote N [--promote-scale-a PA.npy --promote-scale-b PB.npy]]\n"
    "                  [--split-k S] [--recipe R [--recipe-format FORMAT]] [--backward-error BE.npy]\n"
    "                  [--epilogue FORMAT [--epilogue-profile P]]\n"
    "       numref mma --profiles [--markdown]\n"
    "       numref mma --knobs [--markdown]\n"
    "       numref mma --recipes [--markdown]";

// Appends a word to a space-separated list.
void append_word(std::string& s, std::string_view w) {
  if (!s.empty()) s += ' ';
  s.append(w);
}

std::string type_names() {
  std::string s;
  for (const MmaTypeInfo& t : mma_types()) append_word(s, t.name);
  return s;
}

MmaType type_arg(const std::string& v, const char* option) {
  const auto t = find_mma_type(v);
  if (!t) throw UsageError(std::string(option) + ": unknown operand type '" + v + "' (one of: " + type_names() + ")");
  return *t;
}

// An operand .npy: 2-D; <f4 / <u4 hold f32 or tf32 codes, <f2 f16, <u2 / V2 16-bit codes (bf16),
// |u1 / V1 8-bit and narrower codes. The type comes from --x-type or, for <f4 / <f2, the dtype.
struct Operand {
  std::vector<std::uint32_t> codes;
  std::size_t rows = 0, cols = 0;
  MmaType type = MmaType::f32;
};
Operand read_operand(const std::string& path, const char* option, std::optional<MmaType> named) {
  std::vector<std::uint8_t> bytes;
  const npy::Array arr = read_npy(path, bytes);
  Operand o;
  std::size_t item = npy::itemsize(arr.dtype);
  switch (arr.dtype) {
    case npy::Dtype::f4: o.type = named.value_or(MmaType::f32); break;
    case npy::Dtype::f2: o.type = named.value_or(MmaType::f16); break;
    case npy::Dtype::u4:
    case npy::Dtype::u2:
    case npy::Dtype::v2:
    case npy::Dtype::u1:
    case npy::Dtype::v1:
    case npy::Dtype::f1:
      if (!named)
        throw UsageError(path + ": dtype '" + std::string(npy::descr_of(arr.dtype)) +
                         "' holds codes; name their type with " + option + "-type");
      o.type = *named;
      break;
    default: throw UsageError(path + ": dtype '" + std::string(npy::descr_of(arr.dtype)) + "' is not an operand dtype");
  }
  const Format& f = format(mma_type(o.type).format);
  if (storage_bytes(f) != item)
    throw UsageError(path + ": " + std::string(mma_type(o.type).name) + " codes take " +
                     std::to_string(storage_bytes(f)) + " bytes but the file's items have " + std::to_string(item));
  if ((arr.dtype == npy::Dtype::f2 && o.type != MmaType::f16) ||
      (arr.dtype == npy::Dtype::f4 && o.type != MmaType::f32 && o.type != MmaType::tf32))
    throw UsageError(path + ": " + option + "-type " + std::string(mma_type(o.type).name) +
                     " does not match the file's dtype '" + std::string(npy::descr_of(arr.dtype)) + "'");
  if (arr.shape.size() != 2)
    throw UsageError(path + ": " + option + " must be a 2-D array, the file has " + std::to_string(arr.shape.size()) +
                     " dimensions");
  o.rows = arr.shape[0];
  o.cols = arr.shape[1];
  o.codes.resize(o.rows * o.cols);
  const std::uint8_t* p = bytes.data() + arr.data_offset;
  for (std::size_t i = 0; i < o.codes.size(); ++i) {
    std::uint32_t v = 0;
    std::memcpy(&v, p + i * item, item);
    if ((v & ~f.mask()) != 0)
      throw UsageError(path + ": element " + std::to_string(i) + " = 0x" + hex_code(v, format(FormatId::f32)) +
                       " has bits above the " + std::to_string(f.bits) + "-bit " + std::string(mma_type(o.type).name) +
                       " code");
    o.codes[i] = v;
  }
  return o;
}

// --model "key=value ..." on top of the profile's knobs (§38.6).
MmaKnobs parse_model(const std::string& text, MmaKnobs k) {
  const std::string err = apply_model_text(k, text);
  if (!err.empty()) throw UsageError("--model: " + err);
  return k;
}

// §40.6 --recipe R: A and B (binary32 / bf16 / f16 values) quantized by the recipe profile along K
// (numref::quantize_for_gemm), into --recipe-format (default f8e4m3fn).
RecipeGemmOperands quantize_for_recipe(const GemmRecipe& r, const Format& element, const Operand& A, const Operand& B) {
  std::vector<std::uint16_t> ha, hb;
  const auto view = [](const Operand& x, std::vector<std::uint16_t>& h, const char* option) {
    const Format& f = format(mma_type(x.type).format);
    if (mma_type(x.type).ignore_mask != 0 || (f.id != FormatId::f32 && f.id != FormatId::bf16 && f.id != FormatId::f16))
      throw UsageError(std::string(option) + ": --recipe quantizes binary32, bf16 or f16 values, not " +
                       std::string(mma_type(x.type).name) + " codes");
    if (f.bits == 32) return TensorView(f, x.codes.data(), x.rows, x.cols);
    h.assign(x.codes.begin(), x.codes.end());
    return TensorView(f, h.data(), x.rows, x.cols);
  };
  const TensorView va = view(A, ha, "--a"), vb = view(B, hb, "--b");
  try {
    return quantize_for_gemm(r, element, va, vb);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--recipe: ") + e.what());
  }
}

// §29.1 An operand's values as a tensor view: its codes in the storage of their format (1, 2 or 4
// bytes), the bits the type ignores (tf32, ue4m3) cleared.
TensorView operand_view(const Operand& x, std::vector<std::uint8_t>& storage) {
  const MmaTypeInfo& t = mma_type(x.type);
  const Format& f = format(t.format);
  const std::size_t w = f.bits <= 8 ? 1 : f.bits <= 16 ? 2 : 4;
  storage.resize(x.codes.size() * w);
  for (std::size_t i = 0; i < x.codes.size(); ++i) {
    const std::uint32_t c = x.codes[i] & ~t.ignore_mask;
    std::memcpy(storage.data() + i * w, &c, w);  // little-endian: the low bytes hold the code
  }
  return TensorView(f, storage.data(), x.rows, x.cols);
}

std::string recipe_names() {
  std::string s;
  for (const GemmRecipe& r : gemm_recipes()) append_word(s, r.profile);
  return s;
}

int print_recipes(bool md) {
  std::vector<std::vector<std::string>> rows;
  for (const GemmRecipe& r : gemm_recipes())
    rows.push_back({std::string(r.profile), std::string(r.a_partition), std::string(r.b_partition),
                    r.scales == GemmRecipeScales::block ? "the instruction's block scales" : "§40.5 promotion",
                    std::to_string(r.block), std::string(r.source)});
  print_table({"recipe", "A (M x K)", "B (K x N)", "scales", "block of K", "the GEMM it follows"}, rows, md);
  conform::check_stdout();
  return 0;
}

int print_profiles(bool md) {
  std::vector<std::vector<std::string>> rows;
  for (const MmaProfile& p : mma_profiles())
    rows.push_back({std::string(p.name), std::string(p.types), std::string(p.accumulators),
                    p.blocks.empty() ? "-" : std::string(p.scale_types) + " / " + std::string(p.blocks),
                    describe(p.knobs)});
  print_table({"profile", "A, B types", "C, D", "scales / blocks", "knobs (§38.6)"}, rows, md);
  conform::check_stdout();
  return 0;
}

int print_knobs(bool md) {
  std::vector<std::vector<std::string>> rows;
  for_each_knob_row(kMmaKnobs, [&](const auto& row) {
    rows.push_back({std::string(row.key), row.words.empty() ? "integer" : row.words_text(), std::string(row.clause)});
  });
  print_table({"knob", "values", "clause"}, rows, md);
  conform::check_stdout();
  return 0;
}

int run(Args& a) {
  if (a.flag("help")) {
    std::printf(
        "%s\n\n"
        "D = A·B + C, each element the dot product of spec §36 under an instruction profile (§39):\n"
        "'ideal' rounds the exact sum once (§37); the others follow the fused truncated\n"
        "dot-product-add steps of §38 with their knobs. A is M x K, B is K x N, C and D are M x N\n"
        "(C defaults to +0). Scaled kinds take --block, --scale-type and the scales: SA is\n"
        "M x K/block, SB is K/block x N. Operand types: %s (tf32: binary32 codes whose 13 low\n"
        "fraction bits are ignored; ue4m3: f8e4m3fn codes whose sign bit is ignored). D is <f4\n"
        "(f32) or <f2 (f16); --flags writes the §9 flags of each element (|u1).\n"
        "GEMM level (§40): --promote N adds the model's results over chunks of N elements of K\n"
        "into a binary32 accumulator (--promote-scale-a / -b: each chunk scaled by RN32(pa · pb) in one\n"
        "fused multiply-add, §40.5); --recipe R quantizes binary32 / bf16 / f16 A and B along K with\n"
        "the recipe profile R into --recipe-format (default f8e4m3fn) and uses its scales as R's\n"
        "GEMM does (§40.6: the instruction's block scales, or promotion; --recipes lists them);\n"
        "--split-k S adds S slices of K to C in order; --backward-error BE.npy writes the §29.1 backward\n"
        "error of D against A · B (the operands before a recipe quantizes them); --epilogue F\n"
        "converts D to format F under --epilogue-profile (a conversion profile, default ocp):\n"
        "D is then F's codes (|u1, <u2, <f2 or <f4).\n",
        kUsage, type_names().c_str());
    return 0;
  }
  if (a.flag("profiles")) {
    const bool md = a.flag("markdown");
    a.finish();
    return print_profiles(md);
  }
  if (a.flag("knobs")) {
    const bool md = a.flag("markdown");
    a.finish();
    return print_knobs(md);
  }
  if (a.flag("recipes")) {
    const bool md = a.flag("markdown");
    a.finish();
    return print_recipes(md);
  }
  const auto profile_name = a.opt("profile");
  const auto pa = a.opt("a"), pb = a.opt("b"), pc = a.opt("c"), out = a.opt("out"), flags_out = a.opt("flags"),
             be_out = a.opt("backward-error");
  const auto at = a.opt("a-type"), bt = a.opt("b-type"), ct = a.opt("c-type");
  const auto block = a.opt("block"), st = a.opt("scale-type"), psa = a.opt("scale-a"), psb = a.opt("scale-b");
  const auto model = a.opt("model");
  const auto promote = a.opt("promote"), split = a.opt("split-k"), epi = a.opt("epilogue"),
             epi_prof = a.opt("epilogue-profile"), ppa = a.opt("promote-scale-a"), ppb = a.opt("promote-scale-b"),
             recipe = a.opt("recipe"), recipe_format = a.opt("recipe-format");
  a.finish();
  if (!profile_name) throw UsageError("--profile is required\n" + std::string(kUsage));
  if (!pa || !pb || !out) throw UsageError("--a, --b and --out are required\n" + std::string(kUsage));
  const MmaProfile* prof = find_mma_profile(*profile_name);
  if (!prof) {
    std::string names;
    for (const MmaProfile& p : mma_profiles()) append_word(names, p.name);
    throw UsageError("--profile: unknown mma profile '" + *profile_name + "' (one of: " + names + ")");
  }
  MmaSpec s;
  s.profile = prof;
  if (model) s.knobs = parse_model(*model, prof->knobs);
  Operand A = read_operand(*pa, "--a", at ? std::optional(type_arg(*at, "--a-type")) : std::nullopt);
  Operand B = read_operand(*pb, "--b", bt ? std::optional(type_arg(*bt, "--b-type")) : std::nullopt);
  const Operand A0 = A, B0 = B;  // §29.1 the operands before a recipe's quantization
  RecipeGemmOperands rq;
  const GemmRecipe* grecipe = nullptr;
  if (recipe_format && !recipe) throw UsageError("--recipe-format needs --recipe");
  if (recipe) {  // §40.6 the operands quantized by the recipe, then its scales in the GEMM
    grecipe = find_gemm_recipe(*recipe);
    if (!grecipe)
      throw UsageError("--recipe: '" + *recipe + "' has no GEMM (recipes with one: " + recipe_names() +
                       "; `numref mma --recipes`)");
    if (ppa || ppb || block || st || psa || psb)
      throw UsageError("--recipe sets the scales; give no --promote-scale-a/-b, --block or --scale-*");
    if (promote)
      throw UsageError("--recipe " + *recipe + " sets the promotion (" +
                       (grecipe->scales == GemmRecipeScales::promote ? "every " + std::to_string(grecipe->block)
                                                                     : std::string("none: block scales")) +
                       "); give no --promote");
    rq = quantize_for_recipe(
        *grecipe, recipe_format ? format_arg(*recipe_format, "--recipe-format") : format(FormatId::f8e4m3fn), A, B);
    A.codes = rq.a;
    B.codes = rq.b;
    A.type = B.type = rq.element;
  }
  const std::size_t M = A.rows, K = A.cols, N = B.cols;
  if (B.rows != K)
    throw UsageError("--b: B must be K x N with K = " + std::to_string(K) + " (A's columns), the file has " +
                     std::to_string(B.rows) + " rows");
  s.a = A.type;
  s.b = B.type;
  s.c = ct ? type_arg(*ct, "--c-type") : MmaType::f32;
  std::vector<std::uint32_t> C(M * N, 0);
  if (pc) {
    const Operand Co = read_operand(*pc, "--c", ct ? std::optional(s.c) : std::nullopt);
    if (Co.rows != M || Co.cols != N)
      throw UsageError("--c: C must be M x N = " + std::to_string(M) + " x " + std::to_string(N) + ", the file is " +
                       std::to_string(Co.rows) + " x " + std::to_string(Co.cols));
    s.c = Co.type;
    C = Co.codes;
  }
  if (s.c != MmaType::f32 && s.c != MmaType::f16)
    throw UsageError("--c-type: the accumulator is f32 or f16, not " + std::string(mma_type(s.c).name));
  if (block || st || psa || psb) {
    if (!block || !psa || !psb) throw UsageError("block scales need --block, --scale-a and --scale-b together");
    s.block = static_cast<int>(parse_int(*block, 1, 1 << 20, "--block"));
    s.scale = st ? type_arg(*st, "--scale-type") : MmaType::f8e8m0fnu;
  }
  GemmOptions g;
  if (promote) g.promote = static_cast<std::size_t>(parse_int(*promote, 1, 1LL << 40, "--promote"));
  if (split) g.split_k = static_cast<std::size_t>(parse_int(*split, 1, 1LL << 40, "--split-k"));
  // §40.5 promotion scales: binary32 (<f4), M x K/promote and K/promote x N
  std::vector<std::uint32_t> PA, PB;
  if (ppa || ppb) {
    if (!ppa || !ppb) throw UsageError("promotion scales need --promote-scale-a and --promote-scale-b together");
    if (!promote) throw UsageError("--promote-scale-a / --promote-scale-b need --promote");
    const Operand Pa = read_operand(*ppa, "--promote-scale-a", MmaType::f32);
    const Operand Pb = read_operand(*ppb, "--promote-scale-b", MmaType::f32);
    const std::size_t nc = g.promote ? K / g.promote : 0;
    if (K % g.promote != 0 || Pa.rows != M || Pa.cols != nc || Pb.rows != nc || Pb.cols != N)
      throw UsageError("promotion scales: K must be a multiple of --promote, PA M x K/promote = " + std::to_string(M) +
                       " x " + std::to_string(nc) + " and PB K/promote x N = " + std::to_string(nc) + " x " +
                       std::to_string(N));
    PA = Pa.codes;
    PB = Pb.codes;
    g.promote_sa = PA;
    g.promote_sb = PB;
  }
  if (grecipe) {  // §40.6 the recipe's scales: the instruction's block scales, or promotion
    try {
      recipe_gemm_spec(*grecipe, rq, K, s, g);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--recipe: ") + e.what());
    }
  }
  try {
    validate(s, g, K);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(e.what()).substr(5));  // drop the "mma: " prefix; main() names the verb
  }
  // §40.4 the epilogue: D converted to a format under a conversion profile (§10, §11)
  const Format* epi_fmt = epi ? &format_arg(*epi, "--epilogue") : nullptr;
  if (epi_prof && !epi) throw UsageError("--epilogue-profile needs --epilogue");
  const Format& acc = format(mma_type(s.c).format);
  std::optional<Converter> epilogue;
  if (epi_fmt) {
    const auto pid = find_profile(epi_prof.value_or("ocp"));
    if (!pid)
      throw UsageError("--epilogue-profile: unknown profile '" + *epi_prof + "' (one of: " + profile_names() + ")");
    if (profile(*pid).recipe)
      throw UsageError("--epilogue-profile: " + *epi_prof + " is a quantization recipe, not a conversion profile");
    epilogue.emplace(acc, *epi_fmt, profile(*pid).for_cast(acc, *epi_fmt));
  }
  std::vector<std::uint32_t> SA, SB;
  if (grecipe && s.block) {
    SA = rq.sa;
    SB = rq.sb;
  } else if (s.block) {
    const Operand Sa = read_operand(*psa, "--scale-a", s.scale), Sb = read_operand(*psb, "--scale-b", s.scale);
    const std::size_t nb = K / static_cast<std::size_t>(s.block);
    if (Sa.rows != M || Sa.cols != nb || Sb.rows != nb || Sb.cols != N)
      throw UsageError("block scales: SA must be M x K/block = " + std::to_string(M) + " x " + std::to_string(nb) +
                       " and SB K/block x N = " + std::to_string(nb) + " x " + std::to_string(N));
    SA = Sa.codes;
    SB = Sb.codes;
  }
  std::vector<std::string> inputs = {*pa, *pb};
  for (const auto& p : {pc, psa, psb, ppa, ppb})
    if (p) inputs.push_back(*p);
  if (be_out && (pc || psa || psb || ppa || ppb))
    throw UsageError(
        "--backward-error compares D with A · B of the operands' values: give no --c, block scales or "
        "promotion scales (--recipe quantizes and scales the operands itself)");
  Outputs outs(inputs);
  conform::OutputFile& d_file = outs.add("--out", *out);
  conform::OutputFile* f_file = flags_out ? &outs.add("--flags", *flags_out) : nullptr;
  conform::OutputFile* be_file = be_out ? &outs.add("--backward-error", *be_out) : nullptr;
  if (f_file && conform::same_file(*out, *flags_out)) throw UsageError("--flags " + *flags_out + " is also --out");

  std::vector<std::uint32_t> D(M * N);
  std::vector<std::uint8_t> F(M * N);
  gemm(s, g, M, N, K, A.codes, B.codes, C, D, SA, SB, F);

  const std::vector<std::size_t> shape{M, N};
  if (epilogue) {
    for (std::size_t i = 0; i < D.size(); ++i) {
      const Result r = (*epilogue)(D[i]);
      D[i] = r.bits;
      F[i] |= r.flags;
    }
    const Format& ef = *epi_fmt;
    if (ef.id == FormatId::f32) {
      write_npy(d_file, npy::Dtype::f4, shape, D.data(), D.size() * 4);
    } else if (storage_bytes(ef) == 2) {
      std::vector<std::uint16_t> h(D.begin(), D.end());
      write_npy(d_file, ef.id == FormatId::f16 ? npy::Dtype::f2 : npy::Dtype::u2, shape, h.data(), h.size() * 2);
    } else {
      std::vector<std::uint8_t> b(D.begin(), D.end());
      write_npy(d_file, npy::Dtype::u1, shape, b.data(), b.size());
    }
  } else if (s.c == MmaType::f32) {
    write_npy(d_file, npy::Dtype::f4, shape, D.data(), D.size() * 4);
  } else {
    std::vector<std::uint16_t> h(D.begin(), D.end());
    write_npy(d_file, npy::Dtype::f2, shape, h.data(), h.size() * 2);
  }
  if (f_file) write_npy(*f_file, npy::Dtype::u1, shape, F.data(), F.size());
  std::optional<BackwardError> be;
  if (be_file) {  // §29.1 the backward error of D as written (its values widened exactly to binary32)
    const Format& df = epi_fmt ? *epi_fmt : format(mma_type(s.c).format);
    const Converter widen(df, format(FormatId::f32), Policy{});
    std::vector<std::uint32_t> d32(D.size());
    for (std::size_t i = 0; i < D.size(); ++i) d32[i] = widen(D[i]).bits;
    std::vector<std::uint8_t> la, lb;
    try {
      be = backward_error_of(operand_view(A0, la), operand_view(B0, lb), d32);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--backward-error: " + std::string(e.what()));
    }
    write_npy(*be_file, npy::Dtype::f4, shape, be->be.data(), be->be.size() * 4);
  }
  outs.commit_all();
  std::size_t raised = 0;
  for (const std::uint8_t f : F) raised += f != 0;
  std::string how;
  if (recipe)
    how += ", recipe " + *recipe + " (" + std::string(mma_type(rq.element).name) +
           (grecipe->scales == GemmRecipeScales::block ? ", block scales" : "") + ")";
  if (g.promote) how += ", promoted every " + std::to_string(g.promote) + (g.promote_sa.empty() ? "" : " with scales");
  if (g.split_k > 1) how += ", split-K " + std::to_string(g.split_k);
  if (epi_fmt) how += ", epilogue " + std::string(epi_fmt->name) + " (" + epi_prof.value_or("ocp") + ")";
  std::printf("mma: %s, %s x %s + %s, M x N x K = %zu x %zu x %zu%s: %zu element%s, %zu with flags\n",
              prof->name.data(), mma_type(s.a).name.data(), mma_type(s.b).name.data(), mma_type(s.c).name.data(), M, N,
              K, how.c_str(), D.size(), D.size() == 1 ? "" : "s", raised);
  if (be)
    std::printf(
        "backward error (§29.1): max %s, mean %s\n",
        (hex_code(be->max, format(FormatId::f32)) + " = " + compact_value(decode(be->max, format(FormatId::f32)), 24))
            .c_str(),
        (hex_code(be->mean, format(FormatId::f32)) + " = " + compact_value(decode(be->mean, format(FormatId::f32)), 24))
            .c_str());
  conform::check_stdout();
  return 0;
}

NUMREF_VERB("mma", "D = A·B + C under an MMA instruction profile (spec §36 – §39)", run);

}  // namespace
}  // namespace numref::cli::cmd_mma
