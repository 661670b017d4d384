// numref — SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014; Vigna's splitmix64.c): the one definition of the step and the
// finaliser. Users: `numref quantize --seed` (docs/quantize.md gives the same formula), the
// conformance case generator (§34.3: a counter-based generator built from the finaliser),
// the tests' seeded generators and the benchmarks' inputs. Integer arithmetic only, 64-bit
// wrap-around: the stream is the same on every platform.
#pragma once

#include <cstdint>

#include "numref/hd.hpp"  // NUMREF_HD: the CUDA kernels use the finaliser (GaussWS, §30.3)

namespace numref {

// The Weyl-sequence increment: 2^64 / golden ratio, rounded to odd.
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ull;

// The finaliser: a bijection of 64-bit words (xor-shift 30 / multiply / xor-shift 27 /
// multiply / xor-shift 31).
NUMREF_HD constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One step: advances `state` by the gamma and returns the finalised new state.
NUMREF_HD constexpr std::uint64_t splitmix64_next(std::uint64_t& state) {
  state += kSplitMix64Gamma;
  return splitmix64_mix(state);
}

// The generator as an object: SplitMix64 g(seed); g.next() is the (i+1)-th output at call i.
struct SplitMix64 {
  std::uint64_t state;
  explicit constexpr SplitMix64(std::uint64_t seed) : state(seed) {}
  constexpr std::uint64_t next() { return splitmix64_next(state); }
};

// Pinned to the published outputs of the reference splitmix64.c (Rosetta Code,
// "Pseudo-random numbers/Splitmix64"): seed 1234567 gives 6457827717110365317,
// 3203168211198807973, 9817491932198370423; seed 0 gives 0xE220A8397B1DCDAF first.
static_assert([] {
  SplitMix64 g(1234567);
  return g.next() == 6457827717110365317ull && g.next() == 3203168211198807973ull && g.next() == 9817491932198370423ull;
}());
static_assert(SplitMix64(0).next() == 0xE220A8397B1DCDAFull);

}  // namespace numref
