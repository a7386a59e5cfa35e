// Copyright (c) Aspen contributors.
// Linear tile mappings and mapping queries, built on the public Graph API only.
#include "poputil/TileMapping.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "poputil/Util.hpp"
#include "poputil/exceptions.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

namespace poputil {
namespace {

std::size_t product(const std::vector<std::size_t> &shape) {
  return std::accumulate(shape.begin(), shape.end(), std::size_t(1), std::multiplies<std::size_t>());
}

unsigned tileFor(unsigned partition, unsigned numTiles, unsigned offset, bool ascending) {
  const unsigned k = (offset + partition) % numTiles;
  return ascending ? k : numTiles - 1 - k;
}

// PopLibs' default: the natural vector width as grain and at least 128 bytes per tile.
void defaultLinearParams(const poplar::Graph &graph, const poplar::Type &type, unsigned &minElementsPerTile,
                         unsigned &grainSize) {
  const auto &target = graph.getTarget();
  grainSize = std::max(1u, target.getVectorWidth(type));
  const unsigned typeSize = std::max(1u, static_cast<unsigned>(target.getTypeSize(type)));
  minElementsPerTile = (128 + typeSize - 1) / typeSize;
}

// Intervals of every tile, tagged with the tile, in order of their begin.
struct TaggedInterval {
  std::size_t begin, end;
  unsigned tile;
};
std::vector<TaggedInterval> sortedIntervals(const poplar::Graph::TileToTensorMapping &mapping) {
  std::vector<TaggedInterval> all;
  for (unsigned tile = 0; tile < mapping.size(); ++tile)
    for (const auto &i : mapping[tile])
      if (i.size())
        all.push_back({i.begin(), i.end(), tile});
  std::sort(all.begin(), all.end(),
            [](const TaggedInterval &a, const TaggedInterval &b) { return a.begin < b.begin; });
  return all;
}

// True when some run of `dimSize` elements starting at a multiple of `dimSize`
// (after moving `dimension` innermost) lies in more than one group (tile or IPU).
bool dimIsSplit(const poplar::Graph &graph, const poplar::Tensor &t, unsigned dimension,
                unsigned tilesPerGroup) {
  if (dimension >= t.rank())
    throw poplibs_error("poputil::dimIsSplitOverTiles: dimension " + std::to_string(dimension) +
                        " out of range for " + aspen::ops::describe(t));
  const std::size_t dimSize = t.dim(dimension);
  if (dimSize <= 1 || t.numElements() == 0)
    return false;
  const poplar::Tensor rolled = t.dimRoll(dimension, t.rank() - 1);
  const auto all = sortedIntervals(graph.getTileMapping(rolled));
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (all[i].tile / tilesPerGroup == all[i - 1].tile / tilesPerGroup)
      continue;
    if (all[i].begin % dimSize != 0)
      return true;
  }
  return false;
}

} // namespace

std::vector<std::vector<poplar::Interval>>
calcLinearTileMapping(const poplar::Graph &graph, std::vector<std::size_t> shape, unsigned minElementsPerTile,
                      unsigned grainSize, unsigned offset, bool ascendingOrder) {
  const unsigned numTiles = graph.getTarget().getNumTiles();
  std::vector<std::vector<poplar::Interval>> mapping(numTiles);
  const std::size_t numElements = product(shape);
  if (numElements == 0)
    return mapping;
  const auto partitions =
      splitRegions({poplar::Interval(0, numElements)}, std::max(1u, grainSize), numTiles, minElementsPerTile);
  for (unsigned p = 0; p < partitions.size(); ++p)
    mapping[tileFor(p, numTiles, offset, ascendingOrder)] = partitions[p];
  return mapping;
}

std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph &graph,
                                                                 const poplar::Tensor &t) {
  return calcLinearTileMapping(graph, t, 0, true);
}

std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph &graph,
                                                                 const poplar::Tensor &t, unsigned offset,
                                                                 bool ascendingOrder) {
  unsigned minElements, grain;
  defaultLinearParams(graph, t.elementType(), minElements, grain);
  return calcLinearTileMapping(graph, t.shape(), minElements, grain, offset, ascendingOrder);
}

void mapTensorLinearly(poplar::Graph &graph, const poplar::Tensor &t, unsigned minElementsPerTile,
                       unsigned grainSize) {
  graph.setTileMapping(t, calcLinearTileMapping(graph, t.shape(), minElementsPerTile, grainSize));
}

void mapTensorLinearly(poplar::Graph &graph, const poplar::Tensor &t) {
  graph.setTileMapping(t, calcLinearTileMapping(graph, t));
}

void mapTensorLinearlyWithOffset(poplar::Graph &graph, const poplar::Tensor &t, unsigned minElementsPerTile,
                                 unsigned grainSize, unsigned offset, bool ascendingOrder) {
  graph.setTileMapping(
      t, calcLinearTileMapping(graph, t.shape(), minElementsPerTile, grainSize, offset, ascendingOrder));
}

void mapTensorLinearlyWithOffset(poplar::Graph &graph, const poplar::Tensor &t, unsigned offset,
                                 bool ascendingOrder) {
  graph.setTileMapping(t, calcLinearTileMapping(graph, t, offset, ascendingOrder));
}

unsigned getTileImbalance(const poplar::Graph::TileToTensorMapping &mapping, unsigned minElementsPerTile,
                          unsigned grainSize) {
  std::size_t total = 0, busiest = 0;
  for (const auto &tile : mapping) {
    std::size_t n = 0;
    for (const auto &i : tile)
      n += i.size();
    total += n;
    busiest = std::max(busiest, n);
  }
  if (mapping.empty() || total == 0)
    return 0;
  grainSize = std::max(1u, grainSize);
  const std::size_t grains = (total + grainSize - 1) / grainSize;
  std::size_t balanced = (grains + mapping.size() - 1) / mapping.size() * grainSize;
  balanced = std::max<std::size_t>(balanced, minElementsPerTile);
  return busiest > balanced ? static_cast<unsigned>(busiest - balanced) : 0;
}

unsigned getTileImbalance(const poplar::Graph &graph, const poplar::Tensor &t, unsigned minElementsPerTile,
                          unsigned grainSize) {
  return getTileImbalance(graph.getTileMapping(t), minElementsPerTile, grainSize);
}

poplar::Tensor cloneToIpu(poplar::Graph &graph, const poplar::Tensor &t, unsigned dstIPU,
                          const poplar::DebugContext &debugContextIn, poplar::TensorCloneMethod method) {
  aspen::ops::PoputilDebugInfo di(debugContextIn, DI_ARGS(t, dstIPU, method));
  const poplar::DebugContext debugContext(di);
  const auto &target = graph.getTarget();
  if (dstIPU >= target.getNumIPUs())
    throw poplibs_error("poputil::cloneToIpu: IPU " + std::to_string(dstIPU) +
                        " does not exist (target has " + std::to_string(target.getNumIPUs()) + ")");
  poplar::Tensor clone = graph.clone(t, debugContext, method);
  const unsigned tilesPerIPU = target.getTilesPerIPU();
  const auto mapping = graph.getTileMapping(t, false);
  poplar::Graph::TileToTensorMapping moved(target.getNumTiles());
  for (unsigned tile = 0; tile < mapping.size(); ++tile)
    for (const auto &i : mapping[tile])
      moved[dstIPU * tilesPerIPU + tile % tilesPerIPU].push_back(i);
  for (auto &m : moved)
    std::sort(m.begin(), m.end());
  graph.setTileMapping(clone, moved);
  return clone;
}

poplar::Tensor copyToIpu(poplar::Graph &masterGraph, const poplar::Tensor &t, poplar::program::Sequence &prog,
                         unsigned dstIPU, const poplar::DebugContext &debugContextIn,
                         poplar::TensorCloneMethod method) {
  aspen::ops::PoputilDebugInfo di(debugContextIn, DI_ARGS(t, dstIPU, method));
  const poplar::DebugContext debugContext(di);
  poplar::Tensor clone = cloneToIpu(masterGraph, t, dstIPU, debugContext, method);
  prog.add(poplar::program::Copy(t, clone, false, {debugContext, "copyToIpu"}));
  return clone;
}

poplar::Tensor createIpuCopy(poplar::Graph &graph, const poplar::Tensor &t, unsigned dstIpu,
                             poplar::Tensor &copySrc, poplar::Tensor &copyDst,
                             const poplar::DebugContext &debugContextIn, poplar::TensorCloneMethod method) {
  aspen::ops::PoputilDebugInfo di(debugContextIn, DI_ARGS(t, dstIpu, copySrc, copyDst, method));
  const poplar::DebugContext debugContext(di);
  poplar::Tensor clone = cloneToIpu(graph, t, dstIpu, debugContext, method);
  copySrc = t;
  copyDst = clone;
  return clone;
}

bool dimIsSplitOverTiles(const poplar::Graph &graph, const poplar::Tensor &t, unsigned dimension) {
  return dimIsSplit(graph, t, dimension, 1);
}

bool dimIsSplitOverIPUs(const poplar::Graph &graph, const poplar::Tensor &t, unsigned dimension) {
  return dimIsSplit(graph, t, dimension, graph.getTarget().getTilesPerIPU());
}

poplar::Tensor createBroadcastOperand(poplar::Graph &graph, const poplar::Tensor &fullTensor,
                                      const poplar::Type &type, unsigned dim, bool ditherMapping,
                                      const poplar::DebugContext &debugContextIn) {
  aspen::ops::PoputilDebugInfo di(debugContextIn, DI_ARGS(fullTensor, type, dim, ditherMapping));
  const poplar::DebugContext debugContext(di);
  if (dim >= fullTensor.rank())
    throw poplibs_error("poputil::createBroadcastOperand: dimension " + std::to_string(dim) +
                        " out of range for " + aspen::ops::describe(fullTensor));
  (void)ditherMapping; // one tile per element already spreads the operand
  const std::size_t n = fullTensor.dim(dim);
  poplar::Tensor out = graph.addVariable(type, {n}, {debugContext, "broadcastOperand"});
  // Each element goes to the tile that holds the first element of its slice of the full tensor,
  // found from one pass over the full tensor's mapping (cheap: O(regions)).
  const poplar::Tensor rolled =
      fullTensor.dimRoll(dim, 0).reshape({n, fullTensor.numElements() / std::max<std::size_t>(n, 1)});
  const std::size_t rowLen = n ? fullTensor.numElements() / n : 0;
  bool complete = true;
  const auto mapping = graph.getTileMapping(rolled, &complete);
  if (!complete || rowLen == 0) {
    mapTensorLinearly(graph, out);
    return out;
  }
  std::vector<int> tileOf(n, -1);
  for (unsigned tile = 0; tile < mapping.size(); ++tile)
    for (const auto &i : mapping[tile])
      for (std::size_t row = (i.begin() + rowLen - 1) / rowLen; row * rowLen < i.end() && row < n; ++row)
        if (tileOf[row] < 0)
          tileOf[row] = static_cast<int>(tile);
  // Rows whose first element is not at an interval start: take the tile of the interval holding it.
  for (unsigned tile = 0; tile < mapping.size(); ++tile)
    for (const auto &i : mapping[tile]) {
      const std::size_t row = i.begin() / rowLen;
      if (row < n && tileOf[row] < 0)
        tileOf[row] = static_cast<int>(tile);
    }
  poplar::Graph::TileToTensorMapping outMapping(graph.getTarget().getNumTiles());
  for (std::size_t row = 0; row < n; ++row)
    outMapping[tileOf[row] < 0 ? 0 : tileOf[row]].push_back(poplar::Interval(row, row + 1));
  mergeAdjacentRegions(outMapping);
  graph.setTileMapping(out, outMapping);
  return out;
}

} // namespace poputil
