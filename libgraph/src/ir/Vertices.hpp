// Copyright (c) Aspen contributors.
// How a graph holds its vertices: a table that never moves what it holds, each
// vertex's field values in one run of a graph-owned arena, and a connected
// tensor held as the segments the compiler reads (packed when it is one run).
//
// A graph has millions of vertices and is built one addVertex at a time, so
// what a vertex costs in bytes is what building it costs (first-touch page
// faults dominated when a vertex held a heap vector of fields and each field a
// heap tensor view). A vertex here is 32 bytes and a field 32, with no
// allocation of their own.
#pragma once

#include "ir/TensorView.hpp"
#include "poplar/PerfEstimateFunc.hpp"
#include "poplar/Type.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

namespace poplar {
class Tensor;
}

namespace aspen::ir {

struct GraphData;

/// A tensor connected to a vertex field (or to one element of a list field),
/// as the compiler reads it: element type, element count and the segments that
/// list its elements in order. A vector field's tensor is held flattened.
struct Edge {
  SegmentList segments;
  std::uint32_t count = 0;  // elements (a field's layout counts them in 32 bits)
  poplar::Type elementType; // invalid: not connected
  bool scalarShape = false; // connected as a rank-0 tensor (for messages)

  bool connected() const { return elementType.valid(); }
  std::uint64_t numElements() const { return count; }
  /// The edge of `t`, which must be valid with fewer than 2^32 elements
  /// (Graph::connect checks both before it gets here).
  static Edge of(const poplar::Tensor &t);
  static Edge of(const TensorView &view);
};
static_assert(sizeof(Edge) == 48, "an Edge is held inline in every field: keep it small");

/// A tensor for messages and for the fp8 metadata lookups: `e` as a view of
/// `graph`'s variables (rank 0 or 1).
poplar::Tensor edgeTensor(const GraphData &graph, const Edge &e);

class FieldValue;

/// A field's edges, read by value: `size()`, `operator[]`, iteration. (A field
/// holds its usual one edge packed; an Edge is made when it is read.)
class EdgeRange {
public:
  EdgeRange(const FieldValue *field, std::size_t size) : field_(field), size_(size) {}
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Edge operator[](std::size_t i) const;
  Edge front() const { return (*this)[0]; }

  class Iterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Edge;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Edge;
    Iterator(const EdgeRange *range, std::size_t i) : range_(range), i_(i) {}
    Edge operator*() const { return (*range_)[i_]; }
    Iterator &operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator &o) const { return i_ == o.i_; }
    bool operator!=(const Iterator &o) const { return i_ != o.i_; }

  private:
    const EdgeRange *range_;
    std::size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size_}; }

private:
  const FieldValue *field_;
  std::size_t size_;
};

/// The value of one field of one vertex: its edges (edge fields) or its initial
/// bytes (state fields), in 32 bytes. The common cases are held inline: a scalar
/// or vector edge that is one contiguous run of one variable (or a single
/// element), and up to 16 bytes of state; anything else lives in `extra_`.
class FieldValue {
public:
  /// declaredSize when setFieldSize was not called (no field can have this many entries).
  static constexpr std::uint32_t kNoDeclaredSize = ~std::uint32_t(0);
  /// The most state values a field can hold (stateCount has 30 bits).
  static constexpr std::uint32_t kMaxStateCount = (std::uint32_t(1) << 30) - 1;

  FieldValue() noexcept : extra_(nullptr) {}
  FieldValue(const FieldValue &) = delete;
  FieldValue &operator=(const FieldValue &) = delete;
  ~FieldValue() {
    if (holds_ != Holds::Nothing)
      release();
  }

  // ---- edges -----------------------------------------------------------------------
  /// A scalar or vector field's one edge (none until connected), or a list
  /// field's entries (an entry never connected is not `connected()`).
  EdgeRange edges() const;
  /// Reads edge `i` without making an Edge (hot loops over every field):
  /// calls `f(elementType, count, scalarShape, std::span<const Segment>)`.
  template <class F> void visitEdge(std::size_t i, F &&f) const;
  /// Connects a scalar or vector field.
  void setEdge(const Edge &e);
  /// Connects a scalar or vector field to `view` (flattened; fewer than 2^32
  /// elements), packing it without making an Edge when it is one run. A vector
  /// field's edge is rank 1 whatever `view`'s rank (`vectorField`).
  void setEdge(const TensorView &view, bool vectorField);
  /// Connects entry `i` of a list field, growing the list to hold it.
  void setListEdge(std::size_t i, Edge e);
  /// Connects a list field to exactly `edges`.
  void setEdgeList(std::vector<Edge> edges);
  /// Makes a list field `n` entries long (new entries unconnected).
  void resizeEdgeList(std::size_t n);

  // ---- state -----------------------------------------------------------------------
  /// A state field's initial device bytes (empty until set).
  std::span<const std::uint8_t> stateBytes() const;
  void setStateBytes(std::span<const std::uint8_t> bytes);
  /// Makes the state bytes `n` long, zero-filling new bytes.
  void resizeStateBytes(std::size_t n);

  std::uint32_t declaredSize = kNoDeclaredSize; // setFieldSize
  std::uint32_t stateCount : 30 = 0;            // State fields: element count
  bool set : 1 = false;

private:
  friend class EdgeRange;
  enum class Holds : std::uint8_t {
    Nothing,
    PackedEdge,  // packed_: one stride-1 segment (or none: an empty tensor)
    Edge,        // extra_->edge
    EdgeList,    // extra_->list
    PackedState, // state_, stateSize_ bytes
    State,       // extra_->state
  };
  struct Extra {
    ir::Edge edge;
    std::vector<ir::Edge> list;
    std::vector<std::uint8_t> state;
  };
  struct PackedEdge {
    VarId var;
    std::uint32_t count; // elements (0: an empty tensor, no segment)
    std::int64_t start;
  };
  Edge edgeAt(std::size_t i) const;
  /// Holds a one-run edge (one segment read in order, or a single element, or
  /// none) packed; false, changing nothing, for any other.
  bool tryPack(const SegmentList &segments, poplar::Type elementType, bool scalarShape);
  Extra &extraFor(Holds holds);
  void release();

  union {
    PackedEdge packed_;
    Extra *extra_;
    std::uint8_t state_[16];
  };
  poplar::Type elementType_; // of a packed edge
  Holds holds_ = Holds::Nothing;
  bool scalarShape_ = false;   // of a packed edge
  std::uint8_t stateSize_ = 0; // of packed state
};
static_assert(sizeof(FieldValue) == 32, "a FieldValue is held for every field of every vertex");

inline Edge EdgeRange::operator[](std::size_t i) const {
  return field_->edgeAt(i);
}

template <class F> void FieldValue::visitEdge(std::size_t i, F &&f) const {
  auto visit = [&](const Edge &e) {
    f(e.elementType, e.count, e.scalarShape, std::span<const Segment>(e.segments.begin(), e.segments.end()));
  };
  switch (holds_) {
  case Holds::PackedEdge: {
    const Segment one{packed_.var, packed_.start, 1, packed_.count};
    f(elementType_, packed_.count, scalarShape_,
      packed_.count ? std::span<const Segment>(&one, 1) : std::span<const Segment>());
    return;
  }
  case Holds::Edge:
    return visit(extra_->edge);
  case Holds::EdgeList:
    return visit(extra_->list[i]);
  default:
    return;
  }
}

struct Vertex {
  std::uint32_t type = 0; // index into GraphData::vertexTypes
  std::uint32_t computeSet = 0;
  std::int64_t tile = -1;       // absolute; -1 = unmapped
  std::span<FieldValue> fields; // parallel to VertexTypeInfo::fields (in the table's arena)
};
static_assert(sizeof(Vertex) == 32, "a Vertex is held for every vertex");

/// The vertices of a graph, by id. Appending never moves a vertex or a field
/// (fixed-size chunks), so a graph of a million vertices is written once.
class VertexTable {
public:
  VertexTable() = default;
  VertexTable(const VertexTable &) = delete;
  VertexTable &operator=(const VertexTable &) = delete;
  ~VertexTable();

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Vertex &operator[](std::size_t i) { return chunks_[i >> kChunkShift][i & kChunkMask]; }
  const Vertex &operator[](std::size_t i) const { return chunks_[i >> kChunkShift][i & kChunkMask]; }
  Vertex &back() { return (*this)[size_ - 1]; }

  /// Appends a vertex of `type` in `computeSet` with `numFields` unset fields;
  /// returns its id.
  std::uint32_t add(std::uint32_t type, std::uint32_t computeSet, std::size_t numFields);

  /// Graph::setPerfEstimate's value for vertex `v`, or null. (PopLibs sets one
  /// for nearly every vertex it makes; a graph of custom vertices for none.)
  const poplar::VertexPerfEstimate *estimateOf(std::size_t v) const {
    const std::size_t chunk = v >> kChunkShift;
    if (chunk >= estimates_.size() || !estimates_[chunk])
      return nullptr;
    const Estimate &e = estimates_[chunk][v & kChunkMask];
    return e.set ? &e.value : nullptr;
  }
  void setEstimate(std::size_t v, const poplar::VertexPerfEstimate &estimate);

  template <class Table, class Value> class Iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Vertex;
    using difference_type = std::ptrdiff_t;
    using pointer = Value *;
    using reference = Value &;
    Iterator(Table *table, std::size_t i) : table_(table), i_(i) {}
    reference operator*() const { return (*table_)[i_]; }
    pointer operator->() const { return &(*table_)[i_]; }
    Iterator &operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) { return Iterator(table_, i_++); }
    bool operator==(const Iterator &o) const { return i_ == o.i_; }
    bool operator!=(const Iterator &o) const { return i_ != o.i_; }

  private:
    Table *table_;
    std::size_t i_;
  };
  using iterator = Iterator<VertexTable, Vertex>;
  using const_iterator = Iterator<const VertexTable, const Vertex>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

private:
  static constexpr unsigned kChunkShift = 12; // 4,096 vertices (128 KiB) a chunk
  static constexpr std::size_t kChunkMask = (std::size_t(1) << kChunkShift) - 1;
  /// Field values are carved from chunks of at least this many (512 KiB).
  static constexpr std::size_t kFieldsPerChunk = 8192;
  struct FieldChunk {
    FieldValue *values;
    std::size_t used;
    std::size_t capacity;
  };
  std::span<FieldValue> newFields(std::size_t n);

  struct Estimate {
    poplar::VertexPerfEstimate value;
    bool set = false;
  };
  std::vector<std::unique_ptr<Vertex[]>> chunks_;
  /// Parallel to chunks_; a chunk's estimates are made when one of its vertices gets one.
  std::vector<std::unique_ptr<Estimate[]>> estimates_;
  std::vector<FieldChunk> fieldChunks_;
  std::size_t size_ = 0;
};

} // namespace aspen::ir
