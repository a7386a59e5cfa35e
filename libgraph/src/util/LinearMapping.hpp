// Copyright (c) Aspen contributors.
// The poputil-style linear tile mapping, shared by Graph::addVariable(LINEAR),
// Graph::addLinearlyMappedVariable and poputil::mapTensorLinearly.
#pragma once

#include "poplar/Graph.hpp"
#include "poplar/Target.hpp"
#include "poplar/Type.hpp"

#include <cstdint>
#include <vector>

namespace aspen::util {

/// Elements `[begin, end)` (flattened) placed on `tile` (0-based, relative).
struct LinearChunk {
  std::uint64_t begin;
  std::uint64_t end;
  unsigned tile;
};

/// Splits `numElements` into contiguous chunks on tiles 0, 1, 2, ...: the
/// elements are grouped in grains of `grainSize`, and every used tile gets the
/// same number of grains, `max(ceil(grains / numTiles), ceil(minElementsPerTile /
/// grainSize))`, except the last, which takes the remainder. Zero `grainSize` or
/// `minElementsPerTile` count as 1. O(tiles used); no per-element work.
std::vector<LinearChunk> linearMappingChunks(std::uint64_t numElements, unsigned numTiles,
                                             std::uint64_t minElementsPerTile, std::uint64_t grainSize);

/// The same mapping as a TileToTensorMapping of `numTiles` entries.
poplar::TileToTensorMapping linearTileMapping(std::uint64_t numElements, unsigned numTiles,
                                              std::uint64_t minElementsPerTile, std::uint64_t grainSize);

} // namespace aspen::util
