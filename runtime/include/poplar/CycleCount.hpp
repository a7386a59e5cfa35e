// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_CYCLECOUNT_HPP
#define POPLAR_CYCLECOUNT_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/SyncType.hpp>
#include <poplar/Tensor.hpp>

#include <vector>

namespace poplar {

/// Makes `prog` count its own cycles: afterwards `prog` runs a sync of
/// `syncType`, the old `prog`, and a second sync, and the returned
/// UNSIGNED_INT[2] tensor on `tile` holds the simulated cycles between the
/// first sync and the end of the second (low word first). Read it with a host
/// read handle into a `uint64_t`.
/// Example: `Tensor c = cycleCount(graph, seq, 0, SyncType::INTERNAL, "count");`
Tensor cycleCount(Graph &graph, program::Sequence &prog, unsigned tile, SyncType syncType,
                  const DebugContext &debugContext = {});
/// Legacy form: an internal sync.
Tensor cycleCount(Graph &graph, program::Sequence &prog, unsigned tile,
                  const DebugContext &debugContext = {});

/// Appends to `prog` a sync of `syncType` and a copy of the simulated cycle
/// counter (cycles since the engine was loaded) into a new UNSIGNED_INT[2]
/// tensor on `tile` (low word first), which it returns.
Tensor cycleStamp(Graph &graph, program::Sequence &prog, unsigned tile, SyncType syncType,
                  const DebugContext &debugContext = {});
/// Legacy form: an internal sync.
Tensor cycleStamp(Graph &graph, program::Sequence &prog, unsigned tile,
                  const DebugContext &debugContext = {});
/// One stamp per tile in `tiles`, all taken at the same point of `prog`.
std::vector<Tensor> cycleStamp(Graph &graph, program::Sequence &prog, const std::vector<unsigned> &tiles,
                               SyncType syncType, const DebugContext &debugContext = {});

} // namespace poplar

#endif
