// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file
/// Activation functions (ReLU, sigmoid, tanh, GELU, swish, softmax) and their gradients.
#ifndef POPNN_NONLINEARITY_HPP
#define POPNN_NONLINEARITY_HPP

#include <popnn/NonLinearityDef.hpp>

#ifndef __POPC__
#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

namespace popnn {

/// Applies `nonLinearityType` to `t` in place. FLOAT or HALF; softmax types
/// work over the innermost dimension.
///
/// Example: `popnn::nonLinearityInPlace(graph, popnn::NonLinearityType::RELU, x, seq);`
void nonLinearityInPlace(poplar::Graph &graph, NonLinearityType nonLinearityType, poplar::Tensor t,
                         poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// Adds the vertices applying `nonLinearityType` to `t` in place to `cs`.
/// Softmax types need several compute sets and are not accepted here.
void nonLinearityInPlace(poplar::Graph &graph, NonLinearityType nonLinearityType, poplar::Tensor t,
                         poplar::ComputeSet &cs, const poplar::DebugContext &debugContext = {});

/// In place, also reporting the factor the outputs are scaled by
/// (62000 for SOFTMAX_SCALED, 1 otherwise).
void nonLinearityInPlace(poplar::Graph &graph, NonLinearityType nonLinearityType, poplar::Tensor t,
                         float &nonLinearityScaling, poplar::program::Sequence &prog,
                         const poplar::DebugContext &debugContext = {});

/// Compute-set form reporting the output scaling (always 1: softmax types are
/// not accepted here).
void nonLinearityInPlace(poplar::Graph &graph, NonLinearityType nonLinearityType, poplar::Tensor t,
                         float &nonLinearityScaling, poplar::ComputeSet &cs,
                         const poplar::DebugContext &debugContext = {});

/// Applies `nonLinearityType` to `t` and returns the result as a new tensor
/// laid out like `t`.
///
/// Example: `Tensor p = popnn::nonLinearity(graph, popnn::NonLinearityType::SOFTMAX, logits, seq);`
poplar::Tensor nonLinearity(poplar::Graph &graph, NonLinearityType nonLinearityType, poplar::Tensor t,
                            poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// As above, also reporting the factor the outputs are scaled by.
poplar::Tensor nonLinearity(poplar::Graph &graph, NonLinearityType nonLinearityType, poplar::Tensor t,
                            float &nonLinearityScaling, poplar::program::Sequence &prog,
                            const poplar::DebugContext &debugContext = {});

#define POPNN_DEF_NONLINEARITY(fn, nlType)                                                                   \
  inline void fn##InPlace(poplar::Graph &graph, poplar::Tensor t, poplar::program::Sequence &prog,           \
                          const poplar::DebugContext &debugContext = {}) {                                   \
    nonLinearityInPlace(graph, nlType, t, prog, debugContext);                                               \
  }                                                                                                          \
  inline void fn##InPlace(poplar::Graph &graph, poplar::Tensor t, float &nonLinearityScaling,                \
                          poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {}) {  \
    nonLinearityInPlace(graph, nlType, t, nonLinearityScaling, prog, debugContext);                          \
  }                                                                                                          \
  inline poplar::Tensor fn(poplar::Graph &graph, poplar::Tensor t, poplar::program::Sequence &prog,          \
                           const poplar::DebugContext &debugContext = {}) {                                  \
    return nonLinearity(graph, nlType, t, prog, debugContext);                                               \
  }                                                                                                          \
  inline poplar::Tensor fn(poplar::Graph &graph, poplar::Tensor t, float &nonLinearityScaling,               \
                           poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {}) { \
    return nonLinearity(graph, nlType, t, nonLinearityScaling, prog, debugContext);                          \
  }

POPNN_DEF_NONLINEARITY(sigmoid, NonLinearityType::SIGMOID)
POPNN_DEF_NONLINEARITY(hardSigmoid, NonLinearityType::HARD_SIGMOID)
POPNN_DEF_NONLINEARITY(relu, NonLinearityType::RELU)
POPNN_DEF_NONLINEARITY(tanh, NonLinearityType::TANH)
POPNN_DEF_NONLINEARITY(gelu, NonLinearityType::GELU)
POPNN_DEF_NONLINEARITY(geluErf, NonLinearityType::GELU_ERF)
POPNN_DEF_NONLINEARITY(swish, NonLinearityType::SWISH)
POPNN_DEF_NONLINEARITY(softmax, NonLinearityType::SOFTMAX)
POPNN_DEF_NONLINEARITY(softmaxStable, NonLinearityType::SOFTMAX_STABLE)
POPNN_DEF_NONLINEARITY(scaledSoftmaxStable, NonLinearityType::SOFTMAX_SCALED)
#undef POPNN_DEF_NONLINEARITY

/// The gradient at the input of a non-linearity from its output activations
/// `act` and the gradient at its output `outGradient` (same shape and type).
/// For GELU, GELU_ERF and SWISH, `act` is the non-linearity's *input*.
/// Softmax types are differentiated along the innermost dimension.
///
/// Example: `Tensor dx = popnn::nonLinearityInputGradient(graph, NonLinearityType::RELU, y, dy, seq);`
poplar::Tensor nonLinearityInputGradient(poplar::Graph &graph, NonLinearityType nonLinearityType,
                                         poplar::Tensor act, poplar::Tensor outGradient,
                                         poplar::program::Sequence &prog,
                                         const poplar::DebugContext &debugContext = {});

/// Compute-set form of nonLinearityInputGradient (element-wise types only).
poplar::Tensor nonLinearityInputGradient(poplar::Graph &graph, NonLinearityType nonLinearityType,
                                         poplar::Tensor act, poplar::Tensor outGradient,
                                         poplar::ComputeSet &cs,
                                         const poplar::DebugContext &debugContext = {});

} // namespace popnn

#endif // __POPC__

#endif
