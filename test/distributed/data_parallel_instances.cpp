// Data-parallel training written for popdist: linear regression by gradient descent, the dataset
// sharded over every replica of every instance, gradients averaged with
// gcl::allReduceCrossReplica(MEAN). After every step each instance checks that its replicas hold
// the same weights and that they match full-batch gradient descent on the host (double), and
// instance 0 prints the weights' bytes. Run as 1x4, 2x2 and 4x1 (test/distributed/
// data_parallel.sh), the printed weights must be identical after every step.
#include <gcl/Collectives.hpp>
#include <popdist/popdist_poplar.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/codelets.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

namespace {

constexpr std::size_t features = 8, rowsPerReplica = 16, steps = 6;
constexpr float learningRate = 0.05f;

// Row r of the global dataset: x in [-1, 1), y = x . trueWeights + a small offset.
void row(std::size_t r, float *x, float &y) {
  y = 0.25f;
  for (std::size_t f = 0; f < features; ++f) {
    x[f] = static_cast<float>(((r * 37 + f * 11) % 23)) / 11.5f - 1.0f;
    y += x[f] * (static_cast<float>(f) - 3.5f) * 0.5f;
  }
}

} // namespace

int main() {
  const unsigned local = popdist::getNumLocalReplicas();
  const unsigned total = popdist::getNumTotalReplicas();
  const unsigned first = popdist::getReplicaIndexOffset();
  const bool speaker = popdist::getInstanceIndex() == 0;

  auto manager = poplar::DeviceManager::createDeviceManager();
  poplar::Device device = manager.getDevice(popdist::getDeviceId());
  if (!device.attach()) {
    std::cerr << "cannot attach device " << device.getId() << "\n";
    return 1;
  }
  poplar::Graph graph(device.getTarget(), poplar::replication_factor(local));
  popops::addCodelets(graph);
  poplin::addCodelets(graph);

  auto x = graph.addVariable(poplar::FLOAT, {rowsPerReplica, features}, "x");
  auto y = graph.addVariable(poplar::FLOAT, {rowsPerReplica, 1}, "y");
  auto w = graph.addVariable(poplar::FLOAT, {features, 1}, "w");
  graph.setTileMapping(x, 0);
  graph.setTileMapping(y, 0);
  graph.setTileMapping(w, 1);
  graph.createHostWrite("x", x);
  graph.createHostWrite("y", y);
  graph.createHostWrite("w", w);
  graph.createHostRead("w", w);

  // One step: grad = x^T (x w - y) / rows, averaged over every replica; w -= lr * grad.
  poplar::program::Sequence step;
  auto err = popops::sub(graph, poplin::matMul(graph, x, w, step, "pred"), y, step, "err");
  auto grad = poplin::matMul(graph, x.transpose(), err, step, "grad");
  auto mean = gcl::allReduceCrossReplica(graph, grad, gcl::CollectiveOperator::MEAN, step, "meanGrad");
  popops::scaledSubtractFrom(graph, w, mean, learningRate / rowsPerReplica, step, "update");

  poplar::Engine engine(graph, step);
  engine.load(device);
  std::vector<float> xs(local * rowsPerReplica * features), ys(local * rowsPerReplica);
  for (unsigned r = 0; r < local; ++r)
    for (std::size_t i = 0; i < rowsPerReplica; ++i)
      row((first + r) * rowsPerReplica + i, &xs[(r * rowsPerReplica + i) * features],
          ys[r * rowsPerReplica + i]);
  engine.writeTensor("x", xs.data(), xs.data() + xs.size());
  engine.writeTensor("y", ys.data(), ys.data() + ys.size());
  std::vector<float> w0(features, 0.0f);
  engine.writeTensor("w", w0.data(), w0.data() + w0.size());

  // Host reference: full-batch gradient descent over every replica's rows, in double.
  const std::size_t rows = total * rowsPerReplica;
  std::vector<double> wRef(features, 0.0);
  std::vector<float> xr(features);
  int failures = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    popdist::run(engine, 0);
    std::vector<double> g(features, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      float yr;
      row(r, xr.data(), yr);
      double pred = 0;
      for (std::size_t f = 0; f < features; ++f)
        pred += xr[f] * wRef[f];
      for (std::size_t f = 0; f < features; ++f)
        g[f] += xr[f] * (pred - yr);
    }
    for (std::size_t f = 0; f < features; ++f)
      wRef[f] -= learningRate * g[f] / static_cast<double>(rows);

    std::vector<float> ws(local * features);
    engine.readTensor("w", ws.data(), ws.data() + ws.size());
    for (unsigned r = 1; r < local; ++r)
      if (std::memcmp(ws.data(), ws.data() + r * features, features * sizeof(float)) != 0) {
        ++failures;
        std::cerr << "step " << s << ": replica " << first + r << " holds other weights than replica "
                  << first << "\n";
      }
    for (std::size_t f = 0; f < features; ++f)
      if (std::fabs(ws[f] - wRef[f]) > 1e-4 * (1 + std::fabs(wRef[f]))) {
        ++failures;
        std::cerr << "step " << s << ": w[" << f << "] = " << ws[f] << ", host " << wRef[f] << "\n";
      }
    if (speaker) {
      std::printf("step %zu weights:", s);
      for (std::size_t f = 0; f < features; ++f) {
        std::uint32_t bits;
        std::memcpy(&bits, &ws[f], 4);
        std::printf(" %08x", bits);
      }
      std::printf("\n");
    }
  }
  if (speaker || failures)
    std::cout << (failures ? "FAILED" : "PASSED") << ": " << popdist::getNumInstances() << " instances x "
              << local << " replicas, " << steps << " steps" << std::endl;
  return failures == 0 ? 0 : 1;
}
