// Copyright (c) Aspen contributors.
// A client of popnn/Rnn.hpp: a custom cell (a vanilla RNN, h_t = tanh(x_t W + h_{t-1} U)) run
// by popnn::rnn::Rnn over the time steps, forwards and in reverse, its state stored per step
// through a StateSequence and an output sequence written by the cell; checked against a host
// loop. Also the sequence tensors' shapes, shiftRnnTensor, and the LSTM on a graph with only
// popops' and poplin's codelets (as PopLibs builds it from their vertices).
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/Lstm.hpp>
#include <popnn/Rnn.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

// With `lens` (one per sequence of the batch) the parameters have variable time steps: the cell
// keeps the state of a sequence past its last step (through the batch flags), counts the steps
// where some sequence has ended (the variable-sequence flag), and steps from the longest
// sequence's length onwards do not run.
void runVanilla(bool reverse, std::vector<unsigned> lens = {}) {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);

  const std::size_t T = 4, B = 2, I = 3, H = 2;
  Tensor steps;
  if (!lens.empty()) {
    steps = graph.addVariable(UNSIGNED_INT, {B}, "steps");
    graph.setTileMapping(steps, 0);
    graph.createHostWrite("steps", steps);
  }
  popnn::rnn::RnnParams params = lens.empty() ? popnn::rnn::RnnParams(FLOAT, B, T, {I, H})
                                              : popnn::rnn::RnnParams(FLOAT, B, T, steps, {I, H});
  Tensor flagged = graph.addVariable(FLOAT, {1}, "flagged");
  graph.setTileMapping(flagged, 0);
  Tensor x = popnn::rnn::createInputTensor(graph, params, 1, "x");
  Tensor h0 = popnn::rnn::createInitialState(graph, params, true, 1, 1, "h0");
  REQUIRE(x.shape() == std::vector<std::size_t>{T, B, I});
  REQUIRE(h0.shape() == std::vector<std::size_t>{1, B, H});
  Tensor W = graph.addVariable(FLOAT, {I, H}, "W"), U = graph.addVariable(FLOAT, {H, H}, "U");
  poputil::mapTensorLinearly(graph, W);
  poputil::mapTensorLinearly(graph, U);
  Tensor states = popnn::rnn::createOutputTensor(graph, params, 1, "states");
  Tensor doubled = popnn::rnn::createOutputTensor(graph, params, 1, "doubled");
  REQUIRE(states.shape() == std::vector<std::size_t>{T, B, H});
  REQUIRE(popnn::rnn::createOutputTensor(graph, params, 3, 1, "three").shape() ==
          std::vector<std::size_t>{3 * T, B, H});
  graph.createHostWrite("x", x);
  graph.createHostWrite("h0", h0);
  graph.createHostWrite("W", W);
  graph.createHostWrite("U", U);

  // The cell: the state update, and twice the state into the cell's output slice.
  popnn::rnn::LoopBodyType plain = [&](Graph &g, const popnn::rnn::TimeStepState &time,
                                       const popnn::rnn::RnnBatchwiseFlags &flags, std::vector<Tensor> &state,
                                       const popnn::rnn::RnnSlice &slice, std::vector<Tensor> &, Sequence *,
                                       const DebugNameAndId &dnai) {
    using namespace popops::expr;
    Sequence s;
    Tensor a = poplin::matMul(g, slice.inputs[0], W, s, FLOAT, {dnai, "xW"});
    Tensor b = poplin::matMul(g, state[0][0], U, s, FLOAT, {dnai, "hU"});
    Tensor h = popops::map(g, Tanh(_1 + _2), {a, b}, s, {dnai});
    REQUIRE(flags.valid() == !lens.empty());
    REQUIRE(time.variableSeqFlag.valid() == !lens.empty());
    if (flags.valid()) {
      REQUIRE(flags.mask.shape() == std::vector<std::size_t>{B});
      REQUIRE(flags.mask.elementType() == FLOAT);
      const Tensor m = flags.mask.expand({1}).broadcast(H, 1),
                   inv = flags.inverse.expand({1}).broadcast(H, 1);
      h = popops::map(g, _1 * _2 + _3 * _4, {m, h, inv, state[0][0]}, s, {dnai, "keep"});
      Sequence count;
      popops::mapInPlace(g, _1 + Const(1.0f), {flagged}, count, {dnai, "count"});
      s.add(If(time.variableSeqFlag, count, Sequence()));
    }
    s.add(Copy(h, state[0][0]));
    s.add(Copy(popops::map(g, popops::expr::Const(2.0f) * popops::expr::_1, {h}, s), slice.outputs[0]));
    return s;
  };
  Sequence prog;
  popops::zero(graph, concat({states, doubled}), prog);
  popops::zero(graph, flagged, prog);
  graph.createHostRead("flagged", flagged);
  OptionFlags options{{"codeReuse", "true"}};
  auto final = popnn::rnn::Rnn(graph, params, reverse, {h0}, {states, 0}, {x}, nullptr, nullptr, {doubled},
                               {}, prog, plain, 1, options, "vanilla");
  REQUIRE(final.size() == 1);
  graph.createHostRead("final", final[0]);
  graph.createHostRead("states", states);
  graph.createHostRead("doubled", doubled);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto rand = [&](std::size_t n) {
    std::vector<float> v(n);
    for (auto &e : v)
      e = dist(rng);
    return v;
  };
  const auto hx = rand(T * B * I), hh0 = rand(B * H), hW = rand(I * H), hU = rand(H * H);

  Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("x", hx.data(), hx.data() + hx.size());
  engine.writeTensor("h0", hh0.data(), hh0.data() + hh0.size());
  engine.writeTensor("W", hW.data(), hW.data() + hW.size());
  engine.writeTensor("U", hU.data(), hU.data() + hU.size());
  if (!lens.empty())
    engine.writeTensor("steps", lens.data(), lens.data() + lens.size());
  engine.run(0);
  std::vector<float> gotFinal(B * H), gotStates(T * B * H), gotDoubled(T * B * H), gotFlagged(1);
  engine.readTensor("flagged", gotFlagged.data(), gotFlagged.data() + 1);
  engine.readTensor("final", gotFinal.data(), gotFinal.data() + gotFinal.size());
  engine.readTensor("states", gotStates.data(), gotStates.data() + gotStates.size());
  engine.readTensor("doubled", gotDoubled.data(), gotDoubled.data() + gotDoubled.size());

  std::vector<double> h(hh0.begin(), hh0.end());
  auto len = [&](std::size_t n) { return lens.empty() ? T : std::min<std::size_t>(T, lens[n]); };
  std::size_t maxLen = 0, minLen = T, flaggedSteps = 0;
  for (std::size_t n = 0; n < B; ++n) {
    maxLen = std::max(maxLen, len(n));
    minLen = std::min(minLen, len(n));
  }
  for (std::size_t k = 0; k < T; ++k) {
    const std::size_t t = reverse ? T - 1 - k : k;
    if (t >= maxLen) { // not run: the sequences stay zero
      for (std::size_t e = 0; e < B * H; ++e)
        REQUIRE((gotStates[t * B * H + e] == 0 && gotDoubled[t * B * H + e] == 0));
      continue;
    }
    flaggedSteps += t >= minLen;
    std::vector<double> hn(B * H);
    for (std::size_t n = 0; n < B; ++n)
      for (std::size_t j = 0; j < H; ++j) {
        double s = 0;
        for (std::size_t i = 0; i < I; ++i)
          s += hx[(t * B + n) * I + i] * hW[i * H + j];
        for (std::size_t i = 0; i < H; ++i)
          s += h[n * H + i] * hU[i * H + j];
        hn[n * H + j] = t < len(n) ? std::tanh(s) : h[n * H + j];
      }
    h = hn;
    for (std::size_t e = 0; e < B * H; ++e) {
      REQUIRE(gotStates[t * B * H + e] == Approx(h[e]).margin(1e-5));
      REQUIRE(gotDoubled[t * B * H + e] == Approx(2 * h[e]).margin(1e-5));
    }
  }
  REQUIRE(gotFlagged[0] == float(lens.empty() ? 0 : flaggedSteps));
  for (std::size_t e = 0; e < B * H; ++e)
    REQUIRE(gotFinal[e] == Approx(h[e]).margin(1e-5));
}

} // namespace

TEST_CASE("popnn::rnn::Rnn runs a custom cell over the time steps", "[compat][popnn]") {
  SECTION("forwards") {
    runVanilla(false);
  }
  SECTION("in reverse") {
    runVanilla(true);
  }
  SECTION("variable time steps, the longest shorter than maxTimeSteps") {
    runVanilla(false, {1, 3});
  }
  SECTION("variable time steps in reverse") {
    runVanilla(true, {2, 0});
  }
}

TEST_CASE("popnn::rnn parameters and shiftRnnTensor", "[compat][popnn]") {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  popnn::rnn::RnnParams p(FLOAT, 2, 3, {5, 4});
  REQUIRE(p.timeSteps == 3);
  REQUIRE(!p.variableTimeSteps());
  REQUIRE(p.getMaxShards(graph) == 3);
  REQUIRE(p.getInputBytesPerTile(graph) == (3 * 2 * 5 * 4 + 3) / 4);
  REQUIRE(p.getOutputBytesPerTile(graph) == 3 * 2 * 4 * 4 / 4);
  Tensor steps = graph.addVariable(UNSIGNED_INT, {2}, "steps");
  graph.setTileMapping(steps, 0);
  popnn::rnn::RnnParams v(FLOAT, 2, 3, steps, {5, 4});
  REQUIRE(v.variableTimeSteps());
  REQUIRE(v.batchVariableTimeSteps());

  Tensor base = popnn::rnn::createRecurrentTensor(graph, p, 4, 1, "base");
  REQUIRE(base.shape() == std::vector<std::size_t>{3, 2, 4});
  Tensor first = graph.addVariable(FLOAT, {2, 4}, "first");
  graph.setTileMapping(first, 0);
  Sequence prog;
  Tensor shifted = popnn::rnn::shiftRnnTensor(graph, p, base, first, prog, 1, "shift");
  REQUIRE(shifted.shape() == base.shape());
  graph.createHostWrite("base", base);
  graph.createHostWrite("first", first);
  Tensor out = graph.clone(shifted, "out");
  prog.add(Copy(shifted, out));
  graph.createHostRead("out", out);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> hb(24), hf(8), got(24);
  for (std::size_t i = 0; i < 24; ++i)
    hb[i] = float(i);
  for (std::size_t i = 0; i < 8; ++i)
    hf[i] = -1.0f - float(i);
  engine.writeTensor("base", hb.data(), hb.data() + 24);
  engine.writeTensor("first", hf.data(), hf.data() + 8);
  engine.run(0);
  engine.readTensor("out", got.data(), got.data() + 24);
  for (std::size_t i = 0; i < 8; ++i)
    REQUIRE(got[i] == hf[i]);
  for (std::size_t i = 8; i < 24; ++i)
    REQUIRE(got[i] == hb[i - 8]);
}
