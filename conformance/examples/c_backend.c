/* A minimal numref backend in plain C: f32 -> bf16, round to nearest even, IEEE overflow
 * to Inf, NaN payload kept and quieted (the `ocp` / `ieee` profile, spec §10.1, §6.3).
 * It is the classic bit trick every kernel uses; the suite checks it bit for bit.
 *
 *   cc -O2 -shared -fPIC -I conformance/include conformance/examples/c_backend.c -o libmy_backend.so
 *   build/numref conform --backend ./libmy_backend.so --profile ocp
 *
 * See docs/conformance.md. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "numref/backend.h"

/* Only this exact policy: round=rne overflow=nonsat nan=payload, no DAZ/FTZ.
 * (inf_sat does not matter under nonsat; the other knobs do not apply to bf16.) */
static int cast_supported(void* ctx, uint32_t from, uint32_t to, const numref_policy* p) {
  (void)ctx;
  return from == NUMREF_FMT_F32 && to == NUMREF_FMT_BF16 && p->round == NUMREF_ROUND_RNE &&
         p->overflow == NUMREF_OVERFLOW_NONSAT && p->nan == NUMREF_NAN_PAYLOAD && p->daz == 0 && p->ftz == 0;
}

static int64_t cast(void* ctx, uint32_t from, uint32_t to, const numref_policy* p, size_t n, const uint32_t* in,
                    const uint32_t* r, uint32_t* out, uint8_t* flags) {
  (void)ctx, (void)from, (void)to, (void)p, (void)r, (void)flags;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = in[i];
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
      out[i] = (u >> 16) | 0x0040u; /* NaN: sign and top payload bits kept, quiet bit set */
    else
      out[i] = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16; /* RNE; carries into the exponent, Inf on overflow */
  }
  return (int64_t)n;
}

static const char* last_error(void* ctx) {
  (void)ctx;
  return NULL;
}
static void close_backend(void* ctx) { (void)ctx; }

NUMREF_BACKEND_EXPORT uint32_t numref_backend_abi_version(void) { return NUMREF_BACKEND_ABI_VERSION; }

NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err, size_t err_size) {
  static numref_backend b;
  (void)args, (void)err, (void)err_size;
  memset(&b, 0, sizeof b);
  b.abi_version = NUMREF_BACKEND_ABI_VERSION;
  b.struct_size = sizeof b;
  b.abi_minor = NUMREF_BACKEND_ABI_MINOR; /* the runner offers only what this minor version knows */
  b.name = "c-example";
  b.version = "1";
  b.description = "f32 -> bf16 with the round-to-nearest-even bit trick";
  b.ops = "cast";
  b.profiles = "ocp";
  b.caps = 0; /* no exception flags */
  b.last_error = last_error;
  b.close = close_backend;
  b.cast_supported = cast_supported;
  b.cast = cast;
  return &b;
}
