// Copyright (c) Aspen contributors.
// How popnn's builders share work out between tiles: element-wise work goes
// to the tile each element lives on; row work (softmax, losses, arg-max) to
// the tile holding each row's first element.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Tensor.hpp>

#include <cstddef>
#include <vector>

namespace popnn::work {

/// The elements of `t` on each tile, as one flat tensor per tile (tiles with
/// none are left out): `result[i]` lives on tile `tiles[i]`.
struct TileElements {
  std::vector<unsigned> tiles;
  std::vector<poplar::Tensor> elements;
};
TileElements elementsByTile(const poplar::Graph &graph, const poplar::Tensor &t);

/// Rows of a {rows, rowLength} tensor grouped by the tile holding each row's
/// first element: `rows[i]` (row indices, ascending) go to tile `tiles[i]`.
struct TileRows {
  std::vector<unsigned> tiles;
  std::vector<std::vector<std::size_t>> rows;
};
TileRows rowsByTile(const poplar::Graph &graph, const poplar::Tensor &matrix);

/// The rows `rows` of `matrix` as one flat tensor.
poplar::Tensor gatherRows(const poplar::Tensor &matrix, const std::vector<std::size_t> &rows);
/// The elements `indices` of the 1-D tensor `vector` as one tensor.
poplar::Tensor gatherElements(const poplar::Tensor &vector, const std::vector<std::size_t> &indices);

/// `t` viewed as {rows, innermost dimension}.
poplar::Tensor asRows(const poplar::Tensor &t);

/// Machine cycles of a MultiVertex whose six workers each run `overhead`
/// cycles plus `cyclesPerElement` for their share of `elements`.
std::uint64_t multiVertexCycles(const poplar::Target &target, std::size_t elements, double cyclesPerElement,
                                std::uint64_t overhead = 20);

} // namespace popnn::work
