// numref backend "reference": the class of reference_backend.hpp as a plugin.   spec §32
#include "numref/conform/plugin.hpp"
#include "reference_backend.hpp"

NUMREF_BACKEND(numref::conform::ReferenceBackend)
