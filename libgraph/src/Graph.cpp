// Copyright (c) Aspen contributors.
// poplar::Graph, except vertices and codelets (GraphVertices.cpp): variables,
// constants, tile mapping, virtual graphs, host handles, streams and dumps.
// Everything appends to the shared ir::GraphData; tile mappings are kept per
// variable as sorted, disjoint, merged TileIntervals with absolute tiles.
#include "poplar/Graph.hpp"

#include "ir/GraphData.hpp"
#include "ir/QuarterMetadata.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"
#include "util/HostConvert.hpp"
#include "util/LinearMapping.hpp"
#include "util/PoplibsBuilds.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <ostream>

namespace poplar {

using aspen::ir::GraphData;
using aspen::ir::ProgramNode;
using aspen::ir::Segment;
using aspen::ir::TargetData;
using aspen::ir::TensorView;
using aspen::ir::TileInterval;
using aspen::ir::Variable;
using aspen::ir::VarId;
using aspen::ir::VarRegion;

namespace {

/// Throws E unless `t` is a valid tensor of the graph `data`; `what` names the call.
template <class E> void requireTensorOf(const GraphData *data, const Tensor &t, const std::string &what) {
  if (!t.valid())
    throw E(what + ": the tensor is not valid (default-constructed)");
  if (t.getImpl().graph != data->id())
    throw E(what + ": tensor " + t.shortString() + " belongs to a different graph");
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

/// The element count of a new variable or constant; throws when the shape is too
/// large to represent (see aspen::ir::kMaxTensorBytes).
std::uint64_t shapeProduct(ArrayRef<std::size_t> shape, const Type &type, const std::string &name) {
  const auto n = aspen::ir::checkedElementCount(shape.vec(), type.size());
  if (!n)
    throw tensor_creation_error("The shape " + aspen::ir::shapeString(shape.vec()) + " of '" + name +
                                "' has too many elements: " + std::string(type.toString()) +
                                " tensors are limited to " + std::to_string(aspen::ir::kMaxTensorBytes) +
                                " bytes");
  return *n;
}

/// `bytes` zero bytes of host memory for the initial value of `what`; a
/// tensor too large for the host is the user's error, not a crash.
std::vector<std::uint8_t> hostBytes(std::uint64_t bytes, const std::string &what) {
  try {
    return std::vector<std::uint8_t>(bytes);
  } catch (const std::bad_alloc &) {
    throw tensor_creation_error("Cannot allocate " + std::to_string(bytes) +
                                " bytes of host memory for the " + "initial value of " + what);
  }
}

/// The target a graph over the whole device sees: one replica's share of the
/// IPUs (GraphData::target already is that; see the Graph constructor).
TargetData topLevelTargetData(const GraphData &data) {
  return data.target;
}

// ---- tile mapping helpers ----------------------------------------------------

/// Overlays `overlay` (sorted, disjoint) onto `base` (sorted, disjoint): the
/// overlay wins where they overlap. Adjacent intervals on one tile are merged.
std::vector<TileInterval> overlayIntervals(const std::vector<TileInterval> &base,
                                           const std::vector<TileInterval> &overlay) {
  std::vector<TileInterval> out;
  out.reserve(base.size() + overlay.size() + 1);
  auto push = [&](std::uint64_t begin, std::uint64_t end, std::uint32_t tile) {
    if (begin >= end)
      return;
    if (!out.empty() && out.back().end == begin && out.back().tile == tile)
      out.back().end = end;
    else
      out.push_back(TileInterval{begin, end, tile});
  };
  std::size_t bi = 0;
  std::uint64_t bStart = base.empty() ? 0 : base[0].begin; // start of the rest of base[bi]
  auto emitBaseBelow = [&](std::uint64_t limit) {
    while (bi < base.size() && bStart < limit) {
      const std::uint64_t end = std::min(base[bi].end, limit);
      push(bStart, end, base[bi].tile);
      if (end == base[bi].end) {
        if (++bi < base.size())
          bStart = base[bi].begin;
      } else {
        bStart = end;
      }
    }
  };
  auto skipBaseBelow = [&](std::uint64_t pos) {
    while (bi < base.size() && base[bi].end <= pos)
      if (++bi < base.size())
        bStart = base[bi].begin;
    if (bi < base.size())
      bStart = std::max(bStart, pos);
  };
  for (const TileInterval &o : overlay) {
    emitBaseBelow(o.begin);
    skipBaseBelow(o.end);
    push(o.begin, o.end, o.tile);
  }
  emitBaseBelow(std::numeric_limits<std::uint64_t>::max());
  return out;
}

/// Overlays `overlay` (sorted, disjoint) onto `mapping` in place. Only the window
/// of `mapping` that the overlay touches is rebuilt, so mapping a variable piece
/// by piece in increasing order (the common case: row by row) costs O(1) per
/// piece instead of O(size of the mapping).
void overlayInPlace(std::vector<TileInterval> &mapping, const std::vector<TileInterval> &overlay) {
  if (overlay.empty())
    return;
  const std::uint64_t lo = overlay.front().begin, hi = overlay.back().end;
  // First interval that ends at or after `lo` (an adjacent one may merge), and
  // the first that starts after `hi`.
  auto first = std::lower_bound(mapping.begin(), mapping.end(), lo,
                                [](const TileInterval &t, std::uint64_t v) { return t.end < v; });
  auto last = std::upper_bound(first, mapping.end(), hi,
                               [](std::uint64_t v, const TileInterval &t) { return v < t.begin; });
  std::vector<TileInterval> window(first, last);
  std::vector<TileInterval> merged = overlayIntervals(window, overlay);
  const auto offset = first - mapping.begin();
  if (merged.size() >= window.size()) {
    std::copy(merged.begin(), merged.begin() + static_cast<std::ptrdiff_t>(window.size()), first);
    mapping.insert(mapping.begin() + offset + static_cast<std::ptrdiff_t>(window.size()),
                   merged.begin() + static_cast<std::ptrdiff_t>(window.size()), merged.end());
  } else {
    std::copy(merged.begin(), merged.end(), first);
    mapping.erase(first + static_cast<std::ptrdiff_t>(merged.size()), last);
  }
}

/// A region of a variable to be placed on an absolute tile; `order` breaks ties
/// between overlapping requests (the later request wins).
struct MappingRequest {
  VarId var;
  std::uint64_t begin, end;
  std::uint32_t tile;
  std::uint64_t order;
};

/// Applies mapping requests to the variables' mappings. Cost O(requests log
/// requests + mapping sizes of the variables touched).
void applyMappingRequests(GraphData &data, std::vector<MappingRequest> requests) {
  std::stable_sort(requests.begin(), requests.end(), [](const MappingRequest &a, const MappingRequest &b) {
    return a.var != b.var ? a.var < b.var : a.begin < b.begin;
  });
  std::size_t i = 0;
  while (i < requests.size()) {
    const VarId var = requests[i].var;
    std::size_t j = i;
    bool overlapping = false;
    std::vector<TileInterval> overlay;
    for (; j < requests.size() && requests[j].var == var; ++j) {
      const auto &r = requests[j];
      if (r.begin >= r.end)
        continue;
      if (!overlay.empty() && r.begin < overlay.back().end) {
        if (r.tile != overlay.back().tile)
          overlapping = true;
        overlay.back().end = std::max(overlay.back().end, r.end);
      } else if (!overlay.empty() && r.begin == overlay.back().end && r.tile == overlay.back().tile) {
        overlay.back().end = r.end;
      } else {
        overlay.push_back(TileInterval{r.begin, r.end, r.tile});
      }
    }
    auto &mapping = data.variables[var].mapping;
    if (!overlapping) {
      overlayInPlace(mapping, overlay);
    } else {
      // Aliased elements requested for different tiles: apply in request order.
      std::vector<MappingRequest> ordered(requests.begin() + static_cast<std::ptrdiff_t>(i),
                                          requests.begin() + static_cast<std::ptrdiff_t>(j));
      std::stable_sort(ordered.begin(), ordered.end(),
                       [](const MappingRequest &a, const MappingRequest &b) { return a.order < b.order; });
      for (const auto &r : ordered)
        if (r.begin < r.end)
          overlayInPlace(mapping, {TileInterval{r.begin, r.end, r.tile}});
    }
    i = j;
  }
}

/// A run of a tensor's flattened positions `[begin, end)` on absolute `tile`
/// (-1 = unmapped).
struct TileRun {
  std::uint64_t begin, end;
  std::int64_t tile;
};

/// The tile of every element of `view`, as runs in row-major order, adjacent
/// runs on one tile merged. Each strided segment costs O(log m + intervals it
/// crosses), m = size of its variable's mapping: no per-element work.
std::vector<TileRun> tileRunsOfView(const GraphData &data, const TensorView &view) {
  std::vector<TileRun> runs;
  auto emit = [&](std::uint64_t begin, std::uint64_t end, std::int64_t tile) {
    if (begin >= end)
      return;
    if (!runs.empty() && runs.back().end == begin && runs.back().tile == tile)
      runs.back().end = end;
    else
      runs.push_back(TileRun{begin, end, tile});
  };
  const std::uint64_t viewSize = std::max<std::uint64_t>(1, view.elementType.size());
  std::uint64_t pos = 0;
  for (const Segment &s : *view.segments) {
    ASPEN_ASSERT(s.var < data.variables.size(), "segment names an unknown variable");
    const Variable &var = data.variables[s.var];
    const auto &m = var.mapping;
    const std::uint64_t varSize = std::max<std::uint64_t>(1, var.type.size());
    // Mapping interval i in units of the view's element: an element belongs to
    // the interval that holds its first byte.
    auto lo = [&](std::size_t i) { return ceilDiv(m[i].begin * varSize, viewSize); };
    auto hi = [&](std::size_t i) { return ceilDiv(m[i].end * varSize, viewSize); };
    auto firstEndingAfter = [&](std::uint64_t p) {
      std::size_t a = 0, b = m.size();
      while (a < b) {
        std::size_t mid = (a + b) / 2;
        if (hi(mid) <= p)
          a = mid + 1;
        else
          b = mid;
      }
      return a;
    };
    auto numStartingAtOrBefore = [&](std::uint64_t p) {
      std::size_t a = 0, b = m.size();
      while (a < b) {
        std::size_t mid = (a + b) / 2;
        if (lo(mid) <= p)
          a = mid + 1;
        else
          b = mid;
      }
      return a;
    };
    const std::uint64_t start = static_cast<std::uint64_t>(s.start);
    const std::uint64_t count = s.count;
    auto emitK = [&](std::uint64_t k0, std::uint64_t k1, std::int64_t tile) {
      emit(pos + k0, pos + std::min(k1, count), tile);
    };
    if (count == 1 || s.stride == 0) {
      const std::size_t i = firstEndingAfter(start);
      const bool mapped = i < m.size() && lo(i) <= start;
      emitK(0, count, mapped ? static_cast<std::int64_t>(m[i].tile) : -1);
    } else if (s.stride > 0) {
      const std::uint64_t stride = static_cast<std::uint64_t>(s.stride);
      std::uint64_t k = 0;
      while (k < count) {
        const std::uint64_t p = start + k * stride;
        const std::size_t i = firstEndingAfter(p);
        if (i == m.size()) {
          emitK(k, count, -1);
          break;
        }
        const std::uint64_t l = lo(i);
        std::uint64_t next;
        if (p < l) {
          next = ceilDiv(l - start, stride);
          emitK(k, next, -1);
        } else {
          next = ceilDiv(hi(i) - start, stride);
          emitK(k, next, m[i].tile);
        }
        k = next;
      }
    } else {
      const std::uint64_t stride = static_cast<std::uint64_t>(-s.stride);
      std::uint64_t k = 0;
      while (k < count) {
        const std::uint64_t p = start - k * stride;
        const std::size_t n = numStartingAtOrBefore(p);
        if (n == 0) {
          emitK(k, count, -1);
          break;
        }
        const std::size_t i = n - 1;
        const std::uint64_t h = hi(i);
        std::uint64_t next;
        if (p >= h) {
          next = (start - h) / stride + 1;
          emitK(k, next, -1);
        } else {
          next = (start - lo(i)) / stride + 1;
          emitK(k, next, m[i].tile);
        }
        k = next;
      }
    }
    pos += count;
  }
  return runs;
}

/// The segments of `view` covering flattened positions `[begin, end)`.
/// `segmentStarts[i]` is the position of segment i.
std::vector<Segment> segmentsInRange(std::span<const Segment> segments,
                                     const std::vector<std::uint64_t> &segmentStarts, std::uint64_t begin,
                                     std::uint64_t end) {
  std::vector<Segment> out;
  auto it = std::upper_bound(segmentStarts.begin(), segmentStarts.end(), begin);
  std::size_t i = static_cast<std::size_t>(it - segmentStarts.begin()) - 1;
  for (; i < segments.size() && segmentStarts[i] < end; ++i) {
    const Segment &s = segments[i];
    const std::uint64_t segBegin = segmentStarts[i];
    const std::uint64_t a = std::max(begin, segBegin);
    const std::uint64_t b = std::min(end, segBegin + s.count);
    if (a >= b)
      continue;
    const std::uint64_t n = b - a;
    out.push_back(Segment{s.var, s.start + static_cast<std::int64_t>(a - segBegin) * s.stride,
                          n == 1 ? 1 : s.stride, n});
  }
  return out;
}

std::vector<std::uint64_t> segmentStartPositions(std::span<const Segment> segments) {
  std::vector<std::uint64_t> starts(segments.size());
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    starts[i] = pos;
    pos += segments[i].count;
  }
  return starts;
}

/// The variable regions of `segments` (viewed with `view`'s element type).
std::vector<VarRegion> regionsOfSegments(const GraphData &data, const TensorView &view,
                                         std::vector<Segment> segments) {
  TensorView piece;
  piece.graph = view.graph;
  piece.elementType = view.elementType;
  std::uint64_t n = 0;
  for (const auto &s : segments)
    n += s.count;
  piece.shape = {static_cast<std::size_t>(n)};
  piece.segments = aspen::ir::SegmentList(std::move(segments));
  return aspen::ir::toVariableRegions(data, piece);
}

} // namespace

// ---- construction ------------------------------------------------------------

Graph::Graph() : tileBase_(0), numTiles_(0) {}

Graph::Graph(const Target &target, replication_factor r) : tileBase_(0), numTiles_(0) {
  aspen::util::checkOnePoplibsBuild("Graph");
  if (r.value == 0)
    throw graph_object_creation_error("A graph's replication factor must be at least 1");
  const TargetData &device = target.getImpl();
  if (r.value > 1 && device.numIPUs % r.value != 0)
    throw graph_object_creation_error("Graph: replication factor " + std::to_string(r.value) +
                                      " does not divide the target's " + std::to_string(device.numIPUs) +
                                      " IPU" + (device.numIPUs == 1 ? "" : "s") +
                                      ": a replicated graph needs replicationFactor x IPUs-per-replica IPUs "
                                      "(e.g. an IPUModel with numIPUs = " +
                                      std::to_string(r.value) + ")");
  data_ = std::make_shared<GraphData>();
  // The graph is compiled once for one replica: its target is one replica's IPUs.
  data_->target = device;
  data_->target.numIPUs = device.numIPUs / r.value;
  data_->replicationFactor = r.value;
  const TargetData top = topLevelTargetData(*data_);
  numTiles_ = top.numTiles();
  target_ = std::make_unique<Target>(top);
}

Graph::Graph(std::shared_ptr<GraphData> data, unsigned tileBase, unsigned numTiles)
    : data_(std::move(data)), tileBase_(tileBase), numTiles_(numTiles) {
  TargetData t = topLevelTargetData(*data_);
  t.numIPUs = 1;
  t.tilesPerIPU = numTiles;
  target_ = std::make_unique<Target>(t);
}

Graph::Graph(std::shared_ptr<GraphData> data, unsigned tileBase, const Target &target,
             std::shared_ptr<const std::vector<unsigned>> tileTable)
    : data_(std::move(data)), tileBase_(tileBase), numTiles_(target.getNumTiles()),
      target_(std::make_unique<Target>(target)), tileTable_(std::move(tileTable)) {}

Graph::Graph(Graph &&) noexcept = default;
Graph &Graph::operator=(Graph &&) noexcept = default;
Graph::~Graph() = default;

const Target &Graph::getTarget() const {
  if (!target_)
    throw poplar_error("getTarget() called on an empty Graph (default-constructed or moved from)");
  return *target_;
}

unsigned Graph::getReplicationFactor() const {
  return data_ ? data_->replicationFactor : 1;
}

int Graph::toRelativeTile(unsigned absoluteTile) const {
  if (tileTable_) {
    auto it = std::find(tileTable_->begin(), tileTable_->end(), absoluteTile);
    return it == tileTable_->end() ? -1 : static_cast<int>(it - tileTable_->begin());
  }
  if (absoluteTile < tileBase_ || absoluteTile - tileBase_ >= numTiles_)
    return -1;
  return static_cast<int>(absoluteTile - tileBase_);
}

// ---- virtual graphs ----------------------------------------------------------

Graph Graph::createVirtualGraph(unsigned lowerTile, unsigned upperTile) {
  const Target &parent = getTarget();
  if (lowerTile >= upperTile || upperTile > numTiles_)
    throw invalid_tile_mapping("createVirtualGraph: tile range [" + std::to_string(lowerTile) + ", " +
                               std::to_string(upperTile) + ") is empty or beyond the " +
                               std::to_string(numTiles_) + " tiles of the graph");
  TargetData t = parent.getImpl();
  const unsigned tilesPerIPU = t.tilesPerIPU;
  const unsigned range = upperTile - lowerTile;
  if (lowerTile % tilesPerIPU == 0 && range % tilesPerIPU == 0) {
    t.numIPUs = range / tilesPerIPU;
  } else {
    t.numIPUs = 1;
    t.tilesPerIPU = range;
  }
  std::shared_ptr<const std::vector<unsigned>> table;
  if (tileTable_)
    table = std::make_shared<const std::vector<unsigned>>(tileTable_->begin() + lowerTile,
                                                          tileTable_->begin() + upperTile);
  return Graph(data_, tileTable_ ? 0 : tileBase_ + lowerTile, Target(t), std::move(table));
}

Graph Graph::createVirtualGraph(unsigned numTilesPerIPU) {
  const Target &parent = getTarget();
  const unsigned tilesPerIPU = parent.getTilesPerIPU();
  if (numTilesPerIPU == 0 || numTilesPerIPU > tilesPerIPU)
    throw invalid_tile_mapping("createVirtualGraph: " + std::to_string(numTilesPerIPU) +
                               " tiles per IPU requested but the graph has " + std::to_string(tilesPerIPU));
  if (parent.getNumIPUs() == 1)
    return createVirtualGraph(0, numTilesPerIPU);
  std::vector<unsigned> tiles(numTilesPerIPU);
  std::iota(tiles.begin(), tiles.end(), 0u);
  return createVirtualGraph(tiles);
}

Graph Graph::createVirtualGraph(const std::vector<unsigned> &perIpuTiles) {
  const Target &parent = getTarget();
  const unsigned tilesPerIPU = parent.getTilesPerIPU();
  if (perIpuTiles.empty())
    throw invalid_tile_mapping("createVirtualGraph: the list of tiles per IPU is empty");
  std::vector<bool> seen(tilesPerIPU, false);
  for (unsigned tile : perIpuTiles) {
    if (tile >= tilesPerIPU)
      throw invalid_tile_mapping("createVirtualGraph: tile " + std::to_string(tile) + " is beyond the " +
                                 std::to_string(tilesPerIPU) + " tiles per IPU of the graph");
    if (seen[tile])
      throw invalid_tile_mapping("createVirtualGraph: tile " + std::to_string(tile) + " is listed twice");
    seen[tile] = true;
  }
  auto table = std::make_shared<std::vector<unsigned>>();
  for (unsigned ipu = 0; ipu < parent.getNumIPUs(); ++ipu)
    for (unsigned tile : perIpuTiles)
      table->push_back(toAbsoluteTile(ipu * tilesPerIPU + tile));
  TargetData t = parent.getImpl();
  t.tilesPerIPU = static_cast<unsigned>(perIpuTiles.size());
  return Graph(data_, 0, Target(t), std::move(table));
}

Graph Graph::getTopLevelGraph() {
  if (!data_)
    throw poplar_error("getTopLevelGraph() called on an empty Graph");
  return Graph(data_, 0, Target(topLevelTargetData(*data_)), nullptr);
}

// ---- variables -----------------------------------------------------------------

namespace {

VarId appendVariable(GraphData &data, const Type &type, ArrayRef<std::size_t> shape, const std::string &name,
                     bool isConstant) {
  if (!type.valid())
    throw type_error("Cannot create '" + name + "': invalid element type");
  if (data.variables.size() >= std::numeric_limits<VarId>::max())
    throw tensor_creation_error("Cannot create '" + name + "': too many variables in the graph");
  Variable v;
  v.type = type;
  v.numElements = shapeProduct(shape, type, name);
  v.isConstant = isConstant;
  v.name = name;
  v.shape.assign(shape.begin(), shape.end());
  data.variables.push_back(std::move(v));
  return static_cast<VarId>(data.variables.size() - 1);
}

void mapVariableLinearly(const Graph &graph, GraphData &data, VarId var, std::uint64_t minElementsPerTile,
                         std::uint64_t grainSize) {
  Variable &v = data.variables[var];
  const Target &target = graph.getTarget();
  // Poplar's own linear mapping (addVariable(LINEAR), addLinearlyMappedVariable
  // without a minimum or grain) spreads by single elements with no minimum per
  // tile, unlike poputil::mapTensorLinearly's 128 bytes a tile: PopLibs' tests,
  // written against Poplar, count one vertex per tile for 10 floats or 12 long
  // longs on 4 tiles (docs/poplibs-from-source.md, session 24).
  if (grainSize == 0)
    grainSize = 1;
  if (minElementsPerTile == 0)
    minElementsPerTile = 1;
  const auto chunks =
      aspen::util::linearMappingChunks(v.numElements, target.getNumTiles(), minElementsPerTile, grainSize);
  v.mapping.clear();
  v.mapping.reserve(chunks.size());
  for (const auto &c : chunks)
    v.mapping.push_back(TileInterval{c.begin, c.end, graph.toAbsoluteTile(c.tile)});
}

} // namespace

Tensor Graph::addVariable(const Type &type, ArrayRef<std::size_t> shape, const DebugContext &debugContext) {
  return addVariable(type, shape, VariableMappingMethod::NONE, debugContext);
}

Tensor Graph::addVariable(const Type &type, ArrayRef<std::size_t> shape, VariableMappingMethod mappingMethod,
                          const DebugContext &debugContext) {
  return addVariableImpl(type, nullptr, shape, mappingMethod, debugContext);
}

Tensor Graph::addVariableImpl(const Type &type, const Tensor *metadata, ArrayRef<std::size_t> shape,
                              VariableMappingMethod mappingMethod, const DebugContext &debugContext) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addVariableImpl");
  if (metadata)
    aspen::ir::checkQuarterMetadata(*data_, type, *metadata, debugContext.getPathName());
  const VarId var = appendVariable(*data_, type, shape, debugContext.getPathName(), false);
  data_->variables[var].debugId = data_->noteDebugContext(debugContext);
  if (mappingMethod == VariableMappingMethod::LINEAR)
    mapVariableLinearly(*this, *data_, var, 0, 0);
  aspen::ir::attachQuarterMetadata(*this, *data_, var, metadata);
  return aspen::ir::makeVariableTensor(data_, var, type, shape.vec());
}

Tensor Graph::addLinearlyMappedVariable(const Type &type, ArrayRef<std::size_t> shape,
                                        const DebugContext &debugContext) {
  return addVariable(type, shape, VariableMappingMethod::LINEAR, debugContext);
}

Tensor Graph::addLinearlyMappedVariable(const Type &type, ArrayRef<std::size_t> shape,
                                        unsigned minElementsPerTile, unsigned grainSize,
                                        const DebugContext &debugContext) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addLinearlyMappedVariable");
  const VarId var = appendVariable(*data_, type, shape, debugContext.getPathName(), false);
  data_->variables[var].debugId = data_->noteDebugContext(debugContext);
  mapVariableLinearly(*this, *data_, var, minElementsPerTile, grainSize);
  aspen::ir::attachQuarterMetadata(*this, *data_, var, nullptr);
  return aspen::ir::makeVariableTensor(data_, var, type, shape.vec());
}

// ---- constants and initial values ------------------------------------------------

Tensor Graph::addConstantFromHost(const Type &type, ArrayRef<std::size_t> shape, const Type &hostType,
                                  const void *values, std::size_t count, bool splat, const DebugContext &dc) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addConstantFromHost");
  const std::string &name = dc.getPathName();
  if (!type.valid())
    throw type_error("Cannot create constant '" + name + "': invalid element type");
  if (type.requiresMetadata())
    throw tensor_creation_error("Cannot create constant '" + name + "' of type " + type.toString().str() +
                                " without metadata: use addConstant(type, metadata, shape, values)");
  const std::uint64_t n = shapeProduct(shape, type, name);
  if (count == ~std::size_t(0))
    count = n; // pointer form: the shape says how many values there are
  if (!splat && count != n)
    throw tensor_creation_error("Constant '" + name + "' of shape " + aspen::ir::shapeString(shape.vec()) +
                                " needs " + std::to_string(n) + " values but " + std::to_string(count) +
                                " were given");
  if (n > 0 && values == nullptr)
    throw tensor_creation_error("Constant '" + name + "': no values given (null pointer)");
  const std::size_t elementSize = type.size();
  std::vector<std::uint8_t> bytes = hostBytes(n * elementSize, "constant '" + name + "'");
  if (n > 0) {
    if (splat) {
      aspen::util::convertHostToDevice(hostType, values, type, bytes.data(), 1);
      for (std::uint64_t filled = 1; filled < n;) {
        const std::uint64_t chunk = std::min(filled, n - filled);
        std::memcpy(bytes.data() + filled * elementSize, bytes.data(), chunk * elementSize);
        filled += chunk;
      }
    } else {
      aspen::util::convertHostToDevice(hostType, values, type, bytes.data(), n);
    }
  }
  const VarId var = appendVariable(*data_, type, shape, name, true);
  data_->variables[var].debugId = data_->noteDebugContext(dc);
  data_->initialValues[var] = std::move(bytes);
  return aspen::ir::makeVariableTensor(data_, var, type, shape.vec());
}

Tensor Graph::addConstantHalf(const Type &type, ArrayRef<std::size_t> shape, uint16_t value,
                              const DebugContext &debugContext) {
  return addConstantFromHost(type, shape, HALF, &value, 1, true, debugContext);
}

Tensor Graph::addConstantHalf(const Type &type, ArrayRef<std::size_t> shape, const uint16_t *values,
                              const DebugContext &debugContext) {
  return addConstantFromHost(type, shape, HALF, values, ~std::size_t(0), false, debugContext);
}

Tensor Graph::addReplicationIndexConstant(const DebugContext &debugContext) {
  // Compiled as 0; each replica's loader writes its own index there.
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addReplicationIndexConstant");
  const unsigned index = 0;
  DebugContext dc = debugContext.getPathName().empty() ? DebugContext("replicationIndex") : debugContext;
  Tensor t = addConstantFromHost(UNSIGNED_INT, {}, UNSIGNED_INT, &index, 1, true, dc);
  data_->replicationIndexVars.push_back(t.getImpl().segments->front().var);
  return t;
}

void Graph::setInitialValueFromHost(const Tensor &t, const Type &hostType, const void *values,
                                    std::size_t count, bool splat) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::setInitialValueFromHost");
  requireTensorOf<tensor_creation_error>(data_.get(), t, "setInitialValue");
  const TensorView &view = t.getImpl();
  for (const Segment &s : *view.segments)
    if (data_->variables[s.var].isConstant)
      throw tensor_creation_error("setInitialValue: tensor " + t.shortString() +
                                  " is (part of) a constant; constants take their value from addConstant");
  const std::uint64_t n = view.numElements();
  if (!splat && count != n)
    throw tensor_creation_error("setInitialValue: tensor " + t.shortString() + " has " + std::to_string(n) +
                                " elements but " + std::to_string(count) + " values were given");
  if (n == 0)
    return;
  if (!values)
    throw tensor_creation_error("setInitialValue: no values given for tensor " + t.shortString() +
                                " (null pointer)");
  const std::size_t elementSize = view.elementType.size();
  std::vector<std::uint8_t> bytes =
      hostBytes(splat ? elementSize : n * elementSize, "tensor " + t.shortString());
  aspen::util::convertHostToDevice(hostType, values, view.elementType, bytes.data(), splat ? 1 : n);
  std::uint64_t pos = 0;
  for (const Segment &s : *view.segments) {
    const Variable &var = data_->variables[s.var];
    const std::size_t varBytes = var.numElements * var.type.size();
    auto existing = data_->initialValues.find(s.var);
    if (existing == data_->initialValues.end())
      existing = data_->initialValues.emplace(s.var, hostBytes(varBytes, "tensor " + t.shortString())).first;
    auto &init = existing->second;
    ASPEN_ASSERT(init.size() == varBytes, "an initial value of the wrong size");
    for (std::uint64_t k = 0; k < s.count; ++k) {
      const std::uint64_t offset =
          static_cast<std::uint64_t>(s.start + static_cast<std::int64_t>(k) * s.stride) * elementSize;
      ASPEN_ASSERT(offset + elementSize <= varBytes, "initial value beyond the variable");
      if (s.stride == 1 && !splat) {
        // A contiguous run: one copy for the rest of the segment.
        std::memcpy(init.data() + offset, bytes.data() + (pos + k) * elementSize,
                    (s.count - k) * elementSize);
        break;
      }
      std::memcpy(init.data() + offset, bytes.data() + (splat ? 0 : (pos + k) * elementSize), elementSize);
    }
    pos += s.count;
  }
}

void Graph::setInitialValueHalf(const Tensor &t, ArrayRef<uint16_t> values) {
  setInitialValueFromHost(t, HALF, values.data(), values.size(), false);
}

bool Graph::isConstant(const Tensor &t) const {
  if (!data_ || !t.valid() || t.getImpl().segments->empty())
    return false;
  for (const Segment &s : *t.getImpl().segments)
    if (s.var >= data_->variables.size() || !data_->variables[s.var].isConstant)
      return false;
  return true;
}

Tensor Graph::findUnbroadcastTensor(const Tensor &t) const {
  return t;
}

// ---- clones ------------------------------------------------------------------------

namespace {

/// A new variable of `type` shaped like `t` (with a leading dimension of
/// `copies` when `copies` is set), mapped like `t` in each copy.
Tensor cloneVariable(const std::shared_ptr<GraphData> &data, const Type &type, const Tensor &t,
                     std::optional<std::size_t> copies, const DebugContext &debugContext) {
  requireTensorOf<tensor_creation_error>(data.get(), t, "clone");
  const TensorView &view = t.getImpl();
  std::string name = debugContext.getPathName();
  if (name.empty() && !view.segments->empty())
    name = data->variables[view.segments->front().var].name; // named after what it clones
  std::vector<std::size_t> shape = view.shape;
  if (copies)
    shape.insert(shape.begin(), *copies);
  const VarId var = appendVariable(*data, type, shape, name, false);
  data->variables[var].debugId = data->noteDebugContext(debugContext);
  const auto runs = tileRunsOfView(*data, view);
  const std::uint64_t n = view.numElements();
  auto &mapping = data->variables[var].mapping;
  for (std::size_t copy = 0; copy < (copies ? *copies : 1); ++copy) {
    const std::uint64_t offset = copy * n;
    for (const TileRun &r : runs) {
      if (r.tile < 0)
        continue;
      const auto tile = static_cast<std::uint32_t>(r.tile);
      if (!mapping.empty() && mapping.back().end == r.begin + offset && mapping.back().tile == tile)
        mapping.back().end = r.end + offset;
      else
        mapping.push_back(TileInterval{r.begin + offset, r.end + offset, tile});
    }
  }
  return aspen::ir::makeVariableTensor(data, var, type, std::move(shape));
}

/// For the clone methods that keep aliases: where positions of `flat` hold the
/// same element, the clone's do too. Returns, in `distinct`, `flat`'s positions
/// where an element first appears (in position order: the variable to clone),
/// and in `pieces` every position interval with the `distinct` index of its
/// first element; empty `pieces` when `flat` has no aliases.
struct AliasPiece {
  Interval positions;
  std::size_t distinctBegin;
};
void aliasStructure(const Graph &graph, const Tensor &flat, std::vector<Interval> &distinct,
                    std::vector<AliasPiece> &pieces) {
  std::vector<std::size_t> aliases;
  const auto groups = graph.getSortedContiguousRegions(flat, {{0, flat.numElements()}}, false, &aliases);
  std::vector<std::pair<Interval, std::size_t>> all; // interval, position its first element first appears
  std::size_t k = 0;
  bool any = false;
  for (const auto &group : groups)
    for (const Interval &i : group) {
      all.emplace_back(i, aliases[k]);
      any |= aliases[k] != i.begin();
      ++k;
    }
  if (!any)
    return;
  std::sort(all.begin(), all.end(),
            [](const auto &a, const auto &b) { return a.first.begin() < b.first.begin(); });
  std::vector<std::size_t> distinctStart; // index in the clone of each distinct interval's first element
  std::size_t count = 0;
  for (const auto &[interval, first] : all)
    if (interval.begin() == first) {
      distinct.push_back(interval);
      distinctStart.push_back(count);
      count += interval.size();
    }
  for (const auto &[interval, first] : all) {
    // `first` .. `first + size` are first appearances running on, inside one distinct interval.
    auto it = std::upper_bound(distinct.begin(), distinct.end(), first,
                               [](std::size_t x, const Interval &d) { return x < d.begin(); });
    ASPEN_ASSERT(it != distinct.begin(), "an alias before every first appearance");
    --it;
    ASPEN_ASSERT(first + interval.size() <= it->end(), "an alias across distinct intervals");
    const auto d = static_cast<std::size_t>(it - distinct.begin());
    pieces.push_back(AliasPiece{interval, distinctStart[d] + (first - it->begin())});
  }
}

} // namespace

Tensor Graph::clone(const Tensor &t, const DebugContext &debugContext, TensorCloneMethod method) {
  requireTensorOf<tensor_creation_error>(data_.get(), t, "clone");
  return clone(t.elementType(), t, debugContext, method);
}

Tensor Graph::clone(const Type &type, const Tensor &t, const DebugContext &debugContext,
                    TensorCloneMethod method) {
  // Every clone method gives a new variable in t's row-major order: Aspen lays
  // out each tile's elements in variable order, so there is no other order to keep.
  // The methods that keep aliases make one element per distinct element of t
  // (where it first appears) and view it so that t's aliases alias in the clone.
  getTarget();
  requireTensorOf<tensor_creation_error>(data_.get(), t, "clone");
  std::vector<Interval> distinct;
  std::vector<AliasPiece> pieces;
  if (method == TensorCloneMethod::PRESERVE_ORDER_AND_ALIASES ||
      method == TensorCloneMethod::GATHER_AND_PRESERVE_TILE_ORDER_AND_ALIASES)
    aliasStructure(*this, t.flatten(), distinct, pieces);
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::clone");
  Tensor c;
  if (pieces.empty()) {
    c = cloneVariable(data_, type, t, std::nullopt, debugContext);
  } else {
    const Tensor flat = t.flatten();
    const Tensor firsts =
        cloneVariable(data_, type, concat(flat.slices(distinct)), std::nullopt, debugContext);
    std::vector<Tensor> parts;
    parts.reserve(pieces.size());
    for (const AliasPiece &p : pieces)
      parts.push_back(firsts.slice(p.distinctBegin, p.distinctBegin + p.positions.size()));
    c = concat(parts).reshape(t.shape());
  }
  // A quarter clone of a quarter tensor carries the same metadata; else its own.
  const Tensor metadata = type.requiresMetadata() ? aspen::ir::uniqueMetadataOf(t) : Tensor();
  aspen::ir::attachQuarterMetadata(*this, *data_, static_cast<VarId>(data_->variables.size() - 1),
                                   metadata.valid() ? &metadata : nullptr);
  return c;
}

Tensor Graph::clone(const Type &type, const Tensor &metadata, const Tensor &t,
                    const DebugContext &debugContext, TensorCloneMethod method) {
  if (!metadata.valid() && !type.requiresMetadata()) // getMetadata() of a float tensor: none
    return clone(type, t, debugContext, method);
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::clone");
  aspen::ir::checkQuarterMetadata(*data_, type, metadata, debugContext.getPathName());
  Tensor c = cloneVariable(data_, type, t, std::nullopt, debugContext);
  aspen::ir::attachQuarterMetadata(*this, *data_, static_cast<VarId>(data_->variables.size() - 1), &metadata);
  return c;
}

Tensor Graph::clone(const Tensor &metadata, const Tensor &t, const DebugContext &debugContext,
                    TensorCloneMethod method) {
  requireTensorOf<tensor_creation_error>(data_.get(), t, "clone");
  return clone(t.elementType(), metadata, t, debugContext, method);
}

Tensor Graph::cloneN(const Tensor &t, std::size_t N, const DebugContext &debugContext,
                     TensorCloneMethod method, TensorCloneDuplicationMethod dupMethod) {
  requireTensorOf<tensor_creation_error>(data_.get(), t, "cloneN");
  return cloneN(t.elementType(), t, N, debugContext, method, dupMethod);
}

Tensor Graph::cloneN(const Type &type, const Tensor &t, std::size_t N, const DebugContext &debugContext,
                     TensorCloneMethod, TensorCloneDuplicationMethod) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::cloneN");
  requireTensorOf<tensor_creation_error>(data_.get(), t, "cloneN");
  Tensor c = cloneVariable(data_, type, t, N, debugContext);
  const Tensor metadata = type.requiresMetadata() ? aspen::ir::uniqueMetadataOf(t) : Tensor();
  aspen::ir::attachQuarterMetadata(*this, *data_, static_cast<VarId>(data_->variables.size() - 1),
                                   metadata.valid() ? &metadata : nullptr);
  return c;
}

// ---- tile mapping --------------------------------------------------------------------

void Graph::setTileMapping(const Tensor &t, unsigned tileNum) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::setTileMapping");
  requireTensorOf<invalid_tile_mapping>(data_.get(), t, "setTileMapping");
  if (tileNum >= numTiles_)
    throw invalid_tile_mapping("Cannot map tensor " + t.shortString() + " to tile " +
                               std::to_string(tileNum) + ": the graph has " + std::to_string(numTiles_) +
                               " tiles (0.." + std::to_string(numTiles_ - 1) + ")");
  const std::uint32_t tile = toAbsoluteTile(tileNum);
  const auto regions = aspen::ir::toVariableRegions(*data_, t.getImpl());
  auto &variables = data_->variables;
  if (regions.size() == 1) {
    const VarRegion &r = regions.front();
    overlayInPlace(variables[r.var].mapping, {TileInterval{r.begin, r.end, tile}});
    return;
  }
  std::vector<MappingRequest> requests;
  requests.reserve(regions.size());
  for (std::size_t i = 0; i < regions.size(); ++i)
    requests.push_back(MappingRequest{regions[i].var, regions[i].begin, regions[i].end, tile, i});
  applyMappingRequests(*data_, std::move(requests));
}

void Graph::setTileMapping(const Tensor &t, const TileToTensorMapping &mapping) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::setTileMapping");
  requireTensorOf<invalid_tile_mapping>(data_.get(), t, "setTileMapping");
  const TensorView &view = t.getImpl();
  const std::uint64_t n = view.numElements();
  struct Piece {
    std::uint64_t begin, end;
    std::uint32_t tile;
  };
  std::vector<Piece> pieces;
  for (std::size_t tile = 0; tile < mapping.size(); ++tile) {
    for (const Interval &interval : mapping[tile]) {
      if (interval.size() == 0)
        continue;
      if (tile >= numTiles_)
        throw invalid_tile_mapping("Cannot map tensor " + t.shortString() + " to tile " +
                                   std::to_string(tile) + ": the graph has " + std::to_string(numTiles_) +
                                   " tiles");
      if (interval.end() > n || interval.begin() > interval.end())
        throw invalid_tile_mapping("Cannot map tensor " + t.shortString() + ": interval [" +
                                   std::to_string(interval.begin()) + ", " + std::to_string(interval.end()) +
                                   ") for tile " + std::to_string(tile) + " is beyond its " +
                                   std::to_string(n) + " elements");
      pieces.push_back(Piece{interval.begin(), interval.end(), toAbsoluteTile(static_cast<unsigned>(tile))});
    }
  }
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece &a, const Piece &b) { return a.begin < b.begin; });
  const auto &segments = *view.segments;
  const auto starts = segmentStartPositions(segments);
  std::vector<MappingRequest> requests;
  std::uint64_t order = 0;
  for (const Piece &piece : pieces) {
    for (const VarRegion &r :
         regionsOfSegments(*data_, view, segmentsInRange(segments, starts, piece.begin, piece.end)))
      requests.push_back(MappingRequest{r.var, r.begin, r.end, piece.tile, order++});
  }
  applyMappingRequests(*data_, std::move(requests));
}

TileToTensorMapping Graph::getTileMapping(const Tensor &t, bool *isComplete) const {
  getTarget();
  requireTensorOf<invalid_tile_mapping>(data_.get(), t, "getTileMapping");
  TileToTensorMapping result(numTiles_);
  std::vector<int> relativeOf;
  if (tileTable_) {
    relativeOf.assign(data_->target.numTiles(), -1);
    for (std::size_t i = 0; i < tileTable_->size(); ++i)
      relativeOf[(*tileTable_)[i]] = static_cast<int>(i);
  }
  bool complete = true;
  for (const TileRun &run : tileRunsOfView(*data_, t.getImpl())) {
    int rel = -1;
    if (run.tile >= 0) {
      const auto abs = static_cast<unsigned>(run.tile);
      if (tileTable_)
        rel = abs < relativeOf.size() ? relativeOf[abs] : -1;
      else if (abs >= tileBase_ && abs - tileBase_ < numTiles_)
        rel = static_cast<int>(abs - tileBase_);
    }
    if (rel < 0) {
      complete = false;
      continue;
    }
    auto &intervals = result[static_cast<std::size_t>(rel)];
    if (!intervals.empty() && intervals.back().end() == run.begin)
      intervals.back() = Interval(intervals.back().begin(), run.end);
    else
      intervals.emplace_back(run.begin, run.end);
  }
  if (isComplete)
    *isComplete = complete;
  return result;
}

TileToTensorMapping Graph::getTileMapping(const Tensor &t, bool requireComplete) const {
  bool complete = true;
  auto result = getTileMapping(t, &complete);
  if (requireComplete && !complete) {
    // Find the first element without a tile of this graph, for the message.
    std::uint64_t covered = 0;
    std::vector<Interval> all;
    for (const auto &intervals : result)
      all.insert(all.end(), intervals.begin(), intervals.end());
    std::sort(all.begin(), all.end());
    for (const Interval &i : all) {
      if (i.begin() != covered)
        break;
      covered = i.end();
    }
    throw invalid_tile_mapping("Tensor " + t.shortString() +
                               " is not completely mapped to tiles of this graph (" + "element " +
                               std::to_string(covered) + " has no tile)");
  }
  return result;
}

TileToTensorMapping Graph::getVariableTileMapping(const Tensor &t) const {
  getTarget();
  requireTensorOf<invalid_tile_mapping>(data_.get(), t, "getVariableTileMapping");
  // The mapping of the whole variables t refers to, concatenated in order of
  // first appearance, in element units of each variable.
  std::vector<VarId> vars;
  for (const Segment &s : *t.getImpl().segments)
    if (std::find(vars.begin(), vars.end(), s.var) == vars.end())
      vars.push_back(s.var);
  TileToTensorMapping result(numTiles_);
  std::uint64_t offset = 0;
  for (VarId v : vars) {
    const Variable &var = data_->variables[v];
    for (const TileInterval &i : var.mapping) {
      const int rel = toRelativeTile(i.tile);
      if (rel >= 0)
        result[static_cast<std::size_t>(rel)].emplace_back(i.begin + offset, i.end + offset);
    }
    offset += var.numElements;
  }
  return result;
}

std::vector<std::vector<Interval>>
Graph::getSortedContiguousRegions(const Tensor &t, ArrayRef<Interval> regions, bool removeAliasedIntervals,
                                  std::vector<std::size_t> *aliases) const {
  getTarget();
  requireTensorOf<index_error>(data_.get(), t, "getSortedContiguousRegions");
  const TensorView &view = t.getImpl();
  const auto &segments = *view.segments;
  const auto starts = segmentStartPositions(segments);
  const std::uint64_t n = view.numElements();
  // Each piece: `len` consecutive elements of variable `var` from `varBegin`,
  // at tensor positions from `pos`.
  struct Piece {
    VarId var;
    std::int64_t varBegin;
    std::uint64_t len, pos;
  };
  std::vector<Piece> pieces;
  for (const Interval &region : regions) {
    if (region.end() > n)
      throw index_error("getSortedContiguousRegions: region [" + std::to_string(region.begin()) + ", " +
                        std::to_string(region.end()) + ") is beyond the " + std::to_string(n) +
                        " elements of tensor " + t.shortString());
    std::uint64_t pos = region.begin();
    for (const Segment &s : segmentsInRange(segments, starts, region.begin(), region.end())) {
      if (s.stride == 1) {
        pieces.push_back(Piece{s.var, s.start, s.count, pos});
      } else {
        for (std::uint64_t k = 0; k < s.count; ++k)
          pieces.push_back(Piece{s.var, s.start + static_cast<std::int64_t>(k) * s.stride, 1, pos + k});
      }
      pos += s.count;
    }
  }
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece &a, const Piece &b) {
    return a.var != b.var ? a.var < b.var : a.varBegin < b.varBegin;
  });
  if (aliases)
    aliases->clear();
  // For `aliases`: the elements of the current variable covered so far, as disjoint runs in
  // ascending order, each with the tensor position of its first element in the earliest
  // interval that covers it (pieces come sorted by element, then by tensor position). The
  // part of a piece at or past its start that earlier pieces cover is one range ending at
  // covered.back().end, since every earlier piece starts at or before it.
  struct Cover {
    std::int64_t begin, end;
    std::uint64_t pos;
  };
  std::vector<Cover> covered;
  // A piece split where its elements' first positions stop running on (only with `aliases`).
  struct Part {
    std::uint64_t pos, len, alias;
  };
  std::vector<Part> parts;
  const auto splitByFirstPosition = [&covered, &parts](const Piece &p) {
    parts.clear();
    std::int64_t e = p.varBegin;
    const std::int64_t end = p.varBegin + static_cast<std::int64_t>(p.len);
    auto it = std::upper_bound(covered.begin(), covered.end(), e,
                               [](std::int64_t x, const Cover &c) { return x < c.begin; });
    if (it != covered.begin())
      --it;
    for (; it != covered.end() && e < end; ++it) {
      if (e < it->begin || e >= it->end)
        continue;
      const std::int64_t stop = std::min(end, it->end);
      parts.push_back(Part{p.pos + static_cast<std::uint64_t>(e - p.varBegin),
                           static_cast<std::uint64_t>(stop - e),
                           it->pos + static_cast<std::uint64_t>(e - it->begin)});
      e = stop;
    }
    if (e < end) { // first appearances: each element is its own first position
      const std::uint64_t pos = p.pos + static_cast<std::uint64_t>(e - p.varBegin);
      parts.push_back(Part{pos, static_cast<std::uint64_t>(end - e), pos});
    }
  };
  std::vector<std::vector<Interval>> result;
  bool haveLast = false;
  VarId lastVar = 0;
  std::int64_t lastEnd = 0;
  std::uint64_t lastAliasEnd = 0; // with `aliases`: the last interval's entry + its length
  for (Piece p : pieces) {
    if (aliases && (!haveLast || p.var != lastVar))
      covered.clear();
    if (removeAliasedIntervals && haveLast && p.var == lastVar && p.varBegin < lastEnd) {
      // Drop the elements already covered by an earlier piece.
      const auto covered = static_cast<std::uint64_t>(lastEnd - p.varBegin);
      if (covered >= p.len)
        continue;
      p.varBegin += static_cast<std::int64_t>(covered);
      p.pos += covered;
      p.len -= covered;
    }
    const bool continues = haveLast && p.var == lastVar && p.varBegin == lastEnd;
    if (!continues)
      result.emplace_back();
    auto &group = result.back();
    if (!aliases) {
      if (!group.empty() && group.back().end() == p.pos)
        group.back() = Interval(group.back().begin(), p.pos + p.len);
      else
        group.emplace_back(p.pos, p.pos + p.len);
    } else {
      // One entry per interval: the tensor position where the element it begins with first
      // appears (its own start unless an earlier interval holds the same element), and its
      // k-th element first appears at entry + k, as PopLibs reads it: an interval whose
      // lower() differs from its entry aliases an earlier one (poputil), and the entries
      // number the underlying elements (popops' broadcast analysis). So an interval is cut
      // where the first positions of its elements stop running on.
      splitByFirstPosition(p);
      for (const Part &part : parts) {
        if (!group.empty() && group.back().end() == part.pos && lastAliasEnd == part.alias) {
          group.back() = Interval(group.back().begin(), part.pos + part.len);
        } else {
          group.emplace_back(part.pos, part.pos + part.len);
          aliases->push_back(part.alias);
        }
        lastAliasEnd = part.alias + part.len;
      }
      const std::int64_t pieceEnd = p.varBegin + static_cast<std::int64_t>(p.len);
      const std::int64_t from = covered.empty() ? p.varBegin : std::max(p.varBegin, covered.back().end);
      if (from < pieceEnd)
        covered.push_back(Cover{from, pieceEnd, p.pos + static_cast<std::uint64_t>(from - p.varBegin)});
    }
    lastEnd = std::max(haveLast && p.var == lastVar ? lastEnd : std::numeric_limits<std::int64_t>::min(),
                       p.varBegin + static_cast<std::int64_t>(p.len));
    lastVar = p.var;
    haveLast = true;
  }
  return result;
}

void Graph::reorderToSimplify(Tensor *, ArrayRef<Tensor *>, bool) const {
  // Aspen keeps every view in its given order; there is nothing to simplify.
}

// ---- host transfer ------------------------------------------------------------------

namespace {
void createHostHandle(GraphData &data, StringRef handle, const Tensor &t, bool isWrite) {
  const char *what = isWrite ? "createHostWrite" : "createHostRead";
  requireTensorOf<graph_object_creation_error>(&data, t, std::string(what) + " '" + handle.str() + "'");
  for (const auto &h : data.hostHandles)
    if (h.isWrite == isWrite && h.name == handle.str())
      throw graph_object_creation_error(std::string(what) + ": handle '" + handle.str() +
                                        "' already exists (for tensor " + h.tensor.shortString() + ")");
  data.hostHandles.push_back(aspen::ir::HostHandle{handle.str(), t, isWrite});
  // Engine::writeTensor/readTensor with a QuarterMetadata (docs/fp8.md).
  const Tensor metadata = aspen::ir::uniqueMetadataOf(t);
  if (metadata.valid())
    data.hostHandles.push_back(
        aspen::ir::HostHandle{aspen::ir::metadataHandleName(handle.str()), metadata, isWrite});
}
} // namespace

void Graph::createHostWrite(StringRef handle, const Tensor &t, bool) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::createHostWrite");
  createHostHandle(*data_, handle, t, true);
}

void Graph::createHostRead(StringRef handle, const Tensor &t, bool) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::createHostRead");
  createHostHandle(*data_, handle, t, false);
}

namespace {
DataStream addStream(GraphData &data, StringRef handle, const Type &elementType, std::size_t numElements,
                     bool hostToDevice, ReplicatedStreamMode mode) {
  const char *what = hostToDevice ? "addHostToDeviceFIFO" : "addDeviceToHostFIFO";
  if (!elementType.valid())
    throw type_error(std::string(what) + ": stream '" + handle.str() + "' has an invalid element type");
  if (!aspen::ir::checkedElementCount({numElements}, elementType.size()))
    throw graph_object_creation_error(std::string(what) + ": stream '" + handle.str() + "' of " +
                                      std::to_string(numElements) + " elements is too large");
  for (const auto &s : data.streams)
    if (s.handle == handle.str())
      throw graph_object_creation_error(std::string(what) + ": a stream with handle '" + handle.str() +
                                        "' already exists");
  data.streams.push_back(aspen::ir::StreamRecord{handle.str(), elementType, numElements, hostToDevice, mode});
  return DataStream(static_cast<unsigned>(data.streams.size() - 1), handle, elementType, numElements,
                    hostToDevice ? DataStream::Direction::HostToDevice : DataStream::Direction::DeviceToHost);
}
} // namespace

DataStream Graph::addHostToDeviceFIFO(StringRef handle, const Type &elementType, std::size_t numElements,
                                      ReplicatedStreamMode replicatedMode, const OptionFlags &) {
  // Stream options (buffering depth, split limits) tune real host links; accepted and ignored.
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addHostToDeviceFIFO");
  return addStream(*data_, handle, elementType, numElements, true, replicatedMode);
}

DataStream Graph::addDeviceToHostFIFO(StringRef handle, const Type &elementType, std::size_t numElements,
                                      const OptionFlags &) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addDeviceToHostFIFO");
  return addStream(*data_, handle, elementType, numElements, false, ReplicatedStreamMode::REPLICATE);
}

RemoteBuffer Graph::addRemoteBuffer(StringRef handle, const Type &elementType, std::size_t numElements,
                                    std::size_t repeats, bool, bool) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addRemoteBuffer");
  if (!elementType.valid())
    throw type_error("addRemoteBuffer: remote buffer '" + handle.str() + "' has an invalid element type");
  if (repeats == 0)
    throw graph_object_creation_error("addRemoteBuffer: remote buffer '" + handle.str() +
                                      "' must have at least one repeat");
  if (!aspen::ir::checkedElementCount({numElements, repeats}, elementType.size()))
    throw graph_object_creation_error("addRemoteBuffer: remote buffer '" + handle.str() + "' of " +
                                      std::to_string(repeats) + " x " + std::to_string(numElements) +
                                      " elements is too large");
  for (const auto &rb : data_->remoteBuffers)
    if (rb.handle == handle.str())
      throw graph_object_creation_error("addRemoteBuffer: a remote buffer with handle '" + handle.str() +
                                        "' already exists");
  data_->remoteBuffers.push_back(
      aspen::ir::RemoteBufferRecord{handle.str(), elementType, numElements, repeats});
  return RemoteBuffer(static_cast<unsigned>(data_->remoteBuffers.size() - 1), handle, elementType,
                      numElements, repeats);
}

Function Graph::addFunction(const program::Program &program) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addFunction");
  auto node = program.getImpl();
  if (!node)
    node = std::make_shared<ProgramNode>(); // an empty Sequence
  data_->functions.push_back(std::move(node));
  return Function(static_cast<unsigned>(data_->functions.size() - 1));
}

ComputeSet Graph::addComputeSet(const DebugContext &debugContext) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addComputeSet");
  aspen::ir::ComputeSetRecord cs;
  cs.name = debugContext.getPathName();
  cs.debugId = data_->noteDebugContext(debugContext);
  data_->computeSets.push_back(std::move(cs));
  return ComputeSet(static_cast<unsigned>(data_->computeSets.size() - 1));
}

// ---- debug output ----------------------------------------------------------------------

namespace {

void dumpProgram(std::ostream &os, const GraphData &data, const ProgramNode &node, unsigned depth) {
  using K = aspen::ir::ProgramKind;
  const std::string indent(2 * depth + 2, ' ');
  os << indent << aspen::ir::programKindName(node.kind);
  if (!node.debugName.empty())
    os << " '" << node.debugName << "'";
  switch (node.kind) {
  case K::Execute:
    os << " compute set " << node.computeSet;
    if (node.computeSet < data.computeSets.size())
      os << " '" << data.computeSets[node.computeSet].name << "'";
    break;
  case K::Copy:
    os << " " << node.src.shortString() << " -> " << node.dst.shortString();
    break;
  case K::StreamToTensor:
    if (node.stream < data.streams.size())
      os << " stream '" << data.streams[node.stream].handle << "'";
    os << " -> " << node.dst.shortString();
    break;
  case K::TensorToStream:
    os << " " << node.src.shortString() << " -> ";
    if (node.stream < data.streams.size())
      os << "stream '" << data.streams[node.stream].handle << "'";
    break;
  case K::RemoteToTensor:
  case K::TensorToRemote:
    if (node.remoteBuffer < data.remoteBuffers.size())
      os << " remote buffer '" << data.remoteBuffers[node.remoteBuffer].handle << "'";
    os << " " << (node.kind == K::RemoteToTensor ? node.dst : node.src).shortString();
    break;
  case K::Repeat:
    os << " x" << node.count;
    break;
  case K::RepeatWhileTrue:
  case K::RepeatWhileFalse:
  case K::If:
  case K::Switch:
  case K::AbortOnCondition:
    os << " on " << node.predicate.shortString();
    break;
  case K::Call:
    os << " function " << node.function;
    break;
  case K::WriteUndef:
    os << " " << node.dst.shortString();
    break;
  case K::PrintTensor:
    os << " " << node.src.shortString();
    break;
  case K::Sync:
    os << (node.syncType == SyncType::INTERNAL   ? " INTERNAL"
           : node.syncType == SyncType::EXTERNAL ? " EXTERNAL"
                                                 : " GLOBAL");
    break;
  default:
    break;
  }
  if (!node.message.empty())
    os << " \"" << node.message << "\"";
  os << "\n";
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    if (node.kind == K::Switch) {
      if (i < node.caseValues.size())
        os << indent << "  case " << node.caseValues[i] << ":\n";
      else
        os << indent << "  default:\n";
    }
    if (node.children[i])
      dumpProgram(os, data, *node.children[i], depth + (node.kind == K::Switch ? 2 : 1));
  }
}

void dumpPrograms(std::ostream &os, const GraphData &data, ArrayRef<program::Program> progs) {
  for (std::size_t f = 0; f < data.functions.size(); ++f) {
    os << "Function " << f << ":\n";
    if (data.functions[f])
      dumpProgram(os, data, *data.functions[f], 0);
  }
  for (std::size_t p = 0; p < progs.size(); ++p) {
    os << "Program " << p << ":\n";
    if (progs[p].getImpl())
      dumpProgram(os, data, *progs[p].getImpl(), 0);
    else
      os << "  (empty)\n";
  }
}

} // namespace

void Graph::outputComputeGraph(std::ostream &os, ArrayRef<program::Program> progs) const {
  const Target &target = getTarget();
  const GraphData &data = *data_;
  os << "Graph: " << toString(target.getTargetType()) << " " << target.getTargetArchString() << ", "
     << target.getNumIPUs() << " IPU(s) x " << target.getTilesPerIPU() << " tiles, replication factor "
     << data.replicationFactor << "\n";
  os << "Variables: " << data.variables.size() << "\n";
  constexpr std::size_t maxIntervals = 8;
  for (std::size_t v = 0; v < data.variables.size(); ++v) {
    const Variable &var = data.variables[v];
    os << "  " << v << " '" << var.name << "' " << aspen::ir::shapeString(var.shape) << " " << var.type
       << (var.isConstant ? " constant" : "")
       << (data.initialValues.count(static_cast<VarId>(v)) ? " initialised" : "") << ", mapping:";
    if (var.mapping.empty())
      os << " none";
    for (std::size_t i = 0; i < var.mapping.size() && i < maxIntervals; ++i)
      os << " [" << var.mapping[i].begin << "," << var.mapping[i].end << ")@" << var.mapping[i].tile;
    if (var.mapping.size() > maxIntervals)
      os << " ... (" << var.mapping.size() << " intervals)";
    os << "\n";
  }
  os << "Compute sets: " << data.computeSets.size() << "\n";
  for (std::size_t c = 0; c < data.computeSets.size(); ++c)
    os << "  " << c << " '" << data.computeSets[c].name << "': " << data.computeSets[c].vertices.size()
       << " vertices\n";
  os << "Host handles: " << data.hostHandles.size() << "\n";
  for (const auto &h : data.hostHandles)
    os << "  " << (h.isWrite ? "write" : "read") << " '" << h.name << "' " << h.tensor.shortString() << "\n";
  os << "Streams: " << data.streams.size() << "\n";
  for (const auto &s : data.streams)
    os << "  " << (s.hostToDevice ? "host->device" : "device->host") << " '" << s.handle << "' "
       << s.numElements << " x " << s.type << "\n";
  os << "Remote buffers: " << data.remoteBuffers.size() << "\n";
  for (const auto &r : data.remoteBuffers)
    os << "  '" << r.handle << "' " << r.repeats << " x " << r.numElements << " x " << r.type << "\n";
  dumpPrograms(os, data, progs);
}

void Graph::outputVertexGraph(std::ostream &os, ArrayRef<program::Program> progs) const {
  getTarget();
  const GraphData &data = *data_;
  for (std::size_t c = 0; c < data.computeSets.size(); ++c) {
    const auto &cs = data.computeSets[c];
    os << "Compute set " << c << " '" << cs.name << "':\n";
    for (std::uint32_t v : cs.vertices) {
      const auto &vertex = data.vertices[v];
      const auto *type = vertex.type < data.vertexTypes.size() ? &data.vertexTypes[vertex.type] : nullptr;
      os << "  vertex " << v << " " << (type ? type->name : std::string("?")) << " on tile ";
      if (vertex.tile < 0)
        os << "(unmapped)";
      else
        os << vertex.tile;
      os << "\n";
      for (std::size_t f = 0; f < vertex.fields.size(); ++f) {
        const auto &value = vertex.fields[f];
        const std::string fieldName =
            type && f < type->fields.size() ? type->fields[f].name : std::to_string(f);
        os << "    " << fieldName << ":";
        if (!value.set)
          os << " (not set)";
        for (const auto &edge : value.edges())
          os << " "
             << (edge.connected() ? aspen::ir::edgeTensor(data, edge).shortString() : "(not connected)");
        if (value.stateCount)
          os << " " << value.stateCount << " state value(s)";
        os << "\n";
      }
    }
  }
  dumpPrograms(os, data, progs);
}

} // namespace poplar
