// Copyright (c) Aspen contributors.
// popnn::rnn's vanilla recurrent layer (popnn/Recurrent.hpp): poplin matMuls and popops maps;
// the whole-sequence passes run one popops::countedLoop over the steps.
#include <popnn/Recurrent.hpp>

#include "RnnInternal.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poplin/FullyConnected.hpp>
#include <poplin/MatMul.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Loop.hpp>
#include <popops/Reduce.hpp>
#include <popops/Zero.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

using namespace poplar;
using aspen::ops::describe;
using aspen::ops::shapeString;

namespace popnn {
namespace rnn {

namespace {

using popops::expr::_1;
using popops::expr::_2;

OptionFlags mmOptions(const Type &partialsType, const char *pass) {
  return {{"partialsType", partialsType == HALF ? "half" : "float"}, {"fullyConnectedPass", pass}};
}
const char *fwdPass(bool inferenceOnly) {
  return inferenceOnly ? "INFERENCE_FWD" : "TRAINING_FWD";
}

void checkPartials(const Type &partialsType, const std::string &op) {
  if (partialsType != FLOAT && partialsType != HALF)
    throw poputil::poplibs_error(op + ": partialsType " + partialsType.toString().str() +
                                 " is not supported (float and half are)");
}

void checkDataType(const Type &t, const std::string &op, const std::string &what) {
  if (t != FLOAT && t != HALF)
    throw poputil::poplibs_error(op + ": " + what + " has element type " + t.toString().str() +
                                 " (float and half are supported)");
}

void checkShape(const Tensor &t, const std::vector<std::size_t> &shape, const Type &type,
                const std::string &op, const std::string &role) {
  rnn_detail::checkTensor(t, shape, type, op, role);
}

void checkRank3(const Tensor &t, const std::string &op, const std::string &role) {
  aspen::ops::requireValid(t, op, role);
  if (t.rank() != 3 || t.dim(0) == 0 || t.dim(1) == 0 || t.dim(2) == 0)
    throw poputil::poplibs_error(op + ": " + role + " " + describe(t) + " has shape " +
                                 shapeString(t.shape()) + "; it must be {steps, batchSize, size}, none zero");
  checkDataType(t.elementType(), op, role + " " + describe(t));
}

Tensor stateLike(Graph &graph, const Type &type, unsigned batchSize, unsigned outputSize, const char *pass,
                 const DebugNameAndId &di, poplin::PlanningCache *cache) {
  return poplin::createMatMulInputLHS(graph, type, {batchSize, outputSize}, {outputSize, outputSize}, di,
                                      {{"fullyConnectedPass", pass}}, cache);
}

/// The checks and product of one backward step; `weightsInput` may be null.
std::pair<Tensor, Tensor> backwardStep(Graph &graph, const Tensor &gradOut, const Tensor &bwdState,
                                       const Tensor &actOut, const Tensor *weightsInput,
                                       const Tensor &weightsFeedback, program::Sequence &prog,
                                       NonLinearityType nl, const Type &partialsType, const std::string &op,
                                       const DebugNameAndId &di, poplin::PlanningCache *cache) {
  checkPartials(partialsType, op);
  rnn_detail::checkActivation(nl, op, "nonLinearityType");
  aspen::ops::requireValid(weightsFeedback, op, "weightsFeedback");
  if (weightsFeedback.rank() != 2 || weightsFeedback.dim(0) != weightsFeedback.dim(1))
    throw poputil::poplibs_error(op + ": weightsFeedback " + describe(weightsFeedback) + " has shape " +
                                 shapeString(weightsFeedback.shape()) +
                                 "; it must be {outputSize, outputSize}");
  const Type type = weightsFeedback.elementType();
  checkDataType(type, op, "weightsFeedback " + describe(weightsFeedback));
  aspen::ops::requireValid(gradOut, op, "nextLayerGrad");
  const std::size_t B = gradOut.rank() == 2 ? gradOut.dim(0) : 0, H = weightsFeedback.dim(0);
  checkShape(gradOut, {B, H}, type, op, "nextLayerGrad");
  checkShape(bwdState, {B, H}, type, op, "bwdState");
  checkShape(actOut, {B, H}, type, op, "actOut");
  if (weightsInput) {
    aspen::ops::requireValid(*weightsInput, op, "weightsInput");
    if (weightsInput->rank() != 2 || weightsInput->dim(1) != H)
      throw poputil::poplibs_error(op + ": weightsInput " + describe(*weightsInput) + " has shape " +
                                   shapeString(weightsInput->shape()) + "; it must be {inputSize, " +
                                   std::to_string(H) + "}");
    checkShape(*weightsInput, weightsInput->shape(), type, op, "weightsInput");
  }
  const OptionFlags mm = mmOptions(partialsType, "TRAINING_BWD");
  Tensor sum =
      poplin::matMul(graph, bwdState, weightsFeedback.transpose(), prog, type, {di, "feedback"}, mm, cache);
  Tensor d = popops::map(graph, (_1 + _2) * rnn_detail::activationGradient(nl, popops::expr::_3),
                         {sum, gradOut, actOut}, prog, {di, "state"});
  Tensor gradIn;
  if (weightsInput)
    gradIn = poplin::matMul(graph, d, weightsInput->transpose(), prog, type, {di, "input"}, mm, cache);
  return {gradIn, d};
}

} // namespace

std::vector<std::pair<poplin::MatMulParams, OptionFlags>>
getMatMulPrePlanParameters(std::size_t numSteps, std::size_t batchSize, std::size_t inputSize,
                           std::size_t outputSize, const Type &dType, const Type &partialsType,
                           bool inferenceOnly, bool hasFeedforwardWeights) {
  const std::string op = "popnn::rnn::getMatMulPrePlanParameters";
  checkPartials(partialsType, op);
  checkDataType(dType, op, "dType");
  const OptionFlags mm{{"partialsType", partialsType == HALF ? "half" : "float"}};
  std::vector<std::pair<poplin::MatMulParams, OptionFlags>> all;
  if (hasFeedforwardWeights) {
    auto ff = poplin::fc::getMatMulPrePlanParameters({1, batchSize, inputSize, outputSize}, mm, dType,
                                                     inferenceOnly);
    all.insert(all.end(), ff.begin(), ff.end());
  }
  auto fb = poplin::fc::getMatMulPrePlanParameters({1, batchSize, outputSize, outputSize}, mm, dType,
                                                   inferenceOnly);
  all.insert(all.end(), fb.begin(), fb.end());
  return all;
}

// A product {B, K} x {K, N} is B N K multiplications and B N (K - 1) additions.
uint64_t getFwdFlops(unsigned S, unsigned B, unsigned I, unsigned O, bool weightInput) {
  const uint64_t steps = uint64_t(S) * B;
  uint64_t n = steps * O * O + steps * O * (O - 1) // y_{s-1} Wfb
               + 2ull * S * O;                     // the input term and the bias
  if (weightInput)
    n += steps * O * I + steps * O * (I - 1);
  return n;
}

uint64_t getBwdFlops(unsigned S, unsigned B, unsigned I, unsigned O, bool calcInputGrad) {
  const uint64_t steps = uint64_t(S) * B;
  uint64_t n = steps * O * O + steps * O * (O - 1);
  if (calcInputGrad)
    n += steps * O * I + steps * O * (I - 1);
  return n;
}

uint64_t getWuFlops(unsigned S, unsigned B, unsigned I, unsigned O) {
  const uint64_t steps = uint64_t(S) * B;
  return steps * O * I + (steps - 1) * O * I      // Wff
         + steps * O * O + (steps - 1) * O * O    // Wfb
         + (steps - 1) * O                        // b
         + uint64_t(O) * I + uint64_t(O) * O + O; // the update
}

Tensor createInput(Graph &graph, unsigned numSteps, unsigned batchSize, unsigned inputSize,
                   unsigned outputSize, const Type &dType, const Type &partialsType, bool inferenceOnly,
                   const DebugContext &debugContext, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(numSteps, batchSize, inputSize, outputSize, inferenceOnly));
  const std::string op = "popnn::rnn::createInput";
  checkPartials(partialsType, op);
  checkDataType(dType, op, "dType");
  if (numSteps == 0 || batchSize == 0 || inputSize == 0 || outputSize == 0)
    throw poputil::poplibs_error(op + ": numSteps, batchSize, inputSize and outputSize must be non-zero");
  std::vector<Tensor> steps;
  Tensor first = poplin::createMatMulInputLHS(graph, dType, {batchSize, inputSize}, {inputSize, outputSize},
                                              {di, "input"}, mmOptions(partialsType, fwdPass(inferenceOnly)),
                                              planningCache);
  steps.push_back(first.expand({0}));
  for (unsigned s = 1; s < numSteps; ++s)
    steps.push_back(graph.clone(first, {di, "input"}).expand({0}));
  return concat(steps, 0);
}

Tensor createFwdState(Graph &graph, const Type &dType, unsigned batchSize, unsigned outputSize,
                      program::Sequence &prog, bool initState, bool inferenceOnly,
                      const DebugContext &debugContext, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(batchSize, outputSize, initState, inferenceOnly));
  checkDataType(dType, "popnn::rnn::createFwdState", "dType");
  Tensor s =
      stateLike(graph, dType, batchSize, outputSize, fwdPass(inferenceOnly), {di, "fwdState"}, planningCache);
  if (initState)
    popops::zero(graph, s, prog, {di});
  return s;
}

Tensor getOutputFromFwdState(const Tensor &fwdState) {
  return fwdState;
}

Tensor createWeightsInput(Graph &graph, unsigned, unsigned batchSize, unsigned inputSize, unsigned outputSize,
                          const Type &dType, const Type &partialsType, bool inferenceOnly,
                          const DebugContext &debugContext, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(batchSize, inputSize, outputSize, inferenceOnly));
  checkPartials(partialsType, "popnn::rnn::createWeightsInput");
  checkDataType(dType, "popnn::rnn::createWeightsInput", "dType");
  return poplin::createMatMulInputRHS(graph, dType, {batchSize, inputSize}, {inputSize, outputSize},
                                      {di, "weightsInput"}, mmOptions(partialsType, fwdPass(inferenceOnly)),
                                      planningCache);
}

Tensor createWeightsFeedback(Graph &graph, unsigned batchSize, unsigned outputSize, const Type &dType,
                             const Type &partialsType, bool inferenceOnly, const DebugContext &debugContext,
                             poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(batchSize, outputSize, inferenceOnly));
  checkPartials(partialsType, "popnn::rnn::createWeightsFeedback");
  checkDataType(dType, "popnn::rnn::createWeightsFeedback", "dType");
  return poplin::createMatMulInputRHS(graph, dType, {batchSize, outputSize}, {outputSize, outputSize},
                                      {di, "weightsFeedback"},
                                      mmOptions(partialsType, fwdPass(inferenceOnly)), planningCache);
}

Tensor forwardWeightInput(Graph &graph, const Tensor &actIn, const Tensor &weights, program::Sequence &prog,
                          const Type &partialsType, bool inferenceOnly, const DebugContext &debugContext,
                          poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(actIn, weights, inferenceOnly));
  const std::string op = "popnn::rnn::forwardWeightInput";
  checkPartials(partialsType, op);
  checkRank3(actIn, op, "actIn");
  aspen::ops::requireValid(weights, op, "weights");
  if (weights.rank() != 2 || weights.dim(0) != actIn.dim(2) || weights.dim(1) == 0)
    throw poputil::poplibs_error(op + ": weights " + describe(weights) + " has shape " +
                                 shapeString(weights.shape()) + "; it must be {inputSize, outputSize} with " +
                                 "inputSize " + std::to_string(actIn.dim(2)) + " (actIn's)");
  checkShape(weights, weights.shape(), actIn.elementType(), op, "weights");
  const std::size_t S = actIn.dim(0), B = actIn.dim(1), I = actIn.dim(2);
  Tensor y =
      poplin::matMul(graph, actIn.reshape({S * B, I}), weights, prog, actIn.elementType(),
                     {di, "feedForward"}, mmOptions(partialsType, fwdPass(inferenceOnly)), planningCache);
  return y.reshape({S, B, weights.dim(1)});
}

Tensor forwardIterate(Graph &graph, const Tensor &feedFwdIn, const Tensor &initState,
                      const Tensor &feedbackWeights, const Tensor &biases, program::Sequence &prog,
                      NonLinearityType nonLinearityType, const Type &partialsType, bool inferenceOnly,
                      const DebugContext &debugContext, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(feedFwdIn, initState, feedbackWeights, biases, nonLinearityType));
  const std::string op = "popnn::rnn::forwardIterate";
  checkPartials(partialsType, op);
  rnn_detail::checkActivation(nonLinearityType, op, "nonLinearityType");
  checkRank3(feedFwdIn, op, "feedFwdIn");
  const Type type = feedFwdIn.elementType();
  const std::size_t S = feedFwdIn.dim(0), B = feedFwdIn.dim(1), H = feedFwdIn.dim(2);
  checkShape(initState, {B, H}, type, op, "initState");
  checkShape(feedbackWeights, {H, H}, type, op, "feedbackWeights");
  checkShape(biases, {H}, type, op, "biases");
  const OptionFlags mm = mmOptions(partialsType, fwdPass(inferenceOnly));

  Tensor h = graph.clone(initState, {di, "state"});
  prog.add(program::Copy(initState, h, false, {di}));
  Tensor out = rnn_detail::createSequence(graph, type, {S, B, H}, {di, "actOut"});
  const Tensor bias = biases.expand({0}).broadcast(unsigned(B), 0);
  prog.add(popops::countedLoop(
      graph, S,
      [&](const Tensor &s) -> program::Program {
        program::Sequence body({}, {di, "step"});
        Tensor x = popops::dynamicSlice(graph, feedFwdIn, s, {0}, {1}, body, {di, "input"})[0];
        Tensor fb =
            poplin::matMul(graph, h, feedbackWeights, body, type, {di, "feedback"}, mm, planningCache);
        Tensor y = popops::map(graph, rnn_detail::activation(nonLinearityType, _1 + _2 + popops::expr::_3),
                               {fb, x, bias}, body, {di, "output"});
        body.add(program::Copy(y, h, false, {di}));
        popops::dynamicUpdate(graph, out, y.expand({0}), s, {0}, {1}, body, {di, "save"});
        return body;
      },
      {di, "rnn"}));
  return out;
}

Tensor createBwdState(Graph &graph, const Type &dType, unsigned batchSize, unsigned outputSize,
                      program::Sequence &prog, const DebugContext &debugContext,
                      poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(batchSize, outputSize));
  checkDataType(dType, "popnn::rnn::createBwdState", "dType");
  Tensor s = stateLike(graph, dType, batchSize, outputSize, "TRAINING_BWD", {di, "bwdState"}, planningCache);
  popops::zero(graph, s, prog, {di});
  return s;
}

std::pair<Tensor, Tensor> backwardGradientStep(Graph &graph, const Tensor &nextLayerGrad,
                                               const Tensor &bwdState, const Tensor &actOut,
                                               const Tensor &weightsInput, const Tensor &weightsFeedback,
                                               program::Sequence &prog, NonLinearityType nonLinearityType,
                                               const Type &partialsType, const DebugContext &debugContext,
                                               poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(nextLayerGrad, bwdState, actOut, weightsInput,
                                                      weightsFeedback, nonLinearityType));
  return backwardStep(graph, nextLayerGrad, bwdState, actOut, &weightsInput, weightsFeedback, prog,
                      nonLinearityType, partialsType, "popnn::rnn::backwardGradientStep", {di},
                      planningCache);
}

Tensor backwardGradientStep(Graph &graph, const Tensor &nextLayerGrad, const Tensor &bwdState,
                            const Tensor &actOut, const Tensor &weightsFeedback, program::Sequence &prog,
                            NonLinearityType nonLinearityType, const Type &partialsType,
                            const DebugContext &debugContext, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(nextLayerGrad, bwdState, actOut, weightsFeedback, nonLinearityType));
  return backwardStep(graph, nextLayerGrad, bwdState, actOut, nullptr, weightsFeedback, prog,
                      nonLinearityType, partialsType, "popnn::rnn::backwardGradientStep", {di}, planningCache)
      .second;
}

void paramDeltaUpdate(Graph &graph, const Tensor &bwdState, const Tensor &actIn, const Tensor &prevOut,
                      Tensor &weightsInputDeltasAcc, Tensor &weightsFeedbackDeltasAcc, Tensor &biasDeltasAcc,
                      program::Sequence &prog, const Type &partialsType, const DebugContext &debugContext,
                      poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(bwdState, actIn, prevOut, weightsInputDeltasAcc,
                                                      weightsFeedbackDeltasAcc, biasDeltasAcc));
  const std::string op = "popnn::rnn::paramDeltaUpdate";
  checkPartials(partialsType, op);
  aspen::ops::requireValid(bwdState, op, "bwdState");
  aspen::ops::requireValid(actIn, op, "actIn");
  if (bwdState.rank() != 2 || actIn.rank() != 2 || actIn.dim(0) != bwdState.dim(0))
    throw poputil::poplibs_error(op + ": bwdState " + describe(bwdState) + " " +
                                 shapeString(bwdState.shape()) + " and actIn " + describe(actIn) + " " +
                                 shapeString(actIn.shape()) +
                                 " must be {batchSize, outputSize} and {batchSize, inputSize}");
  const Type type = bwdState.elementType();
  checkDataType(type, op, "bwdState " + describe(bwdState));
  const std::size_t B = bwdState.dim(0), H = bwdState.dim(1), I = actIn.dim(1);
  checkShape(actIn, {B, I}, type, op, "actIn");
  checkShape(prevOut, {B, H}, type, op, "prevOut");
  checkShape(weightsInputDeltasAcc, {I, H}, type, op, "weightsInputDeltasAcc");
  checkShape(weightsFeedbackDeltasAcc, {H, H}, type, op, "weightsFeedbackDeltasAcc");
  checkShape(biasDeltasAcc, {H}, type, op, "biasDeltasAcc");
  const OptionFlags mm = mmOptions(partialsType, "TRAINING_WU");
  poplin::matMulAcc(graph, weightsInputDeltasAcc, 1.0f, actIn.transpose(), bwdState, prog,
                    {di, "inputWeights"}, mm, planningCache);
  poplin::matMulAcc(graph, weightsFeedbackDeltasAcc, 1.0f, prevOut.transpose(), bwdState, prog,
                    {di, "feedbackWeights"}, mm, planningCache);
  Tensor db = popops::reduce(graph, bwdState, type, {0}, popops::Operation::ADD, prog, {di, "biases"});
  popops::addInPlace(graph, biasDeltasAcc, db, prog, {di, "biases"});
}

Tensor rnnFwdSequence(Graph &graph, program::Sequence &prog, const Tensor &fwdStateInit,
                      const Tensor *weightedIn, const Tensor &biases, const Tensor &feedFwdWeights,
                      const Tensor &feedbackWeights, const Tensor &prevLayerActs,
                      const NonLinearityType &nonLinearityType, const Type &partialsType, bool inferenceOnly,
                      const DebugContext &debugContext, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(fwdStateInit, weightedIn, biases, feedFwdWeights,
                                                      feedbackWeights, prevLayerActs, nonLinearityType));
  const std::string op = "popnn::rnn::rnnFwdSequence";
  checkPartials(partialsType, op);
  rnn_detail::checkActivation(nonLinearityType, op, "nonLinearityType");
  checkRank3(prevLayerActs, op, "prevLayerActs");
  Tensor ff;
  if (weightedIn) {
    checkRank3(*weightedIn, op, "weightedIn");
    if (weightedIn->dim(0) != prevLayerActs.dim(0) || weightedIn->dim(1) != prevLayerActs.dim(1))
      throw poputil::poplibs_error(
          op + ": weightedIn " + describe(*weightedIn) + " " + shapeString(weightedIn->shape()) +
          " does not have prevLayerActs' steps and batch " + shapeString(prevLayerActs.shape()));
    ff = *weightedIn;
  } else {
    ff = forwardWeightInput(graph, prevLayerActs, feedFwdWeights, prog, partialsType, inferenceOnly, {di},
                            planningCache);
  }
  Tensor out = forwardIterate(graph, ff, fwdStateInit, feedbackWeights, biases, prog, nonLinearityType,
                              partialsType, inferenceOnly, {di}, planningCache);
  di.addOutputs(DI_ARGS(out));
  return out;
}

std::tuple<Tensor, Tensor, Tensor, Tensor>
rnnBwdSequence(Graph &graph, bool doWU, bool ignoreInputGradientCalc, program::Sequence &prog,
               const Tensor &fwdStateInit, const Tensor &fwdState, const Tensor &biases,
               const Tensor &feedFwdWeights, const Tensor &feedbackWeights, const Tensor &outGradient,
               const Tensor &actIn, const NonLinearityType &nonLinearityType, const Type &partialsType,
               const DebugContext &debugContext, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(doWU, ignoreInputGradientCalc, fwdStateInit, fwdState,
                                                      biases, feedFwdWeights, feedbackWeights, outGradient,
                                                      actIn, nonLinearityType));
  const std::string op = "popnn::rnn::rnnBwdSequence";
  checkPartials(partialsType, op);
  rnn_detail::checkActivation(nonLinearityType, op, "nonLinearityType");
  checkRank3(actIn, op, "actIn");
  const Type type = actIn.elementType();
  const std::size_t S = actIn.dim(0), B = actIn.dim(1), I = actIn.dim(2);
  aspen::ops::requireValid(feedbackWeights, op, "feedbackWeights");
  const std::size_t H = feedbackWeights.rank() == 2 ? feedbackWeights.dim(1) : 0;
  checkShape(feedbackWeights, {H, H}, type, op, "feedbackWeights");
  checkShape(feedFwdWeights, {I, H}, type, op, "feedFwdWeights");
  checkShape(biases, {H}, type, op, "biases");
  checkShape(fwdStateInit, {B, H}, type, op, "fwdStateInit");
  checkShape(fwdState, {S, B, H}, type, op, "fwdState");
  checkShape(outGradient, {B, S, H}, type, op, "outGradient");
  const OptionFlags mmBwd = mmOptions(partialsType, "TRAINING_BWD");
  const OptionFlags mmWu = mmOptions(partialsType, "TRAINING_WU");

  Tensor dWff, dWfb, db;
  if (doWU) {
    dWff = graph.clone(feedFwdWeights, {di, "feedFwdWeightsDeltas"});
    dWfb = graph.clone(feedbackWeights, {di, "feedbackWeightsDeltas"});
    db = graph.clone(biases, {di, "biasesDeltas"});
    popops::zero(graph, concat({dWff.flatten(), dWfb.flatten(), db}), prog, {di});
  }
  Tensor d = createBwdState(graph, type, unsigned(B), unsigned(H), prog, {di}, planningCache);
  Tensor grads =
      rnn_detail::createSequence(graph, type, {S, B, ignoreInputGradientCalc ? H : I}, {di, "gradient"});
  if (ignoreInputGradientCalc)
    popops::zero(graph, grads, prog, {di});
  // The output before each step: the initial state, then steps 0 .. S-2.
  const Tensor prevOuts = concat(fwdStateInit.expand({0}), fwdState.slice(0, S - 1, 0), 0);
  const Tensor gradSeq = outGradient.dimShuffle({1, 0, 2});
  using popops::expr::Const;
  prog.add(popops::countedLoop(
      graph, S,
      [&](const Tensor &i) -> program::Program {
        program::Sequence body({}, {di, "step"});
        Tensor t = popops::map(graph, Const(unsigned(S - 1)) - _1, {i}, body, {di, "step"});
        auto slice = [&](const Tensor &seq, const char *name) {
          return popops::dynamicSlice(graph, seq, t, {0}, {1}, body, {di, name})[0];
        };
        Tensor g = slice(gradSeq, "outGradient"), y = slice(fwdState, "fwdState");
        Tensor sum = poplin::matMul(graph, d, feedbackWeights.transpose(), body, type, {di, "feedback"},
                                    mmBwd, planningCache);
        Tensor dNew =
            popops::map(graph, (_1 + _2) * rnn_detail::activationGradient(nonLinearityType, popops::expr::_3),
                        {sum, g, y}, body, {di, "state"});
        body.add(program::Copy(dNew, d, false, {di}));
        if (!ignoreInputGradientCalc) {
          Tensor gx = poplin::matMul(graph, d, feedFwdWeights.transpose(), body, type, {di, "input"}, mmBwd,
                                     planningCache);
          popops::dynamicUpdate(graph, grads, gx.expand({0}), t, {0}, {1}, body, {di, "saveGradient"});
        }
        if (doWU) {
          Tensor x = slice(actIn, "actIn"), yPrev = slice(prevOuts, "prevOut");
          poplin::matMulAcc(graph, dWff, 1.0f, x.transpose(), d, body, {di, "inputWeights"}, mmWu,
                            planningCache);
          poplin::matMulAcc(graph, dWfb, 1.0f, yPrev.transpose(), d, body, {di, "feedbackWeights"}, mmWu,
                            planningCache);
          Tensor r = popops::reduce(graph, d, type, {0}, popops::Operation::ADD, body, {di, "biases"});
          popops::addInPlace(graph, db, r, body, {di, "biases"});
        }
        return body;
      },
      {di, "rnnBwd"}));
  di.addOutputs(DI_ARGS(grads, dWff, dWfb, db));
  return {grads, dWff, dWfb, db};
}

} // namespace rnn
} // namespace popnn
