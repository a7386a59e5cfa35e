// Copyright (c) Aspen contributors.
// popnn::in: instance normalisation is group normalisation with one group per channel. Each op
// goes straight to the shared arithmetic (aspen::norms) over the group-norm view with C groups,
// so its errors and debug information name the instance-norm op, not popnn::gn.
#include "popnn/InstanceNorm.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "poplin/NormsInternal.hpp"

#include <poputil/OptionParsing.hpp>
#include <poputil/exceptions.hpp>

using namespace poplar;

namespace popnn::in {

namespace {

const char *const kLib = "popnn::in::";

// The view with one group per channel: statistics per (n, c) over the field. The group-norm
// option is accepted (PopLibs passes the options on to group norm); with one channel per group
// both groupings are the same.
aspen::norms::NormView viewOf(const Tensor &acts, const OptionFlags &options, const std::string &op) {
  aspen::norms::checkActs(acts, op);
  bool strided = true;
  poplibs::OptionSpec spec{
      {"groupNormStridedChannelGrouping", poplibs::OptionHandler::createWithBool(strided)}};
  aspen::ops::parseOptions(spec, options, op);
  return aspen::norms::groupView(acts, static_cast<unsigned>(acts.dim(1)), strided, op);
}

void addOutputs(aspen::ops::PopnnDebugInfo &di, const char *first, const char *second,
                const std::pair<Tensor, Tensor> &outs) {
  di.addOutputs(
      {{first, poputil::toProfileValue(outs.first)}, {second, poputil::toProfileValue(outs.second)}});
}

} // namespace

std::pair<Tensor, Tensor> instanceNormStatistics(Graph &graph, const Tensor acts, float eps,
                                                 program::Sequence &prog, bool unbiasedVarEstimate,
                                                 bool stableAlgo, const Type &partialsType,
                                                 const DebugContext &debugContextIn,
                                                 const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(acts, eps, unbiasedVarEstimate, stableAlgo, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "instanceNormStatistics";
  auto outs =
      aspen::norms::statistics(graph, acts, viewOf(acts, options, op), eps, unbiasedVarEstimate, stableAlgo,
                               partialsType, prog, {debugContext, "instanceNormStatistics"}, op);
  addOutputs(di, "mean", "iStd", outs);
  return outs;
}

Tensor instanceNormWhiten(Graph &graph, const Tensor &acts, const Tensor &mean, const Tensor &invStdDev,
                          program::Sequence &prog, const DebugContext &debugContextIn,
                          const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "instanceNormWhiten";
  Tensor out = aspen::norms::whiten(graph, acts, mean, invStdDev, viewOf(acts, options, op), prog,
                                    {debugContext, "instanceNormWhiten"}, op);
  di.addOutput(out);
  return out;
}

std::pair<Tensor, Tensor> instanceNormalise(Graph &graph, const Tensor &acts, const Tensor &gamma,
                                            const Tensor &beta, const Tensor &mean, const Tensor &invStdDev,
                                            program::Sequence &prog, const DebugContext &debugContextIn,
                                            const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gamma, beta, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "instanceNormalise";
  const auto outs =
      aspen::norms::normaliseLayer(graph, acts, gamma, beta, mean, invStdDev, viewOf(acts, options, op), prog,
                                   debugContext, "instanceNormalise", op);
  addOutputs(di, "normActs", "whitenedActs", outs);
  return outs;
}

std::pair<Tensor, Tensor> instanceNormParamGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn,
                                                     const Tensor &mean, const Tensor &iStdDev,
                                                     program::Sequence &prog, const Type &partialsType,
                                                     const DebugContext &debugContextIn,
                                                     const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gradsIn, mean, iStdDev, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "instanceNormParamGradients";
  auto outs =
      aspen::norms::paramGradientsOfActs(graph, acts, gradsIn, mean, iStdDev, viewOf(acts, options, op),
                                         partialsType, prog, debugContext, "instanceNormParamGradients", op);
  addOutputs(di, "gammaDelta", "betaDelta", outs);
  return outs;
}

std::pair<Tensor, Tensor> instanceNormParamGradients(Graph &graph, const Tensor &actsWhitened,
                                                     const Tensor &gradsIn, program::Sequence &prog,
                                                     const Type &partialsType,
                                                     const DebugContext &debugContextIn,
                                                     const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(actsWhitened, gradsIn, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "instanceNormParamGradients";
  (void)viewOf(actsWhitened, options, op); // checks the activations and the options
  auto outs = aspen::norms::paramGradients(graph, actsWhitened, gradsIn, partialsType, prog,
                                           {debugContext, "instanceNormParamGradients"}, op);
  addOutputs(di, "gammaDelta", "betaDelta", outs);
  return outs;
}

Tensor instanceNormGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn, const Tensor &mean,
                             const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                             const Type &partialsType, const DebugContext &debugContextIn,
                             const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(acts, gradsIn, mean, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "instanceNormGradients";
  Tensor out =
      aspen::norms::gradientsOfActs(graph, acts, gradsIn, mean, invStdDev, gamma, viewOf(acts, options, op),
                                    partialsType, prog, debugContext, "instanceNormGradients", op);
  di.addOutput(out);
  return out;
}

Tensor instanceNormGradients(Graph &graph, const Tensor &actsWhitened, const Tensor &gradsIn,
                             const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                             const Type &partialsType, const DebugContext &debugContextIn,
                             const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(actsWhitened, gradsIn, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "instanceNormGradients";
  const auto v = viewOf(actsWhitened, options, op);
  Tensor out = aspen::norms::gradients(graph, actsWhitened, gradsIn, invStdDev, gamma, v, partialsType, prog,
                                       {debugContext, "instanceNormGradients"}, op);
  di.addOutput(out);
  return out;
}

void instanceNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta, float scale,
                             Tensor &gamma, Tensor &beta, program::Sequence &prog,
                             const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  const std::string op = std::string(kLib) + "instanceNormParamUpdate";
  aspen::norms::paramUpdateByConstant(graph, gammaDelta, betaDelta, scale, gamma, beta, prog, debugContext,
                                      "instanceNormParamUpdate", op);
}

void instanceNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta,
                             const Tensor &scale, Tensor &gamma, Tensor &beta, program::Sequence &prog,
                             const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  const std::string op = std::string(kLib) + "instanceNormParamUpdate";
  aspen::ops::requireValid(scale, op, "scale");
  if (scale.numElements() != 1)
    throw poputil::poplibs_error(op + ": scale " + aspen::ops::describe(scale) + " must have one element");
  aspen::norms::paramUpdate(graph, gammaDelta, betaDelta, scale, gamma, beta, prog,
                            {debugContext, "instanceNormParamUpdate"}, op);
}

// Operation counts per channel (c channels, a elements per statistic), as PopLibs counts them:
//  statistics: sum (a - 1), divide, square a, sum of squares (a - 1), divide, square of the mean,
//              subtract, add eps, square root: 3a + 4;
//  activations: subtract the mean, scale by 1/stddev, by gamma, add beta: 4a;
//  backward (whitened activations kept): reduce the gradients and divide (a), product with the
//              whitened activations, reduce and divide, multiply back (3a), add the two parts,
//              gamma / stddev once, scale (2a + 1): 6a + 1;
//  weight update: beta (reduce a - 1, scale, update) a + 1, gamma (product a, reduce a - 1, scale,
//              update) 2a + 1: 3a + 2.
std::uint64_t getFwdFlops(std::uint64_t numChannels, std::uint64_t actsPerChannel, bool computeEstimates) {
  const std::uint64_t estimates = (3 * actsPerChannel + 4) * numChannels;
  return (computeEstimates ? estimates : 0) + 4 * actsPerChannel * numChannels;
}

std::uint64_t getBwdFlops(std::uint64_t numChannels, std::uint64_t actsPerChannel) {
  return (6 * actsPerChannel + 1) * numChannels;
}

std::uint64_t getWuFlops(std::uint64_t numChannels, std::uint64_t actsPerChannel) {
  return (3 * actsPerChannel + 2) * numChannels;
}

} // namespace popnn::in
