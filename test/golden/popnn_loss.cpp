// Copyright (c) Aspen contributors.
// Golden tests of popnn (PopLibs <popnn/Loss.hpp>): calcLoss for sum-squared
// and cross-entropy losses with and without numCorrect (which accumulates),
// calcAccuracy, argMax/argMin and maxAndArgMax, against host loops.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popnn/Loss.hpp>
#include <popnn/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::requireClose;
using aspen::test::TestDevice;
using aspen::test::TestTarget;

namespace {

/// Rows of positive values normalised to sum to 1, each with a unique maximum.
std::vector<float> randomProbabilities(std::size_t rows, std::size_t classes, unsigned seed, const Type &type,
                                       const Target &target) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(0.05f, 1.0f);
  std::vector<float> p(rows * classes);
  for (std::size_t r = 0; r < rows; ++r) {
    float sum = 0;
    for (std::size_t c = 0; c < classes; ++c)
      sum += p[r * classes + c] = dist(gen);
    p[r * classes + (r * 7) % classes] += 1.0f; // a clear winner
    sum += 1.0f;
    for (std::size_t c = 0; c < classes; ++c)
      p[r * classes + c] = aspen::test::roundTo(type, target, p[r * classes + c] / sum);
  }
  return p;
}

std::size_t argMaxOf(const std::vector<float> &v, std::size_t row, std::size_t len, bool min = false) {
  const auto begin = v.begin() + row * len, end = begin + len;
  return std::size_t((min ? std::min_element(begin, end) : std::max_element(begin, end)) - begin);
}

} // namespace

TEST_CASE("popnn_loss: calcLoss matches host loops and numCorrect accumulates", "[popnn]") {
  const std::size_t batch = 9, classes = 13;
  for (TestTarget kind : aspen::test::allTargets()) {
    DYNAMIC_SECTION("on the " << aspen::test::targetName(kind)) {
      TestDevice dev(kind);
      Graph graph(dev.getTarget());
      popnn::addCodelets(graph);
      const Target &target = graph.getTarget();
      program::Sequence prog;
      for (const Type &type : {FLOAT, HALF}) {
        for (popnn::LossType lossType : {popnn::SUM_SQUARED_LOSS, popnn::CROSS_ENTROPY_LOSS}) {
          const std::string id = type.toString().str() + std::to_string(int(lossType));
          Tensor probs = graph.addVariable(type, {batch, classes}, "probs" + id);
          Tensor labels = graph.addVariable(lossType == popnn::SUM_SQUARED_LOSS ? UNSIGNED_INT : INT, {batch},
                                            "labels" + id);
          Tensor loss = graph.addVariable(type, {batch}, "loss" + id);
          Tensor deltas = graph.addVariable(type, {batch, classes}, "deltas" + id);
          Tensor numCorrect = graph.addVariable(UNSIGNED_INT, {1}, "numCorrect" + id);
          for (const Tensor &t : {probs, labels, loss, deltas})
            poputil::mapTensorLinearly(graph, t);
          graph.setTileMapping(numCorrect, target.getNumTiles() - 1);
          graph.createHostWrite("probs" + id, probs);
          graph.createHostWrite("labels" + id, labels);
          graph.createHostWrite("numCorrect" + id, numCorrect);
          graph.createHostRead("numCorrect" + id, numCorrect);
          graph.createHostRead("loss" + id, loss);
          graph.createHostRead("deltas" + id, deltas);
          prog.add(popnn::calcLoss(graph, probs, labels, loss, deltas, numCorrect, lossType, "loss" + id));
        }
      }
      auto engine = dev.createEngine(graph, {prog});
      std::map<std::string, std::vector<float>> probsOf;
      std::map<std::string, std::vector<unsigned>> labelsOf;
      std::map<std::string, unsigned> correctOf;
      for (const Type &type : {FLOAT, HALF}) {
        for (popnn::LossType lossType : {popnn::SUM_SQUARED_LOSS, popnn::CROSS_ENTROPY_LOSS}) {
          const std::string id = type.toString().str() + std::to_string(int(lossType));
          probsOf[id] = randomProbabilities(batch, classes, 5 + int(lossType), type, target);
          std::vector<unsigned> labels(batch);
          unsigned correct = 0;
          for (std::size_t b = 0; b < batch; ++b) {
            // About half the labels agree with the arg-max; the last one is masked.
            labels[b] = b % 2 ? unsigned(argMaxOf(probsOf[id], b, classes)) : unsigned((b * 5 + 1) % classes);
            if (b == batch - 1)
              labels[b] = ~0u;
            correct += labels[b] == argMaxOf(probsOf[id], b, classes);
          }
          labelsOf[id] = labels;
          correctOf[id] = correct;
          aspen::test::writeFloats(*engine, "probs" + id, type, target, probsOf[id]);
          engine->writeTensor("labels" + id, labels.data(), labels.data() + labels.size());
          const unsigned start = 100;
          engine->writeTensor("numCorrect" + id, &start, &start + 1);
        }
      }
      engine->run(0);
      engine->run(0);
      for (const Type &type : {FLOAT, HALF}) {
        const double tolerance = type == HALF ? 2e-3 : 1e-6;
        for (popnn::LossType lossType : {popnn::SUM_SQUARED_LOSS, popnn::CROSS_ENTROPY_LOSS}) {
          const std::string id = type.toString().str() + std::to_string(int(lossType));
          const auto &p = probsOf[id];
          const auto &labels = labelsOf[id];
          std::vector<double> loss(batch, 0.0), deltas(batch * classes, 0.0);
          for (std::size_t b = 0; b < batch; ++b) {
            if (labels[b] == ~0u)
              continue; // masked: no loss, no gradient
            for (std::size_t c = 0; c < classes; ++c) {
              const double onehot = c == labels[b] ? 1.0 : 0.0;
              deltas[b * classes + c] = p[b * classes + c] - onehot;
              if (lossType == popnn::SUM_SQUARED_LOSS)
                loss[b] += 0.5 * (p[b * classes + c] - onehot) * (p[b * classes + c] - onehot);
            }
            if (lossType == popnn::CROSS_ENTROPY_LOSS)
              loss[b] = -std::log(double(p[b * classes + labels[b]]));
          }
          requireClose(aspen::test::readFloats(*engine, "loss" + id, type, target, batch), loss, tolerance,
                       tolerance, "loss " + id);
          requireClose(aspen::test::readFloats(*engine, "deltas" + id, type, target, batch * classes), deltas,
                       tolerance, tolerance, "deltas " + id);
          unsigned numCorrect = 0;
          engine->readTensor("numCorrect" + id, &numCorrect, &numCorrect + 1);
          CHECK(numCorrect == 100 + 2 * correctOf[id]); // added to, on each of the two runs
        }
      }
    }
  }
}

TEST_CASE("popnn_loss: scaled cross-entropy, calcAccuracy and arg-max/arg-min", "[popnn]") {
  const std::size_t batch = 6, classes = 10;
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  popnn::addCodelets(graph);
  const Target &target = graph.getTarget();
  Tensor probs = graph.addVariable(FLOAT, {batch, classes}, "probs");
  Tensor labels = graph.addVariable(UNSIGNED_INT, {batch}, "labels");
  Tensor loss = graph.addVariable(FLOAT, {batch}, "loss");
  Tensor deltas = graph.addVariable(FLOAT, {batch, classes}, "deltas");
  Tensor numCorrect = graph.addVariable(UNSIGNED_INT, {}, "numCorrect");
  Tensor deltasScale = graph.addConstant<float>(FLOAT, {}, {8.0f}, "deltasScale");
  Tensor outScale = graph.addConstant<float>(FLOAT, {}, {1000.0f}, "outScale");
  for (const Tensor &t : {probs, labels, loss, deltas})
    poputil::mapTensorLinearly(graph, t);
  for (const Tensor &t : {numCorrect, deltasScale, outScale})
    graph.setTileMapping(t, 2);
  program::Sequence prog;
  prog.add(popnn::calcLoss(graph, probs, labels, loss, deltas, deltasScale, outScale,
                           popnn::CROSS_ENTROPY_LOSS, "scaledLoss"));
  prog.add(popnn::calcAccuracy(graph, probs, labels, numCorrect, "accuracy"));
  Tensor maxIndex = popnn::argMax(graph, probs, prog, "argMax");
  Tensor minIndex = popnn::argMin(graph, probs, prog, "argMin");
  auto maxAndIndex = popnn::maxAndArgMax(graph, probs, prog, "maxAndArgMax");
  auto minAndIndex = popnn::minAndArgMin(graph, probs, prog, "minAndArgMin");
  REQUIRE(maxIndex.elementType() == UNSIGNED_INT);
  REQUIRE(maxIndex.shape() == std::vector<std::size_t>{batch});
  graph.createHostWrite("probs", probs);
  graph.createHostWrite("labels", labels);
  graph.createHostWrite("numCorrect", numCorrect);
  graph.createHostRead("numCorrect", numCorrect);
  graph.createHostRead("loss", loss);
  graph.createHostRead("deltas", deltas);
  graph.createHostRead("maxIndex", maxIndex);
  graph.createHostRead("minIndex", minIndex);
  graph.createHostRead("maxValue", maxAndIndex.first);
  graph.createHostRead("minValue", minAndIndex.first);
  graph.createHostRead("minIndex2", minAndIndex.second);
  auto engine = dev.createEngine(graph, {prog});
  // Probabilities scaled by 1000, as from SOFTMAX_SCALED with a scale of 1000.
  auto p = randomProbabilities(batch, classes, 9, FLOAT, target);
  std::vector<float> scaled(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    scaled[i] = 1000.0f * p[i];
  std::vector<unsigned> labelValues = {0, 1, 2, 3, 4, 5};
  labelValues[3] = unsigned(argMaxOf(p, 3, classes));
  labelValues[4] = unsigned(argMaxOf(p, 4, classes));
  unsigned zero = 0;
  aspen::test::writeFloats(*engine, "probs", FLOAT, target, scaled);
  engine->writeTensor("labels", labelValues.data(), labelValues.data() + batch);
  engine->writeTensor("numCorrect", &zero, &zero + 1);
  engine->run(0);
  std::vector<double> expectedLoss(batch), expectedDeltas(batch * classes);
  unsigned expectedCorrect = 0;
  for (std::size_t b = 0; b < batch; ++b) {
    expectedLoss[b] = -std::log(double(p[b * classes + labelValues[b]]));
    for (std::size_t c = 0; c < classes; ++c)
      expectedDeltas[b * classes + c] = 8.0 * (p[b * classes + c] - (c == labelValues[b] ? 1.0 : 0.0));
    expectedCorrect += labelValues[b] == argMaxOf(p, b, classes);
  }
  requireClose(aspen::test::readFloats(*engine, "loss", FLOAT, target, batch), expectedLoss, 1e-5, 1e-5,
               "scaled loss");
  requireClose(aspen::test::readFloats(*engine, "deltas", FLOAT, target, batch * classes), expectedDeltas,
               1e-5, 1e-5, "scaled deltas");
  unsigned numCorrectValue = 0;
  engine->readTensor("numCorrect", &numCorrectValue, &numCorrectValue + 1);
  CHECK(numCorrectValue == expectedCorrect);
  std::vector<unsigned> maxIdx(batch), minIdx(batch);
  engine->readTensor("maxIndex", maxIdx.data(), maxIdx.data() + batch);
  engine->readTensor("minIndex", minIdx.data(), minIdx.data() + batch);
  const auto maxValues = aspen::test::readFloats(*engine, "maxValue", FLOAT, target, batch);
  const auto minValues = aspen::test::readFloats(*engine, "minValue", FLOAT, target, batch);
  std::vector<unsigned> minIdx2(batch);
  engine->readTensor("minIndex2", minIdx2.data(), minIdx2.data() + batch);
  for (std::size_t b = 0; b < batch; ++b) {
    CHECK(maxIdx[b] == argMaxOf(scaled, b, classes));
    CHECK(minIdx[b] == argMaxOf(scaled, b, classes, true));
    CHECK(maxValues[b] == scaled[b * classes + maxIdx[b]]);
    CHECK(minIdx2[b] == minIdx[b]);
    CHECK(minValues[b] ==
          *std::min_element(scaled.begin() + b * classes, scaled.begin() + (b + 1) * classes));
  }
}
