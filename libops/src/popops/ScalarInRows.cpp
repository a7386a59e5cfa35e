// Copyright (c) Aspen contributors.
// popops::selectScalarFromRows and updateScalarInRows: one column per row chosen by an index
// tensor, done with element-wise expressions over the whole {R, C} tensor (a column-number
// constant compared with each row's index) and, to select, a sum over each row's one pick.
#include "popops/SelectScalarFromRows.hpp"
#include "popops/UpdateScalarInRows.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/ElementWise.hpp"
#include "popops/EncodingConstants.hpp"
#include "popops/Expr.hpp"
#include "popops/Reduce.hpp"

#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <limits>
#include <numeric>
#include <vector>

namespace popops {

namespace {

using namespace popops::expr;

/// Checks `params` {R, C} float or half and `indices` {R} unsigned int; returns C.
unsigned checkRows(const poplar::Tensor &params, const poplar::Tensor &indices, const std::string &op) {
  aspen::ops::requireValid(params, op, "params");
  aspen::ops::requireValid(indices, op, "indices");
  if (params.rank() != 2 || (params.elementType() != poplar::FLOAT && params.elementType() != poplar::HALF))
    throw poputil::poplibs_error(op + ": params " + aspen::ops::describe(params) +
                                 " must be a 2-D float or half tensor");
  if (indices.rank() != 1 || indices.elementType() != poplar::UNSIGNED_INT)
    throw poputil::poplibs_error(op + ": indices " + aspen::ops::describe(indices) +
                                 " must be a 1-D unsigned int tensor");
  if (indices.dim(0) != params.dim(0))
    throw poputil::poplibs_error(op + ": indices " + aspen::ops::describe(indices) + " has " +
                                 std::to_string(indices.dim(0)) + " entries but params " +
                                 aspen::ops::describe(params) + " has " + std::to_string(params.dim(0)) +
                                 " rows");
  if (params.dim(1) >= MASKED_LABEL_CODE)
    throw poputil::poplibs_error(op + ": params " + aspen::ops::describe(params) + " has too many columns");
  return static_cast<unsigned>(params.dim(1));
}

/// The constant {C}: 0, 1, ..., C-1 (each row's index is compared with it).
poplar::Tensor columnNumbers(poplar::Graph &graph, unsigned columns, const poplar::DebugContext &dc) {
  std::vector<unsigned> numbers(columns);
  std::iota(numbers.begin(), numbers.end(), 0u);
  poplar::Tensor t = graph.addConstant(poplar::UNSIGNED_INT, {columns}, poplar::ArrayRef<unsigned>(numbers),
                                       {dc, "columns"});
  poputil::mapTensorLinearly(graph, t);
  return t;
}

/// True for an index that is neither a column nor MASKED_LABEL_CODE.
And outOfRange(const Expr &index, unsigned columns) {
  return And(Gte(index, Const(columns)), NotEqual(index, Const(static_cast<unsigned>(MASKED_LABEL_CODE))));
}

} // namespace

poplar::Tensor selectScalarFromRows(poplar::Graph &graph, const poplar::Tensor &params,
                                    const poplar::Tensor &indices, poplar::program::Sequence &prog,
                                    const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(params, indices));
  const poplar::DebugContext dc(di, "selectScalarFromRows");
  const unsigned columns = checkRows(params, indices, "popops::selectScalarFromRows");
  const poplar::Type type = params.elementType();
  if (params.dim(0) == 0 || columns == 0) {
    poplar::Tensor out = graph.addVariable(type, {params.dim(0)}, {dc, "out"});
    poputil::mapTensorLinearly(graph, out);
    if (params.dim(0) != 0) // no column to pick: every row's index is masked (0) or out of range (NaN)
      mapInPlace(graph,
                 Select(Cast(Const(std::numeric_limits<float>::quiet_NaN()), type), Cast(Const(0.0f), type),
                        outOfRange(_2, columns)),
                 {out, indices}, prog, {dc, "outOfRange"});
    return out;
  }
  const poplar::Tensor cols = columnNumbers(graph, columns, dc);
  // Each row keeps its one picked element (none for a masked or out-of-range index).
  const poplar::Tensor picked = map(graph, Select(_1, Cast(Const(0.0f), type), Equal(_2, _3)),
                                    {params, cols, indices.expand({1})}, prog, {dc, "pick"});
  poplar::Tensor out = reduce(graph, picked, type, {1}, Operation::ADD, prog, {dc, "row"});
  mapInPlace(graph,
             Select(Cast(Const(std::numeric_limits<float>::quiet_NaN()), type), _1, outOfRange(_2, columns)),
             {out, indices}, prog, {dc, "outOfRange"});
  di.addOutput(out);
  return out;
}

void updateScalarInRows(poplar::Graph &graph, const poplar::Tensor &params, const poplar::Tensor &indices,
                        poplar::program::Sequence &program, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(params, indices));
  const poplar::DebugContext dc(di, "updateScalarInRows");
  const unsigned columns = checkRows(params, indices, "popops::updateScalarInRows");
  if (params.numElements() == 0)
    return;
  const poplar::Type type = params.elementType();
  const poplar::Tensor cols = columnNumbers(graph, columns, dc);
  const poplar::Tensor rowIndex = indices.expand({1});
  mapInPlace(graph,
             Select(Cast(Const(std::numeric_limits<float>::quiet_NaN()), type),
                    Sub(_1, Cast(Equal(_2, _3), type)), outOfRange(_3, columns)),
             {params, cols, rowIndex}, program, {dc, "update"});
}

} // namespace popops
