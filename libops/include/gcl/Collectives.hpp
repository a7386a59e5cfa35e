// Copyright (c) Aspen contributors. Poplar-compatible public API (GCL, Poplar SDK 3.x).
/// \file
/// Collectives between the replicas of a replicated graph (docs/replication.md).
///
/// ```
/// poplar::Graph graph(device.getTarget(), poplar::replication_factor(4));
/// poplar::program::Sequence prog;
/// poplar::Tensor sum = gcl::allReduceCrossReplica(graph, grads, gcl::CollectiveOperator::ADD, prog);
/// ```
/// Every function checks that the graph is replicated, that the group fits the
/// replication factor and that the operator suits the element type, and
/// throws `poplar::poplar_error` naming the tensor otherwise.
#ifndef GCL_COLLECTIVES_HPP
#define GCL_COLLECTIVES_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <istream>
#include <ostream>
#include <vector>

namespace gcl {

/// How the replicas are split into groups that communicate among themselves.
///  - ALL: one group of every replica;
///  - CONSECUTIVE: groups of `replicaGroupSize` neighbouring replicas ({0,1}, {2,3} for size 2);
///  - ORTHOGONAL: groups of `replicaGroupSize` replicas spaced replicationFactor / size apart
///    ({0,2}, {1,3} for size 2 of 4).
enum class CommGroupType { ALL, CONSECUTIVE, ORTHOGONAL };

/// A group kind and its size (0 with ALL: every replica).
struct CommGroup {
  CommGroupType type = CommGroupType::ALL;
  unsigned replicaGroupSize = 0;
  CommGroup() = default;
  CommGroup(const CommGroupType &groupType, unsigned groupSize)
      : type(groupType), replicaGroupSize(groupSize) {}
};

/// The reduction a collective applies across the replicas of a group.
enum class CollectiveOperator {
  ADD,
  MEAN,
  MUL,
  MIN,
  MAX,
  LOGICAL_AND, ///< Only for BOOL tensors.
  LOGICAL_OR,  ///< Only for BOOL tensors.
  SQUARE_ADD,  ///< Adds the squares of the elements.
  LOCAL,       ///< Keeps each replica's own value.
};

/// Reads the enumerator's name ("ADD", "MEAN", ...).
std::istream &operator>>(std::istream &is, CollectiveOperator &op);
/// Writes the enumerator's name.
std::ostream &operator<<(std::ostream &os, const CollectiveOperator &op);

// ---- all-reduce ----------------------------------------------------------------------------

/// Reduces `data` across the replicas of each group with `op`; every replica
/// gets the result in a new tensor mapped like `data`.
poplar::Tensor allReduceCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, CollectiveOperator op,
                                     poplar::program::Sequence &prog, const CommGroup &group,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});
poplar::Tensor allReduceCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, CollectiveOperator op,
                                     poplar::program::Sequence &prog,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});
/// Several tensors at once (each reduced on its own).
std::vector<poplar::Tensor>
allReduceCrossReplica(poplar::Graph &graph, const std::vector<poplar::Tensor> &datas, CollectiveOperator op,
                      poplar::program::Sequence &prog, const CommGroup &group,
                      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});
std::vector<poplar::Tensor> allReduceCrossReplica(poplar::Graph &graph,
                                                  const std::vector<poplar::Tensor> &datas,
                                                  CollectiveOperator op, poplar::program::Sequence &prog,
                                                  const poplar::DebugContext &debugContext = {},
                                                  const poplar::OptionFlags &options = {});

/// As allReduceCrossReplica, writing the result into `destination` (same shape and type).
void allReduceToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                        poplar::Tensor &destination, CollectiveOperator op,
                                        poplar::program::Sequence &prog, const CommGroup &group,
                                        const poplar::DebugContext &debugContext = {},
                                        const poplar::OptionFlags &options = {});
void allReduceToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                        poplar::Tensor &destination, CollectiveOperator op,
                                        poplar::program::Sequence &prog,
                                        const poplar::DebugContext &debugContext = {},
                                        const poplar::OptionFlags &options = {});
/// The same as allReduceToDestinationCrossReplica (the newer spelling).
void allReduceWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                     CollectiveOperator op, poplar::program::Sequence &prog,
                                     const CommGroup &group, const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});
void allReduceWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                     CollectiveOperator op, poplar::program::Sequence &prog,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});

/// As allReduceCrossReplica, writing the result back into `data`.
void allReduceInPlaceCrossReplica(poplar::Graph &graph, poplar::Tensor &data, CollectiveOperator op,
                                  poplar::program::Sequence &prog, const CommGroup &group,
                                  const poplar::DebugContext &debugContext = {},
                                  const poplar::OptionFlags &options = {});
void allReduceInPlaceCrossReplica(poplar::Graph &graph, poplar::Tensor &data, CollectiveOperator op,
                                  poplar::program::Sequence &prog,
                                  const poplar::DebugContext &debugContext = {},
                                  const poplar::OptionFlags &options = {});
void allReduceInPlaceCrossReplica(poplar::Graph &graph, std::vector<poplar::Tensor> &datas,
                                  CollectiveOperator op, poplar::program::Sequence &prog,
                                  const CommGroup &group, const poplar::DebugContext &debugContext = {},
                                  const poplar::OptionFlags &options = {});
void allReduceInPlaceCrossReplica(poplar::Graph &graph, std::vector<poplar::Tensor> &datas,
                                  CollectiveOperator op, poplar::program::Sequence &prog,
                                  const poplar::DebugContext &debugContext = {},
                                  const poplar::OptionFlags &options = {});

// ---- reduce-scatter and all-gather (replicated tensor sharding) ----------------------------

/// Reduces the flattened `data` (n elements) across each group and gives the
/// replica at position p of its group elements [p*c, (p+1)*c) of the result,
/// c = ceil(n / groupSize), zero-padded past n: a rank-1 tensor of c elements.
poplar::Tensor reduceScatterCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                         CollectiveOperator op, poplar::program::Sequence &prog,
                                         const CommGroup &group,
                                         const poplar::DebugContext &debugContext = {},
                                         const poplar::OptionFlags &options = {});
poplar::Tensor reduceScatterCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                         CollectiveOperator op, poplar::program::Sequence &prog,
                                         const poplar::DebugContext &debugContext = {},
                                         const poplar::OptionFlags &options = {});
void reduceScatterToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                            poplar::Tensor &destination, CollectiveOperator op,
                                            poplar::program::Sequence &prog, const CommGroup &group,
                                            const poplar::DebugContext &debugContext = {},
                                            const poplar::OptionFlags &options = {});
void reduceScatterWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                         poplar::Tensor &output, CollectiveOperator op,
                                         poplar::program::Sequence &prog, const CommGroup &group,
                                         const poplar::DebugContext &debugContext = {},
                                         const poplar::OptionFlags &options = {});

/// Gathers `data` from every replica of each group: a tensor of shape
/// {groupSize, data.shape()...} whose row q is the data of the group's q-th replica.
poplar::Tensor allGatherCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                     poplar::program::Sequence &prog, const CommGroup &group,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});
poplar::Tensor allGatherCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                     poplar::program::Sequence &prog,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});
std::vector<poplar::Tensor> allGatherCrossReplica(poplar::Graph &graph,
                                                  const std::vector<poplar::Tensor> &datas,
                                                  poplar::program::Sequence &prog, const CommGroup &group,
                                                  const poplar::DebugContext &debugContext = {},
                                                  const poplar::OptionFlags &options = {});
void allGatherToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                        poplar::Tensor &destination, poplar::program::Sequence &prog,
                                        const CommGroup &group, const poplar::DebugContext &debugContext = {},
                                        const poplar::OptionFlags &options = {});
void allGatherWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                     poplar::program::Sequence &prog, const CommGroup &group,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});

// ---- all-to-all and broadcast ----------------------------------------------------------------

/// Splits the flattened `data` into groupSize equal blocks; block q of the
/// replica at position p goes to block p of the replica at position q.
poplar::Tensor allToAllCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                    poplar::program::Sequence &prog, const CommGroup &group,
                                    const poplar::DebugContext &debugContext = {},
                                    const poplar::OptionFlags &options = {});
poplar::Tensor allToAllCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                    poplar::program::Sequence &prog,
                                    const poplar::DebugContext &debugContext = {},
                                    const poplar::OptionFlags &options = {});

/// Every replica of a group gets the `data` of the group's replica at
/// position `rootReplica`.
poplar::Tensor broadcastCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                     poplar::program::Sequence &prog, const CommGroup &group = {},
                                     unsigned rootReplica = 0, const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});

// ---- within a replica: between its IPUs --------------------------------------------------------

/// A piece of a tensor on one IPU.
struct Chunk {
  poplar::Tensor tensor;
  unsigned index = 0;  ///< The IPU (ring position) it is on.
  unsigned offset = 0; ///< Offset within the rank (model-parallel index).
  Chunk() = default;
  Chunk(poplar::Tensor tensor, unsigned index, unsigned offset)
      : tensor(tensor), index(index), offset(offset) {}
};

/// The chunks a reduce-scatter produces: chunk i on IPU i.
struct Chunks {
  poplar::Tensor originalInput; ///< The input of the reduce-scatter.
  std::vector<Chunk> chunks;
  Chunks() = default;
  explicit Chunks(unsigned size) : chunks(size) {}
};

/// Reduces `toReduce` ({numIPUs, n}, row i on IPU i) across its rows; chunk i
/// (on IPU i) holds elements [i*c, (i+1)*c) of the reduction, c = ceil(n / numIPUs),
/// zero past n.
Chunks reduceScatterWithinReplica(poplar::Graph &graph, const poplar::Tensor &toReduce, CollectiveOperator op,
                                  poplar::program::Sequence &prog,
                                  const poplar::DebugContext &debugContext = {},
                                  const poplar::OptionFlags &options = {});
/// Gathers the chunks onto every IPU: {numIPUs, n}, row i on IPU i (n from
/// `originalInput` when set, else every chunk's elements).
poplar::Tensor allGatherWithinReplica(poplar::Graph &graph, const Chunks &toGather,
                                      poplar::program::Sequence &prog,
                                      const poplar::DebugContext &debugContext = {},
                                      const poplar::OptionFlags &options = {});
/// Reduces `toReduce` ({numIPUs, n}, row i on IPU i) across its rows; every
/// row of the result (row i on IPU i) holds the reduction.
poplar::Tensor allReduceWithinReplica(poplar::Graph &graph, const poplar::Tensor &toReduce,
                                      CollectiveOperator op, poplar::program::Sequence &prog,
                                      const poplar::DebugContext &debugContext = {},
                                      const poplar::OptionFlags &options = {});

} // namespace gcl

#endif // GCL_COLLECTIVES_HPP
