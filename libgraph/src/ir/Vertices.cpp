// Copyright (c) Aspen contributors.
#include "ir/Vertices.hpp"

#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/Tensor.hpp"
#include "util/Assert.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace aspen::ir {

// ---- edges ---------------------------------------------------------------------------

Edge Edge::of(const poplar::Tensor &t) {
  return of(t.getImpl());
}

Edge Edge::of(const TensorView &view) {
  const std::size_t n = view.numElements();
  ASPEN_ASSERT(n <= ~std::uint32_t(0), "an edge of 2^32 or more elements");
  Edge e;
  e.segments = view.segments;
  e.count = static_cast<std::uint32_t>(n);
  e.elementType = view.elementType;
  e.scalarShape = view.shape.empty();
  return e;
}

poplar::Tensor edgeTensor(const GraphData &graph, const Edge &e) {
  // Views made by id find their graph only once it is published (every view a
  // graph's API makes publishes it; fp8 metadata lookups need it).
  ASPEN_ASSERT(lockGraph(graph.id()) != nullptr, "edgeTensor of a graph no view has named");
  std::vector<std::size_t> shape;
  if (!e.scalarShape)
    shape.push_back(e.count);
  return makeTensor(graph.id(), e.elementType, std::move(shape),
                    std::span(e.segments.begin(), e.segments.end()));
}

// ---- field values ----------------------------------------------------------------------

void FieldValue::release() {
  switch (holds_) {
  case Holds::Edge:
  case Holds::EdgeList:
  case Holds::State:
    delete extra_;
    break;
  default:
    break;
  }
  holds_ = Holds::Nothing;
}

FieldValue::Extra &FieldValue::extraFor(Holds holds) {
  const bool hasExtra = holds_ == Holds::Edge || holds_ == Holds::EdgeList || holds_ == Holds::State;
  if (!hasExtra) {
    auto *extra = new Extra;
    release();
    extra_ = extra;
  }
  holds_ = holds;
  return *extra_;
}

EdgeRange FieldValue::edges() const {
  switch (holds_) {
  case Holds::PackedEdge:
  case Holds::Edge:
    return {this, 1};
  case Holds::EdgeList:
    return {this, extra_->list.size()};
  default:
    return {this, 0};
  }
}

Edge FieldValue::edgeAt(std::size_t i) const {
  switch (holds_) {
  case Holds::PackedEdge: {
    Edge e;
    if (packed_.count) {
      const Segment one{packed_.var, packed_.start, 1, packed_.count};
      e.segments = SegmentList(&one, &one + 1);
    }
    e.count = packed_.count;
    e.elementType = elementType_;
    e.scalarShape = scalarShape_;
    return e;
  }
  case Holds::Edge:
    return extra_->edge;
  case Holds::EdgeList:
    return extra_->list[i];
  default:
    ASPEN_ASSERT(false, "edge read from a field with none");
    return {};
  }
}

bool FieldValue::tryPack(const SegmentList &segments, poplar::Type elementType, bool scalarShape) {
  const bool packs =
      segments.empty() ||
      (segments.size() == 1 && (segments[0].stride == 1 || segments[0].count == 1) && segments[0].start >= 0);
  if (!packs)
    return false;
  if (holds_ != Holds::Nothing)
    release();
  holds_ = Holds::PackedEdge;
  if (segments.empty()) {
    packed_ = {0, 0, 0};
  } else {
    ASPEN_ASSERT(segments[0].count <= ~std::uint32_t(0), "an edge of 2^32 or more elements");
    packed_ = {segments[0].var, static_cast<std::uint32_t>(segments[0].count), segments[0].start};
  }
  elementType_ = elementType;
  scalarShape_ = scalarShape;
  return true;
}

void FieldValue::setEdge(const Edge &e) {
  ASPEN_ASSERT(e.connected(), "an unconnected edge set");
  if (!tryPack(e.segments, e.elementType, e.scalarShape))
    extraFor(Holds::Edge).edge = e;
}

void FieldValue::setEdge(const TensorView &view, bool vectorField) {
  const bool scalarShape = view.shape.empty() && !vectorField;
  if (tryPack(view.segments, view.elementType, scalarShape))
    return;
  Edge e = Edge::of(view);
  e.scalarShape = scalarShape;
  extraFor(Holds::Edge).edge = std::move(e);
}

void FieldValue::setListEdge(std::size_t i, Edge e) {
  auto &list = extraFor(Holds::EdgeList).list;
  if (list.size() <= i)
    list.resize(i + 1);
  list[i] = std::move(e);
}

void FieldValue::setEdgeList(std::vector<Edge> edges) {
  extraFor(Holds::EdgeList).list = std::move(edges);
}

void FieldValue::resizeEdgeList(std::size_t n) {
  extraFor(Holds::EdgeList).list.resize(n);
}

std::span<const std::uint8_t> FieldValue::stateBytes() const {
  if (holds_ == Holds::PackedState)
    return {state_, stateSize_};
  if (holds_ == Holds::State)
    return extra_->state;
  return {};
}

void FieldValue::setStateBytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() > sizeof(state_)) {
    std::vector<std::uint8_t> copy(bytes.begin(), bytes.end()); // `bytes` may be our own
    extraFor(Holds::State).state = std::move(copy);
    return;
  }
  std::uint8_t copy[sizeof(state_)];
  std::copy(bytes.begin(), bytes.end(), copy);
  release();
  holds_ = Holds::PackedState;
  std::copy_n(copy, bytes.size(), state_);
  stateSize_ = static_cast<std::uint8_t>(bytes.size());
}

void FieldValue::resizeStateBytes(std::size_t n) {
  std::vector<std::uint8_t> bytes(n, 0);
  const auto old = stateBytes();
  std::copy_n(old.begin(), std::min(n, old.size()), bytes.begin());
  setStateBytes(bytes);
}

// ---- the vertex table ---------------------------------------------------------------------

VertexTable::~VertexTable() {
  for (FieldChunk &c : fieldChunks_) {
    std::destroy_n(c.values, c.used);
    std::allocator<FieldValue>().deallocate(c.values, c.capacity);
  }
}

std::span<FieldValue> VertexTable::newFields(std::size_t n) {
  if (n == 0)
    return {};
  if (fieldChunks_.empty() || fieldChunks_.back().used + n > fieldChunks_.back().capacity) {
    // Small graphs start small; a big one settles at kFieldsPerChunk a chunk.
    const std::size_t grown = fieldChunks_.empty() ? 64 : fieldChunks_.back().capacity * 2;
    const std::size_t capacity = std::max(n, std::min(grown, kFieldsPerChunk));
    fieldChunks_.reserve(fieldChunks_.size() + 1);
    fieldChunks_.push_back({std::allocator<FieldValue>().allocate(capacity), 0, capacity});
  }
  FieldChunk &c = fieldChunks_.back();
  FieldValue *first = c.values + c.used;
  for (std::size_t i = 0; i < n; ++i)
    new (first + i) FieldValue();
  c.used += n;
  return {first, n};
}

void VertexTable::setEstimate(std::size_t v, const poplar::VertexPerfEstimate &estimate) {
  ASPEN_ASSERT(v < size_, "an estimate for a vertex that does not exist");
  const std::size_t chunk = v >> kChunkShift;
  if (estimates_.size() <= chunk)
    estimates_.resize(chunk + 1);
  if (!estimates_[chunk])
    estimates_[chunk] = std::make_unique<Estimate[]>(kChunkMask + 1);
  estimates_[chunk][v & kChunkMask] = {estimate, true};
}

std::uint32_t VertexTable::add(std::uint32_t type, std::uint32_t computeSet, std::size_t numFields) {
  if ((size_ & kChunkMask) == 0 && (size_ >> kChunkShift) == chunks_.size())
    chunks_.push_back(std::make_unique_for_overwrite<Vertex[]>(kChunkMask + 1));
  Vertex &v = chunks_[size_ >> kChunkShift][size_ & kChunkMask];
  v.type = type;
  v.computeSet = computeSet;
  v.tile = -1;
  v.fields = newFields(numFields);
  return static_cast<std::uint32_t>(size_++);
}

} // namespace aspen::ir
