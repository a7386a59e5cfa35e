// Copyright (c) Aspen contributors.
// Group normalisation: statistics per (batch element, group of channels), {N * numGroups}
// ordered n * numGroups + g. Option `groupNormStridedChannelGrouping` (true, false) [=true]:
// channel c is in group c % numGroups when true (PopLibs' default), else c / (C / numGroups).
#ifndef POPNN_GROUPNORM_HPP
#define POPNN_GROUPNORM_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <utility>

namespace popnn {
namespace gn {

/// Mean and inverse standard deviation 1/sqrt(var + eps) of the activations {N, C, field...}
/// (see the file comment for which elements each statistic covers).
std::pair<poplar::Tensor, poplar::Tensor>
groupNormStatistics(poplar::Graph &graph, const poplar::Tensor acts, float eps,
                    poplar::program::Sequence &prog, unsigned numGroups, bool unbiasedVarEstimate,
                    bool stableAlgo = false, const poplar::Type &partialsType = poplar::FLOAT,
                    const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// (acts - mean) * invStdDev.
poplar::Tensor groupNormWhiten(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &mean,
                               const poplar::Tensor &invStdDev, poplar::program::Sequence &prog,
                               const poplar::DebugContext &debugContext = {},
                               const poplar::OptionFlags &options = {});

/// (normalised, whitened): whitened = (acts - mean) * invStdDev, normalised = whitened * gamma + beta
/// (gamma and beta per channel, {C}).
std::pair<poplar::Tensor, poplar::Tensor>
groupNormalise(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &gamma,
               const poplar::Tensor &beta, const poplar::Tensor &mean, const poplar::Tensor &invStdDev,
               poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
               const poplar::OptionFlags &options = {});

/// (gammaDelta, betaDelta) per channel, from the activations and their statistics.
std::pair<poplar::Tensor, poplar::Tensor>
groupNormParamGradients(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &gradsIn,
                        const poplar::Tensor &mean, const poplar::Tensor &iStdDev,
                        poplar::program::Sequence &prog, const poplar::Type &partialsType = poplar::FLOAT,
                        const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {});

/// (gammaDelta, betaDelta) per channel, from the whitened activations.
std::pair<poplar::Tensor, poplar::Tensor> groupNormParamGradients(
    poplar::Graph &graph, const poplar::Tensor &actsWhitened, const poplar::Tensor &gradsIn,
    poplar::program::Sequence &prog, const poplar::Type &partialsType = poplar::FLOAT,
    const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// The gradient with respect to the activations through the whole layer (statistics included).
poplar::Tensor
groupNormGradients(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &gradsIn,
                   const poplar::Tensor &mean, const poplar::Tensor &invStdDev, const poplar::Tensor &gamma,
                   poplar::program::Sequence &prog, const poplar::Type &partialsType = poplar::FLOAT,
                   const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// As above, from the whitened activations.
poplar::Tensor groupNormGradients(poplar::Graph &graph, const poplar::Tensor &actsWhitened,
                                  const poplar::Tensor &gradsIn, const poplar::Tensor &invStdDev,
                                  const poplar::Tensor &gamma, poplar::program::Sequence &prog,
                                  const poplar::Type &partialsType = poplar::FLOAT,
                                  const poplar::DebugContext &debugContext = {},
                                  const poplar::OptionFlags &options = {});

/// gamma += scale * gammaDelta; beta += scale * betaDelta.
void groupNormParamUpdate(poplar::Graph &graph, const poplar::Tensor &gammaDelta,
                          const poplar::Tensor &betaDelta, float scale, poplar::Tensor &gamma,
                          poplar::Tensor &beta, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {});
void groupNormParamUpdate(poplar::Graph &graph, const poplar::Tensor &gammaDelta,
                          const poplar::Tensor &betaDelta, const poplar::Tensor &scale, poplar::Tensor &gamma,
                          poplar::Tensor &beta, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {},
                          const poplar::OptionFlags &options = {});

} // namespace gn
} // namespace popnn

#endif
