// Copyright (c) Aspen contributors.
// popops::iota: popops::Iota<T> vertices on the tiles where the tensor lives.
#include "popops/Encoding.hpp"

#include "Internal.hpp"

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
          poplar::program::Sequence &prog, const poplar::DebugContext &debugContext) {
  iotaImpl(graph, t, startInteger, poplar::UNSIGNED_INT, prog, debugContext);
}

void iota(poplar::Graph &graph, const poplar::Tensor &t, int startInteger, poplar::program::Sequence &prog,
          const poplar::DebugContext &debugContext) {
  iotaImpl(graph, t, startInteger, poplar::INT, prog, debugContext);
}

} // namespace popops
