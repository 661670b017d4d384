// numref._core: numref.conform.check's backend table over Python callables (conform_table.cpp).
#pragma once

#include <nanobind/nanobind.h>

// Adds _core.conform_run.
void bind_conform_table(nanobind::module_& m);
