// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_CAST_HPP
#define POPOPS_CAST_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

/// A new tensor (laid out like `src`) holding `src` converted to `dstType`:
/// float to half rounds to nearest even, floating point to integer truncates,
/// anything to bool is `x != 0`. With `dstType == src.elementType()` it is a copy.
///
/// Example: `Tensor h = popops::cast(graph, x, poplar::HALF, prog, "toHalf");`
poplar::Tensor cast(poplar::Graph &graph, const poplar::Tensor &src, const poplar::Type &dstType,
                    poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// Converts `src` into the existing tensor `dst` (same shape).
void castWithOutput(poplar::Graph &graph, const poplar::Tensor &src, const poplar::Tensor &dst,
                    poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// A program that converts `src` into `dst` (same shape).
poplar::program::Program cast(poplar::Graph &graph, poplar::Tensor src, poplar::Tensor dst,
                              const poplar::DebugContext &debugContext = {});

/// Adds the vertices converting `src` into `dst` to compute set `cs`.
void cast(poplar::Graph &graph, poplar::Tensor src, poplar::Tensor dst, poplar::ComputeSet cs);

/// Adds vertices converting `src` to `dstType` into `cs`; returns the new tensor.
poplar::Tensor cast(poplar::Graph &graph, poplar::Tensor src, const poplar::Type &dstType,
                    poplar::ComputeSet cs, const poplar::DebugContext &debugContext = {});

/// fp8: casts `src` (FLOAT, HALF or QUARTER) to a new QUARTER tensor whose
/// elements carry `metadata` (a scalar QUARTER_METADATA tensor; its value may be
/// set at run time). Each value x becomes the quarter nearest `x * 2^-scale`
/// (ties to even; NaN, infinities and overflow give NaN). `dstType` must be QUARTER.
/// Casting from QUARTER uses the source's own metadata (the overloads without one).
/// Example:
/// \code
///   auto md = poplar::createVariableMetadataTensor(graph, poplar::QuarterMetadata::Format::F143, -2);
///   auto q = popops::cast(graph, x, poplar::QUARTER, md, prog);
///   auto back = popops::cast(graph, q, poplar::FLOAT, prog);
/// \endcode
poplar::Tensor cast(poplar::Graph &graph, const poplar::Tensor &src, const poplar::Type &dstType,
                    const poplar::Tensor &metadata, poplar::program::Sequence &prog,
                    const poplar::DebugContext &debugContext = {});
poplar::Tensor cast(poplar::Graph &graph, poplar::Tensor src, const poplar::Type &dstType,
                    const poplar::Tensor &metadata, poplar::ComputeSet cs,
                    const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
