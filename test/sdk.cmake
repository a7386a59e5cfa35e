# The SDK as a third party uses it (label integration): public headers compile on their own,
# a program builds with enable.sh + g++, a CMake project builds with find_package(Aspen)
# from the build tree and from an installed prefix, and popc's codelet cache is shared by
# concurrent compiles and survives a rebuilt libpoplar. The scripts live in integration/.

# (1) Every public header on its own, -std=c++11 and -std=c++17, against build/sdk/include
# only (a public header that reaches a private one fails). Each header is one generated
# translation unit per standard that includes it twice (which also checks its include guard);
# codelet headers are compiled as popc compiles codelets, with __POPC__ defined. The units are
# built with the project (in parallel, through ccache, and again only when a header changes);
# the test builds the targets, which is a no-op when they are up to date, and names each
# header that fails.
set(_sdk_header_targets "")
foreach(_std IN ITEMS 11 17)
  set(_target sdk_headers_cxx${_std})
  set(_units "")
  foreach(_kind IN ITEMS HOST CODELET)
    foreach(_header IN LISTS ASPEN_PUBLIC_${_kind}_HEADERS)
      # gccs's planner-side headers are C++17, as PopLibs, their user (docs/gccs.md); the
      # ones Poplar's headers include (ArrayRef, generic_id, CompilerFeatures) are C++11.
      if(_std EQUAL 11 AND _header MATCHES "^gccs/(Algorithm|StructHelper|popsolver/)")
        continue()
      endif()
      set(_unit ${CMAKE_CURRENT_BINARY_DIR}/sdk_headers/c++${_std}/${_header}.cpp)
      file(CONFIGURE OUTPUT ${_unit} CONTENT "#include <${_header}>\n#include <${_header}>\n")
      if(_kind STREQUAL "CODELET")
        set_source_files_properties(${_unit} PROPERTIES COMPILE_DEFINITIONS __POPC__)
      endif()
      list(APPEND _units ${_unit})
    endforeach()
  endforeach()
  add_library(${_target} OBJECT ${_units})
  # Not aspen_settings (C++20): a client's language level and the project's warning flags.
  set_target_properties(${_target} PROPERTIES CXX_STANDARD ${_std} CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF)
  target_compile_options(${_target} PRIVATE -Wall -Wextra -Werror)
  target_include_directories(${_target} PRIVATE ${ASPEN_SDK_DIR}/include)
  add_dependencies(${_target} aspen_sdk_headers)
  list(APPEND _sdk_header_targets ${_target})
endforeach()
add_test(NAME sdk_headers_self_contained
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/check_headers.sh ${CMAKE_BINARY_DIR}
          ${CMAKE_GENERATOR} ${_sdk_header_targets})

# (2) source enable.sh; g++ -std=c++11 prog.cpp -lpoplar; and the client's own Makefile.
add_test(NAME sdk_client_enable_sh
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/client_enable_sh.sh ${ASPEN_SDK_DIR}
          ${CMAKE_CURRENT_SOURCE_DIR}/integration/client)

# (3) find_package(Aspen) against build/sdk and against a `cmake --install` prefix.
add_test(NAME sdk_client_find_package
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/client_find_package.sh ${ASPEN_SDK_DIR}
          ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/integration/client ${CMAKE_GENERATOR}
          ${CMAKE_CXX_COMPILER})

# (4) popc's codelet cache: concurrent compiles share one entry, and a rebuilt libpoplar
# whose codelet compiler did not change keeps it.
add_test(NAME sdk_codelet_cache
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/codelet_cache.sh ${ASPEN_SDK_DIR}
          ${CMAKE_CURRENT_SOURCE_DIR}/integration/client/codelets.cpp)

set_tests_properties(sdk_headers_self_contained sdk_client_enable_sh sdk_client_find_package
  sdk_codelet_cache
  PROPERTIES LABELS integration TIMEOUT 300
  ENVIRONMENT "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache")
