// Copyright (c) Aspen contributors.
// Supporting functions for element-wise operations.
#ifndef POPOPS_ELEMENTWISEUTIL_HPP
#define POPOPS_ELEMENTWISEUTIL_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>

#include <vector>

namespace popops {

/// A new tensor of `outputType` with the shape of `inputs` (which must all have one shape),
/// mapped so that an element-wise operation writing it needs little exchange: each element
/// goes to the tile holding that element of the first input whose mapping is complete and
/// which has no constant or aliased elements; with no such input, linearly over the tiles.
///
/// \throws poputil::poplibs_error if `inputs` is empty or the shapes differ.
poplar::Tensor createOutputForElementWiseOp(poplar::Graph &graph, const std::vector<poplar::Tensor> &inputs,
                                            const poplar::Type &outputType,
                                            const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
