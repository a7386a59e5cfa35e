// Copyright (c) Aspen contributors.
#include "common/OpsCommon.hpp"

#include "poputil/OptionParsing.hpp"
#include "poputil/TileMapping.hpp"
#include "poputil/Util.hpp"
#include "poputil/exceptions.hpp"

#include <poplar/exceptions.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace aspen::ops {

std::string shapeString(const std::vector<std::size_t> &shape) {
  std::string s = "{";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "}";
}

std::string describe(const poplar::Tensor &t) {
  if (!t.valid())
    return "<invalid tensor>";
  return t.shortString();
}

std::string opNameWithContext(const std::string &op, const poplar::DebugContext &dc) {
  const std::string &path = dc.getPathName();
  return path.empty() ? op : op + "(" + path + ")";
}

void requireValid(const poplar::Tensor &t, const std::string &op, const std::string &role) {
  if (!t.valid())
    throw poputil::poplibs_error(op + ": " + role + " is not a valid tensor (default-constructed)");
}

void parseOptions(const poplibs::OptionSpec &spec, const poplar::OptionFlags &options,
                  const std::string &op) {
  try {
    spec.parse(options);
  } catch (const poplar::invalid_option &e) {
    throw poplar::invalid_option(op + ": " + e.what());
  }
}

namespace {

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The directory of the shared object holding `anchor`.
std::string directoryOf(const void *anchor) {
  Dl_info info{};
  if (::dladdr(anchor, &info) == 0 || info.dli_fname == nullptr)
    return ".";
  const std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

} // namespace

void addLibraryCodelets(poplar::Graph &graph, const void *anchor, const std::string &gpName,
                        const char *envVar, const std::string &probeVertex, const std::string &op) {
  // Adding a library twice is harmless (Graph::addCodelets returns false), but checking
  // first avoids reading the file again.
  if (graph.hasCodelet(probeVertex))
    return;
  std::string path;
  if (const char *env = std::getenv(envVar); env && *env)
    path = env;
  else
    path = directoryOf(anchor) + "/" + gpName;
  if (!isRegularFile(path))
    throw poplar::graph_object_load_error(op + ": vertex library " + path + " not found (set " + envVar +
                                          " to its location)");
  graph.addCodelets(poplar::StringRef(path));
}

void requireVertex(const poplar::Graph &graph, const std::string &vertex, const std::string &op,
                   const std::string &what) {
  if (graph.hasCodelet(vertex))
    return;
  // The library whose addCodelets provides the vertex: the vertex name's namespace.
  const auto colons = vertex.find("::");
  const std::string library = colons == std::string::npos ? "the library" : vertex.substr(0, colons);
  throw poputil::poplibs_error(op + ": " + what + " is not supported (no vertex " + vertex +
                               "; did you call " + library + "::addCodelets(graph)?)");
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
  maxVerticesPerTile = std::max(1u, maxVerticesPerTile);
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty()) // most tiles hold none of a tensor: no copy, no call
      continue;
    auto regions = std::move(mapping[tile]);
    poputil::mergeAdjacentRegions(regions);
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

std::size_t TileRows::numRows() const {
  std::size_t n = 0;
  for (const auto &r : rows)
    n += r.size();
  return n;
}

std::vector<TileRows> rowsByTile(const poplar::Graph &graph, const poplar::Tensor &rows2d) {
  std::vector<TileRows> result;
  const std::size_t numRows = rows2d.dim(0), rowLength = rows2d.dim(1);
  if (numRows == 0 || rowLength == 0)
    return result;
  const TileLookup lookup(graph, rows2d.flatten());
  std::map<unsigned, std::vector<poplar::Interval>> byTile;
  for (std::size_t r = 0; r < numRows; ++r) {
    auto &runs = byTile[lookup.tileOf(r * rowLength)];
    if (!runs.empty() && runs.back().end() == r)
      runs.back() = poplar::Interval(runs.back().begin(), r + 1);
    else
      runs.push_back(poplar::Interval(r, r + 1));
  }
  for (auto &[tile, rows] : byTile)
    result.push_back({tile, std::move(rows)});
  return result;
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

poplar::Tensor gatherRows(const poplar::Tensor &rows2d, const std::vector<poplar::Interval> &rows) {
  std::vector<poplar::Tensor> parts;
  parts.reserve(rows.size());
  for (const auto &r : rows)
    parts.push_back(rows2d.slice(r.begin(), r.end(), 0).flatten());
  return parts.size() == 1 ? parts[0] : poplar::concat(parts);
}

poplar::Tensor asRows(const poplar::Tensor &t) {
  if (t.rank() == 0)
    return t.reshape({1, 1});
  const std::size_t inner = t.dim(t.rank() - 1);
  return t.reshape({inner == 0 ? 0 : t.numElements() / inner, inner});
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
    setStateInteger(graph, field, type, integerConstantOf(value, type, "a vertex state value"));
  }
}

std::int64_t integerConstantOf(double value, const poplar::Type &type, const std::string &what) {
  // A double outside [-2^63, 2^64) has no integer to convert to (the cast would be undefined
  // behaviour); inside, the value is truncated towards zero and then wraps into the type as an
  // integer conversion does, so -1 for an unsigned type is its all-ones value, as in C++.
  if (!std::isfinite(value) || value < -9223372036854775808.0 || value >= 18446744073709551616.0)
    throw poputil::poplibs_error("the value " + std::to_string(value) + " given as " + what +
                                 " has no equivalent of type " + type.toString().str());
  if (value >= 9223372036854775808.0)
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(value));
  return static_cast<std::int64_t>(value);
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
    c = graph.addConstant(type, {}, static_cast<unsigned>(integerConstantOf(value, type, "constant " + name)),
                          name);
  } else if (type.isIntegral()) {
    c = graph.addConstant(type, {},
                          static_cast<long long>(integerConstantOf(value, type, "constant " + name)), name);
  } else {
    c = graph.addConstant(type, {}, value, name);
  }
  graph.setTileMapping(c, tile);
  return c;
}

std::uint64_t multiVertexCycles(const poplar::Target &target, std::size_t numElements,
                                unsigned elementsPerStep, double cyclesPerStep, unsigned perWorkerOverhead) {
  const unsigned workers = std::max(1u, target.getNumWorkerContexts());
  const unsigned step = std::max(1u, elementsPerStep);
  const std::size_t perWorker = (numElements + workers - 1) / workers;
  const std::size_t steps = (perWorker + step - 1) / step;
  const double workerCycles = perWorkerOverhead + cyclesPerStep * static_cast<double>(steps);
  return static_cast<std::uint64_t>(std::ceil(workers * workerCycles)) + 11;
}

std::uint64_t workerVertexCycles(std::size_t numElements, double cyclesPerElement, unsigned overhead) {
  return overhead +
         static_cast<std::uint64_t>(std::ceil(cyclesPerElement * static_cast<double>(numElements)));
}

} // namespace aspen::ops
