// Copyright (c) Aspen contributors.
// popops::pad: truncation (slices) and padding (a constant, a broadcast scalar tensor, or views of
// the tensor's own edge or reflected elements) concatenated along each dimension in turn. No
// vertices: the result is a view.
#include "popops/Pad.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "poputil/exceptions.hpp"

#include <functional>
#include <string>
#include <utility>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::padding::MappingMethod &m) {
  return poplar::ProfileValue(m == popops::padding::MappingMethod::NONE   ? "NONE"
                              : m == popops::padding::MappingMethod::ZERO ? "ZERO"
                                                                          : "EDGE");
}
} // namespace poputil

namespace popops {

namespace {

using aspen::ops::describe;

std::string amountsString(const std::vector<std::ptrdiff_t> &v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

void checkAmounts(const poplar::Tensor &t, const std::vector<std::ptrdiff_t> &lower,
                  const std::vector<std::ptrdiff_t> &upper, const std::string &op) {
  aspen::ops::requireValid(t, op, "the tensor");
  if (lower.size() != t.rank() || upper.size() != t.rank())
    throw poputil::poplibs_error(op + ": paddingLower " + amountsString(lower) + " and paddingUpper " +
                                 amountsString(upper) + " need one entry per dimension of " + describe(t));
  for (unsigned d = 0; d < t.rank(); ++d) {
    const std::ptrdiff_t truncated = (lower[d] < 0 ? -lower[d] : 0) + (upper[d] < 0 ? -upper[d] : 0);
    if (truncated > static_cast<std::ptrdiff_t>(t.dim(d)))
      throw poputil::poplibs_error(op + ": truncating " + std::to_string(truncated) +
                                   " elements from dimension " + std::to_string(d) + " of " + describe(t) +
                                   " leaves fewer than none");
  }
}

/// The padding slab of `amount` elements before (`upper` false) or after dimension `d` of `x`.
using SlabMaker =
    std::function<poplar::Tensor(const poplar::Tensor &x, std::size_t amount, unsigned d, bool upper)>;

/// `t` truncated and padded along every dimension in turn.
poplar::Tensor padAll(const poplar::Tensor &t, const std::vector<std::ptrdiff_t> &lower,
                      const std::vector<std::ptrdiff_t> &upper, const SlabMaker &slab) {
  poplar::Tensor x = t;
  for (unsigned d = 0; d < t.rank(); ++d) {
    if (lower[d] < 0)
      x = x.slice(static_cast<std::size_t>(-lower[d]), x.dim(d), d);
    if (upper[d] < 0)
      x = x.slice(0, x.dim(d) - static_cast<std::size_t>(-upper[d]), d);
    std::vector<poplar::Tensor> parts;
    if (lower[d] > 0)
      parts.push_back(slab(x, static_cast<std::size_t>(lower[d]), d, false));
    parts.push_back(x);
    if (upper[d] > 0)
      parts.push_back(slab(x, static_cast<std::size_t>(upper[d]), d, true));
    if (parts.size() > 1)
      x = poplar::concat(parts, d);
  }
  return x;
}

std::vector<std::size_t> slabShape(const poplar::Tensor &x, std::size_t amount, unsigned d) {
  auto shape = x.shape();
  shape[d] = amount;
  return shape;
}

std::size_t numElementsOf(const std::vector<std::size_t> &shape) {
  std::size_t n = 1;
  for (auto s : shape)
    n *= s;
  return n;
}

/// Maps each element of `padding` (a slab beside dimension `d` of `x`) to the tile of the
/// element of `x` nearest to it: the same position in `x`'s edge slab.
void mapToEdge(poplar::Graph &graph, const poplar::Tensor &padding, const poplar::Tensor &x, unsigned d,
               bool upper, const std::string &op) {
  if (x.dim(d) == 0)
    throw poputil::poplibs_error(op + ": MappingMethod::EDGE needs a non-empty tensor, got " + describe(x));
  const poplar::Tensor edge = upper ? x.slice(x.dim(d) - 1, x.dim(d), d) : x.slice(0, 1, d);
  bool complete = true;
  graph.getTileMapping(edge, &complete);
  if (!complete)
    throw poputil::poplibs_error(op + ": MappingMethod::EDGE needs a completely mapped tensor, got " +
                                 describe(x));
  const aspen::ops::TileLookup lookup(graph, edge.flatten());
  std::size_t inner = 1;
  for (unsigned k = d + 1; k < x.rank(); ++k)
    inner *= x.dim(k);
  const std::size_t amount = padding.dim(d), n = padding.numElements();
  std::vector<std::vector<poplar::Interval>> mapping(graph.getTarget().getNumTiles());
  std::size_t runBegin = 0;
  unsigned runTile = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // Element i of the padding lies beside element (outer, inner) of the edge slab.
    const std::size_t edgeIndex = (i / (amount * inner)) * inner + i % inner;
    const unsigned tile = lookup.tileOf(edgeIndex);
    if (i == 0) {
      runTile = tile;
    } else if (tile != runTile) {
      mapping[runTile].push_back(poplar::Interval(runBegin, i));
      runBegin = i;
      runTile = tile;
    }
  }
  if (n)
    mapping[runTile].push_back(poplar::Interval(runBegin, n));
  graph.setTileMapping(padding, mapping);
}

template <class T>
poplar::Tensor constantPad(poplar::Graph &graph, const poplar::Tensor &t,
                           const std::vector<std::ptrdiff_t> &lower, const std::vector<std::ptrdiff_t> &upper,
                           T val, padding::MappingMethod mapping) {
  const std::string op = "popops::pad";
  // Poplar's pad takes no DebugContext: its constants are made under one named "pad".
  aspen::ops::PopopsDebugInfo di(poplar::DebugContext("pad"), DI_ARGS(t, lower, upper, val, mapping), "pad");
  checkAmounts(t, lower, upper, op);
  return padAll(t, lower, upper, [&](const poplar::Tensor &x, std::size_t amount, unsigned d, bool isUpper) {
    const auto shape = slabShape(x, amount, d);
    if (numElementsOf(shape) == 0)
      return x.flatten().slice(0, 0).reshape(shape);
    poplar::Tensor c = graph.addConstant(x.elementType(), shape, val, {di});
    if (mapping == padding::MappingMethod::ZERO)
      graph.setTileMapping(c, 0);
    else if (mapping == padding::MappingMethod::EDGE)
      mapToEdge(graph, c, x, d, isUpper, op);
    return c;
  });
}

/// The per-dimension amounts that pad only dimension `dim`.
std::pair<std::vector<std::ptrdiff_t>, std::vector<std::ptrdiff_t>> oneDimension(const poplar::Tensor &t,
                                                                                 std::ptrdiff_t paddingLower,
                                                                                 std::ptrdiff_t paddingUpper,
                                                                                 unsigned dim) {
  aspen::ops::requireValid(t, "popops::pad", "the tensor");
  if (dim >= t.rank())
    throw poputil::poplibs_error("popops::pad: dimension " + std::to_string(dim) + " is out of range for " +
                                 describe(t));
  std::vector<std::ptrdiff_t> lower(t.rank(), 0), upper(t.rank(), 0);
  lower[dim] = paddingLower;
  upper[dim] = paddingUpper;
  return {lower, upper};
}

} // namespace

poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t,
                   const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, float val,
                   padding::MappingMethod mappingMethod) {
  return constantPad(graph, t, paddingLower, paddingUpper, val, mappingMethod);
}

poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t,
                   const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, int val,
                   padding::MappingMethod mappingMethod) {
  return constantPad(graph, t, paddingLower, paddingUpper, val, mappingMethod);
}

poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t,
                   const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, const poplar::Tensor &val,
                   padding::MappingMethod mappingMethod) {
  (void)graph;
  (void)mappingMethod; // the padding is a view of `val`, which has its own mapping
  const std::string op = "popops::pad";
  checkAmounts(t, paddingLower, paddingUpper, op);
  aspen::ops::requireValid(val, op, "the padding value");
  if (val.numElements() != 1 || val.elementType() != t.elementType())
    throw poputil::poplibs_error(op + ": the padding value " + describe(val) + " must be one element of " +
                                 describe(t) + "'s type");
  return padAll(t, paddingLower, paddingUpper,
                [&](const poplar::Tensor &x, std::size_t amount, unsigned d, bool) {
                  const auto shape = slabShape(x, amount, d);
                  if (numElementsOf(shape) == 0)
                    return x.flatten().slice(0, 0).reshape(shape);
                  poplar::Tensor v = val.flatten().reshape(std::vector<std::size_t>(shape.size(), 1));
                  for (unsigned k = 0; k < shape.size(); ++k)
                    v = v.broadcast(static_cast<unsigned>(shape[k]), k);
                  return v;
                });
}

poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, float val,
                   padding::MappingMethod mappingMethod) {
  const auto amounts = oneDimension(t, paddingLower, paddingUpper, dim);
  return pad(graph, t, amounts.first, amounts.second, val, mappingMethod);
}

poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, int val, padding::MappingMethod mappingMethod) {
  const auto amounts = oneDimension(t, paddingLower, paddingUpper, dim);
  return pad(graph, t, amounts.first, amounts.second, val, mappingMethod);
}

poplar::Tensor pad(poplar::Graph &graph, const poplar::Tensor &t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, const poplar::Tensor &val,
                   padding::MappingMethod mappingMethod) {
  const auto amounts = oneDimension(t, paddingLower, paddingUpper, dim);
  return pad(graph, t, amounts.first, amounts.second, val, mappingMethod);
}

poplar::Tensor pad(const poplar::Tensor &t, const std::vector<std::ptrdiff_t> &paddingLower,
                   const std::vector<std::ptrdiff_t> &paddingUpper, padding::Type type) {
  const std::string op = "popops::pad";
  checkAmounts(t, paddingLower, paddingUpper, op);
  return padAll(t, paddingLower, paddingUpper,
                [&](const poplar::Tensor &x, std::size_t amount, unsigned d, bool upper) {
                  const std::size_t n = x.dim(d);
                  if (type == padding::Type::EDGE) {
                    if (n == 0)
                      throw poputil::poplibs_error(op + ": edge padding of an empty dimension " +
                                                   std::to_string(d) + " of " + describe(x));
                    return (upper ? x.slice(n - 1, n, d) : x.slice(0, 1, d))
                        .broadcast(static_cast<unsigned>(amount), d);
                  }
                  // REFLECT mirrors about the edge element, which is not repeated.
                  if (amount >= n)
                    throw poputil::poplibs_error(op + ": reflecting " + std::to_string(amount) +
                                                 " elements needs dimension " + std::to_string(d) + " of " +
                                                 describe(x) + " to have more than that");
                  return (upper ? x.slice(n - 1 - amount, n - 1, d) : x.slice(1, amount + 1, d)).reverse(d);
                });
}

poplar::Tensor pad(const poplar::Tensor &t, std::ptrdiff_t paddingLower, std::ptrdiff_t paddingUpper,
                   unsigned dim, padding::Type type) {
  const auto amounts = oneDimension(t, paddingLower, paddingUpper, dim);
  return pad(t, amounts.first, amounts.second, type);
}

} // namespace popops
