// Copyright (c) Aspen contributors.
// GCL's cross-replica collectives: argument checks, output tensors, and one
// Collective program per call (the runtime moves the bytes; docs/replication.md).
#include "gcl/Collectives.hpp"

#include "common/OpDebugInfo.hpp"
#include "ir/Collective.hpp"
#include "poplar/exceptions.hpp"
#include "poputil/TileMapping.hpp"
#include "util/DistEnvironment.hpp"

#include <sstream>
#include <string>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const gcl::CollectiveOperator &op) {
  return aspen::ops::streamedProfileValue(op);
}
template <> poplar::ProfileValue toProfileValue(const gcl::CommGroup &g) {
  static const char *const types[] = {"ALL", "CONSECUTIVE", "ORTHOGONAL"};
  const auto t = static_cast<std::size_t>(g.type);
  return poplar::ProfileValue::Map{{"type", poplar::ProfileValue(t < 3 ? types[t] : "?")},
                                   {"replicaGroupSize", poplar::ProfileValue(g.replicaGroupSize)}};
}
template <> poplar::ProfileValue toProfileValue(const gcl::Chunks &c) {
  return poplar::ProfileValue::Map{{"originalInput", toProfileValue(c.originalInput)},
                                   {"chunks", poplar::ProfileValue(c.chunks.size())}};
}
} // namespace poputil

namespace gcl {

namespace {

using aspen::ir::CollectiveKind;
using aspen::ir::CollectiveOp;
using aspen::ir::CollectiveSpec;
using aspen::ir::CommGroupKind;

const char *opName(CollectiveOperator op) {
  switch (op) {
  case CollectiveOperator::ADD:
    return "ADD";
  case CollectiveOperator::MEAN:
    return "MEAN";
  case CollectiveOperator::MUL:
    return "MUL";
  case CollectiveOperator::MIN:
    return "MIN";
  case CollectiveOperator::MAX:
    return "MAX";
  case CollectiveOperator::LOGICAL_AND:
    return "LOGICAL_AND";
  case CollectiveOperator::LOGICAL_OR:
    return "LOGICAL_OR";
  case CollectiveOperator::SQUARE_ADD:
    return "SQUARE_ADD";
  case CollectiveOperator::LOCAL:
    return "LOCAL";
  }
  return "?";
}

CollectiveOp toOp(CollectiveOperator op) {
  switch (op) {
  case CollectiveOperator::ADD:
    return CollectiveOp::Add;
  case CollectiveOperator::MEAN:
    return CollectiveOp::Mean;
  case CollectiveOperator::MUL:
    return CollectiveOp::Mul;
  case CollectiveOperator::MIN:
    return CollectiveOp::Min;
  case CollectiveOperator::MAX:
    return CollectiveOp::Max;
  case CollectiveOperator::LOGICAL_AND:
    return CollectiveOp::LogicalAnd;
  case CollectiveOperator::LOGICAL_OR:
    return CollectiveOp::LogicalOr;
  case CollectiveOperator::SQUARE_ADD:
    return CollectiveOp::SquareAdd;
  case CollectiveOperator::LOCAL:
    return CollectiveOp::Local;
  }
  throw poplar::poplar_error("gcl: unknown CollectiveOperator " + std::to_string(static_cast<int>(op)));
}

const char *groupName(CommGroupType t) {
  return t == CommGroupType::ALL ? "ALL" : t == CommGroupType::CONSECUTIVE ? "CONSECUTIVE" : "ORTHOGONAL";
}

/// The checked spec of a collective `what` on `data`: a replicated graph, a
/// group that fits the replication factor.
CollectiveSpec makeSpec(const poplar::Graph &graph, const char *what, const poplar::Tensor &data,
                        CollectiveKind kind, const CommGroup &group) {
  const std::string prefix = std::string("gcl::") + what + ": ";
  if (!data.valid())
    throw poplar::poplar_error(prefix + "the tensor is empty (default-constructed)");
  // Groups span every instance's replicas when the program runs as several instances.
  const unsigned R = aspen::dist::globalReplicationFactor(graph.getReplicationFactor(),
                                                          (std::string("gcl::") + what).c_str());
  if (R < 2)
    throw poplar::poplar_error(prefix + "the graph of tensor " + data.shortString() +
                               " is not replicated (replication factor " + std::to_string(R) +
                               "): make it with Graph(target, replication_factor(n)), n > 1");
  CollectiveSpec spec;
  spec.kind = kind;
  const unsigned k = group.replicaGroupSize;
  switch (group.type) {
  case CommGroupType::ALL:
    if (k != 0 && k != R)
      throw poplar::poplar_error(prefix + "CommGroup ALL of size " + std::to_string(k) +
                                 " does not match the replication factor " + std::to_string(R) +
                                 " (use size 0 or " + std::to_string(R) + ")");
    spec.group = CommGroupKind::All;
    spec.groupSize = R;
    break;
  case CommGroupType::CONSECUTIVE:
  case CommGroupType::ORTHOGONAL:
    if (k == 0 || R % k != 0)
      throw poplar::poplar_error(prefix + "CommGroup " + groupName(group.type) + " of size " +
                                 std::to_string(k) + " does not divide the replication factor " +
                                 std::to_string(R));
    spec.group =
        group.type == CommGroupType::CONSECUTIVE ? CommGroupKind::Consecutive : CommGroupKind::Orthogonal;
    spec.groupSize = k;
    break;
  default:
    throw poplar::poplar_error(prefix + "unknown CommGroupType " +
                               std::to_string(static_cast<int>(group.type)));
  }
  return spec;
}

void checkOperator(const char *what, const poplar::Tensor &data, CollectiveOperator op) {
  const poplar::Type t = data.elementType();
  const bool logical = op == CollectiveOperator::LOGICAL_AND || op == CollectiveOperator::LOGICAL_OR;
  if (logical && t != poplar::BOOL)
    throw poplar::poplar_error(std::string("gcl::") + what + ": operator " + opName(op) +
                               " needs a BOOL tensor but " + data.shortString() + " is " +
                               std::string(t.toString()));
  const bool numeric = t == poplar::FLOAT || t == poplar::HALF || t == poplar::INT ||
                       t == poplar::UNSIGNED_INT || t == poplar::SHORT || t == poplar::UNSIGNED_SHORT ||
                       t == poplar::CHAR || t == poplar::SIGNED_CHAR || t == poplar::UNSIGNED_CHAR ||
                       t == poplar::BOOL || t == poplar::LONGLONG || t == poplar::UNSIGNED_LONGLONG;
  if (!numeric)
    throw poplar::poplar_error(std::string("gcl::") + what + ": cannot reduce tensor " + data.shortString() +
                               " of type " + std::string(t.toString()));
}

void checkDestination(const char *what, const poplar::Tensor &dst, const poplar::Type &type,
                      std::size_t elements) {
  if (!dst.valid() || dst.elementType() != type || dst.numElements() != elements)
    throw poplar::poplar_error(std::string("gcl::") + what + ": the destination " +
                               (dst.valid() ? dst.shortString() : std::string("(empty)")) + " must hold " +
                               std::to_string(elements) + " " + std::string(type.toString()) + " elements");
}

void record(poplar::program::Sequence &prog, const CollectiveSpec &spec, const poplar::Tensor &src,
            const poplar::Tensor &dst, const poplar::DebugContext &dc, const char *what) {
  poplar::DebugContext named = dc.getPathName().empty() ? poplar::DebugContext(what) : dc;
  prog.add(aspen::ir::makeCollectiveProgram(spec, src, dst, named));
}

/// A new rank-1 tensor of `n` elements spread over the tiles of `graph`.
poplar::Tensor newFlat(poplar::Graph &graph, const poplar::Type &type, std::size_t n,
                       const poplar::DebugContext &dc) {
  poplar::Tensor t = graph.addVariable(type, {n}, {dc, "out"});
  poputil::mapTensorLinearly(graph, t);
  return t;
}

} // namespace

std::istream &operator>>(std::istream &is, CollectiveOperator &op) {
  std::string token;
  is >> token;
  for (CollectiveOperator o :
       {CollectiveOperator::ADD, CollectiveOperator::MEAN, CollectiveOperator::MUL, CollectiveOperator::MIN,
        CollectiveOperator::MAX, CollectiveOperator::LOGICAL_AND, CollectiveOperator::LOGICAL_OR,
        CollectiveOperator::SQUARE_ADD, CollectiveOperator::LOCAL})
    if (token == opName(o)) {
      op = o;
      return is;
    }
  throw poplar::poplar_error("gcl: unknown collective operator '" + token + "'");
}

std::ostream &operator<<(std::ostream &os, const CollectiveOperator &op) {
  return os << opName(op);
}

// ---- all-reduce ----------------------------------------------------------------------------

void allReduceToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                        poplar::Tensor &destination, CollectiveOperator op,
                                        poplar::program::Sequence &prog, const CommGroup &group,
                                        const poplar::DebugContext &debugContextIn,
                                        const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, destination, op, group));
  const poplar::DebugContext debugContext(di);
  const char *what = "allReduceCrossReplica";
  CollectiveSpec spec = makeSpec(graph, what, data, CollectiveKind::AllReduce, group);
  checkOperator(what, data, op);
  checkDestination(what, destination, data.elementType(), data.numElements());
  spec.op = toOp(op);
  record(prog, spec, data.flatten(), destination.flatten(), debugContext, what);
}

void allReduceToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                        poplar::Tensor &destination, CollectiveOperator op,
                                        poplar::program::Sequence &prog,
                                        const poplar::DebugContext &debugContextIn,
                                        const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, destination, op, options));
  const poplar::DebugContext debugContext(di);
  allReduceToDestinationCrossReplica(graph, data, destination, op, prog, CommGroup(), debugContext, options);
}

void allReduceWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                     CollectiveOperator op, poplar::program::Sequence &prog,
                                     const CommGroup &group, const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, output, op, group, options));
  const poplar::DebugContext debugContext(di);
  allReduceToDestinationCrossReplica(graph, data, output, op, prog, group, debugContext, options);
}

void allReduceWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                     CollectiveOperator op, poplar::program::Sequence &prog,
                                     const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, output, op, options));
  const poplar::DebugContext debugContext(di);
  allReduceToDestinationCrossReplica(graph, data, output, op, prog, CommGroup(), debugContext, options);
}

poplar::Tensor allReduceCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, CollectiveOperator op,
                                     poplar::program::Sequence &prog, const CommGroup &group,
                                     const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, op, group, options));
  const poplar::DebugContext debugContext(di);
  makeSpec(graph, "allReduceCrossReplica", data, CollectiveKind::AllReduce, group); // checks before cloning
  poplar::Tensor out = graph.clone(data, {debugContext, "allReduceOut"});
  allReduceToDestinationCrossReplica(graph, data, out, op, prog, group, debugContext, options);
  return out;
}

poplar::Tensor allReduceCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, CollectiveOperator op,
                                     poplar::program::Sequence &prog,
                                     const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, op, options));
  const poplar::DebugContext debugContext(di);
  return allReduceCrossReplica(graph, data, op, prog, CommGroup(), debugContext, options);
}

std::vector<poplar::Tensor>
allReduceCrossReplica(poplar::Graph &graph, const std::vector<poplar::Tensor> &datas, CollectiveOperator op,
                      poplar::program::Sequence &prog, const CommGroup &group,
                      const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(datas, op, group, options));
  const poplar::DebugContext debugContext(di);
  std::vector<poplar::Tensor> out;
  for (const poplar::Tensor &t : datas)
    out.push_back(allReduceCrossReplica(graph, t, op, prog, group, debugContext, options));
  return out;
}

std::vector<poplar::Tensor> allReduceCrossReplica(poplar::Graph &graph,
                                                  const std::vector<poplar::Tensor> &datas,
                                                  CollectiveOperator op, poplar::program::Sequence &prog,
                                                  const poplar::DebugContext &debugContextIn,
                                                  const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(datas, op, options));
  const poplar::DebugContext debugContext(di);
  return allReduceCrossReplica(graph, datas, op, prog, CommGroup(), debugContext, options);
}

void allReduceInPlaceCrossReplica(poplar::Graph &graph, poplar::Tensor &data, CollectiveOperator op,
                                  poplar::program::Sequence &prog, const CommGroup &group,
                                  const poplar::DebugContext &debugContextIn,
                                  const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, op, group, options));
  const poplar::DebugContext debugContext(di);
  allReduceToDestinationCrossReplica(graph, data, data, op, prog, group, debugContext, options);
}

void allReduceInPlaceCrossReplica(poplar::Graph &graph, poplar::Tensor &data, CollectiveOperator op,
                                  poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                                  const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, op, options));
  const poplar::DebugContext debugContext(di);
  allReduceInPlaceCrossReplica(graph, data, op, prog, CommGroup(), debugContext, options);
}

void allReduceInPlaceCrossReplica(poplar::Graph &graph, std::vector<poplar::Tensor> &datas,
                                  CollectiveOperator op, poplar::program::Sequence &prog,
                                  const CommGroup &group, const poplar::DebugContext &debugContextIn,
                                  const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(datas, op, group, options));
  const poplar::DebugContext debugContext(di);
  for (poplar::Tensor &t : datas)
    allReduceInPlaceCrossReplica(graph, t, op, prog, group, debugContext, options);
}

void allReduceInPlaceCrossReplica(poplar::Graph &graph, std::vector<poplar::Tensor> &datas,
                                  CollectiveOperator op, poplar::program::Sequence &prog,
                                  const poplar::DebugContext &debugContextIn,
                                  const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(datas, op, options));
  const poplar::DebugContext debugContext(di);
  allReduceInPlaceCrossReplica(graph, datas, op, prog, CommGroup(), debugContext, options);
}

// ---- reduce-scatter ----------------------------------------------------------------------------

void reduceScatterToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                            poplar::Tensor &destination, CollectiveOperator op,
                                            poplar::program::Sequence &prog, const CommGroup &group,
                                            const poplar::DebugContext &debugContextIn,
                                            const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, destination, op, group));
  const poplar::DebugContext debugContext(di);
  const char *what = "reduceScatterCrossReplica";
  CollectiveSpec spec = makeSpec(graph, what, data, CollectiveKind::ReduceScatter, group);
  checkOperator(what, data, op);
  const std::size_t chunk = (data.numElements() + spec.groupSize - 1) / spec.groupSize;
  checkDestination(what, destination, data.elementType(), chunk);
  spec.op = toOp(op);
  record(prog, spec, data.flatten(), destination.flatten(), debugContext, what);
}

void reduceScatterWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                         poplar::Tensor &output, CollectiveOperator op,
                                         poplar::program::Sequence &prog, const CommGroup &group,
                                         const poplar::DebugContext &debugContextIn,
                                         const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, output, op, group, options));
  const poplar::DebugContext debugContext(di);
  reduceScatterToDestinationCrossReplica(graph, data, output, op, prog, group, debugContext, options);
}

poplar::Tensor reduceScatterCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                         CollectiveOperator op, poplar::program::Sequence &prog,
                                         const CommGroup &group, const poplar::DebugContext &debugContextIn,
                                         const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, op, group, options));
  const poplar::DebugContext debugContext(di);
  const CollectiveSpec spec =
      makeSpec(graph, "reduceScatterCrossReplica", data, CollectiveKind::ReduceScatter, group);
  const std::size_t chunk = (data.numElements() + spec.groupSize - 1) / spec.groupSize;
  poplar::Tensor out = newFlat(graph, data.elementType(), chunk, debugContext);
  reduceScatterToDestinationCrossReplica(graph, data, out, op, prog, group, debugContext, options);
  return out;
}

poplar::Tensor reduceScatterCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                         CollectiveOperator op, poplar::program::Sequence &prog,
                                         const poplar::DebugContext &debugContextIn,
                                         const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, op, options));
  const poplar::DebugContext debugContext(di);
  return reduceScatterCrossReplica(graph, data, op, prog, CommGroup(), debugContext, options);
}

// ---- all-gather ----------------------------------------------------------------------------------

void allGatherToDestinationCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                        poplar::Tensor &destination, poplar::program::Sequence &prog,
                                        const CommGroup &group, const poplar::DebugContext &debugContextIn,
                                        const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, destination, group));
  const poplar::DebugContext debugContext(di);
  const char *what = "allGatherCrossReplica";
  CollectiveSpec spec = makeSpec(graph, what, data, CollectiveKind::AllGather, group);
  checkDestination(what, destination, data.elementType(), data.numElements() * spec.groupSize);
  record(prog, spec, data.flatten(), destination.flatten(), debugContext, what);
}

void allGatherWithOutputCrossReplica(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                     poplar::program::Sequence &prog, const CommGroup &group,
                                     const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, output, group, options));
  const poplar::DebugContext debugContext(di);
  allGatherToDestinationCrossReplica(graph, data, output, prog, group, debugContext, options);
}

poplar::Tensor allGatherCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                     poplar::program::Sequence &prog, const CommGroup &group,
                                     const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, group, options));
  const poplar::DebugContext debugContext(di);
  const CollectiveSpec spec =
      makeSpec(graph, "allGatherCrossReplica", data, CollectiveKind::AllGather, group);
  // Row q is mapped like the input: each replica's copy stays on the input's tiles.
  std::vector<poplar::Tensor> rows;
  for (unsigned q = 0; q < spec.groupSize; ++q)
    rows.push_back(graph.clone(data, {debugContext, "allGatherOut"}).expand({0}));
  poplar::Tensor out = poplar::concat(rows, 0);
  allGatherToDestinationCrossReplica(graph, data, out, prog, group, debugContext, options);
  return out;
}

poplar::Tensor allGatherCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                     poplar::program::Sequence &prog,
                                     const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, options));
  const poplar::DebugContext debugContext(di);
  return allGatherCrossReplica(graph, data, prog, CommGroup(), debugContext, options);
}

std::vector<poplar::Tensor> allGatherCrossReplica(poplar::Graph &graph,
                                                  const std::vector<poplar::Tensor> &datas,
                                                  poplar::program::Sequence &prog, const CommGroup &group,
                                                  const poplar::DebugContext &debugContextIn,
                                                  const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(datas, group, options));
  const poplar::DebugContext debugContext(di);
  std::vector<poplar::Tensor> out;
  for (const poplar::Tensor &t : datas)
    out.push_back(allGatherCrossReplica(graph, t, prog, group, debugContext, options));
  return out;
}

// ---- all-to-all and broadcast --------------------------------------------------------------------

poplar::Tensor allToAllCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                    poplar::program::Sequence &prog, const CommGroup &group,
                                    const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, group));
  const poplar::DebugContext debugContext(di);
  const char *what = "allToAllCrossReplica";
  const CollectiveSpec spec = makeSpec(graph, what, data, CollectiveKind::AllToAll, group);
  if (data.numElements() % spec.groupSize != 0)
    throw poplar::poplar_error(std::string("gcl::") + what + ": tensor " + data.shortString() + " has " +
                               std::to_string(data.numElements()) +
                               " elements, not a multiple of the group size " +
                               std::to_string(spec.groupSize));
  poplar::Tensor out = graph.clone(data, {debugContext, "allToAllOut"});
  record(prog, spec, data.flatten(), out.flatten(), debugContext, what);
  return out;
}

poplar::Tensor allToAllCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                    poplar::program::Sequence &prog,
                                    const poplar::DebugContext &debugContextIn,
                                    const poplar::OptionFlags &options) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, options));
  const poplar::DebugContext debugContext(di);
  return allToAllCrossReplica(graph, data, prog, CommGroup(), debugContext, options);
}

poplar::Tensor broadcastCrossReplica(poplar::Graph &graph, const poplar::Tensor &data,
                                     poplar::program::Sequence &prog, const CommGroup &group,
                                     unsigned rootReplica, const poplar::DebugContext &debugContextIn,
                                     const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(data, group, rootReplica));
  const poplar::DebugContext debugContext(di);
  const char *what = "broadcastCrossReplica";
  CollectiveSpec spec = makeSpec(graph, what, data, CollectiveKind::Broadcast, group);
  if (rootReplica >= spec.groupSize)
    throw poplar::poplar_error(std::string("gcl::") + what + ": root replica " + std::to_string(rootReplica) +
                               " is out of range: the groups have " + std::to_string(spec.groupSize) +
                               " replicas");
  spec.root = rootReplica;
  poplar::Tensor out = graph.clone(data, {debugContext, "broadcastOut"});
  record(prog, spec, data.flatten(), out.flatten(), debugContext, what);
  return out;
}

} // namespace gcl

// ---- within a replica -------------------------------------------------------------------------

namespace gcl {

namespace {

/// The spec of a collective between the IPUs of a replica on `toReduce`
/// ({numIPUs, n}).
CollectiveSpec withinSpec(const poplar::Graph &graph, const char *what, const poplar::Tensor &t,
                          CollectiveKind kind) {
  const std::string prefix = std::string("gcl::") + what + ": ";
  if (!t.valid())
    throw poplar::poplar_error(prefix + "the tensor is empty (default-constructed)");
  const unsigned ipus = graph.getTarget().getNumIPUs();
  if (t.rank() != 2 || t.dim(0) != ipus)
    throw poplar::poplar_error(prefix + "tensor " + t.shortString() + " must have shape {" +
                               std::to_string(ipus) + ", n}: one row per IPU of the graph");
  CollectiveSpec spec;
  spec.kind = kind;
  spec.group = CommGroupKind::All;
  spec.groupSize = ipus;
  return spec;
}

/// A {rows, n} variable with row i spread over the tiles of IPU i.
poplar::Tensor perIpuRows(poplar::Graph &graph, const poplar::Type &type, std::size_t n,
                          const poplar::DebugContext &dc) {
  const unsigned ipus = graph.getTarget().getNumIPUs(), tiles = graph.getTarget().getTilesPerIPU();
  poplar::Tensor t = graph.addVariable(type, {ipus, n}, {dc, "out"});
  for (unsigned i = 0; i < ipus; ++i) {
    poplar::Graph ipu = graph.createVirtualGraph(i * tiles, (i + 1) * tiles);
    poputil::mapTensorLinearly(ipu, t[i]);
  }
  return t;
}

} // namespace

Chunks reduceScatterWithinReplica(poplar::Graph &graph, const poplar::Tensor &toReduce, CollectiveOperator op,
                                  poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                                  const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(toReduce, op));
  const poplar::DebugContext debugContext(di);
  const char *what = "reduceScatterWithinReplica";
  CollectiveSpec spec = withinSpec(graph, what, toReduce, CollectiveKind::ReduceScatterWithin);
  checkOperator(what, toReduce, op);
  spec.op = toOp(op);
  const std::size_t c = (toReduce.dim(1) + spec.groupSize - 1) / spec.groupSize;
  poplar::Tensor out = perIpuRows(graph, toReduce.elementType(), c, debugContext);
  record(prog, spec, toReduce.flatten(), out.flatten(), debugContext, what);
  Chunks chunks(spec.groupSize);
  chunks.originalInput = toReduce;
  for (unsigned i = 0; i < spec.groupSize; ++i)
    chunks.chunks[i] = Chunk(out[i], i, 0);
  return chunks;
}

poplar::Tensor allGatherWithinReplica(poplar::Graph &graph, const Chunks &toGather,
                                      poplar::program::Sequence &prog,
                                      const poplar::DebugContext &debugContextIn,
                                      const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(toGather));
  const poplar::DebugContext debugContext(di);
  const char *what = "allGatherWithinReplica";
  const unsigned ipus = graph.getTarget().getNumIPUs();
  if (toGather.chunks.size() != ipus)
    throw poplar::poplar_error(std::string("gcl::") + what + ": " + std::to_string(toGather.chunks.size()) +
                               " chunks given for a graph of " + std::to_string(ipus) + " IPUs");
  std::vector<poplar::Tensor> rows(ipus);
  for (const Chunk &c : toGather.chunks) {
    if (c.index >= ipus || rows[c.index].valid())
      throw poplar::poplar_error(std::string("gcl::") + what + ": chunk index " + std::to_string(c.index) +
                                 " is out of range or repeated");
    rows[c.index] = c.tensor.flatten();
  }
  for (const poplar::Tensor &r : rows)
    if (r.numElements() != rows[0].numElements())
      throw poplar::poplar_error(std::string("gcl::") + what + ": the chunks differ in size");
  poplar::Tensor in = poplar::concat(rows).reshape({ipus, rows[0].numElements()});
  CollectiveSpec spec = withinSpec(graph, what, in, CollectiveKind::AllGatherWithin);
  poplar::Tensor out = perIpuRows(graph, in.elementType(), ipus * rows[0].numElements(), debugContext);
  record(prog, spec, in.flatten(), out.flatten(), debugContext, what);
  if (toGather.originalInput.valid() && toGather.originalInput.rank() == 2 &&
      toGather.originalInput.dim(1) <= out.dim(1))
    return out.slice(0, toGather.originalInput.dim(1), 1);
  return out;
}

poplar::Tensor allReduceWithinReplica(poplar::Graph &graph, const poplar::Tensor &toReduce,
                                      CollectiveOperator op, poplar::program::Sequence &prog,
                                      const poplar::DebugContext &debugContextIn,
                                      const poplar::OptionFlags &) {
  aspen::ops::GclDebugInfo di(debugContextIn, DI_ARGS(toReduce, op));
  const poplar::DebugContext debugContext(di);
  const char *what = "allReduceWithinReplica";
  CollectiveSpec spec = withinSpec(graph, what, toReduce, CollectiveKind::AllReduceWithin);
  checkOperator(what, toReduce, op);
  spec.op = toOp(op);
  poplar::Tensor out = graph.clone(toReduce, {debugContext, "allReduceWithinOut"});
  record(prog, spec, toReduce.flatten(), out.flatten(), debugContext, what);
  return out;
}

} // namespace gcl
