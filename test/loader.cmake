# Executable loading (compiler/src/exe, runtime/src/Loader.cpp): crafted executables that
# must be refused with a named error (issue 16), and the fuzz harnesses' smoke runs (test/fuzz).
aspen_add_test(exe_load_errors LABEL error SOURCES error/executable_load_errors.cpp
  LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(exe_load_errors PRIVATE ASPEN_RUNTIME_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Benchmark (plain main; built, not run by ctest): build-*/test/bin/load_bench [vertices...]
aspen_add_test(load_bench LABEL bench SOURCES bench/load_bench.cpp)
