// Copyright (c) Aspen contributors. PopLibs-compatible public API (popfloat, PopLibs 3.x).
#ifndef POPFLOAT_EXPERIMENTAL_CODELETS_HPP
#define POPFLOAT_EXPERIMENTAL_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace popfloat {
namespace experimental {

/// Adds popfloat's vertices (the gfloat casts of CastToGfloat.hpp) to `graph`.
void addCodelets(poplar::Graph &graph);

} // namespace experimental
} // namespace popfloat

#endif
