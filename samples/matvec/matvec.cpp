// Sample 5: matrix-vector multiply with a custom codelet. The matrix is written
// once through a host handle; the vector streams in and the result streams out
// on every run. Each of 368 tiles owns a band of rows; the vector is broadcast
// to every tile by exchange.
//
// Build with Poplar or Aspen:  g++ -std=c++11 matvec.cpp -lpoplar
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#ifndef ASPEN_SAMPLE_DIR
#define ASPEN_SAMPLE_DIR "."
#endif

using namespace poplar;
using namespace poplar::program;

int main() {
  const unsigned numRows = 2944, numCols = 1024, numTiles = 368;
  const unsigned rowsPerTile = numRows / numTiles;

  IPUModel model("ipu2");
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(std::string(ASPEN_SAMPLE_DIR) + "/matvec_codelets.cpp");

  Tensor matrix = graph.addVariable(FLOAT, {numRows, numCols}, "matrix");
  Tensor x = graph.addVariable(FLOAT, {numCols}, "x");
  Tensor y = graph.addVariable(FLOAT, {numRows}, "y");
  graph.setTileMapping(x, 0);

  ComputeSet cs = graph.addComputeSet("matvec");
  for (unsigned t = 0; t < numTiles; ++t) {
    const unsigned r0 = t * rowsPerTile, r1 = r0 + rowsPerTile;
    graph.setTileMapping(matrix.slice(r0, r1), t);
    graph.setTileMapping(y.slice(r0, r1), t);
    VertexRef v = graph.addVertex(
        cs, "DotRows", {{"matrix", matrix.slice(r0, r1).flatten()}, {"x", x}, {"y", y.slice(r0, r1)}});
    graph.setTileMapping(v, t);
    graph.setPerfEstimate(v, 30 + rowsPerTile * (numCols / 2 + 10), 2ull * rowsPerTile * numCols);
  }

  graph.createHostWrite("matrix", matrix);
  DataStream xIn = graph.addHostToDeviceFIFO("x-in", FLOAT, numCols);
  DataStream yOut = graph.addDeviceToHostFIFO("y-out", FLOAT, numRows);
  Sequence prog({Copy(xIn, x), Execute(cs), Copy(y, yOut)});

  Engine engine(graph, prog);
  engine.load(device);

  std::vector<float> a(numRows * numCols), xs(numCols), ys(numRows);
  for (unsigned i = 0; i < a.size(); ++i)
    a[i] = float((i * 7) % 13) * 0.125f - 0.75f;
  engine.writeTensor("matrix", a.data(), a.data() + a.size());
  engine.connectStream("x-in", xs.data());
  engine.connectStream("y-out", ys.data());

  bool ok = true;
  double worst = 0.0;
  for (unsigned trial = 0; trial < 3; ++trial) {
    for (unsigned k = 0; k < numCols; ++k)
      xs[k] = std::sin(0.01f * float(k + trial * 31));
    engine.run(0);
    for (unsigned r = 0; r < numRows; ++r) {
      double ref = 0.0;
      for (unsigned k = 0; k < numCols; ++k)
        ref += double(a[r * numCols + k]) * double(xs[k]);
      double err = std::fabs(ref - double(ys[r]));
      worst = err > worst ? err : worst;
      ok = ok && err <= 1e-3 * (1.0 + std::fabs(ref));
    }
  }
  std::cout << "y = A x for A " << numRows << " x " << numCols << " on " << numTiles
            << " tiles; largest error vs double-precision host: " << worst << "\n";
  engine.printProfileSummary(std::cout);
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
