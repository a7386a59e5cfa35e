// Copyright (c) Aspen contributors.
// Subtracting one from one scalar of each row of a 2-D tensor (the backward pass of a sparse
// softmax cross-entropy), as PopLibs 3.x declares it.
#ifndef POPOPS_UPDATESCALARINROWS_HPP
#define POPOPS_UPDATESCALARINROWS_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <popops/ExprOp.hpp>

#include <string>

namespace popops {

/// In place, for each row r of `params` {R, C} (float or half) with `indices` {R} (unsigned
/// int): `params[r][indices[r]] -= 1`. A row whose index is MASKED_LABEL_CODE
/// (popops/EncodingConstants.hpp) is left as it is; a row whose index is any other value of C
/// or more becomes NaN throughout.
void updateScalarInRows(poplar::Graph &graph, const poplar::Tensor &params, const poplar::Tensor &indices,
                        poplar::program::Sequence &program, const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
