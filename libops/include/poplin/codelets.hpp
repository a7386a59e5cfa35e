// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPLIN_CODELETS_HPP
#define POPLIN_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace poplin {

/// Makes poplin's vertex types available to `graph` (loads `poplin.gp`, which
/// lies beside `libpoplin.so`). Call it once before the first poplin
/// operation; further calls do nothing.
///
/// Example: `poplin::addCodelets(graph);`
void addCodelets(poplar::Graph &graph);

} // namespace poplin

#endif
