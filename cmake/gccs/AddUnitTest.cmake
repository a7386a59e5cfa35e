# GCCS CMake helper (find_package(GCCS) -> ${GCCS_CMAKE_DIR}), as PopLibs' tests/ uses it:
#   add_unit_test(<name> <source>... [LABELS <label>...] [VARIANTS <variant>...]
#                 [SUITES <suite>...] [PROPERTIES <property> <value>...])
# builds a Boost.Test executable <name> (through add_multi_target_test_executable when the
# project defines it) and adds one ctest test per device variant, <variant>_default_<name>
# (PopLibs' naming), run as `<name> -- --device-type <variant>` (NoTarget: no device
# argument). With SUITES, one test per suite and variant, <variant>_default_<name>_<suite>,
# running `<name> --run_test=<suite> ...`. Sources see TEST_WITH_TARGET (or
# TEST_WITHOUT_TARGET for NoTarget only). PROPERTIES sets those ctest properties.
include(${CMAKE_CURRENT_LIST_DIR}/GccsTestVariants.cmake)

function(add_unit_test name)
  cmake_parse_arguments(ARG "" "" "LABELS;VARIANTS;SUITES;PROPERTIES" ${ARGN})
  _gccs_test_variants(_variants ${ARG_VARIANTS})
  if(NOT _variants)
    return()
  endif()
  if(COMMAND add_multi_target_test_executable)
    add_multi_target_test_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  else()
    add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  endif()
  target_compile_definitions(${name} PRIVATE BOOST_TEST_DYN_LINK)
  if(_variants STREQUAL "NoTarget")
    target_compile_definitions(${name} PRIVATE TEST_WITHOUT_TARGET)
  else()
    target_compile_definitions(${name} PRIVATE TEST_WITH_TARGET)
  endif()
  set(_suites ${ARG_SUITES})
  if(NOT _suites)
    set(_suites "")
    list(APPEND _suites "<all>")
  endif()
  foreach(_suite IN LISTS _suites)
    set(_base ${name})
    set(_select "")
    if(NOT _suite STREQUAL "<all>")
      set(_base ${name}_${_suite})
      set(_select --run_test=${_suite})
    endif()
    foreach(_v IN LISTS _variants)
      set(_test ${_v}_default_${_base})
      if(_v STREQUAL "NoTarget")
        add_test(NAME ${_test} COMMAND ${name} ${_select})
      else()
        add_test(NAME ${_test} COMMAND ${name} ${_select} -- --device-type ${_v})
      endif()
      _gccs_test_properties(${_test} "${ARG_LABELS};${_v}" FALSE FALSE ${ARG_PROPERTIES})
    endforeach()
  endforeach()
endfunction()

#   add_test_executable(<name> <source>...)
# builds a test program that registers no test itself (the caller adds them with add_test),
# linked as add_multi_target_test_executable links, when the project defines it.
function(add_test_executable name)
  if(COMMAND add_multi_target_test_executable)
    add_multi_target_test_executable(${name} ${ARGN})
  else()
    add_executable(${name} ${ARGN})
  endif()
endfunction()
