// numref CUDA tests — stand-in for element_table_nvcc.cu when CUDA is not enabled: the
// tests then report that the nvcc-compiled host code was not checked.         spec §A.4
#include "element_table.hpp"

namespace numref_cuda_test::nvcc {
bool available() { return false; }
ElementFn element_fn(numref::FormatId, numref::FormatId) { return nullptr; }
E8m0Fn e8m0_fn(numref::FormatId) { return nullptr; }
}  // namespace numref_cuda_test::nvcc
