// Copyright (c) Aspen contributors.
// popops::countedLoop / countedForLoop: Repeat and RepeatWhileTrue around popops arithmetic on a
// counter that lives on tile 0.
#include "popops/Loop.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/Expr.hpp"

namespace popops {

poplar::program::Sequence countedLoop(poplar::Graph &graph, std::size_t begin, std::size_t end, size_t step,
                                      const CountedLoopBodyType &body,
                                      const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(begin, end, step));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::countedLoop";
  if (step == 0)
    throw poputil::poplibs_error(op + ": step must be greater than zero");
  if (begin >= end)
    throw poputil::poplibs_error(op + ": begin (" + std::to_string(begin) + ") must be less than end (" +
                                 std::to_string(end) + ")");
  if (!body)
    throw poputil::poplibs_error(op + ": the body function is empty");
  const poplar::DebugContext dc{debugContext, "countedLoop"};
  poplar::program::Sequence prog({}, dc);
  poplar::Tensor index = graph.addVariable(poplar::UNSIGNED_INT, {1}, {dc, "index"});
  graph.setTileMapping(index, 0);
  poplar::Tensor first =
      graph.addConstant(poplar::UNSIGNED_INT, {1}, static_cast<unsigned>(begin), {dc, "begin"});
  poplar::Tensor inc =
      graph.addConstant(poplar::UNSIGNED_INT, {1}, static_cast<unsigned>(step), {dc, "step"});
  graph.setTileMapping(first, 0);
  graph.setTileMapping(inc, 0);
  prog.add(poplar::program::Copy(first, index, false, dc));
  poplar::program::Sequence loopBody({body(index)}, dc);
  addInPlace(graph, index, inc, loopBody, dc);
  const std::size_t count = (end - begin + step - 1) / step;
  prog.add(poplar::program::Repeat(static_cast<unsigned>(count), loopBody, dc));
  return prog;
}

poplar::program::Sequence countedLoop(poplar::Graph &graph, std::size_t count,
                                      const CountedLoopBodyType &body,
                                      const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(count));
  const poplar::DebugContext debugContext(di);
  return countedLoop(graph, 0, count, 1, body, debugContext);
}

poplar::program::Sequence countedForLoop(poplar::Graph &graph, const poplar::Tensor &count, int initialCount,
                                         const poplar::Tensor &countLimit, int countStep,
                                         const poplar::program::Program &body,
                                         const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(count, initialCount, countLimit, countStep));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::countedForLoop";
  aspen::ops::requireValid(count, op, "the count tensor");
  aspen::ops::requireValid(countLimit, op, "the countLimit tensor");
  const poplar::Type type = count.elementType();
  if (type != countLimit.elementType())
    throw poputil::poplibs_error(op + ": count " + aspen::ops::describe(count) + " and countLimit " +
                                 aspen::ops::describe(countLimit) + " must have the same type");
  if (type != poplar::UNSIGNED_INT && type != poplar::INT)
    throw poputil::poplibs_error(op + ": count " + aspen::ops::describe(count) +
                                 " must have type int or unsigned int");
  if (count.numElements() != 1 || countLimit.numElements() != 1)
    throw poputil::poplibs_error(op + ": count " + aspen::ops::describe(count) + " and countLimit " +
                                 aspen::ops::describe(countLimit) + " must have one element each");
  const poplar::DebugContext dc{debugContext, "countedForLoop"};
  poplar::program::Sequence prog({}, dc);
  // The condition pre-increments, so the count starts one step early.
  poplar::Tensor init = type == poplar::INT
                            ? graph.addConstant(type, {}, initialCount - countStep, {dc, "initialCount"})
                            : graph.addConstant(type, {}, static_cast<unsigned>(initialCount - countStep),
                                                {dc, "initialCount"});
  graph.setTileMapping(init, 0);
  prog.add(poplar::program::Copy(init, count.reshape({}), false, dc));
  poplar::program::Sequence cond({}, dc);
  poplar::Tensor step = type == poplar::INT
                            ? graph.addConstant(type, {}, countStep, {dc, "step"})
                            : graph.addConstant(type, {}, static_cast<unsigned>(countStep), {dc, "step"});
  graph.setTileMapping(step, 0);
  addInPlace(graph, count.reshape({}), step, cond, dc);
  poplar::Tensor predicate = map(graph, expr::NotEqual(expr::_1, expr::_2),
                                 {count.reshape({}), countLimit.reshape({})}, cond, {dc, "predicate"});
  prog.add(poplar::program::RepeatWhileTrue(cond, predicate, body, dc));
  return prog;
}

poplar::program::Sequence countedForLoop(poplar::Graph &graph, int initialCount,
                                         const poplar::Tensor &countLimit, int countStep,
                                         const poplar::program::Program &body,
                                         const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(initialCount, countLimit, countStep));
  const poplar::DebugContext debugContext(di);
  aspen::ops::requireValid(countLimit, "popops::countedForLoop", "the countLimit tensor");
  poplar::Tensor count = graph.addVariable(countLimit.elementType(), {}, {debugContext, "count"});
  graph.setTileMapping(count, 0);
  return countedForLoop(graph, count, initialCount, countLimit, countStep, body, debugContext);
}

} // namespace popops
