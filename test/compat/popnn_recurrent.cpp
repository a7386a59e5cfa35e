// Copyright (c) Aspen contributors.
// A client of popnn/Recurrent.hpp (PopLibs' older vanilla RNN, y_s = nl(x_s Wff + y_{s-1} Wfb
// + b)) written as PopLibs' own RNN benchmark drives it: step by step (forwardWeightInput,
// forwardIterate, backwardGradientStep in both forms, paramDeltaUpdate) and by whole sequences
// (rnnFwdSequence with and without pre-weighted input, rnnBwdSequence with and without the
// weight update and the input gradients). Outputs are checked against a host loop in double;
// input and parameter gradients against central finite differences of the host loss
// L = sum(G * y). Float and half, on a graph with popops' and poplin's codelets only.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/Recurrent.hpp>
#include <popops/Cast.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

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

struct Host {
  std::size_t S, B, I, H;
  NonLinearityType nl;
  double act(double x) const { return aspen::test::recurrent::activation(nl, x); }
  // y {S, B, H} from x {S, B, I}, wff {I, H}, wfb {H, H}, b {H}, y0 {B, H}.
  std::vector<double> forward(const Values &v) const {
    const auto &x = v.at("x"), &wff = v.at("wff"), &wfb = v.at("wfb"), &b = v.at("b");
    std::vector<double> y(S * B * H), prev = v.at("y0");
    for (std::size_t s = 0; s < S; ++s) {
      for (std::size_t n = 0; n < B; ++n)
        for (std::size_t j = 0; j < H; ++j) {
          double a = b[j];
          for (std::size_t i = 0; i < I; ++i)
            a += x[(s * B + n) * I + i] * wff[i * H + j];
          for (std::size_t i = 0; i < H; ++i)
            a += prev[n * H + i] * wfb[i * H + j];
          y[(s * B + n) * H + j] = act(a);
        }
      prev.assign(y.begin() + s * B * H, y.begin() + (s + 1) * B * H);
    }
    return y;
  }
  double loss(const Values &v) const {
    const auto y = forward(v);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i)
      l += v.at("g")[i] * y[i];
    return l;
  }
  std::vector<double> numericGrad(const Values &v, const std::string &name) const {
    return aspen::test::recurrent::numericGrad([this](const Values &x) { return loss(x); }, v, name);
  }
};

enum class Form { Steps, Sequence, SequencePreWeighted, SequenceNoInputGrads };

void run(Type type, Form form, std::size_t S, std::size_t B, std::size_t I, std::size_t H,
         NonLinearityType nl) {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);

  Sequence prog;
  HostIo io{graph, prog, type};
  auto feed = [&](const std::string &name, const Tensor &dst) { io.feed(name, dst); };
  auto fetch = [&](const std::string &name, const Tensor &src) { io.fetch(name, src); };

  Tensor x = popnn::rnn::createInput(graph, S, B, I, H, type, FLOAT, false, "x");
  REQUIRE(x.shape() == std::vector<std::size_t>{S, B, I});
  Tensor wff = popnn::rnn::createWeightsInput(graph, S, B, I, H, type, FLOAT, false, "wff");
  Tensor wfb = popnn::rnn::createWeightsFeedback(graph, B, H, type, FLOAT, false, "wfb");
  REQUIRE(wff.shape() == std::vector<std::size_t>{I, H});
  REQUIRE(wfb.shape() == std::vector<std::size_t>{H, H});
  Tensor b = graph.addVariable(type, {H}, "b");
  poputil::mapTensorLinearly(graph, b);
  Tensor y0 = popnn::rnn::createFwdState(graph, type, B, H, prog, true, false, "y0");
  REQUIRE(popnn::rnn::getOutputFromFwdState(y0).shape() == std::vector<std::size_t>{B, H});
  feed("x", x);
  feed("wff", wff);
  feed("wfb", wfb);
  feed("b", b);
  feed("y0", popnn::rnn::getOutputFromFwdState(y0));
  // The loss gradient at every output: {S, B, H}, or {B, S, H} as rnnBwdSequence takes it.
  Tensor g = graph.addVariable(type, {S, B, H}, "gT");
  poputil::mapTensorLinearly(graph, g);
  feed("g", g);

  Tensor y, dx, dWff, dWfb, db;
  if (form == Form::Steps) {
    Tensor ff = popnn::rnn::forwardWeightInput(graph, x, wff, prog, FLOAT, false, "ff");
    y = popnn::rnn::forwardIterate(graph, ff, y0, wfb, b, prog, nl, FLOAT, false, "iterate");
    Tensor d = popnn::rnn::createBwdState(graph, type, B, H, prog, "bwd");
    dWff = graph.clone(wff);
    dWfb = graph.clone(wfb);
    db = graph.clone(b);
    popops::zero(graph, concat({dWff.flatten(), dWfb.flatten(), db}), prog);
    std::vector<Tensor> grads(S);
    for (std::size_t k = 0; k < S; ++k) {
      const std::size_t s = S - 1 - k;
      if (s % 2 == 0) {
        std::tie(grads[s], d) = popnn::rnn::backwardGradientStep(graph, g[s], d, y[s], wff, wfb, prog, nl);
      } else { // the form without the input gradient, which the test then forms itself
        d = popnn::rnn::backwardGradientStep(graph, g[s], d, y[s], wfb, prog, nl);
        grads[s] = poplin::matMul(graph, d, wff.transpose(), prog, type);
      }
      popnn::rnn::paramDeltaUpdate(graph, d, x[s], s == 0 ? y0 : y[s - 1], dWff, dWfb, db, prog);
      grads[s] = grads[s].expand({0});
    }
    dx = concat(grads, 0);
  } else {
    Tensor pre;
    if (form == Form::SequencePreWeighted)
      pre = popnn::rnn::forwardWeightInput(graph, x, wff, prog, FLOAT, false, "ff");
    y = popnn::rnn::rnnFwdSequence(graph, prog, y0, pre.valid() ? &pre : nullptr, b, wff, wfb, x, nl, FLOAT,
                                   false, "fwd");
    const bool noInputGrads = form == Form::SequenceNoInputGrads;
    std::tie(dx, dWff, dWfb, db) = popnn::rnn::rnnBwdSequence(
        graph, true, noInputGrads, prog, y0, y, b, wff, wfb, g.dimShuffle({1, 0, 2}), x, nl, FLOAT, "bwd");
    REQUIRE(dx.shape() == std::vector<std::size_t>{S, B, noInputGrads ? H : I});
    if (noInputGrads) {
      fetch("zeros", dx);
      dx = Tensor();
    }
    Tensor none;
    auto r = popnn::rnn::rnnBwdSequence(graph, false, false, prog, y0, y, b, wff, wfb,
                                        g.dimShuffle({1, 0, 2}), x, nl, FLOAT, "bwdOnly");
    REQUIRE((!std::get<1>(r).valid() && !std::get<3>(r).valid()));
    if (!noInputGrads)
      fetch("dx2", std::get<0>(r));
  }
  fetch("y", y);
  if (dx.valid())
    fetch("dx", dx);
  fetch("dWff", dWff);
  fetch("dWfb", dWfb);
  fetch("db", db);

  const Values v = io.randomValues(unsigned(S * 31 + B * 7 + H + int(form)),
                                   [](const std::string &n) { return n[0] == 'w' ? 0.5 : 1.0; });
  Engine engine(graph, prog);
  engine.load(device);
  io.write(engine, v);
  engine.run(0);
  auto read = [&](const std::string &name) { return io.read(engine, name); };
  const Host host{S, B, I, H, nl};
  const double tol = type == HALF ? 3e-2 : 2e-4;
  auto check = [&](const std::string &what, const std::vector<double> &got, const std::vector<double> &want) {
    INFO(what << " (" << type << ", form " << int(form) << ")");
    aspen::test::recurrent::checkClose(got, want, tol);
  };
  check("output", read("y"), host.forward(v));
  const auto gx = host.numericGrad(v, "x");
  if (io.out.count("dx"))
    check("input gradient", read("dx"), gx);
  if (io.out.count("dx2"))
    check("input gradient without the weight update", read("dx2"), gx);
  if (io.out.count("zeros"))
    check("the ignored input gradients", read("zeros"), std::vector<double>(S * B * H, 0.0));
  check("input weights gradient", read("dWff"), host.numericGrad(v, "wff"));
  check("feedback weights gradient", read("dWfb"), host.numericGrad(v, "wfb"));
  check("bias gradient", read("db"), host.numericGrad(v, "b"));
}

} // namespace

TEST_CASE("popnn/Recurrent.hpp: the vanilla RNN step by step against a host RNN", "[compat][popnn]") {
  SECTION("float, TANH") {
    run(FLOAT, Form::Steps, 4, 2, 3, 5, NonLinearityType::TANH);
  }
  SECTION("half, SIGMOID") {
    run(HALF, Form::Steps, 3, 3, 2, 4, NonLinearityType::SIGMOID);
  }
}

TEST_CASE("popnn/Recurrent.hpp: rnnFwdSequence and rnnBwdSequence against a host RNN", "[compat][popnn]") {
  SECTION("float, TANH") {
    run(FLOAT, Form::Sequence, 5, 2, 3, 4, NonLinearityType::TANH);
  }
  SECTION("pre-weighted input, RELU") {
    run(FLOAT, Form::SequencePreWeighted, 3, 2, 2, 3, NonLinearityType::RELU);
  }
  SECTION("no input gradients, half, SIGMOID") {
    run(HALF, Form::SequenceNoInputGrads, 4, 2, 3, 3, NonLinearityType::SIGMOID);
  }
}

TEST_CASE("popnn/Recurrent.hpp: plan parameters and flop counts", "[compat][popnn]") {
  // Two layers' products (input weighting, feedback), each forward, backward and weight update.
  REQUIRE(popnn::rnn::getMatMulPrePlanParameters(4, 2, 3, 5, FLOAT).size() == 6);
  REQUIRE(popnn::rnn::getMatMulPrePlanParameters(4, 2, 3, 5, FLOAT, FLOAT, true, false).size() == 1);
  // S B (O I + O (I - 1)) for the input weighting.
  REQUIRE(popnn::rnn::getFwdFlops(4, 2, 3, 5, true) - popnn::rnn::getFwdFlops(4, 2, 3, 5, false) ==
          4ull * 2 * (5 * 3 + 5 * 2));
  REQUIRE(popnn::rnn::getBwdFlops(4, 2, 3, 5, false) == 4ull * 2 * (5 * 5 + 5 * 4));
  REQUIRE(popnn::rnn::getWuFlops(1, 1, 1, 1) == 5); // one product each, no sums, the update
}
