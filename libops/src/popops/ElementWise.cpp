// Copyright (c) Aspen contributors.
// popops::map and the element-wise operators built on it. A single operator over
// tensors runs on the library's precompiled vertices (BinaryOp1D, UnaryOp1D,
// BroadcastScalar1D, Select, Clamp and their in-place forms); a larger expression is
// fused into one generated codelet (ExpressionGenerator) compiled at run time through
// Graph::addCodelets(std::stringstream&) and cached. Vertices run on the tiles where
// the output lives, one MultiVertex per contiguous output region.
#include "popops/ElementWise.hpp"

#include "ElementWiseInternal.hpp"
#include "ExpressionGenerator.hpp"
#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "popops/Cast.hpp"
#include "poputil/Broadcast.hpp"
#include "poputil/OptionParsing.hpp"
#include "poputil/TileMapping.hpp"

#include <set>
#include <sstream>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::expr::Expr &e) {
  return aspen::ops::streamedProfileValue(e);
}
template <> poplar::ProfileValue toProfileValue(const popops::expr::Any &e) {
  std::ostringstream os;
  os << static_cast<const popops::expr::Expr &>(e);
  return poplar::ProfileValue(os.str());
}
} // namespace poputil

namespace popops {

using namespace expr;
using aspen::ops::describe;
using aspen::ops::shapeString;

namespace {

struct MapOptions {
  bool enableGenerateCodelet = true;
  bool forceGenerateCodelet = false;
};

MapOptions parseMapOptions(const poplar::OptionFlags &options, const std::string &opName) {
  MapOptions o;
  bool ignoredBool = false;
  unsigned ignoredUnsigned = 0;
  const poplibs::OptionSpec spec{
      {"enableGenerateCodelet", poplibs::OptionHandler::createWithBool(o.enableGenerateCodelet)},
      {"forceGenerateCodelet", poplibs::OptionHandler::createWithBool(o.forceGenerateCodelet)},
      {"enableVectorBroadcastOptimisations", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableExpressionOptimizations", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"supportsMultiVertex", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"forceVectorWidth", poplibs::OptionHandler::createWithUnsignedInt(ignoredUnsigned)},
  };
  aspen::ops::parseOptions(spec, options, opName);
  return o;
}

void collectPlaceholders(const Expr &e, std::set<unsigned> &used) {
  if (const auto *p = e.getAs<PlaceHolder>())
    used.insert(p->getIndex());
  else if (const auto *c = e.getAs<Cast>())
    collectPlaceholders(c->getLHS(), used);
  else if (const auto *u = e.getAs<UnaryOp>())
    collectPlaceholders(u->getArg(), used);
  else if (const auto *b = e.getAs<BinaryOp>()) {
    collectPlaceholders(b->getLHS(), used);
    collectPlaceholders(b->getRHS(), used);
  } else if (const auto *t = e.getAs<TernaryOp>()) {
    collectPlaceholders(t->getArg0(), used);
    collectPlaceholders(t->getArg1(), used);
    collectPlaceholders(t->getArg2(), used);
  }
}

// The operators of `e` (PopLibs' "fused operations": unary, binary and ternary nodes; casts,
// constants and placeholders are not counted).
std::size_t countOperators(const Expr &e) {
  if (const auto *c = e.getAs<Cast>())
    return countOperators(c->getLHS());
  if (const auto *u = e.getAs<UnaryOp>())
    return 1 + countOperators(u->getArg());
  if (const auto *b = e.getAs<BinaryOp>())
    return 1 + countOperators(b->getLHS()) + countOperators(b->getRHS());
  if (const auto *t = e.getAs<TernaryOp>())
    return 1 + countOperators(t->getArg0()) + countOperators(t->getArg1()) + countOperators(t->getArg2());
  return 0;
}

std::string shapesOf(const std::vector<poplar::Tensor> &ts) {
  std::string s;
  for (const auto &t : ts)
    s += (s.empty() ? "" : ", ") + describe(t);
  return s;
}

// The common (numpy) shape of the tensors the expression uses.
std::vector<std::size_t> resultShape(const std::vector<poplar::Tensor> &ts, const std::set<unsigned> &used,
                                     const std::string &opName) {
  if (used.empty())
    return ts[0].shape();
  poplar::Tensor acc = ts[*used.begin() - 1];
  for (unsigned i : used) {
    poplar::Tensor other = ts[i - 1];
    if (!poputil::canBroadcastToMatch(acc, other))
      throw poputil::poplibs_error(opName + ": operand shapes do not broadcast to a common shape (" +
                                   shapesOf(ts) + ")");
    poputil::broadcastToMatch(acc, other);
  }
  return acc.shape();
}

poplar::Tensor broadcastTo(const poplar::Tensor &t, const std::vector<std::size_t> &shape) {
  poplar::Tensor b = t;
  poputil::broadcastToMatch(b, shape);
  return b;
}

bool isCommutative(BinaryOpType op) {
  switch (op) {
  case BinaryOpType::ADD:
  case BinaryOpType::MULTIPLY:
  case BinaryOpType::MAXIMUM:
  case BinaryOpType::MINIMUM:
  case BinaryOpType::EQUAL:
  case BinaryOpType::NOT_EQUAL:
  case BinaryOpType::LOGICAL_AND:
  case BinaryOpType::LOGICAL_OR:
  case BinaryOpType::BITWISE_AND:
  case BinaryOpType::BITWISE_OR:
  case BinaryOpType::BITWISE_XOR:
  case BinaryOpType::BITWISE_XNOR:
    return true;
  default:
    return false;
  }
}

// One operand of a single-operator vertex: a tensor broadcast to the output's shape, or a scalar.
struct Operand {
  poplar::Tensor tensor; // as given (not broadcast)
  bool isInput1 = false; // ts[0], which is the output when in place
};

Operand operandOf(poplar::Graph &graph, const Expr &e, const std::vector<poplar::Tensor> &ts,
                  const poplar::Type &type) {
  if (const auto *p = e.getAs<PlaceHolder>())
    return {ts[p->getIndex() - 1], p->getIndex() == 1};
  const auto *c = e.getAs<Const>();
  return {aspen::ops::scalarConstantOf(graph, type, c->getDataAsDouble()), false};
}

bool isLeafTensor(const Expr &e) {
  return e.isA<PlaceHolder>();
}
bool isLeaf(const Expr &e) {
  return e.isA<PlaceHolder>() || e.isA<Const>();
}

// True when the expression is one operator whose operands are tensors (or one constant).
bool isSingleOperator(const Expr &e) {
  if (const auto *u = e.getAs<UnaryOp>())
    return isLeafTensor(u->getArg());
  if (const auto *b = e.getAs<BinaryOp>())
    return isLeaf(b->getLHS()) && isLeaf(b->getRHS()) &&
           (isLeafTensor(b->getLHS()) || isLeafTensor(b->getRHS()));
  if (const auto *t = e.getAs<TernaryOp>())
    return isLeafTensor(t->getArg0()) && isLeafTensor(t->getArg1()) && isLeafTensor(t->getArg2());
  return false;
}

// Adds one vertex per region group of `out`; `connect` wires the operands of each.
// `cycles(n)` is the estimate of one vertex over n elements.
template <class CostFn, class ConnectFn>
void addVerticesOverOutput(poplar::Graph &graph, const poplar::Tensor &out, poplar::ComputeSet cs,
                           const std::string &vertexType, CostFn cycles, unsigned flopsPerElement,
                           ConnectFn connect) {
  const auto work = aspen::ops::splitByTile(graph, out);
  for (const auto &w : work) {
    poplar::VertexRef v = graph.addVertex(cs, vertexType);
    connect(v, w.regions);
    graph.setTileMapping(v, w.tile);
    const std::size_t n = w.numElements();
    graph.setPerfEstimate(v, cycles(n), static_cast<std::uint64_t>(n) * flopsPerElement);
  }
}

void singleOperator(poplar::Graph &graph, const Expr &expr, const std::vector<poplar::Tensor> &ts,
                    const poplar::Tensor &out, bool inPlace, poplar::ComputeSet cs,
                    const std::string &opName) {
  using aspen::ops::gather;
  using poputil::templateVertex;
  const auto shape = out.shape();
  const poplar::Tensor outFlat = out.flatten();
  std::vector<poplar::Type> types;
  for (const auto &t : ts)
    types.push_back(t.elementType());

  if (const auto *u = expr.getAs<UnaryOp>()) {
    const Operand a = operandOf(graph, u->getArg(), ts, poplar::Type());
    const poplar::Type type = a.tensor.elementType();
    const bool useInPlace = inPlace && a.isInput1;
    const std::string vt =
        templateVertex(useInPlace ? "popops::UnaryOp1DInPlace" : "popops::UnaryOp1D", u->getOpType(), type);
    aspen::ops::requireVertex(graph, vt, opName,
                              aspen::ops::toString(u->getOpType()) + " on " + type.toString().str());
    const poplar::Tensor aFlat = broadcastTo(a.tensor, shape).flatten();
    const auto &target = graph.getTarget();
    const cost::Form form = useInPlace ? cost::Form::InPlace : cost::Form::Out;
    addVerticesOverOutput(
        graph, out, cs, vt,
        [&](std::size_t n) { return cost::unaryOp1D(target, u->getOpType(), type, n, form); },
        aspen::ops::opFlops(u->getOpType()),
        [&](poplar::VertexRef v, const std::vector<poplar::Interval> &r) {
          if (useInPlace) {
            graph.connect(v["inOut"], gather(outFlat, r));
          } else {
            graph.connect(v["in"], gather(aFlat, r));
            graph.connect(v["out"], gather(outFlat, r));
          }
        });
    return;
  }

  if (const auto *b = expr.getAs<BinaryOp>()) {
    BinaryOpType op = b->getOpType();
    // A constant operand takes the other operand's type.
    const Expr *lhs = &b->getLHS();
    const Expr *rhs = &b->getRHS();
    poplar::Type type = lhs->isA<PlaceHolder>() ? types[lhs->getAs<PlaceHolder>()->getIndex() - 1]
                                                : types[rhs->getAs<PlaceHolder>()->getIndex() - 1];
    Operand a = operandOf(graph, *lhs, ts, type);
    Operand c = operandOf(graph, *rhs, ts, type);
    const std::size_t n = out.numElements();
    bool aScalar = a.tensor.numElements() == 1 && n > 1;
    bool cScalar = c.tensor.numElements() == 1 && n > 1;
    if (aScalar && !cScalar && isCommutative(op) && !(inPlace && a.isInput1)) {
      std::swap(a, c);
      std::swap(aScalar, cScalar);
    }
    const bool useInPlace = inPlace && a.isInput1;
    std::string vt;
    if (cScalar)
      vt = templateVertex(useInPlace ? "popops::BroadcastScalar1DInPlace" : "popops::BroadcastScalar1D", op,
                          type);
    else
      vt = templateVertex(useInPlace ? "popops::BinaryOp1DInPlace" : "popops::BinaryOp1D", op, type);
    aspen::ops::requireVertex(graph, vt, opName, aspen::ops::toString(op) + " on " + type.toString().str());
    const poplar::Tensor aFlat = broadcastTo(a.tensor, shape).flatten();
    const poplar::Tensor cFlat = cScalar ? poplar::Tensor() : broadcastTo(c.tensor, shape).flatten();
    const poplar::Tensor cScalarT = cScalar ? c.tensor.flatten()[0] : poplar::Tensor();
    const auto &target = graph.getTarget();
    const cost::Form form = useInPlace ? cost::Form::InPlace : cost::Form::Out;
    addVerticesOverOutput(
        graph, out, cs, vt,
        [&](std::size_t n) {
          return cScalar ? cost::broadcastScalar1D(target, op, type, n, form)
                         : cost::binaryOp1D(target, op, type, n, form);
        },
        aspen::ops::opFlops(op),
        [&](poplar::VertexRef v, const std::vector<poplar::Interval> &r) {
          if (cScalar) {
            graph.connect(v["B"], cScalarT);
            graph.connect(v["data"], gather(useInPlace ? outFlat : aFlat, r));
            if (!useInPlace)
              graph.connect(v["out"], gather(outFlat, r));
          } else if (useInPlace) {
            graph.connect(v["in1Out"], gather(outFlat, r));
            graph.connect(v["in2"], gather(cFlat, r));
          } else {
            graph.connect(v["in1"], gather(aFlat, r));
            graph.connect(v["in2"], gather(cFlat, r));
            graph.connect(v["out"], gather(outFlat, r));
          }
        });
    return;
  }

  const auto *t = expr.getAs<TernaryOp>();
  const bool select = t->getOpType() == TernaryOpType::SELECT;
  const Operand a = operandOf(graph, t->getArg0(), ts, poplar::Type());
  const Operand b = operandOf(graph, t->getArg1(), ts, poplar::Type());
  const Operand c = operandOf(graph, t->getArg2(), ts, poplar::Type());
  const poplar::Type type = a.tensor.elementType();
  const bool useInPlace = inPlace && a.isInput1;
  const std::string base = select ? "popops::Select" : "popops::Clamp";
  const std::string vt = templateVertex(useInPlace ? base + "InPlace" : base, type);
  aspen::ops::requireVertex(graph, vt, opName, (select ? "SELECT on " : "CLAMP on ") + type.toString().str());
  const poplar::Tensor aFlat = broadcastTo(a.tensor, shape).flatten();
  const poplar::Tensor bFlat = broadcastTo(b.tensor, shape).flatten();
  const poplar::Tensor cFlat = broadcastTo(c.tensor, shape).flatten();
  const auto &target = graph.getTarget();
  addVerticesOverOutput(
      graph, out, cs, vt,
      [&](std::size_t n) { return select ? cost::select(target, type, n) : cost::clamp(target, type, n); },
      select ? 0 : 2,
      [&](poplar::VertexRef v, const std::vector<poplar::Interval> &r) {
        if (useInPlace) {
          graph.connect(v["in1Out"], gather(outFlat, r));
        } else {
          graph.connect(v["in1"], gather(aFlat, r));
          graph.connect(v["out"], gather(outFlat, r));
        }
        graph.connect(v["in2"], gather(bFlat, r));
        graph.connect(v["in3"], gather(cFlat, r));
      });
}

// Adds to `cs` the vertices of one generated codelet that evaluates `exprs` over `ts` into
// `outs` (all of one shape; in place, outs[k] is ts[k]).
void generatedCodelet(poplar::Graph &graph, const std::vector<const Expr *> &exprs,
                      const std::vector<poplar::Tensor> &ts, const std::vector<poplar::Tensor> &outs,
                      bool inPlace, poplar::ComputeSet cs) {
  using aspen::ops::gather;
  using aspen::ops::OperandKind;
  std::set<unsigned> used;
  for (const Expr *e : exprs)
    collectPlaceholders(*e, used);
  const auto shape = outs[0].shape();
  const std::size_t n = outs[0].numElements();
  std::vector<poplar::Type> types, outTypes;
  std::vector<OperandKind> kinds;
  std::vector<poplar::Tensor> flats(ts.size()), outFlats;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    types.push_back(ts[k].elementType());
    if (inPlace && k < outs.size())
      kinds.push_back(OperandKind::Output);
    else if (!used.count(static_cast<unsigned>(k + 1)))
      kinds.push_back(OperandKind::Unused);
    else if (ts[k].numElements() == 1 && n > 1)
      kinds.push_back(OperandKind::Scalar);
    else {
      kinds.push_back(OperandKind::Vector);
      flats[k] = broadcastTo(ts[k], shape).flatten();
    }
  }
  for (const auto &out : outs) {
    outTypes.push_back(out.elementType());
    outFlats.push_back(out.flatten());
  }
  const auto g = aspen::ops::generateMapCodelet(graph.getTarget(), exprs, types, kinds, outTypes);
  if (!graph.hasCodelet(g.vertexName)) {
    std::stringstream source(g.source);
    // The generated code never reads errno: without it, std::sqrt is one instruction, and a loop
    // using it vectorises (ExpressionGenerator.cpp, "widen"); every result is the same.
    graph.addCodelets(source, "-fno-math-errno");
  }
  const auto &target = graph.getTarget();
  // Priced as PopLibs prices its generated codelet: by the operators fused and the operands read
  // (the first operand's type sets the vector width; in place, the outputs are operands).
  std::size_t numOps = 0, vectorOperands = 0, scalarOperands = 0;
  for (const Expr *e : exprs)
    numOps += countOperators(*e);
  poplar::Type costType;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    if (kinds[k] == OperandKind::Unused)
      continue;
    if (!costType.valid())
      costType = types[k];
    (kinds[k] == OperandKind::Scalar ? scalarOperands : vectorOperands) += 1;
  }
  if (!costType.valid())
    costType = outs[0].elementType();
  addVerticesOverOutput(
      graph, outs[0], cs, g.vertexName,
      [&](std::size_t n) {
        return cost::fusedExpression(target, costType, n, numOps, vectorOperands, scalarOperands);
      },
      g.flopsPerElement,
      [&](poplar::VertexRef v, const std::vector<poplar::Interval> &r) {
        for (std::size_t k = 0; k < ts.size(); ++k) {
          const std::string field = "in" + std::to_string(k + 1);
          if (kinds[k] == OperandKind::Vector)
            graph.connect(v[field], gather(flats[k], r));
          else if (kinds[k] == OperandKind::Scalar)
            graph.connect(v[field], ts[k].flatten()[0]);
        }
        for (std::size_t j = 0; j < outs.size(); ++j)
          graph.connect(v[aspen::ops::outputField(j, outs.size())], gather(outFlats[j], r));
      });
}

enum class Mode { New, InPlace, WithOutput };

// Evaluates `e` one operator at a time into temporaries (enableGenerateCodelet=false).
poplar::Tensor evaluateUnfused(poplar::Graph &graph, const Expr &e, const std::vector<poplar::Tensor> &ts,
                               const poplar::Type &hint, poplar::program::Sequence &prog,
                               const poplar::DebugContext &dc) {
  const poplar::OptionFlags unfused{{"enableGenerateCodelet", "false"}};
  std::vector<poplar::Type> types;
  for (const auto &t : ts)
    types.push_back(t.elementType());
  if (const auto *p = e.getAs<PlaceHolder>())
    return ts[p->getIndex() - 1];
  if (const auto *c = e.getAs<Const>())
    return aspen::ops::scalarConstantOf(graph, hint.valid() ? hint : c->getType(), c->getDataAsDouble());
  if (const auto *c = e.getAs<Cast>())
    return cast(graph, evaluateUnfused(graph, c->getLHS(), ts, poplar::Type(), prog, dc), c->getRHSType(),
                prog, {dc, "cast"});
  if (const auto *u = e.getAs<UnaryOp>()) {
    const poplar::Tensor a = evaluateUnfused(
        graph, u->getArg(), ts, aspen::ops::isPredicate(u->getOpType()) ? poplar::Type() : hint, prog, dc);
    return map(graph, UnaryOp(u->getOpType(), _1), {a}, prog, dc, unfused);
  }
  if (const auto *b = e.getAs<BinaryOp>()) {
    const poplar::Type operandHint = aspen::ops::isPredicate(b->getOpType()) ? poplar::Type() : hint;
    poplar::Tensor l, r;
    if (b->getLHS().isA<Const>() && !b->getRHS().isA<Const>()) {
      r = evaluateUnfused(graph, b->getRHS(), ts, operandHint, prog, dc);
      l = evaluateUnfused(graph, b->getLHS(), ts, r.elementType(), prog, dc);
    } else {
      l = evaluateUnfused(graph, b->getLHS(), ts, operandHint, prog, dc);
      r = evaluateUnfused(graph, b->getRHS(), ts, l.elementType(), prog, dc);
    }
    return map(graph, BinaryOp(b->getOpType(), _1, _2), {l, r}, prog, dc, unfused);
  }
  const auto *t = e.getAs<TernaryOp>();
  const bool select = t->getOpType() == TernaryOpType::SELECT;
  poplar::Tensor a, b;
  if (t->getArg0().isA<Const>() && !t->getArg1().isA<Const>()) {
    b = evaluateUnfused(graph, t->getArg1(), ts, hint, prog, dc);
    a = evaluateUnfused(graph, t->getArg0(), ts, b.elementType(), prog, dc);
  } else {
    a = evaluateUnfused(graph, t->getArg0(), ts, hint, prog, dc);
    b = evaluateUnfused(graph, t->getArg1(), ts, a.elementType(), prog, dc);
  }
  const poplar::Tensor c =
      evaluateUnfused(graph, t->getArg2(), ts, select ? poplar::BOOL : a.elementType(), prog, dc);
  return map(graph, TernaryOp(t->getOpType(), _1, _2, _3), {a, b, c}, prog, dc, unfused);
}

// Checks that `out` can take a result of `shape` and `type`.
void checkOutput(const poplar::Tensor &out, const std::vector<std::size_t> &shape, const poplar::Type &type,
                 const std::vector<poplar::Tensor> &ts, const std::string &opName) {
  if (out.shape() != shape)
    throw poputil::poplibs_error(opName + ": output " + describe(out) + " does not have the result's shape " +
                                 shapeString(shape) + " (operands: " + shapesOf(ts) + ")");
  if (out.elementType() != type)
    throw poputil::poplibs_error(opName + ": output " + describe(out) + " does not have the result's type " +
                                 type.toString().str());
  if (!out.isParallelWriteable())
    throw poputil::poplibs_error(opName + ": output " + describe(out) +
                                 " cannot be written (it contains constants or aliased elements)");
}

// Checks the tensors a map reads; returns their element types.
std::vector<poplar::Type> checkInputs(const std::vector<poplar::Tensor> &ts, const std::string &opName) {
  if (ts.empty())
    throw poputil::poplibs_error(opName + ": no tensors given");
  std::vector<poplar::Type> types;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    if (!ts[k].valid())
      throw poputil::poplibs_error(opName + ": tensor _" + std::to_string(k + 1) + " is not a valid tensor");
    types.push_back(ts[k].elementType());
  }
  return types;
}

poplar::Tensor mapImpl(poplar::Graph &graph, const Expr &expr, const std::vector<poplar::Tensor> &ts,
                       poplar::Tensor out, Mode mode, poplar::program::Sequence &prog,
                       const poplar::DebugContext &dc, const poplar::OptionFlags &options,
                       const std::string &opName) {
  const MapOptions opts = parseMapOptions(options, opName);
  const std::vector<poplar::Type> types = checkInputs(ts, opName);
  const poplar::Type resultType = aspen::ops::inferExprType(expr, types, poplar::Type(), opName);
  std::set<unsigned> used;
  collectPlaceholders(expr, used);
  const auto shape = resultShape(ts, used, opName);

  if (mode == Mode::InPlace) {
    out = ts[0];
    if (out.shape() != shape)
      throw poputil::poplibs_error(opName + ": the first tensor " + describe(out) +
                                   " cannot hold the result, whose shape is " + shapeString(shape));
  }
  if (mode != Mode::New)
    checkOutput(out, shape, resultType, ts, opName);

  const bool single = isSingleOperator(expr);
  if (!single && !opts.enableGenerateCodelet && !opts.forceGenerateCodelet) {
    poplar::Tensor r = evaluateUnfused(graph, expr, ts, poplar::Type(), prog, dc);
    if (mode == Mode::New) {
      if (!expr.isA<PlaceHolder>() && !expr.isA<Const>())
        return r;
      out = aspen::ops::createOutputLike(graph, resultType, shape, {r}, {dc, "out"});
    }
    prog.add(poplar::program::Copy(broadcastTo(r, shape), out, false, {dc, "copyResult"}));
    return out;
  }

  if (mode == Mode::New) {
    std::vector<poplar::Tensor> operands;
    for (unsigned i : used)
      operands.push_back(ts[i - 1]);
    out = aspen::ops::createOutputLike(graph, resultType, shape, operands, {dc, "out"});
  } else {
    aspen::ops::mapIfUnmapped(graph, out);
  }
  if (out.numElements() == 0)
    return out;
  poplar::ComputeSet cs = graph.addComputeSet({dc, "map"});
  aspen::ops::mapIntoComputeSet(graph, expr, ts, out, mode == Mode::InPlace, cs, opName,
                                opts.forceGenerateCodelet);
  prog.add(poplar::program::Execute(cs, {dc, "map"}));
  return out;
}

// Several expressions over the same tensors, fused into one generated codelet (PopLibs'
// multi-output map). `outs` are the outputs given (WithOutput) and is ignored otherwise.
std::vector<poplar::Tensor> mapMultiImpl(poplar::Graph &graph, const std::vector<expr::Any> &anyExprs,
                                         const std::vector<poplar::Tensor> &ts,
                                         std::vector<poplar::Tensor> outs, Mode mode,
                                         poplar::program::Sequence &prog, const poplar::DebugContext &dc,
                                         const poplar::OptionFlags &options, const std::string &opName) {
  const MapOptions opts = parseMapOptions(options, opName);
  if (anyExprs.empty())
    throw poputil::poplibs_error(opName + ": no expressions given");
  const std::vector<poplar::Type> types = checkInputs(ts, opName);
  const std::size_t numOutputs = anyExprs.size();
  std::vector<const Expr *> exprs;
  for (const auto &e : anyExprs)
    exprs.push_back(&static_cast<const Expr &>(e));
  if (mode == Mode::InPlace && numOutputs > ts.size())
    throw poputil::poplibs_error(opName + ": " + std::to_string(numOutputs) +
                                 " expressions need as many tensors to write, but only " +
                                 std::to_string(ts.size()) + " were given");
  if (mode == Mode::WithOutput && outs.size() != numOutputs)
    throw poputil::poplibs_error(opName + ": " + std::to_string(numOutputs) +
                                 " expressions need as many outputs, got " + std::to_string(outs.size()));
  // Every result has the operands' common shape.
  std::vector<poplar::Type> resultTypes;
  std::set<unsigned> used;
  std::vector<std::size_t> shape;
  for (std::size_t j = 0; j < numOutputs; ++j) {
    resultTypes.push_back(aspen::ops::inferExprType(*exprs[j], types, poplar::Type(), opName));
    std::set<unsigned> usedHere;
    collectPlaceholders(*exprs[j], usedHere);
    used.insert(usedHere.begin(), usedHere.end());
    const auto shapeHere = resultShape(ts, usedHere, opName);
    if (j > 0 && shapeHere != shape)
      throw poputil::poplibs_error(opName + ": the results of the expressions have different shapes (" +
                                   shapeString(shape) + " and " + shapeString(shapeHere) + ")");
    shape = shapeHere;
  }
  if (mode == Mode::InPlace)
    outs.assign(ts.begin(), ts.begin() + numOutputs);
  if (mode != Mode::New) {
    for (std::size_t j = 0; j < numOutputs; ++j) {
      aspen::ops::requireValid(outs[j], opName, "output " + std::to_string(j + 1));
      checkOutput(outs[j], shape, resultTypes[j], ts, opName);
    }
    for (std::size_t i = 0; i < numOutputs; ++i)
      for (std::size_t j = i + 1; j < numOutputs; ++j)
        if (outs[i].intersectsWith(outs[j]))
          throw poputil::poplibs_error(opName + ": the outputs overlap (" + describe(outs[i]) + " and " +
                                       describe(outs[j]) + ")");
  }

  if (!opts.enableGenerateCodelet && !opts.forceGenerateCodelet) {
    // One expression at a time into new tensors, then (in place or into given outputs) a copy
    // of each once all are computed, so that every expression reads the inputs' old values.
    std::vector<poplar::Tensor> results;
    for (std::size_t j = 0; j < numOutputs; ++j)
      results.push_back(
          mapImpl(graph, *exprs[j], ts, poplar::Tensor(), Mode::New, prog, {dc, "result"}, options, opName));
    if (mode == Mode::New)
      return results;
    for (std::size_t j = 0; j < numOutputs; ++j)
      prog.add(poplar::program::Copy(results[j], outs[j], false, {dc, "copyResult"}));
    return outs;
  }

  if (mode == Mode::New) {
    std::vector<poplar::Tensor> operands;
    for (unsigned i : used)
      operands.push_back(ts[i - 1]);
    for (std::size_t j = 0; j < numOutputs; ++j)
      outs.push_back(aspen::ops::createOutputLike(graph, resultTypes[j], shape, operands,
                                                  {dc, "out" + std::to_string(j + 1)}));
  } else {
    for (const auto &out : outs)
      aspen::ops::mapIfUnmapped(graph, out);
  }
  if (outs[0].numElements() == 0)
    return outs;
  poplar::ComputeSet cs = graph.addComputeSet({dc, "map"});
  generatedCodelet(graph, exprs, ts, outs, mode == Mode::InPlace, cs);
  prog.add(poplar::program::Execute(cs, {dc, "map"}));
  return outs;
}

} // namespace

poplar::Tensor map(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                   poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                   const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(expr, ts, options));
  const poplar::DebugContext debugContext(di);
  return mapImpl(graph, expr, ts, poplar::Tensor(), Mode::New, prog, debugContext, options, "popops::map");
}

void mapInPlace(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(expr, ts, options));
  const poplar::DebugContext debugContext(di);
  mapImpl(graph, expr, ts, poplar::Tensor(), Mode::InPlace, prog, debugContext, options,
          "popops::mapInPlace");
}

void mapWithOutput(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                   const poplar::Tensor &out, poplar::program::Sequence &prog,
                   const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(expr, ts, out, options));
  const poplar::DebugContext debugContext(di);
  aspen::ops::requireValid(out, "popops::mapWithOutput", "the output");
  mapImpl(graph, expr, ts, out, Mode::WithOutput, prog, debugContext, options, "popops::mapWithOutput");
}

std::vector<poplar::Tensor> map(poplar::Graph &graph, const std::vector<expr::Any> &exprs,
                                const std::vector<poplar::Tensor> &ts, poplar::program::Sequence &prog,
                                const poplar::DebugContext &debugContextIn,
                                const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(exprs, ts, options));
  const poplar::DebugContext debugContext(di);
  return mapMultiImpl(graph, exprs, ts, {}, Mode::New, prog, debugContext, options, "popops::map");
}

void mapInPlace(poplar::Graph &graph, const std::vector<expr::Any> &exprs,
                const std::vector<poplar::Tensor> &ts, poplar::program::Sequence &prog,
                const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(exprs, ts, options));
  const poplar::DebugContext debugContext(di);
  mapMultiImpl(graph, exprs, ts, {}, Mode::InPlace, prog, debugContext, options, "popops::mapInPlace");
}

void mapWithOutput(poplar::Graph &graph, const std::vector<expr::Any> &exprs,
                   const std::vector<poplar::Tensor> &ts, const std::vector<poplar::Tensor> &outs,
                   poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                   const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(exprs, ts, outs, options));
  const poplar::DebugContext debugContext(di);
  mapMultiImpl(graph, exprs, ts, outs, Mode::WithOutput, prog, debugContext, options,
               "popops::mapWithOutput");
}

namespace detail {

poplar::Tensor namedMap(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                        const poplar::OptionFlags &options, const char *opName) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(expr, ts, options), opName);
  const poplar::DebugContext debugContext(di);
  return mapImpl(graph, expr, ts, poplar::Tensor(), Mode::New, prog, debugContext, options,
                 std::string("popops::") + opName);
}

void namedMapInPlace(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                     poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                     const poplar::OptionFlags &options, const char *opName) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(expr, ts, options), opName);
  const poplar::DebugContext debugContext(di);
  mapImpl(graph, expr, ts, poplar::Tensor(), Mode::InPlace, prog, debugContext, options,
          std::string("popops::") + opName);
}

void namedMapWithOutput(poplar::Graph &graph, const expr::Expr &expr, const std::vector<poplar::Tensor> &ts,
                        const poplar::Tensor &out, poplar::program::Sequence &prog,
                        const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options,
                        const char *opName) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(expr, ts, out, options), opName);
  const poplar::DebugContext debugContext(di);
  const std::string name = std::string("popops::") + opName;
  aspen::ops::requireValid(out, name, "the output");
  mapImpl(graph, expr, ts, out, Mode::WithOutput, prog, debugContext, options, name);
}

poplar::Tensor scalarConstant(poplar::Graph &graph, const poplar::Type &elementType,
                              const poplar::Type &hostType, const void *value, const char *opName) {
  const bool floatHost = hostType == poplar::FLOAT || hostType == poplar::DOUBLE;
  const bool ok =
      floatHost ? (elementType == poplar::FLOAT || elementType == poplar::HALF) : elementType == hostType;
  if (!ok)
    throw poputil::poplibs_error(std::string("popops::") + opName + ": a constant of host type " +
                                 hostType.toString().str() + " cannot be combined with a tensor of type " +
                                 elementType.toString().str());
  double v;
  if (hostType == poplar::FLOAT)
    v = *static_cast<const float *>(value);
  else if (hostType == poplar::DOUBLE)
    v = *static_cast<const double *>(value);
  else if (hostType == poplar::BOOL)
    v = *static_cast<const bool *>(value);
  else if (hostType == poplar::INT)
    v = *static_cast<const int *>(value);
  else if (hostType == poplar::UNSIGNED_INT)
    v = *static_cast<const unsigned *>(value);
  else
    throw poputil::poplibs_error(std::string("popops::") + opName + ": constants of host type " +
                                 hostType.toString().str() + " are not supported");
  return aspen::ops::scalarConstantOf(graph, elementType, v, 0, std::string(opName) + "/constant");
}

} // namespace detail

} // namespace popops

namespace aspen::ops {

void mapIntoComputeSet(poplar::Graph &graph, const popops::expr::Expr &expr,
                       const std::vector<poplar::Tensor> &ts, const poplar::Tensor &out, bool inPlace,
                       poplar::ComputeSet cs, const std::string &opName, bool forceGenerate) {
  if (!forceGenerate && popops::isSingleOperator(expr))
    popops::singleOperator(graph, expr, ts, out, inPlace, cs, opName);
  else
    popops::generatedCodelet(graph, {&expr}, ts, {out}, inPlace, cs);
}

poplar::Tensor createOutputLike(poplar::Graph &graph, const poplar::Type &type,
                                const std::vector<std::size_t> &shape,
                                const std::vector<poplar::Tensor> &operands, const poplar::DebugContext &dc) {
  const poplar::Tensor *best = nullptr;
  for (const auto &t : operands) {
    if (t.shape() != shape || t.containsAliases())
      continue;
    if (!best || (best->containsConstant() && !t.containsConstant()))
      best = &t;
  }
  poplar::Tensor out;
  if (best) {
    out = graph.clone(type, *best, dc);
    mapIfUnmapped(graph, out);
  } else {
    out = graph.addVariable(type, shape, dc);
    poputil::mapTensorLinearly(graph, out);
  }
  return out;
}

} // namespace aspen::ops
