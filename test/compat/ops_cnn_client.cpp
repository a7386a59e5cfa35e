// Copyright (c) Aspen contributors.
// A client written the way Poplar users write a small CNN training step: only public Poplar
// and PopLibs headers, createInput/createWeights, convolution + addBias + batch norm + relu,
// logSoftmax with only popops' codelets, a one-hot target, a counted loop over the steps,
// and the weight update; the result is checked against a host computation of the same step.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/codelets.hpp>
#include <popnn/BatchNorm.hpp>
#include <popnn/LogSoftmax.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/codelets.hpp>
#include <popops/AllTrue.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Encoding.hpp>
#include <popops/Loop.hpp>
#include <popops/Reduce.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace poplar;
using namespace poplar::program;

TEST_CASE("ops compat: a CNN layer and its weight update, written as a Poplar user would", "[compat]") {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 8;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);

  const std::size_t batch = 2, chans = 3, outChans = 4, size = 5;
  poplin::ConvParams params(FLOAT, batch, {size, size}, {3, 3}, chans, outChans, 1);
  params.inputTransform.paddingLower = {1, 1};
  params.inputTransform.paddingUpper = {1, 1};
  poplin::PlanningCache cache;
  Tensor input = poplin::createInput(graph, params, "input", {}, &cache);
  Tensor weights = poplin::createWeights(graph, params, "weights", {}, &cache);

  Sequence prog;
  Tensor acts = poplin::convolution(graph, input, weights, params, false, prog, "conv", {}, &cache);
  Tensor biases = poplin::createBiases(graph, acts);
  popops::zero(graph, biases, prog);
  poplin::addBias(graph, acts, biases, prog);
  auto stats = popnn::bn::batchNormStatistics(graph, acts, 1e-5f, prog, false);
  Tensor gamma = graph.addConstant(FLOAT, {outChans}, 1.0f);
  Tensor beta = graph.addConstant(FLOAT, {outChans}, 0.0f);
  poputil::mapTensorLinearly(graph, gamma);
  poputil::mapTensorLinearly(graph, beta);
  Tensor normed = popnn::bn::batchNormalise(graph, acts, gamma, beta, stats.first, stats.second, prog).first;
  popnn::reluInPlace(graph, normed, prog);
  // per-image scores {batch, outChans}: mean over the field, then log-softmax
  Tensor scores = popops::reduce(graph, normed, {2, 3}, popops::Operation::ADD, prog);
  Tensor logProbs = popnn::logSoftmax(graph, scores, prog);
  Tensor labels = graph.addVariable(UNSIGNED_INT, {batch}, "labels");
  poputil::mapTensorLinearly(graph, labels);
  Tensor oneHot = graph.addVariable(FLOAT, {batch, outChans}, "oneHot");
  poputil::mapTensorLinearly(graph, oneHot);
  popops::encodeOneHot(graph, labels, oneHot, prog);
  Tensor loss =
      popops::reduce(graph, popops::mul(graph, logProbs, oneHot, prog), {0, 1}, popops::Operation::ADD, prog);
  Tensor finite = popops::allTrue(graph, popops::isFinite(graph, logProbs, prog), prog);

  // Two weight-update steps with a constant gradient of ones: weights -= 0.1 * dW, twice.
  Tensor zDeltas = graph.addConstant(FLOAT, acts.shape(), 1.0f);
  poputil::mapTensorLinearly(graph, zDeltas);
  prog.add(popops::countedLoop(graph, 2, [&](const Tensor &) {
    Sequence step;
    poplin::convolutionWeightUpdate(graph, zDeltas, weights, input, params, -0.1f, step, "wu", {}, &cache);
    return step;
  }));

  graph.createHostWrite("input", input);
  graph.createHostWrite("weights", weights);
  graph.createHostWrite("labels", labels);
  graph.createHostRead("weights", weights);
  graph.createHostRead("loss", loss);
  graph.createHostRead("finite", finite);

  std::vector<float> hIn(input.numElements()), hW(weights.numElements());
  for (std::size_t i = 0; i < hIn.size(); ++i)
    hIn[i] = std::sin(0.3f * float(i));
  for (std::size_t i = 0; i < hW.size(); ++i)
    hW[i] = std::cos(0.7f * float(i)) * 0.5f;
  std::vector<unsigned> hLabels{1, 3};

  Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("input", hIn.data(), hIn.data() + hIn.size());
  engine.writeTensor("weights", hW.data(), hW.data() + hW.size());
  engine.writeTensor("labels", hLabels.data(), hLabels.data() + hLabels.size());
  engine.run(0);
  std::vector<float> gotW(hW.size());
  float gotLoss = 0;
  bool gotFinite = false;
  engine.readTensor("weights", gotW.data(), gotW.data() + gotW.size());
  engine.readTensor("loss", &gotLoss, &gotLoss + 1);
  engine.readTensor("finite", &gotFinite, &gotFinite + 1);

  // Host: dW[co][ci][ky][kx] = sum over b, y, x of in[b][ci][y+ky-1][x+kx-1] (zero outside).
  for (std::size_t co = 0; co < outChans; ++co)
    for (std::size_t ci = 0; ci < chans; ++ci)
      for (std::size_t ky = 0; ky < 3; ++ky)
        for (std::size_t kx = 0; kx < 3; ++kx) {
          double dw = 0;
          for (std::size_t b = 0; b < batch; ++b)
            for (std::size_t y = 0; y < size; ++y)
              for (std::size_t x = 0; x < size; ++x) {
                const long iy = long(y + ky) - 1, ix = long(x + kx) - 1;
                if (iy >= 0 && ix >= 0 && iy < long(size) && ix < long(size))
                  dw += hIn[((b * chans + ci) * size + iy) * size + ix];
              }
          const std::size_t i = ((co * chans + ci) * 3 + ky) * 3 + kx;
          REQUIRE(std::fabs(gotW[i] - (hW[i] - 0.2 * dw)) < 1e-4);
        }
  REQUIRE(gotFinite);
  REQUIRE(gotLoss < 0.0f); // a sum of log-probabilities
}
