// Copyright (c) Aspen contributors.
// Pass 5: addresses in tile memory.
#pragma once

#include "passes/PassData.hpp"

namespace aspen::compiler {

/// Places every memory object in its tile's memory, tiles in parallel.
/// Each tile starts with `TargetData::perTileOverheadBytes` reserved (stack and
/// control code); always-live objects follow, packed in category order with
/// their alignment; not-always-live variable pieces go above them, placed
/// first-fit in order of their first live step, reusing the space of pieces
/// whose hulls have ended (greedy interval colouring).
///
/// Throws `graph_memory_allocation_error` when a tile needs more than
/// `bytesPerTile` bytes (Poplar's message form, followed by the largest
/// variables and vertex types on the tile, always-live versus peak bytes and
/// the program step at the peak) unless `allowOutOfMemory`, in which case the
/// result says so and carries the same message. CPU targets have no limit.
/// `overheadBytes` replaces the target's `perTileOverheadBytes` unless it is kTargetOverhead
/// (the stack per tile from target.workerStackSizeInBytes and target.supervisorStackSizeInBytes).
inline constexpr std::uint64_t kTargetOverhead = ~std::uint64_t(0);
AllocationResult allocateMemory(const ir::GraphData &graph, const LoweredProgram &lowered,
                                const ExchangePlan &plan, const LivenessResult &liveness,
                                bool allowOutOfMemory, std::uint64_t overheadBytes = kTargetOverhead);

} // namespace aspen::compiler
