// numref conformance — registration of the `mor-sub` op family (sub-tensor MoR, mor.hpp).   spec §27, §33.9
#include "mor.hpp"

void numref_conform_register_op_mor_sub(numref::conform::Registry& r) {
  r.add(numref::conform::mor::family(numref::conform::mor::Kind::sub));
}
