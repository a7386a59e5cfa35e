// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_ENCODING_HPP
#define POPOPS_ENCODING_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <popops/EncodingConstants.hpp>

#include <string>

namespace popops {

/// Writes `startInteger, startInteger + 1, ...` into the mapped 1-D INT or
/// UNSIGNED_INT tensor `t`.
///
/// Example: `auto idx = graph.addVariable(UNSIGNED_INT, {n}); mapTensorLinearly(graph, idx);
/// popops::iota(graph, idx, 0u, prog);`
void iota(poplar::Graph &graph, const poplar::Tensor &t, unsigned startInteger,
          poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});
void iota(poplar::Graph &graph, const poplar::Tensor &t, int startInteger, poplar::program::Sequence &prog,
          const poplar::DebugContext &debugContext = {});

/// Writes one-hot rows into `encoded` ({N, C}): row i is 1 at column `indices[i]` and 0
/// elsewhere. `indices` is a 1-D INT or UNSIGNED_INT tensor of N elements; an index equal to
/// MASKED_LABEL_CODE (or any index >= C) gives a row of zeros. `encoded` may be of any
/// numeric type (or BOOL).
/// \throws poputil::poplibs_error if `encoded` is not 2-D, the row counts differ or the
///         indices are not integers.
void encodeOneHot(poplar::Graph &graph, const poplar::Tensor &indices, const poplar::Tensor &encoded,
                  poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// As above, with the hot element `on` and the others `off` (single-element tensors of the
/// type of `encoded`).
void encodeOneHot(poplar::Graph &graph, const poplar::Tensor &indices, const poplar::Tensor &encoded,
                  poplar::program::Sequence &prog, const poplar::Tensor &on, const poplar::Tensor &off,
                  const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
