# Shared by AddUnitTest.cmake and AddSystemTest.cmake (GCCS CMake helpers).
# A test runs once per device variant: the VARIANTS given, else DEFAULT_TEST_VARIANTS, kept
# when in ENABLED_TEST_VARIANTS (if set). Aspen runs Cpu, IpuModel2, IpuModel21 and NoTarget
# (no device); Sim* and Hw variants have no device on Aspen and are dropped.
function(_gccs_test_variants out)
  set(_variants ${ARGN})
  if(NOT _variants)
    set(_variants ${DEFAULT_TEST_VARIANTS})
  endif()
  set(_kept "")
  foreach(_v IN LISTS _variants)
    if(_v STREQUAL "")
      continue()
    endif()
    if(DEFINED ENABLED_TEST_VARIANTS AND NOT _v IN_LIST ENABLED_TEST_VARIANTS)
      continue()
    endif()
    if(NOT _v MATCHES "^(NoTarget|Cpu|IpuModel[0-9]+)$")
      continue()
    endif()
    list(APPEND _kept ${_v})
  endforeach()
  list(REMOVE_DUPLICATES _kept)
  set(${out} ${_kept} PARENT_SCOPE)
endfunction()

# Labels, ALLOW_SKIP (exit 77 is a skip), RUN_SERIAL and PROPERTIES <property> <value>... of
# one test.
function(_gccs_test_properties test labels allow_skip run_serial)
  set_tests_properties(${test} PROPERTIES LABELS "${labels}")
  if(allow_skip)
    set_tests_properties(${test} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
  if(run_serial)
    set_tests_properties(${test} PROPERTIES RUN_SERIAL TRUE)
  endif()
  if(ARGN)
    set_tests_properties(${test} PROPERTIES ${ARGN})
  endif()
endfunction()

# extract_targets(<variants-var> <out-var>): the device variants of a list such as
# "NoTarget;IpuModel2;Sim2:cpp" without their ":<config>" suffixes, each once.
function(extract_targets variants_var out_var)
  set(_targets "")
  foreach(_v IN LISTS ${variants_var})
    string(REGEX REPLACE ":.*$" "" _v "${_v}")
    list(APPEND _targets ${_v})
  endforeach()
  list(REMOVE_DUPLICATES _targets)
  set(${out_var} ${_targets} PARENT_SCOPE)
endfunction()

# extract_runconfig(<variant-var> <config-var>): splits the variable's value "Sim2:cpp" into
# "Sim2" (written back) and "cpp" (<config-var>; empty when there is no suffix).
function(extract_runconfig variant_var config_var)
  set(_config "")
  if(${variant_var} MATCHES "^([^:]*):(.*)$")
    set(${variant_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
    set(_config ${CMAKE_MATCH_2})
  endif()
  set(${config_var} ${_config} PARENT_SCOPE)
endfunction()

# add_parent_dir_labels(<labels-var>): appends to the list the names of the directories
# between the project's tests/ directory (or its root) and the current source directory.
function(add_parent_dir_labels labels_var)
  set(_root ${PROJECT_SOURCE_DIR})
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/tests)
    set(_root ${PROJECT_SOURCE_DIR}/tests)
  endif()
  file(RELATIVE_PATH _rel ${_root} ${CMAKE_CURRENT_SOURCE_DIR})
  set(_labels ${${labels_var}})
  if(_rel AND NOT _rel MATCHES "^\\.\\.")
    string(REPLACE "/" ";" _parts "${_rel}")
    list(APPEND _labels ${_parts})
  endif()
  set(${labels_var} ${_labels} PARENT_SCOPE)
endfunction()
