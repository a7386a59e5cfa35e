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

} // namespace popops

#endif
