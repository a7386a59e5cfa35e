// Copyright (c) Aspen contributors.
// popops::iota: popops::Iota<T> vertices on the tiles where the tensor lives.
#include "popops/Encoding.hpp"

#include "Internal.hpp"
#include "common/OpDebugInfo.hpp"
#include "popops/ElementWise.hpp"
#include "popops/Expr.hpp"

namespace popops {

namespace {

void iotaImpl(poplar::Graph &graph, const poplar::Tensor &t, std::int64_t start,
              const poplar::Type &startType, poplar::program::Sequence &prog,
              const poplar::DebugContext &dc) {
  const std::string op = "popops::iota";
  if (!t.valid() || t.rank() != 1)
    throw poputil::poplibs_error(op + ": the output must be a 1-D tensor, got " + aspen::ops::describe(t));
  if (t.elementType() != startType)
    throw poputil::poplibs_error(op + ": output " + aspen::ops::describe(t) +
                                 " must have the start value's type " + startType.toString().str());
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(op + ": " + aspen::ops::describe(t) + " cannot be written");
  bool complete = true;
  graph.getTileMapping(t, &complete);
  if (!complete)
    throw poputil::poplibs_error(op + ": output " + aspen::ops::describe(t) + " must be mapped to tiles");
  const std::string vt = poputil::templateVertex("popops::Iota", t.elementType());
  aspen::ops::requireVertex(graph, vt, op, "tensors of type " + t.elementType().toString().str());
  poplar::ComputeSet cs = graph.addComputeSet({dc, "iota"});
  // One vertex per contiguous region: each starts counting at its first index.
  for (const auto &w : aspen::ops::splitByTile(graph, t, ~0u)) {
    const poplar::Interval r = w.regions[0];
    poplar::VertexRef v = graph.addVertex(cs, vt);
    graph.connect(v["out"], t.slice(r));
    aspen::ops::setStateInteger(graph, v["start"], t.elementType(),
                                start + static_cast<std::int64_t>(r.begin()));
    graph.setTileMapping(v, w.tile);
    graph.setPerfEstimate(
        v, aspen::ops::multiVertexCycles(graph.getTarget(), t.elementType(), r.size(), 1.0, 10));
  }
  prog.add(poplar::program::Execute(cs, {dc, "iota"}));
}

} // namespace

void iota(poplar::Graph &graph, const poplar::Tensor &t, unsigned startInteger,
          poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, startInteger));
  const poplar::DebugContext debugContext(di);
  iotaImpl(graph, t, startInteger, poplar::UNSIGNED_INT, prog, debugContext);
}

void iota(poplar::Graph &graph, const poplar::Tensor &t, int startInteger, poplar::program::Sequence &prog,
          const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, startInteger));
  const poplar::DebugContext debugContext(di);
  iotaImpl(graph, t, startInteger, poplar::INT, prog, debugContext);
}

} // namespace popops

// --- encodeOneHot: compare the indices, as a column, with the row of column numbers --------------

namespace popops {

namespace {

void encodeOneHotImpl(poplar::Graph &graph, const poplar::Tensor &indices, const poplar::Tensor &encoded,
                      poplar::program::Sequence &prog, const poplar::Tensor *on, const poplar::Tensor *off,
                      const poplar::DebugContext &debugContext) {
  const std::string op = "popops::encodeOneHot";
  aspen::ops::requireValid(indices, op, "the indices tensor");
  aspen::ops::requireValid(encoded, op, "the encoded tensor");
  if (encoded.rank() != 2)
    throw poputil::poplibs_error(op + ": encoded " + aspen::ops::describe(encoded) + " must be 2-D");
  if (indices.rank() != 1 && !(indices.rank() == 2 && indices.dim(1) == 1))
    throw poputil::poplibs_error(op + ": indices " + aspen::ops::describe(indices) + " must be 1-D");
  if (indices.elementType() != poplar::UNSIGNED_INT && indices.elementType() != poplar::INT)
    throw poputil::poplibs_error(op + ": indices " + aspen::ops::describe(indices) +
                                 " must be of type int or unsigned int");
  if (indices.dim(0) != encoded.dim(0))
    throw poputil::poplibs_error(op + ": indices " + aspen::ops::describe(indices) + " and encoded " +
                                 aspen::ops::describe(encoded) + " have different numbers of rows");
  if (!encoded.isParallelWriteable())
    throw poputil::poplibs_error(op + ": encoded " + aspen::ops::describe(encoded) + " cannot be written");
  const poplar::Type type = encoded.elementType();
  for (const poplar::Tensor *v : {on, off}) {
    if (!v)
      continue;
    aspen::ops::requireValid(*v, op, v == on ? "the on value" : "the off value");
    if (v->numElements() != 1 || v->elementType() != type)
      throw poputil::poplibs_error(op + ": the " + (v == on ? std::string("on") : std::string("off")) +
                                   " value " + aspen::ops::describe(*v) +
                                   " must be one element of the encoded tensor's type");
  }
  const std::size_t rows = encoded.dim(0), cols = encoded.dim(1);
  if (rows == 0 || cols == 0)
    return;
  const poplar::DebugContext dc{debugContext, "encodeOneHot"};
  std::vector<unsigned> colNumbers(cols);
  for (std::size_t c = 0; c < cols; ++c)
    colNumbers[c] = static_cast<unsigned>(c);
  poplar::Tensor columns =
      graph.addConstant(poplar::UNSIGNED_INT, {1, cols}, colNumbers.data(), {dc, "columns"});
  graph.setTileMapping(columns, 0);
  poplar::Tensor idx = indices.reshape({rows, 1});
  if (idx.elementType() == poplar::INT)
    idx = idx.reinterpret(poplar::UNSIGNED_INT);
  if (on) {
    mapWithOutput(graph, expr::Select(expr::_3, expr::_4, expr::Equal(expr::_1, expr::_2)),
                  {idx, columns, on->reshape({1, 1}), off->reshape({1, 1})}, encoded, prog, dc);
  } else if (type == poplar::BOOL) {
    mapWithOutput(graph, expr::Equal(expr::_1, expr::_2), {idx, columns}, encoded, prog, dc);
  } else {
    mapWithOutput(graph, expr::Cast(expr::Equal(expr::_1, expr::_2), type), {idx, columns}, encoded, prog,
                  dc);
  }
}

} // namespace

void encodeOneHot(poplar::Graph &graph, const poplar::Tensor &indices, const poplar::Tensor &encoded,
                  poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(indices, encoded));
  const poplar::DebugContext debugContext(di);
  encodeOneHotImpl(graph, indices, encoded, prog, nullptr, nullptr, debugContext);
}

void encodeOneHot(poplar::Graph &graph, const poplar::Tensor &indices, const poplar::Tensor &encoded,
                  poplar::program::Sequence &prog, const poplar::Tensor &on, const poplar::Tensor &off,
                  const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(indices, encoded, on, off));
  const poplar::DebugContext debugContext(di);
  encodeOneHotImpl(graph, indices, encoded, prog, &on, &off, debugContext);
}

} // namespace popops
