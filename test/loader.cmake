# Executable loading (compiler/src/exe, runtime/src/Loader.cpp): crafted executables that
# must be refused with a named error (issue 16), and the fuzz harnesses' smoke runs (test/fuzz).
aspen_add_test(exe_load_errors LABEL error SOURCES error/executable_load_errors.cpp
  LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(exe_load_errors PRIVATE ASPEN_RUNTIME_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  ASPEN_TILE_STATE_GP="${CMAKE_BINARY_DIR}/test/tile-state.gp")
add_dependencies(exe_load_errors runtime_tile_state_gp)

# Benchmark (plain main; built, not run by ctest): build-*/test/bin/load_bench [vertices...]
aspen_add_test(load_bench LABEL bench SOURCES bench/load_bench.cpp)

# ---- fuzz harnesses (test/fuzz, docs/fuzzing.md) -----------------------------------------------
# Each harness defines LLVMFuzzerTestOneInput. With -DASPEN_FUZZ_LIBFUZZER=ON (a clang build made
# by .ci/fuzz, which also passes -fsanitize=address,undefined,fuzzer-no-link) they link with
# libFuzzer; otherwise with fuzz/FuzzDriver.cpp, which replays the seeds and a bounded run of
# random mutations: a CTest smoke test of a few seconds each.
option(ASPEN_FUZZ_LIBFUZZER "Link the fuzz harnesses with clang's libFuzzer" OFF)
set(ASPEN_FUZZ_CORPUS ${CMAKE_BINARY_DIR}/test/fuzz/seeds)

# The seed corpora, made by the build: a tool compiles a few small graphs and writes their
# executables, profile sections and vertex library metadata.
add_executable(aspen_fuzz_seeds fuzz/make_seeds.cpp)
set_target_properties(aspen_fuzz_seeds PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(aspen_fuzz_seeds PRIVATE aspen_settings Aspen::poplar)
target_include_directories(aspen_fuzz_seeds PRIVATE ${PROJECT_SOURCE_DIR}/libgraph/src
  ${PROJECT_SOURCE_DIR}/compiler/src)
add_custom_command(OUTPUT ${ASPEN_FUZZ_CORPUS}/stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${ASPEN_FUZZ_CORPUS}
  COMMAND ${CMAKE_COMMAND} -E env ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache
          $<TARGET_FILE:aspen_fuzz_seeds> ${ASPEN_FUZZ_CORPUS}
  COMMAND ${CMAKE_COMMAND} -E touch ${ASPEN_FUZZ_CORPUS}/stamp
  DEPENDS aspen_fuzz_seeds
  COMMENT "Writing the fuzz seed corpora"
  VERBATIM)
add_custom_target(aspen_fuzz_corpus ALL DEPENDS ${ASPEN_FUZZ_CORPUS}/stamp)

# aspen_add_fuzzer(<name> <corpus subdirectory> <sources...>)
function(aspen_add_fuzzer name corpus)
  add_executable(${name} ${ARGN})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
  target_link_libraries(${name} PRIVATE aspen_settings Aspen::poplar TBB::tbb nlohmann_json::nlohmann_json)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/libgraph/src
    ${PROJECT_SOURCE_DIR}/compiler/src ${PROJECT_SOURCE_DIR}/runtime/src ${CMAKE_CURRENT_SOURCE_DIR}/support)
  target_compile_definitions(${name} PRIVATE
    ASPEN_FUZZ_SHARED_OBJECT="${ASPEN_FUZZ_CORPUS}/shared_object.so"
    ASPEN_FUZZ_SEED_EXECUTABLE="${ASPEN_FUZZ_CORPUS}/exe/seed0.aspenexe")
  add_dependencies(${name} aspen_fuzz_corpus)
  if(ASPEN_FUZZ_LIBFUZZER)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  else()
    target_sources(${name} PRIVATE fuzz/FuzzDriver.cpp)
    add_test(NAME ${name}_smoke COMMAND ${name} -seconds=4 -runs=200000 ${ASPEN_FUZZ_CORPUS}/${corpus})
    set_tests_properties(${name}_smoke PROPERTIES LABELS "error;fuzz" TIMEOUT 120)
  endif()
endfunction()

aspen_add_fuzzer(fuzz_exe_raw exe fuzz/fuzz_executable.cpp)
aspen_add_fuzzer(fuzz_exe_repaired exe fuzz/fuzz_executable.cpp)
target_compile_definitions(fuzz_exe_repaired PRIVATE ASPEN_FUZZ_REPAIR_CHECKSUM=1)
aspen_add_fuzzer(fuzz_gp_metadata gp fuzz/fuzz_gp_metadata.cpp)
aspen_add_fuzzer(fuzz_profile profile fuzz/fuzz_profile.cpp)
