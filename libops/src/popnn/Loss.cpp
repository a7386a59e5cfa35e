// Copyright (c) Aspen contributors.
// popnn::calcLoss, calcAccuracy, argMax/argMin: one vertex per tile handles the
// rows (batch entries) whose first element lives on it; the accuracy count is
// then added up by one vertex on the tile of `numCorrect`.
#include <popnn/Loss.hpp>

#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poputil/VertexTemplates.hpp>
#include <poputil/exceptions.hpp>

#include <string>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popnn::LossType &t) {
  return poplar::ProfileValue(t == popnn::SUM_SQUARED_LOSS ? "SUM_SQUARED_LOSS" : "CROSS_ENTROPY_LOSS");
}
} // namespace poputil

using namespace poplar;
using aspen::ops::describe;

namespace popnn {
namespace {

[[noreturn]] void fail(const std::string &op, const std::string &message) {
  throw poputil::poplibs_error(op + ": " + message);
}

void checkOutputsAndLabels(const std::string &op, const Tensor &modelOutputs, const Tensor &expected) {
  aspen::ops::requireValid(modelOutputs, op, "modelOutputs");
  aspen::ops::requireValid(expected, op, "expected");
  if (modelOutputs.rank() != 2)
    fail(op, "modelOutputs must be {batch, classes}, got " + describe(modelOutputs));
  if (modelOutputs.elementType() != FLOAT && modelOutputs.elementType() != HALF)
    fail(op, "modelOutputs " + describe(modelOutputs) + " must be float or half");
  if (expected.rank() != 1 || expected.dim(0) != modelOutputs.dim(0))
    fail(op, "expected " + describe(expected) + " must be {" + std::to_string(modelOutputs.dim(0)) +
                 "} to match modelOutputs " + describe(modelOutputs));
  if (expected.elementType() != UNSIGNED_INT && expected.elementType() != INT)
    fail(op, "expected " + describe(expected) + " must hold unsigned int or int labels");
}

void checkNumCorrect(const std::string &op, const Tensor &numCorrect) {
  aspen::ops::requireValid(numCorrect, op, "numCorrect");
  if (numCorrect.numElements() != 1 || numCorrect.elementType() != UNSIGNED_INT)
    fail(op, "numCorrect " + describe(numCorrect) + " must be one unsigned int element");
}

/// Arg-max (or arg-min) of each row of `in` into new tensors, in `cs`.
std::pair<Tensor, Tensor> rowExtremes(Graph &graph, const Tensor &in, bool findMin, ComputeSet &cs,
                                      const DebugContext &dc) {
  const Type type = in.elementType();
  Tensor values = graph.addVariable(type, {in.dim(0)}, {dc, findMin ? "min" : "max"});
  Tensor indices = graph.addVariable(UNSIGNED_INT, {in.dim(0)}, {dc, findMin ? "argMin" : "argMax"});
  const std::string vertex = poputil::templateVertex("popnn::ReduceRowsWithIndex", type);
  for (const auto &g : aspen::ops::rowsByTile(graph, in)) {
    const Tensor rowValues = aspen::ops::gather(values, g.rows);
    const Tensor rowIndices = aspen::ops::gather(indices, g.rows);
    graph.setTileMapping(rowValues, g.tile);
    graph.setTileMapping(rowIndices, g.tile);
    VertexRef v = graph.addVertex(
        cs, vertex,
        {{"in", aspen::ops::gatherRows(in, g.rows)}, {"value", rowValues}, {"index", rowIndices}});
    graph.setInitialValue(v["rowLength"], unsigned(in.dim(1)));
    graph.setInitialValue(v["findMin"], unsigned(findMin ? 1 : 0));
    graph.setTileMapping(v, g.tile);
    const std::size_t elements = g.numRows() * in.dim(1);
    graph.setPerfEstimate(v, cost::reduceRowsWithIndex(type, g.numRows(), in.dim(1)), elements);
  }
  return {values, indices};
}

/// numCorrect += count(argMax == expected), given the arg-max of each row.
void addAccuracyCount(Graph &graph, const Tensor &maxIndices, const Tensor &expected,
                      const Tensor &numCorrect, program::Sequence &seq, const DebugContext &dc) {
  const ComputeSet cs = graph.addComputeSet({dc, "accuracy"});
  VertexRef v = graph.addVertex(
      cs, poputil::templateVertex("popnn::CalcAccuracy", expected.elementType()),
      {{"maxIndex", maxIndices}, {"expected", expected}, {"numCorrect", numCorrect.reshape({})}});
  const auto mapping = graph.getTileMapping(numCorrect);
  unsigned tile = 0;
  for (unsigned t = 0; t < mapping.size(); ++t)
    if (!mapping[t].empty())
      tile = t;
  graph.setTileMapping(v, tile);
  graph.setPerfEstimate(v, cost::calcAccuracy(maxIndices.numElements()));
  seq.add(program::Execute(cs, dc));
}

Tensor unitConstant(Graph &graph, const Type &type, const DebugContext &dc, const char *name) {
  Tensor t = graph.addConstant(type, {}, 1.0f, {dc, name});
  graph.setTileMapping(t, 0);
  return t;
}

program::Program lossImpl(Graph &graph, const Tensor &modelOutputs, const Tensor &expected,
                          const Tensor &loss, const Tensor &deltas, const Tensor *deltasScale,
                          const Tensor *modelOutputScaling, const Tensor *numCorrect, LossType lossType,
                          const DebugContext &dc) {
  const std::string op = aspen::ops::opNameWithContext("popnn::calcLoss", dc);
  checkOutputsAndLabels(op, modelOutputs, expected);
  aspen::ops::requireValid(loss, op, "loss");
  aspen::ops::requireValid(deltas, op, "deltas");
  const Type type = modelOutputs.elementType();
  if (loss.shape() != expected.shape() || loss.elementType() != type)
    fail(op, "loss " + describe(loss) + " must be {" + std::to_string(modelOutputs.dim(0)) + "} of " +
                 type.toString().str() + " to match modelOutputs " + describe(modelOutputs));
  if (deltas.shape() != modelOutputs.shape() || deltas.elementType() != type)
    fail(op, "deltas " + describe(deltas) + " must match modelOutputs " + describe(modelOutputs));
  if (lossType != SUM_SQUARED_LOSS && lossType != CROSS_ENTROPY_LOSS)
    fail(op, "unknown loss type " + std::to_string(int(lossType)));
  for (const Tensor *scale : {deltasScale, modelOutputScaling})
    if (scale && !scale->valid())
      fail(op, "a scale is not a valid tensor (default-constructed)");
  for (const Tensor *scale : {deltasScale, modelOutputScaling})
    if (scale && (scale->numElements() != 1 || scale->elementType() != type))
      fail(op, "the scales must be one element of " + type.toString().str() + ", got " + describe(*scale));
  if (numCorrect)
    checkNumCorrect(op, *numCorrect);

  program::Sequence seq({}, dc);
  ComputeSet cs = graph.addComputeSet({dc, "loss"});
  const Tensor ds = deltasScale ? *deltasScale : unitConstant(graph, type, dc, "deltasScale");
  const Tensor mos =
      modelOutputScaling ? *modelOutputScaling : unitConstant(graph, type, dc, "modelOutputScaling");
  const bool crossEntropy = lossType == CROSS_ENTROPY_LOSS;
  const std::string vertex = poputil::templateVertex(
      crossEntropy ? "popnn::LossCrossEntropy" : "popnn::LossSumSquared", type, expected.elementType());
  const std::size_t classes = modelOutputs.dim(1);
  for (const auto &g : aspen::ops::rowsByTile(graph, modelOutputs)) {
    std::vector<Graph::ConnectionDesc> fields{{"probs", aspen::ops::gatherRows(modelOutputs, g.rows)},
                                              {"labels", aspen::ops::gather(expected, g.rows)},
                                              {"deltas", aspen::ops::gatherRows(deltas, g.rows)},
                                              {"loss", aspen::ops::gather(loss, g.rows)}};
    if (crossEntropy) {
      fields.push_back({"deltasScale", ds.reshape({})});
      fields.push_back({"modelOutputScaling", mos.reshape({})});
    }
    VertexRef v = graph.addVertex(cs, vertex, fields);
    graph.setInitialValue(v["numClasses"], unsigned(classes));
    graph.setTileMapping(v, g.tile);
    const std::size_t elements = g.numRows() * classes;
    graph.setPerfEstimate(v, cost::loss(graph.getTarget(), type, crossEntropy, g.numRows(), classes),
                          3 * elements);
  }
  Tensor maxIndices;
  if (numCorrect)
    maxIndices = rowExtremes(graph, modelOutputs, false, cs, dc).second;
  seq.add(program::Execute(cs, dc));
  if (numCorrect)
    addAccuracyCount(graph, maxIndices, expected, *numCorrect, seq, dc);
  return seq;
}

std::pair<Tensor, Tensor> extremes(Graph &graph, const Tensor &input, bool findMin, program::Sequence &prog,
                                   const DebugContext &dc, const char *opBase) {
  const std::string op = aspen::ops::opNameWithContext(opBase, dc);
  aspen::ops::requireValid(input, op, "input");
  if (input.rank() != 2)
    fail(op, "input must be a 2-D tensor {rows, columns}, got " + describe(input));
  const Type type = input.elementType();
  if (type != FLOAT && type != HALF && type != INT && type != UNSIGNED_INT)
    fail(op, "input " + describe(input) + " must be float, half, int or unsigned int");
  if (input.dim(1) == 0)
    fail(op, "input " + describe(input) + " has empty rows");
  ComputeSet cs = graph.addComputeSet({dc, findMin ? "argMin" : "argMax"});
  auto result = rowExtremes(graph, input, findMin, cs, dc);
  prog.add(program::Execute(cs, dc));
  return result;
}

} // namespace

program::Program calcLoss(Graph &graph, const Tensor &modelOutputs, const Tensor &expected,
                          const Tensor &loss, const Tensor &deltas, const Tensor &deltasScale,
                          const Tensor &modelOutputScaling, LossType lossType,
                          const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(modelOutputs, expected, loss, deltas, deltasScale,
                                                        modelOutputScaling, lossType));
  const poplar::DebugContext debugContext(di);
  return lossImpl(graph, modelOutputs, expected, loss, deltas, &deltasScale, &modelOutputScaling, nullptr,
                  lossType, debugContext);
}

program::Program calcLoss(Graph &graph, const Tensor &modelOutputs, const Tensor &expected,
                          const Tensor &loss, const Tensor &deltas, LossType lossType,
                          const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(modelOutputs, expected, loss, deltas, lossType));
  const poplar::DebugContext debugContext(di);
  return lossImpl(graph, modelOutputs, expected, loss, deltas, nullptr, nullptr, nullptr, lossType,
                  debugContext);
}

program::Program calcLoss(Graph &graph, const Tensor &modelOutputs, const Tensor &expected,
                          const Tensor &loss, const Tensor &deltas, const Tensor &deltasScale,
                          const Tensor &modelOutputScaling, const Tensor &numCorrect, LossType lossType,
                          const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(modelOutputs, expected, loss, deltas, deltasScale,
                                                        modelOutputScaling, numCorrect, lossType));
  const poplar::DebugContext debugContext(di);
  return lossImpl(graph, modelOutputs, expected, loss, deltas, &deltasScale, &modelOutputScaling, &numCorrect,
                  lossType, debugContext);
}

program::Program calcLoss(Graph &graph, const Tensor &modelOutputs, const Tensor &expected,
                          const Tensor &loss, const Tensor &deltas, const Tensor &numCorrect,
                          LossType lossType, const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(modelOutputs, expected, loss, deltas, numCorrect, lossType));
  const poplar::DebugContext debugContext(di);
  return lossImpl(graph, modelOutputs, expected, loss, deltas, nullptr, nullptr, &numCorrect, lossType,
                  debugContext);
}

program::Program calcAccuracy(Graph &graph, const Tensor &modelOutputs, const Tensor &expected,
                              const Tensor &numCorrect, const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(modelOutputs, expected, numCorrect));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("popnn::calcAccuracy", debugContext);
  checkOutputsAndLabels(op, modelOutputs, expected);
  checkNumCorrect(op, numCorrect);
  program::Sequence seq({}, debugContext);
  ComputeSet cs = graph.addComputeSet({debugContext, "argMax"});
  const Tensor maxIndices = rowExtremes(graph, modelOutputs, false, cs, debugContext).second;
  seq.add(program::Execute(cs, debugContext));
  addAccuracyCount(graph, maxIndices, expected, numCorrect, seq, debugContext);
  return seq;
}

Tensor argMax(Graph &graph, const Tensor &input, program::Sequence &prog,
              const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(input));
  const poplar::DebugContext debugContext(di);
  return extremes(graph, input, false, prog, debugContext, "popnn::argMax").second;
}

Tensor argMin(Graph &graph, const Tensor &input, program::Sequence &prog,
              const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(input));
  const poplar::DebugContext debugContext(di);
  return extremes(graph, input, true, prog, debugContext, "popnn::argMin").second;
}

std::pair<Tensor, Tensor> maxAndArgMax(Graph &graph, const Tensor &input, program::Sequence &prog,
                                       const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(input));
  const poplar::DebugContext debugContext(di);
  return extremes(graph, input, false, prog, debugContext, "popnn::maxAndArgMax");
}

std::pair<Tensor, Tensor> minAndArgMin(Graph &graph, const Tensor &input, program::Sequence &prog,
                                       const DebugContext &debugContextIn) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(input));
  const poplar::DebugContext debugContext(di);
  return extremes(graph, input, true, prog, debugContext, "popnn::minAndArgMin");
}

} // namespace popnn
