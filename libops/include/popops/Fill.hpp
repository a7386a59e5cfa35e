// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_FILL_HPP
#define POPOPS_FILL_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Type.hpp>

#include <vector>

namespace popops {

namespace detail {
// The non-template implementations behind `fill`: the value is given with its host type.
void fillRegions(poplar::Graph &graph, const poplar::Tensor &t,
                 const std::vector<poplar::Interval> &tileRegions, unsigned tile, poplar::ComputeSet fillCS,
                 const poplar::Type &hostType, const void *value);
void fillMapped(poplar::Graph &graph, const poplar::Tensor &t,
                const std::vector<std::vector<poplar::Interval>> &mapping, poplar::ComputeSet fillCS,
                const poplar::Type &hostType, const void *value);
void fillProgram(poplar::Graph &graph, const poplar::Tensor &t, poplar::program::Sequence &prog,
                 const poplar::Type &hostType, const void *value, const poplar::DebugContext &debugContext);
} // namespace detail

/// Adds to `fillCS` vertices on `tile` setting the elements `tileRegions` of `t` to `fillValue`.
template <typename FillValueType>
void fill(poplar::Graph &graph, poplar::Tensor t, const std::vector<poplar::Interval> &tileRegions,
          unsigned tile, poplar::ComputeSet fillCS, FillValueType fillValue) {
  detail::fillRegions(graph, t, tileRegions, tile, fillCS,
                      poplar::equivalent_device_type<FillValueType>().value, &fillValue);
}

/// Adds to `fillCS` vertices on `tile` setting all of `t` (mapped to `tile`) to `fillValue`.
template <typename FillValueType>
void fill(poplar::Graph &graph, const poplar::Tensor &t, unsigned tile, poplar::ComputeSet fillCS,
          FillValueType fillValue) {
  detail::fillRegions(graph, t, {poplar::Interval(0, t.numElements())}, tile, fillCS,
                      poplar::equivalent_device_type<FillValueType>().value, &fillValue);
}

/// Adds to `fillCS` vertices setting `t`'s elements per tile as `mapping` lists them.
template <typename FillValueType>
void fill(poplar::Graph &graph, const poplar::Tensor &t,
          const std::vector<std::vector<poplar::Interval>> &mapping, poplar::ComputeSet fillCS,
          FillValueType fillValue) {
  detail::fillMapped(graph, t, mapping, fillCS, poplar::equivalent_device_type<FillValueType>().value,
                     &fillValue);
}

/// Appends to `prog` a compute set setting every element of `t` to `fillValue`
/// (converted to `t`'s element type).
///
/// Example: `popops::fill(graph, t, prog, 1.0f, "ones");`
template <typename FillValueType>
void fill(poplar::Graph &graph, const poplar::Tensor &t, poplar::program::Sequence &prog,
          FillValueType fillValue, const poplar::DebugContext &debugContext = {}) {
  detail::fillProgram(graph, t, prog, poplar::equivalent_device_type<FillValueType>().value, &fillValue,
                      debugContext);
}

} // namespace popops

#endif
