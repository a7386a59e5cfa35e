// Copyright (c) Aspen contributors.
// The names of popops' operator enumerations.
#include "Internal.hpp"

namespace aspen::ops {

std::string toString(popops::expr::UnaryOpType op) {
  using U = popops::expr::UnaryOpType;
  switch (op) {
  case U::ABSOLUTE:
    return "ABSOLUTE";
  case U::ASIN:
    return "ASIN";
  case U::BITWISE_NOT:
    return "BITWISE_NOT";
  case U::CBRT:
    return "CBRT";
  case U::CEIL:
    return "CEIL";
  case U::COS:
    return "COS";
  case U::COUNT_LEADING_ZEROS:
    return "COUNT_LEADING_ZEROS";
  case U::ERF:
    return "ERF";
  case U::EXPONENT:
    return "EXPONENT";
  case U::EXPONENT_MINUS_ONE:
    return "EXPONENT_MINUS_ONE";
  case U::EXPONENT2:
    return "EXPONENT2";
  case U::FLOOR:
    return "FLOOR";
  case U::GELU_ERF:
    return "GELU_ERF";
  case U::INVERSE:
    return "INVERSE";
  case U::IS_FINITE:
    return "IS_FINITE";
  case U::IS_INF:
    return "IS_INF";
  case U::IS_NAN:
    return "IS_NAN";
  case U::LOGARITHM:
    return "LOGARITHM";
  case U::LOGARITHM_ONE_PLUS:
    return "LOGARITHM_ONE_PLUS";
  case U::LOGICAL_NOT:
    return "LOGICAL_NOT";
  case U::NEARBY_INT:
    return "NEARBY_INT";
  case U::NEGATE:
    return "NEGATE";
  case U::POPCOUNT:
    return "POPCOUNT";
  case U::RELU:
    return "RELU";
  case U::ROUND:
    return "ROUND";
  case U::SIGNUM:
    return "SIGNUM";
  case U::SIN:
    return "SIN";
  case U::TAN:
    return "TAN";
  case U::TANH:
    return "TANH";
  case U::TRUNC:
    return "TRUNC";
  case U::SQRT:
    return "SQRT";
  case U::SQUARE:
    return "SQUARE";
  case U::SIGMOID:
    return "SIGMOID";
  case U::RSQRT:
    return "RSQRT";
  }
  return "UNKNOWN";
}

std::string toString(popops::expr::BinaryOpType op) {
  using B = popops::expr::BinaryOpType;
  switch (op) {
  case B::ADD:
    return "ADD";
  case B::ATAN2:
    return "ATAN2";
  case B::BITWISE_AND:
    return "BITWISE_AND";
  case B::BITWISE_OR:
    return "BITWISE_OR";
  case B::BITWISE_XOR:
    return "BITWISE_XOR";
  case B::BITWISE_XNOR:
    return "BITWISE_XNOR";
  case B::DIVIDE:
    return "DIVIDE";
  case B::EQUAL:
    return "EQUAL";
  case B::GREATER_THAN_EQUAL:
    return "GREATER_THAN_EQUAL";
  case B::GREATER_THAN:
    return "GREATER_THAN";
  case B::INV_STD_DEV_TO_VARIANCE:
    return "INV_STD_DEV_TO_VARIANCE";
  case B::LESS_THAN_EQUAL:
    return "LESS_THAN_EQUAL";
  case B::LOGICAL_AND:
    return "LOGICAL_AND";
  case B::LOGICAL_OR:
    return "LOGICAL_OR";
  case B::LESS_THAN:
    return "LESS_THAN";
  case B::MAXIMUM:
    return "MAXIMUM";
  case B::MINIMUM:
    return "MINIMUM";
  case B::MULTIPLY:
    return "MULTIPLY";
  case B::NOT_EQUAL:
    return "NOT_EQUAL";
  case B::POWER:
    return "POWER";
  case B::REMAINDER:
    return "REMAINDER";
  case B::SHIFT_LEFT:
    return "SHIFT_LEFT";
  case B::SHIFT_RIGHT:
    return "SHIFT_RIGHT";
  case B::SHIFT_RIGHT_SIGN_EXTEND:
    return "SHIFT_RIGHT_SIGN_EXTEND";
  case B::SUBTRACT:
    return "SUBTRACT";
  case B::VARIANCE_TO_INV_STD_DEV:
    return "VARIANCE_TO_INV_STD_DEV";
  }
  return "UNKNOWN";
}

std::string toString(popops::Operation op) {
  using O = popops::Operation;
  switch (op) {
  case O::ADD:
    return "ADD";
  case O::MUL:
    return "MUL";
  case O::MIN:
    return "MIN";
  case O::MAX:
    return "MAX";
  case O::LOGICAL_AND:
    return "LOGICAL_AND";
  case O::LOGICAL_OR:
    return "LOGICAL_OR";
  case O::SQUARE_ADD:
    return "SQUARE_ADD";
  case O::LOG_ADD:
    return "LOG_ADD";
  }
  return "UNKNOWN";
}

} // namespace aspen::ops
