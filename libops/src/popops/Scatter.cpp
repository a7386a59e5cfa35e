// Copyright (c) Aspen contributors.
// popops::scatter: a counted loop over the scatter positions; each pass reads its index vector
// and update window with dynamicSlice and writes the operand window with dynamicUpdate (after
// the user's update computation, if any). Sequential, so overlapping windows behave as XLA's
// in-order definition.
#include "popops/Scatter.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/DynamicSlice.hpp"
#include "popops/Loop.hpp"

#include <poputil/exceptions.hpp>

#include <algorithm>
#include <numeric>

namespace popops {

namespace {

void scatterImpl(poplar::Graph &graph, const poplar::Tensor &operand, const poplar::Tensor &indices,
                 const poplar::Tensor &updates, std::size_t indexVectorDim,
                 std::vector<unsigned> updateWindowDims, std::vector<std::size_t> insertWindowDims,
                 std::vector<unsigned> scatterDimsToOperandDims, UpdateComputationFunc *updateComputation,
                 poplar::program::Sequence &prog, const poplar::DebugContext &debugContext) {
  const std::string op = "popops::scatter";
  using aspen::ops::describe;
  using aspen::ops::shapeString;
  aspen::ops::requireValid(operand, op, "the operand");
  aspen::ops::requireValid(indices, op, "the indices");
  aspen::ops::requireValid(updates, op, "the updates");
  if (indices.elementType() != poplar::UNSIGNED_INT && indices.elementType() != poplar::INT)
    throw poputil::poplibs_error(op + ": indices " + describe(indices) +
                                 " must be of type int or unsigned int");
  if (updates.elementType() != operand.elementType())
    throw poputil::poplibs_error(op + ": updates " + describe(updates) + " and operand " + describe(operand) +
                                 " have different element types");
  if (!operand.isParallelWriteable())
    throw poputil::poplibs_error(op + ": the operand " + describe(operand) + " cannot be written");
  if (indexVectorDim > indices.rank())
    throw poputil::poplibs_error(op + ": indexVectorDim " + std::to_string(indexVectorDim) +
                                 " is out of range for indices " + describe(indices));
  // indices as {positions, k}
  poplar::Tensor idx = indexVectorDim == indices.rank()
                           ? indices.expand({indices.rank()})
                           : indices.dimRoll(static_cast<unsigned>(indexVectorDim), indices.rank() - 1);
  const std::size_t k = idx.dim(idx.rank() - 1);
  if (k != scatterDimsToOperandDims.size())
    throw poputil::poplibs_error(op + ": the index vectors have " + std::to_string(k) +
                                 " components but scatterDimsToOperandDims has " +
                                 std::to_string(scatterDimsToOperandDims.size()));
  for (unsigned d : scatterDimsToOperandDims)
    if (d >= operand.rank())
      throw poputil::poplibs_error(op + ": scatterDimsToOperandDims names dimension " + std::to_string(d) +
                                   " of the operand " + describe(operand));
  std::sort(updateWindowDims.begin(), updateWindowDims.end());
  std::sort(insertWindowDims.begin(), insertWindowDims.end());
  for (unsigned d : updateWindowDims)
    if (d >= updates.rank())
      throw poputil::poplibs_error(op + ": updateWindowDims names dimension " + std::to_string(d) +
                                   " of the updates " + describe(updates));
  if (updateWindowDims.size() + insertWindowDims.size() != operand.rank())
    throw poputil::poplibs_error(op + ": updateWindowDims (" + std::to_string(updateWindowDims.size()) +
                                 ") and insertWindowDims (" + std::to_string(insertWindowDims.size()) +
                                 ") must together cover the operand's " + std::to_string(operand.rank()) +
                                 " dimensions");
  // The window's shape in operand dimensions.
  std::vector<std::size_t> window(operand.rank(), 1);
  for (std::size_t d = 0, w = 0; d < operand.rank(); ++d) {
    if (std::find(insertWindowDims.begin(), insertWindowDims.end(), d) != insertWindowDims.end())
      continue;
    window[d] = updates.dim(updateWindowDims[w++]);
    if (window[d] > operand.dim(d))
      throw poputil::poplibs_error(op + ": the update window " + shapeString(window) +
                                   " does not fit the operand " + describe(operand) + " in dimension " +
                                   std::to_string(d));
  }
  // updates as {positions, window elements}: scatter dimensions first, in order.
  std::vector<unsigned> perm;
  for (unsigned d = 0; d < updates.rank(); ++d)
    if (std::find(updateWindowDims.begin(), updateWindowDims.end(), d) == updateWindowDims.end())
      perm.push_back(d);
  const std::size_t scatterRank = perm.size();
  for (unsigned d : updateWindowDims)
    perm.push_back(d);
  poplar::Tensor upd = updates.dimShuffle(perm);
  std::size_t positions = 1;
  for (std::size_t d = 0; d < scatterRank; ++d)
    positions *= upd.dim(d);
  const std::size_t idxPositions = idx.numElements() / std::max<std::size_t>(k, 1);
  if (positions != idxPositions)
    throw poputil::poplibs_error(op + ": updates " + describe(updates) + " have " +
                                 std::to_string(positions) + " scatter positions but indices " +
                                 describe(indices) + " have " + std::to_string(idxPositions));
  if (positions == 0)
    return;
  upd = upd.reshape({positions, upd.numElements() / positions});
  idx = idx.reshape({positions, k});
  if (idx.elementType() == poplar::INT)
    idx = idx.reinterpret(poplar::UNSIGNED_INT);
  // The operand's window region: the first window[d] elements of each dimension not indexed.
  std::vector<std::size_t> begin(operand.rank(), 0), end = operand.shape();
  std::vector<std::size_t> dims, sizes;
  for (std::size_t d = 0; d < operand.rank(); ++d)
    if (std::find(scatterDimsToOperandDims.begin(), scatterDimsToOperandDims.end(), d) ==
        scatterDimsToOperandDims.end())
      end[d] = window[d];
  for (unsigned d : scatterDimsToOperandDims) {
    dims.push_back(d);
    sizes.push_back(window[d]);
  }
  const poplar::Tensor target = operand.slice(begin, end);
  const poplar::DebugContext dc{debugContext, "scatter"};
  prog.add(countedLoop(
      graph, positions,
      [&](const poplar::Tensor &i) {
        poplar::program::Sequence body({}, dc);
        poplar::Tensor start = dynamicSlice(graph, idx, i, {0}, {1}, body, {dc, "index"}).flatten();
        poplar::Tensor u = dynamicSlice(graph, upd, i, {0}, {1}, body, {dc, "update"}).reshape(window);
        if (updateComputation) {
          poplar::Tensor cur = dynamicSlice(graph, target, start, dims, sizes, body, {dc, "current"});
          u = (*updateComputation)(graph, cur, u, body);
          if (!u.valid() || u.shape() != window || u.elementType() != operand.elementType())
            throw poputil::poplibs_error(op + ": the update computation returned " + describe(u) +
                                         ", not a window " + shapeString(window) + " of the operand's type");
        }
        dynamicUpdate(graph, target, u, start, dims, sizes, body, {dc, "write"});
        return body;
      },
      dc));
}

} // namespace

void scatter(poplar::Graph &graph, const poplar::Tensor &operand, const poplar::Tensor &indices,
             const poplar::Tensor &updates, std::size_t indexVectorDim,
             std::vector<unsigned> updateWindowDims, std::vector<std::size_t> insertWindowDims,
             std::vector<unsigned> scatterDimsToOperandDims, poplar::program::Sequence &prog,
             const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn,
                                 DI_ARGS(operand, indices, updates, indexVectorDim, updateWindowDims,
                                         insertWindowDims, scatterDimsToOperandDims));
  const poplar::DebugContext debugContext(di);
  scatterImpl(graph, operand, indices, updates, indexVectorDim, std::move(updateWindowDims),
              std::move(insertWindowDims), std::move(scatterDimsToOperandDims), nullptr, prog, debugContext);
}

void scatter(poplar::Graph &graph, const poplar::Tensor &operand, const poplar::Tensor &indices,
             const poplar::Tensor &updates, std::size_t indexVectorDim,
             std::vector<unsigned> updateWindowDims, std::vector<std::size_t> insertWindowDims,
             std::vector<unsigned> scatterDimsToOperandDims, UpdateComputationFunc &updateComputation,
             poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn,
                                 DI_ARGS(operand, indices, updates, indexVectorDim, updateWindowDims,
                                         insertWindowDims, scatterDimsToOperandDims));
  const poplar::DebugContext debugContext(di);
  scatterImpl(graph, operand, indices, updates, indexVectorDim, std::move(updateWindowDims),
              std::move(insertWindowDims), std::move(scatterDimsToOperandDims), &updateComputation, prog,
              debugContext);
}

} // namespace popops
