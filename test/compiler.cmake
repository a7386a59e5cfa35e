# The graph compiler: unit tests of each pass on hand-built graphs, the executable format
# and compile cache, the compiler's error cases, and its benchmark.
aspen_add_test(compiler_passes LABEL unit SOURCES unit/compiler/compiler_passes.cpp LIBS TBB::tbb)
aspen_add_test(compiler_executable LABEL unit SOURCES unit/compiler/compiler_executable.cpp LIBS TBB::tbb)
aspen_add_test(compiler_errors LABEL error SOURCES error/compiler_errors.cpp LIBS TBB::tbb)
