# Runtime tests: unit tests on hand-built executables, end-to-end conformance
# tests of every program kind, the runtime's error cases, and its benchmarks.
aspen_add_test(runtime_unit_executor LABEL unit SOURCES runtime/executor_unit.cpp LIBS TBB::tbb)
aspen_add_test(runtime_conformance_engine LABEL conformance SOURCES runtime/engine_conformance.cpp
  LIBS TBB::tbb nlohmann_json::nlohmann_json)
aspen_add_test(runtime_counted_cycles LABEL conformance SOURCES runtime/counted_cycles.cpp
  LIBS TBB::tbb nlohmann_json::nlohmann_json Aspen::pva)
aspen_add_test(runtime_hoisted_counts LABEL conformance SOURCES runtime/hoisted_counts.cpp
  LIBS nlohmann_json::nlohmann_json)
aspen_add_test(runtime_exchange_in_place LABEL conformance SOURCES runtime/exchange_in_place.cpp LIBS TBB::tbb)
aspen_add_test(runtime_error_cases LABEL error SOURCES error/runtime_errors.cpp)
aspen_add_test(runtime_vertex_faults LABEL error SOURCES error/vertex_fault_errors.cpp)
aspen_add_test(runtime_scratch_memory_errors LABEL error SOURCES error/scratch_memory_errors.cpp LIBS TBB::tbb)
foreach(t runtime_conformance_engine runtime_error_cases)
  target_compile_definitions(${t} PRIVATE ASPEN_RUNTIME_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endforeach()

# Benchmarks (a plain main; built, never run by ctest): build-*/test/bin/runtime_bench
add_executable(runtime_bench bench/runtime_bench.cpp)
set_target_properties(runtime_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(runtime_bench PRIVATE aspen_settings Aspen::poplar TBB::tbb)
target_include_directories(runtime_bench PRIVATE ${PROJECT_SOURCE_DIR}/libgraph/src
  ${PROJECT_SOURCE_DIR}/compiler/src ${PROJECT_SOURCE_DIR}/runtime/src)
target_compile_definitions(runtime_bench PRIVATE ASPEN_RUNTIME_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  ASPEN_TILE_STATE_GP="${CMAKE_BINARY_DIR}/test/tile-state.gp")

# The public runtime headers as a C++11 program sees them (its own target:
# aspen_settings would raise the language level to C++20).
# The Catch2 main comes precompiled from aspen_test_main (compiling it again costs ~45 s).
add_executable(runtime_unit_headers_cxx11 runtime/headers_cxx11.cpp)
set_target_properties(runtime_unit_headers_cxx11 PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON
  CXX_EXTENSIONS OFF RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_compile_options(runtime_unit_headers_cxx11 PRIVATE -Wall -Wextra -Werror)
target_link_libraries(runtime_unit_headers_cxx11 PRIVATE aspen_test_main Aspen::poplar)
add_test(NAME runtime_unit_headers_cxx11 COMMAND runtime_unit_headers_cxx11)
set_tests_properties(runtime_unit_headers_cxx11 PROPERTIES LABELS unit TIMEOUT 60)

# Each tile's own copy of its codelets' globals and statics (docs/tile-model.md): a library
# of C++ and C codelets with global state, built by popc.
aspen_add_codelets(runtime_tile_state_gp OUTPUT ${CMAKE_BINARY_DIR}/test/tile-state.gp
  SOURCES runtime/tile_state_codelets.cpp runtime/tile_state_c.c FLAGS -O2)
aspen_add_test(runtime_conformance_tile_state LABEL conformance SOURCES runtime/tile_state.cpp
  LIBS TBB::tbb nlohmann_json::nlohmann_json)
add_dependencies(runtime_conformance_tile_state runtime_tile_state_gp)
add_dependencies(runtime_bench runtime_tile_state_gp)
target_compile_definitions(runtime_conformance_tile_state PRIVATE
  ASPEN_RUNTIME_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}" ASPEN_TILE_STATE_GP="${CMAKE_BINARY_DIR}/test/tile-state.gp")

# aspen.streamingMemory=auto end to end (docs/streaming-memory.md).
aspen_add_test(runtime_streaming_memory LABEL golden SOURCES runtime/streaming_memory_runtime.cpp LIBS TBB::tbb)
target_include_directories(runtime_streaming_memory PRIVATE ${PROJECT_SOURCE_DIR}/libgraph/src
  ${PROJECT_SOURCE_DIR}/compiler/src ${PROJECT_SOURCE_DIR}/runtime/src)
target_compile_definitions(runtime_streaming_memory PRIVATE ASPEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
