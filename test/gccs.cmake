# gccs, the support headers every module and PopLibs may include (docs/gccs.md), and the Poplar
# API PopLibs needs (issue 24, docs/poplibs-from-source.md):
# popsolver's solver against brute force, and the other headers used as PopLibs uses them.
aspen_add_test(gccs_popsolver LABEL unit SOURCES unit/gccs_popsolver.cpp LIBS Aspen::gccs)
aspen_add_test(gccs_compat_headers LABEL conformance SOURCES compat/gccs_headers.cpp LIBS Aspen::gccs)

# Issue 24 item 2: the Poplar API gaps building PopLibs found (conformance), and their errors.
aspen_add_test(poplibs_compat_api_gaps LABEL conformance SOURCES compat/poplibs_api_gaps.cpp
  compat/poplibs_std_from_type.cpp compat/poplibs_std_from_interval.cpp LIBS Aspen::pvti
  nlohmann_json::nlohmann_json)
# Poplar's built-in poplar_rt:: vertices come from poplar_rt.gp beside libpoplar.
add_dependencies(poplibs_compat_api_gaps poplar_rt_codelets)
aspen_add_test(poplibs_api_gap_errors LABEL error SOURCES error/poplibs_gap_errors.cpp)

# Issue 24 item 4: one build of PopLibs per process (libgraph/src/util/PoplibsBuilds.hpp). The
# other build is simulated by libpopops.so and libpopnn.so without Aspen's marker, in their own
# directory; the test links no PopLibs library of Aspen's (it loads them itself).
set(_foreign_dir ${CMAKE_BINARY_DIR}/test/foreign-poplibs)
foreach(_lib IN ITEMS popops popnn poplibs_test)
  add_library(foreign_${_lib} SHARED error/foreign_poplib.cpp)
  set_target_properties(foreign_${_lib} PROPERTIES OUTPUT_NAME ${_lib} LIBRARY_OUTPUT_DIRECTORY ${_foreign_dir})
endforeach()
# A library linked against the stand-in libpopops.so (DT_NEEDED "libpopops.so") whose run path
# finds Aspen's libpopops.so first: PopLibs' programs run with Aspen's lib/ ahead on the path.
add_library(foreign_program SHARED error/foreign_program.cpp)
target_link_libraries(foreign_program PRIVATE foreign_popops)
set_target_properties(foreign_program PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${_foreign_dir}/program
  SKIP_BUILD_RPATH ON)
target_link_options(foreign_program PRIVATE -Wl,--no-as-needed -Wl,-rpath,${ASPEN_SDK_DIR}/lib)
aspen_add_test(poplibs_builds_errors LABEL error SOURCES error/poplibs_builds_errors.cpp)
target_compile_definitions(poplibs_builds_errors PRIVATE ASPEN_FOREIGN_POPLIBS_DIR="${_foreign_dir}")
add_dependencies(poplibs_builds_errors foreign_popops foreign_popnn foreign_poplibs_test foreign_program popops poplin
  poprand)

# Issue 24: libpoplar_test, the host helpers PopLibs' tests use (include/poplar_test/Util.hpp).
aspen_add_test(poplar_test_util LABEL unit SOURCES unit/poplar_test_util.cpp LIBS Aspen::poplar_test)

# Issue 24: the Poplar API PopLibs' poplin and popnn tests found (slice with leading bounds,
# IPUModel's conv-unit fields, pva::ProgramVisitor, poplar_test::copy<T, N>).
aspen_add_test(poplin_popnn_compat_gaps LABEL conformance SOURCES compat/poplin_popnn_gaps.cpp
  LIBS Aspen::pva Aspen::poplar_test)
