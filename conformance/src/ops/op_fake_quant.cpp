// numref conformance — registration of the `fake-quant` op family (tensor.hpp).   spec §33.8
#include "tensor.hpp"

void numref_conform_register_op_fake_quant(numref::conform::Registry& r) {
  r.add(numref::conform::tensor::family(numref::conform::tensor::Kind::fake_quant));
}
