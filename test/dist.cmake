# Several instances of one program over Open MPI (label distributed): popdist's view of the
# launch, host collectives against host loops, a popdist program with an Engine per instance,
# poprun's command line and its errors, and an instance dying mid-run. Skipped, with a message
# saying why, only when Open MPI is absent (.ci/setup installs it).
find_package(MPI COMPONENTS C QUIET) # imported targets are per directory
if(NOT TARGET popdist OR NOT MPIEXEC_EXECUTABLE)
  add_test(NAME distributed_skipped
    COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: Open MPI (mpirun, libopenmpi-dev) is not installed; the distributed tests need it")
  set_tests_properties(distributed_skipped PROPERTIES LABELS distributed SKIP_REGULAR_EXPRESSION "SKIPPED")
  return()
endif()

set(_dist_bin ${CMAKE_BINARY_DIR}/test/bin)
foreach(_program popdist_instances popdist_engine instance_dies bad_environment gcl_instances data_parallel_instances
    collective_faults)
  add_executable(dist_${_program} distributed/${_program}.cpp)
  set_target_properties(dist_${_program} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${_dist_bin})
  target_link_libraries(dist_${_program} PRIVATE aspen_settings Aspen::popdist Aspen::popops Aspen::poplin Aspen::gcl)
endforeach()

# Root may run mpirun (CI runs as root); one machine holds more instances than cores.
set(_mpirun ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe)
set(_dist_env "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache;ASPEN_DIST_TIMEOUT=60;OMPI_MCA_btl_vader_single_copy_mechanism=none")
function(aspen_add_dist_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS distributed TIMEOUT 180 ENVIRONMENT "${_dist_env}"
    PROCESSORS 2)
endfunction()

# Plain mpirun with popdist's variables: total replicas given, local ones derived.
aspen_add_dist_test(dist_mpirun_np2 ${_mpirun} -np 2 -x POPDIST_NUM_TOTAL_REPLICAS=4
  $<TARGET_FILE:dist_popdist_instances> 2 4)
aspen_add_dist_test(dist_mpirun_np4 ${_mpirun} -np 4 $<TARGET_FILE:dist_popdist_instances> 4 4)
# poprun: 2 instances x 2 replicas, 4 x 1, with the topology printed.
aspen_add_dist_test(dist_poprun_2x2 $<TARGET_FILE:poprun> --num-instances 2 --num-replicas 4
  --print-topology yes $<TARGET_FILE:dist_popdist_instances> 2 4)
set_tests_properties(dist_poprun_2x2 PROPERTIES PASS_REGULAR_EXPRESSION "poprun topology: 2 instances, 4 replicas.*instance 1 of 2 ok: replicas 2\\.\\.3")
aspen_add_dist_test(dist_poprun_4x1 $<TARGET_FILE:poprun> --num-instances 4 --num-replicas 4
  $<TARGET_FILE:dist_popdist_instances> 4 4)
# Only instance 0 speaks (PASS: its line; FAIL: any other instance's).
aspen_add_dist_test(dist_poprun_only_output $<TARGET_FILE:poprun> --num-instances 2 --num-replicas 2
  --only-output-from-instance 0 $<TARGET_FILE:dist_popdist_instances> 2 2)
set_tests_properties(dist_poprun_only_output PROPERTIES PASS_REGULAR_EXPRESSION "instance 0 of 2 ok"
  FAIL_REGULAR_EXPRESSION "instance 1 of 2 ok")
# An Engine per instance, results combined on the host.
aspen_add_dist_test(dist_popdist_engine $<TARGET_FILE:poprun> --num-instances 2 --num-replicas 2
  $<TARGET_FILE:dist_popdist_engine>)

# GCL collectives spanning instances: 1x4 (one process), 2x2 and 4x1, each bit-identical to a
# host fold in group order, hence to each other.
aspen_add_dist_test(dist_gcl_1x4 ${CMAKE_COMMAND} -E env POPDIST_NUM_LOCAL_REPLICAS=4
  $<TARGET_FILE:dist_gcl_instances>)
aspen_add_dist_test(dist_gcl_2x2 $<TARGET_FILE:poprun> --num-instances 2 --num-replicas 4
  $<TARGET_FILE:dist_gcl_instances>)
aspen_add_dist_test(dist_gcl_4x1 $<TARGET_FILE:poprun> --num-instances 4 --num-replicas 4
  $<TARGET_FILE:dist_gcl_instances>)
set_tests_properties(dist_gcl_1x4 dist_gcl_2x2 dist_gcl_4x1 PROPERTIES PASS_REGULAR_EXPRESSION "bit-identical"
  FAIL_REGULAR_EXPRESSION "FAILED|differs")

# Data-parallel training as 1x4, 2x2 and 4x1: identical weights after every step.
aspen_add_dist_test(dist_data_parallel ${CMAKE_CURRENT_SOURCE_DIR}/distributed/data_parallel.sh
  $<TARGET_FILE:poprun> $<TARGET_FILE:dist_data_parallel_instances>)
set_tests_properties(dist_data_parallel PROPERTIES PASS_REGULAR_EXPRESSION "PASSED: 1x4, 2x2 and 4x1")

# Arguments mpirun would read as syntax (':' and '-np') reach the program unchanged (issue 25).
aspen_add_dist_test(dist_poprun_arguments ${CMAKE_CURRENT_SOURCE_DIR}/distributed/poprun_arguments.sh
  $<TARGET_FILE:poprun>)
set_tests_properties(dist_poprun_arguments PROPERTIES LABELS "distributed;error"
  PASS_REGULAR_EXPRESSION "PASSED: both instances got every argument as given")

# Instances that call different collectives, or one that ends while another waits: every
# instance fails within seconds naming both sides (issue 25).
aspen_add_dist_test(dist_error_collective_faults ${CMAKE_CURRENT_SOURCE_DIR}/distributed/collective_faults.sh
  $<TARGET_FILE:poprun> $<TARGET_FILE:dist_collective_faults>)
set_tests_properties(dist_error_collective_faults PROPERTIES LABELS "distributed;error"
  PASS_REGULAR_EXPRESSION "PASSED: every instance failed within seconds naming both sides")

# Errors: replicas that do not divide over the instances; no mpirun; a bad environment; an
# instance that dies while the others wait for it.
aspen_add_dist_test(dist_error_uneven_replicas $<TARGET_FILE:poprun> --num-instances 3 --num-replicas 4
  $<TARGET_FILE:dist_popdist_instances> 3 4)
set_tests_properties(dist_error_uneven_replicas PROPERTIES LABELS "distributed;error"
  PASS_REGULAR_EXPRESSION "--num-replicas 4 cannot be divided evenly among --num-instances 3")
aspen_add_dist_test(dist_error_no_mpirun ${CMAKE_COMMAND} -E env ASPEN_MPIRUN=${CMAKE_BINARY_DIR}/no-such-mpirun
  $<TARGET_FILE:poprun> --num-instances 2 --num-replicas 2 $<TARGET_FILE:dist_popdist_instances> 2 2)
set_tests_properties(dist_error_no_mpirun PROPERTIES LABELS "distributed;error"
  PASS_REGULAR_EXPRESSION "cannot find mpirun at ASPEN_MPIRUN=.*no-such-mpirun. install Open MPI")
aspen_add_dist_test(dist_error_bad_environment ${_mpirun} -np 2 -x POPDIST_NUM_TOTAL_REPLICAS=3
  $<TARGET_FILE:dist_bad_environment>)
set_tests_properties(dist_error_bad_environment PROPERTIES LABELS "distributed;error"
  PASS_REGULAR_EXPRESSION "poplar_error: popdist: inconsistent distributed environment: POPDIST_NUM_TOTAL_REPLICAS=3 replicas do not divide over 2 instances")
aspen_add_dist_test(dist_error_instance_dies ${CMAKE_CURRENT_SOURCE_DIR}/distributed/instance_dies.sh
  ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:dist_instance_dies>)
set_tests_properties(dist_error_instance_dies PROPERTIES LABELS "distributed;error"
  PASS_REGULAR_EXPRESSION "PASSED: the job ended with an error")

# Benchmarks (built, not run by ctest): mpirun -np 2 build/test/bin/dist_bench allreduce;
# test/bench/dist_scaling.sh build
add_executable(dist_bench bench/dist_bench.cpp)
set_target_properties(dist_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${_dist_bin})
target_link_libraries(dist_bench PRIVATE aspen_settings Aspen::popdist Aspen::popops Aspen::gcl MPI::MPI_C)
target_compile_definitions(dist_bench PRIVATE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
