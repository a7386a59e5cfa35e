// Copyright (c) Aspen contributors.
// poputil's partition-major variables and iteration over partitions.
#include "poputil/VarStructure.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "poputil/exceptions.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

namespace poputil {

namespace {

std::size_t ceilDiv(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

// The [begin, end) of partition p of a dimension of n elements cut into `parts` pieces.
std::pair<std::size_t, std::size_t> partitionBounds(std::size_t n, std::size_t parts, std::size_t p) {
  const std::size_t each = ceilDiv(n, parts);
  const std::size_t begin = std::min(n, p * each);
  return {begin, std::min(n, begin + each)};
}

} // namespace

poplar::Tensor createPartitionableTensor(poplar::Graph &graph, const poplar::Type &type,
                                         const std::vector<std::size_t> &shape,
                                         const std::vector<std::size_t> &nPartitions,
                                         const poplar::DebugContext &debugContextIn) {
  aspen::ops::PoputilDebugInfo di(debugContextIn, DI_ARGS(type, shape, nPartitions));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poputil::createPartitionableTensor";
  if (shape.size() != nPartitions.size())
    throw poputil::poplibs_error(op + ": the shape " + aspen::ops::shapeString(shape) +
                                 " and the partition counts " + aspen::ops::shapeString(nPartitions) +
                                 " differ in size");
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (nPartitions[d] == 0)
      throw poputil::poplibs_error(op + ": the partition count of dimension " + std::to_string(d) + " is 0");
  const std::size_t total = std::accumulate(shape.begin(), shape.end(), std::size_t(1), std::multiplies<>());
  poplar::Tensor flat = graph.addVariable(type, {total}, {debugContext, "partitionable"});
  if (shape.empty())
    return flat.reshape({});
  std::size_t next = 0;
  // Partitions are cut from `flat` in row-major order of their index, then concatenated back.
  std::function<poplar::Tensor(std::size_t, std::vector<std::pair<std::size_t, std::size_t>> &)> build =
      [&](std::size_t d, std::vector<std::pair<std::size_t, std::size_t>> &bounds) -> poplar::Tensor {
    if (d == shape.size()) {
      std::vector<std::size_t> pshape;
      std::size_t n = 1;
      for (const auto &b : bounds) {
        pshape.push_back(b.second - b.first);
        n *= b.second - b.first;
      }
      poplar::Tensor part = flat.slice(next, next + n).reshape(pshape);
      next += n;
      return part;
    }
    std::vector<poplar::Tensor> parts;
    for (std::size_t p = 0; p < nPartitions[d]; ++p) {
      bounds.push_back(partitionBounds(shape[d], nPartitions[d], p));
      parts.push_back(build(d + 1, bounds));
      bounds.pop_back();
    }
    return poplar::concat(parts, static_cast<unsigned>(d));
  };
  std::vector<std::pair<std::size_t, std::size_t>> bounds;
  return build(0, bounds);
}

void iterateTensorPartitions(
    const poplar::Tensor &t, const std::vector<std::size_t> &nPartitions,
    const std::function<void(const std::vector<std::size_t> &i, const poplar::Tensor &s)> &f) {
  const std::string op = "poputil::iterateTensorPartitions";
  aspen::ops::requireValid(t, op, "the tensor");
  if (t.rank() != nPartitions.size())
    throw poputil::poplibs_error(op + ": the tensor " + aspen::ops::describe(t) + " has rank " +
                                 std::to_string(t.rank()) + " but " + std::to_string(nPartitions.size()) +
                                 " partition counts were given");
  for (std::size_t d = 0; d < nPartitions.size(); ++d)
    if (nPartitions[d] == 0)
      throw poputil::poplibs_error(op + ": the partition count of dimension " + std::to_string(d) + " is 0");
  const std::size_t rank = nPartitions.size();
  std::vector<std::size_t> i(rank, 0);
  while (true) {
    std::vector<std::size_t> begin(rank), end(rank);
    for (std::size_t d = 0; d < rank; ++d)
      std::tie(begin[d], end[d]) = partitionBounds(t.dim(d), nPartitions[d], i[d]);
    f(i, t.slice(begin, end));
    std::size_t d = rank;
    while (d > 0) {
      --d;
      if (++i[d] < nPartitions[d])
        break;
      i[d] = 0;
      if (d == 0)
        return;
    }
    if (rank == 0)
      return;
  }
}

} // namespace poputil
