// Copyright (c) Aspen contributors.
// What the convolution asks of the matrix product beyond poplin/MatMul.hpp.
#pragma once

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <poplin/MatMul.hpp>

#include "PlanConstraints.hpp"

namespace poplin::internal {

/// matMulGrouped(A {G, m, k}, B {G, k, n}) where B is a view (a convolution's windows): before
/// the products read it, it is copied into a tensor laid out for them — per serial pass only
/// the rows (inner passes) or columns (column passes) that pass reads, so that the copies of
/// different passes are live one at a time (as PopLibs rearranges a convolution's input per
/// serial slice).
poplar::Tensor matMulGroupedStagedRhs(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,
                                      poplar::program::Sequence &prog, const poplar::Type &outputType,
                                      const poplar::DebugContext &dc, const poplar::OptionFlags &options,
                                      PlanningCache *cache);

/// The splits of the plan matMulGroupedStagedRhs(graph, A, B, prog, outputType, dc, options, cache)
/// builds its product with (the same problem, options and cache; all 1 for an empty product): what
/// a convolution's `planConstraintsOutputFilename` writes.
planning::ProductSplits matMulGroupedStagedRhsSplits(const poplar::Graph &graph, const poplar::Tensor &A,
                                                     const poplar::Tensor &B, const poplar::Type &outputType,
                                                     const poplar::OptionFlags &options,
                                                     PlanningCache *cache);

} // namespace poplin::internal
