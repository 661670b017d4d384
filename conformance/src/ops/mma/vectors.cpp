// numref conformance — golden vectors of the mma family.                       spec §31.10
//
// An mma file fixes the profile, the operand types, K and the block scales in its header (the
// keys of the parameter text); each case line is the shape M x N and the columns of
// MmaParams' schema (mma.hpp). Per profile: its first operand pair with a binary32 accumulator
// and, where the profile takes one, with a binary16 accumulator; K = 2 L + 1 rounded up to the
// block (two full steps and a partial one, §38.1); shapes 1 x 1 and 2 x 3, cases 0-3 of the
// generator (seed 1). The comment of a case line counts the NaN / Inf and inexact elements.
#include "mma.hpp"
#include "numref/conform/vectors.hpp"

namespace numref::conform::mma {

namespace {
constexpr std::uint64_t kVectorSeed = 1;
}  // namespace

void generate_vectors(std::vector<VectorFileText>& out) {
  for (const MmaProfile& prof : mma_profiles()) {
    MmaType first = MmaType::f32, scale = MmaType::f8e8m0fnu;
    for (const MmaTypeInfo& t : mma_types())
      if (mma_list_has(prof.types, t.name)) {
        first = t.id;
        break;
      }
    for (const MmaTypeInfo& t : mma_types())
      if (mma_list_has(prof.scale_types, t.name)) {
        scale = t.id;
        break;
      }
    for (const MmaType acc : {MmaType::f32, MmaType::f16}) {
      MmaSpec ms;
      ms.profile = &prof;
      ms.a = ms.b = first;
      ms.c = acc;
      ms.block = prof.knobs.scale == MmaScale::none ? 0 : 32;
      ms.scale = scale;
      const std::size_t unit = ms.block ? 32 : 1;
      try {
        validate(ms, unit * 4);
      } catch (const std::invalid_argument&) {
        continue;  // no binary16 accumulator for this profile / type
      }
      const std::size_t L = prof.knobs.algo == MmaAlgo::ideal ? 16 : mma_fused(ms);
      const std::size_t K = (2 * L + 1 + unit - 1) / unit * unit;
      VectorFileCases f;
      f.seed = kVectorSeed;
      f.coverage =
          "generated (seed 1, cases 0-3 per shape): random codes with NaN / Inf, values near 1, "
          "cancelling pairs, subnormals, exponent spread, zero blocks, extreme scales; K = 2 L + 1";
      for (const auto& [m, n] : {std::pair<std::size_t, std::size_t>{1, 1}, {2, 3}}) {
        MmaParams::Spec s;
        s.profile = &prof;
        s.a = s.b = first;
        s.c = acc;
        s.m = m;
        s.n = n;
        s.k = K;
        s.block = ms.block;
        s.scale = scale;
        const auto p = std::make_shared<const MmaParams>(s);
        for (std::uint64_t j = 0; j < 4; ++j) {
          std::vector<std::uint32_t> in(static_cast<std::size_t>(p->layout().in));
          generate_case(*p, kVectorSeed, j, in.data());
          f.cases.emplace_back(p, std::move(in));
        }
      }
      out.push_back({std::string(kName) + "/" + std::string(prof.name) + "-" + std::string(mma_type(first).name) + "-" +
                         std::string(mma_type(acc).name) + ".vec",
                     family().vector_file(f)});
    }
  }
}

}  // namespace numref::conform::mma
