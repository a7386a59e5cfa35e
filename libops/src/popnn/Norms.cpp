// Copyright (c) Aspen contributors.
// popnn::bn, popnn::gn and popnn::ln: the shared normalisation arithmetic (poplin's
// aspen::norms) over the batch-norm view (per channel) or the group-norm view (per batch
// element and group; layer norm is one group).
#include "popnn/BatchNorm.hpp"
#include "popnn/GroupNorm.hpp"
#include "popnn/LayerNorm.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "poplin/NormsInternal.hpp"

#include <popops/ElementWise.hpp>
#include <popops/Expr.hpp>
#include <poputil/OptionParsing.hpp>
#include <poputil/exceptions.hpp>

using namespace poplar;

namespace popnn {

namespace bn {

namespace {
const char *const kLib = "popnn::bn::";
aspen::norms::NormView viewOf(const Tensor &acts, const OptionFlags &options, const std::string &op) {
  aspen::norms::checkActs(acts, op);
  (void)options;
  return aspen::norms::channelView(acts);
}
} // namespace

std::pair<Tensor, Tensor> batchNormStatistics(Graph &graph, const Tensor acts, float eps,
                                              program::Sequence &prog, bool unbiasedVarEstimate,
                                              bool stableAlgo, const Type &partialsType,
                                              const DebugContext &debugContextIn,
                                              const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(acts, eps, unbiasedVarEstimate, stableAlgo, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "batchNormStatistics";
  return aspen::norms::statistics(graph, acts, viewOf(acts, options, op), eps, unbiasedVarEstimate,
                                  stableAlgo, partialsType, prog, {debugContext, "batchNormStatistics"}, op);
}

Tensor batchNormWhiten(Graph &graph, const Tensor &acts, const Tensor &mean, const Tensor &invStdDev,
                       program::Sequence &prog, const DebugContext &debugContextIn,
                       const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "batchNormWhiten";
  return aspen::norms::whiten(graph, acts, mean, invStdDev, viewOf(acts, options, op), prog,
                              {debugContext, "batchNormWhiten"}, op);
}

std::pair<Tensor, Tensor> batchNormalise(Graph &graph, const Tensor &acts, const Tensor &gamma,
                                         const Tensor &beta, const Tensor &mean, const Tensor &invStdDev,
                                         program::Sequence &prog, const DebugContext &debugContextIn,
                                         const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gamma, beta, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "batchNormalise";
  return aspen::norms::normaliseLayer(graph, acts, gamma, beta, mean, invStdDev, viewOf(acts, options, op),
                                      prog, debugContext, "batchNormalise", op);
}

std::pair<Tensor, Tensor> batchNormParamGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn,
                                                  const Tensor &mean, const Tensor &iStdDev,
                                                  program::Sequence &prog, const Type &partialsType,
                                                  const DebugContext &debugContextIn,
                                                  const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gradsIn, mean, iStdDev, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "batchNormParamGradients";
  return aspen::norms::paramGradientsOfActs(graph, acts, gradsIn, mean, iStdDev, viewOf(acts, options, op),
                                            partialsType, prog, debugContext, "batchNormParamGradients", op);
}

std::pair<Tensor, Tensor> batchNormParamGradients(Graph &graph, const Tensor &actsWhitened,
                                                  const Tensor &gradsIn, program::Sequence &prog,
                                                  const Type &partialsType,
                                                  const DebugContext &debugContextIn,
                                                  const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(actsWhitened, gradsIn, partialsType, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  return aspen::norms::paramGradients(graph, actsWhitened, gradsIn, partialsType, prog,
                                      {debugContext, "batchNormParamGradients"},
                                      std::string(kLib) + "batchNormParamGradients");
}

Tensor batchNormGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn, const Tensor &mean,
                          const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                          const Type &partialsType, const DebugContext &debugContextIn,
                          const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(acts, gradsIn, mean, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "batchNormGradients";
  return aspen::norms::gradientsOfActs(graph, acts, gradsIn, mean, invStdDev, gamma,
                                       viewOf(acts, options, op), partialsType, prog, debugContext,
                                       "batchNormGradients", op);
}

Tensor batchNormGradients(Graph &graph, const Tensor &actsWhitened, const Tensor &gradsIn,
                          const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                          const Type &partialsType, const DebugContext &debugContextIn,
                          const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(actsWhitened, gradsIn, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "batchNormGradients";
  const auto v = viewOf(actsWhitened, options, op);
  return aspen::norms::gradients(graph, actsWhitened, gradsIn, invStdDev, gamma, v, partialsType, prog,
                                 {debugContext, "batchNormGradients"}, op);
}

void batchNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta, float scale,
                          Tensor &gamma, Tensor &beta, program::Sequence &prog,
                          const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  const std::string op = std::string(kLib) + "batchNormParamUpdate";
  aspen::norms::paramUpdateByConstant(graph, gammaDelta, betaDelta, scale, gamma, beta, prog, debugContext,
                                      "batchNormParamUpdate", op);
}

void batchNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta,
                          const Tensor &scale, Tensor &gamma, Tensor &beta, program::Sequence &prog,
                          const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  aspen::norms::paramUpdate(graph, gammaDelta, betaDelta, scale, gamma, beta, prog,
                            {debugContext, "batchNormParamUpdate"},
                            std::string(kLib) + "batchNormParamUpdate");
}

} // namespace bn

namespace bn {
Tensor batchNormalise(Graph &graph, const Tensor &acts, const Tensor &combinedMultiplicand,
                      const Tensor &addend, program::Sequence &prog, const DebugContext &debugContextIn,
                      const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, combinedMultiplicand, addend, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  return aspen::norms::scaleShift(graph, acts, combinedMultiplicand, addend, prog,
                                  {debugContext, "batchNormalise"}, "popnn::bn::batchNormalise");
}
} // namespace bn

namespace gn {

namespace {
const char *const kLib = "popnn::gn::";
aspen::norms::NormView viewOf(const Tensor &acts, unsigned numGroups, const OptionFlags &options,
                              const std::string &op) {
  aspen::norms::checkActs(acts, op);
  bool strided = true;
  poplibs::OptionSpec spec{
      {"groupNormStridedChannelGrouping", poplibs::OptionHandler::createWithBool(strided)}};
  aspen::ops::parseOptions(spec, options, op);
  return aspen::norms::groupView(acts, numGroups, strided, op);
}
} // namespace

std::pair<Tensor, Tensor> groupNormStatistics(Graph &graph, const Tensor acts, float eps,
                                              program::Sequence &prog, unsigned numGroups,
                                              bool unbiasedVarEstimate, bool stableAlgo,
                                              const Type &partialsType, const DebugContext &debugContextIn,
                                              const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(
      debugContextIn, DI_ARGS(acts, eps, numGroups, unbiasedVarEstimate, stableAlgo, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "groupNormStatistics";
  return aspen::norms::statistics(graph, acts, viewOf(acts, numGroups, options, op), eps, unbiasedVarEstimate,
                                  stableAlgo, partialsType, prog, {debugContext, "groupNormStatistics"}, op);
}

namespace {
// The number of groups of statistics {N * G} computed for `acts` ({C} for batch norm).
unsigned groupsOf(const Tensor &acts, const Tensor &stats) {
  return acts.valid() && stats.valid() && acts.rank() >= 2 && acts.dim(0) > 0
             ? static_cast<unsigned>(stats.numElements() / acts.dim(0))
             : 1u;
}
} // namespace

Tensor groupNormWhiten(Graph &graph, const Tensor &acts, const Tensor &mean, const Tensor &invStdDev,
                       program::Sequence &prog, const DebugContext &debugContextIn,
                       const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "groupNormWhiten";
  return aspen::norms::whiten(graph, acts, mean, invStdDev, viewOf(acts, groupsOf(acts, mean), options, op),
                              prog, {debugContext, "groupNormWhiten"}, op);
}

std::pair<Tensor, Tensor> groupNormalise(Graph &graph, const Tensor &acts, const Tensor &gamma,
                                         const Tensor &beta, const Tensor &mean, const Tensor &invStdDev,
                                         program::Sequence &prog, const DebugContext &debugContextIn,
                                         const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gamma, beta, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "groupNormalise";
  return aspen::norms::normaliseLayer(graph, acts, gamma, beta, mean, invStdDev,
                                      viewOf(acts, groupsOf(acts, mean), options, op), prog, debugContext,
                                      "groupNormalise", op);
}

std::pair<Tensor, Tensor> groupNormParamGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn,
                                                  const Tensor &mean, const Tensor &iStdDev,
                                                  program::Sequence &prog, const Type &partialsType,
                                                  const DebugContext &debugContextIn,
                                                  const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gradsIn, mean, iStdDev, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "groupNormParamGradients";
  return aspen::norms::paramGradientsOfActs(graph, acts, gradsIn, mean, iStdDev,
                                            viewOf(acts, groupsOf(acts, mean), options, op), partialsType,
                                            prog, debugContext, "groupNormParamGradients", op);
}

std::pair<Tensor, Tensor> groupNormParamGradients(Graph &graph, const Tensor &actsWhitened,
                                                  const Tensor &gradsIn, program::Sequence &prog,
                                                  const Type &partialsType,
                                                  const DebugContext &debugContextIn,
                                                  const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(actsWhitened, gradsIn, partialsType, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  return aspen::norms::paramGradients(graph, actsWhitened, gradsIn, partialsType, prog,
                                      {debugContext, "groupNormParamGradients"},
                                      std::string(kLib) + "groupNormParamGradients");
}

Tensor groupNormGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn, const Tensor &mean,
                          const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                          const Type &partialsType, const DebugContext &debugContextIn,
                          const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(acts, gradsIn, mean, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "groupNormGradients";
  return aspen::norms::gradientsOfActs(graph, acts, gradsIn, mean, invStdDev, gamma,
                                       viewOf(acts, groupsOf(acts, mean), options, op), partialsType, prog,
                                       debugContext, "groupNormGradients", op);
}

Tensor groupNormGradients(Graph &graph, const Tensor &actsWhitened, const Tensor &gradsIn,
                          const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                          const Type &partialsType, const DebugContext &debugContextIn,
                          const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(actsWhitened, gradsIn, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "groupNormGradients";
  const auto v = viewOf(actsWhitened, groupsOf(actsWhitened, invStdDev), options, op);
  return aspen::norms::gradients(graph, actsWhitened, gradsIn, invStdDev, gamma, v, partialsType, prog,
                                 {debugContext, "groupNormGradients"}, op);
}

void groupNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta, float scale,
                          Tensor &gamma, Tensor &beta, program::Sequence &prog,
                          const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  const std::string op = std::string(kLib) + "groupNormParamUpdate";
  aspen::norms::paramUpdateByConstant(graph, gammaDelta, betaDelta, scale, gamma, beta, prog, debugContext,
                                      "groupNormParamUpdate", op);
}

void groupNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta,
                          const Tensor &scale, Tensor &gamma, Tensor &beta, program::Sequence &prog,
                          const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  aspen::norms::paramUpdate(graph, gammaDelta, betaDelta, scale, gamma, beta, prog,
                            {debugContext, "groupNormParamUpdate"},
                            std::string(kLib) + "groupNormParamUpdate");
}

} // namespace gn

namespace ln {

namespace {
const char *const kLib = "popnn::ln::";
aspen::norms::NormView viewOf(const Tensor &acts, const OptionFlags &options, const std::string &op) {
  aspen::norms::checkActs(acts, op);
  (void)options;
  return aspen::norms::groupView(acts, 1, false, op);
}
} // namespace

std::pair<Tensor, Tensor> layerNormStatistics(Graph &graph, const Tensor acts, float eps,
                                              program::Sequence &prog, bool unbiasedVarEstimate,
                                              bool stableAlgo, const Type &partialsType,
                                              const DebugContext &debugContextIn,
                                              const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(acts, eps, unbiasedVarEstimate, stableAlgo, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "layerNormStatistics";
  return aspen::norms::statistics(graph, acts, viewOf(acts, options, op), eps, unbiasedVarEstimate,
                                  stableAlgo, partialsType, prog, {debugContext, "layerNormStatistics"}, op);
}

Tensor layerNormWhiten(Graph &graph, const Tensor &acts, const Tensor &mean, const Tensor &invStdDev,
                       program::Sequence &prog, const DebugContext &debugContextIn,
                       const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "layerNormWhiten";
  return aspen::norms::whiten(graph, acts, mean, invStdDev, viewOf(acts, options, op), prog,
                              {debugContext, "layerNormWhiten"}, op);
}

std::pair<Tensor, Tensor> layerNormalise(Graph &graph, const Tensor &acts, const Tensor &gamma,
                                         const Tensor &beta, const Tensor &mean, const Tensor &invStdDev,
                                         program::Sequence &prog, const DebugContext &debugContextIn,
                                         const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gamma, beta, mean, invStdDev, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "layerNormalise";
  return aspen::norms::normaliseLayer(graph, acts, gamma, beta, mean, invStdDev, viewOf(acts, options, op),
                                      prog, debugContext, "layerNormalise", op);
}

std::pair<Tensor, Tensor> layerNormParamGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn,
                                                  const Tensor &mean, const Tensor &iStdDev,
                                                  program::Sequence &prog, const Type &partialsType,
                                                  const DebugContext &debugContextIn,
                                                  const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(acts, gradsIn, mean, iStdDev, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "layerNormParamGradients";
  return aspen::norms::paramGradientsOfActs(graph, acts, gradsIn, mean, iStdDev, viewOf(acts, options, op),
                                            partialsType, prog, debugContext, "layerNormParamGradients", op);
}

std::pair<Tensor, Tensor> layerNormParamGradients(Graph &graph, const Tensor &actsWhitened,
                                                  const Tensor &gradsIn, program::Sequence &prog,
                                                  const Type &partialsType,
                                                  const DebugContext &debugContextIn,
                                                  const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(actsWhitened, gradsIn, partialsType, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  return aspen::norms::paramGradients(graph, actsWhitened, gradsIn, partialsType, prog,
                                      {debugContext, "layerNormParamGradients"},
                                      std::string(kLib) + "layerNormParamGradients");
}

Tensor layerNormGradients(Graph &graph, const Tensor &acts, const Tensor &gradsIn, const Tensor &mean,
                          const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                          const Type &partialsType, const DebugContext &debugContextIn,
                          const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(acts, gradsIn, mean, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "layerNormGradients";
  return aspen::norms::gradientsOfActs(graph, acts, gradsIn, mean, invStdDev, gamma,
                                       viewOf(acts, options, op), partialsType, prog, debugContext,
                                       "layerNormGradients", op);
}

Tensor layerNormGradients(Graph &graph, const Tensor &actsWhitened, const Tensor &gradsIn,
                          const Tensor &invStdDev, const Tensor &gamma, program::Sequence &prog,
                          const Type &partialsType, const DebugContext &debugContextIn,
                          const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn,
                                DI_ARGS(actsWhitened, gradsIn, invStdDev, gamma, partialsType, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = std::string(kLib) + "layerNormGradients";
  const auto v = viewOf(actsWhitened, options, op);
  return aspen::norms::gradients(graph, actsWhitened, gradsIn, invStdDev, gamma, v, partialsType, prog,
                                 {debugContext, "layerNormGradients"}, op);
}

void layerNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta, float scale,
                          Tensor &gamma, Tensor &beta, program::Sequence &prog,
                          const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  const std::string op = std::string(kLib) + "layerNormParamUpdate";
  aspen::norms::paramUpdateByConstant(graph, gammaDelta, betaDelta, scale, gamma, beta, prog, debugContext,
                                      "layerNormParamUpdate", op);
}

void layerNormParamUpdate(Graph &graph, const Tensor &gammaDelta, const Tensor &betaDelta,
                          const Tensor &scale, Tensor &gamma, Tensor &beta, program::Sequence &prog,
                          const DebugContext &debugContextIn, const OptionFlags &options) {
  aspen::ops::PopnnDebugInfo di(debugContextIn, DI_ARGS(gammaDelta, betaDelta, scale, gamma, beta, options));
  const poplar::DebugContext debugContext(di);
  (void)options;
  aspen::norms::paramUpdate(graph, gammaDelta, betaDelta, scale, gamma, beta, prog,
                            {debugContext, "layerNormParamUpdate"},
                            std::string(kLib) + "layerNormParamUpdate");
}

} // namespace ln

} // namespace popnn
