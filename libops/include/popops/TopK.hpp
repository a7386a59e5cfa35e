// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_TOPK_HPP
#define POPOPS_TOPK_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <popops/SortOrder.hpp>

#include <iosfwd>
#include <utility>
#include <vector>

namespace popops {

/// Parameters of the topK operations: how many (`k`, at most the innermost
/// dimension), largest or smallest, and the order of the result (NONE gives the
/// same order as the sorted direction of `largest`). Ties keep input order.
struct TopKParams {
  unsigned k;
  bool largest;
  SortOrder sortOrder;
  bool stableSort;
  TopKParams(unsigned k, bool largest, SortOrder sortOrder, bool stableSort = false) noexcept
      : k(k), largest(largest), sortOrder(sortOrder), stableSort(stableSort) {}
};

std::ostream &operator<<(std::ostream &os, const TopKParams &p);

/// A tensor of `shape` laid out for use as the input of a topK.
poplar::Tensor createTopKInput(poplar::Graph &graph, const poplar::Type &type,
                               const std::vector<std::size_t> &shape, const TopKParams &params,
                               const poplar::DebugContext &debugContext = {});

/// The top `k` values of each innermost row of `t` (shape `{..., k}`).
///
/// Example: `Tensor best = popops::topK(graph, prog, logits, {5, true, popops::SortOrder::DESCENDING});`
poplar::Tensor topK(poplar::Graph &graph, poplar::program::Sequence &prog, const poplar::Tensor &t,
                    const TopKParams &params, const poplar::DebugContext &debugContext = {});

/// The top `k` keys of each row and the `values` permuted alongside them.
std::pair<poplar::Tensor, poplar::Tensor> topKKeyValue(poplar::Graph &graph, poplar::program::Sequence &prog,
                                                       const poplar::Tensor &keys,
                                                       const poplar::Tensor &values, const TopKParams &params,
                                                       const poplar::DebugContext &debugContext = {});

/// The top `k` values of each row and their UNSIGNED_INT indices within the row.
std::pair<poplar::Tensor, poplar::Tensor>
topKWithPermutation(poplar::Graph &graph, poplar::program::Sequence &prog, const poplar::Tensor &t,
                    const TopKParams &params, const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
