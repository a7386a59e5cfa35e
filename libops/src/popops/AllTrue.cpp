// Copyright (c) Aspen contributors.
// popops::allTrue: a LOGICAL_AND reduction of the flattened tensor to one element.
#include "popops/AllTrue.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/Reduce.hpp"

#include <poputil/exceptions.hpp>

namespace popops {

poplar::Tensor allTrue(poplar::Graph &graph, poplar::Tensor A, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::allTrue";
  aspen::ops::requireValid(A, op, "the tensor A");
  if (A.elementType() != poplar::BOOL)
    throw poputil::poplibs_error(op + ": A " + aspen::ops::describe(A) + " must be of type bool");
  const poplar::DebugContext dc{debugContext, "allTrue"};
  if (A.numElements() == 0) {
    poplar::Tensor t = graph.addConstant(poplar::BOOL, {}, true, {dc, "empty"});
    graph.setTileMapping(t, 0);
    return t;
  }
  return reduce(graph, A.flatten(), poplar::BOOL, {0}, ReduceParams(Operation::LOGICAL_AND), prog, dc);
}

} // namespace popops
