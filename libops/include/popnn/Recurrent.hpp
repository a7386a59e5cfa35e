// Copyright (c) Aspen contributors. PopLibs-compatible public API.
// PopLibs' older vanilla recurrent layer (popnn::rnn in popnn/Recurrent.hpp): per step
//   y_s = nl(x_s Wff + y_{s-1} Wfb + b),
// with the input weighting x_s Wff done for many steps at once (forwardWeightInput) and the
// recurrence a step at a time (forwardIterate), the backward pass one step at a time
// (backwardGradientStep, paramDeltaUpdate) or whole sequences (rnnFwdSequence,
// rnnBwdSequence). Tensors: inputs {steps, batch, inputSize}; Wff {inputSize, outputSize};
// Wfb {outputSize, outputSize}; b {outputSize}; states {batch, outputSize}. Built from poplin
// matMul and popops operations (popops and poplin codelets suffice); `nl` may be SIGMOID,
// HARD_SIGMOID, RELU or TANH (docs/ops-nn.md, "Recurrent layers").
#ifndef POPNN_RECURRENT_HPP
#define POPNN_RECURRENT_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <poplin/MatMul.hpp>
#include <popnn/NonLinearity.hpp>

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace poplin {
class PlanningCache;
} // namespace poplin

namespace popnn {
namespace rnn {

/// The matrix multiplications of the layer as poplin::preplan takes them: the input weighting
/// (when `hasFeedforwardWeights`) and the feedback product, each with its backward and
/// weight-update products unless `inferenceOnly`.
std::vector<std::pair<poplin::MatMulParams, poplar::OptionFlags>>
getMatMulPrePlanParameters(std::size_t numSteps, std::size_t batchSize, std::size_t inputSize,
                           std::size_t outputSize, const poplar::Type &dType,
                           const poplar::Type &partialsType = poplar::FLOAT, bool inferenceOnly = false,
                           bool hasFeedforwardWeights = true);

/// Floating-point operations (multiplications and additions counted apart) of the forward
/// pass (with the input weighting when `weightInput`), the backward pass (with the input
/// gradients when `calcInputGrad`) and the weight update.
uint64_t getFwdFlops(unsigned sequenceSize, unsigned batchSize, unsigned inputSize, unsigned outputSize,
                     bool weightInput = true);
uint64_t getBwdFlops(unsigned sequenceSize, unsigned batchSize, unsigned inputSize, unsigned outputSize,
                     bool calcInputGrad = true);
uint64_t getWuFlops(unsigned sequenceSize, unsigned batchSize, unsigned inputSize, unsigned outputSize);

/// An input {numSteps, batchSize, inputSize}, each step laid out as the left operand of the
/// input weighting.
poplar::Tensor createInput(poplar::Graph &graph, unsigned numSteps, unsigned batchSize, unsigned inputSize,
                           unsigned outputSize, const poplar::Type &dType,
                           const poplar::Type &partialsType = poplar::FLOAT, bool inferenceOnly = false,
                           const poplar::DebugContext &debugContext = {},
                           poplin::PlanningCache *planningCache = nullptr);

/// A forward state {batchSize, outputSize} (the previous output), zeroed by `prog` when
/// `initState`.
poplar::Tensor createFwdState(poplar::Graph &graph, const poplar::Type &dType, unsigned batchSize,
                              unsigned outputSize, poplar::program::Sequence &prog, bool initState,
                              bool inferenceOnly, const poplar::DebugContext &debugContext = {},
                              poplin::PlanningCache *planningCache = nullptr);

/// The output held in a forward state: the state itself.
poplar::Tensor getOutputFromFwdState(const poplar::Tensor &fwdState);

/// The input weights Wff {inputSize, outputSize}.
poplar::Tensor createWeightsInput(poplar::Graph &graph, unsigned sequenceSize, unsigned batchSize,
                                  unsigned inputSize, unsigned outputSize, const poplar::Type &dType,
                                  const poplar::Type &partialsType = poplar::FLOAT,
                                  bool inferenceOnly = false, const poplar::DebugContext &debugContext = {},
                                  poplin::PlanningCache *planningCache = nullptr);

/// The feedback weights Wfb {outputSize, outputSize}.
poplar::Tensor createWeightsFeedback(poplar::Graph &graph, unsigned batchSize, unsigned outputSize,
                                     const poplar::Type &dType,
                                     const poplar::Type &partialsType = poplar::FLOAT,
                                     bool inferenceOnly = false,
                                     const poplar::DebugContext &debugContext = {},
                                     poplin::PlanningCache *planningCache = nullptr);

/// x_s Wff for every step: `actIn` {steps, batch, inputSize} by `weights` {inputSize,
/// outputSize}, one multiplication; returns {steps, batch, outputSize}.
poplar::Tensor forwardWeightInput(poplar::Graph &graph, const poplar::Tensor &actIn,
                                  const poplar::Tensor &weights, poplar::program::Sequence &prog,
                                  const poplar::Type &partialsType = poplar::FLOAT,
                                  bool inferenceOnly = false, const poplar::DebugContext &debugContext = {},
                                  poplin::PlanningCache *planningCache = nullptr);

/// The recurrence over the steps of `feedFwdIn` {steps, batch, outputSize} (forwardWeightInput's
/// result) from `initState` {batch, outputSize}; returns every step's output
/// {steps, batch, outputSize}.
poplar::Tensor forwardIterate(poplar::Graph &graph, const poplar::Tensor &feedFwdIn,
                              const poplar::Tensor &initState, const poplar::Tensor &feedbackWeights,
                              const poplar::Tensor &biases, poplar::program::Sequence &prog,
                              popnn::NonLinearityType nonLinearityType,
                              const poplar::Type &partialsType = poplar::FLOAT, bool inferenceOnly = false,
                              const poplar::DebugContext &debugContext = {},
                              poplin::PlanningCache *planningCache = nullptr);

/// The backward state {batchSize, outputSize} (the gradient at the step's pre-activation sum),
/// zeroed by `prog`.
poplar::Tensor createBwdState(poplar::Graph &graph, const poplar::Type &dType, unsigned batchSize,
                              unsigned outputSize, poplar::program::Sequence &prog,
                              const poplar::DebugContext &debugContext = {},
                              poplin::PlanningCache *planningCache = nullptr);

/// One step of the backward pass: from the loss gradient at the step's output `nextLayerGrad`
/// {batch, outputSize}, the next step's backward state `bwdState` and the step's output
/// `actOut`, the new backward state d = nl'(actOut) * (nextLayerGrad + bwdState Wfb^T).
/// Returns {the gradient at the step's input d Wff^T {batch, inputSize}, d}.
std::pair<poplar::Tensor, poplar::Tensor> backwardGradientStep(
    poplar::Graph &graph, const poplar::Tensor &nextLayerGrad, const poplar::Tensor &bwdState,
    const poplar::Tensor &actOut, const poplar::Tensor &weightsInput, const poplar::Tensor &weightsFeedback,
    poplar::program::Sequence &prog, popnn::NonLinearityType nonLinearityType,
    const poplar::Type &partialsType = poplar::FLOAT, const poplar::DebugContext &debugContext = {},
    poplin::PlanningCache *planningCache = nullptr);

/// The same without the input gradient: returns the new backward state.
poplar::Tensor backwardGradientStep(poplar::Graph &graph, const poplar::Tensor &nextLayerGrad,
                                    const poplar::Tensor &bwdState, const poplar::Tensor &actOut,
                                    const poplar::Tensor &weightsFeedback, poplar::program::Sequence &prog,
                                    popnn::NonLinearityType nonLinearityType,
                                    const poplar::Type &partialsType = poplar::FLOAT,
                                    const poplar::DebugContext &debugContext = {},
                                    poplin::PlanningCache *planningCache = nullptr);

/// Adds one step's parameter gradients to the accumulators: actIn^T d to
/// `weightsInputDeltasAcc`, prevOut^T d to `weightsFeedbackDeltasAcc` and d summed over the
/// batch to `biasDeltasAcc` (d = `bwdState`; the caller zeroes the accumulators first).
void paramDeltaUpdate(poplar::Graph &graph, const poplar::Tensor &bwdState, const poplar::Tensor &actIn,
                      const poplar::Tensor &prevOut, poplar::Tensor &weightsInputDeltasAcc,
                      poplar::Tensor &weightsFeedbackDeltasAcc, poplar::Tensor &biasDeltasAcc,
                      poplar::program::Sequence &prog, const poplar::Type &partialsType = poplar::FLOAT,
                      const poplar::DebugContext &debugContext = {},
                      poplin::PlanningCache *planningCache = nullptr);

/// The forward pass over a sequence: `prevLayerActs` {steps, batch, inputSize} weighted by
/// `feedFwdWeights` (or `*weightedIn` {steps, batch, outputSize} when not null), then the
/// recurrence from `fwdStateInit`. Returns the forward state of every step
/// {steps, batch, outputSize} (the outputs).
poplar::Tensor rnnFwdSequence(poplar::Graph &graph, poplar::program::Sequence &prog,
                              const poplar::Tensor &fwdStateInit, const poplar::Tensor *weightedIn,
                              const poplar::Tensor &biases, const poplar::Tensor &feedFwdWeights,
                              const poplar::Tensor &feedbackWeights, const poplar::Tensor &prevLayerActs,
                              const popnn::NonLinearityType &nonLinearityType,
                              const poplar::Type &partialsType, bool inferenceOnly,
                              const poplar::DebugContext &debugContext = {},
                              poplin::PlanningCache *planningCache = nullptr);

/// The backward pass over a sequence, last step first, from `outGradient`
/// {batch, steps, outputSize} (batch outermost, as PopLibs slices it), the forward states
/// `fwdStateInit` and `fwdState` (rnnFwdSequence's result) and the layer's input `actIn`
/// {steps, batch, inputSize}. Returns {the input gradients {steps, batch, inputSize}, the
/// gradients of Wff, Wfb and b}. With `ignoreInputGradientCalc` the first is
/// {steps, batch, outputSize} of zeros; without `doWU` the other three are invalid tensors.
std::tuple<poplar::Tensor, poplar::Tensor, poplar::Tensor, poplar::Tensor>
rnnBwdSequence(poplar::Graph &graph, bool doWU, bool ignoreInputGradientCalc, poplar::program::Sequence &prog,
               const poplar::Tensor &fwdStateInit, const poplar::Tensor &fwdState,
               const poplar::Tensor &biases, const poplar::Tensor &feedFwdWeights,
               const poplar::Tensor &feedbackWeights, const poplar::Tensor &outGradient,
               const poplar::Tensor &actIn, const popnn::NonLinearityType &nonLinearityType,
               const poplar::Type &partialsType, const poplar::DebugContext &debugContext = {},
               poplin::PlanningCache *planningCache = nullptr);

} // namespace rnn
} // namespace popnn

#endif
