// numref conformance — golden vectors of the MoR families.                   spec §31.7
//
// A MoR file fixes every parameter but the shape in its header (the keys of the parameter
// text: src, transpose, scaling | blocks, threshold | recipe); each case line is the shape and
// the columns of MorParams' schema (mor.hpp). An exact error sum is 9 values of 16 hex digits
// separated by ':' — limb 0..4 of S (the sum is S · 2^-149), n, nonfinite_input,
// nonfinite_quant, zeros (§22.3). The comment of a case line decodes the decision, reason and
// mean, or the type map.
#include <algorithm>
#include <map>
#include <span>

#include "mor.hpp"
#include "numref/conform/vectors.hpp"

namespace numref::conform::mor {

namespace {

constexpr std::uint64_t kVectorSeed = 1;

std::string file_text(const std::vector<MorParamsPtr>& ps, const std::vector<std::vector<std::uint32_t>>& xs,
                      const std::string& coverage, std::uint64_t seed) {
  VectorFileCases f;
  f.coverage = coverage;
  f.seed = seed;
  for (std::size_t i = 0; i < ps.size(); ++i) f.cases.emplace_back(ps[i], xs[i]);
  return family(ps.front()->spec().kind).vector_file(f);
}

MorParamsPtr make(MorParams::Spec s) { return std::make_shared<const MorParams>(s); }

std::string part_file(const Partition& p) {
  std::string t = to_string(p);
  std::replace(t.begin(), t.end(), ':', '_');
  return t;
}

// Shapes of a file: ragged against the partition, and one exact multiple.
std::vector<std::pair<std::size_t, std::size_t>> shapes_for(const Partition& p) {
  if (p.block_rows == 0 || p.block_cols == 0) return {{6, 10}, {12, 7}};
  return {{p.block_rows * 2, p.block_cols * 2}, {p.block_rows * 2 + 3, p.block_cols + 1}};
}

// Cases j = 0, 1, ... of the generator for p (seed 1), two per shape.
void generated(MorParams::Spec s, std::vector<MorParamsPtr>& ps, std::vector<std::vector<std::uint32_t>>& xs) {
  for (const auto& [r, c] : shapes_for(s.part)) {
    s.rows = r;
    s.cols = c;
    const auto p = make(s);
    for (std::uint64_t j = 0; j < 3; ++j) {
      std::vector<std::uint32_t> in(static_cast<std::size_t>(p->layout().in));
      generate_case(*p, kVectorSeed, j, in.data());
      ps.push_back(p);
      xs.push_back(std::move(in));
    }
  }
}

// §26 near the threshold, constructed by hand. Per-tensor scaling with amax = 448 · 2^j
// makes the GAM scale 2^-j exactly (q_max / amax = 2^-j: group mantissa 1.0, §17.1), so an
// E4M3 value scaled by it stays exact (e = 0). 1.0625 = 1 + 2^-4 is the midpoint of the
// E4M3 neighbours 1 and 1.125 and rounds to even, 1 (§4.2): e = RN32(0.0625 / 1.0625) =
// RN32(1/17). With k such elements among n non-zero ones the mean is RN32(k · RN32(1/17) / n)
// (§23.1); k / n = 3/4 gives 3 / 68 = 0.04412 (to 4 digits), and 11/250 = 0.044 <= 3/68 <
// 0.045 = 9/200: accepted under the default threshold, rejected (reason threshold) under 11/250.
void near_threshold(std::vector<MorParamsPtr>& ps, std::vector<std::vector<std::uint32_t>>& xs) {
  const std::uint32_t k448 = 0x43E00000u, k1_0625 = 0x3F880000u, k1_5 = 0x3FC00000u, kOne = 0x3F800000u;
  struct T {
    std::size_t rows, cols;
    std::vector<std::uint32_t> x;  // element order
  };
  auto shifted = [](std::uint32_t c, int j) { return c == 0 ? c : c + (static_cast<std::uint32_t>(j) << 23); };
  std::vector<T> ts;
  // 2 x 4: 448, 3 x 1.0625, four zeros (-0 among them): n = 4, k = 3
  ts.push_back({2, 4, {k448, k1_0625, 0, k1_0625, 0x80000000u, 0, k1_0625, 0}});
  // 4 x 4 at amax 448 · 2^-10: 448, 1, -1.5 exact, 9 x ±1.0625 · 2^i (i = 0, -1, -2: still E4M3
  // normals after the scale), four zeros: n = 12, k = 9
  {
    // clang-format off
    std::vector<std::uint32_t> x = {k448, kOne, k1_5 | 0x80000000u, 0, k1_0625, shifted(k1_0625, -1), shifted(k1_0625, -2),
                                    0, k1_0625 | 0x80000000u, shifted(k1_0625, -1), shifted(k1_0625, -2) | 0x80000000u, 0,
                                    k1_0625, shifted(k1_0625, -1), shifted(k1_0625, -2), 0};
    // clang-format on
    for (auto& c : x) c = (c & 0x7FFFFFFFu) ? shifted(c, -10) : c;
    ts.push_back({4, 4, x});
  }
  for (const T& t : ts) {
    MorParams::Spec s;
    s.kind = Kind::tensor;
    s.src = &format(FormatId::f32);
    s.rows = t.rows;
    s.cols = t.cols;
    s.part = Partition::tensor();
    ps.push_back(make(s));
    xs.push_back(t.x);
  }
}

// The files of generated tensors: per file the source, the partition, and the threshold (mor)
// or the recipe (mor-sub); the name says all three (and -T for a transposed view).
void generated_files(Kind k, std::vector<VectorFileText>& out) {
  struct F {
    FormatId src;
    Partition part;
    Threshold t;
    bool transpose;
    SubtensorRecipe r;
  };
  using R = SubtensorRecipe;
  static const F tensor_files[] = {{FormatId::bf16, Partition::blocks(8, 8), {9, 200}, false, R::three_way},
                                   {FormatId::f32, Partition::tensor(), {9, 200}, false, R::three_way},
                                   {FormatId::bf16, Partition::per_row(), {9, 200}, true, R::three_way},
                                   {FormatId::f16, Partition::per_col(), {1, 32}, false, R::three_way},
                                   {FormatId::f32, Partition::blocks(4, 4), {1, 20}, false, R::three_way}};
  static const F sub_files[] = {{FormatId::bf16, Partition::blocks(8, 8), {}, false, R::three_way},
                                {FormatId::bf16, Partition::blocks(8, 8), {}, false, R::two_way},
                                {FormatId::f32, Partition::blocks(4, 8), {}, false, R::three_way},
                                {FormatId::f16, Partition::per_row(), {}, false, R::three_way}};
  const bool tensor = k == Kind::tensor;
  for (const F& f : tensor ? std::span<const F>(tensor_files) : std::span<const F>(sub_files)) {
    MorParams::Spec s;
    s.kind = k;
    s.src = &format(f.src);
    s.part = f.part;
    s.threshold = f.t;
    s.transpose = f.transpose;
    s.recipe = f.r;
    std::vector<MorParamsPtr> ps;
    std::vector<std::vector<std::uint32_t>> xs;
    generated(s, ps, xs);
    std::string t = f.t.to_string();
    std::replace(t.begin(), t.end(), '/', '_');
    out.push_back({std::string(kind_name(k)) + "/" + std::string(format(f.src).name) + "-" + part_file(f.part) +
                       (f.transpose ? "-T" : "") +
                       (tensor                ? "-t" + t
                        : f.r == R::three_way ? std::string("-three-way")
                                              : std::string("-two-way")) +
                       ".vec",
                   file_text(ps, xs,
                             "generated tensors (seed 1, cases 0-2 per shape): zero, NaN / Inf, exact, "
                             "narrow, moderate and wide blocks",
                             kVectorSeed)});
  }
}

// The near-threshold tensors under 9/200 (accepted), 11/250 and their exact mean (rejected).
void threshold_files(std::vector<VectorFileText>& out) {
  std::vector<MorParamsPtr> ps;
  std::vector<std::vector<std::uint32_t>> xs;
  near_threshold(ps, xs);
  auto under = [&](Threshold t) {
    std::vector<MorParamsPtr> v;
    for (const auto& p : ps) {
      MorParams::Spec s = p->spec();
      s.threshold = t;
      v.push_back(make(s));
    }
    return v;
  };
  out.push_back({"mor/f32-tensor-near-threshold-t9_200.vec",
                 file_text(ps, xs,
                           "hand-made tensors whose mean relative error is 3/68 (11/250 <= 3/68 < 9/200): "
                           "accepted here, rejected in f32-tensor-near-threshold-t11_250.vec",
                           0)});
  // the threshold equal to the exact mean: RN32(1/17) = 0xF0F0F1 · 2^-28 (1/17 =
  // 2^-5 · 1.111000011110000111100001|111..., rounded up), so the mean is 3 · 0xF0F0F1 /
  // (4 · 2^28) = 47370963 / 2^30 exactly; Eq. 2 is strict (§23.2): mean < t fails, rejected.
  out.push_back({"mor/f32-tensor-at-threshold.vec",
                 file_text(under(Threshold{47370963, 1073741824}), xs,
                           "the tensors of f32-tensor-near-threshold-t9_200.vec under a threshold equal "
                           "to their exact mean 47370963/2^30: Eq. 2 is strict, rejected (reason threshold)",
                           0)});
  out.push_back({"mor/f32-tensor-near-threshold-t11_250.vec",
                 file_text(under(Threshold{11, 250}), xs,
                           "the tensors of f32-tensor-near-threshold-t9_200.vec: rejected under 11/250 "
                           "(reason threshold)",
                           0)});
}

}  // namespace

void generate_vectors(Kind k, std::vector<VectorFileText>& out) {
  generated_files(k, out);
  if (k == Kind::tensor) threshold_files(out);
}

}  // namespace numref::conform::mor
