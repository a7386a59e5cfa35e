// Copyright (c) Aspen contributors. PopLibs-compatible public API.
// Long short-term memory layers (popnn::lstm): a basic LSTM cell run over a sequence, its
// backward pass and its weight update, built from poplin matMul and popops element-wise
// operations so they run with the codelets of popops and poplin (docs/ops-nn.md).
//
// With x_t the input and h_{t-1}, c_{t-1} the state, for each unit u (forget f, input i,
// candidate g, output o) pre_u = x_t W_u + h_{t-1} U_u + b_u, then
//   f, i, o = recurrentActivation(pre), g = activation(pre_g),
//   c_t = f * c_{t-1} + i * g,   h_t = o * activation(c_t).
// W = LstmWeights::inputWeights {4, inputSize, outputSize}, U = outputWeights
// {4, outputSize, outputSize}, b = biases {4, outputSize}, units in LstmParams::cellOrder.
#ifndef POPNN_LSTM_HPP
#define POPNN_LSTM_HPP

#include <poplar/Tensor.hpp>
#include <poplin/MatMul.hpp>
#include <popnn/LstmDef.hpp>
#include <popnn/NonLinearityDef.hpp>
#include <popnn/Rnn.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace popnn {
namespace lstm {

/// {forget gate, input gate, candidate, output gate}: the order of the units in the weights
/// unless LstmParams::cellOrder says otherwise.
const std::vector<BasicLstmCellUnit> getDefaultBasicLstmCellOrder();

/// The parameters of an LSTM layer.
///
/// Example: `popnn::lstm::LstmParams p(poplar::FLOAT, batch, steps, {inputSize, outputSize});`
struct LstmParams {
  /// Type, batch, time steps and {inputSize, outputSize}.
  rnn::RnnParams rnn;

  /// \deprecated rnn.dataType.
  poplar::Type dataType;
  /// \deprecated rnn.batchSize.
  std::size_t batchSize;
  /// \deprecated rnn.maxTimeSteps.
  std::size_t timeSteps;
  /// \deprecated rnn.layerSizes.
  std::vector<std::size_t> layerSizes;
  /// lstmFwd returns every step's output {timeSteps, batch, outputSize} when true, only the
  /// last step's {batch, outputSize} when false.
  bool outputFullSequence = true;
  /// When false the input is not weighted (x_t W_u is left out).
  bool doInputWeightCalc = true;
  /// When false the backward pass computes no input gradients (pass a null inputGrad).
  bool calcInputGradients = true;
  /// With variable time steps (rnn.varTimeSteps): keep each sequence's cell state from its
  /// last step; when false it is zeroed after that step (unless the sequence is the longest).
  /// Either way a sequence's outputs after its last step are zero and its final output is the
  /// one of its last step.
  bool preserveFinalState = false;
  /// The unit each slice of the weights' outermost dimension holds.
  std::vector<BasicLstmCellUnit> cellOrder = getDefaultBasicLstmCellOrder();
  /// The activation of the candidate and of the cell state (TANH by default).
  NonLinearityType activation = NonLinearityType::TANH;
  /// The activation of the gates (SIGMOID by default).
  NonLinearityType recurrentActivation = NonLinearityType::SIGMOID;

  LstmParams(poplar::Type dataType, std::size_t batchSize, std::size_t timeSteps,
             std::vector<std::size_t> layerSizes, NonLinearityType activation = NonLinearityType::TANH,
             NonLinearityType recurrentActivation = NonLinearityType::SIGMOID);
  LstmParams(poplar::Type dataType, std::size_t batchSize, std::size_t maxTimeSteps,
             const poplar::Tensor &timeSteps, std::vector<std::size_t> layerSizes,
             NonLinearityType activation = NonLinearityType::TANH,
             NonLinearityType recurrentActivation = NonLinearityType::SIGMOID);
};

/// The state of an LSTM cell (output h and cell state c, each {batch, outputSize}), or the
/// gradients of one.
struct LstmState {
  poplar::Tensor output;
  poplar::Tensor cellState;

  /// {2, batch, outputSize}: the output then the cell state.
  poplar::Tensor getAsTensor() const;
};

/// The matrix multiplications the layer builds, as poplin::preplan takes them.
std::vector<std::pair<poplin::MatMulParams, poplar::OptionFlags>>
getMatMulPrePlanParameters(LstmParams params, poplar::OptionFlags opts);

/// Floating-point operations of the forward pass, the backward pass and the weight update
/// (a multiply-add counts two; the non-linearities are not counted).
uint64_t getBasicLstmCellFwdFlops(const LstmParams &params);
uint64_t getBasicLstmCellBwdFlops(const LstmParams &params);
uint64_t getBasicLstmCellWuFlops(const LstmParams &params);

/// The input sequence {timeSteps, batch, inputSize}, laid out for one multiplication.
///
/// Options (every LSTM function takes them; an unknown key or bad value throws
/// poplar::invalid_option naming the key):
///  * `availableMemoryProportion` (0 to 1) and `partialsType` (half, float): passed to the
///    matrix multiplications (poplin::matMul).
///  * `inferenceOnly` (true, false) [=false]: the matMuls' fullyConnectedPass.
///  * `weightAccumulatorsType` (half, float) [=the data type]: the type of the weight
///    gradients lstmWU and lstmBwdWithWU return.
///  * `preCalcWeights` (true, false), `recomputationMode` (none, cellAndTanh, full),
///    `numShards` (positive integer), `rnnCodeReuse` (true, false), `rnnStepsPerWU`
///    (positive integer), `disableWUPartialInterleaving` (true, false): accepted; Aspen keeps
///    every intermediate and runs the steps in one loop, which gives the same results.
poplar::Tensor createInput(poplar::Graph &graph, const LstmParams &params,
                           const poplar::DebugContext &debugContext, const poplar::OptionFlags &options = {},
                           poplin::PlanningCache *planningCache = nullptr);

/// The initial output h_0 {batch, outputSize}.
poplar::Tensor createInitialOutput(poplar::Graph &graph, const LstmParams &params,
                                   const poplar::DebugContext &debugContext,
                                   const poplar::OptionFlags &options = {},
                                   poplin::PlanningCache *planningCache = nullptr);

/// The initial cell state c_0 {batch, outputSize}.
poplar::Tensor createInitialCellState(poplar::Graph &graph, const LstmParams &params,
                                      const poplar::DebugContext &debugContext,
                                      const poplar::OptionFlags &options = {},
                                      poplin::PlanningCache *planningCache = nullptr);

/// Both parts of the initial state (set them, or zero them with zeroInitialState).
LstmState createInitialState(poplar::Graph &graph, const LstmParams &params,
                             const poplar::DebugContext &debugContext,
                             const poplar::OptionFlags &options = {},
                             poplin::PlanningCache *planningCache = nullptr);

/// Adds to `prog` the zeroing of both parts of `initialState`.
void zeroInitialState(poplar::Graph &graph, const LstmState &initialState, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {});

/// The parameters of an LSTM cell (or their gradients): inputWeights {4, inputSize,
/// outputSize}, outputWeights {4, outputSize, outputSize}, biases {4, outputSize}.
struct LstmWeights {
  poplar::Tensor inputWeights;
  poplar::Tensor outputWeights;
  poplar::Tensor biases;
};

/// {inputWeights, outputWeights}.
std::pair<poplar::Tensor, poplar::Tensor> createWeightsKernel(poplar::Graph &graph, const LstmParams &params,
                                                              const poplar::DebugContext &debugContext,
                                                              const poplar::OptionFlags &options = {},
                                                              poplin::PlanningCache *planningCache = nullptr);

/// The biases {4, outputSize}.
poplar::Tensor createWeightsBiases(poplar::Graph &graph, const LstmParams &params,
                                   const poplar::DebugContext &debugContext,
                                   const poplar::OptionFlags &options = {},
                                   poplin::PlanningCache *planningCache = nullptr);

/// Kernel and biases together.
LstmWeights createWeights(poplar::Graph &graph, const LstmParams &params,
                          const poplar::DebugContext &debugContext, const poplar::OptionFlags &options = {},
                          poplin::PlanningCache *planningCache = nullptr);

/// Runs the LSTM over `in` {timeSteps, batch, inputSize} from `stateInit`. Returns the output
/// (every step's, or the last step's: LstmParams::outputFullSequence) and the final cell
/// state. When `intermediates` is not null it receives what lstmBwd and lstmWU need.
///
/// Example: `auto [out, c] = popnn::lstm::lstmFwd(graph, p, init, in, w, &inter, prog);`
std::pair<poplar::Tensor, poplar::Tensor>
lstmFwd(poplar::Graph &graph, const LstmParams &params, const LstmState &stateInit, const poplar::Tensor &in,
        const LstmWeights &weights, poplar::Tensor *intermediates, poplar::program::Sequence &fwdProg,
        const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
        poplin::PlanningCache *planningCache = nullptr);

/// The backward pass, last step first. `outputGrad` has the shape of lstmFwd's output;
/// `lastStepStateGrad` (may be null: zeros; must be null with variable time steps) the
/// gradients of the final state. Writes the input
/// gradients {timeSteps, batch, inputSize} to `*inputGrad` (null exactly when
/// params.calcInputGradients is false) and, when `bwdIntermediates` is not null, what lstmWU
/// needs. Returns the gradients of the initial state.
LstmState lstmBwd(poplar::Graph &graph, const LstmParams &params, poplar::program::Sequence &prog,
                  const LstmState &fwdStateInit, const poplar::Tensor &fwdIntermediates,
                  const LstmWeights &weights, const poplar::Tensor &input, const poplar::Tensor &output,
                  const poplar::Tensor &outputGrad, const LstmState *lastStepStateGrad,
                  poplar::Tensor *inputGrad, poplar::Tensor *bwdIntermediates,
                  const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
                  poplin::PlanningCache *planningCache = nullptr);

/// \deprecated The form with only the final cell state's gradient (may be null).
LstmState lstmBwd(poplar::Graph &graph, const LstmParams &params, poplar::program::Sequence &prog,
                  const LstmState &fwdStateInit, const poplar::Tensor &fwdIntermediates,
                  const LstmWeights &weights, const poplar::Tensor &input, const poplar::Tensor &output,
                  const poplar::Tensor &outputGrad, const poplar::Tensor *lastCellStateGrad,
                  poplar::Tensor *inputGrad, poplar::Tensor *bwdIntermediates,
                  const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
                  poplin::PlanningCache *planningCache = nullptr);

/// The weight gradients (dLoss/dW, to be scaled and subtracted by the caller) from the
/// intermediates of lstmFwd and lstmBwd.
LstmWeights lstmWU(poplar::Graph &graph, const LstmParams &params, poplar::program::Sequence &prog,
                   const LstmState &fwdStateInit, const poplar::Tensor &fwdIntermediates,
                   const poplar::Tensor &bwdIntermediates, const LstmWeights &weights,
                   const poplar::Tensor &input, const poplar::Tensor &output,
                   const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
                   poplin::PlanningCache *planningCache = nullptr);

/// lstmBwd then lstmWU: the weight gradients go to `weightsGrad`.
LstmState lstmBwdWithWU(poplar::Graph &graph, const LstmParams &params, poplar::program::Sequence &prog,
                        const LstmState &fwdStateInit, const poplar::Tensor &fwdIntermediates,
                        const LstmWeights &weights, const poplar::Tensor &input, const poplar::Tensor &output,
                        const poplar::Tensor &outputGrad, const LstmState *lastStepStateGrad,
                        poplar::Tensor *inputGrad, LstmWeights &weightsGrad,
                        const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {},
                        poplin::PlanningCache *planningCache = nullptr);

/// \deprecated The form with only the final cell state's gradient (may be null).
LstmState lstmBwdWithWU(poplar::Graph &graph, const LstmParams &params, poplar::program::Sequence &prog,
                        const LstmState &fwdStateInit, const poplar::Tensor &fwdIntermediates,
                        const LstmWeights &weights, const poplar::Tensor &input, const poplar::Tensor &output,
                        const poplar::Tensor &outputGrad, const poplar::Tensor *lastCellStateGrad,
                        poplar::Tensor *inputGrad, LstmWeights &weightsGrad,
                        const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {},
                        poplin::PlanningCache *planningCache = nullptr);

} // namespace lstm
} // namespace popnn

#endif
