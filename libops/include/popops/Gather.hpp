// Copyright (c) Aspen contributors.
// popops::gather along one axis (numpy's `take`).
#ifndef POPOPS_GATHER_HPP
#define POPOPS_GATHER_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <cstddef>
#include <vector>

namespace popops {

/// Parameters of a gather.
struct GatherParams {
  /// Suggested maximum number of elements placed on a tile.
  std::size_t maxElementsPerTile = 65535;

  GatherParams() = default;
  GatherParams(std::size_t maxElementsPerTile_) : maxElementsPerTile(maxElementsPerTile_) {}
};

/// A tensor of `operandShape` laid out for gather() along `axis`: every slice along the axis
/// is spread over the tiles the same way, so each gathered slice is a tile-local copy.
poplar::Tensor createGatherInput(poplar::Graph &graph, const poplar::Type &type,
                                 const std::vector<std::size_t> &operandShape, unsigned axis,
                                 GatherParams params = {}, const poplar::DebugContext &debugContext = {});

/// The slices of `input` (rank x) at the run-time positions `indices` (rank y, INT or
/// UNSIGNED_INT) along `axis`: the result has shape
/// `input.shape[:axis] + indices.shape + input.shape[axis+1:]` (rank x + y - 1), so
/// `result[..., i..., ...] = input[..., indices[i...], ...]`. An index out of range gives zeros.
/// \throws poputil::poplibs_error if `axis >= input.rank()` or the indices are not integers.
poplar::Tensor gather(poplar::Graph &graph, const poplar::Tensor &input, const poplar::Tensor &indices,
                      unsigned axis, poplar::program::Sequence &prog, GatherParams params,
                      const poplar::DebugContext &debugContext = {});

/// XLA's general gather (https://www.tensorflow.org/xla/operation_semantics#gather): for each
/// start-index vector of `indices` (along `indexVectorDim`; == indices.rank() for scalar
/// indices), the slice of `sliceSizes` of `input` starting at that vector (component k applies
/// to input dimension `startIndexMap[k]`, the others start at 0), with `collapsedSliceDims`
/// (of size 1) removed; the slice dimensions appear at `offsetDims` of the result, the
/// indices' other dimensions fill the rest in order. Start indices must keep each slice
/// inside the input. Example: input {{1,2,3},{4,5,6},{7,8,9}}, indices {{1,1},{2,1}},
/// indexVectorDim 1, offsetDims {}, sliceSizes {1,1}, collapsedSliceDims {0,1},
/// startIndexMap {0,1} gives {5, 8}.
/// \throws poputil::poplibs_error naming the argument that does not fit.
poplar::Tensor gather(poplar::Graph &graph, const poplar::Tensor &input, const poplar::Tensor &indices,
                      std::size_t indexVectorDim, const std::vector<std::size_t> &offsetDims,
                      const std::vector<std::size_t> &sliceSizes,
                      const std::vector<std::size_t> &collapsedSliceDims,
                      const std::vector<unsigned> &startIndexMap, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
