// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPRAND_CODELETS_HPP
#define POPRAND_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace poprand {

/// Makes poprand's vertex types available to `graph` (loads `poprand.gp`,
/// which lies beside `libpoprand.so`). Call it once before the first
/// poprand operation; further calls do nothing.
///
/// Example: `poprand::addCodelets(graph);`
void addCodelets(poplar::Graph &graph);

} // namespace poprand

#endif
