// Copyright (c) Aspen contributors.
// The tensor-view algebra: building views, and reading them back as runs of
// variable elements or bytes. Every module that looks inside a Tensor uses these.
//
// A view's segments list its elements in row-major order (see TensorView.hpp).
// A view operation is an affine map from the result's index space into the
// source's flattened index space (`base + sum(i_k * stride_k)`); `SegmentGatherer`
// maps such a map through the source's segments in time proportional to the
// segments it produces, so views cost O(rank + segments), never O(elements).
#pragma once

#include "ir/TensorView.hpp"
#include "poplar/Tensor.hpp"

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace aspen::ir {

struct GraphData;

/// The whole of variable `var` as a tensor of `type` and `shape` (the variable's
/// element count must equal the product of `shape`). Graph::addVariable and
/// addConstant call this after appending the Variable record.
poplar::Tensor makeVariableTensor(const std::shared_ptr<GraphData> &graph, VarId var, poplar::Type type,
                                  std::vector<std::size_t> shape);

/// A tensor of `type` and `shape` made of `segments` (their total count must equal
/// the product of `shape`). Adjacent compatible segments are merged.
poplar::Tensor makeTensor(const std::shared_ptr<GraphData> &graph, poplar::Type type,
                          std::vector<std::size_t> shape, std::span<const Segment> segments);
/// As above, for the graph `graph` names, which already has views (so lockGraph
/// finds it): views rebuilt from segments a graph holds need no owning pointer.
poplar::Tensor makeTensor(GraphId graph, poplar::Type type, std::vector<std::size_t> shape,
                          std::span<const Segment> segments);

/// A run `[begin, end)` of the elements of variable `var`, in units of the
/// variable's own element type.
struct VarRegion {
  VarId var;
  std::uint64_t begin, end;
};

/// The tensor's elements as runs of its variables' own elements, in row-major
/// order, adjacent runs merged. A reinterpreted view is converted through bytes
/// (an element that covers part of a variable element yields that whole element).
/// A segment with stride 1 is one region; other strides give one region per element.
/// At most `limit` regions are returned (the first ones).
std::vector<VarRegion> toVariableRegions(const TensorView &view, std::size_t limit = SIZE_MAX);
/// As above, for a view of `graph`, which the caller holds (no look-up of the graph).
std::vector<VarRegion> toVariableRegions(const GraphData &graph, const TensorView &view,
                                         std::size_t limit = SIZE_MAX);

/// A run of `bytes` bytes of variable `var` starting at byte `byteBegin`.
struct ByteRun {
  VarId var;
  std::uint64_t byteBegin, bytes;
};

/// The row-major byte layout of the view as runs of variable bytes, adjacent runs
/// merged. The compiler plans copies from these. At most `limit` runs are returned.
std::vector<ByteRun> toByteRuns(const TensorView &view, std::size_t limit = SIZE_MAX);

/// How many strided segments describe the view.
std::uint64_t numSegments(const TensorView &view);

/// True when some variable element appears more than once in the view.
bool containsAliases(const TensorView &view);

/// True when the views share at least one byte of some variable.
bool viewsIntersect(const TensorView &a, const TensorView &b);

/// True when both segment lists name the same variable elements in the same order
/// (whatever the segmentation).
bool sameElements(std::span<const Segment> a, std::span<const Segment> b);

/// Size in bytes of one element of variable `var` (the view's element size when the
/// graph is gone or does not know the variable).
std::size_t variableElementSize(const TensorView &view, VarId var);

/// `'name'` of the view's variable (`'a'+'b'` for several, `variable 3` when unnamed
/// or the graph is gone), for messages.
std::string tensorName(const TensorView &view);

/// `{2,3}`.
std::string shapeString(const std::vector<std::size_t> &shape);

/// The largest tensor (or view) Aspen represents: element offsets and byte
/// addresses stay well inside 64 bits. No device comes near it.
inline constexpr std::uint64_t kMaxTensorBytes = std::uint64_t(1) << 62;

/// The product of `dims[begin, end)`, or nullopt when it overflows or when that
/// many elements of `elementSize` bytes would exceed kMaxTensorBytes.
std::optional<std::uint64_t> checkedElementCount(const std::vector<std::size_t> &dims,
                                                 std::size_t elementSize, std::size_t begin = 0,
                                                 std::size_t end = SIZE_MAX);

// ---- building blocks ---------------------------------------------------------

/// Appends segments in row-major order, merging each with the previous one when
/// together they are one strided run. Keeps the invariant that a one-element
/// segment has stride 1.
class SegmentBuilder {
public:
  void append(const Segment &s);
  void append(VarId var, std::int64_t start, std::int64_t stride, std::uint64_t count) {
    append(Segment{var, start, stride, count});
  }
  void appendAll(std::span<const Segment> segments) {
    for (const Segment &s : segments)
      append(s);
  }
  void reserve(std::size_t n) { segments_.reserve(n); }
  std::vector<Segment> take() {
    std::vector<Segment> out(segments_.begin(), segments_.end());
    segments_.clear();
    return out;
  }
  /// The segments as a view's list (no allocation for one segment).
  SegmentList list() {
    SegmentList out(segments_.data(), segments_.data() + segments_.size());
    segments_.clear();
    return out;
  }

private:
  boost::container::small_vector<Segment, 1> segments_;
};

/// One axis of an affine map into a source's flattened index space.
struct Axis {
  std::uint64_t size;
  std::int64_t stride; // in source positions; 0 repeats, negative reverses
};
/// The axes of a view operation (held inline up to rank 6: no allocation).
using Axes = boost::container::small_vector<Axis, 6>;

/// Reads elements of a source segment list by flattened position. Consecutive
/// source segments that form a regular 2-D block (same variable, count and stride,
/// starts in arithmetic progression, as a transpose produces) are treated as one
/// block, so a pick that walks down a column of such a block is one output segment.
class SegmentGatherer {
public:
  explicit SegmentGatherer(std::span<const Segment> source);
  /// Appends source positions `first, first + stride, ...` (`count` of them) to `out`.
  void pick(std::uint64_t first, std::uint64_t count, std::int64_t stride, SegmentBuilder &out) const;
  std::uint64_t numElements() const { return total_; }

private:
  struct Block {
    std::uint64_t pos; // first flattened position
    std::uint64_t rows, rowLength;
    VarId var;
    std::int64_t start, stride, rowDelta;
  };
  boost::container::small_vector<Block, 4> blocks_; // inline for short sources
  std::uint64_t total_ = 0;
};

/// The segments of the view of `source` given by the affine map
/// `position(i_0..i_{n-1}) = base + sum(i_k * axes[k].stride)`, row-major over `axes`.
/// Returns `source` itself when the map is the identity.
SegmentList gatherSegments(const SegmentList &source, std::int64_t base, const Axes &axes);

/// As above, for the segments of `view` (whose element count is known).
SegmentList gatherSegments(const TensorView &view, std::int64_t base, const Axes &axes);

} // namespace aspen::ir
