// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file
/// Max, average and sum pooling over the spatial dimensions of {batch, channels, field...} tensors.
#ifndef POPNN_POOLING_HPP
#define POPNN_POOLING_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <popnn/PoolingDef.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <utility>
#include <vector>

namespace popnn {
namespace pooling {

/// Parameters of a pooling: the input is {batchSize, numChannels, field...}
/// with `inputFieldShape` the field (1 or 2 dimensions). Each output element
/// pools a `kernelShape` window; windows step by `stride`. The input field is
/// padded (positive) or truncated (negative) by
/// `inputTruncationOrPaddingLower/Upper` first; padding never contributes
/// (AVG divides by the number of non-padding elements in each window).
struct PoolParams {
  PoolingType poolingType;
  std::vector<std::size_t> inputFieldShape;
  std::vector<std::size_t> kernelShape;
  std::vector<unsigned> stride;
  std::vector<int> inputTruncationOrPaddingLower;
  std::vector<int> inputTruncationOrPaddingUpper;
  std::size_t numChannels;
  std::size_t batchSize;
  poplar::Type dType;

  PoolParams(PoolingType poolingType, std::vector<std::size_t> inputFieldShape,
             std::vector<std::size_t> kernelShape, std::vector<unsigned> stride,
             std::vector<int> inputTruncationOrPaddingLower, std::vector<int> inputTruncationOrPaddingUpper,
             std::size_t numChannels, std::size_t batchSize, poplar::Type dType)
      : poolingType(poolingType), inputFieldShape(std::move(inputFieldShape)),
        kernelShape(std::move(kernelShape)), stride(std::move(stride)),
        inputTruncationOrPaddingLower(std::move(inputTruncationOrPaddingLower)),
        inputTruncationOrPaddingUpper(std::move(inputTruncationOrPaddingUpper)), numChannels(numChannels),
        batchSize(batchSize), dType(dType) {}

  std::size_t getNumFieldDims() const { return inputFieldShape.size(); }
  /// The field shape of the output: (in + padLower + padUpper - kernel) / stride + 1 per dimension.
  std::vector<std::size_t> getOutputFieldShape() const;
};

std::ostream &operator<<(std::ostream &o, const PoolParams &params);

/// "MAX", "AVG" or "SUM".
const char *asString(const PoolingType &method);

/// The field shape of the output of a pooling with `params`.
std::vector<std::size_t> getOutputFieldShape(const PoolParams &params);

/// Floating-point operations of the forward and backward passes.
std::uint64_t getFwdFlops(const PoolParams &params);
std::uint64_t getBwdFlops(const PoolParams &params);

/// Ideal cycle counts (all tiles busy, no exchange) of the forward and backward passes.
double getFwdPerfectCycleCount(const poplar::Graph &graph, const PoolParams &params);
double getBwdPerfectCycleCount(const poplar::Graph &graph, const PoolParams &params);

/// Pools `in` {batchSize, numChannels, field...} and returns
/// {batchSize, numChannels, outputField...}.
///
/// Example:
/// \code
/// popnn::pooling::PoolParams p(popnn::PoolingType::MAX, {8, 8}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, 3, 1,
/// FLOAT); Tensor y = popnn::pooling::pool(graph, p, x, seq); \endcode
poplar::Tensor pool(poplar::Graph &graph, const PoolParams &params, const poplar::Tensor &in,
                    poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                    const poplar::OptionFlags &options = {});

/// The gradient at the input of a pooling, given its input `in`, its output
/// `pooled` and the gradient at its output `pooledGradient`. For MAX the
/// gradient goes to every input position equal to the window's maximum
/// (divided among them when `useScaledGradient`); AVG and SUM spread each
/// window's gradient over its non-padding inputs.
poplar::Tensor poolInputGradient(poplar::Graph &graph, const PoolParams &params, const poplar::Tensor &in,
                                 const poplar::Tensor &pooled, const poplar::Tensor &pooledGradient,
                                 bool useScaledGradient, poplar::program::Sequence &prog,
                                 const poplar::DebugContext &debugContext = {},
                                 const poplar::OptionFlags &options = {});

/// The input gradient of an AVG or SUM pooling, which needs no activations.
/// `fwdChansPerGroup` is accepted for compatibility.
poplar::Tensor poolInputGradient(poplar::Graph &graph, const PoolParams &params,
                                 const unsigned fwdChansPerGroup, const poplar::Tensor &pooledGradient,
                                 poplar::program::Sequence &prog,
                                 const poplar::DebugContext &debugContext = {},
                                 const poplar::OptionFlags &options = {});

} // namespace pooling
} // namespace popnn

#endif
