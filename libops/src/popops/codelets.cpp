// Copyright (c) Aspen contributors.
// popops::addCodelets: loads popops.gp, found beside libpopops.so (or at $ASPEN_POPOPS_GP).
#include "popops/codelets.hpp"

#include "common/OpsCommon.hpp"

namespace popops {
namespace {
// Lives in libpopops.so, so its address finds the library (and popops.gp beside it).
const char libraryAnchor = 0;
} // namespace

void addCodelets(poplar::Graph &graph) {
  aspen::ops::addLibraryCodelets(graph, &libraryAnchor, "popops.gp", "ASPEN_POPOPS_GP", "popops::Fill<float>",
                                 "popops::addCodelets");
}

} // namespace popops

// Marks this libpopops.so as Aspen's build: libpoplar refuses a process that also loads another
// build's PopLibs libraries (PopLibs built from source), util/PoplibsBuilds.hpp.
extern "C" __attribute__((visibility("default"))) const char aspen_library_popops[] = "Aspen";
