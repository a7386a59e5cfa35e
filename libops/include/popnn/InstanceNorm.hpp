// Copyright (c) Aspen contributors.
// Instance normalisation: group normalisation with one group per channel, so the statistics are
// per (batch element, channel) over the field, {N * C} ordered n * C + c. Options are those of
// popnn::gn (`groupNormStridedChannelGrouping`, which makes no difference with one channel per
// group). The gradients and updates are per channel ({C}), as for every normalisation.
#ifndef POPNN_INSTANCENORM_HPP
#define POPNN_INSTANCENORM_HPP

#include <popnn/GroupNorm.hpp>
#include <poputil/DebugInfo.hpp>

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <cstdint>
#include <utility>

namespace popnn {
namespace in {

/// Mean and inverse standard deviation 1/sqrt(var + eps) of the activations {N, C, field...}
/// per (n, c) over the field; the variance is unbiased (divided by count - 1) when
/// `unbiasedVarEstimate`; `stableAlgo` subtracts the mean before squaring.
std::pair<poplar::Tensor, poplar::Tensor> instanceNormStatistics(
    poplar::Graph &graph, const poplar::Tensor acts, float eps, poplar::program::Sequence &prog,
    bool unbiasedVarEstimate, bool stableAlgo, const poplar::Type &partialsType = poplar::FLOAT,
    const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// (acts - mean) * invStdDev, with mean and invStdDev per (n, c).
poplar::Tensor instanceNormWhiten(poplar::Graph &graph, const poplar::Tensor &acts,
                                  const poplar::Tensor &mean, const poplar::Tensor &invStdDev,
                                  poplar::program::Sequence &prog,
                                  const poplar::DebugContext &debugContext = {},
                                  const poplar::OptionFlags &options = {});

/// (normalised, whitened): whitened = (acts - mean) * invStdDev, normalised = whitened * gamma + beta
/// (gamma and beta per channel, {C}).
std::pair<poplar::Tensor, poplar::Tensor>
instanceNormalise(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &gamma,
                  const poplar::Tensor &beta, const poplar::Tensor &mean, const poplar::Tensor &invStdDev,
                  poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                  const poplar::OptionFlags &options = {});

/// (gammaDelta, betaDelta) per channel, from the activations and their statistics.
std::pair<poplar::Tensor, poplar::Tensor>
instanceNormParamGradients(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &gradsIn,
                           const poplar::Tensor &mean, const poplar::Tensor &iStdDev,
                           poplar::program::Sequence &prog, const poplar::Type &partialsType = poplar::FLOAT,
                           const poplar::DebugContext &debugContext = {},
                           const poplar::OptionFlags &options = {});

/// (gammaDelta, betaDelta) per channel, from the whitened activations.
std::pair<poplar::Tensor, poplar::Tensor> instanceNormParamGradients(
    poplar::Graph &graph, const poplar::Tensor &actsWhitened, const poplar::Tensor &gradsIn,
    poplar::program::Sequence &prog, const poplar::Type &partialsType = poplar::FLOAT,
    const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// The gradient with respect to the activations through the whole layer (statistics included).
poplar::Tensor instanceNormGradients(poplar::Graph &graph, const poplar::Tensor &acts,
                                     const poplar::Tensor &gradsIn, const poplar::Tensor &mean,
                                     const poplar::Tensor &invStdDev, const poplar::Tensor &gamma,
                                     poplar::program::Sequence &prog,
                                     const poplar::Type &partialsType = poplar::FLOAT,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});

/// As above, from the whitened activations.
poplar::Tensor instanceNormGradients(poplar::Graph &graph, const poplar::Tensor &actsWhitened,
                                     const poplar::Tensor &gradsIn, const poplar::Tensor &invStdDev,
                                     const poplar::Tensor &gamma, poplar::program::Sequence &prog,
                                     const poplar::Type &partialsType = poplar::FLOAT,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {});

/// gamma += scale * gammaDelta; beta += scale * betaDelta.
void instanceNormParamUpdate(poplar::Graph &graph, const poplar::Tensor &gammaDelta,
                             const poplar::Tensor &betaDelta, float scale, poplar::Tensor &gamma,
                             poplar::Tensor &beta, poplar::program::Sequence &prog,
                             const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {});
void instanceNormParamUpdate(poplar::Graph &graph, const poplar::Tensor &gammaDelta,
                             const poplar::Tensor &betaDelta, const poplar::Tensor &scale,
                             poplar::Tensor &gamma, poplar::Tensor &beta, poplar::program::Sequence &prog,
                             const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {});

/// Floating-point operation counts, as PopLibs estimates them. `numChannels`: the channels (for
/// a fully-connected layer, the activations of one batch element); `actsPerChannel`: the
/// elements each statistic covers (field size * batch size; for a fully-connected layer, the
/// batch size). `computeEstimates` adds the cost of the statistics to the forward pass.
std::uint64_t getFwdFlops(std::uint64_t numChannels, std::uint64_t actsPerChannel, bool computeEstimates);
std::uint64_t getBwdFlops(std::uint64_t numChannels, std::uint64_t actsPerChannel);
std::uint64_t getWuFlops(std::uint64_t numChannels, std::uint64_t actsPerChannel);

} // namespace in
} // namespace popnn

#endif
