// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_ENCODING_HPP
#define POPOPS_ENCODING_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

namespace popops {

/// Writes `startInteger, startInteger + 1, ...` into the mapped 1-D INT or
/// UNSIGNED_INT tensor `t`.
///
/// Example: `auto idx = graph.addVariable(UNSIGNED_INT, {n}); mapTensorLinearly(graph, idx);
/// popops::iota(graph, idx, 0u, prog);`
void iota(poplar::Graph &graph, const poplar::Tensor &t, unsigned startInteger,
          poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});
void iota(poplar::Graph &graph, const poplar::Tensor &t, int startInteger, poplar::program::Sequence &prog,
          const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
