// Copyright (c) Aspen contributors.
// gcl/TileAllocation.hpp: IO tiles and compute tiles for programs that overlap IO with compute.
#include <gcl/TileAllocation.hpp>

#include <poplar/exceptions.hpp>

#include <algorithm>
#include <string>

namespace gcl {

namespace {

/// 0 .. n-1 in bit-reversed order of the next power of two (values >= n skipped): every prefix
/// of this order is spread evenly over 0 .. n-1.
std::vector<unsigned> spreadOrder(unsigned n) {
  unsigned bits = 0;
  while ((1u << bits) < n)
    ++bits;
  std::vector<unsigned> order;
  order.reserve(n);
  for (unsigned i = 0; i < (1u << bits); ++i) {
    unsigned r = 0;
    for (unsigned b = 0; b < bits; ++b)
      if (i & (1u << b))
        r |= 1u << (bits - 1 - b);
    if (r < n)
      order.push_back(r);
  }
  return order;
}

unsigned tilesPerIpuOf(const poplar::Graph &graph, const char *op) {
  const unsigned tiles = graph.getTarget().getTilesPerIPU();
  if (tiles == 0)
    throw poplar::poplar_error(std::string(op) + ": the graph has no tiles");
  return tiles;
}

} // namespace

unsigned getMinIoTiles(const poplar::Graph &graph) {
  const unsigned tiles = tilesPerIpuOf(graph, "gcl::getMinIoTiles");
  constexpr unsigned kFullIpuTiles = 1472, kFullIpuIoTiles = 32;
  // 32 per 1472 tiles, rounded up to whole pairs.
  const unsigned pairs = (tiles * (kFullIpuIoTiles / 2) + kFullIpuTiles - 1) / kFullIpuTiles;
  return std::min(std::max(2u, 2 * pairs), tiles);
}

std::vector<unsigned> perIPUTiles(const poplar::Graph &graph, unsigned offset, unsigned count, bool sorted,
                                  bool tilePairs) {
  const unsigned tiles = tilesPerIpuOf(graph, "gcl::perIPUTiles");
  if (static_cast<unsigned long long>(offset) + count > tiles)
    throw poplar::poplar_error("gcl::perIPUTiles: offset " + std::to_string(offset) + " + count " +
                               std::to_string(count) + " is more than the " + std::to_string(tiles) +
                               " tiles per IPU of the graph");
  std::vector<unsigned> order;
  order.reserve(tiles);
  if (tilePairs) {
    // Pairs {2k, 2k+1} in spread order; an odd last tile comes last.
    for (unsigned pair : spreadOrder(tiles / 2)) {
      order.push_back(2 * pair);
      order.push_back(2 * pair + 1);
    }
    if (tiles % 2)
      order.push_back(tiles - 1);
  } else {
    order = spreadOrder(tiles);
  }
  std::vector<unsigned> result(order.begin() + offset, order.begin() + offset + count);
  if (sorted)
    std::sort(result.begin(), result.end());
  return result;
}

} // namespace gcl
