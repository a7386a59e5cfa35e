// Copyright (c) Aspen contributors.
// Clients of PopLibs 3.x's pre-planning API (poplin/ConvPreplan.hpp, poplin/MatMul.hpp,
// poplin/Convolution.hpp) written as Poplar users write them:
//  - a program pre-plans two matrix multiplications and a strided, padded convolution into one
//    PlanningCache, then creates operands and builds the ops with that cache, runs them on the
//    IPUModel and checks the results against host loops; every op finds its plan in the
//    cache (building adds none);
//  - the ops built after pre-planning are the ops built without it (same tile mappings and
//    plan reports);
//  - the deprecated entry points (preplanMatMuls with matmul::PlanningCache,
//    preplanConvolutions) and matMulGetConvPlanParams, whose convolutions are run as a check
//    that they compute the multiplications they stand for.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/ConvPreplan.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/codelets.hpp>

#include "OpsTestUtil.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

using aspen::test::sinePattern;

// C[g] = A[g] * B[g] with A {G, m, k}, B {G, k, n}, row-major.
std::vector<double> hostMatMul(const std::vector<float> &a, const std::vector<float> &b, std::size_t G,
                               std::size_t m, std::size_t k, std::size_t n) {
  std::vector<double> c(G * m * n, 0.0);
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t x = 0; x < k; ++x)
          c[(g * m + i) * n + j] += double(a[(g * m + i) * k + x]) * b[(g * k + x) * n + j];
  return c;
}

void checkClose(const std::vector<float> &got, const std::vector<double> &want, const char *what) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(what << " element " << i);
    CHECK(std::fabs(got[i] - want[i]) < 1e-4);
  }
}

// The convolution the client plans: batch 2, 3 -> 4 channels, a {6, 5} field, a {3, 2} kernel,
// the input padded by one row above and below and the output strided by 2 along the rows.
poplin::ConvParams clientConv() {
  poplin::ConvParams p(FLOAT, FLOAT, 2, {6, 5}, {3, 2}, 3, 4, 1);
  p.inputTransform.paddingLower = {1, 0};
  p.inputTransform.paddingUpper = {1, 0};
  p.outputTransform.stride = {2, 1};
  return p;
}

Device eightTileModel() {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 8;
  return ipuModel.createDevice();
}

struct Model {
  Device device = eightTileModel();
  Graph graph{device.getTarget()};
  Model() {
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
  }
};

std::string tileMappingString(const Graph &graph, const Tensor &t) {
  std::ostringstream os;
  const auto mapping = graph.getTileMapping(t);
  for (std::size_t tile = 0; tile < mapping.size(); ++tile)
    for (const auto &interval : mapping[tile])
      os << tile << ':' << interval.begin() << '-' << interval.end() << ' ';
  return os.str();
}

} // namespace

TEST_CASE("poplin::preplan plans matMuls and a convolution that the client then builds and runs",
          "[compat][poplin][preplan]") {
  Model model;
  Graph &graph = model.graph;
  const Target &target = graph.getTarget();

  const OptionFlags mmOptions{{"availableMemoryProportion", "0.5"}};
  const OptionFlags fcOptions{{"fullyConnectedPass", "TRAINING_FWD"}, {"partialsType", "float"}};
  const OptionFlags convOptions{{"pass", "INFERENCE_FWD"}};
  const poplin::MatMulParams plain{FLOAT, FLOAT, {1, 12, 7}, {1, 7, 9}}; // the ungrouped {12,7} x {7,9}
  const poplin::MatMulParams grouped{FLOAT, FLOAT, {3, 4, 5}, {3, 5, 6}};
  const poplin::ConvParams conv = clientConv();

  std::set<poplin::MatMulPlanParams> matmuls;
  matmuls.emplace(&target, plain, &mmOptions);
  matmuls.emplace(&target, grouped, &fcOptions);
  std::set<poplin::ConvPlanParams> convs;
  convs.emplace(&target, conv, &convOptions);

  poplin::PlanningCache cache;
  REQUIRE(cache.size() == 0);
  poplin::preplan(convs, matmuls, cache);
  // One plan per multiplication; the convolution's forward product and its input layout.
  const std::size_t planned = cache.size();
  CHECK(planned == 4);
  // Pre-planning the same sets again finds every plan there.
  poplin::preplan(convs, matmuls, cache);
  CHECK(cache.size() == planned);

  Sequence prog;
  Tensor a = poplin::createMatMulInputLHS(graph, FLOAT, {12, 7}, {7, 9}, "a", mmOptions, &cache);
  Tensor b = poplin::createMatMulInputRHS(graph, FLOAT, {12, 7}, {7, 9}, "b", mmOptions, &cache);
  Tensor c = poplin::matMul(graph, a, b, prog, "c", mmOptions, &cache);
  Tensor ga = poplin::createMatMulGroupedInputLHS(graph, FLOAT, FLOAT, grouped.aShape, grouped.bShape, "ga",
                                                  fcOptions, &cache);
  Tensor gb = poplin::createMatMulGroupedInputRHS(graph, FLOAT, FLOAT, grouped.aShape, grouped.bShape, "gb",
                                                  fcOptions, &cache);
  Tensor gc = poplin::matMulGrouped(graph, ga, gb, prog, FLOAT, "gc", fcOptions, &cache);
  Tensor in = poplin::createInput(graph, conv, "in", convOptions, &cache);
  Tensor w = poplin::createWeights(graph, conv, "w", convOptions, &cache);
  Tensor out = poplin::convolution(graph, in, w, conv, false, prog, "conv", convOptions, &cache);
  // Every op found its plan: building planned nothing new.
  CHECK(cache.size() == planned);
  REQUIRE(out.shape() == std::vector<std::size_t>{2, 4, 3, 4});

  const std::pair<const char *, Tensor> inputs[] = {{"a", a},   {"b", b},   {"ga", ga},
                                                    {"gb", gb}, {"in", in}, {"w", w}};
  std::vector<std::vector<float>> host;
  float phase = 0.1f;
  for (const auto &kv : inputs) {
    graph.createHostWrite(kv.first, kv.second);
    host.push_back(sinePattern(kv.second.numElements(), 0.41f, phase));
    phase += 0.7f;
  }
  graph.createHostRead("c", c);
  graph.createHostRead("gc", gc);
  graph.createHostRead("out", out);
  Engine engine(graph, prog);
  engine.load(model.device);
  for (std::size_t i = 0; i < host.size(); ++i)
    engine.writeTensor(inputs[i].first, host[i].data(), host[i].data() + host[i].size());
  engine.run(0);

  std::vector<float> gotC(12 * 9), gotGc(3 * 4 * 6), gotOut(out.numElements());
  engine.readTensor("c", gotC.data(), gotC.data() + gotC.size());
  engine.readTensor("gc", gotGc.data(), gotGc.data() + gotGc.size());
  engine.readTensor("out", gotOut.data(), gotOut.data() + gotOut.size());
  checkClose(gotC, hostMatMul(host[0], host[1], 1, 12, 7, 9), "matMul");
  checkClose(gotGc, hostMatMul(host[2], host[3], 3, 4, 5, 6), "matMulGrouped");

  // out[n][co][y][x] = sum over ci, ky, kx of in[n][ci][2y + ky - 1][x + kx] * w[0][co][ci][ky][kx]
  // (rows outside the input are the zero padding).
  const std::vector<float> &hin = host[4], &hw = host[5];
  std::vector<double> want(out.numElements(), 0.0);
  for (std::size_t n = 0; n < 2; ++n)
    for (std::size_t co = 0; co < 4; ++co)
      for (std::size_t y = 0; y < 3; ++y)
        for (std::size_t x = 0; x < 4; ++x) {
          double sum = 0;
          for (std::size_t ci = 0; ci < 3; ++ci)
            for (std::size_t ky = 0; ky < 3; ++ky)
              for (std::size_t kx = 0; kx < 2; ++kx) {
                const long row = long(2 * y + ky) - 1;
                if (row < 0 || row >= 6)
                  continue;
                sum += double(hin[((n * 3 + ci) * 6 + std::size_t(row)) * 5 + x + kx]) *
                       hw[((co * 3 + ci) * 3 + ky) * 2 + kx];
              }
          want[((n * 4 + co) * 3 + y) * 4 + x] = sum;
        }
  checkClose(gotOut, want, "convolution");
}

TEST_CASE("Ops built after pre-planning are the ops built without it", "[compat][poplin][preplan]") {
  const OptionFlags mmOptions{{"partialsType", "float"}, {"availableMemoryProportion", "0.3"}};
  const OptionFlags convOptions;
  const poplin::MatMulParams mm{FLOAT, FLOAT, {1, 40, 24}, {1, 24, 16}};
  const poplin::ConvParams conv = clientConv();

  Model planned, unplanned;
  poplin::PlanningCache cache;
  std::set<poplin::MatMulPlanParams> matmuls;
  matmuls.emplace(&planned.graph.getTarget(), mm, &mmOptions);
  std::set<poplin::ConvPlanParams> convs;
  convs.emplace(&planned.graph.getTarget(), conv, &convOptions);
  poplin::preplan(convs, matmuls, cache);
  REQUIRE(cache.size() == 3);

  auto build = [&](Graph &graph, poplin::PlanningCache *c) {
    std::vector<std::string> mappings;
    mappings.push_back(tileMappingString(
        graph, poplin::createMatMulInputLHS(graph, FLOAT, {40, 24}, {24, 16}, "a", mmOptions, c)));
    mappings.push_back(tileMappingString(
        graph, poplin::createMatMulInputRHS(graph, FLOAT, {40, 24}, {24, 16}, "b", mmOptions, c)));
    mappings.push_back(tileMappingString(
        graph, poplin::createMatMulOutput(graph, FLOAT, {40, 24}, {24, 16}, "c", mmOptions, c)));
    mappings.push_back(tileMappingString(graph, poplin::createInput(graph, conv, "in", convOptions, c)));
    mappings.push_back(tileMappingString(graph, poplin::createWeights(graph, conv, "w", convOptions, c)));
    std::ostringstream report;
    poplin::matMulReportPlan(report, graph, FLOAT, FLOAT, {40, 24}, {24, 16}, mmOptions, c);
    poplin::reportPlanInfo(report, graph, conv, convOptions, c);
    mappings.push_back(report.str());
    return mappings;
  };
  const auto withPlans = build(planned.graph, &cache);
  CHECK(cache.size() == 3);
  const auto without = build(unplanned.graph, nullptr);
  REQUIRE(withPlans.size() == without.size());
  for (std::size_t i = 0; i < withPlans.size(); ++i) {
    INFO("item " << i);
    CHECK(!withPlans[i].empty());
    CHECK(withPlans[i] == without[i]);
  }
}

TEST_CASE("PopLibs' older pre-planning entry points and matMulGetConvPlanParams",
          "[compat][poplin][preplan]") {
  Model model;
  Graph &graph = model.graph;
  const Target &target = graph.getTarget();
  const OptionFlags fwd{{"fullyConnectedPass", "TRAINING_FWD"}, {"gatherOutput", "true"}};
  const OptionFlags none;
  const poplin::MatMulParams mmA{FLOAT, FLOAT, {2, 3, 5}, {2, 5, 4}};
  const poplin::MatMulParams mmB{FLOAT, FLOAT, {1, 6, 2}, {1, 2, 3}};
  std::set<poplin::MatMulPlanParams> matmuls;
  matmuls.emplace(&target, mmA, &fwd);
  matmuls.emplace(&target, mmB, &none);

  SECTION("preplanMatMuls fills a matmul::PlanningCache that matMul then uses") {
    poplin::matmul::PlanningCache cache;
    poplin::preplanMatMuls(matmuls, cache);
    CHECK(cache.size() == 2);
    Sequence prog;
    Tensor a = poplin::createMatMulInputLHS(graph, FLOAT, {6, 2}, {2, 3}, "a", none, &cache);
    Tensor b = poplin::createMatMulInputRHS(graph, FLOAT, {6, 2}, {2, 3}, "b", none, &cache);
    (void)poplin::matMul(graph, a, b, prog, "c", none, &cache);
    CHECK(cache.size() == 2);
  }

  SECTION("preplanConvolutions (both overloads) records what preplan records") {
    const poplin::ConvParams conv = clientConv();
    const OptionFlags convOptions;
    std::set<poplin::ConvPlanParams> convs;
    convs.emplace(&target, conv, &convOptions);
    poplin::PlanningCache viaPreplan, viaSet, viaGraph;
    poplin::preplan(convs, {}, viaPreplan);
    poplin::preplanConvolutions(convs, viaSet);
    poplin::preplanConvolutions(graph, convs, viaGraph);
    CHECK(viaPreplan.size() == 2);
    CHECK(viaSet.size() == viaPreplan.size());
    CHECK(viaGraph.size() == viaPreplan.size());
    Sequence prog;
    Tensor in = poplin::createInput(graph, conv, "in", convOptions, &viaSet);
    Tensor w = poplin::createWeights(graph, conv, "w", convOptions, &viaSet);
    (void)poplin::convolution(graph, in, w, conv, false, prog, "conv", convOptions, &viaSet);
    CHECK(viaSet.size() == 2);
  }

  SECTION("matMulGetConvPlanParams: the convolutions compute the multiplications") {
    poplin::MatMulToConvOptions convOptions;
    const std::set<poplin::ConvPlanParams> convs = poplin::matMulGetConvPlanParams(matmuls, convOptions);
    REQUIRE(convs.size() == 2);
    REQUIRE(convOptions.size() == 2); // one per distinct options pointer
    CHECK(convOptions.at(&fwd).at("pass") == "FC_TRAINING_FWD");
    CHECK(convOptions.at(&fwd).at("gatherConvOutput") == "true");
    CHECK(convOptions.at(&none).at("pass") == "NONE_MATMUL");
    CHECK(convOptions.at(&none).at("partialsType") == "float");
    const poplin::ConvParams *convA = nullptr;
    for (const auto &c : convs) {
      CHECK(std::get<0>(c) == &target);
      const poplin::ConvParams &p = std::get<1>(c);
      CHECK(p.inputFieldShape == std::vector<std::size_t>{1});
      CHECK(p.kernelShape == std::vector<std::size_t>{1});
      if (p.numConvGroups == 2) {
        CHECK(std::get<2>(c) == &convOptions.at(&fwd));
        convA = &p;
      }
    }
    REQUIRE(convA != nullptr);
    CHECK(convA->batchSize == 3);
    CHECK(convA->inputChannelsPerConvGroup == 5);
    CHECK(convA->outputChannelsPerConvGroup == 4);

    // The converted set pre-plans, and the convolution of A {2,3,5} viewed as activations
    // {3, 2*5, 1} with B {2,5,4} viewed as weights {2, 4, 5, 1} is A * B.
    poplin::PlanningCache cache;
    poplin::preplan(convs, {}, cache);
    CHECK(cache.size() > 0);
    const OptionFlags &opts = convOptions.at(&fwd);
    Sequence prog;
    Tensor acts = poplin::createInput(graph, *convA, "acts", opts, &cache);
    Tensor weights = poplin::createWeights(graph, *convA, "weights", opts, &cache);
    Tensor out = poplin::convolution(graph, acts, weights, *convA, false, prog, "mmAsConv", opts, &cache);
    REQUIRE(out.shape() == std::vector<std::size_t>{3, 8, 1});
    // acts[i][g*5 + x][0] = A[g][i][x]; weights[g][j][x][0] = B[g][x][j].
    Tensor A = acts.reshape({3, 2, 5}).dimShuffle({1, 0, 2});
    Tensor B = weights.reshape({2, 4, 5}).dimShuffle({0, 2, 1});
    graph.createHostWrite("A", A);
    graph.createHostWrite("B", B);
    graph.createHostRead("out", out);
    const std::vector<float> hostA = sinePattern(30, 0.3f, 0.2f), hostB = sinePattern(40, 0.7f, 1.1f);
    Engine engine(graph, prog);
    engine.load(model.device);
    engine.writeTensor("A", hostA.data(), hostA.data() + hostA.size());
    engine.writeTensor("B", hostB.data(), hostB.data() + hostB.size());
    engine.run(0);
    std::vector<float> got(24);
    engine.readTensor("out", got.data(), got.data() + got.size());
    const std::vector<double> c = hostMatMul(hostA, hostB, 2, 3, 5, 4); // {g, i, j}
    std::vector<double> want(24);                                       // out[i][g*4 + j]
    for (std::size_t g = 0; g < 2; ++g)
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 4; ++j)
          want[i * 8 + g * 4 + j] = c[(g * 3 + i) * 4 + j];
    checkClose(got, want, "matMul as convolution");
  }

  SECTION("matMulGetConvPlanParams: a matMul's serial planConstraints plan the convolution alike") {
    // {6, 8} x {8, 4}: batch 6, 8 input and 4 output channels. outChanSplit.serial is a serial
    // split of the matMul's columns and of the convolution's output channels (the rows of its
    // product); inChanSplit.serial of the inner dimension of both.
    const struct {
      const char *constraints, *matMulPasses, *convPasses;
    } cases[] = {{R"({"0": {"partition": {"outChanSplit": {"serial": 2}}}})", "2 serial passes over columns",
                  "2 serial passes over rows"},
                 {R"({"0": {"partition": {"inChanSplit": {"serial": 2}}}})",
                  "2 serial passes over the inner dimension", "2 serial passes over the inner dimension"}};
    for (const auto &c : cases) {
      INFO(c.constraints);
      const OptionFlags serial{{"planConstraints", c.constraints}};
      std::set<poplin::MatMulPlanParams> one;
      one.emplace(&target, poplin::MatMulParams{FLOAT, FLOAT, {1, 6, 8}, {1, 8, 4}}, &serial);
      poplin::MatMulToConvOptions convOptions;
      const std::set<poplin::ConvPlanParams> convs = poplin::matMulGetConvPlanParams(one, convOptions);
      REQUIRE(convs.size() == 1);
      const poplin::ConvParams &conv = std::get<1>(*convs.begin());
      const OptionFlags &opts = *std::get<2>(*convs.begin());
      CHECK(opts.at("planConstraints") == c.constraints);
      poplin::PlanningCache cache;
      poplin::preplan(convs, {}, cache); // threw before convolutions had serial splits
      CHECK(cache.size() > 0);
      std::ostringstream mmPlan, convPlan;
      poplin::matMulReportPlan(mmPlan, graph, FLOAT, FLOAT, {6, 8}, {8, 4}, serial);
      poplin::reportPlanInfo(convPlan, graph, conv, opts, &cache);
      INFO(mmPlan.str() << convPlan.str());
      CHECK(mmPlan.str().find(c.matMulPasses) != std::string::npos);
      CHECK(convPlan.str().find(c.convPasses) != std::string::npos);
      // The convolution computes the product in those passes.
      Sequence prog;
      Tensor acts = poplin::createInput(graph, conv, "acts", opts, &cache);
      Tensor weights = poplin::createWeights(graph, conv, "weights", opts, &cache);
      Tensor out = poplin::convolution(graph, acts, weights, conv, false, prog, "serialConv", opts, &cache);
      REQUIRE(out.shape() == std::vector<std::size_t>{6, 4, 1});
      const std::string tag = c.convPasses;
      graph.createHostWrite("A" + tag, acts.reshape({6, 8}));
      graph.createHostWrite("B" + tag, weights.reshape({4, 8}).transpose());
      graph.createHostRead("out" + tag, out.reshape({6, 4}));
      const std::vector<float> hostA = sinePattern(48, 0.3f, 0.2f), hostB = sinePattern(32, 0.7f, 1.1f);
      Engine engine(graph, prog);
      engine.load(model.device);
      engine.writeTensor("A" + tag, hostA.data(), hostA.data() + hostA.size());
      engine.writeTensor("B" + tag, hostB.data(), hostB.data() + hostB.size());
      engine.run(0);
      std::vector<float> got(24);
      engine.readTensor("out" + tag, got.data(), got.data() + got.size());
      checkClose(got, hostMatMul(hostA, hostB, 1, 6, 8, 4), "matMul as convolution in serial passes");
    }
  }
}
