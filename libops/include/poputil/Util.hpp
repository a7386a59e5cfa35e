// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPUTIL_UTIL_HPP
#define POPUTIL_UTIL_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Interval.hpp>
#include <poplar/MetadataCreation.hpp>
#include <poplar/Program.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>

#include <cassert>
#include <climits>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace poputil {

/// Merges regions that touch (`[a,b)` followed by `[b,c)` becomes `[a,c)`).
void mergeAdjacentRegions(std::vector<poplar::Interval> &regions);

/// Merges touching regions within each tile's list.
void mergeAdjacentRegions(std::vector<std::vector<poplar::Interval>> &mapping);

/// Partitions `regions` into at most `maxPartitions` groups of roughly equal size,
/// each a multiple of `grainSize` elements (except the last) and, where the total
/// allows, at least `minElementsPerPartition`. Regions are split where needed.
std::vector<std::vector<poplar::Interval>> splitRegions(const std::vector<poplar::Interval> &regions,
                                                        unsigned grainSize, unsigned maxPartitions,
                                                        unsigned minElementsPerPartition = 0,
                                                        unsigned maxElementsPerPartition = UINT_MAX,
                                                        unsigned maxElementsPerRegion = UINT_MAX);

/// `splitRegions` over the target's worker contexts.
std::vector<std::vector<poplar::Interval>>
splitRegionsBetweenWorkers(const poplar::Target &target, const std::vector<poplar::Interval> &regions,
                           unsigned grainSize, unsigned minElementsPerPartition = 0,
                           unsigned maxElementsPerPartition = UINT_MAX,
                           unsigned maxElementsPerRegion = UINT_MAX);

/// Partitions sequences of regions (each sequence is kept in order).
std::vector<std::vector<std::vector<poplar::Interval>>>
splitRegions(const std::vector<std::vector<poplar::Interval>> &regions, unsigned grainSize,
             unsigned maxPartitions, unsigned minElementsPerPartition = 0,
             unsigned maxElementsPerPartition = UINT_MAX, unsigned maxElementsPerRegion = UINT_MAX);

std::vector<std::vector<std::vector<poplar::Interval>>>
splitRegionsBetweenWorkers(const poplar::Target &target,
                           const std::vector<std::vector<poplar::Interval>> &regions, unsigned grainSize,
                           unsigned minElementsPerPartition = 0, unsigned maxElementsPerPartition = UINT_MAX,
                           unsigned maxElementsPerRegion = UINT_MAX);

/// The multi-dimensional index of flat element `index` of a tensor of `shape`.
template <class T> std::vector<T> unflattenIndex(const std::vector<T> &shape, std::size_t index) {
  std::vector<T> coord(shape.size());
  for (std::size_t i = shape.size(); i > 0; --i) {
    coord[i - 1] = static_cast<T>(index % shape[i - 1]);
    index /= shape[i - 1];
  }
  return coord;
}

/// The flat (row-major) index of `indices` in a tensor of `shape`.
template <class T> std::size_t flattenIndex(const std::vector<T> &shape, const std::vector<T> &indices) {
  std::size_t index = 0;
  for (std::size_t i = 0; i != shape.size(); ++i)
    index = index * shape[i] + indices[i];
  return index;
}

/// Total number of elements in a sequence of region lists.
std::size_t intervalSequenceNumElements(const std::vector<std::vector<poplar::Interval>> &seq);

/// A new tensor with `in`'s tile mapping, and a copy of `in` into it appended to `p`.
///
/// Example: `Tensor saved = poputil::duplicate(graph, x, prog, "saved");`
poplar::Tensor
duplicate(poplar::Graph &graph, const poplar::Tensor &in, poplar::program::Sequence &p,
          const poplar::DebugContext &debugContext = {},
          poplar::TensorCloneMethod method = poplar::TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);

/// `N` clones of `t` stacked in a new outer dimension (shape `{N, t.shape()...}`).
poplar::Tensor
cloneN(poplar::Graph &graph, const poplar::Tensor &t, unsigned N,
       const poplar::DebugContext &debugContext = {},
       poplar::TensorCloneMethod method = poplar::TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);

/// Splits `[0, rangeUpperBound)` into `splitCount` counts as evenly as possible
/// (the first `rangeUpperBound % splitCount` get one more).
std::vector<int> balancedPartition(int rangeUpperBound, int splitCount);

/// True when `input` survives a cast from `inputType` to `outputType` with a
/// relative error of at most `tolerance` (and without overflow).
bool checkAccuracyWhenCast(const poplar::Target &target, double input, poplar::Type inputType,
                           poplar::Type outputType, double tolerance);

/// The largest grouping of `t`'s innermost dimension that its tile mapping and
/// memory layout never split (1 when there is none).
unsigned detectInnermostGrouping(const poplar::Graph &graph, const poplar::Tensor &t);

/// A grouped dimension and its grouping: (dimension, grouping).
typedef std::pair<unsigned, unsigned> GroupingInfo;

/// Every grouping of `t`'s dimensions that its tile mapping and memory layout never split,
/// innermost first: the first entry is the largest grouping of any one dimension (found with
/// `detectInnermostGrouping` with that dimension moved innermost); the next is found within
/// the groups of the first, and so on. A dimension may appear more than once. Empty when
/// nothing is grouped; throws poplibs_error for a scalar.
///
/// Example: a {4, 16} tensor whose tiles each hold whole groups of 8 consecutive elements of
/// dimension 1 gives `{{1, 8}}`.
std::vector<GroupingInfo> detectDimGroupings(const poplar::Graph &graph, const poplar::Tensor &t);

/// fp8: PopLibs code calls the metadata-creation functions as poputil's too; they are
/// poplar's (poplar/MetadataCreation.hpp, docs/fp8.md), so an unqualified call with both
/// namespaces in use is not ambiguous.
/// Example: `auto md = poputil::createConstantMetadataTensor(graph, QuarterMetadata::Format::F143, 0);`
using poplar::createConstantMetadataTensor;
using poplar::createVariableMetadataTensor;

} // namespace poputil

#endif
