// Copyright (c) Aspen contributors.
// A Poplar client: C = A x B with poplin, then C + C with popops, checked on the host.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main() {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  popops::addCodelets(graph);

  const std::size_t m = 3, k = 4, n = 2;
  poplar::Tensor a = graph.addVariable(poplar::FLOAT, {m, k}, "a");
  poplar::Tensor b = graph.addVariable(poplar::FLOAT, {k, n}, "b");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 1);
  poplar::program::Sequence prog;
  poplar::Tensor c = poplin::matMul(graph, a, b, prog, "c");
  poplar::Tensor d = popops::add(graph, c, c, prog, "d");
  graph.createHostWrite("a", a);
  graph.createHostWrite("b", b);
  graph.createHostRead("d", d);

  std::vector<float> ha(m * k), hb(k * n), hd(m * n);
  for (std::size_t i = 0; i < ha.size(); ++i)
    ha[i] = 0.5f * static_cast<float>(i) - 1.0f;
  for (std::size_t i = 0; i < hb.size(); ++i)
    hb[i] = 0.25f * static_cast<float>(i) + 0.5f;
  poplar::Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("a", ha.data(), ha.data() + ha.size());
  engine.writeTensor("b", hb.data(), hb.data() + hb.size());
  engine.run(0);
  engine.readTensor("d", hd.data(), hd.data() + hd.size());
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float ref = 0;
      for (std::size_t l = 0; l < k; ++l)
        ref += ha[i * k + l] * hb[l * n + j];
      if (std::fabs(hd[i * n + j] - 2 * ref) > 1e-4f * (1 + std::fabs(ref))) {
        std::cerr << "mismatch at " << i << "," << j << ": " << hd[i * n + j] << " vs " << 2 * ref << "\n";
        return 1;
      }
    }
  std::cout << "client OK\n";
  return 0;
}
