// numref CUDA tests — the per-element functions compiled by nvcc's host pass.      spec §A.4
#define NUMREF_TABLE_NS nvcc
#include "element_table.inc"

namespace numref_cuda_test::nvcc {
bool available() { return true; }
}  // namespace numref_cuda_test::nvcc
