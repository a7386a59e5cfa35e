# GCCS CMake helper (find_package(GCCS) -> ${GCCS_CMAKE_DIR}), included by PopLibs' top level:
# -DENABLE_COVERAGE=ON builds with gcc/clang coverage instrumentation.
option(ENABLE_COVERAGE "Build with coverage instrumentation (--coverage)" OFF)
if(ENABLE_COVERAGE)
  string(APPEND CMAKE_CXX_FLAGS " --coverage")
  string(APPEND CMAKE_C_FLAGS " --coverage")
  string(APPEND CMAKE_EXE_LINKER_FLAGS " --coverage")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS " --coverage")
endif()
