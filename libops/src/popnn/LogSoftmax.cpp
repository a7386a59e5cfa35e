// Copyright (c) Aspen contributors.
#include <popnn/LogSoftmax.hpp>

#include "NonLinearityInternal.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <popops/ElementWise.hpp>
#include <popops/Expr.hpp>
#include <popops/Reduce.hpp>
#include <poputil/VertexTemplates.hpp>
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
  // so a graph with just popops' codelets can use it (as with PopLibs): x - max, then
  // x - log(sum(exp(x))), over the innermost dimension.
  if (graph.hasCodelet(poputil::templateVertex("popnn::SoftmaxRows", t.elementType()))) {
    internal::softmaxRowsInPlace(graph, t, 1.0f, true, prog, {debugContext, "logSoftmax"});
    return;
  }
  using namespace popops::expr;
  const poplar::DebugContext dc{debugContext, "logSoftmax"};
  if (t.numElements() == 0)
    return;
  const Tensor rows = aspen::ops::asRows(t);
  const Tensor max =
      popops::reduce(graph, rows, {1}, popops::ReduceParams(popops::Operation::MAX), prog, {dc, "max"});
  popops::mapInPlace(graph, Sub(_1, _2), {rows, max.expand({1})}, prog, {dc, "shift"});
  const Tensor e = popops::map(graph, Exp(Cast(_1, FLOAT)), {rows}, prog, {dc, "exp"});
  const Tensor sum =
      popops::reduce(graph, e, FLOAT, {1}, popops::ReduceParams(popops::Operation::ADD), prog, {dc, "sum"});
  popops::mapInPlace(graph, Sub(_1, Cast(Log(_2), t.elementType())), {rows, sum.expand({1})}, prog,
                     {dc, "normalise"});
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
