// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPRAND_CODELETS_HPP
#define POPRAND_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace poprand {

/// Adds poprand's vertices (the `poprand.gp` vertex library beside libpoprand.so, or
/// the file named by `ASPEN_POPRAND_GP`) to `graph`. Call once before the first
/// poprand operation; further calls do nothing.
///
/// Example: `poprand::addCodelets(graph);`
void addCodelets(poplar::Graph &graph);

} // namespace poprand

#endif
