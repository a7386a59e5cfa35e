// Copyright (c) Aspen contributors.
// Helpers shared by popops' graph builders: vertex names, spreading work over the
// tiles where a tensor lives, vertex state values, errors and cycle estimates.
#pragma once

#include "common/ShapeString.hpp"
#include "popops/ExprOp.hpp"
#include "popops/OperationDef.hpp"
#include "poputil/exceptions.hpp"

#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace aspen::ops {

using aspen::ops::describe;
using aspen::ops::shapeString;

// --- vertex names --------------------------------------------------------------------------
std::string toString(popops::expr::UnaryOpType op);  // "ABSOLUTE"
std::string toString(popops::expr::BinaryOpType op); // "ADD"
std::string toString(popops::Operation op);          // "ADD"

/// Template arguments as canonical vertex-name text.
inline std::string templateArg(const poplar::Type &t) {
  return t.toString().str();
}
inline std::string templateArg(popops::expr::UnaryOpType op) {
  return "popops::expr::UnaryOpType::" + aspen::ops::toString(op);
}
inline std::string templateArg(popops::expr::BinaryOpType op) {
  return "popops::expr::BinaryOpType::" + aspen::ops::toString(op);
}
inline std::string templateArg(popops::Operation op) {
  return "popops::Operation::" + aspen::ops::toString(op);
}
inline std::string templateArg(bool b) {
  return b ? "true" : "false";
}
inline std::string templateArg(const std::string &s) {
  return s;
}
inline std::string templateArg(const char *s) {
  return s;
}

inline void appendArgs(std::string &) {}
template <class A, class... Rest> void appendArgs(std::string &s, const A &a, const Rest &...rest) {
  if (s.back() != '<')
    s += ',';
  s += templateArg(a);
  appendArgs(s, rest...);
}
/// `vertexName("popops::Fill", FLOAT)` == "popops::Fill<float>".
template <class... Args> std::string vertexName(const std::string &base, const Args &...args) {
  std::string s = base + "<";
  appendArgs(s, args...);
  return s + ">";
}

/// Throws poplibs_error "<op>: no vertex <name> (...)" unless the graph has the vertex type.
void requireVertex(const poplar::Graph &graph, const std::string &vertex, const std::string &op,
                   const std::string &what);

// --- work distribution --------------------------------------------------------------------
/// The elements of a tensor one vertex handles: regions of the tensor's flattened index space.
struct TileWork {
  unsigned tile;
  std::vector<poplar::Interval> regions;
  std::size_t numElements() const;
};

/// For each tile holding elements of `t`: groups of the regions it holds, one group per
/// vertex. A tile with few regions gets one vertex per region (each contiguous); one with
/// many gets its regions grouped into at most `maxVerticesPerTile` vertices. Unmapped
/// elements (of tensors with incomplete mappings) go to tile 0.
std::vector<TileWork> splitByTile(const poplar::Graph &graph, const poplar::Tensor &t,
                                  unsigned maxVerticesPerTile = 4);

/// The tile of each element of a tensor, looked up from its mapping (unmapped: tile 0).
class TileLookup {
public:
  TileLookup(const poplar::Graph &graph, const poplar::Tensor &t);
  unsigned tileOf(std::size_t flatIndex) const;

private:
  struct Run {
    std::size_t begin, end;
    unsigned tile;
  };
  std::vector<Run> runs_;
};

/// Groups of consecutive rows of a [rows, rowLen] view that start on the same tile:
/// (tile, first row, end row).
struct RowGroup {
  unsigned tile;
  std::size_t begin, end;
};
std::vector<RowGroup> rowGroupsByTile(const poplar::Graph &graph, const poplar::Tensor &rows2d);

/// The elements of flattened `t` listed by `regions`, as one 1-D tensor.
poplar::Tensor gather(const poplar::Tensor &flat, const std::vector<poplar::Interval> &regions);

/// Maps `t` linearly when its mapping is incomplete (PopLibs' rule for outputs it is given).
void mapIfUnmapped(poplar::Graph &graph, const poplar::Tensor &t);

// --- vertex state --------------------------------------------------------------------------
/// Sets a state field of element type `type` from a double / an integer (converted to the type).
void setStateValue(poplar::Graph &graph, const poplar::FieldRef &field, const poplar::Type &type,
                   double value);
void setStateInteger(poplar::Graph &graph, const poplar::FieldRef &field, const poplar::Type &type,
                     std::int64_t value);

/// A scalar constant of `type` holding `value` (HALF rounded to nearest even), mapped to `tile`.
poplar::Tensor scalarConstantOf(poplar::Graph &graph, const poplar::Type &type, double value,
                                unsigned tile = 0, const std::string &name = "<const>");

// --- cycle estimates -------------------------------------------------------------------------
/// Machine cycles of a MultiVertex that spreads `numElements` over the tile's workers and
/// spends `cyclesPerVector` per vector of the type's natural width (plus fixed overheads).
std::uint64_t multiVertexCycles(const poplar::Target &target, const poplar::Type &type,
                                std::size_t numElements, double cyclesPerVector,
                                unsigned perWorkerOverhead = 26);

/// Thread cycles of a worker vertex doing `numElements` at `cyclesPerElement`.
std::uint64_t workerVertexCycles(std::size_t numElements, double cyclesPerElement, unsigned overhead = 20);

} // namespace aspen::ops
