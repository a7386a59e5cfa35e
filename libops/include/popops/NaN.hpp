// Copyright (c) Aspen contributors.
// Tests for NaN (and infinity) in a float or half tensor, as PopLibs 3.x declares them.
#ifndef POPOPS_NAN_HPP
#define POPOPS_NAN_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

namespace popops {

/// A new scalar bool tensor, true when any element of `src` (any shape, float or
/// half) is a NaN. The check runs in `prog`.
poplar::Tensor hasNaN(poplar::Graph &graph, const poplar::Tensor &src, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {});

/// As hasNaN, true when any element is a NaN or an infinity.
poplar::Tensor hasNaNOrInf(poplar::Graph &graph, const poplar::Tensor &src, poplar::program::Sequence &prog,
                           const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
