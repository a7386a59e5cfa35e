// Copyright (c) Aspen contributors.
// poplin::addCodelets: loads poplin.gp, found beside libpoplin.so (or at $ASPEN_POPLIN_GP).
#include <poplin/codelets.hpp>

#include "common/OpsCommon.hpp"

namespace poplin {
namespace {
// Lives in libpoplin.so, so its address finds the library (and poplin.gp beside it).
const char libraryAnchor = 0;
} // namespace

void addCodelets(poplar::Graph &graph) {
  aspen::ops::addLibraryCodelets(graph, &libraryAnchor, "poplin.gp", "ASPEN_POPLIN_GP",
                                 "poplin::MatMulBlock<float,float>", "poplin::addCodelets");
}

} // namespace poplin

// Marks this libpoplin.so as Aspen's build: libpoplar refuses a process that also loads another
// build's PopLibs libraries (PopLibs built from source), util/PoplibsBuilds.hpp.
extern "C" __attribute__((visibility("default"))) const char aspen_library_poplin[] = "Aspen";
