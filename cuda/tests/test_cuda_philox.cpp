// numref CUDA tests — the Philox4x32-10 stream of stochastic rounding.            spec §A.3
#include <gtest/gtest.h>

#include <cstdint>

#include "numref_arith/philox.cuh"

namespace {

using numref_cuda::Philox4x32;
using numref_cuda::PhiloxStream;

// Known-answer vectors of Random123 (tests/kat_vectors, the three "philox4x32 10" lines:
// counter[4] key[2] -> result[4]) — an independent implementation's published outputs.
TEST(CudaPhilox, Random123KnownAnswers) {
  struct Kat {
    std::uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& k : kats) {
    const Philox4x32::Block b = Philox4x32::block(k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3], k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(b.v[i], k.out[i]) << "word " << i;
  }
}

// §A.3 The stream layout: element i of (seed, subsequence, offset) is word (offset+i) mod 4
// of block ((offset+i)/4 as a 64-bit counter, subsequence in the high counter words) under
// key = seed, top k bits.
TEST(CudaPhilox, StreamLayout) {
  const PhiloxStream s{0x0123456789abcdefull, 0xfedcba9876543210ull, 0};
  const Philox4x32::Block b0 = Philox4x32::block(0, 0, 0x76543210u, 0xfedcba98u, 0x89abcdefu, 0x01234567u);
  const Philox4x32::Block b1 = Philox4x32::block(1, 0, 0x76543210u, 0xfedcba98u, 0x89abcdefu, 0x01234567u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s.value(static_cast<std::uint64_t>(i), 32), b0.v[i]);
    EXPECT_EQ(s.value(static_cast<std::uint64_t>(4 + i), 32), b1.v[i]);
    EXPECT_EQ(s.value(static_cast<std::uint64_t>(i), 8), b0.v[i] >> 24);
    EXPECT_EQ(s.value(static_cast<std::uint64_t>(i), 1), b0.v[i] >> 31);
  }
  // The counter's high word carries: element 4 * 2^32 is block {0, 1, sub...}.
  const Philox4x32::Block bc = Philox4x32::block(0, 1, 0x76543210u, 0xfedcba98u, 0x89abcdefu, 0x01234567u);
  EXPECT_EQ(s.value(std::uint64_t{4} << 32, 32), bc.v[0]);
  // An offset shifts the stream: (offset o, element i) = (offset 0, element o + i).
  const PhiloxStream t{s.seed, s.subsequence, 1000003};
  for (std::uint64_t i = 0; i < 64; ++i) EXPECT_EQ(t.value(i, 17), s.value(1000003 + i, 17));
}

// §A.3 The chunked form the kernels use equals the element-by-element definition for every
// phase of the stream and every chunk width the kernels instantiate, and every value is < 2^k.
template <int V>
void chunk_matches(const PhiloxStream& s, int k) {
  for (std::uint64_t i0 = 0; i0 < 64; ++i0) {
    std::uint32_t r[V];
    s.values<V>(i0, k, r);
    for (int t = 0; t < V; ++t) {
      ASSERT_EQ(r[t], s.value(i0 + static_cast<std::uint64_t>(t), k)) << "V=" << V << " i0=" << i0 << " t=" << t;
      if (k < 32) {
        ASSERT_LT(r[t], 1u << k);
      }
    }
  }
}

TEST(CudaPhilox, ChunkedValuesMatchDefinition) {
  for (std::uint64_t off : {0ull, 1ull, 2ull, 3ull, 0xFFFFFFFFFFFFFF00ull})  // the last: j near 2^64, no wrap (§A.3)
    for (int k : {1, 5, 8, 16, 31, 32}) {
      const PhiloxStream s{42, 7, off};
      chunk_matches<1>(s, k);
      chunk_matches<4>(s, k);
      chunk_matches<8>(s, k);
      chunk_matches<16>(s, k);
    }
}

}  // namespace
