// numref conformance — registration of the `quantize` op family (tensor.hpp).   spec §33.8
#include "tensor.hpp"

void numref_conform_register_op_quantize(numref::conform::Registry& r) {
  r.add(numref::conform::tensor::family(numref::conform::tensor::Kind::quantize));
}
