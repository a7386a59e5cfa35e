# Assembles the SDK tree in ${ASPEN_SDK_DIR} (build/sdk) the way Poplar's SDK is laid out,
# and the install rules and CMake package that mirror it:
#
#   sdk/bin/        popc (placed there by CMAKE_RUNTIME_OUTPUT_DIRECTORY)
#   sdk/lib/        libpoplar.so, libpopops.so, ... (CMAKE_LIBRARY_OUTPUT_DIRECTORY) and *.gp
#                   vertex libraries; lib/cmake/Aspen/ holds the build-tree CMake package
#   sdk/include/    copies of the public headers of every module (re-copied on change)
#   sdk/enable.sh   puts the tree on PATH, CPATH, LIBRARY_PATH, LD_LIBRARY_PATH, CMAKE_PREFIX_PATH
#
# Exported targets (find_package(Aspen) -> Aspen::<name>): every target named poplar, popops,
# poplin, popnn, poputil, poprand or popc that exists when this file is included (it is included
# after every library module), plus any target a module adds with
#   set_property(GLOBAL APPEND PROPERTY ASPEN_EXPORTED_TARGETS <target>)
# An exported library must keep its implementation dependencies PRIVATE (the package config
# finds no dependency) and give its public include directory as
#   $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>.

include(CMakePackageConfigHelpers)

# --- include/: public headers of every module ---------------------------------------------
# Headers of vertices/include are what codelets see (compiled by popc with __POPC__ defined);
# the rest are host headers. Both go to one include/ tree, as in Poplar's SDK.
set(ASPEN_HOST_HEADER_DIRS
  ${PROJECT_SOURCE_DIR}/libgraph/include
  ${PROJECT_SOURCE_DIR}/compiler/include
  ${PROJECT_SOURCE_DIR}/runtime/include
  ${PROJECT_SOURCE_DIR}/libops/include)
set(ASPEN_CODELET_HEADER_DIRS ${PROJECT_SOURCE_DIR}/vertices/include)

# Relative header paths, for the header test (test/sdk.cmake).
set(ASPEN_PUBLIC_HOST_HEADERS "")
set(ASPEN_PUBLIC_CODELET_HEADERS "")
set(_aspen_header_sources "")
set(_aspen_header_manifest "")
foreach(_dir IN LISTS ASPEN_HOST_HEADER_DIRS ASPEN_CODELET_HEADER_DIRS)
  if(NOT IS_DIRECTORY ${_dir})
    continue()
  endif()
  # CONFIGURE_DEPENDS: a new or removed header re-runs the configure step.
  file(GLOB_RECURSE _headers CONFIGURE_DEPENDS RELATIVE ${_dir}
    ${_dir}/*.h ${_dir}/*.hpp ${_dir}/*.hh ${_dir}/*.inc ${_dir}/*.inl ${_dir}/*.def)
  list(SORT _headers)
  foreach(_rel IN LISTS _headers)
    if(_rel IN_LIST ASPEN_PUBLIC_HOST_HEADERS OR _rel IN_LIST ASPEN_PUBLIC_CODELET_HEADERS)
      message(FATAL_ERROR "Public header ${_rel} exists in two modules (second: ${_dir}); "
        "the SDK include/ tree can hold only one.")
    endif()
    if(_dir IN_LIST ASPEN_CODELET_HEADER_DIRS)
      list(APPEND ASPEN_PUBLIC_CODELET_HEADERS ${_rel})
    else()
      list(APPEND ASPEN_PUBLIC_HOST_HEADERS ${_rel})
    endif()
    list(APPEND _aspen_header_sources ${_dir}/${_rel})
    string(APPEND _aspen_header_manifest "${_dir}/${_rel}\n${_rel}\n")
  endforeach()
endforeach()

# One build step copies every header whose content changed and removes copies of headers that
# no longer exist; unchanged copies keep their timestamps.
set(_aspen_manifest_file ${CMAKE_BINARY_DIR}/CMakeFiles/aspen_sdk_headers.txt)
file(CONFIGURE OUTPUT ${_aspen_manifest_file} CONTENT "${_aspen_header_manifest}")
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/CMakeFiles/aspen_sdk_headers.stamp
  COMMAND ${CMAKE_COMMAND} -DMANIFEST=${_aspen_manifest_file}
          -DDEST=${ASPEN_SDK_DIR}/include -P ${CMAKE_CURRENT_LIST_DIR}/AspenCopyHeaders.cmake
  COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/CMakeFiles/aspen_sdk_headers.stamp
  DEPENDS ${_aspen_header_sources} ${_aspen_manifest_file}
          ${CMAKE_CURRENT_LIST_DIR}/AspenCopyHeaders.cmake
  COMMENT "Copying public headers to ${ASPEN_SDK_DIR}/include"
  VERBATIM)
add_custom_target(aspen_sdk_headers ALL
  DEPENDS ${CMAKE_BINARY_DIR}/CMakeFiles/aspen_sdk_headers.stamp)

# --- enable.sh ----------------------------------------------------------------------------
configure_file(${CMAKE_CURRENT_LIST_DIR}/enable.sh.in ${ASPEN_SDK_DIR}/enable.sh
  @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)

# --- exported targets ---------------------------------------------------------------------
set(ASPEN_EXPORTED_TARGETS "")
foreach(_target IN ITEMS poplar popops poplin popnn poputil poprand popc)
  if(TARGET ${_target})
    list(APPEND ASPEN_EXPORTED_TARGETS ${_target})
  endif()
endforeach()
get_property(_aspen_extra_targets GLOBAL PROPERTY ASPEN_EXPORTED_TARGETS)
foreach(_target IN LISTS _aspen_extra_targets)
  if(NOT TARGET ${_target})
    message(FATAL_ERROR "ASPEN_EXPORTED_TARGETS names ${_target}, which is not a target")
  endif()
  list(APPEND ASPEN_EXPORTED_TARGETS ${_target})
endforeach()
list(REMOVE_DUPLICATES ASPEN_EXPORTED_TARGETS)

foreach(_target IN LISTS ASPEN_EXPORTED_TARGETS)
  get_target_property(_type ${_target} TYPE)
  if(_type STREQUAL "EXECUTABLE")
    # Installed tools find the libraries beside them in ../lib.
    set_target_properties(${_target} PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
  else()
    set_target_properties(${_target} PROPERTIES INSTALL_RPATH "$ORIGIN")
  endif()
  # Keep non-system link directories (e.g. an LLVM outside /usr/lib) in the installed RPATH.
  set_target_properties(${_target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

  # An absolute source- or build-tree include directory cannot be exported: it is made
  # build-tree only. Installed clients find every public header in <prefix>/include.
  get_target_property(_includes ${_target} INTERFACE_INCLUDE_DIRECTORIES)
  if(_includes AND NOT _type STREQUAL "EXECUTABLE")
    set(_rewritten "")
    foreach(_inc IN LISTS _includes)
      string(FIND "${_inc}" "${PROJECT_SOURCE_DIR}/" _in_source)
      string(FIND "${_inc}" "${PROJECT_BINARY_DIR}/" _in_build)
      if(_in_source EQUAL 0 OR _in_build EQUAL 0)
        list(APPEND _rewritten "$<BUILD_INTERFACE:${_inc}>")
      else()
        list(APPEND _rewritten "${_inc}")
      endif()
    endforeach()
    if(NOT _includes MATCHES "INSTALL_INTERFACE")
      list(APPEND _rewritten "$<INSTALL_INTERFACE:include>")
    endif()
    set_property(TARGET ${_target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_rewritten}")
  endif()
endforeach()

# --- install rules: the same tree under CMAKE_INSTALL_PREFIX -------------------------------
install(TARGETS ${ASPEN_EXPORTED_TARGETS} EXPORT AspenTargets
  LIBRARY DESTINATION lib
  ARCHIVE DESTINATION lib
  RUNTIME DESTINATION bin)
install(DIRECTORY ${ASPEN_SDK_DIR}/include/ DESTINATION include)
# Vertex libraries (*.gp) are produced into sdk/lib at build time.
install(DIRECTORY ${ASPEN_SDK_DIR}/lib/ DESTINATION lib
  FILES_MATCHING PATTERN "*.gp" PATTERN "cmake" EXCLUDE)
install(PROGRAMS ${ASPEN_SDK_DIR}/enable.sh DESTINATION .)

# --- CMake package: find_package(Aspen [COMPONENTS popops ...]) ----------------------------
set(_aspen_package_dir ${ASPEN_SDK_DIR}/lib/cmake/Aspen)
configure_file(${CMAKE_CURRENT_LIST_DIR}/AspenConfig.cmake.in
  ${_aspen_package_dir}/AspenConfig.cmake @ONLY)
write_basic_package_version_file(${_aspen_package_dir}/AspenConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
# Build tree: targets point at build/sdk/lib and the source include directories.
export(EXPORT AspenTargets NAMESPACE Aspen:: FILE ${_aspen_package_dir}/AspenTargets.cmake)
# Installed prefix: targets point at <prefix>/lib and <prefix>/include.
install(EXPORT AspenTargets NAMESPACE Aspen:: DESTINATION lib/cmake/Aspen)
install(FILES ${_aspen_package_dir}/AspenConfig.cmake ${_aspen_package_dir}/AspenConfigVersion.cmake
  DESTINATION lib/cmake/Aspen)

# --- CMake packages `poplar` and `poplibs`, as Poplar SDK users find them ------------------
# find_package(poplar) gives the targets poplar and popc_bin; find_package(poplibs) also the
# plain PopLibs names popops, poplin, popnn, poputil, poprand over Aspen::* (the template says why).
set(ASPEN_POPLAR_API_VERSION 3.3.0)
foreach(ASPEN_POPLAR_PACKAGE IN ITEMS poplar poplibs)
  set(_dir ${ASPEN_SDK_DIR}/lib/cmake/${ASPEN_POPLAR_PACKAGE})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/poplarConfig.cmake.in ${_dir}/${ASPEN_POPLAR_PACKAGE}Config.cmake @ONLY)
  write_basic_package_version_file(${_dir}/${ASPEN_POPLAR_PACKAGE}ConfigVersion.cmake
    VERSION ${ASPEN_POPLAR_API_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${_dir}/${ASPEN_POPLAR_PACKAGE}Config.cmake ${_dir}/${ASPEN_POPLAR_PACKAGE}ConfigVersion.cmake
    DESTINATION lib/cmake/${ASPEN_POPLAR_PACKAGE})
endforeach()

# --- CMake packages PopLibs' own CMake finds: pva, libpvti, GCCS, poplar_test ----------------
# Each gives imported targets PopLibs links and does not define (pva; libpvti; gccs and
# popsolver; poplar_test), over Aspen::pva, Aspen::pvti, Aspen::gccs, Aspen::poplar_test. GCCS also sets GCCS_CMAKE_DIR, the
# directory of the CMake helpers PopLibs includes from it (cmake/gccs/).
# (docs/poplibs-from-source.md)
foreach(_pkg IN ITEMS "pva|pva|pva" "libpvti|pvti|libpvti" "GCCS|gccs|gccs|popsolver"
                      "poplar_test|poplar_test|poplar_test")
  string(REPLACE "|" ";" _fields "${_pkg}")
  list(GET _fields 0 ASPEN_SUPPORT_PACKAGE)
  list(GET _fields 1 ASPEN_SUPPORT_LIBRARY)
  list(SUBLIST _fields 2 -1 ASPEN_SUPPORT_TARGETS)
  string(REPLACE ";" " " ASPEN_SUPPORT_TARGETS "${ASPEN_SUPPORT_TARGETS}")
  if(NOT TARGET ${ASPEN_SUPPORT_LIBRARY})
    continue()
  endif()
  set(ASPEN_SUPPORT_EXTRA "")
  set(_dir ${ASPEN_SDK_DIR}/lib/cmake/${ASPEN_SUPPORT_PACKAGE})
  if(ASPEN_SUPPORT_PACKAGE STREQUAL "GCCS")
    set(ASPEN_SUPPORT_EXTRA "set(GCCS_CMAKE_DIR \"\${CMAKE_CURRENT_LIST_DIR}\")")
    file(GLOB _gccs_cmake ${CMAKE_CURRENT_LIST_DIR}/gccs/*.cmake)
    file(COPY ${_gccs_cmake} DESTINATION ${_dir})
    install(FILES ${_gccs_cmake} DESTINATION lib/cmake/${ASPEN_SUPPORT_PACKAGE})
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/packages/supportConfig.cmake.in
    ${_dir}/${ASPEN_SUPPORT_PACKAGE}Config.cmake @ONLY)
  write_basic_package_version_file(${_dir}/${ASPEN_SUPPORT_PACKAGE}ConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY AnyNewerVersion)
  install(FILES ${_dir}/${ASPEN_SUPPORT_PACKAGE}Config.cmake ${_dir}/${ASPEN_SUPPORT_PACKAGE}ConfigVersion.cmake
    DESTINATION lib/cmake/${ASPEN_SUPPORT_PACKAGE})
endforeach()

message(STATUS "Aspen SDK tree: ${ASPEN_SDK_DIR} (exported: ${ASPEN_EXPORTED_TARGETS})")
