// Sample 3: a custom vertex in its own codelet file, compiled at run time with
// graph.addCodelets. Four vertices on four tiles each sum one row of a 4x8
// tensor; a fifth sums the four partial sums.
//
// Build with Poplar or Aspen:  g++ -std=c++11 custom_vertex.cpp -lpoplar
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

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
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());

  // Compiled now, for the host, with the same flags Poplar programs pass.
  graph.addCodelets(std::string(ASPEN_SAMPLE_DIR) + "/sum_codelets.cpp", CodeletFileType::Auto, "-O2");

  Tensor in = graph.addVariable(FLOAT, {4, 8}, "in");
  Tensor partial = graph.addVariable(FLOAT, {4}, "partial");
  Tensor total = graph.addVariable(FLOAT, {}, "total");

  ComputeSet rows = graph.addComputeSet("rowSums");
  for (unsigned r = 0; r < 4; ++r) {
    graph.setTileMapping(in[r], r);
    graph.setTileMapping(partial[r], r);
    VertexRef v = graph.addVertex(rows, "SumVertex", {{"in", in[r]}, {"out", partial[r]}});
    graph.setTileMapping(v, r);
    graph.setPerfEstimate(v, 20 + 8);
  }
  ComputeSet finalSum = graph.addComputeSet("totalSum");
  graph.setTileMapping(total, 0);
  VertexRef v = graph.addVertex(finalSum, "SumVertex", {{"in", partial}, {"out", total}});
  graph.setTileMapping(v, 0);

  graph.createHostWrite("in", in);
  graph.createHostRead("total", total);
  Sequence prog({Execute(rows), PrintTensor("partial sums", partial), Execute(finalSum)});

  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> data(32);
  float expected = 0.0f;
  for (unsigned i = 0; i < 32; ++i) {
    data[i] = 0.5f * float(i);
    expected += data[i];
  }
  engine.writeTensor("in", data.data(), data.data() + data.size());
  engine.run(0);
  float result = 0.0f;
  engine.readTensor("total", &result, &result + 1);
  std::cout << "total = " << result << " (expected " << expected << ")\n";
  const bool ok = result == expected;
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
