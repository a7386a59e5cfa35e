// Copyright (c) Aspen contributors.
// Partitioning and grouping in the layout of tensors.
#ifndef POPUTIL_VARSTRUCTURE_HPP
#define POPUTIL_VARSTRUCTURE_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>
#include <poputil/Util.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace poputil {

// detectInnermostGrouping, GroupingInfo and detectDimGroupings are declared in
// poputil/Util.hpp (included above), as in PopLibs they are reachable from both headers.

/// A variable of `shape` laid out so that each partition — dimension d cut into
/// `nPartitions[d]` pieces of ceil(shape[d] / nPartitions[d]) elements (the last ones
/// smaller or empty) — is one contiguous region. No tile mapping is set.
/// \throws poputil::poplibs_error if `shape` and `nPartitions` differ in size or a count is 0.
poplar::Tensor createPartitionableTensor(poplar::Graph &graph, const poplar::Type &type,
                                         const std::vector<std::size_t> &shape,
                                         const std::vector<std::size_t> &nPartitions,
                                         const poplar::DebugContext &debugContext = {});

/// Calls `f(i, s)` for each partition of `t` (partitioned as for createPartitionableTensor),
/// in row-major order of the partition index `i`, with `s` the slice of that partition.
/// \throws poputil::poplibs_error if `t.rank()` differs from `nPartitions.size()`.
void iterateTensorPartitions(
    const poplar::Tensor &t, const std::vector<std::size_t> &nPartitions,
    const std::function<void(const std::vector<std::size_t> &i, const poplar::Tensor &s)> &f);

} // namespace poputil

#endif
