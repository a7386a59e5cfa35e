// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPNN_LOGSOFTMAX_HPP
#define POPNN_LOGSOFTMAX_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popnn {

/// Replaces `t` by log(softmax(t)) over its innermost dimension, computed
/// stably as `x - max - log(sum(exp(x - max)))`.
///
/// Example: `popnn::logSoftmaxInPlace(graph, logits, seq);`
void logSoftmaxInPlace(poplar::Graph &graph, poplar::Tensor t, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContext = {});

/// Returns log(softmax(t)) over the innermost dimension as a new tensor.
poplar::Tensor logSoftmax(poplar::Graph &graph, poplar::Tensor t, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {});

} // namespace popnn

#endif
