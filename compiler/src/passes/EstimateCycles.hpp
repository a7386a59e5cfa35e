// Copyright (c) Aspen contributors.
// Pass 6: the cost model (docs/cost-model.md).
#pragma once

#include "passes/PassData.hpp"

namespace aspen::compiler {

/// Default thread cycles of a vertex with no estimate: kDefaultVertexCycles +
/// ceil(edge bytes / 4) (docs/cost-model.md).
inline constexpr std::uint64_t kDefaultVertexCycles = 20;

/// Estimates cycles for every step:
///  - a vertex: `setPerfEstimate`, else the estimator registered for its type
///    (called with a VertexIntrospector), else the default above. Worker
///    vertices are in thread cycles, MultiVertex/Supervisor vertices in machine
///    cycles;
///  - a tile's compute: worker vertices packed greedily onto the least-loaded
///    of `numWorkerContexts` workers, max worker load x numWorkerContexts, plus
///    the MultiVertex vertices one after another; a compute set's compute
///    cycles are the max over tiles;
///  - an exchange (compute-set exchange, Copy): per tile ceil(max(bytes sent,
///    bytes received) / exchangeBytesPerCycle) + ceil(on-tile bytes /
///    memcpyBytesPerCycle) + exchangeSourceCycles per tile it receives from, max
///    over tiles, + exchangeOverheadCycles + sync;
///  - an Execute step: exchange-in + compute + sync + exchange-out;
///  - host transfers priced like an exchange with the host as the far end;
///  - remote-buffer copies priced with Streaming Memory's bandwidth and latency
///    (streamingCycles); a staged load that overlaps an Execute step costs only
///    what that step's compute does not hide.
CycleEstimates estimateCycles(const ir::GraphData &graph, const LoweredProgram &lowered,
                              const ExchangePlan &plan);

/// Cycles of a remote-buffer copy of `transfer` (docs/cost-model.md, "Streaming Memory").
std::uint64_t streamingCycles(const ir::TargetData &target, const std::vector<MemObject> &objects,
                              const PlannedTransfer &transfer);

} // namespace aspen::compiler
