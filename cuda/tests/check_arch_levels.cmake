# numref CUDA tests — the architecture levels of the kernels' source.            spec §A.1
#
# Run by ctest as: cmake -DLEVELS=<NUMREF_CUDA_PTX_LEVELS> -DROOT=<source dir> -P check_arch_levels.cmake
# cuda/CMakeLists.txt assembles each architecture's SASS from the PTX of the highest level in
# LEVELS at or below it. That is exact only if the source takes no other architecture apart:
# every `__CUDA_ARCH__ >= N` (or > N, < N, <= N) in cuda/src and arith/include must have N / 10 in
# LEVELS. Fails naming the file and the threshold otherwise, and when it finds no threshold at all
# (the scan read nothing).
cmake_minimum_required(VERSION 3.20)
if(NOT LEVELS OR NOT ROOT)
  message(FATAL_ERROR "check_arch_levels.cmake: LEVELS and ROOT are required")
endif()
file(GLOB_RECURSE sources ${ROOT}/cuda/src/*.cu ${ROOT}/cuda/src/*.cuh ${ROOT}/cuda/src/*.hpp
  ${ROOT}/cuda/src/*.cpp ${ROOT}/arith/include/*.cuh ${ROOT}/arith/include/*.hpp)
set(found 0)
set(failures 0)
foreach(f ${sources})
  file(STRINGS ${f} lines REGEX "__CUDA_ARCH__[ \t]*[<>]=?[ \t]*[0-9]+")
  foreach(line ${lines})
    string(REGEX MATCHALL "__CUDA_ARCH__[ \t]*[<>]=?[ \t]*[0-9]+" uses "${line}")
    foreach(u ${uses})
      string(REGEX MATCH "[0-9]+$" n "${u}")
      math(EXPR level "${n} / 10")
      math(EXPR found "${found} + 1")
      if(NOT level IN_LIST LEVELS)
        message(SEND_ERROR "FAIL: ${f}: '${u}' is not one of the levels ${LEVELS} (add ${level} to NUMREF_CUDA_PTX_LEVELS)")
        math(EXPR failures "${failures} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(found EQUAL 0)
  message(FATAL_ERROR "no __CUDA_ARCH__ threshold found under ${ROOT}/cuda/src and ${ROOT}/arith/include")
endif()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} threshold(s) outside the levels")
endif()
message(STATUS "${found} __CUDA_ARCH__ thresholds, all at the levels ${LEVELS}")
