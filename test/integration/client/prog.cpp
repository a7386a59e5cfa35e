// A third-party program built against the SDK tree the way Poplar programs are built
// (`g++ -std=c++11 prog.cpp -lpoplar`, or find_package(Aspen)). It uses only the front end:
// an IPUModel device, a graph, variables, views and tile mappings, and checks what it gets
// against what Poplar's documented semantics imply. Prints "client OK" on success.
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>

#include <cstdlib>
#include <iostream>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char *what) {
  if (!ok) {
    std::cerr << "client check failed: " << what << "\n";
    ++failures;
  }
}

// The tile of flattened element `index` of a tensor, from a graph tile mapping.
unsigned tileOf(const poplar::Graph::TileToTensorMapping &mapping, std::size_t index) {
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    for (const poplar::Interval &interval : mapping[tile]) {
      if (interval.begin() <= index && index < interval.end()) {
        return tile;
      }
    }
  }
  return ~0u;
}

} // namespace

int main() {
  const unsigned numTiles = 4;
  poplar::IPUModel ipuModel("ipu2");
  ipuModel.tilesPerIPU = numTiles;
  poplar::Device device = ipuModel.createDevice();
  const poplar::Target &target = device.getTarget();
  check(target.getNumTiles() == numTiles, "the device has the IPUModel's tilesPerIPU tiles");
  check(target.getTargetArchString() == "ipu2", "the target is an ipu2");

  poplar::Graph graph(target);
  const std::size_t rows = numTiles, cols = 3;
  poplar::Tensor matrix = graph.addVariable(poplar::FLOAT, {rows, cols}, "matrix");
  for (unsigned row = 0; row < rows; ++row) {
    graph.setTileMapping(matrix[row], row); // row r lives on tile r
  }
  check(matrix.shape() == std::vector<std::size_t>({rows, cols}), "matrix shape");
  check(matrix.elementType() == poplar::FLOAT, "matrix element type");

  // Element (r, c) of the matrix is element (c, r) of its transpose, so it must sit on tile r.
  poplar::Tensor transposed = matrix.transpose();
  check(transposed.shape() == std::vector<std::size_t>({cols, rows}), "transpose shape");
  poplar::Graph::TileToTensorMapping mapping = graph.getTileMapping(transposed);
  check(mapping.size() == numTiles, "a mapping has one entry per tile");
  for (std::size_t c = 0; c < cols; ++c) {
    for (std::size_t r = 0; r < rows; ++r) {
      check(tileOf(mapping, c * rows + r) == r, "transposed element on its row's tile");
    }
  }

  poplar::Tensor column = matrix.slice(1, 2, 1).flatten();
  check(column.numElements() == rows, "a column slice has one element per row");
  check(!column.isContiguous(), "a column of a row-major matrix is not contiguous");

  if (failures != 0) {
    std::cerr << failures << " client checks failed\n";
    return EXIT_FAILURE;
  }
  std::cout << "client OK: " << target.getNumTiles() << " tiles, matrix " << rows << "x" << cols
            << " of " << matrix.elementType() << "\n";
  return EXIT_SUCCESS;
}
