// Copyright (c) Aspen contributors.
// Uses poplin only, linked as `-lpoplar -lpoputil -lpoplin`: libpoplin brings libpopops.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main() {
  poplar::IPUModel model;
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  poplar::Tensor a = graph.addVariable(poplar::FLOAT, {2, 2}, "a");
  poplar::Tensor b = graph.addVariable(poplar::FLOAT, {2, 2}, "b");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 1);
  poplar::program::Sequence prog;
  poplar::Tensor c = poplin::matMul(graph, a, b, prog);
  graph.createHostWrite("a", a);
  graph.createHostWrite("b", b);
  graph.createHostRead("c", c);
  poplar::Engine engine(graph, prog);
  engine.load(device);
  const std::vector<float> ha{1, 2, 3, 4}, hb{5, 6, 7, 8};
  std::vector<float> hc(4);
  engine.writeTensor("a", ha.data(), ha.data() + 4);
  engine.writeTensor("b", hb.data(), hb.data() + 4);
  engine.run(0);
  engine.readTensor("c", hc.data(), hc.data() + 4);
  const std::vector<float> ref{1 * 5 + 2 * 7, 1 * 6 + 2 * 8, 3 * 5 + 4 * 7, 3 * 6 + 4 * 8};
  for (std::size_t i = 0; i < 4; ++i)
    if (std::fabs(hc[i] - ref[i]) > 1e-5f) {
      std::cerr << "mismatch at " << i << "\n";
      return 1;
    }
  std::cout << "matmul OK\n";
  return 0;
}
