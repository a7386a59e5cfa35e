# The graph compiler: unit tests of each pass on hand-built graphs, the executable format
# and compile cache, the compiler's error cases, and its benchmark.
aspen_add_test(compiler_passes LABEL unit SOURCES unit/compiler/compiler_passes.cpp LIBS TBB::tbb)
aspen_add_test(compiler_executable LABEL unit SOURCES unit/compiler/compiler_executable.cpp LIBS TBB::tbb)
aspen_add_test(compiler_streaming_memory LABEL unit SOURCES unit/compiler/streaming_memory.cpp LIBS TBB::tbb)
aspen_add_test(compiler_errors LABEL error SOURCES error/compiler_errors.cpp LIBS TBB::tbb)
aspen_add_test(compiler_conformance LABEL conformance SOURCES conformance/compiler/compile_graph.cpp)
target_compile_definitions(compiler_conformance PRIVATE ASPEN_COMPILER_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Benchmark (plain main; built, not run by ctest): build-*/test/bin/compile_bench [vertices...]
aspen_add_test(compile_bench LABEL bench SOURCES bench/compile_bench.cpp)

# Streaming Memory benchmark (plain main; built, not run by ctest): build-*/test/bin/streaming_bench
add_executable(streaming_bench bench/streaming_bench.cpp)
set_target_properties(streaming_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(streaming_bench PRIVATE aspen_settings Aspen::poplar TBB::tbb nlohmann_json::nlohmann_json)
target_include_directories(streaming_bench PRIVATE ${PROJECT_SOURCE_DIR}/libgraph/src
  ${PROJECT_SOURCE_DIR}/compiler/src ${PROJECT_SOURCE_DIR}/runtime/src)
target_compile_definitions(streaming_bench PRIVATE ASPEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
