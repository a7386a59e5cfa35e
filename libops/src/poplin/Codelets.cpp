// Copyright (c) Aspen contributors.
#include <poplin/codelets.hpp>

#include "nncommon/LibraryCodelets.hpp"

namespace poplin {
namespace {
// Lives in libpoplin.so, so its address finds the library (and poplin.gp beside it).
const char libraryAnchor = 0;
} // namespace

void addCodelets(poplar::Graph &graph) {
  aspen::nn::addLibraryCodelets(graph, &libraryAnchor, "poplin.gp", "poplin::MatMulBlock<float,float>");
}

} // namespace poplin
