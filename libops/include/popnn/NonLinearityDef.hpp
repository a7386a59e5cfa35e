// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPNN_NONLINEARITYDEF_HPP
#define POPNN_NONLINEARITYDEF_HPP

namespace popnn {

/// The non-linearities of popnn::nonLinearity.
enum class NonLinearityType {
  /// y = 1 / (1 + e^-x)
  SIGMOID,
  /// y = max(0, min(1, 0.2 x + 0.5))
  HARD_SIGMOID,
  /// y = max(0, x)
  RELU,
  /// y = tanh(x)
  TANH,
  /// y = x * Phi(x), Phi(x) ~= 0.5 (1 + tanh(0.7978845608 (x + 0.044715 x^3)))
  GELU,
  /// y = x * Phi(x), Phi(x) = 0.5 (1 + erf(x / sqrt(2)))
  GELU_ERF,
  /// y = x * sigmoid(x)
  SWISH,
  /// Softmax over the innermost dimension; outer dimensions are independent.
  SOFTMAX,
  /// As SOFTMAX, with the row maximum subtracted first (numerically stable).
  SOFTMAX_STABLE,
  /// As SOFTMAX_STABLE, with outputs multiplied by a scaling factor (62000)
  /// that the caller learns through `nonLinearityScaling`.
  SOFTMAX_SCALED
};

} // namespace popnn

#endif
