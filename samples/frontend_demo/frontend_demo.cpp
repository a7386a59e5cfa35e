// Lesson: the front end. A graph is built for a target (here an IPUModel of an ipu2); it holds
// variables and constants, each element of which lives on one tile. Tensors are views: slicing
// and transposing never copy, they only change which variable elements a tensor refers to, so
// the tile mapping of a view follows from the mapping of its variable.
//
// The program builds a few tensors and views, prints their shapes and tile mappings, and checks
// each mapping against a host model of where every element must live. Prints PASSED at the end.
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

using namespace poplar;

namespace {

int failures = 0;

std::string shapeString(const std::vector<std::size_t> &shape) {
  std::string s = "{";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + "}";
}

// The tile of every flattened element of a tensor, from its tile mapping (~0u if unmapped).
std::vector<unsigned> tilePerElement(const Graph &graph, const Tensor &t) {
  std::vector<unsigned> tiles(t.numElements(), ~0u);
  const Graph::TileToTensorMapping mapping = graph.getTileMapping(t);
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    for (const Interval &interval : mapping[tile]) {
      for (std::size_t i = interval.begin(); i < interval.end(); ++i) {
        tiles[i] = tile;
      }
    }
  }
  return tiles;
}

// Prints "name: shape {..} type" and the intervals on each tile that holds some of `t`.
void printTensor(const Graph &graph, const std::string &name, const Tensor &t) {
  std::cout << name << ": shape " << shapeString(t.shape()) << " " << t.elementType() << "\n";
  const Graph::TileToTensorMapping mapping = graph.getTileMapping(t);
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty()) {
      continue;
    }
    std::cout << "  tile " << tile << ":";
    for (const Interval &interval : mapping[tile]) {
      std::cout << " [" << interval.begin() << ", " << interval.end() << ")";
    }
    std::cout << "\n";
  }
}

void expectTiles(const Graph &graph, const std::string &name, const Tensor &t,
                 const std::vector<std::size_t> &expectedShape, const std::vector<unsigned> &expectedTiles) {
  if (t.shape() != expectedShape) {
    std::cout << "MISMATCH " << name << ": shape " << shapeString(t.shape()) << ", expected "
              << shapeString(expectedShape) << "\n";
    ++failures;
    return;
  }
  const std::vector<unsigned> tiles = tilePerElement(graph, t);
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    if (tiles[i] != expectedTiles[i]) {
      std::cout << "MISMATCH " << name << ": element " << i << " on tile " << tiles[i] << ", expected "
                << expectedTiles[i] << "\n";
      ++failures;
      return;
    }
  }
}

} // namespace

int main() {
  // An IPUModel is a simulated IPU; its fields (tiles, memory, clock) can be changed before
  // createDevice(). This one keeps the ipu2 defaults.
  IPUModel ipuModel("ipu2");
  Device device = ipuModel.createDevice();
  const Target &target = device.getTarget();
  std::cout << "Target " << target.getTargetArchString() << ": " << target.getNumTiles() << " tiles, "
            << target.getBytesPerTile() << " bytes per tile, " << target.getNumWorkerContexts()
            << " workers per tile\n\n";

  Graph graph(target);

  // A 4x6 variable; row r is placed on tile r.
  const std::size_t rows = 4, cols = 6;
  Tensor weights = graph.addVariable(FLOAT, {rows, cols}, "weights");
  for (unsigned r = 0; r < rows; ++r) {
    graph.setTileMapping(weights[r], r);
  }
  printTensor(graph, "weights", weights);

  // Host model of `weights`: the row (= tile) of each element, in row-major order.
  std::vector<unsigned> weightsTiles(rows * cols);
  for (std::size_t i = 0; i < weightsTiles.size(); ++i) {
    weightsTiles[i] = static_cast<unsigned>(i / cols);
  }
  expectTiles(graph, "weights", weights, {rows, cols}, weightsTiles);

  // Constants need a tile too.
  Tensor scales = graph.addConstant<float>(FLOAT, {3}, {0.5f, 1.0f, 2.0f}, "scales");
  graph.setTileMapping(scales, 4);
  Tensor sevens = graph.addConstant(INT, {2, 2}, 7, "sevens");
  graph.setTileMapping(sevens, 5);
  printTensor(graph, "scales (constant)", scales);
  printTensor(graph, "sevens (constant)", sevens);
  expectTiles(graph, "scales", scales, {3}, std::vector<unsigned>(3, 4));
  expectTiles(graph, "sevens", sevens, {2, 2}, std::vector<unsigned>(4, 5));

  // A slice: rows 1..2, columns 2..4 of weights. Element (i, j) is weights(1 + i, 2 + j).
  Tensor block = weights.slice({1, 2}, {3, 5});
  printTensor(graph, "weights.slice({1, 2}, {3, 5})", block);
  std::vector<unsigned> blockTiles;
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t j = 0; j < 3; ++j) {
      blockTiles.push_back(weightsTiles[(1 + i) * cols + (2 + j)]);
    }
  }
  expectTiles(graph, "block", block, {2, 3}, blockTiles);

  // A transpose: element (c, r) is weights(r, c), so its tile is r.
  Tensor transposed = weights.transpose();
  printTensor(graph, "weights.transpose()", transposed);
  std::vector<unsigned> transposedTiles;
  for (std::size_t c = 0; c < cols; ++c) {
    for (std::size_t r = 0; r < rows; ++r) {
      transposedTiles.push_back(weightsTiles[r * cols + c]);
    }
  }
  expectTiles(graph, "transposed", transposed, {cols, rows}, transposedTiles);

  // A column of the transpose is a row of weights: one tile, contiguous.
  Tensor row2 = transposed.slice(2, 3, 1).flatten();
  printTensor(graph, "weights.transpose().slice(2, 3, 1).flatten()", row2);
  expectTiles(graph, "row2", row2, {cols}, std::vector<unsigned>(cols, 2));

  // A linearly mapped variable is spread over the tiles in contiguous, balanced pieces.
  const std::size_t numElements = 100000;
  Tensor activations = graph.addVariable(FLOAT, {numElements}, VariableMappingMethod::LINEAR, "activations");
  const std::vector<unsigned> linearTiles = tilePerElement(graph, activations);
  std::vector<std::size_t> perTile(target.getNumTiles(), 0);
  bool complete = true, ordered = true;
  for (std::size_t i = 0; i < numElements; ++i) {
    if (linearTiles[i] >= perTile.size()) {
      complete = false;
      continue;
    }
    ++perTile[linearTiles[i]];
    ordered = ordered && (i == 0 || linearTiles[i] >= linearTiles[i - 1]);
  }
  std::size_t tilesUsed = 0, most = 0, fewest = numElements;
  for (std::size_t n : perTile) {
    if (n != 0) {
      ++tilesUsed;
      most = std::max(most, n);
      fewest = std::min(fewest, n);
    }
  }
  std::cout << "activations (LINEAR): shape " << shapeString(activations.shape()) << ", " << tilesUsed
            << " tiles, " << fewest << " to " << most << " elements per tile\n";
  const bool balanced = tilesUsed > 1 && most <= 2 * ((numElements + tilesUsed - 1) / tilesUsed);
  if (!complete || !ordered || !balanced) {
    std::cout << "MISMATCH activations: a linear mapping must cover every element once, in tile order, "
                 "balanced over the tiles it uses\n";
    ++failures;
  }

  if (failures != 0) {
    std::cout << failures << " mismatches\n";
    return EXIT_FAILURE;
  }
  std::cout << "\nEvery mapping matches the host model. PASSED\n";
  return EXIT_SUCCESS;
}
