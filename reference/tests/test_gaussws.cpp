// GaussWS (spec §30): the reference against hand values, the paper's claims and the oracle.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "numref/exact.hpp"
#include "numref/gaussws.hpp"
#include "numref/oracle/rational_gaussws.hpp"
#include "numref/splitmix64.hpp"

namespace gw = numref::gaussws;
namespace ogw = numref::oracle::gw;
using numref::FormatId;

namespace {

std::uint32_t f32(float v) { return std::bit_cast<std::uint32_t>(v); }
std::uint32_t bf(float v) { return f32(v) >> 16; }  // exact for the values used (bf16-representable)

// One block of k elements in a 1 x k matrix (k <= 32).
gw::Forward run1(std::vector<std::uint32_t> w, float bt, std::vector<std::int8_t> r, FormatId wf = FormatId::f32,
                 FormatId out = FormatId::bf16, gw::Sum sum = gw::Sum::exact, bool exact = false) {
  gw::ForwardSpec s;
  s.w_format = wf;
  s.out = out;
  s.sum = sum;
  const std::vector<std::uint32_t> b{f32(bt)};
  return gw::forward(s, gw::Shape{1, w.size()}, w, b, r, exact);
}

}  // namespace

// §30.2 / Eq. 10 (§30.10: the enumeration gives Eq. 10's fractions, which sum to 1 = 2^16 words):
// every 16-bit word enumerated; the expected numerators are Eq. 10's
// fractions times 2^16: Pr(±2) = 3/4 * 2^-9 -> 96, Pr(±1) = (3/4)^2 2^-2 (1 - 2 * 3/2048) -> 9189,
// Pr(0) = 23483/32768 -> 46966.
TEST(GaussWS, NoiseDistributionIsEq10BothSigns) {
  const std::vector<std::uint32_t> c = gw::noise_counts();
  EXPECT_EQ(c, (std::vector<std::uint32_t>{96, 9189, 46966, 9189, 96}));
  EXPECT_EQ(c[0] + c[1] + c[2] + c[3] + c[4], 65536u);
  // Eq. 10 in exact integers (units of 2^-16): the both-signs reading.
  const std::uint64_t p2 = 3ull * 65536 / (4 * 512);      // 96
  const std::uint64_t p1 = 9ull * (65536 - 2 * p2) / 64;  // (9/64)(1 - Pr(±2))
  EXPECT_EQ(p2, c[4]);
  EXPECT_EQ(p1, c[3]);
  EXPECT_EQ(65536 - 2 * p1 - 2 * p2, 2ull * 23483);
  // The one-sign reading would give Pr(0) = 46939/65536 ≈ 0.7162, not the paper's ≈ 0.717.
  EXPECT_NE((131072 - 18ull * 2045 - 384) / 2, 46966ull);
  for (std::uint32_t u = 0; u < 65536; ++u) ASSERT_EQ(gw::noise_from_bits(u), ogw::noise(u)) << u;
}

TEST(GaussWS, PackLayout) {
  // nibbles: 1 -> 0x1, -1 -> 0x9, 2 -> 0x2, -2 -> 0xA; element k at bits 4k (§30.9).
  const std::vector<std::int8_t> r{1, -1, 2, -2, 0, 0, 0, 1, 1};
  const std::vector<std::uint32_t> p = gw::pack(r);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], 0x1000A291u);
  EXPECT_EQ(p[1], 0x1u);
  EXPECT_EQ(gw::unpack(p, r.size()), r);
  const std::vector<std::uint32_t> minus_zero{0x8u};
  EXPECT_EQ(gw::unpack(minus_zero, 1), (std::vector<std::int8_t>{0}));
  const std::vector<std::uint32_t> bad{0x30u};
  EXPECT_THROW(gw::unpack(bad, 2), std::invalid_argument);
}

// §30.3 pinned against an independent Python evaluation of the formula.
TEST(GaussWS, GeneratorPinned) {
  const std::uint64_t k = gw::block_key(gw::NoiseKey{1, 2, 3}, 0, 1);
  EXPECT_EQ(k, 0x5a087d129273708cull);
  const std::uint32_t want[6] = {0x97ea, 0xda08, 0x33ab, 0x6019, 0x16fe, 0xdf4d};
  for (std::uint32_t e = 0; e < 6; ++e) EXPECT_EQ(gw::noise_word(k, e), want[e]) << e;
  EXPECT_EQ(gw::noise_word(k, 1023), 0x63e6u);
  // Ragged blocks: an element's noise depends on its block and in-block position only.
  const auto a = gw::noise(gw::Shape{40, 70}, gw::NoiseKey{9, 1, 5});
  const auto b = gw::noise(gw::Shape{64, 96}, gw::NoiseKey{9, 1, 5});
  for (std::size_t i = 0; i < 40; ++i)
    for (std::size_t j = 0; j < 70; ++j) ASSERT_EQ(a[i * 70 + j], b[i * 96 + j]);
}

TEST(GaussWS, Exp2Examples) {
  EXPECT_EQ(gw::exp2_one_minus(f32(4.0f)), f32(0.125f));
  EXPECT_EQ(gw::exp2_one_minus(f32(0.5f)), 0x3FB504F3u);     // RN32(sqrt 2)
  EXPECT_EQ(gw::exp2_one_minus(f32(1.5f)), 0x3F3504F3u);     // RN32(1/sqrt 2)
  EXPECT_EQ(gw::exp2_one_minus(f32(-127.0f)), 0x7F800000u);  // 2^128 overflows
  EXPECT_EQ(gw::exp2_one_minus(f32(-126.5f)), 0x7F3504F3u);  // 2^127.5 < FLT_MAX
  EXPECT_EQ(gw::exp2_one_minus(f32(150.0f)), 0x00000001u);   // 2^-149
  EXPECT_EQ(gw::exp2_one_minus(f32(150.5f)), 0x00000001u);   // 0.707 * 2^-149 -> 2^-149
  EXPECT_EQ(gw::exp2_one_minus(f32(151.0f)), 0x00000000u);   // 2^-150: tie to even 0
  EXPECT_EQ(gw::exp2_one_minus(f32(1e-30f)), f32(2.0f));
  EXPECT_THROW(gw::exp2_one_minus(0x7FC00000u), std::invalid_argument);
  numref::SplitMix64 g(77);
  for (int i = 0; i < 3000; ++i) {
    std::uint32_t bt = static_cast<std::uint32_t>(g.next());
    if (i % 2) bt = f32(static_cast<float>(static_cast<std::int64_t>(g.next() % 300000) - 20000) / 1000.0f);
    if (!numref::f32_is_finite(bt)) continue;
    ASSERT_EQ(gw::exp2_one_minus(bt), ogw::exp2_one_minus(bt)) << std::hex << bt;
  }
}

TEST(GaussWS, Eq11Bitwidth) {
  EXPECT_EQ(gw::bitwidth(f32(1.0f), f32(6.0f), f32(4.0f)), f32(6.0f));  // b_i = 1: b_init
  EXPECT_EQ(gw::bitwidth(f32(0.5f), f32(6.0f), f32(4.0f)), f32(5.0f));
  EXPECT_EQ(gw::bitwidth(f32(0.0f), f32(6.0f), f32(4.0f)), f32(4.0f));
  EXPECT_THROW(gw::bitwidth(0x7F800000u, f32(6.0f), f32(4.0f)), std::invalid_argument);
  numref::SplitMix64 g(5);
  for (int i = 0; i < 20000; ++i) {
    const auto a = static_cast<std::uint32_t>(g.next()), b = static_cast<std::uint32_t>(g.next()),
               c = static_cast<std::uint32_t>(g.next());
    if (!numref::f32_is_finite(a) || !numref::f32_is_finite(b) || !numref::f32_is_finite(c)) continue;
    ASSERT_EQ(gw::bitwidth(a, b, c), ogw::bitwidth(a, b, c));
  }
}

// §30.5 / §30.6 hand values.
TEST(GaussWS, ForwardHandValues) {
  // a = 1, b_t = 4: s = 2^-3. 1 + 1/8 = 1.125 (0x3F90), 1 - 2/8 = 0.75 (0x3F40).
  auto f = run1({f32(1.0f), f32(1.0f), f32(-0.0f)}, 4.0f, {1, -2, 0});
  EXPECT_EQ(f.scale[0], f32(0.125f));
  EXPECT_EQ(f.w_hat, (std::vector<std::uint32_t>{0x3F90, 0x3F40, 0x8000}));  // -0 with R = 0 stays -0
  // All-zero block: s = 0, no noise whatever R.
  f = run1({f32(0.0f), f32(-0.0f)}, 4.0f, {2, -1});
  EXPECT_EQ(f.scale[0], 0u);
  EXPECT_EQ(f.w_hat, (std::vector<std::uint32_t>{0x0000, 0x8000}));
  // Exact zero sum: a = 0.25, b_t = 1 -> s = 0.25; -0.25 + 0.25 = +0.
  f = run1({f32(-0.25f)}, 1.0f, {1});
  EXPECT_EQ(f.w_hat[0], 0x0000u);
  // s = +Inf (b_t = -200: 2^201 overflows): ±Inf by the sign of R, w for R = 0.
  f = run1({f32(1.0f), f32(2.0f), f32(3.0f)}, -200.0f, {1, -1, 0});
  EXPECT_EQ(f.w_hat, (std::vector<std::uint32_t>{0x7F80, 0xFF80, 0x4040}));
  // Poisoned: NaN / Inf anywhere in the block.
  f = run1({f32(1.0f), 0x7F800000u, f32(2.0f)}, 4.0f, {0, 0, 1});
  EXPECT_EQ(f.scale[0], gw::kNaN32);
  EXPECT_EQ(f.w_hat, (std::vector<std::uint32_t>{0x7FC0, 0x7FC0, 0x7FC0}));
  // bf16 input: a = 1.5, b_t = 2 -> s = 0.75; 1.5 - 1.5 = 0 -> +0; 1 + 0.75 = 1.75 (0x3FE0).
  f = run1({bf(1.5f), bf(1.0f)}, 2.0f, {-2, 1}, FormatId::bf16);
  EXPECT_EQ(f.w_hat, (std::vector<std::uint32_t>{0x0000, 0x3FE0}));
  // The exact value before the cast: w = 1 + 2^-20 = a, b_t = 4, R = 1: v = 1.125 (1 + 2^-20).
  f = run1({0x3F800008u}, 4.0f, {1}, FormatId::f32, FormatId::bf16, gw::Sum::exact, true);
  EXPECT_EQ(f.exact[0].hex(), "0x1.200012p+0");
  EXPECT_EQ(f.w_hat[0], 0x3F90u);
}

// §30.5 single rounding vs the sum=f32 variant: w = 1 + 2^-8 (a bf16 tie), b_t = 40,
// s = w * 2^-39: v = 1 + 2^-8 + (2^-39 + 2^-47) lies above the tie -> 1 + 2^-7 (0x3F81);
// RN32(v) = 1 + 2^-8, whose bf16 tie goes to even 1.0 (0x3F80).
TEST(GaussWS, DoubleRoundingVariant) {
  const std::uint32_t w = 0x3F808000u;
  EXPECT_EQ(run1({w}, 40.0f, {1}).w_hat[0], 0x3F81u);
  EXPECT_EQ(run1({w}, 40.0f, {1}, FormatId::f32, FormatId::bf16, gw::Sum::f32).w_hat[0], 0x3F80u);
}

// §30.7 hand values: one element g = 1, R = 1, s = 2^-3: -ln2 / 8 = -RN32(ln 2) * 2^-3.
TEST(GaussWS, GradHandValues) {
  const std::vector<std::uint32_t> bt{f32(4.0f)};
  std::vector<std::uint32_t> w{f32(1.0f)}, g{f32(1.0f)};
  std::vector<std::int8_t> r{1};
  EXPECT_EQ(gw::grad_bt(FormatId::f32, {1, 1}, w, bt, r, FormatId::f32, g)[0], 0xBDB17218u);
  // Cancellation: T = 2^100 + 1 - 2^100 = 1 exactly in any order (a binary32 sum gives 0 or 1).
  w = {f32(1.0f), f32(1.0f), f32(1.0f)};
  r = {1, 1, 1};
  for (auto order : {std::vector<float>{0x1p100f, 1.0f, -0x1p100f}, std::vector<float>{0x1p100f, -0x1p100f, 1.0f}}) {
    g = {f32(order[0]), f32(order[1]), f32(order[2])};
    EXPECT_EQ(gw::grad_bt(FormatId::f32, {1, 3}, w, bt, r, FormatId::f32, g)[0], 0xBDB17218u);
  }
  g = {f32(1.0f), 0x7FC00000u, f32(1.0f)};  // non-finite gradient -> NaN
  EXPECT_EQ(gw::grad_bt(FormatId::f32, {1, 3}, w, bt, r, FormatId::f32, g)[0], gw::kNaN32);
  g = {f32(1.0f), f32(-1.0f), f32(0.0f)};  // T = 0 -> +0
  EXPECT_EQ(gw::grad_bt(FormatId::f32, {1, 3}, w, bt, r, FormatId::f32, g)[0], 0u);
}

// §30.10 Lemma 1: for w representable in the target and b_t < m + 2, fp(w_hat) != fp(w) wherever
// R != 0; at b_t = m + 2 it fails (a = w = 1, R = 1: 1 + 2^-(m+1) ties back to 1).
TEST(GaussWS, Lemma1) {
  for (FormatId id : {FormatId::bf16, FormatId::f16, FormatId::f8e4m3fn, FormatId::f6e3m2fn}) {
    const numref::Format& f = numref::format(id);
    const int m = f.man_bits;
    const float ulp = std::ldexp(1.0f, -m);
    for (float amant : {1.0f, 2.0f - ulp, 1.0f + ulp}) {
      // The block: a, and every value of the binade [1, a] and of the binade below, both signs.
      std::vector<std::uint32_t> w{f32(amant)};
      for (float v = 1.0f; v <= amant && w.size() < 31; v += ulp) w.push_back(f32(-v));
      for (float v = 0.5f; v < 1.0f && w.size() < 32; v += ulp / 2) w.push_back(f32(v));
      for (float bt : {static_cast<float>(m + 1), static_cast<float>(m) + 1.5f, static_cast<float>(m) + 2 - 0x1p-10f}) {
        for (int rv : {-2, -1, 1, 2}) {
          const auto fwd =
              run1(w, bt, std::vector<std::int8_t>(w.size(), static_cast<std::int8_t>(rv)), FormatId::f32, id);
          for (std::size_t k = 0; k < w.size(); ++k) {
            const std::uint32_t plain = run1({w[k]}, bt, {0}, FormatId::f32, id).w_hat[0];
            ASSERT_NE(fwd.w_hat[k], plain) << f.name << " bt=" << bt << " a=" << amant << " R=" << rv << " k=" << k;
          }
        }
      }
    }
    // At the bound: a = w = 1, b_t = m + 2, R = +1 -> unchanged.
    const auto at = run1({f32(1.0f)}, static_cast<float>(m + 2), {1}, FormatId::f32, id);
    EXPECT_EQ(at.w_hat[0], run1({f32(1.0f)}, 0.0f, {0}, FormatId::f32, id).w_hat[0]) << f.name;
  }
  // A binary32 w that bf16 cannot represent: a = 1.26, b_t = 8.9 < 9, s ≈ 0.675 * 2^-7;
  // w = 1.25 - 0.4 * 2^-7 rounds to 1.25 (0x3FA0) and so does w + s: Lemma 1 does not hold.
  const float w = 1.25f - 0.4f * 0x1p-7f;
  const auto f = run1({f32(1.26f), f32(w)}, 8.9f, {0, 1});
  EXPECT_EQ(f.w_hat[1], 0x3FA0u);
  EXPECT_EQ(run1({f32(w)}, 0.0f, {0}).w_hat[0], 0x3FA0u);
}

// §30.10 Lemma 2 (sufficiency): ±2^xi with xi > floor(2 - b_t + log2 a) - m is not lost beside R = ±1:
// fp(eps + R s) != fp(R s). With a = 1 and integer b_t the bound is not tight: eps is first
// lost at xi = (1 - b_t) - m - 1 (a tie), two below it.
TEST(GaussWS, Lemma2) {
  const int m = 7;  // bf16
  for (float a : {1.0f, 1.5f, 1.9921875f, 0.3f}) {
    for (float bt : {1.0f, 2.0f, 3.5f, 4.0f, 6.0f, 8.0f, 8.75f}) {
      const int s_exp = static_cast<int>(std::floor(2.0 - bt + std::log2(static_cast<double>(a))));
      const int bound = s_exp - m;
      for (int xi = bound + 1; xi <= bound + 4; ++xi) {
        for (float sign : {1.0f, -1.0f}) {
          for (int rv : {-1, 1}) {
            const float eps = sign * std::ldexp(1.0f, xi);
            const auto with = run1({f32(a), f32(eps)}, bt, {0, static_cast<std::int8_t>(rv)});
            const auto without = run1({f32(a), f32(0.0f)}, bt, {0, static_cast<std::int8_t>(rv)});
            ASSERT_NE(with.w_hat[1], without.w_hat[1]) << "a=" << a << " bt=" << bt << " xi=" << xi;
          }
        }
      }
    }
  }
  // a = 1, b_t = 4: s = 2^-3, ulp(s) = 2^-10; eps = 2^-11 ties back to s.
  EXPECT_EQ(run1({f32(1.0f), f32(0x1p-11f)}, 4.0f, {0, 1}).w_hat[1], run1({f32(1.0f), 0u}, 4.0f, {0, 1}).w_hat[1]);
  EXPECT_NE(run1({f32(1.0f), f32(0x1p-10f)}, 4.0f, {0, 1}).w_hat[1], run1({f32(1.0f), 0u}, 4.0f, {0, 1}).w_hat[1]);
}

// §30.10 Proposition 3 and Table C.1 (tau = 0): exponent bits ceil(log2(b_t + 1)) for w and
// ceil(log2(b_t + 3)) for w_hat; Lemma 1 needs m >= b_t - 1 (integer b_t).
TEST(GaussWS, Proposition3TableC1) {
  struct Row {
    int bt, exp_w, exp_what, mant;
    std::vector<const char*> types;
  };
  // Table C.1 as printed in the paper.
  const std::vector<Row> paper{
      {3, 2, 3, 1, {"FP6_e3m2"}},     {4, 3, 3, 2, {"FP6_e3m2"}},     {5, 3, 3, 3, {"FP8_e4m3", "FP8_e3m4"}},
      {6, 3, 4, 4, {"BF16", "FP16"}}, {7, 3, 4, 5, {"BF16", "FP16"}}, {8, 4, 4, 6, {"BF16", "FP16"}},
      {9, 4, 4, 7, {"BF16", "FP16"}}, {10, 4, 4, 8, {"FP16"}},        {11, 4, 4, 9, {"FP16"}},
      {12, 4, 4, 10, {"FP16"}},       {13, 4, 4, 11, {"FP32"}}};
  struct Type {
    const char* name;
    int e, m;
  };
  const std::vector<Type> types{{"FP6_e3m2", 3, 2}, {"FP8_e4m3", 4, 3}, {"FP8_e3m4", 3, 4},
                                {"BF16", 8, 7},     {"FP16", 5, 10},    {"FP32", 8, 23}};
  auto clog2 = [](int v) {
    int e = 0;
    while ((1 << e) < v) ++e;
    return e;
  };
  std::vector<std::pair<int, std::string>> excluded;
  for (const Row& r : paper) {
    EXPECT_EQ(clog2(r.bt + 1), r.exp_w) << r.bt;
    EXPECT_EQ(clog2(r.bt + 3), r.exp_what) << r.bt;
    EXPECT_EQ(r.mant, r.bt - 2) << r.bt;  // the column is b_t - 2 throughout
    for (const char* t : r.types) {
      for (const Type& ty : types) {
        if (std::string(ty.name) != t) continue;
        EXPECT_GE(ty.e, r.exp_what) << t;                        // Proposition 3 holds
        if (!(r.bt < ty.m + 2)) excluded.emplace_back(r.bt, t);  // Lemma 1 fails
      }
    }
  }
  const std::vector<std::pair<int, std::string>> want{{4, "FP6_e3m2"}, {5, "FP8_e4m3"}, {9, "BF16"}, {12, "FP16"}};
  EXPECT_EQ(excluded, want);
}

// §30.10 Proposition 4: R = 0 keeps w, so precision is kept with probability >= 23483/32768; a w far
// below the Lemma 2 bound is masked by every non-zero R: exactly 18570 of the 2^16 words.
TEST(GaussWS, Proposition4) {
  const std::uint32_t tiny = f32(0x1p-20f);
  std::uint32_t kept = 0, masked = 0;
  const std::uint32_t plain = run1({tiny}, 0.0f, {0}).w_hat[0];
  for (std::uint32_t u = 0; u < 65536; ++u) {
    const auto rv = static_cast<std::int8_t>(gw::noise_from_bits(u));
    const auto f = run1({f32(1.0f), tiny}, 4.0f, {0, rv});
    if (f.w_hat[1] == plain) ++kept;
    if (rv != 0 && f.w_hat[1] == run1({f32(1.0f), 0u}, 4.0f, {0, rv}).w_hat[1]) ++masked;
  }
  EXPECT_EQ(kept, 46966u);
  EXPECT_EQ(masked, 65536u - 46966u);
}

// The reference against the oracle on >= 1 M random elements: ragged shapes, b_t in [1, 12]
// (integers and fractions), f32 and bf16 w, zero blocks, NaN / Inf blocks, both sum variants,
// and the gradients.
TEST(GaussWS, OracleRandom) {
  constexpr int kThreads = 2;
  std::vector<std::size_t> done(kThreads, 0);
  std::vector<std::string> fail(kThreads);
  auto work = [&](int t) {
    numref::SplitMix64 g(1000 + static_cast<std::uint64_t>(t));
    while (done[static_cast<std::size_t>(t)] < 520000 && fail[static_cast<std::size_t>(t)].empty()) {
      const gw::Shape sh{1 + g.next() % 70, 1 + g.next() % 90};
      const FormatId wf = g.next() % 2 ? FormatId::f32 : FormatId::bf16;
      const int scale_exp = static_cast<int>(g.next() % 60) - 30;
      std::vector<std::uint32_t> w(sh.size()), gr(sh.size());
      for (std::size_t k = 0; k < w.size(); ++k) {
        const std::uint64_t z = g.next();
        float v = std::ldexp(static_cast<float>(static_cast<std::int32_t>(z & 0xFFFFFF) - 0x800000) / 0x1p23f,
                             scale_exp + static_cast<int>((z >> 32) % 24) - 12);
        std::uint32_t c = f32(v);
        if ((z >> 56) == 0) c = static_cast<std::uint32_t>(z >> 8);  // any pattern, NaN/Inf included
        w[k] = wf == FormatId::bf16 ? (c >> 16) : c;
        const std::uint64_t y = g.next();
        const std::uint32_t gc = f32(std::ldexp(static_cast<float>(static_cast<std::int32_t>(y & 0xFFFF) - 0x8000),
                                                static_cast<int>((y >> 20) % 40) - 30));
        gr[k] = (y >> 50) == 0 ? 0x7F800000u : gc;
      }
      if (g.next() % 4 == 0) {  // zero the first block
        for (std::size_t i = 0; i < std::min<std::size_t>(sh.m, 32); ++i)
          for (std::size_t j = 0; j < std::min<std::size_t>(sh.n, 32); ++j)
            w[i * sh.n + j] = (g.next() % 2) ? 0x8000u : 0u;
      }
      std::vector<std::uint32_t> bt(sh.blocks());
      for (auto& b : bt) {
        const std::uint64_t z = g.next();
        b = z % 3 ? f32(static_cast<float>(1 + z % 12)) : f32(1.0f + static_cast<float>((z >> 8) % 11000000) / 1e6f);
      }
      const auto r = gw::noise(sh, gw::NoiseKey{g.next(), 1, 2});
      const bool f32sum = g.next() % 4 == 0;
      gw::ForwardSpec spec;
      spec.w_format = wf;
      spec.sum = f32sum ? gw::Sum::f32 : gw::Sum::exact;
      const auto a = gw::forward(spec, sh, w, bt, r);
      const auto o = ogw::forward(wf, sh.m, sh.n, w, bt, r, FormatId::bf16, f32sum);
      const auto ga = gw::grad_bt(wf, sh, w, bt, r, FormatId::f32, gr);
      const auto go = ogw::grad(wf, sh.m, sh.n, w, bt, r, FormatId::f32, gr);
      std::string& err = fail[static_cast<std::size_t>(t)];
      for (std::size_t k = 0; k < w.size() && err.empty(); ++k)
        if (a.w_hat[k] != o.w_hat[k])
          err = "w_hat[" + std::to_string(k) + "] w=" + std::to_string(w[k]) + " ref " + std::to_string(a.w_hat[k]) +
                " oracle " + std::to_string(o.w_hat[k]) + (f32sum ? " sum=f32" : "");
      for (std::size_t b = 0; b < bt.size() && err.empty(); ++b)
        if (a.scale[b] != o.scale[b] || ga[b] != go[b])
          err = "block " + std::to_string(b) + " bt=" + std::to_string(bt[b]) + " scale " + std::to_string(a.scale[b]) +
                "/" + std::to_string(o.scale[b]) + " grad " + std::to_string(ga[b]) + "/" + std::to_string(go[b]);
      done[static_cast<std::size_t>(t)] += sh.size();
    }
  };
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; ++t) th.emplace_back(work, t);
  for (auto& x : th) x.join();
  for (const auto& f : fail) EXPECT_EQ(f, "");
  EXPECT_GE(done[0] + done[1], 1000000u);
}
