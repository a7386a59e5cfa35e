// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_SORT_HPP
#define POPOPS_SORT_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

/// A copy of `t` with every 1-D slice along `dim` sorted ascending.
/// Throws poputil::poplibs_error when `dim` is not a dimension of `t`.
///
/// Example: `Tensor s = popops::sort(graph, scores, 1, prog);`
poplar::Tensor sort(poplar::Graph &graph, const poplar::Tensor &t, unsigned dim,
                    poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// Sorts `t`'s slices along `dim` in place.
void sortInPlace(poplar::Graph &graph, const poplar::Tensor &t, unsigned dim, poplar::program::Sequence &prog,
                 const poplar::DebugContext &debugContext = {});

/// `v` permuted so that its slices along `dim` follow the ascending order of `k`
/// (stable). `k` and `v` must have the same shape.
poplar::Tensor sortKeyValue(poplar::Graph &graph, const poplar::Tensor &k, const poplar::Tensor &v,
                            unsigned dim, poplar::program::Sequence &prog,
                            const poplar::DebugContext &debugContext = {});

/// Sorts `k` in place along `dim` and permutes `v` the same way.
void sortKeyValueInPlace(poplar::Graph &graph, const poplar::Tensor &k, const poplar::Tensor &v, unsigned dim,
                         poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
