// Copyright (c) Aspen contributors.
// poplin::fc: describing the matrix multiplications of a fully-connected layer so that they can
// be planned ahead (PopLibs' poplin/FullyConnected.hpp). The backward-pass weight arrangement,
// poplin::fullyConnectedWeightTranspose, is declared in poplin/Convolution.hpp as in PopLibs.
#ifndef POPLIN_FULLYCONNECTED_HPP
#define POPLIN_FULLYCONNECTED_HPP

#include <poplin/MatMul.hpp>

#include <poplar/OptionFlags.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace poplin {
namespace fc {

/// A fully-connected layer: `numGroups` independent layers of the same shape, each taking
/// `batchSize` samples of `inputSize` values to `outputSize` values.
struct FullyConnectedParams {
  std::size_t numGroups;
  std::size_t batchSize;
  std::size_t inputSize;
  std::size_t outputSize;
};

/// The matrix multiplications the layer's passes make, each with `matmulOptions` and its
/// `fullyConnectedPass` set: the forward pass {G, batch, in} x {G, in, out} (INFERENCE_FWD when
/// `inferenceOnly`, else TRAINING_FWD), then unless `inferenceOnly` the backward pass
/// {G, batch, out} x {G, out, in} (TRAINING_BWD) and the weight update
/// {G, in, batch} x {G, batch, out} (TRAINING_WU). Operands and results are of `type`.
std::vector<std::pair<MatMulParams, poplar::OptionFlags>>
getMatMulPrePlanParameters(FullyConnectedParams parameters, poplar::OptionFlags matmulOptions,
                           poplar::Type type, bool inferenceOnly);

} // namespace fc
} // namespace poplin

#endif
