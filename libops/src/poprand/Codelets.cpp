// Copyright (c) Aspen contributors.
// poprand::addCodelets: loads poprand.gp, found beside libpoprand.so (or at $ASPEN_POPRAND_GP).
#include <poprand/codelets.hpp>

#include "common/OpsCommon.hpp"

namespace poprand {
namespace {
// Lives in libpoprand.so, so its address finds the library (and poprand.gp beside it).
const char libraryAnchor = 0;
} // namespace

void addCodelets(poplar::Graph &graph) {
  aspen::ops::addLibraryCodelets(graph, &libraryAnchor, "poprand.gp", "ASPEN_POPRAND_GP",
                                 "poprand::RandomGen<float>", "poprand::addCodelets");
}

} // namespace poprand

// Marks this libpoprand.so as Aspen's build: libpoplar refuses a process that also loads another
// build's PopLibs libraries (PopLibs built from source), util/PoplibsBuilds.hpp.
extern "C" __attribute__((visibility("default"))) const char aspen_library_poprand[] = "Aspen";
