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
  const TensorView &view = t.getImpl();
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
  std::vector<std::size_t> shape;
  if (!e.scalarShape)
    shape.push_back(e.count);
  std::weak_ptr<GraphData> owner = std::const_pointer_cast<GraphData>(graph.weak_from_this().lock());
  return makeTensor(std::move(owner), e.elementType, std::move(shape),
                    std::span(e.segments.begin(), e.segments.end()));
}

// ---- field values ----------------------------------------------------------------------

FieldValue::~FieldValue() {
  if (!holdsState_)
    edge_.~Edge();
}

std::span<const Edge> FieldValue::edges() const {
  if (holdsState_)
    return {};
  if (extra_)
    return extra_->list;
  return edge_.connected() ? std::span<const Edge>(&edge_, 1) : std::span<const Edge>();
}

void FieldValue::setEdge(Edge e) {
  ASPEN_ASSERT(!holdsState_ && !extra_, "a scalar or vector edge set on a state or list field");
  edge_ = std::move(e);
}

FieldValue::Extra &FieldValue::extra() {
  if (!extra_)
    extra_ = std::make_unique<Extra>();
  return *extra_;
}

void FieldValue::setListEdge(std::size_t i, Edge e) {
  ASPEN_ASSERT(!holdsState_, "an edge set on a state field");
  auto &list = extra().list;
  if (list.size() <= i)
    list.resize(i + 1);
  list[i] = std::move(e);
}

void FieldValue::setEdgeList(std::vector<Edge> edges) {
  ASPEN_ASSERT(!holdsState_, "edges set on a state field");
  extra().list = std::move(edges);
}

void FieldValue::resizeEdgeList(std::size_t n) {
  ASPEN_ASSERT(!holdsState_, "edges set on a state field");
  extra().list.resize(n);
}

void FieldValue::becomeState() {
  if (holdsState_)
    return;
  ASPEN_ASSERT(!edge_.connected() && !extra_, "state set on an edge field");
  edge_.~Edge();
  holdsState_ = true;
  state_.size = 0;
}

std::span<const std::uint8_t> FieldValue::stateBytes() const {
  if (!holdsState_)
    return {};
  if (extra_)
    return extra_->state;
  return {state_.bytes, state_.size};
}

void FieldValue::setStateBytes(std::span<const std::uint8_t> bytes) {
  becomeState();
  if (bytes.size() <= sizeof(state_.bytes)) {
    extra_.reset();
    std::copy(bytes.begin(), bytes.end(), state_.bytes);
    state_.size = static_cast<std::uint8_t>(bytes.size());
  } else {
    extra().state.assign(bytes.begin(), bytes.end());
  }
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
