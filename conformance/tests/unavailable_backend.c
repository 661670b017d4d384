/* numref conformance tests — a backend that is correctly built but can never run here: its
 * open answers "unavailable: <reason>" (backend.h, spec §32.6), as a GPU backend does on a
 * machine without a device. The runner must report it SKIPPED, not failed. */
#include <stdio.h>

#include "numref/backend.h"

NUMREF_BACKEND_EXPORT uint32_t numref_backend_abi_version(void) { return NUMREF_BACKEND_ABI_VERSION; }

NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err, size_t err_size) {
  (void)args;
  snprintf(err, err_size, "unavailable: no test device (this backend never has one)");
  return NULL;
}
