// numref conformance — golden vectors of the GaussWS family.                spec §31.9
//
// A gaussws file fixes w, g, noise and sum in its header (the keys of the parameter text);
// each case line is the shape and the columns of GausswsParams' schema (gaussws.hpp). The
// comment of a case line counts the noisy elements and the NaN / Inf blocks. Shapes stay
// small (at most 40 x 40) so that a case line stays under the 65 536 characters of §31.3.
#include "gaussws.hpp"
#include "numref/conform/vectors.hpp"

namespace numref::conform::gaussws {

namespace {

constexpr std::uint64_t kVectorSeed = 1;

using Cases = std::vector<std::pair<ParamsPtr, std::vector<std::uint32_t>>>;

std::string file_text(Cases cs, const std::string& coverage, std::uint64_t seed) {
  VectorFileCases f;
  f.coverage = coverage;
  f.seed = seed;
  f.cases = std::move(cs);
  return family().vector_file(f);
}

// Cases 0-1 of the generator (seed 1) for each shape: 1 x 1, a ragged row of two blocks, a
// ragged 33 x 17 (two block rows) and 40 x 40 (four blocks, three ragged).
Cases generated(GausswsParams::Spec s) {
  Cases out;
  static const std::pair<std::size_t, std::size_t> shapes[] = {{1, 1}, {1, 40}, {33, 17}, {40, 40}};
  for (const auto& [r, c] : shapes) {
    s.rows = r;
    s.cols = c;
    const auto p = std::make_shared<const GausswsParams>(s);
    for (std::uint64_t j = 0; j < 2; ++j) {
      std::vector<std::uint32_t> in(static_cast<std::size_t>(p->layout().in));
      generate_case(*p, kVectorSeed, j, in.data());
      out.emplace_back(p, std::move(in));
    }
  }
  return out;
}

// Hand-made cases (w, g binary32, noise bits, sum exact); the words of §30.2: 0x5400 gives
// R = +1 (bits 10, 12, 14), 0xD400 R = -1, 0x03FD R = +2 (bits 0, 2..9), 0x83FD R = -2, 0 R = 0.
Cases hand_made() {
  GausswsParams::Spec s;
  Cases out;
  auto add = [&](std::size_t rows, std::size_t cols, std::vector<std::uint32_t> w, std::vector<std::uint32_t> bt,
                 std::vector<std::uint32_t> u, std::vector<std::uint32_t> g) {
    s.rows = rows;
    s.cols = cols;
    const auto p = std::make_shared<const GausswsParams>(s);
    const GausswsLayout& L = p->layout();
    std::vector<std::uint32_t> in(static_cast<std::size_t>(L.in));
    std::copy(w.begin(), w.end(), in.begin() + L.w);
    std::copy(bt.begin(), bt.end(), in.begin() + L.bt);
    std::copy(u.begin(), u.end(), in.begin() + L.u);
    std::copy(g.begin(), g.end(), in.begin() + L.g);
    out.emplace_back(p, std::move(in));
  };
  const std::uint32_t one = 0x3F800000u;
  // b_t = 9 = m + 2 (bf16): s = 2^-8; 1 + 2^-8 is a tie that rounds back to 1 (Lemma 1 is
  // tight, §30.10); -0 with R = 0 stays -0 (§30.5)
  add(1, 8, {one, one, 0x80000000u, 0x3F000000u, one, one, one, 0x3F400000u}, {0x41100000u},
      {0x5400u, 0xD400u, 0u, 0x03FDu, 0x83FDu, 0u, 0x03FDu, 0xD400u}, std::vector<std::uint32_t>(8, one));
  // a poisoned block (NaN in w) and a block whose g holds +Inf (§30.6, §30.7), 1 x 40
  {
    std::vector<std::uint32_t> w(40, one), u(40, 0x5400u), g(40, one);
    w[5] = 0x7FC00000u;
    g[35] = 0x7F800000u;
    add(1, 40, w, {0x40800000u, 0x40800000u}, u, g);
  }
  // b_t = -130: 2^131 overflows, s = +Inf; R = +1 gives +Inf, R = -1 -Inf, R = 0 keeps w;
  // T = 1 - 1 + 0 + 1 = 1: dL/db_t = -Inf (§30.4, §30.5, §30.7)
  add(1, 4, {one, 0x40000000u, 0xBF800000u, 0x40400000u}, {0xC3020000u}, {0x5400u, 0xD400u, 0u, 0x5400u},
      {one, one, one, one});
  return out;
}

}  // namespace

void generate_vectors(std::vector<VectorFileText>& out) {
  struct F {
    FormatId w, g;
    Noise noise;
    numref::gaussws::Sum sum;
  };
  using S = numref::gaussws::Sum;
  static const F files[] = {{FormatId::f32, FormatId::f32, Noise::bits, S::exact},
                            {FormatId::bf16, FormatId::bf16, Noise::bits, S::exact},
                            {FormatId::f32, FormatId::bf16, Noise::key, S::exact},
                            {FormatId::bf16, FormatId::f32, Noise::key, S::exact},
                            {FormatId::f32, FormatId::f32, Noise::bits, S::f32}};
  for (const F& f : files) {
    GausswsParams::Spec s;
    s.w = &format(f.w);
    s.g = &format(f.g);
    s.noise = f.noise;
    s.sum = f.sum;
    out.push_back({std::string(kName) + "/" + std::string(format(f.w).name) + "-g" + std::string(format(f.g).name) +
                       "-" + std::string(noise_name(f.noise)) + "-" + std::string(sum_name(f.sum)) + ".vec",
                   file_text(generated(s),
                             "generated matrices (seed 1, cases 0-1 per shape): b_t 1..12 integer and fractional "
                             "and extreme, zero, subnormal, huge and NaN / Inf blocks, ragged 32 x 32 blocks",
                             kVectorSeed)});
  }
  out.push_back({std::string(kName) + "/hand-made.vec",
                 file_text(hand_made(),
                           "hand-made: the Lemma 1 tie at b_t = 9, -0 kept, R = +-1 and +-2, a NaN block, an Inf "
                           "gradient, s = +Inf (b_t = -130)",
                           0)});
}

}  // namespace numref::conform::gaussws
