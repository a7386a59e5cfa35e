// Copyright (c) Aspen contributors.
#include <popnn/LogSoftmax.hpp>

#include "NonLinearityInternal.hpp"
#include "nncommon/LibraryCodelets.hpp"

#include <poputil/exceptions.hpp>

using namespace poplar;

namespace popnn {

void logSoftmaxInPlace(Graph &graph, Tensor t, program::Sequence &prog, const DebugContext &debugContext) {
  if (t.elementType() != FLOAT && t.elementType() != HALF)
    throw poputil::poplibs_error("popnn::logSoftmaxInPlace: the tensor " + aspen::nn::shapeString(t.shape()) +
                                 " has element type " + t.elementType().toString().str() +
                                 "; only float and half are supported");
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error("popnn::logSoftmaxInPlace: the tensor " + aspen::nn::shapeString(t.shape()) +
                                 " cannot be written in place (it holds constants or aliased elements)");
  internal::softmaxRowsInPlace(graph, t, 1.0f, true, prog, {debugContext, "logSoftmax"});
}

Tensor logSoftmax(Graph &graph, Tensor t, program::Sequence &prog, const DebugContext &debugContext) {
  if (t.elementType() != FLOAT && t.elementType() != HALF)
    throw poputil::poplibs_error("popnn::logSoftmax: the tensor " + aspen::nn::shapeString(t.shape()) +
                                 " has element type " + t.elementType().toString().str() +
                                 "; only float and half are supported");
  Tensor out = graph.clone(t, {debugContext, "output"});
  prog.add(program::Copy(t, out, false, debugContext));
  logSoftmaxInPlace(graph, out, prog, debugContext);
  return out;
}

} // namespace popnn
