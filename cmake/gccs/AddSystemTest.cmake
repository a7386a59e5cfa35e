# GCCS CMake helper (find_package(GCCS) -> ${GCCS_CMAKE_DIR}), as PopLibs' tests/ uses it:
#   add_multitarget_test([NAME] <name> COMMAND <program> [<arg>...] [VARIANTS <variant>...]
#                        [LABELS <label>...] [WORKING_DIRECTORY <dir>] [ALLOW_SKIP]
#                        [RUN_SERIAL] [PROPERTIES <property> <value>...])
# adds one ctest test per device variant, <variant>_default_<name> (PopLibs' naming, which
# its CMake relies on: e.g. NoTarget_default_LoggingTest), running
# `<program> <arg>... --device-type <variant>` (no device argument for NoTarget).
# ALLOW_SKIP: exit status 77 (PopLibs' tools' "not applicable") counts as skipped.
# RUN_SERIAL and PROPERTIES set those ctest properties. TEST_IPUMODEL is accepted and has
# no effect (IpuModel variants are the ones Aspen runs anyway).
include(${CMAKE_CURRENT_LIST_DIR}/GccsTestVariants.cmake)

function(add_multitarget_test)
  cmake_parse_arguments(ARG "ALLOW_SKIP;RUN_SERIAL;TEST_IPUMODEL" "NAME;WORKING_DIRECTORY"
                        "COMMAND;VARIANTS;LABELS;PROPERTIES" ${ARGN})
  if(NOT ARG_NAME AND ARG_UNPARSED_ARGUMENTS)
    # add_multitarget_test(<name> COMMAND ...): the name without its keyword.
    list(POP_FRONT ARG_UNPARSED_ARGUMENTS ARG_NAME)
  endif()
  if(NOT ARG_NAME OR NOT ARG_COMMAND)
    message(FATAL_ERROR "add_multitarget_test needs a name (NAME <name> or first) and COMMAND")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_multitarget_test(${ARG_NAME}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  _gccs_test_variants(_variants ${ARG_VARIANTS})
  set(_wd "")
  if(ARG_WORKING_DIRECTORY)
    set(_wd WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY})
  endif()
  foreach(_v IN LISTS _variants)
    set(_test ${_v}_default_${ARG_NAME})
    if(_v STREQUAL "NoTarget")
      add_test(NAME ${_test} COMMAND ${ARG_COMMAND} ${_wd})
    else()
      add_test(NAME ${_test} COMMAND ${ARG_COMMAND} --device-type ${_v} ${_wd})
    endif()
    _gccs_test_properties(${_test} "${ARG_LABELS};${_v}" "${ARG_ALLOW_SKIP}" "${ARG_RUN_SERIAL}" ${ARG_PROPERTIES})
  endforeach()
endfunction()
