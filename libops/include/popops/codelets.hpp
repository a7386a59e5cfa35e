// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_CODELETS_HPP
#define POPOPS_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace popops {

/// Adds popops' vertices (the `popops.gp` vertex library beside libpopops.so, or
/// the file named by `ASPEN_POPOPS_GP`) to `graph`. Call once before the first
/// popops operation; further calls do nothing.
///
/// Example: `poplar::Graph graph(device.getTarget()); popops::addCodelets(graph);`
void addCodelets(poplar::Graph &graph);

} // namespace popops

#endif
