// numref CUDA tests — the per-element functions compiled by the host C++ compiler.  spec §A.4
#define NUMREF_TABLE_NS gxx
#include "element_table.inc"
