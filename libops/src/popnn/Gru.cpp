// Copyright (c) Aspen contributors.
// popnn::gru: a basic GRU cell over a sequence (popnn/Gru.hpp has the equations), built as the
// LSTM is (Lstm.cpp): one popops::countedLoop over the steps with dynamicSlice/dynamicUpdate,
// poplin matMuls and popops maps; the weight update is matMuls over the whole sequence.
//
// Aspen's intermediates (opaque to callers, as in PopLibs):
//   forward  {steps, 5, batch, outputSize}: r, u, c, h_{t-1}, and r * h_{t-1} (resetAfter
//            false) or h_{t-1} U_c + b'_c (resetAfter true)
//   backward {steps, 4, batch, outputSize}: dLoss/dpre for r, u, c, and the gradient at the
//            candidate's recurrent product
// The units are kept internally in BasicGruCellUnit order; cellOrder is applied at the edges.
#include <popnn/Gru.hpp>

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
template <> poplar::ProfileValue toProfileValue(const popnn::gru::GruParams &p) {
  auto v = popnn::rnn_detail::layerProfile(p);
  v.insert({"resetAfter", toProfileValue(p.resetAfter)});
  return v;
}
template <> poplar::ProfileValue toProfileValue(const popnn::gru::GruWeights &w) {
  return popnn::rnn_detail::weightsProfile(w);
}
} // namespace poputil

namespace popnn {
namespace gru {

namespace {

constexpr unsigned NU = BASIC_GRU_CELL_NUM_UNITS;
enum FwdSlot { F_R, F_U, F_C, F_HPREV, F_AUX, F_NUM };
enum BwdSlot { B_R, B_U, B_C, B_REC, B_NUM };
using popops::expr::_1;
using popops::expr::_2;
using popops::expr::_3;
using popops::expr::_4;

/// What every GRU function checks and derives from its parameters.
struct Layer {
  std::string op;
  Type type;
  std::size_t B, T, I, H;
  bool resetAfter;
  std::vector<unsigned> pos; // unit -> index in the weights' outermost dimension
  RecurrentOptions opts;

  Layer(const GruParams &p, const OptionFlags &options, const std::string &opName, bool needCompute = true)
      : op(opName) {
    checkParams(p.rnn, op);
    type = p.rnn.dataType;
    B = p.rnn.batchSize;
    T = p.rnn.maxTimeSteps;
    I = p.rnn.layerSizes[0];
    H = p.rnn.layerSizes[1];
    resetAfter = p.resetAfter;
    pos = unitPositions(std::vector<unsigned>(p.cellOrder.begin(), p.cellOrder.end()), NU, op);
    opts = parseOptions(options, type, false, op);
    if (needCompute) {
      checkActivation(p.activation, op, "params' activation");
      checkActivation(p.recurrentActivation, op, "params' recurrentActivation");
    }
  }

  std::vector<std::size_t> biasShape() const {
    return resetAfter ? std::vector<std::size_t>{NU, 2, H} : std::vector<std::size_t>{NU, H};
  }
  void checkWeights(const GruWeights &w) const {
    checkTensor(w.inputWeights, {NU, I, H}, type, op, "weights.inputWeights");
    checkTensor(w.outputWeights, {NU, H, H}, type, op, "weights.outputWeights");
    checkTensor(w.biases, biasShape(), type, op, "weights.biases");
  }
  void checkIntermediates(const Tensor &t, const std::string &role, std::size_t slots) const {
    aspen::ops::requireValid(t, op, role);
    if (t.shape() != std::vector<std::size_t>{T, slots, B, H} || t.elementType() != type)
      throw poputil::poplibs_error(op + ": " + role + " " + describe(t) +
                                   " is not what this layer's gruFwd/gruBwd produces (" +
                                   shapeString({T, slots, B, H}) + " " + type.toString().str() + ")");
  }
  /// Units [begin, end) of a kernel {3, rows, H} (internal order) as one matrix {rows, n H}.
  Tensor flat(const Tensor &k, unsigned begin, unsigned end) const {
    Tensor s = k.slice(begin, end, 0);
    return s.dimShuffle({1, 0, 2}).reshape({s.dim(1), (end - begin) * H});
  }
};

} // namespace

const std::vector<BasicGruCellUnit> getDefaultBasicGruCellOrder() {
  return {BASIC_GRU_CELL_RESET_GATE, BASIC_GRU_CELL_UPDATE_GATE, BASIC_GRU_CELL_CANDIDATE};
}

GruParams::GruParams(Type dataType, std::size_t batchSize, std::size_t timeSteps,
                     std::vector<std::size_t> layerSizes, NonLinearityType activation,
                     NonLinearityType recurrentActivation)
    : rnn(dataType, batchSize, timeSteps, layerSizes), dataType(dataType), batchSize(batchSize),
      timeSteps(timeSteps), layerSizes(std::move(layerSizes)), activation(activation),
      recurrentActivation(recurrentActivation) {}

GruParams::GruParams(Type dataType, std::size_t batchSize, std::size_t maxTimeSteps, const Tensor &timeSteps,
                     std::vector<std::size_t> layerSizes, NonLinearityType activation,
                     NonLinearityType recurrentActivation)
    : rnn(dataType, batchSize, maxTimeSteps, timeSteps, layerSizes), dataType(dataType), batchSize(batchSize),
      timeSteps(maxTimeSteps), layerSizes(std::move(layerSizes)), activation(activation),
      recurrentActivation(recurrentActivation) {}

GruParams::GruParams(const GruParams &other) = default;

uint64_t getBasicGruCellFwdFlops(const GruParams &p) {
  const uint64_t B = p.rnn.batchSize, T = p.rnn.maxTimeSteps, I = p.rnn.layerSizes.at(0),
                 H = p.rnn.layerSizes.at(1);
  return 2 * B * T * NU * H * (I + H) + T * B * H * (NU /*bias*/ + 1 /*reset*/ + 4 /*output*/);
}

uint64_t getBasicGruCellBwdFlops(const GruParams &p) {
  const uint64_t B = p.rnn.batchSize, T = p.rnn.maxTimeSteps, I = p.rnn.layerSizes.at(0),
                 H = p.rnn.layerSizes.at(1);
  return 2 * B * T * NU * H * ((p.calcInputGradients ? I : 0) + H) + T * B * H * 14;
}

uint64_t getBasicGruCellWuFlops(const GruParams &p) {
  const uint64_t B = p.rnn.batchSize, T = p.rnn.maxTimeSteps, I = p.rnn.layerSizes.at(0),
                 H = p.rnn.layerSizes.at(1);
  return 2 * B * T * NU * H * (I + H) + B * T * NU * H * (p.resetAfter ? 2 : 1);
}

Tensor createInput(Graph &graph, const GruParams &params, const DebugContext &debugContext,
                   const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::gru::createInput", false);
  return createSequence(graph, l.type, {l.T, l.B, l.I}, {di, "input"});
}

Tensor createInitialState(Graph &graph, const GruParams &params, const DebugContext &debugContext,
                          const OptionFlags &options, poplin::PlanningCache *cache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::gru::createInitialState", false);
  return createState(graph, l.type, l.B, l.H, {di, "initialOutput"});
}

std::pair<Tensor, Tensor> createWeightsKernel(Graph &graph, const GruParams &params,
                                              const DebugContext &debugContext, const OptionFlags &options,
                                              poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::gru::createWeightsKernel", false);
  const OptionFlags mm = matMulOptions(l.opts, "TRAINING_FWD");
  Tensor wi = poplin::createMatMulInputRHS(graph, l.type, {l.B, l.I}, {l.I, NU * l.H}, {di, "inputWeights"},
                                           mm, planningCache);
  Tensor wo = poplin::createMatMulInputRHS(graph, l.type, {l.B, l.H}, {l.H, NU * l.H}, {di, "outputWeights"},
                                           mm, planningCache);
  auto units = [&](const Tensor &k) {
    return scatter0(k.reshape({k.dim(0), NU, l.H}).dimShuffle({1, 0, 2}), l.pos);
  };
  return {units(wi), units(wo)};
}

Tensor createWeightsBiases(Graph &graph, const GruParams &params, const DebugContext &debugContext,
                           const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::gru::createWeightsBiases", false);
  Tensor b = graph.addVariable(l.type, l.biasShape(), {di, "biases"});
  poputil::mapTensorLinearly(graph, b);
  return b;
}

GruWeights createWeights(Graph &graph, const GruParams &params, const DebugContext &debugContext,
                         const OptionFlags &options, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  auto k = createWeightsKernel(graph, params, {di}, options, planningCache);
  return {k.first, k.second, createWeightsBiases(graph, params, {di}, options, planningCache)};
}

namespace {

/// The forward pass; with `att` ({batch, steps}) the AUGRU's: u = (1 - a_t) * u.
Tensor forward(Graph &graph, const GruParams &params, const Layer &l, const Tensor &stateInit,
               const Tensor &in, const GruWeights &weights, Tensor *intermediates, program::Sequence &fwdProg,
               const Tensor *att, const DebugNameAndId &di, poplin::PlanningCache *planningCache) {
  using popops::expr::Const;
  if (att)
    checkTensor(*att, {l.B, l.T}, l.type, l.op, "the attention scores");
  checkTensor(stateInit, {l.B, l.H}, l.type, l.op, "stateInit");
  checkTensor(in, {l.T, l.B, l.I}, l.type, l.op, "the input");
  l.checkWeights(weights);
  const OptionFlags mmOpts = matMulOptions(l.opts, "TRAINING_FWD");
  const auto act = params.activation, rec = params.recurrentActivation;

  Tensor h = graph.clone(stateInit, {di, "output"});
  fwdProg.add(program::Copy(stateInit, h, false, {di}));
  Tensor outSeq;
  if (params.outputFullSequence)
    outSeq = createSequence(graph, l.type, {l.T, l.B, l.H}, {di, "outputSequence"});
  Tensor inter;
  if (intermediates)
    inter = createSequence(graph, l.type, {l.T, F_NUM, l.B, l.H}, {di, "fwdIntermediates"});
  const Tensor wi = gather0(weights.inputWeights, l.pos), wo = gather0(weights.outputWeights, l.pos);
  const Tensor b = gather0(weights.biases, l.pos);
  const Tensor bIn = (l.resetAfter ? b.slice(0, 1, 1) : b.expand({1})).broadcast(l.B, 1); // {3, B, H}
  const Tensor bRec = l.resetAfter ? b.slice(1, 2, 1).broadcast(l.B, 1) : Tensor();       // {3, B, H}
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
        Tensor x = popops::dynamicSlice(graph, in, t, {0}, {1}, s, {di, "input"})[0];
        auto units = [&](const Tensor &m, unsigned n) {
          return m.reshape({l.B, n, l.H}).dimShuffle({1, 0, 2});
        };
        Tensor mmX = units(
            poplin::matMul(graph, x, l.flat(wi, 0, NU), s, l.type, {di, "weighInput"}, mmOpts, planningCache),
            NU);
        Tensor ru, c, aux;
        if (!l.resetAfter) {
          Tensor mmH = units(poplin::matMul(graph, h, l.flat(wo, 0, 2), s, l.type, {di, "weighOutput"},
                                            mmOpts, planningCache),
                             2);
          ru = popops::map(graph, activation(rec, _1 + _2 + _3),
                           {mmX.slice(0, 2, 0), mmH, bIn.slice(0, 2, 0)}, s, {di, "gates"});
          aux = popops::map(graph, _1 * _2, {ru[0], h}, s, {di, "reset"});
          Tensor mmC = poplin::matMul(graph, aux, wo[BASIC_GRU_CELL_CANDIDATE], s, l.type, {di, "weighReset"},
                                      mmOpts, planningCache);
          c = popops::map(graph, activation(act, _1 + _2 + _3), {mmX[2], mmC, bIn[2]}, s, {di, "candidate"});
        } else {
          Tensor mmH = units(poplin::matMul(graph, h, l.flat(wo, 0, NU), s, l.type, {di, "weighOutput"},
                                            mmOpts, planningCache),
                             NU);
          ru = popops::map(graph, activation(rec, _1 + _2 + _3 + _4),
                           {mmX.slice(0, 2, 0), mmH.slice(0, 2, 0), bIn.slice(0, 2, 0), bRec.slice(0, 2, 0)},
                           s, {di, "gates"});
          aux = popops::map(graph, _1 + _2, {mmH[2], bRec[2]}, s, {di, "recurrentCandidate"});
          c = popops::map(graph, activation(act, _1 + _2 + _3 * _4), {mmX[2], bIn[2], ru[0], aux}, s,
                          {di, "candidate"});
        }
        Tensor u = ru[1];
        if (att) {
          Tensor a = popops::dynamicSlice(graph, att->transpose(), t, {0}, {1}, s, {di, "attention"})[0];
          u = popops::map(graph, (Const(1.0f) - _2) * _1, {u, a.expand({1}).broadcast(l.H, 1)}, s,
                          {di, "attention"});
        }
        Tensor hNew =
            popops::map(graph, _1 * _2 + (popops::expr::Const(1.0f) - _1) * _3, {u, h, c}, s, {di, "output"});
        Tensor stepInter;
        if (inter.valid())
          stepInter = concat(
              {ru[0].expand({0}), ru[1].expand({0}), c.expand({0}), h.expand({0}), aux.expand({0})}, 0);
        Tensor stepOut = hNew;
        if (limits.valid()) {
          // A sequence past its last step: intermediates and output zero, h kept (the final output).
          using popops::expr::Select;
          Tensor m = stepMask(graph, limits, t, s, {di});
          const Tensor mBH = broadcastMask(m, {l.B, l.H});
          if (stepInter.valid())
            stepInter = popops::map(graph, Select(_1, Const(0.0f), _2),
                                    {stepInter, broadcastMask(m, {F_NUM, l.B, l.H})}, s, {di, "mask"});
          stepOut = popops::map(graph, Select(_1, Const(0.0f), _2), {hNew, mBH}, s, {di, "mask"});
          hNew = popops::map(graph, Select(_1, _2, _3), {hNew, h, mBH}, s, {di, "mask"});
        }
        if (stepInter.valid())
          popops::dynamicUpdate(graph, inter, stepInter.expand({0}), t, {0}, {1}, s,
                                {di, "saveIntermediates"});
        s.add(program::Copy(hNew, h, false, {di}));
        if (outSeq.valid())
          popops::dynamicUpdate(graph, outSeq, stepOut.expand({0}), t, {0}, {1}, s, {di, "saveOutput"});
        return whileWithinSteps(graph, limits, t, s, {di});
      },
      {di, "gru"});
  fwdProg.add(loop);
  if (intermediates)
    *intermediates = inter;
  return params.outputFullSequence ? outSeq : h;
}

} // namespace

Tensor gruFwd(Graph &graph, const GruParams &params, const Tensor &stateInit, const Tensor &in,
              const GruWeights &weights, Tensor *intermediates, program::Sequence &fwdProg,
              const DebugContext &debugContext, const OptionFlags &options,
              poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(params, stateInit, in, weights, intermediates, options));
  const Layer l(params, options, "popnn::gru::gruFwd");
  Tensor out =
      forward(graph, params, l, stateInit, in, weights, intermediates, fwdProg, nullptr, {di}, planningCache);
  di.addOutputs(DI_ARGS(out));
  return out;
}

Tensor createAttention(Graph &graph, const GruParams &params, const DebugContext &debugContext,
                       const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, options));
  const Layer l(params, options, "popnn::gru::createAttention", false);
  return createSequence(graph, l.type, {l.T, l.B}, {di, "attention"}).transpose();
}

Tensor auGruFwd(Graph &graph, const GruParams &params, const Tensor &stateInit, const Tensor &in,
                const GruWeights &weights, Tensor *intermediates, const Tensor &attScores,
                program::Sequence &fwdProg, const DebugContext &debugContext, const OptionFlags &options,
                poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(params, stateInit, in, weights, intermediates, attScores, options));
  const Layer l(params, options, "popnn::gru::auGruFwd");
  Tensor out = forward(graph, params, l, stateInit, in, weights, intermediates, fwdProg, &attScores, {di},
                       planningCache);
  di.addOutputs(DI_ARGS(out));
  return out;
}

namespace {

Tensor backward(Graph &graph, const GruParams &params, const Layer &l, program::Sequence &prog,
                const Tensor &fwdOutputInit, const Tensor &fwdIntermediates, const GruWeights &weights,
                const Tensor &input, const Tensor &outputGrad, Tensor *inputGrad, Tensor &bwdInter,
                const Tensor *att, Tensor *attGrad, const DebugNameAndId &di,
                poplin::PlanningCache *planningCache) {
  if (att)
    checkTensor(*att, {l.B, l.T}, l.type, l.op, "the attentions");
  checkTensor(fwdOutputInit, {l.B, l.H}, l.type, l.op, "fwdOutputInit");
  l.checkIntermediates(fwdIntermediates, "fwdIntermediates", F_NUM);
  l.checkWeights(weights);
  checkTensor(input, {l.T, l.B, l.I}, l.type, l.op, "the input");
  if (params.outputFullSequence)
    checkTensor(outputGrad, {l.T, l.B, l.H}, l.type, l.op, "the output gradient");
  else
    checkTensor(outputGrad, {l.B, l.H}, l.type, l.op, "the output gradient");
  if (bool(inputGrad) != params.calcInputGradients)
    throw poputil::poplibs_error(l.op + ": inputGrad is " + (inputGrad ? "not null" : "null") +
                                 " but params.calcInputGradients is " +
                                 (params.calcInputGradients ? "true" : "false") +
                                 " (pass inputGrad exactly when input gradients are computed)");
  const auto act = params.activation, rec = params.recurrentActivation;
  const OptionFlags mmOpts = matMulOptions(l.opts, "TRAINING_BWD");
  const Tensor wi = gather0(weights.inputWeights, l.pos), wo = gather0(weights.outputWeights, l.pos);

  Tensor dh = graph.clone(fwdOutputInit, {di, "outputGrad"});
  popops::zero(graph, dh, prog, {di});
  if (!params.outputFullSequence)
    popops::addInPlace(graph, dh, outputGrad, prog, {di, "lastOutputGrad"});
  bwdInter = createSequence(graph, l.type, {l.T, B_NUM, l.B, l.H}, {di, "bwdIntermediates"});
  const bool inGrads = params.calcInputGradients;
  Tensor inGradSeq;
  if (inGrads)
    inGradSeq = createSequence(graph, l.type, {l.T, l.B, l.I}, {di, "inputGrad"});
  using popops::expr::Const;
  Tensor attGradSeq;
  if (att && attGrad)
    attGradSeq = createSequence(graph, l.type, {l.T, l.B}, {di, "attentionsGrad"});
  const StepLimits limits = stepLimits(graph, params.rnn, prog, {di, "timeSteps"});

  auto loop = popops::countedLoop(
      graph, l.T,
      [&](const Tensor &i) -> program::Program {
        program::Sequence s({}, {di, "step"});
        Tensor t = popops::map(graph, Const(unsigned(l.T - 1)) - _1, {i}, s, {di, "step"});
        Tensor fi = popops::dynamicSlice(graph, fwdIntermediates, t, {0}, {1}, s, {di, "intermediates"})[0];
        Tensor r = fi[F_R], u = fi[F_U], c = fi[F_C], hp = fi[F_HPREV], aux = fi[F_AUX];
        // Variable time steps: no gradient at a step after a sequence's last; dh passes unchanged.
        Tensor m = limits.valid() ? stepMask(graph, limits, t, s, {di}) : Tensor();
        auto masked = [&](const Tensor &g) {
          if (!m.valid())
            return g;
          std::vector<std::size_t> shape = g.shape();
          if (g.rank() == 1)
            return popops::map(graph, popops::expr::Select(_1, Const(0.0f), _2), {g, m}, s, {di, "mask"});
          return popops::map(graph, popops::expr::Select(_1, Const(0.0f), _2), {g, broadcastMask(m, shape)},
                             s, {di, "mask"});
        };
        Tensor dhT = dh;
        if (params.outputFullSequence) {
          Tensor og = popops::dynamicSlice(graph, outputGrad, t, {0}, {1}, s, {di, "outputGrad"})[0];
          dhT = popops::map(graph, _1 + _2, {dh, og}, s, {di, "outputGrad"});
        }
        Tensor uEff = u, du;
        if (att) { // AUGRU: the gate used is (1 - a) * u
          Tensor a = popops::dynamicSlice(graph, att->transpose(), t, {0}, {1}, s, {di, "attention"})[0]
                         .expand({1})
                         .broadcast(l.H, 1);
          uEff = popops::map(graph, (Const(1.0f) - _2) * _1, {u, a}, s, {di, "attention"});
          Tensor duEff = popops::map(graph, _1 * (_2 - _3), {dhT, hp, c}, s, {di, "updateGrad"});
          du = popops::map(graph, _1 * (Const(1.0f) - _2) * activationGradient(rec, _3), {duEff, a, u}, s,
                           {di, "updateGrad"});
          if (attGradSeq.valid()) {
            Tensor prod = popops::map(graph, -(_1 * _2), {duEff, u}, s, {di, "attentionGrad"});
            Tensor ga = masked(
                popops::reduce(graph, prod, l.type, {1}, popops::Operation::ADD, s, {di, "attentionGrad"}));
            popops::dynamicUpdate(graph, attGradSeq, ga.expand({0}), t, {0}, {1}, s,
                                  {di, "saveAttentionGrad"});
          }
        } else {
          du = popops::map(graph, _1 * (_2 - _3) * activationGradient(rec, _4), {dhT, hp, c, u}, s,
                           {di, "updateGrad"});
        }
        Tensor dc = popops::map(graph, _1 * (Const(1.0f) - _2) * activationGradient(act, _3), {dhT, uEff, c},
                                s, {di, "candidateGrad"});
        Tensor dr, gRec, dhDirect, dhRec;
        if (!l.resetAfter) {
          Tensor drh = poplin::matMul(graph, dc, wo[BASIC_GRU_CELL_CANDIDATE].transpose(), s, l.type,
                                      {di, "resetGrad"}, mmOpts, planningCache);
          dr = popops::map(graph, _1 * _2 * activationGradient(rec, _3), {drh, hp, r}, s,
                           {di, "resetGateGrad"});
          dhDirect = popops::map(graph, _1 * _2 + _3 * _4, {dhT, uEff, drh, r}, s, {di, "prevOutputGrad"});
          gRec = dc;
          Tensor dru =
              concat(dr.expand({0}), du.expand({0}), 0).dimShuffle({1, 0, 2}).reshape({l.B, 2 * l.H});
          dhRec = poplin::matMul(graph, dru, l.flat(wo, 0, 2).transpose(), s, l.type, {di, "recurrentGrad"},
                                 mmOpts, planningCache);
        } else {
          dr = popops::map(graph, _1 * _2 * activationGradient(rec, _3), {dc, aux, r}, s,
                           {di, "resetGateGrad"});
          gRec = popops::map(graph, _1 * _2, {dc, r}, s, {di, "recurrentCandidateGrad"});
          dhDirect = popops::map(graph, _1 * _2, {dhT, uEff}, s, {di, "prevOutputGrad"});
          Tensor dAll = concat({dr.expand({0}), du.expand({0}), gRec.expand({0})}, 0)
                            .dimShuffle({1, 0, 2})
                            .reshape({l.B, NU * l.H});
          dhRec = poplin::matMul(graph, dAll, l.flat(wo, 0, NU).transpose(), s, l.type, {di, "recurrentGrad"},
                                 mmOpts, planningCache);
        }
        Tensor stepGrads =
            masked(concat({dr.expand({0}), du.expand({0}), dc.expand({0}), gRec.expand({0})}, 0));
        popops::dynamicUpdate(graph, bwdInter, stepGrads.expand({0}), t, {0}, {1}, s, {di, "saveGrads"});
        if (inGrads) {
          Tensor dIn = stepGrads.slice(0, NU, 0).dimShuffle({1, 0, 2}).reshape({l.B, NU * l.H});
          Tensor dx = poplin::matMul(graph, dIn, l.flat(wi, 0, NU).transpose(), s, l.type, {di, "inputGrad"},
                                     mmOpts, planningCache);
          popops::dynamicUpdate(graph, inGradSeq, dx.expand({0}), t, {0}, {1}, s, {di, "saveInputGrad"});
        }
        Tensor dhNew = popops::map(graph, _1 + _2, {dhDirect, dhRec}, s, {di, "stateGrad"});
        if (m.valid())
          dhNew = popops::map(graph, popops::expr::Select(_1, _2, _3),
                              {dhNew, dh, broadcastMask(m, {l.B, l.H})}, s, {di, "mask"});
        s.add(program::Copy(dhNew, dh, false, {di}));
        return s;
      },
      {di, "gruBwd"});
  prog.add(loop);
  if (inputGrad)
    *inputGrad = inGradSeq;
  if (attGradSeq.valid())
    *attGrad = attGradSeq.transpose();
  return dh;
}

GruWeights weightUpdate(Graph &graph, const Layer &l, program::Sequence &prog, const Tensor &fwdIntermediates,
                        const Tensor &bwdInter, const Tensor &input, const DebugNameAndId &di,
                        poplin::PlanningCache *planningCache) {
  l.checkIntermediates(fwdIntermediates, "fwdIntermediates", F_NUM);
  l.checkIntermediates(bwdInter, "bwdIntermediates", B_NUM);
  checkTensor(input, {l.T, l.B, l.I}, l.type, l.op, "the input");
  const std::size_t rows = l.T * l.B;
  const OptionFlags mmOpts = matMulOptions(l.opts, "TRAINING_WU");
  auto seqRows = [&](const Tensor &seq, unsigned begin, unsigned end) { // {T, n, B, H} -> {T B, n H}
    return seq.slice(begin, end, 1).dimShuffle({0, 2, 1, 3}).reshape({rows, (end - begin) * l.H});
  };
  auto toUnits = [&](const Tensor &m, unsigned n) {
    return m.reshape({m.dim(0), n, l.H}).dimShuffle({1, 0, 2});
  };
  const Tensor x = input.reshape({rows, l.I});
  const Tensor hp = seqRows(fwdIntermediates, F_HPREV, F_HPREV + 1);
  Tensor dWi = toUnits(poplin::matMul(graph, x.transpose(), seqRows(bwdInter, B_R, B_C + 1), prog, l.type,
                                      {di, "inputWeightGrads"}, mmOpts, planningCache),
                       NU);
  Tensor dWru = toUnits(poplin::matMul(graph, hp.transpose(), seqRows(bwdInter, B_R, B_U + 1), prog, l.type,
                                       {di, "outputWeightGrads"}, mmOpts, planningCache),
                        2);
  const Tensor candIn = l.resetAfter ? hp : seqRows(fwdIntermediates, F_AUX, F_AUX + 1);
  Tensor dWc = poplin::matMul(graph, candIn.transpose(), seqRows(bwdInter, B_REC, B_REC + 1), prog, l.type,
                              {di, "candidateWeightGrads"}, mmOpts, planningCache);
  Tensor dWo = concat(dWru, dWc.expand({0}), 0);
  Tensor db = popops::reduce(graph, bwdInter.slice(B_R, B_C + 1, 1), l.type, {0, 2}, popops::Operation::ADD,
                             prog, {di, "biasGrads"});
  if (l.resetAfter) {
    Tensor recGrads = concat(bwdInter.slice(B_R, B_U + 1, 1), bwdInter.slice(B_REC, B_REC + 1, 1), 1);
    Tensor dbRec = popops::reduce(graph, recGrads, l.type, {0, 2}, popops::Operation::ADD, prog,
                                  {di, "recurrentBiasGrads"});
    db = concat(db.expand({1}), dbRec.expand({1}), 1);
  }
  return {scatter0(dWi, l.pos), scatter0(dWo, l.pos), scatter0(db, l.pos)};
}

} // namespace

Tensor gruBwd(Graph &graph, const GruParams &params, program::Sequence &prog, const Tensor &fwdOutputInit,
              const Tensor &fwdIntermediatesSeq, const GruWeights &weights, const Tensor &fwdInputSeq,
              const Tensor &fwdOutput, const Tensor &gradLayerNext, Tensor *inputGrad,
              Tensor *bwdIntermediates, const DebugContext &debugContext, const OptionFlags &options_,
              poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdOutputInit, fwdIntermediatesSeq, weights,
                                                      fwdInputSeq, fwdOutput, gradLayerNext, options_));
  const Layer l(params, options_, "popnn::gru::gruBwd");
  Tensor bwdInter;
  Tensor g = backward(graph, params, l, prog, fwdOutputInit, fwdIntermediatesSeq, weights, fwdInputSeq,
                      gradLayerNext, inputGrad, bwdInter, nullptr, nullptr, {di}, planningCache);
  if (bwdIntermediates)
    *bwdIntermediates = bwdInter;
  return g;
}

GruWeights gruWU(Graph &graph, const GruParams &params, program::Sequence &prog, const Tensor &fwdOutputInit,
                 const Tensor &fwdIntermediates, const Tensor &bwdIntermediates, const GruWeights &weights,
                 const Tensor &input, const Tensor &output, const DebugContext &debugContext,
                 const OptionFlags &options_, poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdOutputInit, fwdIntermediates,
                                                      bwdIntermediates, weights, input, output, options_));
  const Layer l(params, options_, "popnn::gru::gruWU");
  l.checkWeights(weights);
  return weightUpdate(graph, l, prog, fwdIntermediates, bwdIntermediates, input, {di}, planningCache);
}

Tensor gruBwdWithWU(Graph &graph, const GruParams &params, program::Sequence &prog,
                    const Tensor &fwdOutputInit, const Tensor &fwdIntermediates, const GruWeights &weights,
                    const Tensor &input, const Tensor &output, const Tensor &outputGrad, Tensor *inputGrad,
                    GruWeights &weightsGrad, const DebugContext &debugContext, const OptionFlags &options_,
                    poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdOutputInit, fwdIntermediates, weights, input,
                                                      output, outputGrad, options_));
  const Layer l(params, options_, "popnn::gru::gruBwdWithWU");
  Tensor bwdInter;
  Tensor g = backward(graph, params, l, prog, fwdOutputInit, fwdIntermediates, weights, input, outputGrad,
                      inputGrad, bwdInter, nullptr, nullptr, {di}, planningCache);
  weightsGrad = weightUpdate(graph, l, prog, fwdIntermediates, bwdInter, input, {di}, planningCache);
  return g;
}

Tensor auGruBwd(Graph &graph, const GruParams &params, program::Sequence &prog, const Tensor &fwdOutputInit,
                const Tensor &fwdIntermediatesSeq, const GruWeights &weights, const Tensor &fwdInputSeq,
                const Tensor &fwdOutput, const Tensor &gradLayerNext, Tensor *inputGrad,
                Tensor *bwdIntermediates, const Tensor &attentions, Tensor *attentionsGrad,
                const DebugContext &debugContext, const OptionFlags &options_,
                poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(params, fwdOutputInit, fwdIntermediatesSeq, weights, fwdInputSeq,
                                        fwdOutput, gradLayerNext, attentions, options_));
  const Layer l(params, options_, "popnn::gru::auGruBwd");
  Tensor bwdInter;
  Tensor g = backward(graph, params, l, prog, fwdOutputInit, fwdIntermediatesSeq, weights, fwdInputSeq,
                      gradLayerNext, inputGrad, bwdInter, &attentions, attentionsGrad, {di}, planningCache);
  if (bwdIntermediates)
    *bwdIntermediates = bwdInter;
  return g;
}

GruWeights auGruWU(Graph &graph, const GruParams &params, program::Sequence &prog,
                   const Tensor &fwdOutputInit, const Tensor &fwdIntermediates,
                   const Tensor &bwdIntermediates, const GruWeights &weights, const Tensor &input,
                   const Tensor &output, const DebugContext &debugContext, const OptionFlags &options_,
                   poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdOutputInit, fwdIntermediates,
                                                      bwdIntermediates, weights, input, output, options_));
  const Layer l(params, options_, "popnn::gru::auGruWU");
  l.checkWeights(weights);
  return weightUpdate(graph, l, prog, fwdIntermediates, bwdIntermediates, input, {di}, planningCache);
}

Tensor auGruBwdWithWU(Graph &graph, const GruParams &params, program::Sequence &prog,
                      const Tensor &fwdOutputInit, const Tensor &fwdIntermediates, const GruWeights &weights,
                      const Tensor &input, const Tensor &output, const Tensor &outputGrad, Tensor *inputGrad,
                      GruWeights &weightsGrad, const Tensor &attentions, Tensor *attentionsGrad,
                      const DebugContext &debugContext, const OptionFlags &options_,
                      poplin::PlanningCache *planningCache) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, fwdOutputInit, fwdIntermediates, weights, input,
                                                      output, outputGrad, attentions, options_));
  const Layer l(params, options_, "popnn::gru::auGruBwdWithWU");
  Tensor bwdInter;
  Tensor g = backward(graph, params, l, prog, fwdOutputInit, fwdIntermediates, weights, input, outputGrad,
                      inputGrad, bwdInter, &attentions, attentionsGrad, {di}, planningCache);
  weightsGrad = weightUpdate(graph, l, prog, fwdIntermediates, bwdInter, input, {di}, planningCache);
  return g;
}

namespace {

/// `params` with rnn.varTimeSteps set to `realTimeSteps`, for the realTimeSteps forms.
GruParams withRealTimeSteps(const GruParams &params, const Tensor &realTimeSteps, const std::string &op,
                            bool forward) {
  aspen::ops::requireValid(realTimeSteps, op, "realTimeSteps");
  if (params.rnn.variableTimeSteps())
    throw poputil::poplibs_error(op + ": params' varTimeSteps " + describe(params.rnn.varTimeSteps) +
                                 " is set as well as realTimeSteps " + describe(realTimeSteps) +
                                 " (give the time steps one way)");
  if (forward && !params.outputFullSequence)
    throw poputil::poplibs_error(op + ": params' outputFullSequence is false; the realTimeSteps form "
                                      "returns the full sequence (set it true)");
  if (realTimeSteps.rank() != 1 ||
      (realTimeSteps.dim(0) != 1 && realTimeSteps.dim(0) != params.rnn.batchSize))
    throw poputil::poplibs_error(op + ": realTimeSteps " + describe(realTimeSteps) + " has shape " +
                                 shapeString(realTimeSteps.shape()) + "; it must be {batchSize} = {" +
                                 std::to_string(params.rnn.batchSize) + "} (or {1})");
  if (realTimeSteps.elementType() != UNSIGNED_INT && realTimeSteps.elementType() != INT)
    throw poputil::poplibs_error(op + ": realTimeSteps " + describe(realTimeSteps) + " has element type " +
                                 realTimeSteps.elementType().toString().str() +
                                 " (unsigned int and int are supported)");
  GruParams p = params;
  p.rnn.varTimeSteps = realTimeSteps;
  return p;
}

} // namespace

Tensor gruFwd(Graph &graph, const GruParams &params, const Tensor &stateInit, const Tensor &in,
              const Tensor &realTimeSteps, const GruWeights &weights, Tensor *intermediates,
              program::Sequence &fwdProg, const DebugContext &debugContext, const OptionFlags &options,
              poplin::PlanningCache *planningCache) {
  return gruFwd(graph, withRealTimeSteps(params, realTimeSteps, "popnn::gru::gruFwd", true), stateInit, in,
                weights, intermediates, fwdProg, debugContext, options, planningCache);
}

Tensor auGruFwd(Graph &graph, const GruParams &params, const Tensor &stateInit, const Tensor &in,
                const Tensor &realTimeSteps, const GruWeights &weights, Tensor *intermediates,
                const Tensor &attScores, program::Sequence &fwdProg, const DebugContext &debugContext,
                const OptionFlags &options, poplin::PlanningCache *planningCache) {
  return auGruFwd(graph, withRealTimeSteps(params, realTimeSteps, "popnn::gru::auGruFwd", true), stateInit,
                  in, weights, intermediates, attScores, fwdProg, debugContext, options, planningCache);
}

Tensor gruBwd(Graph &graph, const GruParams &params, program::Sequence &prog, const Tensor &fwdOutputInit,
              const Tensor &fwdIntermediatesSeq, const GruWeights &weights, const Tensor &fwdInputSeq,
              const Tensor &realTimeSteps, const Tensor &fwdOutput, const Tensor &gradLayerNext,
              Tensor *inputGrad, Tensor *bwdIntermediates, const DebugContext &debugContext,
              const OptionFlags &options_, poplin::PlanningCache *planningCache) {
  return gruBwd(graph, withRealTimeSteps(params, realTimeSteps, "popnn::gru::gruBwd", false), prog,
                fwdOutputInit, fwdIntermediatesSeq, weights, fwdInputSeq, fwdOutput, gradLayerNext, inputGrad,
                bwdIntermediates, debugContext, options_, planningCache);
}

Tensor auGruBwd(Graph &graph, const GruParams &params, program::Sequence &prog, const Tensor &fwdOutputInit,
                const Tensor &fwdIntermediatesSeq, const GruWeights &weights, const Tensor &fwdInputSeq,
                const Tensor &realTimeSteps, const Tensor &fwdOutput, const Tensor &gradLayerNext,
                Tensor *inputGrad, Tensor *bwdIntermediates, const Tensor &attentions, Tensor *attentionsGrad,
                const DebugContext &debugContext, const OptionFlags &options_,
                poplin::PlanningCache *planningCache) {
  return auGruBwd(graph, withRealTimeSteps(params, realTimeSteps, "popnn::gru::auGruBwd", false), prog,
                  fwdOutputInit, fwdIntermediatesSeq, weights, fwdInputSeq, fwdOutput, gradLayerNext,
                  inputGrad, bwdIntermediates, attentions, attentionsGrad, debugContext, options_,
                  planningCache);
}

Tensor gruBwdWithWU(Graph &graph, const GruParams &params, program::Sequence &prog,
                    const Tensor &fwdOutputInit, const Tensor &fwdIntermediates, const GruWeights &weights,
                    const Tensor &input, const Tensor &realTimeSteps, const Tensor &output,
                    const Tensor &outputGrad, Tensor *inputGrad, GruWeights &weightsGrad,
                    const DebugContext &debugContext, const OptionFlags &options_,
                    poplin::PlanningCache *planningCache) {
  return gruBwdWithWU(graph, withRealTimeSteps(params, realTimeSteps, "popnn::gru::gruBwdWithWU", false),
                      prog, fwdOutputInit, fwdIntermediates, weights, input, output, outputGrad, inputGrad,
                      weightsGrad, debugContext, options_, planningCache);
}

Tensor auGruBwdWithWU(Graph &graph, const GruParams &params, program::Sequence &prog,
                      const Tensor &fwdOutputInit, const Tensor &fwdIntermediates, const GruWeights &weights,
                      const Tensor &input, const Tensor &realTimeSteps, const Tensor &output,
                      const Tensor &outputGrad, Tensor *inputGrad, GruWeights &weightsGrad,
                      const Tensor &attentions, Tensor *attentionsGrad, const DebugContext &debugContext,
                      const OptionFlags &options_, poplin::PlanningCache *planningCache) {
  return auGruBwdWithWU(graph, withRealTimeSteps(params, realTimeSteps, "popnn::gru::auGruBwdWithWU", false),
                        prog, fwdOutputInit, fwdIntermediates, weights, input, output, outputGrad, inputGrad,
                        weightsGrad, attentions, attentionsGrad, debugContext, options_, planningCache);
}

} // namespace gru
} // namespace popnn
