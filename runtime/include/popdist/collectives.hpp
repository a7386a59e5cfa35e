// Copyright (c) Aspen contributors. PopDist-compatible public API.
#ifndef POPDIST_COLLECTIVES_HPP
#define POPDIST_COLLECTIVES_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

/// Host-side collectives between the instances of a distributed program, over
/// Open MPI (the launcher's own transport). Every instance must make the same
/// calls in the same order with the same sizes. A peer that does not arrive
/// within ASPEN_DIST_TIMEOUT seconds (default 600), or an MPI failure, throws
/// poplar::runtime_error naming the collective; a peer that dies makes the MPI
/// launcher end the whole job.
///
///   std::vector<float> grads = localGradients();
///   popdist::collectives::allReduceSum(grads);   // now the sum over instances
namespace popdist {

unsigned getNumInstances(); // popdist/popdist_poplar.hpp

namespace collectives {

enum class ReduceOp { SUM, PROD, MIN, MAX };

/// Waits until every instance has called it.
void synchronize();

/// Element-wise reduction of `count` elements over all instances, in place.
/// Every instance receives the same, bit-identical result (the reduction order
/// is fixed: instance 0, 1, 2, ...).
void allReduce(float *data, std::size_t count, ReduceOp op);
void allReduce(double *data, std::size_t count, ReduceOp op);
void allReduce(std::int32_t *data, std::size_t count, ReduceOp op);
void allReduce(std::uint32_t *data, std::size_t count, ReduceOp op);
void allReduce(std::int64_t *data, std::size_t count, ReduceOp op);
void allReduce(std::uint64_t *data, std::size_t count, ReduceOp op);

/// Copies `bytes` bytes from `rootInstance` to every instance.
void broadcast(void *data, std::size_t bytes, unsigned rootInstance = 0);

/// Concatenates every instance's `bytes` bytes, in instance order, into
/// `out` (getNumInstances() * bytes bytes).
void allGather(const void *data, std::size_t bytes, void *out);

template <typename T> void allReduceSum(std::vector<T> &values) {
  allReduce(values.data(), values.size(), ReduceOp::SUM);
}
/// The element-wise mean over instances (sum, then divided by the instance count).
template <typename T> void allReduceMean(std::vector<T> &values) {
  allReduce(values.data(), values.size(), ReduceOp::SUM);
  const T instances = static_cast<T>(getNumInstances());
  for (T &value : values) {
    value /= instances;
  }
}
template <typename T> void broadcast(std::vector<T> &values, unsigned rootInstance = 0) {
  broadcast(static_cast<void *>(values.data()), values.size() * sizeof(T), rootInstance);
}

} // namespace collectives
} // namespace popdist

#endif
