// Copyright (c) Aspen contributors.
// One scalar picked from each row of a 2-D tensor, as PopLibs 3.x declares it.
#ifndef POPOPS_SELECTSCALARFROMROWS_HPP
#define POPOPS_SELECTSCALARFROMROWS_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

/// A new 1-D tensor {R}: element r is `params[r][indices[r]]`, for `params` {R, C} (float or
/// half) and `indices` {R} (unsigned int). An index equal to MASKED_LABEL_CODE
/// (popops/EncodingConstants.hpp) gives 0; any other index of C or more gives NaN.
poplar::Tensor selectScalarFromRows(poplar::Graph &graph, const poplar::Tensor &params,
                                    const poplar::Tensor &indices, poplar::program::Sequence &prog,
                                    const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
