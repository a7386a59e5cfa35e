// Copyright (c) Aspen contributors.
// Normalising a 3-channel image and padding it to 4 channels, as PopLibs 3.x declares it.
#ifndef POPOPS_NORMALISEIMAGE_HPP
#define POPOPS_NORMALISEIMAGE_HPP

#include <poplar/ArrayRef.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <cstddef>

namespace popops {

/// A new tensor of `shape` (inner dimension 3: the channels) and `type` (UNSIGNED_CHAR, HALF or
/// FLOAT), mapped over the tiles, to give to normaliseImage.
poplar::Tensor createNormaliseImageInput(poplar::Graph &graph, const poplar::Type &type,
                                         const poplar::ArrayRef<std::size_t> shape,
                                         const poplar::DebugContext &debugContext = {});

/// A new tensor like `tIn` with an inner dimension of 4: channel c < 3 is
/// `(tIn[c] * inScale - offsets[c]) * scales[c]`, channel 3 is 0. UNSIGNED_CHAR input gives HALF
/// output; otherwise the output has the input's type, which `offsets` and `scales` ({3}) must
/// have too.
poplar::Tensor normaliseImage(poplar::Graph &graph, poplar::program::Sequence &seq, poplar::Tensor tIn,
                              float inScale, poplar::Tensor offsets, poplar::Tensor scales,
                              const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
