// Copyright (c) Aspen contributors.
// poplar::Tensor: every view is an affine map from the result's indices into the
// source's flattened index space, resolved through the source's segments by
// aspen::ir::gatherSegments (see ir/TensorAlgebra.hpp).
#include "poplar/Tensor.hpp"

#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"
#include "ir/TensorView.hpp"
#include "poplar/exceptions.hpp"

#include <algorithm>

namespace poplar {

using aspen::ir::Axis;
using aspen::ir::Segment;
using aspen::ir::SegmentBuilder;
using aspen::ir::SegmentGatherer;
using aspen::ir::TensorView;

namespace {

using aspen::ir::SegmentList;

const TensorView &checkedView(const std::shared_ptr<const TensorView> &impl, const char *operation) {
  if (!impl)
    throw poplar_error(std::string(operation) + " called on an invalid (default-constructed) tensor");
  return *impl;
}

/// "tensor 'w' of shape {4,3}", for messages.
std::string about(const TensorView &v) {
  return "tensor " + aspen::ir::tensorName(v) + " of shape " + aspen::ir::shapeString(v.shape);
}

template <class T> std::string listString(ArrayRef<T> values) {
  std::string s = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(values[i]);
  }
  return s + "}";
}

template <class Dims> std::uint64_t product(const Dims &shape, std::size_t begin, std::size_t end) {
  std::uint64_t n = 1;
  for (std::size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

/// Whether two views belong to one graph (also when the graph is gone).
bool sameGraph(const TensorView &a, const TensorView &b) {
  return a.graph == b.graph;
}

/// The element count of a view of `shape` and `type` made by `operation`;
/// throws when it is too large to represent.
std::uint64_t checkedViewSize(const std::vector<std::size_t> &shape, const Type &type,
                              const TensorView &source, const std::string &operation) {
  const auto n = aspen::ir::checkedElementCount(shape, type.size());
  if (!n)
    throw index_error(operation + " of " + about(source) + ": the result " + aspen::ir::shapeString(shape) +
                      " has too many elements");
  return *n;
}

std::vector<std::int64_t> rowMajorStrides(const std::vector<std::size_t> &shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= static_cast<std::int64_t>(shape[i]);
  }
  return strides;
}

/// The source's own axes: identity map.
aspen::ir::Axes identityAxes(const TensorView &v) {
  aspen::ir::Axes axes(v.shape.size(), boost::container::default_init); // every entry is set below
  std::int64_t s = 1;
  for (std::size_t i = axes.size(); i-- > 0;) {
    axes[i] = Axis{v.shape[i], s};
    s *= static_cast<std::int64_t>(v.shape[i]);
  }
  return axes;
}

/// A view of `src`'s graph (the shape and segments are moved into it).
Tensor derive(const TensorView &src, aspen::ir::Shape &&shape, SegmentList &&segments, Type type) {
  return Tensor(std::make_shared<const TensorView>(src.graph, type, std::move(shape), std::move(segments)));
}

Tensor derive(const TensorView &src, aspen::ir::Shape &&shape, SegmentList &&segments) {
  return derive(src, std::move(shape), std::move(segments), src.elementType);
}

/// A view of `src`'s elements in another shape.
Tensor derive(const TensorView &src, aspen::ir::Shape &&shape, const SegmentList &segments) {
  return derive(src, std::move(shape), SegmentList(segments));
}

Tensor affineView(const TensorView &src, std::int64_t base, const aspen::ir::Axes &axes,
                  aspen::ir::Shape shape) {
  return derive(src, std::move(shape), aspen::ir::gatherSegments(src, base, axes));
}

/// The view of `shape` whose elements are source positions `[first, first +
/// count)` of `src` (row-major), when they lie in one segment of a short list:
/// made without the affine machinery (operator[], index and slice of a
/// contiguous block: the views a graph builder makes per vertex), into `out`.
/// Otherwise false, `shape` untouched: the caller takes the general path.
bool runView(const TensorView &src, std::uint64_t first, std::uint64_t count, aspen::ir::Shape &shape,
             Tensor &out) {
  const SegmentList &segments = src.segments;
  if (count == 0) {
    out = derive(src, std::move(shape), SegmentList());
    return true;
  }
  if (segments.size() >= SegmentList::kGathererFrom) // long lists: the kept gatherer finds it faster
    return false;
  std::uint64_t pos = 0;
  for (const Segment &s : segments) {
    if (first < pos + s.count) {
      const std::uint64_t offset = first - pos;
      if (offset + count > s.count)
        return false; // the run spans segments
      if (count == s.count && segments.size() == 1) {
        out = derive(src, std::move(shape), segments); // the whole view: share its list
        return true;
      }
      // The segment is written in place (a Segment built elsewhere and copied
      // in costs a stalled store-to-load forward on this hot path).
      auto view = std::make_shared<TensorView>(src.graph, src.elementType, std::move(shape), SegmentList());
      view->segments.assignOne(s.var, s.start + static_cast<std::int64_t>(offset) * s.stride,
                               count == 1 ? 1 : s.stride, count);
      out = Tensor(std::move(view));
      return true;
    }
    pos += s.count;
  }
  return false;
}

void checkDimension(const TensorView &v, unsigned dimension, const std::string &operation) {
  if (dimension >= v.shape.size())
    throw index_error(operation + ": dimension " + std::to_string(dimension) + " is out of range for " +
                      about(v) + " (rank " + std::to_string(v.shape.size()) + ")");
}

/// As checkDimension, naming the operation only when it fails (hot paths:
/// no string is built for a valid dimension).
template <class Name> void checkDimensionLazily(const TensorView &v, unsigned dimension, Name &&operation) {
  if (dimension >= v.shape.size())
    checkDimension(v, dimension, operation());
}

/// Poplar's rule for a permutation given as (source dims, destination dims).
std::vector<unsigned> partialPermutation(const TensorView &v, ArrayRef<unsigned> source,
                                         ArrayRef<unsigned> destination, const std::string &operation) {
  const std::size_t rank = v.shape.size();
  if (source.size() != destination.size())
    throw index_error(operation + ": " + std::to_string(source.size()) + " source dimensions but " +
                      std::to_string(destination.size()) + " destinations, for " + about(v));
  std::vector<bool> sourceUsed(rank, false), destinationUsed(rank, false);
  std::vector<unsigned> permutation(rank, 0);
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] >= rank || destination[i] >= rank)
      throw index_error(operation + ": dimension " + std::to_string(std::max(source[i], destination[i])) +
                        " is out of range for " + about(v) + " (rank " + std::to_string(rank) + ")");
    if (sourceUsed[source[i]] || destinationUsed[destination[i]])
      throw index_error(operation + ": dimension " +
                        std::to_string(sourceUsed[source[i]] ? source[i] : destination[i]) +
                        " is given twice, for " + about(v));
    sourceUsed[source[i]] = destinationUsed[destination[i]] = true;
    permutation[destination[i]] = source[i];
  }
  unsigned nextSource = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    if (destinationUsed[d])
      continue;
    while (sourceUsed[nextSource])
      ++nextSource;
    permutation[d] = nextSource++;
  }
  return permutation;
}

Tensor shuffle(const TensorView &v, const std::vector<unsigned> &permutation) {
  const auto strides = rowMajorStrides(v.shape);
  aspen::ir::Axes axes(permutation.size());
  std::vector<std::size_t> shape(permutation.size());
  for (std::size_t i = 0; i < permutation.size(); ++i) {
    shape[i] = v.shape[permutation[i]];
    axes[i] = Axis{shape[i], strides[permutation[i]]};
  }
  return affineView(v, 0, axes, std::move(shape));
}

} // namespace

// ---- construction -----------------------------------------------------------------

Tensor::Tensor() = default;
Tensor::Tensor(const Tensor &) = default;
Tensor::Tensor(Tensor &&) noexcept = default;
Tensor &Tensor::operator=(const Tensor &) = default;
Tensor &Tensor::operator=(Tensor &&) noexcept = default;
Tensor::~Tensor() = default;
Tensor::Tensor(std::shared_ptr<const aspen::ir::TensorView> impl) : impl_(std::move(impl)) {}

// ---- queries ------------------------------------------------------------------------

Type Tensor::elementType() const {
  return checkedView(impl_, "elementType()").elementType;
}

std::size_t Tensor::numElements() const {
  return checkedView(impl_, "numElements()").numElements();
}

unsigned Tensor::rank() const {
  return static_cast<unsigned>(checkedView(impl_, "rank()").shape.size());
}

std::vector<std::size_t> Tensor::shape() const {
  return checkedView(impl_, "shape()").shape;
}

std::size_t Tensor::dim(unsigned i) const {
  const TensorView &v = checkedView(impl_, "dim()");
  checkDimensionLazily(v, i, [&] { return "dim(" + std::to_string(i) + ")"; });
  return v.shape[i];
}

bool Tensor::valid() const {
  return impl_ != nullptr;
}

bool Tensor::isContiguous() const {
  const TensorView &v = checkedView(impl_, "isContiguous()");
  const auto &segments = *v.segments;
  if (segments.empty())
    return false;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Segment &s = segments[i];
    if (s.count > 1 && s.stride != 1)
      return false;
    if (i > 0) {
      const Segment &p = segments[i - 1];
      if (s.var != p.var || s.start != p.start + static_cast<std::int64_t>(p.count))
        return false;
    }
  }
  return true;
}

bool Tensor::containsAliases() const {
  return aspen::ir::containsAliases(checkedView(impl_, "containsAliases()"));
}

bool Tensor::containsConstant() const {
  const TensorView &v = checkedView(impl_, "containsConstant()");
  auto graph = v.lockGraph();
  if (!graph)
    return false;
  for (const Segment &s : *v.segments)
    if (s.var < graph->variables.size() && graph->variables[s.var].isConstant)
      return true;
  return false;
}

bool Tensor::isParallelWriteable() const {
  return !containsConstant() && !containsAliases();
}

std::vector<Interval> Tensor::getContiguousRegions() const {
  const TensorView &v = checkedView(impl_, "getContiguousRegions()");
  std::vector<Interval> regions;
  std::size_t pos = 0;
  bool haveLast = false;
  aspen::ir::VarId lastVar = 0;
  std::int64_t lastEnd = 0;
  auto run = [&](aspen::ir::VarId var, std::int64_t start, std::size_t length) {
    if (haveLast && lastVar == var && lastEnd == start)
      regions.back() = Interval(regions.back().begin(), pos + length);
    else
      regions.emplace_back(pos, pos + length);
    haveLast = true;
    lastVar = var;
    lastEnd = start + static_cast<std::int64_t>(length);
    pos += length;
  };
  for (const Segment &s : *v.segments) {
    if (s.count == 1 || s.stride == 1)
      run(s.var, s.start, s.count);
    else
      for (std::uint64_t k = 0; k < s.count; ++k)
        run(s.var, s.start + static_cast<std::int64_t>(k) * s.stride, 1);
  }
  return regions;
}

std::vector<VariableInterval> Tensor::getVarRegions() const {
  const TensorView &v = checkedView(impl_, "getVarRegions()");
  std::vector<VariableInterval> out;
  for (const auto &r : aspen::ir::toVariableRegions(v))
    out.emplace_back(VariableRef(r.var), Interval(r.begin, r.end));
  return out;
}

bool Tensor::intersectsWith(const Tensor &other) const {
  const TensorView &a = checkedView(impl_, "intersectsWith()");
  const TensorView &b = checkedView(other.impl_, "intersectsWith()");
  return sameGraph(a, b) && aspen::ir::viewsIntersect(a, b);
}

std::string Tensor::shortString() const {
  if (!impl_)
    return "<invalid tensor>";
  return impl_->describe();
}

std::string Tensor::getVarStr() const {
  if (!impl_)
    return "<invalid tensor>";
  constexpr std::size_t maxRegions = 16;
  const auto regions = aspen::ir::toVariableRegions(*impl_, maxRegions + 1);
  auto graph = impl_->lockGraph();
  std::string s;
  for (std::size_t i = 0; i < regions.size() && i < maxRegions; ++i) {
    const auto &r = regions[i];
    if (i)
      s += ", ";
    if (graph && r.var < graph->variables.size() && !graph->variables[r.var].name.empty())
      s += "'" + graph->variables[r.var].name + "'";
    else
      s += "variable " + std::to_string(r.var);
    s += "[" + std::to_string(r.begin) + ":" + std::to_string(r.end) + ")";
  }
  if (regions.size() > maxRegions)
    s += ", ...";
  return s;
}

void Tensor::outputRegions(std::ostream &os) const {
  const TensorView &v = checkedView(impl_, "outputRegions()");
  auto graph = v.lockGraph();
  for (const auto &r : aspen::ir::toVariableRegions(v)) {
    if (graph && r.var < graph->variables.size() && !graph->variables[r.var].name.empty())
      os << "'" << graph->variables[r.var].name << "'";
    else
      os << "variable " << r.var;
    os << "[" << r.begin << ":" << r.end << ")\n";
  }
}

std::ostream &operator<<(std::ostream &os, const VariableInterval &r) {
  return os << "variable " << r.var.getId() << r.interval;
}

std::string Tensor::getDebugStr() const {
  if (!impl_)
    return "<invalid tensor>";
  return shortString() + " = [" + getVarStr() + "]";
}

// ---- views --------------------------------------------------------------------------

Tensor Tensor::operator[](std::size_t i) const {
  const TensorView &v = checkedView(impl_, "operator[]");
  if (v.shape.empty())
    throw index_error("operator[](" + std::to_string(i) + "): " + about(v) +
                      " is a scalar and cannot be indexed");
  if (i >= v.shape[0])
    throw index_error("index " + std::to_string(i) + " is out of range for " + about(v) +
                      " (dimension 0 has size " + std::to_string(v.shape[0]) + ")");
  // Row i is one run of positions: usually a run of one segment.
  aspen::ir::Shape shape(v.shape.begin() + 1, v.shape.end());
  const std::uint64_t row = product(shape, 0, shape.size());
  if (Tensor t; runView(v, i * row, row, shape, t))
    return t;
  auto axes = identityAxes(v);
  const std::int64_t base = static_cast<std::int64_t>(i) * axes[0].stride;
  axes.erase(axes.begin());
  return affineView(v, base, axes, std::move(shape));
}

Tensor Tensor::slice(std::size_t begin, std::size_t end, unsigned dimension) const {
  const TensorView &v = checkedView(impl_, "slice()");
  auto operation = [&] {
    return "slice(" + std::to_string(begin) + ", " + std::to_string(end) + ", " + std::to_string(dimension) +
           ")";
  };
  checkDimensionLazily(v, dimension, operation);
  if (begin > end || end > v.shape[dimension])
    throw index_error(operation() + " is out of range for " + about(v));
  auto shape = v.shape;
  shape[dimension] = end - begin;
  if (product(v.shape, 0, dimension) == 1) {
    // No outer index: the slice is one run of positions, usually of one segment.
    const std::uint64_t inner = product(v.shape, dimension + 1, v.shape.size());
    if (Tensor t; runView(v, begin * inner, (end - begin) * inner, shape, t))
      return t;
  }
  auto axes = identityAxes(v);
  const std::int64_t base = static_cast<std::int64_t>(begin) * axes[dimension].stride;
  axes[dimension].size = end - begin;
  return affineView(v, base, axes, std::move(shape));
}

Tensor Tensor::slice(const Interval &region, unsigned dimension) const {
  return slice(region.begin(), region.end(), dimension);
}

Tensor Tensor::slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const {
  const TensorView &v = checkedView(impl_, "slice()");
  const std::string operation = "slice(" + listString(begin) + ", " + listString(end) + ")";
  // As Poplar's (PopLibs slices a convolution's {group, batch, ...} tensors with two bounds):
  // fewer bounds than dimensions slice the leading dimensions and keep the rest whole.
  if (begin.size() != end.size() || begin.size() > v.shape.size())
    throw index_error(operation +
                      ": bounds must have as many begin as end entries, at most one per dimension of " +
                      about(v));
  auto axes = identityAxes(v);
  auto shape = v.shape;
  std::int64_t base = 0;
  for (std::size_t d = 0; d < begin.size(); ++d) {
    if (begin[d] > end[d] || end[d] > v.shape[d])
      throw index_error(operation + " is out of range for " + about(v) + " in dimension " +
                        std::to_string(d));
    base += static_cast<std::int64_t>(begin[d]) * axes[d].stride;
    axes[d].size = shape[d] = end[d] - begin[d];
  }
  return affineView(v, base, axes, std::move(shape));
}

// slices() of a one-element tensor by intervals reaching past its end gives the element
// broadcast to each interval's length (docs/poplibs-from-source.md, "Session 24"): popops'
// generated element-wise vertices cut every operand by the output's regions, the
// one-element scale of `x * scale` too, and only count the result's elements (the scalar
// itself is connected whole); Poplar accepts that. Every other slice stays range-checked:
// slice() of any tensor, and slices() of a tensor of more than one element.
std::vector<Tensor> Tensor::slices(ArrayRef<Interval> intervals, unsigned dimension) const {
  std::vector<Tensor> out;
  out.reserve(intervals.size());
  const bool oneElement = valid() && numElements() == 1 && dimension < rank();
  for (const Interval &i : intervals) {
    if (oneElement && i.begin() <= i.end() && i.end() > 1)
      out.push_back(i.size() ? broadcast(static_cast<unsigned>(i.size()), dimension)
                             : slice(0, 0, dimension));
    else
      out.push_back(slice(i, dimension));
  }
  return out;
}

std::vector<Tensor> Tensor::slices(const std::vector<std::vector<Interval>> &intervals,
                                   unsigned dimension) const {
  std::vector<Tensor> out;
  out.reserve(intervals.size());
  for (const auto &group : intervals) {
    if (group.empty()) {
      out.push_back(slice(0, 0, dimension));
      continue;
    }
    std::vector<Tensor> parts = slices(ArrayRef<Interval>(group), dimension);
    out.push_back(concat(parts, dimension));
  }
  return out;
}

std::vector<Tensor> Tensor::slices(ArrayRef<unsigned> indices, unsigned dimension) const {
  std::vector<Tensor> out;
  out.reserve(indices.size());
  for (unsigned i : indices)
    out.push_back(slice(i, std::size_t(i) + 1, dimension));
  return out;
}

Tensor Tensor::index(ArrayRef<std::size_t> indices) const {
  const TensorView &v = checkedView(impl_, "index()");
  if (indices.size() > v.shape.size())
    throw index_error("index(" + listString(indices) + "): more indices than dimensions of " + about(v));
  auto axes = identityAxes(v);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < indices.size(); ++d) {
    if (indices[d] >= v.shape[d])
      throw index_error("index(" + listString(indices) + "): index " + std::to_string(indices[d]) +
                        " is out of range for " + about(v) + " in dimension " + std::to_string(d));
    base += static_cast<std::int64_t>(indices[d]) * axes[d].stride;
  }
  aspen::ir::Shape shape(v.shape.begin() + static_cast<std::ptrdiff_t>(indices.size()), v.shape.end());
  // An index prefix picks one run of positions: usually a run of one segment.
  if (Tensor t; runView(v, static_cast<std::uint64_t>(base), product(shape, 0, shape.size()), shape, t))
    return t;
  axes.erase(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(indices.size()));
  return affineView(v, base, axes, std::move(shape));
}

Tensor Tensor::flatten() const {
  const TensorView &v = checkedView(impl_, "flatten()");
  if (v.shape.size() == 1)
    return *this; // views are immutable: share it
  return derive(v, {v.numElements()}, v.segments);
}

Tensor Tensor::flatten(unsigned dimBegin, unsigned dimEnd) const {
  const TensorView &v = checkedView(impl_, "flatten()");
  if (dimBegin > dimEnd || dimEnd > v.shape.size())
    throw index_error("flatten(" + std::to_string(dimBegin) + ", " + std::to_string(dimEnd) +
                      "): dimension range is out of range for " + about(v) + " (rank " +
                      std::to_string(v.shape.size()) + ")");
  std::vector<std::size_t> shape(v.shape.begin(), v.shape.begin() + dimBegin);
  shape.push_back(product(v.shape, dimBegin, dimEnd));
  shape.insert(shape.end(), v.shape.begin() + dimEnd, v.shape.end());
  return derive(v, std::move(shape), v.segments);
}

Tensor Tensor::reshape(ArrayRef<std::size_t> newShape) const {
  const TensorView &v = checkedView(impl_, "reshape()");
  std::vector<std::size_t> shape = newShape.vec();
  const std::uint64_t n = checkedViewSize(shape, v.elementType, v, "reshape(" + listString(newShape) + ")");
  if (n != v.numElements())
    throw tensor_creation_error("reshape(" + listString(newShape) + ") of " + about(v) + ": " +
                                std::to_string(n) + " elements requested, the tensor has " +
                                std::to_string(v.numElements()));
  return derive(v, std::move(shape), v.segments);
}

Tensor Tensor::reshapePartial(unsigned beginIndex, unsigned endIndex, ArrayRef<std::size_t> newDims) const {
  const TensorView &v = checkedView(impl_, "reshapePartial()");
  const std::string operation = "reshapePartial(" + std::to_string(beginIndex) + ", " +
                                std::to_string(endIndex) + ", " + listString(newDims) + ")";
  if (beginIndex > endIndex || endIndex > v.shape.size())
    throw index_error(operation + ": dimension range is out of range for " + about(v) + " (rank " +
                      std::to_string(v.shape.size()) + ")");
  const std::vector<std::size_t> dims = newDims.vec();
  const std::uint64_t requested = checkedViewSize(dims, v.elementType, v, operation);
  if (requested != product(v.shape, beginIndex, endIndex))
    throw tensor_creation_error(operation + " of " + about(v) + ": " + std::to_string(requested) +
                                " elements requested for " +
                                std::to_string(product(v.shape, beginIndex, endIndex)));
  std::vector<std::size_t> shape(v.shape.begin(), v.shape.begin() + beginIndex);
  shape.insert(shape.end(), dims.begin(), dims.end());
  shape.insert(shape.end(), v.shape.begin() + endIndex, v.shape.end());
  return derive(v, std::move(shape), v.segments);
}

Tensor Tensor::transpose() const {
  const TensorView &v = checkedView(impl_, "transpose()");
  if (v.shape.size() != 2)
    throw index_error("transpose() needs a 2-D tensor, " + about(v) + " has rank " +
                      std::to_string(v.shape.size()));
  return shuffle(v, {1, 0});
}

Tensor Tensor::dimShuffle(ArrayRef<unsigned> permutation) const {
  const TensorView &v = checkedView(impl_, "dimShuffle()");
  const std::size_t rank = v.shape.size();
  std::vector<bool> seen(rank, false);
  bool isPermutation = permutation.size() == rank;
  for (std::size_t i = 0; isPermutation && i < permutation.size(); ++i) {
    if (permutation[i] >= rank || seen[permutation[i]])
      isPermutation = false;
    else
      seen[permutation[i]] = true;
  }
  if (!isPermutation)
    throw index_error("dimShuffle(" + listString(permutation) + ") is not a permutation of the " +
                      std::to_string(rank) + " dimensions of " + about(v));
  return shuffle(v, permutation.vec());
}

Tensor Tensor::dimShufflePartial(ArrayRef<unsigned> source, ArrayRef<unsigned> destination) const {
  const TensorView &v = checkedView(impl_, "dimShufflePartial()");
  return shuffle(v, partialPermutation(v, source, destination,
                                       "dimShufflePartial(" + listString(source) + ", " +
                                           listString(destination) + ")"));
}

Tensor Tensor::dimRoll(unsigned dimIdx, unsigned newIdx) const {
  const TensorView &v = checkedView(impl_, "dimRoll()");
  const unsigned source[] = {dimIdx}, destination[] = {newIdx};
  return shuffle(
      v, partialPermutation(v, source, destination,
                            "dimRoll(" + std::to_string(dimIdx) + ", " + std::to_string(newIdx) + ")"));
}

Tensor Tensor::expand(ArrayRef<std::size_t> indices) const {
  // As Poplar: each index is a position in this tensor's dimensions (0..rank);
  // a unit dimension is inserted before that dimension. Repeats insert several.
  const TensorView &v = checkedView(impl_, "expand()");
  const std::size_t rank = v.shape.size();
  std::vector<std::size_t> insertBefore(rank + 1, 0);
  for (std::size_t i : indices) {
    if (i > rank)
      throw index_error("expand(" + listString(indices) + "): index " + std::to_string(i) +
                        " is out of range for " + about(v) + " (rank " + std::to_string(rank) + ")");
    ++insertBefore[i];
  }
  std::vector<std::size_t> shape;
  shape.reserve(rank + indices.size());
  for (std::size_t d = 0; d <= rank; ++d) {
    shape.insert(shape.end(), insertBefore[d], 1);
    if (d < rank)
      shape.push_back(v.shape[d]);
  }
  return derive(v, std::move(shape), v.segments);
}

Tensor Tensor::squeeze(ArrayRef<std::size_t> indices) const {
  const TensorView &v = checkedView(impl_, "squeeze()");
  const std::size_t rank = v.shape.size();
  std::vector<bool> remove(rank, false);
  for (std::size_t i : indices) {
    if (i >= rank)
      throw index_error("squeeze(" + listString(indices) + "): dimension " + std::to_string(i) +
                        " is out of range for " + about(v) + " (rank " + std::to_string(rank) + ")");
    if (v.shape[i] != 1)
      throw index_error("squeeze(" + listString(indices) + "): dimension " + std::to_string(i) + " of " +
                        about(v) + " has size " + std::to_string(v.shape[i]) + ", not 1");
    remove[i] = true;
  }
  std::vector<std::size_t> shape;
  for (std::size_t d = 0; d < rank; ++d)
    if (!remove[d])
      shape.push_back(v.shape[d]);
  return derive(v, std::move(shape), v.segments);
}

Tensor Tensor::subSample(unsigned stride, unsigned dimension) const {
  const TensorView &v = checkedView(impl_, "subSample()");
  const std::string operation =
      "subSample(" + std::to_string(stride) + ", " + std::to_string(dimension) + ")";
  checkDimension(v, dimension, operation);
  if (stride == 0)
    throw index_error(operation + ": stride 0 is not allowed, for " + about(v));
  auto axes = identityAxes(v);
  auto shape = v.shape;
  shape[dimension] = (shape[dimension] + stride - 1) / stride;
  axes[dimension] = Axis{shape[dimension], axes[dimension].stride * static_cast<std::int64_t>(stride)};
  return affineView(v, 0, axes, std::move(shape));
}

Tensor Tensor::broadcast(unsigned N, unsigned dimension) const {
  const TensorView &v = checkedView(impl_, "broadcast()");
  checkDimension(v, dimension, "broadcast(" + std::to_string(N) + ", " + std::to_string(dimension) + ")");
  // Repeating the whole tensor N times along `dimension` = an extra outer axis of
  // stride 0 just before it.
  auto axes = identityAxes(v);
  axes.insert(axes.begin() + dimension, Axis{N, 0});
  auto shape = v.shape;
  checkedViewSize({v.numElements(), N}, v.elementType, v,
                  "broadcast(" + std::to_string(N) + ", " + std::to_string(dimension) + ")");
  shape[dimension] *= N;
  return affineView(v, 0, axes, std::move(shape));
}

Tensor Tensor::upsample(unsigned scale, unsigned dimension, UpsampleMethod method) const {
  const TensorView &v = checkedView(impl_, "upsample()");
  checkDimension(v, dimension, "upsample(" + std::to_string(scale) + ", " + std::to_string(dimension) + ")");
  (void)method; // REPEAT is the only method
  // Each index repeated `scale` times = an extra inner axis of stride 0 just after it.
  auto axes = identityAxes(v);
  axes.insert(axes.begin() + dimension + 1, Axis{scale, 0});
  auto shape = v.shape;
  checkedViewSize({v.numElements(), scale}, v.elementType, v,
                  "upsample(" + std::to_string(scale) + ", " + std::to_string(dimension) + ")");
  shape[dimension] *= scale;
  return affineView(v, 0, axes, std::move(shape));
}

Tensor Tensor::reverse(unsigned dimension) const {
  const TensorView &v = checkedView(impl_, "reverse()");
  checkDimension(v, dimension, "reverse(" + std::to_string(dimension) + ")");
  auto axes = identityAxes(v);
  std::int64_t base = 0;
  if (v.shape[dimension] > 0)
    base = static_cast<std::int64_t>(v.shape[dimension] - 1) * axes[dimension].stride;
  axes[dimension].stride = -axes[dimension].stride;
  return affineView(v, base, axes, v.shape);
}

Tensor Tensor::reinterpret(const Type &type) const {
  const TensorView &v = checkedView(impl_, "reinterpret()");
  if (!type.valid() || type.size() == 0)
    throw type_error("reinterpret of " + about(v) + " (" + std::string(v.elementType.toString()) +
                     ") to an unknown type");
  const std::uint64_t oldSize = v.elementType.size(), newSize = type.size();
  const std::string operation = "reinterpret of " + about(v) + " (" + std::string(v.elementType.toString()) +
                                ", " + std::to_string(oldSize) + " bytes) as " +
                                std::string(type.toString()) + " (" + std::to_string(newSize) + " bytes)";
  if (oldSize == newSize)
    return derive(v, aspen::ir::Shape(v.shape), SegmentList(v.segments), type);
  // The innermost dimension is rescaled; the bytes stay where they are.
  auto shape = v.shape;
  if (shape.empty()) {
    if (oldSize % newSize != 0)
      throw type_error(operation + ": a scalar of " + std::to_string(oldSize) +
                       " bytes does not hold whole " + std::string(type.toString()) + " elements");
    shape.push_back(oldSize / newSize);
  } else {
    const std::uint64_t rowBytes = shape.back() * oldSize;
    if (rowBytes % newSize != 0)
      throw type_error(operation + ": the innermost dimension of " + std::to_string(rowBytes) +
                       " bytes is not a multiple of " + std::to_string(newSize) + " bytes");
    shape.back() = rowBytes / newSize;
  }
  SegmentBuilder builder;
  std::uint64_t streamOffset = 0;
  for (const auto &run : aspen::ir::toByteRuns(v)) {
    if (run.byteBegin % newSize != 0 || run.bytes % newSize != 0)
      throw type_error(operation + ": the elements from byte " + std::to_string(streamOffset) +
                       " of the tensor are not contiguous and " + std::to_string(newSize) +
                       "-byte aligned in " + aspen::ir::tensorName(v));
    builder.append(run.var, static_cast<std::int64_t>(run.byteBegin / newSize), 1, run.bytes / newSize);
    streamOffset += run.bytes;
  }
  return derive(v, std::move(shape), builder.list(), type);
}

// ---- free functions -----------------------------------------------------------------

Tensor concat(ArrayRef<Tensor> ts, unsigned dimension) {
  if (ts.empty())
    throw index_error("concat of an empty list of tensors");
  std::vector<const TensorView *> views;
  views.reserve(ts.size());
  for (const Tensor &t : ts) {
    if (!t.valid())
      throw poplar_error("concat of an invalid (default-constructed) tensor");
    views.push_back(&t.getImpl());
  }
  const TensorView &first = *views[0];
  const std::string operation = "concat along dimension " + std::to_string(dimension);
  checkDimension(first, dimension, operation);
  std::vector<std::size_t> shape = first.shape;
  shape[dimension] = 0;
  for (const TensorView *v : views) {
    if (!sameGraph(*v, first))
      throw index_error(operation + " of tensors from different graphs: " + about(first) + " and " +
                        about(*v));
    if (v->elementType != first.elementType)
      throw index_error(operation + " of tensors of different element types: " + about(first) + " is " +
                        std::string(first.elementType.toString()) + ", " + about(*v) + " is " +
                        std::string(v->elementType.toString()));
    bool sameShape = v->shape.size() == first.shape.size();
    for (std::size_t d = 0; sameShape && d < first.shape.size(); ++d)
      sameShape = d == dimension || v->shape[d] == first.shape[d];
    if (!sameShape)
      throw index_error(operation + " of tensors whose other dimensions differ: " + about(first) + " and " +
                        about(*v));
    shape[dimension] += v->shape[dimension];
  }
  if (views.size() == 1)
    return ts[0];

  // Row-major: for each index of the outer dimensions, a slab of each tensor in turn.
  SegmentBuilder builder;
  const std::uint64_t outer = product(first.shape, 0, dimension);
  if (outer == 1) {
    for (const TensorView *v : views)
      builder.appendAll(*v->segments);
  } else if (outer > 0) {
    std::vector<SegmentGatherer> gatherers;
    std::vector<std::uint64_t> slabs;
    for (const TensorView *v : views) {
      gatherers.emplace_back(*v->segments);
      slabs.push_back(product(v->shape, dimension, v->shape.size()));
    }
    for (std::uint64_t o = 0; o < outer; ++o)
      for (std::size_t i = 0; i < views.size(); ++i)
        if (slabs[i] > 0)
          gatherers[i].pick(o * slabs[i], slabs[i], 1, builder);
  }
  return derive(first, std::move(shape), builder.list());
}

Tensor concat(const Tensor &first, const Tensor &second, unsigned dimension) {
  const Tensor both[] = {first, second};
  return concat(ArrayRef<Tensor>(both), dimension);
}

Tensor append(const Tensor &first, const Tensor &second, unsigned dimension) {
  return concat(first, second.expand({dimension}), dimension);
}

Tensor append(const Tensor &first, const Tensor &second) {
  return append(first, second, 0);
}

bool operator==(const Tensor &a, const Tensor &b) {
  if (!a.valid() || !b.valid())
    return a.valid() == b.valid();
  const TensorView &x = a.getImpl(), &y = b.getImpl();
  if (x.shape != y.shape || x.elementType != y.elementType || !sameGraph(x, y))
    return false;
  return x.segments == y.segments || aspen::ir::sameElements(x.segments, y.segments);
}

bool operator!=(const Tensor &a, const Tensor &b) {
  return !(a == b);
}

std::ostream &operator<<(std::ostream &os, const Tensor &t) {
  return os << t.getDebugStr();
}

} // namespace poplar
