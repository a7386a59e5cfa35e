// Copyright (c) Aspen contributors.
// popnn::pooling: the {batch, channel} planes are shared out over the tiles in
// contiguous runs; each tile's vertex pools (or back-propagates) its planes,
// the six workers splitting them.
#include <popnn/Pooling.hpp>

#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poplar/Target.hpp>
#include <poputil/OptionParsing.hpp>
#include <poputil/VertexTemplates.hpp>
#include <poputil/exceptions.hpp>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <string>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popnn::pooling::PoolParams &p) {
  return aspen::ops::streamedProfileValue(p);
}
} // namespace poputil

using namespace poplar;
using aspen::ops::describe;
using aspen::ops::shapeString;

namespace popnn {
namespace pooling {

namespace {

[[noreturn]] void fail(const std::string &op, const std::string &message) {
  throw poputil::poplibs_error(op + ": " + message);
}

template <class T> std::string listString(const std::vector<T> &v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

/// The 2-D geometry of a 1-D or 2-D pooling (1-D pools a field of height 1).
struct Geometry {
  unsigned inHeight, inWidth, outHeight, outWidth;
  unsigned kernelHeight, kernelWidth, strideHeight, strideWidth;
  int padHeight, padWidth;
};

void checkParams(const std::string &op, const PoolParams &params) {
  const std::size_t dims = params.inputFieldShape.size();
  if (dims != 1 && dims != 2)
    fail(op, "only 1-D and 2-D pooling is supported, got input field " + listString(params.inputFieldShape));
  if (params.kernelShape.size() != dims || params.stride.size() != dims ||
      params.inputTruncationOrPaddingLower.size() != dims ||
      params.inputTruncationOrPaddingUpper.size() != dims)
    fail(op, "kernel " + listString(params.kernelShape) + ", stride " + listString(params.stride) +
                 " and padding " + listString(params.inputTruncationOrPaddingLower) + "/" +
                 listString(params.inputTruncationOrPaddingUpper) + " must each have " +
                 std::to_string(dims) + " dimensions like the input field " +
                 listString(params.inputFieldShape));
  if (params.dType != FLOAT && params.dType != HALF)
    fail(op, "dType " + params.dType.toString().str() + " is not supported; use float or half");
  for (std::size_t d = 0; d < dims; ++d) {
    if (params.kernelShape[d] == 0 || params.stride[d] == 0)
      fail(op, "kernel " + listString(params.kernelShape) + " and stride " + listString(params.stride) +
                   " must be positive");
    const long long padded = (long long)params.inputFieldShape[d] + params.inputTruncationOrPaddingLower[d] +
                             params.inputTruncationOrPaddingUpper[d];
    if (padded < (long long)params.kernelShape[d])
      fail(op, "kernel " + listString(params.kernelShape) + " is larger than the padded input field (input " +
                   listString(params.inputFieldShape) + ", padding " +
                   listString(params.inputTruncationOrPaddingLower) + "/" +
                   listString(params.inputTruncationOrPaddingUpper) + ")");
  }
}

Geometry geometry(const PoolParams &params) {
  const auto out = params.getOutputFieldShape();
  const bool twoD = params.inputFieldShape.size() == 2;
  const std::size_t w = twoD ? 1 : 0;
  Geometry g;
  g.inHeight = twoD ? unsigned(params.inputFieldShape[0]) : 1;
  g.inWidth = unsigned(params.inputFieldShape[w]);
  g.outHeight = twoD ? unsigned(out[0]) : 1;
  g.outWidth = unsigned(out[w]);
  g.kernelHeight = twoD ? unsigned(params.kernelShape[0]) : 1;
  g.kernelWidth = unsigned(params.kernelShape[w]);
  g.strideHeight = twoD ? params.stride[0] : 1;
  g.strideWidth = params.stride[w];
  g.padHeight = twoD ? params.inputTruncationOrPaddingLower[0] : 0;
  g.padWidth = params.inputTruncationOrPaddingLower[w];
  return g;
}

void setGeometry(Graph &graph, VertexRef v, const Geometry &g) {
  graph.setInitialValue(v["inHeight"], g.inHeight);
  graph.setInitialValue(v["inWidth"], g.inWidth);
  graph.setInitialValue(v["outHeight"], g.outHeight);
  graph.setInitialValue(v["outWidth"], g.outWidth);
  graph.setInitialValue(v["kernelHeight"], g.kernelHeight);
  graph.setInitialValue(v["kernelWidth"], g.kernelWidth);
  graph.setInitialValue(v["strideHeight"], g.strideHeight);
  graph.setInitialValue(v["strideWidth"], g.strideWidth);
  graph.setInitialValue(v["padHeight"], g.padHeight);
  graph.setInitialValue(v["padWidth"], g.padWidth);
}

/// The shape {batch, channels, field...} of a tensor for `field`.
std::vector<std::size_t> fullShape(const PoolParams &params, const std::vector<std::size_t> &field) {
  std::vector<std::size_t> shape{params.batchSize, params.numChannels};
  shape.insert(shape.end(), field.begin(), field.end());
  return shape;
}

void checkTensor(const std::string &op, const char *what, const Tensor &t, const PoolParams &params,
                 const std::vector<std::size_t> &field) {
  aspen::ops::requireValid(t, op, what);
  const auto expected = fullShape(params, field);
  if (t.shape() != expected || t.elementType() != params.dType)
    fail(op, std::string(what) + " " + describe(t) + " must be " + shapeString(expected) + " (" +
                 params.dType.toString().str() + ") for these pooling parameters");
}

/// Planes [begin, end) of each tile used: contiguous runs, as even as possible.
std::vector<std::pair<std::size_t, std::size_t>> planesPerTile(const Target &target, std::size_t planes) {
  const std::size_t tiles = std::min<std::size_t>(std::max(1u, target.getNumTiles()), planes);
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t t = 0; t < tiles; ++t)
    ranges.emplace_back(planes * t / tiles, planes * (t + 1) / tiles);
  return ranges;
}

/// `t` {batch, channels, field...} as {planes, fieldElements}.
Tensor asPlanes(const Tensor &t) {
  const std::size_t planes = t.dim(0) * t.dim(1);
  return t.reshape({planes, planes == 0 ? 0 : t.numElements() / planes});
}

double kernelSize(const PoolParams &params) {
  double k = 1;
  for (auto d : params.kernelShape)
    k *= double(d);
  return k;
}

double product(const std::vector<std::size_t> &v) {
  double p = 1;
  for (auto d : v)
    p *= double(d);
  return p;
}

} // namespace

std::vector<std::size_t> PoolParams::getOutputFieldShape() const {
  std::vector<std::size_t> out;
  for (std::size_t d = 0; d < inputFieldShape.size(); ++d) {
    const long long padded =
        (long long)inputFieldShape[d] +
        (d < inputTruncationOrPaddingLower.size() ? inputTruncationOrPaddingLower[d] : 0) +
        (d < inputTruncationOrPaddingUpper.size() ? inputTruncationOrPaddingUpper[d] : 0);
    const long long kernel = d < kernelShape.size() ? (long long)kernelShape[d] : 1;
    const long long s = d < stride.size() && stride[d] != 0 ? stride[d] : 1;
    out.push_back(padded < kernel ? 0 : std::size_t((padded - kernel) / s + 1));
  }
  return out;
}

std::vector<std::size_t> getOutputFieldShape(const PoolParams &params) {
  return params.getOutputFieldShape();
}

const char *asString(const PoolingType &method) {
  switch (method) {
  case PoolingType::MAX:
    return "MAX";
  case PoolingType::AVG:
    return "AVG";
  case PoolingType::SUM:
    return "SUM";
  }
  return "?";
}

std::ostream &operator<<(std::ostream &o, const PoolParams &params) {
  o << "Pool params:\n"
    << "        poolingType                   " << asString(params.poolingType) << "\n"
    << "        inputFieldShape               " << listString(params.inputFieldShape) << "\n"
    << "        kernelShape                   " << listString(params.kernelShape) << "\n"
    << "        stride                        " << listString(params.stride) << "\n"
    << "        inputTruncationOrPaddingLower " << listString(params.inputTruncationOrPaddingLower) << "\n"
    << "        inputTruncationOrPaddingUpper " << listString(params.inputTruncationOrPaddingUpper) << "\n"
    << "        numChannels                   " << params.numChannels << "\n"
    << "        batchSize                     " << params.batchSize << "\n"
    << "        dType                         " << params.dType << "\n";
  return o;
}

std::uint64_t getFwdFlops(const PoolParams &params) {
  return std::uint64_t(double(params.batchSize) * double(params.numChannels) *
                       product(params.getOutputFieldShape()) * kernelSize(params));
}

std::uint64_t getBwdFlops(const PoolParams &params) {
  return getFwdFlops(params);
}

double getFwdPerfectCycleCount(const Graph &graph, const PoolParams &params) {
  const Target &target = graph.getTarget();
  return double(getFwdFlops(params)) / (double(target.getNumTiles()) * target.getVectorWidth(params.dType));
}

double getBwdPerfectCycleCount(const Graph &graph, const PoolParams &params) {
  return getFwdPerfectCycleCount(graph, params);
}

namespace {

/// PopLibs' pooling options: validated; Aspen's one layout serves them all.
void parsePoolOptions(const OptionFlags &options, const std::string &op) {
  bool introspectiveMapping = true, optimizeForSpeed = false, floatPartials = false;
  const poplibs::OptionSpec spec{
      {"poolUseIntrospectiveMapping", poplibs::OptionHandler::createWithBool(introspectiveMapping)},
      {"optimizeForSpeed", poplibs::OptionHandler::createWithBool(optimizeForSpeed)},
      {"useFloatPartialsWhereBeneficial", poplibs::OptionHandler::createWithBool(floatPartials)},
  };
  aspen::ops::parseOptions(spec, options, op);
}

} // namespace

Tensor pool(Graph &graph, const PoolParams &params, const Tensor &in, program::Sequence &prog,
            const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(params, in, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("popnn::pooling::pool", debugContext);
  parsePoolOptions(options, op);
  checkParams(op, params);
  checkTensor(op, "in", in, params, params.inputFieldShape);
  const auto outField = params.getOutputFieldShape();
  Tensor out = graph.addVariable(params.dType, fullShape(params, outField), {debugContext, "pooled"});
  const Geometry g = geometry(params);
  const Tensor inPlanes = asPlanes(in), outPlanes = asPlanes(out);
  const ComputeSet cs = graph.addComputeSet({debugContext, "pool"});
  const std::string vertex = poputil::templateVertex("popnn::Pool2D", params.dType);
  const double window = kernelSize(params);
  const std::size_t positions = std::size_t(g.kernelHeight) * g.kernelWidth;
  unsigned tile = 0;
  for (const auto &range : planesPerTile(graph.getTarget(), outPlanes.dim(0))) {
    const Tensor o = outPlanes.slice(range.first, range.second);
    graph.setTileMapping(o, tile);
    VertexRef v =
        graph.addVertex(cs, vertex, {{"in", inPlanes.slice(range.first, range.second)}, {"out", o}});
    graph.setInitialValue(v["poolingType"], unsigned(params.poolingType));
    setGeometry(graph, v, g);
    graph.setTileMapping(v, tile);
    graph.setPerfEstimate(v,
                          cost::pool(graph.getTarget(), params.dType,
                                     params.poolingType == PoolingType::MAX ? cost::PoolPass::MaxForward
                                                                            : cost::PoolPass::SumForward,
                                     range.second - range.first, g.outHeight, g.outWidth, positions),
                          std::uint64_t(o.numElements() * window));
    ++tile;
  }
  prog.add(program::Execute(cs, debugContext));
  return out;
}

Tensor poolInputGradient(Graph &graph, const PoolParams &params, const Tensor &in, const Tensor &pooled,
                         const Tensor &pooledGradient, bool useScaledGradient, program::Sequence &prog,
                         const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(params, in, pooled, pooledGradient, useScaledGradient, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("popnn::pooling::poolInputGradient", debugContext);
  parsePoolOptions(options, op);
  checkParams(op, params);
  if (params.poolingType != PoolingType::MAX)
    return poolInputGradient(graph, params, 1u, pooledGradient, prog, debugContext, options);
  const auto outField = params.getOutputFieldShape();
  checkTensor(op, "in", in, params, params.inputFieldShape);
  checkTensor(op, "pooled", pooled, params, outField);
  checkTensor(op, "pooledGradient", pooledGradient, params, outField);
  Tensor inGrad = graph.addVariable(params.dType, in.shape(), {debugContext, "inputGradient"});
  const Geometry g = geometry(params);
  const Tensor inPlanes = asPlanes(in), pooledPlanes = asPlanes(pooled),
               gradPlanes = asPlanes(pooledGradient), resultPlanes = asPlanes(inGrad);
  const ComputeSet cs = graph.addComputeSet({debugContext, "poolGrad"});
  const std::string vertex = poputil::templateVertex("popnn::MaxPool2DGrad", params.dType);
  const double window = kernelSize(params);
  const std::size_t positions = std::size_t(g.kernelHeight) * g.kernelWidth;
  unsigned tile = 0;
  for (const auto &range : planesPerTile(graph.getTarget(), resultPlanes.dim(0))) {
    const Tensor r = resultPlanes.slice(range.first, range.second);
    graph.setTileMapping(r, tile);
    VertexRef v = graph.addVertex(cs, vertex,
                                  {{"in", inPlanes.slice(range.first, range.second)},
                                   {"pooled", pooledPlanes.slice(range.first, range.second)},
                                   {"pooledGrad", gradPlanes.slice(range.first, range.second)},
                                   {"inGrad", r}});
    graph.setInitialValue(v["scaleByMatches"], unsigned(useScaledGradient ? 1 : 0));
    setGeometry(graph, v, g);
    graph.setTileMapping(v, tile);
    const std::size_t outputs = (range.second - range.first) * std::size_t(g.outHeight) * g.outWidth;
    graph.setPerfEstimate(v,
                          cost::pool(graph.getTarget(), params.dType, cost::PoolPass::MaxGrad,
                                     range.second - range.first, g.inHeight, g.inWidth, positions),
                          std::uint64_t(outputs * window));
    ++tile;
  }
  prog.add(program::Execute(cs, debugContext));
  return inGrad;
}

Tensor poolInputGradient(Graph &graph, const PoolParams &params, const unsigned fwdChansPerGroup,
                         const Tensor &pooledGradient, program::Sequence &prog,
                         const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(params, fwdChansPerGroup, pooledGradient, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("popnn::pooling::poolInputGradient", debugContext);
  parsePoolOptions(options, op);
  checkParams(op, params);
  if (params.poolingType == PoolingType::MAX)
    fail(op, "the gradient of MAX pooling needs the forward input and output; use the form taking them");
  const auto outField = params.getOutputFieldShape();
  checkTensor(op, "pooledGradient", pooledGradient, params, outField);
  Tensor inGrad = graph.addVariable(params.dType, fullShape(params, params.inputFieldShape),
                                    {debugContext, "inputGradient"});
  const Geometry g = geometry(params);
  const Tensor gradPlanes = asPlanes(pooledGradient), resultPlanes = asPlanes(inGrad);
  const ComputeSet cs = graph.addComputeSet({debugContext, "poolGrad"});
  const std::string vertex = poputil::templateVertex("popnn::SumPool2DGrad", params.dType);
  const double window = kernelSize(params);
  const std::size_t positions = std::size_t(g.kernelHeight) * g.kernelWidth;
  unsigned tile = 0;
  for (const auto &range : planesPerTile(graph.getTarget(), resultPlanes.dim(0))) {
    const Tensor r = resultPlanes.slice(range.first, range.second);
    graph.setTileMapping(r, tile);
    VertexRef v = graph.addVertex(
        cs, vertex, {{"pooledGrad", gradPlanes.slice(range.first, range.second)}, {"inGrad", r}});
    graph.setInitialValue(v["average"], unsigned(params.poolingType == PoolingType::AVG ? 1 : 0));
    setGeometry(graph, v, g);
    graph.setTileMapping(v, tile);
    const std::size_t outputs = (range.second - range.first) * std::size_t(g.outHeight) * g.outWidth;
    graph.setPerfEstimate(v,
                          cost::pool(graph.getTarget(), params.dType, cost::PoolPass::SumGrad,
                                     range.second - range.first, g.inHeight, g.inWidth, positions),
                          std::uint64_t(outputs * window));
    ++tile;
  }
  prog.add(program::Execute(cs, debugContext));
  return inGrad;
}

} // namespace pooling
} // namespace popnn
