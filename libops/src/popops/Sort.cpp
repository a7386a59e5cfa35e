// Copyright (c) Aspen contributors.
// popops::sort: the slices along the sorted dimension become rows; each group of
// consecutive rows starting on one tile is sorted by one popops::SortRows (or
// SortRowsKeyValue) vertex on that tile.
#include "popops/Sort.hpp"

#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "poputil/Util.hpp"

#include <cmath>

namespace popops {

namespace {

poplar::Tensor rowsOf(const poplar::Tensor &t, unsigned dim) {
  const poplar::Tensor rolled = t.dimRoll(dim, t.rank() - 1);
  const std::size_t len = t.dim(dim);
  return rolled.reshape({len ? t.numElements() / len : 0, len});
}

void checkDim(const poplar::Tensor &t, unsigned dim, const std::string &op) {
  if (!t.valid())
    throw poputil::poplibs_error(op + ": the tensor is not valid");
  if (dim >= t.rank())
    throw poputil::poplibs_error(op + ": dimension " + std::to_string(dim) + " is out of range for " +
                                 aspen::ops::describe(t));
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(op + ": " + aspen::ops::describe(t) + " cannot be written");
}

} // namespace

void sortInPlace(poplar::Graph &graph, const poplar::Tensor &t, unsigned dim, poplar::program::Sequence &prog,
                 const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, dim));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::sortInPlace";
  checkDim(t, dim, op);
  const poplar::Tensor rows = rowsOf(t, dim);
  const std::string vt = poputil::templateVertex("popops::SortRows", t.elementType());
  aspen::ops::requireVertex(graph, vt, op, "sorting tensors of type " + t.elementType().toString().str());
  if (rows.dim(1) <= 1 || rows.dim(0) == 0)
    return;
  poplar::ComputeSet cs = graph.addComputeSet({debugContext, "sort"});
  // One worker vertex per run of consecutive rows on a tile.
  for (const auto &g : aspen::ops::rowsByTile(graph, rows))
    for (const auto &run : g.rows) {
      poplar::VertexRef v = graph.addVertex(cs, vt);
      graph.connect(v["data"], rows.slice(run.begin(), run.end()).flatten());
      graph.setInitialValue(v["rowLen"], static_cast<unsigned>(rows.dim(1)));
      graph.setTileMapping(v, g.tile);
      graph.setPerfEstimate(v, cost::sortRows(run.size(), rows.dim(1), false));
    }
  prog.add(poplar::program::Execute(cs, {debugContext, "sort"}));
}

poplar::Tensor sort(poplar::Graph &graph, const poplar::Tensor &t, unsigned dim,
                    poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, dim));
  const poplar::DebugContext debugContext(di);
  if (!t.valid() || dim >= t.rank())
    throw poputil::poplibs_error("popops::sort: dimension " + std::to_string(dim) + " is out of range for " +
                                 aspen::ops::describe(t));
  poplar::Tensor out = poputil::duplicate(graph, t, prog, {debugContext, "sort"});
  sortInPlace(graph, out, dim, prog, debugContext);
  return out;
}

void sortKeyValueInPlace(poplar::Graph &graph, const poplar::Tensor &k, const poplar::Tensor &v, unsigned dim,
                         poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(k, v, dim));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::sortKeyValueInPlace";
  checkDim(k, dim, op);
  checkDim(v, dim, op);
  if (k.shape() != v.shape())
    throw poputil::poplibs_error(op + ": keys " + aspen::ops::describe(k) + " and values " +
                                 aspen::ops::describe(v) + " must have the same shape");
  const poplar::Tensor keyRows = rowsOf(k, dim), valueRows = rowsOf(v, dim);
  const std::string vt =
      poputil::templateVertex("popops::SortRowsKeyValue", k.elementType(), v.elementType());
  aspen::ops::requireVertex(graph, vt, op,
                            "keys of type " + k.elementType().toString().str() + " with values of type " +
                                v.elementType().toString().str());
  if (keyRows.dim(1) <= 1 || keyRows.dim(0) == 0)
    return;
  poplar::ComputeSet cs = graph.addComputeSet({debugContext, "sortKeyValue"});
  for (const auto &g : aspen::ops::rowsByTile(graph, keyRows))
    for (const auto &run : g.rows) {
      poplar::VertexRef vx = graph.addVertex(cs, vt);
      graph.connect(vx["keys"], keyRows.slice(run.begin(), run.end()).flatten());
      graph.connect(vx["values"], valueRows.slice(run.begin(), run.end()).flatten());
      graph.setInitialValue(vx["rowLen"], static_cast<unsigned>(keyRows.dim(1)));
      graph.setTileMapping(vx, g.tile);
      graph.setPerfEstimate(vx, cost::sortRows(run.size(), keyRows.dim(1), true));
    }
  prog.add(poplar::program::Execute(cs, {debugContext, "sortKeyValue"}));
}

poplar::Tensor sortKeyValue(poplar::Graph &graph, const poplar::Tensor &k, const poplar::Tensor &v,
                            unsigned dim, poplar::program::Sequence &prog,
                            const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(k, v, dim));
  const poplar::DebugContext debugContext(di);
  if (!k.valid() || !v.valid() || k.shape() != v.shape())
    throw poputil::poplibs_error("popops::sortKeyValue: keys " + aspen::ops::describe(k) + " and values " +
                                 aspen::ops::describe(v) + " must have the same shape");
  if (dim >= k.rank())
    throw poputil::poplibs_error("popops::sortKeyValue: dimension " + std::to_string(dim) +
                                 " is out of range for " + aspen::ops::describe(k));
  poplar::Tensor keys = poputil::duplicate(graph, k, prog, {debugContext, "sortKeyValue/keys"});
  poplar::Tensor values = poputil::duplicate(graph, v, prog, {debugContext, "sortKeyValue/values"});
  sortKeyValueInPlace(graph, keys, values, dim, prog, debugContext);
  return values;
}

} // namespace popops
