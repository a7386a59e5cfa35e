// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_EXPROPUTILS_HPP
#define POPOPS_EXPROPUTILS_HPP

#include <popops/ExprOp.hpp>
#include <poputil/VertexTemplates.hpp>

#include <string>

namespace popops {
namespace expr {

/// "ADD", "SUBTRACT", ... for a binary operator.
std::string binaryOpTypeToString(BinaryOpType op);
/// "ABSOLUTE", "NEGATE", ... for a unary operator.
std::string unaryOpTypeToString(UnaryOpType op);

} // namespace expr
} // namespace popops

namespace poputil {

/// Spells the operator enums in vertex names: `popops::expr::BinaryOpType::ADD`.
template <> struct VertexTemplateToString<popops::expr::BinaryOpType> {
  static std::string to_string(const popops::expr::BinaryOpType &op) {
    return "popops::expr::BinaryOpType::" + popops::expr::binaryOpTypeToString(op);
  }
};
template <> struct VertexTemplateToString<popops::expr::UnaryOpType> {
  static std::string to_string(const popops::expr::UnaryOpType &op) {
    return "popops::expr::UnaryOpType::" + popops::expr::unaryOpTypeToString(op);
  }
};

} // namespace poputil

#endif
