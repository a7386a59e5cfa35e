// Copyright (c) Aspen contributors.
// One process, one build of the PopLibs libraries (docs/poplibs-from-source.md, "Which PopLibs a
// program uses"). Aspen's libpopops, libpoplin, ... and a PopLibs built from source against
// Aspen's libpoplar have the same library and vertex-library names; loading parts of both in
// one process, or one build's <lib>.gp with the other's lib<lib>.so, is refused here.
#pragma once

#include <string>
#include <vector>

namespace aspen::util {

/// A loaded shared object of the PopLibs family (libpopops.so, libpoplin.so, ...,
/// libpoplibs_support.so, libpoplibs_test.so).
struct PoplibsLibrary {
  std::string name;   // "popops"
  std::string path;   // as the dynamic loader names it
  bool aspens;        // Aspen's own build (it defines aspen_library_<name>)
  std::string soname; // its DT_SONAME ("libpopops.so.0" for Aspen's, "libpopops.so" for PopLibs')
};

/// The PopLibs-family libraries loaded now (rescanned only when the set of loaded objects changed).
std::vector<PoplibsLibrary> loadedPoplibsLibraries();

/// Throws poplar::poplar_error, naming `operation` and one library of each build, when Aspen's
/// PopLibs libraries and another build's (PopLibs built from source) are both loaded; also when a
/// loaded program or library was linked against another build's lib<lib>.so (its DT_NEEDED names
/// that build's SONAME) but the dynamic loader gave it Aspen's.
void checkOnePoplibsBuild(const std::string &operation);

/// For a vertex library named <lib>.gp (popops.gp, poplin.gp, ...) while lib<lib>.so is loaded:
/// throws poplar::poplar_error unless the file is the one beside that library, or the one the
/// library's own override names ($ASPEN_<LIB>_GP for Aspen's, $IPU_<LIB>_GP for PopLibs').
void checkVertexLibraryBuild(const std::string &gpPath, const std::string &operation);

} // namespace aspen::util
