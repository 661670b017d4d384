/* numref — the backend C ABI: how `numref conform` talks to an implementation under test.
 *                                                        spec §31 (backend ABI)
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

#define NUMREF_BACKEND_ABI_VERSION 1u

#if defined(_WIN32)
#define NUMREF_BACKEND_EXPORT __declspec(dllexport)
#else
#define NUMREF_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

/* ---- formats (spec §2.1, in table order) ------------------------------------------ */
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
#define NUMREF_FMT_COUNT 10u

/* ---- policy knobs (spec §4–§10); the names are those of describe(), §10.2 ---------- */
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

#define NUMREF_NAN_TO_FINITE_ZERO 0u    /* nan_to_finite=zero (§6.4) */
#define NUMREF_NAN_TO_FINITE_NEGZERO 1u /* nan_to_finite=negzero */
#define NUMREF_NAN_TO_FINITE_MAX 2u     /* nan_to_finite=max */

#define NUMREF_E8M0_FOLLOW 0u /* e8m0_round=follow (§7.1) */
#define NUMREF_E8M0_FLOOR 1u
#define NUMREF_E8M0_CEIL 2u
#define NUMREF_E8M0_EVEN 3u
#define NUMREF_E8M0_TIESUP 4u

#define NUMREF_ZERO_TO_NOZERO_NAN 0u /* zero_to_nozero=nan (§7.2) */
#define NUMREF_ZERO_TO_NOZERO_MIN 1u

#define NUMREF_NEGATIVE_NAN 0u /* negative=nan (§7.3) */
#define NUMREF_NEGATIVE_ABS 1u

#define NUMREF_TININESS_AFTER 0u /* tininess=after (§9.2) */
#define NUMREF_TININESS_BEFORE 1u

#define NUMREF_INT_RANGE_FULL 0u /* int_range=full (§6.5) */
#define NUMREF_INT_RANGE_SYMMETRIC 1u

/* ---- profiles (spec §10.1) ------------------------------------------------------- */
#define NUMREF_PROFILE_NONE (-1) /* the policy is not exactly a profile's */
#define NUMREF_PROFILE_OCP 0
#define NUMREF_PROFILE_IEEE 1
#define NUMREF_PROFILE_CUDA_SATFINITE 2
#define NUMREF_PROFILE_CUDA_NOSAT 3
#define NUMREF_PROFILE_ML_DTYPES 4

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
  uint8_t reserved[2];    /* zero */
  /* NUMREF_PROFILE_* when the policy is exactly the profile's policy for the target
   * of the operation (§10.1: narrow or wide), else NUMREF_PROFILE_NONE. When several
   * profiles have the same policy, the first in the table above. */
  int32_t profile;
  /* The same policy in the describe() text form of §10.2, NUL-terminated. */
  const char* text;
} numref_policy;

/* ---- capabilities ------------------------------------------------------------------ */
/* The backend reports exception flags (§9). Without it the runner passes flags = NULL,
 * compares result codes only, and every report says "flags not compared". */
#define NUMREF_CAP_FLAGS 0x1u

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
   * not as a failure (unless the runner is given --strict). See spec §33.5. */
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

  /* Entry points of later op families (block scales, quantize, GAM, MoR) follow here. */
};

/* The two exported symbols. */
typedef uint32_t (*numref_backend_abi_version_fn)(void);
typedef const numref_backend* (*numref_backend_open_fn)(const char* args, char* err, size_t err_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NUMREF_BACKEND_H */
