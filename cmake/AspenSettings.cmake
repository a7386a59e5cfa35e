# One settings target that every Aspen target links privately: language level,
# warnings, and the optimisation flags of a release build.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_VISIBILITY_PRESET default)

find_program(ASPEN_CCACHE ccache)
if(ASPEN_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${ASPEN_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${ASPEN_CCACHE})
endif()

add_library(aspen_settings INTERFACE)
target_compile_features(aspen_settings INTERFACE cxx_std_20)
target_compile_options(aspen_settings INTERFACE
  -Wall -Wextra -Wno-unused-parameter
  $<$<BOOL:${ASPEN_WERROR}>:-Werror>
  $<$<CONFIG:Release>:-O2 -mavx2 -mfma>
  $<$<CONFIG:RelWithDebInfo>:-O2 -g -mavx2 -mfma>)

# ASPEN_SANITIZE: instrument every Aspen target (libraries, popc, tests, samples) with clang's or
# GCC's sanitizers. "address" = ASan + UBSan, every UB report fatal (what .ci/sanitize runs);
# "thread" = TSan. Codelet libraries compiled at run time (.gp) are not instrumented: they are
# loaded into the sanitized process and run uninstrumented (docs/sanitizers.md).
set(ASPEN_SANITIZE "" CACHE STRING "Sanitizers for Aspen's targets: '', address (ASan+UBSan) or thread (TSan)")
set_property(CACHE ASPEN_SANITIZE PROPERTY STRINGS "" address thread)
if(ASPEN_SANITIZE STREQUAL "address")
  set(_aspen_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(ASPEN_SANITIZE STREQUAL "thread")
  set(_aspen_sanitize_flags -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT ASPEN_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ASPEN_SANITIZE must be empty, 'address' or 'thread', not '${ASPEN_SANITIZE}'")
endif()
# Directory-wide, not on aspen_settings: every executable that links a sanitized libpoplar must
# itself link the sanitizer runtime, also those built without aspen_settings (header checks,
# client-style tests).
if(_aspen_sanitize_flags)
  add_compile_options(${_aspen_sanitize_flags})
  add_link_options(${_aspen_sanitize_flags})
  add_compile_definitions(ASPEN_SANITIZE_${ASPEN_SANITIZE}=1)
endif()
