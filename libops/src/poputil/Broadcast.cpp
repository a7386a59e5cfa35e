// Copyright (c) Aspen contributors.
// Numpy-style broadcasting of tensor views (no data is copied).
#include "poputil/Broadcast.hpp"

#include "common/OpsCommon.hpp"
#include "poputil/exceptions.hpp"

namespace poputil {
namespace {

poplar::Tensor withLeadingOnes(const poplar::Tensor &t, std::size_t rank) {
  if (t.rank() >= rank)
    return t;
  std::vector<std::size_t> shape(rank - t.rank(), 1);
  const auto old = t.shape();
  shape.insert(shape.end(), old.begin(), old.end());
  return t.reshape(shape);
}

// The common shape of two shapes, or false when they do not broadcast.
bool commonShape(const std::vector<std::size_t> &a, const std::vector<std::size_t> &b,
                 std::vector<std::size_t> &out) {
  const std::size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const std::size_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

} // namespace

void expandToMatchRanks(poplar::Tensor &a, poplar::Tensor &b) {
  const auto rank = std::max(a.rank(), b.rank());
  a = withLeadingOnes(a, rank);
  b = withLeadingOnes(b, rank);
}

void broadcastToMatch(poplar::Tensor &a, const std::vector<std::size_t> &shape) {
  if (a.rank() > shape.size())
    throw poplibs_error("poputil::broadcastToMatch: cannot broadcast tensor of shape " +
                        aspen::ops::shapeString(a.shape()) + " to lower-rank shape " +
                        aspen::ops::shapeString(shape));
  poplar::Tensor t = withLeadingOnes(a, shape.size());
  for (unsigned i = 0; i < shape.size(); ++i) {
    if (t.dim(i) == shape[i])
      continue;
    if (t.dim(i) != 1)
      throw poplibs_error("poputil::broadcastToMatch: cannot broadcast tensor of shape " +
                          aspen::ops::shapeString(a.shape()) + " to shape " + aspen::ops::shapeString(shape) +
                          " (dimension " + std::to_string(i) + " is " + std::to_string(t.dim(i)) + ")");
    t = t.broadcast(static_cast<unsigned>(shape[i]), i);
  }
  a = t;
}

void broadcastToMatch(poplar::Tensor &a, poplar::Tensor &b) {
  std::vector<std::size_t> shape;
  if (!commonShape(a.shape(), b.shape(), shape))
    throw poplibs_error("poputil::broadcastToMatch: shapes " + aspen::ops::shapeString(a.shape()) + " and " +
                        aspen::ops::shapeString(b.shape()) + " cannot be broadcast to a common shape");
  broadcastToMatch(a, shape);
  broadcastToMatch(b, shape);
}

void broadcastToMatch(poplar::Tensor &a, poplar::Tensor &b, poplar::Tensor &c) {
  std::vector<std::size_t> ab, abc;
  if (!commonShape(a.shape(), b.shape(), ab) || !commonShape(ab, c.shape(), abc))
    throw poplibs_error("poputil::broadcastToMatch: shapes " + aspen::ops::shapeString(a.shape()) + ", " +
                        aspen::ops::shapeString(b.shape()) + " and " + aspen::ops::shapeString(c.shape()) +
                        " cannot be broadcast to a common shape");
  broadcastToMatch(a, abc);
  broadcastToMatch(b, abc);
  broadcastToMatch(c, abc);
}

bool canBroadcastToMatch(const poplar::Tensor &a, const poplar::Tensor &b) {
  std::vector<std::size_t> shape;
  return commonShape(a.shape(), b.shape(), shape);
}

} // namespace poputil
