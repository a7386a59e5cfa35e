// Copyright (c) Aspen contributors.
// Control-register settings: accepted and ignored (see CSRFunctions.hpp).
#include "poplar/CSRFunctions.hpp"

namespace poplar {

void setFloatingPointBehaviour(Graph &, program::Sequence &, const FloatingPointBehaviour &,
                               const DebugContext &) {}

void setStochasticRounding(Graph &, program::Sequence &, bool, const DebugContext &) {}

} // namespace poplar
