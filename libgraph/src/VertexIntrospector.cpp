// Copyright (c) Aspen contributors.
// Read-only views of a vertex's fields for perf estimators (PerfEstimateFunc).
#include "poplar/VertexIntrospector.hpp"

#include "ir/GraphData.hpp"
#include "poplar/exceptions.hpp"

#include <cstring>
#include <optional>

namespace poplar {

using aspen::ir::FieldInfo;
using aspen::ir::FieldShape;
using aspen::ir::FieldValue;
using aspen::ir::Layout;

namespace {

const FieldInfo &infoOf(const aspen::ir::GraphData *graph, unsigned vertex, unsigned field) {
  const auto &v = graph->vertices[vertex];
  return graph->vertexTypes[v.type].fields[field];
}

const FieldValue &valueOf(const aspen::ir::GraphData *graph, unsigned vertex, unsigned field) {
  return graph->vertices[vertex].fields[field];
}

bool isIndexed(std::size_t index) {
  return index != ~std::size_t(0);
}

layout::Vector toProfilerLayout(Layout l) {
  switch (l) {
  case Layout::Span:
    return layout::Vector::Span;
  case Layout::ShortSpan:
    return layout::Vector::ShortSpan;
  case Layout::OnePtr:
  case Layout::CompactPtr:
    return layout::Vector::OnePtr;
  case Layout::ScaledPtr32:
    return layout::Vector::ScaledPtr32;
  case Layout::ScaledPtr64:
    return layout::Vector::ScaledPtr64;
  case Layout::ScaledPtr128:
    return layout::Vector::ScaledPtr128;
  default:
    return layout::Vector::NotAVector;
  }
}

// The edge a non-state field view reads its initial values from: the indexed entry of a
// list field, else the field's (first) edge; none when not connected.
std::optional<aspen::ir::Edge> edgeOf(const aspen::ir::GraphData *graph, unsigned vertex, unsigned field,
                                      std::size_t index) {
  const auto edges = valueOf(graph, vertex, field).edges();
  const std::size_t i = isIndexed(index) ? index : 0;
  if (i >= edges.size())
    return std::nullopt;
  aspen::ir::Edge e = edges[i];
  if (!e.connected())
    return std::nullopt;
  return e;
}

} // namespace

FieldData::FieldData(const aspen::ir::GraphData *graph, unsigned vertex, unsigned field, std::size_t index)
    : graph_(graph), vertex_(vertex), field_(field), index_(index) {}

std::size_t FieldData::size() const {
  const FieldInfo &info = infoOf(graph_, vertex_, field_);
  const FieldValue &value = valueOf(graph_, vertex_, field_);
  if (isIndexed(index_))
    return getSizeAtIndex(index_);
  switch (info.shape) {
  case FieldShape::Scalar:
    return 1;
  case FieldShape::Vector:
    if (info.kind == aspen::ir::FieldKind::State)
      return value.stateCount;
    return value.edges().empty() ? 0 : value.edges().front().numElements();
  case FieldShape::VectorOfEdges:
  case FieldShape::VectorOfScalarEdges:
    return value.declaredSize != FieldValue::kNoDeclaredSize ? value.declaredSize : value.edges().size();
  }
  return 0;
}

FieldData FieldData::operator[](std::size_t i) const {
  return FieldData(graph_, vertex_, field_, i);
}

std::size_t FieldData::getSizeAtIndex(std::size_t i) const {
  const FieldValue &value = valueOf(graph_, vertex_, field_);
  const auto edges = value.edges();
  if (i >= edges.size() || !edges[i].connected())
    return 0;
  return edges[i].numElements();
}

layout::Vector FieldData::getProfilerVectorLayout(std::size_t nestingLevel) const {
  const FieldInfo &info = infoOf(graph_, vertex_, field_);
  switch (info.shape) {
  case FieldShape::Scalar:
    return layout::Vector::NotAVector;
  case FieldShape::Vector:
    return nestingLevel == 0 ? toProfilerLayout(info.layout) : layout::Vector::NotAVector;
  case FieldShape::VectorOfEdges:
    return nestingLevel == 0   ? toProfilerLayout(info.outerLayout)
           : nestingLevel == 1 ? toProfilerLayout(info.layout)
                               : layout::Vector::NotAVector;
  case FieldShape::VectorOfScalarEdges:
    return nestingLevel == 0 ? toProfilerLayout(info.outerLayout) : layout::Vector::NotAVector;
  }
  return layout::Vector::NotAVector;
}

layout::VectorList FieldData::getProfilerVectorListLayout() const {
  const FieldInfo &info = infoOf(graph_, vertex_, field_);
  switch (info.outerLayout) {
  case Layout::OnePtr:
    return layout::VectorList::OnePtr;
  case Layout::ScaledPtr32:
    return layout::VectorList::ScaledPtr32;
  case Layout::ScaledPtr64:
    return layout::VectorList::ScaledPtr64;
  case Layout::ScaledPtr128:
    return layout::VectorList::ScaledPtr128;
  case Layout::DeltaN:
    return layout::VectorList::DeltaN;
  case Layout::DeltaNElements:
    return layout::VectorList::DeltaNElements;
  default:
    return layout::VectorList::NotAVector;
  }
}

void FieldData::readInitialBytes(void *dst, std::size_t bytes, std::size_t index) const {
  const FieldInfo &info = infoOf(graph_, vertex_, field_);
  const FieldValue &value = valueOf(graph_, vertex_, field_);
  std::memset(dst, 0, bytes);
  if (info.kind != aspen::ir::FieldKind::State) {
    // An edge: element `index` of the connected tensor, from its variable's initial value
    // (a constant's values, or setInitialValue's); zero when the variable has none. In a
    // list of scalar edges (`Vector<Input<T>>`) as a whole, value `index` is edge `index`'s.
    if (info.shape == FieldShape::VectorOfScalarEdges && !isIndexed(index_)) {
      FieldData(graph_, vertex_, field_, index).readInitialBytes(dst, bytes, 0);
      return;
    }
    const auto edge = edgeOf(graph_, vertex_, field_, index_);
    if (!edge || index >= edge->numElements())
      return;
    const std::size_t elementSize = edge->elementType.size();
    std::uint64_t skipped = 0;
    for (const aspen::ir::Segment &seg : edge->segments) {
      if (index >= skipped + seg.count) {
        skipped += seg.count;
        continue;
      }
      const auto it = graph_->initialValues.find(seg.var);
      if (it == graph_->initialValues.end())
        return;
      const std::int64_t element = seg.start + static_cast<std::int64_t>(index - skipped) * seg.stride;
      const std::size_t offset = static_cast<std::size_t>(element) * elementSize;
      if (element < 0 || offset + elementSize > it->second.size())
        return;
      std::memcpy(dst, it->second.data() + offset, bytes < elementSize ? bytes : elementSize);
      return;
    }
    return;
  }
  const std::size_t elementSize = info.elementType.valid() ? info.elementType.size() : 0;
  const std::size_t offset = index * elementSize;
  const auto state = value.stateBytes();
  if (elementSize == 0 || offset + elementSize > state.size())
    return;
  std::memcpy(dst, state.data() + offset, bytes < elementSize ? bytes : elementSize);
}

std::size_t FieldData::stateCount() const {
  const FieldInfo &info = infoOf(graph_, vertex_, field_);
  if (info.shape == FieldShape::VectorOfScalarEdges && !isIndexed(index_))
    return size(); // one value per scalar edge
  if (info.kind != aspen::ir::FieldKind::State) {
    const auto edge = edgeOf(graph_, vertex_, field_, index_);
    return edge ? static_cast<std::size_t>(edge->numElements()) : 0;
  }
  return valueOf(graph_, vertex_, field_).stateCount;
}

std::size_t FieldData::rowCount(const char *what) const {
  const FieldInfo &info = infoOf(graph_, vertex_, field_);
  if (info.shape == FieldShape::VectorOfEdges && !isIndexed(index_))
    return size();
  const std::string typeName = graph_->vertexTypes[graph_->vertices[vertex_].type].name;
  throw type_error(std::string("FieldData::") + what + ": field '" + info.name +
                   (isIndexed(index_) ? "[" + std::to_string(index_) + "]" : std::string()) +
                   "' of vertex type '" + typeName +
                   "' is not a 2-D field (Vector<Input<Vector<T>>> or VectorList<T>); read its "
                   "values with getInitialValues<T>");
}

FieldData VertexIntrospector::getFieldInfo(const std::string &name) const {
  const auto &type = graph_->vertexTypes[graph_->vertices[vertex_].type];
  const int index = type.fieldIndex(name);
  if (index < 0)
    throw unknown_field("Vertex type '" + type.name + "' has no field '" + name + "'");
  return FieldData(graph_, vertex_, static_cast<unsigned>(index), ~std::size_t(0));
}

std::string VertexIntrospector::getVertexTypeName() const {
  return graph_->vertexTypes[graph_->vertices[vertex_].type].name;
}

} // namespace poplar
