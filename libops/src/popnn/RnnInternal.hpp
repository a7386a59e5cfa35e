// Copyright (c) Aspen contributors.
// What popnn's recurrent layers (Lstm.cpp, Gru.cpp) share inside: their options, their
// activations as popops expressions, argument checks and unit reordering. Private to popnn.
#pragma once

#include <popnn/NonLinearityDef.hpp>
#include <popnn/Rnn.hpp>
#include <popops/Expr.hpp>
#include <poputil/DebugInfo.hpp>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popnn::rnn::RnnParams &p);
template <> poplar::ProfileValue toProfileValue(const popnn::NonLinearityType &t);
} // namespace poputil

namespace popnn::rnn_detail {

/// The debug information of an LSTM's or GRU's parameters: what the two share, to which the
/// caller adds its own fields.
template <class Params> poplar::ProfileValue::Map layerProfile(const Params &p) {
  using poputil::toProfileValue;
  poplar::ProfileValue::Map v;
  v.insert({"rnn", toProfileValue(p.rnn)});
  v.insert({"outputFullSequence", toProfileValue(p.outputFullSequence)});
  v.insert({"calcInputGradients", toProfileValue(p.calcInputGradients)});
  v.insert({"cellOrder", toProfileValue(std::vector<unsigned>(p.cellOrder.begin(), p.cellOrder.end()))});
  v.insert({"activation", toProfileValue(p.activation)});
  v.insert({"recurrentActivation", toProfileValue(p.recurrentActivation)});
  return v;
}

/// The debug information of a layer's weights (LstmWeights, GruWeights).
template <class Weights> poplar::ProfileValue weightsProfile(const Weights &w) {
  using poputil::toProfileValue;
  poplar::ProfileValue::Map v;
  v.insert({"inputWeights", toProfileValue(w.inputWeights)});
  v.insert({"outputWeights", toProfileValue(w.outputWeights)});
  v.insert({"biases", toProfileValue(w.biases)});
  return v;
}

/// A state tensor {batch, size} of `type` mapped linearly over the tiles.
poplar::Tensor createState(poplar::Graph &graph, const poplar::Type &type, std::size_t batch,
                           std::size_t size, const poplar::DebugNameAndId &di);

/// The options of an LSTM or GRU (docs/ops-nn.md, "Recurrent layers").
struct RecurrentOptions {
  double availableMemoryProportion = -1; // < 0: the matMul default
  poplar::Type partialsType = poplar::FLOAT;
  bool inferenceOnly = false;
  poplar::Type accumulatorsType; // the weight gradients' type
};

/// Parses `options` for an LSTM (`lstm`) or GRU; an unknown key or bad value throws
/// poplar::invalid_option starting with `op`.
RecurrentOptions parseOptions(const poplar::OptionFlags &options, const poplar::Type &dataType, bool lstm,
                              const std::string &op);

/// The options of the layer's matrix multiplications for the pass `pass`.
poplar::OptionFlags matMulOptions(const RecurrentOptions &opts, const char *pass);

/// Throws poplibs_error unless the layer's activation `t` (named by `what`) has a gradient
/// that Aspen computes from its output (SIGMOID, HARD_SIGMOID, RELU, TANH).
void checkActivation(NonLinearityType t, const std::string &op, const char *what);

/// `t(x)` and, from y = t(x), dy/dx.
popops::expr::Any activation(NonLinearityType t, const popops::expr::Expr &x);
popops::expr::Any activationGradient(NonLinearityType t, const popops::expr::Expr &y);

/// Checks the layer's parameters: FLOAT or HALF, non-zero batch, time steps and sizes, two
/// layer sizes, and varTimeSteps when set: INT or UNSIGNED_INT of shape {1} or {batchSize}.
void checkParams(const rnn::RnnParams &p, const std::string &op);

/// Variable time steps (RnnParams::varTimeSteps) as the layers run them: sequence b runs steps
/// 0 .. steps[b]-1 (steps[b] = varTimeSteps[b] clamped to [0, maxTimeSteps]); the loop stops
/// after the longest sequence's last step.
struct StepLimits {
  poplar::Tensor steps;    ///< UNSIGNED_INT {batchSize} (a {1} varTimeSteps broadcast)
  poplar::Tensor maxSteps; ///< UNSIGNED_INT {1}: the most over the batch
  poplar::Tensor minSteps; ///< UNSIGNED_INT {1}: the fewest over the batch
  bool valid() const { return steps.valid(); }
};

/// The limits of `p` (invalid ones when p has no varTimeSteps), computed by `prog`.
StepLimits stepLimits(poplar::Graph &graph, const rnn::RnnParams &p, poplar::program::Sequence &prog,
                      const poplar::DebugNameAndId &di);

/// BOOL {batchSize}: whether step `t` (UNSIGNED_INT {1}) is one of each sequence's steps.
poplar::Tensor stepMask(poplar::Graph &graph, const StepLimits &limits, const poplar::Tensor &t,
                        poplar::program::Sequence &prog, const poplar::DebugNameAndId &di);

/// `body` when `limits` is invalid, else a program that runs `body` only while `t` is below
/// limits.maxSteps (the steps after the longest sequence are skipped).
poplar::program::Program whileWithinSteps(poplar::Graph &graph, const StepLimits &limits,
                                          const poplar::Tensor &t, poplar::program::Sequence body,
                                          const poplar::DebugNameAndId &di);

/// `m` (BOOL {B}) broadcast to `shape` ({..., B, H}) along the other dimensions.
poplar::Tensor broadcastMask(const poplar::Tensor &m, const std::vector<std::size_t> &shape);

/// Throws poplibs_error naming `role` unless `t` is valid with shape `shape` and type `type`.
void checkTensor(const poplar::Tensor &t, const std::vector<std::size_t> &shape, const poplar::Type &type,
                 const std::string &op, const std::string &role);

/// Checks that `order` lists each of `numUnits` units once; returns, for each unit, its index
/// in the outermost dimension of the weights.
std::vector<unsigned> unitPositions(const std::vector<unsigned> &order, unsigned numUnits,
                                    const std::string &op);

/// `t`'s outermost dimension rearranged: result[u] = t[pos[u]].
poplar::Tensor gather0(const poplar::Tensor &t, const std::vector<unsigned> &pos);
/// The inverse: result[pos[u]] = t[u].
poplar::Tensor scatter0(const poplar::Tensor &t, const std::vector<unsigned> &pos);

/// A tensor {steps, rest...} laid out to be sliced one step at a time.
poplar::Tensor createSequence(poplar::Graph &graph, const poplar::Type &type,
                              const std::vector<std::size_t> &shape, const poplar::DebugContext &dc);

} // namespace popnn::rnn_detail
