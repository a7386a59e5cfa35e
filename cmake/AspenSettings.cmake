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
