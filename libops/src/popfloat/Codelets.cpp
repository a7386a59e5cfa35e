// Copyright (c) Aspen contributors.
// popfloat::experimental::addCodelets: loads popfloat.gp, found beside libpopfloat.so (or at
// $ASPEN_POPFLOAT_GP).
#include <popfloat/experimental/codelets.hpp>

#include "common/OpsCommon.hpp"

namespace popfloat {
namespace experimental {
namespace {
// Lives in libpopfloat.so, so its address finds the library (and popfloat.gp beside it).
const char libraryAnchor = 0;
} // namespace

void addCodelets(poplar::Graph &graph) {
  aspen::ops::addLibraryCodelets(graph, &libraryAnchor, "popfloat.gp", "ASPEN_POPFLOAT_GP",
                                 "popfloat::experimental::CastToGfloat<float,float>",
                                 "popfloat::experimental::addCodelets");
}

} // namespace experimental
} // namespace popfloat

// Marks this libpopfloat.so as Aspen's build: libpoplar refuses a process that also loads another
// build's PopLibs libraries (PopLibs built from source), util/PoplibsBuilds.hpp.
extern "C" __attribute__((visibility("default"))) const char aspen_library_popfloat[] = "Aspen";
