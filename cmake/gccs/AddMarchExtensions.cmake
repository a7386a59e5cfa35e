# GCCS CMake helper (find_package(GCCS) -> ${GCCS_CMAKE_DIR}), included by PopLibs' top level.
# Graphcore's version enables x86-64-v3 instructions; Aspen's adds the flags only when asked,
# so a build runs on any x86-64 host:  -DGCCS_MARCH_FLAGS="-march=x86-64-v3"
#
#   TargetAddMarchExtensions(<target>)   PopLibs calls it on each library and tool: gives the
#                                        target GCCS_MARCH_FLAGS (nothing when they are empty).
set(GCCS_MARCH_FLAGS "" CACHE STRING "Extra -march flags for a project using GCCS's AddMarchExtensions")

function(TargetAddMarchExtensions target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "TargetAddMarchExtensions: ${target} is not a target")
  endif()
  if(GCCS_MARCH_FLAGS)
    separate_arguments(_flags UNIX_COMMAND "${GCCS_MARCH_FLAGS}")
    target_compile_options(${target} PRIVATE ${_flags})
  endif()
endfunction()
