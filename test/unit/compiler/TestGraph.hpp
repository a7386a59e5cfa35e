// Copyright (c) Aspen contributors.
// Hand-built graph IR for the compiler's unit tests: variables, vertex types laid
// out by the vertex ABI (docs/internals.md), vertices and programs, with no
// codelet compiler involved.
#pragma once

#include "codelets/ContentHash.hpp"
#include "ir/GraphData.hpp"
#include "ir/ProgramNode.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/Tensor.hpp"
#include "poplar/Type.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace aspen::test {

struct FieldSpec {
  std::string name;
  ir::FieldKind kind;
  ir::FieldShape shape;
  poplar::Type type;
  std::uint32_t minAlign = 1;
};

inline FieldSpec in(const std::string &n, poplar::Type t = poplar::FLOAT) {
  return {n, ir::FieldKind::Input, ir::FieldShape::Vector, t};
}
inline FieldSpec out(const std::string &n, poplar::Type t = poplar::FLOAT) {
  return {n, ir::FieldKind::Output, ir::FieldShape::Vector, t};
}
inline FieldSpec inout(const std::string &n, poplar::Type t = poplar::FLOAT) {
  return {n, ir::FieldKind::InOut, ir::FieldShape::Vector, t};
}
inline FieldSpec scalarIn(const std::string &n, poplar::Type t = poplar::FLOAT) {
  return {n, ir::FieldKind::Input, ir::FieldShape::Scalar, t};
}
inline FieldSpec scalarOut(const std::string &n, poplar::Type t = poplar::FLOAT) {
  return {n, ir::FieldKind::Output, ir::FieldShape::Scalar, t};
}
inline FieldSpec state(const std::string &n, poplar::Type t = poplar::UNSIGNED_INT) {
  return {n, ir::FieldKind::State, ir::FieldShape::Scalar, t};
}
inline FieldSpec stateVector(const std::string &n, poplar::Type t = poplar::UNSIGNED_INT) {
  return {n, ir::FieldKind::State, ir::FieldShape::Vector, t};
}
inline FieldSpec inList(const std::string &n, poplar::Type t = poplar::FLOAT) {
  return {n, ir::FieldKind::Input, ir::FieldShape::VectorOfEdges, t};
}

/// A graph IR built by hand.
class TestGraph {
public:
  explicit TestGraph(unsigned numTiles = 4, std::uint64_t bytesPerTile = 638976) {
    g = std::make_shared<ir::GraphData>();
    g->target.tilesPerIPU = numTiles;
    g->target.bytesPerTile = bytesPerTile;
    // A stand-in vertex library file: the compiler embeds its bytes.
    libPath = std::filesystem::temp_directory_path() /
              ("aspen_test_lib_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++) + ".gp");
    const std::string libText = "not really a vertex library";
    std::ofstream(libPath, std::ios::binary) << libText;
    // The compiler checks the file against the hash recorded when it was added.
    ir::CodeletLibrary library;
    library.contentHash = codelets::contentHash(libText.data(), libText.size());
    library.path = libPath.string();
    library.origin = "TestGraph";
    g->codeletLibraries.push_back(std::move(library));
  }
  ~TestGraph() {
    std::error_code ec;
    std::filesystem::remove(libPath, ec);
  }

  /// A variable mapped linearly: element i on tile tiles[i * tiles.size() / n].
  poplar::Tensor var(poplar::Type type, std::vector<std::size_t> shape, const std::string &name,
                     std::vector<unsigned> tiles = {0}, bool constant = false) {
    ir::Variable v;
    v.type = type;
    v.numElements = 1;
    for (std::size_t d : shape)
      v.numElements *= d;
    v.name = name;
    v.shape = shape;
    v.isConstant = constant;
    const std::uint64_t n = v.numElements;
    for (std::size_t k = 0; k < tiles.size() && n; ++k) {
      const std::uint64_t b = n * k / tiles.size(), e = n * (k + 1) / tiles.size();
      if (b < e)
        v.mapping.push_back({b, e, tiles[k]});
    }
    g->variables.push_back(v);
    const auto id = static_cast<ir::VarId>(g->variables.size() - 1);
    return ir::makeVariableTensor(g, id, type, shape);
  }
  /// An unmapped variable.
  poplar::Tensor unmapped(poplar::Type type, std::vector<std::size_t> shape, const std::string &name) {
    return var(type, shape, name, {});
  }
  template <class T> void setInitial(const poplar::Tensor &t, const std::vector<T> &values) {
    std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    g->initialValues[t.getImpl().segments->front().var] = bytes;
  }

  /// Registers a vertex type laid out as the vertex ABI says.
  std::uint32_t vertexType(const std::string &name, std::vector<FieldSpec> fields, bool multi = false) {
    ir::VertexTypeInfo t;
    t.name = name;
    t.library = 0;
    t.isMultiVertex = multi;
    std::uint32_t at = 0;
    for (const FieldSpec &f : fields) {
      ir::FieldInfo fi;
      fi.name = f.name;
      fi.kind = f.kind;
      fi.shape = f.shape;
      fi.elementType = f.type;
      fi.minAlign = std::max<std::uint32_t>(f.minAlign, static_cast<std::uint32_t>(f.type.size()));
      std::uint32_t size = 8, align = 8;
      if (f.kind == ir::FieldKind::State && f.shape == ir::FieldShape::Scalar) {
        size = align = static_cast<std::uint32_t>(f.type.size());
      } else if (f.shape != ir::FieldShape::Scalar) {
        size = 16;
      }
      at = (at + align - 1) / align * align;
      fi.offset = at;
      fi.size = size;
      at += size;
      t.fields.push_back(fi);
    }
    t.objectSize = std::max<std::uint32_t>(8, (at + 7) / 8 * 8);
    t.objectAlign = 8;
    g->vertexTypes.push_back(t);
    g->vertexTypeByName[name] = static_cast<std::uint32_t>(g->vertexTypes.size() - 1);
    return static_cast<std::uint32_t>(g->vertexTypes.size() - 1);
  }

  std::uint32_t computeSet(const std::string &name) {
    g->computeSets.push_back({name, {}});
    return static_cast<std::uint32_t>(g->computeSets.size() - 1);
  }

  /// A vertex with edge fields connected to single tensors.
  std::uint32_t vertex(std::uint32_t cs, std::uint32_t type, std::int64_t tile,
                       std::vector<std::pair<std::string, poplar::Tensor>> edges = {}) {
    const std::uint32_t id = g->vertices.add(type, cs, g->vertexTypes[type].fields.size());
    g->vertices[id].tile = tile;
    g->computeSets[cs].vertices.push_back(id);
    for (auto &[field, t] : edges)
      connect(id, field, t);
    return id;
  }
  void connect(std::uint32_t v, const std::string &field, const poplar::Tensor &t) {
    auto &f = fieldOf(v, field);
    f.set = true;
    if (isList(v, field))
      f.setEdgeList({edgeOf(t)});
    else
      f.setEdge(edgeOf(t));
  }
  void connectList(std::uint32_t v, const std::string &field, std::vector<poplar::Tensor> ts) {
    auto &f = fieldOf(v, field);
    f.set = true;
    std::vector<ir::Edge> edges;
    for (const poplar::Tensor &t : ts)
      edges.push_back(edgeOf(t));
    f.setEdgeList(std::move(edges));
  }
  template <class T> void setState(std::uint32_t v, const std::string &field, std::vector<T> values) {
    auto &f = fieldOf(v, field);
    f.set = true;
    f.stateCount = static_cast<std::uint32_t>(values.size());
    std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    f.setStateBytes(bytes);
  }
  void setCycles(std::uint32_t v, std::uint64_t cycles) {
    g->vertices.setEstimate(v, poplar::VertexPerfEstimate(cycles));
  }
  ir::FieldValue &fieldOf(std::uint32_t v, const std::string &field) {
    const int i = g->vertexTypes[g->vertices[v].type].fieldIndex(field);
    if (i < 0 || static_cast<std::size_t>(i) >= g->vertices[v].fields.size())
      throw std::out_of_range("TestGraph: no field '" + field + "'");
    return g->vertices[v].fields[static_cast<std::size_t>(i)];
  }
  bool isList(std::uint32_t v, const std::string &field) const {
    const auto &type = g->vertexTypes[g->vertices[v].type];
    const auto shape = type.fields[static_cast<std::size_t>(type.fieldIndex(field))].shape;
    return shape == ir::FieldShape::VectorOfEdges || shape == ir::FieldShape::VectorOfScalarEdges;
  }
  static ir::Edge edgeOf(const poplar::Tensor &t) { return t.valid() ? ir::Edge::of(t) : ir::Edge(); }

  // ---- programs ----------------------------------------------------------------------
  static std::shared_ptr<ir::ProgramNode> node(ir::ProgramKind kind, std::string name = {}) {
    auto n = std::make_shared<ir::ProgramNode>();
    n->kind = kind;
    n->debugName = std::move(name);
    return n;
  }
  static std::shared_ptr<ir::ProgramNode>
  seq(std::initializer_list<std::shared_ptr<ir::ProgramNode>> children) {
    auto n = node(ir::ProgramKind::Sequence);
    n->children = children;
    return n;
  }
  static std::shared_ptr<ir::ProgramNode> exec(std::uint32_t cs) {
    auto n = node(ir::ProgramKind::Execute);
    n->computeSet = cs;
    return n;
  }
  static std::shared_ptr<ir::ProgramNode> copy(const poplar::Tensor &src, const poplar::Tensor &dst) {
    auto n = node(ir::ProgramKind::Copy);
    n->src = src;
    n->dst = dst;
    return n;
  }
  static std::shared_ptr<ir::ProgramNode> repeat(std::uint64_t count, std::shared_ptr<ir::ProgramNode> body) {
    auto n = node(ir::ProgramKind::Repeat);
    n->count = count;
    n->children = {std::move(body)};
    return n;
  }
  static std::shared_ptr<ir::ProgramNode> writeUndef(const poplar::Tensor &t) {
    auto n = node(ir::ProgramKind::WriteUndef);
    n->dst = t;
    return n;
  }

  std::shared_ptr<ir::GraphData> g;
  std::filesystem::path libPath;

private:
  static int &counter() {
    static int c = 0;
    return c;
  }
};

} // namespace aspen::test
