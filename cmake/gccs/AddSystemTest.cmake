# GCCS CMake helper (find_package(GCCS) -> ${GCCS_CMAKE_DIR}), as PopLibs' tests/ uses it:
#   add_multitarget_test(NAME <name> COMMAND <program> [<arg>...] [VARIANTS <variant>...]
#                        [LABELS <label>...] [WORKING_DIRECTORY <dir>])
# adds one ctest test per device variant, <name>_<variant>, running
# `<program> <arg>... --device-type <variant>` (no device argument for NoTarget).
include(${CMAKE_CURRENT_LIST_DIR}/GccsTestVariants.cmake)

function(add_multitarget_test)
  cmake_parse_arguments(ARG "" "NAME;WORKING_DIRECTORY" "COMMAND;VARIANTS;LABELS" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_COMMAND)
    message(FATAL_ERROR "add_multitarget_test needs NAME and COMMAND")
  endif()
  _gccs_test_variants(_variants ${ARG_VARIANTS})
  set(_wd "")
  if(ARG_WORKING_DIRECTORY)
    set(_wd WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY})
  endif()
  foreach(_v IN LISTS _variants)
    if(_v STREQUAL "NoTarget")
      add_test(NAME ${ARG_NAME}_${_v} COMMAND ${ARG_COMMAND} ${_wd})
    else()
      add_test(NAME ${ARG_NAME}_${_v} COMMAND ${ARG_COMMAND} --device-type ${_v} ${_wd})
    endif()
    set_tests_properties(${ARG_NAME}_${_v} PROPERTIES LABELS "${ARG_LABELS};${_v}")
  endforeach()
endfunction()
