// Copyright (c) Aspen contributors.
// popops' older replicated collectives, as forms of the GCL ones. Built into
// libpopops (which links libgcl privately).
#include "popops/Collectives.hpp"

#include "common/OpDebugInfo.hpp"
#include "gcl/Collectives.hpp"
#include "poputil/exceptions.hpp"

#include <istream>
#include <ostream>
#include <sstream>
#include <string>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::CollectiveOperator &op) {
  return aspen::ops::streamedProfileValue(op);
}
} // namespace poputil

namespace popops {

namespace {

gcl::CollectiveOperator toGcl(CollectiveOperator op) {
  switch (op) {
  case CollectiveOperator::ADD:
    return gcl::CollectiveOperator::ADD;
  case CollectiveOperator::MUL:
    return gcl::CollectiveOperator::MUL;
  case CollectiveOperator::MIN:
    return gcl::CollectiveOperator::MIN;
  case CollectiveOperator::MAX:
    return gcl::CollectiveOperator::MAX;
  case CollectiveOperator::LOGICAL_AND:
    return gcl::CollectiveOperator::LOGICAL_AND;
  case CollectiveOperator::LOGICAL_OR:
    return gcl::CollectiveOperator::LOGICAL_OR;
  case CollectiveOperator::SQUARE_ADD:
    return gcl::CollectiveOperator::SQUARE_ADD;
  case CollectiveOperator::LOCAL:
    return gcl::CollectiveOperator::LOCAL;
  }
  throw poputil::poplibs_error("popops: unknown CollectiveOperator " + std::to_string(static_cast<int>(op)));
}

const char *name(CollectiveOperator op) {
  static const char *const names[] = {"ADD",         "MUL",        "MIN",        "MAX",
                                      "LOGICAL_AND", "LOGICAL_OR", "SQUARE_ADD", "LOCAL"};
  const auto i = static_cast<unsigned>(op);
  return i < 8 ? names[i] : "?";
}

} // namespace

std::istream &operator>>(std::istream &is, CollectiveOperator &op) {
  std::string token;
  is >> token;
  for (unsigned i = 0; i < 8; ++i)
    if (token == name(static_cast<CollectiveOperator>(i))) {
      op = static_cast<CollectiveOperator>(i);
      return is;
    }
  throw poputil::poplibs_error("popops: unknown collective operator '" + token + "'");
}

std::ostream &operator<<(std::ostream &os, const CollectiveOperator &op) {
  return os << name(op);
}

CollectiveOperator operationToCollectiveOperator(const Operation &col) {
  switch (col) {
  case Operation::ADD:
    return CollectiveOperator::ADD;
  case Operation::MUL:
    return CollectiveOperator::MUL;
  case Operation::MIN:
    return CollectiveOperator::MIN;
  case Operation::MAX:
    return CollectiveOperator::MAX;
  case Operation::LOGICAL_AND:
    return CollectiveOperator::LOGICAL_AND;
  case Operation::LOGICAL_OR:
    return CollectiveOperator::LOGICAL_OR;
  case Operation::SQUARE_ADD:
    return CollectiveOperator::SQUARE_ADD;
  default:
    break;
  }
  throw poputil::poplibs_error("popops: operation " + toString(col) + " has no collective operator");
}

poplar::Tensor replicatedAllReduce(poplar::Graph &graph, const poplar::Tensor &data, CollectiveOperator op,
                                   poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContextIn,
                                   const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(data, op, options));
  const poplar::DebugContext debugContext(di);
  return gcl::allReduceCrossReplica(graph, data, toGcl(op), prog, debugContext, options);
}

poplar::Tensor replicatedAllReduce(poplar::Graph &graph, poplar::Graph &, const poplar::Tensor &data,
                                   CollectiveOperator op, poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContextIn,
                                   const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(data, op, options));
  const poplar::DebugContext debugContext(di);
  return gcl::allReduceCrossReplica(graph, data, toGcl(op), prog, debugContext, options);
}

void replicatedAllReduceWithOutput(poplar::Graph &graph, const poplar::Tensor &data, poplar::Tensor &output,
                                   CollectiveOperator op, poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContextIn,
                                   const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(data, output, op, options));
  const poplar::DebugContext debugContext(di);
  gcl::allReduceToDestinationCrossReplica(graph, data, output, toGcl(op), prog, debugContext, options);
}

void replicatedAllReduceInPlace(poplar::Graph &graph, poplar::Tensor &data, CollectiveOperator op,
                                poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                                const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(data, op, options));
  const poplar::DebugContext debugContext(di);
  gcl::allReduceInPlaceCrossReplica(graph, data, toGcl(op), prog, debugContext, options);
}

poplar::Tensor replicatedReduceScatter(poplar::Graph &graph, const poplar::Tensor &data,
                                       CollectiveOperator op, poplar::program::Sequence &prog,
                                       const poplar::DebugContext &debugContextIn,
                                       const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(data, op, options));
  const poplar::DebugContext debugContext(di);
  return gcl::reduceScatterCrossReplica(graph, data, toGcl(op), prog, debugContext, options);
}

poplar::Tensor replicatedAllGather(poplar::Graph &graph, const poplar::Tensor &data,
                                   poplar::program::Sequence &prog,
                                   const poplar::DebugContext &debugContextIn,
                                   const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(data, options));
  const poplar::DebugContext debugContext(di);
  return gcl::allGatherCrossReplica(graph, data, prog, debugContext, options);
}

} // namespace popops
