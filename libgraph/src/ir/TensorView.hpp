// Copyright (c) Aspen contributors.
// The internal representation of a tensor view.
#pragma once

#include "poplar/Type.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace aspen::ir {

using VarId = std::uint32_t;

/// A strided run of `count` elements of one variable, in the view's row-major order:
/// element k of the run is variable element `start + k * stride` (in units of the
/// view's element type; see TensorView). `stride` may be 0 (broadcast) or negative
/// (reverse). A run with count == 1 always has stride 1.
struct Segment {
  VarId var;
  std::int64_t start;
  std::int64_t stride;
  std::uint64_t count;
};

class SegmentGatherer;

/// A view's segments: immutable and cheap to copy. One segment (a variable, or
/// a run of one: most views) is held inline, so making such a view allocates
/// nothing for its segments; a longer list lives on the heap, shared by every
/// view that has it (flatten, reshape, ... copy the handle, never the list),
/// together with the index that finds positions in it (see gatherer()).
///
/// It reads as a container of Segment. `*list` and `list->` give the list
/// itself, so code written when views held a `shared_ptr<const vector<Segment>>`
/// reads unchanged.
class SegmentList {
public:
  SegmentList() = default;
  explicit SegmentList(std::vector<Segment> segments);
  SegmentList(const Segment *begin, const Segment *end);
  /// From a shared list (copied unless it has one segment).
  SegmentList(const std::shared_ptr<const std::vector<Segment>> &segments);

  const Segment *begin() const { return shared_ ? shared_->segments.data() : &one_; }
  const Segment *end() const { return begin() + size_; }
  const Segment *data() const { return begin(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Segment &front() const { return *begin(); }
  const Segment &back() const { return end()[-1]; }
  const Segment &operator[](std::size_t i) const { return begin()[i]; }
  std::vector<Segment> vec() const { return std::vector<Segment>(begin(), end()); }

  const SegmentList &operator*() const { return *this; }
  const SegmentList *operator->() const { return this; }
  explicit operator bool() const { return !empty(); }
  /// The same storage (one shared list, or the same inline segment): the views
  /// list the same elements in the same segments without comparing them.
  bool operator==(const SegmentList &other) const;
  bool operator!=(const SegmentList &other) const { return !(*this == other); }

  /// The SegmentGatherer of a list of many segments, built on first use and kept
  /// with the list (slicing a scattered view many times then costs O(log
  /// segments) a slice, not O(segments)); null for a short list, whose gatherer
  /// is cheaper to build than to look up. Thread-safe.
  const SegmentGatherer *gatherer() const;
  /// The gatherer built so far (null if none), for tests.
  const SegmentGatherer *builtGatherer() const { return shared_ ? shared_->gatherer.get() : nullptr; }
  /// Lists of at least this many segments keep a gatherer.
  static constexpr std::size_t kGathererFrom = 16;

private:
  struct Shared {
    std::vector<Segment> segments;
    mutable std::once_flag gathererBuilt;
    mutable std::shared_ptr<const SegmentGatherer> gatherer;
  };
  Segment one_{0, 0, 1, 0};
  std::size_t size_ = 0;
  std::shared_ptr<const Shared> shared_;
};

/// What a poplar::Tensor points at: a shape, an element type and the segments
/// that list its elements in row-major order. Views are immutable and shared.
///
/// Units: a segment indexes its variable in units of `elementType.size()` bytes.
/// Normally that is the variable's own type; after `reinterpret` it differs, and
/// the byte offset of element k is `(start + k*stride) * elementType.size()`.
struct TensorView {
  std::weak_ptr<struct GraphData> graph; // for debug names in error messages
  poplar::Type elementType;
  std::vector<std::size_t> shape;
  SegmentList segments;

  std::size_t numElements() const;
  /// A short description used in error messages: `'name' {2,3} float`.
  std::string describe() const;
};

} // namespace aspen::ir
