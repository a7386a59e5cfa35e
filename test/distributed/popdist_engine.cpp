// A program written for popdist, run as several instances: each gets a device for its local
// replicas, builds its graph, computes its share of a dot product on the simulated IPU, and the
// instances sum their shares with a host all-reduce. Checked against a plain host loop.
#include <popdist/collectives.hpp>
#include <popdist/popdist_poplar.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main() {
  const unsigned instances = popdist::getNumInstances();
  const unsigned me = popdist::getInstanceIndex();
  constexpr std::size_t total = 4096;
  const std::size_t share = total / instances;

  std::vector<float> a(total), b(total);
  for (std::size_t i = 0; i < total; ++i) {
    a[i] = static_cast<float>((i * 7) % 13) - 6.0f;
    b[i] = static_cast<float>((i * 5) % 11) * 0.25f;
  }

  auto manager = poplar::DeviceManager::createDeviceManager();
  poplar::Device device = manager.getDevice(popdist::getDeviceId());
  if (!device.attach()) {
    std::cerr << "instance " << me << ": cannot attach device " << device.getId() << "\n";
    return 1;
  }
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  auto x = graph.addVariable(poplar::FLOAT, {share}, "x");
  auto y = graph.addVariable(poplar::FLOAT, {share}, "y");
  for (unsigned t = 0; t < 4; ++t) {
    graph.setTileMapping(x.slice(t * share / 4, (t + 1) * share / 4), t);
    graph.setTileMapping(y.slice(t * share / 4, (t + 1) * share / 4), t);
  }
  poplar::program::Sequence prog;
  auto product = popops::mul(graph, x, y, prog, "product");
  auto dot = popops::reduce(graph, product, {0}, popops::ReduceParams(popops::Operation::ADD), prog, "dot");
  graph.createHostWrite("x", x);
  graph.createHostWrite("y", y);
  graph.createHostRead("dot", dot);

  poplar::Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("x", a.data() + me * share, a.data() + (me + 1) * share);
  engine.writeTensor("y", b.data() + me * share, b.data() + (me + 1) * share);
  popdist::run(engine, 0);
  std::vector<double> partial(1);
  float local = 0;
  engine.readTensor("dot", &local, &local + 1);
  partial[0] = local;
  popdist::collectives::allReduceSum(partial);

  double reference = 0;
  for (std::size_t i = 0; i < total; ++i)
    reference += static_cast<double>(a[i]) * b[i];
  const bool ok = std::fabs(partial[0] - reference) <= 1e-3 * std::fabs(reference) + 1e-3;
  std::cout << "instance " << me << ": dot " << partial[0] << " reference " << reference
            << (ok ? " ok" : " MISMATCH") << std::endl;
  return ok ? 0 : 1;
}
