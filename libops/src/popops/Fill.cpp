// Copyright (c) Aspen contributors.
// popops::fill: popops::Fill<T> vertices (the value is vertex state) on the tiles
// where the tensor lives.
#include "popops/Fill.hpp"

#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "poputil/Util.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace popops {
namespace detail {

namespace {

struct HostValue {
  double asDouble;
  /// Empty when the value is a float with no integer equivalent (NaN, an infinity, or
  /// outside the range of int64): converting it would be undefined behaviour.
  std::optional<std::int64_t> asInt;
};

/// A floating-point fill value as an integer (truncated towards zero, as C++ converts),
/// or nothing when it is not finite or out of int64's range.
std::optional<std::int64_t> integerOf(double d) {
  // 2^63 is exact in a double; [-2^63, 2^63) is the range that truncates into int64.
  if (!std::isfinite(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
    return std::nullopt;
  return static_cast<std::int64_t>(d);
}

HostValue readHostValue(const poplar::Type &hostType, const void *value) {
  using Id = poplar::Type::Id;
  switch (hostType.id()) {
  case Id::Bool:
    return {double(*static_cast<const bool *>(value)), *static_cast<const bool *>(value)};
  case Id::Char:
    return {double(*static_cast<const char *>(value)), *static_cast<const char *>(value)};
  case Id::SignedChar:
    return {double(*static_cast<const signed char *>(value)), *static_cast<const signed char *>(value)};
  case Id::UnsignedChar:
    return {double(*static_cast<const unsigned char *>(value)), *static_cast<const unsigned char *>(value)};
  case Id::Short:
    return {double(*static_cast<const short *>(value)), *static_cast<const short *>(value)};
  case Id::UnsignedShort:
    return {double(*static_cast<const unsigned short *>(value)), *static_cast<const unsigned short *>(value)};
  case Id::Int:
    return {double(*static_cast<const int *>(value)), *static_cast<const int *>(value)};
  case Id::UnsignedInt:
    return {double(*static_cast<const unsigned *>(value)), *static_cast<const unsigned *>(value)};
  case Id::Long:
    return {double(*static_cast<const long *>(value)), *static_cast<const long *>(value)};
  case Id::UnsignedLong:
    return {double(*static_cast<const unsigned long *>(value)),
            static_cast<std::int64_t>(*static_cast<const unsigned long *>(value))};
  case Id::LongLong:
    return {double(*static_cast<const long long *>(value)), *static_cast<const long long *>(value)};
  case Id::UnsignedLongLong:
    return {double(*static_cast<const unsigned long long *>(value)),
            static_cast<std::int64_t>(*static_cast<const unsigned long long *>(value))};
  case Id::Float: {
    const float f = *static_cast<const float *>(value);
    return {f, integerOf(f)};
  }
  case Id::Double: {
    const double d = *static_cast<const double *>(value);
    return {d, integerOf(d)};
  }
  default:
    throw poputil::poplibs_error("popops::fill: fill values of type " + hostType.toString().str() +
                                 " are not supported");
  }
}

void addFillVertex(poplar::Graph &graph, const poplar::Tensor &flat,
                   const std::vector<poplar::Interval> &regions, unsigned tile, poplar::ComputeSet cs,
                   const HostValue &v) {
  const poplar::Type type = flat.elementType();
  if (!type.isFloatingPoint() && !v.asInt)
    throw poputil::poplibs_error("popops::fill: the value " + std::to_string(v.asDouble) +
                                 " has no equivalent of type " + type.toString().str() + " to fill " +
                                 aspen::ops::describe(flat) + " with");
  const std::string vt = poputil::templateVertex("popops::Fill", type);
  aspen::ops::requireVertex(graph, vt, "popops::fill", "filling a tensor of type " + type.toString().str());
  poplar::VertexRef vertex = graph.addVertex(cs, vt);
  graph.connect(vertex["out"], aspen::ops::gather(flat, regions));
  if (type.isFloatingPoint())
    aspen::ops::setStateValue(graph, vertex["in"], type, v.asDouble);
  else
    aspen::ops::setStateInteger(graph, vertex["in"], type, *v.asInt);
  graph.setTileMapping(vertex, tile);
  std::size_t n = 0;
  for (const auto &r : regions)
    n += r.size();
  graph.setPerfEstimate(vertex, cost::fill(graph.getTarget(), type, n));
}

void checkWritable(const poplar::Tensor &t) {
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error("popops::fill: " + aspen::ops::describe(t) +
                                 " cannot be written (it contains constants or aliased elements)");
}

} // namespace

void fillRegions(poplar::Graph &graph, const poplar::Tensor &t,
                 const std::vector<poplar::Interval> &tileRegions, unsigned tile, poplar::ComputeSet fillCS,
                 const poplar::Type &hostType, const void *value) {
  checkWritable(t);
  const HostValue v = readHostValue(hostType, value);
  std::vector<poplar::Interval> regions = tileRegions;
  poputil::mergeAdjacentRegions(regions);
  if (regions.empty())
    return;
  addFillVertex(graph, t.flatten(), regions, tile, fillCS, v);
}

void fillMapped(poplar::Graph &graph, const poplar::Tensor &t,
                const std::vector<std::vector<poplar::Interval>> &mapping, poplar::ComputeSet fillCS,
                const poplar::Type &hostType, const void *value) {
  checkWritable(t);
  const HostValue v = readHostValue(hostType, value);
  const poplar::Tensor flat = t.flatten();
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    std::vector<poplar::Interval> regions = mapping[tile];
    poputil::mergeAdjacentRegions(regions);
    if (!regions.empty())
      addFillVertex(graph, flat, regions, tile, fillCS, v);
  }
}

void fillProgram(poplar::Graph &graph, const poplar::Tensor &t, poplar::program::Sequence &prog,
                 const poplar::Type &hostType, const void *value,
                 const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, hostType), "fill");
  const poplar::DebugContext debugContext(di);
  checkWritable(t);
  const HostValue v = readHostValue(hostType, value);
  di.setValue("fillValue",
              v.asInt && hostType != poplar::FLOAT && hostType != poplar::DOUBLE && hostType != poplar::HALF
                  ? poplar::ProfileValue(*v.asInt)
                  : poplar::ProfileValue(v.asDouble));
  if (t.numElements() == 0)
    return;
  poplar::ComputeSet cs = graph.addComputeSet({debugContext, "fill"});
  const poplar::Tensor flat = t.flatten();
  for (const auto &w : aspen::ops::splitByTile(graph, t))
    addFillVertex(graph, flat, w.regions, w.tile, cs, v);
  prog.add(poplar::program::Execute(cs, {debugContext, "fill"}));
}

} // namespace detail
} // namespace popops
