// Copyright (c) Aspen contributors.
// What every libops library (poputil, popops, poplin, popnn, poprand) shares inside: describing
// tensors in error messages, checking arguments, parsing options, loading a library's vertices,
// spreading work over the tiles where a tensor lives, vertex state values and cycle estimates.
// Private to libops: compiled into libpoputil.so, which every other libops library links.
#pragma once

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Interval.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace poplibs {
class OptionSpec;
}

namespace aspen::ops {

// --- describing arguments in error messages -------------------------------------------------

/// `{2,3}` for a shape.
std::string shapeString(const std::vector<std::size_t> &shape);

/// `'name' {2,3} float` for a tensor (Poplar's short description); `<invalid tensor>` if invalid.
std::string describe(const poplar::Tensor &t);

/// `op(path)` when the debug context has a name, else `op`: how operations name themselves.
std::string opNameWithContext(const std::string &op, const poplar::DebugContext &dc);

/// Throws poplibs_error "<op>: <role> is not a valid tensor" unless `t` is valid.
void requireValid(const poplar::Tensor &t, const std::string &op, const std::string &role);

/// Parses `options` against `spec`; an unknown key or bad value throws poplar::invalid_option
/// whose message starts with `op`.
void parseOptions(const poplibs::OptionSpec &spec, const poplar::OptionFlags &options, const std::string &op);

// --- vertex libraries ------------------------------------------------------------------------

/// Adds a library's vertices to `graph` once: the file named by the environment variable
/// `envVar` if set, else `gpName` beside the shared object holding `anchor` (an object defined
/// in that library with internal linkage). `probeVertex`, one of its vertex types, tells
/// whether the graph has them already. A missing file throws poplar::graph_object_load_error
/// naming the library's addCodelets and the path.
void addLibraryCodelets(poplar::Graph &graph, const void *anchor, const std::string &gpName,
                        const char *envVar, const std::string &probeVertex, const std::string &op);

/// Throws poplibs_error "<op>: <what> is not supported (no vertex <name>; ...)" unless the
/// graph has the vertex type.
void requireVertex(const poplar::Graph &graph, const std::string &vertex, const std::string &op,
                   const std::string &what);

// --- spreading work over tiles ---------------------------------------------------------------

/// The elements of a tensor one vertex handles: regions of the tensor's flattened index space.
struct TileWork {
  unsigned tile;
  std::vector<poplar::Interval> regions;
  std::size_t numElements() const;
};

/// For each tile holding elements of `t`: groups of the regions it holds, one group per
/// vertex. A tile with few regions gets one vertex per region (each contiguous); one with
/// many gets its regions grouped into at most `maxVerticesPerTile` vertices (1: one vertex
/// per tile). Unmapped elements (of tensors with incomplete mappings) go to tile 0.
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

/// The rows of a [rows, rowLength] view whose first element lives on `tile`, as runs of
/// consecutive rows.
struct TileRows {
  unsigned tile;
  std::vector<poplar::Interval> rows;
  std::size_t numRows() const;
};
/// Rows grouped by the tile holding each row's first element, in ascending tile order (rows
/// of zero length: none).
std::vector<TileRows> rowsByTile(const poplar::Graph &graph, const poplar::Tensor &rows2d);

/// The elements of 1-D `flat` listed by `regions`, as one 1-D tensor.
poplar::Tensor gather(const poplar::Tensor &flat, const std::vector<poplar::Interval> &regions);

/// The rows `rows` of a 2-D tensor, flattened into one 1-D tensor.
poplar::Tensor gatherRows(const poplar::Tensor &rows2d, const std::vector<poplar::Interval> &rows);

/// `t` viewed as {rows, innermost dimension} (a scalar is one row of one element).
poplar::Tensor asRows(const poplar::Tensor &t);

/// Maps `t` linearly when its mapping is incomplete (PopLibs' rule for outputs it is given).
void mapIfUnmapped(poplar::Graph &graph, const poplar::Tensor &t);

// --- vertex state ----------------------------------------------------------------------------

/// Sets a state field of element type `type` from a double / an integer (converted to the type).
void setStateValue(poplar::Graph &graph, const poplar::FieldRef &field, const poplar::Type &type,
                   double value);
void setStateInteger(poplar::Graph &graph, const poplar::FieldRef &field, const poplar::Type &type,
                     std::int64_t value);

/// `value` as an integer of `type`: truncated towards zero, wrapping into the type as C++'s
/// integer conversions do. Throws poplibs_error naming `what` when no integer corresponds (NaN,
/// infinity, beyond 64 bits).
std::int64_t integerConstantOf(double value, const poplar::Type &type, const std::string &what);

/// A scalar constant of `type` holding `value` (HALF rounded to nearest even), mapped to `tile`.
poplar::Tensor scalarConstantOf(poplar::Graph &graph, const poplar::Type &type, double value,
                                unsigned tile = 0, const std::string &name = "<const>");

// --- cycle estimates -------------------------------------------------------------------------

/// Machine cycles of a MultiVertex that spreads `numElements` over the tile's workers: each
/// worker spends `perWorkerOverhead` plus `cyclesPerStep` for every `elementsPerStep` elements
/// of its share (PopLibs' convention: the workers take turns, so the sum over workers).
std::uint64_t multiVertexCycles(const poplar::Target &target, std::size_t numElements,
                                unsigned elementsPerStep, double cyclesPerStep, unsigned perWorkerOverhead);

/// The same for a vectorised loop: `cyclesPerVector` per vector of the type's natural width
/// (64 bits: 2 floats, 4 halves).
inline std::uint64_t multiVertexCycles(const poplar::Target &target, const poplar::Type &type,
                                       std::size_t numElements, double cyclesPerVector,
                                       unsigned perWorkerOverhead = 26) {
  return multiVertexCycles(target, numElements, target.getVectorWidth(type), cyclesPerVector,
                           perWorkerOverhead);
}

/// Thread cycles of a worker vertex doing `numElements` at `cyclesPerElement`.
std::uint64_t workerVertexCycles(std::size_t numElements, double cyclesPerElement, unsigned overhead = 20);

} // namespace aspen::ops
