// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPLIN_CODELETS_HPP
#define POPLIN_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace poplin {

/// Adds poplin's vertices (the `poplin.gp` vertex library beside libpoplin.so, or
/// the file named by `ASPEN_POPLIN_GP`) to `graph`. Call once before the first
/// poplin operation; further calls do nothing.
///
/// Example: `poplin::addCodelets(graph);`
void addCodelets(poplar::Graph &graph);

} // namespace poplin

#endif
