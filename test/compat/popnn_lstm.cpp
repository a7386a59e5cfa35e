// Copyright (c) Aspen contributors.
// A client of popnn/Lstm.hpp written as a Poplar 3.x trainer writes one: createInput,
// createInitialState, createWeights, lstmFwd with intermediates, then lstmBwd + lstmWU or
// lstmBwdWithWU, on an IPUModel with the codelets of popops, poplin and popnn. Every result is
// checked against a host LSTM in double: the forward pass directly, and every gradient (input,
// initial state, weights, biases) against central finite differences of the host loss
// L = sum(outputGrad * output) + sum(lastStepStateGrad * final state). Float and half, several
// sequence lengths and batch sizes, both output forms, a custom cellOrder and activations.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/codelets.hpp>
#include <popnn/Lstm.hpp>
#include <popnn/codelets.hpp>
#include <popops/Cast.hpp>
#include <popops/Fill.hpp>
#include <popops/codelets.hpp>

#include "RecurrentHost.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using popnn::NonLinearityType;

namespace {

using aspen::test::recurrent::HostIo;
using aspen::test::recurrent::Values;
double (*const act)(NonLinearityType, double) = aspen::test::recurrent::activation;

struct Config {
  Type type;
  std::size_t T, B, I, H;
  bool fullSequence;
  bool separateWU;    // lstmBwd + lstmWU, else lstmBwdWithWU
  bool lastStateGrad; // pass lastStepStateGrad
  std::vector<BasicLstmCellUnit> order;
  NonLinearityType activation = NonLinearityType::TANH;
  NonLinearityType recurrent = NonLinearityType::SIGMOID;
  bool popnnCodelets = true; // false: only popops' and poplin's codelets
  bool inputGrads = true;    // params.calcInputGradients
  unsigned tiles = 4;
  // Variable time steps (LstmParams' varTimeSteps) when not empty: one per sequence or one
  // for all, written as INT when intSteps (negative and too-large values clamp).
  std::vector<int> lens = {};
  bool intSteps = false;
  bool preserveFinalState = false;
  // lstmBwdWithWU's deprecated form with a last cell state gradient, which variable time
  // steps ignore (as PopLibs does).
  bool deprecatedForm = false;

  // The steps sequence n runs, and the most over the batch.
  std::size_t steps(std::size_t n) const {
    if (lens.empty())
      return T;
    const int s = lens.size() == 1 ? lens[0] : lens[n];
    return std::size_t(std::max(0, std::min(int(T), s)));
  }
  std::size_t maxSteps() const {
    std::size_t m = 0;
    for (std::size_t n = 0; n < B; ++n)
      m = std::max(m, steps(n));
    return m;
  }
};

struct HostLstm {
  Config c;
  // The host forward pass: outputs {T,B,H} and final h, c {B,H}. With variable time steps a
  // sequence past its last step outputs zeros, keeps its h (the final output) and zeroes its c
  // (keeps it with preserveFinalState); the steps after the longest sequence's last do not run.
  void forward(const Values &v, std::vector<double> &out, std::vector<double> &hT,
               std::vector<double> &cT) const {
    const auto &x = v.at("in"), &wi = v.at("wi"), &wo = v.at("wo"), &b = v.at("b");
    std::vector<double> h = v.at("h0"), cs = v.at("c0");
    out.assign(c.T * c.B * c.H, 0);
    std::size_t pos[4];
    for (std::size_t k = 0; k < 4; ++k)
      pos[c.order[k]] = k;
    for (std::size_t t = 0; t < c.maxSteps(); ++t) {
      std::vector<double> hn(c.B * c.H), cn(c.B * c.H);
      for (std::size_t n = 0; n < c.B; ++n)
        for (std::size_t j = 0; j < c.H; ++j) {
          double pre[4];
          for (std::size_t u = 0; u < 4; ++u) {
            const std::size_t k = pos[u];
            double s = b[k * c.H + j];
            for (std::size_t i = 0; i < c.I; ++i)
              s += x[(t * c.B + n) * c.I + i] * wi[(k * c.I + i) * c.H + j];
            for (std::size_t i = 0; i < c.H; ++i)
              s += h[n * c.H + i] * wo[(k * c.H + i) * c.H + j];
            pre[u] = s;
          }
          const double f = act(c.recurrent, pre[0]), in = act(c.recurrent, pre[1]),
                       g = act(c.activation, pre[2]), o = act(c.recurrent, pre[3]);
          cn[n * c.H + j] = f * cs[n * c.H + j] + in * g;
          hn[n * c.H + j] = o * act(c.activation, cn[n * c.H + j]);
          if (t < c.steps(n)) {
            out[(t * c.B + n) * c.H + j] = hn[n * c.H + j];
          } else {
            hn[n * c.H + j] = h[n * c.H + j];
            cn[n * c.H + j] = c.preserveFinalState ? cs[n * c.H + j] : 0;
          }
        }
      h = hn;
      cs = cn;
    }
    hT = h;
    cT = cs;
  }
  double loss(const Values &v) const {
    std::vector<double> out, hT, cT;
    forward(v, out, hT, cT);
    const auto &g = v.at("gOut");
    double l = 0;
    const std::vector<double> &y = c.fullSequence ? out : hT;
    for (std::size_t i = 0; i < y.size(); ++i)
      l += g[i] * y[i];
    if (c.lastStateGrad)
      for (std::size_t i = 0; i < hT.size(); ++i)
        l += v.at("gH")[i] * hT[i] + v.at("gC")[i] * cT[i];
    return l;
  }
  // dL/d(values[name]) by central differences.
  std::vector<double> numericGrad(const Values &v, const std::string &name) const {
    return aspen::test::recurrent::numericGrad([this](const Values &x) { return loss(x); }, v, name);
  }
};

void runLstm(const Config &c) {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = c.tiles;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  if (c.popnnCodelets)
    popnn::addCodelets(graph);

  Tensor steps;
  if (!c.lens.empty()) {
    steps = graph.addVariable(c.intSteps ? INT : UNSIGNED_INT, {c.lens.size()}, "steps");
    graph.setTileMapping(steps, 1);
    graph.createHostWrite("steps", steps);
  }
  popnn::lstm::LstmParams params =
      c.lens.empty()
          ? popnn::lstm::LstmParams(c.type, c.B, c.T, {c.I, c.H}, c.activation, c.recurrent)
          : popnn::lstm::LstmParams(c.type, c.B, c.T, steps, {c.I, c.H}, c.activation, c.recurrent);
  REQUIRE(params.rnn.variableTimeSteps() == !c.lens.empty());
  REQUIRE(params.rnn.batchVariableTimeSteps() == (c.lens.size() > 1));
  params.preserveFinalState = c.preserveFinalState;
  params.outputFullSequence = c.fullSequence;
  params.cellOrder = c.order;
  params.calcInputGradients = c.inputGrads;
  const OptionFlags options{{"partialsType", "float"}, {"availableMemoryProportion", "0.5"}};

  Sequence prog;
  HostIo io{graph, prog, c.type};
  auto feed = [&](const std::string &name, const Tensor &dst) { io.feed(name, dst); };
  auto fetch = [&](const std::string &name, const Tensor &src) { io.fetch(name, src); };

  Tensor in = popnn::lstm::createInput(graph, params, "in", options);
  popnn::lstm::LstmState init = popnn::lstm::createInitialState(graph, params, "init", options);
  popnn::lstm::LstmWeights w = popnn::lstm::createWeights(graph, params, "weights", options);
  REQUIRE(in.shape() == std::vector<std::size_t>{c.T, c.B, c.I});
  REQUIRE(w.inputWeights.shape() == std::vector<std::size_t>{4, c.I, c.H});
  REQUIRE(w.outputWeights.shape() == std::vector<std::size_t>{4, c.H, c.H});
  REQUIRE(w.biases.shape() == std::vector<std::size_t>{4, c.H});
  feed("in", in);
  feed("h0", init.output);
  feed("c0", init.cellState);
  feed("wi", w.inputWeights);
  feed("wo", w.outputWeights);
  feed("b", w.biases);

  Tensor fwdInter;
  auto [out, cT] = popnn::lstm::lstmFwd(graph, params, init, in, w, &fwdInter, prog, "lstm", options);
  fetch("out", out);
  fetch("cT", cT);

  Tensor gOut = graph.addVariable(c.type, out.shape(), "gOutT");
  graph.setTileMapping(gOut, 1);
  feed("gOut", gOut);
  popnn::lstm::LstmState lastGrad;
  if (c.lastStateGrad) {
    lastGrad = popnn::lstm::createInitialState(graph, params, "lastGrad", options);
    feed("gH", lastGrad.output);
    feed("gC", lastGrad.cellState);
  }
  Tensor inGrad;
  popnn::lstm::LstmWeights wGrad;
  popnn::lstm::LstmState initGrad;
  if (c.separateWU) {
    Tensor bwdInter;
    initGrad = popnn::lstm::lstmBwd(graph, params, prog, init, fwdInter, w, in, out, gOut,
                                    c.lastStateGrad ? &lastGrad : nullptr, c.inputGrads ? &inGrad : nullptr,
                                    &bwdInter, "bwd", options);
    wGrad = popnn::lstm::lstmWU(graph, params, prog, init, fwdInter, bwdInter, w, in, out, "wu", options);
  } else if (c.deprecatedForm) {
    Tensor ignored = popnn::lstm::createInitialCellState(graph, params, "ignored", options);
    popops::fill(graph, ignored, prog, 1.0f);
    initGrad = popnn::lstm::lstmBwdWithWU(graph, params, prog, init, fwdInter, w, in, out, gOut, &ignored,
                                          c.inputGrads ? &inGrad : nullptr, wGrad, "bwdwu", options);
  } else {
    initGrad = popnn::lstm::lstmBwdWithWU(graph, params, prog, init, fwdInter, w, in, out, gOut,
                                          c.lastStateGrad ? &lastGrad : nullptr,
                                          c.inputGrads ? &inGrad : nullptr, wGrad, "bwdwu", options);
  }
  if (c.inputGrads)
    fetch("dIn", inGrad);
  fetch("dH0", initGrad.output);
  fetch("dC0", initGrad.cellState);
  fetch("dWi", wGrad.inputWeights);
  fetch("dWo", wGrad.outputWeights);
  fetch("dB", wGrad.biases);

  // Host values (weights in the user's cellOrder), exact in half.
  const Values v = io.randomValues(unsigned(c.T * 131 + c.B * 17 + c.H),
                                   [](const std::string &n) { return n[0] == 'w' ? 0.5 : 1.0; });

  Engine engine(graph, prog);
  engine.load(device);
  io.write(engine, v);
  if (!c.lens.empty()) {
    std::vector<int> i(c.lens.begin(), c.lens.end());
    std::vector<unsigned> u(c.lens.begin(), c.lens.end());
    if (c.intSteps)
      engine.writeTensor("steps", i.data(), i.data() + i.size());
    else
      engine.writeTensor("steps", u.data(), u.data() + u.size());
  }
  engine.run(0);
  auto read = [&](const std::string &name) { return io.read(engine, name); };

  const HostLstm host{c};
  const double tol = c.type == HALF ? 3e-2 : 2e-4;
  auto check = [&](const std::string &what, const std::vector<double> &got, const std::vector<double> &want) {
    INFO(what << " (" << c.type << ", T=" << c.T << ", B=" << c.B << ")");
    aspen::test::recurrent::checkClose(got, want, tol);
  };
  std::vector<double> hOut, hT, hC;
  host.forward(v, hOut, hT, hC);
  check("output", read("out"), c.fullSequence ? hOut : hT);
  check("final cell state", read("cT"), hC);
  if (c.inputGrads)
    check("input gradient", read("dIn"), host.numericGrad(v, "in"));
  check("initial output gradient", read("dH0"), host.numericGrad(v, "h0"));
  check("initial cell state gradient", read("dC0"), host.numericGrad(v, "c0"));
  check("input weights gradient", read("dWi"), host.numericGrad(v, "wi"));
  check("output weights gradient", read("dWo"), host.numericGrad(v, "wo"));
  check("bias gradient", read("dB"), host.numericGrad(v, "b"));
}

const std::vector<BasicLstmCellUnit> defaultOrder = popnn::lstm::getDefaultBasicLstmCellOrder();
const std::vector<BasicLstmCellUnit> customOrder{BASIC_LSTM_CELL_INPUT_GATE, BASIC_LSTM_CELL_CANDIDATE,
                                                 BASIC_LSTM_CELL_OUTPUT_GATE, BASIC_LSTM_CELL_FORGET_GATE};

} // namespace

TEST_CASE("popnn::lstm forward, backward and weight update against a host LSTM (float)", "[compat][popnn]") {
  SECTION("full sequence, lstmBwd + lstmWU") {
    runLstm({FLOAT, 3, 2, 3, 4, true, true, false, defaultOrder});
  }
  SECTION("last output only, lstmBwdWithWU, final state gradients, custom cell order") {
    runLstm({FLOAT, 5, 1, 2, 3, false, false, true, customOrder});
  }
  SECTION("one step, batch 3, RELU / HARD_SIGMOID activations") {
    runLstm({FLOAT, 1, 3, 4, 2, true, false, true, defaultOrder, NonLinearityType::RELU,
             NonLinearityType::HARD_SIGMOID});
  }
  SECTION("no input gradients, on the 1,472-tile IPU model") {
    Config c{FLOAT, 4, 3, 5, 6, true, false, true, customOrder};
    c.inputGrads = false;
    c.tiles = 1472;
    runLstm(c);
  }
  SECTION("on a graph with only popops' and poplin's codelets") {
    Config c{FLOAT, 2, 2, 2, 3, true, false, false, defaultOrder};
    c.popnnCodelets = false;
    runLstm(c);
  }
}

TEST_CASE("popnn::lstm with variable time steps against a host LSTM", "[compat][popnn]") {
  SECTION("a length per sequence, full sequence, lstmBwd + lstmWU") {
    Config c{FLOAT, 5, 3, 2, 3, true, true, false, defaultOrder};
    c.lens = {2, 5, 0};
    runLstm(c);
  }
  SECTION("the longest sequence shorter than maxTimeSteps, preserveFinalState, last output only") {
    Config c{FLOAT, 5, 3, 2, 3, false, false, false, customOrder};
    c.lens = {1, 3, 2};
    c.preserveFinalState = true;
    runLstm(c);
  }
  SECTION("int lengths clamped to [0, maxTimeSteps], no preserveFinalState, last output only") {
    Config c{FLOAT, 4, 3, 3, 2, false, true, false, defaultOrder};
    c.lens = {-1, 9, 2};
    c.intSteps = true;
    runLstm(c);
  }
  SECTION("one length for the whole batch, deprecated lstmBwdWithWU form (its cell gradient ignored)") {
    Config c{FLOAT, 5, 2, 2, 3, true, false, false, defaultOrder};
    c.lens = {3};
    c.deprecatedForm = true;
    runLstm(c);
  }
  SECTION("half") {
    Config c{HALF, 4, 2, 3, 4, true, false, false, defaultOrder};
    c.lens = {3, 1};
    c.preserveFinalState = true;
    runLstm(c);
  }
}

TEST_CASE("popnn::lstm forward, backward and weight update against a host LSTM (half)", "[compat][popnn]") {
  runLstm({HALF, 3, 2, 3, 4, true, true, true, defaultOrder});
}

TEST_CASE("popnn::lstm parameters, defaults and helpers as PopLibs declares them", "[compat][popnn]") {
  popnn::lstm::LstmParams p(FLOAT, 2, 7, {3, 5});
  REQUIRE(p.rnn.maxTimeSteps == 7);
  REQUIRE(p.timeSteps == 7);
  REQUIRE(p.rnn.layerSizes == std::vector<std::size_t>{3, 5});
  REQUIRE(p.outputFullSequence);
  REQUIRE(p.calcInputGradients);
  REQUIRE(p.activation == NonLinearityType::TANH);
  REQUIRE(p.recurrentActivation == NonLinearityType::SIGMOID);
  REQUIRE(p.cellOrder == defaultOrder);
  REQUIRE(!p.rnn.variableTimeSteps());
  // Forward: 2 flops per multiply-add of the 4 units' weights over every step and batch entry.
  REQUIRE(popnn::lstm::getBasicLstmCellFwdFlops(p) >= 2ull * 2 * 7 * 4 * 5 * (3 + 5));
  REQUIRE(popnn::lstm::getBasicLstmCellWuFlops(p) >= 2ull * 2 * 7 * 4 * 5 * (3 + 5));
  REQUIRE(popnn::lstm::getMatMulPrePlanParameters(p, {}).size() == 3);
  REQUIRE(popnn::lstm::getMatMulPrePlanParameters(p, {{"inferenceOnly", "true"}}).size() == 1);

  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  auto state = popnn::lstm::createInitialState(graph, p, "s");
  REQUIRE(state.getAsTensor().shape() == std::vector<std::size_t>{2, 2, 5});
  Sequence prog;
  popnn::lstm::zeroInitialState(graph, state, prog, "zero");
  graph.createHostRead("s", state.getAsTensor());
  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
  std::vector<float> s(20, 1.0f);
  engine.readTensor("s", s.data(), s.data() + s.size());
  for (float e : s)
    REQUIRE(e == 0.0f);
}
