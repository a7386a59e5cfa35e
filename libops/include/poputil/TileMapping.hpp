// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPUTIL_TILEMAPPING_HPP
#define POPUTIL_TILEMAPPING_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <cstddef>
#include <vector>

namespace poputil {

/// A mapping that spreads `shape`'s flattened elements over the graph's tiles in
/// order (low indices on low tiles). Each tile gets a multiple of `grainSize`
/// elements and, where possible, at least `minElementsPerTile`. With `offset` the
/// first tile used is `offset`; with `ascendingOrder == false` tiles are used from
/// the highest down.
///
/// Example: `auto m = calcLinearTileMapping(graph, {1000}, 32, 2);`
std::vector<std::vector<poplar::Interval>>
calcLinearTileMapping(const poplar::Graph &graph, std::vector<std::size_t> shape, unsigned minElementsPerTile,
                      unsigned grainSize, unsigned offset = 0, bool ascendingOrder = true);

/// The linear mapping PopLibs uses by default: the grain is the target's natural
/// vector width for `t`'s element type and each tile gets at least 128 bytes.
std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph &graph,
                                                                 const poplar::Tensor &t);

/// Same as above, starting at tile `offset`.
std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph &graph,
                                                                 const poplar::Tensor &t, unsigned offset,
                                                                 bool ascendingOrder = true);

/// Maps `t` with `calcLinearTileMapping(graph, t.shape(), minElementsPerTile, grainSize)`.
void mapTensorLinearly(poplar::Graph &graph, const poplar::Tensor &t, unsigned minElementsPerTile,
                       unsigned grainSize);

/// Maps `t` with the default linear mapping (`calcLinearTileMapping(graph, t)`).
///
/// Example: `auto x = graph.addVariable(FLOAT, {1024}); poputil::mapTensorLinearly(graph, x);`
void mapTensorLinearly(poplar::Graph &graph, const poplar::Tensor &t);

/// Linear mapping that starts at tile `offset` (and runs downwards if `!ascendingOrder`).
void mapTensorLinearlyWithOffset(poplar::Graph &graph, const poplar::Tensor &t, unsigned minElementsPerTile,
                                 unsigned grainSize, unsigned offset, bool ascendingOrder = true);
void mapTensorLinearlyWithOffset(poplar::Graph &graph, const poplar::Tensor &t, unsigned offset = 0,
                                 bool ascendingOrder = true);

/// How many more elements than a balanced linear mapping the busiest tile holds.
unsigned getTileImbalance(const poplar::Graph::TileToTensorMapping &mapping, unsigned minElementsPerTile = 0,
                          unsigned grainSize = 1);
unsigned getTileImbalance(const poplar::Graph &graph, const poplar::Tensor &t,
                          unsigned minElementsPerTile = 0, unsigned grainSize = 1);

/// A clone of `t` on IPU `dstIPU` with the same tile-relative mapping.
poplar::Tensor
cloneToIpu(poplar::Graph &graph, const poplar::Tensor &t, unsigned dstIPU,
           const poplar::DebugContext &debugContext = {},
           poplar::TensorCloneMethod method = poplar::TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);

/// Clones `t` onto IPU `dstIPU` and appends the copy to `prog`.
poplar::Tensor
copyToIpu(poplar::Graph &masterGraph, const poplar::Tensor &t, poplar::program::Sequence &prog,
          unsigned dstIPU, const poplar::DebugContext &debugContext = {},
          poplar::TensorCloneMethod method = poplar::TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);

/// Clones `t` onto IPU `dstIpu`; `copySrc`/`copyDst` receive the copy's operands.
poplar::Tensor
createIpuCopy(poplar::Graph &graph, const poplar::Tensor &t, unsigned dstIpu, poplar::Tensor &copySrc,
              poplar::Tensor &copyDst, const poplar::DebugContext &debugContext = {},
              poplar::TensorCloneMethod method = poplar::TensorCloneMethod::PRESERVE_ORDER_AND_ALIASES);

/// True when the elements along `dimension` are spread over more than one tile.
bool dimIsSplitOverTiles(const poplar::Graph &graph, const poplar::Tensor &t, unsigned dimension);

/// True when the elements along `dimension` are spread over more than one IPU.
bool dimIsSplitOverIPUs(const poplar::Graph &graph, const poplar::Tensor &t, unsigned dimension);

/// A 1-D tensor of `fullTensor.dim(dim)` elements mapped like the corresponding
/// slice of `fullTensor`, so that broadcasting it along `dim` needs little exchange.
poplar::Tensor createBroadcastOperand(poplar::Graph &graph, const poplar::Tensor &fullTensor,
                                      const poplar::Type &type, unsigned dim, bool ditherMapping = false,
                                      const poplar::DebugContext &debugContext = {});

} // namespace poputil

#endif
