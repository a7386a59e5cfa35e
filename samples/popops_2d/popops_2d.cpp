// Sample 2: operations from popops on 2-D tensors — add, a transposed view,
// flatten — printed on the device with PrintTensor.
//
// Build with Poplar or Aspen:
//   g++ -std=c++11 popops_2d.cpp -lpoplar -lpopops -lpoputil
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <cstdlib>
#include <iostream>
#include <vector>

using namespace poplar;
using namespace poplar::program;

int main() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);

  Tensor a = graph.addConstant<float>(FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6}, "a");
  Tensor b = graph.addConstant<float>(FLOAT, {3, 2}, {10, 40, 20, 50, 30, 60}, "b");
  poputil::mapTensorLinearly(graph, a);
  poputil::mapTensorLinearly(graph, b);

  Sequence prog;
  // b's transpose is a view: no data moves until the addition reads it.
  Tensor sum = popops::add(graph, a, b.transpose(), prog, "a+bT");
  Tensor flat = sum.flatten();
  Tensor doubled = popops::mul(graph, flat, 2.0f, prog, "2*flat");
  prog.add(PrintTensor("a", a));
  prog.add(PrintTensor("sum", sum));
  prog.add(PrintTensor("doubled", doubled));
  graph.createHostRead("doubled", doubled);

  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);

  std::vector<float> result(6);
  engine.readTensor("doubled", result.data(), result.data() + result.size());
  const float av[6] = {1, 2, 3, 4, 5, 6};
  const float bt[6] = {10, 20, 30, 40, 50, 60};
  bool ok = true;
  for (unsigned i = 0; i < 6; ++i)
    ok = ok && result[i] == 2.0f * (av[i] + bt[i]);
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
