// Copyright (c) Aspen contributors.
// Turns a popops::expr tree into the C++ source of one MultiVertex that evaluates the
// whole expression per element (a fused map), named popops::map::Expr_<hash>.
#pragma once

#include "popops/Expr.hpp"

#include <poplar/Target.hpp>
#include <poplar/Type.hpp>

#include <string>
#include <vector>

namespace aspen::ops {

/// How the generated vertex sees each input: absent (placeholder unused), a vector
/// (one element per output element), a scalar (one element for all), or output k itself
/// (in place: input k is the tensor output k writes).
enum class OperandKind { Unused, Vector, Scalar, Output };

struct GeneratedCodelet {
  std::string vertexName;  // "popops::map::Expr_0123456789abcdef"
  std::string source;      // a complete codelet translation unit
  double cyclesPerElement; // estimated thread cycles per element (for the cycle estimate)
  unsigned flopsPerElement;
};

/// Generates the vertex evaluating each of `exprs` per element over inputs of `inputTypes`
/// used as `kinds` (`kinds[k] == Output` when output k is input k+1, i.e. in place), writing
/// outputs of `outTypes`. All inputs are read before any output is written. The fields are
/// `in<k>` for the inputs and `out` (one expression) or `out1`, `out2`, ... (several).
/// The types must already be checked by the caller (inferExprType).
GeneratedCodelet generateMapCodelet(const poplar::Target &target,
                                    const std::vector<const popops::expr::Expr *> &exprs,
                                    const std::vector<poplar::Type> &inputTypes,
                                    const std::vector<OperandKind> &kinds,
                                    const std::vector<poplar::Type> &outTypes);

/// The field of output `index` of a generated vertex with `numOutputs` outputs.
std::string outputField(std::size_t index, std::size_t numOutputs);

/// The element type of `expr` over inputs of `inputTypes`; throws poplibs_error naming
/// `opName` for unknown placeholders, mismatched operand types and unsupported types.
/// `hint` is the type a constant takes when nothing else fixes it (may be invalid).
poplar::Type inferExprType(const popops::expr::Expr &expr, const std::vector<poplar::Type> &inputTypes,
                           const poplar::Type &hint, const std::string &opName);

/// True for comparison and logical operators (bool result).
bool isPredicate(popops::expr::BinaryOpType op);
bool isPredicate(popops::expr::UnaryOpType op);

/// Thread cycles per element of one operator (rough IPU costs) and its flop count.
double opCycles(popops::expr::UnaryOpType op, const poplar::Type &type);
double opCycles(popops::expr::BinaryOpType op, const poplar::Type &type);
unsigned opFlops(popops::expr::UnaryOpType op);
unsigned opFlops(popops::expr::BinaryOpType op);

} // namespace aspen::ops
