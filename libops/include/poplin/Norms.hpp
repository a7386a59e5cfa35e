// Copyright (c) Aspen contributors.
// Per-channel normalisation of activations {N, C, field...} (statistics over N and the field).
#ifndef POPLIN_NORMS_HPP
#define POPLIN_NORMS_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <tuple>
#include <utility>

namespace poplin {

/// gamma {C} for activations {N, C, ...}, of `type` (default: the activations' type).
poplar::Tensor createNormGamma(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Type &type);
poplar::Tensor createNormGamma(poplar::Graph &graph, const poplar::Tensor &acts);
/// beta {C} for activations {N, C, ...}.
poplar::Tensor createNormBeta(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Type &type);
poplar::Tensor createNormBeta(poplar::Graph &graph, const poplar::Tensor &acts);
/// (gamma, beta).
std::pair<poplar::Tensor, poplar::Tensor> createNormParams(poplar::Graph &graph, const poplar::Tensor &acts);

/// Per-channel mean and inverse standard deviation 1/sqrt(var + eps) ({C} each, the
/// activations' type) over N and the field; `unbiasedVarEstimate` divides by n - 1;
/// `stableAlgo` subtracts the mean before squaring. Sums are kept in `partialsType`.
std::pair<poplar::Tensor, poplar::Tensor> normStatistics(poplar::Graph &graph,
                                                         const poplar::Tensor &actsUngrouped, float eps,
                                                         poplar::program::Sequence &prog,
                                                         bool unbiasedVarEstimate, bool stableAlgo = false,
                                                         const poplar::Type &partialsType = poplar::FLOAT,
                                                         const poplar::DebugContext &debugContext = {});

/// (acts - mean) * iStdDev, per channel.
poplar::Tensor normWhiten(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &mean,
                          const poplar::Tensor &iStdDev, poplar::program::Sequence &prog,
                          const poplar::DebugContext &debugContext = {});

/// actsWhitened * gamma + beta, per channel.
poplar::Tensor normalise(poplar::Graph &graph, const poplar::Tensor &actsWhitened,
                         const poplar::Tensor &gamma, const poplar::Tensor &beta,
                         poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// (gammaDelta, betaDelta) = (sum of gradsIn * actsWhitened, sum of gradsIn), per channel.
std::pair<poplar::Tensor, poplar::Tensor>
normParamGradients(poplar::Graph &graph, const poplar::Tensor &actsWhitened, const poplar::Tensor &gradsIn,
                   poplar::program::Sequence &prog, const poplar::Type &partialsType = poplar::FLOAT,
                   const poplar::DebugContext &debugContext = {});

/// gradsIn * gamma (the gradient through normalise()).
poplar::Tensor normGradients(poplar::Graph &graph, const poplar::Tensor &gradsIn, const poplar::Tensor &gamma,
                             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// The gradient through normWhiten() and normStatistics(), from the gradient of the whitened
/// activations.
poplar::Tensor normStatisticsGradients(poplar::Graph &graph, const poplar::Tensor &actsWhitened,
                                       const poplar::Tensor &gradsIn, const poplar::Tensor &invStdDev,
                                       poplar::program::Sequence &prog,
                                       const poplar::Type &partialsType = poplar::FLOAT,
                                       const poplar::DebugContext &debugContext = {});

} // namespace poplin

#endif
