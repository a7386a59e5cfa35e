// Copyright (c) Aspen contributors.
// The internal representation of a tensor view.
#pragma once

#include "poplar/Type.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
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

/// A view's shape: its dimensions, up to rank 3 held inline (most views then
/// allocate nothing for their shape). Converts to and from std::vector.
class Shape {
public:
  Shape() = default;
  Shape(std::initializer_list<std::size_t> dims) { assign(dims.begin(), dims.end()); }
  Shape(const std::vector<std::size_t> &dims) { assign(dims.data(), dims.data() + dims.size()); }
  Shape(const std::size_t *begin, const std::size_t *end) { assign(begin, end); }
  template <class It> Shape(It begin, It end) {
    for (; begin != end; ++begin)
      push_back(*begin);
  }
  Shape(const Shape &o) { assign(o.begin(), o.end()); }
  Shape(Shape &&o) noexcept { take(o); }
  Shape &operator=(const Shape &o) {
    if (this != &o)
      assign(o.begin(), o.end());
    return *this;
  }
  Shape &operator=(Shape &&o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~Shape() { release(); }
  operator std::vector<std::size_t>() const { return std::vector<std::size_t>(begin(), end()); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::size_t *data() const { return data_; }
  std::size_t *data() { return data_; }
  const std::size_t *begin() const { return data_; }
  const std::size_t *end() const { return data_ + size_; }
  std::size_t *begin() { return data_; }
  std::size_t *end() { return data_ + size_; }
  std::size_t &operator[](std::size_t i) { return data_[i]; }
  std::size_t operator[](std::size_t i) const { return data_[i]; }
  std::size_t &front() { return data_[0]; }
  std::size_t front() const { return data_[0]; }
  std::size_t &back() { return data_[size_ - 1]; }
  std::size_t back() const { return data_[size_ - 1]; }
  void push_back(std::size_t d) {
    reserve(size_ + 1);
    data_[size_++] = d;
  }
  void reserve(std::size_t n) {
    if (n <= capacity_)
      return;
    const std::size_t capacity = std::max(n, std::size_t(2) * capacity_);
    auto *heap = new std::size_t[capacity];
    std::copy(begin(), end(), heap);
    release();
    data_ = heap;
    capacity_ = static_cast<std::uint32_t>(capacity);
  }
  bool operator==(const Shape &o) const { return std::equal(begin(), end(), o.begin(), o.end()); }
  bool operator!=(const Shape &o) const { return !(*this == o); }
  bool operator==(const std::vector<std::size_t> &o) const {
    return std::equal(begin(), end(), o.begin(), o.end());
  }
  bool operator!=(const std::vector<std::size_t> &o) const { return !(*this == o); }

private:
  static constexpr std::size_t kInline = 3;
  void assign(const std::size_t *b, const std::size_t *e) {
    const auto n = static_cast<std::size_t>(e - b);
    size_ = 0;
    if (n <= kInline && data_ == inline_)
      copySmall(b, n, inline_); // most shapes: a few moves, no call
    else {
      reserve(n);
      std::copy(b, e, data_);
    }
    size_ = static_cast<std::uint32_t>(n);
  }
  static void copySmall(const std::size_t *from, std::size_t n, std::size_t *to) {
    static_assert(kInline == 3, "copySmall copies up to three dimensions");
    if (n > 0)
      to[0] = from[0];
    if (n > 1)
      to[1] = from[1];
    if (n > 2)
      to[2] = from[2];
  }
  void release() {
    if (data_ != inline_)
      delete[] data_;
    data_ = inline_;
    capacity_ = kInline;
  }
  void take(Shape &o) {
    size_ = o.size_;
    if (o.data_ == o.inline_) {
      copySmall(o.inline_, o.size_, inline_);
      data_ = inline_;
      capacity_ = kInline;
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_;
      o.capacity_ = kInline;
    }
    o.size_ = 0;
  }
  std::size_t *data_ = inline_;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;
  std::size_t inline_[kInline];
};

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
  SegmentList(const SegmentList &other) noexcept : size_(other.size_) {
    if (isShared()) {
      shared_ = other.shared_;
      shared_->refs.fetch_add(1, std::memory_order_relaxed);
    } else
      one_ = other.one_;
  }
  SegmentList(SegmentList &&other) noexcept : size_(other.size_) {
    if (isShared()) {
      shared_ = other.shared_;
      other.size_ = 0;
      other.one_ = Segment{0, 0, 1, 0};
    } else
      one_ = other.one_;
  }
  SegmentList &operator=(const SegmentList &other) noexcept {
    SegmentList copy(other);
    return *this = std::move(copy);
  }
  SegmentList &operator=(SegmentList &&other) noexcept {
    if (this != &other) {
      release();
      new (this) SegmentList(std::move(other));
    }
    return *this;
  }
  ~SegmentList() { release(); }
  SegmentList(const Segment *begin, const Segment *end) : size_(static_cast<std::size_t>(end - begin)) {
    if (size_ == 1)
      one_ = *begin;
    else if (size_ > 1)
      share(begin, end);
  }
  /// One segment (count > 0), held inline.
  explicit SegmentList(const Segment &one) noexcept : one_(one), size_(1) {}
  /// Becomes the one segment {var, start, stride, count} (count > 0), written in place.
  void assignOne(VarId var, std::int64_t start, std::int64_t stride, std::uint64_t count) noexcept {
    release();
    one_.var = var;
    one_.start = start;
    one_.stride = stride;
    one_.count = count;
    size_ = 1;
  }
  /// From a shared list (copied unless it has one segment).
  SegmentList(const std::shared_ptr<const std::vector<Segment>> &segments);

  const Segment *begin() const { return isShared() ? shared_->segments.data() : &one_; }
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
  const SegmentGatherer *builtGatherer() const { return isShared() ? shared_->gatherer.get() : nullptr; }
  /// Lists of at least this many segments keep a gatherer.
  static constexpr std::size_t kGathererFrom = 16;

private:
  /// A list of two or more segments, counted by the lists that hold it.
  struct Shared {
    std::vector<Segment> segments;
    mutable std::atomic<std::size_t> refs{1};
    mutable std::once_flag gathererBuilt;
    mutable std::shared_ptr<const SegmentGatherer> gatherer;
  };
  /// Two or more segments live in `shared_`; zero or one in `one_`.
  bool isShared() const { return size_ > 1; }
  void release() noexcept {
    if (isShared() && shared_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete shared_;
  }
  void adopt(Shared *shared) { shared_ = shared; } // size_ is already > 1
  void share(const Segment *begin, const Segment *end);
  // 40 bytes (a view holds one): the inline segment or the shared list.
  union {
    Segment one_{0, 0, 1, 0};
    const Shared *shared_;
  };
  std::size_t size_ = 0;
};
static_assert(sizeof(SegmentList) == 40, "SegmentList: one segment or a pointer, and a count");

struct GraphData;

/// Names a graph (a GraphData and so every virtual graph of it): a number given
/// to each GraphData when it is made and never given again in the process (0:
/// no graph). Views hold it instead of a pointer to their graph, so making,
/// copying and freeing a view and asking whether two views (or a view and a
/// graph) belong to one graph cost no atomic operation; the few paths that need
/// the graph itself (names in messages, fp8 metadata, variable types) find it
/// with lockGraph(), which tells a graph that is gone by returning null.
using GraphId = std::uint32_t;

/// The graph `id` names while it lives (null once it is gone, or for 0).
std::shared_ptr<GraphData> lockGraph(GraphId id);

/// What a poplar::Tensor points at: a shape, an element type and the segments
/// that list its elements in row-major order. Views are immutable and shared.
///
/// Units: a segment indexes its variable in units of `elementType.size()` bytes.
/// Normally that is the variable's own type; after `reinterpret` it differs, and
/// the byte offset of element k is `(start + k*stride) * elementType.size()`.
struct TensorView {
  GraphId graph = 0; // the graph it belongs to (ids are compared: see GraphId)
  poplar::Type elementType;
  Shape shape;
  SegmentList segments;

  TensorView() = default;
  TensorView(GraphId graph, poplar::Type elementType, Shape &&shape, SegmentList &&segments)
      : graph(graph), elementType(elementType), shape(std::move(shape)), segments(std::move(segments)) {}

  std::size_t numElements() const;
  /// A short description used in error messages: `'name' {2,3} float`.
  std::string describe() const;
  /// The graph the view belongs to, or null when it is gone.
  std::shared_ptr<GraphData> lockGraph() const { return ir::lockGraph(graph); }
};
// A view and its shared_ptr control block fit a 112-byte heap chunk (a graph
// holds millions of edge views).
static_assert(sizeof(TensorView) <= 88, "TensorView: keep a view and its control block in 104 bytes");

} // namespace aspen::ir
