// Copyright (c) Aspen contributors.
// popnn::lstm: a basic LSTM cell over a sequence (popnn/Lstm.hpp has the equations). The time
// steps run in one popops::countedLoop: each step slices its input with dynamicSlice, does one
// poplin matMul of [x_t, h_{t-1}] by the stacked kernel, and popops maps for the gates; what
// the backward pass needs is written into the intermediates with dynamicUpdate. The backward
// loop runs the steps last first; the weight update is one matMul over the whole sequence.
//
// Aspen's intermediates (opaque to callers, as in PopLibs):
//   forward  {steps, 7, batch, outputSize}: f, i, g, o, tanh(c_t), c_{t-1}, h_{t-1}
//   backward {steps, 4, batch, outputSize}: dLoss/dpre for f, i, g, o
// The units are kept internally in BasicLstmCellUnit order; cellOrder is applied at the edges.
#include <popnn/Lstm.hpp>

#include "RnnInternal.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poplin/MatMul.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Loop.hpp>
#include <popops/Reduce.hpp>
#include <popops/Zero.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

using namespace poplar;
using namespace popnn::rnn_detail;
using aspen::ops::describe;
using aspen::ops::shapeString;

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popnn::lstm::LstmParams &p) {
  auto v = popnn::rnn_detail::layerProfile(p);
  v.insert({"doInputWeightCalc", toProfileValue(p.doInputWeightCalc)});
  return v;
}
template <> poplar::ProfileValue toProfileValue(const popnn::lstm::LstmState &s) {
  poplar::ProfileValue::Map v;
  v.insert({"output", toProfileValue(s.output)});
  v.insert({"cellState", toProfileValue(s.cellState)});
  return v;
}
template <> poplar::ProfileValue toProfileValue(const popnn::lstm::LstmWeights &w) {
  return popnn::rnn_detail::weightsProfile(w);
}
} // namespace poputil

namespace popnn {
namespace lstm {

namespace {

constexpr unsigned NU = BASIC_LSTM_CELL_NUM_UNITS;
enum FwdSlot { F_F, F_I, F_G, F_O, F_TANHC, F_CPREV, F_HPREV, F_NUM };
using popops::expr::_1;
using popops::expr::_2;
using popops::expr::_3;
using popops::expr::_4;

/// What every LSTM function checks and derives from its parameters.
struct Layer {
  std::string op;
  Type type;
  std::size_t B, T, I, H;
  std::vector<unsigned> pos; // unit -> index in the weights' outermost dimension
  RecurrentOptions opts;

  Layer(const LstmParams &p, const OptionFlags &options, const std::string &opName, bool needCompute = true)
      : op(opName) {
    checkParams(p.rnn, op);
    type = p.rnn.dataType;
    B = p.rnn.batchSize;
    T = p.rnn.maxTimeSteps;
    I = p.rnn.layerSizes[0];
    H = p.rnn.layerSizes[1];
    pos = unitPositions(std::vector<unsigned>(p.cellOrder.begin(), p.cellOrder.end()), NU, op);
    opts = parseOptions(options, type, true, op);
    if (needCompute) {
      checkActivation(p.activation, op, "params' activation");
      checkActivation(p.recurrentActivation, op, "params' recurrentActivation");
    }
  }

  void checkWeights(const LstmWeights &w) const {
    checkTensor(w.inputWeights, {NU, I, H}, type, op, "weights.inputWeights");
    checkTensor(w.outputWeights, {NU, H, H}, type, op, "weights.outputWeights");
    checkTensor(w.biases, {NU, H}, type, op, "weights.biases");
  }
  void checkState(const LstmState &s, const std::string &role) const {
    checkTensor(s.output, {B, H}, type, op, role + ".output");
    checkTensor(s.cellState, {B, H}, type, op, role + ".cellState");
  }
  void checkIntermediates(const Tensor &t, const std::string &role, std::size_t slots) const {
    aspen::ops::requireValid(t, op, role);
    if (t.shape() != std::vector<std::size_t>{T, slots, B, H} || t.elementType() != type)
      throw poputil::poplibs_error(op + ": " + role + " " + describe(t) +
                                   " is not what this layer's lstmFwd/lstmBwd produces (" +
                                   shapeString({T, slots, B, H}) + " " + type.toString().str() + ")");
  }
  /// With variable time steps the backward pass starts from zero state gradients (as PopLibs).
  void checkNoLastStepStateGrad(const LstmParams &p, const LstmState *g) const {
    if (p.rnn.variableTimeSteps() && g)
      throw poputil::poplibs_error(op + ": lastStepStateGrad is not null but params' varTimeSteps " +
                                   describe(p.rnn.varTimeSteps) +
                                   " is set; with variable time steps the final state's gradients are zero "
                                   "(pass null)");
  }
  /// The kernel {I + H, 4H} with the units in internal order (x W, h U stacked).
  Tensor kernel(const LstmWeights &w, bool inputPart = true) const {
    Tensor wi = gather0(w.inputWeights, pos), wo = gather0(w.outputWeights, pos);
    Tensor k = inputPart ? concat(wi, wo, 1) : wo; // {4, rows, H}
    return k.dimShuffle({1, 0, 2}).reshape({k.dim(1), NU * H});
  }
};

} // namespace

const std::vector<BasicLstmCellUnit> getDefaultBasicLstmCellOrder() {
  return {BASIC_LSTM_CELL_FORGET_GATE, BASIC_LSTM_CELL_INPUT_GATE, BASIC_LSTM_CELL_CANDIDATE,
          BASIC_LSTM_CELL_OUTPUT_GATE};
}

LstmParams::LstmParams(Type dataType, std::size_t batchSize, std::size_t timeSteps,
                       std::vector<std::size_t> layerSizes, NonLinearityType activation,
                       NonLinearityType recurrentActivation)
    : rnn(dataType, batchSize, timeSteps, layerSizes), dataType(dataType), batchSize(batchSize),
      timeSteps(timeSteps), layerSizes(std::move(layerSizes)), activation(activation),
      recurrentActivation(recurrentActivation) {}

LstmParams::LstmParams(Type dataType, std::size_t batchSize, std::size_t maxTimeSteps,
                       const Tensor &timeSteps, std::vector<std::size_t> layerSizes,
                       NonLinearityType activation, NonLinearityType recurrentActivation)
    : rnn(dataType, batchSize, maxTimeSteps, timeSteps, layerSizes), dataType(dataType), batchSize(batchSize),
      timeSteps(maxTimeSteps), layerSizes(std::move(layerSizes)), activation(activation),
      recurrentActivation(recurrentActivation) {}

Tensor LstmState::getAsTensor() const {
  return concat(output.expand({0}), cellState.expand({0}), 0);
}

std::vector<std::pair<poplin::MatMulParams, OptionFlags>> getMatMulPrePlanParameters(LstmParams params,
                                                                                     OptionFlags opts) {
  const Layer l(params, opts, "popnn::lstm::getMatMulPrePlanParameters", false);
  const OptionFlags fwd = matMulOptions(l.opts, "TRAINING_FWD");
  std::vector<std::pair<poplin::MatMulParams, OptionFlags>> mm;
  mm.push_back({poplin::MatMulParams{l.type, l.type, {l.B, l.I + l.H}, {l.I + l.H, NU * l.H}}, fwd});
  if (!l.opts.inferenceOnly) {
    mm.push_back({poplin::MatMulParams{l.type, l.type, {l.B, NU * l.H}, {NU * l.H, l.I + l.H}},
                  matMulOptions(l.opts, "TRAINING_BWD")});
    mm.push_back(
        {poplin::MatMulParams{l.type, l.opts.accumulatorsType, {l.I + l.H, l.T * l.B}, {l.T * l.B, NU * l.H}},
         matMulOptions(l.opts, "TRAINING_WU")});
  }
  return mm;
}

uint64_t getBasicLstmCellFwdFlops(const LstmParams &p) {
  const uint64_t B = p.rnn.batchSize, T = p.rnn.maxTimeSteps, I = p.rnn.layerSizes.at(0),
                 H = p.rnn.layerSizes.at(1);
  const uint64_t matmuls = 2 * B * T * NU * H * ((p.doInputWeightCalc ? I : 0) + H);
  return matmuls + T * B * H * (NU /*bias*/ + 3 /*cell state*/ + 1 /*output*/);
}

uint64_t getBasicLstmCellBwdFlops(const LstmParams &p) {
  const uint64_t B = p.rnn.batchSize, T = p.rnn.maxTimeSteps, I = p.rnn.layerSizes.at(0),
                 H = p.rnn.layerSizes.at(1);
  const uint64_t matmuls = 2 * B * T * NU * H * ((p.calcInputGradients ? I : 0) + H);
  return matmuls + T * B * H * 14;
}

uint64_t getBasicLstmCellWuFlops(const LstmParams &p) {
  const uint64_t B = p.rnn.batchSize, T = p.rnn.maxTimeSteps, I = p.rnn.layerSizes.at(0),
                 H = p.rnn.layerSizes.at(1);
  return 2 * B * T * NU * H * (I + H) + B * T * NU * H;
}

Tensor createInput(Graph &graph, const LstmParams &params, const DebugContext &debugContext,
                   const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::lstm::createInput", false);
  return createSequence(graph, l.type, {l.T, l.B, l.I}, {di, "input"});
}

Tensor createInitialOutput(Graph &graph, const LstmParams &params, const DebugContext &debugContext,
                           const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::lstm::createInitialOutput", false);
  return createState(graph, l.type, l.B, l.H, {di, "initialOutput"});
}

Tensor createInitialCellState(Graph &graph, const LstmParams &params, const DebugContext &debugContext,
                              const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::lstm::createInitialCellState", false);
  return createState(graph, l.type, l.B, l.H, {di, "initialCellState"});
}

LstmState createInitialState(Graph &graph, const LstmParams &params, const DebugContext &debugContext,
                             const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  return {createInitialOutput(graph, params, {di}, options, planningCache),
          createInitialCellState(graph, params, {di}, options, planningCache)};
}

void zeroInitialState(Graph &graph, const LstmState &initialState, program::Sequence &prog,
                      const DebugContext &debugContext) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(initialState));
  aspen::ops::requireValid(initialState.output, "popnn::lstm::zeroInitialState", "initialState.output");
  aspen::ops::requireValid(initialState.cellState, "popnn::lstm::zeroInitialState", "initialState.cellState");
  popops::zero(graph, initialState.getAsTensor(), prog, {di});
}

std::pair<Tensor, Tensor> createWeightsKernel(Graph &graph, const LstmParams &params,
                                              const DebugContext &debugContext, const OptionFlags &options,
                                              poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::lstm::createWeightsKernel", false);
  // One right-hand operand {I + H, 4H} of the step's matMul, viewed as the two kernels.
  Tensor k =
      poplin::createMatMulInputRHS(graph, l.type, {l.B, l.I + l.H}, {l.I + l.H, NU * l.H}, {di, "weights"},
                                   matMulOptions(l.opts, "TRAINING_FWD"), planningCache);
  Tensor units = k.reshape({l.I + l.H, NU, l.H}).dimShuffle({1, 0, 2}); // {4, I + H, H}, internal order
  return {scatter0(units.slice(0, l.I, 1), l.pos), scatter0(units.slice(l.I, l.I + l.H, 1), l.pos)};
}

Tensor createWeightsBiases(Graph &graph, const LstmParams &params, const DebugContext &debugContext,
                           const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::lstm::createWeightsBiases", false);
  Tensor b = graph.addVariable(l.type, {NU, l.H}, {di, "biases"});
  poputil::mapTensorLinearly(graph, b);
  return b;
}

LstmWeights createWeights(Graph &graph, const LstmParams &params, const DebugContext &debugContext,
                          const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  auto k = createWeightsKernel(graph, params, {di}, options, planningCache);
  return {k.first, k.second, createWeightsBiases(graph, params, {di}, options, planningCache)};
}

std::pair<Tensor, Tensor> lstmFwd(Graph &graph, const LstmParams &params, const LstmState &stateInit,
                                  const Tensor &in, const LstmWeights &weights, Tensor *intermediates,
                                  program::Sequence &fwdProg, const DebugContext &debugContext,
                                  const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(params, stateInit, in, weights, intermediates, options));
  const Layer l(params, options, "popnn::lstm::lstmFwd");
  l.checkState(stateInit, "stateInit");
  checkTensor(in, {l.T, l.B, l.I}, l.type, l.op, "the input");
  l.checkWeights(weights);
  const OptionFlags mmOpts = matMulOptions(l.opts, "TRAINING_FWD");
  const auto act = params.activation, rec = params.recurrentActivation;

  // The state carried from step to step, and what the loop writes per step.
  Tensor h = graph.clone(stateInit.output, {di, "output"});
  Tensor c = graph.clone(stateInit.cellState, {di, "cellState"});
  fwdProg.add(program::Copy(stateInit.output, h, false, {di}));
  fwdProg.add(program::Copy(stateInit.cellState, c, false, {di}));
  Tensor outSeq;
  if (params.outputFullSequence)
    outSeq = createSequence(graph, l.type, {l.T, l.B, l.H}, {di, "outputSequence"});
  Tensor inter;
  if (intermediates)
    inter = createSequence(graph, l.type, {l.T, F_NUM, l.B, l.H}, {di, "fwdIntermediates"});
  const Tensor kernel = l.kernel(weights, params.doInputWeightCalc);
  const Tensor bias = gather0(weights.biases, l.pos).expand({1}).broadcast(l.B, 1); // {4, B, H}
  // Variable time steps: what the steps after a sequence's last do not write stays zero.
  const StepLimits limits = stepLimits(graph, params.rnn, fwdProg, {di, "timeSteps"});
  if (limits.valid() && outSeq.valid())
    popops::zero(graph, outSeq, fwdProg, {di});
  if (limits.valid() && inter.valid())
    popops::zero(graph, inter, fwdProg, {di});

  auto loop = popops::countedLoop(
      graph, l.T,
      [&](const Tensor &t) -> program::Program {
        program::Sequence s({}, {di, "step"});
        using popops::expr::Const;
        using popops::expr::Select;
        Tensor x = popops::dynamicSlice(graph, in, t, {0}, {1}, s, {di, "input"})[0];
        Tensor lhs = params.doInputWeightCalc ? concat(x, h, 1) : h;
        Tensor pre = poplin::matMul(graph, lhs, kernel, s, l.type, {di, "weigh"}, mmOpts, planningCache);
        Tensor units = pre.reshape({l.B, NU, l.H}).dimShuffle({1, 0, 2}); // {4, B, H}
        popops::addInPlace(graph, units, bias, s, {di, "bias"});
        Tensor gates = concat({units[F_F], units[F_I], units[F_O]}, 0);
        popops::mapInPlace(graph, activation(rec, _1), {gates}, s, {di, "gates"});
        popops::mapInPlace(graph, activation(act, _1), {units[F_G]}, s, {di, "candidate"});
        Tensor f = units[F_F], i = units[F_I], g = units[F_G], o = units[F_O];
        Tensor cNew = popops::map(graph, _1 * _2 + _3 * _4, {f, c, i, g}, s, {di, "cellState"});
        Tensor tanhC = popops::map(graph, activation(act, _1), {cNew}, s, {di, "cellActivation"});
        Tensor hNew = popops::map(graph, _1 * _2, {o, tanhC}, s, {di, "output"});
        Tensor stepInter;
        if (inter.valid())
          stepInter = concat({f.expand({0}), i.expand({0}), g.expand({0}), o.expand({0}), tanhC.expand({0}),
                              c.expand({0}), h.expand({0})},
                             0);
        Tensor stepOut = hNew;
        if (limits.valid()) {
          // A sequence past its last step: intermediates and output zero, h kept (the final
          // output), c zero or (preserveFinalState) kept.
          Tensor m = stepMask(graph, limits, t, s, {di});
          const Tensor mBH = broadcastMask(m, {l.B, l.H});
          if (stepInter.valid())
            stepInter = popops::map(graph, Select(_1, Const(0.0f), _2),
                                    {stepInter, broadcastMask(m, {F_NUM, l.B, l.H})}, s, {di, "mask"});
          cNew = params.preserveFinalState
                     ? popops::map(graph, Select(_1, _2, _3), {cNew, c, mBH}, s, {di, "mask"})
                     : popops::map(graph, Select(_1, Const(0.0f), _2), {cNew, mBH}, s, {di, "mask"});
          stepOut = popops::map(graph, Select(_1, Const(0.0f), _2), {hNew, mBH}, s, {di, "mask"});
          hNew = popops::map(graph, Select(_1, _2, _3), {hNew, h, mBH}, s, {di, "mask"});
        }
        if (stepInter.valid())
          popops::dynamicUpdate(graph, inter, stepInter.expand({0}), t, {0}, {1}, s,
                                {di, "saveIntermediates"});
        s.add(program::Copy(cNew, c, false, {di}));
        s.add(program::Copy(hNew, h, false, {di}));
        if (outSeq.valid())
          popops::dynamicUpdate(graph, outSeq, stepOut.expand({0}), t, {0}, {1}, s, {di, "saveOutput"});
        return whileWithinSteps(graph, limits, t, s, {di});
      },
      {di, "lstm"});
  fwdProg.add(loop);
  if (intermediates)
    *intermediates = inter;
  Tensor out = params.outputFullSequence ? outSeq : h;
  di.addOutputs(DI_ARGS(out, c));
  return {out, c};
}

namespace {

/// The backward pass; `bwdInter` receives dLoss/dpre {T, 4, B, H} (internal unit order).
LstmState backward(Graph &graph, const LstmParams &params, const Layer &l, program::Sequence &prog,
                   const LstmState &fwdStateInit, const Tensor &fwdIntermediates, const LstmWeights &weights,
                   const Tensor &input, const Tensor &outputGrad, const Tensor *lastOutputGrad,
                   const Tensor *lastCellStateGrad, Tensor *inputGrad, Tensor &bwdInter,
                   const DebugNameAndId &di, poplin::PlanningCache *planningCache) {
  l.checkState(fwdStateInit, "fwdStateInit");
  l.checkIntermediates(fwdIntermediates, "fwdIntermediates", F_NUM);
  l.checkWeights(weights);
  checkTensor(input, {l.T, l.B, l.I}, l.type, l.op, "the input");
  if (params.outputFullSequence)
    checkTensor(outputGrad, {l.T, l.B, l.H}, l.type, l.op, "outputGrad");
  else
    checkTensor(outputGrad, {l.B, l.H}, l.type, l.op, "outputGrad");
  if (bool(inputGrad) != params.calcInputGradients)
    throw poputil::poplibs_error(l.op + ": inputGrad is " + (inputGrad ? "not null" : "null") +
                                 " but params.calcInputGradients is " +
                                 (params.calcInputGradients ? "true" : "false") +
                                 " (pass inputGrad exactly when input gradients are computed)");
  if (lastOutputGrad)
    checkTensor(*lastOutputGrad, {l.B, l.H}, l.type, l.op, "lastStepStateGrad->output");
  if (lastCellStateGrad)
    checkTensor(*lastCellStateGrad, {l.B, l.H}, l.type, l.op, "the last cell state's gradient");
  const auto act = params.activation, rec = params.recurrentActivation;
  const OptionFlags mmOpts = matMulOptions(l.opts, "TRAINING_BWD");

  // Gradients carried from step to step: of h_{t} (from later steps) and of c_t.
  Tensor dh = graph.clone(fwdStateInit.output, {di, "outputGrad"});
  Tensor dc = graph.clone(fwdStateInit.cellState, {di, "cellStateGrad"});
  if (lastOutputGrad)
    prog.add(program::Copy(*lastOutputGrad, dh, false, {di}));
  else
    popops::zero(graph, dh, prog, {di});
  if (lastCellStateGrad)
    prog.add(program::Copy(*lastCellStateGrad, dc, false, {di}));
  else
    popops::zero(graph, dc, prog, {di});
  if (!params.outputFullSequence)
    popops::addInPlace(graph, dh, outputGrad, prog, {di, "lastOutputGrad"});

  bwdInter = createSequence(graph, l.type, {l.T, NU, l.B, l.H}, {di, "bwdIntermediates"});
  const bool inGrads = params.calcInputGradients;
  Tensor inGradSeq;
  if (inGrads)
    inGradSeq = createSequence(graph, l.type, {l.T, l.B, l.I}, {di, "inputGrad"});
  const Tensor kernelT = l.kernel(weights, inGrads).transpose(); // {4H, I + H} or {4H, H}
  const StepLimits limits = stepLimits(graph, params.rnn, prog, {di, "timeSteps"});

  auto loop = popops::countedLoop(
      graph, l.T,
      [&](const Tensor &i) -> program::Program {
        program::Sequence s({}, {di, "step"});
        Tensor t = popops::map(graph, popops::expr::Const(unsigned(l.T - 1)) - _1, {i}, s, {di, "step"});
        Tensor fi = popops::dynamicSlice(graph, fwdIntermediates, t, {0}, {1}, s, {di, "intermediates"})[0];
        Tensor f = fi[F_F], in = fi[F_I], g = fi[F_G], o = fi[F_O], tc = fi[F_TANHC], cPrev = fi[F_CPREV];
        Tensor dhT = dh;
        if (params.outputFullSequence) {
          Tensor og = popops::dynamicSlice(graph, outputGrad, t, {0}, {1}, s, {di, "outputGrad"})[0];
          dhT = popops::map(graph, _1 + _2, {dh, og}, s, {di, "outputGrad"});
        }
        // dLoss/dc_t, then the gates' pre-activation gradients.
        Tensor dcT = popops::map(graph, _1 + _2 * _3 * activationGradient(act, _4), {dc, dhT, o, tc}, s,
                                 {di, "cellGrad"});
        Tensor dFIO =
            popops::map(graph, _1 * _2 * activationGradient(rec, _3),
                        {concat({dcT, dcT, dhT}, 0), concat({cPrev, g, tc}, 0), concat({f, in, o}, 0)}, s,
                        {di, "gateGrads"});
        Tensor dG =
            popops::map(graph, _1 * _2 * activationGradient(act, _3), {dcT, in, g}, s, {di, "candGrad"});
        Tensor dPre = concat({dFIO.slice(0, l.B, 0).expand({0}), dFIO.slice(l.B, 2 * l.B, 0).expand({0}),
                              dG.expand({0}), dFIO.slice(2 * l.B, 3 * l.B, 0).expand({0})},
                             0); // {4, B, H}
        Tensor mBH;
        if (limits.valid()) {
          // A step after a sequence's last: no gradient there; the state gradients pass unchanged.
          using popops::expr::Const;
          using popops::expr::Select;
          Tensor m = stepMask(graph, limits, t, s, {di});
          mBH = broadcastMask(m, {l.B, l.H});
          dPre = popops::map(graph, Select(_1, Const(0.0f), _2), {dPre, broadcastMask(m, {NU, l.B, l.H})}, s,
                             {di, "mask"});
        }
        popops::dynamicUpdate(graph, bwdInter, dPre.expand({0}), t, {0}, {1}, s, {di, "saveGrads"});
        Tensor dcPrev = popops::map(graph, _1 * _2, {dcT, f}, s, {di, "prevCellGrad"});
        Tensor flat = dPre.dimShuffle({1, 0, 2}).reshape({l.B, NU * l.H});
        Tensor dxh =
            poplin::matMul(graph, flat, kernelT, s, l.type, {di, "inputGrads"}, mmOpts, planningCache);
        if (inGrads)
          popops::dynamicUpdate(graph, inGradSeq, dxh.slice(0, l.I, 1).expand({0}), t, {0}, {1}, s,
                                {di, "saveInputGrad"});
        Tensor dhPrev = inGrads ? dxh.slice(l.I, l.I + l.H, 1) : dxh;
        if (mBH.valid()) {
          using popops::expr::Select;
          dhPrev = popops::map(graph, Select(_1, _2, _3), {dhPrev, dh, mBH}, s, {di, "mask"});
          dcPrev = popops::map(graph, Select(_1, _2, _3), {dcPrev, dc, mBH}, s, {di, "mask"});
        }
        s.add(program::Copy(dhPrev, dh, false, {di}));
        s.add(program::Copy(dcPrev, dc, false, {di}));
        return s;
      },
      {di, "lstmBwd"});
  prog.add(loop);
  if (inputGrad)
    *inputGrad = inGradSeq;
  return {dh, dc};
}

LstmWeights weightUpdate(Graph &graph, const Layer &l, const LstmParams &params, program::Sequence &prog,
                         const Tensor &fwdIntermediates, const Tensor &bwdInter, const Tensor &input,
                         const DebugNameAndId &di, poplin::PlanningCache *planningCache) {
  l.checkIntermediates(fwdIntermediates, "fwdIntermediates", F_NUM);
  l.checkIntermediates(bwdInter, "bwdIntermediates", NU);
  checkTensor(input, {l.T, l.B, l.I}, l.type, l.op, "the input");
  const std::size_t rows = l.T * l.B;
  Tensor hPrev = fwdIntermediates.slice(F_HPREV, F_HPREV + 1, 1).reshape({rows, l.H});
  Tensor acts = concat(input.reshape({rows, l.I}), hPrev, 1);                 // {T B, I + H}
  Tensor grads = bwdInter.dimShuffle({0, 2, 1, 3}).reshape({rows, NU * l.H}); // {T B, 4H}
  Tensor dW = poplin::matMul(graph, acts.transpose(), grads, prog, l.opts.accumulatorsType,
                             {di, "weightGrads"}, matMulOptions(l.opts, "TRAINING_WU"), planningCache);
  Tensor units = dW.reshape({l.I + l.H, NU, l.H}).dimShuffle({1, 0, 2});
  Tensor db = popops::reduce(graph, bwdInter, l.opts.accumulatorsType, {0, 2}, popops::Operation::ADD, prog,
                             {di, "biasGrads"});
  LstmWeights out{scatter0(units.slice(0, l.I, 1), l.pos), scatter0(units.slice(l.I, l.I + l.H, 1), l.pos),
                  scatter0(db, l.pos)};
  if (!params.doInputWeightCalc)
    popops::zero(graph, out.inputWeights, prog, {di});
  return out;
}

} // namespace

LstmState lstmBwd(Graph &graph, const LstmParams &params, program::Sequence &prog,
                  const LstmState &fwdStateInit, const Tensor &fwdIntermediates, const LstmWeights &weights,
                  const Tensor &input, const Tensor &output, const Tensor &outputGrad,
                  const LstmState *lastStepStateGrad, Tensor *inputGrad, Tensor *bwdIntermediates,
                  const DebugContext &debugContext, const OptionFlags &options,
                  poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdStateInit, fwdIntermediates, weights, input,
                                                      output, outputGrad, lastStepStateGrad, options));
  const Layer l(params, options, "popnn::lstm::lstmBwd");
  l.checkNoLastStepStateGrad(params, lastStepStateGrad);
  Tensor bwdInter;
  const Tensor *lastOut =
      lastStepStateGrad && lastStepStateGrad->output.valid() ? &lastStepStateGrad->output : nullptr;
  const Tensor *lastCell =
      lastStepStateGrad && lastStepStateGrad->cellState.valid() ? &lastStepStateGrad->cellState : nullptr;
  LstmState g = backward(graph, params, l, prog, fwdStateInit, fwdIntermediates, weights, input, outputGrad,
                         lastOut, lastCell, inputGrad, bwdInter, {di}, planningCache);
  if (bwdIntermediates)
    *bwdIntermediates = bwdInter;
  return g;
}

LstmState lstmBwd(Graph &graph, const LstmParams &params, program::Sequence &prog,
                  const LstmState &fwdStateInit, const Tensor &fwdIntermediates, const LstmWeights &weights,
                  const Tensor &input, const Tensor &output, const Tensor &outputGrad,
                  const Tensor *lastCellStateGrad, Tensor *inputGrad, Tensor *bwdIntermediates,
                  const DebugContext &debugContext, const OptionFlags &options,
                  poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdStateInit, fwdIntermediates, weights, input,
                                                      output, outputGrad, lastCellStateGrad, options));
  const Layer l(params, options, "popnn::lstm::lstmBwd");
  Tensor bwdInter;
  LstmState g = backward(graph, params, l, prog, fwdStateInit, fwdIntermediates, weights, input, outputGrad,
                         nullptr, params.rnn.variableTimeSteps() ? nullptr : lastCellStateGrad, inputGrad,
                         bwdInter, {di}, planningCache);
  if (bwdIntermediates)
    *bwdIntermediates = bwdInter;
  return g;
}

LstmWeights lstmWU(Graph &graph, const LstmParams &params, program::Sequence &prog,
                   const LstmState &fwdStateInit, const Tensor &fwdIntermediates,
                   const Tensor &bwdIntermediates, const LstmWeights &weights, const Tensor &input,
                   const Tensor &output, const DebugContext &debugContext, const OptionFlags &options,
                   poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdStateInit, fwdIntermediates,
                                                      bwdIntermediates, weights, input, output, options));
  const Layer l(params, options, "popnn::lstm::lstmWU");
  l.checkWeights(weights);
  return weightUpdate(graph, l, params, prog, fwdIntermediates, bwdIntermediates, input, {di}, planningCache);
}

LstmState lstmBwdWithWU(Graph &graph, const LstmParams &params, program::Sequence &prog,
                        const LstmState &fwdStateInit, const Tensor &fwdIntermediates,
                        const LstmWeights &weights, const Tensor &input, const Tensor &output,
                        const Tensor &outputGrad, const LstmState *lastStepStateGrad, Tensor *inputGrad,
                        LstmWeights &weightsGrad, const DebugContext &debugContext,
                        const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdStateInit, fwdIntermediates, weights, input,
                                                      output, outputGrad, lastStepStateGrad, options));
  const Layer l(params, options, "popnn::lstm::lstmBwdWithWU");
  l.checkNoLastStepStateGrad(params, lastStepStateGrad);
  Tensor bwdInter;
  const Tensor *lastOut =
      lastStepStateGrad && lastStepStateGrad->output.valid() ? &lastStepStateGrad->output : nullptr;
  const Tensor *lastCell =
      lastStepStateGrad && lastStepStateGrad->cellState.valid() ? &lastStepStateGrad->cellState : nullptr;
  LstmState g = backward(graph, params, l, prog, fwdStateInit, fwdIntermediates, weights, input, outputGrad,
                         lastOut, lastCell, inputGrad, bwdInter, {di}, planningCache);
  weightsGrad = weightUpdate(graph, l, params, prog, fwdIntermediates, bwdInter, input, {di}, planningCache);
  return g;
}

LstmState lstmBwdWithWU(Graph &graph, const LstmParams &params, program::Sequence &prog,
                        const LstmState &fwdStateInit, const Tensor &fwdIntermediates,
                        const LstmWeights &weights, const Tensor &input, const Tensor &output,
                        const Tensor &outputGrad, const Tensor *lastCellStateGrad, Tensor *inputGrad,
                        LstmWeights &weightsGrad, const DebugContext &debugContext,
                        const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdStateInit, fwdIntermediates, weights, input,
                                                      output, outputGrad, lastCellStateGrad, options));
  const Layer l(params, options, "popnn::lstm::lstmBwdWithWU");
  Tensor bwdInter;
  LstmState g = backward(graph, params, l, prog, fwdStateInit, fwdIntermediates, weights, input, outputGrad,
                         nullptr, params.rnn.variableTimeSteps() ? nullptr : lastCellStateGrad, inputGrad,
                         bwdInter, {di}, planningCache);
  weightsGrad = weightUpdate(graph, l, params, prog, fwdIntermediates, bwdInter, input, {di}, planningCache);
  return g;
}

} // namespace lstm
} // namespace popnn
