// Copyright (c) Aspen contributors.
// Normalisation arithmetic (aspen::norms, shared with popnn's bn / gn / ln) and poplin's
// channel norms (poplin/Norms.hpp), from popops reductions and element-wise expressions with
// partial sums in `partialsType`.
#include "poplin/Norms.hpp"

#include "NormsInternal.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <popops/ElementWise.hpp>
#include <popops/Expr.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <algorithm>

using namespace poplar;
using namespace popops::expr;

namespace aspen::norms {

namespace {

// The view's shape with the reduced dimensions set to 1 (for broadcasting statistics).
std::vector<std::size_t> keptShape(const Tensor &viewed, const std::vector<std::size_t> &dims) {
  std::vector<std::size_t> s = viewed.shape();
  for (std::size_t d : dims)
    s[d] = 1;
  return s;
}

std::size_t reducedCount(const Tensor &viewed, const std::vector<std::size_t> &dims) {
  std::size_t n = 1;
  for (std::size_t d : dims)
    n *= viewed.dim(d);
  return n;
}

Tensor perChannel(const Tensor &t, const Tensor &acts) {
  std::vector<std::size_t> s{acts.dim(1)};
  for (std::size_t d = 2; d < acts.rank(); ++d)
    s.push_back(1);
  return t.reshape(s);
}

std::vector<std::size_t> allButChannel(const Tensor &acts) {
  std::vector<std::size_t> dims{0};
  for (std::size_t d = 2; d < acts.rank(); ++d)
    dims.push_back(d);
  return dims;
}

void checkStat(const Tensor &s, std::size_t n, const std::string &op, const std::string &role) {
  aspen::ops::requireValid(s, op, role);
  if (s.numElements() != n)
    throw poputil::poplibs_error(op + ": " + role + " " + aspen::ops::describe(s) + " must have " +
                                 std::to_string(n) + " elements");
}

void checkSameShape(const Tensor &a, const Tensor &b, const std::string &op, const std::string &roleB) {
  aspen::ops::requireValid(b, op, roleB);
  if (a.shape() != b.shape())
    throw poputil::poplibs_error(op + ": " + roleB + " " + aspen::ops::describe(b) +
                                 " must have the shape of " + aspen::ops::describe(a));
}

} // namespace

void checkActs(const Tensor &acts, const std::string &op) {
  aspen::ops::requireValid(acts, op, "the activations");
  if (acts.rank() < 2)
    throw poputil::poplibs_error(op + ": the activations " + aspen::ops::describe(acts) +
                                 " must have shape {N, C, ...}");
  if (acts.elementType() != FLOAT && acts.elementType() != HALF)
    throw poputil::poplibs_error(op + ": the activations " + aspen::ops::describe(acts) +
                                 " must be float or half");
  if (acts.numElements() == 0)
    throw poputil::poplibs_error(op + ": the activations " + aspen::ops::describe(acts) +
                                 " have no elements");
}

NormView channelView(const Tensor &acts) {
  return {[](const Tensor &t) { return t; }, allButChannel(acts)};
}

NormView groupView(const Tensor &acts, unsigned numGroups, bool strided, const std::string &op) {
  const std::size_t C = acts.dim(1);
  if (numGroups == 0 || C % numGroups != 0)
    throw poputil::poplibs_error(op + ": numGroups (" + std::to_string(numGroups) + ") must divide the " +
                                 std::to_string(C) + " channels of " + aspen::ops::describe(acts));
  const std::size_t G = numGroups, per = C / G;
  NormView v;
  v.view = [G, per, strided](const Tensor &t) {
    if (strided) // channel c = i * G + g -> {N, G, per, F...}
      return t.reshapePartial(1, 2, {per, G}).dimShufflePartial({2}, {1});
    return t.reshapePartial(1, 2, {G, per});
  };
  for (std::size_t d = 2; d < acts.rank() + 1; ++d)
    v.dims.push_back(d);
  return v;
}

std::pair<Tensor, Tensor> statistics(Graph &graph, const Tensor &acts, const NormView &v, float eps,
                                     bool unbiasedVarEstimate, bool stableAlgo, const Type &partialsType,
                                     program::Sequence &prog, const DebugContext &dc, const std::string &op) {
  checkActs(acts, op);
  if (partialsType != FLOAT && partialsType != HALF)
    throw poputil::poplibs_error(op + ": partialsType " + partialsType.toString().str() +
                                 " must be float or half");
  const Tensor x = v.view(acts);
  const std::size_t n = reducedCount(x, v.dims);
  const float invN = 1.0f / static_cast<float>(n);
  const Tensor sum =
      popops::reduce(graph, x, partialsType, v.dims, popops::Operation::ADD, prog, {dc, "sum"});
  const Tensor mean = popops::map(graph, Mul(Cast(_1, FLOAT), Const(invN)), {sum}, prog, {dc, "mean"});
  Tensor var;
  if (stableAlgo) {
    const Tensor centred = popops::map(graph, Sub(Cast(_1, FLOAT), _2),
                                       {x, mean.reshape(keptShape(x, v.dims))}, prog, {dc, "centred"});
    const Tensor sq =
        popops::reduce(graph, centred, FLOAT, v.dims, popops::Operation::SQUARE_ADD, prog, {dc, "sumSq"});
    var = popops::map(graph, Mul(_1, Const(invN)), {sq}, prog, {dc, "variance"});
  } else {
    const Tensor sq =
        popops::reduce(graph, x, partialsType, v.dims, popops::Operation::SQUARE_ADD, prog, {dc, "sumSq"});
    var = popops::map(graph, Max(Sub(Mul(Cast(_1, FLOAT), Const(invN)), Square(_2)), Const(0.0f)), {sq, mean},
                      prog, {dc, "variance"});
  }
  const float unbias =
      unbiasedVarEstimate && n > 1 ? static_cast<float>(n) / static_cast<float>(n - 1) : 1.0f;
  const Type type = acts.elementType();
  const Tensor invStdDev = popops::map(graph, Cast(Inv(Sqrt(Add(Mul(_1, Const(unbias)), Const(eps)))), type),
                                       {var}, prog, {dc, "invStdDev"});
  const Tensor meanOut =
      type == FLOAT ? mean : popops::map(graph, Cast(_1, type), {mean}, prog, {dc, "mean"});
  return {meanOut.flatten(), invStdDev.flatten()};
}

Tensor whiten(Graph &graph, const Tensor &acts, const Tensor &mean, const Tensor &invStdDev,
              const NormView &v, program::Sequence &prog, const DebugContext &dc, const std::string &op) {
  checkActs(acts, op);
  const Tensor x = v.view(acts);
  const auto ks = keptShape(x, v.dims);
  std::size_t k = 1;
  for (std::size_t s : ks)
    k *= s;
  checkStat(mean, k, op, "the mean");
  checkStat(invStdDev, k, op, "the inverse standard deviation");
  Tensor out = graph.clone(acts, {dc, "whitened"});
  popops::mapWithOutput(graph,
                        Cast(Mul(Sub(Cast(_1, FLOAT), Cast(_2, FLOAT)), Cast(_3, FLOAT)), acts.elementType()),
                        {x, mean.reshape(ks), invStdDev.reshape(ks)}, v.view(out), prog, {dc, "whiten"});
  return out;
}

Tensor scaleShift(Graph &graph, const Tensor &whitened, const Tensor &gamma, const Tensor &beta,
                  program::Sequence &prog, const DebugContext &dc, const std::string &op) {
  checkActs(whitened, op);
  checkStat(gamma, whitened.dim(1), op, "gamma");
  checkStat(beta, whitened.dim(1), op, "beta");
  return popops::map(
      graph, Cast(Add(Mul(Cast(_1, FLOAT), Cast(_2, FLOAT)), Cast(_3, FLOAT)), whitened.elementType()),
      {whitened, perChannel(gamma, whitened), perChannel(beta, whitened)}, prog, {dc, "normalise"});
}

std::pair<Tensor, Tensor> paramGradients(Graph &graph, const Tensor &whitened, const Tensor &gradsIn,
                                         const Type &partialsType, program::Sequence &prog,
                                         const DebugContext &dc, const std::string &op) {
  checkActs(whitened, op);
  checkSameShape(whitened, gradsIn, op, "gradsIn");
  const auto dims = allButChannel(whitened);
  const Tensor prodT = popops::map(graph, Mul(Cast(_1, FLOAT), Cast(_2, FLOAT)), {whitened, gradsIn}, prog,
                                   {dc, "gradsTimesWhitened"});
  const Type type = whitened.elementType();
  const Tensor gammaDelta =
      popops::reduce(graph, prodT, type, dims, popops::Operation::ADD, prog, {dc, "gammaDelta"});
  const Tensor betaDelta =
      popops::reduce(graph, gradsIn, type, dims, popops::Operation::ADD, prog, {dc, "betaDelta"});
  (void)partialsType;
  return {gammaDelta, betaDelta};
}

Tensor gradients(Graph &graph, const Tensor &whitened, const Tensor &gradsIn, const Tensor &invStdDev,
                 const Tensor &gamma, const NormView &v, const Type &partialsType, program::Sequence &prog,
                 const DebugContext &dc, const std::string &op) {
  checkActs(whitened, op);
  checkSameShape(whitened, gradsIn, op, "gradsIn");
  checkStat(gamma, whitened.dim(1), op, "gamma");
  const Tensor xv = v.view(whitened);
  const auto ks = keptShape(xv, v.dims);
  std::size_t k = 1;
  for (std::size_t s : ks)
    k *= s;
  checkStat(invStdDev, k, op, "the inverse standard deviation");
  (void)partialsType;
  // g' = gradsIn * gamma, in float
  const Tensor gw = popops::map(graph, Mul(Cast(_1, FLOAT), Cast(_2, FLOAT)),
                                {gradsIn, perChannel(gamma, whitened)}, prog, {dc, "gradsTimesGamma"});
  const Tensor gwv = v.view(gw);
  const float invN = 1.0f / static_cast<float>(reducedCount(xv, v.dims));
  const Tensor m1 = popops::reduce(graph, gwv, FLOAT, v.dims, popops::Operation::ADD, prog, {dc, "sumGrads"});
  const Tensor gx = popops::map(graph, Mul(_1, Cast(_2, FLOAT)), {gwv, xv}, prog, {dc, "gradsTimesWhitened"});
  const Tensor m2 =
      popops::reduce(graph, gx, FLOAT, v.dims, popops::Operation::ADD, prog, {dc, "sumGradsWhitened"});
  Tensor out = graph.clone(whitened, {dc, "gradsOut"});
  popops::mapWithOutput(graph,
                        Cast(Mul(Cast(_5, FLOAT), Sub(Sub(_1, Mul(_2, Const(invN))),
                                                      Mul(Cast(_3, FLOAT), Mul(_4, Const(invN))))),
                             whitened.elementType()),
                        {gwv, m1.reshape(ks), xv, m2.reshape(ks), invStdDev.reshape(ks)}, v.view(out), prog,
                        {dc, "gradients"});
  return out;
}

void paramUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta, const Tensor &scale,
                 const Tensor &gamma, const Tensor &beta, program::Sequence &prog, const DebugContext &dc,
                 const std::string &op) {
  aspen::ops::requireValid(gamma, op, "gamma");
  aspen::ops::requireValid(beta, op, "beta");
  checkSameShape(gamma, gammaDelta, op, "gammaDelta");
  checkSameShape(beta, betaDelta, op, "betaDelta");
  popops::scaledAddTo(graph, gamma, gammaDelta, scale, prog, {dc, "gamma"});
  popops::scaledAddTo(graph, beta, betaDelta, scale, prog, {dc, "beta"});
}

std::pair<Tensor, Tensor> normaliseLayer(Graph &graph, const Tensor &acts, const Tensor &gamma,
                                         const Tensor &beta, const Tensor &mean, const Tensor &invStdDev,
                                         const NormView &v, program::Sequence &prog, const DebugContext &dc,
                                         const std::string &name, const std::string &op) {
  const Tensor whitened = whiten(graph, acts, mean, invStdDev, v, prog, {dc, name}, op);
  const Tensor out = scaleShift(graph, whitened, gamma, beta, prog, {dc, name}, op);
  return {out, whitened};
}

std::pair<Tensor, Tensor> paramGradientsOfActs(Graph &graph, const Tensor &acts, const Tensor &gradsIn,
                                               const Tensor &mean, const Tensor &invStdDev, const NormView &v,
                                               const Type &partialsType, program::Sequence &prog,
                                               const DebugContext &dc, const std::string &name,
                                               const std::string &op) {
  const Tensor whitened = whiten(graph, acts, mean, invStdDev, v, prog, {dc, name}, op);
  return paramGradients(graph, whitened, gradsIn, partialsType, prog, {dc, name}, op);
}

Tensor gradientsOfActs(Graph &graph, const Tensor &acts, const Tensor &gradsIn, const Tensor &mean,
                       const Tensor &invStdDev, const Tensor &gamma, const NormView &v,
                       const Type &partialsType, program::Sequence &prog, const DebugContext &dc,
                       const std::string &name, const std::string &op) {
  const Tensor whitened = whiten(graph, acts, mean, invStdDev, v, prog, {dc, name}, op);
  return gradients(graph, whitened, gradsIn, invStdDev, gamma, v, partialsType, prog, {dc, name}, op);
}

void paramUpdateByConstant(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta, float scale,
                           const Tensor &gamma, const Tensor &beta, program::Sequence &prog,
                           const DebugContext &dc, const std::string &name, const std::string &op) {
  aspen::ops::requireValid(gamma, op, "gamma");
  Tensor s = graph.addConstant(FLOAT, {}, scale, {dc, "scale"});
  graph.setTileMapping(s, 0);
  paramUpdate(graph, gammaDelta, betaDelta, s, gamma, beta, prog, {dc, name}, op);
}

} // namespace aspen::norms

namespace poplin {

namespace {

Tensor channelParam(Graph &graph, const Tensor &acts, const Type &type, const std::string &name,
                    const std::string &op) {
  aspen::norms::checkActs(acts, op);
  Tensor t = graph.addVariable(type, {acts.dim(1)}, name);
  poputil::mapTensorLinearly(graph, t);
  return t;
}

} // namespace

Tensor createNormGamma(Graph &graph, const Tensor &acts, const Type &type) {
  return channelParam(graph, acts, type, "gamma", "poplin::createNormGamma");
}
Tensor createNormGamma(Graph &graph, const Tensor &acts) {
  return createNormGamma(graph, acts, acts.valid() ? acts.elementType() : FLOAT);
}
Tensor createNormBeta(Graph &graph, const Tensor &acts, const Type &type) {
  return channelParam(graph, acts, type, "beta", "poplin::createNormBeta");
}
Tensor createNormBeta(Graph &graph, const Tensor &acts) {
  return createNormBeta(graph, acts, acts.valid() ? acts.elementType() : FLOAT);
}
std::pair<Tensor, Tensor> createNormParams(Graph &graph, const Tensor &acts) {
  return {createNormGamma(graph, acts), createNormBeta(graph, acts)};
}

std::pair<Tensor, Tensor> normStatistics(Graph &graph, const Tensor &actsUngrouped, float eps,
                                         program::Sequence &prog, bool unbiasedVarEstimate, bool stableAlgo,
                                         const Type &partialsType, const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn,
                                 DI_ARGS(actsUngrouped, eps, unbiasedVarEstimate, stableAlgo, partialsType));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::normStatistics";
  aspen::norms::checkActs(actsUngrouped, op);
  return aspen::norms::statistics(graph, actsUngrouped, aspen::norms::channelView(actsUngrouped), eps,
                                  unbiasedVarEstimate, stableAlgo, partialsType, prog,
                                  {debugContext, "normStatistics"}, op);
}

Tensor normWhiten(Graph &graph, const Tensor &acts, const Tensor &mean, const Tensor &iStdDev,
                  program::Sequence &prog, const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(acts, mean, iStdDev));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::normWhiten";
  aspen::norms::checkActs(acts, op);
  return aspen::norms::whiten(graph, acts, mean, iStdDev, aspen::norms::channelView(acts), prog,
                              {debugContext, "normWhiten"}, op);
}

Tensor normalise(Graph &graph, const Tensor &actsWhitened, const Tensor &gamma, const Tensor &beta,
                 program::Sequence &prog, const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(actsWhitened, gamma, beta));
  const poplar::DebugContext debugContext(di);
  return aspen::norms::scaleShift(graph, actsWhitened, gamma, beta, prog, {debugContext, "normalise"},
                                  "poplin::normalise");
}

std::pair<Tensor, Tensor> normParamGradients(Graph &graph, const Tensor &actsWhitened, const Tensor &gradsIn,
                                             program::Sequence &prog, const Type &partialsType,
                                             const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(actsWhitened, gradsIn, partialsType));
  const poplar::DebugContext debugContext(di);
  return aspen::norms::paramGradients(graph, actsWhitened, gradsIn, partialsType, prog,
                                      {debugContext, "normParamGradients"}, "poplin::normParamGradients");
}

Tensor normGradients(Graph &graph, const Tensor &gradsIn, const Tensor &gamma, program::Sequence &prog,
                     const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(gradsIn, gamma));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::normGradients";
  aspen::norms::checkActs(gradsIn, op);
  aspen::ops::requireValid(gamma, op, "gamma");
  if (gamma.numElements() != gradsIn.dim(1))
    throw poputil::poplibs_error(op + ": gamma " + aspen::ops::describe(gamma) +
                                 " must have one element per channel of " + aspen::ops::describe(gradsIn));
  std::vector<std::size_t> s{gradsIn.dim(1)};
  for (std::size_t d = 2; d < gradsIn.rank(); ++d)
    s.push_back(1);
  return popops::mul(graph, gradsIn, gamma.reshape(s), prog, {debugContext, "normGradients"});
}

Tensor normStatisticsGradients(Graph &graph, const Tensor &actsWhitened, const Tensor &gradsIn,
                               const Tensor &invStdDev, program::Sequence &prog, const Type &partialsType,
                               const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(actsWhitened, gradsIn, invStdDev, partialsType));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::normStatisticsGradients";
  aspen::norms::checkActs(actsWhitened, op);
  // The gradients given are already multiplied by gamma: use gamma = 1.
  Tensor ones =
      graph.addConstant(actsWhitened.elementType(), {actsWhitened.dim(1)}, 1.0f, {debugContext, "ones"});
  graph.setTileMapping(ones, 0);
  return aspen::norms::gradients(graph, actsWhitened, gradsIn, invStdDev, ones,
                                 aspen::norms::channelView(actsWhitened), partialsType, prog,
                                 {debugContext, "normStatisticsGradients"}, op);
}

} // namespace poplin
