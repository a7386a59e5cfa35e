// Copyright (c) Aspen contributors.
// popnn::nonLinearity: element-wise activations run where each element lives;
// softmax types run one row per worker on the tile holding the row's start.
#include <popnn/NonLinearity.hpp>

#include "NonLinearityInternal.hpp"
#include "TileWork.hpp"
#include "nncommon/LibraryCodelets.hpp"

#include <poputil/exceptions.hpp>

#include <string>

using namespace poplar;
using aspen::nn::shapeString;
using aspen::nn::vertexName;

namespace popnn {
namespace {

const char *typeName(NonLinearityType t) {
  switch (t) {
  case NonLinearityType::SIGMOID:
    return "SIGMOID";
  case NonLinearityType::HARD_SIGMOID:
    return "HARD_SIGMOID";
  case NonLinearityType::RELU:
    return "RELU";
  case NonLinearityType::TANH:
    return "TANH";
  case NonLinearityType::GELU:
    return "GELU";
  case NonLinearityType::GELU_ERF:
    return "GELU_ERF";
  case NonLinearityType::SWISH:
    return "SWISH";
  case NonLinearityType::SOFTMAX:
    return "SOFTMAX";
  case NonLinearityType::SOFTMAX_STABLE:
    return "SOFTMAX_STABLE";
  case NonLinearityType::SOFTMAX_SCALED:
    return "SOFTMAX_SCALED";
  }
  return "?";
}

bool isSoftmax(NonLinearityType t) {
  return t == NonLinearityType::SOFTMAX || t == NonLinearityType::SOFTMAX_STABLE ||
         t == NonLinearityType::SOFTMAX_SCALED;
}

/// Thread cycles per element of each element-wise non-linearity (and of its gradient).
double cyclesPerElement(NonLinearityType t, const Type &type) {
  const double vector = type == HALF ? 4.0 : 2.0;
  switch (t) {
  case NonLinearityType::RELU:
  case NonLinearityType::HARD_SIGMOID:
    return 2.0 / vector;
  case NonLinearityType::SIGMOID:
  case NonLinearityType::TANH:
    return 6.0 / vector;
  case NonLinearityType::SWISH:
    return 8.0 / vector;
  case NonLinearityType::GELU:
  case NonLinearityType::GELU_ERF:
    return 14.0 / vector;
  default:
    return 20.0;
  }
}

std::string op(const char *name, NonLinearityType t, const DebugContext &dc) {
  std::string s = std::string(name) + "(" + typeName(t);
  if (!dc.getPathName().empty())
    s += ", " + dc.getPathName();
  return s + ")";
}

void checkWriteable(const std::string &opName, const Tensor &t) {
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(opName + ": the tensor " + shapeString(t.shape()) +
                                 " cannot be written in place (it holds constants or aliased elements)");
}

void checkType(const std::string &opName, const char *what, const Tensor &t) {
  if (t.elementType() != FLOAT && t.elementType() != HALF)
    throw poputil::poplibs_error(opName + ": " + what + " " + shapeString(t.shape()) + " has element type " +
                                 t.elementType().toString().str() + "; only float and half are supported");
}

void addElementwise(Graph &graph, NonLinearityType t, const Tensor &data, ComputeSet &cs) {
  const auto work = work::elementsByTile(graph, data);
  const std::string vertex = vertexName("popnn::NonLinearity", {data.elementType()});
  for (std::size_t i = 0; i < work.tiles.size(); ++i) {
    VertexRef v = graph.addVertex(cs, vertex, {{"data", work.elements[i]}});
    graph.setInitialValue(v["nonLinearityType"], unsigned(t));
    graph.setTileMapping(v, work.tiles[i]);
    graph.setPerfEstimate(v,
                          work::multiVertexCycles(graph.getTarget(), work.elements[i].numElements(),
                                                  cyclesPerElement(t, data.elementType())),
                          work.elements[i].numElements());
  }
}

} // namespace

namespace internal {

void softmaxRowsInPlace(Graph &graph, const Tensor &t, float outputScale, bool logOutput,
                        program::Sequence &prog, const DebugContext &dc) {
  const Tensor rows = work::asRows(t);
  if (rows.numElements() == 0)
    return;
  const ComputeSet cs = graph.addComputeSet({dc, logOutput ? "logSoftmax" : "softmax"});
  const auto work = work::rowsByTile(graph, rows);
  const std::string vertex = vertexName("popnn::SoftmaxRows", {t.elementType()});
  const std::size_t rowLength = rows.dim(1);
  for (std::size_t i = 0; i < work.tiles.size(); ++i) {
    VertexRef v = graph.addVertex(cs, vertex, {{"data", work::gatherRows(rows, work.rows[i])}});
    graph.setInitialValue(v["rowLength"], unsigned(rowLength));
    graph.setInitialValue(v["outputScale"], outputScale);
    graph.setInitialValue(v["logOutput"], unsigned(logOutput ? 1 : 0));
    graph.setTileMapping(v, work.tiles[i]);
    const std::size_t elements = work.rows[i].size() * rowLength;
    graph.setPerfEstimate(v, work::multiVertexCycles(graph.getTarget(), elements, 12.0), 5 * elements);
  }
  prog.add(program::Execute(cs, dc));
}

} // namespace internal

void nonLinearityInPlace(Graph &graph, NonLinearityType nonLinearityType, Tensor t,
                         float &nonLinearityScaling, program::Sequence &prog,
                         const DebugContext &debugContext) {
  const std::string name = op("popnn::nonLinearityInPlace", nonLinearityType, debugContext);
  checkType(name, "the tensor", t);
  checkWriteable(name, t);
  nonLinearityScaling = 1.0f;
  if (isSoftmax(nonLinearityType)) {
    if (nonLinearityType == NonLinearityType::SOFTMAX_SCALED)
      nonLinearityScaling = internal::kSoftmaxScaling;
    internal::softmaxRowsInPlace(graph, t, nonLinearityScaling, false, prog, {debugContext, "nonLinearity"});
    return;
  }
  ComputeSet cs = graph.addComputeSet({debugContext, "nonLinearity"});
  addElementwise(graph, nonLinearityType, t, cs);
  prog.add(program::Execute(cs, debugContext));
}

void nonLinearityInPlace(Graph &graph, NonLinearityType nonLinearityType, Tensor t, program::Sequence &prog,
                         const DebugContext &debugContext) {
  float scaling;
  nonLinearityInPlace(graph, nonLinearityType, t, scaling, prog, debugContext);
}

void nonLinearityInPlace(Graph &graph, NonLinearityType nonLinearityType, Tensor t,
                         float &nonLinearityScaling, ComputeSet &cs, const DebugContext &debugContext) {
  const std::string name = op("popnn::nonLinearityInPlace", nonLinearityType, debugContext);
  checkType(name, "the tensor", t);
  checkWriteable(name, t);
  if (isSoftmax(nonLinearityType))
    throw poputil::poplibs_error(name +
                                 ": softmax needs several compute sets; use the form taking a Sequence");
  nonLinearityScaling = 1.0f;
  addElementwise(graph, nonLinearityType, t, cs);
}

void nonLinearityInPlace(Graph &graph, NonLinearityType nonLinearityType, Tensor t, ComputeSet &cs,
                         const DebugContext &debugContext) {
  float scaling;
  nonLinearityInPlace(graph, nonLinearityType, t, scaling, cs, debugContext);
}

Tensor nonLinearity(Graph &graph, NonLinearityType nonLinearityType, Tensor t, float &nonLinearityScaling,
                    program::Sequence &prog, const DebugContext &debugContext) {
  checkType(op("popnn::nonLinearity", nonLinearityType, debugContext), "the tensor", t);
  Tensor out = graph.clone(t, {debugContext, "output"});
  prog.add(program::Copy(t, out, false, debugContext));
  nonLinearityInPlace(graph, nonLinearityType, out, nonLinearityScaling, prog, debugContext);
  return out;
}

Tensor nonLinearity(Graph &graph, NonLinearityType nonLinearityType, Tensor t, program::Sequence &prog,
                    const DebugContext &debugContext) {
  float scaling;
  return nonLinearity(graph, nonLinearityType, t, scaling, prog, debugContext);
}

namespace {

Tensor inputGradient(Graph &graph, NonLinearityType t, const Tensor &act, const Tensor &outGradient,
                     ComputeSet &cs, const DebugContext &dc, const std::string &name) {
  checkType(name, "act", act);
  checkType(name, "outGradient", outGradient);
  if (act.shape() != outGradient.shape() || act.elementType() != outGradient.elementType())
    throw poputil::poplibs_error(
        name + ": act " + shapeString(act.shape()) + " (" + act.elementType().toString().str() +
        ") and outGradient " + shapeString(outGradient.shape()) + " (" +
        outGradient.elementType().toString().str() + ") must have the same shape and element type");
  Tensor inGrad = graph.clone(outGradient, {dc, "inputGradient"});
  const Target &target = graph.getTarget();
  if (isSoftmax(t)) {
    const float scale = t == NonLinearityType::SOFTMAX_SCALED ? internal::kSoftmaxScaling : 1.0f;
    const Tensor gradRows = work::asRows(inGrad), actRows = work::asRows(act),
                 outRows = work::asRows(outGradient);
    const auto work = work::rowsByTile(graph, gradRows);
    const std::string vertex = vertexName("popnn::SoftmaxGradRows", {act.elementType()});
    for (std::size_t i = 0; i < work.tiles.size(); ++i) {
      VertexRef v = graph.addVertex(cs, vertex,
                                    {{"act", work::gatherRows(actRows, work.rows[i])},
                                     {"outGrad", work::gatherRows(outRows, work.rows[i])},
                                     {"inGrad", work::gatherRows(gradRows, work.rows[i])}});
      graph.setInitialValue(v["rowLength"], unsigned(gradRows.dim(1)));
      graph.setInitialValue(v["outputScale"], scale);
      graph.setTileMapping(v, work.tiles[i]);
      const std::size_t elements = work.rows[i].size() * gradRows.dim(1);
      graph.setPerfEstimate(v, work::multiVertexCycles(target, elements, 4.0), 4 * elements);
    }
    return inGrad;
  }
  const Tensor flatAct = act.flatten(), flatOut = outGradient.flatten(), flatGrad = inGrad.flatten();
  const auto mapping = graph.getTileMapping(inGrad);
  const std::string vertex = vertexName("popnn::NonLinearityGrad", {act.elementType()});
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty())
      continue;
    std::vector<Tensor> a, o, g;
    for (const Interval &i : mapping[tile]) {
      a.push_back(flatAct.slice(i.begin(), i.end()));
      o.push_back(flatOut.slice(i.begin(), i.end()));
      g.push_back(flatGrad.slice(i.begin(), i.end()));
    }
    VertexRef v =
        graph.addVertex(cs, vertex, {{"act", concat(a)}, {"outGrad", concat(o)}, {"inGrad", concat(g)}});
    graph.setInitialValue(v["nonLinearityType"], unsigned(t));
    graph.setTileMapping(v, tile);
    const std::size_t elements = concat(g).numElements();
    graph.setPerfEstimate(
        v, work::multiVertexCycles(target, elements, cyclesPerElement(t, act.elementType())), 2 * elements);
  }
  return inGrad;
}

} // namespace

Tensor nonLinearityInputGradient(Graph &graph, NonLinearityType nonLinearityType, Tensor act,
                                 Tensor outGradient, ComputeSet &cs, const DebugContext &debugContext) {
  return inputGradient(graph, nonLinearityType, act, outGradient, cs, debugContext,
                       op("popnn::nonLinearityInputGradient", nonLinearityType, debugContext));
}

Tensor nonLinearityInputGradient(Graph &graph, NonLinearityType nonLinearityType, Tensor act,
                                 Tensor outGradient, program::Sequence &prog,
                                 const DebugContext &debugContext) {
  ComputeSet cs = graph.addComputeSet({debugContext, "nonLinearityGrad"});
  Tensor result = inputGradient(graph, nonLinearityType, act, outGradient, cs, debugContext,
                                op("popnn::nonLinearityInputGradient", nonLinearityType, debugContext));
  prog.add(program::Execute(cs, debugContext));
  return result;
}

} // namespace popnn
