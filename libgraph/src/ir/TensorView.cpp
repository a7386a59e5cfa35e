// Copyright (c) Aspen contributors.
#include "ir/TensorView.hpp"

#include "ir/TensorAlgebra.hpp"

namespace aspen::ir {

SegmentList::SegmentList(std::vector<Segment> segments) : size_(segments.size()) {
  if (size_ == 1)
    one_ = segments.front();
  else if (size_ > 1) {
    auto *shared = new Shared;
    shared->segments = std::move(segments);
    adopt(shared);
  }
}

void SegmentList::share(const Segment *begin, const Segment *end) {
  auto *shared = new Shared;
  shared->segments.assign(begin, end);
  adopt(shared);
}

SegmentList::SegmentList(const std::shared_ptr<const std::vector<Segment>> &segments)
    : SegmentList(segments ? segments->data() : nullptr,
                  segments ? segments->data() + segments->size() : nullptr) {}

bool SegmentList::operator==(const SegmentList &other) const {
  if (isShared() || other.isShared())
    return isShared() && other.isShared() && shared_ == other.shared_;
  if (size_ != other.size_)
    return false;
  return size_ == 0 || (one_.var == other.one_.var && one_.start == other.one_.start &&
                        one_.stride == other.one_.stride && one_.count == other.one_.count);
}

std::size_t TensorView::numElements() const {
  std::size_t n = 1;
  for (std::size_t d : shape)
    n *= d;
  return n;
}

std::string TensorView::describe() const {
  return tensorName(*this) + " " + shapeString(shape) + " " + std::string(elementType.toString());
}

} // namespace aspen::ir
