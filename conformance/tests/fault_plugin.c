/* numref conformance tests — a plugin that fails the way real backends fail (spec §34.6). It is
 * the C example backend (conformance/examples/c_backend.c, f32 -> bf16, profile ocp), with a
 * fault chosen by its argument, `--backend 'libnumref_test_fault.so?MODE[,pidfile=PATH]'`:
 *   hang       every cast call sleeps forever (the SIGINT / SIGTERM / kill -9 tests)
 *   openhang   numref_backend_open sleeps forever
 *   crashon    SIGSEGV when a call holds the f32 code 3f800000 (1.0)
 *   overrun    writes 2n words past its n-word output buffer
 *   overrun3   writes 3 words past its n-word output buffer (into what follows it)
 *   forkcrash  when a call holds 1.0: forks a helper that sleeps, then SIGSEGV
 *   slow       0.5 ms per case for the first 3000 cases, then full speed
 * With pidfile=PATH the process that would hang (or each helper) appends its pid to PATH. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The example's arithmetic and table, under other names: one source of truth for f32 -> bf16. */
#define numref_backend_open example_open
#define numref_backend_abi_version example_abi_version
#include "c_backend.c"
#undef numref_backend_open
#undef numref_backend_abi_version

static char mode[32];
static char pidfile[4096];
static long slow_left = 3000;

static void note_pid(void) {
  if (!pidfile[0]) return;
  FILE* f = fopen(pidfile, "a");
  if (!f) return;
  fprintf(f, "%ld\n", (long)getpid());
  fclose(f);
}

static void sleep_forever(void) {
  note_pid();
  for (;;) pause();
}

static int holds_one(size_t n, const uint32_t* in) {
  for (size_t i = 0; i < n; ++i)
    if (in[i] == 0x3F800000u) return 1;
  return 0;
}

static int64_t fault_cast(void* ctx, uint32_t from, uint32_t to, const numref_policy* p, size_t n, const uint32_t* in,
                          const uint32_t* r, uint32_t* out, uint8_t* flags) {
  if (strcmp(mode, "hang") == 0) sleep_forever();
  if (strcmp(mode, "crashon") == 0 && holds_one(n, in)) raise(SIGSEGV);
  if (strcmp(mode, "forkcrash") == 0 && holds_one(n, in)) {
    if (fork() == 0) sleep_forever(); /* the helper keeps the runner's pipe open */
    raise(SIGSEGV);
  }
  if (strcmp(mode, "slow") == 0)
    for (size_t i = 0; i < n && slow_left > 0; ++i, --slow_left) {
      const struct timespec t = {0, 500000};
      nanosleep(&t, NULL);
    }
  const int64_t got = cast(ctx, from, to, p, n, in, r, out, flags);
  if (strcmp(mode, "overrun") == 0)
    for (size_t i = n; i < 3 * n; ++i) out[i] = 0;
  if (strcmp(mode, "overrun3") == 0)
    for (size_t i = n; i < n + 3; ++i) out[i] = 0;
  return got;
}

NUMREF_BACKEND_EXPORT uint32_t numref_backend_abi_version(void) { return NUMREF_BACKEND_ABI_VERSION; }

NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err, size_t err_size) {
  static numref_backend b;
  const char* comma = args ? strchr(args, ',') : NULL;
  const size_t len = args ? (comma ? (size_t)(comma - args) : strlen(args)) : 0;
  if (len >= sizeof mode) {
    snprintf(err, err_size, "unknown mode");
    return NULL;
  }
  memcpy(mode, args ? args : "", len);
  mode[len] = 0;
  if (comma && strncmp(comma + 1, "pidfile=", 8) == 0) snprintf(pidfile, sizeof pidfile, "%s", comma + 9);
  if (strcmp(mode, "openhang") == 0) sleep_forever();
  b = *example_open(args, err, err_size);
  b.name = "fault";
  b.description = "the C example with a fault (conformance/tests/fault_plugin.c)";
  b.cast = fault_cast;
  return &b;
}
