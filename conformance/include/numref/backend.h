/* numref — the backend C ABI: how `numref conform` talks to an implementation under test.
 *                                                        spec §32 (backend ABI)
 *
 * A backend is a shared library (.so) exporting two functions:
 *
 *   uint32_t numref_backend_abi_version(void);
 *       returns NUMREF_BACKEND_ABI_VERSION as the backend was compiled. The runner calls
 *       it first and refuses to go on when it differs from its own (clear message, exit 3).
 *
 *   const numref_backend* numref_backend_open(const char* args, char* err, size_t err_size);
 *       creates one backend instance. `args` is the text after '?' in the --backend
 *       argument ("" when none). On failure returns NULL and writes a message into err.
 *       The runner may open several instances (one per worker); one instance is used
 *       by one thread at a time, distinct instances may run concurrently.
 *
 * Everything is plain C with fixed-width types so that a backend can be written in C,
 * C++, Rust or Zig and loaded by any runner of the same ABI version.
 *
 * Op families. Every family of operations has its own batched entry point in
 * numref_backend. Entry points of later families are appended at the end of the struct;
 * `struct_size` tells the runner which ones a backend knows (a pointer beyond
 * struct_size, or a NULL pointer, means "family not implemented": its cases are
 * skipped-unsupported). Adding a family therefore does not change
 * NUMREF_BACKEND_ABI_VERSION; changing or removing anything does.
 *
 * Versions. NUMREF_BACKEND_ABI_VERSION is the major version: the runner refuses a backend
 * whose major version differs from its own. NUMREF_BACKEND_ABI_MINOR counts what was added
 * since without changing what an earlier minor version relies on (compile-time information
 * for backend authors, e.g. `#if NUMREF_BACKEND_ABI_MINOR >= 1`); struct_size says which
 * entry points a backend has. What each minor version added is spec Annex C.1.
 *
 * Unavailable backends. A backend that is correctly built but cannot run on this
 * machine — a GPU backend on a machine without a usable device — makes
 * numref_backend_open return NULL with an err text that begins with "unavailable: "
 * followed by the reason ("unavailable: no CUDA device (cudaGetDeviceCount: no CUDA-capable
 * device is detected)"). The runner reports every suite of that backend SKIPPED with the
 * reason — never passed, never failed — and exits with status 0 unless --require-backend
 * (then 77, the CTest skip code). Any other open failure is an error (exit 3).
 *
 * Codes. A code is the bit pattern of a format (spec §1.2), passed in a uint32_t; 6- and
 * 4-bit codes sit in the low bits with the high bits zero (§2.4).
 */
#ifndef NUMREF_BACKEND_H
#define NUMREF_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI is tables of numbers and their comments, laid out by hand in columns. */
/* clang-format off */
#define NUMREF_BACKEND_ABI_VERSION 1u
#define NUMREF_BACKEND_ABI_MINOR 12u

#if defined(_WIN32)
#define NUMREF_BACKEND_EXPORT __declspec(dllexport)
#else
#define NUMREF_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

/* ---- formats (spec §2.1, in table order; pinned to numref::FormatId in conform/abi.hpp) ---- */
#define NUMREF_FMT_F32 0u
#define NUMREF_FMT_BF16 1u
#define NUMREF_FMT_F16 2u
#define NUMREF_FMT_F8E4M3FN 3u
#define NUMREF_FMT_F8E5M2 4u
#define NUMREF_FMT_F8E8M0FNU 5u
#define NUMREF_FMT_F6E3M2FN 6u
#define NUMREF_FMT_F6E2M3FN 7u
#define NUMREF_FMT_F4E2M1FN 8u
#define NUMREF_FMT_INT8 9u
#define NUMREF_FMT_F8E4M3FNUZ 10u
#define NUMREF_FMT_F8E5M2FNUZ 11u
#define NUMREF_FMT_F8E4M3B11FNUZ 12u
#define NUMREF_FMT_F8E4M3 13u
#define NUMREF_FMT_F8E3M4 14u
/* The IEEE P3109 members (spec §2.5), numbered after F8E3M4 in the order of
 * NUMREF_P3109_MEMBERS (reference/include/numref/format.hpp): NUMREF_FMT_P3109_K<K>P<P><S><D>; first
 * the 12 binary8 members (ids 15..26), then the 128 others (ids 27..154) in K, P, S, D order. */
#define NUMREF_P3109_BINARY8_FORMAT_LIST(X)                                                         \
  X(P3109_K8P1SE, p3109_k8p1se) X(P3109_K8P1UE, p3109_k8p1ue) X(P3109_K8P3SE, p3109_k8p3se)          \
  X(P3109_K8P3SF, p3109_k8p3sf) X(P3109_K8P3UE, p3109_k8p3ue) X(P3109_K8P3UF, p3109_k8p3uf)          \
  X(P3109_K8P4SE, p3109_k8p4se) X(P3109_K8P4SF, p3109_k8p4sf) X(P3109_K8P4UE, p3109_k8p4ue)          \
  X(P3109_K8P4UF, p3109_k8p4uf) X(P3109_K8P7SF, p3109_k8p7sf) X(P3109_K8P8UF, p3109_k8p8uf)
#define NUMREF_P3109_MORE_FORMAT_LIST(X)                                                    \
  X(P3109_K2P1SE, p3109_k2p1se) X(P3109_K2P1SF, p3109_k2p1sf) X(P3109_K2P1UE, p3109_k2p1ue) \
  X(P3109_K2P1UF, p3109_k2p1uf) X(P3109_K2P2SE, p3109_k2p2se) X(P3109_K2P2SF, p3109_k2p2sf) \
  X(P3109_K2P2UE, p3109_k2p2ue) X(P3109_K2P2UF, p3109_k2p2uf) X(P3109_K3P1SE, p3109_k3p1se) \
  X(P3109_K3P1SF, p3109_k3p1sf) X(P3109_K3P1UE, p3109_k3p1ue) X(P3109_K3P1UF, p3109_k3p1uf) \
  X(P3109_K3P2SE, p3109_k3p2se) X(P3109_K3P2SF, p3109_k3p2sf) X(P3109_K3P2UE, p3109_k3p2ue) \
  X(P3109_K3P2UF, p3109_k3p2uf) X(P3109_K3P3SE, p3109_k3p3se) X(P3109_K3P3SF, p3109_k3p3sf) \
  X(P3109_K3P3UE, p3109_k3p3ue) X(P3109_K3P3UF, p3109_k3p3uf) X(P3109_K4P1SE, p3109_k4p1se) \
  X(P3109_K4P1SF, p3109_k4p1sf) X(P3109_K4P1UE, p3109_k4p1ue) X(P3109_K4P1UF, p3109_k4p1uf) \
  X(P3109_K4P2SE, p3109_k4p2se) X(P3109_K4P2SF, p3109_k4p2sf) X(P3109_K4P2UE, p3109_k4p2ue) \
  X(P3109_K4P2UF, p3109_k4p2uf) X(P3109_K4P3SE, p3109_k4p3se) X(P3109_K4P3SF, p3109_k4p3sf) \
  X(P3109_K4P3UE, p3109_k4p3ue) X(P3109_K4P3UF, p3109_k4p3uf) X(P3109_K4P4SE, p3109_k4p4se) \
  X(P3109_K4P4SF, p3109_k4p4sf) X(P3109_K4P4UE, p3109_k4p4ue) X(P3109_K4P4UF, p3109_k4p4uf) \
  X(P3109_K5P1SE, p3109_k5p1se) X(P3109_K5P1SF, p3109_k5p1sf) X(P3109_K5P1UE, p3109_k5p1ue) \
  X(P3109_K5P1UF, p3109_k5p1uf) X(P3109_K5P2SE, p3109_k5p2se) X(P3109_K5P2SF, p3109_k5p2sf) \
  X(P3109_K5P2UE, p3109_k5p2ue) X(P3109_K5P2UF, p3109_k5p2uf) X(P3109_K5P3SE, p3109_k5p3se) \
  X(P3109_K5P3SF, p3109_k5p3sf) X(P3109_K5P3UE, p3109_k5p3ue) X(P3109_K5P3UF, p3109_k5p3uf) \
  X(P3109_K5P4SE, p3109_k5p4se) X(P3109_K5P4SF, p3109_k5p4sf) X(P3109_K5P4UE, p3109_k5p4ue) \
  X(P3109_K5P4UF, p3109_k5p4uf) X(P3109_K5P5SE, p3109_k5p5se) X(P3109_K5P5SF, p3109_k5p5sf) \
  X(P3109_K5P5UE, p3109_k5p5ue) X(P3109_K5P5UF, p3109_k5p5uf) X(P3109_K6P1SE, p3109_k6p1se) \
  X(P3109_K6P1SF, p3109_k6p1sf) X(P3109_K6P1UE, p3109_k6p1ue) X(P3109_K6P1UF, p3109_k6p1uf) \
  X(P3109_K6P2SE, p3109_k6p2se) X(P3109_K6P2SF, p3109_k6p2sf) X(P3109_K6P2UE, p3109_k6p2ue) \
  X(P3109_K6P2UF, p3109_k6p2uf) X(P3109_K6P3SE, p3109_k6p3se) X(P3109_K6P3SF, p3109_k6p3sf) \
  X(P3109_K6P3UE, p3109_k6p3ue) X(P3109_K6P3UF, p3109_k6p3uf) X(P3109_K6P4SE, p3109_k6p4se) \
  X(P3109_K6P4SF, p3109_k6p4sf) X(P3109_K6P4UE, p3109_k6p4ue) X(P3109_K6P4UF, p3109_k6p4uf) \
  X(P3109_K6P5SE, p3109_k6p5se) X(P3109_K6P5SF, p3109_k6p5sf) X(P3109_K6P5UE, p3109_k6p5ue) \
  X(P3109_K6P5UF, p3109_k6p5uf) X(P3109_K6P6SE, p3109_k6p6se) X(P3109_K6P6SF, p3109_k6p6sf) \
  X(P3109_K6P6UE, p3109_k6p6ue) X(P3109_K6P6UF, p3109_k6p6uf) X(P3109_K7P1SE, p3109_k7p1se) \
  X(P3109_K7P1SF, p3109_k7p1sf) X(P3109_K7P1UE, p3109_k7p1ue) X(P3109_K7P1UF, p3109_k7p1uf) \
  X(P3109_K7P2SE, p3109_k7p2se) X(P3109_K7P2SF, p3109_k7p2sf) X(P3109_K7P2UE, p3109_k7p2ue) \
  X(P3109_K7P2UF, p3109_k7p2uf) X(P3109_K7P3SE, p3109_k7p3se) X(P3109_K7P3SF, p3109_k7p3sf) \
  X(P3109_K7P3UE, p3109_k7p3ue) X(P3109_K7P3UF, p3109_k7p3uf) X(P3109_K7P4SE, p3109_k7p4se) \
  X(P3109_K7P4SF, p3109_k7p4sf) X(P3109_K7P4UE, p3109_k7p4ue) X(P3109_K7P4UF, p3109_k7p4uf) \
  X(P3109_K7P5SE, p3109_k7p5se) X(P3109_K7P5SF, p3109_k7p5sf) X(P3109_K7P5UE, p3109_k7p5ue) \
  X(P3109_K7P5UF, p3109_k7p5uf) X(P3109_K7P6SE, p3109_k7p6se) X(P3109_K7P6SF, p3109_k7p6sf) \
  X(P3109_K7P6UE, p3109_k7p6ue) X(P3109_K7P6UF, p3109_k7p6uf) X(P3109_K7P7SE, p3109_k7p7se) \
  X(P3109_K7P7SF, p3109_k7p7sf) X(P3109_K7P7UE, p3109_k7p7ue) X(P3109_K7P7UF, p3109_k7p7uf) \
  X(P3109_K8P1SF, p3109_k8p1sf) X(P3109_K8P1UF, p3109_k8p1uf) X(P3109_K8P2SE, p3109_k8p2se) \
  X(P3109_K8P2SF, p3109_k8p2sf) X(P3109_K8P2UE, p3109_k8p2ue) X(P3109_K8P2UF, p3109_k8p2uf) \
  X(P3109_K8P5SE, p3109_k8p5se) X(P3109_K8P5SF, p3109_k8p5sf) X(P3109_K8P5UE, p3109_k8p5ue) \
  X(P3109_K8P5UF, p3109_k8p5uf) X(P3109_K8P6SE, p3109_k8p6se) X(P3109_K8P6SF, p3109_k8p6sf) \
  X(P3109_K8P6UE, p3109_k8p6ue) X(P3109_K8P6UF, p3109_k8p6uf) X(P3109_K8P7SE, p3109_k8p7se) \
  X(P3109_K8P7UE, p3109_k8p7ue) X(P3109_K8P7UF, p3109_k8p7uf) X(P3109_K8P8SE, p3109_k8p8se) \
  X(P3109_K8P8SF, p3109_k8p8sf) X(P3109_K8P8UE, p3109_k8p8ue)
#define NUMREF_P3109_FORMAT_LIST(X) NUMREF_P3109_BINARY8_FORMAT_LIST(X) NUMREF_P3109_MORE_FORMAT_LIST(X)
#define NUMREF_P3109_FMT_ENUMERATOR_(NAME, name) NUMREF_FMT_##NAME,
enum { NUMREF_FMT_P3109_BEFORE_ = 14, NUMREF_P3109_FORMAT_LIST(NUMREF_P3109_FMT_ENUMERATOR_) NUMREF_FMT_END_ };
#undef NUMREF_P3109_FMT_ENUMERATOR_
#define NUMREF_FMT_COUNT (0u + NUMREF_FMT_END_)
/* Every format as X(NAME, name): the NUMREF_FMT_NAME constant and the §2.1 name, in table order.
 * conform/abi.hpp expands it to pin every constant; C code may expand it too (a name table). */
#define NUMREF_FORMAT_LIST(X)                                                                      \
  X(F32, f32) X(BF16, bf16) X(F16, f16) X(F8E4M3FN, f8e4m3fn) X(F8E5M2, f8e5m2)                   \
  X(F8E8M0FNU, f8e8m0fnu) X(F6E3M2FN, f6e3m2fn) X(F6E2M3FN, f6e2m3fn) X(F4E2M1FN, f4e2m1fn)       \
  X(INT8, int8) X(F8E4M3FNUZ, f8e4m3fnuz) X(F8E5M2FNUZ, f8e5m2fnuz) X(F8E4M3B11FNUZ, f8e4m3b11fnuz)   \
  X(F8E4M3, f8e4m3) X(F8E3M4, f8e3m4) NUMREF_P3109_FORMAT_LIST(X)

/* ---- policy knobs (spec §4–§10); the names are those of describe(), §10.3 ---------- */
/* Each knob's values are numbered in the order of its words in the knob table of
 * reference/include/numref/policy.hpp (kPolicyKnobs); conform/abi.hpp pins every constant. */
#define NUMREF_ROUND_RNE 0u /* round=rne */
#define NUMREF_ROUND_RTZ 1u /* round=rtz */
#define NUMREF_ROUND_RUP 2u /* round=rup */
#define NUMREF_ROUND_RDN 3u /* round=rdn */
#define NUMREF_ROUND_RNA 4u /* round=rna */
#define NUMREF_ROUND_SR 5u  /* round=sr: r[i] holds the random bits (§5) */

#define NUMREF_SR_FRACTION 0u /* sr_variant=fraction (§5.1) */
#define NUMREF_SR_ADD 1u      /* sr_variant=add (§5.2) */

#define NUMREF_OVERFLOW_SATURATE 0u /* overflow=saturate (§6.1) */
#define NUMREF_OVERFLOW_NONSAT 1u   /* overflow=nonsat */

#define NUMREF_INF_SAT_MAX 0u  /* inf_sat=max (§6.2) */
#define NUMREF_INF_SAT_KEEP 1u /* inf_sat=keep */

#define NUMREF_NAN_SIGN 0u      /* nan=sign (§6.3) */
#define NUMREF_NAN_CANONICAL 1u /* nan=canonical */
#define NUMREF_NAN_ONES 2u      /* nan=ones */
#define NUMREF_NAN_PAYLOAD 3u   /* nan=payload */
#define NUMREF_NAN_ONES_SIGN 4u /* nan=ones_sign */
#define NUMREF_NAN_RAW 5u       /* nan=raw */
#define NUMREF_NAN_ALL_ONES 6u  /* nan=all_ones */
#define NUMREF_NAN_RAW_PLUS 7u  /* nan=raw_plus (1.7) */

#define NUMREF_NAN_TO_FINITE_ZERO 0u    /* nan_to_finite=zero (§6.4) */
#define NUMREF_NAN_TO_FINITE_NEGZERO 1u /* nan_to_finite=negzero */
#define NUMREF_NAN_TO_FINITE_MAX 2u     /* nan_to_finite=max */
#define NUMREF_NAN_TO_FINITE_SIGNZERO 3u /* nan_to_finite=signzero */
#define NUMREF_NAN_TO_FINITE_FLIPZERO 4u /* nan_to_finite=flipzero */

#define NUMREF_E8M0_FOLLOW 0u /* e8m0_round=follow (§7.1) */
#define NUMREF_E8M0_FLOOR 1u /* e8m0_round=floor */
#define NUMREF_E8M0_CEIL 2u /* e8m0_round=ceil */
#define NUMREF_E8M0_EVEN 3u /* e8m0_round=even */
#define NUMREF_E8M0_TIESUP 4u /* e8m0_round=tiesup */

#define NUMREF_ZERO_TO_NOZERO_NAN 0u /* zero_to_nozero=nan (§7.2) */
#define NUMREF_ZERO_TO_NOZERO_MIN 1u /* zero_to_nozero=min */

#define NUMREF_NEGATIVE_NAN 0u /* negative=nan (§7.3) */
#define NUMREF_NEGATIVE_ABS 1u /* negative=abs */
#define NUMREF_NEGATIVE_INF_ABS 2u /* negative=inf_abs: finite negatives NaN, -Inf as +Inf (gfloat) */

#define NUMREF_TININESS_AFTER 0u /* tininess=after (§9.2) */
#define NUMREF_TININESS_BEFORE 1u /* tininess=before */

#define NUMREF_INT_RANGE_FULL 0u /* int_range=full (§6.5) */
#define NUMREF_INT_RANGE_SYMMETRIC 1u /* int_range=symmetric */

#define NUMREF_E8M0_LOW_LINEAR 0u /* e8m0_low=linear (§7.4) */
#define NUMREF_E8M0_LOW_GRID 1u   /* e8m0_low=grid */
#define NUMREF_E8M0_LOW_NAN 2u    /* e8m0_low=nan: rounded below 2^-127 -> FF (gfloat) */

#define NUMREF_INF_NAN_SLOT 0u /* inf_nan=slot (§6.7) */
#define NUMREF_INF_NAN_NAN 1u  /* inf_nan=nan: the NaN standing for Inf follows nan= (gfloat) */

/* ---- profiles (spec §10.1; numref::ProfileId, pinned in conform/abi.hpp) ----------- */
#define NUMREF_PROFILE_NONE (-1) /* the policy is not exactly a profile's */
/* Every profile as X(NAME, name): the constant NUMREF_PROFILE_NAME and the §10 name, in the order of
 * the profile table (numref::ProfileId, NUMREF_PROFILE_IDS in reference/include/numref/profiles.hpp).
 * An entry's position is its number: NUMREF_PROFILE_OCP 0, NUMREF_PROFILE_IEEE 1, ...,
 * NUMREF_PROFILE_TORCHAO_FLOAT8_INFERENCE 21. Numbers never change: a new profile is appended
 * (a value appended to an existing field: note it in the version list above). conform/abi.hpp
 * expands the list to pin every constant; C code may expand it too (a name table). */
#define NUMREF_PROFILE_LIST(X)                                                                    \
  X(OCP, ocp) X(IEEE, ieee) X(CUDA_SATFINITE, cuda_satfinite) X(CUDA_NOSAT, cuda_nosat)            \
  X(ML_DTYPES, ml_dtypes) X(TORCH, torch) X(TORCH_DEFAULT, torch_default) X(XLA, xla)              \
  /* 8 - 15: profiles with a quantization recipe (§10.4) */                                       \
  X(TORCHAO_MX_FLOOR, torchao_mx_floor) X(TORCHAO_MX_CEIL, torchao_mx_ceil)                        \
  X(TORCHAO_MX_EVEN, torchao_mx_even) X(TORCHAO_MX_RCEIL, torchao_mx_rceil)                        \
  X(TORCHAO_FLOAT8, torchao_float8) X(TORCHAO_FLOAT8_POW2, torchao_float8_pow2)                    \
  X(DEEPGEMM, deepgemm) X(TE_MXFP8, te_mxfp8)                                                      \
  /* 16, 17: element profiles added later */                                                      \
  X(GFLOAT, gfloat) X(GFLOAT_SAT, gfloat_sat)                                                      \
  /* 18, 19: recipe profiles added later (1.5); 20, 21 (1.6); 22 (1.10); 23 - 25 (1.11); 26 - 31  \
     (1.12) */                                                                                    \
  X(TE_FLOAT8_CURRENT, te_float8_current) X(TE_FLOAT8_BLOCK, te_float8_block)                      \
  X(MICROXCALING, microxcaling) X(TORCHAO_FLOAT8_INFERENCE, torchao_float8_inference)              \
  X(MICROXCALING_EVEN, microxcaling_even) X(TE_FLOAT8_CURRENT_POW2, te_float8_current_pow2)        \
  X(TE_FLOAT8_BLOCK_F32, te_float8_block_f32) X(TE_MXFP8_2_13, te_mxfp8_2_13)                    \
  X(DEEPGEMM_F32, deepgemm_f32) X(MICROXCALING_FLOOR, microxcaling_floor)                          \
  X(TORCHAO_NVFP4, torchao_nvfp4) X(TORCHAO_NVFP4_BLOCK, torchao_nvfp4_block)                     \
  X(TE_NVFP4, te_nvfp4) X(TE_NVFP4_2D, te_nvfp4_2d)
#define NUMREF_PROFILE_ENUMERATOR_(NAME, name) NUMREF_PROFILE_##NAME,
enum { NUMREF_PROFILE_LIST(NUMREF_PROFILE_ENUMERATOR_) NUMREF_PROFILE_END_ };
#undef NUMREF_PROFILE_ENUMERATOR_
#define NUMREF_PROFILE_COUNT (0 + NUMREF_PROFILE_END_)

/* The complete policy of one operation. Every knob is present; a backend that supports
 * only some settings answers 0 from its *_supported() query for the others. */
typedef struct numref_policy {
  uint8_t round;          /* NUMREF_ROUND_* */
  uint8_t sr_bits;        /* k, 1..32 when round == SR, else 0 */
  uint8_t sr_variant;     /* NUMREF_SR_* */
  uint8_t overflow;       /* NUMREF_OVERFLOW_* */
  uint8_t inf_sat;        /* NUMREF_INF_SAT_* */
  uint8_t nan;            /* NUMREF_NAN_* */
  uint8_t nan_to_finite;  /* NUMREF_NAN_TO_FINITE_* */
  uint8_t e8m0_round;     /* NUMREF_E8M0_* */
  uint8_t zero_to_nozero; /* NUMREF_ZERO_TO_NOZERO_* */
  uint8_t negative;       /* NUMREF_NEGATIVE_* */
  uint8_t daz;            /* 0 or 1 (§8.1) */
  uint8_t ftz;            /* 0 or 1 (§8.2) */
  uint8_t tininess;       /* NUMREF_TININESS_* */
  uint8_t int_range;      /* NUMREF_INT_RANGE_* */
  uint8_t e8m0_low;       /* NUMREF_E8M0_LOW_* (was reserved: zero = linear, the old behaviour) */
  uint8_t inf_nan;        /* NUMREF_INF_NAN_* (the last reserved byte: zero = slot, the old behaviour).
                           * No reserved byte is left: a later knob changes the ABI version. */
  /* NUMREF_PROFILE_* when the policy is exactly the profile's policy for the operation
   * (§10.1 narrow or wide by the target, then the §10.2 rules of the (source, target)
   * pair), else NUMREF_PROFILE_NONE. When several profiles have the same policy, the
   * first in the table above. */
  int32_t profile;
  /* The same policy in the describe() text form of §10.3, NUL-terminated. */
  const char* text;
} numref_policy;

/* ---- capabilities ------------------------------------------------------------------ */
/* The backend reports exception flags (§9). Without it the runner passes flags = NULL,
 * compares result codes only, and every report says "flags not compared". */
#define NUMREF_CAP_FLAGS 0x1u
/* (1.1) The backend reports the §19.5 counts of quantize / fake-quant (saturated, flushed,
 * nan, inf). Without it the runner passes counts = NULL and does not compare them. */
#define NUMREF_CAP_COUNTS 0x2u
/* (1.4) The backend reads numref_tensor_op.recipe: its tensor_supported() answers 0 for a
 * recipe knob it does not implement. Without it the runner skips (unsupported) every tensor
 * case whose recipe is not numref's default, and passes the others as before. */
#define NUMREF_CAP_RECIPE 0x4u

/* ---- tensor operations (1.1; spec §12–§20) ----------------------------------------- */
/* Scale rules (§19.6 names), in the order of spec §14–§20: the abi_id column of the rule table
 * of reference/include/numref/scale.hpp (kScaleRules); conform/abi.hpp pins every constant. */
#define NUMREF_RULE_AMAX 0u         /* amax: S = RN32(q_max / amax), stored S (§14.1) */
#define NUMREF_RULE_AMAX_RECIP 1u   /* amax-recip: quantize x S, store RN32(1 / S) (§14.2) */
#define NUMREF_RULE_AMAX_DEQUANT 2u /* amax-dequant: D = RN32(amax / q_max), x / D (§14.3) */
#define NUMREF_RULE_POW2 3u         /* pow2: 2^E(S) (§15) */
#define NUMREF_RULE_MX_FLOOR 4u     /* mx-floor: OCP MX v1.0 §6.3 (§16.2) */
#define NUMREF_RULE_MX_CEIL 5u      /* mx-ceil (§16.3) */
#define NUMREF_RULE_MX_EVEN 6u      /* mx-even (§16.4) */
#define NUMREF_RULE_MX_RCEIL 7u     /* mx-rceil: exact quotient (§16.5) */
#define NUMREF_RULE_MX_RCEIL_F32 8u /* mx-rceil-f32: as cuBLAS / TransformerEngine (§16.6) */
#define NUMREF_RULE_GAM 9u          /* gam: group mantissa + E8M0 block exponent (§17) */
#define NUMREF_RULE_NVFP4 10u       /* nvfp4: f32 tensor scale x E4M3 block scale (§18) */
#define NUMREF_RULE_INT8 11u        /* int8: delta = RN32(amax / 127), [-127, 127] (§20) */
#define NUMREF_RULE_INT8_127_5 12u  /* int8-127.5: delta = RN32(amax / 127.5), [-128, 127] */
#define NUMREF_RULE_POW2_RECIP 13u  /* pow2-recip: P of §15, stored R = 1 / P (§15.3; ABI 1.5) */
#define NUMREF_RULE_COUNT 14u
/* Every scale rule as X(NAME, name): the NUMREF_RULE_NAME constant and the enumerator of
 * numref::ScaleRule (the §19.6 name with '_' for '-' and '.'); conform/abi.hpp pins them. */
#define NUMREF_RULE_LIST(X)                                                                        \
  X(AMAX, amax) X(AMAX_RECIP, amax_recip) X(AMAX_DEQUANT, amax_dequant) X(POW2, pow2)            \
  X(MX_FLOOR, mx_floor) X(MX_CEIL, mx_ceil) X(MX_EVEN, mx_even) X(MX_RCEIL, mx_rceil)            \
  X(MX_RCEIL_F32, mx_rceil_f32) X(GAM, gam) X(NVFP4, nvfp4) X(INT8, int8) X(INT8_127_5, int8_127_5)  \
  X(POW2_RECIP, pow2_recip)

#define NUMREF_APPLY_RN32 0u  /* y = RN32(x op f), then convert (§19.2; default but int8 rules) */
#define NUMREF_APPLY_FUSED 1u /* apply=fused; the exact x op f rounded once into the element */

#define NUMREF_DEQUANT_DIVIDE 0u     /* dequant=divide; v / S (§19.3) */
#define NUMREF_DEQUANT_RECIPROCAL 1u /* dequant=reciprocal; v * RN32(1 / S) */

#define NUMREF_AMAX_PROPAGATE 0u /* amax_nan / amax_inf = propagate (§13.2) */
#define NUMREF_AMAX_IGNORE 1u /* amax_nan / amax_inf = ignore */

/* §19.8 quantization-recipe knobs (1.4): the value of each numref_recipe field is the index of
 * its word in the knob's row of numref::kRecipeKnobs (reference/include/numref/policy.hpp);
 * 0 is numref's own rule. conform/abi.hpp pins every constant. */
#define NUMREF_AMAX_FLOOR_NONE 0u    /* amax_floor=none; §13.5 no floor */
#define NUMREF_AMAX_FLOOR_1E_12 1u   /* amax_floor=1e-12; max(amax, RN64(1e-12)) (torchao float8) */
#define NUMREF_AMAX_FLOOR_1E_4 2u    /* amax_floor=1e-4; max(amax, RN32(1e-4)) (DeepGEMM) */
#define NUMREF_SCALE_EXP_BITS 0u     /* scale_exp=bits; §15 / §16.5 exponents read exactly */
#define NUMREF_SCALE_EXP_LOG2F 1u    /* scale_exp=log2f; §16.8 as binary32 log2f would (the correctly rounded log2) */
#define NUMREF_ZERO_CODE_STORED 0u   /* zero_code=stored; §16.9 E8M0 code 00 quantizes with 2^-127 */
#define NUMREF_ZERO_CODE_MIN_NORMAL 1u /* zero_code=min_normal; with 2^-126 */
#define NUMREF_ZERO_CODE_ONE 2u      /* zero_code=one; with 1 */
#define NUMREF_INF_BLOCK_POISON 0u   /* inf_block=poison; §13.3 / §13.6 */
#define NUMREF_INF_BLOCK_EXPONENT 1u /* inf_block=exponent */
#define NUMREF_INF_BLOCK_MAX_CODE 2u /* inf_block=max_code */
#define NUMREF_INF_BLOCK_ZERO_SCALE 3u /* inf_block=zero_scale */
#define NUMREF_INF_BLOCK_MAX_CODE_ZERO 4u /* inf_block=max_code_zero */
#define NUMREF_INF_BLOCK_ONE_SCALE 5u /* inf_block=one_scale */
#define NUMREF_NAN_BLOCK_POISON 0u   /* nan_block=poison; §13.3 / §13.7 */
#define NUMREF_NAN_BLOCK_INF_DIVISOR 1u /* nan_block=inf_divisor */
#define NUMREF_NAN_BLOCK_MAX_CODE 2u /* nan_block=max_code */
#define NUMREF_NAN_BLOCK_FIRST_NAN 3u /* nan_block=first_nan; 1.6 */
#define NUMREF_NAN_BLOCK_OWN_NAN 4u   /* nan_block=own_nan; 1.6 */
#define NUMREF_ELEM_NAN_POLICY 0u    /* elem_nan=policy; §19.9 */
#define NUMREF_ELEM_NAN_HALF 1u /* elem_nan=half */
#define NUMREF_ELEM_NAN_BITS 2u /* elem_nan=bits; 1.12 */
#define NUMREF_MX_DESCALE_RECIP 0u   /* mx_descale=recip; §16.6 / §16.10 */
#define NUMREF_MX_DESCALE_DIVIDE 1u /* mx_descale=divide */
#define NUMREF_NAN_SCALE_CANONICAL 0u /* nan_scale=canonical; §13.8 */
#define NUMREF_NAN_SCALE_ALL_ONES_TENSOR 1u /* only with the `tensor` partition (n_blocks 1): the runner
                                             * sends CANONICAL for every other partition */
#define NUMREF_ZERO_SIGN_KEEP 0u  /* zero_sign=keep; §19.10 (1.6) */
#define NUMREF_ZERO_SIGN_PLUS 1u /* zero_sign=plus */
#define NUMREF_SCALE_ROUND_F32 0u      /* scale_round=f32; §14.5 (1.6) */
#define NUMREF_SCALE_ROUND_SOURCE 1u /* scale_round=source */
#define NUMREF_ZERO_DIVISOR_RAISE 0u   /* zero_divisor=raise; §14.6 (1.6) */
#define NUMREF_ZERO_DIVISOR_KEEP 1u /* zero_divisor=keep */
#define NUMREF_DIVISOR_DIVIDE 0u    /* divisor=divide; §14.7 (1.12) */
#define NUMREF_DIVISOR_RECIP 1u     /* divisor=recip */
#define NUMREF_ELEM_EXP_BITS 0u     /* elem_exp=bits; §19.11 (1.12) */
#define NUMREF_ELEM_EXP_LOG2F 1u    /* elem_exp=log2f */
#define NUMREF_NVFP4_SCALE_ENCODE 0u /* nvfp4_scale=encode; §18.5 (1.12) */
#define NUMREF_NVFP4_SCALE_DECODE 1u /* nvfp4_scale=decode */
#define NUMREF_NVFP4_SCALE_BLOCK 2u  /* nvfp4_scale=block */
#define NUMREF_NVFP4_SCALE_ENCODE_INF_ONE 3u /* nvfp4_scale=encode_inf_one */

/* The recipe of a tensor operation (1.4), one field per row of kRecipeKnobs in table order.
 * All zero: numref's rules (§13 – §19), what every tensor operation of a profile without a
 * recipe carries. Reserved bytes are zero (later knobs take them: a knob's 0 is numref's rule). */
typedef struct numref_recipe {
  uint8_t amax_floor;  /* NUMREF_AMAX_FLOOR_* (§13.5) */
  uint8_t scale_exp;   /* NUMREF_SCALE_EXP_* (§16.8) */
  uint8_t zero_code;   /* NUMREF_ZERO_CODE_* (§16.9) */
  uint8_t inf_block;   /* NUMREF_INF_BLOCK_* (§13.6) */
  uint8_t nan_block;   /* NUMREF_NAN_BLOCK_* (§13.7) */
  uint8_t elem_nan;    /* NUMREF_ELEM_NAN_* (§19.9) */
  uint8_t mx_descale;  /* NUMREF_MX_DESCALE_* (§16.10) */
  uint8_t nan_scale;   /* NUMREF_NAN_SCALE_* (§13.8) */
  uint8_t zero_sign;   /* NUMREF_ZERO_SIGN_* (§19.10; 1.6, was reserved) */
  uint8_t scale_round; /* NUMREF_SCALE_ROUND_* (§14.5; 1.6, was reserved) */
  uint8_t zero_divisor; /* NUMREF_ZERO_DIVISOR_* (§14.6; 1.6, was reserved) */
  uint8_t divisor;      /* NUMREF_DIVISOR_* (§14.7; 1.12, was reserved) */
  uint8_t elem_exp;     /* NUMREF_ELEM_EXP_* (§19.11; 1.12, was reserved) */
  uint8_t nvfp4_scale; /* NUMREF_NVFP4_SCALE_* (§18.5; 1.12, was reserved) */
  uint8_t reserved[2]; /* zero */
  /* The same knobs in the describe() text form of §19.8 ("amax_floor=none scale_exp=bits ..."). */
  const char* text;
} numref_recipe;

/* The tensor families, for tensor_supported(). */
#define NUMREF_TENSOR_SCALE 0u      /* op family "scale" (§13–§18, §20.1): amax and scales */
#define NUMREF_TENSOR_QUANTIZE 1u   /* "quantize" (§19.2, §19.4, §20): codes and scales */
#define NUMREF_TENSOR_DEQUANTIZE 2u /* "dequantize" (§19.3): binary32 values */
#define NUMREF_TENSOR_FAKE_QUANT 3u /* "fake-quant" (§19.6): bf16 / f16 / f32 values */

/* One tensor operation. The input tensor x is a rows x cols VIEW (§12.1): element (i, j)
 * is x[i * row_stride + j * col_stride] (strides in elements; dense row-major: cols, 1; a
 * transposed view of a cols x rows buffer: 1, rows). Codes of x occupy 1, 2 or 4 bytes by
 * the source's width (sub-byte codes one per byte), native endian. Every per-element
 * array the runner passes or expects — random values, codes, dequantized values — is in
 * ELEMENT ORDER: row-major of the view, index i * cols + j. Per-block arrays are
 * block-row-major (§12.2), per-group arrays group-row-major (§12.4). */
typedef struct numref_tensor_op {
  uint32_t struct_size;     /* sizeof(numref_tensor_op) as the runner was built (fields may be appended) */
  uint32_t source;          /* NUMREF_FMT_* of x (scale, quantize, fake-quant) */
  uint32_t element;         /* NUMREF_FMT_* of the codes (8 bits at most) */
  uint32_t rule;            /* NUMREF_RULE_* */
  uint32_t rows, cols;      /* the view */
  int64_t row_stride;       /* of x, in elements */
  int64_t col_stride;
  uint32_t block_rows;      /* partition (§12.2), effective: a 0 ("whole extent") is resolved */
  uint32_t block_cols;
  uint32_t n_blocks;        /* ceil(rows / block_rows) * ceil(cols / block_cols) */
  uint32_t group_rows;      /* GAM groups (§12.4), effective; = rows, cols for other rules */
  uint32_t group_cols;
  uint32_t n_groups;        /* 1 unless GAM */
  uint32_t q_max;           /* binary32 code of q_max (§14.4): the element's max finite, 127.5 for int8-127.5,
                             * or the case's explicit q_max (its parameter text has q_max=) */
  uint8_t apply;            /* NUMREF_APPLY_* (quantize, fake-quant) */
  uint8_t dequant;          /* NUMREF_DEQUANT_* (dequantize, fake-quant) */
  uint8_t amax_nan;         /* NUMREF_AMAX_* (scale, quantize, fake-quant) */
  uint8_t amax_inf;
  uint32_t out_format;      /* fake-quant output: NUMREF_FMT_BF16, F16 or F32 */
  numref_policy policy;     /* element conversion (§19.1); round == SR: r holds one value per element */
  numref_policy wide;       /* the profile's wide policy: NaN codes -> binary32 (§19.3), fake-quant output */
  const char* text;         /* the canonical parameter text (the pipe protocol's <params>) */
  /* (1.4) the §19.8 recipe knobs (scale, quantize, fake-quant; all zero for dequantize and for
   * a profile without a recipe). Read it only when struct_size covers it and the backend
   * declares NUMREF_CAP_RECIPE; answer 0 from tensor_supported() for a knob not implemented. */
  numref_recipe recipe;
} numref_tensor_op;

/* ---- MoR (1.2; spec §21–§27) -------------------------------------------------------- */
#define NUMREF_TENSOR_MOR 4u     /* op family "mor": tensor-level MoR (§26) */
#define NUMREF_TENSOR_MOR_SUB 5u /* op family "mor-sub": sub-tensor MoR (§27) */

#define NUMREF_MOR_TENSOR 0u    /* [f8e4m3fn, bf16], M_1 = Eq. 2 (§26) */
#define NUMREF_MOR_THREE_WAY 1u /* [f8e4m3fn, f8e5m2, bf16], M_1 = Eq. 3, M_2 = Eq. 4 (§27.1) */
#define NUMREF_MOR_TWO_WAY 2u   /* [f8e4m3fn, bf16], M_1 = Eq. 3 against E5M2 as benchmark (§27.1) */

/* §25.3 reasons, in the order of numref::Reason (pinned in conform/abi.hpp). */
#define NUMREF_REASON_ACCEPTED 0u
#define NUMREF_REASON_ALL_ZERO 1u
#define NUMREF_REASON_EXACT 2u
#define NUMREF_REASON_THRESHOLD 3u
#define NUMREF_REASON_NOT_LOWER 4u
#define NUMREF_REASON_RANGE 5u
#define NUMREF_REASON_NONFINITE_INPUT 6u
#define NUMREF_REASON_NONFINITE_QUANT 7u
#define NUMREF_REASON_CUSTOM 8u
#define NUMREF_REASON_FALLBACK 9u
#define NUMREF_REASON_NOT_EVALUATED 10u

/* §27.4 the per-block type map: numref::BlockType (pinned in conform/abi.hpp). */
#define NUMREF_BLOCK_F8E4M3FN 0u
#define NUMREF_BLOCK_F8E5M2 1u
#define NUMREF_BLOCK_KEPT 2u

/* §22.3 An exact error sum: S = (limb[0] + limb[1] 2^64 + ... + limb[4] 2^256) * 2^-149,
 * the exact sum of the binary32 relative errors e (§21.2) of the n finite non-zero
 * elements; the counts of NaN / ±Inf inputs, of finite inputs whose Q(x) or e is not
 * finite (§21.3), and of ±0 elements. Order independent by construction: every backend
 * must produce these exact integers whatever its reduction order. */
typedef struct numref_error_sum {
  uint64_t limb[5];
  uint64_t n;
  uint64_t nonfinite_input;
  uint64_t nonfinite_quant;
  uint64_t zeros;
} numref_error_sum;

/* One MoR operation over a rows x cols view of x (the same view rules as numref_tensor_op). */
typedef struct numref_mor_op {
  uint32_t struct_size;   /* sizeof(numref_mor_op) as the runner was built */
  uint32_t kind;          /* NUMREF_MOR_* */
  uint32_t source;        /* NUMREF_FMT_BF16, F16 or F32 */
  uint32_t rows, cols;
  int64_t row_stride;     /* of x, in elements */
  int64_t col_stride;
  uint32_t block_rows;    /* tensor: the E4M3 scaling partition (128x128, 64x64, the tensor, */
  uint32_t block_cols;    /* rows: 1 x cols, cols: rows x 1); sub: the blocks B. Effective. */
  uint32_t n_blocks;
  uint32_t out_format;    /* the format of Q(x) and of the output tensor: NUMREF_FMT_BF16 (§21.1) */
  uint64_t threshold_num; /* tensor: the threshold num / den, reduced (default 9 / 200, §23.2) */
  uint64_t threshold_den;
  numref_policy policy;   /* the element policy of the quantized types (§26.1: ocp, saturating) */
  numref_policy wide;     /* informative: the profile's wide policy. §26.1 / §27.1 fix the conversion of Q(x)
                           * and of kept blocks to out_format (ocp wide: rne); backends may ignore it */
  const char* text;       /* the canonical parameter text (the pipe protocol's <params>) */
} numref_mor_op;

/* The tensor-level result (§26). */
typedef struct numref_mor_result {
  uint32_t decision;       /* NUMREF_BLOCK_F8E4M3FN (accepted) or NUMREF_BLOCK_KEPT (bf16 fallback) */
  uint32_t reason;         /* NUMREF_REASON_* of M_1 */
  uint32_t mean;           /* §23.1 binary32 code of the mean relative error (0x7FC00000 if not finite) */
  uint32_t group_mantissa; /* §17.1 the 23-bit GAM group mantissa of the E4M3 quantization */
  numref_error_sum error;  /* §22.3 over the whole tensor */
} numref_mor_result;

/* ---- GaussWS (1.3; spec §30, §32.8) ------------------------------------------------- */
#define NUMREF_GAUSSWS_NOISE_BITS 0u /* R from 16 given random bits per element, u[i] (§30.2) */
#define NUMREF_GAUSSWS_NOISE_KEY 1u  /* R from the counter-based generator, key[0..2] (§30.3) */

#define NUMREF_GAUSSWS_SUM_EXACT 0u /* w_hat = RNE_bf16(w + R s), rounded once (§30.5) */
#define NUMREF_GAUSSWS_SUM_F32 1u   /* the variant sum=f32: RNE_bf16(RN32(w + R s)) */

/* One GaussWS operation over a dense row-major rows x cols matrix w. The blocks are the
 * 32 x 32 squares of §30.1 (ragged at the last block row and column), block-row-major. */
typedef struct numref_gaussws_op {
  uint32_t struct_size;  /* sizeof(numref_gaussws_op) as the runner was built */
  uint32_t w_format;     /* NUMREF_FMT_F32 or NUMREF_FMT_BF16: w's codes (4 or 2 bytes each) */
  uint32_t g_format;     /* NUMREF_FMT_F32 or NUMREF_FMT_BF16: dL/dw_hat's codes */
  uint32_t out_format;   /* the format of w_hat: NUMREF_FMT_BF16 (§30.5) */
  uint32_t rows, cols;   /* m x n */
  uint32_t block_rows;   /* 32 (b_l, §30.1) */
  uint32_t block_cols;   /* 32 */
  uint32_t n_blocks;     /* ceil(rows / 32) * ceil(cols / 32) */
  uint32_t noise;        /* NUMREF_GAUSSWS_NOISE_* */
  uint32_t sum;          /* NUMREF_GAUSSWS_SUM_* */
  uint32_t reserved;     /* zero */
  const char* text;      /* the canonical parameter text (the pipe protocol's <params>) */
} numref_gaussws_op;

/* ---- MMA (1.9; spec §36 – §38, §32.9) ---------------------------------------------- */
/* The model's knobs (§38.6), by value: a backend that implements the fused truncated
 * dot-product-add model generically reads them; one that implements a fixed instruction
 * compares `profile` (the §39 name) and answers 0 from mma_supported for any other. */
#define NUMREF_MMA_ALGO_IDEAL 0u     /* §37 algo=ideal: the exact sum rounded once */
#define NUMREF_MMA_ALGO_FDPA 1u      /* §38 algo=fdpa: fused truncated dot-product-add steps */
#define NUMREF_MMA_ALGO_TR_FDPA 2u   /* §38.7 algo=tr_fdpa: two-level steps */
#define NUMREF_MMA_ALGO_GTR_FDPA 3u  /* §38.8 algo=gtr_fdpa: two-level steps, products in two halves */
#define NUMREF_MMA_ALGO_FMA 4u       /* §38.9 algo=fma (1.10): a chain of fused multiply-adds, fused 1 */
#define NUMREF_MMA_ALGO_EFDPA 5u     /* §38.10 algo=efdpa (1.11): exact steps of fused products, rne */
#define NUMREF_MMA_ALGO_FTZ 6u       /* §38.11 algo=ftz (1.11): binary32 tree per step, subnormals flushed */
#define NUMREF_MMA_ROUND_RNE 0u      /* §38.5 round=rne */
#define NUMREF_MMA_ROUND_RZ 1u       /* §38.5 round=rz: toward zero, binary32, overflow to Inf */
#define NUMREF_MMA_ROUND_RZ13 2u     /* §38.5 round=rz13: toward zero to 13 fraction bits */
#define NUMREF_MMA_SCALE_NONE 0u     /* §38.3 scale=none */
#define NUMREF_MMA_SCALE_PRODUCT 1u  /* §38.3 scale=product: scale exponents added per product */
#define NUMREF_MMA_SCALE_GROUP 2u    /* §38.4 scale=group: groups of `group` products, then scaled */
#define NUMREF_MMA_NAN_ONES 0u       /* §38.5 nan=ones: 7FFFFFFF / 7FFF */
#define NUMREF_MMA_NAN_CANONICAL 1u  /* §38.5 nan=canonical */
#define NUMREF_MMA_ZERO_PLUS 0u      /* §38.5 zero=plus: zero results are +0 */
#define NUMREF_MMA_ZERO_IEEE 1u      /* §37, §38.5 zero=ieee */
#define NUMREF_MMA_ZERO_ROUNDED 2u   /* §38.5 zero=rounded: exact zero +0, a rounded-away value keeps its sign */

/* One D = A·B + C (§36.1): A m x k, B k x n, C and D m x n, row-major; every element one dot
 * product of §37 or §38. */
typedef struct numref_mma_op {
  uint32_t struct_size;   /* sizeof(numref_mma_op) as the runner was built */
  uint32_t a_format;      /* NUMREF_FMT_*: A's codes (tf32: NUMREF_FMT_F32 with a_ignore 0x1FFF) */
  uint32_t b_format;      /* NUMREF_FMT_*: B's codes */
  uint32_t c_format;      /* NUMREF_FMT_F32 or NUMREF_FMT_F16: C's and D's codes */
  uint32_t a_ignore;      /* bits of every A code read as zero (§36.2 tf32: 0x1FFF) */
  uint32_t b_ignore;      /* the same for B */
  uint32_t m, n, k;       /* the shapes */
  uint32_t block;         /* block scales along K: 16 or 32 elements; 0 = no scales */
  uint32_t scale_format;  /* NUMREF_FMT_F8E8M0FNU or NUMREF_FMT_F8E4M3FN (ue4m3: scale_ignore 0x80) */
  uint32_t scale_ignore;  /* bits of every scale code read as zero */
  uint32_t algo;          /* NUMREF_MMA_ALGO_* */
  int32_t align;          /* F: fraction bits kept after alignment (§38.2) */
  uint32_t fused;         /* L: products per step (§38.1; 0 for algo ideal) */
  int32_t e_zero;         /* the exponent of a zero term for this accumulator (§38.2) */
  uint32_t round;         /* NUMREF_MMA_ROUND_* for a binary32 accumulator (binary16: rne) */
  uint32_t scale;         /* NUMREF_MMA_SCALE_* */
  uint32_t group;         /* G for NUMREF_MMA_SCALE_GROUP, else 0 */
  uint32_t nan;           /* NUMREF_MMA_NAN_* */
  uint32_t zero;          /* NUMREF_MMA_ZERO_* */
  int32_t align2;         /* F2: fraction bits of the second level (§38.7; 0 for ideal and fdpa) */
  const char* profile;    /* the §39 profile name, e.g. "sm90_wgmma_f8" */
  const char* text;       /* the canonical parameter text (the pipe protocol's <params>) */
} numref_mma_op;

typedef struct numref_backend numref_backend;
struct numref_backend {
  uint32_t abi_version; /* NUMREF_BACKEND_ABI_VERSION the backend was built with */
  uint32_t struct_size; /* sizeof(numref_backend) as the backend was built */
  const char* name;     /* short name, e.g. "cpu-fast" */
  const char* version;  /* the backend's own version */
  const char* description;
  const char* ops;      /* op families implemented, space separated: "cast" */
  const char* profiles; /* profiles claimed, space separated, e.g. "cuda_satfinite cuda_nosat" */
  uint32_t caps;        /* NUMREF_CAP_* */
  uint32_t reserved;
  /* Known departures: cases where the backend knowingly differs from a profile it claims.
   * NULL or a newline-separated list of entries
   *     <op> <from> <to> <profile|*> <class> | <explanation>
   * e.g. "cast bf16 f32 cuda_satfinite nan | __bfloat162float keeps the NaN's sign".
   * A mismatch whose op, formats, profile and classification (or a class it starts
   * with, "nan" covering "nan/sign") match an entry is reported as a known departure,
   * not as a failure (unless the runner is given --strict). See spec §34.5. */
  const char* departures;
  void* ctx; /* passed back to every entry point */

  /* Last error message of this instance (for a negative return), or NULL. */
  const char* (*last_error)(void* ctx);
  /* Frees the instance. */
  void (*close)(void* ctx);

  /* ---- op family "cast" (spec §11) ------------------------------------------------ */
  /* 1 when the backend implements the conversion from -> to under policy p, else 0. */
  int (*cast_supported)(void* ctx, uint32_t from, uint32_t to, const numref_policy* p);
  /* Converts n codes: out[i] = convert(in[i], from, to, p, r[i]). r is NULL unless
   * p->round == NUMREF_ROUND_SR (0 <= r[i] < 2^k). flags is NULL when the backend
   * lacks NUMREF_CAP_FLAGS, else flags[i] receives the §9 flag bits (inexact 0x01,
   * underflow 0x02, overflow 0x04, invalid 0x10). Returns the number of results
   * written, which must be n, or a negative value on error (see last_error). */
  int64_t (*cast)(void* ctx, uint32_t from, uint32_t to, const numref_policy* p, size_t n, const uint32_t* in,
                  const uint32_t* r, uint32_t* out, uint8_t* flags);

  /* ---- tensor op families (1.1; spec §12–§20) --------------------------------------- */
  /* 1 when the backend implements `family` (NUMREF_TENSOR_*) for this operation, else 0. */
  int (*tensor_supported)(void* ctx, uint32_t family, const numref_tensor_op* op);
  /* Each entry handles ONE tensor and returns rows * cols, or a negative value with
   * last_error set. Scales are stored codes in the low bits: binary32 (amax, amax-recip,
   * amax-dequant, pow2, int8 rules), E8M0 (mx-*, gam) or E4M3 (nvfp4) (§19.4). */
  /* "scale": out amax[n_blocks] (binary32 codes, §13), scales[n_blocks], and for gam
   * group_mantissa[n_groups] (23 bits, §17.1), for nvfp4 tensor_amax[1] (§18.1); those
   * two pointers are NULL for the other rules. */
  int64_t (*scale)(void* ctx, const numref_tensor_op* op, const void* x, uint32_t* amax, uint32_t* scales,
                   uint32_t* group_mantissa, uint32_t* tensor_amax);
  /* "quantize" (§19.2): codes[rows * cols] (one byte each, element order), scales,
   * group_mantissa, tensor_amax as for scale; r is NULL unless op->policy.round == SR;
   * counts is NULL unless the backend declared NUMREF_CAP_COUNTS, else counts[0..3] =
   * saturated, flushed, nan, inf (§19.5, totals over the tensor). */
  int64_t (*quantize)(void* ctx, const numref_tensor_op* op, const void* x, const uint32_t* r, uint8_t* codes,
                      uint32_t* scales, uint32_t* group_mantissa, uint32_t* tensor_amax, uint64_t* counts);
  /* "dequantize" (§19.3): the metadata alone -> out[rows * cols] binary32 codes. The
   * source, strides and policy fields of op are unused (codes are in element order). */
  int64_t (*dequantize)(void* ctx, const numref_tensor_op* op, const uint8_t* codes, const uint32_t* scales,
                        const uint32_t* group_mantissa, const uint32_t* tensor_amax, uint32_t* out);
  /* "fake-quant" (§19.6): out[rows * cols] codes of op->out_format; r and counts as for quantize. */
  int64_t (*fake_quant)(void* ctx, const numref_tensor_op* op, const void* x, const uint32_t* r, uint32_t* out,
                        uint64_t* counts);

  /* ---- MoR op families (1.2; spec §21–§27) --------------------------------------- */
  /* 1 when the backend implements `family` (NUMREF_TENSOR_MOR or NUMREF_TENSOR_MOR_SUB)
   * for this operation, else 0. */
  int (*mor_supported)(void* ctx, uint32_t family, const numref_mor_op* op);
  /* "mor" (§26, tensor-level MoR, kind NUMREF_MOR_TENSOR): E4M3 with GAM (one group, the
   * tensor) over the scaling partition, accepted iff the mean relative error over the
   * tensor's non-zero elements < threshold (Eq. 2, exact). Outputs: res (the decision, the
   * §25.3 reason, the §23.1 mean, the §22.3 exact error sum of the whole tensor, the GAM
   * group mantissa), scales[n_blocks] (E8M0 codes of the E4M3 quantization, block-row-major).
   * Returns rows * cols, or a negative value with last_error set. */
  int64_t (*mor)(void* ctx, const numref_mor_op* op, const void* x, numref_mor_result* res, uint32_t* scales);
  /* "mor-sub" (§27, kinds NUMREF_MOR_THREE_WAY / NUMREF_MOR_TWO_WAY), per block b of the
   * partition (block-row-major, n_blocks entries each):
   *   type[b]       NUMREF_BLOCK_* chosen (0 f8e4m3fn, 1 f8e5m2, 2 kept / bf16)
   *   eq3[b]        NUMREF_REASON_* of M_1 (Eq. 3)
   *   eq4[b]        NUMREF_REASON_* of M_2 (Eq. 4; NOT_EVALUATED for two-way or when M_1 accepted)
   *   e4m3_sum[b], e5m2_sum[b]   the exact Eq. 3 operands (§22.3), evaluated for every block
   *   e4m3_scales[b], e5m2_scales[b]   E8M0 codes of each GAM quantization
   * group_mantissa[0..1]: the E4M3 and the E5M2 GAM group mantissas (§17.1);
   * out[rows * cols]: the output tensor, codes of op->out_format, element order (§27.4).
   * Returns rows * cols, or a negative value with last_error set. */
  int64_t (*mor_sub)(void* ctx, const numref_mor_op* op, const void* x, uint8_t* type, uint8_t* eq3, uint8_t* eq4,
                     numref_error_sum* e4m3_sum, numref_error_sum* e5m2_sum, uint32_t* e4m3_scales,
                     uint32_t* e5m2_scales, uint32_t* group_mantissa, uint32_t* out);

  /* ---- op family "gaussws" (1.3; spec §30) ------------------------------------------ */
  /* 1 when the backend implements this GaussWS operation, else 0. */
  int (*gaussws_supported)(void* ctx, const numref_gaussws_op* op);
  /* One matrix. Inputs: w[rows * cols] (codes of op->w_format, row-major), bt[n_blocks]
   * (binary32 codes, finite), the noise source — u[rows * cols] (16-bit words, element order)
   * when op->noise is NUMREF_GAUSSWS_NOISE_BITS, else NULL; key[3] = seed, layer, step (§30.3)
   * when it is NUMREF_GAUSSWS_NOISE_KEY, else NULL — and g[rows * cols] (dL/dw_hat, codes of
   * op->g_format). Outputs: r_packed[ceil(rows * cols / 8)] (R as 4-bit sign-magnitude
   * nibbles, §30.9), scale[n_blocks] (s, binary32 codes; 0x7FC00000 for a block holding a NaN
   * or Inf, §30.6), w_hat[rows * cols] (codes of op->out_format, §30.5), grad[n_blocks]
   * (dL/db_t, binary32 codes, §30.7, exact sum, rounded once). Returns rows * cols, or a
   * negative value with last_error set. */
  int64_t (*gaussws)(void* ctx, const numref_gaussws_op* op, const void* w, const uint32_t* bt, const uint16_t* u,
                     const uint64_t* key, const void* g, uint32_t* r_packed, uint32_t* scale, uint32_t* w_hat,
                     uint32_t* grad);

  /* ---- (1.8) the minor version the backend was built against (spec §32.2) ------------- */
  /* NUMREF_BACKEND_ABI_MINOR as the backend was compiled. The runner offers the backend only the
   * knob values, scale rules, profiles and op families of that minor version and earlier; a case
   * that needs a later one is declined for the backend, never failed (§34.3). A table whose
   * struct_size ends before this field declares nothing: the runner takes the earliest minor
   * version its layout and capabilities prove (1.3 for a table with gaussws, 1.4 with
   * NUMREF_CAP_RECIPE, ...). */
  uint32_t abi_minor;

  /* ---- op family "mma" (1.9; spec §36 – §38) ----------------------------------------- */
  /* 1 when the backend implements this operation, else 0. */
  int (*mma_supported)(void* ctx, const numref_mma_op* op);
  /* One D = A·B + C. Inputs (codes, one per uint32_t, row-major): a[m * k], b[k * n], c[m * n],
   * and with op->block > 0 the scales sa[m * (k / block)] and sb[(k / block) * n] (else NULL).
   * Outputs: d[m * n] codes of op->c_format; flags[m * n] the §36.4 flags, NULL unless the
   * backend declared NUMREF_CAP_FLAGS. Returns m * n, or a negative value with last_error set. */
  int64_t (*mma)(void* ctx, const numref_mma_op* op, const uint32_t* a, const uint32_t* b, const uint32_t* c,
                 const uint32_t* sa, const uint32_t* sb, uint32_t* d, uint8_t* flags);

  /* Entry points of later op families follow here. */
};

/* The two exported symbols. */
typedef uint32_t (*numref_backend_abi_version_fn)(void);
typedef const numref_backend* (*numref_backend_open_fn)(const char* args, char* err, size_t err_size);

/* clang-format on */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NUMREF_BACKEND_H */
