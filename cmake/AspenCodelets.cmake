# aspen_add_codelets(<target> OUTPUT <file.gp> SOURCES <src>... [FLAGS <flag>...] [DEPENDS <file>...])
#
# Compiles codelet sources with Aspen's popc at build time into one vertex library
# (.gp), the way PopLibs builds lib/popops.gp. <target> is a custom target (built by
# default) that other targets can depend on. FLAGS are popc's (-O3, -I dir, -D X=1,
# --target ipu2,cpu); relative SOURCES are relative to the current source directory.
# Dependencies: the sources, the local headers they include (popc --depfile), popc
# itself (so a new Aspen rebuilds every library) and any DEPENDS.
#
#   aspen_add_codelets(popops_codelets OUTPUT ${ASPEN_SDK_DIR}/lib/popops.gp
#                      SOURCES popops/Fill.cpp popops/Cast.cpp FLAGS -O2 -I ${CMAKE_CURRENT_SOURCE_DIR})
function(aspen_add_codelets target)
  cmake_parse_arguments(C "" "OUTPUT" "SOURCES;FLAGS;DEPENDS" ${ARGN})
  if(NOT C_OUTPUT OR NOT C_SOURCES)
    message(FATAL_ERROR "aspen_add_codelets(${target}): OUTPUT and SOURCES are required")
  endif()
  set(_sources "")
  foreach(_src IN LISTS C_SOURCES)
    get_filename_component(_abs ${_src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND _sources ${_abs})
  endforeach()
  get_filename_component(_output ${C_OUTPUT} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  get_filename_component(_name ${_output} NAME)
  set(_depfile ${CMAKE_CURRENT_BINARY_DIR}/${target}.gp.d)
  add_custom_command(
    OUTPUT ${_output}
    # The build's own codelet cache: a rebuild after `git clean` of the build tree starts over.
    COMMAND ${CMAKE_COMMAND} -E env ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/codelet-cache
            $<TARGET_FILE:popc> ${C_FLAGS} ${_sources} -o ${_output} --depfile ${_depfile}
    DEPENDS popc ${_sources} ${C_DEPENDS}
    DEPFILE ${_depfile}
    COMMENT "Compiling codelets ${_name}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${_output})
endfunction()
