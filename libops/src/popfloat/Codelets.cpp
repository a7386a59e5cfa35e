// Copyright (c) Aspen contributors.
// popfloat::experimental::addCodelets: popfloat has no device operations in Aspen yet.
#include <popfloat/experimental/codelets.hpp>

namespace popfloat {
namespace experimental {

void addCodelets(poplar::Graph &graph) {
  (void)graph.getTarget(); // a graph without a target is an error here as in the other libraries
}

} // namespace experimental
} // namespace popfloat
