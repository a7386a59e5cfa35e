# aspen_add_codelets(<target> OUTPUT <file.gp> SOURCES <src>... [FLAGS <flag>...] [DEPENDS <file>...])
#
# Compiles codelet sources with Aspen's popc at build time into one vertex library
# (.gp), the way PopLibs builds lib/popops.gp. <target> is a custom target (built by
# default) that other targets can depend on. FLAGS are popc's (-O3, -I dir, -D X=1,
# --target ipu2,cpu); relative SOURCES are relative to the current source directory.
# Dependencies: the sources, the local headers they include (popc --depfile), the
# codelet compiler's own inputs (ASPEN_CODELET_COMPILER_INPUTS, below) and any DEPENDS.
# popc is built first but is not a file dependency: relinking it after an unrelated
# change to libpoplar does not rebuild vertex libraries.
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
    DEPENDS ${_sources} ${C_DEPENDS} ${ASPEN_CODELET_COMPILER_INPUTS}
    DEPFILE ${_depfile}
    COMMENT "Compiling codelets ${_name}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${_output})
  # popc passes the cycle-counting plugin to clang (docs/cost-model.md): built first.
  if(TARGET aspen_cyclecount)
    add_dependencies(${target} aspen_cyclecount)
  endif()
endfunction()

# The files whose content identifies the codelet compiler: its sources (introspection, the
# registration generator and its support header, the .gp format, popc), the headers codelets
# see, and the one header from elsewhere that shapes a .gp (exe/Hash.hpp, its checksum). A
# change to one of them rebuilds every vertex library and changes the key of every cached
# codelet; nothing else does (not libpoplar's path or timestamp).
set(_aspen_codelets_cmake_dir ${CMAKE_CURRENT_LIST_DIR})
file(GLOB_RECURSE ASPEN_CODELET_COMPILER_INPUTS CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/compiler/src/codelets/*.cpp ${PROJECT_SOURCE_DIR}/compiler/src/codelets/*.hpp
  ${PROJECT_SOURCE_DIR}/compiler/src/codelets/*.h ${PROJECT_SOURCE_DIR}/compiler/tools/popc.cpp
  ${PROJECT_SOURCE_DIR}/compiler/src/exe/Hash.hpp
  ${PROJECT_SOURCE_DIR}/compiler/cyclecount/*.cpp ${PROJECT_SOURCE_DIR}/compiler/cyclecount/*.hpp
  ${PROJECT_SOURCE_DIR}/vertices/include/*.h ${PROJECT_SOURCE_DIR}/vertices/include/*.hpp
  ${PROJECT_SOURCE_DIR}/vertices/include/ipu_*)
list(REMOVE_DUPLICATES ASPEN_CODELET_COMPILER_INPUTS)
list(SORT ASPEN_CODELET_COMPILER_INPUTS)

# aspen_add_codelet_compiler_id(<target>)
#
# Adds to <target> (libpoplar) a generated source defining
# aspen::codelets::kCodeletCompilerSourceHash (compiler/src/codelets/CodeletCache.hpp), the
# hash of ASPEN_CODELET_COMPILER_INPUTS, which the codelet cache key uses.
function(aspen_add_codelet_compiler_id target)
  set(_list ${CMAKE_CURRENT_BINARY_DIR}/codelet_compiler_inputs.txt)
  string(REPLACE ";" "\n" _lines "${ASPEN_CODELET_COMPILER_INPUTS}")
  file(CONFIGURE OUTPUT ${_list} CONTENT "${_lines}\n")
  set(_cpp ${CMAKE_CURRENT_BINARY_DIR}/CodeletCompilerId.cpp)
  add_custom_command(
    OUTPUT ${_cpp}
    COMMAND ${CMAKE_COMMAND} -DINPUTS=${_list} -DROOT=${PROJECT_SOURCE_DIR} -DOUTPUT=${_cpp}
            -P ${_aspen_codelets_cmake_dir}/AspenCodeletCompilerId.cmake
    DEPENDS ${ASPEN_CODELET_COMPILER_INPUTS} ${_list}
            ${_aspen_codelets_cmake_dir}/AspenCodeletCompilerId.cmake
    COMMENT "Hashing the codelet compiler's sources"
    VERBATIM)
  # The rule lives in the calling directory, <target> may live in another: a custom target
  # carries the dependency across.
  add_custom_target(${target}_codelet_compiler_id DEPENDS ${_cpp})
  add_dependencies(${target} ${target}_codelet_compiler_id)
  target_sources(${target} PRIVATE ${_cpp})
endfunction()
