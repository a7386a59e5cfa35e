// Copyright (c) Aspen contributors.
// Pass 7: the executable.
#pragma once

#include "passes/PassData.hpp"

#include <memory>

namespace aspen::compiler {

/// Resolves every symbolic location to a tile address and fills the
/// executable: steps with their cycles, compute steps (exchange-in grouped by
/// destination tile with contiguous runs merged, vertex instances per tile,
/// exchange-out), copy plans, host transfers, memory blobs (initial values,
/// vertex objects, descriptors, state arrays; adjacent blobs merged),
/// relocations, the vertex types used and the bytes of every vertex library
/// (.gp) they come from, peak bytes per tile and the profile JSON
/// (docs/profile-format.md). Throws `graph_object_load_error` when a vertex
/// library file cannot be read.
std::unique_ptr<exe::ExecutableData> emitExecutable(const ir::GraphData &graph, const LoweredProgram &lowered,
                                                    const ExchangePlan &plan, const LivenessResult &liveness,
                                                    const AllocationResult &allocation,
                                                    const CycleEstimates &cycles);

/// Groups runs by destination tile (ascending; order kept within a tile) and
/// merges runs that continue each other on both sides. Exposed for tests.
exe::CopyPlan makeCopyPlan(std::vector<exe::CopyRun> runs);

} // namespace aspen::compiler
