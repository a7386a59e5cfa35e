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
  template <typename T> std::vector<T> getInitialValues(const Target &) const {
    std::vector<T> out(stateCount());
    for (std::size_t i = 0; i < out.size(); ++i)
      readInitialBytes(&out[i], sizeof(T), i);
    return out;
  }

private:
  void readInitialBytes(void *dst, std::size_t bytes, std::size_t index) const;
  std::size_t stateCount() const;
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
