// Sample 9: train a small classifier — softmax regression over 4 classes of
// synthetic 16-dimensional data — entirely on the device. Each run of the
// program is one epoch: Repeat over the batches, each batch streamed in, a
// forward pass (matMul, softmax), the loss and its gradient (calcLoss), and an
// SGD update (scaledAddTo). Loss and accuracy stream out and improve.
//
// Build with Poplar or Aspen:
//   g++ -std=c++11 train_classifier.cpp -lpoplar -lpoplin -lpopnn -lpopops -lpoputil
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <vector>

using namespace poplar;
using namespace poplar::program;

int main() {
  const std::size_t features = 16, classes = 4, batch = 32, batchesPerEpoch = 16, epochs = 8;
  const std::size_t samples = batch * batchesPerEpoch;
  const float learningRate = 0.02f;

  // Synthetic data: each class is a Gaussian blob around its own centre.
  std::mt19937 rng(1234);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> centres(classes * features);
  for (auto &c : centres)
    c = 0.8f * noise(rng);
  std::vector<float> data(samples * features);
  std::vector<unsigned> labels(samples);
  for (std::size_t s = 0; s < samples; ++s) {
    labels[s] = unsigned(s % classes);
    for (std::size_t f = 0; f < features; ++f)
      data[s * features + f] = centres[labels[s] * features + f] + noise(rng);
  }

  IPUModel model("ipu2");
  model.tilesPerIPU = 16;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);

  Tensor weights = graph.addVariable(FLOAT, {features, classes}, "weights");
  Tensor bias = graph.addVariable(FLOAT, {classes}, "bias");
  poputil::mapTensorLinearly(graph, weights);
  graph.setTileMapping(bias, 0);
  Tensor x = poplin::createMatMulInputLHS(graph, FLOAT, {batch, features}, {features, classes}, "x");
  Tensor y = graph.addVariable(UNSIGNED_INT, {batch}, "labels");
  poputil::mapTensorLinearly(graph, y);
  Tensor loss = graph.addVariable(FLOAT, {batch}, "loss");
  Tensor deltas = graph.addVariable(FLOAT, {batch, classes}, "deltas");
  poputil::mapTensorLinearly(graph, loss);
  poputil::mapTensorLinearly(graph, deltas);
  Tensor numCorrect = graph.addVariable(UNSIGNED_INT, {1}, "numCorrect");
  Tensor epochLoss = graph.addVariable(FLOAT, {1}, "epochLoss");
  graph.setTileMapping(numCorrect, 0);
  graph.setTileMapping(epochLoss, 0);
  graph.setInitialValue(weights, std::vector<float>(features * classes, 0.0f));
  graph.setInitialValue(bias, std::vector<float>(classes, 0.0f));

  DataStream xIn = graph.addHostToDeviceFIFO("x", FLOAT, batch * features);
  DataStream yIn = graph.addHostToDeviceFIFO("labels", UNSIGNED_INT, batch);
  DataStream lossOut = graph.addDeviceToHostFIFO("loss", FLOAT, 1);
  DataStream correctOut = graph.addDeviceToHostFIFO("correct", UNSIGNED_INT, 1);

  Sequence step;
  step.add(Copy(xIn, x));
  step.add(Copy(yIn, y));
  Tensor logits = poplin::matMul(graph, x, weights, step, "logits");
  popops::addInPlace(graph, logits, bias.expand({0}).broadcast(batch, 0), step, "addBias");
  Tensor probs = popnn::nonLinearity(graph, popnn::NonLinearityType::SOFTMAX, logits, step, "softmax");
  step.add(popnn::calcLoss(graph, probs, y, loss, deltas, numCorrect, popnn::CROSS_ENTROPY_LOSS, "loss"));
  Tensor gradW = poplin::matMul(graph, x.transpose(), deltas, step, "gradW");
  Tensor gradB = popops::reduce(graph, deltas, {0}, popops::Operation::ADD, step, "gradB");
  Tensor batchLoss = popops::reduce(graph, loss, {0}, popops::Operation::ADD, step, "batchLoss");
  popops::addInPlace(graph, epochLoss, batchLoss.expand({0}), step, "sumLoss");
  popops::scaledAddTo(graph, weights, gradW, -learningRate / batch, step, "sgdW");
  popops::scaledAddTo(graph, bias, gradB, -learningRate / batch, step, "sgdB");

  Sequence epoch;
  popops::zero(graph, numCorrect, epoch, "zeroCorrect");
  popops::zero(graph, epochLoss, epoch, "zeroLoss");
  epoch.add(Repeat(unsigned(batchesPerEpoch), step));
  epoch.add(Copy(epochLoss, lossOut));
  epoch.add(Copy(numCorrect, correctOut));

  Engine engine(graph, epoch);
  engine.load(device);
  std::vector<unsigned> labelStream(labels.begin(), labels.end());
  engine.connectStream("x", data.data(), data.data() + data.size());
  engine.connectStream("labels", labelStream.data(), labelStream.data() + labelStream.size());
  float lossSum = 0.0f;
  unsigned correct = 0;
  engine.connectStream("loss", &lossSum);
  engine.connectStream("correct", &correct);

  // The same training on the host, in double precision, as the reference.
  std::vector<double> hostW(features * classes, 0.0), hostB(classes, 0.0);
  auto hostEpoch = [&]() {
    double epochLossSum = 0.0;
    for (std::size_t first = 0; first < samples; first += batch) {
      std::vector<double> gradW(features * classes, 0.0), gradB(classes, 0.0);
      for (std::size_t s = first; s < first + batch; ++s) {
        std::vector<double> p(classes);
        double largest = -1e300, total = 0.0;
        for (std::size_t c = 0; c < classes; ++c) {
          p[c] = hostB[c];
          for (std::size_t f = 0; f < features; ++f)
            p[c] += double(data[s * features + f]) * hostW[f * classes + c];
          largest = std::max(largest, p[c]);
        }
        for (auto &v : p)
          total += (v = std::exp(v - largest));
        for (std::size_t c = 0; c < classes; ++c) {
          p[c] /= total;
          double delta = p[c] - (c == labels[s] ? 1.0 : 0.0);
          gradB[c] += delta;
          for (std::size_t f = 0; f < features; ++f)
            gradW[f * classes + c] += double(data[s * features + f]) * delta;
        }
        epochLossSum += -std::log(p[labels[s]]);
      }
      for (std::size_t i = 0; i < hostW.size(); ++i)
        hostW[i] -= learningRate / batch * gradW[i];
      for (std::size_t c = 0; c < classes; ++c)
        hostB[c] -= learningRate / batch * gradB[c];
    }
    return epochLossSum / double(samples);
  };

  float firstLoss = 0.0f, lastLoss = 0.0f, lastAccuracy = 0.0f;
  double worstLossError = 0.0;
  for (std::size_t e = 0; e < epochs; ++e) {
    engine.run(0);
    float meanLoss = lossSum / float(samples);
    float accuracy = float(correct) / float(samples);
    double hostLoss = hostEpoch();
    worstLossError = std::max(worstLossError, std::fabs(hostLoss - meanLoss) / hostLoss);
    std::cout << "epoch " << e + 1 << ": loss " << meanLoss << " (host reference " << hostLoss
              << "), accuracy " << 100.0f * accuracy << "%\n";
    if (e == 0)
      firstLoss = meanLoss;
    lastLoss = meanLoss;
    lastAccuracy = accuracy;
  }
  const bool ok = lastLoss < 0.5f * firstLoss && lastAccuracy >= 0.9f && worstLossError < 1e-3;
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
