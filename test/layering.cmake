# The module layering of DESIGN.md (libgraph <- compiler <- runtime), checked on the build itself.

# Link time: no lower module's object references a symbol only a higher module defines.
add_test(NAME layering_symbols
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_symbols.sh ${CMAKE_NM}
          "$<TARGET_OBJECTS:aspen_graph>" "$<TARGET_OBJECTS:aspen_compiler>" "$<TARGET_OBJECTS:aspen_runtime>")
set_tests_properties(layering_symbols PROPERTIES LABELS unit TIMEOUT 120)

# Compile time: a wrong-way include does not find its header with the module's own include roots.
foreach(_probe IN ITEMS graph:compiler:exe/ExecutableData.hpp compiler:runtime:TileMemory.hpp)
  string(REPLACE ":" ";" _parts ${_probe})
  list(GET _parts 0 _from)
  list(GET _parts 1 _to)
  list(GET _parts 2 _header)
  add_test(NAME layering_includes_${_from}_${_to}
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only
            "-I$<JOIN:$<TARGET_PROPERTY:aspen_${_from},INCLUDE_DIRECTORIES>,;-I>"
            ${CMAKE_CURRENT_SOURCE_DIR}/layering/${_from}_includes_${_to}.cpp
    COMMAND_EXPAND_LISTS)
  string(REPLACE "." "\\." _header_re ${_header})
  set_tests_properties(layering_includes_${_from}_${_to} PROPERTIES LABELS unit TIMEOUT 60
    PASS_REGULAR_EXPRESSION "${_header_re}: No such file|'${_header_re}' file not found")
endforeach()

# Public headers too: every module sees every include/, so a lower module's #include of a higher
# module's public header (libgraph including runtime/include/...) is caught by reading the sources.
add_test(NAME layering_public_includes
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_includes.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(layering_public_includes PROPERTIES LABELS unit TIMEOUT 60)
