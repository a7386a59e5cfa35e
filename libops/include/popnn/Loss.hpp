// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file
/// Loss functions, accuracy and arg-max/arg-min over rows.
#ifndef POPNN_LOSS_HPP
#define POPNN_LOSS_HPP

namespace popnn {

/// The loss functions of calcLoss.
enum LossType {
  /// loss = 0.5 * sum((y - onehot)^2), deltas = y - onehot
  SUM_SQUARED_LOSS,
  /// loss = -log(y[label]), deltas = y - onehot (y are softmax probabilities)
  CROSS_ENTROPY_LOSS
};

} // namespace popnn

#ifndef __POPC__
#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <utility>

namespace popnn {

/// Calculates the loss and its gradient for a batch.
///
/// \param modelOutputs {batch, classes} FLOAT or HALF (probabilities for
///                     CROSS_ENTROPY_LOSS).
/// \param expected     {batch} UNSIGNED_INT or INT labels; a label of -1
///                     (MASKED_LABEL_CODE) contributes nothing.
/// \param loss         {batch} output, type of `modelOutputs`.
/// \param deltas       {batch, classes} output: dLoss/dInput of the
///                     non-linearity, scaled by deltasScale/modelOutputScaling
///                     for cross-entropy.
/// \param deltasScale, modelOutputScaling  One-element tensors (type of
///                     `modelOutputs`) for scaled softmax outputs.
/// \returns A program computing everything; add it to your sequence.
///
/// Example: `seq.add(popnn::calcLoss(graph, probs, labels, loss, deltas, popnn::CROSS_ENTROPY_LOSS));`
poplar::program::Program calcLoss(poplar::Graph &graph, const poplar::Tensor &modelOutputs,
                                  const poplar::Tensor &expected, const poplar::Tensor &loss,
                                  const poplar::Tensor &deltas, const poplar::Tensor &deltasScale,
                                  const poplar::Tensor &modelOutputScaling, LossType lossType,
                                  const poplar::DebugContext &debugContext = {});

/// As above with both scales 1.
poplar::program::Program calcLoss(poplar::Graph &graph, const poplar::Tensor &modelOutputs,
                                  const poplar::Tensor &expected, const poplar::Tensor &loss,
                                  const poplar::Tensor &deltas, LossType lossType,
                                  const poplar::DebugContext &debugContext = {});

/// Loss, gradient and the number of correct classifications. `numCorrect`
/// (one UNSIGNED_INT element) is *added to*, as in PopLibs: zero it first for
/// a fresh count.
poplar::program::Program calcLoss(poplar::Graph &graph, const poplar::Tensor &modelOutputs,
                                  const poplar::Tensor &expected, const poplar::Tensor &loss,
                                  const poplar::Tensor &deltas, const poplar::Tensor &deltasScale,
                                  const poplar::Tensor &modelOutputScaling, const poplar::Tensor &numCorrect,
                                  LossType lossType, const poplar::DebugContext &debugContext = {});

/// As above with both scales 1.
poplar::program::Program calcLoss(poplar::Graph &graph, const poplar::Tensor &modelOutputs,
                                  const poplar::Tensor &expected, const poplar::Tensor &loss,
                                  const poplar::Tensor &deltas, const poplar::Tensor &numCorrect,
                                  LossType lossType, const poplar::DebugContext &debugContext = {});

/// Adds to `numCorrect` (one UNSIGNED_INT element) the number of rows of
/// `modelOutputs` {batch, classes} whose arg-max equals the label in `expected`.
///
/// Example: `seq.add(popnn::calcAccuracy(graph, probs, labels, numCorrect));`
poplar::program::Program calcAccuracy(poplar::Graph &graph, const poplar::Tensor &modelOutputs,
                                      const poplar::Tensor &expected, const poplar::Tensor &numCorrect,
                                      const poplar::DebugContext &debugContext = {});

/// The index of the largest element of each row of a 2-D tensor (the first
/// one on ties), as an UNSIGNED_INT tensor {rows}.
///
/// Example: `Tensor idx = popnn::argMax(graph, scores, seq);`
poplar::Tensor argMax(poplar::Graph &graph, const poplar::Tensor &input, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {});

/// The index of the smallest element of each row (the first one on ties).
poplar::Tensor argMin(poplar::Graph &graph, const poplar::Tensor &input, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {});

/// The largest element of each row and its index: {values, UNSIGNED_INT indices}.
std::pair<poplar::Tensor, poplar::Tensor> maxAndArgMax(poplar::Graph &graph, const poplar::Tensor &input,
                                                       poplar::program::Sequence &prog,
                                                       const poplar::DebugContext &debugContext = {});

/// The smallest element of each row and its index.
std::pair<poplar::Tensor, poplar::Tensor> minAndArgMin(poplar::Graph &graph, const poplar::Tensor &input,
                                                       poplar::program::Sequence &prog,
                                                       const poplar::DebugContext &debugContext = {});

} // namespace popnn

#endif // __POPC__

#endif
