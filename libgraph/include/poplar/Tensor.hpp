// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_TENSOR_HPP
#define POPLAR_TENSOR_HPP

#include <poplar/ArrayRef.hpp>
#include <poplar/Interval.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace aspen {
namespace ir {
struct TensorView;
} // namespace ir
} // namespace aspen

namespace poplar {

enum class UpsampleMethod { REPEAT };

/// A region of one variable: its index and an interval of its elements.
class VariableRef {
public:
  VariableRef() : id_(~0u) {}
  explicit VariableRef(unsigned id) : id_(id) {}
  unsigned getId() const { return id_; }
  bool operator==(const VariableRef &o) const { return id_ == o.id_; }
  bool operator!=(const VariableRef &o) const { return id_ != o.id_; }
  bool operator<(const VariableRef &o) const { return id_ < o.id_; }

private:
  unsigned id_;
};

class VariableInterval {
public:
  VariableInterval() {}
  VariableInterval(VariableRef var, Interval interval) : var(var), interval(interval) {}
  VariableRef var;
  Interval interval;
};

/// Same variable and same interval of it (lists of them from `getVarRegions` compare
/// element by element).
inline bool operator==(const VariableInterval &a, const VariableInterval &b) {
  return a.var == b.var && a.interval == b.interval;
}
inline bool operator!=(const VariableInterval &a, const VariableInterval &b) {
  return !(a == b);
}
/// Ordered by variable, then by interval.
inline bool operator<(const VariableInterval &a, const VariableInterval &b) {
  return a.var < b.var || (a.var == b.var && a.interval < b.interval);
}
/// `variable 3[0, 12)`: the variable's id and the interval, as `Interval` prints.
std::ostream &operator<<(std::ostream &os, const VariableInterval &r);

/// A view of elements of one or more graph variables, with a shape and an
/// element type. Every operation here returns a new view: nothing is copied.
/// Views cost O(rank + regions), never O(elements), except where the view
/// itself scatters elements (a transpose of a dense matrix has one region per
/// row).
class Tensor {
public:
  /// An invalid tensor; `valid()` is false.
  Tensor();
  Tensor(const Tensor &);
  Tensor(Tensor &&) noexcept;
  Tensor &operator=(const Tensor &);
  Tensor &operator=(Tensor &&) noexcept;
  ~Tensor();

  // --- queries -------------------------------------------------------------
  Type elementType() const;
  std::size_t numElements() const;
  /// Size in bytes of the elements on the device.
  std::size_t numBytes() const { return numElements() * elementType().size(); }
  unsigned rank() const;
  std::vector<std::size_t> shape() const;
  std::size_t dim(unsigned i) const;
  bool valid() const;
  /// True when the tensor is one run of consecutive elements of one variable.
  bool isContiguous() const;
  /// True when some element of the variable(s) appears more than once.
  bool containsAliases() const;
  /// True when any element belongs to a constant.
  bool containsConstant() const;
  /// True when the tensor can be written by one vertex (no aliases, no constants).
  bool isParallelWriteable() const;
  /// Runs of consecutive (variable, element) pairs in row-major order, as
  /// intervals of the tensor's flattened index space.
  std::vector<Interval> getContiguousRegions() const;
  /// Runs of consecutive elements of each variable, in row-major order.
  std::vector<VariableInterval> getVarRegions() const;
  /// Writes the tensor's variable regions to `os`, one a line (`getVarRegions()` with
  /// each variable named as `getVarStr()` names it); a debugging aid.
  void outputRegions(std::ostream &os) const;
  /// True when any element of this tensor is also an element of `other`.
  bool intersectsWith(const Tensor &other) const;
  std::string getDebugStr() const;
  std::string getVarStr() const;
  std::string shortString() const;
  /// The shape as Poplar prints it: `[2,3]` (a scalar is `[]`).
  std::string shapeToString() const;

  /// When every element of this tensor belongs to a constant and all have the
  /// same value, stores that value (converted to `T`) in `*val` and returns
  /// true; otherwise returns false and leaves `*val` alone.
  /// Example: `float v; if (t.getConstantValue(&v)) ...`
  template <typename T> bool getConstantValue(T *val) const {
    static_assert(std::is_arithmetic<T>::value, "getConstantValue needs an arithmetic type");
    return getConstantValueAs(equivalent_device_type<T>().value, val);
  }

  // --- fp8 metadata (docs/fp8.md) ------------------------------------------
  /// True when the tensor's elements carry metadata: a QUARTER tensor whose
  /// variables have a QUARTER_METADATA tensor (always, for tensors the graph made).
  bool hasMetadata() const;
  /// The scalar QUARTER_METADATA tensor that holds this tensor's format and scale; an
  /// empty (invalid) Tensor for a type without metadata (float, half, ...), as Poplar.
  /// Throws poplar_error naming the tensor when a quarter tensor has none, or when its
  /// elements come from variables with different metadata tensors.
  Tensor getMetadata() const;

  // --- views ---------------------------------------------------------------
  /// Index the first dimension; a rank-1 tensor gives a scalar (shape `{}`).
  Tensor operator[](std::size_t i) const;
  Tensor slice(std::size_t begin, std::size_t end, unsigned dimension = 0) const;
  Tensor slice(const Interval &region, unsigned dimension = 0) const;
  Tensor slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const;
  std::vector<Tensor> slices(ArrayRef<Interval> intervals, unsigned dimension = 0) const;
  std::vector<Tensor> slices(const std::vector<std::vector<Interval>> &intervals,
                             unsigned dimension = 0) const;
  std::vector<Tensor> slices(ArrayRef<unsigned> indices, unsigned dimension = 0) const;
  Tensor index(ArrayRef<std::size_t> indices) const;
  Tensor flatten() const;
  Tensor flatten(unsigned dimBegin, unsigned dimEnd) const;
  Tensor reshape(ArrayRef<std::size_t> shape) const;
  Tensor reshapePartial(unsigned beginIndex, unsigned endIndex, ArrayRef<std::size_t> newDims) const;
  Tensor transpose() const;
  Tensor dimShuffle(ArrayRef<unsigned> permutation) const;
  Tensor dimShufflePartial(ArrayRef<unsigned> source, ArrayRef<unsigned> destination) const;
  Tensor dimRoll(unsigned dimIdx, unsigned newIdx = 0) const;
  Tensor expand(ArrayRef<std::size_t> indices) const;
  Tensor squeeze(ArrayRef<std::size_t> indices) const;
  Tensor subSample(unsigned stride, unsigned dimension) const;
  Tensor broadcast(unsigned N, unsigned dimension) const;
  Tensor upsample(unsigned scale, unsigned dimension, UpsampleMethod method) const;
  Tensor reverse(unsigned dimension) const;
  Tensor reinterpret(const Type &type) const;

  /// Internal: the view's representation. Not part of Poplar's API.
  const aspen::ir::TensorView &getImpl() const { return *impl_; }
  explicit Tensor(std::shared_ptr<const aspen::ir::TensorView> impl);

private:
  bool getConstantValueAs(const Type &hostType, void *val) const;
  std::shared_ptr<const aspen::ir::TensorView> impl_;
};

Tensor concat(ArrayRef<Tensor> ts, unsigned dimension = 0);
Tensor concat(const Tensor &first, const Tensor &second, unsigned dimension = 0);
Tensor append(const Tensor &first, const Tensor &second, unsigned dimension);
Tensor append(const Tensor &first, const Tensor &second);

/// Same elements of the same variables, in the same shape.
bool operator==(const Tensor &a, const Tensor &b);
bool operator!=(const Tensor &a, const Tensor &b);
std::ostream &operator<<(std::ostream &os, const Tensor &t);

} // namespace poplar

namespace std {
template <> struct hash<poplar::VariableRef> {
  std::size_t operator()(const poplar::VariableRef &v) const { return std::hash<unsigned>()(v.getId()); }
};
} // namespace std

#endif
