// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_ZERO_HPP
#define POPOPS_ZERO_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <vector>

namespace popops {

/// Adds to `zeroCS` vertices on `tile` that zero the elements `tileRegions` of `t`.
void zero(poplar::Graph &graph, poplar::Tensor t, const std::vector<poplar::Interval> &tileRegions,
          unsigned tile, poplar::ComputeSet zeroCS);

/// Adds to `zeroCS` vertices on `tile` that zero the elements of `t` (all mapped to `tile`).
void zero(poplar::Graph &graph, const poplar::Tensor &t, unsigned tile, poplar::ComputeSet zeroCS);

/// Adds to `zeroCS` vertices zeroing `t`'s elements per tile as `mapping` lists them.
void zero(poplar::Graph &graph, const poplar::Tensor &t,
          const std::vector<std::vector<poplar::Interval>> &mapping, poplar::ComputeSet zeroCS);

/// Appends to `prog` a compute set that sets every element of `t` to zero.
///
/// Example: `popops::zero(graph, acc, prog, "clearAcc");`
void zero(poplar::Graph &graph, const poplar::Tensor &t, poplar::program::Sequence &prog,
          const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
