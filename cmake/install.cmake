# numref — what `cmake --install` puts under the prefix (docs/install.md):
#   bin/numref                          the CLI
#   lib/libnumref_reference.a, lib/libnumref_conformance.a
#   lib/numref/backends/*.so            the built-in backend plugins (found by `numref`)
#   include/numref/...                  the reference and conformance headers, backend.h
#   share/numref/vectors/               the golden vectors with their MANIFEST (found by `numref`)
#   lib/cmake/numref/                   find_package(numref) -> numref::reference, numref::conformance
#   lib/pkgconfig/numref.pc
#   share/doc/numref/                   LICENSE, CITATION.cff, the spec
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/reference/include/numref ${PROJECT_SOURCE_DIR}/conformance/include/numref
  ${PROJECT_BINARY_DIR}/reference/include/numref DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "*.in" EXCLUDE)
# numref_warnings is an INTERFACE target the static libraries list as link-only; it carries no
# usage requirements for consumers but must be in the export set.
set_target_properties(numref_warnings PROPERTIES EXPORT_NAME warnings)
# A sanitizer build (NUMREF_SANITIZE) installs instrumented libraries: a consumer must link the
# sanitizer runtimes, so the installed targets and numref.pc carry the -fsanitize link flag.
set(NUMREF_PC_EXTRA_LIBS "")
if(NUMREF_SANITIZERS)
  target_link_options(numref_reference INTERFACE "$<INSTALL_INTERFACE:-fsanitize=${NUMREF_SANITIZERS}>")
  set(NUMREF_PC_EXTRA_LIBS " -fsanitize=${NUMREF_SANITIZERS}")
endif()
install(TARGETS numref_reference numref_conformance numref_warnings EXPORT numrefTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS numref RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/vectors/ DESTINATION ${CMAKE_INSTALL_DATADIR}/numref/vectors)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CITATION.cff ${PROJECT_SOURCE_DIR}/CHANGES.md
  ${PROJECT_SOURCE_DIR}/docs/spec.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(_numref_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/numref)
install(EXPORT numrefTargets NAMESPACE numref:: DESTINATION ${_numref_cmake_dir} FILE numrefTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/numrefConfig.cmake.in
  ${PROJECT_BINARY_DIR}/numrefConfig.cmake INSTALL_DESTINATION ${_numref_cmake_dir})
# 0.x: a minor version may change the interfaces; 1.x on: SameMajorVersion.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/numrefConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/numrefConfig.cmake ${PROJECT_BINARY_DIR}/numrefConfigVersion.cmake
  DESTINATION ${_numref_cmake_dir})

# numref.pc is relocatable: the prefix is found from the .pc file's own directory (${pcfiledir},
# pkg-config and pkgconf), so `cmake --install build --prefix P` (the prefix chosen at install time,
# not CMAKE_INSTALL_PREFIX at configure time) and a moved prefix both work. An absolute
# CMAKE_INSTALL_LIBDIR / INCLUDEDIR is written as it is.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(NUMREF_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(NUMREF_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _numref_pc_up "/numref-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/numref-prefix")
  string(REGEX REPLACE "/$" "" _numref_pc_up "${_numref_pc_up}")
  set(NUMREF_PC_PREFIX "\${pcfiledir}/${_numref_pc_up}")
  set(NUMREF_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(NUMREF_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(NUMREF_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/numref.pc.in ${PROJECT_BINARY_DIR}/numref.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/numref.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
