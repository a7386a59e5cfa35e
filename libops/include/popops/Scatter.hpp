// Copyright (c) Aspen contributors.
// popops::scatter: XLA's scatter (https://www.tensorflow.org/xla/operation_semantics#scatter).
#ifndef POPOPS_SCATTER_HPP
#define POPOPS_SCATTER_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <cstddef>
#include <functional>
#include <vector>

namespace popops {

/// Writes the slices of `updates` into `operand` at the run-time positions in `indices`, with
/// XLA's scatter semantics: `indices` holds one start-index vector per scatter position along
/// `indexVectorDim` (== indices.rank() for scalar indices); `updateWindowDims` are the window
/// dimensions of `updates` (the others enumerate the scatter positions in the order of the
/// indices' other dimensions); `insertWindowDims` are the operand dimensions of size 1 not
/// present in the window; `scatterDimsToOperandDims[k]` is the operand dimension index
/// component k applies to. Positions are applied in order (a later one wins on overlap).
/// Start indices must keep the window inside the operand.
/// \throws poputil::poplibs_error naming the argument that does not fit.
void scatter(poplar::Graph &graph, const poplar::Tensor &operand, const poplar::Tensor &indices,
             const poplar::Tensor &updates, std::size_t indexVectorDim,
             std::vector<unsigned> updateWindowDims, std::vector<std::size_t> insertWindowDims,
             std::vector<unsigned> scatterDimsToOperandDims, poplar::program::Sequence &prog,
             const poplar::DebugContext &debugContext = {});

/// Combines the current window of the operand (first argument) with the update (second),
/// returning the new window.
using UpdateComputationFunc = std::function<poplar::Tensor(poplar::Graph &, poplar::Tensor &,
                                                           poplar::Tensor &, poplar::program::Sequence &)>;

/// scatter() with `updateComputation(current, update)` giving each window's new value (e.g.
/// popops::add for a scatter-add).
void scatter(poplar::Graph &graph, const poplar::Tensor &operand, const poplar::Tensor &indices,
             const poplar::Tensor &updates, std::size_t indexVectorDim,
             std::vector<unsigned> updateWindowDims, std::vector<std::size_t> insertWindowDims,
             std::vector<unsigned> scatterDimsToOperandDims, UpdateComputationFunc &updateComputation,
             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
