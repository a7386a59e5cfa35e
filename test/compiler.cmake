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
