// numref conformance — registration of the `scale` op family (tensor.hpp).   spec §33.8
#include "tensor.hpp"

void numref_conform_register_op_scale(numref::conform::Registry& r) {
  r.add(numref::conform::tensor::family(numref::conform::tensor::Kind::scale));
}
