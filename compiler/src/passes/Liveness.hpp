// Copyright (c) Aspen contributors.
// Pass 4: which variables hold a value at each step.
#pragma once

#include "passes/PassData.hpp"

namespace aspen::compiler {

/// Backward liveness per variable over the step graph (a Boost.Graph of steps:
/// fall-through, jumps, loop edges, calls into function bodies and returns to
/// every call site), as Poplar does it: a variable dies only at a step that
/// writes all of its elements (one compute set, one copy, one stream copy) or
/// marks all of them undefined (WriteUndef); a partial write keeps it live.
///
/// Always-live: constants, variables with initial values, variables behind host
/// handles, and every variable live at the entry of some program (its value
/// crosses program runs). Every other touched variable is live over a hull of
/// steps [liveBegin, liveEnd] in step-list order; two variables whose hulls do
/// not overlap are never live at the same time and may share memory.
LivenessResult analyseLiveness(const ir::GraphData &graph, const LoweredProgram &lowered,
                               const ExchangePlan &plan);

} // namespace aspen::compiler
