// Copyright (c) Aspen contributors.
// The element-wise engine behind popops::map, for other popops builders too.
#pragma once

#include "popops/Expr.hpp"

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <string>
#include <vector>

namespace aspen::ops {

/// Adds to `cs` the vertices that evaluate `expr` over `ts` into `out` (which has the
/// broadcast result's shape and type; `inPlace` means `out` is `ts[0]`). Uses the
/// library's single-operator vertices when the expression is one operator over
/// tensors, else a generated codelet. `opName` prefixes error messages.
void mapIntoComputeSet(poplar::Graph &graph, const popops::expr::Expr &expr,
                       const std::vector<poplar::Tensor> &ts, const poplar::Tensor &out, bool inPlace,
                       poplar::ComputeSet cs, const std::string &opName, bool forceGenerate = false);

/// A new tensor of `type` and `shape` laid out like the best full-size operand of `operands`
/// (not broadcast, not constant), else mapped linearly.
poplar::Tensor createOutputLike(poplar::Graph &graph, const poplar::Type &type,
                                const std::vector<std::size_t> &shape,
                                const std::vector<poplar::Tensor> &operands, const poplar::DebugContext &dc);

} // namespace aspen::ops
