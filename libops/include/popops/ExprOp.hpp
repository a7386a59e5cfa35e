// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_EXPROP_HPP
#define POPOPS_EXPROP_HPP

namespace popops {
namespace expr {

/// Operators of ternary expression nodes.
enum class TernaryOpType { CLAMP, SELECT };

/// Operators of binary expression nodes.
enum class BinaryOpType {
  ADD,
  ATAN2,
  BITWISE_AND,
  BITWISE_OR,
  BITWISE_XOR,
  BITWISE_XNOR,
  DIVIDE,
  EQUAL,
  GREATER_THAN_EQUAL,
  GREATER_THAN,
  INV_STD_DEV_TO_VARIANCE,
  LESS_THAN_EQUAL,
  LOGICAL_AND,
  LOGICAL_OR,
  LESS_THAN,
  MAXIMUM,
  MINIMUM,
  MULTIPLY,
  NOT_EQUAL,
  POWER,
  REMAINDER,
  SHIFT_LEFT,
  SHIFT_RIGHT,
  SHIFT_RIGHT_SIGN_EXTEND,
  SUBTRACT,
  VARIANCE_TO_INV_STD_DEV
};

/// Operators of unary expression nodes.
enum class UnaryOpType {
  ABSOLUTE,
  ASIN,
  BITWISE_NOT,
  CBRT,
  CEIL,
  COS,
  COUNT_LEADING_ZEROS,
  ERF,
  EXPONENT,
  EXPONENT_MINUS_ONE,
  EXPONENT2,
  FLOOR,
  GELU_ERF,
  INVERSE,
  IS_FINITE,
  IS_INF,
  IS_NAN,
  LOGARITHM,
  LOGARITHM_ONE_PLUS,
  LOGICAL_NOT,
  NEARBY_INT,
  NEGATE,
  POPCOUNT,
  RELU,
  ROUND,
  SIGNUM,
  SIN,
  TAN,
  TANH,
  TRUNC,
  SQRT,
  SQUARE,
  SIGMOID,
  RSQRT
};

} // namespace expr
} // namespace popops

#endif
