// numref conformance — the MoR families as Family objects, their generated cases and the
// suites of a level.                                                       spec §34.9
//
// A case is one tensor, produced from (seed, the suite's parameter text, the case index)
// alone (§34.3). One case in 16 is all zeros (§26.2 / §27.3: accepted, all_zero); otherwise
// every block of the suite's partition draws its own kind, so a type map mixes decisions:
//   zero block; one NaN or ±Inf among finite values (§25.2 nonfinite_input); values
//   E4M3 holds exactly after the block scale (Σ e = 0, reason exact); a narrow dynamic range
//   (E4M3 wins Eq. 3); a moderate range; a wide range of 16 to 29 binades (E4M3 underflows,
//   E5M2 wins Eq. 3); 30 to 60 binades (Eq. 4 fails past 2^29.8 = 57344 · 2^14); sprinkled
//   zeros and subnormals. One tensor-level case in 6 holds one NaN / ±Inf, one sub-tensor
//   block in 10.
// Suites: sources bf16, f16, f32; partitions 128 x 128, 64 x 64 and small blocks (level 0
// stays at seconds), the tensor, rows, cols; ragged edges; transposed views; thresholds
// 9/200 (the default), 11/250, 1/20, 1/32, 1/8 and 0 (nothing is accepted: §23.2 accepts an
// all-zero tensor only because its mean 0 is below a positive threshold).
#include <algorithm>
#include <set>

#include "mor.hpp"

namespace numref::conform::mor {

namespace {

class Gen {
 public:
  Gen(const MorParams& p, std::uint64_t seed, std::uint64_t index)
      : p_(p), src_(*p.spec().src), rng_(seed, fnv1a64(p.text()), index) {}

  // The view, element order.
  void view(std::vector<std::uint32_t>& v) {
    const auto& s = p_.spec();
    v.assign(s.rows * s.cols, 0);
    if (rng_.below(16) == 0) {
      for (auto& c : v) c = rng_.below(2) ? src_.sign_bit() : 0u;
      return;
    }
    const BlockGrid& g = p_.grid();
    // a tensor-wide base binade, so that blocks of one tensor are related (GAM, §17)
    base_ = static_cast<int>(rng_.below(40)) - 20;
    for (std::size_t b = 0; b < g.count(); ++b) block(g.range(b), v);
    // tensor-level MoR: one case in 6 holds one NaN / ±Inf (§25.2 rejects the whole tensor)
    if (p_.spec().kind == Kind::tensor && rng_.below(6) == 0)
      v[static_cast<std::size_t>(rng_.below(v.size()))] = special();
  }

 private:
  std::uint32_t make(bool neg, int e, std::uint64_t sig_bits) {
    // a finite code of the source with value (1 + f) 2^e, f from sig_bits, clamped to the
    // source's range (subnormals at the bottom)
    const int bias = (1 << (src_.exp_bits - 1)) - 1;
    int field = e + bias;
    const std::uint32_t topfield = src_.max_finite >> src_.man_bits;
    std::uint32_t mant = static_cast<std::uint32_t>(sig_bits) & src_.man_mask();
    if (field >= static_cast<int>(topfield)) field = static_cast<int>(topfield);
    if (field < 1) {
      // subnormal: shift the significand
      const int sh = 1 - field;
      mant = sh > src_.man_bits ? 1u : ((mant | (1u << src_.man_bits)) >> sh);
      field = 0;
    }
    std::uint32_t c = (static_cast<std::uint32_t>(field) << src_.man_bits) | mant;
    if (c > src_.max_finite) c = src_.max_finite;
    return c | (neg ? src_.sign_bit() : 0u);
  }

  void block(const BlockRange& r, std::vector<std::uint32_t>& v) {
    const std::size_t C = p_.spec().cols;
    const std::uint64_t kind = rng_.below(8);
    const std::size_t n = r.rows() * r.cols();
    auto at = [&](std::size_t k) -> std::uint32_t& { return v[(r.r0 + k / r.cols()) * C + r.c0 + k % r.cols()]; };
    if (kind == 0) {  // zero block
      for (std::size_t k = 0; k < n; ++k) at(k) = rng_.below(2) ? src_.sign_bit() : 0u;
      return;
    }
    int span = 3;
    bool exact = false;
    switch (kind) {
      case 1:
        exact = true;
        span = 4;
        break;                                                      // E4M3-exact significands (3 fraction bits)
      case 2: span = 1; break;                                      // narrow
      case 3: span = 6; break;                                      // moderate
      case 4: span = 16 + static_cast<int>(rng_.below(14)); break;  // wide: 16 .. 29 binades (E5M2 wins Eq. 3)
      case 5: span = 30 + static_cast<int>(rng_.below(31)); break;  // 30 .. 60 binades (Eq. 4 fails)
      default: span = 2 + static_cast<int>(rng_.below(8)); break;
    }
    const int top = base_ + static_cast<int>(rng_.below(5)) - 2;
    const std::uint64_t zero_rate = rng_.below(4) == 0 ? 4 : 0;  // some blocks with many zeros
    for (std::size_t k = 0; k < n; ++k) {
      if (zero_rate && rng_.below(zero_rate) == 0) {
        at(k) = rng_.below(2) ? src_.sign_bit() : 0u;
        continue;
      }
      const int e = top - static_cast<int>(rng_.below(static_cast<std::uint64_t>(span) + 1));
      std::uint64_t sig = rng_.next();
      if (exact) sig &= (std::uint64_t{7} << (src_.man_bits - 3));  // 3 fraction bits
      at(k) = make(rng_.below(2) == 1, e, sig);
    }
    // sub-tensor MoR: one block in 10 holds one NaN / ±Inf (§25.2: that block is kept)
    if (p_.spec().kind == Kind::sub && rng_.below(10) == 0) at(static_cast<std::size_t>(rng_.below(n))) = special();
  }

  // A quiet NaN or an infinity of either sign.
  std::uint32_t special() {
    const std::uint32_t exp_all = (src_.mask() & ~src_.sign_bit()) & ~src_.man_mask();
    const std::uint32_t c = rng_.below(2) ? (exp_all | (1u << (src_.man_bits - 1))) : exp_all;
    return c | (rng_.below(2) ? src_.sign_bit() : 0u);
  }

  const MorParams& p_;
  const Format& src_;
  CaseRng rng_;
  int base_ = 0;
};

struct Shape {
  std::size_t rows, cols;
  Partition part;
};

class Planner {
 public:
  Planner(Kind k, const PlanRequest& req, std::vector<GeneratedSuite>& out) : k_(k), req_(req), out_(out) {}

  void run() {
    const bool l0 = req_.level == Level::l0;
    const std::uint64_t n = l0 ? 3 : req_.level == Level::l1 ? 8 : 64;
    // shapes: small blocks with ragged edges (level 0), 64 x 64, 128 x 128
    std::vector<Shape> shapes = {{20, 28, Partition::blocks(8, 8)},   {33, 17, Partition::blocks(16, 16)},
                                 {12, 40, Partition::tensor()},       {24, 20, Partition::per_row()},
                                 {18, 30, Partition::per_col()},      {64, 64, Partition::blocks(64, 64)},
                                 {70, 45, Partition::blocks(32, 32)}, {9, 50, Partition::blocks(4, 16)}};
    if (!l0) {
      shapes.push_back({128, 128, Partition::blocks(128, 128)});
      shapes.push_back({200, 300, Partition::blocks(128, 128)});
      shapes.push_back({192, 130, Partition::blocks(64, 64)});
      shapes.push_back({128, 256, Partition::tensor()});
    }
    static const FormatId srcs[] = {FormatId::bf16, FormatId::f32, FormatId::f16};
    static const Threshold thr[] = {{9, 200}, {11, 250}, {1, 20}, {1, 32}, {0, 1}, {1, 8}};
    std::size_t i = 0;
    for (const Shape& sh : shapes) {
      const std::size_t nsrc = l0 ? 1 : 3;
      for (std::size_t si = 0; si < nsrc; ++si, ++i) {
        MorParams::Spec s;
        s.kind = k_;
        s.src = &format(srcs[(i + si) % 3]);
        s.rows = sh.rows;
        s.cols = sh.cols;
        s.part = sh.part;
        s.transpose = i % 5 == 3;
        if (k_ == Kind::sub && (sh.part.block_rows == 0 || sh.part.block_cols == 0)) {
          // rows / cols / tensor blocks B are legal for the framework; keep one of them
          if (sh.part != Partition::per_row()) continue;
        }
        if (k_ == Kind::tensor) {
          s.threshold = thr[i % 6];
          add(s, n);
          if (!l0 && i % 3 == 0) {  // the same tensors under the default threshold too
            s.threshold = Threshold{};
            add(s, n);
          }
        } else {
          s.recipe = i % 2 ? SubtensorRecipe::two_way : SubtensorRecipe::three_way;
          add(s, n);
          if (!l0) {
            s.recipe = i % 2 ? SubtensorRecipe::three_way : SubtensorRecipe::two_way;
            add(s, n);
          }
        }
      }
    }
  }

 private:
  void add(const MorParams::Spec& s, std::uint64_t n) {
    const auto p = std::make_shared<const MorParams>(s);
    if (!selected(*p) || !seen_.insert(p->text()).second) return;
    out_.push_back({p, cases(p, n, req_.seed)});
  }

  bool selected(const MorParams& p) const { return selector_match(p, req_.selectors); }

  Kind k_;
  const PlanRequest& req_;
  std::vector<GeneratedSuite>& out_;
  std::set<std::string> seen_;
};

}  // namespace

void generate_case(const MorParams& p, std::uint64_t seed, std::uint64_t index, std::uint32_t* in) {
  std::vector<std::uint32_t> v;
  Gen(p, seed, index).view(v);
  const MorLayout& L = p.layout();
  for (std::size_t k = 0; k < L.n; ++k) in[static_cast<std::size_t>(L.x) + k] = v[p.view().view_index_of_memory(k)];
}

std::shared_ptr<const CaseSource> cases(const MorParamsPtr& p, std::uint64_t count, std::uint64_t seed) {
  return std::make_shared<IndexedCases<MorParams, decltype(&generate_case)>>(p, count, seed, &generate_case);
}

void plan(Kind k, const PlanRequest& req, std::vector<GeneratedSuite>& out) {
  // --ops mor:SRC:bf16:SCALING and mor-sub:SRC:bf16:RECIPE (the last word literally)
  check_selectors(kind_name(k), req.selectors, 2, 3);
  Planner(k, req, out).run();
}

}  // namespace numref::conform::mor
