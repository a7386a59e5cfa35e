// Copyright (c) Aspen contributors.
// popops::gather along one axis: the axis moved to the front, one multiSlice of the flattened
// indices, the result's dimensions put back in numpy `take` order.
#include "popops/Gather.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/DynamicSlice.hpp"
#include "popops/Loop.hpp"

#include <algorithm>

#include <poputil/exceptions.hpp>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::GatherParams &p) {
  return poplar::ProfileValue::Map{{"maxElementsPerTile", poplar::ProfileValue(p.maxElementsPerTile)}};
}
} // namespace poputil

namespace popops {

poplar::Tensor createGatherInput(poplar::Graph &graph, const poplar::Type &type,
                                 const std::vector<std::size_t> &operandShape, unsigned axis,
                                 GatherParams params, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(type, operandShape, axis, params));
  const poplar::DebugContext debugContext(di);
  (void)params;
  if (axis >= operandShape.size())
    throw poputil::poplibs_error("popops::createGatherInput: axis " + std::to_string(axis) +
                                 " is out of range for the shape " + aspen::ops::shapeString(operandShape));
  return createSliceableTensor(graph, type, operandShape, {axis}, {1}, 0, {debugContext, "gatherInput"});
}

poplar::Tensor gather(poplar::Graph &graph, const poplar::Tensor &input, const poplar::Tensor &indices,
                      unsigned axis, poplar::program::Sequence &prog, GatherParams params,
                      const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(input, indices, axis, params));
  const poplar::DebugContext debugContext(di);
  (void)params;
  const std::string op = "popops::gather";
  aspen::ops::requireValid(input, op, "the input");
  aspen::ops::requireValid(indices, op, "the indices");
  if (axis >= input.rank())
    throw poputil::poplibs_error(op + ": axis " + std::to_string(axis) + " is out of range for the input " +
                                 aspen::ops::describe(input));
  if (indices.elementType() != poplar::UNSIGNED_INT && indices.elementType() != poplar::INT)
    throw poputil::poplibs_error(op + ": indices " + aspen::ops::describe(indices) +
                                 " must be of type int or unsigned int");
  const poplar::DebugContext dc{debugContext, "gather"};
  const std::size_t n = indices.numElements();
  // {axis, rest...}
  poplar::Tensor front = input.dimRoll(axis, 0);
  poplar::Tensor sliced =
      multiSlice(graph, front, indices.reshape({n, 1}), {0}, {1}, prog, SlicePlan(), {}, dc);
  // {n, 1, before..., after...} -> {indices..., before..., after...}
  std::vector<std::size_t> shape = indices.shape();
  for (unsigned d = 0; d < input.rank(); ++d)
    if (d != axis)
      shape.push_back(input.dim(d));
  poplar::Tensor r = sliced.reshape(shape);
  // Move the index dimensions after the `axis` leading dimensions of the input.
  const unsigned y = indices.rank();
  std::vector<unsigned> perm;
  for (unsigned d = 0; d < axis; ++d)
    perm.push_back(y + d);
  for (unsigned d = 0; d < y; ++d)
    perm.push_back(d);
  for (unsigned d = y + axis; d < r.rank(); ++d)
    perm.push_back(d);
  return r.dimShuffle(perm);
}

poplar::Tensor gather(poplar::Graph &graph, const poplar::Tensor &input, const poplar::Tensor &indices,
                      std::size_t indexVectorDim, const std::vector<std::size_t> &offsetDims,
                      const std::vector<std::size_t> &sliceSizes,
                      const std::vector<std::size_t> &collapsedSliceDims,
                      const std::vector<unsigned> &startIndexMap, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(input, indices, indexVectorDim, offsetDims,
                                                         sliceSizes, collapsedSliceDims, startIndexMap));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::gather";
  using aspen::ops::describe;
  using aspen::ops::shapeString;
  aspen::ops::requireValid(input, op, "the input");
  aspen::ops::requireValid(indices, op, "the indices");
  if (indices.elementType() != poplar::UNSIGNED_INT && indices.elementType() != poplar::INT)
    throw poputil::poplibs_error(op + ": indices " + describe(indices) +
                                 " must be of type int or unsigned int");
  if (indexVectorDim > indices.rank())
    throw poputil::poplibs_error(op + ": indexVectorDim " + std::to_string(indexVectorDim) +
                                 " is out of range for indices " + describe(indices));
  if (sliceSizes.size() != input.rank())
    throw poputil::poplibs_error(op + ": sliceSizes " + shapeString(sliceSizes) +
                                 " must have one entry per dimension of " + describe(input));
  for (std::size_t d = 0; d < input.rank(); ++d)
    if (sliceSizes[d] > input.dim(d))
      throw poputil::poplibs_error(op + ": sliceSizes " + shapeString(sliceSizes) + " exceed the input " +
                                   describe(input) + " in dimension " + std::to_string(d));
  for (std::size_t d : collapsedSliceDims)
    if (d >= input.rank() || sliceSizes[d] != 1)
      throw poputil::poplibs_error(op + ": collapsedSliceDims names dimension " + std::to_string(d) +
                                   ", which must exist and have slice size 1");
  poplar::Tensor idx = indexVectorDim == indices.rank()
                           ? indices.expand({indices.rank()})
                           : indices.dimRoll(static_cast<unsigned>(indexVectorDim), indices.rank() - 1);
  const std::size_t k = idx.dim(idx.rank() - 1);
  if (k != startIndexMap.size())
    throw poputil::poplibs_error(op + ": the index vectors have " + std::to_string(k) +
                                 " components but startIndexMap has " + std::to_string(startIndexMap.size()));
  for (unsigned d : startIndexMap)
    if (d >= input.rank())
      throw poputil::poplibs_error(op + ": startIndexMap names dimension " + std::to_string(d) +
                                   " of the input " + describe(input));
  const std::vector<std::size_t> idxShape = idx.shape();
  std::vector<std::size_t> batchShape(idxShape.begin(), idxShape.end() - 1);
  std::vector<std::size_t> window; // the slice without the collapsed dimensions
  for (std::size_t d = 0; d < input.rank(); ++d)
    if (std::find(collapsedSliceDims.begin(), collapsedSliceDims.end(), d) == collapsedSliceDims.end())
      window.push_back(sliceSizes[d]);
  if (offsetDims.size() != window.size())
    throw poputil::poplibs_error(op + ": offsetDims " + shapeString(offsetDims) +
                                 " must have one entry per slice dimension " + "not collapsed (" +
                                 std::to_string(window.size()) + ")");
  const std::size_t outRank = batchShape.size() + window.size();
  for (std::size_t d : offsetDims)
    if (d >= outRank)
      throw poputil::poplibs_error(op + ": offsetDims " + shapeString(offsetDims) +
                                   " must be below the result's rank " + std::to_string(outRank));
  std::size_t positions = 1, windowElems = 1;
  for (std::size_t s : batchShape)
    positions *= s;
  for (std::size_t s : window)
    windowElems *= s;
  const poplar::DebugContext dc{debugContext, "gather"};
  poplar::Tensor buffer = graph.addVariable(input.elementType(), {positions, windowElems}, {dc, "result"});
  aspen::ops::mapIfUnmapped(graph, buffer);
  if (positions > 0 && windowElems > 0) {
    idx = idx.reshape({positions, k});
    if (idx.elementType() == poplar::INT)
      idx = idx.reinterpret(poplar::UNSIGNED_INT);
    std::vector<std::size_t> begin(input.rank(), 0), end = input.shape(), dims, sizes;
    for (std::size_t d = 0; d < input.rank(); ++d)
      if (std::find(startIndexMap.begin(), startIndexMap.end(), d) == startIndexMap.end())
        end[d] = sliceSizes[d];
    for (unsigned d : startIndexMap) {
      dims.push_back(d);
      sizes.push_back(sliceSizes[d]);
    }
    const poplar::Tensor source = input.slice(begin, end);
    prog.add(countedLoop(
        graph, positions,
        [&](const poplar::Tensor &i) {
          poplar::program::Sequence body({}, dc);
          poplar::Tensor start = dynamicSlice(graph, idx, i, {0}, {1}, body, {dc, "index"}).flatten();
          poplar::Tensor s = dynamicSlice(graph, source, start, dims, sizes, body, {dc, "slice"});
          dynamicUpdate(graph, buffer, s.reshape({1, windowElems}), i, {0}, {1}, body, {dc, "write"});
          return body;
        },
        dc));
  }
  // {batch..., window...} with the window dimensions moved to offsetDims.
  std::vector<std::size_t> shape = batchShape;
  shape.insert(shape.end(), window.begin(), window.end());
  std::vector<std::size_t> sortedOffsets = offsetDims;
  std::sort(sortedOffsets.begin(), sortedOffsets.end());
  std::vector<unsigned> perm(outRank);
  for (std::size_t o = 0, b = 0, w = 0; o < outRank; ++o) {
    if (w < sortedOffsets.size() && sortedOffsets[w] == o)
      perm[o] = static_cast<unsigned>(batchShape.size() + w++);
    else
      perm[o] = static_cast<unsigned>(b++);
  }
  return buffer.reshape(shape).dimShuffle(perm);
}

} // namespace popops
