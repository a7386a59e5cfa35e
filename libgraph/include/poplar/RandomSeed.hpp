// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_RANDOMSEED_HPP
#define POPLAR_RANDOMSEED_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

namespace poplar {

/// The hardware random seeds of every worker of every tile, read at this point
/// of `prog`: an UNSIGNED_INT tensor of shape {tiles, workers, 4}. The simulated
/// IPU's seeds are the values last set by `setHwSeeds` (zero at load).
Tensor getHwSeeds(Graph &graph, program::Sequence &prog, const DebugContext &debugContext = {});

/// Sets the hardware random seeds from `hwSeeds` (shape {tiles, workers, 4}, as
/// `getHwSeeds` returns) at this point of `prog`.
void setHwSeeds(Graph &graph, const Tensor &hwSeeds, program::Sequence &prog,
                const DebugContext &debugContext = {});

} // namespace poplar

#endif
