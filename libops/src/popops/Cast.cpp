// Copyright (c) Aspen contributors.
// popops::cast: element type conversion with popops::Cast1D vertices on the tiles
// where the destination lives.
#include "popops/Cast.hpp"

#include "ElementWiseInternal.hpp"
#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"

namespace popops {

namespace {

poplar::Tensor createCastOutput(poplar::Graph &graph, const poplar::Tensor &src, const poplar::Type &dstType,
                                const poplar::DebugContext &dc) {
  if (dstType.requiresMetadata())
    throw poputil::poplibs_error("popops::cast: casting " + aspen::ops::describe(src) + " to " +
                                 dstType.toString().str() +
                                 " needs metadata: use cast(graph, src, QUARTER, metadata, ...)");
  return aspen::ops::createOutputLike(graph, dstType, src.shape(), {src}, {dc, "cast"});
}

} // namespace

void cast(poplar::Graph &graph, poplar::Tensor src, poplar::Tensor dst, poplar::ComputeSet cs) {
  aspen::ops::requireValid(src, "popops::cast", "the source");
  aspen::ops::requireValid(dst, "popops::cast", "the destination");
  if (src.shape() != dst.shape())
    throw poputil::poplibs_error("popops::cast: source " + aspen::ops::describe(src) + " and destination " +
                                 aspen::ops::describe(dst) + " have different shapes");
  if (!dst.isParallelWriteable())
    throw poputil::poplibs_error("popops::cast: destination " + aspen::ops::describe(dst) +
                                 " cannot be written (it contains constants or aliased elements)");
  const std::string vt = poputil::templateVertex("popops::Cast1D", src.elementType(), dst.elementType());
  aspen::ops::requireVertex(graph, vt, "popops::cast",
                            "casting " + src.elementType().toString().str() + " to " +
                                dst.elementType().toString().str());
  aspen::ops::mapIfUnmapped(graph, dst);
  const poplar::Tensor srcFlat = src.flatten();
  const poplar::Tensor dstFlat = dst.flatten();
  const auto &target = graph.getTarget();
  for (const auto &w : aspen::ops::splitByTile(graph, dst)) {
    poplar::VertexRef v = graph.addVertex(cs, vt);
    graph.connect(v["src"], aspen::ops::gather(srcFlat, w.regions));
    graph.connect(v["dst"], aspen::ops::gather(dstFlat, w.regions));
    graph.setTileMapping(v, w.tile);
    graph.setPerfEstimate(v, cost::cast1D(target, src.elementType(), dst.elementType(), w.numElements()));
  }
}

poplar::Tensor cast(poplar::Graph &graph, poplar::Tensor src, const poplar::Type &dstType,
                    poplar::ComputeSet cs, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(src, dstType, cs));
  const poplar::DebugContext debugContext(di);
  aspen::ops::requireValid(src, "popops::cast", "the source");
  poplar::Tensor dst = createCastOutput(graph, src, dstType, debugContext);
  cast(graph, src, dst, cs);
  return dst;
}

poplar::program::Program cast(poplar::Graph &graph, poplar::Tensor src, poplar::Tensor dst,
                              const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(src, dst));
  const poplar::DebugContext debugContext(di);
  aspen::ops::requireValid(src, "popops::cast", "the source");
  aspen::ops::requireValid(dst, "popops::cast", "the destination");
  if (src.shape() != dst.shape())
    throw poputil::poplibs_error("popops::cast: source " + aspen::ops::describe(src) + " and destination " +
                                 aspen::ops::describe(dst) + " have different shapes");
  // Quarter to quarter converts between the two tensors' metadata: never a plain copy.
  if (src.elementType() == dst.elementType() && !src.elementType().requiresMetadata())
    return poplar::program::Copy(src, dst, false, {debugContext, "cast"});
  poplar::ComputeSet cs = graph.addComputeSet({debugContext, "cast"});
  cast(graph, src, dst, cs);
  return poplar::program::Execute(cs, {debugContext, "cast"});
}

poplar::Tensor cast(poplar::Graph &graph, const poplar::Tensor &src, const poplar::Type &dstType,
                    poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(src, dstType));
  const poplar::DebugContext debugContext(di);
  aspen::ops::requireValid(src, "popops::cast", "the source");
  poplar::Tensor dst = createCastOutput(graph, src, dstType, debugContext);
  prog.add(cast(graph, src, dst, debugContext));
  return dst;
}

namespace {
poplar::Tensor createQuarterOutput(poplar::Graph &graph, const poplar::Tensor &src,
                                   const poplar::Type &dstType, const poplar::Tensor &metadata,
                                   const poplar::DebugContext &dc) {
  aspen::ops::requireValid(src, "popops::cast", "the source");
  if (!dstType.requiresMetadata())
    throw poputil::poplibs_error("popops::cast: a metadata tensor was given but the destination type " +
                                 dstType.toString().str() + " takes none (only quarter does)");
  if (!metadata.valid() || metadata.elementType() != poplar::QUARTER_METADATA || metadata.numElements() != 1)
    throw poputil::poplibs_error(
        "popops::cast: the metadata tensor " +
        (metadata.valid() ? aspen::ops::describe(metadata) : std::string("<invalid>")) +
        " must be one element of type quarter_metadata");
  poplar::Tensor dst = graph.clone(dstType, metadata, src, {dc, "cast"});
  return dst;
}
} // namespace

poplar::Tensor cast(poplar::Graph &graph, const poplar::Tensor &src, const poplar::Type &dstType,
                    const poplar::Tensor &metadata, poplar::program::Sequence &prog,
                    const poplar::DebugContext &debugContext) {
  poplar::Tensor dst = createQuarterOutput(graph, src, dstType, metadata, debugContext);
  prog.add(cast(graph, src, dst, debugContext));
  return dst;
}

poplar::Tensor cast(poplar::Graph &graph, poplar::Tensor src, const poplar::Type &dstType,
                    const poplar::Tensor &metadata, poplar::ComputeSet cs,
                    const poplar::DebugContext &debugContext) {
  poplar::Tensor dst = createQuarterOutput(graph, src, dstType, metadata, debugContext);
  cast(graph, src, dst, cs);
  return dst;
}

void castWithOutput(poplar::Graph &graph, const poplar::Tensor &src, const poplar::Tensor &dst,
                    poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(src, dst));
  const poplar::DebugContext debugContext(di);
  prog.add(cast(graph, src, dst, debugContext));
}

} // namespace popops
