// Copyright (c) Aspen contributors.
// popops::CircBuf: a {size, n} history tensor, a run-time index, dynamicSlice/dynamicUpdate.
#include "popops/CircBuf.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/DynamicSlice.hpp"
#include "popops/ElementWise.hpp"
#include "popops/Expr.hpp"

#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <functional>
#include <numeric>

namespace popops {

CircBuf::CircBuf(poplar::Graph &graph, const poplar::Type &dataType, unsigned size,
                 const std::vector<std::size_t> &shape, const poplar::DebugContext &debugContext)
    : graph(graph), size_(size), shape(shape) {
  aspen::ops::PopopsDebugInfo di(debugContext, DI_ARGS(dataType, size, shape), "CircBuf");
  if (size == 0)
    throw poputil::poplibs_error("popops::CircBuf: the size must be at least 1");
  const std::size_t n = std::accumulate(shape.begin(), shape.end(), std::size_t(1), std::multiplies<>());
  const poplar::DebugContext dc{di, "CircBuf"};
  index = graph.addVariable(poplar::UNSIGNED_INT, {1}, {dc, "index"});
  graph.setTileMapping(index, 0);
  graph.setInitialValue(index, std::vector<unsigned>{0});
  // Each entry is spread over the tiles the same way, so an update is tile-local.
  hist = createSliceableTensor(graph, dataType, {size, n}, {0}, {1}, 0, {dc, "history"});
}

poplar::Tensor CircBuf::prev(unsigned i, poplar::program::Sequence &seq,
                             const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(i));
  const poplar::DebugContext debugContext(di);
  if (i >= size_)
    throw poputil::poplibs_error("popops::CircBuf::prev: entry " + std::to_string(i) +
                                 " is out of range for a buffer of size " + std::to_string(size_));
  const poplar::DebugContext dc{debugContext, "CircBuf/prev"};
  poplar::Tensor where = map(
      graph, expr::Rem(expr::Add(expr::_1, expr::Const(size_ - i)), expr::Const(size_)), {index}, seq, dc);
  poplar::Tensor out = dynamicSlice(graph, hist, where, {0}, {1}, seq, dc);
  return out.reshape(shape);
}

void CircBuf::add(poplar::Tensor t, poplar::program::Sequence &seq,
                  const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::CircBuf::add";
  aspen::ops::requireValid(t, op, "the tensor");
  if (t.numElements() != hist.dim(1) || t.elementType() != hist.elementType())
    throw poputil::poplibs_error(op + ": the tensor " + aspen::ops::describe(t) +
                                 " does not match the buffer's " + aspen::ops::shapeString(shape) + " " +
                                 hist.elementType().toString().str());
  const poplar::DebugContext dc{debugContext, "CircBuf/add"};
  mapInPlace(graph, expr::Rem(expr::Add(expr::_1, expr::Const(1u)), expr::Const(size_)), {index}, seq, dc);
  dynamicUpdate(graph, hist, t.flatten().expand({0}), index, {0}, {1}, seq, dc);
}

} // namespace popops
