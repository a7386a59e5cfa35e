// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPUTIL_BROADCAST_HPP
#define POPUTIL_BROADCAST_HPP

#include <poplar/Tensor.hpp>

#include <cstddef>
#include <vector>

namespace poputil {

/// Inserts outer singleton dimensions into the lower-rank tensor so that `a` and
/// `b` have the same rank (numpy rule).
void expandToMatchRanks(poplar::Tensor &a, poplar::Tensor &b);

/// Broadcasts `a` (numpy rules) to `shape`; throws `poplibs_error` naming both
/// shapes when that is not possible.
///
/// Example: `Tensor b = bias; broadcastToMatch(b, {batch, n});`
void broadcastToMatch(poplar::Tensor &a, const std::vector<std::size_t> &shape);

/// Broadcasts `a` and `b` to their common shape (numpy rules).
void broadcastToMatch(poplar::Tensor &a, poplar::Tensor &b);

/// Broadcasts `a`, `b` and `c` to their common shape (numpy rules).
void broadcastToMatch(poplar::Tensor &a, poplar::Tensor &b, poplar::Tensor &c);

/// True when `a` and `b` can be broadcast to a common shape.
bool canBroadcastToMatch(const poplar::Tensor &a, const poplar::Tensor &b);

} // namespace poputil

#endif
