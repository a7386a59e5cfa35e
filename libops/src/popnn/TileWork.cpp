// Copyright (c) Aspen contributors.
#include "TileWork.hpp"

#include <poplar/Target.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

using namespace poplar;

namespace popnn::work {

TileElements elementsByTile(const Graph &graph, const Tensor &t) {
  TileElements result;
  if (t.numElements() == 0)
    return result;
  const Tensor flat = t.flatten();
  const auto mapping = graph.getTileMapping(t);
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty())
      continue;
    std::vector<Tensor> pieces;
    for (const Interval &i : mapping[tile])
      pieces.push_back(flat.slice(i.begin(), i.end()));
    result.tiles.push_back(tile);
    result.elements.push_back(concat(pieces));
  }
  return result;
}

TileRows rowsByTile(const Graph &graph, const Tensor &matrix) {
  TileRows result;
  const std::size_t numRows = matrix.dim(0), rowLength = matrix.dim(1);
  if (numRows == 0 || rowLength == 0)
    return result;
  // Start of each mapped interval of the flattened matrix -> (end, tile).
  std::map<std::size_t, std::pair<std::size_t, unsigned>> owner;
  const auto mapping = graph.getTileMapping(matrix);
  for (unsigned tile = 0; tile < mapping.size(); ++tile)
    for (const Interval &i : mapping[tile])
      owner[i.begin()] = {i.end(), tile};
  std::map<unsigned, std::vector<std::size_t>> byTile;
  for (std::size_t r = 0; r < numRows; ++r) {
    const std::size_t first = r * rowLength;
    auto it = owner.upper_bound(first);
    unsigned tile = 0;
    if (it != owner.begin()) {
      --it;
      if (first < it->second.first)
        tile = it->second.second;
    }
    byTile[tile].push_back(r);
  }
  for (auto &kv : byTile) {
    result.tiles.push_back(kv.first);
    result.rows.push_back(std::move(kv.second));
  }
  return result;
}

Tensor gatherRows(const Tensor &matrix, const std::vector<std::size_t> &rows) {
  std::vector<Tensor> pieces;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i + 1;
    while (j < rows.size() && rows[j] == rows[j - 1] + 1)
      ++j;
    pieces.push_back(matrix.slice(rows[i], rows[j - 1] + 1, 0).flatten());
    i = j;
  }
  return concat(pieces);
}

Tensor gatherElements(const Tensor &vector, const std::vector<std::size_t> &indices) {
  std::vector<Tensor> pieces;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i + 1;
    while (j < indices.size() && indices[j] == indices[j - 1] + 1)
      ++j;
    pieces.push_back(vector.slice(indices[i], indices[j - 1] + 1));
    i = j;
  }
  return concat(pieces);
}

Tensor asRows(const Tensor &t) {
  if (t.rank() == 0)
    return t.reshape({1, 1});
  const std::size_t inner = t.dim(t.rank() - 1);
  return t.reshape({inner == 0 ? 0 : t.numElements() / inner, inner});
}

std::uint64_t multiVertexCycles(const Target &target, std::size_t elements, double cyclesPerElement,
                                std::uint64_t overhead) {
  const unsigned workers = std::max(1u, target.getNumWorkerContexts());
  const double perWorker = std::ceil(double(elements) / workers);
  return workers * (overhead + std::uint64_t(std::ceil(perWorker * cyclesPerElement)));
}

} // namespace popnn::work
