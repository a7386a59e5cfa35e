// Copyright (c) Aspen contributors.
#include <popnn/codelets.hpp>

#include "nncommon/LibraryCodelets.hpp"

namespace popnn {
namespace {
// Lives in libpopnn.so, so its address finds the library (and popnn.gp beside it).
const char libraryAnchor = 0;
} // namespace

void addCodelets(poplar::Graph &graph) {
  aspen::nn::addLibraryCodelets(graph, &libraryAnchor, "popnn.gp", "popnn::NonLinearity<float>");
}

} // namespace popnn
