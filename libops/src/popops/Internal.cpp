// Copyright (c) Aspen contributors.
#include "Internal.hpp"

#include "poputil/TileMapping.hpp"
#include "poputil/Util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aspen::ops {

std::string toString(popops::expr::UnaryOpType op) {
  using U = popops::expr::UnaryOpType;
  switch (op) {
  case U::ABSOLUTE:
    return "ABSOLUTE";
  case U::ASIN:
    return "ASIN";
  case U::BITWISE_NOT:
    return "BITWISE_NOT";
  case U::CBRT:
    return "CBRT";
  case U::CEIL:
    return "CEIL";
  case U::COS:
    return "COS";
  case U::COUNT_LEADING_ZEROS:
    return "COUNT_LEADING_ZEROS";
  case U::ERF:
    return "ERF";
  case U::EXPONENT:
    return "EXPONENT";
  case U::EXPONENT_MINUS_ONE:
    return "EXPONENT_MINUS_ONE";
  case U::EXPONENT2:
    return "EXPONENT2";
  case U::FLOOR:
    return "FLOOR";
  case U::GELU_ERF:
    return "GELU_ERF";
  case U::INVERSE:
    return "INVERSE";
  case U::IS_FINITE:
    return "IS_FINITE";
  case U::IS_INF:
    return "IS_INF";
  case U::IS_NAN:
    return "IS_NAN";
  case U::LOGARITHM:
    return "LOGARITHM";
  case U::LOGARITHM_ONE_PLUS:
    return "LOGARITHM_ONE_PLUS";
  case U::LOGICAL_NOT:
    return "LOGICAL_NOT";
  case U::NEARBY_INT:
    return "NEARBY_INT";
  case U::NEGATE:
    return "NEGATE";
  case U::POPCOUNT:
    return "POPCOUNT";
  case U::RELU:
    return "RELU";
  case U::ROUND:
    return "ROUND";
  case U::SIGNUM:
    return "SIGNUM";
  case U::SIN:
    return "SIN";
  case U::TAN:
    return "TAN";
  case U::TANH:
    return "TANH";
  case U::TRUNC:
    return "TRUNC";
  case U::SQRT:
    return "SQRT";
  case U::SQUARE:
    return "SQUARE";
  case U::SIGMOID:
    return "SIGMOID";
  case U::RSQRT:
    return "RSQRT";
  }
  return "UNKNOWN";
}

std::string toString(popops::expr::BinaryOpType op) {
  using B = popops::expr::BinaryOpType;
  switch (op) {
  case B::ADD:
    return "ADD";
  case B::ATAN2:
    return "ATAN2";
  case B::BITWISE_AND:
    return "BITWISE_AND";
  case B::BITWISE_OR:
    return "BITWISE_OR";
  case B::BITWISE_XOR:
    return "BITWISE_XOR";
  case B::BITWISE_XNOR:
    return "BITWISE_XNOR";
  case B::DIVIDE:
    return "DIVIDE";
  case B::EQUAL:
    return "EQUAL";
  case B::GREATER_THAN_EQUAL:
    return "GREATER_THAN_EQUAL";
  case B::GREATER_THAN:
    return "GREATER_THAN";
  case B::INV_STD_DEV_TO_VARIANCE:
    return "INV_STD_DEV_TO_VARIANCE";
  case B::LESS_THAN_EQUAL:
    return "LESS_THAN_EQUAL";
  case B::LOGICAL_AND:
    return "LOGICAL_AND";
  case B::LOGICAL_OR:
    return "LOGICAL_OR";
  case B::LESS_THAN:
    return "LESS_THAN";
  case B::MAXIMUM:
    return "MAXIMUM";
  case B::MINIMUM:
    return "MINIMUM";
  case B::MULTIPLY:
    return "MULTIPLY";
  case B::NOT_EQUAL:
    return "NOT_EQUAL";
  case B::POWER:
    return "POWER";
  case B::REMAINDER:
    return "REMAINDER";
  case B::SHIFT_LEFT:
    return "SHIFT_LEFT";
  case B::SHIFT_RIGHT:
    return "SHIFT_RIGHT";
  case B::SHIFT_RIGHT_SIGN_EXTEND:
    return "SHIFT_RIGHT_SIGN_EXTEND";
  case B::SUBTRACT:
    return "SUBTRACT";
  case B::VARIANCE_TO_INV_STD_DEV:
    return "VARIANCE_TO_INV_STD_DEV";
  }
  return "UNKNOWN";
}

std::string toString(popops::Operation op) {
  using O = popops::Operation;
  switch (op) {
  case O::ADD:
    return "ADD";
  case O::MUL:
    return "MUL";
  case O::MIN:
    return "MIN";
  case O::MAX:
    return "MAX";
  case O::LOGICAL_AND:
    return "LOGICAL_AND";
  case O::LOGICAL_OR:
    return "LOGICAL_OR";
  case O::SQUARE_ADD:
    return "SQUARE_ADD";
  case O::LOG_ADD:
    return "LOG_ADD";
  }
  return "UNKNOWN";
}

void requireVertex(const poplar::Graph &graph, const std::string &vertex, const std::string &op,
                   const std::string &what) {
  if (!graph.hasCodelet(vertex))
    throw poputil::poplibs_error(op + ": " + what + " is not supported (no vertex " + vertex +
                                 "; did you call popops::addCodelets(graph)?)");
}

std::size_t TileWork::numElements() const {
  std::size_t n = 0;
  for (const auto &r : regions)
    n += r.size();
  return n;
}

std::vector<TileWork> splitByTile(const poplar::Graph &graph, const poplar::Tensor &t,
                                  unsigned maxVerticesPerTile) {
  std::vector<TileWork> work;
  if (t.numElements() == 0)
    return work;
  bool complete = true;
  auto mapping = graph.getTileMapping(t, &complete);
  if (!complete) {
    // Elements with no tile yet are handled on tile 0 (the caller decides where results live).
    std::vector<poplar::Interval> mapped;
    for (const auto &tile : mapping)
      mapped.insert(mapped.end(), tile.begin(), tile.end());
    std::sort(mapped.begin(), mapped.end());
    std::size_t next = 0;
    if (mapping.empty())
      mapping.resize(1);
    for (const auto &i : mapped) {
      if (i.begin() > next)
        mapping[0].push_back(poplar::Interval(next, i.begin()));
      next = std::max(next, i.end());
    }
    if (next < t.numElements())
      mapping[0].push_back(poplar::Interval(next, t.numElements()));
    std::sort(mapping[0].begin(), mapping[0].end());
  }
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    auto regions = mapping[tile];
    poputil::mergeAdjacentRegions(regions);
    if (regions.empty())
      continue;
    if (regions.size() <= maxVerticesPerTile) {
      for (const auto &r : regions)
        work.push_back({tile, {r}});
      continue;
    }
    // Many regions: balance them over maxVerticesPerTile groups (regions may be split).
    for (auto &group : poputil::splitRegions(regions, 1, maxVerticesPerTile))
      work.push_back({tile, std::move(group)});
  }
  return work;
}

TileLookup::TileLookup(const poplar::Graph &graph, const poplar::Tensor &t) {
  bool complete = true;
  const auto mapping = graph.getTileMapping(t, &complete);
  for (unsigned tile = 0; tile < mapping.size(); ++tile)
    for (const auto &i : mapping[tile])
      runs_.push_back({i.begin(), i.end(), tile});
  std::sort(runs_.begin(), runs_.end(), [](const Run &a, const Run &b) { return a.begin < b.begin; });
}

unsigned TileLookup::tileOf(std::size_t index) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), index,
                             [](std::size_t i, const Run &r) { return i < r.begin; });
  if (it == runs_.begin())
    return 0;
  --it;
  return index < it->end ? it->tile : 0;
}

std::vector<RowGroup> rowGroupsByTile(const poplar::Graph &graph, const poplar::Tensor &rows2d) {
  std::vector<RowGroup> groups;
  const std::size_t rows = rows2d.dim(0), rowLen = rows2d.dim(1);
  if (rows == 0 || rowLen == 0)
    return groups;
  const TileLookup lookup(graph, rows2d.flatten());
  for (std::size_t r = 0; r < rows; ++r) {
    const unsigned tile = lookup.tileOf(r * rowLen);
    if (!groups.empty() && groups.back().tile == tile && groups.back().end == r)
      ++groups.back().end;
    else
      groups.push_back({tile, r, r + 1});
  }
  return groups;
}

poplar::Tensor gather(const poplar::Tensor &flat, const std::vector<poplar::Interval> &regions) {
  if (regions.size() == 1)
    return flat.slice(regions[0]);
  std::vector<poplar::Tensor> parts;
  parts.reserve(regions.size());
  for (const auto &r : regions)
    parts.push_back(flat.slice(r));
  return poplar::concat(parts);
}

void mapIfUnmapped(poplar::Graph &graph, const poplar::Tensor &t) {
  bool complete = true;
  graph.getTileMapping(t, &complete);
  if (!complete)
    poputil::mapTensorLinearly(graph, t);
}

void setStateValue(poplar::Graph &graph, const poplar::FieldRef &field, const poplar::Type &type,
                   double value) {
  if (type == poplar::HALF) {
    const float f = static_cast<float>(value);
    std::uint16_t bits;
    poplar::copyFloatToDeviceHalf(graph.getTarget(), &f, &bits, 1);
    graph.setInitialValueHalf(field, bits);
  } else if (type == poplar::FLOAT) {
    graph.setInitialValue(field, static_cast<float>(value));
  } else if (type == poplar::DOUBLE) {
    graph.setInitialValue(field, value);
  } else if (type == poplar::BOOL) {
    graph.setInitialValue(field, value != 0.0);
  } else {
    setStateInteger(graph, field, type, static_cast<std::int64_t>(value));
  }
}

void setStateInteger(poplar::Graph &graph, const poplar::FieldRef &field, const poplar::Type &type,
                     std::int64_t value) {
  using poplar::Type;
  switch (type.id()) {
  case Type::Id::Bool:
    graph.setInitialValue(field, value != 0);
    break;
  case Type::Id::Char:
    graph.setInitialValue(field, static_cast<char>(value));
    break;
  case Type::Id::SignedChar:
    graph.setInitialValue(field, static_cast<signed char>(value));
    break;
  case Type::Id::UnsignedChar:
    graph.setInitialValue(field, static_cast<unsigned char>(value));
    break;
  case Type::Id::Short:
    graph.setInitialValue(field, static_cast<short>(value));
    break;
  case Type::Id::UnsignedShort:
    graph.setInitialValue(field, static_cast<unsigned short>(value));
    break;
  case Type::Id::Int:
    graph.setInitialValue(field, static_cast<int>(value));
    break;
  case Type::Id::UnsignedInt:
    graph.setInitialValue(field, static_cast<unsigned>(value));
    break;
  case Type::Id::Long:
    graph.setInitialValue(field, static_cast<long>(value));
    break;
  case Type::Id::UnsignedLong:
    graph.setInitialValue(field, static_cast<unsigned long>(value));
    break;
  case Type::Id::LongLong:
    graph.setInitialValue(field, static_cast<long long>(value));
    break;
  case Type::Id::UnsignedLongLong:
    graph.setInitialValue(field, static_cast<unsigned long long>(value));
    break;
  default:
    setStateValue(graph, field, type, static_cast<double>(value));
    break;
  }
}

poplar::Tensor scalarConstantOf(poplar::Graph &graph, const poplar::Type &type, double value, unsigned tile,
                                const std::string &name) {
  poplar::Tensor c;
  if (type == poplar::HALF) {
    const float f = static_cast<float>(value);
    std::uint16_t bits;
    poplar::copyFloatToDeviceHalf(graph.getTarget(), &f, &bits, 1);
    c = graph.addConstantHalf(poplar::HALF, {}, bits, name);
  } else if (type == poplar::FLOAT) {
    c = graph.addConstant(type, {}, static_cast<float>(value), name);
  } else if (type == poplar::BOOL) {
    c = graph.addConstant(type, {}, value != 0.0, name);
  } else if (type == poplar::UNSIGNED_INT) {
    c = graph.addConstant(type, {}, static_cast<unsigned>(value), name);
  } else if (type.isIntegral()) {
    c = graph.addConstant(type, {}, static_cast<long long>(value), name);
  } else {
    c = graph.addConstant(type, {}, value, name);
  }
  graph.setTileMapping(c, tile);
  return c;
}

std::uint64_t multiVertexCycles(const poplar::Target &target, const poplar::Type &type,
                                std::size_t numElements, double cyclesPerVector, unsigned perWorkerOverhead) {
  const unsigned workers = std::max(1u, target.getNumWorkerContexts());
  const unsigned width = std::max(1u, target.getVectorWidth(type));
  const std::size_t perWorker = (numElements + workers - 1) / workers;
  const std::size_t vectors = (perWorker + width - 1) / width;
  const double workerCycles = perWorkerOverhead + cyclesPerVector * static_cast<double>(vectors);
  // A MultiVertex's estimate is in machine cycles: the workers take turns (PopLibs' convention).
  return static_cast<std::uint64_t>(std::ceil(workers * workerCycles)) + 11;
}

std::uint64_t workerVertexCycles(std::size_t numElements, double cyclesPerElement, unsigned overhead) {
  return overhead +
         static_cast<std::uint64_t>(std::ceil(cyclesPerElement * static_cast<double>(numElements)));
}

} // namespace aspen::ops
