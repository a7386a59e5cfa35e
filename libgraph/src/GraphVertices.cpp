// Copyright (c) Aspen contributors.
// The vertex half of poplar::Graph: vertices (addVertex, connect, field sizes,
// state initial values), perf estimates and vertex tile mapping. Vertex types
// are registered by Graph::addCodelets (compiler/src/codelets/GraphCodelets.cpp)
// in GraphData::vertexTypes.
#include "poplar/Graph.hpp"

#include "ir/GraphData.hpp"
#include "poplar/exceptions.hpp"
#include "util/HostConvert.hpp"
#include "util/Log.hpp"

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <ostream>
#include <unistd.h>

namespace poplar {

using aspen::ir::FieldInfo;
using aspen::ir::FieldKind;
using aspen::ir::FieldShape;
using aspen::ir::FieldValue;
using aspen::ir::GraphData;
using aspen::ir::Layout;
using aspen::ir::VarId;
using aspen::ir::VertexTypeInfo;

namespace {

// ---- vertices and fields -----------------------------------------------------------

const char *kindName(FieldKind k) {
  switch (k) {
  case FieldKind::Input:
    return "Input";
  case FieldKind::Output:
    return "Output";
  case FieldKind::InOut:
    return "InOut";
  case FieldKind::State:
    return "state";
  }
  return "?";
}

/// Up to `limit` known vertex type names, those closest to `name` first.
std::string suggestVertexTypes(const GraphData &data, const std::string &name, std::size_t limit = 5) {
  if (data.vertexTypes.empty())
    return "no codelets have been added to this graph (Graph::addCodelets)";
  const std::string base = name.substr(0, name.find('<'));
  std::vector<std::pair<int, std::string>> ranked;
  for (const VertexTypeInfo &t : data.vertexTypes) {
    const std::string tbase = t.name.substr(0, t.name.find('<'));
    std::size_t common = 0;
    while (common < tbase.size() && common < base.size() && tbase[common] == base[common])
      ++common;
    ranked.emplace_back(-(tbase == base ? 1000 : static_cast<int>(common)), t.name);
  }
  std::sort(ranked.begin(), ranked.end());
  std::string out = "known vertex types include ";
  for (std::size_t i = 0; i < ranked.size() && i < limit; ++i)
    out += (i ? ", '" : "'") + ranked[i].second + "'";
  if (ranked.size() > limit)
    out += " (" + std::to_string(ranked.size()) + " in total)";
  return out;
}

const VertexTypeInfo &findVertexType(const GraphData &data, const std::string &name) {
  auto it = data.vertexTypeByName.find(name);
  if (it == data.vertexTypeByName.end())
    throw unknown_vertex_type("Unknown vertex type '" + name + "': " + suggestVertexTypes(data, name));
  return data.vertexTypes[it->second];
}

std::string fieldList(const VertexTypeInfo &type) {
  if (type.fields.empty())
    return "it has no fields";
  std::string out = "its fields are ";
  for (std::size_t i = 0; i < type.fields.size(); ++i)
    out += (i ? ", '" : "'") + type.fields[i].name + "'";
  return out;
}

int findField(const VertexTypeInfo &type, const std::string &name) {
  const int index = type.fieldIndex(name);
  if (index < 0)
    throw unknown_field("Vertex type '" + type.name + "' has no field '" + name + "'; " + fieldList(type));
  return index;
}

/// One field of one vertex, resolved from a FieldRef.
struct FieldAccess {
  unsigned vertexId;
  aspen::ir::Vertex &vertex;
  const VertexTypeInfo &type;
  const FieldInfo &info;
  FieldValue &value;

  /// `field 'in' of vertex 3 (type 'Foo<float>')`, with `[i]` for an element.
  std::string describe(const FieldRef &ref) const {
    std::string s = std::string(info.kind == FieldKind::State ? "state" : kindName(info.kind)) + " field '" +
                    info.name + "'";
    if (ref.isIndexed())
      s += "[" + std::to_string(ref.getIndex()) + "]";
    return s + " of vertex " + std::to_string(vertexId) + " (type '" + type.name + "')";
  }
};

FieldAccess accessField(GraphData &data, const FieldRef &ref, const char *operation) {
  const unsigned id = ref.getVertex().getId();
  if (id >= data.vertices.size())
    throw graph_connection_error(std::string(operation) + ": vertex " + std::to_string(id) +
                                 " is not a vertex of this graph");
  aspen::ir::Vertex &vertex = data.vertices[id];
  const VertexTypeInfo &type = data.vertexTypes[vertex.type];
  const int index = findField(type, ref.getName());
  return FieldAccess{id, vertex, type, type.fields[static_cast<std::size_t>(index)],
                     vertex.fields[static_cast<std::size_t>(index)]};
}

std::uint64_t maxSizeForLayout(Layout layout) {
  switch (layout) {
  case Layout::ShortSpan:
    return (1u << 11) - 1; // 11-bit count
  default:
    return std::numeric_limits<std::uint32_t>::max(); // 32-bit count (or none: limited by memory)
  }
}

/// The most entries a list field (edges or state values) can have: what its
/// layout can count, and no more than one tile has bytes (each entry takes at
/// least one), so that a wild size fails here rather than in an allocation.
std::uint64_t maxFieldEntries(const GraphData &data, Layout layout) {
  return std::min<std::uint64_t>(maxSizeForLayout(layout), data.target.bytesPerTile);
}

bool isEdgeList(const FieldInfo &info) {
  return info.shape == FieldShape::VectorOfEdges || info.shape == FieldShape::VectorOfScalarEdges;
}

/// Checks that `t` may be connected to (an element of) the field: same graph,
/// same element type, not a constant for a field the vertex writes, and the size
/// the field's shape allows. `scalarEdge` is true for a single-element edge.
void checkEdgeTensor(const GraphData &data, const FieldAccess &field, const FieldRef &ref, const Tensor &t,
                     bool scalarEdge, Layout sizeLayout) {
  if (!t.valid())
    throw graph_connection_error("Cannot connect an invalid (default-constructed) tensor to " +
                                 field.describe(ref));
  const auto &view = t.getImpl();
  if (view.graph != data.id())
    throw graph_connection_error("Cannot connect tensor " + t.shortString() + " to " + field.describe(ref) +
                                 ": the tensor belongs to another graph");
  const FieldInfo &info = field.info;
  if (!info.elementType.valid()) // never skip the type check: such a field holds no tensor elements
    throw graph_connection_error("Cannot connect tensor " + t.shortString() + " to " + field.describe(ref) +
                                 ": the field's type is not a Poplar element type, so no tensor can be "
                                 "connected to it");
  if (t.elementType() != info.elementType)
    throw graph_connection_error("Cannot connect tensor " + t.shortString() + " to " + field.describe(ref) +
                                 ": the field's element type is " + std::string(info.elementType.toString()) +
                                 " but the tensor's is " + std::string(t.elementType().toString()));
  if (info.kind == FieldKind::Output || info.kind == FieldKind::InOut) {
    for (const auto &s : *view.segments)
      if (data.variables[s.var].isConstant)
        throw graph_connection_error(
            "Cannot connect tensor " + t.shortString() + " to " + field.describe(ref) +
            ": the tensor is (part of) a constant, and a vertex cannot write a constant");
  }
  const std::size_t n = t.numElements();
  if (scalarEdge && n != 1)
    throw graph_connection_error("Cannot connect tensor " + t.shortString() + " to " + field.describe(ref) +
                                 ": the field holds a single element, but the tensor has " +
                                 std::to_string(n) + " elements");
  if (!scalarEdge && n > maxSizeForLayout(sizeLayout))
    throw graph_connection_error("Cannot connect tensor " + t.shortString() + " to " + field.describe(ref) +
                                 ": " + std::to_string(n) +
                                 " elements is more than the field's layout allows (" +
                                 std::to_string(maxSizeForLayout(sizeLayout)) + ")");
}

/// Rejects a tensor connection to a state field.
void requireEdge(const FieldAccess &field, const FieldRef &ref) {
  if (field.info.kind == FieldKind::State)
    throw graph_connection_error("Cannot connect a tensor to " + field.describe(ref) +
                                 ": it is not an edge; set it with Graph::setInitialValue");
}

} // namespace

bool Graph::hasCodelet(StringRef codeletName) const {
  return data_ && data_->vertexTypeByName.count(codeletName.str()) != 0;
}

// ---- vertices ----------------------------------------------------------------------

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addVertex");
  if (cs.getId() >= data_->computeSets.size())
    throw graph_object_creation_error("addVertex('" + vertexType.str() + "'): compute set " +
                                      std::to_string(cs.getId()) + " is not a compute set of this graph");
  std::uint32_t typeId = data_->lastAddedVertexType;
  if (typeId >= data_->vertexTypes.size() || !(vertexType == StringRef(data_->vertexTypes[typeId].name))) {
    const std::string name = vertexType.str();
    if (name.rfind("poplar_rt::", 0) == 0 && !data_->vertexTypeByName.count(name))
      if (aspen::ir::BuiltinVertexLoader load = aspen::ir::builtinVertexLoader())
        load(*this);              // poplar_rt.gp, from the compiler module (it compiles and loads codelets)
    findVertexType(*data_, name); // throws for an unknown name
    typeId = data_->vertexTypeByName.find(name)->second;
    data_->lastAddedVertexType = typeId;
  }
  const VertexTypeInfo &type = data_->vertexTypes[typeId];
  const std::uint32_t id = data_->vertices.add(typeId, cs.getId(), type.fields.size());
  data_->computeSets[cs.getId()].vertices.push_back(id);
  return VertexRef(this, id);
}

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType, ArrayRef<ConnectionDesc> connections) {
  VertexRef v = addVertex(cs, vertexType);
  for (const ConnectionDesc &c : connections) {
    if (c.valueType.valid())
      connectScalarValue(v[c.field], c.valueType, c.valueBytes);
    else if (c.isVector)
      connect(v[c.field], ArrayRef<Tensor>(c.tensors));
    else if (c.tensors.size() == 1)
      connect(v[c.field], c.tensors.front());
    else
      throw graph_connection_error("addVertex(" + vertexType.str() + "): the connection of field '" +
                                   c.field + "' is not a list but holds " + std::to_string(c.tensors.size()) +
                                   " tensors");
  }
  return v;
}

void Graph::connect(FieldRef field, const Tensor &tensor) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::connect");
  FieldAccess f = accessField(*data_, field, "connect");
  requireEdge(f, field);
  const FieldInfo &info = f.info;
  if (field.isIndexed()) {
    if (!isEdgeList(info))
      throw graph_connection_error("Cannot connect to " + f.describe(field) +
                                   ": the field is not a vector of edges, so it has no elements to index");
    const std::size_t i = field.getIndex();
    if (f.value.declaredSize != FieldValue::kNoDeclaredSize && i >= f.value.declaredSize)
      throw graph_connection_error("Cannot connect to " + f.describe(field) + ": the field's size is " +
                                   std::to_string(f.value.declaredSize) + " (Graph::setFieldSize)");
    if (i >= maxFieldEntries(*data_, info.outerLayout))
      throw graph_connection_error("Cannot connect to " + f.describe(field) +
                                   ": the field can hold at most " +
                                   std::to_string(maxFieldEntries(*data_, info.outerLayout)) + " edges");
    const bool scalar = info.shape == FieldShape::VectorOfScalarEdges;
    checkEdgeTensor(*data_, f, field, tensor, scalar, info.layout);
    f.value.setListEdge(i, aspen::ir::Edge::of(tensor));
    f.value.set = true;
    return;
  }
  switch (info.shape) {
  case FieldShape::Scalar:
    checkEdgeTensor(*data_, f, field, tensor, true, info.layout);
    f.value.setEdge(tensor.getImpl(), false);
    break;
  case FieldShape::Vector:
    checkEdgeTensor(*data_, f, field, tensor, false, info.layout);
    f.value.setEdge(tensor.getImpl(), true);
    break;
  case FieldShape::VectorOfEdges: {
    // A tensor of rank >= 2 gives one edge per row.
    if (tensor.valid() && tensor.rank() < 2)
      throw graph_connection_error("Cannot connect tensor " + tensor.shortString() + " to " +
                                   f.describe(field) +
                                   ": a vector of edges takes a list of tensors (connect(field, "
                                   "std::vector<Tensor>)) or a tensor of rank 2 or more");
    std::vector<Tensor> rows;
    for (std::size_t r = 0; tensor.valid() && r < tensor.dim(0); ++r)
      rows.push_back(tensor[r]);
    connect(field, ArrayRef<Tensor>(rows));
    return;
  }
  case FieldShape::VectorOfScalarEdges: {
    // One edge per element.
    std::vector<Tensor> elements;
    if (tensor.valid()) {
      const Tensor flat = tensor.flatten();
      for (std::size_t k = 0; k < flat.numElements(); ++k)
        elements.push_back(flat.slice(k, k + 1));
    }
    connect(field, ArrayRef<Tensor>(elements));
    return;
  }
  }
  f.value.set = true;
}

void Graph::connectScalarValue(FieldRef field, const Type &hostType, const void *value) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::connectScalarValue");
  FieldAccess f = accessField(*data_, field, "connect");
  requireEdge(f, field);
  const FieldInfo &info = f.info;
  if (info.kind != FieldKind::Input)
    throw graph_connection_error("Cannot connect a value to " + f.describe(field) +
                                 ": only an input field can be connected to a constant");
  const bool scalarEdge =
      field.isIndexed() ? info.shape == FieldShape::VectorOfScalarEdges : info.shape == FieldShape::Scalar;
  const bool vectorEdge =
      field.isIndexed() ? info.shape == FieldShape::VectorOfEdges : info.shape == FieldShape::Vector;
  if (!scalarEdge && !vectorEdge)
    throw graph_connection_error("Cannot connect a value to " + f.describe(field) +
                                 ": it is a list of edges; connect a value to each element (field[i])");
  const std::vector<std::size_t> shape =
      scalarEdge ? std::vector<std::size_t>{} : std::vector<std::size_t>{1};
  const Tensor c = addConstantFromHost(info.elementType, shape, hostType, value, 1, true,
                                       DebugContext("<const>/" + info.name));
  const VarId var = c.getImpl().segments->front().var;
  if (f.vertex.tile >= 0)
    data_->variables[var].mapping.assign(1,
                                         aspen::ir::TileInterval{0, data_->variables[var].numElements,
                                                                 static_cast<std::uint32_t>(f.vertex.tile)});
  else
    data_->vertexScalarConstants[f.vertexId].push_back(var);
  connect(field, c);
}

void Graph::connect(FieldRef field, ArrayRef<Tensor> tensors) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::connect");
  FieldAccess f = accessField(*data_, field, "connect");
  requireEdge(f, field);
  const FieldInfo &info = f.info;
  if (field.isIndexed())
    throw graph_connection_error("Cannot connect a list of tensors to " + f.describe(field) +
                                 ": connect a list to the whole field");
  if (!isEdgeList(info)) {
    // A single edge: the tensors are joined end to end.
    if (tensors.empty())
      throw graph_connection_error("Cannot connect an empty list of tensors to " + f.describe(field));
    std::vector<Tensor> flat;
    for (const Tensor &t : tensors) {
      if (!t.valid())
        throw graph_connection_error("Cannot connect an invalid (default-constructed) tensor to " +
                                     f.describe(field));
      flat.push_back(t.flatten());
    }
    connect(field, flat.size() == 1 ? flat.front() : concat(ArrayRef<Tensor>(flat)));
    return;
  }
  const bool scalar = info.shape == FieldShape::VectorOfScalarEdges;
  if (tensors.size() > maxSizeForLayout(info.outerLayout))
    throw graph_connection_error("Cannot connect " + std::to_string(tensors.size()) + " tensors to " +
                                 f.describe(field) + ": its layout allows at most " +
                                 std::to_string(maxSizeForLayout(info.outerLayout)));
  std::vector<aspen::ir::Edge> edges;
  edges.reserve(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    checkEdgeTensor(*data_, f, FieldRef(field.getVertex(), field.getName(), i), tensors[i], scalar,
                    info.layout);
    edges.push_back(aspen::ir::Edge::of(tensors[i]));
  }
  f.value.setEdgeList(std::move(edges));
  f.value.declaredSize = static_cast<std::uint32_t>(tensors.size()); // <= maxSizeForLayout
  f.value.set = true;
}

void Graph::setFieldSize(FieldRef field, std::size_t size) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::setFieldSize");
  FieldAccess f = accessField(*data_, field, "setFieldSize");
  const FieldInfo &info = f.info;
  if (field.isIndexed())
    throw graph_connection_error("setFieldSize: " + f.describe(field) + " is an element, not a field");
  if (isEdgeList(info)) {
    if (size > maxFieldEntries(*data_, info.outerLayout))
      throw graph_connection_error("setFieldSize(" + std::to_string(size) + "): " + f.describe(field) +
                                   " allows at most " +
                                   std::to_string(maxFieldEntries(*data_, info.outerLayout)));
    f.value.declaredSize = static_cast<std::uint32_t>(size); // <= maxFieldEntries
    f.value.resizeEdgeList(size);
    return;
  }
  if (info.kind == FieldKind::State && info.shape == FieldShape::Vector) {
    if (size > maxFieldEntries(*data_, info.layout))
      throw graph_connection_error("setFieldSize(" + std::to_string(size) + "): " + f.describe(field) +
                                   " allows at most " + std::to_string(maxFieldEntries(*data_, info.layout)));
    f.value.declaredSize = static_cast<std::uint32_t>(size); // <= maxFieldEntries
    f.value.resizeStateBytes(size * info.elementType.size());
    f.value.stateCount = static_cast<std::uint32_t>(size) & FieldValue::kMaxStateCount;
    return;
  }
  throw graph_connection_error("setFieldSize: " + f.describe(field) +
                               " has no size to set (only vectors of edges and state vectors have one)");
}

std::size_t Graph::getFieldSize(FieldRef field) const {
  getTarget();
  FieldAccess f = accessField(*data_, field, "getFieldSize");
  const FieldInfo &info = f.info;
  if (field.isIndexed()) {
    const auto edges = f.value.edges();
    if (!isEdgeList(info) || field.getIndex() >= edges.size() || !edges[field.getIndex()].connected())
      throw graph_connection_error("getFieldSize: " + f.describe(field) + " is not connected");
    return edges[field.getIndex()].numElements();
  }
  if (isEdgeList(info))
    return f.value.declaredSize != FieldValue::kNoDeclaredSize ? f.value.declaredSize
                                                               : f.value.edges().size();
  if (info.kind == FieldKind::State)
    return info.shape == FieldShape::Vector ? f.value.stateCount : 1;
  if (info.shape == FieldShape::Scalar)
    return 1;
  if (f.value.edges().empty())
    throw graph_connection_error("getFieldSize: " + f.describe(field) + " is not connected");
  return f.value.edges().front().numElements();
}

unsigned Graph::getMaxFieldDim(StringRef vertexType, StringRef fieldName, unsigned dimIndex) const {
  getTarget();
  const VertexTypeInfo &type = findVertexType(*data_, vertexType.str());
  const FieldInfo &info = type.fields[static_cast<std::size_t>(findField(type, fieldName.str()))];
  std::vector<Layout> dims;
  switch (info.shape) {
  case FieldShape::Scalar:
    return 1;
  case FieldShape::Vector:
    dims = {info.layout};
    break;
  case FieldShape::VectorOfEdges:
    dims = {info.outerLayout, info.layout};
    break;
  case FieldShape::VectorOfScalarEdges:
    dims = {info.outerLayout};
    break;
  }
  if (dimIndex >= dims.size())
    throw index_error("getMaxFieldDim: field '" + info.name + "' of vertex type '" + type.name + "' has " +
                      std::to_string(dims.size()) + " dimension(s); dimension " + std::to_string(dimIndex) +
                      " does not exist");
  return static_cast<unsigned>(maxSizeForLayout(dims[dimIndex]));
}

double Graph::getMaxVertexFieldValue(StringRef vertexType, StringRef fieldName) const {
  getTarget();
  const VertexTypeInfo &type = findVertexType(*data_, vertexType.str());
  const FieldInfo &info = type.fields[static_cast<std::size_t>(findField(type, fieldName.str()))];
  using Id = Type::Id;
  switch (info.elementType.id()) {
  case Id::Bool:
    return 1;
  case Id::Char:
    return std::numeric_limits<char>::max();
  case Id::SignedChar:
    return std::numeric_limits<signed char>::max();
  case Id::UnsignedChar:
    return std::numeric_limits<unsigned char>::max();
  case Id::Short:
    return std::numeric_limits<short>::max();
  case Id::UnsignedShort:
    return std::numeric_limits<unsigned short>::max();
  case Id::Int:
    return std::numeric_limits<int>::max();
  case Id::UnsignedInt:
    return std::numeric_limits<unsigned int>::max();
  case Id::Long:
    return static_cast<double>(std::numeric_limits<long>::max());
  case Id::UnsignedLong:
    return static_cast<double>(std::numeric_limits<unsigned long>::max());
  case Id::LongLong:
    return static_cast<double>(std::numeric_limits<long long>::max());
  case Id::UnsignedLongLong:
    return static_cast<double>(std::numeric_limits<unsigned long long>::max());
  case Id::Half:
    return 65504.0;
  case Id::Float:
    return FLT_MAX;
  case Id::Double:
    return DBL_MAX;
  default:
    throw type_error("getMaxVertexFieldValue: field '" + info.name + "' of vertex type '" + type.name +
                     "' does not hold a number");
  }
}

// ---- state fields ------------------------------------------------------------------

void Graph::setFieldInitialValue(const FieldRef &field, const Type &hostType, const void *values,
                                 std::size_t count, bool scalar) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::setFieldInitialValue");
  FieldAccess f = accessField(*data_, field, "setInitialValue");
  const FieldInfo &info = f.info;
  if (info.kind != FieldKind::State)
    throw graph_connection_error(
        "setInitialValue: " + f.describe(field) +
        " is an edge, not a state field; connect it to a tensor with Graph::connect");
  if (field.isIndexed())
    throw graph_connection_error("setInitialValue: " + f.describe(field) +
                                 " cannot be indexed; give the whole field a vector of values");
  if (!info.elementType.valid())
    throw type_error("setInitialValue: " + f.describe(field) +
                     " does not hold a number (its type is not one Aspen can initialise)");
  if (info.shape == FieldShape::Scalar && !(scalar || count == 1))
    throw graph_connection_error("setInitialValue: " + f.describe(field) + " holds one value, but " +
                                 std::to_string(count) + " values were given");
  if (info.shape == FieldShape::Vector && f.value.declaredSize != FieldValue::kNoDeclaredSize &&
      count != f.value.declaredSize)
    throw graph_connection_error("setInitialValue: " + f.describe(field) + " has size " +
                                 std::to_string(f.value.declaredSize) + " (Graph::setFieldSize), but " +
                                 std::to_string(count) + " values were given");
  const std::size_t n = info.shape == FieldShape::Scalar ? 1 : count;
  if (n > FieldValue::kMaxStateCount)
    throw graph_connection_error("setInitialValue: " + std::to_string(n) + " values for " +
                                 f.describe(field) + " are more than a field can hold (" +
                                 std::to_string(FieldValue::kMaxStateCount) + ")");
  if (n && !values)
    throw graph_connection_error("setInitialValue: no values given for " + f.describe(field) +
                                 " (null pointer)");
  // Most state values are one scalar: convert on the stack.
  boost::container::small_vector<std::uint8_t, 16> bytes(n * info.elementType.size(), 0);
  if (n)
    aspen::util::convertHostToDevice(hostType, values, info.elementType, bytes.data(), n);
  f.value.setStateBytes({bytes.data(), bytes.size()});
  f.value.stateCount = static_cast<std::uint32_t>(n) & FieldValue::kMaxStateCount;
  f.value.set = true;
}

void Graph::setInitialValue(const FieldRef &field, const std::vector<bool> &values) {
  std::vector<std::uint8_t> bytes(values.begin(), values.end());
  static_assert(sizeof(bool) == 1, "bool is one byte");
  setFieldInitialValue(field, BOOL, bytes.data(), bytes.size(), false);
}

void Graph::setInitialValueHalf(const FieldRef &field, uint16_t value) {
  setFieldInitialValue(field, HALF, &value, 1, true);
}

void Graph::setInitialValueHalf(const FieldRef &field, ArrayRef<uint16_t> values) {
  setFieldInitialValue(field, HALF, values.data(), values.size(), false);
}

// ---- estimates and mapping ---------------------------------------------------------

namespace {
aspen::ir::Vertex &vertexOf(GraphData &data, const VertexRef &v, const char *operation) {
  if (v.getId() >= data.vertices.size())
    throw poplar_error(std::string(operation) + ": vertex " + std::to_string(v.getId()) +
                       " is not a vertex of this graph");
  return data.vertices[v.getId()];
}
} // namespace

void Graph::setPerfEstimate(const VertexRef &v, std::uint64_t cycles, std::uint64_t flops) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::setPerfEstimate");
  vertexOf(*data_, v, "setPerfEstimate");
  data_->vertices.setEstimate(v.getId(), VertexPerfEstimate(cycles, flops));
}

void Graph::setPerfEstimate(const VertexRef &v, const VertexPerfEstimate &estimate) {
  setPerfEstimate(v, estimate.cycles, estimate.flops);
}

void Graph::setCycleEstimate(const VertexRef &v, std::uint64_t cycles) {
  setPerfEstimate(v, cycles, 0);
}

void Graph::registerPerfEstimator(StringRef vertexTypeName, PerfEstimateFunc f) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::registerPerfEstimator");
  data_->perfEstimators[vertexTypeName.str()] = std::move(f);
}

void Graph::setTileMapping(VertexRef v, unsigned tileNum) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::setTileMapping");
  aspen::ir::Vertex &vertex = vertexOf(*data_, v, "setTileMapping");
  if (tileNum >= numTiles_)
    throw invalid_tile_mapping("Cannot map vertex " + std::to_string(v.getId()) + " (type '" +
                               data_->vertexTypes[vertex.type].name + "') to tile " +
                               std::to_string(tileNum) + ": the graph has " + std::to_string(numTiles_) +
                               " tiles (0.." + std::to_string(numTiles_ - 1) + ")");
  vertex.tile = toAbsoluteTile(tileNum);
  // Constants connected by value live on their vertex's tile.
  if (data_->vertexScalarConstants.empty())
    return;
  auto pending = data_->vertexScalarConstants.find(v.getId());
  if (pending != data_->vertexScalarConstants.end())
    for (VarId var : pending->second)
      data_->variables[var].mapping.assign(1,
                                           aspen::ir::TileInterval{0, data_->variables[var].numElements,
                                                                   static_cast<std::uint32_t>(vertex.tile)});
}

unsigned Graph::getTileMapping(VertexRef v) const {
  getTarget();
  const aspen::ir::Vertex &vertex = vertexOf(*data_, v, "getTileMapping");
  if (vertex.tile < 0)
    throw invalid_tile_mapping("Vertex " + std::to_string(v.getId()) + " (type '" +
                               data_->vertexTypes[vertex.type].name + "') has no tile mapping");
  const int relative = toRelativeTile(static_cast<unsigned>(vertex.tile));
  if (relative < 0)
    throw invalid_tile_mapping("Vertex " + std::to_string(v.getId()) + " is mapped to tile " +
                               std::to_string(vertex.tile) + ", which is not part of this (virtual) graph");
  return static_cast<unsigned>(relative);
}

} // namespace poplar
