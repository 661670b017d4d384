// numref conformance — golden vectors of the MoR families.                   spec §30.7
//
// A MoR file fixes every parameter but the shape in its header (the keys of the parameter
// text: src, transpose, scaling | blocks, threshold | recipe); each case line is the shape and
// the columns of MorParams' schema (mor.hpp). An exact error sum is 9 values of 16 hex digits
// separated by ':' — limb 0..4 of S (the sum is S · 2^-149), n, nonfinite_input,
// nonfinite_quant, zeros (§22.3). The comment of a case line decodes the decision, reason and
// mean, or the type map.
#include <algorithm>
#include <map>

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
    std::vector<std::uint32_t> x = {k448, kOne, k1_5 | 0x80000000u, 0, k1_0625, shifted(k1_0625, -1), shifted(k1_0625, -2),
                                    0, k1_0625 | 0x80000000u, shifted(k1_0625, -1), shifted(k1_0625, -2) | 0x80000000u, 0,
                                    k1_0625, shifted(k1_0625, -1), shifted(k1_0625, -2), 0};
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

void family_files(Kind k, std::vector<VectorFileText>& out) {
  const std::string dir = std::string(kind_name(k)) + "/";
  if (k == Kind::tensor) {
    struct F {
      FormatId src;
      Partition part;
      Threshold t;
      bool transpose;
    };
    const F files[] = {{FormatId::bf16, Partition::blocks(8, 8), {9, 200}, false},
                       {FormatId::f32, Partition::tensor(), {9, 200}, false},
                       {FormatId::bf16, Partition::per_row(), {9, 200}, true},
                       {FormatId::f16, Partition::per_col(), {1, 32}, false},
                       {FormatId::f32, Partition::blocks(4, 4), {1, 20}, false}};
    for (const F& f : files) {
      MorParams::Spec s;
      s.kind = k;
      s.src = &format(f.src);
      s.part = f.part;
      s.threshold = f.t;
      s.transpose = f.transpose;
      std::vector<MorParamsPtr> ps;
      std::vector<std::vector<std::uint32_t>> xs;
      generated(s, ps, xs);
      std::string t = f.t.to_string();
      std::replace(t.begin(), t.end(), '/', '_');
      out.push_back({dir + std::string(f.src == FormatId::f32 ? "f32" : f.src == FormatId::f16 ? "f16" : "bf16") + "-" +
                         part_file(f.part) + (f.transpose ? "-T" : "") + "-t" + t + ".vec",
                     file_text(ps, xs, "generated tensors (seed 1, cases 0-2 per shape): zero, NaN / Inf, exact, "
                                       "narrow, moderate and wide blocks",
                               kVectorSeed)});
    }
    // the same near-threshold tensors under 9/200 (accepted) and 11/250 (rejected)
    std::vector<MorParamsPtr> ps;
    std::vector<std::vector<std::uint32_t>> xs;
    near_threshold(ps, xs);
    if (!ps.empty()) {
      out.push_back({dir + "f32-tensor-near-threshold-t9_200.vec",
                     file_text(ps, xs, "hand-made tensors whose mean relative error is 3/68 (11/250 <= 3/68 < 9/200): "
                                       "accepted here, rejected in f32-tensor-near-threshold-t11_250.vec",
                               0)});
      std::vector<MorParamsPtr> ps2;
      for (const auto& p : ps) {
        MorParams::Spec s = p->spec();
        s.threshold = Threshold{11, 250};
        ps2.push_back(make(s));
      }
      // the threshold equal to the exact mean: RN32(1/17) = 0xF0F0F1 · 2^-28 (1/17 =
      // 2^-5 · 1.111000011110000111100001|111..., rounded up), so the mean is 3 · 0xF0F0F1 /
      // (4 · 2^28) = 47370963 / 2^30 exactly; Eq. 2 is strict (§23.2): mean < t fails, rejected.
      std::vector<MorParamsPtr> ps3;
      for (const auto& p : ps) {
        MorParams::Spec s = p->spec();
        s.threshold = Threshold{47370963, 1073741824};
        ps3.push_back(make(s));
      }
      out.push_back({dir + "f32-tensor-at-threshold.vec",
                     file_text(ps3, xs, "the tensors of f32-tensor-near-threshold-t9_200.vec under a threshold equal "
                                        "to their exact mean 47370963/2^30: Eq. 2 is strict, rejected (reason threshold)",
                               0)});
      out.push_back({dir + "f32-tensor-near-threshold-t11_250.vec",
                     file_text(ps2, xs, "the tensors of f32-tensor-near-threshold-t9_200.vec: rejected under 11/250 "
                                        "(reason threshold)",
                               0)});
    }
    return;
  }
  struct F {
    FormatId src;
    Partition part;
    SubtensorRecipe r;
  };
  const F files[] = {{FormatId::bf16, Partition::blocks(8, 8), SubtensorRecipe::three_way},
                     {FormatId::bf16, Partition::blocks(8, 8), SubtensorRecipe::two_way},
                     {FormatId::f32, Partition::blocks(4, 8), SubtensorRecipe::three_way},
                     {FormatId::f16, Partition::per_row(), SubtensorRecipe::three_way}};
  for (const F& f : files) {
    MorParams::Spec s;
    s.kind = k;
    s.src = &format(f.src);
    s.part = f.part;
    s.recipe = f.r;
    std::vector<MorParamsPtr> ps;
    std::vector<std::vector<std::uint32_t>> xs;
    generated(s, ps, xs);
    out.push_back({dir + std::string(f.src == FormatId::f32 ? "f32" : f.src == FormatId::f16 ? "f16" : "bf16") + "-" +
                       part_file(f.part) + "-" + (f.r == SubtensorRecipe::three_way ? "three-way" : "two-way") + ".vec",
                   file_text(ps, xs, "generated tensors (seed 1, cases 0-2 per shape): zero, NaN / Inf, exact, "
                                     "narrow, moderate and wide blocks",
                             kVectorSeed)});
  }
}

}  // namespace

void generate_vectors(Kind k, std::vector<VectorFileText>& out) { family_files(k, out); }

}  // namespace numref::conform::mor
