// numref conformance — registration of the `mor` op family (tensor-level MoR, mor.hpp).   spec §26, §33.9
#include "mor.hpp"

void numref_conform_register_op_mor(numref::conform::Registry& r) {
  r.add(numref::conform::mor::family(numref::conform::mor::Kind::tensor));
}
