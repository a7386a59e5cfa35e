# GCCS CMake helper (find_package(GCCS) -> ${GCCS_CMAKE_DIR}), included by PopLibs' top level.
# Graphcore's version enables x86-64-v3 instructions; Aspen's adds the flags only when asked,
# so a build runs on any x86-64 host:  -DGCCS_MARCH_FLAGS="-march=x86-64-v3"
set(GCCS_MARCH_FLAGS "" CACHE STRING "Extra -march flags for a project using GCCS's AddMarchExtensions")
if(GCCS_MARCH_FLAGS)
  string(APPEND CMAKE_CXX_FLAGS " ${GCCS_MARCH_FLAGS}")
  string(APPEND CMAKE_C_FLAGS " ${GCCS_MARCH_FLAGS}")
endif()
