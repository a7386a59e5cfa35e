// Copyright (c) Aspen contributors.
// popnn::nonLinearity: element-wise activations run where each element lives;
// softmax types run one row per worker on the tile holding the row's start.
// What PopLibs builds from popops vertices (softmax and its gradient, log-softmax, and the
// forward SIGMOID, HARD_SIGMOID, RELU, TANH and GELU_ERF) also runs on a graph without
// popnn's codelets: from popops operations then, as PopLibs does (docs/ops-nn.md).
#include <popnn/NonLinearity.hpp>

#include "NonLinearityInternal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Expr.hpp>
#include <popops/Reduce.hpp>
#include <poputil/VertexTemplates.hpp>
#include <poputil/exceptions.hpp>

#include <string>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popnn::NonLinearityType &t) {
  static const char *const names[] = {"SIGMOID",        "HARD_SIGMOID",  "RELU",  "TANH",
                                      "GELU",           "GELU_ERF",      "SWISH", "SOFTMAX",
                                      "SOFTMAX_STABLE", "SOFTMAX_SCALED"};
  const auto i = static_cast<std::size_t>(t);
  return poplar::ProfileValue(i < sizeof(names) / sizeof(names[0]) ? names[i] : "?");
}
} // namespace poputil

using namespace poplar;
using aspen::ops::describe;
using aspen::ops::shapeString;

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

std::string op(const char *name, NonLinearityType t, const DebugContext &dc) {
  std::string s = std::string(name) + "(" + typeName(t);
  if (!dc.getPathName().empty())
    s += ", " + dc.getPathName();
  return s + ")";
}

void checkWriteable(const std::string &opName, const Tensor &t) {
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(opName + ": the tensor " + describe(t) +
                                 " cannot be written in place (it holds constants or aliased elements)");
}

void checkType(const std::string &opName, const char *what, const Tensor &t) {
  aspen::ops::requireValid(t, opName, what);
  if (t.elementType() != FLOAT && t.elementType() != HALF)
    throw poputil::poplibs_error(opName + ": " + what + " " + describe(t) + " has element type " +
                                 t.elementType().toString().str() + "; only float and half are supported");
}

void addElementwise(Graph &graph, NonLinearityType t, const Tensor &data, ComputeSet &cs) {
  const std::string vertex = poputil::templateVertex("popnn::NonLinearity", data.elementType());
  const Tensor flat = data.flatten();
  // One MultiVertex per tile over all the elements it holds.
  for (const auto &w : aspen::ops::splitByTile(graph, data, 1)) {
    VertexRef v = graph.addVertex(cs, vertex, {{"data", aspen::ops::gather(flat, w.regions)}});
    graph.setInitialValue(v["nonLinearityType"], unsigned(t));
    graph.setTileMapping(v, w.tile);
    graph.setPerfEstimate(v, cost::nonLinearity(graph.getTarget(), t, data.elementType(), w.numElements()),
                          w.numElements());
  }
}

/// The popops expression PopLibs evaluates `t` with (on popops vertices), or null when PopLibs
/// uses a popnn vertex for it.
std::unique_ptr<popops::expr::Expr> popopsForm(NonLinearityType t) {
  using namespace popops::expr;
  switch (t) {
  case NonLinearityType::SIGMOID:
    return Sigmoid(_1).clone();
  case NonLinearityType::RELU:
    return Relu(_1).clone();
  case NonLinearityType::TANH:
    return Tanh(_1).clone();
  case NonLinearityType::GELU_ERF:
    return GeluErf(_1).clone();
  case NonLinearityType::HARD_SIGMOID:
    return Max(Const(0.0f), Min(Const(1.0f), Add(Mul(Const(0.2f), _1), Const(0.5f)))).clone();
  default:
    return nullptr;
  }
}

bool hasPopnnCodelet(const Graph &graph, const char *vertex, const Type &type) {
  return graph.hasCodelet(poputil::templateVertex(vertex, type));
}

} // namespace

namespace internal {

void softmaxRowsInPlace(Graph &graph, const Tensor &t, float outputScale, bool logOutput,
                        program::Sequence &prog, const DebugContext &dc) {
  const Tensor rows = aspen::ops::asRows(t);
  if (rows.numElements() == 0)
    return;
  if (!hasPopnnCodelet(graph, "popnn::SoftmaxRows", t.elementType())) {
    // PopLibs' form: x - max, exp, a float sum per row, then scale / sum or - log(sum).
    using namespace popops::expr;
    const DebugContext &fdc = dc;
    const Tensor max =
        popops::reduce(graph, rows, {1}, popops::ReduceParams(popops::Operation::MAX), prog, {fdc, "max"});
    popops::mapInPlace(graph, Sub(_1, _2), {rows, max.expand({1})}, prog, {fdc, "shift"});
    const Tensor e = popops::map(graph, Exp(Cast(_1, FLOAT)), {rows}, prog, {fdc, "exp"});
    const Tensor sum = popops::reduce(graph, e, FLOAT, {1}, popops::ReduceParams(popops::Operation::ADD),
                                      prog, {fdc, "sum"});
    if (logOutput)
      popops::mapInPlace(graph, Sub(_1, Cast(Log(_2), t.elementType())), {rows, sum.expand({1})}, prog,
                         {fdc, "normalise"});
    else {
      popops::mapInPlace(graph, Mul(_1, Divide(Const(outputScale), _2)), {e, sum.expand({1})}, prog,
                         {fdc, "normalise"});
      const Tensor out =
          t.elementType() == FLOAT ? e : popops::cast(graph, e, t.elementType(), prog, {fdc, "cast"});
      prog.add(program::Copy(out, rows, false, {fdc, "output"}));
    }
    return;
  }
  const ComputeSet cs = graph.addComputeSet({dc, logOutput ? "logSoftmax" : "softmax"});
  const std::string vertex = poputil::templateVertex("popnn::SoftmaxRows", t.elementType());
  const std::size_t rowLength = rows.dim(1);
  for (const auto &g : aspen::ops::rowsByTile(graph, rows)) {
    VertexRef v = graph.addVertex(cs, vertex, {{"data", aspen::ops::gatherRows(rows, g.rows)}});
    graph.setInitialValue(v["rowLength"], unsigned(rowLength));
    graph.setInitialValue(v["outputScale"], outputScale);
    graph.setInitialValue(v["logOutput"], unsigned(logOutput ? 1 : 0));
    graph.setTileMapping(v, g.tile);
    const std::size_t elements = g.numRows() * rowLength;
    graph.setPerfEstimate(v,
                          cost::softmaxRows(graph.getTarget(), t.elementType(), g.numRows(), rowLength,
                                            logOutput, outputScale != 1.0f),
                          5 * elements);
  }
  prog.add(program::Execute(cs, dc));
}

} // namespace internal

void nonLinearityInPlace(Graph &graph, NonLinearityType nonLinearityType, Tensor t,
                         float &nonLinearityScaling, program::Sequence &prog,
                         const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, t, nonLinearityScaling));
  const poplar::DebugContext debugContext(di);
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
  if (!hasPopnnCodelet(graph, "popnn::NonLinearity", t.elementType())) {
    if (auto expr = popopsForm(nonLinearityType)) {
      popops::mapInPlace(graph, *expr, {t}, prog, {debugContext, "nonLinearity"});
      return;
    }
  }
  ComputeSet cs = graph.addComputeSet({debugContext, "nonLinearity"});
  addElementwise(graph, nonLinearityType, t, cs);
  prog.add(program::Execute(cs, debugContext));
}

void nonLinearityInPlace(Graph &graph, NonLinearityType nonLinearityType, Tensor t, program::Sequence &prog,
                         const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, t));
  const poplar::DebugContext debugContext(di);
  float scaling;
  nonLinearityInPlace(graph, nonLinearityType, t, scaling, prog, debugContext);
}

void nonLinearityInPlace(Graph &graph, NonLinearityType nonLinearityType, Tensor t,
                         float &nonLinearityScaling, ComputeSet &cs, const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, t, nonLinearityScaling, cs));
  const poplar::DebugContext debugContext(di);
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
                         const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, t, cs));
  const poplar::DebugContext debugContext(di);
  float scaling;
  nonLinearityInPlace(graph, nonLinearityType, t, scaling, cs, debugContext);
}

Tensor nonLinearity(Graph &graph, NonLinearityType nonLinearityType, Tensor t, float &nonLinearityScaling,
                    program::Sequence &prog, const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, t, nonLinearityScaling));
  const poplar::DebugContext debugContext(di);
  checkType(op("popnn::nonLinearity", nonLinearityType, debugContext), "the tensor", t);
  Tensor out = graph.clone(t, {debugContext, "output"});
  prog.add(program::Copy(t, out, false, debugContext));
  nonLinearityInPlace(graph, nonLinearityType, out, nonLinearityScaling, prog, debugContext);
  return out;
}

Tensor nonLinearity(Graph &graph, NonLinearityType nonLinearityType, Tensor t, program::Sequence &prog,
                    const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, t));
  const poplar::DebugContext debugContext(di);
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
    const Tensor gradRows = aspen::ops::asRows(inGrad), actRows = aspen::ops::asRows(act),
                 outRows = aspen::ops::asRows(outGradient);
    const std::string vertex = poputil::templateVertex("popnn::SoftmaxGradRows", act.elementType());
    for (const auto &g : aspen::ops::rowsByTile(graph, gradRows)) {
      VertexRef v = graph.addVertex(cs, vertex,
                                    {{"act", aspen::ops::gatherRows(actRows, g.rows)},
                                     {"outGrad", aspen::ops::gatherRows(outRows, g.rows)},
                                     {"inGrad", aspen::ops::gatherRows(gradRows, g.rows)}});
      graph.setInitialValue(v["rowLength"], unsigned(gradRows.dim(1)));
      graph.setInitialValue(v["outputScale"], scale);
      graph.setTileMapping(v, g.tile);
      const std::size_t elements = g.numRows() * gradRows.dim(1);
      graph.setPerfEstimate(v, cost::softmaxGradRows(target, act.elementType(), g.numRows(), gradRows.dim(1)),
                            4 * elements);
    }
    return inGrad;
  }
  const Tensor flatAct = act.flatten(), flatOut = outGradient.flatten(), flatGrad = inGrad.flatten();
  const std::string vertex = poputil::templateVertex("popnn::NonLinearityGrad", act.elementType());
  // One MultiVertex per tile over all the elements of the gradient it holds.
  for (const auto &w : aspen::ops::splitByTile(graph, inGrad, 1)) {
    VertexRef v = graph.addVertex(cs, vertex,
                                  {{"act", aspen::ops::gather(flatAct, w.regions)},
                                   {"outGrad", aspen::ops::gather(flatOut, w.regions)},
                                   {"inGrad", aspen::ops::gather(flatGrad, w.regions)}});
    graph.setInitialValue(v["nonLinearityType"], unsigned(t));
    graph.setTileMapping(v, w.tile);
    const std::size_t elements = w.numElements();
    graph.setPerfEstimate(v, cost::nonLinearityGrad(target, t, act.elementType(), elements), 2 * elements);
  }
  return inGrad;
}

} // namespace

Tensor nonLinearityInputGradient(Graph &graph, NonLinearityType nonLinearityType, Tensor act,
                                 Tensor outGradient, ComputeSet &cs, const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, act, outGradient, cs));
  const poplar::DebugContext debugContext(di);
  return inputGradient(graph, nonLinearityType, act, outGradient, cs, debugContext,
                       op("popnn::nonLinearityInputGradient", nonLinearityType, debugContext));
}

Tensor nonLinearityInputGradient(Graph &graph, NonLinearityType nonLinearityType, Tensor act,
                                 Tensor outGradient, program::Sequence &prog,
                                 const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(nonLinearityType, act, outGradient));
  const poplar::DebugContext debugContext(di);
  const std::string name = op("popnn::nonLinearityInputGradient", nonLinearityType, debugContext);
  if (isSoftmax(nonLinearityType) && !hasPopnnCodelet(graph, "popnn::SoftmaxGradRows", act.elementType())) {
    // PopLibs' form on popops vertices: act * (outGrad - sum(outGrad * act) / scale) per row.
    checkType(name, "act", act);
    checkType(name, "outGradient", outGradient);
    if (act.shape() != outGradient.shape() || act.elementType() != outGradient.elementType())
      throw poputil::poplibs_error(
          name + ": act " + shapeString(act.shape()) + " (" + act.elementType().toString().str() +
          ") and outGradient " + shapeString(outGradient.shape()) + " (" +
          outGradient.elementType().toString().str() + ") must have the same shape and element type");
    using namespace popops::expr;
    const float scale =
        nonLinearityType == NonLinearityType::SOFTMAX_SCALED ? internal::kSoftmaxScaling : 1.0f;
    const DebugContext dc{debugContext, "nonLinearityGrad"};
    const Tensor y = aspen::ops::asRows(act), g = aspen::ops::asRows(outGradient);
    if (y.numElements() == 0)
      return graph.clone(outGradient, {dc, "inputGradient"});
    const Tensor gy =
        popops::map(graph, Mul(Cast(_1, FLOAT), Cast(_2, FLOAT)), {g, y}, prog, {dc, "product"});
    const Tensor dot = popops::reduce(graph, gy, FLOAT, {1}, popops::ReduceParams(popops::Operation::ADD),
                                      prog, {dc, "sum"});
    const Tensor inGrad = popops::map(
        graph, Cast(Mul(Cast(_1, FLOAT), Sub(Cast(_2, FLOAT), Divide(_3, Const(scale)))), act.elementType()),
        {y, g, dot.expand({1})}, prog, {dc, "inputGradient"});
    return inGrad.reshape(outGradient.shape());
  }
  ComputeSet cs = graph.addComputeSet({debugContext, "nonLinearityGrad"});
  Tensor result = inputGradient(graph, nonLinearityType, act, outGradient, cs, debugContext, name);
  prog.add(program::Execute(cs, debugContext));
  return result;
}

} // namespace popnn
