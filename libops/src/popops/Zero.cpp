// Copyright (c) Aspen contributors.
// popops::zero: a fill with 0 (the popops::Fill<T> vertices).
#include "popops/Zero.hpp"

#include "common/OpDebugInfo.hpp"
#include "popops/Fill.hpp"

namespace popops {

void zero(poplar::Graph &graph, poplar::Tensor t, const std::vector<poplar::Interval> &tileRegions,
          unsigned tile, poplar::ComputeSet zeroCS) {
  fill(graph, t, tileRegions, tile, zeroCS, 0);
}

void zero(poplar::Graph &graph, const poplar::Tensor &t, unsigned tile, poplar::ComputeSet zeroCS) {
  fill(graph, t, tile, zeroCS, 0);
}

void zero(poplar::Graph &graph, const poplar::Tensor &t,
          const std::vector<std::vector<poplar::Interval>> &mapping, poplar::ComputeSet zeroCS) {
  fill(graph, t, mapping, zeroCS, 0);
}

void zero(poplar::Graph &graph, const poplar::Tensor &t, poplar::program::Sequence &prog,
          const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t));
  const poplar::DebugContext debugContext(di);
  fill(graph, t, prog, 0, {debugContext, "zero"});
}

} // namespace popops
