// Copyright (c) Aspen contributors.
// poplin::convolution: the transforms and the im2col windows as tensor views, then one grouped
// matrix product planned by the matMul planner:
//   weights {G, Co, K*Ci}  x  windows {G, K*Ci, B*outField}  ->  {G, Co, B*outField}
// (K = kernel positions; rows of the windows are (kernel position, input channel)). The
// weight-update pass is the product of the output gradients with the same windows
// transposed; the backward pass is a convolution with transformed parameters.
#include "poplin/Convolution.hpp"

#include "ConvInternal.hpp"
#include "MatMulInternal.hpp"
#include "MatMulPlan.hpp"
#include "PlanConstraints.hpp"
#include "Preplan.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Expr.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Zero.hpp>
#include <poputil/OptionParsing.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const poplin::ConvParams &p) {
  return aspen::ops::streamedProfileValue(p);
}
} // namespace poputil

using namespace poplar;

namespace poplin {

namespace {

using aspen::ops::describe;
using aspen::ops::shapeString;

std::size_t product(const std::vector<std::size_t> &v) {
  return std::accumulate(v.begin(), v.end(), std::size_t(1), std::multiplies<>());
}

// The value `options` gives `key`, if it gives one.
std::optional<std::string> optionValue(const OptionFlags &options, const std::string &key) {
  for (const auto &kv : options)
    if (kv.first == key)
      return kv.second;
  return std::nullopt;
}

// Convolution options: parsed (unknown keys rejected), the planner's ones passed to matMul.
OptionFlags matMulOptions(const OptionFlags &options, const std::string &op) {
  double amp = 0.6;
  std::string partials, pass, constraints, ignoredString;
  bool ignoredBool = false;
  unsigned ignoredUnsigned = 0;
  const std::map<std::string, std::string> passes{{"NONE", "NONE"},
                                                  {"INFERENCE_FWD", "INFERENCE_FWD"},
                                                  {"TRAINING_FWD", "TRAINING_FWD"},
                                                  {"TRAINING_BWD", "TRAINING_BWD"},
                                                  {"TRAINING_WU", "TRAINING_WU"},
                                                  {"FC_INFERENCE_FWD", "INFERENCE_FWD"},
                                                  {"FC_TRAINING_FWD", "TRAINING_FWD"},
                                                  {"FC_TRAINING_BWD", "TRAINING_BWD"},
                                                  {"FC_TRAINING_WU", "TRAINING_WU"},
                                                  {"NONE_MATMUL", "NONE"}};
  poplibs::OptionSpec spec{
      {"availableMemoryProportion", poplibs::OptionHandler::createWithDouble(amp)},
      {"partialsType", poplibs::OptionHandler::createWithString(partials)},
      {"pass", poplibs::OptionHandler::createWithEnum(pass, passes)},
      {"use128BitConvUnitLoad", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableMultiStageReduce", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableFastReduce", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableConvDithering", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"remapOutputTensor", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"gatherConvOutput", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableTransformsPlan", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableAmpHalfEnginesPlan", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"planConstraints", poplibs::OptionHandler::createWithString(constraints)},
      {"planConstraintsOutputFilename", poplibs::OptionHandler::createWithString(ignoredString)},
      {"startTileMultiplier", poplibs::OptionHandler::createWithUnsignedInt(ignoredUnsigned)},
  };
  aspen::ops::parseOptions(spec, options, op);
  (void)planning::parsePlanConstraints(constraints, op); // validated as PopLibs does; mapped by constrained()
  OptionFlags out;
  for (const char *key : {"availableMemoryProportion", "partialsType"})
    if (const std::optional<std::string> value = optionValue(options, key))
      out.set(key, *value);
  return out;
}

// A tensor of zeros of `shape` (a broadcast constant: read-only).
Tensor zeros(Graph &graph, const Type &type, const std::vector<std::size_t> &shape) {
  Tensor z = graph.addConstant(type, {1}, 0.0f, "zero");
  graph.setTileMapping(z, 0);
  const std::size_t n = product(shape);
  if (n == 0)
    return z.slice(0, 0).reshape(shape);
  return z.broadcast(static_cast<unsigned>(n), 0).reshape(shape);
}

// Applies an input transform to the spatial dimensions of `t`, which start at `firstDim`.
Tensor transformInput(Graph &graph, Tensor t, unsigned firstDim, const ConvParams::InputTransform &tr) {
  for (unsigned d = 0; d < tr.dilation.size(); ++d) {
    const unsigned dim = firstDim + d;
    t = t.slice(tr.truncationLower[d], t.dim(dim) - tr.truncationUpper[d], dim);
    const unsigned dil = tr.dilation[d];
    if (dil > 1 && t.dim(dim) > 1) {
      const std::size_t n = t.dim(dim);
      std::vector<std::size_t> zshape = t.shape();
      zshape.insert(zshape.begin() + dim + 1, dil - 1);
      Tensor withZeros = concat(t.expand({dim + 1}), zeros(graph, t.elementType(), zshape), dim + 1);
      t = withZeros.reshapePartial(dim, dim + 2, {n * dil}).slice(0, (n - 1) * dil + 1, dim);
    }
    std::vector<Tensor> parts;
    auto pad = [&](unsigned amount) {
      std::vector<std::size_t> s = t.shape();
      s[dim] = amount;
      parts.push_back(zeros(graph, t.elementType(), s));
    };
    if (tr.paddingLower[d])
      pad(tr.paddingLower[d]);
    parts.push_back(t);
    if (tr.paddingUpper[d])
      pad(tr.paddingUpper[d]);
    if (parts.size() > 1)
      t = concat(parts, dim);
    if (tr.flip[d])
      t = t.reverse(dim);
  }
  return t;
}

// The im2col windows of the transformed input `in` {B, G*Ci, T...} as {G, K*Ci, B*O'}, where
// O' is the output field before output padding.
Tensor windows(const Tensor &in, const ConvParams &p, const std::vector<std::size_t> &kernel) {
  const std::size_t nd = p.getNumFieldDims();
  const std::size_t G = p.numConvGroups, Ci = p.inputChannelsPerConvGroup, B = p.batchSize;
  std::vector<Tensor> rows;
  const std::size_t K = product(kernel);
  for (std::size_t k = 0; k < K; ++k) {
    // kernel position k in row-major order
    std::vector<std::size_t> pos(nd);
    std::size_t rest = k;
    for (std::size_t d = nd; d-- > 0;) {
      pos[d] = rest % kernel[d];
      rest /= kernel[d];
    }
    Tensor w = in;
    std::size_t fieldSize = 1;
    for (unsigned d = 0; d < nd; ++d) {
      const unsigned dim = 2 + d;
      const std::size_t u = p.getUntransformedOutputSize(d);
      w = w.slice(pos[d], pos[d] + u, dim);
      w = w.slice(p.outputTransform.truncationLower[d], u - p.outputTransform.truncationUpper[d], dim);
      if (p.outputTransform.stride[d] > 1)
        w = w.subSample(p.outputTransform.stride[d], dim);
      fieldSize *= w.dim(dim);
    }
    // {B, G*Ci, O'...} -> {G, Ci, B*O'}
    w = w.reshapePartial(1, 2, {G, Ci});
    std::vector<unsigned> perm{1, 2, 0};
    for (unsigned d = 0; d < nd; ++d)
      perm.push_back(3 + d);
    w = w.dimShuffle(perm).reshape({G, Ci, B * fieldSize});
    rows.push_back(w);
  }
  return concat(rows, 1);
}

// The weights {G, Co, Ci, kernel...} (after the optional transpose and flip and the kernel
// transform) as {G, Co, K*Ci}.
Tensor weightMatrix(Graph &graph, Tensor w, const ConvParams &p, bool transposeAndFlip,
                    std::vector<std::size_t> &kernelOut) {
  const std::size_t nd = p.getNumFieldDims();
  if (transposeAndFlip) {
    w = w.dimShufflePartial({1, 2}, {2, 1});
    for (unsigned d = 0; d < nd; ++d)
      w = w.reverse(3 + d);
  }
  w = transformInput(graph, w, 3, p.kernelTransform);
  const std::vector<std::size_t> wshape = w.shape();
  kernelOut.assign(wshape.begin() + 3, wshape.end());
  std::vector<unsigned> perm{0, 1};
  for (unsigned d = 0; d < nd; ++d)
    perm.push_back(3 + d);
  perm.push_back(2);
  return w.dimShuffle(perm).reshape(
      {p.numConvGroups, p.outputChannelsPerConvGroup, product(kernelOut) * p.inputChannelsPerConvGroup});
}

// {G, Co, B*O'} -> {B, G*Co, O'...}
Tensor fromMatrix(const Tensor &r, const ConvParams &p, const std::vector<std::size_t> &field) {
  std::vector<std::size_t> shape{p.numConvGroups, p.outputChannelsPerConvGroup, p.batchSize};
  shape.insert(shape.end(), field.begin(), field.end());
  std::vector<unsigned> perm{2, 0, 1};
  for (unsigned d = 0; d < field.size(); ++d)
    perm.push_back(3 + d);
  return r.reshape(shape).dimShuffle(perm).reshapePartial(1, 3,
                                                          {p.numConvGroups * p.outputChannelsPerConvGroup});
}

// The output field before output padding.
std::vector<std::size_t> stridedField(const ConvParams &p) {
  std::vector<std::size_t> f;
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    f.push_back(p.getOutputSize(d) - p.outputTransform.paddingLower[d] - p.outputTransform.paddingUpper[d]);
  return f;
}

std::vector<std::size_t> inputShape(const ConvParams &p) {
  std::vector<std::size_t> s{p.batchSize, p.getNumInputChans()};
  s.insert(s.end(), p.inputFieldShape.begin(), p.inputFieldShape.end());
  return s;
}

std::vector<std::size_t> weightsShape(const ConvParams &p, bool transposed) {
  std::vector<std::size_t> s{p.numConvGroups,
                             transposed ? p.inputChannelsPerConvGroup : p.outputChannelsPerConvGroup,
                             transposed ? p.outputChannelsPerConvGroup : p.inputChannelsPerConvGroup};
  s.insert(s.end(), p.kernelShape.begin(), p.kernelShape.end());
  return s;
}

std::vector<std::size_t> outputShape(const ConvParams &p) {
  std::vector<std::size_t> s{p.batchSize, p.getNumOutputChans()};
  const auto f = p.getOutputFieldShape();
  s.insert(s.end(), f.begin(), f.end());
  return s;
}

void requireTensor(const Tensor &t, const std::vector<std::size_t> &shape, const Type &type,
                   const std::string &op, const std::string &role) {
  aspen::ops::requireValid(t, op, role);
  if (t.shape() != shape)
    throw poputil::poplibs_error(op + ": " + role + " " + describe(t) + " must have shape " +
                                 shapeString(shape) + " for the convolution parameters");
  if (t.elementType() != type)
    throw poputil::poplibs_error(op + ": " + role + " " + describe(t) + " must have element type " +
                                 type.toString().str());
}

ConvParams checked(const ConvParams &params, const std::string &op) {
  aspen::conv::validateParams(params, op);
  return aspen::conv::filled(params);
}

// The matrix shapes {G, Co, K*Ci} and {G, K*Ci, B*O'} of a forward convolution.
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> matShapes(const ConvParams &p) {
  std::size_t K = 1;
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    K *= p.getTransformedKernelSize(d);
  const std::size_t M = p.batchSize * product(stridedField(p));
  return {{p.numConvGroups, p.outputChannelsPerConvGroup, K * p.inputChannelsPerConvGroup},
          {p.numConvGroups, K * p.inputChannelsPerConvGroup, M}};
}

// The sizes of `p` that its planConstraints split.
planning::ConvSizes convSizes(const ConvParams &p, const Target &target) {
  planning::ConvSizes sizes;
  sizes.numTiles = target.getNumTiles();
  sizes.groups = p.numConvGroups;
  sizes.batch = p.batchSize;
  sizes.inChans = p.inputChannelsPerConvGroup;
  sizes.outChans = p.outputChannelsPerConvGroup;
  sizes.outField = stridedField(p);
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    sizes.kernel.push_back(p.getTransformedKernelSize(d));
  sizes.inField = p.inputFieldShape;
  return sizes;
}

// `mm` (matMulOptions of `options`) with the convolution's planConstraints mapped onto the splits
// of the product `which` (docs/matmul.md, "Plan constraints").
OptionFlags constrained(OptionFlags mm, const OptionFlags &options, const ConvParams &p,
                        planning::ConvProduct which, const Target &target, const std::string &op) {
  const planning::ConvPlanConstraints c =
      planning::parsePlanConstraints(optionValue(options, "planConstraints").value_or(""), op);
  const std::string mapped = planning::convToMatMulConstraints(c, convSizes(p, target), which, op);
  if (!mapped.empty())
    mm.set("planConstraints", mapped);
  return mm;
}

// PopLibs' `planConstraintsOutputFilename`: where the plan of a convolution's product is written,
// "<value>_FWD.json", "_BWD.json" or "_WU.json" by the `pass` option ("<value>.json" for NONE), as
// PopLibs names them; empty without the option.
std::string planConstraintsPath(const OptionFlags &options) {
  std::string path = optionValue(options, "planConstraintsOutputFilename").value_or("");
  if (path.empty())
    return path;
  const std::string pass = optionValue(options, "pass").value_or("NONE");
  const auto endsWith = [&pass](const std::string &tail) {
    return pass.size() >= tail.size() && pass.compare(pass.size() - tail.size(), tail.size(), tail) == 0;
  };
  path += endsWith("_FWD") ? "_FWD" : endsWith("_BWD") ? "_BWD" : endsWith("_WU") ? "_WU" : "";
  return path + ".json";
}

// Writes `used`, the splits the product `which` of the convolution `p` is built with, to `path`
// as `planConstraints`. The content is PopLibs' vocabulary (level 0: the partition and the
// transforms); given back as `planConstraints`, it plans the same splits (docs/ops-nn.md "Plan
// constraints written out").
void writePlanConstraints(const std::string &path, const planning::ProductSplits &used, const ConvParams &p,
                          planning::ConvProduct which, const Target &target, const std::string &op) {
  const std::string json = planning::convConstraintsOfPlan(used, convSizes(p, target), which);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << json;
  out.close();
  if (!out)
    throw poplar::invalid_option(op + ": option 'planConstraintsOutputFilename': cannot write the plan to '" +
                                 path + "'");
}

// The options of the product createInput lays a convolution's input out for, {G, Co, Ci} x
// {G, Ci, B*F} (F: the input field): the convolution's planConstraints, validated against the
// convolution itself (the same errors as it), then mapped onto that product. It has no kernel:
// kernel splits are dropped; field splits are clamped to the input field and the input-channel
// parallel split to a serial pass's channels. For a 1x1 convolution without transforms the product
// is the convolution's own and the constraints map exactly as the convolution maps them, so its
// input is laid out where the constrained plan reads it.
OptionFlags inputLayoutOptions(OptionFlags mm, const OptionFlags &options, const ConvParams &p,
                               const Target &target, const std::string &op) {
  (void)constrained(mm, options, p, planning::ConvProduct::Forward, target, op);
  planning::ConvPlanConstraints c =
      planning::parsePlanConstraints(optionValue(options, "planConstraints").value_or(""), op);
  c.kernelSplit.clear();
  for (auto &[d, s] : c.fieldSplit)
    if (d < p.inputFieldShape.size())
      s.value = unsigned(std::min<std::size_t>(s.value, std::max<std::size_t>(p.inputFieldShape[d], 1)));
  const std::size_t ci = p.inputChannelsPerConvGroup;
  const std::size_t serial = c.inChanSerial.set() ? std::max(1u, c.inChanSerial.value) : 1;
  if (c.inChanParallel.set())
    c.inChanParallel.value =
        unsigned(std::min<std::size_t>(c.inChanParallel.value, (ci + serial - 1) / serial));
  planning::ConvSizes sizes = convSizes(p, target); // with no kernel: the output field is the input's
  sizes.outField = p.inputFieldShape;
  sizes.kernel.assign(p.getNumFieldDims(), 1);
  const std::string mapped = planning::convToMatMulConstraints(c, sizes, planning::ConvProduct::Forward, op);
  if (!mapped.empty())
    mm.set("planConstraints", mapped);
  return mm;
}

bool hasOutputPadding(const ConvParams &p) {
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    if (p.outputTransform.paddingLower[d] || p.outputTransform.paddingUpper[d])
      return true;
  return false;
}

// `planPath`: where planConstraintsOutputFilename writes the product's plan (empty: nowhere).
Tensor convolutionImpl(Graph &graph, const Tensor &in, const Tensor &weights, const ConvParams &p,
                       bool transposeAndFlipWeights, program::Sequence &prog, const DebugContext &dc,
                       const OptionFlags &mmOptions, PlanningCache *cache, const std::string &planPath,
                       const std::string &op) {
  std::vector<std::size_t> kernel;
  const Tensor wm = weightMatrix(graph, weights, p, transposeAndFlipWeights, kernel);
  const Tensor x = windows(transformInput(graph, in, 2, p.inputTransform), p, kernel);
  if (!planPath.empty())
    writePlanConstraints(planPath,
                         internal::matMulGroupedStagedRhsSplits(graph, wm, x, p.outputType, mmOptions, cache),
                         p, planning::ConvProduct::Forward, graph.getTarget(), op);
  // The windows are a view with a run per (kernel position, channel, image, output row):
  // copying them into the layout the product wants keeps the product's per-tile blocks cheap
  // to cut (as PopLibs rearranges a convolution's input before its vertices read it). In
  // serial passes, each pass copies only the windows it reads, so the copies are live one
  // pass at a time.
  const Tensor r =
      internal::matMulGroupedStagedRhs(graph, wm, x, prog, p.outputType, {dc, "matMul"}, mmOptions, cache);
  return fromMatrix(r, p, stridedField(p));
}

} // namespace

std::uint64_t getFwdFlops(const ConvParams &params) {
  const ConvParams p = checked(params, "poplin::getFwdFlops");
  const auto [a, b] = matShapes(p);
  return 2ull * a[0] * a[1] * a[2] * b[2];
}
std::uint64_t getBwdFlops(const ConvParams &params) {
  return getFwdFlops(params);
}
std::uint64_t getWuFlops(const ConvParams &params) {
  return getFwdFlops(params);
}

Tensor createWeights(Graph &graph, const ConvParams &params, const DebugContext &debugContextIn,
                     const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(params, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::createWeights";
  const ConvParams p = checked(params, op);
  const OptionFlags mm = constrained(matMulOptions(options, op), options, p, planning::ConvProduct::Forward,
                                     graph.getTarget(), op);
  bool identityKernel = true;
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    identityKernel =
        identityKernel && p.getTransformedKernelSize(d) == p.kernelShape[d] && !p.kernelTransform.flip[d];
  if (!identityKernel) {
    Tensor w = graph.addVariable(p.inputType, weightsShape(p, false), {debugContext, "weights"});
    poputil::mapTensorLinearly(graph, w);
    return w;
  }
  const auto [a, b] = matShapes(p);
  Tensor lhs = createMatMulGroupedInputLHS(graph, p.inputType, p.outputType, a, b, {debugContext, "weights"},
                                           mm, cache);
  // {G, Co, K*Ci} -> {G, Co, kernel..., Ci} -> {G, Co, Ci, kernel...}
  std::vector<std::size_t> shape{p.numConvGroups, p.outputChannelsPerConvGroup};
  shape.insert(shape.end(), p.kernelShape.begin(), p.kernelShape.end());
  shape.push_back(p.inputChannelsPerConvGroup);
  const unsigned nd = static_cast<unsigned>(p.getNumFieldDims());
  return lhs.reshape(shape).dimRoll(2 + nd, 2);
}

Tensor createBiases(Graph &graph, const Tensor &acts, const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(acts));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::createBiases";
  aspen::ops::requireValid(acts, op, "the activations");
  if (acts.rank() < 2)
    throw poputil::poplibs_error(op + ": the activations " + describe(acts) + " must have shape {B, C, ...}");
  Tensor b = graph.addVariable(acts.elementType(), {acts.dim(1)}, {debugContext, "biases"});
  poputil::mapTensorLinearly(graph, b);
  return b;
}

Tensor createInput(Graph &graph, const ConvParams &params, const DebugContext &debugContextIn,
                   const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(params, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::createInput";
  const ConvParams p = checked(params, op);
  const OptionFlags mm = inputLayoutOptions(matMulOptions(options, op), options, p, graph.getTarget(), op);
  // Laid out as the matrix product's right-hand side would be for a 1x1 kernel: channels by
  // (batch, field) columns, so the windows of a tile's columns are mostly local.
  const std::size_t F = product(p.inputFieldShape);
  const std::vector<std::size_t> a{p.numConvGroups, p.outputChannelsPerConvGroup,
                                   p.inputChannelsPerConvGroup};
  const std::vector<std::size_t> b{p.numConvGroups, p.inputChannelsPerConvGroup, p.batchSize * F};
  Tensor rhs =
      createMatMulGroupedInputRHS(graph, p.inputType, p.outputType, a, b, {debugContext, "input"}, mm, cache);
  std::vector<std::size_t> shape{p.numConvGroups, p.inputChannelsPerConvGroup, p.batchSize};
  shape.insert(shape.end(), p.inputFieldShape.begin(), p.inputFieldShape.end());
  std::vector<unsigned> perm{2, 0, 1};
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    perm.push_back(3 + d);
  return rhs.reshape(shape).dimShuffle(perm).reshapePartial(1, 3, {p.getNumInputChans()});
}

Tensor createConvOutput(Graph &graph, const ConvParams &params, const DebugContext &debugContextIn,
                        const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(params, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::createConvOutput";
  const ConvParams p = checked(params, op);
  const OptionFlags mm = constrained(matMulOptions(options, op), options, p, planning::ConvProduct::Forward,
                                     graph.getTarget(), op);
  if (hasOutputPadding(p)) {
    Tensor out = graph.addVariable(p.outputType, outputShape(p), {debugContext, "output"});
    poputil::mapTensorLinearly(graph, out);
    return out;
  }
  const auto [a, b] = matShapes(p);
  Tensor r =
      createMatMulGroupedOutput(graph, p.inputType, p.outputType, a, b, {debugContext, "output"}, mm, cache);
  return fromMatrix(r, p, stridedField(p));
}

void convolutionWithOutput(Graph &graph, const Tensor &in, const Tensor &weights, const Tensor &out,
                           const ConvParams &params, bool transposeAndFlipWeights, program::Sequence &prog,
                           const DebugContext &debugContextIn, const OptionFlags &options,
                           PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn,
                                 DI_ARGS(in, weights, out, params, transposeAndFlipWeights, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::convolutionWithOutput";
  requireTensor(out, outputShape(checked(params, op)), params.outputType, op, "the output");
  if (!out.isParallelWriteable())
    throw poputil::poplibs_error(op + ": the output " + describe(out) + " cannot be written");
  Tensor r =
      convolution(graph, in, weights, params, transposeAndFlipWeights, prog, debugContext, options, cache);
  prog.add(program::Copy(r, out, false, {debugContext, "copyOutput"}));
}

Tensor convolution(Graph &graph, const Tensor &in, const Tensor &weights, const ConvParams &params,
                   bool transposeAndFlipWeights, program::Sequence &prog, const DebugContext &debugContextIn,
                   const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn,
                                 DI_ARGS(in, weights, params, transposeAndFlipWeights, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::convolution";
  const ConvParams p = checked(params, op);
  const OptionFlags mm = constrained(matMulOptions(options, op), options, p, planning::ConvProduct::Forward,
                                     graph.getTarget(), op);
  requireTensor(in, inputShape(p), p.inputType, op, "the input");
  requireTensor(weights, weightsShape(p, transposeAndFlipWeights), p.inputType, op, "the weights");
  const DebugContext dc{debugContext, "convolution"};
  Tensor r = convolutionImpl(graph, in, weights, p, transposeAndFlipWeights, prog, dc, mm, cache,
                             planConstraintsPath(options), op);
  if (!hasOutputPadding(p))
    return r;
  Tensor out = graph.addVariable(p.outputType, outputShape(p), {dc, "output"});
  poputil::mapTensorLinearly(graph, out);
  popops::zero(graph, out, prog, {dc, "padding"});
  Tensor interior = out;
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    interior = interior.slice(p.outputTransform.paddingLower[d],
                              out.dim(2 + d) - p.outputTransform.paddingUpper[d], 2 + d);
  prog.add(program::Copy(r, interior, false, dc));
  return out;
}

void weightsTransposeChansFlipXY(Graph &graph, const Tensor &weightsIn, const Tensor &weightsOut,
                                 program::Sequence &prog, const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(weightsIn, weightsOut));
  const poplar::DebugContext debugContext(di);
  (void)graph;
  const std::string op = "poplin::weightsTransposeChansFlipXY";
  aspen::ops::requireValid(weightsIn, op, "weightsIn");
  aspen::ops::requireValid(weightsOut, op, "weightsOut");
  if (weightsIn.rank() < 3)
    throw poputil::poplibs_error(op + ": weightsIn " + describe(weightsIn) +
                                 " must have shape {G, Co, Ci, kernel...}");
  Tensor t = weightsIn.dimShufflePartial({1, 2}, {2, 1});
  for (unsigned d = 3; d < t.rank(); ++d)
    t = t.reverse(d);
  if (t.shape() != weightsOut.shape() || weightsIn.elementType() != weightsOut.elementType())
    throw poputil::poplibs_error(op + ": weightsOut " + describe(weightsOut) + " must have shape " +
                                 shapeString(t.shape()) + " and the type of weightsIn " +
                                 describe(weightsIn));
  prog.add(program::Copy(t, weightsOut, false, {debugContext, "weightsTransposeChansFlipXY"}));
}

Tensor calculateWeightDeltas(Graph &graph, const Tensor &zDeltas, const Tensor &activations,
                             const ConvParams &params, program::Sequence &prog,
                             const DebugContext &debugContextIn, const OptionFlags &options,
                             PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(zDeltas, activations, params, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::calculateWeightDeltas";
  const ConvParams p = checked(params, op);
  const OptionFlags mm = constrained(matMulOptions(options, op), options, p,
                                     planning::ConvProduct::WeightUpdate, graph.getTarget(), op);
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    if (p.kernelTransform != ConvParams::InputTransform(p.getNumFieldDims()))
      throw poputil::poplibs_error(op +
                                   ": the kernelTransform must be the identity for the weight-update pass");
  requireTensor(activations, inputShape(p), p.inputType, op, "the activations");
  requireTensor(zDeltas, outputShape(p), p.outputType, op, "zDeltas");
  const DebugContext dc{debugContext, "calculateWeightDeltas"};
  // Output gradients without the output padding, as {G, Co, B*O'}.
  Tensor z = zDeltas;
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    z = z.slice(p.outputTransform.paddingLower[d], z.dim(2 + d) - p.outputTransform.paddingUpper[d], 2 + d);
  const std::size_t M = p.batchSize * product(stridedField(p));
  z = z.reshapePartial(1, 2, {p.numConvGroups, p.outputChannelsPerConvGroup});
  std::vector<unsigned> perm{1, 2, 0};
  for (unsigned d = 0; d < p.getNumFieldDims(); ++d)
    perm.push_back(3 + d);
  z = z.dimShuffle(perm).reshape({p.numConvGroups, p.outputChannelsPerConvGroup, M});
  if (z.elementType() != p.inputType)
    z = popops::cast(graph, z, p.inputType, prog, {dc, "castDeltas"});
  const Tensor x = windows(transformInput(graph, activations, 2, p.inputTransform), p, p.kernelShape);
  const Tensor xT = x.dimShufflePartial({1, 2}, {2, 1});
  if (const std::string planPath = planConstraintsPath(options); !planPath.empty())
    writePlanConstraints(planPath,
                         internal::matMulGroupedStagedRhsSplits(graph, z, xT, p.inputType, mm, cache), p,
                         planning::ConvProduct::WeightUpdate, graph.getTarget(), op);
  Tensor dw = internal::matMulGroupedStagedRhs(graph, z, xT, prog, p.inputType, {dc, "matMul"}, mm, cache);
  std::vector<std::size_t> shape{p.numConvGroups, p.outputChannelsPerConvGroup};
  shape.insert(shape.end(), p.kernelShape.begin(), p.kernelShape.end());
  shape.push_back(p.inputChannelsPerConvGroup);
  return dw.reshape(shape).dimRoll(static_cast<unsigned>(2 + p.getNumFieldDims()), 2);
}

namespace {
// The two public overloads differ only in the scale: a tensor or a float.
template <class Scale>
void weightUpdate(Graph &graph, const Tensor &zDeltas, const Tensor &weights, const Tensor &activations,
                  ConvParams params, const Scale &scale, program::Sequence &prog,
                  const DebugContext &debugContextIn, const OptionFlags &options, PlanningCache *cache,
                  const std::string &api) {
  aspen::ops::PoplinDebugInfo di(debugContextIn,
                                 DI_ARGS(zDeltas, weights, activations, params, scale, options), api);
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::convolutionWeightUpdate";
  requireTensor(weights, weightsShape(checked(params, op), false), params.inputType, op, "the weights");
  Tensor dw = calculateWeightDeltas(graph, zDeltas, activations, params, prog, debugContext, options, cache);
  popops::scaledAddTo(graph, weights, dw, scale, prog, {debugContext, "convolutionWeightUpdate"});
}
} // namespace

void convolutionWeightUpdate(Graph &graph, const Tensor &zDeltas, const Tensor &weights,
                             const Tensor &activations, ConvParams params, const Tensor &scale,
                             program::Sequence &prog, const DebugContext &debugContext,
                             const OptionFlags &options, PlanningCache *cache) {
  weightUpdate(graph, zDeltas, weights, activations, std::move(params), scale, prog, debugContext, options,
               cache, __func__);
}

void convolutionWeightUpdate(Graph &graph, const Tensor &zDeltas, const Tensor &weights,
                             const Tensor &activations, ConvParams params, float scale,
                             program::Sequence &prog, const DebugContext &debugContext,
                             const OptionFlags &options, PlanningCache *cache) {
  weightUpdate(graph, zDeltas, weights, activations, std::move(params), scale, prog, debugContext, options,
               cache, __func__);
}

namespace {

void biasUpdate(Graph &graph, const Tensor &zDeltas, const Tensor &biases, const Tensor &scale,
                program::Sequence &prog, const DebugContext &dc, const std::string &op) {
  aspen::ops::requireValid(zDeltas, op, "zDeltas");
  aspen::ops::requireValid(biases, op, "the biases");
  if (zDeltas.rank() < 2 || biases.rank() != 1 || biases.dim(0) != zDeltas.dim(1))
    throw poputil::poplibs_error(op + ": the biases " + describe(biases) +
                                 " must have one element per channel of zDeltas " + describe(zDeltas));
  std::vector<std::size_t> dims{0};
  for (std::size_t d = 2; d < zDeltas.rank(); ++d)
    dims.push_back(d);
  popops::reduceWithOutput(graph, zDeltas, biases, dims,
                           popops::ReduceParams(popops::Operation::ADD, true, scale), prog, dc);
}

} // namespace

void convolutionBiasUpdate(Graph &graph, const Tensor &zDeltas, const Tensor &biases, const Tensor &scale,
                           const OptionFlags &options, program::Sequence &prog,
                           const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(zDeltas, biases, scale, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  biasUpdate(graph, zDeltas, biases, scale, prog, {debugContext, "convolutionBiasUpdate"},
             "poplin::convolutionBiasUpdate");
}

void convolutionBiasUpdate(Graph &graph, const Tensor &zDeltas, const Tensor &biases, float scale,
                           const OptionFlags &options, program::Sequence &prog,
                           const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(zDeltas, biases, scale, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  const std::string op = "poplin::convolutionBiasUpdate";
  aspen::ops::requireValid(biases, op, "the biases");
  Tensor s = graph.addConstant(FLOAT, {}, scale, {debugContext, "scale"});
  graph.setTileMapping(s, 0);
  biasUpdate(graph, zDeltas, biases, s, prog, {debugContext, "convolutionBiasUpdate"}, op);
}

void addBias(Graph &graph, const Tensor &acts, const Tensor &biases, program::Sequence &prog,
             const DebugContext &debugContextIn) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(acts, biases));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::addBias";
  aspen::ops::requireValid(acts, op, "the activations");
  aspen::ops::requireValid(biases, op, "the biases");
  if (acts.rank() < 2 || biases.rank() != 1 || biases.dim(0) != acts.dim(1))
    throw poputil::poplibs_error(op + ": the biases " + describe(biases) +
                                 " must have one element per channel of " + describe(acts));
  std::vector<std::size_t> shape{biases.dim(0)};
  for (std::size_t d = 2; d < acts.rank(); ++d)
    shape.push_back(1);
  popops::addInPlace(graph, acts, biases.reshape(shape), prog, {debugContext, "addBias"});
}

void reportPlanInfo(std::ostream &out, const Graph &graph, const ConvParams &params,
                    const OptionFlags &options, PlanningCache *cache) {
  const std::string op = "poplin::reportPlanInfo";
  const ConvParams p = checked(params, op);
  const OptionFlags mm = constrained(matMulOptions(options, op), options, p, planning::ConvProduct::Forward,
                                     graph.getTarget(), op);
  const auto [a, b] = matShapes(p);
  out << "poplin::convolution as a grouped matrix product (rows: output channels; columns: batch x output "
         "field; reduction: kernel positions x input channels)\n";
  matMulGroupedReportPlan(out, graph, p.inputType, p.outputType, a, b, mm, cache);
}

std::vector<preplanning::PlanRequest> preplanning::convolutionRequests(const Target &target,
                                                                       const ConvParams &params,
                                                                       const OptionFlags &options,
                                                                       const std::string &op) {
  const ConvParams p = checked(params, op);
  const OptionFlags mm = matMulOptions(options, op);
  const OptionFlags fwd = constrained(mm, options, p, planning::ConvProduct::Forward, target, op);
  // The forward product (convolution, createWeights, createConvOutput) and the layout of
  // createInput, with the shapes and options those ops use.
  const auto [a, b] = matShapes(p);
  const std::vector<std::size_t> inA{p.numConvGroups, p.outputChannelsPerConvGroup,
                                     p.inputChannelsPerConvGroup};
  const std::vector<std::size_t> inB{p.numConvGroups, p.inputChannelsPerConvGroup,
                                     p.batchSize * product(p.inputFieldShape)};
  return {matMulRequest(&target, {p.inputType, p.outputType, a, b}, fwd, op),
          matMulRequest(&target, {p.inputType, p.outputType, inA, inB},
                        inputLayoutOptions(mm, options, p, target, op), op)};
}

void convolutionValidateOptions(const OptionFlags &options) {
  (void)matMulOptions(options, "poplin::convolutionValidateOptions");
}

// The backward pass of a fully-connected layer convolves the output gradients with the forward
// weights' channels swapped. PopLibs rearranges them with transpose vertices when its plans
// differ; here the weights are copied into a tensor laid out for the backward convolution.
Tensor fullyConnectedWeightTranspose(Graph &graph, Tensor weights, const ConvParams &params,
                                     program::Sequence &prog, const DebugContext &debugContextIn,
                                     const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(weights, params, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "poplin::fullyConnectedWeightTranspose";
  const ConvParams p = checked(params, op);
  (void)matMulOptions(options, op);
  if (p.getNumFieldDims() != 1)
    throw poputil::poplibs_error(op + ": params has " + std::to_string(p.getNumFieldDims()) +
                                 " field dimensions; a fully-connected layer is a 1-d convolution");
  // The forward weights {G, Co, Ci, k} of the forward parameters (params with the channels
  // swapped) are the backward weights transposed.
  requireTensor(weights, weightsShape(p, true), p.inputType, op, "weights");
  Tensor out = createWeights(graph, p, {debugContext, "transposed"}, options, cache);
  prog.add(program::Copy(weights.dimShufflePartial({1}, {2}), out, false, {debugContext, "transpose"}));
  di.addOutput(out);
  return out;
}

} // namespace poplin
