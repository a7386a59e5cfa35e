// Copyright (c) Aspen contributors.
// popops::scaledAddTo / scaledSubtractFrom: popops::ScaledAdd<A, B, Scale> vertices on
// the tiles where A lives; scales are scalar tensors (constants for the float forms).
#include "popops/ScaledAdd.hpp"

#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "popops/Cast.hpp"
#include "poputil/OptionParsing.hpp"

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::ScaledAddSpecialisation &s) {
  return poplar::ProfileValue(s == popops::ScaledAddSpecialisation::X_MINUS_AX_PLUS_BY ? "X_MINUS_AX_PLUS_BY"
                                                                                       : "DEFAULT");
}
} // namespace poputil

namespace popops {

namespace {

enum class Mode : unsigned { AxPlusBy = 0, AxMinusBy = 1, XMinusAxPlusBy = 2 };

void parseScaledAddOptions(const poplar::OptionFlags &options, const char *opName) {
  bool optimizeForSpeed = false;
  double tolerance = 1e-6;
  const poplibs::OptionSpec spec{
      {"optimizeForSpeed", poplibs::OptionHandler::createWithBool(optimizeForSpeed)},
      {"scaleFloatToHalfTolerance", poplibs::OptionHandler::createWithDouble(tolerance)},
  };
  aspen::ops::parseOptions(spec, options, opName);
}

bool isFloatType(const poplar::Type &t) {
  return t == poplar::FLOAT || t == poplar::HALF;
}

// The scale type the vertices use for A and B (and a scale given as a tensor of `given`).
poplar::Type scaleTypeFor(const poplar::Type &a, const poplar::Type &b, const poplar::Type &given) {
  if (!isFloatType(a))
    return a;
  if (a == poplar::HALF && b == poplar::HALF && given == poplar::HALF)
    return poplar::HALF;
  return poplar::FLOAT;
}

poplar::Tensor scaleOperand(poplar::Graph &graph, const poplar::Tensor &scale, const poplar::Type &type,
                            poplar::program::Sequence &prog, const poplar::DebugContext &dc,
                            const char *opName, const char *which) {
  if (scale.numElements() != 1)
    throw poputil::poplibs_error(std::string(opName) + ": " + which +
                                 " must be a single-element tensor, got " + aspen::ops::describe(scale));
  poplar::Tensor s = scale.flatten()[0];
  if (s.elementType() != type)
    s = cast(graph, s, type, prog, {dc, std::string(which) + "Cast"});
  return s;
}

void scaledAddImpl(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &scaleA,
                   const poplar::Tensor &B, const poplar::Tensor &scaleB, Mode mode,
                   poplar::program::Sequence &prog, const poplar::DebugContext &dc,
                   const poplar::OptionFlags &options, const char *opName) {
  parseScaledAddOptions(options, opName);
  for (const auto &[t, role] : {std::pair{&A, "A"}, {&B, "B"}, {&scaleA, "scaleA"}, {&scaleB, "scaleB"}})
    aspen::ops::requireValid(*t, opName, role);
  if (A.shape() != B.shape())
    throw poputil::poplibs_error(std::string(opName) + ": A " + aspen::ops::describe(A) + " and B " +
                                 aspen::ops::describe(B) + " must have the same shape");
  const poplar::Type ta = A.elementType(), tb = B.elementType();
  const bool typesOk =
      (isFloatType(ta) && isFloatType(tb)) || ((ta == poplar::INT || ta == poplar::UNSIGNED_INT) && ta == tb);
  if (!typesOk)
    throw poputil::poplibs_error(std::string(opName) + ": unsupported combination of types (A " +
                                 aspen::ops::describe(A) + ", B " + aspen::ops::describe(B) + ")");
  if (!A.isParallelWriteable())
    throw poputil::poplibs_error(std::string(opName) + ": A " + aspen::ops::describe(A) +
                                 " cannot be written (it contains constants or aliased elements)");
  const poplar::Type ts = scaleTypeFor(ta, tb, scaleB.elementType());
  const poplar::Tensor sa = scaleOperand(graph, scaleA, ts, prog, dc, opName, "scaleA");
  const poplar::Tensor sb = scaleOperand(graph, scaleB, ts, prog, dc, opName, "scaleB");
  const std::string vt = poputil::templateVertex("popops::ScaledAdd", ta, tb, ts);
  aspen::ops::requireVertex(graph, vt, opName,
                            "A of type " + ta.toString().str() + " with B of type " + tb.toString().str());
  if (A.numElements() == 0)
    return;
  // A scale of A that is the constant 1 (scaledAddTo / scaledSubtractFrom without scaleA) is
  // the work of PopLibs' ScaledAdd / ScaledSubtract vertices; any other is aXPlusbY's.
  float scaleAValue = 0;
  const bool unitA =
      scaleA.numElements() == 1 && scaleA.getConstantValue(&scaleAValue) && scaleAValue == 1.0f;
  const cost::ScaledOp costOp = mode == Mode::XMinusAxPlusBy ? cost::ScaledOp::XMinusAXPlusBY
                                : mode == Mode::AxMinusBy
                                    ? (unitA ? cost::ScaledOp::Subtract : cost::ScaledOp::AXMinusBY)
                                    : (unitA ? cost::ScaledOp::Add : cost::ScaledOp::AXPlusBY);
  poplar::ComputeSet cs = graph.addComputeSet({dc, opName});
  const poplar::Tensor aFlat = A.flatten(), bFlat = B.flatten();
  const auto &target = graph.getTarget();
  for (const auto &w : aspen::ops::splitByTile(graph, A)) {
    poplar::VertexRef v = graph.addVertex(cs, vt);
    graph.connect(v["A"], aspen::ops::gather(aFlat, w.regions));
    graph.connect(v["B"], aspen::ops::gather(bFlat, w.regions));
    graph.connect(v["scaleA"], sa);
    graph.connect(v["scaleB"], sb);
    graph.setInitialValue(v["mode"], static_cast<unsigned>(mode));
    graph.setTileMapping(v, w.tile);
    const std::size_t n = w.numElements();
    graph.setPerfEstimate(v, cost::scaledAdd(target, ta, tb, ts, costOp, n),
                          3 * static_cast<std::uint64_t>(n));
  }
  prog.add(poplar::program::Execute(cs, {dc, opName}));
}

poplar::Tensor constantScale(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,
                             float value, const char *which) {
  if (!A.valid() || !B.valid())
    return poplar::Tensor(); // scaledAddImpl names the invalid operand
  const poplar::Type ts = scaleTypeFor(A.elementType(), B.elementType(), poplar::FLOAT);
  return aspen::ops::scalarConstantOf(graph, ts, value, 0, which);
}

} // namespace

void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, float scaleB,
                 poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                 const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, constantScale(graph, A, B, 1.0f, "scaleA"), B,
                constantScale(graph, A, B, scaleB, "scaleB"), Mode::AxPlusBy, prog, debugContext, options,
                "popops::scaledAddTo");
}

void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, poplar::Tensor scaleB,
                 poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                 const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, constantScale(graph, A, B, 1.0f, "scaleA"), B, scaleB, Mode::AxPlusBy, prog,
                debugContext, options, "popops::scaledAddTo");
}

void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, float scaleB,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                        const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, constantScale(graph, A, B, 1.0f, "scaleA"), B,
                constantScale(graph, A, B, scaleB, "scaleB"), Mode::AxMinusBy, prog, debugContext, options,
                "popops::scaledSubtractFrom");
}

void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, poplar::Tensor scaleB,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                        const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, constantScale(graph, A, B, 1.0f, "scaleA"), B, scaleB, Mode::AxMinusBy, prog,
                debugContext, options, "popops::scaledSubtractFrom");
}

void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor scaleA, poplar::Tensor B,
                 poplar::Tensor scaleB, poplar::program::Sequence &prog,
                 const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, scaleA, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, scaleA, B, scaleB, Mode::AxPlusBy, prog, debugContext, options,
                "popops::scaledAddTo");
}

void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor scaleA, poplar::Tensor B,
                 poplar::Tensor scaleB, poplar::program::Sequence &prog,
                 const ScaledAddSpecialisation speciality, const poplar::DebugContext &debugContextIn,
                 const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, scaleA, B, scaleB, speciality, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, scaleA, B, scaleB,
                speciality == ScaledAddSpecialisation::X_MINUS_AX_PLUS_BY ? Mode::XMinusAxPlusBy
                                                                          : Mode::AxPlusBy,
                prog, debugContext, options, "popops::scaledAddTo");
}

void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, float scaleA, poplar::Tensor B, float scaleB,
                 poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                 const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, scaleA, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, constantScale(graph, A, B, scaleA, "scaleA"), B,
                constantScale(graph, A, B, scaleB, "scaleB"), Mode::AxPlusBy, prog, debugContext, options,
                "popops::scaledAddTo");
}

void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, float scaleA, poplar::Tensor B, float scaleB,
                 poplar::program::Sequence &prog, const ScaledAddSpecialisation speciality,
                 const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, scaleA, B, scaleB, speciality, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(
      graph, A, constantScale(graph, A, B, scaleA, "scaleA"), B, constantScale(graph, A, B, scaleB, "scaleB"),
      speciality == ScaledAddSpecialisation::X_MINUS_AX_PLUS_BY ? Mode::XMinusAxPlusBy : Mode::AxPlusBy, prog,
      debugContext, options, "popops::scaledAddTo");
}

void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor scaleA, poplar::Tensor B,
                        poplar::Tensor scaleB, poplar::program::Sequence &prog,
                        const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, scaleA, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, scaleA, B, scaleB, Mode::AxMinusBy, prog, debugContext, options,
                "popops::scaledSubtractFrom");
}

void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, float scaleA, poplar::Tensor B, float scaleB,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                        const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(A, scaleA, B, scaleB, options));
  const poplar::DebugContext debugContext(di);
  scaledAddImpl(graph, A, constantScale(graph, A, B, scaleA, "scaleA"), B,
                constantScale(graph, A, B, scaleB, "scaleB"), Mode::AxMinusBy, prog, debugContext, options,
                "popops::scaledSubtractFrom");
}

} // namespace popops
