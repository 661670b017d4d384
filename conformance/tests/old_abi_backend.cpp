// A cast backend written the way issue 31 found two real ones: it answers 1 to every cast it is
// asked about, and maps a knob value it does not know onto one it does (an unknown nan value acts
// as nan=raw). Built twice (conformance/tests/CMakeLists.txt): against the frozen ABI 1.6 header
// in abi_1_6/ (numref_test_abi16: its table ends before abi_minor, so the runner proves 1.3 from
// its layout, §32.2, and must never offer it nan=raw_plus, a 1.7 value) and against today's
// header (numref_test_abi_now: it declares the current minor version and is offered raw_plus,
// which it gets wrong). test_abi_versions.cpp runs both.                     spec §32.2, §34.3
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numref/backend.h"  // abi_1_6/numref/backend.h or today's, by the include path
#include "numref/convert.hpp"
#include "numref/format.hpp"

namespace {

// The knob values of ABI 1.6's numref_policy, read as that version knew them.
numref::Policy policy_of(const numref_policy& c) {
  numref::Policy p;
  p.round = static_cast<numref::Round>(c.round);
  p.sr_bits = c.sr_bits;
  p.sr_variant = static_cast<numref::SrVariant>(c.sr_variant);
  p.overflow = static_cast<numref::Overflow>(c.overflow);
  p.inf_sat = static_cast<numref::InfSat>(c.inf_sat);
  // nan: 1.6 knows sign .. all_ones (0 .. 6); anything else it treats as raw, the naive way
  p.nan = static_cast<numref::NanOut>(c.nan <= NUMREF_NAN_ALL_ONES ? c.nan : NUMREF_NAN_RAW);
  p.nan_to_finite = static_cast<numref::NanToFinite>(c.nan_to_finite);
  p.e8m0_round = static_cast<numref::E8m0Round>(c.e8m0_round);
  p.zero_to_nozero = static_cast<numref::ZeroToNoZero>(c.zero_to_nozero);
  p.negative = static_cast<numref::Negative>(c.negative);
  p.daz = c.daz != 0;
  p.ftz = c.ftz != 0;
  p.tininess = static_cast<numref::Tininess>(c.tininess);
  p.int_range = static_cast<numref::IntRange>(c.int_range);
  p.e8m0_low = static_cast<numref::E8m0Low>(c.e8m0_low);
  p.inf_nan = static_cast<numref::InfNan>(c.inf_nan);
  return p;
}

const char* last_error(void*) { return "no error"; }
void close_backend(void*) {}
int cast_supported(void*, std::uint32_t, std::uint32_t, const numref_policy*) { return 1; }  // "yes to anything"

std::int64_t cast(void*, std::uint32_t from, std::uint32_t to, const numref_policy* c, std::size_t n,
                  const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags) {
  const numref::Format& f = numref::format(static_cast<numref::FormatId>(from));
  const numref::Format& t = numref::format(static_cast<numref::FormatId>(to));
  const numref::Policy p = policy_of(*c);
  for (std::size_t i = 0; i < n; ++i) {
    const numref::Result res = numref::convert(in[i], f, t, p, r ? r[i] : 0);
    out[i] = res.bits;
    if (flags) flags[i] = res.flags;
  }
  return static_cast<std::int64_t>(n);
}

}  // namespace

extern "C" NUMREF_BACKEND_EXPORT std::uint32_t numref_backend_abi_version(void) { return NUMREF_BACKEND_ABI_VERSION; }

extern "C" NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char*, char*, std::size_t) {
  static numref_backend b;
  std::memset(&b, 0, sizeof b);
  b.abi_version = NUMREF_BACKEND_ABI_VERSION;
  b.struct_size = sizeof b;
#if NUMREF_BACKEND_ABI_MINOR >= 8
  b.abi_minor = NUMREF_BACKEND_ABI_MINOR;
#endif
  b.name = "old-abi";
  b.version = "1";
  b.description = "accepts every cast; an unknown nan value acts as nan=raw";
  b.ops = "cast";
  b.profiles = "torch";
  b.caps = NUMREF_CAP_FLAGS;
  b.last_error = last_error;
  b.close = close_backend;
  b.cast_supported = cast_supported;
  b.cast = cast;
  return &b;
}
