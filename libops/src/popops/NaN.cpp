// Copyright (c) Aspen contributors.
// popops::hasNaN and hasNaNOrInf: an element-wise test (a map) reduced with logical or.
#include "popops/NaN.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/ElementWise.hpp"
#include "popops/Expr.hpp"
#include "popops/Reduce.hpp"
#include "popops/Zero.hpp"

#include <poputil/exceptions.hpp>

namespace popops {

namespace {

/// True when `test` holds for any element of `src`.
poplar::Tensor anyElement(poplar::Graph &graph, const poplar::Tensor &src, const expr::Expr &test,
                          poplar::program::Sequence &prog, const poplar::DebugContext &dc,
                          const std::string &op) {
  aspen::ops::requireValid(src, op, "src");
  if (src.elementType() != poplar::FLOAT && src.elementType() != poplar::HALF)
    throw poputil::poplibs_error(op + ": the tensor " + aspen::ops::describe(src) + " must be float or half");
  if (src.numElements() == 0) {
    poplar::Tensor none = graph.addVariable(poplar::BOOL, {}, {dc, "result"});
    graph.setTileMapping(none, 0);
    zero(graph, none, prog, {dc, "none"});
    return none;
  }
  const poplar::Tensor flags = map(graph, test, {src.flatten()}, prog, {dc, "test"});
  return reduce(graph, flags, poplar::BOOL, {0}, Operation::LOGICAL_OR, prog, {dc, "any"});
}

} // namespace

poplar::Tensor hasNaN(poplar::Graph &graph, const poplar::Tensor &src, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(src));
  poplar::Tensor out = anyElement(graph, src, expr::UnaryOp(expr::UnaryOpType::IS_NAN, expr::_1), prog,
                                  {poplar::DebugContext(di), "hasNaN"}, "popops::hasNaN");
  di.addOutput(out);
  return out;
}

poplar::Tensor hasNaNOrInf(poplar::Graph &graph, const poplar::Tensor &src, poplar::program::Sequence &prog,
                           const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(src));
  const expr::UnaryOp notFinite(expr::UnaryOpType::LOGICAL_NOT,
                                expr::UnaryOp(expr::UnaryOpType::IS_FINITE, expr::_1));
  poplar::Tensor out = anyElement(graph, src, notFinite, prog, {poplar::DebugContext(di), "hasNaNOrInf"},
                                  "popops::hasNaNOrInf");
  di.addOutput(out);
  return out;
}

} // namespace popops
