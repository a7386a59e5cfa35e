// Copyright (c) Aspen contributors.
// What popnn's softmax-based operations share.
#pragma once

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popnn::internal {

/// The factor SOFTMAX_SCALED multiplies its outputs by (as in PopLibs): large,
/// to use more of half's range, but far enough below 65504 that rounding
/// cannot overflow.
constexpr float kSoftmaxScaling = 62000.0f;

/// Replaces each row (innermost dimension) of `t` by `outputScale * softmax`
/// or, with `logOutput`, by log(softmax), in one compute set.
void softmaxRowsInPlace(poplar::Graph &graph, const poplar::Tensor &t, float outputScale, bool logOutput,
                        poplar::program::Sequence &prog, const poplar::DebugContext &dc);

} // namespace popnn::internal
