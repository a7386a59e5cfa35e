# Codelets: the headers codelets see, the codelet compiler, its cache and .gp files, popc,
# and the vertex half of poplar::Graph. The codelet corpus is test/codelets/*.cpp; every test
# compiles it with the same flags (CodeletTestSupport.hpp), so the codelet cache
# (build/test/cache) shares one compile per corpus file between the tests and across runs.
set(_codelet_corpus_dir ${CMAKE_CURRENT_SOURCE_DIR}/codelets)

aspen_add_test(codelets_headers LABEL unit SOURCES unit/codelets_headers.cpp LIBS aspen_vertex_headers)
aspen_add_test(codelets_library LABEL unit SOURCES unit/codelets_library.cpp)

foreach(_t codelets_library)
  target_include_directories(${_t} PRIVATE ${_codelet_corpus_dir} ${PROJECT_SOURCE_DIR}/libops/include)
  target_compile_definitions(${_t} PRIVATE ASPEN_CODELET_CORPUS_DIR="${_codelet_corpus_dir}")
endforeach()
aspen_add_test(codelets_graph LABEL conformance SOURCES conformance/codelets_graph.cpp)
aspen_add_test(codelets_samefile LABEL conformance SOURCES conformance/codelets_samefile.cpp)
# The test opens its own __FILE__, which is the path the compiler was given: relative to the
# build directory when ccache rewrites paths (base_dir) or the build uses relative paths.
set_tests_properties(codelets_samefile PROPERTIES WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
foreach(_t codelets_graph codelets_samefile)
  target_include_directories(${_t} PRIVATE ${_codelet_corpus_dir} ${PROJECT_SOURCE_DIR}/libops/include)
  target_compile_definitions(${_t} PRIVATE ASPEN_CODELET_CORPUS_DIR="${_codelet_corpus_dir}")
endforeach()
aspen_add_test(codelets_errors LABEL error SOURCES error/codelet_errors.cpp)
foreach(_t codelets_errors)
  target_include_directories(${_t} PRIVATE ${_codelet_corpus_dir})
  target_compile_definitions(${_t} PRIVATE ASPEN_CODELET_CORPUS_DIR="${_codelet_corpus_dir}")
endforeach()
aspen_add_test(codelets_popc LABEL integration SOURCES unit/codelets_popc.cpp)
add_dependencies(codelets_popc popc)
target_include_directories(codelets_popc PRIVATE ${_codelet_corpus_dir})
target_compile_definitions(codelets_popc PRIVATE ASPEN_CODELET_CORPUS_DIR="${_codelet_corpus_dir}")

# Benchmark (built, not run by ctest): build-*/test/bin/codelets_cache_bench
aspen_add_test(codelets_cache_bench LABEL bench SOURCES bench/codelet_cache_bench.cpp)

# aspen_add_codelets (cmake/AspenCodelets.cmake) builds a .gp at build time with popc;
# codelets_popc loads it.
aspen_add_codelets(codelets_corpus_gp OUTPUT ${CMAKE_BINARY_DIR}/test/corpus-templates.gp
  SOURCES codelets/Templates.cpp FLAGS -O2 -DCORPUS_SCALE=3 -I ${_codelet_corpus_dir})
add_dependencies(codelets_popc codelets_corpus_gp)
target_compile_definitions(codelets_popc PRIVATE
  ASPEN_CODELET_CORPUS_GP="${CMAKE_BINARY_DIR}/test/corpus-templates.gp")

# The codelet corpus of issue 15 (test/codelets/macro): popc's vertex counts against
# independent counts, linking sources and .gp inputs, clang as the host compiler.
aspen_add_test(codelets_corpus LABEL integration SOURCES unit/codelets_corpus.cpp)
add_dependencies(codelets_corpus popc)
target_link_libraries(codelets_corpus PRIVATE LibClang::LibClang)
aspen_add_test(codelets_hostile LABEL error SOURCES error/codelet_hostile.cpp)
target_include_directories(codelets_hostile PRIVATE ${_codelet_corpus_dir})
target_compile_definitions(codelets_hostile PRIVATE ASPEN_CODELET_CORPUS_DIR="${_codelet_corpus_dir}")
target_link_libraries(codelets_hostile PRIVATE nlohmann_json::nlohmann_json)
aspen_add_test(codelets_link_errors LABEL error SOURCES error/codelet_link_errors.cpp)
add_dependencies(codelets_link_errors popc)
aspen_add_test(codelets_builtin_errors LABEL error SOURCES error/codelet_builtin_errors.cpp)
add_dependencies(codelets_builtin_errors popc)

# A vertex of 1,500 fields; popc_fields_bench (not run by ctest) times 10,000 fields and 4,000
# vertex types (issue 25).
aspen_add_test(codelets_wide_vertex LABEL conformance SOURCES unit/codelets_wide_vertex.cpp)
aspen_add_test(popc_fields_bench LABEL bench SOURCES bench/popc_fields_bench.cpp)
