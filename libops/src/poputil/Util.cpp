// Copyright (c) Aspen contributors.
// Region partitioning and small tensor utilities.
#include "poputil/Util.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "poputil/exceptions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace poputil {
namespace {

std::size_t ceilDiv(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

// Elements per partition for `total` elements: grain multiples, balanced over
// `maxPartitions`, at least `minElements` where possible, at most `maxElements`.
std::size_t elementsPerPartition(std::size_t total, unsigned grainSize, unsigned maxPartitions,
                                 unsigned minElements, unsigned maxElements) {
  grainSize = std::max(1u, grainSize);
  maxPartitions = std::max(1u, maxPartitions);
  const std::size_t grains = ceilDiv(total, grainSize);
  std::size_t grainsPer = ceilDiv(grains, maxPartitions);
  if (minElements)
    grainsPer = std::max(grainsPer, ceilDiv(minElements, grainSize));
  if (maxElements != UINT_MAX) {
    // A cap on partition size only holds while the partitions still cover everything.
    const std::size_t capped = std::max<std::size_t>(1, maxElements / grainSize);
    if (capped * maxPartitions >= grains)
      grainsPer = std::min(grainsPer, capped);
  }
  return grainsPer * grainSize;
}

} // namespace

void mergeAdjacentRegions(std::vector<poplar::Interval> &regions) {
  std::vector<poplar::Interval> merged;
  for (const auto &r : regions) {
    if (r.size() == 0)
      continue;
    if (!merged.empty() && merged.back().end() == r.begin())
      merged.back() = poplar::Interval(merged.back().begin(), r.end());
    else
      merged.push_back(r);
  }
  regions.swap(merged);
}

void mergeAdjacentRegions(std::vector<std::vector<poplar::Interval>> &mapping) {
  for (auto &m : mapping)
    mergeAdjacentRegions(m);
}

std::vector<std::vector<poplar::Interval>> splitRegions(const std::vector<poplar::Interval> &regions,
                                                        unsigned grainSize, unsigned maxPartitions,
                                                        unsigned minElementsPerPartition,
                                                        unsigned maxElementsPerPartition,
                                                        unsigned maxElementsPerRegion) {
  std::size_t total = 0;
  for (const auto &r : regions)
    total += r.size();
  std::vector<std::vector<poplar::Interval>> partitions;
  if (total == 0)
    return partitions;
  const std::size_t per =
      elementsPerPartition(total, grainSize, maxPartitions, minElementsPerPartition, maxElementsPerPartition);
  std::size_t room = 0;
  for (const auto &r : regions) {
    std::size_t begin = r.begin();
    while (begin < r.end()) {
      if (room == 0) {
        partitions.emplace_back();
        room = per;
      }
      const std::size_t n = std::min<std::size_t>({r.end() - begin, room, maxElementsPerRegion});
      partitions.back().push_back(poplar::Interval(begin, begin + n));
      begin += n;
      room -= n;
    }
  }
  return partitions;
}

std::vector<std::vector<poplar::Interval>>
splitRegionsBetweenWorkers(const poplar::Target &target, const std::vector<poplar::Interval> &regions,
                           unsigned grainSize, unsigned minElementsPerPartition,
                           unsigned maxElementsPerPartition, unsigned maxElementsPerRegion) {
  return splitRegions(regions, grainSize, target.getNumWorkerContexts(), minElementsPerPartition,
                      maxElementsPerPartition, maxElementsPerRegion);
}

std::vector<std::vector<std::vector<poplar::Interval>>>
splitRegions(const std::vector<std::vector<poplar::Interval>> &regions, unsigned grainSize,
             unsigned maxPartitions, unsigned minElementsPerPartition, unsigned maxElementsPerPartition,
             unsigned maxElementsPerRegion) {
  const std::size_t total = intervalSequenceNumElements(regions);
  std::vector<std::vector<std::vector<poplar::Interval>>> partitions;
  if (total == 0)
    return partitions;
  const std::size_t per =
      elementsPerPartition(total, grainSize, maxPartitions, minElementsPerPartition, maxElementsPerPartition);
  std::size_t room = 0;
  for (const auto &seq : regions) {
    bool newSequence = true;
    for (const auto &r : seq) {
      std::size_t begin = r.begin();
      while (begin < r.end()) {
        if (room == 0) {
          partitions.emplace_back();
          room = per;
          newSequence = true;
        }
        if (newSequence) {
          partitions.back().emplace_back();
          newSequence = false;
        }
        const std::size_t n = std::min<std::size_t>({r.end() - begin, room, maxElementsPerRegion});
        partitions.back().back().push_back(poplar::Interval(begin, begin + n));
        begin += n;
        room -= n;
        if (room == 0)
          newSequence = true;
      }
    }
  }
  return partitions;
}

std::vector<std::vector<std::vector<poplar::Interval>>>
splitRegionsBetweenWorkers(const poplar::Target &target,
                           const std::vector<std::vector<poplar::Interval>> &regions, unsigned grainSize,
                           unsigned minElementsPerPartition, unsigned maxElementsPerPartition,
                           unsigned maxElementsPerRegion) {
  return splitRegions(regions, grainSize, target.getNumWorkerContexts(), minElementsPerPartition,
                      maxElementsPerPartition, maxElementsPerRegion);
}

std::size_t intervalSequenceNumElements(const std::vector<std::vector<poplar::Interval>> &seq) {
  std::size_t n = 0;
  for (const auto &s : seq)
    for (const auto &i : s)
      n += i.size();
  return n;
}

poplar::Tensor duplicate(poplar::Graph &graph, const poplar::Tensor &in, poplar::program::Sequence &p,
                         const poplar::DebugContext &debugContextIn, poplar::TensorCloneMethod method) {
  aspen::ops::PoputilDebugInfo di(debugContextIn, DI_ARGS(in, method));
  const poplar::DebugContext debugContext(di);
  aspen::ops::requireValid(in, "poputil::duplicate", "the tensor");
  poplar::Tensor out = graph.clone(in, {debugContext, "duplicate"}, method);
  p.add(poplar::program::Copy(in, out, false, {debugContext, "duplicate"}));
  return out;
}

poplar::Tensor cloneN(poplar::Graph &graph, const poplar::Tensor &t, unsigned N,
                      const poplar::DebugContext &debugContextIn, poplar::TensorCloneMethod method) {
  aspen::ops::PoputilDebugInfo di(debugContextIn, DI_ARGS(t, N, method));
  const poplar::DebugContext debugContext(di);
  return graph.cloneN(t, N, debugContext, method);
}

std::vector<int> balancedPartition(int rangeUpperBound, int splitCount) {
  if (splitCount <= 0)
    throw poplibs_error("poputil::balancedPartition: splitCount must be positive, got " +
                        std::to_string(splitCount));
  std::vector<int> counts(splitCount, rangeUpperBound / splitCount);
  for (int i = 0; i < rangeUpperBound % splitCount; ++i)
    ++counts[i];
  return counts;
}

bool checkAccuracyWhenCast(const poplar::Target &target, double input, poplar::Type inputType,
                           poplar::Type outputType, double tolerance) {
  if ((inputType != poplar::FLOAT && inputType != poplar::HALF) ||
      (outputType != poplar::FLOAT && outputType != poplar::HALF))
    throw poplibs_error("poputil::checkAccuracyWhenCast: only float and half are supported (got " +
                        inputType.toString().str() + " to " + outputType.toString().str() + ")");
  if (outputType == poplar::FLOAT || input == 0.0)
    return true;
  const float asFloat = static_cast<float>(input);
  std::uint16_t h;
  float back;
  poplar::copyFloatToDeviceHalf(target, &asFloat, &h, 1);
  poplar::copyDeviceHalfToFloat(target, &h, &back, 1);
  if (!std::isfinite(back))
    return false;
  return std::fabs((static_cast<double>(back) - input) / input) <= tolerance;
}

unsigned detectInnermostGrouping(const poplar::Graph &graph, const poplar::Tensor &t) {
  if (t.rank() == 0)
    throw poplibs_error("poputil::detectInnermostGrouping: tensor must have rank >= 1");
  std::size_t grouping = t.dim(t.rank() - 1);
  if (grouping == 0)
    return 1;
  // Every boundary of a tile interval or of a contiguous memory region must be a multiple.
  const auto mapping = graph.getTileMapping(t, false);
  for (const auto &tile : mapping)
    for (const auto &i : tile) {
      grouping = std::gcd(grouping, i.begin());
      grouping = std::gcd(grouping, i.end());
    }
  for (const auto &r : t.getContiguousRegions()) {
    grouping = std::gcd(grouping, r.begin());
    grouping = std::gcd(grouping, r.end());
  }
  return static_cast<unsigned>(std::max<std::size_t>(grouping, 1));
}

std::vector<GroupingInfo> detectDimGroupings(const poplar::Graph &graph, const poplar::Tensor &t) {
  aspen::ops::requireValid(t, "poputil::detectDimGroupings", "the tensor");
  if (t.rank() == 0)
    throw poplibs_error("poputil::detectDimGroupings: tensor must have rank >= 1");
  const unsigned rank = t.rank();
  std::vector<GroupingInfo> groupings;
  // `grouped` is `t` with each grouping found so far split out of its dimension as a factor
  // after the original dimensions: the first found is innermost.
  poplar::Tensor grouped = t;
  std::size_t total = 1;
  while (true) {
    unsigned bestDim = 0;
    std::size_t best = 1;
    for (unsigned d = 0; d < rank; ++d) {
      if (grouped.dim(d) <= 1)
        continue;
      // Dimension d innermost, just outside the groupings found so far.
      const poplar::Tensor candidate = grouped.dimRoll(d, rank - 1).flatten(rank - 1, grouped.rank());
      const std::size_t g = detectInnermostGrouping(graph, candidate);
      // A grouping of d within the groups already found must contain them whole.
      const std::size_t here = g % total ? 1 : std::gcd(g / total, grouped.dim(d));
      if (here > best) {
        best = here;
        bestDim = d;
      }
    }
    if (best == 1)
      return groupings;
    groupings.emplace_back(bestDim, static_cast<unsigned>(best));
    total *= best;
    grouped = grouped.reshapePartial(bestDim, bestDim + 1, {grouped.dim(bestDim) / best, best})
                  .dimRoll(bestDim + 1, rank);
  }
}

} // namespace poputil

// Marks this libpoputil.so as Aspen's build: libpoplar refuses a process that also loads another
// build's PopLibs libraries (PopLibs built from source), util/PoplibsBuilds.hpp.
extern "C" __attribute__((visibility("default"))) const char aspen_library_poputil[] = "Aspen";
