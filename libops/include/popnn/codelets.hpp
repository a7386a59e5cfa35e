// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPNN_CODELETS_HPP
#define POPNN_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace popnn {

/// Adds popnn's vertices (the `popnn.gp` vertex library beside libpopnn.so, or
/// the file named by `ASPEN_POPNN_GP`) to `graph`. Call once before the first
/// popnn operation; further calls do nothing.
///
/// Example: `popnn::addCodelets(graph);`
void addCodelets(poplar::Graph &graph);

} // namespace popnn

#endif
