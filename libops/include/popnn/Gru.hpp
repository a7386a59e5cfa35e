// Copyright (c) Aspen contributors. PopLibs-compatible public API.
// Gated recurrent unit layers (popnn::gru): a basic GRU cell run over a sequence, its backward
// pass and its weight update, built from poplin matMul and popops element-wise operations so
// they run with the codelets of popops and poplin (docs/ops-nn.md).
//
// With x_t the input and h_{t-1} the state, r the reset gate, u the update gate, c the
// candidate (W = GruWeights::inputWeights {3, inputSize, outputSize}, U = outputWeights
// {3, outputSize, outputSize}, units in GruParams::cellOrder):
//   r = recurrentActivation(x_t W_r + h_{t-1} U_r + b_r)
//   u = recurrentActivation(x_t W_u + h_{t-1} U_u + b_u)
//   c = activation(x_t W_c + (r * h_{t-1}) U_c + b_c)               (resetAfter false)
//   c = activation(x_t W_c + b_c + r * (h_{t-1} U_c + b'_c))         (resetAfter true)
//   h_t = u * h_{t-1} + (1 - u) * c
// biases are {3, outputSize}, or {3, 2, outputSize} with resetAfter (b then b').
#ifndef POPNN_GRU_HPP
#define POPNN_GRU_HPP

#include <poplar/Tensor.hpp>
#include <poplin/MatMul.hpp>
#include <popnn/GruDef.hpp>
#include <popnn/NonLinearityDef.hpp>
#include <popnn/Rnn.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace popnn {
namespace gru {

/// {reset gate, update gate, candidate}: the order of the units in the weights unless
/// GruParams::cellOrder says otherwise.
const std::vector<BasicGruCellUnit> getDefaultBasicGruCellOrder();

/// The parameters of a GRU layer.
///
/// Example: `popnn::gru::GruParams p(poplar::FLOAT, batch, steps, {inputSize, outputSize});`
struct GruParams {
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
  /// gruFwd returns every step's output {timeSteps, batch, outputSize} when true, only the
  /// last step's {batch, outputSize} when false.
  bool outputFullSequence = true;
  /// When false the backward pass computes no input gradients (pass a null inputGrad).
  bool calcInputGradients = true;
  /// The unit each slice of the weights' outermost dimension holds.
  std::vector<BasicGruCellUnit> cellOrder = getDefaultBasicGruCellOrder();
  /// Apply the reset gate after the candidate's recurrent weights and bias (see the file
  /// comment); the biases then have a second, recurrent, set.
  bool resetAfter = false;
  /// The activation of the candidate (TANH by default).
  NonLinearityType activation = NonLinearityType::TANH;
  /// The activation of the gates (SIGMOID by default).
  NonLinearityType recurrentActivation = NonLinearityType::SIGMOID;

  GruParams(poplar::Type dataType, std::size_t batchSize, std::size_t timeSteps,
            std::vector<std::size_t> layerSizes, NonLinearityType activation = NonLinearityType::TANH,
            NonLinearityType recurrentActivation = NonLinearityType::SIGMOID);
  GruParams(poplar::Type dataType, std::size_t batchSize, std::size_t maxTimeSteps,
            const poplar::Tensor &timeSteps, std::vector<std::size_t> layerSizes,
            NonLinearityType activation = NonLinearityType::TANH,
            NonLinearityType recurrentActivation = NonLinearityType::SIGMOID);
  GruParams(const GruParams &other);
};

/// Floating-point operations of the forward pass, the backward pass and the weight update
/// (a multiply-add counts two; the non-linearities are not counted).
uint64_t getBasicGruCellFwdFlops(const GruParams &params);
uint64_t getBasicGruCellBwdFlops(const GruParams &params);
uint64_t getBasicGruCellWuFlops(const GruParams &params);

/// The input sequence {timeSteps, batch, inputSize}.
///
/// Options (every GRU function takes them; an unknown key or bad value throws
/// poplar::invalid_option naming the key):
///  * `availableMemoryProportion` (0 to 1) and `partialsType` (half, float): passed to the
///    matrix multiplications (poplin::matMul).
///  * `inferenceOnly` (true, false) [=true]: the matMuls' fullyConnectedPass.
///  * `numShards` (positive integer), `rnnCodeReuse` (true, false): accepted; Aspen runs the
///    steps in one loop.
poplar::Tensor createInput(poplar::Graph &graph, const GruParams &params,
                           const poplar::DebugContext &debugContext, const poplar::OptionFlags &options = {},
                           poplin::PlanningCache *planningCache = nullptr);

/// The initial output h_0 {batch, outputSize}.
poplar::Tensor createInitialState(poplar::Graph &graph, const GruParams &params,
                                  const poplar::DebugContext &debugContext,
                                  const poplar::OptionFlags &options, poplin::PlanningCache *cache);

/// The parameters of a GRU cell (or their gradients); shapes in the file comment.
struct GruWeights {
  poplar::Tensor inputWeights;
  poplar::Tensor outputWeights;
  poplar::Tensor biases;
};

/// {inputWeights, outputWeights}.
std::pair<poplar::Tensor, poplar::Tensor> createWeightsKernel(poplar::Graph &graph, const GruParams &params,
                                                              const poplar::DebugContext &debugContext,
                                                              const poplar::OptionFlags &options = {},
                                                              poplin::PlanningCache *planningCache = nullptr);

/// The biases {3, outputSize}, or {3, 2, outputSize} with resetAfter.
poplar::Tensor createWeightsBiases(poplar::Graph &graph, const GruParams &params,
                                   const poplar::DebugContext &debugContext,
                                   const poplar::OptionFlags &options = {},
                                   poplin::PlanningCache *planningCache = nullptr);

/// Kernel and biases together.
GruWeights createWeights(poplar::Graph &graph, const GruParams &params,
                         const poplar::DebugContext &debugContext, const poplar::OptionFlags &options = {},
                         poplin::PlanningCache *planningCache = nullptr);

/// The attention scores of an AUGRU {batch, timeSteps}, laid out to be sliced by time step.
poplar::Tensor createAttention(poplar::Graph &graph, const GruParams &params,
                               const poplar::DebugContext &debugContext,
                               const poplar::OptionFlags &options = {});

/// Runs the GRU over `in` {timeSteps, batch, inputSize} from `stateInit` {batch, outputSize}.
/// Returns every step's output or the last one (GruParams::outputFullSequence). When
/// `intermediates` is not null it receives what gruBwd and gruWU need.
///
/// Example: `Tensor out = popnn::gru::gruFwd(graph, p, h0, in, w, &inter, prog);`
poplar::Tensor gruFwd(poplar::Graph &graph, const GruParams &params, const poplar::Tensor &stateInit,
                      const poplar::Tensor &in, const GruWeights &weights, poplar::Tensor *intermediates,
                      poplar::program::Sequence &fwdProg, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {},
                      poplin::PlanningCache *planningCache = nullptr);

/// gruFwd with variable time steps: sequence b of the batch runs realTimeSteps[b] steps
/// (`realTimeSteps` UNSIGNED_INT or INT {batch}, read at run time; see rnn::RnnParams). Its
/// outputs after its last step are zero. params.outputFullSequence must be true and
/// params.rnn.varTimeSteps unset.
poplar::Tensor gruFwd(poplar::Graph &graph, const GruParams &params, const poplar::Tensor &stateInit,
                      const poplar::Tensor &in, const poplar::Tensor &realTimeSteps,
                      const GruWeights &weights, poplar::Tensor *intermediates,
                      poplar::program::Sequence &fwdProg, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {},
                      poplin::PlanningCache *planningCache = nullptr);

/// The AUGRU: gruFwd with the update gate scaled by one minus the step's attention score,
/// u = (1 - a_t) * u, from `attScores` {batch, timeSteps}.
poplar::Tensor auGruFwd(poplar::Graph &graph, const GruParams &params, const poplar::Tensor &stateInit,
                        const poplar::Tensor &in, const GruWeights &weights, poplar::Tensor *intermediates,
                        const poplar::Tensor &attScores, poplar::program::Sequence &fwdProg,
                        const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {},
                        poplin::PlanningCache *planningCache = nullptr);

/// auGruFwd with variable time steps (see the realTimeSteps form of gruFwd).
poplar::Tensor auGruFwd(poplar::Graph &graph, const GruParams &params, const poplar::Tensor &stateInit,
                        const poplar::Tensor &in, const poplar::Tensor &realTimeSteps,
                        const GruWeights &weights, poplar::Tensor *intermediates,
                        const poplar::Tensor &attScores, poplar::program::Sequence &fwdProg,
                        const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {},
                        poplin::PlanningCache *planningCache = nullptr);

/// The backward pass, last step first, from the gradient of the output (`gradLayerNext`, the
/// shape of gruFwd's output). Writes the input gradients to `*inputGrad` (null exactly when
/// params.calcInputGradients is false) and, when `bwdIntermediates` is not null, what gruWU
/// needs. Returns the gradient of the initial output.
poplar::Tensor gruBwd(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                      const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediatesSeq,
                      const GruWeights &weights, const poplar::Tensor &fwdInputSeq,
                      const poplar::Tensor &fwdOutput, const poplar::Tensor &gradLayerNext,
                      poplar::Tensor *inputGrad, poplar::Tensor *bwdIntermediates,
                      const poplar::DebugContext &debugContext, const poplar::OptionFlags &options_,
                      poplin::PlanningCache *planningCache);

/// gruBwd with variable time steps: `realTimeSteps` as given to gruFwd; params.rnn.varTimeSteps
/// must be unset.
poplar::Tensor gruBwd(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                      const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediatesSeq,
                      const GruWeights &weights, const poplar::Tensor &fwdInputSeq,
                      const poplar::Tensor &realTimeSteps, const poplar::Tensor &fwdOutput,
                      const poplar::Tensor &gradLayerNext, poplar::Tensor *inputGrad,
                      poplar::Tensor *bwdIntermediates, const poplar::DebugContext &debugContext,
                      const poplar::OptionFlags &options_, poplin::PlanningCache *planningCache);

/// The AUGRU's backward pass (see gruBwd); also writes the attention scores' gradients
/// {batch, timeSteps} to `*attentionsGrad` when it is not null.
poplar::Tensor auGruBwd(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                        const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediatesSeq,
                        const GruWeights &weights, const poplar::Tensor &fwdInputSeq,
                        const poplar::Tensor &fwdOutput, const poplar::Tensor &gradLayerNext,
                        poplar::Tensor *inputGrad, poplar::Tensor *bwdIntermediates,
                        const poplar::Tensor &attentions, poplar::Tensor *attentionsGrad,
                        const poplar::DebugContext &debugContext, const poplar::OptionFlags &options_,
                        poplin::PlanningCache *planningCache);

/// auGruBwd with variable time steps (see the realTimeSteps form of gruBwd).
poplar::Tensor auGruBwd(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                        const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediatesSeq,
                        const GruWeights &weights, const poplar::Tensor &fwdInputSeq,
                        const poplar::Tensor &realTimeSteps, const poplar::Tensor &fwdOutput,
                        const poplar::Tensor &gradLayerNext, poplar::Tensor *inputGrad,
                        poplar::Tensor *bwdIntermediates, const poplar::Tensor &attentions,
                        poplar::Tensor *attentionsGrad, const poplar::DebugContext &debugContext,
                        const poplar::OptionFlags &options_, poplin::PlanningCache *planningCache);

/// The weight gradients (dLoss/dW, to be scaled and subtracted by the caller).
GruWeights gruWU(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                 const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediates,
                 const poplar::Tensor &bwdIntermediates, const GruWeights &weights,
                 const poplar::Tensor &input, const poplar::Tensor &output,
                 const poplar::DebugContext &debugContext, const poplar::OptionFlags &options_,
                 poplin::PlanningCache *planningCache);

/// gruBwd then gruWU: the weight gradients go to `weightsGrad`.
poplar::Tensor gruBwdWithWU(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                            const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediates,
                            const GruWeights &weights, const poplar::Tensor &input,
                            const poplar::Tensor &output, const poplar::Tensor &outputGrad,
                            poplar::Tensor *inputGrad, GruWeights &weightsGrad,
                            const poplar::DebugContext &debugContext, const poplar::OptionFlags &options_,
                            poplin::PlanningCache *planningCache);

/// gruBwdWithWU with variable time steps (see the realTimeSteps form of gruBwd).
poplar::Tensor gruBwdWithWU(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                            const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediates,
                            const GruWeights &weights, const poplar::Tensor &input,
                            const poplar::Tensor &realTimeSteps, const poplar::Tensor &output,
                            const poplar::Tensor &outputGrad, poplar::Tensor *inputGrad,
                            GruWeights &weightsGrad, const poplar::DebugContext &debugContext,
                            const poplar::OptionFlags &options_, poplin::PlanningCache *planningCache);

/// The AUGRU's weight gradients (the same as gruWU's, from auGruBwd's intermediates).
GruWeights auGruWU(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                   const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediates,
                   const poplar::Tensor &bwdIntermediates, const GruWeights &weights,
                   const poplar::Tensor &input, const poplar::Tensor &output,
                   const poplar::DebugContext &debugContext, const poplar::OptionFlags &options_,
                   poplin::PlanningCache *planningCache);

/// auGruBwd then auGruWU.
poplar::Tensor auGruBwdWithWU(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                              const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediates,
                              const GruWeights &weights, const poplar::Tensor &input,
                              const poplar::Tensor &output, const poplar::Tensor &outputGrad,
                              poplar::Tensor *inputGrad, GruWeights &weightsGrad,
                              const poplar::Tensor &attentions, poplar::Tensor *attentionsGrad,
                              const poplar::DebugContext &debugContext, const poplar::OptionFlags &options_,
                              poplin::PlanningCache *planningCache);

/// auGruBwdWithWU with variable time steps (see the realTimeSteps form of gruBwd).
poplar::Tensor auGruBwdWithWU(poplar::Graph &graph, const GruParams &params, poplar::program::Sequence &prog,
                              const poplar::Tensor &fwdOutputInit, const poplar::Tensor &fwdIntermediates,
                              const GruWeights &weights, const poplar::Tensor &input,
                              const poplar::Tensor &realTimeSteps, const poplar::Tensor &output,
                              const poplar::Tensor &outputGrad, poplar::Tensor *inputGrad,
                              GruWeights &weightsGrad, const poplar::Tensor &attentions,
                              poplar::Tensor *attentionsGrad, const poplar::DebugContext &debugContext,
                              const poplar::OptionFlags &options_, poplin::PlanningCache *planningCache);

} // namespace gru
} // namespace popnn

#endif
