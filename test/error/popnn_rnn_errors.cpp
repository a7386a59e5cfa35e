// Copyright (c) Aspen contributors.
// popnn's recurrent layers (popnn/Lstm.hpp, Gru.hpp, Rnn.hpp) reject what PopLibs rejects:
// shapes and types that do not match the layer's parameters, bad parameters, and options they
// do not know (poplar::invalid_option naming the key), each naming the op and the argument.
#include <poplin/codelets.hpp>
#include <popnn/Gru.hpp>
#include <popnn/Lstm.hpp>
#include <popnn/Recurrent.hpp>
#include <popnn/Rnn.hpp>
#include <popops/codelets.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>

using namespace poplar;
using aspen::test::requireError;
using popnn::NonLinearityType;

namespace {
struct Fixture {
  Graph graph{Target::createIPUTarget(1, 4, "ipu2")};
  program::Sequence prog;
  Fixture() {
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
  }
  Tensor var(const Type &t, std::vector<std::size_t> shape, const std::string &name) {
    Tensor v = graph.addVariable(t, shape, name);
    graph.setTileMapping(v, 0);
    return v;
  }
};
} // namespace

TEST_CASE("popnn::lstm names the op and the argument at fault", "[popnn][error]") {
  Fixture f;
  popnn::lstm::LstmParams p(FLOAT, 2, 3, {4, 5});
  auto init = popnn::lstm::createInitialState(f.graph, p, "init");
  auto w = popnn::lstm::createWeights(f.graph, p, "w");
  Tensor in = popnn::lstm::createInput(f.graph, p, "in");

  // The input's shape does not match the parameters.
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::lstm::lstmFwd(f.graph, p, init, f.var(FLOAT, {3, 2, 6}, "x"), w, nullptr, f.prog);
      },
      {"popnn::lstm::lstmFwd", "the input", "'x'", "{3,2,4}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::lstm::lstmFwd(f.graph, p, init, f.var(HALF, {3, 2, 4}, "x"), w, nullptr, f.prog);
      },
      {"popnn::lstm::lstmFwd", "the input", "'x'", "half"});
  // Weights of another layer.
  requireError<poputil::poplibs_error>(
      [&] {
        auto bad = w;
        bad.biases = f.var(FLOAT, {4, 6}, "b");
        popnn::lstm::lstmFwd(f.graph, p, init, in, bad, nullptr, f.prog);
      },
      {"popnn::lstm::lstmFwd", "weights.biases", "'b'", "{4,5}"});
  // Options: unknown keys and bad values name the key.
  requireError<poplar::invalid_option>(
      [&] {
        popnn::lstm::createInput(f.graph, p, "in", {{"notAnLstmOption", "1"}});
      },
      {"popnn::lstm::createInput", "notAnLstmOption"});
  requireError<poplar::invalid_option>(
      [&] {
        popnn::lstm::lstmFwd(f.graph, p, init, in, w, nullptr, f.prog, {}, {{"partialsType", "int"}});
      },
      {"popnn::lstm::lstmFwd", "partialsType", "int"});
  requireError<poplar::invalid_option>(
      [&] {
        popnn::lstm::createWeights(f.graph, p, "w", {{"availableMemoryProportion", "1.5"}});
      },
      {"popnn::lstm::createWeightsKernel", "availableMemoryProportion"});
  requireError<poplar::invalid_option>(
      [&] {
        popnn::lstm::createWeights(f.graph, p, "w", {{"recomputationMode", "some"}});
      },
      {"recomputationMode", "some"});
  // Bad parameters.
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::lstm::LstmParams bad(FLOAT, 2, 3, {4, 5, 6});
        popnn::lstm::createInput(f.graph, bad, "in");
      },
      {"popnn::lstm::createInput", "layerSizes", "{inputSize, outputSize}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::lstm::LstmParams bad(INT, 2, 3, {4, 5});
        popnn::lstm::createInput(f.graph, bad, "in");
      },
      {"popnn::lstm::createInput", "dataType", "int"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::lstm::LstmParams bad = p;
        bad.activation = NonLinearityType::SOFTMAX;
        popnn::lstm::lstmFwd(f.graph, bad, init, in, w, nullptr, f.prog);
      },
      {"popnn::lstm::lstmFwd", "activation", "SOFTMAX"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::lstm::LstmParams bad = p;
        bad.cellOrder = {BASIC_LSTM_CELL_FORGET_GATE, BASIC_LSTM_CELL_FORGET_GATE, BASIC_LSTM_CELL_CANDIDATE,
                         BASIC_LSTM_CELL_OUTPUT_GATE};
        popnn::lstm::createWeights(f.graph, bad, "w");
      },
      {"popnn::lstm::createWeightsKernel", "cellOrder"});
  // Variable time steps: one per sequence of the batch (or one for all), an integer type.
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor steps = f.var(UNSIGNED_INT, {3}, "steps");
        popnn::lstm::LstmParams bad(FLOAT, 2, 3, steps, {4, 5});
        popnn::lstm::lstmFwd(f.graph, bad, init, in, w, nullptr, f.prog);
      },
      {"popnn::lstm::lstmFwd", "varTimeSteps", "'steps'", "{3}", "{2}"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor steps = f.var(UNSIGNED_INT, {2, 1}, "steps");
        popnn::lstm::LstmParams bad(FLOAT, 2, 3, steps, {4, 5});
        popnn::lstm::createInput(f.graph, bad, "in");
      },
      {"popnn::lstm::createInput", "varTimeSteps", "'steps'", "{2,1}"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor steps = f.var(FLOAT, {2}, "steps");
        popnn::lstm::LstmParams bad(FLOAT, 2, 3, steps, {4, 5});
        popnn::lstm::lstmFwd(f.graph, bad, init, in, w, nullptr, f.prog);
      },
      {"popnn::lstm::lstmFwd", "varTimeSteps", "'steps'", "float"});
  {
    // With variable time steps the final state's gradients are zero: PopLibs rejects them.
    popnn::lstm::LstmParams vp(FLOAT, 2, 3, f.var(INT, {2}, "steps"), {4, 5});
    Tensor vInter;
    auto vOut = popnn::lstm::lstmFwd(f.graph, vp, init, in, w, &vInter, f.prog).first;
    popnn::lstm::LstmState last = popnn::lstm::createInitialState(f.graph, vp, "last");
    Tensor ig;
    requireError<poputil::poplibs_error>(
        [&] {
          popnn::lstm::lstmBwd(f.graph, vp, f.prog, init, vInter, w, in, vOut, vOut, &last, &ig, nullptr);
        },
        {"popnn::lstm::lstmBwd", "lastStepStateGrad", "varTimeSteps", "'steps'"});
    popnn::lstm::LstmWeights wg;
    requireError<poputil::poplibs_error>(
        [&] {
          popnn::lstm::lstmBwdWithWU(f.graph, vp, f.prog, init, vInter, w, in, vOut, vOut, &last, &ig, wg);
        },
        {"popnn::lstm::lstmBwdWithWU", "lastStepStateGrad", "varTimeSteps"});
  }
  // Backward: inputGrad must be given exactly when input gradients are computed, and the
  // intermediates must be the forward pass's.
  Tensor inter;
  auto out = popnn::lstm::lstmFwd(f.graph, p, init, in, w, &inter, f.prog).first;
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::lstm::lstmBwd(f.graph, p, f.prog, init, inter, w, in, out, out,
                             (const popnn::lstm::LstmState *)nullptr, nullptr, nullptr);
      },
      {"popnn::lstm::lstmBwd", "inputGrad", "calcInputGradients"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor g;
        popnn::lstm::lstmBwd(f.graph, p, f.prog, init, f.var(FLOAT, {3, 2, 5}, "inter"), w, in, out, out,
                             (const popnn::lstm::LstmState *)nullptr, &g, nullptr);
      },
      {"popnn::lstm::lstmBwd", "fwdIntermediates", "'inter'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor g;
        popnn::lstm::lstmBwd(f.graph, p, f.prog, init, inter, w, in, out, f.var(FLOAT, {2, 5}, "dy"),
                             (const popnn::lstm::LstmState *)nullptr, &g, nullptr);
      },
      {"popnn::lstm::lstmBwd", "outputGrad", "'dy'", "{3,2,5}"});
}

TEST_CASE("popnn::gru names the op and the argument at fault", "[popnn][error]") {
  Fixture f;
  popnn::gru::GruParams p(FLOAT, 2, 3, {4, 5});
  p.resetAfter = true;
  Tensor h0 = popnn::gru::createInitialState(f.graph, p, "h0", {}, nullptr);
  auto w = popnn::gru::createWeights(f.graph, p, "w");
  REQUIRE(w.biases.shape() == std::vector<std::size_t>{3, 2, 5});
  Tensor in = popnn::gru::createInput(f.graph, p, "in");

  requireError<poputil::poplibs_error>(
      [&] {
        auto bad = w;
        bad.biases = f.var(FLOAT, {3, 5}, "b"); // the shape without resetAfter
        popnn::gru::gruFwd(f.graph, p, h0, in, bad, nullptr, f.prog);
      },
      {"popnn::gru::gruFwd", "weights.biases", "'b'", "{3,2,5}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gru::gruFwd(f.graph, p, f.var(FLOAT, {5, 2}, "h"), in, w, nullptr, f.prog);
      },
      {"popnn::gru::gruFwd", "stateInit", "'h'", "{2,5}"});
  // recomputationMode is an LSTM option, not a GRU one.
  requireError<poplar::invalid_option>(
      [&] {
        popnn::gru::createInput(f.graph, p, "in", {{"recomputationMode", "none"}});
      },
      {"popnn::gru::createInput", "recomputationMode"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gru::GruParams bad = p;
        bad.recurrentActivation = NonLinearityType::GELU;
        popnn::gru::gruFwd(f.graph, bad, h0, in, w, nullptr, f.prog);
      },
      {"popnn::gru::gruFwd", "recurrentActivation", "GELU"});
  Tensor inter;
  Tensor out = popnn::gru::gruFwd(f.graph, p, h0, in, w, &inter, f.prog);
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gru::GruParams noInputGrads = p;
        noInputGrads.calcInputGradients = false;
        Tensor g;
        popnn::gru::gruBwd(f.graph, noInputGrads, f.prog, h0, inter, w, in, out, out, &g, nullptr, {}, {},
                           nullptr);
      },
      {"popnn::gru::gruBwd", "inputGrad", "calcInputGradients"});

  // The realTimeSteps forms: the full sequence only, time steps given one way, one per sequence.
  Tensor steps = f.var(UNSIGNED_INT, {2}, "steps");
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gru::GruParams last = p;
        last.outputFullSequence = false;
        popnn::gru::gruFwd(f.graph, last, h0, in, steps, w, nullptr, f.prog);
      },
      {"popnn::gru::gruFwd", "outputFullSequence"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gru::GruParams both(FLOAT, 2, 3, f.var(UNSIGNED_INT, {2}, "varSteps"), {4, 5});
        both.resetAfter = true;
        popnn::gru::gruFwd(f.graph, both, h0, in, steps, w, nullptr, f.prog);
      },
      {"popnn::gru::gruFwd", "varTimeSteps", "'varSteps'", "realTimeSteps", "'steps'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor a = popnn::gru::createAttention(f.graph, p, "att");
        popnn::gru::auGruFwd(f.graph, p, h0, in, f.var(UNSIGNED_INT, {4}, "realSteps"), w, nullptr, a,
                             f.prog);
      },
      {"popnn::gru::auGruFwd", "realTimeSteps", "'realSteps'", "{4}", "{2}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gru::gruBwd(f.graph, p, f.prog, h0, inter, w, in, f.var(HALF, {2}, "realSteps"), out, out,
                           nullptr, nullptr, {}, {}, nullptr);
      },
      {"popnn::gru::gruBwd", "realTimeSteps", "'realSteps'", "half"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gru::GruWeights wg;
        Tensor ig;
        popnn::gru::gruBwdWithWU(f.graph, p, f.prog, h0, inter, w, in, Tensor(), out, out, &ig, wg, {}, {},
                                 nullptr);
      },
      {"popnn::gru::gruBwdWithWU", "realTimeSteps"});
}

TEST_CASE("popnn::rnn names the op and the argument at fault", "[popnn][error]") {
  Fixture f;
  popnn::rnn::RnnParams p(FLOAT, 2, 3, {4, 5});
  Tensor h0 = popnn::rnn::createInitialState(f.graph, p, true, 1, 1, "h0")[0];
  Tensor x = popnn::rnn::createInputTensor(f.graph, p, 1, "x");
  popnn::rnn::LoopBodyType cell = [](Graph &, const popnn::rnn::TimeStepState &,
                                     const popnn::rnn::RnnBatchwiseFlags &, std::vector<Tensor> &,
                                     const popnn::rnn::RnnSlice &, std::vector<Tensor> &, program::Sequence *,
                                     const DebugNameAndId &) { return program::Sequence(); };
  OptionFlags unknown{{"codeReUse", "true"}};
  requireError<poplar::invalid_option>(
      [&] {
        popnn::rnn::Rnn(f.graph, p, false, {h0}, {}, {x}, nullptr, nullptr, {}, {}, f.prog, cell, 1, unknown);
      },
      {"popnn::rnn::Rnn", "codeReUse"});
  OptionFlags none;
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::Rnn(f.graph, p, false, {h0}, {}, {f.var(FLOAT, {4, 2, 4}, "seq")}, nullptr, nullptr, {},
                        {}, f.prog, cell, 1, none);
      },
      {"popnn::rnn::Rnn", "inputs[0]", "'seq'", "3 time steps"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor seq = popnn::rnn::createOutputTensor(f.graph, p, 1, "out");
        popnn::rnn::Rnn(f.graph, p, false, {h0}, {seq, 1}, {x}, nullptr, nullptr, {}, {}, f.prog, cell, 1,
                        none);
      },
      {"popnn::rnn::Rnn", "stateSequence.stateIndex", "1"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::RnnParams bad(FLOAT, 2, 3, f.var(UNSIGNED_INT, {5}, "steps"), {4, 5});
        popnn::rnn::Rnn(f.graph, bad, false, {h0}, {}, {x}, nullptr, nullptr, {}, {}, f.prog, cell, 1, none);
      },
      {"popnn::rnn::Rnn", "varTimeSteps", "'steps'", "{5}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::shiftRnnTensor(f.graph, p, x, f.var(FLOAT, {2, 5}, "first"), f.prog, 1);
      },
      {"popnn::rnn::shiftRnnTensor", "'first'"});
}

TEST_CASE("popnn/Recurrent.hpp names the op and the argument at fault", "[popnn][error]") {
  Fixture f;
  const unsigned S = 3, B = 2, I = 4, H = 5;
  Tensor x = popnn::rnn::createInput(f.graph, S, B, I, H, FLOAT, FLOAT, false, "x");
  Tensor wff = popnn::rnn::createWeightsInput(f.graph, S, B, I, H, FLOAT, FLOAT, false, "wff");
  Tensor wfb = popnn::rnn::createWeightsFeedback(f.graph, B, H, FLOAT, FLOAT, false, "wfb");
  Tensor b = f.var(FLOAT, {H}, "b");
  Tensor y0 = popnn::rnn::createFwdState(f.graph, FLOAT, B, H, f.prog, true, false, "y0");

  requireError<poputil::poplibs_error>([&] { popnn::rnn::createInput(f.graph, 0, B, I, H, FLOAT); },
                                       {"popnn::rnn::createInput", "numSteps"});
  requireError<poputil::poplibs_error>([&] { popnn::rnn::createWeightsFeedback(f.graph, B, H, INT); },
                                       {"popnn::rnn::createWeightsFeedback", "int"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::forwardWeightInput(f.graph, x, f.var(FLOAT, {H, I}, "w"), f.prog);
      },
      {"popnn::rnn::forwardWeightInput", "weights", "'w'", "{5,4}"});
  Tensor ff = popnn::rnn::forwardWeightInput(f.graph, x, wff, f.prog);
  requireError<poputil::poplibs_error>(
      [&] { popnn::rnn::forwardIterate(f.graph, ff, y0, wfb, b, f.prog, NonLinearityType::GELU); },
      {"popnn::rnn::forwardIterate", "nonLinearityType", "GELU"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::forwardIterate(f.graph, ff, y0, wfb, f.var(FLOAT, {H + 1}, "bias"), f.prog,
                                   NonLinearityType::TANH);
      },
      {"popnn::rnn::forwardIterate", "biases", "'bias'", "{5}"});
  Tensor y = popnn::rnn::forwardIterate(f.graph, ff, y0, wfb, b, f.prog, NonLinearityType::TANH);
  Tensor d = popnn::rnn::createBwdState(f.graph, FLOAT, B, H, f.prog);
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::backwardGradientStep(f.graph, y[0], d, f.var(FLOAT, {B, H + 1}, "act"), wff, wfb, f.prog,
                                         NonLinearityType::TANH);
      },
      {"popnn::rnn::backwardGradientStep", "actOut", "'act'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor acc = f.var(FLOAT, {H, I}, "acc"), fb = f.graph.clone(wfb), bias = f.graph.clone(b);
        popnn::rnn::paramDeltaUpdate(f.graph, d, x[0], y0, acc, fb, bias, f.prog);
      },
      {"popnn::rnn::paramDeltaUpdate", "weightsInputDeltasAcc", "'acc'", "{4,5}"});
  // outGradient is {batch, steps, outputSize}: the output's own shape is refused.
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::rnnBwdSequence(f.graph, true, false, f.prog, y0, y, b, wff, wfb,
                                   f.var(FLOAT, {S, B, H}, "g"), x, NonLinearityType::TANH, FLOAT);
      },
      {"popnn::rnn::rnnBwdSequence", "outGradient", "'g'", "{2,3,5}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::rnn::rnnFwdSequence(f.graph, f.prog, y0, nullptr, b, wff, wfb, x, NonLinearityType::TANH, INT,
                                   false);
      },
      {"popnn::rnn::rnnFwdSequence", "partialsType", "int"});
}
