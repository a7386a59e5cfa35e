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
/// IPU's seeds are the states of the generators the random builtins draw from
/// (docs/codelets.md, "IPU builtins backed by the runtime"): each worker's
/// 128-bit state as 4 words, advanced by every sample; at load, default states
/// (never zero), until `setHwSeeds` sets them.
Tensor getHwSeeds(Graph &graph, program::Sequence &prog, const DebugContext &debugContext = {});

/// Sets the hardware random seeds from `hwSeeds` (shape {tiles, workers, 4}, as
/// `getHwSeeds` returns) at this point of `prog`.
void setHwSeeds(Graph &graph, const Tensor &hwSeeds, program::Sequence &prog,
                const DebugContext &debugContext = {});

} // namespace poplar

#endif
