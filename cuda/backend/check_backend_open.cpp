// numref CUDA tests — the "cuda" conformance plugin opens, or says why not.      spec §32, §A.4
//
// Loads libnumref_backend_cuda.so with dlopen (argv[1]) exactly as the runner does and calls its
// two exported symbols. On a machine without a CUDA device (this project's build machines)
// numref_backend_open must return NULL with an error starting "unavailable: " — the convention
// the runner reports as SKIPPED — and the test passes only on that evidence. On a machine WITH
// a device the plugin must open (with name "cuda" and the 1.2 entry points); the test then exits
// 77 (skipped): the kernels themselves are checked by the cuda-device label
// (test_cuda_device_conform runs `numref conform --backend cuda`).
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "numref/backend.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PATH/libnumref_backend_cuda.so\n", argv[0]);
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "FAIL: dlopen: %s\n", dlerror());
    return 1;
  }
  auto abi = reinterpret_cast<numref_backend_abi_version_fn>(dlsym(h, "numref_backend_abi_version"));
  auto open = reinterpret_cast<numref_backend_open_fn>(dlsym(h, "numref_backend_open"));
  if (abi == nullptr || open == nullptr) {
    std::fprintf(stderr, "FAIL: the plugin does not export numref_backend_abi_version / numref_backend_open\n");
    return 1;
  }
  if (abi() != NUMREF_BACKEND_ABI_VERSION) {
    std::fprintf(stderr, "FAIL: ABI version %u, expected %u\n", abi(), NUMREF_BACKEND_ABI_VERSION);
    return 1;
  }
  char err[512];
  std::memset(err, 0, sizeof err);
  const numref_backend* b = open("", err, sizeof err);
  if (b == nullptr) {
    if (std::strncmp(err, "unavailable: ", 13) != 0) {
      std::fprintf(stderr, "FAIL: open failed without the 'unavailable: ' convention: '%s'\n", err);
      return 1;
    }
    if (std::strstr(err, "no CUDA device") == nullptr) {
      std::fprintf(stderr, "FAIL: the reason does not say 'no CUDA device': '%s'\n", err);
      return 1;
    }
    std::printf("ok: no device, the plugin answers \"%s\"\n", err);
    return 0;
  }
  // A device is present: the plugin must be complete, then the cuda-device label does the work.
  const bool complete = b->abi_version == NUMREF_BACKEND_ABI_VERSION && b->struct_size >= sizeof(numref_backend) &&
                        std::strcmp(b->name, "cuda") == 0 && b->cast && b->quantize && b->dequantize && b->fake_quant &&
                        b->scale && b->mor && b->mor_sub;
  b->close(b->ctx);
  if (!complete) {
    std::fprintf(stderr, "FAIL: the plugin opened but its table is incomplete\n");
    return 1;
  }
  std::printf("SKIPPED: a CUDA device is present; run `ctest -L cuda-device` for the kernels\n");
  return 77;
}
