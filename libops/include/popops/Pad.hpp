// Copyright (c) Aspen contributors. PopLibs-compatible public API.
// Padding and truncating tensors. The result is a view: the original elements are not copied;
// constant padding adds a constant tensor (or broadcasts a given scalar tensor), edge and
// reflect padding repeat views of the tensor's own elements.
#ifndef POPOPS_PAD_HPP
#define POPOPS_PAD_HPP

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <cstddef>
#include <vector>

namespace popops {

namespace padding {

/// Padding that repeats the tensor's own elements (numpy.pad's modes).
enum class Type {
  /// Each new element takes the value of the nearest element of the tensor (on its edge).
  EDGE,
  /// The tensor reflected outwards about its edge elements (the edge is not repeated).
  REFLECT
};

/// Where the elements of constant padding live.
enum class MappingMethod {
  /// Not mapped (the caller maps them).
  NONE,
  /// Tile 0 of the graph.
  ZERO,
  /// The tile of the tensor's nearest edge element (needs a non-empty, completely mapped tensor).
  EDGE
};

} // namespace padding

/// `t` with `paddingLower[d]` elements of value `val` added before and `paddingUpper[d]`
/// after dimension `d`; a negative amount truncates instead. The vectors have one entry per
/// dimension of `t`.
///
/// Example: `Tensor p = popops::pad(graph, x, {1, 0}, {1, 2});  // {m, n} -> {m + 2, n + 2}`
poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t,
                   const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, float val = 0.0f,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);

/// As above with an integer padding value.
poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t,
                   const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, int val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);

/// As above, padding with the value of `val`, a one-element tensor of `t`'s type (the padding
/// is a broadcast view of it, so `mappingMethod` does not apply).
poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t,
                   const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, const poplar::Tensor &val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);

/// Constant padding of one dimension, `dim`.
poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, float val = 0.0f,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);
poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, int val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);
poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, const poplar::Tensor &val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);

/// `t` padded with its own elements (`type`); negative amounts truncate. No graph is needed:
/// the result is a view of `t`.
///
/// Example: `Tensor p = popops::pad(x, {2}, {2}, popops::padding::Type::REFLECT);`
poplar::Tensor pad(const poplar::Tensor &t, const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, padding::Type type);

/// Padding of one dimension, `dim`, with `t`'s own elements.
poplar::Tensor pad(const poplar::Tensor &t, std::ptrdiff_t paddingLower, std::ptrdiff_t paddingUpper,
                   unsigned dim, padding::Type type);

} // namespace popops

#endif
