// Copyright (c) Aspen contributors.
// A client of popnn/Gru.hpp written as a Poplar 3.x trainer writes one: createInput,
// createInitialState, createWeights, gruFwd with intermediates, then gruBwd + gruWU or
// gruBwdWithWU, on an IPUModel with the codelets of popops, poplin and popnn. Every result is
// checked against a host GRU in double: the forward pass directly, and every gradient (input,
// initial output, weights, biases) against central finite differences of the host loss
// L = sum(outputGrad * output). Float and half, both reset placements, both output forms,
// several sequence lengths and batch sizes, a custom cellOrder and activations.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/codelets.hpp>
#include <popnn/Gru.hpp>
#include <popnn/codelets.hpp>
#include <popops/Cast.hpp>
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
  bool resetAfter;
  bool separateWU; // gruBwd + gruWU, else gruBwdWithWU
  std::vector<BasicGruCellUnit> order;
  NonLinearityType activation = NonLinearityType::TANH;
  NonLinearityType recurrent = NonLinearityType::SIGMOID;
  bool attention = false; // AUGRU: auGruFwd, auGruBwd / auGruBwdWithWU
  // Variable time steps when not empty (one per sequence or one for all): through the
  // realTimeSteps forms when realForms, else GruParams' varTimeSteps.
  std::vector<unsigned> lens = {};
  bool realForms = false;

  std::size_t steps(std::size_t n) const {
    if (lens.empty())
      return T;
    return std::min<std::size_t>(T, lens.size() == 1 ? lens[0] : lens[n]);
  }
  std::size_t maxSteps() const {
    std::size_t m = 0;
    for (std::size_t n = 0; n < B; ++n)
      m = std::max(m, steps(n));
    return m;
  }
};

struct HostGru {
  Config c;
  void forward(const Values &v, std::vector<double> &out, std::vector<double> &hT) const {
    const auto &x = v.at("in"), &wi = v.at("wi"), &wo = v.at("wo"), &b = v.at("b");
    std::vector<double> h = v.at("h0");
    out.assign(c.T * c.B * c.H, 0);
    std::size_t pos[3];
    for (std::size_t k = 0; k < 3; ++k)
      pos[c.order[k]] = k;
    // bias of unit u: input part, recurrent part (resetAfter: {3, 2, H}, else {3, H})
    auto bias = [&](std::size_t u, std::size_t part, std::size_t j) {
      const std::size_t k = pos[u];
      if (!c.resetAfter)
        return part == 0 ? b[k * c.H + j] : 0.0;
      return b[(k * 2 + part) * c.H + j];
    };
    // With variable time steps a sequence past its last step outputs zeros and keeps its h
    // (the final output); the steps after the longest sequence's last do not run.
    for (std::size_t t = 0; t < c.maxSteps(); ++t) {
      std::vector<double> hn(c.B * c.H);
      for (std::size_t n = 0; n < c.B; ++n) {
        // xW for every unit, hU for every unit, r for every output
        std::vector<double> xw(3 * c.H), hu(3 * c.H), r(c.H), rhU(c.H);
        for (std::size_t u = 0; u < 3; ++u)
          for (std::size_t j = 0; j < c.H; ++j) {
            const std::size_t k = pos[u];
            double s = 0, q = 0;
            for (std::size_t i = 0; i < c.I; ++i)
              s += x[(t * c.B + n) * c.I + i] * wi[(k * c.I + i) * c.H + j];
            for (std::size_t i = 0; i < c.H; ++i)
              q += h[n * c.H + i] * wo[(k * c.H + i) * c.H + j];
            xw[u * c.H + j] = s;
            hu[u * c.H + j] = q;
          }
        for (std::size_t j = 0; j < c.H; ++j)
          r[j] = act(c.recurrent, xw[j] + hu[j] + bias(0, 0, j) + bias(0, 1, j));
        for (std::size_t j = 0; j < c.H; ++j) {
          double q = 0;
          for (std::size_t i = 0; i < c.H; ++i)
            q += r[i] * h[n * c.H + i] * wo[(pos[2] * c.H + i) * c.H + j];
          rhU[j] = q;
        }
        for (std::size_t j = 0; j < c.H; ++j) {
          double u = act(c.recurrent, xw[c.H + j] + hu[c.H + j] + bias(1, 0, j) + bias(1, 1, j));
          if (c.attention)
            u *= 1 - v.at("att")[n * c.T + t];
          const double cand = c.resetAfter ? act(c.activation, xw[2 * c.H + j] + bias(2, 0, j) +
                                                                   r[j] * (hu[2 * c.H + j] + bias(2, 1, j)))
                                           : act(c.activation, xw[2 * c.H + j] + rhU[j] + bias(2, 0, j));
          hn[n * c.H + j] = u * h[n * c.H + j] + (1 - u) * cand;
          if (t < c.steps(n))
            out[(t * c.B + n) * c.H + j] = hn[n * c.H + j];
          else
            hn[n * c.H + j] = h[n * c.H + j];
        }
      }
      h = hn;
    }
    hT = h;
  }
  double loss(const Values &v) const {
    std::vector<double> out, hT;
    forward(v, out, hT);
    const auto &g = v.at("gOut");
    const std::vector<double> &y = c.fullSequence ? out : hT;
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i)
      l += g[i] * y[i];
    return l;
  }
  std::vector<double> numericGrad(const Values &v, const std::string &name) const {
    return aspen::test::recurrent::numericGrad([this](const Values &x) { return loss(x); }, v, name);
  }
};

void runGru(const Config &c) {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);

  Tensor steps;
  if (!c.lens.empty()) {
    steps = graph.addVariable(UNSIGNED_INT, {c.lens.size()}, "steps");
    graph.setTileMapping(steps, 1);
    graph.createHostWrite("steps", steps);
  }
  popnn::gru::GruParams params =
      c.lens.empty() || c.realForms
          ? popnn::gru::GruParams(c.type, c.B, c.T, {c.I, c.H}, c.activation, c.recurrent)
          : popnn::gru::GruParams(c.type, c.B, c.T, steps, {c.I, c.H}, c.activation, c.recurrent);
  const bool real = c.realForms;
  params.outputFullSequence = c.fullSequence;
  params.resetAfter = c.resetAfter;
  params.cellOrder = c.order;
  const OptionFlags options{{"inferenceOnly", "false"}, {"partialsType", "float"}};

  Sequence prog;
  HostIo io{graph, prog, c.type};
  auto feed = [&](const std::string &name, const Tensor &dst) { io.feed(name, dst); };
  auto fetch = [&](const std::string &name, const Tensor &src) { io.fetch(name, src); };

  Tensor in = popnn::gru::createInput(graph, params, "in", options);
  Tensor h0 = popnn::gru::createInitialState(graph, params, "h0", options, nullptr);
  popnn::gru::GruWeights w = popnn::gru::createWeights(graph, params, "weights", options);
  Tensor att;
  if (c.attention) {
    att = popnn::gru::createAttention(graph, params, "att", options);
    REQUIRE(att.shape() == std::vector<std::size_t>{c.B, c.T});
    feed("att", att);
  }
  REQUIRE(w.inputWeights.shape() == std::vector<std::size_t>{3, c.I, c.H});
  REQUIRE(w.outputWeights.shape() == std::vector<std::size_t>{3, c.H, c.H});
  REQUIRE(w.biases.shape() ==
          (c.resetAfter ? std::vector<std::size_t>{3, 2, c.H} : std::vector<std::size_t>{3, c.H}));
  feed("in", in);
  feed("h0", h0);
  feed("wi", w.inputWeights);
  feed("wo", w.outputWeights);
  feed("b", w.biases);

  Tensor fwdInter;
  Tensor out;
  if (real)
    out = c.attention
              ? popnn::gru::auGruFwd(graph, params, h0, in, steps, w, &fwdInter, att, prog, "augru", options)
              : popnn::gru::gruFwd(graph, params, h0, in, steps, w, &fwdInter, prog, "gru", options);
  else
    out = c.attention ? popnn::gru::auGruFwd(graph, params, h0, in, w, &fwdInter, att, prog, "augru", options)
                      : popnn::gru::gruFwd(graph, params, h0, in, w, &fwdInter, prog, "gru", options);
  fetch("out", out);
  Tensor gOut = graph.addVariable(c.type, out.shape(), "gOutT");
  graph.setTileMapping(gOut, 1);
  feed("gOut", gOut);

  Tensor inGrad, h0Grad, attGrad;
  popnn::gru::GruWeights wGrad;
  if (real && c.attention && c.separateWU) {
    Tensor bwdInter;
    h0Grad = popnn::gru::auGruBwd(graph, params, prog, h0, fwdInter, w, in, steps, out, gOut, &inGrad,
                                  &bwdInter, att, &attGrad, "bwd", options, nullptr);
    wGrad =
        popnn::gru::auGruWU(graph, params, prog, h0, fwdInter, bwdInter, w, in, out, "wu", options, nullptr);
  } else if (real && c.attention) {
    h0Grad = popnn::gru::auGruBwdWithWU(graph, params, prog, h0, fwdInter, w, in, steps, out, gOut, &inGrad,
                                        wGrad, att, &attGrad, "bwdwu", options, nullptr);
  } else if (real && c.separateWU) {
    Tensor bwdInter;
    h0Grad = popnn::gru::gruBwd(graph, params, prog, h0, fwdInter, w, in, steps, out, gOut, &inGrad,
                                &bwdInter, "bwd", options, nullptr);
    wGrad =
        popnn::gru::gruWU(graph, params, prog, h0, fwdInter, bwdInter, w, in, out, "wu", options, nullptr);
  } else if (real) {
    h0Grad = popnn::gru::gruBwdWithWU(graph, params, prog, h0, fwdInter, w, in, steps, out, gOut, &inGrad,
                                      wGrad, "bwdwu", options, nullptr);
  } else if (c.attention && c.separateWU) {
    Tensor bwdInter;
    h0Grad = popnn::gru::auGruBwd(graph, params, prog, h0, fwdInter, w, in, out, gOut, &inGrad, &bwdInter,
                                  att, &attGrad, "bwd", options, nullptr);
    wGrad =
        popnn::gru::auGruWU(graph, params, prog, h0, fwdInter, bwdInter, w, in, out, "wu", options, nullptr);
  } else if (c.attention) {
    h0Grad = popnn::gru::auGruBwdWithWU(graph, params, prog, h0, fwdInter, w, in, out, gOut, &inGrad, wGrad,
                                        att, &attGrad, "bwdwu", options, nullptr);
  } else if (c.separateWU) {
    Tensor bwdInter;
    h0Grad = popnn::gru::gruBwd(graph, params, prog, h0, fwdInter, w, in, out, gOut, &inGrad, &bwdInter,
                                "bwd", options, nullptr);
    wGrad =
        popnn::gru::gruWU(graph, params, prog, h0, fwdInter, bwdInter, w, in, out, "wu", options, nullptr);
  } else {
    h0Grad = popnn::gru::gruBwdWithWU(graph, params, prog, h0, fwdInter, w, in, out, gOut, &inGrad, wGrad,
                                      "bwdwu", options, nullptr);
  }
  fetch("dIn", inGrad);
  fetch("dH0", h0Grad);
  fetch("dWi", wGrad.inputWeights);
  fetch("dWo", wGrad.outputWeights);
  fetch("dB", wGrad.biases);
  if (c.attention)
    fetch("dAtt", attGrad);

  Values v = io.randomValues(unsigned(c.T * 131 + c.B * 17 + c.H + c.resetAfter),
                             [](const std::string &n) { return n[0] == 'w' ? 0.5 : 1.0; });
  if (v.count("att")) // attention scores in [0, 0.9]
    for (auto &e : v["att"])
      e = std::round((e + 1) * 0.45 * 256) / 256;

  Engine engine(graph, prog);
  engine.load(device);
  io.write(engine, v);
  if (!c.lens.empty())
    engine.writeTensor("steps", c.lens.data(), c.lens.data() + c.lens.size());
  engine.run(0);
  auto read = [&](const std::string &name) { return io.read(engine, name); };

  const HostGru host{c};
  const double tol = c.type == HALF ? 3e-2 : 2e-4;
  auto check = [&](const std::string &what, const std::vector<double> &got, const std::vector<double> &want) {
    INFO(what << " (" << c.type << ", T=" << c.T << ", B=" << c.B << ", resetAfter=" << c.resetAfter << ")");
    aspen::test::recurrent::checkClose(got, want, tol);
  };
  std::vector<double> hOut, hT;
  host.forward(v, hOut, hT);
  check("output", read("out"), c.fullSequence ? hOut : hT);
  check("input gradient", read("dIn"), host.numericGrad(v, "in"));
  check("initial output gradient", read("dH0"), host.numericGrad(v, "h0"));
  check("input weights gradient", read("dWi"), host.numericGrad(v, "wi"));
  check("output weights gradient", read("dWo"), host.numericGrad(v, "wo"));
  check("bias gradient", read("dB"), host.numericGrad(v, "b"));
  if (c.attention)
    check("attention gradient", read("dAtt"), host.numericGrad(v, "att"));
}

const std::vector<BasicGruCellUnit> defaultOrder = popnn::gru::getDefaultBasicGruCellOrder();
const std::vector<BasicGruCellUnit> customOrder{BASIC_GRU_CELL_CANDIDATE, BASIC_GRU_CELL_RESET_GATE,
                                                BASIC_GRU_CELL_UPDATE_GATE};

} // namespace

TEST_CASE("popnn::gru forward, backward and weight update against a host GRU (float)", "[compat][popnn]") {
  SECTION("full sequence, gruBwd + gruWU") {
    runGru({FLOAT, 3, 2, 3, 4, true, false, true, defaultOrder});
  }
  SECTION("reset after, last output only, gruBwdWithWU, custom cell order") {
    runGru({FLOAT, 4, 1, 2, 3, false, true, false, customOrder});
  }
  SECTION("reset after, full sequence, batch 3, HARD_SIGMOID / RELU") {
    runGru({FLOAT, 2, 3, 2, 2, true, true, true, defaultOrder, NonLinearityType::RELU,
            NonLinearityType::HARD_SIGMOID});
  }
}

TEST_CASE("popnn::gru AUGRU (attention-scaled update gate) against a host AUGRU", "[compat][popnn]") {
  Config c{FLOAT, 3, 2, 2, 3, true, false, true, defaultOrder};
  c.attention = true;
  SECTION("auGruBwd + auGruWU") {
    runGru(c);
  }
  SECTION("reset after, auGruBwdWithWU, half") {
    c.type = HALF;
    c.resetAfter = true;
    c.separateWU = false;
    runGru(c);
  }
}

TEST_CASE("popnn::gru with variable time steps against a host GRU", "[compat][popnn]") {
  SECTION("varTimeSteps, last output only, gruBwd + gruWU") {
    Config c{FLOAT, 5, 3, 2, 3, false, false, true, defaultOrder};
    c.lens = {2, 4, 0};
    runGru(c);
  }
  SECTION("varTimeSteps, full sequence, reset after, gruBwdWithWU") {
    Config c{FLOAT, 4, 2, 3, 2, true, true, false, customOrder};
    c.lens = {4, 1};
    runGru(c);
  }
  SECTION("the realTimeSteps forms: gruFwd, gruBwd + gruWU") {
    Config c{FLOAT, 5, 2, 2, 3, true, false, true, defaultOrder};
    c.lens = {3, 2};
    c.realForms = true;
    runGru(c);
  }
  SECTION("the realTimeSteps forms: gruFwd, gruBwdWithWU, one length for the batch") {
    Config c{FLOAT, 4, 2, 2, 3, true, true, false, defaultOrder};
    c.lens = {2};
    c.realForms = true;
    runGru(c);
  }
  SECTION("the realTimeSteps forms of the AUGRU: auGruBwd + auGruWU, auGruBwdWithWU in half") {
    Config c{FLOAT, 4, 2, 2, 3, true, false, true, defaultOrder};
    c.attention = true;
    c.lens = {1, 3};
    c.realForms = true;
    runGru(c);
    c.type = HALF;
    c.separateWU = false;
    c.resetAfter = true;
    runGru(c);
  }
}

TEST_CASE("popnn::gru forward, backward and weight update against a host GRU (half)", "[compat][popnn]") {
  // resetAfter in half: the AUGRU test case
  runGru({HALF, 3, 2, 3, 4, true, false, false, defaultOrder});
}

TEST_CASE("popnn::gru parameters and defaults as PopLibs declares them", "[compat][popnn]") {
  popnn::gru::GruParams p(HALF, 4, 6, {8, 16});
  const popnn::gru::GruParams copy(p);
  REQUIRE(copy.rnn.maxTimeSteps == 6);
  REQUIRE(copy.rnn.dataType == HALF);
  REQUIRE(!copy.resetAfter);
  REQUIRE(copy.outputFullSequence);
  REQUIRE(copy.cellOrder == defaultOrder);
  REQUIRE(popnn::gru::getBasicGruCellFwdFlops(p) >= 2ull * 4 * 6 * 3 * 16 * (8 + 16));
  REQUIRE(popnn::gru::getBasicGruCellWuFlops(p) >= 2ull * 4 * 6 * 3 * 16 * (8 + 16));
}
