// Copyright (c) Aspen contributors.
// Control-register settings: accepted and ignored (see CSRFunctions.hpp).
#include "poplar/CSRFunctions.hpp"

#include "poplar/exceptions.hpp"

namespace poplar {

void setFloatingPointBehaviour(Graph &, program::Sequence &, const FloatingPointBehaviour &,
                               const DebugContext &) {}

Tensor getAndModifyFloatingPointBehaviour(Graph &graph, program::Sequence &, const FloatingPointBehaviour &,
                                          const FloatingPointBehaviour &, const DebugContext &debugContext) {
  // The saved state: the five flags of the default behaviour, one bit each
  // (inv, div0, oflo, esr, nanoo from bit 0).
  const unsigned state = 0x1f;
  Tensor saved = graph.addVariable(UNSIGNED_INT, {}, {debugContext, "floatingPointBehaviour"});
  graph.setTileMapping(saved, 0);
  graph.setInitialValue(saved, state);
  return saved;
}

void setFloatingPointBehaviour(Graph &, program::Sequence &, const Tensor &behaviour, const DebugContext &) {
  if (!behaviour.valid() || behaviour.elementType() != UNSIGNED_INT || behaviour.numElements() != 1)
    throw poplar_error("setFloatingPointBehaviour: tensor " +
                       (behaviour.valid() ? behaviour.shortString() : std::string("(invalid)")) +
                       " is not the scalar unsigned int that getAndModifyFloatingPointBehaviour returns");
}

void setStochasticRounding(Graph &, program::Sequence &, bool, const DebugContext &) {}

} // namespace poplar
