// Copyright (c) Aspen contributors. PopLibs-compatible public API (popfloat, PopLibs 3.x).
#ifndef POPFLOAT_EXPERIMENTAL_CODELETS_HPP
#define POPFLOAT_EXPERIMENTAL_CODELETS_HPP

#include <poplar/Graph.hpp>

namespace popfloat {
namespace experimental {

/// Adds popfloat's vertices to `graph`. Aspen's popfloat has no device operations yet (the
/// gfloat casts of CastToGfloat.hpp are not provided; docs/poplibs-coverage.md), so this adds
/// nothing; programs that call it with the other libraries' addCodelets build and run.
void addCodelets(poplar::Graph &graph);

} // namespace experimental
} // namespace popfloat

#endif
