// Copyright (c) Aspen contributors.
// The arithmetic every normalisation shares (poplin::norm*, popnn::bn / gn / ln): statistics,
// whitening and gradients over some dimensions of a view of the activations. The view maps an
// activations-shaped tensor to a shape in which the statistics are taken over `dims`
// (batch norm: the activations themselves, dims {0, 2, ...}; group norm: {N, G, C/G, F...},
// dims {2, ...}).
#pragma once

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace aspen::norms {

struct NormView {
  std::function<poplar::Tensor(const poplar::Tensor &)> view; // activations shape -> statistics view
  std::vector<std::size_t> dims;                              // dimensions of the view reduced
};

/// Checks `acts` ({N, C, ...}, float or half) and throws poplibs_error naming `op`.
void checkActs(const poplar::Tensor &acts, const std::string &op);

/// Mean and inverse standard deviation over `v.dims`, of the activations' type, flattened in the
/// view's order of the dimensions kept.
std::pair<poplar::Tensor, poplar::Tensor> statistics(poplar::Graph &graph, const poplar::Tensor &acts,
                                                     const NormView &v, float eps, bool unbiasedVarEstimate,
                                                     bool stableAlgo, const poplar::Type &partialsType,
                                                     poplar::program::Sequence &prog,
                                                     const poplar::DebugContext &dc, const std::string &op);

/// (acts - mean) * invStdDev.
poplar::Tensor whiten(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &mean,
                      const poplar::Tensor &invStdDev, const NormView &v, poplar::program::Sequence &prog,
                      const poplar::DebugContext &dc, const std::string &op);

/// whitened * gamma + beta (per channel, dimension 1 of the activations).
poplar::Tensor scaleShift(poplar::Graph &graph, const poplar::Tensor &whitened, const poplar::Tensor &gamma,
                          const poplar::Tensor &beta, poplar::program::Sequence &prog,
                          const poplar::DebugContext &dc, const std::string &op);

/// (sum over all but dimension 1 of gradsIn * whitened, sum of gradsIn), per channel.
std::pair<poplar::Tensor, poplar::Tensor>
paramGradients(poplar::Graph &graph, const poplar::Tensor &whitened, const poplar::Tensor &gradsIn,
               const poplar::Type &partialsType, poplar::program::Sequence &prog,
               const poplar::DebugContext &dc, const std::string &op);

/// The gradient with respect to the activations through the whole layer (statistics included):
/// invStdDev * (g' - mean(g') - xhat * mean(g' * xhat)) with g' = gradsIn * gamma and the means
/// over `v.dims`.
poplar::Tensor gradients(poplar::Graph &graph, const poplar::Tensor &whitened, const poplar::Tensor &gradsIn,
                         const poplar::Tensor &invStdDev, const poplar::Tensor &gamma, const NormView &v,
                         const poplar::Type &partialsType, poplar::program::Sequence &prog,
                         const poplar::DebugContext &dc, const std::string &op);

/// gamma += scale * gammaDelta; beta += scale * betaDelta.
void paramUpdate(poplar::Graph &graph, const poplar::Tensor &gammaDelta, const poplar::Tensor &betaDelta,
                 const poplar::Tensor &scale, const poplar::Tensor &gamma, const poplar::Tensor &beta,
                 poplar::program::Sequence &prog, const poplar::DebugContext &dc, const std::string &op);

// ---- the layer ops of a norm family ------------------------------------------------------
// Batch, group, layer and instance norm (popnn::bn/gn/ln/in) differ only in their view of the
// activations; these are the bodies their public ops share. `dc` is the public op's debug
// context, `name` its own name ("groupNormalise", for its steps) and `op` its full name for
// messages ("popnn::gn::groupNormalise").

/// (normalised, whitened): whiten, then scale and shift per channel.
std::pair<poplar::Tensor, poplar::Tensor>
normaliseLayer(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &gamma,
               const poplar::Tensor &beta, const poplar::Tensor &mean, const poplar::Tensor &invStdDev,
               const NormView &v, poplar::program::Sequence &prog, const poplar::DebugContext &dc,
               const std::string &name, const std::string &op);

/// (gammaDelta, betaDelta) from the activations and their statistics.
std::pair<poplar::Tensor, poplar::Tensor>
paramGradientsOfActs(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &gradsIn,
                     const poplar::Tensor &mean, const poplar::Tensor &invStdDev, const NormView &v,
                     const poplar::Type &partialsType, poplar::program::Sequence &prog,
                     const poplar::DebugContext &dc, const std::string &name, const std::string &op);

/// The gradient with respect to the activations, from the activations and their statistics.
poplar::Tensor gradientsOfActs(poplar::Graph &graph, const poplar::Tensor &acts,
                               const poplar::Tensor &gradsIn, const poplar::Tensor &mean,
                               const poplar::Tensor &invStdDev, const poplar::Tensor &gamma,
                               const NormView &v, const poplar::Type &partialsType,
                               poplar::program::Sequence &prog, const poplar::DebugContext &dc,
                               const std::string &name, const std::string &op);

/// gamma += scale * gammaDelta; beta += scale * betaDelta, `scale` a constant.
void paramUpdateByConstant(poplar::Graph &graph, const poplar::Tensor &gammaDelta,
                           const poplar::Tensor &betaDelta, float scale, const poplar::Tensor &gamma,
                           const poplar::Tensor &beta, poplar::program::Sequence &prog,
                           const poplar::DebugContext &dc, const std::string &name, const std::string &op);

/// The batch-norm view: the activations, statistics over every dimension but 1.
NormView channelView(const poplar::Tensor &acts);

/// The group-norm view of {N, C, F...} with `numGroups` groups (channel c in group
/// c % numGroups when `strided`, else c / (C / numGroups)): statistics per (n, g).
NormView groupView(const poplar::Tensor &acts, unsigned numGroups, bool strided, const std::string &op);

} // namespace aspen::norms
