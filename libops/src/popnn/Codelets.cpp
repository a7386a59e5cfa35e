// Copyright (c) Aspen contributors.
// popnn::addCodelets: loads popnn.gp, found beside libpopnn.so (or at $ASPEN_POPNN_GP).
#include <popnn/codelets.hpp>

#include "common/OpsCommon.hpp"

namespace popnn {
namespace {
// Lives in libpopnn.so, so its address finds the library (and popnn.gp beside it).
const char libraryAnchor = 0;
} // namespace

void addCodelets(poplar::Graph &graph) {
  aspen::ops::addLibraryCodelets(graph, &libraryAnchor, "popnn.gp", "ASPEN_POPNN_GP",
                                 "popnn::NonLinearity<float>", "popnn::addCodelets");
}

} // namespace popnn

// Marks this libpopnn.so as Aspen's build: libpoplar refuses a process that also loads another
// build's PopLibs libraries (PopLibs built from source), util/PoplibsBuilds.hpp.
extern "C" __attribute__((visibility("default"))) const char aspen_library_popnn[] = "Aspen";
