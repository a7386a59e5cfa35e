// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file
/// PopLibs' older cross-replica collectives, kept for programs that use them;
/// they run the same collective steps as `gcl::allReduceCrossReplica` and its
/// forms (gcl/Collectives.hpp, docs/replication.md).
#ifndef POPOPS_COLLECTIVES_HPP
#define POPOPS_COLLECTIVES_HPP

#include <popops/Operation.hpp>

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <iosfwd>

namespace popops {

/// The reductions of the replicated collectives.
enum class CollectiveOperator {
  ADD,
  MUL,
  MIN,
  MAX,
  LOGICAL_AND, ///< BOOL operands only.
  LOGICAL_OR,  ///< BOOL operands only.
  SQUARE_ADD,  ///< Squares each element before adding.
  LOCAL,       ///< Keeps the local value.
};

std::istream &operator>>(std::istream &is, CollectiveOperator &op);
std::ostream &operator<<(std::ostream &os, const CollectiveOperator &op);

/// The collective operator of a reduction Operation (LOG_ADD has none: poplibs_error).
CollectiveOperator operationToCollectiveOperator(const Operation &col);

/// Reduces the replicated tensor `data` across all replicas; every replica gets the result.
poplar::Tensor replicatedAllReduce(poplar::Graph &graph, const poplar::Tensor &data, CollectiveOperator op,
                                   poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContext = {},
                                   const poplar::OptionFlags &options = {});
inline poplar::Tensor replicatedAllReduce(poplar::Graph &graph, const poplar::Tensor &data, Operation op,
                                          poplar::program::Sequence &prog,
                                          const poplar::DebugContext &debugContext = {},
                                          const poplar::OptionFlags &options = {}) {
  return replicatedAllReduce(graph, data, operationToCollectiveOperator(op), prog, debugContext, options);
}
/// The form that names the replicated graph's parent (`parentGraph` is not needed by Aspen).
poplar::Tensor replicatedAllReduce(poplar::Graph &graph, poplar::Graph &parentGraph,
                                   const poplar::Tensor &data, CollectiveOperator op,
                                   poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContext = {},
                                   const poplar::OptionFlags &options = {});
inline poplar::Tensor replicatedAllReduce(poplar::Graph &graph, poplar::Graph &parentGraph,
                                          const poplar::Tensor &data, Operation op,
                                          poplar::program::Sequence &prog,
                                          const poplar::DebugContext &debugContext = {},
                                          const poplar::OptionFlags &options = {}) {
  return replicatedAllReduce(graph, parentGraph, data, operationToCollectiveOperator(op), prog, debugContext,
                             options);
}

/// As replicatedAllReduce, writing into `output`.
void replicatedAllReduceWithOutput(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                   CollectiveOperator op, poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContext = {},
                                   const poplar::OptionFlags &options = {});
inline void replicatedAllReduceWithOutput(poplar::Graph &graph, const poplar::Tensor &data,
                                          poplar::Tensor &output, Operation op,
                                          poplar::program::Sequence &prog,
                                          const poplar::DebugContext &debugContext = {},
                                          const poplar::OptionFlags &options = {}) {
  replicatedAllReduceWithOutput(graph, data, output, operationToCollectiveOperator(op), prog, debugContext,
                                options);
}

/// As replicatedAllReduce, writing back into `data`.
void replicatedAllReduceInPlace(poplar::Graph &graph, poplar::Tensor &data, CollectiveOperator op,
                                poplar::program::Sequence &prog,
                                const poplar::DebugContext &debugContext = {},
                                const poplar::OptionFlags &options = {});
inline void replicatedAllReduceInPlace(poplar::Graph &graph, poplar::Tensor &data, Operation op,
                                       poplar::program::Sequence &prog,
                                       const poplar::DebugContext &debugContext = {},
                                       const poplar::OptionFlags &options = {}) {
  replicatedAllReduceInPlace(graph, data, operationToCollectiveOperator(op), prog, debugContext, options);
}

/// Reduces the rank-1 replicated tensor `data` and scatters the result: replica
/// r gets elements [r*c, (r+1)*c), c = ceil(n / replicationFactor), zero-padded.
poplar::Tensor replicatedReduceScatter(poplar::Graph &graph, const poplar::Tensor &data,
                                       CollectiveOperator op, poplar::program::Sequence &prog,
                                       const poplar::DebugContext &debugContext = {},
                                       const poplar::OptionFlags &options = {});

/// Gathers `data` from every replica: shape {replicationFactor, data.shape()...}.
poplar::Tensor replicatedAllGather(poplar::Graph &graph, const poplar::Tensor &data,
                                   poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContext = {},
                                   const poplar::OptionFlags &options = {});

} // namespace popops

#endif
