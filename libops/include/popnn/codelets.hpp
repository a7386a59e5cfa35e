// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPNN_CODELETS_HPP
#define POPNN_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace popnn {

/// Makes popnn's vertex types available to `graph` (loads `popnn.gp`, which
/// lies beside `libpopnn.so`). Call it once before the first popnn
/// operation; further calls do nothing.
///
/// Example: `popnn::addCodelets(graph);`
void addCodelets(poplar::Graph &graph);

} // namespace popnn

#endif
