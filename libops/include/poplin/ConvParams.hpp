// Copyright (c) Aspen contributors.
// poplin::ConvParams: the shape and transforms of a convolution.
#ifndef POPLIN_CONVPARAMS_HPP
#define POPLIN_CONVPARAMS_HPP

#include <poplar/Type.hpp>

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <tuple>
#include <vector>

namespace poplin {

/// A convolution of an input {B, G*Ci, fields...} with weights {G, Co, Ci, kernel...} giving
/// {B, G*Co, outputFields...}. Each spatial dimension of the input and the kernel is
/// transformed (truncated, dilated, padded, flipped, in that order) before the
/// cross-correlation; the output is then truncated, strided and padded.
struct ConvParams {
  struct InputTransform {
    /// Elements removed at each end of each spatial dimension (first step).
    std::vector<unsigned> truncationLower;
    std::vector<unsigned> truncationUpper;
    /// Dilation: d - 1 zeros between neighbouring elements (after truncation).
    std::vector<unsigned> dilation;
    /// Zeros added at each end (after dilation).
    std::vector<unsigned> paddingLower;
    std::vector<unsigned> paddingUpper;
    /// Whether each dimension is reversed (last step).
    std::vector<bool> flip;

    InputTransform() = default;
    /// The identity transform of `size` spatial dimensions.
    InputTransform(const std::size_t size);
    InputTransform(std::vector<unsigned> truncationLower, std::vector<unsigned> truncationUpper,
                   std::vector<unsigned> dilation, std::vector<unsigned> paddingLower,
                   std::vector<unsigned> paddingUpper, std::vector<bool> flip);

    friend bool operator<(const InputTransform &a, const InputTransform &b);
    friend bool operator==(const InputTransform &a, const InputTransform &b);
    friend bool operator!=(const InputTransform &a, const InputTransform &b);
  };

  struct OutputTransform {
    /// Elements removed at each end before striding.
    std::vector<unsigned> truncationLower;
    std::vector<unsigned> truncationUpper;
    /// Every stride-th element is kept.
    std::vector<unsigned> stride;
    /// Zeros added at each end after striding.
    std::vector<unsigned> paddingLower;
    std::vector<unsigned> paddingUpper;

    OutputTransform() = default;
    /// The identity transform of `size` spatial dimensions.
    OutputTransform(const std::size_t size);
    OutputTransform(std::vector<unsigned> truncationLower, std::vector<unsigned> truncationUpper,
                    std::vector<unsigned> striding, std::vector<unsigned> paddingLower,
                    std::vector<unsigned> paddingUpper);

    friend bool operator<(const OutputTransform &a, const OutputTransform &b);
    friend bool operator==(const OutputTransform &a, const OutputTransform &b);
    friend bool operator!=(const OutputTransform &a, const OutputTransform &b);
  };

  poplar::Type inputType;
  poplar::Type outputType;
  /// Batch size (B).
  std::size_t batchSize = 0;
  /// Spatial shape of each input channel.
  std::vector<std::size_t> inputFieldShape;
  /// Spatial shape of the kernel.
  std::vector<std::size_t> kernelShape;
  /// Input channels per conv group (Ci).
  std::size_t inputChannelsPerConvGroup = 0;
  /// Output channels per conv group (Co).
  std::size_t outputChannelsPerConvGroup = 0;
  /// Number of conv groups (G).
  std::size_t numConvGroups = 1;

  InputTransform inputTransform;
  InputTransform kernelTransform;
  OutputTransform outputTransform;

  ConvParams() = default;
  ConvParams(poplar::Type dataType, std::size_t batchSize, std::vector<std::size_t> inputFieldShape,
             std::vector<std::size_t> kernelShape, std::size_t inputChannels, std::size_t outputChannels,
             std::size_t numConvGroups);
  ConvParams(poplar::Type inputType, poplar::Type outputType, std::size_t batchSize,
             std::vector<std::size_t> inputFieldShape, std::vector<std::size_t> kernelShape,
             std::size_t inputChannels, std::size_t outputChannels, std::size_t numConvGroups);
  ConvParams(poplar::Type inputType, poplar::Type outputType, std::size_t batchSize,
             std::vector<std::size_t> inputFieldShape, std::vector<std::size_t> kernelShape,
             std::size_t inputChannels, std::size_t outputChannels, std::size_t numConvGroups,
             InputTransform inputTransform, InputTransform kernelTransform, OutputTransform outputTransform);

  /// Output size of dimension `dim` before the output transform.
  std::size_t getUntransformedOutputSize(unsigned dim) const;
  /// Output size of dimension `dim`.
  std::size_t getOutputSize(unsigned dim) const;
  std::size_t getNumOutputChansPerConvGroup() const { return outputChannelsPerConvGroup; }
  std::size_t getNumOutputChans() const { return outputChannelsPerConvGroup * numConvGroups; }
  std::size_t getInputSize(unsigned dim) const { return inputFieldShape[dim]; }
  std::size_t getNumInputChansPerConvGroup() const { return inputChannelsPerConvGroup; }
  std::size_t getNumInputChans() const { return inputChannelsPerConvGroup * numConvGroups; }
  std::size_t getNumConvGroups() const { return numConvGroups; }
  std::size_t getNumFieldDims() const { return inputFieldShape.size(); }
  std::size_t getBatchSize() const { return batchSize; }

  unsigned getTruncatedInputSize(unsigned dim) const;
  unsigned getTruncatedKernelSize(unsigned dim) const;
  unsigned getTransformedInputSize(unsigned dim) const;
  unsigned getTransformedKernelSize(unsigned dim) const;
  std::vector<std::size_t> getOutputFieldShape() const;

  /// Throws poputil::poplibs_error naming the first inconsistent parameter.
  void validate() const;
  /// The same convolution (Aspen applies every transform as given).
  ConvParams canonicalize() const;

  friend bool operator<(const ConvParams &a, const ConvParams &b);
  friend bool operator==(const ConvParams &a, const ConvParams &b);
  friend bool operator!=(const ConvParams &a, const ConvParams &b);
};

std::ostream &operator<<(std::ostream &os, const ConvParams &p);

std::size_t hash_value(const ConvParams::InputTransform &it);
std::size_t hash_value(const ConvParams::OutputTransform &ot);

} // namespace poplin

namespace std {

template <> struct hash<poplin::ConvParams::InputTransform> {
  std::size_t operator()(const poplin::ConvParams::InputTransform &it) const;
};

template <> struct hash<poplin::ConvParams::OutputTransform> {
  std::size_t operator()(const poplin::ConvParams::OutputTransform &ot) const;
};

template <> struct hash<poplin::ConvParams> {
  std::size_t operator()(const poplin::ConvParams &params) const;
};

} // namespace std

#endif
