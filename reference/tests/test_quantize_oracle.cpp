// numref tests — quantize / dequantize / fake-quant vs the exact rational oracle.
//   spec §12 – §20
//
// Random tensors with mixed magnitudes (2^-40 … 2^40 within the source format's range,
// zeros of both signs, subnormals, ±Inf, NaN with random payloads), random shapes (ragged
// partitions included), every scale rule, every partition kind, every element format,
// random element policies (all rounding modes incl. both SR variants, saturating and not,
// every NaN knob), both NaN/Inf amax policies, rn32 and fused application, divide and
// reciprocal dequantization, transposed views. The reference (numref::quantize, dequantize,
// fake_quantize) and the oracle (numref::oracle::rq, exact rationals, no numref_reference
// code) must agree bit for bit on every code, scale, group mantissa, amax, dequantized value,
// fake-quant value and count.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "numref/oracle/rational_quantize.hpp"
#include "numref/quantize.hpp"
#include "test_support.hpp"

namespace numref {
namespace {

using convtest::SplitMix64;

// One random source code of `f`: mixed magnitudes, zeros, subnormals, Inf, NaN.
std::uint32_t random_code(const Format& f, SplitMix64& g, unsigned special_permille) {
  const std::uint32_t sign = (g.next() & 1) ? f.sign_bit() : 0u;
  const std::uint64_t pick = g.next() % 1000;
  const std::uint32_t frac = static_cast<std::uint32_t>(g.next()) & f.man_mask();
  if (pick < special_permille) {  // ±Inf or NaN
    if (f.specials == Specials::ieee && (g.next() & 1)) return sign | (f.exp_all_ones() << f.man_bits);
    if (f.specials == Specials::ieee) return sign | (f.exp_all_ones() << f.man_bits) | (frac ? frac : 1u);
    return sign | f.mag_mask();
  }
  if (pick < special_permille + 60) return sign;                       // ±0
  if (pick < special_permille + 120) return sign | (frac ? frac : 1u);  // subnormal
  // normal with E in [-40, 40] intersected with the format's normal range
  const int emin = f.emin(), emax = static_cast<int>(f.max_finite >> f.man_bits) - f.bias - 1;
  const int lo = std::max(-40, emin), hi = std::min(40, emax);
  const int e = lo + static_cast<int>(g.next() % static_cast<std::uint64_t>(hi - lo + 1));
  return sign | (static_cast<std::uint32_t>(e + f.bias) << f.man_bits) | frac;
}

constexpr ScaleRule kRules[] = {ScaleRule::amax,     ScaleRule::amax_recip, ScaleRule::amax_dequant,
                                ScaleRule::pow2,     ScaleRule::mx_floor,   ScaleRule::mx_ceil,
                                ScaleRule::mx_even,  ScaleRule::mx_rceil,   ScaleRule::mx_rceil_f32,
                                ScaleRule::gam,      ScaleRule::nvfp4,      ScaleRule::int8,
                                ScaleRule::int8_127_5};
constexpr FormatId kElements[] = {FormatId::f8e4m3fn, FormatId::f8e5m2,   FormatId::f6e3m2fn,
                                  FormatId::f6e2m3fn, FormatId::f4e2m1fn, FormatId::int8};
constexpr FormatId kSources[] = {FormatId::f32, FormatId::bf16, FormatId::f16};

struct Case {
  std::string text;
  QuantizeSpec spec;
  oracle::rq::Spec ospec;
  bool transpose = false;
};

Case random_case(SplitMix64& g, std::size_t rows, std::size_t cols) {
  Case c;
  const ScaleRule rule = kRules[g.next() % std::size(kRules)];
  const FormatId elem = is_int8(rule) ? FormatId::int8 : kElements[g.next() % std::size(kElements)];
  c.spec.rule = rule;
  c.spec.element = &format(elem);
  // partition: tensor, rows, cols, blocks (possibly ragged), 1 x k, k x 1
  Partition p;
  switch (g.next() % 6) {
    case 0: p = Partition::tensor(); break;
    case 1: p = Partition::per_row(); break;
    case 2: p = Partition::per_col(); break;
    case 3: p = Partition::blocks(1 + g.next() % (rows + 1), 1 + g.next() % (cols + 1)); break;
    case 4: p = Partition::sub_channel(GemmOperand::lhs, 1 + g.next() % 17); break;
    default: p = Partition::sub_channel(GemmOperand::rhs, 1 + g.next() % 5); break;
  }
  c.spec.partition = p;
  if (rule == ScaleRule::gam) {
    // groups: the whole tensor, or whole multiples of the block shape
    if (g.next() % 2) {
      const std::size_t br = p.block_rows == 0 ? 0 : p.block_rows * (1 + g.next() % 3);
      const std::size_t bc = p.block_cols == 0 ? 0 : p.block_cols * (1 + g.next() % 3);
      c.spec.group = Partition::blocks(br, bc);
    }
  }
  c.spec.amax.nan = (g.next() % 3 == 0) ? AmaxNan::ignore : AmaxNan::propagate;
  c.spec.amax.inf = (g.next() % 3 == 0) ? AmaxInf::ignore : AmaxInf::propagate;
  Policy pol = default_element_policy();
  switch (g.next() % 8) {
    case 0: pol.round = Round::rna; break;
    case 1: pol.round = Round::rtz; break;
    case 2: pol.round = Round::rup; break;
    case 3: pol.round = Round::rdn; break;
    case 4:
    case 5: {
      static constexpr int kBits[] = {1, 3, 8, 13, 20, 24, 32};
      pol.round = Round::sr;
      pol.sr_bits = kBits[g.next() % std::size(kBits)];
      if (!format(elem).is_integer() && g.next() % 2) pol.sr_variant = SrVariant::add_source;
      break;
    }
    default: break;  // rne
  }
  if (g.next() % 3 == 0) pol.overflow = Overflow::nonsat;
  if (g.next() % 4 == 0) pol.inf_sat = InfSat::keep;
  static constexpr NanOut kNan[] = {NanOut::payload, NanOut::keep_sign, NanOut::canonical, NanOut::all_ones};
  pol.nan = kNan[g.next() % 4];
  static constexpr NanToFinite kN2F[] = {NanToFinite::pos_zero, NanToFinite::neg_zero, NanToFinite::pos_max};
  pol.nan_to_finite = kN2F[g.next() % 3];
  c.spec.policy = pol;
  static constexpr ProfileId kWide[] = {ProfileId::ocp, ProfileId::cuda_satfinite, ProfileId::ml_dtypes};
  c.spec.wide = profile(kWide[g.next() % 3]).wide;
  const bool sr_add = pol.round == Round::sr && pol.sr_variant == SrVariant::add_source;
  if (!sr_add && g.next() % 3 == 0) c.spec.apply = is_int8(rule) ? ScaleApply::rn32 : ScaleApply::fused;
  if (is_int8(rule) && sr_add) c.spec.policy.sr_variant = SrVariant::fraction;
  c.spec.dequant = g.next() % 2 ? DequantOp::reciprocal : DequantOp::divide;
  c.transpose = g.next() % 4 == 0;

  // the same case for the oracle
  auto& o = c.ospec;
  o.element = elem;
  o.block_rows = p.block_rows;
  o.block_cols = p.block_cols;
  o.group_rows = c.spec.group.block_rows;
  o.group_cols = c.spec.group.block_cols;
  o.rule = *oracle::rq::parse_rule(to_string(rule));
  o.nan_ignore = c.spec.amax.nan == AmaxNan::ignore;
  o.inf_ignore = c.spec.amax.inf == AmaxInf::ignore;
  o.policy = c.spec.policy;
  o.wide = c.spec.wide;
  if (c.spec.apply) o.fused = *c.spec.apply == ScaleApply::fused;
  o.dequant_reciprocal = c.spec.dequant == DequantOp::reciprocal;
  c.text = std::string(to_string(rule)) + " elem=" + std::string(format(elem).name) + " partition=" + to_string(p) +
           (rule == ScaleRule::gam ? " group=" + to_string(c.spec.group) : "") +
           " nan=" + (o.nan_ignore ? "ignore" : "propagate") + " inf=" + (o.inf_ignore ? "ignore" : "propagate") +
           " apply=" + (c.spec.apply ? std::string(to_string(*c.spec.apply)) : "default") +
           " dequant=" + std::string(to_string(c.spec.dequant)) + (c.transpose ? " transposed" : "") + " [" +
           describe(c.spec.policy) + "]";
  return c;
}

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08X", v);
  return b;
}

template <class A, class B>
void expect_same(const char* what, const A& got, const B& want, const std::string& ctx, int& failures) {
  if (got.size() != want.size()) {
    ADD_FAILURE() << what << ": size " << got.size() << " vs oracle " << want.size() << "\n  " << ctx;
    ++failures;
    return;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (static_cast<std::uint32_t>(got[i]) != static_cast<std::uint32_t>(want[i])) {
      ADD_FAILURE() << what << "[" << i << "]: got " << hex32(static_cast<std::uint32_t>(got[i])) << " oracle "
                    << hex32(static_cast<std::uint32_t>(want[i])) << "\n  " << ctx;
      ++failures;
      return;
    }
  }
}

// Runs `n` random cases from `seed`; shapes up to max_rows x max_cols.
void run_cases(std::uint64_t seed, int n, std::size_t max_rows, std::size_t max_cols) {
  SplitMix64 g(seed);
  int failures = 0;
  for (int t = 0; t < n && failures < 5; ++t) {
    const std::size_t rows = 1 + g.next() % max_rows, cols = 1 + g.next() % max_cols;
    Case c = random_case(g, rows, cols);
    const Format& src = format(kSources[g.next() % std::size(kSources)]);
    static constexpr unsigned kSpecial[] = {0, 0, 4, 20};
    const unsigned special = kSpecial[g.next() % 4];
    // storage: rows x cols, or cols x rows viewed transposed
    std::vector<std::uint32_t> store(rows * cols);
    for (auto& v : store) v = random_code(src, g, special);
    if (g.next() % 5 == 0) {  // an all-zero stretch (zero blocks)
      const std::size_t a = g.next() % store.size(), len = g.next() % store.size();
      for (std::size_t i = a; i < std::min(store.size(), a + len); ++i) store[i] = 0;
    }
    // element order of the view (independent of TensorView::code)
    std::vector<std::uint32_t> elems(rows * cols);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) elems[i * cols + j] = c.transpose ? store[j * rows + i] : store[i * cols + j];
    // typed storage for the view
    std::vector<std::uint8_t> bytes(store.size() * storage_bytes(src));
    for (std::size_t i = 0; i < store.size(); ++i)
      std::memcpy(bytes.data() + i * storage_bytes(src), &store[i], storage_bytes(src));  // little-endian host
    const TensorView x = c.transpose ? TensorView(src, bytes.data(), cols, rows).transposed()
                                     : TensorView(src, bytes.data(), rows, cols);
    std::vector<std::uint32_t> random;
    if (c.spec.policy.round == Round::sr) {
      random.resize(rows * cols);
      const int k = c.spec.policy.sr_bits;
      for (auto& r : random) r = static_cast<std::uint32_t>(k == 32 ? g.next() : g.next() & ((std::uint64_t{1} << k) - 1));
    }
    c.ospec.source = src.id;
    c.ospec.rows = rows;
    c.ospec.cols = cols;
    const FormatId fake = g.next() % 4 == 0 ? FormatId::f16 : FormatId::bf16;
    c.ospec.fake_format = fake;
    const std::string ctx = "seed " + std::to_string(seed) + " case " + std::to_string(t) + ": " +
                            std::string(src.name) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + c.text;

    std::vector<std::uint8_t> codes(rows * cols);
    QuantizeResult res;
    try {
      res = quantize(x, c.spec, codes, random);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "quantize threw " << e.what() << "\n  " << ctx;
      ++failures;
      continue;
    }
    const oracle::rq::Out want = oracle::rq::quantize(c.ospec, elems, random);
    const int before = failures;
    expect_same("codes", codes, want.codes, ctx, failures);
    std::vector<std::uint32_t> amax;
    for (const Amax& a : res.block_amax) amax.push_back(a.f32);
    expect_same("block amax", amax, want.amax, ctx, failures);
    expect_same("scales", res.meta.scales, want.scales, ctx, failures);
    expect_same("group mantissas", res.meta.group_mantissa, want.group_mantissa, ctx, failures);
    if (res.meta.tensor_amax != want.tensor_amax) {
      ADD_FAILURE() << "tensor amax " << hex32(res.meta.tensor_amax) << " vs " << hex32(want.tensor_amax) << "\n  " << ctx;
      ++failures;
    }
    const std::vector<std::uint64_t> got_counts = {res.total.saturated, res.total.flushed, res.total.nan, res.total.inf};
    const std::vector<std::uint64_t> want_counts = {want.saturated, want.flushed, want.nan, want.inf};
    expect_same("counts (saturated, flushed, nan, inf)", got_counts, want_counts, ctx, failures);
    std::vector<std::uint32_t> deq(rows * cols);
    dequantize(codes, res.meta, deq);
    expect_same("dequantized", deq, want.dequant, ctx, failures);
    std::vector<std::uint32_t> fq(rows * cols);
    const QuantizeStats fst = fake_quantize(x, c.spec, format(fake), fq, random);
    expect_same("fake-quant", fq, want.fake, ctx, failures);
    if (!(fst == res.total)) {
      ADD_FAILURE() << "fake_quantize counts differ from quantize counts\n  " << ctx;
      ++failures;
    }
    if (failures > before) continue;
  }
}

TEST(QuantizeOracle, RandomTensorsEveryRuleAndPartition) {  // §12–§20
  run_cases(0x5CA1E5, 1500, 9, 24);
}

TEST(QuantizeOracle, TallAndWideShapes) {  // §12.2 ragged edges on long dimensions
  run_cases(0xB10C5, 150, 40, 3);
  run_cases(0xB10C6, 150, 2, 80);
}

TEST(QuantizeOracle, SingleElementBlocksAndTensors) {  // §12.2 one-element blocks
  SplitMix64 g(77);
  for (int t = 0; t < 3; ++t) run_cases(g.next(), 150, 3, 3);
}

}  // namespace
}  // namespace numref
