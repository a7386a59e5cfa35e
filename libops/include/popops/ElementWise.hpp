// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_ELEMENTWISE_HPP
#define POPOPS_ELEMENTWISE_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <popops/Expr.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace popops {

/// Evaluates `expr` element-wise over `ts` (placeholder `_i` is `ts[i-1]`; operands
/// broadcast numpy-style) and returns a new tensor. An expression with more than
/// one operator becomes one generated codelet (one pass over the data).
///
/// Options: `enableGenerateCodelet` (true|false, default true: fuse the
/// expression into one generated vertex), `forceGenerateCodelet` (true|false,
/// default false: generate a vertex even for a single operator).
///
/// Example: `Tensor y = popops::map(graph, expr::_1 * 2.0f + expr::_2, {x, b}, prog, "axpb");`
poplar::Tensor map(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                   poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                   const poplar::OptionFlags &options = {});

inline poplar::Tensor map(poplar::Graph &graph, expr::UnaryOpType op, const poplar::Tensor &t,
                          poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {}) {
  return map(graph, expr::UnaryOp(op, expr::_1), {t}, prog, debugContext, options);
}
inline poplar::Tensor map(poplar::Graph &graph, expr::BinaryOpType op, const poplar::Tensor &a,
                          const poplar::Tensor &b, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {}) {
  return map(graph, expr::BinaryOp(op, expr::_1, expr::_2), {a, b}, prog, debugContext, options);
}
inline poplar::Tensor map(poplar::Graph &graph, expr::TernaryOpType op, const poplar::Tensor &a,
                          const poplar::Tensor &b, const poplar::Tensor &c, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {}) {
  return map(graph, expr::TernaryOp(op, expr::_1, expr::_2, expr::_3), {a, b, c}, prog, debugContext,
             options);
}

/// Evaluates several expressions over the same tensors in one pass (one generated
/// codelet), returning one new tensor per expression. The results must all have one
/// shape (the operands broadcast numpy-style). Options as for the single-expression `map`.
///
/// Example: `auto sumAndProduct = popops::map(graph, {expr::_1 + expr::_2, expr::_1 * expr::_2}, {a, b},
/// prog);`
std::vector<poplar::Tensor> map(poplar::Graph &graph, const std::vector<expr::Any> &exprs,
                                const std::vector<poplar::Tensor> &ts, poplar::program::Sequence &prog,
                                const poplar::DebugContext &debugContext = {},
                                const poplar::OptionFlags &options = {});

/// Like `map`, writing the result into `ts[0]` (which must have the result's shape and type).
void mapInPlace(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                const poplar::OptionFlags &options = {});

inline void mapInPlace(poplar::Graph &graph, expr::UnaryOpType op, const poplar::Tensor &t,
                       poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                       const poplar::OptionFlags &options = {}) {
  mapInPlace(graph, expr::UnaryOp(op, expr::_1), {t}, prog, debugContext, options);
}
inline void mapInPlace(poplar::Graph &graph, expr::BinaryOpType op, const poplar::Tensor &a,
                       const poplar::Tensor &b, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContext = {},
                       const poplar::OptionFlags &options = {}) {
  mapInPlace(graph, expr::BinaryOp(op, expr::_1, expr::_2), {a, b}, prog, debugContext, options);
}
inline void mapInPlace(poplar::Graph &graph, expr::TernaryOpType op, const poplar::Tensor &a,
                       const poplar::Tensor &b, const poplar::Tensor &c, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContext = {},
                       const poplar::OptionFlags &options = {}) {
  mapInPlace(graph, expr::TernaryOp(op, expr::_1, expr::_2, expr::_3), {a, b, c}, prog, debugContext,
             options);
}

/// Like the multi-output `map`, writing the result of `exprs[i]` into `ts[i]`. Every
/// expression reads the tensors' values from before the call (all results are computed
/// before any is written), so `{_1 + _2, _1 * _2}` over `{a, b}` leaves a+b in `a` and a*b
/// in `b`. Needs `exprs.size() <= ts.size()`.
void mapInPlace(poplar::Graph &graph, const std::vector<expr::Any> &exprs,
                const std::vector<poplar::Tensor> &ts, poplar::program::Sequence &prog,
                const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// Like `map`, writing the result into `out` (which must have the result's shape and type).
void mapWithOutput(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                   const poplar::Tensor &out, poplar::program::Sequence &prog,
                   const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

inline void mapWithOutput(poplar::Graph &graph, expr::UnaryOpType op, const poplar::Tensor &t,
                          const poplar::Tensor &out, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {}) {
  mapWithOutput(graph, expr::UnaryOp(op, expr::_1), {t}, out, prog, debugContext, options);
}
inline void mapWithOutput(poplar::Graph &graph, expr::BinaryOpType op, const poplar::Tensor &a,
                          const poplar::Tensor &b, const poplar::Tensor &out, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {}) {
  mapWithOutput(graph, expr::BinaryOp(op, expr::_1, expr::_2), {a, b}, out, prog, debugContext, options);
}
inline void mapWithOutput(poplar::Graph &graph, expr::TernaryOpType op, const poplar::Tensor &a,
                          const poplar::Tensor &b, const poplar::Tensor &c, const poplar::Tensor &out,
                          poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {}) {
  mapWithOutput(graph, expr::TernaryOp(op, expr::_1, expr::_2, expr::_3), {a, b, c}, out, prog, debugContext,
                options);
}

/// Like the multi-output `map`, writing the result of `exprs[i]` into `outs[i]` (each must
/// have its result's shape and type). Needs `exprs.size() == outs.size()`.
void mapWithOutput(poplar::Graph &graph, const std::vector<expr::Any> &exprs,
                   const std::vector<poplar::Tensor> &ts, const std::vector<poplar::Tensor> &outs,
                   poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                   const poplar::OptionFlags &options = {});

namespace detail {
/// `map`, `mapInPlace` and `mapWithOutput` for the named operators below: errors name
/// `popops::<opName>`.
poplar::Tensor namedMap(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContext,
                        const poplar::OptionFlags &options, const char *opName);
void namedMapInPlace(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                     poplar::program::Sequence &prog, const poplar::DebugContext &debugContext,
                     const poplar::OptionFlags &options, const char *opName);
void namedMapWithOutput(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                        const poplar::Tensor &out, poplar::program::Sequence &prog,
                        const poplar::DebugContext &debugContext, const poplar::OptionFlags &options,
                        const char *opName);

/// A scalar constant of `elementType` holding `value` (of host type `hostType`),
/// mapped to tile 0; throws poplibs_error when the types do not fit (PopLibs rule:
/// float/double constants go with FLOAT or HALF tensors, others need the same type).
poplar::Tensor scalarConstant(poplar::Graph &graph, const poplar::Type &elementType,
                              const poplar::Type &hostType, const void *value, const char *opName);
} // namespace detail

#define POPOPS_DEFINE_UNARY_OPERATOR_FN(fn, op)                                                              \
  inline poplar::Tensor fn(poplar::Graph &graph, const poplar::Tensor &A, poplar::program::Sequence &prog,   \
                           const poplar::DebugContext &debugContext = {},                                    \
                           const poplar::OptionFlags &options = {}) {                                        \
    return detail::namedMap(graph, expr::UnaryOp(expr::UnaryOpType::op, expr::_1), {A}, prog,                \
                            {debugContext, #fn}, options, #fn);                                              \
  }                                                                                                          \
  inline void fn##InPlace(poplar::Graph &graph, const poplar::Tensor &A, poplar::program::Sequence &prog,    \
                          const poplar::DebugContext &debugContext = {},                                     \
                          const poplar::OptionFlags &options = {}) {                                         \
    detail::namedMapInPlace(graph, expr::UnaryOp(expr::UnaryOpType::op, expr::_1), {A}, prog,                \
                            {debugContext, #fn "InPlace"}, options, #fn "InPlace");                          \
  }                                                                                                          \
  inline void fn##WithOutput(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &out,       \
                             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {}, \
                             const poplar::OptionFlags &options = {}) {                                      \
    detail::namedMapWithOutput(graph, expr::UnaryOp(expr::UnaryOpType::op, expr::_1), {A}, out, prog,        \
                               {debugContext, #fn "WithOutput"}, options, #fn "WithOutput");                 \
  }

POPOPS_DEFINE_UNARY_OPERATOR_FN(abs, ABSOLUTE)
POPOPS_DEFINE_UNARY_OPERATOR_FN(asin, ASIN)
POPOPS_DEFINE_UNARY_OPERATOR_FN(bitwiseNot, BITWISE_NOT)
POPOPS_DEFINE_UNARY_OPERATOR_FN(cbrt, CBRT)
POPOPS_DEFINE_UNARY_OPERATOR_FN(ceil, CEIL)
POPOPS_DEFINE_UNARY_OPERATOR_FN(cos, COS)
POPOPS_DEFINE_UNARY_OPERATOR_FN(countLeadingZeros, COUNT_LEADING_ZEROS)
POPOPS_DEFINE_UNARY_OPERATOR_FN(erf, ERF)
POPOPS_DEFINE_UNARY_OPERATOR_FN(exp, EXPONENT)
POPOPS_DEFINE_UNARY_OPERATOR_FN(expm1, EXPONENT_MINUS_ONE)
POPOPS_DEFINE_UNARY_OPERATOR_FN(exp2, EXPONENT2)
POPOPS_DEFINE_UNARY_OPERATOR_FN(floor, FLOOR)
POPOPS_DEFINE_UNARY_OPERATOR_FN(geluErf, GELU_ERF)
POPOPS_DEFINE_UNARY_OPERATOR_FN(inv, INVERSE)
POPOPS_DEFINE_UNARY_OPERATOR_FN(log, LOGARITHM)
POPOPS_DEFINE_UNARY_OPERATOR_FN(log1p, LOGARITHM_ONE_PLUS)
POPOPS_DEFINE_UNARY_OPERATOR_FN(logicalNot, LOGICAL_NOT)
POPOPS_DEFINE_UNARY_OPERATOR_FN(nearbyint, NEARBY_INT)
POPOPS_DEFINE_UNARY_OPERATOR_FN(neg, NEGATE)
POPOPS_DEFINE_UNARY_OPERATOR_FN(popcount, POPCOUNT)
POPOPS_DEFINE_UNARY_OPERATOR_FN(round, ROUND)
POPOPS_DEFINE_UNARY_OPERATOR_FN(signum, SIGNUM)
POPOPS_DEFINE_UNARY_OPERATOR_FN(sin, SIN)
POPOPS_DEFINE_UNARY_OPERATOR_FN(tan, TAN)
POPOPS_DEFINE_UNARY_OPERATOR_FN(tanh, TANH)
POPOPS_DEFINE_UNARY_OPERATOR_FN(trunc, TRUNC)
POPOPS_DEFINE_UNARY_OPERATOR_FN(sqrt, SQRT)
POPOPS_DEFINE_UNARY_OPERATOR_FN(square, SQUARE)
POPOPS_DEFINE_UNARY_OPERATOR_FN(sigmoid, SIGMOID)
POPOPS_DEFINE_UNARY_OPERATOR_FN(rsqrt, RSQRT)
#undef POPOPS_DEFINE_UNARY_OPERATOR_FN

inline poplar::Tensor isFinite(poplar::Graph &graph, const poplar::Tensor &A, poplar::program::Sequence &prog,
                               const poplar::DebugContext &debugContext = {},
                               const poplar::OptionFlags &options = {}) {
  return detail::namedMap(graph, expr::UnaryOp(expr::UnaryOpType::IS_FINITE, expr::_1), {A}, prog,
                          {debugContext, "isFinite"}, options, "isFinite");
}

#define POPOPS_DEFINE_BINARY_OPERATOR_FN(fn, op)                                                             \
  inline poplar::Tensor fn(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,           \
                           poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},   \
                           const poplar::OptionFlags &options = {}) {                                        \
    return detail::namedMap(graph, expr::BinaryOp(expr::BinaryOpType::op, expr::_1, expr::_2), {A, B}, prog, \
                            {debugContext, #fn}, options, #fn);                                              \
  }                                                                                                          \
  template <typename constType>                                                                              \
  inline typename std::enable_if<std::is_arithmetic<constType>::value, poplar::Tensor>::type fn(             \
      poplar::Graph &graph, const poplar::Tensor &A, const constType B, poplar::program::Sequence &prog,     \
      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {}) {              \
    const auto BTensor = detail::scalarConstant(graph, A.elementType(),                                      \
                                                poplar::equivalent_device_type<constType>().value, &B, #fn); \
    return detail::namedMap(graph, expr::BinaryOp(expr::BinaryOpType::op, expr::_1, expr::_2), {A, BTensor}, \
                            prog, {debugContext, #fn}, options, #fn);                                        \
  }                                                                                                          \
  template <typename constType>                                                                              \
  inline typename std::enable_if<std::is_arithmetic<constType>::value, poplar::Tensor>::type fn(             \
      poplar::Graph &graph, const constType A, const poplar::Tensor &B, poplar::program::Sequence &prog,     \
      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {}) {              \
    const auto ATensor = detail::scalarConstant(graph, B.elementType(),                                      \
                                                poplar::equivalent_device_type<constType>().value, &A, #fn); \
    return detail::namedMap(graph, expr::BinaryOp(expr::BinaryOpType::op, expr::_1, expr::_2), {ATensor, B}, \
                            prog, {debugContext, #fn}, options, #fn);                                        \
  }                                                                                                          \
  inline void fn##InPlace(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,            \
                          poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},    \
                          const poplar::OptionFlags &options = {}) {                                         \
    detail::namedMapInPlace(graph, expr::BinaryOp(expr::BinaryOpType::op, expr::_1, expr::_2), {A, B}, prog, \
                            {debugContext, #fn "InPlace"}, options, #fn "InPlace");                          \
  }                                                                                                          \
  template <typename constType>                                                                              \
  inline typename std::enable_if<std::is_arithmetic<constType>::value>::type fn##InPlace(                    \
      poplar::Graph &graph, const poplar::Tensor &A, const constType B, poplar::program::Sequence &prog,     \
      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {}) {              \
    const auto BTensor = detail::scalarConstant(graph, A.elementType(),                                      \
                                                poplar::equivalent_device_type<constType>().value, &B, #fn); \
    detail::namedMapInPlace(graph, expr::BinaryOp(expr::BinaryOpType::op, expr::_1, expr::_2), {A, BTensor}, \
                            prog, {debugContext, #fn "InPlace"}, options, #fn "InPlace");                    \
  }                                                                                                          \
  inline void fn##WithOutput(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,         \
                             const poplar::Tensor &out, poplar::program::Sequence &prog,                     \
                             const poplar::DebugContext &debugContext = {},                                  \
                             const poplar::OptionFlags &options = {}) {                                      \
    detail::namedMapWithOutput(graph, expr::BinaryOp(expr::BinaryOpType::op, expr::_1, expr::_2), {A, B},    \
                               out, prog, {debugContext, #fn "WithOutput"}, options, #fn "WithOutput");      \
  }                                                                                                          \
  template <typename constType>                                                                              \
  inline typename std::enable_if<std::is_arithmetic<constType>::value>::type fn##WithOutput(                 \
      poplar::Graph &graph, const poplar::Tensor &A, const constType B, const poplar::Tensor &out,           \
      poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},                        \
      const poplar::OptionFlags &options = {}) {                                                             \
    const auto BTensor = detail::scalarConstant(graph, A.elementType(),                                      \
                                                poplar::equivalent_device_type<constType>().value, &B, #fn); \
    detail::namedMapWithOutput(graph, expr::BinaryOp(expr::BinaryOpType::op, expr::_1, expr::_2),            \
                               {A, BTensor}, out, prog, {debugContext, #fn "WithOutput"}, options,           \
                               #fn "WithOutput");                                                            \
  }

POPOPS_DEFINE_BINARY_OPERATOR_FN(add, ADD)
POPOPS_DEFINE_BINARY_OPERATOR_FN(atan2, ATAN2)
POPOPS_DEFINE_BINARY_OPERATOR_FN(bitwiseAnd, BITWISE_AND)
POPOPS_DEFINE_BINARY_OPERATOR_FN(bitwiseOr, BITWISE_OR)
POPOPS_DEFINE_BINARY_OPERATOR_FN(bitwiseXor, BITWISE_XOR)
POPOPS_DEFINE_BINARY_OPERATOR_FN(bitwiseXnor, BITWISE_XNOR)
POPOPS_DEFINE_BINARY_OPERATOR_FN(div, DIVIDE)
POPOPS_DEFINE_BINARY_OPERATOR_FN(eq, EQUAL)
POPOPS_DEFINE_BINARY_OPERATOR_FN(gteq, GREATER_THAN_EQUAL)
POPOPS_DEFINE_BINARY_OPERATOR_FN(gt, GREATER_THAN)
POPOPS_DEFINE_BINARY_OPERATOR_FN(invStdDevToVariance, INV_STD_DEV_TO_VARIANCE)
POPOPS_DEFINE_BINARY_OPERATOR_FN(lteq, LESS_THAN_EQUAL)
POPOPS_DEFINE_BINARY_OPERATOR_FN(logicalAnd, LOGICAL_AND)
POPOPS_DEFINE_BINARY_OPERATOR_FN(logicalOr, LOGICAL_OR)
POPOPS_DEFINE_BINARY_OPERATOR_FN(lt, LESS_THAN)
POPOPS_DEFINE_BINARY_OPERATOR_FN(max, MAXIMUM)
POPOPS_DEFINE_BINARY_OPERATOR_FN(min, MINIMUM)
POPOPS_DEFINE_BINARY_OPERATOR_FN(mul, MULTIPLY)
POPOPS_DEFINE_BINARY_OPERATOR_FN(neq, NOT_EQUAL)
POPOPS_DEFINE_BINARY_OPERATOR_FN(pow, POWER)
POPOPS_DEFINE_BINARY_OPERATOR_FN(rem, REMAINDER)
POPOPS_DEFINE_BINARY_OPERATOR_FN(shiftLeft, SHIFT_LEFT)
POPOPS_DEFINE_BINARY_OPERATOR_FN(shiftRight, SHIFT_RIGHT)
POPOPS_DEFINE_BINARY_OPERATOR_FN(shiftRightSignExtend, SHIFT_RIGHT_SIGN_EXTEND)
POPOPS_DEFINE_BINARY_OPERATOR_FN(sub, SUBTRACT)
POPOPS_DEFINE_BINARY_OPERATOR_FN(varianceToInvStdDev, VARIANCE_TO_INV_STD_DEV)
#undef POPOPS_DEFINE_BINARY_OPERATOR_FN

#define POPOPS_DEFINE_TERNARY_OPERATOR_FN(fn, op)                                                            \
  inline poplar::Tensor fn(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,           \
                           const poplar::Tensor &C, poplar::program::Sequence &prog,                         \
                           const poplar::DebugContext &debugContext = {},                                    \
                           const poplar::OptionFlags &options = {}) {                                        \
    return detail::namedMap(graph, expr::TernaryOp(expr::TernaryOpType::op, expr::_1, expr::_2, expr::_3),   \
                            {A, B, C}, prog, {debugContext, #fn}, options, #fn);                             \
  }                                                                                                          \
  inline void fn##InPlace(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,            \
                          const poplar::Tensor &C, poplar::program::Sequence &prog,                          \
                          const poplar::DebugContext &debugContext = {},                                     \
                          const poplar::OptionFlags &options = {}) {                                         \
    detail::namedMapInPlace(graph, expr::TernaryOp(expr::TernaryOpType::op, expr::_1, expr::_2, expr::_3),   \
                            {A, B, C}, prog, {debugContext, #fn "InPlace"}, options, #fn "InPlace");         \
  }                                                                                                          \
  inline void fn##WithOutput(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,         \
                             const poplar::Tensor &C, const poplar::Tensor &out,                             \
                             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {}, \
                             const poplar::OptionFlags &options = {}) {                                      \
    detail::namedMapWithOutput(                                                                              \
        graph, expr::TernaryOp(expr::TernaryOpType::op, expr::_1, expr::_2, expr::_3), {A, B, C}, out, prog, \
        {debugContext, #fn "WithOutput"}, options, #fn "WithOutput");                                        \
  }

/// `select(A, B, C)` = `C ? A : B` (C is bool).
POPOPS_DEFINE_TERNARY_OPERATOR_FN(select, SELECT)
/// `clamp(A, lo, hi)` = `min(max(A, lo), hi)`.
POPOPS_DEFINE_TERNARY_OPERATOR_FN(clamp, CLAMP)
#undef POPOPS_DEFINE_TERNARY_OPERATOR_FN

} // namespace popops

#endif
