// Sample: data-parallel training on 4 replicas. The softmax-regression
// classifier of train_classifier, with each step's batch of 32 split over 4
// replicas of one IPU each: every replica streams its own 8 samples, computes
// its gradients, and gcl::allReduceCrossReplica adds them across replicas
// before the SGD update, so every replica applies the same update. After every
// step the sample checks that the 4 replicas hold identical weights, and that
// they equal (to float rounding) a single replica trained with the whole
// batch of 32.
//
// Build with Poplar or Aspen:
//   g++ -std=c++11 data_parallel_training.cpp -lpoplar -lpoplin -lpopnn -lpopops -lpoputil -lgcl
#include <gcl/Collectives.hpp>
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
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

const std::size_t features = 16, classes = 4, globalBatch = 32, steps = 24;
const float learningRate = 0.05f;

/// One training step on `batch` samples per replica; with replication the
/// gradients are summed across the replicas before the update, which is
/// scaled by the global batch either way.
Sequence buildStep(Graph &graph, std::size_t batch) {
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);
  Tensor weights = graph.addVariable(FLOAT, {features, classes}, "weights");
  Tensor bias = graph.addVariable(FLOAT, {classes}, "bias");
  poputil::mapTensorLinearly(graph, weights);
  graph.setTileMapping(bias, 0);
  graph.setInitialValue(weights, std::vector<float>(features * classes, 0.0f));
  graph.setInitialValue(bias, std::vector<float>(classes, 0.0f));
  Tensor x = poplin::createMatMulInputLHS(graph, FLOAT, {batch, features}, {features, classes}, "x");
  Tensor y = graph.addVariable(UNSIGNED_INT, {batch}, "labels");
  Tensor loss = graph.addVariable(FLOAT, {batch}, "loss");
  Tensor deltas = graph.addVariable(FLOAT, {batch, classes}, "deltas");
  Tensor numCorrect = graph.addVariable(UNSIGNED_INT, {1}, "numCorrect");
  poputil::mapTensorLinearly(graph, y);
  poputil::mapTensorLinearly(graph, loss);
  poputil::mapTensorLinearly(graph, deltas);
  graph.setTileMapping(numCorrect, 0);
  DataStream xIn = graph.addHostToDeviceFIFO("x", FLOAT, batch * features);
  DataStream yIn = graph.addHostToDeviceFIFO("labels", UNSIGNED_INT, batch);
  graph.createHostRead("weights", weights);
  graph.createHostRead("bias", bias);

  Sequence step;
  step.add(Copy(xIn, x));
  step.add(Copy(yIn, y));
  Tensor logits = poplin::matMul(graph, x, weights, step, "logits");
  popops::addInPlace(graph, logits, bias.expand({0}).broadcast(unsigned(batch), 0), step, "addBias");
  Tensor probs = popnn::nonLinearity(graph, popnn::NonLinearityType::SOFTMAX, logits, step, "softmax");
  step.add(popnn::calcLoss(graph, probs, y, loss, deltas, numCorrect, popnn::CROSS_ENTROPY_LOSS, "loss"));
  Tensor gradW = poplin::matMul(graph, x.transpose(), deltas, step, "gradW");
  Tensor gradB = popops::reduce(graph, deltas, {0}, popops::Operation::ADD, step, "gradB");
  if (graph.getReplicationFactor() > 1) {
    // The data-parallel part: every replica gets the sum of all replicas' gradients.
    gcl::allReduceInPlaceCrossReplica(graph, gradW, gcl::CollectiveOperator::ADD, step, "allReduceGradW");
    gcl::allReduceInPlaceCrossReplica(graph, gradB, gcl::CollectiveOperator::ADD, step, "allReduceGradB");
  }
  popops::scaledAddTo(graph, weights, gradW, -learningRate / globalBatch, step, "sgdW");
  popops::scaledAddTo(graph, bias, gradB, -learningRate / globalBatch, step, "sgdB");
  return step;
}

} // namespace

int main() {
  const unsigned replicas = 4;
  const std::size_t localBatch = globalBatch / replicas;

  // Synthetic data: each class is a Gaussian blob around its own centre.
  std::mt19937 rng(4321);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> centres(classes * features);
  for (auto &c : centres)
    c = 0.8f * noise(rng);
  const std::size_t samples = globalBatch * steps;
  std::vector<float> data(samples * features);
  std::vector<unsigned> labels(samples);
  for (std::size_t s = 0; s < samples; ++s) {
    labels[s] = unsigned((s * 7) % classes);
    for (std::size_t f = 0; f < features; ++f)
      data[s * features + f] = centres[labels[s] * features + f] + noise(rng);
  }
  // Replica r's stream: samples [step * 32 + r * 8, +8) of every step, back to back.
  std::vector<std::vector<float>> replicaData(replicas);
  std::vector<std::vector<unsigned>> replicaLabels(replicas);
  for (std::size_t s = 0; s < steps; ++s)
    for (unsigned r = 0; r < replicas; ++r)
      for (std::size_t i = 0; i < localBatch; ++i) {
        const std::size_t sample = s * globalBatch + r * localBatch + i;
        replicaLabels[r].push_back(labels[sample]);
        replicaData[r].insert(replicaData[r].end(), data.begin() + sample * features,
                              data.begin() + (sample + 1) * features);
      }

  // 4 replicas of one 16-tile IPU each, on a 4-IPU device.
  IPUModel model("ipu2");
  model.tilesPerIPU = 16;
  model.numIPUs = replicas;
  Device device = model.createDevice();
  Graph graph(device.getTarget(), replication_factor(replicas));
  Sequence step = buildStep(graph, localBatch);
  Engine engine(graph, step);
  engine.load(device);
  for (unsigned r = 0; r < replicas; ++r) {
    engine.connectStream("x", r, replicaData[r].data(), replicaData[r].data() + replicaData[r].size());
    engine.connectStream("labels", r, replicaLabels[r].data(),
                         replicaLabels[r].data() + replicaLabels[r].size());
  }

  // The reference: one replica with the whole batch of 32.
  model.numIPUs = 1;
  Device single = model.createDevice();
  Graph singleGraph(single.getTarget());
  Sequence singleStep = buildStep(singleGraph, globalBatch);
  Engine reference(singleGraph, singleStep);
  reference.load(single);
  reference.connectStream("x", data.data(), data.data() + data.size());
  reference.connectStream("labels", labels.data(), labels.data() + labels.size());

  const std::size_t nw = features * classes;
  bool identical = true;
  double worst = 0.0;
  for (std::size_t s = 0; s < steps; ++s) {
    engine.run(0);
    reference.run(0);
    std::vector<float> w(replicas * nw), b(replicas * classes), refW(nw), refB(classes);
    engine.readTensor("weights", w.data(), w.data() + w.size()); // every replica's copy
    engine.readTensor("bias", b.data(), b.data() + b.size());
    reference.readTensor("weights", refW.data(), refW.data() + refW.size());
    reference.readTensor("bias", refB.data(), refB.data() + refB.size());
    for (unsigned r = 1; r < replicas; ++r) {
      identical = identical && std::memcmp(&w[r * nw], &w[0], nw * sizeof(float)) == 0 &&
                  std::memcmp(&b[r * classes], &b[0], classes * sizeof(float)) == 0;
    }
    double scale = 1e-3;
    for (float v : refW)
      scale = std::max(scale, double(std::fabs(v)));
    double diff = 0.0;
    for (std::size_t i = 0; i < nw; ++i)
      diff = std::max(diff, double(std::fabs(w[i] - refW[i])));
    for (std::size_t c = 0; c < classes; ++c)
      diff = std::max(diff, double(std::fabs(b[c] - refB[c])));
    worst = std::max(worst, diff / scale);
    if (s % 6 == 5)
      std::cout << "step " << s + 1 << ": replicas identical " << (identical ? "yes" : "NO")
                << ", largest difference from the single-replica run " << diff << " (relative "
                << diff / scale << ")\n";
  }
  const bool ok = identical && worst < 1e-5;
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
