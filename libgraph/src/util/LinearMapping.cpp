// Copyright (c) Aspen contributors.
#include "util/LinearMapping.hpp"

#include <algorithm>

namespace aspen::util {

namespace {
std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}
} // namespace

std::vector<LinearChunk> linearMappingChunks(std::uint64_t numElements, unsigned numTiles,
                                             std::uint64_t minElementsPerTile, std::uint64_t grainSize) {
  std::vector<LinearChunk> chunks;
  if (numElements == 0 || numTiles == 0)
    return chunks;
  grainSize = std::max<std::uint64_t>(1, grainSize);
  minElementsPerTile = std::max<std::uint64_t>(1, minElementsPerTile);
  const std::uint64_t numGrains = ceilDiv(numElements, grainSize);
  const std::uint64_t grainsPerTile =
      std::max(ceilDiv(numGrains, numTiles), ceilDiv(minElementsPerTile, grainSize));
  const std::uint64_t elementsPerTile = grainsPerTile * grainSize;
  chunks.reserve(
      static_cast<std::size_t>(std::min<std::uint64_t>(numTiles, ceilDiv(numElements, elementsPerTile))));
  unsigned tile = 0;
  for (std::uint64_t begin = 0; begin < numElements; begin += elementsPerTile, ++tile)
    chunks.push_back(LinearChunk{begin, std::min(numElements, begin + elementsPerTile), tile});
  return chunks;
}

poplar::TileToTensorMapping linearTileMapping(std::uint64_t numElements, unsigned numTiles,
                                              std::uint64_t minElementsPerTile, std::uint64_t grainSize) {
  poplar::TileToTensorMapping mapping(numTiles);
  for (const auto &chunk : linearMappingChunks(numElements, numTiles, minElementsPerTile, grainSize))
    mapping[chunk.tile].emplace_back(chunk.begin, chunk.end);
  return mapping;
}

} // namespace aspen::util
