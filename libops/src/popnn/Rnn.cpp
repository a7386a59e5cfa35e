// Copyright (c) Aspen contributors.
// popnn::rnn: the parameters of a recurrent layer, sequence tensors, the time-step loop
// (Rnn), and what the LSTM and GRU share inside (RnnInternal.hpp).
#include <popnn/Rnn.hpp>

#include "RnnInternal.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <popops/Cast.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Loop.hpp>
#include <popops/Reduce.hpp>
#include <poputil/OptionParsing.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <algorithm>
#include <map>

using namespace poplar;
using aspen::ops::describe;
using aspen::ops::shapeString;

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popnn::rnn::RnnParams &p) {
  poplar::ProfileValue::Map v;
  v.insert({"dataType", toProfileValue(p.dataType)});
  v.insert({"batchSize", toProfileValue(p.batchSize)});
  v.insert({"maxTimeSteps", toProfileValue(p.maxTimeSteps)});
  v.insert({"layerSizes", toProfileValue(p.layerSizes)});
  v.insert({"varTimeSteps", toProfileValue(p.varTimeSteps)});
  return v;
}
} // namespace poputil

namespace popnn {

namespace rnn_detail {

RecurrentOptions parseOptions(const OptionFlags &options, const Type &dataType, bool lstm,
                              const std::string &op) {
  RecurrentOptions o;
  o.accumulatorsType = dataType;
  o.inferenceOnly = !lstm; // PopLibs' GRU defaults to inference
  const std::map<std::string, Type> types{{"half", HALF}, {"float", FLOAT}};
  bool ignoredBool = false;
  int ignoredInt = 0;
  double amp = -1;
  std::string recomputation;
  using poplibs::OptionHandler;
  const poplibs::OptionSpec lstmSpec{
      {"availableMemoryProportion", OptionHandler::createWithDouble(amp)},
      {"partialsType", OptionHandler::createWithEnum(o.partialsType, types)},
      {"inferenceOnly", OptionHandler::createWithBool(o.inferenceOnly)},
      {"weightAccumulatorsType", OptionHandler::createWithEnum(o.accumulatorsType, types)},
      {"preCalcWeights", OptionHandler::createWithBool(ignoredBool)},
      {"recomputationMode", OptionHandler::createWithEnum(
                                recomputation,
                                std::map<std::string, std::string>{
                                    {"none", "none"}, {"cellAndTanh", "cellAndTanh"}, {"full", "full"}})},
      {"numShards", OptionHandler::createWithInteger(ignoredInt)},
      {"rnnCodeReuse", OptionHandler::createWithBool(ignoredBool)},
      {"rnnStepsPerWU", OptionHandler::createWithInteger(ignoredInt)},
      {"disableWUPartialInterleaving", OptionHandler::createWithBool(ignoredBool)}};
  const poplibs::OptionSpec gruSpec{{"availableMemoryProportion", OptionHandler::createWithDouble(amp)},
                                    {"partialsType", OptionHandler::createWithEnum(o.partialsType, types)},
                                    {"inferenceOnly", OptionHandler::createWithBool(o.inferenceOnly)},
                                    {"numShards", OptionHandler::createWithInteger(ignoredInt)},
                                    {"rnnCodeReuse", OptionHandler::createWithBool(ignoredBool)}};
  for (const auto &kv : options) {
    ignoredInt = 1;
    aspen::ops::parseOptions(lstm ? lstmSpec : gruSpec, OptionFlags{{kv.first, kv.second}}, op);
    if (kv.first == "availableMemoryProportion" && (amp < 0 || amp > 1))
      throw poplar::invalid_option(op + ": option 'availableMemoryProportion': value '" + kv.second +
                                   "' is not between 0 and 1");
    if ((kv.first == "numShards" || kv.first == "rnnStepsPerWU") && ignoredInt < 1)
      throw poplar::invalid_option(op + ": option '" + kv.first + "': value '" + kv.second +
                                   "' is not a positive integer");
  }
  o.availableMemoryProportion = amp;
  return o;
}

OptionFlags matMulOptions(const RecurrentOptions &opts, const char *pass) {
  OptionFlags f{{"partialsType", opts.partialsType == HALF ? "half" : "float"},
                {"fullyConnectedPass", opts.inferenceOnly ? "INFERENCE_FWD" : pass}};
  if (opts.availableMemoryProportion >= 0)
    f.set("availableMemoryProportion", std::to_string(opts.availableMemoryProportion));
  return f;
}

void checkActivation(NonLinearityType t, const std::string &op, const char *what) {
  switch (t) {
  case NonLinearityType::SIGMOID:
  case NonLinearityType::HARD_SIGMOID:
  case NonLinearityType::RELU:
  case NonLinearityType::TANH:
    return;
  default:
    throw poputil::poplibs_error(op + ": " + what + " " + poputil::toProfileValue(t).asString() +
                                 " is not supported in a recurrent layer (SIGMOID, HARD_SIGMOID, RELU "
                                 "and TANH are)");
  }
}

popops::expr::Any activation(NonLinearityType t, const popops::expr::Expr &x) {
  using namespace popops::expr;
  switch (t) {
  case NonLinearityType::SIGMOID:
    return Sigmoid(x);
  case NonLinearityType::HARD_SIGMOID:
    return Max(Const(0.0f), Min(Const(1.0f), Add(Mul(Const(0.2f), x), Const(0.5f))));
  case NonLinearityType::RELU:
    return Relu(x);
  default:
    return Tanh(x);
  }
}

popops::expr::Any activationGradient(NonLinearityType t, const popops::expr::Expr &y) {
  using namespace popops::expr;
  switch (t) {
  case NonLinearityType::SIGMOID:
    return Mul(y, Sub(Const(1.0f), y));
  case NonLinearityType::HARD_SIGMOID:
    return Select(Const(0.2f), Const(0.0f), And(Gt(y, Const(0.0f)), Lt(y, Const(1.0f))));
  case NonLinearityType::RELU:
    return Select(Const(1.0f), Const(0.0f), Gt(y, Const(0.0f)));
  default:
    return Sub(Const(1.0f), Mul(y, y));
  }
}

void checkParams(const rnn::RnnParams &p, const std::string &op) {
  if (p.dataType != FLOAT && p.dataType != HALF)
    throw poputil::poplibs_error(op + ": params' dataType " + p.dataType.toString().str() +
                                 " is not supported (float and half are)");
  if (p.layerSizes.size() != 2)
    throw poputil::poplibs_error(op + ": params' layerSizes has " + std::to_string(p.layerSizes.size()) +
                                 " entries; a layer takes two, {inputSize, outputSize}");
  if (p.batchSize == 0 || p.maxTimeSteps == 0 || p.layerSizes[0] == 0 || p.layerSizes[1] == 0)
    throw poputil::poplibs_error(op + ": params' batchSize (" + std::to_string(p.batchSize) +
                                 "), timeSteps (" + std::to_string(p.maxTimeSteps) + ") and layerSizes " +
                                 shapeString(p.layerSizes) + " must be non-zero");
  if (p.variableTimeSteps()) {
    const Tensor &v = p.varTimeSteps;
    if (v.rank() != 1 || (v.dim(0) != 1 && v.dim(0) != p.batchSize))
      throw poputil::poplibs_error(op + ": params' varTimeSteps " + describe(v) + " has shape " +
                                   shapeString(v.shape()) + "; it must be {1} or {batchSize} = {" +
                                   std::to_string(p.batchSize) + "}");
    if (v.elementType() != UNSIGNED_INT && v.elementType() != INT)
      throw poputil::poplibs_error(op + ": params' varTimeSteps " + describe(v) + " has element type " +
                                   v.elementType().toString().str() +
                                   " (unsigned int and int are supported)");
  }
}

StepLimits stepLimits(Graph &graph, const rnn::RnnParams &p, program::Sequence &prog,
                      const DebugNameAndId &di) {
  using namespace popops::expr;
  StepLimits l;
  if (!p.variableTimeSteps())
    return l;
  Tensor v = p.varTimeSteps;
  if (v.elementType() == INT)
    v = popops::map(graph, Cast(Max(_1, Const(0)), UNSIGNED_INT), {v}, prog, {di, "timeSteps"});
  Tensor steps = popops::map(graph, Min(_1, Const(unsigned(p.maxTimeSteps))), {v}, prog, {di, "timeSteps"});
  if (steps.numElements() == 1) {
    l.maxSteps = l.minSteps = steps;
  } else {
    l.maxSteps =
        popops::reduce(graph, steps, UNSIGNED_INT, {0}, popops::Operation::MAX, prog, {di, "maxTimeSteps"})
            .reshape({1});
    l.minSteps =
        popops::reduce(graph, steps, UNSIGNED_INT, {0}, popops::Operation::MIN, prog, {di, "minTimeSteps"})
            .reshape({1});
  }
  l.steps = steps.numElements() == 1 ? steps.broadcast(unsigned(p.batchSize), 0) : steps;
  return l;
}

Tensor stepMask(Graph &graph, const StepLimits &limits, const Tensor &t, program::Sequence &prog,
                const DebugNameAndId &di) {
  using namespace popops::expr;
  return popops::map(graph, Lt(_1, _2),
                     {t.reshape({1}).broadcast(unsigned(limits.steps.dim(0)), 0), limits.steps}, prog,
                     {di, "stepMask"});
}

program::Program whileWithinSteps(Graph &graph, const StepLimits &limits, const Tensor &t,
                                  program::Sequence body, const DebugNameAndId &di) {
  if (!limits.valid())
    return body;
  using namespace popops::expr;
  program::Sequence s({}, {di, "variableStep"});
  Tensor active = popops::map(graph, Lt(_1, _2), {t.reshape({1}), limits.maxSteps}, s, {di, "withinSteps"});
  s.add(program::If(active.reshape({}), body, program::Sequence(), {di, "withinSteps"}));
  return s;
}

Tensor broadcastMask(const Tensor &m, const std::vector<std::size_t> &shape) {
  // m {B} -> {1, ..., B, 1} -> shape
  std::vector<std::size_t> s(shape.size(), 1);
  s[shape.size() - 2] = m.dim(0);
  Tensor r = m.reshape(s);
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (d != shape.size() - 2)
      r = r.broadcast(unsigned(shape[d]), unsigned(d));
  return r;
}

void checkTensor(const Tensor &t, const std::vector<std::size_t> &shape, const Type &type,
                 const std::string &op, const std::string &role) {
  aspen::ops::requireValid(t, op, role);
  if (t.shape() != shape)
    throw poputil::poplibs_error(op + ": " + role + " " + describe(t) + " has shape " +
                                 shapeString(t.shape()) + "; the layer's parameters need " +
                                 shapeString(shape));
  if (t.elementType() != type)
    throw poputil::poplibs_error(op + ": " + role + " " + describe(t) + " has element type " +
                                 t.elementType().toString().str() + "; the layer's dataType is " +
                                 type.toString().str());
}

std::vector<unsigned> unitPositions(const std::vector<unsigned> &order, unsigned numUnits,
                                    const std::string &op) {
  std::vector<unsigned> pos(numUnits, numUnits);
  bool ok = order.size() == numUnits;
  for (std::size_t k = 0; ok && k < order.size(); ++k) {
    if (order[k] >= numUnits || pos[order[k]] != numUnits)
      ok = false;
    else
      pos[order[k]] = unsigned(k);
  }
  if (!ok) {
    std::string s;
    for (unsigned u : order)
      s += (s.empty() ? "" : ", ") + std::to_string(u);
    throw poputil::poplibs_error(op + ": params' cellOrder {" + s + "} must list each of the " +
                                 std::to_string(numUnits) + " units once");
  }
  return pos;
}

Tensor gather0(const Tensor &t, const std::vector<unsigned> &pos) {
  std::vector<Tensor> parts;
  for (unsigned p : pos)
    parts.push_back(t.slice(p, p + 1, 0));
  return concat(parts, 0);
}

Tensor scatter0(const Tensor &t, const std::vector<unsigned> &pos) {
  std::vector<Tensor> parts(pos.size());
  for (std::size_t u = 0; u < pos.size(); ++u)
    parts[pos[u]] = t.slice(u, u + 1, 0);
  return concat(parts, 0);
}

Tensor createState(Graph &graph, const Type &type, std::size_t batch, std::size_t size,
                   const DebugNameAndId &di) {
  Tensor t = graph.addVariable(type, {batch, size}, di);
  poputil::mapTensorLinearly(graph, t);
  return t;
}

Tensor createSequence(Graph &graph, const Type &type, const std::vector<std::size_t> &shape,
                      const DebugContext &dc) {
  return popops::createSliceableTensor(graph, type, shape, {0}, {1}, 0, dc);
}

} // namespace rnn_detail

namespace rnn {

RnnParams::RnnParams(Type dataType, std::size_t batchSize, std::size_t timeSteps,
                     std::vector<std::size_t> layerSizes)
    : dataType(dataType), batchSize(batchSize), maxTimeSteps(timeSteps), timeSteps(timeSteps),
      layerSizes(std::move(layerSizes)) {}

RnnParams::RnnParams(Type dataType, std::size_t batchSize, std::size_t maxTimeSteps,
                     const Tensor &varTimeSteps, std::vector<std::size_t> layerSizes)
    : dataType(dataType), batchSize(batchSize), maxTimeSteps(maxTimeSteps), timeSteps(maxTimeSteps),
      varTimeSteps(varTimeSteps), layerSizes(std::move(layerSizes)) {}

std::size_t RnnParams::getMaxShards(const Graph &graph) const {
  return std::max<std::size_t>(1, std::min<std::size_t>(maxTimeSteps, graph.getTarget().getNumTiles()));
}

namespace {
std::size_t bytesPerTile(const Graph &graph, const Type &type, std::size_t elements) {
  const std::size_t tiles = graph.getTarget().getNumTiles();
  return (elements * graph.getTarget().getTypeSize(type) + tiles - 1) / tiles;
}
std::size_t layerSize(const RnnParams &p, std::size_t i, const std::string &op) {
  if (p.layerSizes.size() != 2)
    throw poputil::poplibs_error(op + ": params' layerSizes has " + std::to_string(p.layerSizes.size()) +
                                 " entries; a layer takes two, {inputSize, outputSize}");
  return p.layerSizes[i];
}
} // namespace

std::size_t RnnParams::getInputBytesPerTile(const Graph &graph) const {
  return bytesPerTile(graph, dataType, maxTimeSteps * batchSize * layerSize(*this, 0, "RnnParams"));
}

std::size_t RnnParams::getOutputBytesPerTile(const Graph &graph) const {
  return bytesPerTile(graph, dataType, maxTimeSteps * batchSize * layerSize(*this, 1, "RnnParams"));
}

bool RnnParams::variableTimeSteps() const {
  return varTimeSteps.valid();
}

bool RnnParams::batchVariableTimeSteps() const {
  return varTimeSteps.valid() && varTimeSteps.numElements() > 1;
}

Tensor createInitialState(Graph &graph, const RnnParams &params, bool isOutput, unsigned multiple,
                          unsigned numShards, const DebugContext &debugContext) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, isOutput, multiple, numShards));
  const std::string op = "popnn::rnn::createInitialState";
  const std::size_t size = layerSize(params, isOutput ? 1 : 0, op);
  Tensor t = graph.addVariable(params.dataType, {multiple, params.batchSize, size}, {di, "initialState"});
  poputil::mapTensorLinearly(graph, t);
  return t;
}

Tensor createRecurrentTensor(Graph &graph, const RnnParams &params, unsigned size, unsigned numShards,
                             const DebugContext &debugContext) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, size, numShards));
  return rnn_detail::createSequence(graph, params.dataType, {params.maxTimeSteps, params.batchSize, size},
                                    {di, "recurrent"});
}

Tensor createInputTensor(Graph &graph, const RnnParams &params, unsigned numShards,
                         const DebugContext &debugContext) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, numShards));
  const std::size_t size = layerSize(params, 0, "popnn::rnn::createInputTensor");
  return rnn_detail::createSequence(graph, params.dataType, {params.maxTimeSteps, params.batchSize, size},
                                    {di, "input"});
}

Tensor createOutputTensor(Graph &graph, const RnnParams &params, unsigned numShards,
                          const DebugContext &debugContext) {
  return createOutputTensor(graph, params, 1, numShards, debugContext);
}

Tensor createOutputTensor(Graph &graph, const RnnParams &params, unsigned multiple, unsigned numShards,
                          const DebugContext &debugContext) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, multiple, numShards));
  const std::size_t size = layerSize(params, 1, "popnn::rnn::createOutputTensor");
  return rnn_detail::createSequence(graph, params.dataType,
                                    {multiple * params.maxTimeSteps, params.batchSize, size}, {di, "output"});
}

Tensor shiftRnnTensor(Graph &graph, const RnnParams &params, const Tensor &tBase, const Tensor &tSingle,
                      program::Sequence &prog, unsigned numShards, const DebugContext &debugContext) {
  aspen::ops::PopnnDebugInfo di(debugContext, DI_ARGS(params, tBase, tSingle, numShards));
  const std::string op = "popnn::rnn::shiftRnnTensor";
  aspen::ops::requireValid(tBase, op, "tBase");
  aspen::ops::requireValid(tSingle, op, "tSingle");
  if (tBase.rank() < 1 || tBase.dim(0) == 0 || tBase[0].shape() != tSingle.shape())
    throw poputil::poplibs_error(op + ": tSingle " + describe(tSingle) + " is not one step of tBase " +
                                 describe(tBase));
  Tensor first = graph.clone(tSingle, {di, "firstStep"});
  prog.add(program::Copy(tSingle, first, false, {di}));
  if (tBase.dim(0) == 1)
    return first.expand({0});
  return concat(first.expand({0}), tBase.slice(0, tBase.dim(0) - 1, 0), 0);
}

std::vector<Tensor> Rnn(Graph &graph, const RnnParams &params, bool reverse,
                        const std::vector<Tensor> &initState, const StateSequence &stateSequence,
                        const std::vector<Tensor> &inputs, const Tensor *interimIn, Tensor *interimOut,
                        const std::vector<Tensor> &outputs, const std::vector<Tensor> &created,
                        program::Sequence &prog, const LoopBodyType &loopFn, unsigned numShards,
                        OptionFlags &options, const DebugContext &debugContext) {
  aspen::ops::PopnnDebugInfo di(debugContext,
                                DI_ARGS(params, reverse, initState, inputs, outputs, numShards));
  const std::string op = "popnn::rnn::Rnn";
  bool codeReuse = false;
  aspen::ops::parseOptions(
      poplibs::OptionSpec{{"codeReuse", poplibs::OptionHandler::createWithBool(codeReuse)}}, options, op);
  rnn_detail::checkParams(params, op);
  if (!loopFn)
    throw poputil::poplibs_error(op + ": loopFn is empty");
  const std::size_t steps = params.maxTimeSteps;
  auto checkSequence = [&](const Tensor &t, const std::string &role) {
    aspen::ops::requireValid(t, op, role);
    if (t.rank() < 1 || t.dim(0) != steps)
      throw poputil::poplibs_error(op + ": " + role + " " + describe(t) + " does not have " +
                                   std::to_string(steps) + " time steps in its outermost dimension");
  };
  for (std::size_t k = 0; k < inputs.size(); ++k)
    checkSequence(inputs[k], "inputs[" + std::to_string(k) + "]");
  for (std::size_t k = 0; k < outputs.size(); ++k)
    checkSequence(outputs[k], "outputs[" + std::to_string(k) + "]");
  if (interimIn && interimIn->valid())
    checkSequence(*interimIn, "interimIn");
  if (interimOut && interimOut->valid())
    checkSequence(*interimOut, "interimOut");
  if (stateSequence.output.valid()) {
    checkSequence(stateSequence.output, "stateSequence.output");
    if (stateSequence.stateIndex >= initState.size())
      throw poputil::poplibs_error(
          op + ": stateSequence.stateIndex " + std::to_string(stateSequence.stateIndex) +
          " is not the index of one of the " + std::to_string(initState.size()) + " states");
    if (initState[stateSequence.stateIndex].valid() &&
        initState[stateSequence.stateIndex].numElements() != stateSequence.output[0].numElements())
      throw poputil::poplibs_error(op + ": stateSequence.output " + describe(stateSequence.output) +
                                   " does not hold one state " +
                                   describe(initState[stateSequence.stateIndex]) + " per time step");
  }

  // The state carried from step to step: copies of the initial state.
  std::vector<Tensor> state;
  for (std::size_t k = 0; k < initState.size(); ++k) {
    aspen::ops::requireValid(initState[k], op, "initState[" + std::to_string(k) + "]");
    state.push_back(graph.clone(initState[k], {di, "state"}));
    prog.add(program::Copy(initState[k], state.back(), false, {di}));
  }
  std::vector<Tensor> createdOut = created;
  program::Sequence initProg({}, {di, "init"});
  Tensor begin = graph.addConstant<unsigned>(UNSIGNED_INT, {1}, {0u}, {di, "begin"});
  graph.setTileMapping(begin, 0);
  const rnn_detail::StepLimits limits = rnn_detail::stepLimits(graph, params, prog, {di, "timeSteps"});

  auto loop = popops::countedLoop(
      graph, steps,
      [&](const Tensor &i) -> program::Program {
        program::Sequence outer({}, {di, "step"}), body({}, {di, "step"});
        Tensor step = i;
        if (reverse)
          step = popops::map(graph,
                             popops::expr::Sub(popops::expr::Const(unsigned(steps - 1)), popops::expr::_1),
                             {i}, outer, {di, "reverseIndex"});
        auto sliceOf = [&](const Tensor &seq) {
          return popops::dynamicSlice(graph, seq, step, {0}, {1}, body, {di, "slice"})[0];
        };
        RnnSlice slice;
        for (const Tensor &t : inputs)
          slice.inputs.push_back(sliceOf(t));
        if (interimIn && interimIn->valid())
          slice.interimIn = sliceOf(*interimIn);
        if (interimOut && interimOut->valid())
          slice.interimOut = graph.clone((*interimOut)[0], {di, "interimOut"});
        for (const Tensor &t : outputs)
          slice.outputs.push_back(graph.clone(t[0], {di, "output"}));
        TimeStepState time{begin, step, Tensor()};
        RnnBatchwiseFlags flags;
        if (limits.valid()) {
          // Whether some sequence has ended before this step, and which have not.
          using namespace popops::expr;
          time.variableSeqFlag =
              popops::map(graph, Gte(_1, _2), {step, limits.minSteps}, body, {di, "variableStep"})
                  .reshape({});
          if (params.batchVariableTimeSteps()) {
            Tensor within = rnn_detail::stepMask(graph, limits, step, body, {di, "batchSteps"});
            flags.mask = popops::cast(graph, within, params.dataType, body, {di, "mask"});
            flags.inverse =
                popops::map(graph, Cast(Not(_1), params.dataType), {within}, body, {di, "inverse"});
          }
        }
        std::vector<Tensor> stepState = state;
        body.add(loopFn(graph, time, flags, stepState, slice, createdOut, &initProg, {di, "cell"}));
        for (std::size_t k = 0; k < state.size(); ++k)
          if (stepState[k].valid() && !(stepState[k] == state[k]))
            body.add(program::Copy(stepState[k], state[k], false, {di}));
        auto update = [&](const Tensor &seq, const Tensor &s) {
          popops::dynamicUpdate(graph, seq, s.expand({0}), step, {0}, {1}, body, {di, "update"});
        };
        if (slice.interimOut.valid())
          update(*interimOut, slice.interimOut);
        for (std::size_t k = 0; k < outputs.size(); ++k)
          update(outputs[k], slice.outputs[k]);
        if (stateSequence.output.valid()) // a state {1, batch, size} fills a step {batch, size}
          update(stateSequence.output,
                 state[stateSequence.stateIndex].reshape(stateSequence.output[0].shape()));
        outer.add(rnn_detail::whileWithinSteps(graph, limits, step, body, {di}));
        return outer;
      },
      {di, "loop"});
  prog.add(initProg);
  prog.add(loop);
  return state;
}

} // namespace rnn
} // namespace popnn
