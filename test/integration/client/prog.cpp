// A third-party program built against the SDK tree the way Poplar programs are built
// (`g++ -std=c++11 prog.cpp -lpoplar`, or find_package(Aspen)). It uses only the front end: a
// device (an IPUModel, or with --hardware an IPU from the DeviceManager), a graph, variables,
// views and tile mappings, and checks what it gets against what Poplar's documented semantics
// imply. Prints "client OK" on success.
#include <poplar/DeviceManager.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
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

// Options: --hardware asks the DeviceManager for an IPU first, as programs written for hardware
// do, and falls back to a small IPUModel when none can be attached; --codelets <file.gp> adds a
// popc-built vertex library (codelets.cpp) and a vertex of its type.
int main(int argc, char **argv) {
  bool wantHardware = false;
  std::string codeletFile;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--hardware") {
      wantHardware = true;
    } else if (arg == "--codelets" && i + 1 < argc) {
      codeletFile = argv[++i];
    } else {
      std::cerr << "usage: " << argv[0] << " [--hardware] [--codelets <file.gp>]\n";
      return EXIT_FAILURE;
    }
  }
  const unsigned modelTiles = 4;
  poplar::Device device;
  bool onHardware = false;
  if (wantHardware) {
    poplar::DeviceManager manager = poplar::DeviceManager::createDeviceManager();
    std::vector<poplar::Device> devices = manager.getDevices(poplar::TargetType::IPU, 1);
    for (poplar::Device &candidate : devices) {
      if (candidate.attach()) {
        device = std::move(candidate);
        onHardware = true;
        break;
      }
    }
  }
  if (!onHardware) {
    poplar::IPUModel ipuModel("ipu2");
    ipuModel.tilesPerIPU = modelTiles;
    device = ipuModel.createDevice();
    check(device.getTarget().getNumTiles() == modelTiles, "the device has the IPUModel's tilesPerIPU tiles");
  }
  const poplar::Target &target = device.getTarget();
  const unsigned numTiles = target.getNumTiles();
  check(target.getTargetArchString() == "ipu2", "the target is an ipu2");
  check(numTiles >= 4, "the target has at least 4 tiles");

  poplar::Graph graph(target);
  const std::size_t rows = 4, cols = 3;
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

  if (!codeletFile.empty()) {
    check(graph.addCodelets(codeletFile), "the vertex library is added");
    check(graph.hasCodelet("ClientScale"), "the graph knows the vertex type ClientScale");
    poplar::Tensor out = graph.addVariable(poplar::FLOAT, {cols}, "out");
    graph.setTileMapping(out, 0);
    poplar::ComputeSet scale = graph.addComputeSet("scale");
    poplar::VertexRef vertex = graph.addVertex(scale, "ClientScale", {{"in", matrix[0]}, {"out", out}});
    graph.setInitialValue(vertex["factor"], 2.0f);
    graph.setTileMapping(vertex, 0);
    check(graph.getTileMapping(vertex) == 0, "the vertex is on tile 0");
  }

  if (failures != 0) {
    std::cerr << failures << " client checks failed\n";
    return EXIT_FAILURE;
  }
  std::cout << "client OK: " << (onHardware ? "IPU from the DeviceManager" : "IPUModel") << ", " << numTiles
            << " tiles, " << (codeletFile.empty() ? "no codelets" : "codelets added") << ", matrix " << rows
            << "x" << cols << " of " << matrix.elementType() << "\n";
  return EXIT_SUCCESS;
}
