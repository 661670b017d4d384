/* numref conformance tests — a pipe backend (spec §33) that fails the way real ones fail
 * (§34.6): f32 -> bf16 under profile ocp with the C example's arithmetic
 * (conformance/examples/c_backend.c), and a fault chosen by argv[1]:
 *   slow PIDFILE   answers one case line every millisecond for its first 2000 cases: correct
 *                  but slow, as an RTL simulator
 *   segv PIDFILE   SIGSEGV at the first batch
 *   hang PIDFILE   sleeps forever at the first batch
 * It writes its pid to PIDFILE at start. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define numref_backend_open example_open
#define numref_backend_abi_version example_abi_version
#include "c_backend.c"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (argc > 2) {
    FILE* f = fopen(argv[2], "a");
    if (f) {
      fprintf(f, "%ld\n", (long)getpid());
      fclose(f);
    }
  }
  char line[70000];
  long slow_left = 2000;
  setvbuf(stdout, NULL, _IOLBF, 0);
  while (fgets(line, sizeof line, stdin)) {
    if (strncmp(line, "numref-pipe ", 12) == 0) {
      printf("numref-pipe 1 name=fault-pipe ops=cast profiles=ocp flags=no\nready\n");
    } else if (strncmp(line, "supports ", 9) == 0) {
      printf("%s\n", strncmp(line, "supports cast f32 bf16 ocp ", 27) == 0 ? "yes" : "no");
    } else if (strncmp(line, "run ", 4) == 0) {
      if (strcmp(mode, "segv") == 0) raise(SIGSEGV);
      if (strcmp(mode, "hang") == 0)
        for (;;) pause();
      long n = atol(line + 9); /* "run cast <n> ..." */
      for (long i = 0; i < n; ++i) {
        if (!fgets(line, sizeof line, stdin)) return 1;
        uint32_t x = (uint32_t)strtoul(line, NULL, 16), y;
        cast(NULL, NUMREF_FMT_F32, NUMREF_FMT_BF16, NULL, 1, &x, NULL, &y, NULL);
        if (strcmp(mode, "slow") == 0 && slow_left > 0) {
          --slow_left;
          const struct timespec t = {0, 1000000};
          nanosleep(&t, NULL);
        }
        printf("%04x\n", (unsigned)y);
      }
      printf("end\n");
    } else if (strncmp(line, "quit", 4) == 0) {
      return 0;
    }
  }
  return 0;
}
