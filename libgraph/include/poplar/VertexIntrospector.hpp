// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_VERTEXINTROSPECTOR_HPP
#define POPLAR_VERTEXINTROSPECTOR_HPP

#include <poplar/Type.hpp>
#include <poplar/VectorLayout.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace aspen {
namespace ir {
struct GraphData;
} // namespace ir
} // namespace aspen

namespace poplar {

class Target;

/// One field of a vertex as seen by a perf estimator.
class FieldData {
public:
  FieldData(const aspen::ir::GraphData *graph, unsigned vertex, unsigned field, std::size_t index);
  /// Elements of a vector field, or the outer count of a 2-D field; 1 for a scalar.
  std::size_t size() const;
  /// Element `i` of a 2-D field.
  FieldData operator[](std::size_t i) const;
  std::size_t getSizeAtIndex(std::size_t i) const;
  layout::Vector getProfilerVectorLayout(std::size_t nestingLevel) const;
  layout::VectorList getProfilerVectorListLayout() const;

  template <typename T> T getInitialValue(const Target &) const {
    T v = T();
    readInitialBytes(&v, sizeof(T), 0);
    return v;
  }
  /// One value per element of a vector field (per edge of a `Vector<Input<T>>`). With
  /// `T = std::vector<U>`, the field must be 2-D (`Vector<Input<Vector<U>>>`, `VectorList<U>`):
  /// one vector per row, `size()` of them, row `i` holding `(*this)[i].getInitialValues<U>()`.
  template <typename T> std::vector<T> getInitialValues(const Target &target) const {
    return initialValues(target, static_cast<T *>(nullptr));
  }

private:
  // getInitialValues<T>: a value per element (overloads chosen by T, C++11-compatible).
  template <typename T> std::vector<T> initialValues(const Target &, T *) const {
    std::vector<T> out(stateCount());
    for (std::size_t i = 0; i < out.size(); ++i)
      readInitialBytes(&out[i], sizeof(T), i);
    return out;
  }
  // getInitialValues<std::vector<U>>: a vector per row of a 2-D field.
  template <typename U, typename A>
  std::vector<std::vector<U, A>> initialValues(const Target &target, std::vector<U, A> *) const {
    const std::size_t rows = rowCount("getInitialValues<std::vector<T>>");
    std::vector<std::vector<U, A>> out;
    out.reserve(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      const std::vector<U> row = (*this)[i].template getInitialValues<U>(target);
      out.emplace_back(row.begin(), row.end());
    }
    return out;
  }
  void readInitialBytes(void *dst, std::size_t bytes, std::size_t index) const;
  std::size_t stateCount() const;
  /// The outer count of a 2-D field; throws type_error naming the field for any other.
  std::size_t rowCount(const char *what) const;
  const aspen::ir::GraphData *graph_;
  unsigned vertex_;
  unsigned field_;
  std::size_t index_;
};

/// Read-only access to a vertex's fields for `PerfEstimateFunc`s.
class VertexIntrospector {
public:
  VertexIntrospector(const aspen::ir::GraphData *graph, unsigned vertex) : graph_(graph), vertex_(vertex) {}
  FieldData getFieldInfo(const std::string &name) const;
  /// The vertex type name, e.g. "popops::Fill<float>".
  std::string getVertexTypeName() const;

private:
  const aspen::ir::GraphData *graph_;
  unsigned vertex_;
};

} // namespace poplar

#endif
