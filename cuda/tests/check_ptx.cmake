# numref CUDA tests — inspection of the PTX the cast kernels were built from.   spec §A.4, §A.5
#
# Run by ctest as: cmake -DPTX_DIR=<dir> -DARCHS=<CUDA_ARCHITECTURES list> -P check_ptx.cmake
# The PTX files are the intermediates nvcc kept (-keep) while compiling the library
# (cast_f8.compute_<N>.ptx, cast_wide.compute_<N>.ptx), i.e. exactly what ptxas assembled.
# Asserts, for every architecture of the build:
#   cast_f8:   cvt.rn.satfinite.e4m3x2.f32 and .e5m2x2.f32 present on sm_89+, absent below;
#   cast_wide: cvt.rn.bf16x2.f32 present (every supported architecture is sm_80+);
#   both:      kernels present, and no floating-point arithmetic, comparison or min/max
#              instruction at all (§1.3: the portable path decides results in integers; the
#              only float-typed instructions are the hardware conversions above).
if(NOT PTX_DIR OR NOT ARCHS)
  message(FATAL_ERROR "check_ptx.cmake: PTX_DIR and ARCHS are required")
endif()

set(failures 0)
set(checked 0)
macro(fail msg)
  message(SEND_ERROR "FAIL: ${msg}")
  math(EXPR failures "${failures} + 1")
endmacro()

foreach(arch ${ARCHS})
  string(REGEX MATCH "^[0-9]+" cc "${arch}")
  if(NOT cc)
    fail("cannot read an architecture number from '${arch}'")
    continue()
  endif()
  foreach(unit cast_f8 cast_wide)
    set(file ${PTX_DIR}/${unit}.compute_${cc}.ptx)
    list(LENGTH ARCHS n_archs)
    if(NOT EXISTS ${file} AND n_archs EQUAL 1 AND EXISTS ${PTX_DIR}/${unit}.ptx)
      set(file ${PTX_DIR}/${unit}.ptx)  # nvcc names the single architecture's PTX without a suffix
    endif()
    if(NOT EXISTS ${file})
      fail("${file} missing (was the library built with -keep?)")
      continue()
    endif()
    file(READ ${file} ptx)
    math(EXPR checked "${checked} + 1")
    string(REGEX MATCHALL "\\.entry[ \t]+[A-Za-z0-9_]+" entries "${ptx}")
    list(LENGTH entries n_entries)
    if(n_entries EQUAL 0)
      fail("${unit} sm_${cc}: no kernel entry in the PTX")
    endif()
    string(REGEX MATCHALL "cvt\\.rn\\.satfinite\\.e4m3x2\\.f32" e4 "${ptx}")
    string(REGEX MATCHALL "cvt\\.rn\\.satfinite\\.e5m2x2\\.f32" e5 "${ptx}")
    string(REGEX MATCHALL "cvt\\.rn\\.bf16x2\\.f32" bf "${ptx}")
    list(LENGTH e4 n_e4)
    list(LENGTH e5 n_e5)
    list(LENGTH bf n_bf)
    if(unit STREQUAL "cast_f8")
      if(cc GREATER_EQUAL 89)
        if(n_e4 EQUAL 0 OR n_e5 EQUAL 0)
          fail("cast_f8 sm_${cc}: hardware path missing (e4m3x2: ${n_e4}, e5m2x2: ${n_e5})")
        endif()
      elseif(n_e4 GREATER 0 OR n_e5 GREATER 0)
        fail("cast_f8 sm_${cc}: FP8 cvt instructions below sm_89 (e4m3x2: ${n_e4}, e5m2x2: ${n_e5})")
      endif()
    else()
      if(n_bf EQUAL 0)
        fail("cast_wide sm_${cc}: cvt.rn.bf16x2.f32 missing")
      endif()
    endif()
    # Floating-point arithmetic / comparison / selection by value (any rounding modifiers).
    string(REGEX MATCHALL
      "[\n\t ](add|sub|mul|mad|fma|div|rcp|sqrt|rsqrt|min|max|neg|abs|setp|set|selp|testp|copysign|ex2|lg2|sin|cos|tanh)(\\.[a-z0-9]+)*\\.(f16|f16x2|bf16|bf16x2|f32|f64)[ \t]"
      fparith "${ptx}")
    list(LENGTH fparith n_fp)
    if(n_fp GREATER 0)
      list(GET fparith 0 first)
      fail("${unit} sm_${cc}: ${n_fp} floating-point arithmetic instruction(s), e.g. '${first}'")
    endif()
    message(STATUS "${unit} sm_${cc}: ${n_entries} kernels, e4m3x2 ${n_e4}, e5m2x2 ${n_e5}, bf16x2 ${n_bf}, float arithmetic ${n_fp}")
  endforeach()
endforeach()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} PTX check(s) failed")
endif()
message(STATUS "PTX checks passed for ${checked} files")
