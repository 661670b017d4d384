// Uses an installed numref: one conversion of the reference and one helper of the conformance
// library. Expected by hand (spec §4.2, §6): 464 (f32 43e80000) lies exactly halfway between
// 448 = 1.110b * 2^8 (f8e4m3fn 0 1111 110 = 7e, the largest finite; mantissa even) and
// 480 = 1.111b * 2^8 (mantissa odd, past the top); the tie goes to the even one: 7e.
#include <cstdio>

#include "numref/conform/util.hpp"
#include "numref/convert.hpp"
#include "numref/policy.hpp"

int main() {
  using namespace numref;
  const Policy p = profile(ProfileId::ocp).for_target(format(FormatId::f8e4m3fn));
  const Result r = convert(0x43E80000u, FormatId::f32, FormatId::f8e4m3fn, p);
  const std::string h = conform::hex(r.bits, 2);
  std::printf("464 -> f8e4m3fn = %s\n", h.c_str());
  return h == "7e" ? 0 : 1;
}
