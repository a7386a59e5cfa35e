# The SDK as a third party uses it (label integration): public headers compile on their own,
# a program builds with enable.sh + g++, and a CMake project builds with find_package(Aspen)
# from the build tree and from an installed prefix. The scripts live in integration/.

# (1) Every public header on its own, -std=c++11 and -std=c++17, against build/sdk/include.
set(_sdk_header_list "")
foreach(_header IN LISTS ASPEN_PUBLIC_HOST_HEADERS)
  string(APPEND _sdk_header_list "host ${_header}\n")
endforeach()
foreach(_header IN LISTS ASPEN_PUBLIC_CODELET_HEADERS)
  string(APPEND _sdk_header_list "codelet ${_header}\n")
endforeach()
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/sdk_public_headers.txt CONTENT "${_sdk_header_list}")
add_test(NAME sdk_headers_self_contained
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/check_headers.sh ${CMAKE_CXX_COMPILER}
          ${ASPEN_SDK_DIR}/include ${CMAKE_CURRENT_BINARY_DIR}/sdk_public_headers.txt)

# (2) source enable.sh; g++ -std=c++11 prog.cpp -lpoplar; and the client's own Makefile.
add_test(NAME sdk_client_enable_sh
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/client_enable_sh.sh ${ASPEN_SDK_DIR}
          ${CMAKE_CURRENT_SOURCE_DIR}/integration/client)

# (3) find_package(Aspen) against build/sdk and against a `cmake --install` prefix.
add_test(NAME sdk_client_find_package
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/client_find_package.sh ${ASPEN_SDK_DIR}
          ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/integration/client ${CMAKE_GENERATOR}
          ${CMAKE_CXX_COMPILER})

set_tests_properties(sdk_headers_self_contained sdk_client_enable_sh sdk_client_find_package
  PROPERTIES LABELS integration TIMEOUT 300
  ENVIRONMENT "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache")
