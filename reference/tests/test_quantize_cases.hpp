// numref tests — random quantize cases compared with the rational oracle (shared by
// test_quantize_oracle.cpp and sweep_quantize.cpp).                   spec §12 – §20
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "numref/oracle/rational_quantize.hpp"
#include "numref/quantize.hpp"
#include "test_support.hpp"

namespace numref::qtest {

using convtest::SplitMix64;

// One random source code of `f`: mixed magnitudes, zeros, subnormals, Inf, NaN.
inline std::uint32_t random_code(const Format& f, SplitMix64& g, unsigned special_permille) {
  const std::uint32_t sign = (g.next() & 1) ? f.sign_bit() : 0u;
  const std::uint64_t pick = g.next() % 1000;
  const std::uint32_t frac = static_cast<std::uint32_t>(g.next()) & f.man_mask();
  if (pick < special_permille) {  // ±Inf or NaN
    if (f.specials == Specials::ieee && (g.next() & 1)) return sign | (f.exp_all_ones() << f.man_bits);
    if (f.specials == Specials::ieee) return sign | (f.exp_all_ones() << f.man_bits) | (frac ? frac : 1u);
    return sign | f.mag_mask();
  }
  if (pick < special_permille + 60) return sign;                        // ±0
  if (pick < special_permille + 120) return sign | (frac ? frac : 1u);  // subnormal
  // normal with E in [-40, 40] intersected with the format's normal range
  const int emin = f.emin(), emax = static_cast<int>(f.max_finite >> f.man_bits) - f.bias - 1;
  const int lo = std::max(-40, emin), hi = std::min(40, emax);
  const int e = lo + static_cast<int>(g.next() % static_cast<std::uint64_t>(hi - lo + 1));
  return sign | (static_cast<std::uint32_t>(e + f.bias) << f.man_bits) | frac;
}

inline constexpr FormatId kElements[] = {FormatId::f8e4m3fn, FormatId::f8e5m2,   FormatId::f6e3m2fn,
                                         FormatId::f6e2m3fn, FormatId::f4e2m1fn, FormatId::int8};
// f32 and bf16 twice: the common sources weigh more
inline constexpr FormatId kSources[] = {FormatId::f32,  FormatId::bf16,     FormatId::f16,    FormatId::f32,
                                        FormatId::bf16, FormatId::f8e4m3fn, FormatId::f8e5m2, FormatId::f4e2m1fn};

struct Case {
  std::string text;
  QuantizeSpec spec;
  oracle::rq::Spec ospec;
  bool transpose = false;
};

inline Case random_case(SplitMix64& g, std::size_t rows, std::size_t cols) {
  Case c;
  const ScaleRule rule = kScaleRules[g.next() % kScaleRuleCount].rule;  // every row of §19.6's table
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
      if (!format(elem).is_integer() && g.next() % 2) pol.sr_variant = SrVariant::add;
      break;
    }
    default: break;  // rne
  }
  if (g.next() % 3 == 0) pol.overflow = Overflow::nonsat;
  if (g.next() % 4 == 0) pol.inf_sat = InfSat::keep;
  static constexpr NanOut kNan[] = {NanOut::payload, NanOut::sign, NanOut::canonical, NanOut::ones};
  pol.nan = kNan[g.next() % 4];
  static constexpr NanToFinite kN2F[] = {NanToFinite::zero, NanToFinite::negzero, NanToFinite::max};
  pol.nan_to_finite = kN2F[g.next() % 3];
  c.spec.policy = pol;
  static constexpr ProfileId kWide[] = {ProfileId::ocp, ProfileId::cuda_satfinite, ProfileId::ml_dtypes};
  c.spec.wide = profile(kWide[g.next() % 3]).wide;
  const bool sr_add = pol.round == Round::sr && pol.sr_variant == SrVariant::add;
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
  o.rule = rule;
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

inline std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08X", v);
  return b;
}

// Appends a report of the first difference between two sequences.
template <class A, class B>
void compare(const char* what, const A& got, const B& want, std::string& report) {
  if (!report.empty()) return;
  if (got.size() != want.size()) {
    report = std::string(what) + ": size " + std::to_string(got.size()) + " vs oracle " + std::to_string(want.size());
    return;
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    if (static_cast<std::uint32_t>(got[i]) != static_cast<std::uint32_t>(want[i])) {
      report = std::string(what) + "[" + std::to_string(i) + "]: got " + hex32(static_cast<std::uint32_t>(got[i])) +
               " oracle " + hex32(static_cast<std::uint32_t>(want[i]));
      return;
    }
}

// Case number t of the stream `seed` (each case seeded on its own, so that shards can run
// any subset): a random shape up to max_rows x max_cols, source format, tensor, spec and
// random bits. Runs the reference (quantize, dequantize, fake_quantize) and the oracle;
// returns an empty string when they agree bit for bit, else a report with the case.
inline std::string run_one(std::uint64_t seed, std::uint64_t t, std::size_t max_rows, std::size_t max_cols) {
  SplitMix64 g(seed ^ (kSplitMix64Gamma * (t + 1)));
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
    for (std::size_t j = 0; j < cols; ++j)
      elems[i * cols + j] = c.transpose ? store[j * rows + i] : store[i * cols + j];
  std::vector<std::uint8_t> bytes(store.size() * storage_bytes(src));
  for (std::size_t i = 0; i < store.size(); ++i)
    std::memcpy(bytes.data() + i * storage_bytes(src), &store[i], storage_bytes(src));  // little-endian host
  const TensorView x =
      c.transpose ? TensorView(src, bytes.data(), cols, rows).transposed() : TensorView(src, bytes.data(), rows, cols);
  std::vector<std::uint32_t> random;
  if (c.spec.policy.round == Round::sr) {
    random.resize(rows * cols);
    const int k = c.spec.policy.sr_bits;
    for (auto& r : random)
      r = static_cast<std::uint32_t>(k == 32 ? g.next() : g.next() & ((std::uint64_t{1} << k) - 1));
  }
  c.ospec.source = src.id;
  c.ospec.rows = rows;
  c.ospec.cols = cols;
  const FormatId fake = g.next() % 4 == 0 ? FormatId::f16 : FormatId::bf16;
  c.ospec.fake_format = fake;
  const std::string ctx = "seed " + std::to_string(seed) + " case " + std::to_string(t) + ": " + std::string(src.name) +
                          " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + c.text;

  std::vector<std::uint8_t> codes(rows * cols);
  QuantizeResult res;
  try {
    res = quantize(x, c.spec, codes, random);
  } catch (const std::exception& e) {
    return std::string("quantize threw ") + e.what() + "\n  " + ctx;
  }
  const oracle::rq::Out want = oracle::rq::quantize(c.ospec, elems, random);
  std::string report;
  compare("codes", codes, want.codes, report);
  std::vector<std::uint32_t> amax;
  for (const Amax& a : res.block_amax) amax.push_back(a.f32);
  compare("block amax", amax, want.amax, report);
  compare("scales", res.meta.scales, want.scales, report);
  compare("group mantissas", res.meta.group_mantissa, want.group_mantissa, report);
  compare("tensor amax", std::vector<std::uint32_t>{res.meta.tensor_amax}, std::vector<std::uint32_t>{want.tensor_amax},
          report);
  const std::vector<std::uint64_t> got_counts = {res.total.saturated, res.total.flushed, res.total.nan, res.total.inf};
  const std::vector<std::uint64_t> want_counts = {want.saturated, want.flushed, want.nan, want.inf};
  compare("counts (saturated, flushed, nan, inf)", got_counts, want_counts, report);
  std::vector<std::uint32_t> deq(rows * cols);
  dequantize(codes, res.meta, deq);
  compare("dequantized", deq, want.dequant, report);
  std::vector<std::uint32_t> fq(rows * cols);
  const QuantizeStats fst = fake_quantize(x, c.spec, format(fake), fq, random);
  compare("fake-quant", fq, want.fake, report);
  if (report.empty() && !(fst == res.total)) report = "fake_quantize counts differ from quantize counts";
  return report.empty() ? report : report + "\n  " + ctx;
}

}  // namespace numref::qtest
