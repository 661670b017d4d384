// numref — conversion policy knobs, exception flags and named profiles.
//   spec §4 (rounding), §5 (stochastic rounding), §6 (overflow and special values),
//   §7 (f8e8m0fnu targets), §8 (subnormals), §9 (flags), §10 (profiles)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "numref/format.hpp"

namespace numref {

// §9 Exception flags, SoftFloat bit values (softfloat_flag_*), so that a TestFloat user
// reads them unchanged. Bit 3 (SoftFloat's "infinite", division by zero) is never raised
// by a conversion and is reserved.
enum Flag : std::uint8_t {
  kInexact = 0x01,
  kUnderflow = 0x02,
  kOverflow = 0x04,
  kInvalid = 0x10,
};
std::string flags_to_string(std::uint8_t flags);  // e.g. "v-ux" style, §9

// §4 Rounding modes.
enum class Round : std::uint8_t {
  rne,  // to nearest, ties to the even CODE (§4.2; = ties to even significand when m >= 1)
  rtz,  // toward zero
  rup,  // toward +infinity
  rdn,  // toward -infinity
  rna,  // to nearest, ties away from zero
  sr,   // stochastic, with explicit random bits r of width k (§5)
};

// §5.3 How the random bits are applied in stochastic rounding.
enum class SrVariant : std::uint8_t {
  fraction,  // §5.1: fraction below the target ulp truncated to k bits; up iff frac_k + r >= 2^k
  add,       // §5.2: r added to the source bit pattern below the target's normal ulp, then truncate
};

// §6.1 Overflow of a finite value beyond the largest finite magnitude.
enum class Overflow : std::uint8_t {
  saturate,  // clamp to +-max finite
  nonsat,    // IEEE 754 §7.4 result: +-Inf, or NaN where the format has no Inf (OCP non-saturating)
};

// §6.2 An infinite operand when the policy saturates.
enum class InfSat : std::uint8_t {
  max,   // +-Inf becomes +-max finite
  keep,  // +-Inf stays special: Inf where the target has Inf, else NaN
};

// §6.3 The NaN produced from a NaN operand.
enum class NanOut : std::uint8_t {
  sign,       // target's canonical quiet NaN with the operand's sign
  canonical,  // target's canonical quiet NaN, positive (sign dropped)
  ones,       // positive NaN with every magnitude bit set (CUDA: 0x7F, 0x7FFF, 0x7FFFFFFF)
  payload,    // IEEE 754 §6.2.3: sign kept, payload truncated to the target's width, quieted
};

// §6.4 A NaN operand converted into a format that has no NaN (FP6, FP4, int8).
enum class NanToFinite : std::uint8_t {
  zero,     // +0
  negzero,  // -0 (the sign pattern with zero magnitude; ml_dtypes)
  max,      // +max finite (CUDA __nv_cvt_float_to_fp4)
};

// §7.1 Rounding for targets without trailing significand bits (f8e8m0fnu).
enum class E8m0Round : std::uint8_t {
  follow,  // derived from Policy::round: rne->even, rna->tiesup, rtz/rdn->floor, rup->ceil, sr->sr
  floor,   // toward zero (= toward -inf for the positive operands this applies to)
  ceil,    // toward +inf
  even,    // nearest; a tie 1.5*2^e goes to the even CODE
  tiesup,  // nearest; a tie 1.5*2^e goes up to 2^(e+1)
};

// §7.2 Zero into a format that has no zero (f8e8m0fnu).
enum class ZeroToNoZero : std::uint8_t { nan, min };
// §7.3 A negative (non-zero) operand into an unsigned format (f8e8m0fnu).
enum class Negative : std::uint8_t { nan, abs };
// §9.2 When tininess (for the underflow flag and flushing) is detected.
enum class Tininess : std::uint8_t { after, before };
// §6.5 Range of integer targets: two's complement [-2^(n-1), 2^(n-1)-1] or symmetric.
enum class IntRange : std::uint8_t { full, symmetric };

// The complete set of knobs for one conversion. Default-constructed = the `ocp`
// profile for an 8-bit target (§10.1).
struct Policy {
  Round round = Round::rne;
  int sr_bits = 0;  // k, 1..32, required when round == sr
  SrVariant sr_variant = SrVariant::fraction;
  Overflow overflow = Overflow::nonsat;
  InfSat inf_sat = InfSat::max;
  NanOut nan = NanOut::payload;
  NanToFinite nan_to_finite = NanToFinite::zero;
  E8m0Round e8m0_round = E8m0Round::follow;
  ZeroToNoZero zero_to_nozero = ZeroToNoZero::nan;
  Negative negative = Negative::nan;
  bool daz = false;  // §8.1 input subnormals treated as (signed) zero
  bool ftz = false;  // §8.2 tiny results flushed to (signed) zero
  Tininess tininess = Tininess::after;
  IntRange int_range = IntRange::full;

  friend bool operator==(const Policy&, const Policy&) = default;
};

// §10 Named profiles. A profile gives one Policy for "narrow" targets (storage width
// <= 8 bits: the OCP 8-bit, MX and int8 formats) and one for "wide" targets (f16, bf16,
// f32), because real libraries treat them differently (CUDA saturates FP8 under
// __NV_SATFINITE while __float2bfloat16_rn is IEEE round-to-nearest with Inf).
enum class ProfileId : std::uint8_t { ocp, ieee, cuda_satfinite, cuda_nosat, ml_dtypes };
inline constexpr int kProfileCount = 5;

struct Profile {
  ProfileId id;
  std::string_view name;
  std::string_view summary;
  Policy narrow;
  Policy wide;
  const Policy& for_target(const Format& to) const { return to.bits <= 8 ? narrow : wide; }
};

const Profile& profile(ProfileId id);
std::optional<ProfileId> find_profile(std::string_view name);
const Profile* all_profiles();  // kProfileCount entries

// Name <-> enum helpers for the CLI, the vector files and reports (§10.3).
std::string_view to_string(Round r);
std::string_view to_string(SrVariant v);
std::string_view to_string(Overflow o);
std::string_view to_string(InfSat v);
std::string_view to_string(NanOut v);
std::string_view to_string(NanToFinite v);
std::string_view to_string(E8m0Round v);
std::string_view to_string(ZeroToNoZero v);
std::string_view to_string(Negative v);
std::string_view to_string(Tininess v);
std::string_view to_string(IntRange v);
std::optional<Round> parse_round(std::string_view s);
std::optional<SrVariant> parse_sr_variant(std::string_view s);
std::optional<Overflow> parse_overflow(std::string_view s);
std::optional<InfSat> parse_inf_sat(std::string_view s);
std::optional<NanOut> parse_nan_out(std::string_view s);
std::optional<NanToFinite> parse_nan_to_finite(std::string_view s);
std::optional<E8m0Round> parse_e8m0_round(std::string_view s);
std::optional<ZeroToNoZero> parse_zero_to_nozero(std::string_view s);
std::optional<Negative> parse_negative(std::string_view s);
std::optional<Tininess> parse_tininess(std::string_view s);
std::optional<IntRange> parse_int_range(std::string_view s);

// A complete, canonical one-line description of a policy ("round=rne overflow=nonsat ..."),
// used in vector headers and mismatch reports; parse_policy() reads it back (§10.3).
std::string describe(const Policy& p);
// Applies "key=value" settings (space separated) on top of `base`. Returns an error
// message naming the offending key or value, or nullopt on success.
std::optional<std::string> apply_policy_settings(Policy& base, std::string_view settings);

}  // namespace numref
