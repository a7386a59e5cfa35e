// Copyright (c) Aspen contributors.
// Clients of PopLibs 3.x's fully-connected helpers written as Poplar users write them:
//  - poplin::fc::getMatMulPrePlanParameters describes the layer's three passes; a client plans
//    them in one cache, creates operands from each description and runs the products with the
//    options given, checked against host products;
//  - poplin::fullyConnectedWeightTranspose arranges the forward weights of a layer expressed as
//    a 1-d convolution for its backward pass; forward and backward convolutions are checked
//    against host loops.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/FullyConnected.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/codelets.hpp>

#include "OpsTestUtil.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

using aspen::test::sinePattern;

} // namespace

TEST_CASE("poplin::fc::getMatMulPrePlanParameters describes the passes a client then runs",
          "[compat][poplin]") {
  const std::size_t G = 2, batch = 3, in = 5, out = 4;
  const poplin::fc::FullyConnectedParams layer{G, batch, in, out};
  const OptionFlags userOptions{{"partialsType", "float"}, {"availableMemoryProportion", "0.5"}};

  SECTION("inference: the forward pass only") {
    auto mm = poplin::fc::getMatMulPrePlanParameters(layer, userOptions, HALF, true);
    REQUIRE(mm.size() == 1);
    CHECK(mm[0].first.inputType == HALF);
    CHECK(mm[0].first.outputType == HALF);
    CHECK(mm[0].first.aShape == std::vector<std::size_t>{G, batch, in});
    CHECK(mm[0].first.bShape == std::vector<std::size_t>{G, in, out});
    CHECK(mm[0].second.at("fullyConnectedPass") == "INFERENCE_FWD");
    CHECK(mm[0].second.at("partialsType") == "float");
  }

  SECTION("training: forward, backward and weight update, planned and run") {
    const auto mm = poplin::fc::getMatMulPrePlanParameters(layer, userOptions, FLOAT, false);
    REQUIRE(mm.size() == 3);
    const char *passes[] = {"TRAINING_FWD", "TRAINING_BWD", "TRAINING_WU"};
    // fwd: acts {b, in} x weights {in, out}; bwd: grads {b, out} x weights^T {out, in};
    // wu: acts^T {in, b} x grads {b, out}.
    const std::vector<std::vector<std::size_t>> dims{{batch, in, out}, {batch, out, in}, {in, batch, out}};
    std::set<poplin::MatMulParams> distinct;
    for (std::size_t p = 0; p < 3; ++p) {
      INFO("pass " << passes[p]);
      CHECK(mm[p].second.at("fullyConnectedPass") == passes[p]);
      CHECK(mm[p].second.at("availableMemoryProportion") == "0.5");
      CHECK(mm[p].first.aShape == std::vector<std::size_t>{G, dims[p][0], dims[p][1]});
      CHECK(mm[p].first.bShape == std::vector<std::size_t>{G, dims[p][1], dims[p][2]});
      distinct.insert(mm[p].first);
    }
    CHECK(distinct.size() == 3);
    CHECK_FALSE(mm[0].first < mm[0].first);

    IPUModel ipuModel;
    ipuModel.tilesPerIPU = 4;
    Device device = ipuModel.createDevice();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    poplin::PlanningCache cache;
    Sequence prog;
    std::vector<std::vector<float>> hostA, hostB;
    for (std::size_t p = 0; p < 3; ++p) {
      const auto &params = mm[p].first;
      const auto &opts = mm[p].second;
      const std::string n = std::to_string(p);
      Tensor a = poplin::createMatMulGroupedInputLHS(graph, params.inputType, params.outputType,
                                                     params.aShape, params.bShape, "a" + n, opts, &cache);
      Tensor b = poplin::createMatMulGroupedInputRHS(graph, params.inputType, params.outputType,
                                                     params.aShape, params.bShape, "b" + n, opts, &cache);
      Tensor c = poplin::matMulGrouped(graph, a, b, prog, params.outputType, "c" + n, opts, &cache);
      graph.createHostWrite("a" + n, a);
      graph.createHostWrite("b" + n, b);
      graph.createHostRead("c" + n, c);
      hostA.push_back(sinePattern(a.numElements(), 0.37f, float(p)));
      hostB.push_back(sinePattern(b.numElements(), 0.53f, 0.5f * float(p)));
    }
    Engine engine(graph, prog);
    engine.load(device);
    for (std::size_t p = 0; p < 3; ++p) {
      const std::string n = std::to_string(p);
      engine.writeTensor("a" + n, hostA[p].data(), hostA[p].data() + hostA[p].size());
      engine.writeTensor("b" + n, hostB[p].data(), hostB[p].data() + hostB[p].size());
    }
    engine.run(0);
    for (std::size_t p = 0; p < 3; ++p) {
      const std::size_t m = dims[p][0], k = dims[p][1], nn = dims[p][2];
      std::vector<float> got(G * m * nn);
      engine.readTensor("c" + std::to_string(p), got.data(), got.data() + got.size());
      for (std::size_t g = 0; g < G; ++g)
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < nn; ++j) {
            double want = 0;
            for (std::size_t x = 0; x < k; ++x)
              want += double(hostA[p][(g * m + i) * k + x]) * hostB[p][(g * k + x) * nn + j];
            INFO("pass " << passes[p] << " g " << g << " i " << i << " j " << j);
            CHECK(std::fabs(got[(g * m + i) * nn + j] - want) < 1e-4);
          }
    }
  }
}

TEST_CASE("poplin::fullyConnectedWeightTranspose arranges a layer's weights for its backward pass",
          "[compat][poplin]") {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);

  // A grouped fully-connected layer as a 1-d convolution of width 1: in -> out channels.
  const std::size_t G = 2, batch = 3, in = 5, out = 4;
  const poplin::ConvParams fwd(FLOAT, batch, {1}, {1}, in, out, G);
  const poplin::ConvParams bwd(FLOAT, batch, {1}, {1}, out, in, G); // channels swapped
  const OptionFlags fwdOptions{{"pass", "FC_TRAINING_FWD"}}, bwdOptions{{"pass", "FC_TRAINING_BWD"}};
  poplin::PlanningCache cache;

  Tensor acts = poplin::createInput(graph, fwd, "acts", fwdOptions, &cache);
  Tensor weights = poplin::createWeights(graph, fwd, "weights", fwdOptions, &cache);
  Tensor deltas = poplin::createInput(graph, bwd, "deltas", bwdOptions, &cache);
  REQUIRE(weights.shape() == std::vector<std::size_t>{G, out, in, 1});

  Sequence prog;
  Tensor z = poplin::convolution(graph, acts, weights, fwd, false, prog, "fwd", fwdOptions, &cache);
  Tensor wT = poplin::fullyConnectedWeightTranspose(graph, weights, bwd, prog, "wT", bwdOptions, &cache);
  REQUIRE(wT.shape() == std::vector<std::size_t>{G, in, out, 1});
  Tensor gradIn = poplin::convolution(graph, deltas, wT, bwd, false, prog, "bwd", bwdOptions, &cache);
  REQUIRE(gradIn.shape() == std::vector<std::size_t>{batch, G * in, 1});

  graph.createHostWrite("acts", acts);
  graph.createHostWrite("weights", weights);
  graph.createHostWrite("deltas", deltas);
  graph.createHostRead("z", z);
  graph.createHostRead("wT", wT);
  graph.createHostRead("gradIn", gradIn);

  const auto hA = sinePattern(acts.numElements(), 0.41f, 0.1f);
  const auto hW = sinePattern(weights.numElements(), 0.77f, 0.3f);
  const auto hD = sinePattern(deltas.numElements(), 0.29f, 0.7f);
  Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("acts", hA.data(), hA.data() + hA.size());
  engine.writeTensor("weights", hW.data(), hW.data() + hW.size());
  engine.writeTensor("deltas", hD.data(), hD.data() + hD.size());
  engine.run(0);
  std::vector<float> gz(z.numElements()), gwT(wT.numElements()), gIn(gradIn.numElements());
  engine.readTensor("z", gz.data(), gz.data() + gz.size());
  engine.readTensor("wT", gwT.data(), gwT.data() + gwT.size());
  engine.readTensor("gradIn", gIn.data(), gIn.data() + gIn.size());

  // weights[g][o][i] (kernel width 1); wT[g][i][o] == weights[g][o][i].
  auto W = [&](std::size_t g, std::size_t o, std::size_t i) { return double(hW[(g * out + o) * in + i]); };
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t o = 0; o < out; ++o)
      for (std::size_t i = 0; i < in; ++i)
        CHECK(gwT[(g * in + i) * out + o] == float(W(g, o, i)));
  // z[b][g*out+o] = sum_i acts[b][g*in+i] W[g][o][i]; gradIn[b][g*in+i] = sum_o deltas[b][g*out+o]
  // W[g][o][i].
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t g = 0; g < G; ++g) {
      for (std::size_t o = 0; o < out; ++o) {
        double want = 0;
        for (std::size_t i = 0; i < in; ++i)
          want += double(hA[b * G * in + g * in + i]) * W(g, o, i);
        CHECK(std::fabs(gz[b * G * out + g * out + o] - want) < 1e-4);
      }
      for (std::size_t i = 0; i < in; ++i) {
        double want = 0;
        for (std::size_t o = 0; o < out; ++o)
          want += double(hD[b * G * out + g * out + o]) * W(g, o, i);
        CHECK(std::fabs(gIn[b * G * in + g * in + i] - want) < 1e-4);
      }
    }
}
