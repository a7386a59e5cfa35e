// Copyright (c) Aspen contributors.
#include <popnn/LogSoftmax.hpp>

#include "NonLinearityInternal.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poputil/exceptions.hpp>

using namespace poplar;

namespace popnn {

namespace {

void checkType(const Tensor &t, const std::string &op) {
  aspen::ops::requireValid(t, op, "the tensor");
  if (t.elementType() != FLOAT && t.elementType() != HALF)
    throw poputil::poplibs_error(op + ": the tensor " + aspen::ops::describe(t) + " has element type " +
                                 t.elementType().toString().str() + "; only float and half are supported");
}

} // namespace

void logSoftmaxInPlace(Graph &graph, Tensor t, program::Sequence &prog, const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(t));
  const poplar::DebugContext debugContext(di);
  checkType(t, "popnn::logSoftmaxInPlace");
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error("popnn::logSoftmaxInPlace: the tensor " + aspen::ops::describe(t) +
                                 " cannot be written in place (it holds constants or aliased elements)");
  // With popnn's codelets: one row vertex. Otherwise it is built from popops operations only,
  // so a graph with just popops' codelets can use it (as with PopLibs, whose logSoftmax uses
  // popops vertices only): x - max, then x - log(sum(exp(x))), over the innermost dimension.
  internal::softmaxRowsInPlace(graph, t, 1.0f, true, prog, {debugContext, "logSoftmax"});
}

Tensor logSoftmax(Graph &graph, Tensor t, program::Sequence &prog, const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(t));
  const poplar::DebugContext debugContext(di);
  checkType(t, "popnn::logSoftmax");
  Tensor out = graph.clone(t, {debugContext, "output"});
  prog.add(program::Copy(t, out, false, debugContext));
  logSoftmaxInPlace(graph, out, prog, debugContext);
  return out;
}

} // namespace popnn
