# Tests of poputil and popops (libops/): unit, golden and error tests, and the benchmark.
# Golden tests run every case on a 4-tile IPUModel, the 1,472-tile IPUModel and a saved
# and reloaded executable (test/support/TestDevice.hpp).
aspen_add_test(poputil_mapping LABEL unit SOURCES unit/poputil_mapping.cpp LIBS Aspen::poputil)
aspen_add_test(popops_elementwise LABEL golden SOURCES golden/popops_elementwise.cpp LIBS Aspen::popops)
aspen_add_test(popops_map LABEL golden SOURCES golden/popops_map.cpp LIBS Aspen::popops)
aspen_add_test(popops_reduce LABEL golden SOURCES golden/popops_reduce.cpp LIBS Aspen::popops)
aspen_add_test(popops_cast_fill LABEL golden SOURCES golden/popops_cast_fill.cpp LIBS Aspen::popops)
aspen_add_test(popops_slice LABEL golden SOURCES golden/popops_slice.cpp LIBS Aspen::popops)
aspen_add_test(popops_sort LABEL golden SOURCES golden/popops_sort.cpp LIBS Aspen::popops)
aspen_add_test(popops_pad LABEL golden SOURCES golden/popops_pad.cpp LIBS Aspen::popops)
aspen_add_test(popops_errors LABEL error SOURCES error/popops_errors.cpp LIBS Aspen::popops)

# The benchmark is a plain program (no Catch2 main): built, never run by ctest.
add_executable(popops_bench bench/popops_bench.cpp)
set_target_properties(popops_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(popops_bench PRIVATE aspen_settings Aspen::popops TBB::tbb Threads::Threads)

# --- poplin, popnn, poprand ----------------------------------------------------------------------
# Golden tests against Eigen and host loops on a 4-tile model, the 1,472-tile model and a reloaded
# executable (support/TestDevice.hpp; these tests run engines several times, so they take the
# engine from TestDevice::createEngine); one error test per library; the matMul benchmark (plain
# main; built, not run by ctest): build-*/test/bin/poplin_matmul_bench [n] [repeats] [threads]
aspen_add_test(poplin_matmul LABEL golden SOURCES golden/poplin_matmul.cpp
  LIBS Aspen::poplin Eigen3::Eigen TIMEOUT 600)
# Issue 23: fp32 1536^3 / 2048^3 and half 2048^3 on the ipu1 model, results checked.
aspen_add_test(poplin_matmul_ipu1 LABEL golden SOURCES golden/poplin_matmul_ipu1.cpp
  LIBS Aspen::poplin TIMEOUT 600)
aspen_add_test(popnn_nonlinearity LABEL golden SOURCES golden/popnn_nonlinearity.cpp LIBS Aspen::popnn)
aspen_add_test(popnn_loss LABEL golden SOURCES golden/popnn_loss.cpp LIBS Aspen::popnn)
aspen_add_test(popnn_pooling LABEL golden SOURCES golden/popnn_pooling.cpp LIBS Aspen::popnn)
aspen_add_test(poprand_random LABEL golden SOURCES golden/poprand_random.cpp LIBS Aspen::poprand TBB::tbb)
aspen_add_test(poplin_errors LABEL error SOURCES error/poplin_errors.cpp LIBS Aspen::poplin)
aspen_add_test(popnn_errors LABEL error SOURCES error/popnn_errors.cpp LIBS Aspen::popnn)
aspen_add_test(poprand_errors LABEL error SOURCES error/poprand_errors.cpp LIBS Aspen::poprand)

find_package(OpenMP COMPONENTS CXX)
add_executable(poplin_matmul_bench bench/matmul_bench.cpp)
set_target_properties(poplin_matmul_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(poplin_matmul_bench PRIVATE aspen_settings Aspen::poplin Eigen3::Eigen TBB::tbb)
if(OpenMP_CXX_FOUND)
  # Eigen's matrix product uses every core only with OpenMP.
  target_link_libraries(poplin_matmul_bench PRIVATE OpenMP::OpenMP_CXX)
endif()
# --- end of poplin, popnn, poprand ---------------------------------------------------------------
# The native loops are compiled like the codelets they are compared with (popc -O3, no
# floating-point contraction: the map's results are compared bit for bit); source options come
# after aspen_settings' -O2.
set_source_files_properties(bench/popops_bench.cpp PROPERTIES COMPILE_OPTIONS "-O3;-ffp-contract=off")
# popops_map's host references round each operation, as the generated codelets do (bit-for-bit checks).
set_source_files_properties(golden/popops_map.cpp PROPERTIES COMPILE_OPTIONS -ffp-contract=off)

# Hostile inputs to every libops family: rejected with a named error, or a graph that runs.
aspen_add_test(ops_hostile_inputs LABEL error SOURCES error/ops_hostile_inputs.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn Aspen::poprand)

# --- issue 10 items 8 and 9: more PopLibs functions, convolutions, normalisation ---------------------
# (test/compat.cmake does not exist on this branch: the client-style test is registered here.)
aspen_add_test(popops_more LABEL golden SOURCES golden/popops_more.cpp LIBS Aspen::popops Aspen::popnn)
aspen_add_test(poplin_conv LABEL golden SOURCES golden/poplin_conv.cpp LIBS Aspen::poplin Aspen::popnn
  nlohmann_json::nlohmann_json)
aspen_add_test(libops_more_errors LABEL error SOURCES error/libops_more_errors.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn)
aspen_add_test(ops_compat_cnn LABEL conformance SOURCES compat/ops_cnn_client.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn)
# The convolution benchmark (plain main; built, not run by ctest):
#   build-*/test/bin/poplin_conv_bench [batch] [channels] [size] [repeats] [threads]
add_executable(poplin_conv_bench bench/conv_bench.cpp)
set_target_properties(poplin_conv_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(poplin_conv_bench PRIVATE aspen_settings Aspen::poplin Eigen3::Eigen TBB::tbb)
if(OpenMP_CXX_FOUND)
  target_link_libraries(poplin_conv_bench PRIVATE OpenMP::OpenMP_CXX)
endif()
set_source_files_properties(bench/conv_bench.cpp PROPERTIES COMPILE_OPTIONS -O3)

# --- matMul kernels (issue 14): MatMulBlock against the host's fma chain, bit for bit, once
# per kernel: the host's best (AVX-512 where the CPU has it), AVX2 and the plain loop
# (ASPEN_CODELET_ISA, docs/matmul.md).
aspen_add_test(poplin_matmul_kernels LABEL golden SOURCES golden/poplin_matmul_kernels.cpp
  LIBS Aspen::poplin)
foreach(_isa avx2 generic)
  add_test(NAME poplin_matmul_kernels_${_isa} COMMAND poplin_matmul_kernels)
  set_tests_properties(poplin_matmul_kernels_${_isa} PROPERTIES LABELS golden TIMEOUT 300
    ENVIRONMENT "ASPEN_CODELET_ISA=${_isa};ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache;ASPEN_SOURCE_DIR=${PROJECT_SOURCE_DIR};ASPEN_SDK_DIR=${ASPEN_SDK_DIR}")
endforeach()

# Each kernel variant the host runs (cpuid), called directly against the plain loop, bit for bit.
aspen_add_test(poplin_matmul_kernel_variants LABEL unit SOURCES unit/poplin_matmul_kernel_variants.cpp
  LIBS aspen_vertex_headers)
target_include_directories(poplin_matmul_kernel_variants PRIVATE ${PROJECT_SOURCE_DIR}/vertices/poplin)

# matmul_bench also times Eigen built for AVX-512 (called only on a host that has it), from a
# library of its own with hidden symbols so its Eigen instantiations stay apart from the AVX2 ones.
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-mavx512f ASPEN_CXX_HAS_AVX512F)
if(ASPEN_CXX_HAS_AVX512F AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_library(poplin_matmul_bench_eigen512 SHARED bench/matmul_bench_eigen512.cpp)
  set_target_properties(poplin_matmul_bench_eigen512 PROPERTIES CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
  target_link_libraries(poplin_matmul_bench_eigen512 PRIVATE aspen_settings Eigen3::Eigen)
  # GCC 12's own AVX-512 headers trip its uninitialised-use warnings (the undefined
  # vectors of _mm512_undefined_*): not a fault of this code.
  target_compile_options(poplin_matmul_bench_eigen512 PRIVATE -mavx512f -mavx512dq -mavx512vl -mavx512bw
    $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized -Wno-uninitialized>)
  if(OpenMP_CXX_FOUND)
    target_link_libraries(poplin_matmul_bench_eigen512 PRIVATE OpenMP::OpenMP_CXX)
  endif()
  target_link_libraries(poplin_matmul_bench PRIVATE poplin_matmul_bench_eigen512)
  target_compile_definitions(poplin_matmul_bench PRIVATE ASPEN_BENCH_EIGEN512)
endif()
# Issue 23 item 3: the matMul planner's per-tile memory estimate against the compiled memory report.
aspen_add_test(poplin_matmul_memory LABEL golden SOURCES golden/poplin_matmul_memory.cpp LIBS Aspen::poplin)
