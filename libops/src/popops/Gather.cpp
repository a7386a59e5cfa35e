// Copyright (c) Aspen contributors.
// popops::gather along one axis: the axis moved to the front, one multiSlice of the flattened
// indices, the result's dimensions put back in numpy `take` order.
#include "popops/Gather.hpp"

#include "common/OpsCommon.hpp"
#include "popops/DynamicSlice.hpp"

#include <poputil/exceptions.hpp>

namespace popops {

poplar::Tensor createGatherInput(poplar::Graph &graph, const poplar::Type &type,
                                 const std::vector<std::size_t> &operandShape, unsigned axis,
                                 GatherParams params, const poplar::DebugContext &debugContext) {
  (void)params;
  if (axis >= operandShape.size())
    throw poputil::poplibs_error("popops::createGatherInput: axis " + std::to_string(axis) +
                                 " is out of range for the shape " + aspen::ops::shapeString(operandShape));
  return createSliceableTensor(graph, type, operandShape, {axis}, {1}, 0, {debugContext, "gatherInput"});
}

poplar::Tensor gather(poplar::Graph &graph, const poplar::Tensor &input, const poplar::Tensor &indices,
                      unsigned axis, poplar::program::Sequence &prog, GatherParams params,
                      const poplar::DebugContext &debugContext) {
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

} // namespace popops
